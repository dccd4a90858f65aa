/*
 * verify_speed.c -- what the integrity designs' verification at open costs:
 * spm_open of a cleanly closed pool checks every data line's MAC and every
 * tree node (emu/bmt.c).  For each design, a pool of SIZE_MIB is made once;
 * then --reps times, alternating designs (machine drift hits all alike),
 * spm_verify and spm_open + spm_close are timed.  Prints the medians and
 * the lines verified per second (an encrypting design without integrity,
 * sca, is the open's cost without verification).
 *
 *   spm-verify-speed [--dir DIR] [--reps N] [--designs a,b] SIZE_MIB
 *
 * Exit 0, or 1 if a pool could not be made or opened, 2 for bad usage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <spm.h>

enum { MAX_DESIGNS = 8, MAX_REPS = 64 };

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

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void remove_pool(const char *path)
{
	static const char *const sfx[] = {"", ".meta", ".key", ".key.tcb"};
	char p[4200];
	for (unsigned i = 0; i < 4; i++) {
		snprintf(p, sizeof(p), "%.4095s%s", path, sfx[i]);
		unlink(p);
	}
}

static int usage(void)
{
	fprintf(stderr, "usage: spm-verify-speed [--dir DIR] [--reps N] [--designs a,b] "
			"SIZE_MIB\n");
	return 2;
}

/* one_rep -- spm_verify, then spm_open + spm_close, of the pool at path. */
static int one_rep(const char *path, const char *opts, int integrity, double *verify_ms,
		   double *open_ms)
{
	struct spm_tamper t;
	size_t found = 0;
	double t0 = now_ms();
	int rc = integrity ? spm_verify(path, opts, &t, 1, &found) : 0;
	*verify_ms = now_ms() - t0;
	if (rc) {
		fprintf(stderr, "spm-verify-speed: verify %s: %s\n", path, spm_errormsg());
		return -1;
	}
	spm_pool *p;
	t0 = now_ms();
	if ((rc = spm_open(&p, path, opts)) || (rc = spm_close(p))) {
		fprintf(stderr, "spm-verify-speed: open %s: %s\n", path, spm_errormsg());
		return -1;
	}
	*open_ms = now_ms() - t0;
	return 0;
}

int main(int argc, char **argv)
{
	const char *dir = "/tmp";
	char designs_arg[256] = "sca,ccnvm";
	int reps = 5;
	double mib = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--dir") && i + 1 < argc)
			dir = argv[++i];
		else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
			reps = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--designs") && i + 1 < argc)
			snprintf(designs_arg, sizeof(designs_arg), "%s", argv[++i]);
		else if (argv[i][0] != '-' && mib == 0)
			mib = atof(argv[i]);
		else
			return usage();
	}
	if (mib < 4 || reps < 1 || reps > MAX_REPS)
		return usage();
	const char *design[MAX_DESIGNS];
	int nd = 0;
	for (char *s = strtok(designs_arg, ","); s && nd < MAX_DESIGNS; s = strtok(NULL, ","))
		design[nd++] = s;
	char path[MAX_DESIGNS][4096], opts[MAX_DESIGNS][128];
	int integ[MAX_DESIGNS];
	size_t size = (size_t)(mib * 1024 * 1024);
	int bad = 0;
	for (int d = 0; d < nd && !bad; d++) {
		snprintf(path[d], sizeof(path[d]), "%s/spm-verify-speed.%ld.%d", dir, (long)getpid(),
			 d);
		snprintf(opts[d], sizeof(opts[d]), "design=%s;durability=none", design[d]);
		remove_pool(path[d]);
		spm_pool *p;
		if (spm_create(&p, path[d], size, opts[d]) || spm_close(p)) {
			fprintf(stderr, "spm-verify-speed: create %s: %s\n", design[d],
				spm_errormsg());
			bad = 1;
		}
		struct spm_tamper t;
		size_t found;
		integ[d] = !bad && spm_verify(path[d], opts[d], &t, 1, &found) != SPM_E_INVAL;
	}
	double vms[MAX_DESIGNS][MAX_REPS], oms[MAX_DESIGNS][MAX_REPS];
	for (int r = 0; r < reps && !bad; r++)
		for (int d = 0; d < nd && !bad; d++)
			bad = one_rep(path[d], opts[d], integ[d], &vms[d][r], &oms[d][r]) != 0;
	if (!bad) {
		double lines = (double)size / 64;
		printf("%-10s %9s %12s %12s %16s\n", "design", "size_MiB", "verify_ms", "open_ms",
		       "lines_verified/s");
		for (int d = 0; d < nd; d++) {
			double v = median(vms[d], reps), o = median(oms[d], reps);
			if (integ[d])
				printf("%-10s %9.0f %12.1f %12.1f %16.3g\n", design[d], mib, v, o,
				       lines / (v / 1e3));
			else
				printf("%-10s %9.0f %12s %12.1f %16s\n", design[d], mib, "-", o, "-");
		}
	}
	for (int d = 0; d < nd; d++)
		remove_pool(path[d]);
	return bad;
}
