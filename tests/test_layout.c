/*
 * test_layout.c -- layout=NAME: stored in the superblock at spm_create,
 * checked by spm_open before anything is written.  A pool opened with
 * another layout is refused with SPM_E_LAYOUT and its files stay byte for
 * byte as they were, clean or dirty (a dirty pool's recovery writes, so the
 * check must come first); an open without layout= accepts any pool; a name
 * of 64 bytes or more, an empty one or one with ';' is SPM_E_OPTION.
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

#include "test_files.h"

#define POOL_SIZE (4u << 20)
#define SB_LAYOUT_OFF 216 /* the superblock's layout bytes in <path>.meta */

static char dir[2048];

/* pool_path -- a pool file name of this process in the test directory. */
static void pool_path(char *out, size_t n, const char *tag)
{
	snprintf(out, n, "%s/layout_%ld_%s", dir, (long)getpid(), tag);
}

/* make_pool -- a pool created with opts, a value written in a transaction,
 * closed cleanly. */
static void make_pool(const char *path, const char *opts)
{
	spm_pool *p = fresh_pool(path, POOL_SIZE, opts);
	uint64_t *r = spm_root(p, 64);
	assert_non_null(r);
	assert_int_equal(spm_tx_begin(p), 0);
	assert_int_equal(spm_tx_add(p, r, 8), 0);
	*r = 42;
	assert_int_equal(spm_tx_commit(p), 0);
	assert_int_equal(spm_close(p), 0);
}

/* open_rc -- spm_open's result with opts (the pool closed again if open). */
static int open_rc(const char *path, const char *opts)
{
	spm_pool *p = NULL;
	int rc = spm_open(&p, path, opts);
	if (rc == 0)
		assert_int_equal(spm_close(p), 0);
	return rc;
}

/* assert_unchanged -- the pool's three files are as img saw them. */
static void assert_unchanged(const char *path, const struct pool_image *img)
{
	char f[4300];
	for (unsigned i = 0; i < 3; i++) {
		pool_file(f, sizeof(f), path, i);
		assert_file_is(f, img->bytes[i], img->len[i]);
	}
}

/* assert_msg_has -- spm_errormsg() names s. */
static void assert_msg_has(const char *s)
{
	if (!strstr(spm_errormsg(), s))
		fail_msg("message \"%s\" does not name \"%s\"", spm_errormsg(), s);
}

/* Another layout is refused naming both, the files unchanged; no layout= and
 * the pool's own layout are accepted. */
static void test_other_layout_refused(void **state)
{
	(void)state;
	char path[2200];
	struct pool_image img = {0};
	pool_path(path, sizeof(path), "ab");
	make_pool(path, "layout=a");
	pool_save(path, &img);
	assert_int_equal(open_rc(path, "layout=b"), SPM_E_LAYOUT);
	assert_msg_has("layout=b");
	assert_msg_has("layout=a");
	assert_unchanged(path, &img);
	assert_int_equal(open_rc(path, NULL), 0);
	assert_int_equal(open_rc(path, "layout=a"), 0);
	/* a prefix or an extension of the name is another name */
	assert_int_equal(open_rc(path, "layout=aa"), SPM_E_LAYOUT);
	make_pool(path, "layout=spm-btree");
	assert_int_equal(open_rc(path, "layout=spm-btre"), SPM_E_LAYOUT);
	assert_int_equal(open_rc(path, "layout=spm-hello"), SPM_E_LAYOUT);
	assert_int_equal(open_rc(path, "layout=spm-btree"), 0);
	pool_image_free(&img);
	remove_pool_files(path);
}

/* dirty_pool -- a pool of layout a left dirty: a child writes and exits
 * without spm_close, a transaction open. */
static void dirty_pool(const char *path)
{
	remove_pool_files(path);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		spm_pool *p;
		if (spm_create(&p, path, POOL_SIZE, "layout=a"))
			_exit(1);
		uint64_t *r = spm_root(p, 64);
		if (!r || spm_tx_begin(p) || spm_tx_add(p, r, 8))
			_exit(1);
		*r = 7;
		spm_persist(p, r, 8);
		_exit(0);
	}
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* A dirty pool is refused before its recovery writes anything. */
static void test_dirty_pool_refused_before_recovery(void **state)
{
	(void)state;
	char path[2200];
	struct pool_image img = {0};
	pool_path(path, sizeof(path), "dirty");
	dirty_pool(path);
	pool_save(path, &img);
	assert_int_equal(open_rc(path, "layout=b"), SPM_E_LAYOUT);
	assert_unchanged(path, &img);
	/* its own layout opens it, recovering: the transaction rolled back */
	spm_pool *p = NULL;
	assert_int_equal(spm_open(&p, path, "layout=a"), 0);
	uint64_t rolled = 0;
	assert_int_equal(spm_stat(p, "recovery.rolled_back", &rolled), 0);
	assert_int_equal(rolled, 1);
	assert_int_equal(*(uint64_t *)spm_root(p, 64), 0);
	assert_int_equal(spm_close(p), 0);
	pool_image_free(&img);
	remove_pool_files(path);
}

