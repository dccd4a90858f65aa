/* test_config.c -- options and SPM_CONF through the public API: every key, bad values refused with their code, precedence, design checks. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include <spm.h>

#define POOL_SIZE (4u << 20)

static char test_dir[2048];

/* pool_path -- a pool file name of this process in SPM_TEST_DIR (or /tmp). */
static void pool_path(char *out, size_t n, const char *tag)
{
	snprintf(out, n, "%s/unit_config_%ld_%s", test_dir, (long)getpid(), tag);
}

static int exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

static void suffixed(char *out, size_t n, const char *path, const char *suffix)
{
	snprintf(out, n, "%s%s", path, suffix);
}

/* remove_pool -- the pool's three files (the key only if it is path.key). */
static void remove_pool(const char *path)
{
	char p[4200];
	unlink(path);
	suffixed(p, sizeof(p), path, ".meta");
	unlink(p);
	suffixed(p, sizeof(p), path, ".key");
	unlink(p);
}

/* assert_no_files -- neither path, path.meta nor path.key exists. */
static void assert_no_files(const char *path)
{
	char p[4200];
	assert_false(exists(path));
	suffixed(p, sizeof(p), path, ".meta");
	assert_false(exists(p));
	suffixed(p, sizeof(p), path, ".key");
	assert_false(exists(p));
}

/* set_conf -- SPM_CONF = v, or unset when v is NULL. */
static void set_conf(const char *v)
{
	if (v)
		assert_int_equal(setenv("SPM_CONF", v, 1), 0);
	else
		assert_int_equal(unsetenv("SPM_CONF"), 0);
}

/* file_bytes -- the whole content of path (malloc'd), its size in *n. */
static uint8_t *file_bytes(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	long len = ftell(f);
	assert_true(len > 0);
	rewind(f);
	uint8_t *buf = malloc((size_t)len);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)len, f), (size_t)len);
	fclose(f);
	*n = (size_t)len;
	return buf;
}

/* file_size -- st_size of path, or -1. */
static long long file_size(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 ? (long long)st.st_size : -1;
}

/* create_ok -- create a pool with options; fails the test with the message otherwise. */
static spm_pool *create_ok(const char *path, const char *options)
{
	spm_pool *p = NULL;
	int rc = spm_create(&p, path, POOL_SIZE, options);
	if (rc != 0)
		fail_msg("spm_create(\"%s\"): %d %s: %s", options ? options : "(null)", rc,
			 spm_strerror(rc), spm_errormsg());
	assert_non_null(p);
	return p;
}

static spm_pool *open_ok(const char *path, const char *options)
{
	spm_pool *p = NULL;
	int rc = spm_open(&p, path, options);
	if (rc != 0)
		fail_msg("spm_open(\"%s\"): %d %s: %s", options ? options : "(null)", rc,
			 spm_strerror(rc), spm_errormsg());
	assert_non_null(p);
	return p;
}

/* fill -- a pattern for root objects that depends on seed. */
static void fill(uint8_t *buf, size_t n, unsigned seed)
{
	uint32_t x = 2463534242u ^ seed;
	for (size_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		buf[i] = (uint8_t)x;
	}
}

enum { ROOT = 4096 };

/* write_root -- put pattern seed in a ROOT-byte root object, durably. */
static void write_root(spm_pool *p, unsigned seed)
{
	uint8_t *r = spm_root(p, ROOT);
	if (!r)
		fail_msg("spm_root: %s", spm_errormsg());
	fill(r, ROOT, seed);
	spm_persist(p, r, ROOT);
}

/* check_root -- the root object holds pattern seed. */
static void check_root(spm_pool *p, unsigned seed)
{
	uint8_t want[ROOT];
	const uint8_t *r = spm_root(p, ROOT);
	assert_non_null(r);
	fill(want, ROOT, seed);
	assert_memory_equal(r, want, ROOT);
}

struct bad {
	const char *options;
	const char *conf; /* SPM_CONF, NULL = unset */
	int code;
	const char *names; /* spm_errormsg() must contain it */
	int flags;
};

enum {
	FROM_ENV = 1,    /* the fault is in SPM_CONF: the message says so */
	CREATE_ONLY = 2, /* at open SPM_CONF's design is checked first */
};

