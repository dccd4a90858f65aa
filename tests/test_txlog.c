/* test_txlog.c -- the transaction log ring (lib/txlog.c): rollback is exact however the ring wraps, the promised capacity fits wherever a transaction starts, a crash after the mutate stage of a wrapped transaction rolls all of it back at open, and objects far larger than the ring (fill entries for their bitmap words) allocate, free, abort and recover. */
#include <errno.h>
#include <fcntl.h>
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

#include <spm.h>

#include "test_files.h"

#define POOL_SIZE (8u << 20)
#define OBJ_SIZE (64u << 10)
#define LINE 64u
#define CAPACITY 32512u /* spm.h: the log entries every transaction can hold */

static const char *const designs[] = {"sca", "ideal", "fca", "plain", "supermem",
				      "supermem;minor_bits=2"};
#define NDESIGNS (sizeof(designs) / sizeof(designs[0]))

struct root {
	spm_off_t obj;
};

/* rng -- xorshift64*. */
static uint64_t rng(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dull;
}

static void pool_path(char *buf, size_t n, const char *tag)
{
	const char *dir = getenv("SPM_TEST_DIR");
	if (!dir || !*dir)
		dir = "/tmp";
	snprintf(buf, n, "%s/txlog-%ld-%s", dir, (long)getpid(), tag);
}

static uint64_t stat_of(spm_pool *p, const char *name)
{
	uint64_t v = 0;
	assert_int_equal(spm_stat(p, name, &v), 0);
	return v;
}

/* new_pool -- a pool of design with one zeroed object of OBJ_SIZE. */
static spm_pool *new_pool(const char *path, const char *design, uint8_t **obj)
{
	char opts[128];
	snprintf(opts, sizeof(opts), "design=%s", design);
	spm_pool *p = fresh_pool(path, POOL_SIZE, opts);
	struct root *r = spm_root(p, sizeof(*r));
	assert_non_null(r);
	assert_int_equal(spm_tx_begin(p), 0);
	assert_int_equal(spm_tx_add(p, r, sizeof(*r)), 0);
	r->obj = spm_tx_alloc(p, OBJ_SIZE);
	assert_true(r->obj != 0);
	assert_int_equal(spm_tx_commit(p), 0);
	*obj = spm_ptr(p, r->obj);
	return p;
}

/* snapshot_ranges -- add k random line ranges of obj (at most max_len bytes
 * each) to the open transaction and overwrite them; their offsets and
 * lengths in off[], len[].  Returns the spm_tx_add result that stopped it. */
static int snapshot_ranges(spm_pool *p, uint8_t *obj, uint64_t *seed, unsigned k,
			   unsigned max_lines)
{
	for (unsigned i = 0; i < k; i++) {
		uint64_t lines = 1 + rng(seed) % max_lines;
		uint64_t first = rng(seed) % (OBJ_SIZE / LINE - lines + 1);
		int rc = spm_tx_add(p, obj + first * LINE, lines * LINE);
		if (rc)
			return rc;
		for (uint64_t b = first * LINE; b < (first + lines) * LINE; b += 8) {
			uint64_t v = rng(seed);
			memcpy(obj + b, &v, 8);
		}
	}
	return 0;
}

/*
 * rollback_exact -- 600 transactions of 1-8 ranges of up to 8 KiB each, two
 * in three committed, the rest aborted (or refused with SPM_E_NOSPACE when
 * the ring has no room, then aborted): after each the object equals a copy
 * kept in DRAM; the ring wrapped inside some transactions.
 */
