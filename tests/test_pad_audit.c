/*
 * test_pad_audit.c -- no pad is ever reused (doc/design.md, "Security invariants"):
 * children run transactions and plain persists under SPM_CRASH=random and
 * SPM_AUDIT; across all their crashes and recoveries no (line, counter) seed
 * may encrypt twice.  The same sweep with ctr_recovery=none must find reuse,
 * so the auditor is shown not to be blind.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "test_files.h"
#include <spm.h>

#define ROUNDS 40
#define TXS 60

struct aroot {
	uint64_t count;
	spm_off_t recs;    /* 64 lines */
	spm_off_t scratch; /* persisted without a transaction */
};

static char dir[2048];

static void paths(const char *design, char *pool, char *audit, size_t n)
{
	snprintf(pool, n, "%s/audit-%s", dir, design);
	snprintf(audit, n, "%s/audit-%s.log", dir, design);
}

static void remove_pool(const char *pool, const char *audit)
{
	char p[4200];
	unlink(pool);
	snprintf(p, sizeof(p), "%s.meta", pool);
	unlink(p);
	snprintf(p, sizeof(p), "%s.key", pool);
	unlink(p);
	unlink(audit);
}

/* child -- one run: open (recover), work, close; may be killed anywhere. */
static int child(const char *pool, const char *options)
{
	spm_pool *p;
	if (spm_open(&p, pool, options) != 0) {
		fprintf(stderr, "child: %s\n", spm_errormsg());
		return 3;
	}
	struct aroot *r = spm_root(p, sizeof(*r));
	if (!r)
		return 4;
	uint8_t *recs = spm_ptr(p, r->recs), *scratch = spm_ptr(p, r->scratch);
	for (unsigned t = 0; t < TXS; t++) {
		uint8_t *line = recs + (t % 64) * 64;
		if (spm_tx_begin(p) || spm_tx_add(p, r, sizeof(*r)) ||
		    spm_tx_add(p, line, 64))
			return 5;
		r->count++;
		memset(line, (int)(r->count & 0xff), 64);
		if (spm_tx_commit(p))
			return 6;
		/* an ordinary write whose counter stays in the cache */
		memset(scratch, (int)t, 64);
		spm_persist(p, scratch, 64);
	}
	return spm_close(p) ? 7 : 0;
}

/*
 * The dropped-pair case (found by a review): a run persists
 * lines whose counters stay dirty in a 16-line counter cache, then runs one
 * small transaction; it dies inside the transaction's counter-atomic header
 * write (its data entry queued, not ready), so recovery drops the pair and
 * re-encrypts that line.  Doing so recorded its counter line in the shadow
 * table over a slot not read yet, whose lines kept their lost counters: the
 * next run reused their pads.
 */
#define MIX_LINES 256
#define MIX_REPS 3

struct mroot {
	spm_off_t buf; /* MIX_LINES lines */
};

/* fill_line -- 64 bytes that differ with seed and line. */
static void fill_line(uint8_t *l, uint64_t seed, uint64_t i)
{
	uint64_t x = seed * 0x9e3779b97f4a7c15ull ^ (i + 1) * 0xbf58476d1ce4e5b9ull;
	for (unsigned k = 0; k < 8; k++) {
		x ^= x >> 31;
		x *= 0xff51afd7ed558ccdull;
		memcpy(l + 8 * k, &x, 8);
	}
}

/* child_mix -- seed 1: persist lines 1.. one by one, then a transaction on
 * line 0; seed 2 and up: persist every line (after a crashed run);
 * seed 0: every line in one call (longer than the write queue: lines that
 * would drain within the call may go straight home). */
static int child_mix(const char *pool, const char *options, uint64_t seed)
{
	spm_pool *p;
	if (spm_open(&p, pool, options) != 0)
		return 3;
	struct mroot *r = spm_root(p, sizeof(*r));
	uint8_t *b = r ? spm_ptr(p, r->buf) : NULL;
	if (!b)
		return 4;
	if (seed == 0) {
		for (uint64_t i = 0; i < MIX_LINES; i++)
			fill_line(b + 64 * i, 7, i);
		spm_persist(p, b, MIX_LINES * 64);
	}
	for (uint64_t rep = 0; seed && rep < MIX_REPS; rep++) {
		for (uint64_t i = seed == 1; i < MIX_LINES; i++) {
			fill_line(b + 64 * i, seed * 16 + rep, i);
			spm_persist(p, b + 64 * i, 64);
		}
		if (seed == 1) {
			if (spm_tx_begin(p) || spm_tx_add(p, b, 64))
				return 5;
			fill_line(b, seed * 16 + rep, 0);
			if (spm_tx_commit(p))
				return 6;
		}
	}
	return spm_close(p) ? 7 : 0;
}