/* Bad option strings and the code and message they must give. */
static const struct bad bad_cases[] = {
	/* unknown keys and bad syntax */
	{"bogus=1", NULL, SPM_E_OPTION, "bogus", 0},
	{"design=sca;Design=sca", NULL, SPM_E_OPTION, "Design", 0},
	{"banks", NULL, SPM_E_OPTION, "banks", 0},
	{"wpq_data:8", NULL, SPM_E_OPTION, "wpq_data", 0},
	/* bad numbers */
	{"wpq_data=abc", NULL, SPM_E_OPTION, "wpq_data", 0},
	{"wpq_ctr=12abc", NULL, SPM_E_OPTION, "wpq_ctr", 0},
	{"banks=", NULL, SPM_E_OPTION, "banks", 0},
	{"banks=4.5", NULL, SPM_E_OPTION, "banks", 0},
	{"ctr_cache_kib=-5", NULL, SPM_E_OPTION, "ctr_cache_kib", 0},
	{"ctr_cache_ways=0x10", NULL, SPM_E_OPTION, "ctr_cache_ways", 0},
	{"banks=99999999999999999999999", NULL, SPM_E_OPTION, "banks", 0},
	{"aes_bits=one28", NULL, SPM_E_OPTION, "aes_bits", 0},
	{"t_rcd=fast", NULL, SPM_E_OPTION, "t_rcd", 0},
	{"t_cl=", NULL, SPM_E_OPTION, "t_cl", 0},
	{"aes_ns=40ns", NULL, SPM_E_OPTION, "aes_ns", 0},
	{"t_wtr=nan", NULL, SPM_E_OPTION, "t_wtr", 0},
	{"bus_mhz=fast", NULL, SPM_E_OPTION, "bus_mhz", 0},
	{"bus_mhz=0x200", NULL, SPM_E_OPTION, "bus_mhz", 0},
	{"bus_mhz=-533", NULL, SPM_E_OPTION, "bus_mhz", 0},
	{"bus_mhz=100001", NULL, SPM_E_OPTION, "bus_mhz", 0},
	/* out of range */
	{"wpq_data=0", NULL, SPM_E_OPTION, "wpq_data", 0},
	{"wpq_data=257", NULL, SPM_E_OPTION, "wpq_data", 0},
	{"wpq_ctr=0", NULL, SPM_E_OPTION, "wpq_ctr", 0},
	{"wpq_ctr=100000", NULL, SPM_E_OPTION, "wpq_ctr", 0},
	{"banks=0", NULL, SPM_E_OPTION, "banks", 0},
	{"banks=65", NULL, SPM_E_OPTION, "banks", 0},
	{"bank_hash=2", NULL, SPM_E_OPTION, "bank_hash", 0},
	{"bank_hash=yes", NULL, SPM_E_OPTION, "bank_hash", 0},
	{"core_banks=2", NULL, SPM_E_OPTION, "core_banks", 0},
	{"core_banks=on", NULL, SPM_E_OPTION, "core_banks", 0},
	{"wpq_order=lifo", NULL, SPM_E_OPTION, "wpq_order", 0},
	{"wpq_issue=fifo", NULL, SPM_E_OPTION, "wpq_issue", 0},
	{"timing=0", NULL, SPM_E_OPTION, "timing", 0},
	{"timing=", NULL, SPM_E_OPTION, "timing", 0},
	{"wpq_issue=", NULL, SPM_E_OPTION, "wpq_issue", 0},
	{"wpq_order=", NULL, SPM_E_OPTION, "wpq_order", 0},
	{"wpq_window=0", NULL, SPM_E_OPTION, "wpq_window", 0},
	{"wpq_window=65", NULL, SPM_E_OPTION, "wpq_window", 0},
	{"wpq_window=two", NULL, SPM_E_OPTION, "wpq_window", 0},
	/* a window needs the in-order queue (the sca profile issues bank-free) */
	{"design=sca;wpq_window=2", NULL, SPM_E_OPTION, "wpq_window", 0},
	{"wpq_issue=bankfree;wpq_window=8", NULL, SPM_E_OPTION, "wpq_window", 0},
	{"aes_bits=192", NULL, SPM_E_OPTION, "aes_bits", 0},
	{"aes_bits=0", NULL, SPM_E_OPTION, "aes_bits", 0},
	{"aes_bits=512", NULL, SPM_E_OPTION, "aes_bits", 0},
	{"ctr_cache_kib=0", NULL, SPM_E_OPTION, "ctr_cache_kib", 0},
	{"ctr_cache_kib=2000000", NULL, SPM_E_OPTION, "ctr_cache_kib", 0},
	{"ctr_cache_ways=0", NULL, SPM_E_OPTION, "ctr_cache_ways", 0},
	{"ctr_cache_ways=1025", NULL, SPM_E_OPTION, "ctr_cache_ways", 0},
	{"t_faw=-1", NULL, SPM_E_OPTION, "t_faw", 0},
	{"t_wr=1e12", NULL, SPM_E_OPTION, "t_wr", 0},
	{"t_cwd=inf", NULL, SPM_E_OPTION, "t_cwd", 0},
	/* bad names */
	{"design=bogus", NULL, SPM_E_DESIGN, "design", 0},
	{"design=SCA", NULL, SPM_E_DESIGN, "design", 0},
	{"design=", NULL, SPM_E_OPTION, "design", 0},
	{"profile=nope", NULL, SPM_E_OPTION, "profile", 0},
	{"profile=", NULL, SPM_E_OPTION, "profile", 0},
	{"durability=sometimes", NULL, SPM_E_OPTION, "durability", 0},
	{"durability=", NULL, SPM_E_OPTION, "durability", 0},
	{"key_file=", NULL, SPM_E_OPTION, "key_file", 0},
	{"prefault=2", NULL, SPM_E_OPTION, "prefault", 0},
	{"prefault=on", NULL, SPM_E_OPTION, "prefault", 0},
	{"tx_track=page", NULL, SPM_E_OPTION, "tx_track", 0},
	{"tx_track=", NULL, SPM_E_OPTION, "tx_track", 0},
	{"tx_track=1", NULL, SPM_E_OPTION, "tx_track", 0},
	/* a bad key after good ones */
	{"design=fca;banks=4;wpq_data=8;nope=3", NULL, SPM_E_OPTION, "nope", 0},
	/* the same through SPM_CONF, alone and with good options */
	{NULL, "bogus=1", SPM_E_OPTION, "bogus", FROM_ENV},
	{NULL, "banks=65", SPM_E_OPTION, "banks", FROM_ENV},
	{NULL, "design=bogus", SPM_E_DESIGN, "design", 0},
	{NULL, "durability=maybe", SPM_E_OPTION, "durability", FROM_ENV},
	{NULL, "tx_track=on", SPM_E_OPTION, "tx_track", FROM_ENV},
	{"design=sca", "bogus=1", SPM_E_OPTION, "bogus", FROM_ENV},
	{"design=fca;profile=sca", "design=plain;t_rcd=fast", SPM_E_OPTION, "t_rcd", FROM_ENV},
	/* a bad value in options with a good SPM_CONF */
	{"profile=nope", "design=plain", SPM_E_OPTION, "profile", CREATE_ONLY},
	{"profile=nope", "banks=4", SPM_E_OPTION, "profile", 0},
};

