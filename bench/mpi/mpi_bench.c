/* mpi_bench: MPI ping-pong latency and streaming bandwidth between ranks 0 and 1, whatever
 * transport mpirun was told to use (scripts/bench-mpi.sh runs it over Open MPI's TCP BTL and
 * over softrnic). Rank 0 prints one line:
 *   mpi_bench: lat_us=L bw_mib_s=B   (L: half the median round trip of SIZE-octet messages
 *   over BATCHES batches; B: the median over batches of WINDOW 1 MiB sends answered by one
 *   8-octet ack, the way OSU's osu_bw measures)
 * Usage: mpi_bench [ITERS_PER_BATCH] [BATCHES] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LAT_SIZE 8
#define BW_SIZE (1u << 20)
#define WINDOW 16
#define BW_ROUNDS 8

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Seconds for iters round trips of size octets between ranks 0 and 1. */
static double pingpong(int rank, char *buf, int size, int iters)
{
	double t0 = MPI_Wtime();
	for (int i = 0; i < iters; i++) {
		if (rank == 0) {
			MPI_Send(buf, size, MPI_CHAR, 1, 1, MPI_COMM_WORLD);
			MPI_Recv(buf, size, MPI_CHAR, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else {
			MPI_Recv(buf, size, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			MPI_Send(buf, size, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
		}
	}
	return MPI_Wtime() - t0;
}

/* Seconds for rounds windows of WINDOW BW_SIZE sends from 0 to 1, each answered by an ack. */
static double stream(int rank, char *buf, int rounds)
{
	MPI_Request req[WINDOW];
	char ack[LAT_SIZE] = { 0 };
	double t0 = MPI_Wtime();

	for (int r = 0; r < rounds; r++) {
		for (int w = 0; w < WINDOW; w++) {
			char *b = buf + (size_t)w * BW_SIZE;
			if (rank == 0)
				MPI_Isend(b, BW_SIZE, MPI_CHAR, 1, 2, MPI_COMM_WORLD, &req[w]);
			else
				MPI_Irecv(b, BW_SIZE, MPI_CHAR, 0, 2, MPI_COMM_WORLD, &req[w]);
		}
		MPI_Waitall(WINDOW, req, MPI_STATUSES_IGNORE);
		if (rank == 0)
			MPI_Recv(ack, LAT_SIZE, MPI_CHAR, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		else
			MPI_Send(ack, LAT_SIZE, MPI_CHAR, 0, 3, MPI_COMM_WORLD);
	}
	return MPI_Wtime() - t0;
}

int main(int argc, char **argv)
{
	int rank, size, iters = argc > 1 ? atoi(argv[1]) : 2000;
	int batches = argc > 2 ? atoi(argv[2]) : 5;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size < 2 || iters < 1 || batches < 1 || batches > 100) {
		if (rank == 0)
			fprintf(stderr, "usage: mpi_bench [ITERS_PER_BATCH] [BATCHES] (2+ ranks)\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	char *buf = calloc(WINDOW, BW_SIZE);
	double lat[100], bw[100];
	if (buf == NULL)
		MPI_Abort(MPI_COMM_WORLD, 1);
	if (rank < 2) {
		pingpong(rank, buf, LAT_SIZE, iters / 10 + 1); /* warm-up: connections, caches */
		stream(rank, buf, 1);
		for (int b = 0; b < batches; b++) {
			lat[b] = pingpong(rank, buf, LAT_SIZE, iters) / iters / 2 * 1e6;
			bw[b] = (double)BW_ROUNDS * WINDOW * BW_SIZE / stream(rank, buf, BW_ROUNDS) /
				(1 << 20);
		}
	}
	if (rank == 0)
		printf("mpi_bench: lat_us=%.2f bw_mib_s=%.1f\n", median(lat, batches),
		       median(bw, batches));
	free(buf);
	MPI_Finalize();
	return 0;
}
