/*
 * test_meta_truncate.c -- a pool whose meta file is cut short at every length
 * from 0 to the end of its ADR region (and at sampled lengths beyond, up to
 * one page longer than it should be) is refused with SPM_E_TRUNCATED (or
 * SPM_E_NOTPOOL for an empty file / less than a magic), with a message naming
 * the meta file, and no file is modified (bad input).
 *
 * Internal: reads the superblock's geometry with struct superblock.
 */
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
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "test_files.h"

#include <spm.h>
#include "emu_internal.h"

#define POOL_SIZE (4u << 20)

static char dir[4096], orig[4200], scratch[4200], scratch_meta[4300];
static uint8_t *img_data, *img_meta, *img_key;
static size_t len_data, len_meta, len_key;
static uint64_t adr_end; /* sb.adr_off + sb.adr_size */

static const char msg_text[] = "survives every truncation";




/* write_scratch -- the scratch pool: a byte-exact copy of the original. */
static void write_scratch(void)
{
	char b[4300];
	spit(scratch, img_data, len_data);
	spit(scratch_meta, img_meta, len_meta);
	snprintf(b, sizeof(b), "%s.key", scratch);
	spit(b, img_key, len_key);
}

static int setup(void **state)
{
	(void)state;
	const char *d = getenv("SPM_TEST_DIR");
	snprintf(dir, sizeof(dir), "%s", d && *d ? d : "/tmp");
	snprintf(orig, sizeof(orig), "%s/trunc-%ld", dir, (long)getpid());
	snprintf(scratch, sizeof(scratch), "%s/trunc-%ld-s", dir, (long)getpid());
	snprintf(scratch_meta, sizeof(scratch_meta), "%s.meta", scratch);
	remove_pool_files(orig);
	remove_pool_files(scratch);
	spm_pool *p = NULL;
	if (spm_create(&p, orig, POOL_SIZE, "design=sca"))
		return -1;
	char *r = spm_root(p, 64);
	if (!r || spm_tx_begin(p) || spm_tx_add(p, r, 64))
		return -1;
	strcpy(r, msg_text);
	if (spm_tx_commit(p) || spm_close(p))
		return -1;
	char b[4300];
	img_data = slurp(orig, &len_data);
	snprintf(b, sizeof(b), "%s.meta", orig);
	img_meta = slurp(b, &len_meta);
	snprintf(b, sizeof(b), "%s.key", orig);
	img_key = slurp(b, &len_key);
	struct superblock sb;
	if (len_meta < sizeof(sb))
		return -1;
	memcpy(&sb, img_meta, sizeof(sb));
	adr_end = sb.adr_off + sb.adr_size;
	if (memcmp(sb.magic, SB_MAGIC, 8) != 0 || sb.meta_size != len_meta ||
	    adr_end <= sizeof(sb) || adr_end >= len_meta)
		return -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	remove_pool_files(orig);
	remove_pool_files(scratch);
	free(img_data);
	free(img_meta);
	free(img_key);
	return 0;
}

/* file_is -- the file holds exactly len bytes: the image's, then zeros. */
static int file_is(const char *p, const uint8_t *image, size_t image_len, size_t len)
{
	static uint8_t *buf;
	static size_t cap;
	if (cap < len + 1) {
		free(buf);
		cap = len + 1;
		buf = malloc(cap);
		assert_non_null(buf);
	}
	int fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	size_t got = 0;
	ssize_t r;
	while (got < len + 1 && (r = pread(fd, buf + got, len + 1 - got, (off_t)got)) > 0)
		got += (size_t)r;
	close(fd);
	if (got != len)
		return 0;
	size_t n = len < image_len ? len : image_len;
	if (memcmp(buf, image, n) != 0)
		return 0;
	for (size_t i = n; i < len; i++)
		if (buf[i])
			return 0;
	return 1;
}

/* set_len -- make the scratch meta file the image cut (or zero-extended) to len. */
static void set_len(int fd, size_t *cur, size_t len)
{
	if (len > *cur && *cur < len_meta) {
		size_t end = len < len_meta ? len : len_meta;
		assert_int_equal(pwrite(fd, img_meta + *cur, end - *cur, (off_t)*cur),
				 (ssize_t)(end - *cur));
	}
	assert_int_equal(ftruncate(fd, (off_t)len), 0);
	*cur = len;
}