/* check_refused -- rc and the message of one bad case. */
static void check_refused(const struct bad *b, int rc, spm_pool *p, const char *what)
{
	if (rc != b->code || p != NULL || !strstr(spm_errormsg(), b->names))
		fail_msg("%s(options \"%s\", SPM_CONF \"%s\"): rc %d (want %d), pool %p, "
			 "message \"%s\" (must name \"%s\")", what,
			 b->options ? b->options : "(null)", b->conf ? b->conf : "(unset)",
			 rc, b->code, (void *)p, spm_errormsg(), b->names);
}

/* spm_create refuses every bad case with its code, names the key, creates no file. */
static void test_create_refuses_bad_options(void **state)
{
	(void)state;
	char path[4096];
	pool_path(path, sizeof(path), "bad");
	remove_pool(path);
	for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		const struct bad *b = &bad_cases[i];
		set_conf(b->conf);
		spm_pool *p = NULL;
		int rc = spm_create(&p, path, POOL_SIZE, b->options);
		check_refused(b, rc, p, "spm_create");
		/* SPM_CONF errors say where they come from */
		if (b->flags & FROM_ENV)
			assert_non_null(strstr(spm_errormsg(), "SPM_CONF"));
		assert_no_files(path);
	}
	set_conf(NULL);
}

/* A bad option next to key_file creates neither the pool nor that key file. */
static void test_create_refused_makes_no_key_file(void **state)
{
	(void)state;
	char path[4096], key[4096], opts[8400];
	pool_path(path, sizeof(path), "nokey");
	pool_path(key, sizeof(key), "nokey.custom");
	remove_pool(path);
	unlink(key);
	const char *tails[] = {"design=bogus", "profile=nope", "banks=0", "nope=1",
			       "ctr_cache_kib=1;ctr_cache_ways=32"};
	set_conf(NULL);
	for (size_t i = 0; i < sizeof(tails) / sizeof(tails[0]); i++) {
		snprintf(opts, sizeof(opts), "key_file=%s;%s", key, tails[i]);
		spm_pool *p = NULL;
		int rc = spm_create(&p, path, POOL_SIZE, opts);
		assert_true(rc == SPM_E_OPTION || rc == SPM_E_DESIGN);
		assert_null(p);
		assert_no_files(path);
		assert_false(exists(key));
	}
}

/* A counter cache geometry that cannot exist is an option error naming the option. */
static void test_cache_geometry_error_names_option(void **state)
{
	(void)state;
	char path[4096];
	pool_path(path, sizeof(path), "geom");
	remove_pool(path);
	set_conf(NULL);
	spm_pool *p = NULL;
	/* 1 KiB holds 16 lines: 32 ways cannot be */
	int rc = spm_create(&p, path, POOL_SIZE, "ctr_cache_kib=1;ctr_cache_ways=32");
	assert_int_equal(rc, SPM_E_OPTION);
	assert_null(p);
	assert_no_files(path);
	if (!strstr(spm_errormsg(), "ctr_cache_ways") && !strstr(spm_errormsg(), "ctr_cache_kib"))
		fail_msg("message \"%s\" names neither ctr_cache_kib nor ctr_cache_ways",
			 spm_errormsg());
}