/* mix_status -- child_mix in a fresh process (SPM_CRASH is read once),
 * with crash and audit (NULL: none); its wait status. */
static int mix_status(const char *pool, const char *audit, const char *options,
		      const char *seed, const char *crash)
{
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (crash)
			setenv("SPM_CRASH", crash, 1);
		if (audit)
			setenv("SPM_AUDIT", audit, 1);
		execl("/proc/self/exe", "test_pad_audit", "mix", pool, options, seed,
		      (char *)NULL);
		_exit(99);
	}
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	return st;
}

/* mix_pool -- a new pool at path pool (its old files and audit log
 * removed) whose root holds a MIX_LINES-line buffer. */
static void mix_pool(const char *pool, const char *audit, const char *options)
{
	remove_pool(pool, audit);
	spm_pool *p;
	assert_int_equal(spm_create(&p, pool, 4 << 20, options), 0);
	struct mroot *r = spm_root(p, sizeof(*r));
	assert_non_null(r);
	assert_int_equal(spm_tx_begin(p), 0);
	assert_int_equal(spm_tx_add(p, r, sizeof(*r)), 0);
	r->buf = spm_tx_alloc(p, MIX_LINES * 64);
	assert_int_not_equal(r->buf, 0);
	assert_int_equal(spm_tx_commit(p), 0);
	assert_int_equal(spm_close(p), 0);
}

/* run_mix -- mix_status; 1 if it was killed, 0 if it exited with 0. */
static int run_mix(const char *pool, const char *audit, const char *options,
		   const char *seed, const char *crash)
{
	int st = mix_status(pool, audit, options, seed, crash);
	if (WIFSIGNALED(st)) {
		assert_int_equal(WTERMSIG(st), SIGKILL);
		return 1;
	}
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	return 0;
}

/* dropped_pair -- for each data entry of the transaction in turn: a fresh
 * pool, the run dies there, the next one rewrites every line. */
static void dropped_pair(void **state)
{
	const char *design = *state, *options = "ctr_cache_kib=1";
	char pool[2200], audit[2200], opts[64];
	paths(design, pool, audit, sizeof(pool));
	unsigned reused = 0, killed = 0;
	/* crash points around each transaction's header write (the crash point
	 * numbers of this workload, counted from the run's open) */
	static const unsigned near[] = {986, 2208, 3430};
	for (unsigned j = 0; j < 3 * 9; j++) {
		unsigned k = near[j / 9] - 4 + j % 9;
		snprintf(opts, sizeof(opts), "design=%s;%s", design, options);
		mix_pool(pool, audit, opts);
		char crash[64];
		snprintf(crash, sizeof(crash), "after:%u", k);
		killed += (unsigned)run_mix(pool, audit, options, "1", crash);
		run_mix(pool, audit, options, "2", NULL); /* recovers with the small cache */
		run_mix(pool, audit, "", "3", NULL);
		reused += audit_reused(audit, NULL);
	}
	remove_pool(pool, audit);
	print_message("%s %s: %u runs killed in or after the transaction, %u reused "
		      "pads\n", design, options, killed, reused);
	assert_true(killed > 0);
	assert_int_equal(reused, 0);
}

/*
 * crash_in_recovery -- a run dies inside a counter-atomic pair (its data
 * entry queued, not ready), the next dies in recovery's first re-encryption
 * of that pair's line, the next rewrites every line.  The dropped pair's
 * counter was only in memory while recovery worked (a review found:
 * fca reused the pad); now it stays in the ADR header until its line is
 * past it.
 */
static void crash_in_recovery(void **state)
{
	const char *design = *state;
	char pool[2200], audit[2200], opts[64];
	paths(design, pool, audit, sizeof(pool));
	unsigned reused = 0, killed = 0;
	static const unsigned at[] = {5, 30, 100, 300};
	for (unsigned j = 0; j < 4; j++) {
		snprintf(opts, sizeof(opts), "design=%s", design);
		mix_pool(pool, audit, opts);
		char crash[64];
		snprintf(crash, sizeof(crash), "point:wpq.data_enqueued:%u", at[j]);
		killed += (unsigned)run_mix(pool, audit, "", "1", crash);
		killed += (unsigned)run_mix(pool, audit, "", "2", "point:wpq.ctr_enqueued:1");
		run_mix(pool, audit, "", "3", NULL);
		reused += audit_reused(audit, NULL);
	}
	remove_pool(pool, audit);
	print_message("%s: %u runs killed (in a pair, then in recovery), %u reused pads\n",
		      design, killed, reused);
	assert_int_equal(killed, 8);
	assert_int_equal(reused, 0);
}

