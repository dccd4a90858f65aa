/*
 * test_misuse.c -- misuse the runtime refuses, and the error code that says
 * so: every statistic name listed and readable (time.core10_ns to
 * time.core63_ns crashed), no message left by a successful read; the root
 * object cannot be freed; spm_root inside a transaction is refused;
 * spm_errcode after a failed allocation; what a failed spm_tx_add leaves.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <spm.h>

#include "test_files.h"

#define ROOT (64u * 1024u) /* root size: a run the allocator could reuse */

/* pool_path -- a pool path of this process in the test directory. */
static void pool_path(char *buf, size_t n, const char *tag)
{
	const char *dir = getenv("SPM_TEST_DIR");
	snprintf(buf, n, "%s/misuse-%ld-%s", dir && *dir ? dir : "/tmp", (long)getpid(), tag);
}

/* make_pool -- a new 4 MiB pool. */
static spm_pool *make_pool(const char *path)
{
	spm_pool *p = NULL;
	remove_pool_files(path);
	assert_int_equal(spm_create(&p, path, 4u << 20, "design=sca"), 0);
	return p;
}

/* drop_pool -- close p and remove its files. */
static void drop_pool(spm_pool *p, const char *path)
{
	assert_int_equal(spm_close(p), 0);
	remove_pool_files(path);
}

/* txstate_error -- make the thread's last error SPM_E_TXSTATE. */
static void txstate_error(void)
{
	assert_int_equal(spm_tx_commit(NULL), SPM_E_TXSTATE);
	assert_int_equal(spm_errcode(), SPM_E_TXSTATE);
}

/* name_count -- the entries of spm_stat_names(), each distinct. */
static size_t name_count(void)
{
	const char *const *names = spm_stat_names();
	size_t n = 0;
	assert_non_null(names);
	for (; names[n]; n++)
		for (size_t k = 0; k < n; k++)
			assert_string_not_equal(names[k], names[n]);
	return n;
}

/* listed -- is name in spm_stat_names()? */
static int listed(const char *name)
{
	for (const char *const *n = spm_stat_names(); *n; n++)
		if (strcmp(*n, name) == 0)
			return 1;
	return 0;
}

/* some_work -- a committed transaction on modeled core core. */
static void some_work(spm_pool *p, unsigned core)
{
	assert_int_equal(spm_core_set(p, core), 0);
	uint8_t *r = spm_root(p, 64);
	assert_non_null(r);
	assert_int_equal(spm_tx_begin(p), 0);
	assert_int_equal(spm_tx_add(p, r, 64), 0);
	r[0]++;
	assert_int_equal(spm_tx_commit(p), 0);
}

/*
 * every_stat_name -- each listed name is readable, a read leaves the last
 * error as it was, the clocks of every core are there (time.core10_ns and
 * up crashed), and after spm_stat_reset each is 0.
 */
static void every_stat_name(void **state)
{
	(void)state;
	char path[4096];
	pool_path(path, sizeof(path), "stats");
	spm_pool *p = make_pool(path);
	size_t n = name_count();
	assert_int_equal(n, 67 + 1 + 64); /* the table, time.modeled_ns, 64 clocks */
	assert_true(listed("time.core0_ns") && listed("time.core10_ns") &&
		    listed("time.core63_ns") && !listed("time.core64_ns"));
	some_work(p, 10);
	some_work(p, 63);
	const char *const *names = spm_stat_names();
	for (size_t i = 0; i < n; i++) {
		uint64_t v = UINT64_MAX;
		txstate_error();
		assert_int_equal(spm_stat(p, names[i], &v), 0);
		assert_int_not_equal(v, UINT64_MAX);
		/* a read sets no message and no code */
		assert_int_equal(spm_errcode(), SPM_E_TXSTATE);
		assert_null(strstr(spm_errormsg(), "unknown statistic"));
	}
	uint64_t v = 0;
	assert_int_equal(spm_stat(p, "tx.committed", &v), 0);
	assert_true(v >= 2);
	assert_int_equal(spm_stat(p, "time.core10_ns", &v), 0);
	assert_true(v > 0);
	assert_int_equal(spm_stat(p, "time.core63_ns", &v), 0);
	assert_true(v > 0);
	spm_stat_reset(p);
	for (size_t i = 0; i < n; i++) {
		v = UINT64_MAX;
		assert_int_equal(spm_stat(p, names[i], &v), 0);
		assert_int_equal(v, 0);
	}
	drop_pool(p, path);
}

/* unknown_stat_names -- names near the real ones are refused, with a code
 * and a message. */