/* spm_open refuses every bad case the same way and leaves the files untouched. */
static void test_open_refuses_bad_options(void **state)
{
	(void)state;
	char path[4096], meta[4200];
	pool_path(path, sizeof(path), "badopen");
	remove_pool(path);
	set_conf(NULL);
	spm_pool *p = create_ok(path, NULL);
	write_root(p, 1);
	assert_int_equal(spm_close(p), 0);
	suffixed(meta, sizeof(meta), path, ".meta");
	size_t dn, mn;
	uint8_t *data0 = file_bytes(path, &dn), *meta0 = file_bytes(meta, &mn);
	for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		const struct bad *b = &bad_cases[i];
		if (b->flags & CREATE_ONLY)
			continue;
		set_conf(b->conf);
		spm_pool *q = NULL;
		int rc = spm_open(&q, path, b->options);
		check_refused(b, rc, q, "spm_open");
	}
	set_conf(NULL);
	size_t dn1, mn1;
	uint8_t *data1 = file_bytes(path, &dn1), *meta1 = file_bytes(meta, &mn1);
	assert_int_equal(dn1, dn);
	assert_int_equal(mn1, mn);
	assert_memory_equal(data1, data0, dn);
	assert_memory_equal(meta1, meta0, mn);
	free(data0);
	free(meta0);
	free(data1);
	free(meta1);
	/* and the pool is fine */
	p = open_ok(path, NULL);
	check_root(p, 1);
	assert_int_equal(spm_close(p), 0);
	remove_pool(path);
}

/* Explicit options win over SPM_CONF; SPM_CONF alone applies. */
static void test_options_win_over_env(void **state)
{
	(void)state;
	char path[4096];
	pool_path(path, sizeof(path), "prec");
	remove_pool(path);

	set_conf("design=plain");
	spm_pool *p = create_ok(path, "design=fca");
	assert_string_equal(spm_design(p), "fca");
	write_root(p, 2);
	assert_int_equal(spm_close(p), 0);
	/* at open, SPM_CONF's design=plain is not the pool's design ... */
	p = NULL;
	assert_int_equal(spm_open(&p, path, NULL), SPM_E_WRONGDESIGN);
	assert_null(p);
	assert_non_null(strstr(spm_errormsg(), "design"));
	/* ... unless options say otherwise */
	p = open_ok(path, "design=fca");
	assert_string_equal(spm_design(p), "fca");
	check_root(p, 2);
	assert_int_equal(spm_close(p), 0);
	remove_pool(path);

	/* SPM_CONF alone */
	set_conf("design=plain");
	p = create_ok(path, NULL);
	assert_string_equal(spm_design(p), "plain");
	assert_int_equal(spm_close(p), 0);
	remove_pool(path);
	/* and the default without either */
	set_conf(NULL);
	p = create_ok(path, NULL);
	assert_string_equal(spm_design(p), "sca");
	assert_int_equal(spm_close(p), 0);
	remove_pool(path);
	/* later keys in one string win over earlier ones */
	p = create_ok(path, "design=plain; design=colocated");
	assert_string_equal(spm_design(p), "colocated");
	assert_int_equal(spm_close(p), 0);
	remove_pool(path);
}

/* Every listed key is accepted with a good value, at create and at open. */
static void test_all_keys_accepted(void **state)
{
	(void)state;
	const char *good[] = {
		"design=plain", "design=ideal", "design=unsafe", "design=colocated",
		"design=colocated-cc", "design=fca", "design=sca",
		"profile=sca", "profile=supermem",
		"aes_bits=128", "aes_bits=256",
		"ctr_cache_kib=64", "ctr_cache_kib=1", "ctr_cache_ways=4", "ctr_cache_ways=1",
		"wpq_data=1", "wpq_data=256", "wpq_ctr=1", "wpq_ctr=256",
		"banks=1", "banks=64",
		"durability=auto", "durability=pmem", "durability=msync", "durability=none",
		"t_rcd=48", "t_cl=15.5", "t_cwd=0", "t_faw=50", "t_wtr=7.5", "t_wr=300",
		"aes_ns=12.25", "bus_mhz=533", "bus_mhz=1066.5",
		" design = fca ; banks = 4 ; ", /* blanks and empty items are fine */
	};
	char path[4096];
	pool_path(path, sizeof(path), "keys");
	set_conf(NULL);
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		remove_pool(path);
		spm_pool *p = create_ok(path, good[i]);
		if (strncmp(good[i], "design=", 7) == 0)
			assert_string_equal(spm_design(p), good[i] + 7);
		write_root(p, (unsigned)i);
		assert_int_equal(spm_close(p), 0);
		p = open_ok(path, good[i]);
		check_root(p, (unsigned)i);
		assert_int_equal(spm_close(p), 0);
		/* and through SPM_CONF */
		remove_pool(path);
		set_conf(good[i]);
		p = create_ok(path, NULL);
		if (strncmp(good[i], "design=", 7) == 0)
			assert_string_equal(spm_design(p), good[i] + 7);
		assert_int_equal(spm_close(p), 0);
		set_conf(NULL);
	}
	remove_pool(path);

	/* all of them at once */
	char key[4096], opts[8400];
	pool_path(key, sizeof(key), "keys.custom");
	unlink(key);
	snprintf(opts, sizeof(opts),
		 "design=fca;profile=supermem;key_file=%s;aes_bits=256;ctr_cache_kib=128;"
		 "ctr_cache_ways=8;wpq_data=32;wpq_ctr=8;banks=16;durability=none;"
		 "t_rcd=40;t_cl=10;t_cwd=10;t_faw=40;t_wtr=5;t_wr=250;aes_ns=20", key);
	spm_pool *p = create_ok(path, opts);
	assert_string_equal(spm_design(p), "fca");
	write_root(p, 99);
	assert_int_equal(spm_close(p), 0);
	p = open_ok(path, opts);
	check_root(p, 99);
	assert_int_equal(spm_close(p), 0);
	remove_pool(path);
	unlink(key);
}