struct tally {
	int code;
	unsigned n;
	size_t lo, hi; /* lengths that gave it */
};

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void truncations(void **state)
{
	(void)state;
	char key[4300];
	snprintf(key, sizeof(key), "%s.key", scratch);
	/* the scratch copy is a good pool under its own name */
	write_scratch();
	spm_pool *p = NULL;
	if (spm_open(&p, scratch, NULL))
		fail_msg("scratch copy does not open: %s", spm_errormsg());
	assert_int_equal(spm_close(p), 0);
	write_scratch();

	/*
	 * The lengths: every one from 0 to the end of the ADR region (about
	 * 74k opens: a failed open costs a few microseconds, so all of them take
	 * a few seconds even under ASan; no sampling is needed), then a sample
	 * of the rest of the file (each page boundary -1/0/+1: validation reads
	 * only the superblock and compares the file's size, so every length
	 * there behaves alike), and lengths past the end (a longer file is as
	 * wrong as a shorter one).
	 */
	size_t cap = (size_t)adr_end + 1 + 3 * (len_meta / EMU_PAGE + 1) + 4;
	size_t *lens = malloc(cap * sizeof(*lens));
	assert_non_null(lens);
	size_t nlens = 0;
	for (size_t l = 0; l <= adr_end; l++)
		lens[nlens++] = l;
	for (size_t pg = (size_t)adr_end + EMU_PAGE; pg <= len_meta; pg += EMU_PAGE)
		for (int dl = -1; dl <= 1; dl++)
			if (pg + dl > adr_end && pg + dl != len_meta)
				lens[nlens++] = pg + dl;
	lens[nlens++] = len_meta + 1;
	lens[nlens++] = len_meta + EMU_LINE;
	lens[nlens++] = len_meta + EMU_PAGE;
	assert_true(nlens <= cap);

	int fd = open(scratch_meta, O_RDWR | O_CLOEXEC);
	assert_true(fd >= 0);
	size_t cur = len_meta;
	struct tally t[8];
	memset(t, 0, sizeof(t));
	unsigned bad = 0;
	double t0 = now();
	for (size_t i = 0; i < nlens; i++) {
		size_t len = lens[i];
		set_len(fd, &cur, len);
		p = NULL;
		int rc = spm_open(&p, scratch, NULL);
		const char *msg = spm_errormsg();
		if (rc == 0) {
			print_error("BUG: meta file of %zu bytes (of %zu): spm_open succeeded\n",
				    len, len_meta);
			spm_close(p);
			close(fd);
			write_scratch();
			fd = open(scratch_meta, O_RDWR | O_CLOEXEC);
			assert_true(fd >= 0);
			cur = len_meta;
			bad++;
			continue;
		}
		/* an empty file, or a prefix of the magic: not a pool or truncated;
		 * anything longer: truncated */
		int ok = rc == SPM_E_TRUNCATED || (len < 8 && rc == SPM_E_NOTPOOL);
		if (!ok) {
			print_error("meta file of %zu bytes: code %d (%s): %s\n", len, rc,
				    spm_strerror(rc), msg);
			bad++;
		}
		if (p != NULL || !msg[0] || !strstr(msg, scratch_meta)) {
			print_error("meta file of %zu bytes: *pool %p, message \"%s\"\n", len,
				    (void *)p, msg);
			bad++;
		}
		size_t k;
		for (k = 0; k < 8 && t[k].n && t[k].code != rc; k++)
			;
		assert_true(k < 8);
		if (!t[k].n)
			t[k] = (struct tally){rc, 0, len, len};
		t[k].n++;
		t[k].lo = len < t[k].lo ? len : t[k].lo;
		t[k].hi = len > t[k].hi ? len : t[k].hi;
		/* the meta file every time; the data and key files are never
		 * rewritten here, so a change is caught by a later check */
		if (!file_is(scratch_meta, img_meta, len_meta, len)) {
			print_error("BUG: meta file of %zu bytes modified by the failed open\n",
				    len);
			bad++;
			set_len(fd, &cur, 0);
		}
		if (i % 4096 == 0 || i + 1 == nlens) {
			if (!file_is(scratch, img_data, len_data, len_data) ||
			    !file_is(key, img_key, len_key, len_key))
				fail_msg("BUG: data or key file modified by a failed open "
					 "(meta lengths up to %zu)", len);
		}
		if (bad > 20)
			fail_msg("too many failures");
	}
	double dt = now() - t0;
	close(fd);
	print_message("%zu lengths (0..%llu every byte, then sampled up to %zu), %.2f s, "
		      "%.1f us per open\n", nlens, (unsigned long long)adr_end,
		      len_meta + EMU_PAGE, dt, dt * 1e6 / (double)nlens);
	for (size_t k = 0; k < 8 && t[k].n; k++)
		print_message("  %6u x %d %s (lengths %zu..%zu)\n", t[k].n, t[k].code,
			      spm_strerror(t[k].code), t[k].lo, t[k].hi);
	free(lens);
	assert_int_equal(bad, 0);

	/* the scratch pool restored, and the original, open with their data */
	const char *names[] = {scratch, orig};
	write_scratch();
	for (int i = 0; i < 2; i++) {
		p = NULL;
		if (spm_open(&p, names[i], NULL))
			fail_msg("%s: %s", names[i], spm_errormsg());
		const char *r = spm_root(p, 64);
		assert_non_null(r);
		assert_string_equal(r, msg_text);
		assert_int_equal(spm_close(p), 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(truncations),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
