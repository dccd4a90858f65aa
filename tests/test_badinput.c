/* test_badinput.c -- every bad input to spm_open/spm_create gets its own error code and a message, and no pool file is modified. */
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
#include <zlib.h>

#include <cmocka.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/kdf.h>

#include "test_files.h"

#include <spm.h>

#define POOL_SIZE (4u << 20)

enum cat { C_NOTPOOL, C_TRUNC, C_CORRUPT, C_MISMATCH, C_VERSION, C_KEY, C_KEYFILE,
	   C_DESIGN, C_OPTION, C_NOENT, C_BUSY, C_WRONGDESIGN, C_ROLLBACK, C__N };
static const char *const cat_name[C__N] = {"notpool", "truncated", "corrupt",
					    "mismatch", "version", "key", "keyfile",
					    "design", "option", "noent", "busy",
					    "wrongdesign", "rollback"};
static const int cat_code[C__N] = {SPM_E_NOTPOOL, SPM_E_TRUNCATED, SPM_E_CORRUPT,
				   SPM_E_MISMATCH, SPM_E_VERSION, SPM_E_KEY,
				   SPM_E_KEYFILE, SPM_E_DESIGN, SPM_E_OPTION,
				   -ENOENT, SPM_E_BUSY, SPM_E_WRONGDESIGN,
				   SPM_E_ROLLBACK};

/* What the failed opens returned, per category (0: not seen). */
static int seen[C__N];

/* A file's identity for "not modified": existence, size, crc32. */
struct sum {
	int exists;
	long size;
	uint32_t crc;
};

/* The pristine pool A (files kept in memory) and a second pool B. */
static char dir[4096], pa[4200], pa_meta[4200], pa_key[4200], pb[4200],
	pb_meta[4200];
static uint8_t *img_data, *img_meta, *img_key;
static size_t len_data, len_meta, len_key;

static const char msg_text[] = "the intact pool keeps its data";

static void suffixed(char *buf, size_t n, const char *path, const char *suffix)
{
	if (snprintf(buf, n, "%s%s", path, suffix) >= (int)n)
		abort();
}




static struct sum sum_of(const char *path)
{
	struct sum s = {0, 0, 0};
	struct stat st;
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		s.exists = 2; /* a FIFO, device or directory: not read */
		return s;
	}
	FILE *f = fopen(path, "rb");
	if (!f)
		return s;
	s.exists = 1;
	uLong c = crc32(0L, Z_NULL, 0);
	uint8_t buf[65536];
	size_t n;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0) {
		c = crc32(c, buf, (uInt)n);
		s.size += (long)n;
	}
	fclose(f);
	s.crc = (uint32_t)c;
	return s;
}

/* restore_a -- pool A's three files as they were after its clean close. */
static void restore_a(void)
{
	spit(pa, img_data, len_data);
	spit(pa_meta, img_meta, len_meta);
	spit(pa_key, img_key, len_key);
}

/* patch -- overwrite n bytes at off of path. */
static void patch(const char *path, long off, const void *bytes, size_t n)
{
	int fd = open(path, O_WRONLY);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, bytes, n, off), (ssize_t)n);
	close(fd);
}

static void flip(const char *path, long off)
{
	uint8_t b;
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	assert_int_equal(fseek(f, off, SEEK_SET), 0);
	assert_int_equal(fread(&b, 1, 1, f), 1);
	fclose(f);
	b ^= 0x5a;
	patch(path, off, &b, 1);
}

static void resize(const char *path, off_t len)
{
	assert_int_equal(truncate(path, len), 0);
}

/*
 * expect_refused -- open path with options: must fail with code, leave the
 * message naming needle, and modify none of the files of path and pool A.
 */