/*
 * stale_meta -- the meta file copied while a crashed pool was closed, put
 * back after the next open's recovery had written both files and was killed:
 * refused (the epochs), not recovered from the stale counters into a pad
 * used again (a review found: the epoch was raised only after recovery).
 */
static void stale_meta(void **state)
{
	(void)state;
	char pool[2200], audit[2200], meta[2300];
	paths("fca-stale", pool, audit, sizeof(pool));
	snprintf(meta, sizeof(meta), "%s.meta", pool);
	mix_pool(pool, audit, "design=fca");
	assert_int_equal(run_mix(pool, audit, "", "1", "point:wpq.payload_written:100"), 1);
	size_t n;
	uint8_t *copy = slurp(meta, &n);
	assert_int_equal(run_mix(pool, audit, "", "2", "point:drain.home_written:1"), 1);
	spit(meta, copy, n);
	free(copy);
	int st = mix_status(pool, audit, "", "3", NULL);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 3); /* spm_open refused it */
	assert_int_equal(audit_reused(audit, NULL), 0);
	remove_pool(pool, audit);
}

/*
 * colocated_never_direct -- a line with a co-located counter (colocated,
 * colocated-cc; ideal's battery-backed counter travels the same way) goes
 * home only through the queue, whose entry becomes valid with one store:
 * written straight home, line and counter were two stores, and a kill
 * between them left the line ahead of its counter (a review found:
 * a pad used again).  The crash point of the direct path is never reached;
 * sca, whose counter stays in the cache, still takes it.
 */
static void colocated_never_direct(void **state)
{
	(void)state;
	static const char *const designs[] = {"colocated", "colocated-cc", "ideal", "sca"};
	for (unsigned d = 0; d < 4; d++) {
		char pool[2200], audit[2200], opts[64];
		paths(designs[d], pool, audit, sizeof(pool));
		snprintf(opts, sizeof(opts), "design=%s", designs[d]);
		mix_pool(pool, audit, opts);
		int st = mix_status(pool, NULL, "", "0", "point:wpq.data_direct:1");
		int direct = WIFSIGNALED(st);
		print_message("%s: the direct path %s\n", designs[d], direct ? "taken" : "not taken");
		if (d < 3) {
			assert_true(WIFEXITED(st));
			assert_int_equal(WEXITSTATUS(st), 0);
		} else {
			assert_true(direct);
		}
		remove_pool(pool, audit);
	}
}

/* sweep -- ROUNDS crashing runs, run i crashing as crash_fmt says
 * with i + 1; returns the number of reused pads. */
static unsigned sweep_with(const char *design, const char *options, const char *crash_fmt,
			   unsigned *crashed)
{
	char pool[2200], audit[2200], opts[64];
	paths(design, pool, audit, sizeof(pool));
	remove_pool(pool, audit);
	snprintf(opts, sizeof(opts), "design=%s", design);
	spm_pool *p;
	assert_int_equal(spm_create(&p, pool, 8 << 20, opts), 0);
	struct aroot *r = spm_root(p, sizeof(*r));
	assert_non_null(r);
	assert_int_equal(spm_tx_begin(p), 0);
	assert_int_equal(spm_tx_add(p, r, sizeof(*r)), 0);
	r->recs = spm_tx_alloc(p, 64 * 64);
	r->scratch = spm_tx_alloc(p, 64);
	assert_int_equal(spm_tx_commit(p), 0);
	assert_int_equal(spm_close(p), 0);
	*crashed = 0;
	for (unsigned i = 0; i < ROUNDS; i++) {
		pid_t pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			char crash[64];
			snprintf(crash, sizeof(crash), crash_fmt, i + 1);
			setenv("SPM_CRASH", crash, 1);
			setenv("SPM_AUDIT", audit, 1);
			/* SPM_CRASH is read once per process: run the child fresh */
			execl("/proc/self/exe", "test_pad_audit", "child", pool,
			      options ? options : "", (char *)NULL);
			_exit(99);
		}
		int st;
		assert_int_equal(waitpid(pid, &st, 0), pid);
		if (WIFSIGNALED(st))
			assert_int_equal(WTERMSIG(st), SIGKILL), ++*crashed;
		else if (strcmp(design, "unsafe") != 0)
			assert_int_equal(WEXITSTATUS(st), 0);
		/* unsafe may find its own data undecryptable: that is its point */
	}
	/* every line of the audit log must be unique */
	unsigned reused = audit_reused(audit, NULL);
	char cmd[4600];
	snprintf(cmd, sizeof(cmd), "wc -l < '%s'", audit);
	FILE *f = popen(cmd, "r");
	char total[64] = "";
	assert_non_null(f);
	assert_non_null(fgets(total, sizeof(total), f));
	pclose(f);
	assert_true(strtoul(total, NULL, 10) > ROUNDS); /* the auditor saw the writes */
	remove_pool(pool, audit);
	return reused;
}