static void unknown_stat_names(void **state)
{
	(void)state;
	static const char *const bad[] = {
		"", "tx", "tx.committedx", "time.core64_ns", "time.core99_ns",
		"time.core100_ns", "time.core999_ns", "time.core01_ns", "time.core00_ns",
		"time.core_ns", "time.core5", "time.core5_nsx", "time.core-1_ns",
		"time.modeled", "TX.COMMITTED",
	};
	char path[4096];
	pool_path(path, sizeof(path), "unknown");
	spm_pool *p = make_pool(path);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint64_t v = 12345;
		assert_false(listed(bad[i]));
		txstate_error();
		assert_int_equal(spm_stat(p, bad[i], &v), SPM_E_INVAL);
		assert_int_equal(spm_errcode(), SPM_E_INVAL);
		assert_non_null(strstr(spm_errormsg(), "unknown statistic"));
		assert_int_equal(v, 12345);
	}
	uint64_t v;
	assert_int_equal(spm_stat(p, NULL, &v), SPM_E_INVAL);
	assert_int_equal(spm_stat(p, "tx.committed", NULL), SPM_E_INVAL);
	drop_pool(p, path);
}

/* overlaps -- do [a, a+alen) and [b, b+blen) share a byte? */
static int overlaps(uint64_t a, uint64_t alen, uint64_t b, uint64_t blen)
{
	return a < b + blen && b < a + alen;
}

/* fill_heap -- allocate ROOT-byte objects until the heap is full, checking
 * none overlaps [keep, keep+ROOT); the last failure's code is SPM_E_NOSPACE. */
static unsigned fill_heap(spm_pool *p, spm_off_t keep)
{
	unsigned got = 0;
	for (;;) {
		assert_int_equal(spm_tx_begin(p), 0);
		spm_off_t o = spm_tx_alloc(p, ROOT);
		if (!o) {
			assert_int_equal(spm_errcode(), SPM_E_NOSPACE);
			spm_tx_abort(p);
			return got;
		}
		assert_false(overlaps(o, ROOT, keep, ROOT));
		assert_int_equal(spm_tx_commit(p), 0);
		got++;
	}
}

/*
 * free_root_refused -- spm_tx_free of the root object, of an offset inside
 * an object, of a free run and of the pool header is SPM_E_INVAL; the heap
 * filled afterwards never overlaps the root, whose content survives.
 * Before, the root's free was accepted and a later allocation took its run.
 */
static void free_root_refused(void **state)
{
	(void)state;
	char path[4096];
	pool_path(path, sizeof(path), "root");
	spm_pool *p = make_pool(path);
	uint8_t *r = spm_root(p, ROOT);
	assert_non_null(r);
	spm_off_t root = spm_off(p, r);
	assert_int_equal(spm_tx_begin(p), 0);
	assert_int_equal(spm_tx_add(p, r, ROOT), SPM_E_NOSPACE); /* the log's bound */
	assert_int_equal(spm_tx_add(p, r, 4096), 0);
	memset(r, 0xa5, 4096);
	assert_int_equal(spm_tx_commit(p), 0);
	assert_int_equal(spm_tx_begin(p), 0);
	static const spm_off_t bad_off[] = {0, 64, 4096, 8192};
	txstate_error();
	assert_int_equal(spm_tx_free(p, root), SPM_E_INVAL);
	assert_int_equal(spm_errcode(), SPM_E_INVAL);
	assert_non_null(strstr(spm_errormsg(), "root"));
	assert_int_equal(spm_tx_free(p, root + 64), SPM_E_INVAL);     /* inside it */
	assert_int_equal(spm_tx_free(p, root + ROOT), SPM_E_INVAL);   /* free */
	assert_int_equal(spm_tx_free(p, root + ROOT + 1), SPM_E_INVAL);
	for (size_t i = 0; i < sizeof(bad_off) / sizeof(bad_off[0]); i++)
		assert_int_equal(spm_tx_free(p, bad_off[i]), SPM_E_INVAL);
	assert_int_equal(spm_tx_commit(p), 0);
	assert_true(fill_heap(p, root) > 10);
	assert_int_equal(spm_close(p), 0);
	assert_int_equal(spm_open(&p, path, NULL), 0);
	r = spm_root(p, ROOT);
	assert_non_null(r);
	assert_int_equal(spm_off(p, r), root);
	for (unsigned i = 0; i < 4096; i++)
		assert_int_equal(r[i], 0xa5);
	assert_int_equal(fill_heap(p, root), 0); /* still full, root not freed */
	drop_pool(p, path);
}