/* key_file puts the key there (and not at path.key); open needs it. */
static void test_key_file(void **state)
{
	(void)state;
	char path[4096], key[4096], defkey[4200], opts[4200];
	pool_path(path, sizeof(path), "kf");
	pool_path(key, sizeof(key), "kf.custom");
	suffixed(defkey, sizeof(defkey), path, ".key");
	remove_pool(path);
	unlink(key);
	set_conf(NULL);
	snprintf(opts, sizeof(opts), "key_file=%s", key);
	spm_pool *p = create_ok(path, opts);
	write_root(p, 5);
	assert_int_equal(spm_close(p), 0);
	assert_true(file_size(key) > 16); /* the key and the pool's generation */
	assert_false(exists(defkey));
	/* without key_file, path.key is looked for and missing */
	p = NULL;
	assert_int_equal(spm_open(&p, path, NULL), SPM_E_KEYFILE);
	assert_null(p);
	p = open_ok(path, opts);
	check_root(p, 5);
	assert_int_equal(spm_close(p), 0);
	/* SPM_CONF can name it too */
	set_conf(opts);
	p = open_ok(path, NULL);
	check_root(p, 5);
	assert_int_equal(spm_close(p), 0);
	set_conf(NULL);
	remove_pool(path);
	unlink(key);
}

/* key_bytes_of -- the key size a key file in spm's format names (at 12). */
static unsigned key_bytes_of(const char *path)
{
	uint32_t kb = 0;
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	assert_int_equal(fseek(f, 12, SEEK_SET), 0);
	assert_int_equal(fread(&kb, 4, 1, f), 1);
	fclose(f);
	return kb;
}

/* memmem_n -- does hay contain needle? */
static int contains(const uint8_t *hay, size_t n, const uint8_t *needle, size_t m)
{
	for (size_t i = 0; i + m <= n; i++)
		if (hay[i] == needle[0] && memcmp(hay + i, needle, m) == 0)
			return 1;
	return 0;
}

/* aes_bits=256: a 32-byte key, ciphertext on media, data back after close/open. */
static void test_aes256_roundtrip(void **state)
{
	(void)state;
	char path[4096], key[4200];
	pool_path(path, sizeof(path), "aes256");
	suffixed(key, sizeof(key), path, ".key");
	remove_pool(path);
	set_conf(NULL);
	spm_pool *p = create_ok(path, "aes_bits=256");
	write_root(p, 256);
	assert_int_equal(spm_close(p), 0);
	assert_int_equal(key_bytes_of(key), 32);
	/* the plaintext is nowhere in the data file */
	uint8_t pat[ROOT];
	fill(pat, ROOT, 256);
	size_t n;
	uint8_t *media = file_bytes(path, &n);
	assert_false(contains(media, n, pat, 64));
	free(media);
	/* a plain pool, for contrast, keeps it in the clear */
	char ppath[4096];
	pool_path(ppath, sizeof(ppath), "aes256plain");
	remove_pool(ppath);
	spm_pool *q = create_ok(ppath, "design=plain");
	write_root(q, 256);
	assert_int_equal(spm_close(q), 0);
	media = file_bytes(ppath, &n);
	assert_true(contains(media, n, pat, 64));
	free(media);
	remove_pool(ppath);

	p = open_ok(path, NULL);
	check_root(p, 256);
	/* update, close, open again: the new content */
	write_root(p, 257);
	assert_int_equal(spm_close(p), 0);
	p = open_ok(path, "aes_bits=256");
	check_root(p, 257);
	assert_int_equal(spm_close(p), 0);
	/* the key size is fixed at create */
	p = NULL;
	assert_int_equal(spm_open(&p, path, "aes_bits=128"), SPM_E_OPTION);
	assert_null(p);
	assert_non_null(strstr(spm_errormsg(), "aes_bits"));
	remove_pool(path);

	/* the default is 128 bits */
	p = create_ok(path, NULL);
	assert_int_equal(spm_close(p), 0);
	assert_true(file_size(key) > 16);
	assert_int_equal(key_bytes_of(key), 16);
	remove_pool(path);
}

