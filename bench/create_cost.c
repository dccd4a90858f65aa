/*
 * create_cost.c -- what spm_create costs, by pool size and design: the
 * median wall time of spm_create (and of the spm_close after it) over
 * --reps fresh pools, for an encrypting design, whose every data line is
 * written as ciphertext at create, beside plain, which writes no line, in
 * the same run (alternating, so machine drift hits both alike).
 *
 *   spm-create-cost [--dir DIR] [--reps N] [--designs a,b] SIZE_MIB...
 *
 * Prints one row per (design, size): create_ms close_ms.  Exit 0, or 1 if a
 * pool could not be made, 2 for bad usage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <spm.h>

static double now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static void remove_pool(const char *path)
{
	char p[4200];
	unlink(path);
	snprintf(p, sizeof(p), "%s.meta", path);
	unlink(p);
	snprintf(p, sizeof(p), "%s.key", path);
	unlink(p);
}

/* one -- create and close a pool of mib MiB; the two times in ms. */
static int one(const char *dir, const char *design, unsigned mib, double *create, double *close)
{
	char path[4096], opts[64];
	snprintf(path, sizeof(path), "%s/create-cost-%ld", dir, (long)getpid());
	snprintf(opts, sizeof(opts), "design=%s", design);
	remove_pool(path);
	spm_pool *p = NULL;
	double t0 = now_ms();
	if (spm_create(&p, path, (size_t)mib << 20, opts)) {
		fprintf(stderr, "spm-create-cost: %s\n", spm_errormsg());
		return -1;
	}
	double t1 = now_ms();
	int rc = spm_close(p);
	*close = now_ms() - t1;
	*create = t1 - t0;
	remove_pool(path);
	return rc;
}

int main(int argc, char **argv)
{
	const char *dir = "/tmp";
	char designs[256] = "sca,plain";
	unsigned reps = 5, sizes[16], ns = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--dir") && i + 1 < argc)
			dir = argv[++i];
		else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
			reps = (unsigned)strtoul(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--designs") && i + 1 < argc)
			snprintf(designs, sizeof(designs), "%s", argv[++i]);
		else if (!strcmp(argv[i], "--help")) {
			printf("usage: spm-create-cost [--dir DIR] [--reps N] [--designs a,b] "
			       "SIZE_MIB...\n");
			return 0;
		} else if (argv[i][0] != '-' && ns < 16 && atoi(argv[i]) >= 4)
			sizes[ns++] = (unsigned)atoi(argv[i]);
		else {
			fprintf(stderr, "spm-create-cost: bad argument %s\n", argv[i]);
			return 2;
		}
	}
	if (!ns || !reps || reps > 100)
		return fprintf(stderr, "spm-create-cost: give sizes in MiB (>= 4)\n"), 2;
	char *names[8];
	unsigned nd = 0;
	for (char *s = strtok(designs, ","); s && nd < 8; s = strtok(NULL, ","))
		names[nd++] = s;
	printf("%-10s %8s %12s %12s\n", "design", "MiB", "create_ms", "close_ms");
	for (unsigned z = 0; z < ns; z++) {
		double c[8][100], k[8][100];
		for (unsigned r = 0; r < reps; r++)
			for (unsigned j = 0; j < nd; j++) {
				unsigned d = (j + r) % nd; /* who goes first rotates */
				if (one(dir, names[d], sizes[z], &c[d][r], &k[d][r]))
					return 1;
			}
		for (unsigned d = 0; d < nd; d++) {
			qsort(c[d], reps, sizeof(double), cmp_double);
			qsort(k[d], reps, sizeof(double), cmp_double);
			printf("%-10s %8u %12.1f %12.1f\n", names[d], sizes[z], c[d][reps / 2],
			       k[d][reps / 2]);
		}
	}
	return 0;
}