/*
 * root_in_tx_refused -- spm_root inside a transaction of the calling thread
 * is NULL with SPM_E_TXSTATE, before the root exists and after; the
 * transaction is left open and works on.
 */
static void root_in_tx_refused(void **state)
{
	(void)state;
	char path[4096];
	pool_path(path, sizeof(path), "rootx");
	spm_pool *p = make_pool(path);
	for (int exists = 0; exists < 2; exists++) {
		assert_int_equal(spm_tx_begin(p), 0);
		assert_null(spm_root(p, 64));
		assert_int_equal(spm_errcode(), SPM_E_TXSTATE);
		spm_off_t o = spm_tx_alloc(p, 64);
		assert_int_not_equal(o, 0);
		assert_int_equal(spm_tx_commit(p), 0);
		uint8_t *r = spm_root(p, 64); /* outside: made, or the same */
		assert_non_null(r);
	}
	drop_pool(p, path);
}

/*
 * alloc_errcode -- spm_tx_alloc's 0 comes with a code: SPM_E_NOSPACE for a
 * size above the heap, SPM_E_INVAL for 0 or above the pool, SPM_E_TXSTATE
 * outside a transaction; the transaction stays open and commits.
 */
static void alloc_errcode(void **state)
{
	(void)state;
	char path[4096];
	pool_path(path, sizeof(path), "alloc");
	spm_pool *p = make_pool(path);
	assert_int_equal(spm_errcode(), 0); /* spm_create starts afresh */
	assert_int_equal(spm_tx_alloc(p, 64), 0);
	assert_int_equal(spm_errcode(), SPM_E_TXSTATE);
	assert_int_equal(spm_tx_begin(p), 0);
	assert_int_equal(spm_tx_alloc(p, spm_size(p) - (1u << 20)), 0);
	assert_int_equal(spm_errcode(), SPM_E_NOSPACE);
	assert_int_equal(spm_tx_alloc(p, 0), 0);
	assert_int_equal(spm_errcode(), SPM_E_INVAL);
	assert_int_equal(spm_tx_alloc(p, spm_size(p) + 1), 0);
	assert_int_equal(spm_errcode(), SPM_E_INVAL);
	spm_off_t o = spm_tx_alloc(p, 128);
	assert_int_not_equal(o, 0);
	assert_int_equal(spm_tx_commit(p), 0);
	drop_pool(p, path);
}

/*
 * failed_add_leaves_tx_open -- a refused spm_tx_add (outside the pool, too
 * large for the log, outside the heap) changes nothing: the earlier
 * snapshot stands, the transaction commits (its change durable) or aborts
 * (its change undone).
 */
static void failed_add_leaves_tx_open(void **state)
{
	(void)state;
	char path[4096];
	pool_path(path, sizeof(path), "add");
	spm_pool *p = make_pool(path);
	uint64_t *r = spm_root(p, ROOT);
	assert_non_null(r);
	uint64_t outside = 0;
	for (int commit = 1; commit >= 0; commit--) {
		assert_int_equal(spm_tx_begin(p), 0);
		assert_int_equal(spm_tx_add(p, &r[0], 8), 0);
		r[0] = 40 + (uint64_t)commit;
		assert_int_equal(spm_tx_add(p, &outside, 8), SPM_E_INVAL);
		assert_int_equal(spm_tx_add(p, r, ROOT), SPM_E_NOSPACE);
		assert_int_equal(spm_errcode(), SPM_E_NOSPACE);
		assert_int_equal(spm_tx_add(p, spm_ptr(p, 8192), 64), SPM_E_INVAL); /* a lane */
		assert_int_equal(spm_tx_begin(p), SPM_E_TXSTATE); /* still open */
		assert_int_equal(spm_tx_add(p, &r[8], 8), 0);    /* and goes on */
		r[8] = 50 + (uint64_t)commit;
		if (commit)
			assert_int_equal(spm_tx_commit(p), 0);
		else
			spm_tx_abort(p);
		assert_int_equal(r[0], 41);
		assert_int_equal(r[8], 51);
	}
	assert_int_equal(spm_close(p), 0);
	assert_int_equal(spm_open(&p, path, NULL), 0);
	r = spm_root(p, ROOT);
	assert_non_null(r);
	assert_int_equal(r[0], 41);
	assert_int_equal(r[8], 51);
	drop_pool(p, path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_stat_name),
		cmocka_unit_test(unknown_stat_names),
		cmocka_unit_test(free_root_refused),
		cmocka_unit_test(root_in_tx_refused),
		cmocka_unit_test(alloc_errcode),
		cmocka_unit_test(failed_add_leaves_tx_open),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