static void expect_refused(const char *what, const char *path, const char *options,
			   enum cat cat, const char *needle)
{
	char m[4300], k[4300];
	suffixed(m, sizeof(m), path, ".meta");
	suffixed(k, sizeof(k), path, ".key");
	const char *files[] = {path, m, k, pa, pa_meta, pa_key};
	struct sum before[6], after[6];
	for (int i = 0; i < 6; i++)
		before[i] = sum_of(files[i]);
	spm_pool *p = NULL;
	int rc = spm_open(&p, path, options);
	if (rc == 0) {
		spm_close(p);
		fail_msg("%s: spm_open succeeded, expected %s", what, cat_name[cat]);
	}
	const char *msg = spm_errormsg();
	print_message("  %-28s %6d %s\n", what, rc, msg);
	if (rc != cat_code[cat])
		fail_msg("%s: spm_open = %d (%s), expected %d (%s): %s", what, rc,
			 spm_strerror(rc), cat_code[cat], cat_name[cat], msg);
	assert_null(p); /* *pool untouched on failure */
	assert_true(msg[0] != '\0');
	if (needle && !strstr(msg, needle))
		fail_msg("%s: message \"%s\" does not name \"%s\"", what, msg, needle);
	for (int i = 0; i < 6; i++) {
		after[i] = sum_of(files[i]);
		if (before[i].exists != after[i].exists || before[i].size != after[i].size ||
		    before[i].crc != after[i].crc)
			fail_msg("%s: %s was modified by the failed open", what, files[i]);
	}
	if (!seen[cat])
		seen[cat] = rc;
}

static int setup(void **state)
{
	(void)state;
	const char *d = getenv("SPM_TEST_DIR");
	snprintf(dir, sizeof(dir), "%s", d && *d ? d : "/tmp");
	snprintf(pa, sizeof(pa), "%s/bad-%ld-a", dir, (long)getpid());
	snprintf(pb, sizeof(pb), "%s/bad-%ld-b", dir, (long)getpid());
	suffixed(pa_meta, sizeof(pa_meta), pa, ".meta");
	suffixed(pa_key, sizeof(pa_key), pa, ".key");
	suffixed(pb_meta, sizeof(pb_meta), pb, ".meta");
	remove_pool_files(pa);
	remove_pool_files(pb);
	spm_pool *p = NULL;
	if (spm_create(&p, pa, POOL_SIZE, "design=sca"))
		return -1;
	char *r = spm_root(p, 64);
	if (!r || spm_tx_begin(p) || spm_tx_add(p, r, 64))
		return -1;
	strcpy(r, msg_text);
	if (spm_tx_commit(p) || spm_close(p))
		return -1;
	if (spm_create(&p, pb, POOL_SIZE, "design=sca") || !spm_root(p, 64) ||
	    spm_close(p))
		return -1;
	img_data = slurp(pa, &len_data);
	img_meta = slurp(pa_meta, &len_meta);
	img_key = slurp(pa_key, &len_key);
	return len_key > 16 && len_data == POOL_SIZE ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char x[4300];
	remove_pool_files(pa);
	remove_pool_files(pb);
	snprintf(x, sizeof(x), "%s/bad-%ld-x", dir, (long)getpid());
	remove_pool_files(x);
	snprintf(x, sizeof(x), "%s/bad-%ld-c", dir, (long)getpid());
	remove_pool_files(x);
	free(img_data);
	free(img_meta);
	free(img_key);
	return 0;
}

static void not_a_pool(void **state)
{
	(void)state;
	char x[4300], xm[4300];
	snprintf(x, sizeof(x), "%s/bad-%ld-x", dir, (long)getpid());
	suffixed(xm, sizeof(xm), x, ".meta");
	uint8_t *rnd = malloc(POOL_SIZE);
	assert_non_null(rnd);
	uint64_t s = 0x9e3779b97f4a7c15ull;
	for (size_t i = 0; i < POOL_SIZE; i++) {
		s ^= s << 13, s ^= s >> 7, s ^= s << 17;
		rnd[i] = (uint8_t)s;
	}
	spit(x, rnd, POOL_SIZE);
	expect_refused("random bytes", x, NULL, C_NOTPOOL, x);
	spit(xm, rnd, 1 << 16); /* with a random meta file too */
	expect_refused("random bytes + meta", x, NULL, C_NOTPOOL, x);
	unlink(xm);
	const char text[] = "This is a text file.\nIt is not an spm pool.\n";
	spit(x, text, sizeof(text) - 1);
	expect_refused("text file", x, NULL, C_NOTPOOL, x);
	spit(x, "", 0);
	expect_refused("empty file", x, NULL, C_NOTPOOL, x);
	unlink(x);
	/* pool A with a random meta file */
	restore_a();
	spit(pa_meta, rnd, len_meta);
	expect_refused("random meta file", pa, NULL, C_NOTPOOL, pa_meta);
	restore_a();
	spit(pa_meta, text, sizeof(text) - 1);
	expect_refused("text meta file", pa, NULL, C_NOTPOOL, pa_meta);
	free(rnd);
}