static unsigned sweep(const char *design, const char *options, unsigned *crashed)
{
	return sweep_with(design, options, "random:%u:0.01", crashed);
}

/* a design and the options its runs open with */
struct variant {
	const char *design, *options;
};

static void no_reuse(void **state)
{
	const struct variant *v = *state;
	const char *design = v->design;
	unsigned crashed, reused = sweep(design, v->options, &crashed);
	print_message("%s%s%s: %u runs, %u crashed, %u reused pads\n", design,
		      v->options ? " " : "", v->options ? v->options : "", ROUNDS, crashed,
		      reused);
	assert_true(crashed > ROUNDS / 4);
	assert_int_equal(reused, 0);
}

/* without the recovery of lost counters, the auditor must see reuse */
static void reuse_found_without_recovery(void **state)
{
	const char *design = *state;
	unsigned crashed, reused = sweep(design, "ctr_recovery=none", &crashed);
	print_message("%s, ctr_recovery=none: %u crashed, %u reused pads\n", design,
		      crashed, reused);
	assert_true(reused > 0);
}

int main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], "child") == 0)
		return child(argv[2], *argv[3] ? argv[3] : NULL);
	if (argc == 5 && strcmp(argv[1], "mix") == 0)
		return child_mix(argv[2], argv[3], strtoull(argv[4], NULL, 10));
	const char *d = getenv("SPM_TEST_DIR");
	snprintf(dir, sizeof(dir), "%s", d && *d ? d : "/tmp");
	/* a one-KiB counter cache (16 lines) evicts and re-records its shadow
	 * table all the time: recovery must read the table before it writes
	 * (a review found: the advance of a dropped pair overwrote an unread slot) */
	static const struct variant variants[] = {
		{"sca", NULL},		 {"unsafe", NULL},	{"fca", NULL},
		{"ideal", NULL},	 {"colocated", NULL},	{"colocated-cc", NULL},
		{"wt", NULL},		 {"wt-cwc", NULL},	{"wt-xbank", NULL},
		{"supermem", NULL},	 {"sca", "ctr_cache_kib=1"}, {"fca", "ctr_cache_kib=1"},
	};
	static const char *const names[] = {"sca", "unsafe", "fca", "ideal", "colocated",
					    "colocated-cc", "wt", "wt-cwc", "wt-xbank",
					    "supermem", "sca_tiny_cache", "fca_tiny_cache"};
	enum { ND = sizeof(variants) / sizeof(variants[0]) };
	_Static_assert(sizeof(names) / sizeof(names[0]) == ND, "a name per variant");
	struct CMUnitTest tests[ND + 9];
	unsigned n = 0;
	static const char *const in_recovery[] = {"fca", "sca", "supermem"};
	static const char *const in_recovery_names[] = {
		"fca_crash_in_recovery", "sca_crash_in_recovery", "supermem_crash_in_recovery"};
	for (unsigned i = 0; i < 3; i++)
		tests[n++] = (struct CMUnitTest){in_recovery_names[i], crash_in_recovery, NULL,
						 NULL, (void *)in_recovery[i]};
	tests[n++] = (struct CMUnitTest){"colocated_never_direct", colocated_never_direct, NULL,
					 NULL, NULL};
	tests[n++] = (struct CMUnitTest){"stale_meta", stale_meta, NULL, NULL, NULL};
	tests[n++] = (struct CMUnitTest){"sca_dropped_pair", dropped_pair, NULL, NULL,
					 (void *)"sca"};
	tests[n++] = (struct CMUnitTest){"fca_dropped_pair", dropped_pair, NULL, NULL,
					 (void *)"fca"};
	for (unsigned i = 0; i < ND; i++)
		tests[n++] = (struct CMUnitTest){names[i], no_reuse, NULL, NULL,
						 (void *)&variants[i]};
	tests[n++] = (struct CMUnitTest){"sca_without_recovery", reuse_found_without_recovery,
					 NULL, NULL, (void *)"sca"};
	tests[n++] = (struct CMUnitTest){"unsafe_without_recovery",
					 reuse_found_without_recovery, NULL, NULL,
					 (void *)"unsafe"};
	return _cmocka_run_group_tests("pad_audit", tests, n, NULL, NULL);
}