static void rollback_exact(void **state)
{
	(void)state;
	for (size_t d = 0; d < NDESIGNS; d++) {
		char path[256];
		pool_path(path, sizeof(path), "exact");
		uint8_t *obj, *shadow = calloc(1, OBJ_SIZE);
		assert_non_null(shadow);
		spm_pool *p = new_pool(path, designs[d], &obj);
		uint64_t seed = 0x1234567 + d, refused = 0, committed = 0;
		for (unsigned t = 0; t < 600; t++) {
			assert_int_equal(spm_tx_begin(p), 0);
			int rc = snapshot_ranges(p, obj, &seed, 1 + rng(&seed) % 8, 128);
			if (rc) {
				assert_int_equal(rc, SPM_E_NOSPACE);
				refused++;
			}
			if (rc == 0 && rng(&seed) % 3) {
				assert_int_equal(spm_tx_commit(p), 0);
				memcpy(shadow, obj, OBJ_SIZE);
				committed++;
			} else {
				spm_tx_abort(p);
			}
			assert_memory_equal(obj, shadow, OBJ_SIZE);
		}
		uint64_t wraps = stat_of(p, "tx.log_wraps");
		print_message("  %-22s %llu committed, %llu refused (log full), %llu wrapped\n",
			      designs[d], (unsigned long long)committed,
			      (unsigned long long)refused, (unsigned long long)wraps);
		assert_true(wraps > 0);
		assert_true(committed > 300);
		assert_int_equal(spm_close(p), 0);
		assert_int_equal(spm_open(&p, path, NULL), 0);
		struct root *r = spm_root(p, sizeof(*r));
		assert_memory_equal(spm_ptr(p, r->obj), shadow, OBJ_SIZE);
		assert_int_equal(spm_close(p), 0);
		remove_pool_files(path);
		free(shadow);
	}
}

/*
 * capacity -- wherever the ring head stands (moved by transactions of 1 to
 * 64 lines), a transaction of exactly CAPACITY bytes of entries (an entry:
 * its lines and one line of header) commits; one of the whole object does
 * not fit and is refused with SPM_E_NOSPACE, and its abort restores all.
 */
static void capacity(void **state)
{
	(void)state;
	char path[256];
	pool_path(path, sizeof(path), "cap");
	uint8_t *obj;
	spm_pool *p = new_pool(path, "sca", &obj);
	uint64_t seed = 99;
	for (unsigned shift = 1; shift <= 64; shift++) {
		assert_int_equal(spm_tx_begin(p), 0);
		assert_int_equal(spm_tx_add(p, obj, shift * LINE), 0);
		assert_int_equal(spm_tx_commit(p), 0);
		/* 7 entries of 4096 B (65 lines each) and one of 3328 B (53 lines) */
		assert_int_equal(spm_tx_begin(p), 0);
		for (unsigned e = 0; e < 8; e++) {
			uint64_t len = e < 7 ? 4096 : 3328, at = e * 8192;
			assert_int_equal(spm_tx_add(p, obj + at, len), 0);
			memset(obj + at, (int)(rng(&seed) & 0xff), len);
		}
		assert_int_equal(spm_tx_commit(p), 0);
	}
	uint8_t *before = malloc(OBJ_SIZE);
	assert_non_null(before);
	memcpy(before, obj, OBJ_SIZE);
	assert_int_equal(spm_tx_begin(p), 0);
	int rc = 0;
	for (unsigned at = 0; at < OBJ_SIZE && rc == 0; at += 4096) {
		rc = spm_tx_add(p, obj + at, 4096);
		if (rc == 0)
			memset(obj + at, 0x5a, 4096);
	}
	assert_int_equal(rc, SPM_E_NOSPACE);
	spm_tx_abort(p);
	assert_memory_equal(obj, before, OBJ_SIZE);
	free(before);
	assert_int_equal(spm_close(p), 0);
	remove_pool_files(path);
}

/*
 * crash_child -- transactions until one wraps the ring; that one writes the
 * object as it was to expect_path, overwrites its ranges, persists them (the
 * mutate stage, without the commit) and is killed.  Exit 3: no wrap seen.
 */
