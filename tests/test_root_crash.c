/*
 * test_root_crash.c -- a crash inside a pool's first spm_root leaves a pool
 * that opens.  The root's offset shares the pool header's second line with
 * the checksum that open verifies before recovery; written without its
 * counter (sca's mutate stage), a crash could leave the line unreadable and
 * the pool refused at every open (a review found it: 4 of 71 crash
 * points of open + spm_root + close on sca).  The header lines are now
 * CounterAtomic, set at create and, for a pool made before, at open.
 *
 * Each design: a pool without a root; a child (a fresh process: the crash
 * injector is read once) opens it, calls spm_root and closes, and is killed
 * at each of its crash points in turn; then the pool must open, with no root
 * or a zeroed one.  Then the same with the header's CounterAtomic bits
 * cleared in the meta file (an older pool): the first open sets them.  And
 * the root made in the run that created the pool.
 *
 * Internal: clears the bits through struct superblock.
 */
#include <setjmp.h>
#include <signal.h>
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
#include "emu_internal.h"
#include "pool_internal.h"

static char pool[2200], meta[2300], key[2300], errfile[2300];

/* child -- open (or with design, create), the root (64 bytes, written in a
 * transaction), close; or with design and "create-only" just create. */
static int child(const char *path, const char *design, int create_only)
{
	spm_pool *p;
	char opts[64];
	snprintf(opts, sizeof(opts), "design=%s", design ? design : "");
	if (design ? spm_create(&p, path, 8 << 20, opts) : spm_open(&p, path, NULL))
		return 3;
	if (create_only)
		return spm_close(p) ? 7 : 0;
	uint8_t *r = spm_root(p, 64);
	if (!r)
		return 4;
	if (spm_tx_begin(p) || spm_tx_add(p, r, 64))
		return 5;
	memset(r, 0x5a, 64);
	if (spm_tx_commit(p))
		return 6;
	return spm_close(p) ? 7 : 0;
}

/* run_child -- child() in a fresh process with SPM_CRASH=crash, stderr to
 * errfile (design NULL: open the pool; else create it, and with create_only
 * nothing else); its wait status. */
static int run_child_as(const char *crash, const char *design, int create_only)
{
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		setenv("SPM_CRASH", crash, 1);
		FILE *f = freopen(errfile, "w", stderr);
		(void)f;
		execl("/proc/self/exe", "test_root_crash", pool, design ? design : "",
		      create_only ? "create-only" : "", (char *)NULL);
		_exit(99);
	}
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	return st;
}

static int run_child(const char *crash)
{
	return run_child_as(crash, NULL, 0);
}

/* crash_points -- how many crash points child() passes (SPM_CRASH=count). */
static unsigned crash_points_as(const char *design, int create_only)
{
	int st = run_child_as("count", design, create_only);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	size_t len;
	uint8_t *out = slurp(errfile, &len);
	out[len] = 0;
	const char *at = strstr((const char *)out, "spm-crash-points: ");
	assert_non_null(at);
	unsigned n = (unsigned)strtoul(at + strlen("spm-crash-points: "), NULL, 10);
	free(out);
	return n;
}

static unsigned crash_points(void)
{
	return crash_points_as(NULL, 0);
}

/* opens -- the pool opens; its root is absent, zero, or the child's. */
static void opens(const char *design, unsigned k)
{
	spm_pool *p;
	if (spm_open(&p, pool, NULL))
		fail_msg("%s, killed at crash point %u of the first spm_root: %s", design, k,
			 spm_errormsg());
	uint8_t *r = spm_root(p, 64);
	assert_non_null(r);
	for (unsigned i = 1; i < 64; i++)
		assert_int_equal(r[i], r[0]);
	assert_true(r[0] == 0 || r[0] == 0x5a);
	assert_int_equal(spm_close(p), 0);
}

/* clear_hdr_bits -- the meta file as older pools have it:
 * the pool header's lines not CounterAtomic. */
static void clear_hdr_bits(void)
{
	size_t len;
	uint8_t *m = slurp(meta, &len);
	struct superblock sb;
	memcpy(&sb, m, sizeof(sb));
	uint64_t first = POOL_HDR_OFF / SPM_LINE;
	for (uint64_t l = first; l < first + 2; l++)
		m[sb.ca_off + l / 8] &= (uint8_t) ~(1u << (l % 8));
	spit(meta, m, len);
	free(m);
}

/* sweep -- every crash point of a pool's first spm_root, for design. */
static void sweep(const char *design, int old_pool)
{
	remove_pool_files(pool);
	spm_pool *p;
	char opts[64];
	snprintf(opts, sizeof(opts), "design=%s", design);
	assert_int_equal(spm_create(&p, pool, 8 << 20, opts), 0);
	assert_int_equal(spm_close(p), 0);
	if (old_pool)
		clear_hdr_bits();
	size_t dlen, mlen, klen;
	uint8_t *d = slurp(pool, &dlen), *m = slurp(meta, &mlen), *kb = slurp(key, &klen);
	unsigned n = crash_points(), killed = 0;
	assert_true(n > 10);
	for (unsigned k = 1; k <= n; k++) {
		spit(pool, d, dlen);
		spit(meta, m, mlen);
		spit(key, kb, klen);
		char crash[32];
		snprintf(crash, sizeof(crash), "after:%u", k);
		int st = run_child(crash);
		killed += WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL;
		opens(design, k);
	}
	print_message("%s%s: killed at each of %u crash points of open + first spm_root + "
		      "close: every pool opened\n", design, old_pool ? " (older pool)" : "", n);
	assert_int_equal(killed, n);
	free(d);
	free(m);
	free(kb);
	remove_pool_files(pool);
}

/* in_run -- the root made in the run that created the pool: each
 * crash point after the create's own (a crash inside spm_create leaves no
 * pool to recover). */
static void in_run(void **state)
{
	(void)state;
	remove_pool_files(pool);
	unsigned from = crash_points_as("sca", 1);
	remove_pool_files(pool);
	unsigned to = crash_points_as("sca", 0);
	assert_true(to > from + 10);
	for (unsigned k = from + 1; k <= to; k++) {
		remove_pool_files(pool);
		char crash[32];
		snprintf(crash, sizeof(crash), "after:%u", k);
		int st = run_child_as(crash, "sca", 0);
		assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
		opens("sca, created in the run", k);
	}
	print_message("sca: killed at each of %u crash points of the first spm_root after "
		      "spm_create: every pool opened\n", to - from);
	remove_pool_files(pool);
}

static void sca(void **state)
{
	(void)state;
	sweep("sca", 0);
}

static void sca_older_pool(void **state)
{
	(void)state;
	sweep("sca", 1);
}

static void others(void **state)
{
	(void)state;
	sweep("fca", 0);
	sweep("supermem", 0);
	sweep("colocated-cc", 0);
}

int main(int argc, char **argv)
{
	if (argc == 4) /* a child: pool, design ("": open), "create-only" or "" */
		return child(argv[1], *argv[2] ? argv[2] : NULL, !strcmp(argv[3], "create-only"));
	const char *base = getenv("SPM_TEST_DIR");
	snprintf(pool, sizeof(pool), "%s/rootcrash-%d", base && *base ? base : "/tmp",
		 (int)getpid());
	snprintf(meta, sizeof(meta), "%s.meta", pool);
	snprintf(key, sizeof(key), "%s.key", pool);
	snprintf(errfile, sizeof(errfile), "%s.err", pool);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sca),
		cmocka_unit_test(sca_older_pool),
		cmocka_unit_test(in_run),
		cmocka_unit_test(others),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	unlink(errfile);
	return rc;
}
