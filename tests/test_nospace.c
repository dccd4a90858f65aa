/*
 * test_nospace.c -- a pool's files have all their blocks.  A store into a
 * hole of a shared file mapping on a full file system is a SIGBUS, at any
 * instruction (recovery included), so spm allocates both files when it
 * creates a pool and again when it opens one (a pool copied sparse).  Out
 * of space, spm_create fails with -ENOSPC and leaves no file, spm_open fails
 * with -ENOSPC and leaves the files as they were.  This program defines
 * posix_fallocate, so libspm's and libpmem's calls reach it first; it can
 * fail with ENOSPC, and otherwise passes the call on to libc's.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "test_files.h"
#include <spm.h>

static int no_space;       /* posix_fallocate fails with ENOSPC */
static unsigned allocated; /* calls passed on */

int posix_fallocate(int fd, off_t offset, off_t len)
{
	static int (*real)(int, off_t, off_t);
	if (no_space)
		return ENOSPC;
	if (!real)
		*(void **)&real = dlsym(RTLD_NEXT, "posix_fallocate");
	if (!real)
		abort();
	allocated++;
	return real(fd, offset, len);
}

static char pool[2200], meta[2300], key[2300];

static int exists(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0;
}

/* holes -- bytes of the file at p without a block (0: fully allocated). */
static long long holes(const char *p)
{
	struct stat st;
	assert_int_equal(stat(p, &st), 0);
	long long have = (long long)st.st_blocks * 512;
	return have >= (long long)st.st_size ? 0 : (long long)st.st_size - have;
}

/* make_pool -- a pool with a committed transaction in its root. */
static void make_pool(void)
{
	remove_pool_files(pool);
	spm_pool *p;
	assert_int_equal(spm_create(&p, pool, 8 << 20, "design=sca"), 0);
	uint64_t *r = spm_root(p, 64);
	assert_non_null(r);
	assert_int_equal(spm_tx_begin(p), 0);
	assert_int_equal(spm_tx_add(p, r, 64), 0);
	for (unsigned i = 0; i < 8; i++)
		r[i] = 0x1234 + i;
	assert_int_equal(spm_tx_commit(p), 0);
	assert_int_equal(spm_close(p), 0);
}

/* root_intact -- the pool opens and its root holds make_pool's words. */
static void root_intact(void)
{
	spm_pool *p;
	assert_int_equal(spm_open(&p, pool, ""), 0);
	const uint64_t *r = spm_root(p, 64);
	assert_non_null(r);
	for (unsigned i = 0; i < 8; i++)
		assert_int_equal(r[i], 0x1234 + i);
	assert_int_equal(spm_close(p), 0);
}

/* allocated_at_create -- a new pool's data and meta files have no holes
 * (with PMEM_FILE_SPARSE, as pools were once made, both had megabytes). */
static void allocated_at_create(void **state)
{
	(void)state;
	allocated = 0;
	make_pool();
	assert_true(allocated >= 2);
	assert_int_equal(holes(pool), 0);
	assert_int_equal(holes(meta), 0);
	root_intact();
	remove_pool_files(pool);
}

/* create_out_of_space -- spm_create fails with -ENOSPC, says which file,
 * and leaves none of the three. */
static void create_out_of_space(void **state)
{
	(void)state;
	remove_pool_files(pool);
	spm_pool *p = NULL;
	no_space = 1;
	int rc = spm_create(&p, pool, 8 << 20, "design=sca");
	no_space = 0;
	assert_int_equal(rc, -ENOSPC);
	assert_null(p);
	assert_non_null(strstr(spm_errormsg(), pool));
	assert_non_null(strstr(spm_errormsg(), strerror(ENOSPC)));
	assert_false(exists(pool));
	assert_false(exists(meta));
	assert_false(exists(key));
}

/* punch -- a hole over the zero bytes of the file at p (whole 4 KiB blocks
 * only), as a sparse copy has; the bytes read the same. */
static void punch(const char *p)
{
	size_t len;
	uint8_t *buf = slurp(p, &len);
	int fd = open(p, O_RDWR);
	assert_true(fd >= 0);
	static const uint8_t zero[4096];
	for (size_t off = 0; off + 4096 <= len; off += 4096)
		if (!memcmp(buf + off, zero, 4096))
			assert_int_equal(fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
						   (off_t)off, 4096), 0);
	close(fd);
	size_t len2;
	uint8_t *buf2 = slurp(p, &len2);
	assert_int_equal(len2, len);
	assert_memory_equal(buf2, buf, len);
	free(buf);
	free(buf2);
}

/* sparse_pool_opened -- a pool whose files were made sparse: out of space
 * the open fails with -ENOSPC and both files are byte for byte as they
 * were; with space the open allocates them, and the content is intact. */
static void sparse_pool_opened(void **state)
{
	(void)state;
	make_pool();
	punch(pool);
	punch(meta);
	/* the data file is ciphertext from create on: no zero page to punch */
	assert_true(holes(meta) > 0);
	size_t dlen, mlen;
	uint8_t *data = slurp(pool, &dlen), *metab = slurp(meta, &mlen);
	spm_pool *p = NULL;
	no_space = 1;
	int rc = spm_open(&p, pool, "");
	no_space = 0;
	assert_int_equal(rc, -ENOSPC);
	assert_null(p);
	assert_non_null(strstr(spm_errormsg(), strerror(ENOSPC)));
	assert_file_is(pool, data, dlen);
	assert_file_is(meta, metab, mlen);
	free(data);
	free(metab);
	root_intact();
	assert_int_equal(holes(pool), 0);
	assert_int_equal(holes(meta), 0);
	remove_pool_files(pool);
}

int main(void)
{
	const char *base = getenv("SPM_TEST_DIR");
	snprintf(pool, sizeof(pool), "%s/nospace-%d", base && *base ? base : "/tmp",
		 (int)getpid());
	snprintf(meta, sizeof(meta), "%s.meta", pool);
	snprintf(key, sizeof(key), "%s.key", pool);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(allocated_at_create),
		cmocka_unit_test(create_out_of_space),
		cmocka_unit_test(sparse_pool_opened),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	remove_pool_files(pool);
	return rc;
}
