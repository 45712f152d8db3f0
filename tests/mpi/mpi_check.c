/* An MPI job that checks what it moves: ping-pong between rank pairs at sizes from 1 octet
 * to 4 MiB, allreduce and alltoall over a few MiB, every octet compared with the pattern the
 * sender wrote. Exits 0 with "mpi_check: OK" on rank 0; any mismatch aborts the job with the
 * place it was found. Usage: mpi_check [ITERATIONS] */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_MSG (4u << 20)
#define A2A_PER_RANK (1u << 20)

static int rank, size;

static void die(const char *what, size_t at, unsigned got, unsigned want)
{
	fprintf(stderr, "mpi_check: rank %d: %s: octet %zu is 0x%02x, expected 0x%02x\n", rank,
		what, at, got, want);
	MPI_Abort(MPI_COMM_WORLD, 1);
}

/* The octet at offset i of a message from rank src in round r. */
static uint8_t pat(int src, unsigned r, size_t i)
{
	return (uint8_t)(i * 131u + (unsigned)src * 17u + r * 7u + 1u);
}

static void fill(uint8_t *b, size_t n, int src, unsigned r)
{
	for (size_t i = 0; i < n; i++)
		b[i] = pat(src, r, i);
}

static void check(const char *what, const uint8_t *b, size_t n, int src, unsigned r)
{
	for (size_t i = 0; i < n; i++)
		if (b[i] != pat(src, r, i))
			die(what, i, b[i], pat(src, r, i));
}

/* Even ranks ping their odd neighbour; each message comes back as the peer's own pattern. */
static void pingpong(uint8_t *tx, uint8_t *rx, unsigned iters)
{
	int peer = rank ^ 1;

	if (peer >= size)
		return;
	for (size_t len = 1; len <= MAX_MSG; len *= 4) {
		for (unsigned r = 0; r < iters; r++) {
			fill(tx, len, rank, r);
			memset(rx, 0, len);
			if (rank % 2 == 0) {
				MPI_Send(tx, (int)len, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
				MPI_Recv(rx, (int)len, MPI_BYTE, peer, 2, MPI_COMM_WORLD,
					 MPI_STATUS_IGNORE);
			} else {
				MPI_Recv(rx, (int)len, MPI_BYTE, peer, 1, MPI_COMM_WORLD,
					 MPI_STATUS_IGNORE);
				MPI_Send(tx, (int)len, MPI_BYTE, peer, 2, MPI_COMM_WORLD);
			}
			check("ping-pong", rx, len, peer, r);
		}
	}
}

static void allreduce(unsigned iters)
{
	enum { N = 1 << 19 }; /* 4 MiB of doubles */
	double *in = malloc(N * sizeof(double)), *out = malloc(N * sizeof(double));

	if (in == NULL || out == NULL)
		MPI_Abort(MPI_COMM_WORLD, 2);
	for (unsigned r = 0; r < iters; r++) {
		for (size_t i = 0; i < N; i++)
			in[i] = (double)((i % 1000) * (unsigned)(rank + 1) + r);
		MPI_Allreduce(in, out, N, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		double ranks = (double)size * (size + 1) / 2;
		for (size_t i = 0; i < N; i++) {
			double want = (double)(i % 1000) * ranks + (double)r * size;
			if (out[i] != want) {
				fprintf(stderr, "mpi_check: rank %d: allreduce: element %zu is %g, "
					"expected %g\n", rank, i, out[i], want);
				MPI_Abort(MPI_COMM_WORLD, 1);
			}
		}
	}
	free(in);
	free(out);
}

static void alltoall(unsigned iters)
{
	size_t total = (size_t)A2A_PER_RANK * (size_t)size;
	uint8_t *tx = malloc(total), *rx = malloc(total);

	if (tx == NULL || rx == NULL)
		MPI_Abort(MPI_COMM_WORLD, 2);
	for (unsigned r = 0; r < iters; r++) {
		/* the block for rank d carries pattern (rank, round r + d) */
		for (int d = 0; d < size; d++)
			fill(tx + (size_t)d * A2A_PER_RANK, A2A_PER_RANK, rank, r + (unsigned)d);
		memset(rx, 0, total);
		MPI_Alltoall(tx, A2A_PER_RANK, MPI_BYTE, rx, A2A_PER_RANK, MPI_BYTE,
			     MPI_COMM_WORLD);
		for (int s = 0; s < size; s++)
			check("alltoall", rx + (size_t)s * A2A_PER_RANK, A2A_PER_RANK, s,
			      r + (unsigned)rank);
	}
	free(tx);
	free(rx);
}

int main(int argc, char **argv)
{
	unsigned iters = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 3;
	char host[MPI_MAX_PROCESSOR_NAME];
	int hl;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Get_processor_name(host, &hl);
	uint8_t *tx = malloc(MAX_MSG), *rx = malloc(MAX_MSG);
	if (tx == NULL || rx == NULL)
		MPI_Abort(MPI_COMM_WORLD, 2);
	pingpong(tx, rx, iters);
	allreduce(iters);
	alltoall(iters);
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0)
		printf("mpi_check: OK: %d ranks, ping-pong 1 B - 4 MiB, allreduce 4 MiB, "
		       "alltoall %u MiB, %u rounds each\n", size, (unsigned)(size * A2A_PER_RANK >> 20),
		       iters);
	free(tx);
	free(rx);
	MPI_Finalize();
	return 0;
}
