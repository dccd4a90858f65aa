/*
 * test_pad_audit.c -- no pad is ever reused (ARCHITECTURE.md section 8):
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

/* child -- one session: open (recover), work, close; may be killed anywhere. */
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

/* sweep -- ROUNDS crashing sessions; returns the number of reused pads. */
static unsigned sweep(const char *design, const char *options, unsigned *crashed)
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
			snprintf(crash, sizeof(crash), "random:%u:0.01", i + 1);
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
	char cmd[4600], out[64] = "";
	snprintf(cmd, sizeof(cmd), "sort '%s' | uniq -d | wc -l", audit);
	FILE *f = popen(cmd, "r");
	assert_non_null(f);
	assert_non_null(fgets(out, sizeof(out), f));
	pclose(f);
	snprintf(cmd, sizeof(cmd), "wc -l < '%s'", audit);
	f = popen(cmd, "r");
	char total[64] = "";
	assert_non_null(f);
	assert_non_null(fgets(total, sizeof(total), f));
	pclose(f);
	assert_true(strtoul(total, NULL, 10) > ROUNDS); /* the auditor saw the writes */
	remove_pool(pool, audit);
	return (unsigned)strtoul(out, NULL, 10);
}

static void no_reuse(void **state)
{
	const char *design = *state;
	unsigned crashed, reused = sweep(design, NULL, &crashed);
	print_message("%s: %u sessions, %u crashed, %u reused pads\n", design, ROUNDS,
		      crashed, reused);
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
	const char *d = getenv("SPM_TEST_DIR");
	snprintf(dir, sizeof(dir), "%s", d && *d ? d : "/tmp");
	static const char *designs[] = {"sca", "unsafe", "fca", "ideal", "colocated",
					"colocated-cc", "wt", "wt-cwc", "wt-xbank", "supermem"};
	enum { ND = sizeof(designs) / sizeof(designs[0]) };
	struct CMUnitTest tests[ND + 2];
	unsigned n = 0;
	for (unsigned i = 0; i < ND; i++)
		tests[n++] = (struct CMUnitTest){designs[i], no_reuse, NULL, NULL,
						 (void *)designs[i]};
	tests[n++] = (struct CMUnitTest){"sca_without_recovery", reuse_found_without_recovery,
					 NULL, NULL, (void *)"sca"};
	tests[n++] = (struct CMUnitTest){"unsafe_without_recovery",
					 reuse_found_without_recovery, NULL, NULL,
					 (void *)"unsafe"};
	return _cmocka_run_group_tests("pad_audit", tests, n, NULL, NULL);
}
