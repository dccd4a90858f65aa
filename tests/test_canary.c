/* test_canary.c -- no plaintext (nor the key) reaches <path> or <path>.meta in any encrypting design, open or closed; plain stores it in the clear. */
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

#define POOL_SIZE (4u << 20)
#define WINDOW 16

static const char canary[] = "SPM-CANARY:this-plaintext-must-never-reach-media!";
#define CANARY_LEN (sizeof(canary) - 1)

static const char *const designs[] = {"plain", "ideal", "unsafe", "colocated",
				      "colocated-cc", "fca", "sca", "wt", "wt-cwc",
				      "wt-xbank", "supermem", "srl", "lame", "clame"};

struct croot {
	uint8_t tx_area[2048];
	uint8_t ca_area[512];
	spm_off_t obj, persisted;
};

static void pool_path(char *buf, size_t n, const char *tag)
{
	const char *dir = getenv("SPM_TEST_DIR");
	if (!dir || !*dir)
		dir = "/tmp";
	snprintf(buf, n, "%s/canary-%ld-%s", dir, (long)getpid(), tag);
}

static void suffixed(char *buf, size_t n, const char *path, const char *suffix)
{
	snprintf(buf, n, "%s%s", path, suffix);
}

static void remove_pool(const char *path)
{
	char buf[4200];
	unlink(path);
	suffixed(buf, sizeof(buf), path, ".meta");
	unlink(buf);
	suffixed(buf, sizeof(buf), path, ".key");
	unlink(buf);
}

/* slurp -- the whole file, raw. */
static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	long n = ftell(f);
	assert_true(n > 0);
	rewind(f);
	uint8_t *buf = malloc((size_t)n);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return buf;
}

/* fill_canary -- the canary repeated over [p, p+n), starting at phase. */
static void fill_canary(uint8_t *p, size_t n, size_t phase)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)canary[(i + phase) % CANARY_LEN];
}

/* canary_hits -- windows of the repeated canary found in buf (any phase). */
static size_t canary_hits(const uint8_t *buf, size_t len)
{
	uint8_t rep[2 * CANARY_LEN];
	fill_canary(rep, sizeof(rep), 0);
	size_t hits = 0;
	for (size_t ph = 0; ph < CANARY_LEN; ph++)
		if (memmem(buf, len, rep + ph, WINDOW))
			hits++;
	return hits;
}

/* scan -- canary windows (and key occurrences) in the pool's two files. */
static void scan(const char *path, const uint8_t *key, size_t keylen,
		 size_t *data_hits, size_t *meta_hits, int *full_in_data)
{
	char meta[4200];
	suffixed(meta, sizeof(meta), path, ".meta");
	size_t dl, ml;
	uint8_t *d = slurp(path, &dl), *m = slurp(meta, &ml);
	*data_hits = canary_hits(d, dl);
	*meta_hits = canary_hits(m, ml);
	*full_in_data = memmem(d, dl, canary, CANARY_LEN) != NULL;
	if (key) {
		assert_null(memmem(d, dl, key, keylen));
		assert_null(memmem(m, ml, key, keylen));
	}
	free(d);
	free(m);
}

/* expect_absent -- the canary is nowhere in either file. */
static void expect_absent(const char *path, const uint8_t *key, const char *when)
{
	size_t dh, mh;
	int full;
	scan(path, key, 16, &dh, &mh, &full);
	if (dh || mh || full)
		fail_msg("%s: canary found (%s): %zu windows in data, %zu in meta", path,
			 when, dh, mh);
}

