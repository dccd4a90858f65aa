/*
 * test_trust.c -- attacks on a pool's files and the answers: a planted or
 * exposed key file, a rollback to an older copy of both pool files, a
 * forged epoch word, lines never written (zeros would show the pool's
 * footprint), a hard-linked meta file beside a copied data file while the
 * owner runs, a name too long for the files' suffixes.  Each case is a
 * reproduction: it succeeded before the defence it checks.
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

static char dir[2048];

/* path_of -- a pool path in the test directory named for tag. */
static void path_of(char *out, size_t n, const char *tag)
{
	snprintf(out, n, "%s/trust-%ld-%s", dir, (long)getpid(), tag);
}

static void suffix(char *out, size_t n, const char *path, const char *s)
{
	snprintf(out, n, "%s%s", path, s);
}

static int exists(const char *p)
{
	struct stat st;
	return lstat(p, &st) == 0;
}

/* set_text -- the root's text, in a transaction, then close the pool. */
static void set_text(spm_pool *p, const char *text)
{
	char *r = spm_root(p, 64);
	assert_non_null(r);
	assert_int_equal(spm_tx_begin(p), 0);
	assert_int_equal(spm_tx_add(p, r, 64), 0);
	snprintf(r, 64, "%s", text);
	assert_int_equal(spm_tx_commit(p), 0);
	assert_int_equal(spm_close(p), 0);
}

/* make_pool -- create a pool at path (opts) whose root holds text. */
static void make_pool(const char *path, const char *opts, const char *text)
{
	set_text(fresh_pool(path, POOL_SIZE, opts), text);
}

/* rewrite -- open path (opts) and set the root's text. */
static void rewrite(const char *path, const char *opts, const char *text)
{
	spm_pool *p = NULL;
	if (spm_open(&p, path, opts))
		fail_msg("open %s: %s", path, spm_errormsg());
	set_text(p, text);
}

/* expect_text -- the pool at path opens with root text. */
static void expect_text(const char *path, const char *opts, const char *text)
{
	spm_pool *p = NULL;
	if (spm_open(&p, path, opts))
		fail_msg("open %s: %s", path, spm_errormsg());
	const char *r = spm_root(p, 64);
	assert_non_null(r);
	assert_string_equal(r, text);
	assert_int_equal(spm_close(p), 0);
}

/* refused_unchanged -- spm_open(path, opts) fails with code, its message
 * contains what, and the pool's two files are byte for byte as before. */
static void refused_unchanged(const char *path, const char *opts, int code, const char *what)
{
	char meta[4300];
	suffix(meta, sizeof(meta), path, ".meta");
	size_t nd, nm;
	uint8_t *d = slurp(path, &nd), *m = slurp(meta, &nm);
	spm_pool *p = NULL;
	int rc = spm_open(&p, path, opts);
	if (rc != code)
		fail_msg("open %s (%s): %d, want %d: %s", path, opts ? opts : "", rc, code,
			 spm_errormsg());
	assert_null(p);
	if (!strstr(spm_errormsg(), what))
		fail_msg("message \"%s\" does not say \"%s\"", spm_errormsg(), what);
	assert_file_is(path, d, nd);
	assert_file_is(meta, m, nm);
	free(d);
	free(m);
}

/* planted_key -- a <path>.key that spm_create did not make is never adopted
 * unless key_file= names it, and a key file open to others, owned by
 * someone else, not a regular file, or a symbolic link is refused, before
 * any file is touched. */