/* Opening with another design than the pool's is SPM_E_WRONGDESIGN; its own is fine. */
static void test_open_other_design(void **state)
{
	(void)state;
	static const char *const designs[] = {"plain", "ideal", "unsafe", "colocated",
					      "colocated-cc", "fca", "sca"};
	enum { ND = sizeof(designs) / sizeof(designs[0]) };
	char path[4096], opts[64];
	pool_path(path, sizeof(path), "design");
	set_conf(NULL);
	for (unsigned d = 0; d < ND; d++) {
		remove_pool(path);
		snprintf(opts, sizeof(opts), "design=%s", designs[d]);
		spm_pool *p = create_ok(path, opts);
		write_root(p, d);
		assert_int_equal(spm_close(p), 0);
		for (unsigned o = 0; o < ND; o++) {
			if (o == d)
				continue;
			snprintf(opts, sizeof(opts), "design=%s", designs[o]);
			p = NULL;
			int rc = spm_open(&p, path, opts);
			if (rc != SPM_E_WRONGDESIGN)
				fail_msg("%s pool opened with %s: rc %d", designs[d], opts, rc);
			assert_null(p);
			assert_non_null(strstr(spm_errormsg(), "design"));
			/* through SPM_CONF as well */
			set_conf(opts);
			assert_int_equal(spm_open(&p, path, NULL), SPM_E_WRONGDESIGN);
			assert_null(p);
			set_conf(NULL);
		}
		snprintf(opts, sizeof(opts), "design=%s", designs[d]);
		spm_pool *p2 = open_ok(path, opts);
		assert_string_equal(spm_design(p2), designs[d]);
		check_root(p2, d);
		assert_int_equal(spm_close(p2), 0);
		/* no design given: the pool's */
		p2 = open_ok(path, NULL);
		assert_string_equal(spm_design(p2), designs[d]);
		assert_int_equal(spm_close(p2), 0);
	}
	remove_pool(path);
}

/* The options a pool was created with open it again, whatever its design. */
static void test_open_with_create_options(void **state)
{
	(void)state;
	static const char *const designs[] = {"sca", "fca", "ideal", "unsafe", "colocated",
					      "colocated-cc", "plain"};
	const unsigned bits[] = {128, 256};
	char path[4096], opts[128];
	pool_path(path, sizeof(path), "reopen");
	set_conf(NULL);
	for (size_t d = 0; d < sizeof(designs) / sizeof(designs[0]); d++)
		for (size_t b = 0; b < 2; b++) {
			remove_pool(path);
			snprintf(opts, sizeof(opts), "design=%s;aes_bits=%u", designs[d], bits[b]);
			spm_pool *p = create_ok(path, opts);
			write_root(p, (unsigned)(d * 2 + b));
			assert_int_equal(spm_close(p), 0);
			p = NULL;
			int rc = spm_open(&p, path, opts);
			if (rc != 0)
				fail_msg("created with \"%s\", spm_open with the same options: "
					 "%d %s: %s", opts, rc, spm_strerror(rc), spm_errormsg());
			check_root(p, (unsigned)(d * 2 + b));
			assert_int_equal(spm_close(p), 0);
		}
	remove_pool(path);
}

/* spm_create over an existing pool fails with -EEXIST and writes no key file. */
static void test_create_existing_makes_no_key_file(void **state)
{
	(void)state;
	char path[4096], key[4096], defkey[4200], opts[4200];
	pool_path(path, sizeof(path), "exists");
	pool_path(key, sizeof(key), "exists.custom");
	suffixed(defkey, sizeof(defkey), path, ".key");
	set_conf(NULL);
	const char *made_with[] = {"key_file", "design=plain"};
	for (size_t i = 0; i < 2; i++) {
		remove_pool(path);
		unlink(key);
		if (i == 0)
			snprintf(opts, sizeof(opts), "key_file=%s", key);
		else
			snprintf(opts, sizeof(opts), "%s", made_with[i]);
		spm_pool *p = create_ok(path, opts);
		assert_int_equal(spm_close(p), 0);
		assert_false(exists(defkey));
		p = NULL;
		assert_int_equal(spm_create(&p, path, POOL_SIZE, NULL), -EEXIST);
		assert_null(p);
		if (exists(defkey))
			fail_msg("pool made with %s: the failed spm_create left a new key file %s",
				 made_with[i], defkey);
	}
	remove_pool(path);
	unlink(key);
}

/* run_workload -- a pool with options; lines spread over many counter lines
 * are written back; returns stat name after the workload. */
static uint64_t run_workload(const char *tag, const char *options, const char *stat)
{
	char path[4096];
	pool_path(path, sizeof(path), tag);
	remove_pool(path);
	spm_pool *p = create_ok(path, options);
	uint8_t *r = spm_root(p, 512 * 1024);
	assert_non_null(r);
	spm_stat_reset(p);
	/* one line in every 9: a different counter line each, every bank in turn */
	for (unsigned round = 0; round < 2; round++)
		for (size_t off = 0; off < 512 * 1024; off += 9 * 64) {
			r[off] = (uint8_t)(off + round);
			spm_flush(p, r + off, 1);
		}
	spm_drain(p);
	uint64_t v = UINT64_MAX;
	assert_int_equal(spm_stat(p, stat, &v), 0);
	assert_int_equal(spm_close(p), 0);
	remove_pool(path);
	return v;
}