static void canary_design(void **state)
{
	const char *design = *state;
	int encrypting = strcmp(design, "plain") != 0;
	char path[4096], opts[64], keypath[4200];
	pool_path(path, sizeof(path), design);
	remove_pool(path);
	snprintf(opts, sizeof(opts), "design=%s", design);
	spm_pool *p = NULL;
	assert_int_equal(spm_create(&p, path, POOL_SIZE, opts), 0);
	uint8_t key[16];
	const uint8_t *keyp = NULL;
	if (encrypting) {
		size_t kl;
		suffixed(keypath, sizeof(keypath), path, ".key");
		uint8_t *k = slurp(keypath, &kl);
		/* spm's key format: the key's bytes at 12, the key at 16 */
		assert_true(kl > 32);
		assert_int_equal(k[12], 16);
		memcpy(key, k + 16, 16);
		free(k);
		keyp = key;
	}
	struct croot *r = spm_root(p, sizeof(*r));
	assert_non_null(r);
	assert_int_equal(spm_counter_atomic(p, r->ca_area, sizeof(r->ca_area)), 0);

	/* through a transaction: the root and a new object */
	assert_int_equal(spm_tx_begin(p), 0);
	assert_int_equal(spm_tx_add(p, r, sizeof(*r)), 0);
	fill_canary(r->tx_area, sizeof(r->tx_area), 0);
	r->obj = spm_tx_alloc(p, 8192);
	assert_true(r->obj != 0);
	fill_canary(spm_ptr(p, r->obj), 8192, 7);
	assert_int_equal(spm_tx_commit(p), 0);
	if (encrypting)
		expect_absent(path, keyp, "open, after a commit");

	/* through persist: an ordinary range and a CounterAtomic one */
	assert_int_equal(spm_tx_begin(p), 0);
	assert_int_equal(spm_tx_add(p, &r->persisted, 8), 0);
	r->persisted = spm_tx_alloc(p, 4096);
	assert_true(r->persisted != 0);
	assert_int_equal(spm_tx_commit(p), 0);
	uint8_t *q = spm_ptr(p, r->persisted);
	fill_canary(q, 4096, 3);
	spm_persist(p, q, 4096);
	fill_canary(r->ca_area, sizeof(r->ca_area), 11);
	spm_persist(p, r->ca_area, sizeof(r->ca_area));
	if (encrypting)
		expect_absent(path, keyp, "open, after spm_persist");

	/* the undo log: snapshot the canary, overwrite, abort (rolled back) */
	assert_int_equal(spm_tx_begin(p), 0);
	assert_int_equal(spm_tx_add(p, r->tx_area, sizeof(r->tx_area)), 0);
	memset(r->tx_area, 0, sizeof(r->tx_area));
	spm_tx_abort(p);
	assert_int_equal(r->tx_area[0], (uint8_t)canary[0]);
	/* and a committed one, the log holding the canary */
	assert_int_equal(spm_tx_begin(p), 0);
	assert_int_equal(spm_tx_add(p, r->tx_area, 1024), 0);
	fill_canary(r->tx_area, 1024, 5);
	assert_int_equal(spm_tx_commit(p), 0);
	if (encrypting)
		expect_absent(path, keyp, "open, after undo logging");

	assert_int_equal(spm_close(p), 0);
	size_t dh, mh;
	int full;
	scan(path, keyp, 16, &dh, &mh, &full);
	if (encrypting) {
		if (dh || mh || full)
			fail_msg("%s: canary found after close: %zu windows in data, %zu in meta",
				 design, dh, mh);
	} else {
		/* the positive control: plain stores the plaintext, so the scan works */
		assert_true(full);
		assert_int_equal(dh, CANARY_LEN);
	}

	/* the content is intact for the application */
	p = NULL;
	assert_int_equal(spm_open(&p, path, NULL), 0);
	r = spm_root(p, sizeof(*r));
	assert_non_null(r);
	uint8_t want[8192];
	fill_canary(want, 1024, 5);
	fill_canary(want + 1024, sizeof(r->tx_area) - 1024, 1024);
	assert_memory_equal(r->tx_area, want, sizeof(r->tx_area));
	fill_canary(want, 8192, 7);
	assert_memory_equal(spm_ptr(p, r->obj), want, 8192);
	fill_canary(want, 4096, 3);
	assert_memory_equal(spm_ptr(p, r->persisted), want, 4096);
	fill_canary(want, sizeof(r->ca_area), 11);
	assert_memory_equal(r->ca_area, want, sizeof(r->ca_area));
	/* an open after a clean close writes nothing readable either */
	if (encrypting)
		expect_absent(path, keyp, "reopened");
	assert_int_equal(spm_close(p), 0);
	remove_pool(path);
}

/* cleanup -- remove every pool a failed test may have left behind. */
static int cleanup(void **state)
{
	(void)state;
	char path[4096];
	for (size_t i = 0; i < sizeof(designs) / sizeof(designs[0]); i++) {
		pool_path(path, sizeof(path), designs[i]);
		remove_pool(path);
	}
	return 0;
}

int main(void)
{
	struct CMUnitTest tests[sizeof(designs) / sizeof(designs[0])];
	for (size_t i = 0; i < sizeof(designs) / sizeof(designs[0]); i++) {
		tests[i] = (struct CMUnitTest)cmocka_unit_test_prestate(canary_design,
									(void *)designs[i]);
		tests[i].name = designs[i];
	}
	return _cmocka_run_group_tests("canary", tests, sizeof(tests) / sizeof(tests[0]),
				       NULL, cleanup);
}