static void planted_key(void **state)
{
	(void)state;
	char path[4096], key[4200], meta[4200], opts[4400], link_path[4200];
	path_of(path, sizeof(path), "planted");
	suffix(key, sizeof(key), path, ".key");
	suffix(meta, sizeof(meta), path, ".meta");
	remove_pool_files(path);
	/* an attacker's key, readable by everyone, where spm_create looks */
	static const uint8_t planted[16] = "attacker's key!";
	spit(key, planted, sizeof(planted));
	assert_int_equal(chmod(key, 0644), 0);
	spm_pool *p = NULL;
	assert_int_equal(spm_create(&p, path, POOL_SIZE, NULL), SPM_E_KEYFILE);
	assert_non_null(strstr(spm_errormsg(), "key_file="));
	assert_false(exists(path));
	assert_false(exists(meta));
	assert_file_is(key, planted, sizeof(planted));
	/* named, it is adopted only if it is the user's alone */
	snprintf(opts, sizeof(opts), "key_file=%s", key);
	assert_int_equal(spm_create(&p, path, POOL_SIZE, opts), SPM_E_KEYFILE);
	assert_non_null(strstr(spm_errormsg(), "mode 0644"));
	assert_false(exists(path));
	assert_int_equal(chmod(key, 0600), 0);
	make_pool(path, opts, "adopted");
	expect_text(path, opts, "adopted");
	/* exposed afterwards: open refuses it */
	assert_int_equal(chmod(key, 0640), 0);
	refused_unchanged(path, opts, SPM_E_KEYFILE, "group or others");
	assert_int_equal(chmod(key, 0600), 0);
	/* a symbolic link to the right key */
	suffix(link_path, sizeof(link_path), path, ".link");
	unlink(link_path);
	assert_int_equal(symlink(key, link_path), 0);
	snprintf(opts, sizeof(opts), "key_file=%s", link_path);
	refused_unchanged(path, opts, SPM_E_KEYFILE, "symbolic link");
	unlink(link_path);
	/* someone else's file: as root, the key given away; else a system file */
	if (geteuid() == 0) {
		assert_int_equal(chown(key, 65534, 65534), 0);
		snprintf(opts, sizeof(opts), "key_file=%s", key);
	} else {
		snprintf(opts, sizeof(opts), "key_file=/etc/passwd");
	}
	refused_unchanged(path, opts, SPM_E_KEYFILE, "owned by uid");
	if (geteuid() == 0)
		assert_int_equal(chown(key, 0, 0), 0);
	/* not a regular file */
	refused_unchanged(path, "key_file=/dev/null", SPM_E_KEYFILE, "not a regular file");
	/* a second name, which could keep an older key file to put back */
	suffix(link_path, sizeof(link_path), path, ".hard");
	unlink(link_path);
	assert_int_equal(link(key, link_path), 0);
	snprintf(opts, sizeof(opts), "key_file=%s", key);
	refused_unchanged(path, opts, SPM_E_KEYFILE, "hard links");
	unlink(link_path);
	snprintf(opts, sizeof(opts), "key_file=%s", key);
	expect_text(path, opts, "adopted");
	remove_pool_files(path);
}