/* fifos -- a FIFO where the pool, its meta file or its key file should be
 * is refused at once (an open for reading would wait for a writer). */
static void fifos(void **state)
{
	(void)state;
	char x[4300];
	snprintf(x, sizeof(x), "%s/bad-%ld-x", dir, (long)getpid());
	remove_pool_files(x);
	assert_int_equal(mkfifo(x, 0600), 0);
	expect_refused("pool is a FIFO", x, NULL, C_NOTPOOL, x);
	unlink(x);
	restore_a();
	unlink(pa_meta);
	assert_int_equal(mkfifo(pa_meta, 0600), 0);
	expect_refused("meta file is a FIFO", pa, NULL, C_NOTPOOL, pa_meta);
	unlink(pa_meta);
	restore_a();
	unlink(pa_key);
	assert_int_equal(mkfifo(pa_key, 0600), 0);
	expect_refused("key file is a FIFO", pa, NULL, C_KEYFILE, pa_key);
	unlink(pa_key);
	restore_a();
}

static void truncated(void **state)
{
	(void)state;
	restore_a();
	resize(pa, POOL_SIZE - 4096);
	expect_refused("data file shorter", pa, NULL, C_TRUNC, pa);
	restore_a();
	resize(pa, POOL_SIZE / 2);
	expect_refused("data file half", pa, NULL, C_TRUNC, pa);
	restore_a();
	resize(pa, 10);
	expect_refused("data file 10 bytes", pa, NULL, C_TRUNC, pa);
	restore_a();
	resize(pa, 40);
	expect_refused("data file 40 bytes", pa, NULL, C_TRUNC, pa);
	restore_a();
	resize(pa, POOL_SIZE + 4096);
	expect_refused("data file longer", pa, NULL, C_TRUNC, pa);
	restore_a();
	resize(pa_meta, (off_t)len_meta - 4096);
	expect_refused("meta file shorter", pa, NULL, C_TRUNC, pa_meta);
	restore_a();
	resize(pa_meta, (off_t)len_meta - 1);
	expect_refused("meta file 1 byte short", pa, NULL, C_TRUNC, pa_meta);
	restore_a();
	resize(pa_meta, 100);
	expect_refused("meta file 100 bytes", pa, NULL, C_TRUNC, pa_meta);
	restore_a();
	resize(pa_meta, 10);
	expect_refused("meta file 10 bytes", pa, NULL, C_TRUNC, pa_meta);
	restore_a();
	resize(pa_meta, (off_t)len_meta + 4096);
	expect_refused("meta file longer", pa, NULL, C_TRUNC, pa_meta);
}

static void corrupt(void **state)
{
	(void)state;
	/* superblock fields covered by the checksum (offsets < 176) */
	static const long offs[] = {16, 32, 40, 48, 80, 90, 100, 140, 150, 168, 175};
	for (size_t i = 0; i < sizeof(offs) / sizeof(offs[0]); i++) {
		char what[64];
		snprintf(what, sizeof(what), "superblock byte %ld", offs[i]);
		restore_a();
		flip(pa_meta, offs[i]);
		expect_refused(what, pa, NULL, C_CORRUPT, pa_meta);
	}
	restore_a();
	flip(pa_meta, 176); /* the checksum itself */
	expect_refused("superblock checksum", pa, NULL, C_CORRUPT, pa_meta);
	restore_a();
	uint64_t junk = 0x1234567890abcdefull;
	patch(pa_meta, 512, &junk, 8); /* the clean/dirty word */
	expect_refused("superblock state word", pa, NULL, C_CORRUPT, pa_meta);
	restore_a();
	flip(pa, 32); /* the data header's pool size */
	expect_refused("data header size", pa, NULL, C_CORRUPT, pa);
	restore_a();
	flip(pa, 20); /* the data header's uuid */
	expect_refused("data header uuid", pa, NULL, C_CORRUPT, pa);
	/* the heap header (line 64, encrypted): the controller accepts the
	 * files, the runtime refuses what they decrypt to; a clean pool is
	 * left clean (it was marked dirty first), so a second try is the same */
	restore_a();
	flip(pa, 4100);
	expect_refused("heap header", pa, NULL, C_CORRUPT, "heap header");
	expect_refused("heap header, again", pa, NULL, C_CORRUPT, "heap header");
}

