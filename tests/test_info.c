/*
 * test_info.c -- spm_info: the geometry, state, epoch, root and heap of a
 * pool as its files say, read without writing: on a clean pool (heap
 * usage matches what was allocated), a dirty one (left by a child killed
 * with the pool open: reported dirty, not recovered), and bad input (not a
 * pool, truncated, the wrong key, a bad option), the files byte-identical
 * after every call.
 */
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
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "test_files.h"

#include <spm.h>

#define POOL_SIZE (4u << 20)

static char dir[2048];

static void path_of(char *out, size_t n, const char *tag)
{
	snprintf(out, n, "%s/info-%ld-%s", dir, (long)getpid(), tag);
}

/* info_unchanged -- spm_info(path, opts) returns want, the files as they were. */
static int info_unchanged(const char *path, const char *opts, struct spm_info *out)
{
	struct pool_image img = {0};
	pool_save(path, &img);
	int rc = spm_info(path, opts, out);
	char f[4300];
	for (unsigned i = 0; i < 3; i++) {
		pool_file(f, sizeof(f), path, i);
		assert_file_is(f, img.bytes[i], img.len[i]);
	}
	pool_image_free(&img);
	return rc;
}

static void clean_pool(void **state)
{
	(void)state;
	char path[2200];
	path_of(path, sizeof(path), "clean");
	spm_pool *p = fresh_pool(path, POOL_SIZE, "design=sca;layout=info-test");
	assert_non_null(spm_root(p, 100));
	assert_int_equal(spm_tx_begin(p), 0);
	assert_int_not_equal(spm_tx_alloc(p, 1000), 0);
	assert_int_equal(spm_tx_commit(p), 0);
	assert_int_equal(spm_close(p), 0);

	struct spm_info in;
	assert_int_equal(info_unchanged(path, NULL, &in), 0);
	assert_string_equal(in.design, "sca");
	assert_string_equal(in.layout, "info-test");
	assert_int_equal(in.pool_size, POOL_SIZE);
	assert_int_equal(in.lines, POOL_SIZE / 64);
	assert_int_equal(in.aes_bits, 128);
	assert_int_equal(in.split_counters, 0);
	assert_true(in.wpq_data_cap >= 64 && in.wpq_ctr_cap >= 16);
	assert_int_equal(in.dirty, 0);
	assert_true(in.epoch >= 1);
	assert_true(in.meta_size > 0);
	assert_int_equal(in.heap_known, 1);
	assert_int_equal(in.root_size, 100);
	/* the root (2 units) and the object (16 units) */
	assert_int_equal(in.heap_used, (2 + 16) * 64);
	assert_int_equal(in.heap_objects, 2);
	assert_true(in.heap_bytes > in.heap_used && in.heap_bytes < POOL_SIZE);

	/* the epoch of the next state */
	uint64_t e0 = in.epoch;
	assert_int_equal(spm_open(&p, path, NULL), 0);
	assert_int_equal(spm_close(p), 0);
	assert_int_equal(info_unchanged(path, NULL, &in), 0);
	assert_true(in.epoch > e0);

	/* refusals, nothing written */
	assert_int_equal(info_unchanged(path, "layout=other", &in), SPM_E_LAYOUT);
	assert_int_equal(info_unchanged(path, "no_such_option=1", &in), SPM_E_OPTION);
	assert_int_equal(info_unchanged(path, "design=ccnvm", &in), SPM_E_WRONGDESIGN);
	assert_int_equal(spm_info(path, NULL, NULL), SPM_E_INVAL);
	remove_pool_files(path);
}

static void split_dirty(void **state)
{
	(void)state;
	char path[2200];
	path_of(path, sizeof(path), "wt");
	spm_pool *p = fresh_pool(path, POOL_SIZE, "design=wt");
	assert_int_equal(spm_close(p), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) { /* open, write, die with the pool open */
		spm_pool *c;
		if (spm_open(&c, path, NULL))
			_exit(1);
		char *r = spm_root(c, 64);
		if (!r)
			_exit(1);
		memset(r, 7, 64);
		spm_persist(c, r, 64);
		kill(getpid(), SIGKILL);
		_exit(1);
	}
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFSIGNALED(st));
	struct spm_info in;
	assert_int_equal(info_unchanged(path, NULL, &in), 0);
	assert_string_equal(in.design, "wt");
	assert_int_equal(in.split_counters, 1);
	assert_int_equal(in.minor_bits, 7);
	assert_int_equal(in.dirty, 1);
	assert_int_equal(in.heap_known, 0);
	/* an open recovers it; then it is clean, the root there */
	assert_int_equal(spm_open(&p, path, NULL), 0);
	assert_int_equal(spm_close(p), 0);
	assert_int_equal(info_unchanged(path, NULL, &in), 0);
	assert_int_equal(in.dirty, 0);
	assert_int_equal(in.heap_known, 1);
	assert_int_equal(in.root_size, 64);
	remove_pool_files(path);
}

static void bad_input(void **state)
{
	(void)state;
	char path[2200], f[2300];
	struct spm_info in;
	path_of(path, sizeof(path), "bad");
	spm_pool *p = fresh_pool(path, POOL_SIZE, NULL);
	assert_int_equal(spm_close(p), 0);
	/* the wrong key */
	path_of(f, sizeof(f), "otherkey");
	spm_pool *q = fresh_pool(f, POOL_SIZE, NULL);
	assert_int_equal(spm_close(q), 0);
	char opts[2400];
	snprintf(opts, sizeof(opts), "key_file=%s.key", f);
	assert_int_equal(info_unchanged(path, opts, &in), SPM_E_KEY);
	remove_pool_files(f);
	/* a truncated data file */
	struct pool_image img = {0};
	pool_save(path, &img);
	assert_int_equal(truncate(path, POOL_SIZE - 4096), 0);
	assert_int_equal(info_unchanged(path, NULL, &in), SPM_E_TRUNCATED);
	pool_restore(path, &img);
	assert_int_equal(info_unchanged(path, NULL, &in), 0);
	/* a corrupted superblock */
	snprintf(f, sizeof(f), "%s.meta", path);
	size_t n;
	uint8_t *m = slurp(f, &n);
	m[40] ^= 1;
	spit(f, m, n);
	free(m);
	assert_int_equal(info_unchanged(path, NULL, &in), SPM_E_CORRUPT);
	pool_image_free(&img);
	remove_pool_files(path);
	/* not a pool */
	path_of(path, sizeof(path), "notpool");
	uint8_t junk[8192] = {1, 2, 3};
	spit(path, junk, sizeof(junk));
	assert_int_equal(spm_info(path, NULL, &in), SPM_E_NOTPOOL);
	unlink(path);
	assert_int_equal(spm_info(path, NULL, &in), -ENOENT);
}

int main(void)
{
	const char *d = getenv("SPM_TEST_DIR");
	snprintf(dir, sizeof(dir), "%s", d && *d ? d : "/tmp");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(clean_pool),
		cmocka_unit_test(split_dirty),
		cmocka_unit_test(bad_input),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