/* The numeric options take effect: each timing parameter, the cache, the banks. */
static void test_values_take_effect(void **state)
{
	(void)state;
	set_conf(NULL);
	/* one bank, one-entry queues, a one-way 1 KiB counter cache: every write
	 * waits for the last, every counter misses, reads follow writes */
	const char *base = "banks=1;wpq_data=1;wpq_ctr=1;ctr_cache_kib=1;ctr_cache_ways=1";
	const char *keys[] = {"t_rcd", "t_cl", "t_cwd", "t_faw", "t_wtr", "t_wr", "aes_ns"};
	char opts[512];
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		/* on one bank the pads are pipelined under its backlog (the bank
		 * calendar may even order that backlog better when pads come
		 * later), and requests backfilled before a core's last four
		 * activations escape a tFAW of microseconds (emu/timing.c
		 * faw_check); with the profile's banks and queues both show */
		const char *b = strcmp(keys[i], "aes_ns") && strcmp(keys[i], "t_faw")
					? base
					: "ctr_cache_kib=1;ctr_cache_ways=1";
		snprintf(opts, sizeof(opts), "%s;%s=1", b, keys[i]);
		uint64_t fast = run_workload("fx", opts, "time.modeled_ns");
		snprintf(opts, sizeof(opts), "%s;%s=5000", b, keys[i]);
		uint64_t slow = run_workload("fx", opts, "time.modeled_ns");
		if (!(slow > fast))
			fail_msg("%s=5000 gives %llu ns, %s=1 gives %llu ns", keys[i],
				 (unsigned long long)slow, keys[i], (unsigned long long)fast);
	}
	/* the counter cache size */
	uint64_t small = run_workload("fx", "ctr_cache_kib=1;ctr_cache_ways=1",
				      "ctr_cache.evictions");
	uint64_t big = run_workload("fx", "ctr_cache_kib=1024;ctr_cache_ways=16",
				    "ctr_cache.evictions");
	assert_true(small > 0);
	assert_int_equal(big, 0);
	/* the write queue depth */
	uint64_t s1 = run_workload("fx", "wpq_data=1", "wpq.stalls");
	uint64_t s256 = run_workload("fx", "wpq_data=256;wpq_ctr=256", "wpq.stalls");
	assert_true(s1 > s256);
	/* the banks */
	uint64_t b1 = run_workload("fx", "banks=1", "time.modeled_ns");
	uint64_t b8 = run_workload("fx", "banks=8", "time.modeled_ns");
	assert_true(b1 > b8);
	/* the bank hash: a 9-line stride meets other banks in another order */
	uint64_t h0 = run_workload("fx", "bank_hash=0", "time.modeled_ns");
	uint64_t h1 = run_workload("fx", "bank_hash=1", "time.modeled_ns");
	assert_true(h0 != h1);
	/* timing=off: no modeled time, the same media traffic and counter cache */
	assert_int_equal(run_workload("fx", "timing=off", "time.modeled_ns"), 0);
	assert_true(run_workload("fx", "timing=on", "time.modeled_ns") > 0);
	const char *same[] = {"media.writes", "media.writes.counter", "ctr_cache.misses"};
	for (unsigned i = 0; i < sizeof(same) / sizeof(same[0]); i++)
		assert_int_equal(run_workload("fx", "timing=off", same[i]),
				 run_workload("fx", "timing=on", same[i]));
	/* the data bus: a slow one holds every write and read for its bursts */
	uint64_t slow_bus = run_workload("fx", "bus_mhz=5", "time.modeled_ns");
	uint64_t bus = run_workload("fx", "bus_mhz=0", "time.modeled_ns");
	assert_true(slow_bus > bus);
	assert_int_equal(run_workload("fx", "bus_mhz=533", "time.modeled_ns"), bus);
	/* the profile */
	uint64_t psca = run_workload("fx", "profile=sca", "time.modeled_ns");
	uint64_t psm = run_workload("fx", "profile=supermem", "time.modeled_ns");
	assert_true(psca != psm);
}

/* resident -- how many of path's pages are in the page cache (mincore); the
 * file's page count in *total. */
static size_t resident(const char *path, size_t *total)
{
	int fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	struct stat st;
	assert_int_equal(fstat(fd, &st), 0);
	size_t page = (size_t)sysconf(_SC_PAGESIZE), n = ((size_t)st.st_size + page - 1) / page;
	void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	assert_true(m != MAP_FAILED);
	unsigned char *vec = malloc(n);
	assert_non_null(vec);
	assert_int_equal(mincore(m, (size_t)st.st_size, vec), 0);
	size_t in = 0;
	for (size_t i = 0; i < n; i++)
		in += vec[i] & 1;
	free(vec);
	munmap(m, (size_t)st.st_size);
	close(fd);
	*total = n;
	return in;
}

/* rss_bytes -- this process's resident set. */
static size_t rss_bytes(void)
{
	FILE *f = fopen("/proc/self/statm", "r");
	assert_non_null(f);
	unsigned long size = 0, res = 0;
	assert_int_equal(fscanf(f, "%lu %lu", &size, &res), 2);
	fclose(f);
	return res * (size_t)sysconf(_SC_PAGESIZE);
}

/* rss_anon_bytes -- this process's resident set less its file pages. */
static size_t rss_anon_bytes(void)
{
	FILE *f = fopen("/proc/self/statm", "r");
	assert_non_null(f);
	unsigned long size = 0, res = 0, shared = 0;
	assert_int_equal(fscanf(f, "%lu %lu %lu", &size, &res, &shared), 3);
	fclose(f);
	return (res - shared) * (size_t)sysconf(_SC_PAGESIZE);
}