static void mismatch(void **state)
{
	(void)state;
	size_t n;
	restore_a();
	uint8_t *bm = slurp(pb_meta, &n);
	assert_int_equal(n, len_meta);
	spit(pa_meta, bm, n);
	free(bm);
	expect_refused("meta file of pool B", pa, NULL, C_MISMATCH, pa_meta);
	restore_a();
	uint8_t *bd = slurp(pb, &n);
	spit(pa, bd, n);
	free(bd);
	expect_refused("data file of pool B", pa, NULL, C_MISMATCH, pa);
}

/* The epoch words (emu.c, "Epochs"): data file offset 64, meta file 520
 * (epoch) and 528 (next); a 32-bit epoch under a 32-bit tag, the first four
 * bytes of HMAC-SHA256(HKDF-SHA256(key, uuid, "spm epoch"), uuid || epoch),
 * computed here as the format says, from pool A's key file (the key at 16)
 * and data header (the uuid at 16). */
static uint64_t epoch_word(uint64_t e)
{
	e &= 0xffffffffull;
	if (!e)
		return 0;
	uint8_t uuid[16], mk[32], msg[24], mac[EVP_MAX_MD_SIZE];
	memcpy(uuid, img_data + 16, 16);
	EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_id(EVP_PKEY_HKDF, NULL);
	size_t mklen = sizeof(mk);
	assert_non_null(c);
	assert_int_equal(EVP_PKEY_derive_init(c), 1);
	assert_int_equal(EVP_PKEY_CTX_set_hkdf_md(c, EVP_sha256()), 1);
	assert_int_equal(EVP_PKEY_CTX_set1_hkdf_salt(c, uuid, 16), 1);
	assert_int_equal(EVP_PKEY_CTX_set1_hkdf_key(c, img_key + 16, 16), 1);
	assert_int_equal(EVP_PKEY_CTX_add1_hkdf_info(c, (const unsigned char *)"spm epoch", 9), 1);
	assert_int_equal(EVP_PKEY_derive(c, mk, &mklen), 1);
	EVP_PKEY_CTX_free(c);
	memcpy(msg, uuid, 16);
	memcpy(msg + 16, &e, 8);
	unsigned maclen = 0;
	assert_non_null(HMAC(EVP_sha256(), mk, (int)mklen, msg, sizeof(msg), mac, &maclen));
	uint32_t tag;
	memcpy(&tag, mac, 4);
	return e | (uint64_t)tag << 32;
}

static uint64_t word_at(const char *path, long off)
{
	uint64_t w = 0;
	int fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &w, 8, off), 8);
	close(fd);
	return w;
}

/* open_write_close -- open pool A, change its root in a transaction, close. */
static void open_write_close(const char *text)
{
	spm_pool *p = NULL;
	assert_int_equal(spm_open(&p, pa, NULL), 0);
	char *r = spm_root(p, 64);
	assert_non_null(r);
	assert_int_equal(spm_tx_begin(p), 0);
	assert_int_equal(spm_tx_add(p, r, 64), 0);
	strcpy(r, text);
	assert_int_equal(spm_tx_commit(p), 0);
	assert_int_equal(spm_close(p), 0);
}

/*
 * stale -- one of the two files older than the other (a restored copy):
 * refused by the epochs before its old counters could reuse a pad; the
 * states a crash in the middle of an epoch raise leaves are accepted; a
 * damaged epoch word is corrupt.
 */
