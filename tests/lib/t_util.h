/* Small helpers every C test suite needs (header-only, static): a monotonic millisecond clock
 * for bounded waits and an IPv4 socket address from a literal. Included as "../lib/t_util.h". */
#ifndef T_UTIL_H
#define T_UTIL_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

static inline long long t_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static inline struct sockaddr_in t_addr4(const char *ip, uint16_t port)
{
	struct sockaddr_in a;
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_port = htons(port);
	inet_pton(AF_INET, ip, &a.sin_addr);
	return a;
}

#endif