/* prefault=1 maps every page of the media file and the view at create and at
 * open (and 0 does not); the data is unchanged; a refused open with it leaves
 * the files as they were. */
static void test_prefault(void **state)
{
	(void)state;
	enum { BIG = 64u << 20 };
	char path[4096], other[4096], key[4200], opts[4300];
	pool_path(path, sizeof(path), "pf");
	pool_path(other, sizeof(other), "pf.other");
	set_conf(NULL);
	for (int on = 0; on <= 1; on++) {
		remove_pool(path);
		size_t rss0 = rss_bytes(), anon0 = rss_anon_bytes(), total;
		spm_pool *p = NULL;
		snprintf(opts, sizeof(opts), "prefault=%d", on);
		int rc = spm_create(&p, path, BIG, opts);
		if (rc)
			fail_msg("spm_create(%s): %s", opts, spm_errormsg());
		size_t grown = rss_bytes() - rss0, in = resident(path, &total);
		if (on) { /* the view and the data file, whole */
			assert_int_equal(in, total);
			assert_true(grown >= 2 * (size_t)BIG);
		} else { /* the data file, whole: every line is ciphertext from
			  * create on; of the view, what create wrote */
			assert_int_equal(in, total);
			assert_true(rss_anon_bytes() - anon0 < (size_t)BIG / 2);
		}
		write_root(p, 11);
		assert_int_equal(spm_close(p), 0);
	}
	/* open: reading the media maps the data file either way; prefault adds
	 * the view's pages; the data intact */
	size_t grown[2];
	for (int on = 0; on <= 1; on++) {
		size_t rss0 = rss_bytes();
		snprintf(opts, sizeof(opts), "prefault=%d", on);
		spm_pool *p = open_ok(path, opts);
		grown[on] = rss_bytes() - rss0;
		check_root(p, 11);
		assert_int_equal(spm_close(p), 0);
	}
	assert_true(grown[0] < (size_t)BIG * 3 / 2);
	assert_true(grown[1] >= 2 * (size_t)BIG);
	spm_pool *p;
	/* refused (another pool's key): the files are not touched */
	remove_pool(other);
	p = create_ok(other, NULL);
	assert_int_equal(spm_close(p), 0);
	suffixed(key, sizeof(key), other, ".key");
	size_t n0, m0, n1, m1;
	char meta[4200];
	suffixed(meta, sizeof(meta), path, ".meta");
	uint8_t *d0 = file_bytes(path, &n0), *x0 = file_bytes(meta, &m0);
	struct stat st0, st1;
	assert_int_equal(stat(path, &st0), 0);
	snprintf(opts, sizeof(opts), "prefault=1;key_file=%s", key);
	p = NULL;
	assert_int_equal(spm_open(&p, path, opts), SPM_E_KEY);
	assert_null(p);
	uint8_t *d1 = file_bytes(path, &n1), *x1 = file_bytes(meta, &m1);
	assert_int_equal(stat(path, &st1), 0);
	assert_true(n0 == n1 && memcmp(d0, d1, n0) == 0);
	assert_true(m0 == m1 && memcmp(x0, x1, m0) == 0);
	assert_true(st0.st_mtim.tv_sec == st1.st_mtim.tv_sec &&
		    st0.st_mtim.tv_nsec == st1.st_mtim.tv_nsec);
	free(d0), free(d1), free(x0), free(x1);
	remove_pool(other);
	remove_pool(path);
}

/* teardown -- remove what a failed test left behind (files of this process). */
static int teardown(void **state)
{
	(void)state;
	char prefix[64], path[4400];
	snprintf(prefix, sizeof(prefix), "unit_config_%ld_", (long)getpid());
	DIR *d = opendir(test_dir);
	if (!d)
		return 0;
	struct dirent *e;
	while ((e = readdir(d)))
		if (strncmp(e->d_name, prefix, strlen(prefix)) == 0) {
			snprintf(path, sizeof(path), "%s/%s", test_dir, e->d_name);
			unlink(path);
		}
	closedir(d);
	return 0;
}

static int setup(void **state)
{
	(void)state;
	const char *d = getenv("SPM_TEST_DIR");
	snprintf(test_dir, sizeof(test_dir), "%s", d && *d ? d : "/tmp");
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_create_refuses_bad_options),
		cmocka_unit_test(test_create_refused_makes_no_key_file),
		cmocka_unit_test(test_cache_geometry_error_names_option),
		cmocka_unit_test(test_open_refuses_bad_options),
		cmocka_unit_test(test_options_win_over_env),
		cmocka_unit_test(test_all_keys_accepted),
		cmocka_unit_test(test_key_file),
		cmocka_unit_test(test_aes256_roundtrip),
		cmocka_unit_test(test_open_other_design),
		cmocka_unit_test(test_values_take_effect),
		cmocka_unit_test(test_prefault),
		cmocka_unit_test(test_open_with_create_options),
		cmocka_unit_test(test_create_existing_makes_no_key_file),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