static void stale(void **state)
{
	(void)state;
	restore_a();
	uint64_t e = word_at(pa, 64) & 0xffffffffull;
	assert_int_equal(word_at(pa, 64), epoch_word(e));
	assert_int_equal(word_at(pa_meta, 520), epoch_word(e));
	open_write_close("a later state");
	/* open and close each raise the epoch of both files */
	assert_int_equal(word_at(pa, 64), epoch_word(e + 2));
	assert_int_equal(word_at(pa_meta, 520), epoch_word(e + 2));
	assert_int_equal(word_at(pa_meta, 528), 0);
	size_t n_data, n_meta;
	uint8_t *new_data = slurp(pa, &n_data), *new_meta = slurp(pa_meta, &n_meta);
	spit(pa_meta, img_meta, len_meta); /* the older meta file */
	expect_refused("older meta file", pa, NULL, C_MISMATCH, "older copy");
	spit(pa, img_data, len_data); /* both older: a consistent pair, but
					 * older than the key's record */
	expect_refused("older data and meta files", pa, NULL, C_ROLLBACK, "rollback");
	spit(pa_meta, new_meta, n_meta); /* the older data file */
	expect_refused("older data file", pa, NULL, C_MISMATCH, "older copy");
	/* a raise cut short: next set; next and the data file's epoch set */
	spit(pa, new_data, n_data);
	uint64_t w = epoch_word(e + 3);
	patch(pa_meta, 528, &w, 8);
	open_write_close("after a crash in a raise (1)");
	e = word_at(pa, 64) & 0xffffffffull;
	w = epoch_word(e + 1);
	patch(pa_meta, 528, &w, 8);
	patch(pa, 64, &w, 8);
	open_write_close("after a crash in a raise (2)");
	free(new_data);
	free(new_meta);
	/* damaged words */
	restore_a();
	flip(pa_meta, 522);
	expect_refused("meta epoch word", pa, NULL, C_CORRUPT, "epoch");
	restore_a();
	flip(pa_meta, 529);
	expect_refused("meta next-epoch word", pa, NULL, C_CORRUPT, "epoch");
	restore_a();
	flip(pa, 70);
	expect_refused("data epoch word", pa, NULL, C_CORRUPT, "epoch");
	restore_a();
}

static void version(void **state)
{
	(void)state;
	uint32_t v = 99;
	restore_a();
	patch(pa_meta, 8, &v, 4); /* checksum left stale: version is checked first */
	expect_refused("meta version 99", pa, NULL, C_VERSION, pa_meta);
	restore_a();
	patch(pa, 8, &v, 4);
	expect_refused("data version 99", pa, NULL, C_VERSION, pa);
	restore_a();
	v = 3;
	patch(pa_meta, 8, &v, 4);
	expect_refused("meta version 3", pa, NULL, C_VERSION, pa_meta);
	restore_a();
	v = 1; /* the format before keyed epoch words: no upgrade */
	patch(pa_meta, 8, &v, 4);
	expect_refused("meta version 1", pa, NULL, C_VERSION, pa_meta);
	restore_a();
	v = 0; /* no version spm ever wrote */
	patch(pa_meta, 8, &v, 4);
	expect_refused("meta version 0", pa, NULL, C_VERSION, pa_meta);
	restore_a();
	patch(pa, 8, &v, 4);
	expect_refused("data version 0", pa, NULL, C_VERSION, pa);
}

static void key(void **state)
{
	(void)state;
	uint8_t other[16];
	restore_a();
	for (int i = 0; i < 16; i++)
		other[i] = (uint8_t)(img_key[i] ^ (0x11 * (i + 1)));
	spit(pa_key, other, 16);
	expect_refused("other key", pa, NULL, C_KEY, pa);
	restore_a();
	other[0] = (uint8_t)(img_key[0] ^ 1);
	memcpy(other + 1, img_key + 1, 15);
	spit(pa_key, other, 16);
	expect_refused("key with one bit flipped", pa, NULL, C_KEY, pa);
	/* pool B's key given for pool A */
	restore_a();
	char bkey[4300], opt[4400];
	suffixed(bkey, sizeof(bkey), pb, ".key");
	snprintf(opt, sizeof(opt), "key_file=%s", bkey);
	expect_refused("key_file of pool B", pa, opt, C_KEY, pa);
}

