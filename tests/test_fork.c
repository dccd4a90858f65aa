/*
 * test_fork.c -- a pool in a child of fork(): every call on the inherited
 * pool is refused with SPM_E_INVAL and writes nothing, and the child's
 * spm_close leaves the parent's pool open and dirty, so that a crash of
 * the parent is still recovered at the next open.
 */
#define _GNU_SOURCE
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

#include "test_files.h"

struct froot {
	uint64_t a; /* committed 1; 10 in the parent's open transaction */
	uint8_t pad[56];
	uint64_t b; /* committed 2; the child tries to write 666 */
};

/* pool_path -- a pool path of this process in the test directory. */
static void pool_path(char *buf, size_t n, const char *tag)
{
	const char *dir = getenv("SPM_TEST_DIR");
	snprintf(buf, n, "%s/fork-%ld-%s", dir && *dir ? dir : "/tmp", (long)getpid(), tag);
}

/* A process that is not the cmocka runner (a forked child) counts its failed
 * checks and reports the count as its exit status. */
static int failures;
#define CHECK(cond)                                                                  \
	do {                                                                         \
		if (!(cond)) {                                                       \
			fprintf(stderr, "%s:%d: check failed: %s (%s)\n", __FILE__,  \
				__LINE__, #cond, spm_errormsg());                    \
			failures++;                                                  \
		}                                                                    \
	} while (0)

/* forked_refusal -- the thread's last error is the fork refusal. */
static int forked_refusal(void)
{
	return spm_errcode() == SPM_E_INVAL && strstr(spm_errormsg(), "after fork") != NULL;
}

/* other_error -- set the thread's last error to something else, so that a
 * void call's refusal shows. */
static void other_error(void)
{
	(void)spm_tx_commit(NULL);
}

/* child_calls -- in the child: every call on the inherited pool p is
 * refused; the stores it makes to its view reach no file. */
static void child_calls(spm_pool *p, struct froot *r)
{
	const spm_off_t off = 8192; /* a valid offset of the parent's pool */
	uint64_t v = 0;
	r->b = 666;
	other_error();
	spm_persist(p, &r->b, sizeof(r->b));
	CHECK(forked_refusal());
	other_error();
	spm_flush(p, &r->b, sizeof(r->b));
	CHECK(forked_refusal());
	other_error();
	spm_drain(p);
	CHECK(forked_refusal());
	other_error();
	spm_counter_cache_writeback(p, &r->b, sizeof(r->b));
	CHECK(forked_refusal());
	other_error();
	spm_model_work(p, 100);
	CHECK(forked_refusal());
	other_error();
	spm_stat_reset(p);
	CHECK(forked_refusal());
	CHECK(spm_counter_atomic(p, &r->b, 8) == SPM_E_INVAL && forked_refusal());
	CHECK(spm_core_set(p, 1) == SPM_E_INVAL && forked_refusal());
	CHECK(spm_stat(p, "tx.committed", &v) == SPM_E_INVAL && forked_refusal());
	other_error();
	CHECK(spm_ptr(p, off) == NULL && forked_refusal());
	other_error();
	CHECK(spm_off(p, r) == 0 && forked_refusal());
	other_error();
	CHECK(spm_size(p) == 0 && forked_refusal());
	other_error();
	CHECK(spm_design(p) == NULL && forked_refusal());
	other_error();
	CHECK(spm_root(p, sizeof(*r)) == NULL && forked_refusal());
	/* the parent's open transaction: neither committed nor aborted here */
	CHECK(spm_tx_add(p, &r->b, sizeof(r->b)) == SPM_E_INVAL && forked_refusal());
	other_error();
	CHECK(spm_tx_alloc(p, 64) == 0 && forked_refusal());
	CHECK(spm_tx_free(p, 8192) == SPM_E_INVAL && forked_refusal());
	CHECK(spm_tx_commit(p) == SPM_E_INVAL && forked_refusal());
	other_error();
	spm_tx_abort(p);
	CHECK(forked_refusal());
	CHECK(spm_tx_begin(p) == SPM_E_INVAL && forked_refusal());
	/* the close frees the child's copy, and leaves the parent's pool be */
	CHECK(spm_close(p) == SPM_E_INVAL && forked_refusal());
}

/* child_own_pool -- in the child: a pool of its own works as anywhere. */
static void child_own_pool(const char *path)
{
	spm_pool *q = NULL;
	remove_pool_files(path);
	CHECK(spm_create(&q, path, 4u << 20, "design=sca") == 0);
	if (!q)
		return;
	uint64_t *x = spm_root(q, 64);
	CHECK(x != NULL);
	CHECK(spm_tx_begin(q) == 0);
	CHECK(x && spm_tx_add(q, x, 8) == 0);
	if (x)
		*x = 7;
	CHECK(spm_tx_commit(q) == 0);
	CHECK(spm_close(q) == 0);
	remove_pool_files(path);
}

/* make_pool -- the pool the parent works on: a = 1, b = 2 committed. */
static spm_pool *make_pool(const char *path, struct froot **out)
{
	spm_pool *p = NULL;
	remove_pool_files(path);
	CHECK(spm_create(&p, path, 4u << 20, "design=sca") == 0);
	if (!p)
		_exit(100);
	struct froot *r = spm_root(p, sizeof(*r));
	CHECK(r != NULL);
	if (!r)
		_exit(101);
	CHECK(spm_tx_begin(p) == 0);
	CHECK(spm_tx_add(p, r, sizeof(*r)) == 0);
	r->a = 1;
	r->b = 2;
	CHECK(spm_tx_commit(p) == 0);
	*out = r;
	return p;
}

/* parent_process -- create a pool, open a transaction (a = 10, written back
 * but not committed), fork a child that tries every call, report the
 * failures on out, wait for go, then die without closing: a crash. */
static void parent_process(const char *path, const char *own, int out, int go)
{
	struct froot *r;
	spm_pool *p = make_pool(path, &r);
	CHECK(spm_tx_begin(p) == 0);
	CHECK(spm_tx_add(p, &r->a, sizeof(r->a)) == 0);
	r->a = 10;
	spm_persist(p, &r->a, sizeof(r->a));
	pid_t c = fork();
	if (c == 0) {
		failures = 0;
		child_calls(p, r);
		child_own_pool(own);
		_exit(failures > 100 ? 100 : failures);
	}
	int st = -1;
	CHECK(c > 0 && waitpid(c, &st, 0) == c);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	/* the parent's pool works on after the child's close */
	CHECK(spm_size(p) == (4u << 20));
	CHECK(r->b == 2); /* the child's store was to its own copy */
	uint8_t n = (uint8_t)(failures > 100 ? 100 : failures);
	char c2;
	if (write(out, &n, 1) != 1 || read(go, &c2, 1) != 1)
		_exit(102);
	_exit(0); /* killed with the transaction open: no close */
}

/*
 * child_close_keeps_parent_recoverable -- the child's calls are refused and
 * its spm_close does not mark the pool clean: the parent's later crash is
 * recovered (its open transaction rolled back: a == 1, b == 2).  Before the
 * refusal the child's persist wrote b = 666, its commit made a = 10 durable,
 * and its close marked the pool clean, so the next open recovered nothing.
 */
static void child_close_keeps_parent_recoverable(void **state)
{
	(void)state;
	char path[4096], own[4096];
	pool_path(path, sizeof(path), "pool");
	pool_path(own, sizeof(own), "child");
	int to_test[2], to_parent[2];
	assert_int_equal(pipe(to_test), 0);
	assert_int_equal(pipe(to_parent), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(to_test[0]);
		close(to_parent[1]);
		parent_process(path, own, to_test[1], to_parent[0]);
	}
	close(to_test[1]); /* the parent's death is an end of file */
	close(to_parent[0]);
	uint8_t n = 255;
	assert_int_equal(read(to_test[0], &n, 1), 1);
	/* the parent is alive: its lock held, though the child closed its copy */
	spm_pool *p = NULL;
	assert_int_equal(spm_open(&p, path, NULL), SPM_E_BUSY);
	assert_int_equal(write(to_parent[1], "x", 1), 1);
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	assert_int_equal(spm_open(&p, path, NULL), 0);
	uint64_t rolled = 0;
	assert_int_equal(spm_stat(p, "recovery.rolled_back", &rolled), 0);
	assert_int_equal(rolled, 1);
	const struct froot *r = spm_root(p, sizeof(*r));
	assert_non_null(r);
	assert_int_equal(r->a, 1);
	assert_int_equal(r->b, 2);
	assert_int_equal(spm_close(p), 0);
	remove_pool_files(path);
	assert_int_equal(n, 0); /* every check of the parent and its child held */
	close(to_test[0]);
	close(to_parent[1]);
}

/*
 * parent_unaffected -- a fork changes nothing for the process that opened the
 * pool: a child that exits at once, or that closes its copy, leaves the
 * parent's transactions and its clean close working.
 */
static void parent_unaffected(void **state)
{
	(void)state;
	char path[4096];
	pool_path(path, sizeof(path), "keep");
	struct froot *r;
	failures = 0;
	spm_pool *p = make_pool(path, &r);
	assert_int_equal(failures, 0);
	for (int closes = 0; closes < 2; closes++) {
		pid_t c = fork();
		assert_true(c >= 0);
		if (c == 0)
			_exit(closes ? (spm_close(p) == SPM_E_INVAL ? 0 : 1) : 0);
		int st;
		assert_int_equal(waitpid(c, &st, 0), c);
		assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
		assert_int_equal(spm_tx_begin(p), 0);
		assert_int_equal(spm_tx_add(p, &r->b, sizeof(r->b)), 0);
		r->b = 3 + (uint64_t)closes;
		assert_int_equal(spm_tx_commit(p), 0);
	}
	assert_int_equal(spm_close(p), 0);
	assert_int_equal(spm_open(&p, path, NULL), 0);
	uint64_t rolled = 1;
	assert_int_equal(spm_stat(p, "recovery.rolled_back", &rolled), 0);
	assert_int_equal(rolled, 0);
	r = spm_root(p, sizeof(*r));
	assert_non_null(r);
	assert_int_equal(r->b, 4);
	assert_int_equal(spm_close(p), 0);
	remove_pool_files(path);
}

/*
 * child_holds_lock -- the child's copy of the lock descriptors keeps the
 * pool locked after the parent's close, until the child ends (as the
 * header says); the child never unlocks it under its parent.
 */
static void child_holds_lock(void **state)
{
	(void)state;
	char path[4096];
	pool_path(path, sizeof(path), "lock");
	struct froot *r;
	failures = 0;
	spm_pool *p = make_pool(path, &r);
	assert_int_equal(failures, 0);
	int go[2];
	assert_int_equal(pipe(go), 0);
	pid_t c = fork();
	assert_true(c >= 0);
	if (c == 0) {
		char x;
		close(go[1]);
		_exit(read(go[0], &x, 1) == 0 ? 0 : 1); /* until the parent says */
	}
	close(go[0]);
	assert_int_equal(spm_close(p), 0);
	assert_int_equal(spm_open(&p, path, NULL), SPM_E_BUSY);
	close(go[1]); /* the child ends */
	int st;
	assert_int_equal(waitpid(c, &st, 0), c);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	assert_int_equal(spm_open(&p, path, NULL), 0);
	assert_int_equal(spm_close(p), 0);
	remove_pool_files(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(child_close_keeps_parent_recoverable),
		cmocka_unit_test(parent_unaffected),
		cmocka_unit_test(child_holds_lock),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
