/* Initial sequence numbers, RFC 6528: ISN = M + F(localip, localport, remoteip, remoteport,
 * secretkey), M a 4-microsecond timer, F SipHash-2-4 (libsodium's crypto_shorthash) keyed
 * with a 16-octet secret. Also the ephemeral-port choice of RFC 6056 algorithm 3 with the
 * same key. */
#ifndef TCP_ISN_H
#define TCP_ISN_H

#include <stdint.h>

struct tcp_isn {
	uint8_t key[16];
};
/* key NULL or all zero: a random key (getrandom). */
void tcp_isn_init(struct tcp_isn *g, const uint8_t key[16]);
/* Addresses and ports in network order, as on the wire. */
uint32_t tcp_isn_next(const struct tcp_isn *g, uint32_t laddr, uint16_t lport, uint32_t raddr,
		      uint16_t rport, uint64_t now_ns);
/* RFC 6056 3.3.3 offset for the ephemeral port search towards raddr:rport. */
uint32_t tcp_isn_port_offset(const struct tcp_isn *g, uint32_t laddr, uint32_t raddr,
			     uint16_t rport);

#endif