static void keyfile(void **state)
{
	(void)state;
	restore_a();
	unlink(pa_key);
	expect_refused("key file missing", pa, NULL, C_KEYFILE, pa_key);
	restore_a();
	spit(pa_key, img_key, 15);
	expect_refused("key file 15 bytes", pa, NULL, C_KEYFILE, pa_key);
	restore_a();
	uint8_t k17[32];
	memcpy(k17, img_key, 16);
	memcpy(k17 + 16, img_key, 16);
	spit(pa_key, k17, 17);
	expect_refused("key file 17 bytes", pa, NULL, C_KEYFILE, pa_key);
	restore_a();
	spit(pa_key, k17, 32);
	expect_refused("key file 32 bytes (256-bit)", pa, NULL, C_KEYFILE, pa_key);
	restore_a();
	spit(pa_key, "", 0);
	expect_refused("key file empty", pa, NULL, C_KEYFILE, pa_key);
	restore_a();
	char opt[4400], kf[4300];
	snprintf(kf, sizeof(kf), "%s/bad-%ld-nokey", dir, (long)getpid());
	snprintf(opt, sizeof(opt), "key_file=%s", kf);
	expect_refused("key_file option missing", pa, opt, C_KEYFILE, kf);
}

/* expect_no_files -- no data, meta or key file at pool path c. */
static void expect_no_files(const char *c)
{
	char cm[4300], ck[4300];
	suffixed(cm, sizeof(cm), c, ".meta");
	suffixed(ck, sizeof(ck), c, ".key");
	assert_int_not_equal(access(c, F_OK), 0);
	assert_int_not_equal(access(cm, F_OK), 0);
	assert_int_not_equal(access(ck, F_OK), 0);
}

static void design(void **state)
{
	(void)state;
	restore_a();
	expect_refused("design=bogus", pa, "design=bogus", C_DESIGN, "bogus");
	expect_refused("design=fca on sca pool", pa, "design=fca", C_WRONGDESIGN, pa);
	expect_refused("design=plain on sca pool", pa, "design=plain", C_WRONGDESIGN, pa);
	/* spm_create refuses it too, creating nothing */
	char c[4300], cm[4300], ck[4300];
	snprintf(c, sizeof(c), "%s/bad-%ld-c", dir, (long)getpid());
	suffixed(cm, sizeof(cm), c, ".meta");
	suffixed(ck, sizeof(ck), c, ".key");
	spm_pool *p = NULL;
	assert_int_equal(spm_create(&p, c, POOL_SIZE, "design=bogus"), SPM_E_DESIGN);
	assert_null(p);
	assert_non_null(strstr(spm_errormsg(), "bogus"));
	assert_int_not_equal(access(c, F_OK), 0);
	assert_int_not_equal(access(cm, F_OK), 0);
	assert_int_not_equal(access(ck, F_OK), 0);
}

