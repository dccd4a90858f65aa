/*
 * test_meta_flips.c -- every byte of the meta superblock (and its clean/dirty
 * state word) and of the data file header flipped in turn: spm_open refuses
 * each with a clear error code and a message naming the file, and modifies
 * none of the pool's three files.  Public API only (bad input).
 *
 * Layout relied on (from the format, not from internal headers): the meta
 * file starts with a 512-byte superblock followed by the 8-byte state word
 * (offsets 0..519); the data file starts with a 48-byte header.  Both start
 * with an 8-byte magic followed by a 32-bit little-endian format version.
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
#include <unistd.h>

#include <cmocka.h>

#include "test_files.h"

#include <spm.h>

#define POOL_SIZE (4u << 20)
#define SB_BYTES 520 /* superblock (512) + state word (8) */
#define DH_BYTES 48  /* data file header */
#define VERSION_OFF 8 /* u32 format version after the 8-byte magic */
#define FORMAT_VERSION 2u

static const uint8_t masks[] = {0xff, 0x01};

/* The error codes a corrupt header may legitimately produce (spm.h). */
static const int allowed[] = {SPM_E_CORRUPT, SPM_E_NOTPOOL, SPM_E_VERSION,
			      SPM_E_TRUNCATED, SPM_E_MISMATCH, SPM_E_DESIGN,
			      SPM_E_KEY, SPM_E_KEYFILE};
#define NALLOWED (sizeof(allowed) / sizeof(allowed[0]))

static char dir[4096], path[4200], meta_path[4300], key_path[4300];

/* The pool's three files as they were after its clean close. */
struct image {
	const char *path;
	uint8_t *buf;
	size_t len;
};
static struct image img[3]; /* data, meta, key */

static const char msg_text[] = "survives every flipped byte";



/* put_byte -- overwrite one byte of a file in place. */
static void put_byte(const char *p, size_t off, uint8_t b)
{
	int fd = open(p, O_WRONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, &b, 1, (off_t)off), 1);
	assert_int_equal(close(fd), 0);
}

/*
 * differs -- compare a file with its image, in which byte off (unless off is
 * SIZE_MAX) is taken as image ^ mask.  Returns -1 if identical, -2 if the
 * size differs, else the first differing offset.
 */