/* name_of -- "layout=" and n bytes of 'x'. */
static void name_of(char *buf, size_t n)
{
	strcpy(buf, "layout=");
	memset(buf + 7, 'x', n);
	buf[7 + n] = '\0';
}

/* 63 bytes fit, 64 do not; empty and ';' are refused; nothing is created,
 * and an open with such a name leaves the pool as it was. */
static void test_bad_names(void **state)
{
	(void)state;
	char path[2200], opt[128];
	struct pool_image img = {0};
	pool_path(path, sizeof(path), "len");
	name_of(opt, 63);
	make_pool(path, opt);
	assert_int_equal(open_rc(path, opt), 0);
	pool_save(path, &img);
	static const char *const bad[] = {"layout=", "layout=a;b", "layout=;"};
	for (unsigned i = 0; i < 4; i++) {
		const char *o = i < 3 ? bad[i] : (name_of(opt, 64), opt);
		assert_int_equal(open_rc(path, o), SPM_E_OPTION);
		assert_unchanged(path, &img);
		remove_pool_files(path);
		spm_pool *p = NULL;
		assert_int_equal(spm_create(&p, path, POOL_SIZE, o), SPM_E_OPTION);
		assert_int_equal(access(path, F_OK), -1);
		pool_restore(path, &img);
	}
	assert_msg_has("layout");
	pool_image_free(&img);
	remove_pool_files(path);
}

/* A pool created without a layout is opened only without layout=. */
static void test_no_layout_stored(void **state)
{
	(void)state;
	char path[2200];
	pool_path(path, sizeof(path), "none");
	make_pool(path, NULL);
	assert_int_equal(open_rc(path, "layout=spm-hello"), SPM_E_LAYOUT);
	assert_msg_has("no layout");
	assert_int_equal(open_rc(path, NULL), 0);
	remove_pool_files(path);
}

/* layout= in SPM_CONF is stored too; the options argument wins over it. */
static void test_layout_from_conf(void **state)
{
	(void)state;
	char path[2200];
	pool_path(path, sizeof(path), "conf");
	assert_int_equal(setenv("SPM_CONF", "layout=c", 1), 0);
	make_pool(path, NULL);
	assert_int_equal(open_rc(path, NULL), 0);
	assert_int_equal(setenv("SPM_CONF", "layout=d", 1), 0);
	assert_int_equal(open_rc(path, NULL), SPM_E_LAYOUT);
	assert_int_equal(open_rc(path, "layout=c"), 0);
	assert_int_equal(unsetenv("SPM_CONF"), 0);
	assert_int_equal(open_rc(path, "layout=d"), SPM_E_LAYOUT);
	remove_pool_files(path);
}

/* The stored name is under the superblock's checksum: a changed byte of it
 * is a corrupt superblock, not another layout. */
static void test_layout_checksummed(void **state)
{
	(void)state;
	char path[2200], meta[2300];
	pool_path(path, sizeof(path), "crc");
	make_pool(path, "layout=a");
	snprintf(meta, sizeof(meta), "%s.meta", path);
	size_t len;
	uint8_t *m = slurp(meta, &len);
	assert_int_equal(m[SB_LAYOUT_OFF], 'a');
	m[SB_LAYOUT_OFF] = 'b';
	spit(meta, m, len);
	assert_int_equal(open_rc(path, "layout=b"), SPM_E_CORRUPT);
	assert_int_equal(open_rc(path, NULL), SPM_E_CORRUPT);
	free(m);
	remove_pool_files(path);
}

int main(void)
{
	const char *d = getenv("SPM_TEST_DIR");
	snprintf(dir, sizeof(dir), "%s", d && *d ? d : "/tmp");
	unsetenv("SPM_CONF");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_other_layout_refused),
		cmocka_unit_test(test_dirty_pool_refused_before_recovery),
		cmocka_unit_test(test_bad_names),
		cmocka_unit_test(test_no_layout_stored),
		cmocka_unit_test(test_layout_from_conf),
		cmocka_unit_test(test_layout_checksummed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