static void option(void **state)
{
	(void)state;
	restore_a();
	expect_refused("unknown key", pa, "bogus_key=1", C_OPTION, "bogus_key");
	expect_refused("unknown key after good", pa, "design=sca;frobnicate=2", C_OPTION,
		       "frobnicate");
	expect_refused("bad value", pa, "ctr_cache_kib=lots", C_OPTION, "ctr_cache_kib");
	expect_refused("negative value", pa, "wpq_data=-4", C_OPTION, "wpq_data");
	expect_refused("no '='", pa, "durability", C_OPTION, "durability");
	expect_refused("bad durability", pa, "durability=sometimes", C_OPTION, "durability");
	expect_refused("bad profile", pa, "profile=nosuch", C_OPTION, "nosuch");
	expect_refused("aes_bits of another pool", pa, "aes_bits=256", C_OPTION, "aes_bits");
	expect_refused("bank_hash, 3 banks", pa, "bank_hash=1;banks=3", C_OPTION, "bank_hash");
	expect_refused("hex nanoseconds", pa, "t_rcd=0x10", C_OPTION, "t_rcd");
	expect_refused("underflowing ns", pa, "t_rcd=1e-400", C_OPTION, "t_rcd");
	char bad_audit[4300];
	snprintf(bad_audit, sizeof(bad_audit), "%s/no-such-dir-%ld/audit", dir, (long)getpid());
	assert_int_equal(setenv("SPM_AUDIT", bad_audit, 1), 0);
	expect_refused("SPM_AUDIT unwritable", pa, NULL, C_OPTION, "SPM_AUDIT");
	assert_int_equal(unsetenv("SPM_AUDIT"), 0);
	assert_int_equal(setenv("SPM_CONF", "no_such_knob=3", 1), 0);
	expect_refused("SPM_CONF unknown key", pa, NULL, C_OPTION, "no_such_knob");
	assert_int_equal(setenv("SPM_CONF", "t_rcd=fast", 1), 0);
	expect_refused("SPM_CONF bad value", pa, NULL, C_OPTION, "t_rcd");
	assert_int_equal(unsetenv("SPM_CONF"), 0);
	/* spm_create refuses a bad option too, creating nothing */
	char c[4300];
	snprintf(c, sizeof(c), "%s/bad-%ld-c", dir, (long)getpid());
	spm_pool *p = NULL;
	assert_int_equal(spm_create(&p, c, POOL_SIZE, "bogus_key=1"), SPM_E_OPTION);
	assert_int_not_equal(access(c, F_OK), 0);
	/* options refused only once the design and the size are known: a
	 * counter cache too large for the pool's shadow table, an unwritable
	 * SPM_AUDIT; nothing is left behind either */
	assert_int_equal(spm_create(&p, c, SIZE_MAX, NULL), SPM_E_INVAL); /* no wrap to 0 */
	expect_no_files(c);
	assert_int_equal(spm_create(&p, c, POOL_SIZE, "ctr_cache_kib=16384"), SPM_E_OPTION);
	assert_null(p);
	expect_no_files(c);
	assert_int_equal(setenv("SPM_AUDIT", bad_audit, 1), 0);
	assert_int_equal(spm_create(&p, c, POOL_SIZE, NULL), SPM_E_OPTION);
	assert_int_equal(unsetenv("SPM_AUDIT"), 0);
	expect_no_files(c);
}

static void missing(void **state)
{
	(void)state;
	char x[4300];
	snprintf(x, sizeof(x), "%s/bad-%ld-nosuchpool", dir, (long)getpid());
	expect_refused("no pool", x, NULL, C_NOENT, x);
	restore_a();
	unlink(pa_meta);
	expect_refused("meta file missing", pa, NULL, C_NOENT, pa_meta);
	snprintf(x, sizeof(x), "%s/no-such-dir-%ld/pool", dir, (long)getpid());
	expect_refused("no directory", x, NULL, C_NOENT, x);
	/* creating there: -ENOENT whether or not the design makes a key file */
	spm_pool *p = NULL;
	assert_int_equal(spm_create(&p, x, POOL_SIZE, "design=plain"), -ENOENT);
	assert_int_equal(spm_create(&p, x, POOL_SIZE, "design=sca"), -ENOENT);
	assert_null(p);
}

static void busy(void **state)
{
	(void)state;
	restore_a();
	int up[2], down[2];
	assert_int_equal(pipe(up), 0);
	assert_int_equal(pipe(down), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(up[0]);
		close(down[1]);
		spm_pool *p = NULL;
		char ok = spm_open(&p, pa, NULL) == 0 ? 'o' : 'f';
		if (write(up[1], &ok, 1) != 1)
			_exit(2);
		char c;
		if (read(down[0], &c, 1) != 1) /* wait for the parent */
			_exit(3);
		_exit(ok == 'o' && spm_close(p) == 0 ? 0 : 4);
	}
	close(up[1]);
	close(down[0]);
	char c = 0;
	assert_int_equal(read(up[0], &c, 1), 1);
	assert_int_equal(c, 'o');
	expect_refused("open in another process", pa, NULL, C_BUSY, "already open");
	assert_int_equal(write(down[1], "x", 1), 1);
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	close(up[0]);
	close(down[1]);
}

/*
 * dirty -- a pool left dirty by a killed process (ADR entries pending, an
 * unfinished transaction) is refused just the same before recovery touches it;
 * then it recovers with the committed data.
 */