static long differs(const struct image *im, size_t off, uint8_t mask)
{
	static uint8_t *buf;
	static size_t cap;
	if (cap < im->len + 1) {
		free(buf);
		cap = im->len + 1;
		buf = malloc(cap);
		assert_non_null(buf);
	}
	int fd = open(im->path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	size_t got = 0;
	ssize_t r;
	/* read one byte more than expected to notice a longer file */
	while (got < im->len + 1 && (r = pread(fd, buf + got, im->len + 1 - got,
					       (off_t)got)) > 0)
		got += (size_t)r;
	close(fd);
	if (got != im->len)
		return -2;
	if (off != SIZE_MAX)
		buf[off] ^= mask;
	if (memcmp(buf, im->buf, im->len) == 0)
		return -1;
	for (size_t i = 0; i < im->len; i++)
		if (buf[i] != im->buf[i])
			return (long)i;
	return -1;
}

static int setup(void **state)
{
	(void)state;
	const char *d = getenv("SPM_TEST_DIR");
	snprintf(dir, sizeof(dir), "%s", d && *d ? d : "/tmp");
	snprintf(path, sizeof(path), "%s/flips-%ld", dir, (long)getpid());
	snprintf(meta_path, sizeof(meta_path), "%s.meta", path);
	snprintf(key_path, sizeof(key_path), "%s.key", path);
	remove_pool_files(path);
	spm_pool *p = NULL;
	if (spm_create(&p, path, POOL_SIZE, "design=sca"))
		return -1;
	char *r = spm_root(p, 64);
	if (!r || spm_tx_begin(p) || spm_tx_add(p, r, 64))
		return -1;
	strcpy(r, msg_text);
	if (spm_tx_commit(p) || spm_close(p))
		return -1;
	img[0].path = path;
	img[1].path = meta_path;
	img[2].path = key_path;
	for (int i = 0; i < 3; i++)
		img[i].buf = slurp(img[i].path, &img[i].len);
	return img[0].len == POOL_SIZE && img[1].len > SB_BYTES && img[2].len > 16 ? 0
											 : -1;
}

static int teardown(void **state)
{
	(void)state;
	remove_pool_files(path);
	for (int i = 0; i < 3; i++)
		free(img[i].buf);
	return 0;
}

static int allowed_code(int rc)
{
	for (size_t i = 0; i < NALLOWED; i++)
		if (rc == allowed[i])
			return 1;
	return 0;
}

/*
 * expected_code -- the one code a flip of byte off (image byte b, flipped
 * to b ^ mask) must give: the magic is checked first (NOTPOOL), then the
 * version (0 or newer than ours is VERSION, whatever the checksum says: the
 * checksum of a newer format may be defined differently), then the
 * checksum, which covers every other byte but the state word, which must be
 * one of its two values (CORRUPT).
 */
static int expected_code(const struct image *im, size_t off, uint8_t mask)
{
	if (off < 8)
		return SPM_E_NOTPOOL;
	if (off >= VERSION_OFF && off < VERSION_OFF + 4) {
		uint8_t v[4];
		memcpy(v, im->buf + VERSION_OFF, 4);
		v[off - VERSION_OFF] ^= mask;
		uint32_t ver = v[0] | (uint32_t)v[1] << 8 | (uint32_t)v[2] << 16 |
			       (uint32_t)v[3] << 24;
		return ver != FORMAT_VERSION ? SPM_E_VERSION : SPM_E_CORRUPT;
	}
	return SPM_E_CORRUPT;
}

/* Codes seen, for the summary: code -> count. */
struct tally {
	int code;
	unsigned n;
};

static void count(struct tally *t, size_t cap, int code)
{
	for (size_t i = 0; i < cap; i++) {
		if (t[i].n && t[i].code == code) {
			t[i].n++;
			return;
		}
		if (!t[i].n) {
			t[i].code = code;
			t[i].n = 1;
			return;
		}
	}
	fail_msg("too many distinct codes");
}

/*
 * flip_all -- flip each of the first nbytes of file `which` with each mask;
 * every open must be refused (exact expected code, message naming the file)
 * and leave all three files as they were.  Returns the number of failures.
 */
static unsigned flip_all(int which, size_t nbytes)
{
	struct image *im = &img[which];
	struct tally t[16];
	memset(t, 0, sizeof(t));
	unsigned bad = 0, opened = 0;
	int last_code = 0;
	size_t run_start = 0;
	print_message("%s: flipping bytes 0..%zu\n", im->path, nbytes - 1);
	for (size_t mi = 0; mi < sizeof(masks); mi++) {
		uint8_t mask = masks[mi];
		for (size_t off = 0; off < nbytes; off++) {
			uint8_t orig = im->buf[off];
			put_byte(im->path, off, (uint8_t)(orig ^ mask));
			spm_pool *p = NULL;
			int rc = spm_open(&p, path, NULL);
			const char *msg = spm_errormsg();
			if (rc == 0) {
				/* a flip nothing noticed: a byte neither checksummed nor validated */
				print_error("BUG: %s byte %zu ^ 0x%02x: spm_open succeeded\n",
					    im->path, off, mask);
				assert_non_null(p);
				spm_close(p);
				opened++;
				bad++;
				/* the open rewrote the state word: restore every file */
				for (int i = 0; i < 3; i++) {
					FILE *f = fopen(img[i].path, "wb");
					assert_non_null(f);
					assert_int_equal(fwrite(img[i].buf, 1, img[i].len, f),
							 img[i].len);
					assert_int_equal(fclose(f), 0);
				}
				continue;
			}
			count(t, 16, rc);
			if (p != NULL) {
				print_error("%s byte %zu ^ 0x%02x: *pool set on failure\n",
					    im->path, off, mask);
				bad++;
			}
			if (!allowed_code(rc)) {
				print_error("%s byte %zu ^ 0x%02x: code %d (%s) is not a bad-input "
					    "code: %s\n", im->path, off, mask, rc,
					    spm_strerror(rc), msg);
				bad++;
			} else if (rc != expected_code(im, off, mask)) {
				int want = expected_code(im, off, mask);
				print_error("%s byte %zu ^ 0x%02x: code %d (%s), expected %d (%s): "
					    "%s\n", im->path, off, mask, rc, spm_strerror(rc),
					    want, spm_strerror(want), msg);
				bad++;
			}
			if (!msg || !msg[0] || !strstr(msg, im->path)) {
				print_error("%s byte %zu ^ 0x%02x: message \"%s\" does not name the "
					    "file\n", im->path, off, mask, msg ? msg : "(null)");
				bad++;
			}
			/* for a data-file flip the meta path contains the data path:
			 * make sure a meta message does not blame the wrong file */
			if (which == 0 && strstr(msg, meta_path)) {
				print_error("%s byte %zu ^ 0x%02x: message blames the meta file: %s\n",
					    im->path, off, mask, msg);
				bad++;
			}
			for (int i = 0; i < 3; i++) {
				long d = differs(&img[i], i == which ? off : SIZE_MAX, mask);
				if (d != -1) {
					print_error("BUG: %s byte %zu ^ 0x%02x: the failed open modified "
						    "%s (%s %ld)\n", im->path, off, mask, img[i].path,
						    d == -2 ? "size" : "offset", d);
					bad++;
				}
			}
			put_byte(im->path, off, orig);
			/* runs of equal codes, for the log */
			if (off == 0 || rc != last_code) {
				if (off)
					print_message("  ^0x%02x %4zu..%-4zu %d %s\n", mask, run_start,
						      off - 1, last_code, spm_strerror(last_code));
				run_start = off;
				last_code = rc;
			}
		}
		print_message("  ^0x%02x %4zu..%-4zu %d %s\n", mask, run_start, nbytes - 1,
			      last_code, spm_strerror(last_code));
	}
	print_message("%s: %zu opens, %u succeeded; codes:\n", im->path,
		      nbytes * sizeof(masks), opened);
	for (size_t i = 0; i < 16 && t[i].n; i++)
		print_message("  %6u x %d %s\n", t[i].n, t[i].code, spm_strerror(t[i].code));
	return bad;
}

/* intact -- after the flips the restored pool opens with its data. */
static void intact(void)
{
	for (int i = 0; i < 3; i++)
		assert_int_equal(differs(&img[i], SIZE_MAX, 0), -1);
	spm_pool *p = NULL;
	int rc = spm_open(&p, path, NULL);
	if (rc)
		fail_msg("restored pool: %d %s", rc, spm_errormsg());
	const char *r = spm_root(p, 64);
	assert_non_null(r);
	assert_string_equal(r, msg_text);
	assert_int_equal(spm_close(p), 0);
}

static void meta_superblock_flips(void **state)
{
	(void)state;
	unsigned bad = flip_all(1, SB_BYTES);
	intact();
	assert_int_equal(bad, 0);
}

static void data_header_flips(void **state)
{
	(void)state;
	/* the previous test's intact() opened and closed the pool */
	for (int i = 0; i < 3; i++) {
		free(img[i].buf);
		img[i].buf = slurp(img[i].path, &img[i].len);
	}
	unsigned bad = flip_all(0, DH_BYTES);
	intact();
	assert_int_equal(bad, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(meta_superblock_flips),
		cmocka_unit_test(data_header_flips),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