static void crash_child(const char *path, const char *expect_path)
{
	spm_pool *p = NULL;
	if (spm_open(&p, path, NULL) != 0)
		_exit(2);
	struct root *r = spm_root(p, sizeof(*r));
	uint8_t *obj = spm_ptr(p, r->obj);
	uint64_t seed = 777;
	for (unsigned t = 0; t < 4000; t++) {
		uint64_t wraps = stat_of(p, "tx.log_wraps");
		if (spm_tx_begin(p) != 0)
			_exit(2);
		uint8_t *before = malloc(OBJ_SIZE);
		if (!before)
			_exit(2);
		memcpy(before, obj, OBJ_SIZE);
		unsigned k = 2 + rng(&seed) % 10;
		int rc = 0;
		uint64_t first[12], lines[12];
		for (unsigned i = 0; i < k && rc == 0; i++) {
			lines[i] = 1 + rng(&seed) % 96;
			first[i] = rng(&seed) % (OBJ_SIZE / LINE - lines[i] + 1);
			rc = spm_tx_add(p, obj + first[i] * LINE, lines[i] * LINE);
			if (rc)
				k = i;
		}
		int wrapped = stat_of(p, "tx.log_wraps") > wraps;
		if (wrapped && t >= 20) {
			spit(expect_path, before, OBJ_SIZE);
			for (unsigned i = 0; i < k; i++) {
				memset(obj + first[i] * LINE, 0xc3, lines[i] * LINE);
				spm_persist(p, obj + first[i] * LINE, lines[i] * LINE);
			}
			raise(SIGKILL);
		}
		for (unsigned i = 0; i < k; i++)
			memset(obj + first[i] * LINE, (int)(t & 0xff), lines[i] * LINE);
		if (rc == 0 ? spm_tx_commit(p) != 0 : (spm_tx_abort(p), 0))
			_exit(2);
		free(before);
	}
	_exit(3);
}

/* crash_after_mutate -- the child above on each design; at open the wrapped
 * transaction is rolled back whole: the object is as it was before it. */
static void crash_after_mutate(void **state)
{
	(void)state;
	for (size_t d = 0; d < NDESIGNS; d++) {
		char path[256], expect_path[300];
		pool_path(path, sizeof(path), "crash");
		snprintf(expect_path, sizeof(expect_path), "%s.expect", path);
		uint8_t *obj;
		spm_pool *p = new_pool(path, designs[d], &obj);
		assert_int_equal(spm_close(p), 0);
		fflush(NULL);
		pid_t pid = fork();
		assert_true(pid >= 0);
		if (pid == 0)
			crash_child(path, expect_path);
		int status;
		assert_int_equal(waitpid(pid, &status, 0), pid);
		assert_true(WIFSIGNALED(status));
		assert_int_equal(WTERMSIG(status), SIGKILL);
		assert_int_equal(spm_open(&p, path, NULL), 0);
		assert_int_equal(stat_of(p, "recovery.rolled_back"), 1);
		size_t n;
		uint8_t *expect = slurp(expect_path, &n);
		assert_int_equal(n, OBJ_SIZE);
		struct root *r = spm_root(p, sizeof(*r));
		assert_memory_equal(spm_ptr(p, r->obj), expect, OBJ_SIZE);
		free(expect);
		assert_int_equal(spm_close(p), 0);
		unlink(expect_path);
		remove_pool_files(path);
	}
}

#define BIG_POOL (96u << 20)
#define BIG_OBJ (40u << 20) /* its bitmap words alone: 160 KiB, over twice the ring */

/* big_alloc -- in one transaction of pool p: allocate a BIG_OBJ and commit
 * or abort; the object's offset, 0 if the allocation or commit failed */
static spm_off_t big_alloc(spm_pool *p, int commit)
{
	if (spm_tx_begin(p) != 0)
		return 0;
	spm_off_t o = spm_tx_alloc(p, BIG_OBJ);
	if (!o) {
		spm_tx_abort(p);
		return 0;
	}
	if (!commit) {
		spm_tx_abort(p);
		return o;
	}
	return spm_tx_commit(p) == 0 ? o : 0;
}

/* reopen -- close p and open the pool at path again. */
static spm_pool *reopen(spm_pool *p, const char *path)
{
	assert_int_equal(spm_close(p), 0);
	spm_pool *q = NULL;
	assert_int_equal(spm_open(&q, path, NULL), 0);
	return q;
}

/* big_objects -- a 40 MiB object allocates and frees in one transaction
 * (it failed with "log full" before fill entries); an aborted one leaves
 * the persistent bitmap as it was: after a reopen two fit again */
