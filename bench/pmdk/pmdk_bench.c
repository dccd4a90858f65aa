/* pmdk_bench.c -- spm-pmdk-bench: run one libpmemobj workload (or all) and print ops/s.
 *
 *   spm-pmdk-bench [--check] [--announce] [--repeat R] [--size BYTES] WORKLOAD|all PATH OPS
 *                  [VALUE_SIZE] [SEED]
 *   spm-pmdk-bench --verify WORKLOAD PATH [VALUE_SIZE] [SEED]
 *
 * Each run creates a fresh pool at PATH (which must not exist) and removes it afterwards;
 * --check walks the structure after the run (invariants, payloads, content, item count);
 * --repeat runs R times and reports the best; --announce prints a line once the pool holds the
 * empty structure, before the first op (a test kills the run after it).  --verify opens the
 * pool a run left (a killed one: libpmemobj recovers it) and checks it holds the ops its root
 * counts, as the check after a run does.  Value size 64 and seed 1 by default. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pmdk_workloads.h"

#define MIB (1024u * 1024u)

struct opts {
	int check, announce, verify;
	uint64_t repeat, size, ops, value_size, seed;
	const char *workload, *path;
};

static int usage(void)
{
	fprintf(stderr, "usage: spm-pmdk-bench [--check] [--announce] [--repeat R] [--size BYTES] "
		"WORKLOAD|all PATH OPS [VALUE_SIZE] [SEED]\n"
		"       spm-pmdk-bench --verify WORKLOAD PATH [VALUE_SIZE] [SEED]\nworkloads:");
	for (const char *const *w = pmdk_workloads(); *w; w++)
		fprintf(stderr, " %s", *w);
	fprintf(stderr, "\nsizes take k, m, g suffixes; the pool size defaults to 32 MiB + "
		"OPS * (VALUE_SIZE + 512)\n");
	return 2;
}

/* parse_num -- a whole number with an optional binary suffix; -1 if bad. */
static int parse_num(const char *s, uint64_t *out)
{
	char *end;
	if (!s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 0);
	unsigned shift = *end == 'k' ? 10 : *end == 'm' ? 20 : *end == 'g' ? 30 : 0;
	end += shift != 0;
	if (errno || *end || (v << shift) >> shift != v)
		return -1;
	*out = (uint64_t)v << shift;
	return 0;
}

/* parse -- the command line into *o; 0 or -1. */
static int parse(int argc, char **argv, struct opts *o)
{
	const char *pos[5] = {0};
	int npos = 0;
	*o = (struct opts){.repeat = 1, .value_size = 64, .seed = 1};
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(a, "--check") == 0)
			o->check = 1;
		else if (strcmp(a, "--announce") == 0)
			o->announce = 1;
		else if (strcmp(a, "--verify") == 0)
			o->verify = 1;
		else if (strcmp(a, "--repeat") == 0 && !parse_num(v, &o->repeat) && o->repeat)
			i++;
		else if (strcmp(a, "--size") == 0 && !parse_num(v, &o->size))
			i++;
		else if (a[0] == '-' || npos == 5)
			return -1;
		else
			pos[npos++] = a;
	}
	if (o->verify) { /* WORKLOAD PATH [VALUE_SIZE] [SEED] */
		pos[4] = pos[3];
		pos[3] = pos[2];
		pos[2] = npos >= 2 && npos <= 4 ? "0" : NULL;
	}
	if (npos < (o->verify ? 2 : 3) || parse_num(pos[2], &o->ops) || (pos[3] && parse_num(pos[3], &o->value_size)) ||
	    (pos[4] && parse_num(pos[4], &o->seed)))
		return -1;
	o->workload = pos[0];
	o->path = pos[1];
	if (!o->size)
		o->size = 32 * MIB + o->ops * (o->value_size + 512);
	o->size = (o->size + MIB - 1) / MIB * MIB;
	return 0;
}

/* run_one -- one run of workload w: printed; its ops/s in *rate.  0 or -1. */
static int run_one(const struct opts *o, const char *w, double *rate)
{
	struct pmdk_result r;
	int rc = (o->check ? pmdk_run_check : pmdk_run)(w, o->path, o->size, o->ops,
							 o->value_size, o->seed, &r);
	if (unlink(o->path) && errno != ENOENT)
		perror(o->path);
	if (rc)
		return -1;
	double secs = (double)r.wall_ns * 1e-9;
	*rate = secs > 0 ? (double)r.ops / secs : 0.0;
	printf("pmdk %-7s %" PRIu64 " ops in %.3f s: %.0f ops/s (value %" PRIu64 " B, seed %"
	       PRIu64 ", items %" PRIu64 ")%s\n", w, r.ops, secs, *rate, o->value_size, o->seed,
	       r.items, o->check ? ", check ok" : "");
	fflush(stdout);
	return 0;
}

/* run_best -- o->repeat runs of workload w; the best printed if more than one. */
static int run_best(const struct opts *o, const char *w)
{
	double best = 0, rate;
	for (uint64_t i = 0; i < o->repeat; i++) {
		if (run_one(o, w, &rate))
			return -1;
		best = rate > best ? rate : best;
	}
	if (o->repeat > 1)
		printf("pmdk %-7s best of %" PRIu64 ": %.0f ops/s\n", w, o->repeat, best);
	return 0;
}

/* verify -- --verify: the pool a run left at o->path checked; 0 or 1. */
static int verify(const struct opts *o)
{
	struct pmdk_result r;
	if (pmdk_verify(o->workload, o->path, o->value_size, o->seed, &r))
		return 1;
	printf("pmdk %-7s %s: %" PRIu64 " ops done, items %" PRIu64 ", check ok\n", o->workload,
	       o->path, r.ops, r.items);
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o;
	if (parse(argc, argv, &o))
		return usage();
	if (o.verify)
		return verify(&o);
	if (o.announce)
		pmdk_announce(stdout);
	if (access(o.path, F_OK) == 0) {
		fprintf(stderr, "spm-pmdk-bench: %s exists; remove it first\n", o.path);
		return 2;
	}
	int all = strcmp(o.workload, "all") == 0, found = 0;
	for (const char *const *w = pmdk_workloads(); *w; w++) {
		if (!all && strcmp(*w, o.workload) != 0)
			continue;
		found = 1;
		if (run_best(&o, *w))
			return 1;
	}
	return found ? 0 : usage();
}
