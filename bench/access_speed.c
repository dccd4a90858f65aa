/*
 * access_speed.c -- spm-access-speed: how fast the core model takes an
 * instrumented program's accesses, in modeled accesses per second of wall
 * time, for four patterns (medians of --reps runs, side by side):
 *
 *   outside      loads and stores of a private array (no pool): core work only
 *   l1_hits      loads and stores of one 8-byte word after another in 16 KiB
 *                of a pool's view (fits the modeled L1)
 *   lines        a load of each line of 1 MiB of the view in turn: every one
 *                a new line, L1 misses that hit the modeled LLC
 *   memory       the same over 64 MiB: LLC misses, memory reads through the
 *                controller's read path
 *
 * The gem5 simulations of the papers run at about 0.1-1 M instructions per
 * second; the goal here is 20 M accesses per second on one core.  This
 * program is built with spm_instrument() and does nothing else: the
 * workloads of spm-bench add their write-backs (the controller's work) to
 * the same wall time (doc/results.md, "Emulator speed").
 *
 *   spm-access-speed [--dir DIR] [--design D] [--reps N] [--quick]
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "spm.h"

#define POOL_SIZE (80u << 20)
#define REGION_MEMORY (64u << 20)

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* The patterns: each returns a checksum so that no access is optimized away. */
static uint64_t words(volatile uint64_t *p, size_t nwords, size_t passes)
{
	uint64_t sum = 0;
	for (size_t k = 0; k < passes; k++)
		for (size_t i = 0; i < nwords; i++) {
			sum += p[i];
			p[i] = sum;
		}
	return sum;
}

static uint64_t lines(volatile uint64_t *p, size_t bytes, size_t passes)
{
	uint64_t sum = 0;
	for (size_t k = 0; k < passes; k++)
		for (size_t off = 0; off < bytes; off += 64)
			sum += p[off / 8];
	return sum;
}

struct pattern {
	const char *name;
	uint64_t accesses; /* per run */
	double rate[64];   /* M accesses/s of each rep */
};

/* run_one -- pattern i once; the model's count of accesses is checked. */
static int run_one(spm_pool *pool, uint8_t *view, uint64_t *priv, unsigned i,
		   struct pattern *pt, unsigned rep, int quick)
{
	uint64_t before = 0, after = 0, sum = 0;
	size_t passes = quick ? 1 : 4;
	spm_stat(pool, "core.accesses", &before);
	uint64_t t0 = now_ns();
	switch (i) {
	case 0:
		sum = words(priv, 2048, 64 * passes);
		break;
	case 1:
		sum = words((uint64_t *)view, 2048, 64 * passes);
		break;
	case 2:
		sum = lines((uint64_t *)view, 1u << 20, 8 * passes);
		break;
	default:
		sum = lines((uint64_t *)view, REGION_MEMORY, passes);
		break;
	}
	uint64_t t = now_ns() - t0;
	spm_drain(pool); /* a runtime call: the thread's pending counts are in */
	spm_stat(pool, "core.accesses", &after);
	if (after == before) {
		fprintf(stderr, "spm-access-speed: %s: no access reached the model (is the "
			"program instrumented? checksum %" PRIu64 ")\n", pt->name, sum);
		return -1;
	}
	pt->accesses = after - before;
	pt->rate[rep] = (double)pt->accesses * 1e3 / (double)(t ? t : 1);
	return 0;
}

int main(int argc, char **argv)
{
	const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", *design = "sca";
	unsigned reps = 5;
	int quick = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--dir") && i + 1 < argc)
			dir = argv[++i];
		else if (!strcmp(argv[i], "--design") && i + 1 < argc)
			design = argv[++i];
		else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
			reps = (unsigned)atoi(argv[++i]);
		else if (!strcmp(argv[i], "--quick"))
			quick = 1, reps = 1;
		else {
			fprintf(stderr, "usage: spm-access-speed [--dir DIR] [--design D] "
				"[--reps N] [--quick]\n");
			return 2;
		}
	}
	if (reps < 1 || reps > 64) {
		fprintf(stderr, "spm-access-speed: --reps 1..64\n");
		return 2;
	}
	char path[4096], opts[256];
	snprintf(path, sizeof(path), "%s/spm-access-speed.%ld", dir, (long)getpid());
	snprintf(opts, sizeof(opts), "design=%s;durability=none", design);
	spm_pool *pool;
	int rc = spm_create(&pool, path, POOL_SIZE, opts);
	if (rc) {
		fprintf(stderr, "spm-access-speed: %s\n", spm_errormsg());
		return 1;
	}
	uint8_t *view = spm_ptr(pool, 1u << 20);
	uint64_t *priv = calloc(2048, sizeof(uint64_t));
	struct pattern pt[4] = {{"outside", 0, {0}}, {"l1_hits", 0, {0}},
				{"lines", 0, {0}}, {"memory", 0, {0}}};
	int bad = !priv || !view;
	for (unsigned r = 0; r < reps && !bad; r++)
		for (unsigned k = 0; k < 4 && !bad; k++) {
			unsigned i = (k + r) % 4; /* rotate which goes first */
			bad = run_one(pool, view, priv, i, &pt[i], r, quick);
		}
	if (!bad) {
		printf("spm-access-speed: design %s, medians of %u runs (M accesses/s of "
		       "wall time; goal 20)\n", design, reps);
		for (unsigned i = 0; i < 4; i++) {
			qsort(pt[i].rate, reps, sizeof(double), cmp_double);
			printf("  %-8s %10" PRIu64 " accesses  %6.1f M/s\n", pt[i].name,
			       pt[i].accesses, pt[i].rate[reps / 2]);
		}
	}
	free(priv);
	spm_close(pool);
	char other[4200];
	unlink(path);
	snprintf(other, sizeof(other), "%s.meta", path);
	unlink(other);
	snprintf(other, sizeof(other), "%s.key", path);
	unlink(other);
	return bad;
}