/* new_key_private -- spm_create's own key file is 0600, the user's. */
static void new_key_private(void **state)
{
	(void)state;
	char path[4096], key[4200];
	path_of(path, sizeof(path), "newkey");
	suffix(key, sizeof(key), path, ".key");
	make_pool(path, NULL, "x");
	struct stat st;
	assert_int_equal(lstat(key, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(st.st_uid, geteuid());
	remove_pool_files(path);
}

/*
 * rollback -- both pool files restored from a copy older than the key's
 * record are refused (writing to them would reuse the pads of every write
 * made since the copy), and nothing is modified; the newer files open; the
 * copy restored with the key file saved beside it (a deliberate restore of
 * all three) opens.
 */
static void rollback(void **state)
{
	(void)state;
	for (int design = 0; design < 2; design++) {
		const char *opts = design ? "design=supermem" : "design=sca";
		char path[4096], meta[4200], key[4200];
		path_of(path, sizeof(path), design ? "rb-sm" : "rb-sca");
		suffix(meta, sizeof(meta), path, ".meta");
		suffix(key, sizeof(key), path, ".key");
		make_pool(path, opts, "old state");
		struct pool_image old = {0}, now = {0};
		pool_save(path, &old); /* a backup of the closed pool */
		rewrite(path, NULL, "new state");
		pool_save(path, &now);
		pool_restore_files(path, &old);
		refused_unchanged(path, NULL, SPM_E_ROLLBACK, "rollback");
		assert_string_equal(spm_strerror(SPM_E_ROLLBACK),
				    "pool files are older than the key's record of the pool "
				    "(rollback)");
		/* a copy taken while the pool was open (before its close raised
		 * the epoch) is older too once the pool is closed */
		pool_restore(path, &now);
		spm_pool *p = NULL;
		assert_int_equal(spm_open(&p, path, NULL), 0);
		struct pool_image mid = {0};
		pool_save(path, &mid);
		assert_int_equal(spm_close(p), 0);
		pool_restore_files(path, &mid);
		refused_unchanged(path, NULL, SPM_E_ROLLBACK, "rollback");
		/* the newer files still open */
		pool_restore(path, &now);
		expect_text(path, NULL, "new state");
		/* all three restored together: the owner's deliberate restore */
		pool_restore(path, &old);
		expect_text(path, NULL, "old state");
		pool_image_free(&old);
		pool_image_free(&now);
		pool_image_free(&mid);
		remove_pool_files(path);
	}
}

/* forged_epoch -- an epoch word made without the key (here: the next epoch
 * under the unkeyed check of the older format, or the current word with one
 * tag bit changed) is refused as damaged. */
static void forged_epoch(void **state)
{
	(void)state;
	char path[4096], meta[4200];
	path_of(path, sizeof(path), "forge");
	suffix(meta, sizeof(meta), path, ".meta");
	make_pool(path, NULL, "x");
	struct pool_image img = {0};
	pool_save(path, &img);
	uint64_t w;
	memcpy(&w, img.bytes[0] + 64, 8);
	uint64_t e = (w & 0xffffffffull) + 5, forged = e | ((e * 0x9e3779b97f4a7c15ull) >> 32 << 32);
	memcpy(img.bytes[0] + 64, &forged, 8);
	memcpy(img.bytes[1] + 520, &forged, 8);
	pool_restore_files(path, &img);
	refused_unchanged(path, NULL, SPM_E_CORRUPT, "epoch word");
	w ^= 1ull << 40; /* one tag bit */
	memcpy(img.bytes[0] + 64, &w, 8);
	memcpy(img.bytes[1] + 520, &w, 8);
	pool_restore_files(path, &img);
	refused_unchanged(path, NULL, SPM_E_CORRUPT, "epoch word");
	pool_image_free(&img);
	remove_pool_files(path);
}

/* no_zero_lines -- every line after the data header page of an encrypting
 * design's data file is ciphertext from spm_create on: none is all zeros. */
static void no_zero_lines(void **state)
{
	(void)state;
	static const char *const designs[] = {"sca", "fca", "ideal", "colocated", "supermem"};
	for (size_t d = 0; d < sizeof(designs) / sizeof(designs[0]); d++) {
		char path[4096], opts[64];
		path_of(path, sizeof(path), designs[d]);
		snprintf(opts, sizeof(opts), "design=%s", designs[d]);
		spm_pool *p = fresh_pool(path, POOL_SIZE, opts);
		assert_int_equal(spm_close(p), 0);
		size_t n;
		uint8_t *b = slurp(path, &n);
		static const uint8_t zero[64];
		size_t zeros = 0;
		for (size_t off = 4096; off + 64 <= n; off += 64)
			zeros += memcmp(b + off, zero, 64) == 0;
		if (zeros)
			fail_msg("%s: %zu of %zu lines are zeros", designs[d], zeros, n / 64 - 64);
		free(b);
		expect_text(path, NULL, ""); /* and they read as zeros */
		remove_pool_files(path);
	}
}

/* hard_link -- a copy of the data file beside a hard link to the live meta
 * file does not open while the owner has the pool open (the meta file is
 * locked too), and the owner's pool is intact. */
static void hard_link(void **state)
{
	(void)state;
	char path[4096], meta[4200], key[4200], copy[4200], cmeta[4300], ckey[4300];
	path_of(path, sizeof(path), "owner");
	suffix(meta, sizeof(meta), path, ".meta");
	suffix(key, sizeof(key), path, ".key");
	path_of(copy, sizeof(copy), "thief");
	suffix(cmeta, sizeof(cmeta), copy, ".meta");
	suffix(ckey, sizeof(ckey), copy, ".key");
	remove_pool_files(copy);
	make_pool(path, NULL, "owner's");
	spm_pool *p = NULL;
	assert_int_equal(spm_open(&p, path, NULL), 0);
	size_t n;
	uint8_t *b = slurp(path, &n);
	spit(copy, b, n);
	free(b);
	b = slurp(key, &n);
	spit(ckey, b, n);
	free(b);
	assert_int_equal(link(meta, cmeta), 0);
	spm_pool *q = NULL;
	assert_int_equal(spm_open(&q, copy, NULL), SPM_E_BUSY);
	assert_null(q);
	assert_non_null(strstr(spm_errormsg(), "already open"));
	assert_int_equal(spm_close(p), 0);
	expect_text(path, NULL, "owner's");
	remove_pool_files(copy);
	remove_pool_files(path);
}

/* long_name -- a name that leaves no room for the files' suffixes is
 * -ENAMETOOLONG (not a key file error), at create and at open. */
static void long_name(void **state)
{
	(void)state;
	char path[4096], name[300];
	memset(name, 'n', 252);
	name[252] = '\0';
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	spm_pool *p = NULL;
	assert_int_equal(spm_create(&p, path, POOL_SIZE, NULL), -ENAMETOOLONG);
	assert_non_null(strstr(spm_errormsg(), "too long"));
	assert_int_equal(spm_open(&p, path, NULL), -ENOENT); /* no such file */
	/* the longest name that fits works (spm adds ".key.new.XXXXXXXX") */
	name[255 - 17] = '\0';
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	make_pool(path, NULL, "fits");
	expect_text(path, NULL, "fits");
	remove_pool_files(path);
}

/* not_leftovers -- spm_create clears only what an interrupted creation of
 * its path left: a real pool named <path>.new, a user's <path>.meta.new, and
 * a copy of a pool's header at <path>.new beside that pool are left alone
 * (-EEXIST), and the pool's key stays. */
static void not_leftovers(void **state)
{
	(void)state;
	char path[4096], anchor[4200], tmp_meta[4200], key[4200];
	path_of(path, sizeof(path), "nl");
	suffix(anchor, sizeof(anchor), path, ".new");
	suffix(tmp_meta, sizeof(tmp_meta), path, ".meta.new");
	suffix(key, sizeof(key), path, ".key");
	remove_pool_files(path);
	/* a pool of the user's called <path>.new, and a file <path>.meta.new */
	make_pool(anchor, NULL, "a pool named .new");
	static const uint8_t mine[] = "the user's own file";
	spit(tmp_meta, mine, sizeof(mine));
	spm_pool *p = NULL;
	assert_int_equal(spm_create(&p, path, POOL_SIZE, NULL), -EEXIST);
	assert_non_null(strstr(spm_errormsg(), "not a pool being created"));
	assert_file_is(tmp_meta, mine, sizeof(mine));
	expect_text(anchor, NULL, "a pool named .new");
	remove_pool_files(anchor);
	unlink(tmp_meta);
	/* a pool at path, never opened since (its key records generation 0),
	 * and a copy of its header page at <path>.new */
	spm_pool *q = fresh_pool(path, POOL_SIZE, NULL);
	assert_non_null(spm_root(q, 64));
	assert_int_equal(spm_close(q), 0);
	size_t n, kn;
	uint8_t *b = slurp(path, &n), *k = slurp(key, &kn);
	spit(anchor, b, 4096);
	assert_int_equal(spm_create(&p, path, POOL_SIZE, NULL), -EEXIST);
	assert_file_is(key, k, kn);
	assert_file_is(anchor, b, 4096);
	expect_text(path, NULL, "");
	unlink(anchor);
	free(b);
	free(k);
	remove_pool_files(path);
}

/* lines_equal -- how many lines from page 1 on hold the same bytes in a
 * and b (n bytes each). */
static size_t lines_equal(const uint8_t *a, const uint8_t *b, size_t n)
{
	size_t same = 0;
	for (size_t off = 4096; off + 64 <= n; off += 64)
		same += memcmp(a + off, b + off, 64) == 0;
	return same;
}

/*
 * rekey -- a restored copy, refused as a rollback, re-keyed with spm_rekey:
 * it opens with its content and takes writes; every line of its data file
 * is new ciphertext (a new key); the copy as it was restored is still
 * refused; a copy not closed cleanly, and a plain pool, are not re-keyed.
 */
static void rekey(void **state)
{
	(void)state;
	for (int design = 0; design < 2; design++) {
		const char *opts = design ? "design=supermem" : "design=sca";
		char path[4096], meta[4200];
		path_of(path, sizeof(path), design ? "rk-sm" : "rk-sca");
		suffix(meta, sizeof(meta), path, ".meta");
		make_pool(path, opts, "old state");
		struct pool_image old = {0};
		pool_save(path, &old);
		rewrite(path, NULL, "new state");
		pool_restore_files(path, &old);
		refused_unchanged(path, NULL, SPM_E_ROLLBACK, "spm-rekey");
		assert_int_equal(spm_rekey(path, NULL), 0);
		size_t n;
		uint8_t *b = slurp(path, &n);
		assert_int_equal(n, old.len[0]);
		assert_int_equal(lines_equal(b, old.bytes[0], n), 0);
		free(b);
		expect_text(path, NULL, "old state");
		rewrite(path, NULL, "after the re-key");
		expect_text(path, NULL, "after the re-key");
		/* the copy itself is still older than the key's record of it */
		pool_restore_files(path, &old);
		refused_unchanged(path, NULL, SPM_E_ROLLBACK, "rollback");
		pool_image_free(&old);
		remove_pool_files(path);
	}
	/* a copy taken while the pool was open: not re-keyed, not modified */
	char path[4096], meta[4200];
	path_of(path, sizeof(path), "rk-dirty");
	suffix(meta, sizeof(meta), path, ".meta");
	make_pool(path, NULL, "x");
	spm_pool *p = NULL;
	assert_int_equal(spm_open(&p, path, NULL), 0);
	struct pool_image dirty = {0};
	pool_save(path, &dirty);
	assert_int_equal(spm_close(p), 0);
	pool_restore_files(path, &dirty);
	assert_int_equal(spm_rekey(path, NULL), SPM_E_INVAL);
	assert_non_null(strstr(spm_errormsg(), "not closed cleanly"));
	assert_file_is(path, dirty.bytes[0], dirty.len[0]);
	assert_file_is(meta, dirty.bytes[1], dirty.len[1]);
	pool_image_free(&dirty);
	remove_pool_files(path);
	/* plain: no key */
	make_pool(path, "design=plain", "x");
	assert_int_equal(spm_rekey(path, NULL), SPM_E_INVAL);
	remove_pool_files(path);
}

int main(void)
{
	const char *d = getenv("SPM_TEST_DIR");
	snprintf(dir, sizeof(dir), "%s", d && *d ? d : "/tmp");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(planted_key), cmocka_unit_test(new_key_private),
		cmocka_unit_test(rollback),    cmocka_unit_test(forged_epoch),
		cmocka_unit_test(no_zero_lines), cmocka_unit_test(hard_link),
		cmocka_unit_test(long_name),   cmocka_unit_test(not_leftovers),
		cmocka_unit_test(rekey),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