static void big_objects(void **state)
{
	(void)state;
	static const char *const big_designs[] = {"sca", "supermem;minor_bits=2"};
	for (size_t d = 0; d < 2; d++) {
		char path[256], opts[64];
		pool_path(path, sizeof(path), "big");
		snprintf(opts, sizeof(opts), "design=%s", big_designs[d]);
		spm_pool *p = fresh_pool(path, BIG_POOL, opts);
		spm_off_t a = big_alloc(p, 1);
		assert_true(a != 0);
		const uint8_t *obj = spm_ptr(p, a);
		assert_true(obj[0] == 0 && obj[BIG_OBJ - 1] == 0);
		assert_true(big_alloc(p, 0) != 0); /* allocated, then aborted */
		p = reopen(p, path);
		spm_off_t b = big_alloc(p, 1);
		assert_true(b != 0 && b != a);
		assert_int_equal(big_alloc(p, 1), 0); /* a third does not fit */
		/* free one: after a reopen its space is there again */
		assert_int_equal(spm_tx_begin(p), 0);
		assert_int_equal(spm_tx_free(p, a), 0);
		assert_int_equal(spm_tx_commit(p), 0);
		p = reopen(p, path);
		assert_true(big_alloc(p, 1) != 0);
		assert_int_equal(spm_close(p), 0);
		remove_pool_files(path);
	}
}

/* big_child -- re-executed with SPM_CRASH set: allocate (mode "alloc") or
 * free the root's object ("free"), killed inside the commit */
static int big_child(const char *mode, const char *path)
{
	spm_pool *p = NULL;
	if (spm_open(&p, path, NULL) != 0)
		return 2;
	struct root *r = spm_root(p, sizeof(*r));
	if (strcmp(mode, "alloc") == 0) {
		big_alloc(p, 1);
	} else if (spm_tx_begin(p) == 0) {
		spm_tx_free(p, r->obj);
		spm_tx_commit(p);
	}
	spm_close(p);
	return 3; /* not killed */
}

/* run_big_child -- big_child in mode under SPM_CRASH=crash; killed? */
static void run_big_child(const char *mode, const char *path, const char *crash)
{
	char env[128], self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	assert_true(n > 0);
	self[n] = 0;
	snprintf(env, sizeof(env), "SPM_CRASH=%s", crash);
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		putenv(env);
		execl(self, self, "big-child", mode, path, (char *)NULL);
		_exit(4);
	}
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
}

/* big_crash -- killed after the mutate stage of a transaction that
 * allocates, then of one that frees, a 40 MiB object (its bitmap words
 * durable, the commit not): recovery rolls the fill entry back, so the
 * allocation leaks nothing (two more fit) and the free frees nothing */
static void big_crash(void **state)
{
	(void)state;
	char path[256];
	pool_path(path, sizeof(path), "bigcrash");
	spm_pool *p = fresh_pool(path, BIG_POOL, "design=sca");
	assert_non_null(spm_root(p, sizeof(struct root))); /* not the child's first tx */
	assert_int_equal(spm_close(p), 0);
	run_big_child("alloc", path, "point:tx.mutated:1");
	assert_int_equal(spm_open(&p, path, NULL), 0);
	assert_int_equal(stat_of(p, "recovery.rolled_back"), 1);
	struct root *r = spm_root(p, sizeof(*r));
	assert_int_equal(spm_tx_begin(p), 0);
	assert_int_equal(spm_tx_add(p, r, sizeof(*r)), 0);
	r->obj = spm_tx_alloc(p, BIG_OBJ);
	assert_true(r->obj != 0);
	assert_int_equal(spm_tx_commit(p), 0);
	spm_off_t keep = r->obj;
	assert_true(big_alloc(p, 0) != 0); /* a second still fits */
	assert_int_equal(spm_close(p), 0);
	run_big_child("free", path, "point:tx.mutated:1");
	assert_int_equal(spm_open(&p, path, NULL), 0);
	assert_int_equal(stat_of(p, "recovery.rolled_back"), 1);
	r = spm_root(p, sizeof(*r));
	assert_int_equal(r->obj, keep);
	spm_off_t b = big_alloc(p, 1);
	assert_true(b != 0 && b != keep);      /* the second fits */
	assert_int_equal(big_alloc(p, 1), 0); /* the rolled-back free left it allocated */
	assert_int_equal(spm_tx_begin(p), 0);
	assert_int_equal(spm_tx_free(p, keep), 0); /* still an object */
	assert_int_equal(spm_tx_commit(p), 0);
	assert_int_equal(spm_close(p), 0);
	remove_pool_files(path);
}

int main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], "big-child") == 0)
		return big_child(argv[2], argv[3]);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(rollback_exact),
		cmocka_unit_test(capacity),
		cmocka_unit_test(crash_after_mutate),
		cmocka_unit_test(big_objects),
		cmocka_unit_test(big_crash),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
