/*
 * test_recovery_order.c -- a recovery killed while it frees the queue
 * entries it drained leaves only the newest writes of each line.
 *
 * A child commits 100 transactions that each write generation g into the
 * root line, and is killed after the 100th commit: the ADR data queue, a
 * ring that has wrapped, holds many versions of that line.  Recovery writes
 * them home oldest first, then frees their slots.  Freed in slot order, an
 * older version in a later slot could outlive a newer one, and the next
 * recovery would write it home over the newer one, under a counter that had
 * moved on (found by a power-failure campaign).  Here each
 * recovery is killed at every one of its recovery.entry_freed points in turn
 * (a child), and the next open must find generation 100, whole.
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

#define POOL_SIZE (4u << 20)
#define GENS 100

static char pool[2200];

/* put_gen -- one transaction: every word of the root line is g. */
static int put_gen(spm_pool *p, uint64_t g)
{
	uint64_t *root = spm_root(p, 64);
	if (!root || spm_tx_begin(p))
		return -1;
	if (spm_tx_add(p, root, 64)) {
		spm_tx_abort(p);
		return -1;
	}
	for (unsigned i = 0; i < 8; i++)
		root[i] = g;
	return spm_tx_commit(p);
}

/* child -- "run": GENS transactions (killed at the last commit by the
 * parent's SPM_CRASH); "open": open and close (recovery). */
static int child(const char *what)
{
	spm_pool *p = NULL;
	if (spm_open(&p, pool, NULL))
		return 3;
	for (uint64_t g = 1; !strcmp(what, "run") && g <= GENS; g++)
		if (put_gen(p, g))
			return 4;
	return spm_close(p) ? 4 : 0;
}

/* spawn -- this program as child what, with SPM_CRASH=crash; its status. */
static int spawn(const char *what, const char *crash)
{
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (setenv("SPM_CRASH", crash, 1) || setenv("SPM_TEST_POOL", pool, 1) ||
		    !freopen("/dev/null", "w", stderr)) /* its kill messages */
			_exit(5);
		execl("/proc/self/exe", "test_recovery_order", "child", what, (char *)NULL);
		_exit(6);
	}
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	return st;
}

static int killed(int st)
{
	return WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL;
}

/* newest -- the generation the root holds in every word (-1: mixed, or no
 * pool). */
static int64_t newest(void)
{
	spm_pool *p = NULL;
	if (spm_open(&p, pool, NULL))
		return -1;
	const uint64_t *root = spm_root(p, 64);
	int64_t g = root ? (int64_t)root[0] : -1;
	for (unsigned i = 1; root && i < 8; i++)
		if (root[i] != root[0])
			g = -1;
	assert_int_equal(spm_close(p), 0);
	return g;
}

/* sweep -- the test on one design: how many kills of recovery were found. */
static unsigned sweep(const char *design)
{
	char opts[64];
	snprintf(opts, sizeof(opts), "design=%s;prefault=0", design);
	spm_pool *p = fresh_pool(pool, POOL_SIZE, opts);
	assert_int_equal(put_gen(p, 0), 0);
	assert_int_equal(spm_close(p), 0);
	char crash[64];
	snprintf(crash, sizeof(crash), "point:tx.committed:%d", GENS);
	assert_true(killed(spawn("run", crash)));
	struct pool_image crashed = {0};
	pool_save(pool, &crashed);
	unsigned k = 1;
	for (;; k++) {
		pool_restore(pool, &crashed);
		snprintf(crash, sizeof(crash), "point:recovery.entry_freed:%u", k);
		int st = spawn("open", crash);
		if (!killed(st)) { /* past the last point: recovery completed */
			assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
			assert_int_equal(newest(), GENS);
			break;
		}
		int64_t g = newest();
		if (g != GENS)
			fail_msg("%s: recovery killed at its entry_freed point %u: the next "
				 "open found generation %lld, want %d", design, k, (long long)g,
				 GENS);
	}
	pool_image_free(&crashed);
	print_message("%s: %u kills of recovery, each recovered generation %d\n", design,
		      k - 1, GENS);
	return k - 1;
}

static void newest_writes_survive(void **state)
{
	(void)state;
	static const char *const designs[] = {"colocated", "ideal", "sca", "fca", "supermem"};
	for (unsigned d = 0; d < sizeof(designs) / sizeof(designs[0]); d++)
		assert_true(sweep(designs[d]) >= 16); /* the queue held that many */
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "child")) {
		snprintf(pool, sizeof(pool), "%s", getenv("SPM_TEST_POOL"));
		return child(argv[2]);
	}
	const char *dir = getenv("SPM_TEST_DIR");
	snprintf(pool, sizeof(pool), "%s/recovery-order-%ld", dir ? dir : "/tmp", (long)getpid());
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(newest_writes_survive),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	remove_pool_files(pool);
	return rc;
}