static void dirty(void **state)
{
	(void)state;
	restore_a();
	int up[2];
	assert_int_equal(pipe(up), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(up[0]);
		spm_pool *p = NULL;
		if (spm_open(&p, pa, NULL))
			_exit(2);
		char *r = spm_root(p, 64);
		if (!r || spm_tx_begin(p) || spm_tx_add(p, r, 64))
			_exit(3);
		strcpy(r, "committed before the crash");
		if (spm_tx_commit(p) || spm_tx_begin(p) || spm_tx_add(p, r, 64))
			_exit(4);
		strcpy(r, "never committed");
		spm_persist(p, r, 64); /* written back, but the tx is open */
		if (write(up[1], "k", 1) != 1)
			_exit(5);
		for (;;)
			pause(); /* killed by the parent */
	}
	close(up[1]);
	char c;
	assert_int_equal(read(up[0], &c, 1), 1);
	assert_int_equal(kill(pid, SIGKILL), 0);
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status));
	close(up[0]);
	size_t n;
	uint8_t *crashed_key = slurp(pa_key, &n);
	uint8_t other[16];
	for (int i = 0; i < 16; i++)
		other[i] = (uint8_t)~crashed_key[i];
	spit(pa_key, other, 16);
	expect_refused("dirty pool, other key", pa, NULL, C_KEY, pa);
	unlink(pa_key);
	expect_refused("dirty pool, no key file", pa, NULL, C_KEYFILE, pa_key);
	spit(pa_key, crashed_key, n);
	free(crashed_key);
	expect_refused("dirty pool, design=fca", pa, "design=fca", C_WRONGDESIGN, pa);
	expect_refused("dirty pool, bad option", pa, "wpq_ctr=x", C_OPTION, "wpq_ctr");
	expect_refused("dirty pool, wpq too deep", pa, "wpq_data=257", C_OPTION, "wpq_data");
	spm_pool *p = NULL;
	assert_int_equal(spm_open(&p, pa, NULL), 0);
	uint64_t rolled = 0;
	assert_int_equal(spm_stat(p, "recovery.rolled_back", &rolled), 0);
	assert_int_equal(rolled, 1);
	const char *r = spm_root(p, 64);
	assert_non_null(r);
	assert_string_equal(r, "committed before the crash");
	assert_int_equal(spm_close(p), 0);
}

/* distinct -- every category produced its own code, pairwise distinct. */
static void distinct(void **state)
{
	(void)state;
	for (int i = 0; i < C__N; i++) {
		if (!seen[i])
			fail_msg("category %s was not exercised", cat_name[i]);
		assert_true(seen[i] < 0);
		assert_true(spm_strerror(seen[i])[0] != '\0');
		for (int j = 0; j < i; j++) {
			if (seen[i] == seen[j])
				fail_msg("%s and %s share code %d", cat_name[i], cat_name[j],
					 seen[i]);
			assert_string_not_equal(spm_strerror(seen[i]), spm_strerror(seen[j]));
		}
	}
}

/* intact -- after all that, pool A (restored) and B open with their data. */
static void intact(void **state)
{
	(void)state;
	restore_a();
	spm_pool *p = NULL;
	int rc = spm_open(&p, pa, NULL);
	if (rc)
		fail_msg("intact pool: %d %s", rc, spm_errormsg());
	char *r = spm_root(p, 64);
	assert_non_null(r);
	assert_string_equal(r, msg_text);
	assert_int_equal(spm_close(p), 0);
	assert_int_equal(spm_open(&p, pb, "design=sca"), 0);
	assert_non_null(spm_root(p, 64));
	assert_int_equal(spm_close(p), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(not_a_pool), cmocka_unit_test(fifos),
		cmocka_unit_test(truncated),
		cmocka_unit_test(corrupt),    cmocka_unit_test(mismatch),
		cmocka_unit_test(stale),
		cmocka_unit_test(version),    cmocka_unit_test(key),
		cmocka_unit_test(keyfile),    cmocka_unit_test(design),
		cmocka_unit_test(option),     cmocka_unit_test(missing),
		cmocka_unit_test(busy),       cmocka_unit_test(dirty),
		cmocka_unit_test(distinct),
		cmocka_unit_test(intact),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
