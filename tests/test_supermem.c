/*
 * test_supermem.c -- SuperMem: the split counter layout, counter
 * write coalescing, the write-through designs' write traffic, page
 * re-encryption on minor overflow and its crash safety through the RSR, a
 * range persist killed half way (each line old or new), and a corrupt RSR
 * refused without a change to the files.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "emu_internal.h"
#include "test_files.h"
#include <spm.h>

static char self_exe[4096];

static void pool_path(char *buf, size_t n, const char *tag)
{
	const char *dir = getenv("SPM_TEST_DIR");
	snprintf(buf, n, "%s/supermem-%ld-%s", dir && *dir ? dir : "/tmp", (long)getpid(), tag);
}

static uint64_t stat_of(spm_pool *p, const char *name)
{
	uint64_t v = 0;
	assert_int_equal(spm_stat(p, name, &v), 0);
	return v;
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* ---------------------------------------------------------------- layout */

/* split counters: encode/decode round trip for both minor widths; the
 * major in bytes 0-7, minor i in the 7 bits at 64 + 7i */
static void split_roundtrip(void **state)
{
	(void)state;
	static const unsigned widths[] = {7, 2};
	for (unsigned w = 0; w < 2; w++) {
		unsigned mb = widths[w];
		for (unsigned round = 0; round < 200; round++) {
			uint64_t major = round == 0 ? 0 : next() >> (mb + 1), ctr[64], back[64];
			uint8_t line[64];
			for (unsigned i = 0; i < 64; i++)
				ctr[i] = major << mb | (next() & ((1u << mb) - 1));
			ctr_layout_split.encode(ctr, mb, line);
			ctr_layout_split.decode(line, mb, back);
			assert_memory_equal(ctr, back, sizeof(ctr));
			uint64_t stored = 0;
			memcpy(&stored, line, 8);
			assert_true(stored == major); /* little-endian host */
		}
	}
	/* only the last minor changes the last byte's top bits */
	uint64_t ctr[64] = {0};
	uint8_t a[64], b[64];
	ctr_layout_split.encode(ctr, 7, a);
	ctr[63] = 0x7f;
	ctr_layout_split.encode(ctr, 7, b);
	assert_memory_equal(a, b, 63);
	assert_int_equal(b[63], 0xfe);
	assert_int_equal(ctr_storage_bytes(&ctr_layout_split, 64 * 100), 64 * 100);
	assert_int_equal(ctr_storage_bytes(&ctr_layout_mono, 64 * 100), 8 * 64 * 100);
}

/* the home of a counter line keeps the newer counters: a newer major wins
 * whole, an older one never rolls it back, the same major minor by minor */
static void split_merge(void **state)
{
	(void)state;
	uint64_t h[64], p[64], r[64];
	uint8_t home[64], pay[64];
	for (unsigned i = 0; i < 64; i++) {
		h[i] = 5u << 7 | (i % 100);
		p[i] = 6u << 7 | 1;
	}
	ctr_layout_split.encode(h, 7, home);
	ctr_layout_split.encode(p, 7, pay);
	ctr_merge_home(&ctr_layout_split, 7, home, pay);
	ctr_layout_split.decode(home, 7, r);
	assert_memory_equal(r, p, sizeof(p));
	/* an older payload arrives late */
	ctr_layout_split.encode(h, 7, pay);
	ctr_merge_home(&ctr_layout_split, 7, home, pay);
	ctr_layout_split.decode(home, 7, r);
	assert_memory_equal(r, p, sizeof(p));
	/* same major: each minor keeps the larger */
	for (unsigned i = 0; i < 64; i++)
		h[i] = 6u << 7 | (i & 1 ? 0 : 9);
	ctr_layout_split.encode(h, 7, pay);
	ctr_merge_home(&ctr_layout_split, 7, home, pay);
	ctr_layout_split.decode(home, 7, r);
	for (unsigned i = 0; i < 64; i++)
		assert_int_equal(r[i], 6u << 7 | (i & 1 ? 1 : 9));
}

/* ---------------------------------------------------------------- traffic */

/* persist_page -- a 4 KiB page of distinct content, one persist call */
static void persist_page(spm_pool *p, uint8_t *page, uint64_t salt)
{
	for (unsigned l = 0; l < 64; l++)
		for (unsigned b = 0; b < 64; b += 8) {
			uint64_t v = salt * 1000003u + l * 64 + b;
			memcpy(page + l * 64 + b, &v, 8);
		}
	spm_persist(p, page, 4096);
}

struct traffic {
	uint64_t data, ctr, coalesced, writes;
};

/* page_traffic -- the write traffic of persisting 8 whole pages in design */
static struct traffic page_traffic(const char *design)
{
	char path[4096], opts[64];
	pool_path(path, sizeof(path), design);
	remove_pool_files(path);
	snprintf(opts, sizeof(opts), "design=%s", design);
	spm_pool *p = NULL;
	assert_int_equal(spm_create(&p, path, 4u << 20, opts), 0);
	uint8_t *root = spm_root(p, 16 * 4096);
	assert_non_null(root);
	uint8_t *page = (uint8_t *)(((uintptr_t)root + 4095) & ~(uintptr_t)4095);
	spm_stat_reset(p);
	for (unsigned k = 0; k < 8; k++)
		persist_page(p, page + k * 4096, k);
	struct traffic t = {stat_of(p, "media.writes.data"), stat_of(p, "media.writes.counter"),
			    stat_of(p, "wpq.coalesced"), stat_of(p, "media.writes")};
	assert_int_equal(spm_close(p), 0);
	/* the content survives close and open */
	assert_int_equal(spm_open(&p, path, NULL), 0);
	root = spm_root(p, 16 * 4096);
	page = (uint8_t *)(((uintptr_t)root + 4095) & ~(uintptr_t)4095);
	for (unsigned k = 0; k < 8; k++)
		for (unsigned l = 0; l < 64; l++) {
			uint64_t v;
			memcpy(&v, page + k * 4096 + l * 64 + 8, 8);
			assert_true(v == k * 1000003u + l * 64 + 8);
		}
	assert_int_equal(spm_close(p), 0);
	remove_pool_files(path);
	return t;
}

/* wt writes every counter through: one counter write per data write;
 * coalescing (SuperMem 3.4.3) leaves a few per page and counts the rest */
static void coalescing(void **state)
{
	(void)state;
	struct traffic wt = page_traffic("wt"), cwc = page_traffic("wt-cwc"),
		       sm = page_traffic("supermem"), plain = page_traffic("plain");
	assert_int_equal(wt.data, 8 * 64);
	assert_int_equal(wt.ctr, wt.data);
	assert_int_equal(wt.coalesced, 0);
	assert_int_equal(wt.writes, 2 * plain.writes);
	assert_int_equal(cwc.data, wt.data);
	assert_true(cwc.ctr <= 8 * 4);
	assert_int_equal(cwc.ctr + cwc.coalesced, wt.ctr);
	assert_true(sm.ctr + sm.coalesced == wt.ctr && sm.coalesced > 0);
	/* 4 KiB transactions: SuperMem removes almost half of wt's writes */
	assert_true(cwc.writes * 100 <= wt.writes * 55);
	/* the profile's queue issues in order, so a counter write waits behind
	 * the data before it and the next write of its line replaces it; issued
	 * as soon as its (idle, XBank) bank is free, more of them get through */
	struct traffic sm_free = page_traffic("supermem;wpq_issue=bankfree");
	print_message("supermem counter writes for 8 pages: %llu in order, %llu bank-free\n",
		      (unsigned long long)sm.ctr, (unsigned long long)sm_free.ctr);
	assert_true(sm.ctr < sm_free.ctr);
	/* wpq_window=N: a write waits for the one N before it in the queue;
	 * 1 is the profile's in-order issue, the queue's length (32) is
	 * bank-free issue, and no window removes fewer counter writes than a
	 * wider one (here every window up to 30 keeps the in-order count: a
	 * page's counter writes meet within fewer entries; test_timing checks
	 * the window itself) */
	struct traffic w1 = page_traffic("supermem;wpq_window=1"),
		       w16 = page_traffic("supermem;wpq_window=16"),
		       w32 = page_traffic("supermem;wpq_window=32");
	print_message("supermem counter writes with windows 1 / 16 / 32: %llu / %llu / %llu\n",
		      (unsigned long long)w1.ctr, (unsigned long long)w16.ctr,
		      (unsigned long long)w32.ctr);
	assert_int_equal(w1.ctr, sm.ctr);
	assert_int_equal(w32.ctr, sm_free.ctr);
	assert_true(w1.ctr <= w16.ctr && w16.ctr <= w32.ctr);
}

/* ---------------------------------------------------------------- re-encryption */

static void raw_line(const char *path, uint64_t off, uint8_t out[64])
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	assert_int_equal(fseek(f, (long)off, SEEK_SET), 0);
	assert_int_equal(fread(out, 1, 64, f), 64);
	fclose(f);
}

/* write_rounds -- page of distinct lines, then line 0 rewritten n times */
static void write_rounds(spm_pool *p, uint8_t *page, unsigned n)
{
	persist_page(p, page, 1);
	for (unsigned r = 0; r < n; r++) {
		uint64_t v = 77 + r;
		memcpy(page, &v, 8);
		spm_persist(p, page, 64);
	}
}

static uint8_t *page_of(spm_pool *p)
{
	uint8_t *root = spm_root(p, 3 * 4096);
	assert_non_null(root);
	return (uint8_t *)(((uintptr_t)root + 4095) & ~(uintptr_t)4095);
}

static void check_page(spm_pool *p, unsigned rounds)
{
	uint8_t *page = page_of(p);
	uint64_t v;
	memcpy(&v, page, 8);
	assert_true(v == 77 + rounds - 1);
	for (unsigned l = 1; l < 64; l++) {
		memcpy(&v, page + l * 64 + 8, 8);
		assert_true(v == 1000003u + l * 64 + 8);
	}
}

/* a minor overflow re-encrypts the page (SuperMem 3.4.4): every line of it
 * gets a new ciphertext, the plaintext stays */
static void reencryption(void **state)
{
	(void)state;
	char path[4096];
	pool_path(path, sizeof(path), "reenc");
	remove_pool_files(path);
	spm_pool *p = NULL;
	assert_int_equal(spm_create(&p, path, 4u << 20, "design=supermem;minor_bits=2"), 0);
	uint8_t *page = page_of(p);
	uint64_t off5 = spm_off(p, page + 5 * 64);
	persist_page(p, page, 1);
	assert_int_equal(spm_close(p), 0);
	uint8_t before[64], after[64];
	raw_line(path, off5, before);
	assert_int_equal(spm_open(&p, path, NULL), 0);
	page = page_of(p);
	spm_stat_reset(p);
	write_rounds(p, page, 10);
	/* minors of 2 bits: at most 3 writes per major */
	assert_true(stat_of(p, "ctr.reencrypted_pages") >= 3);
	assert_int_equal(spm_close(p), 0);
	raw_line(path, off5, after);
	assert_memory_not_equal(before, after, 64);
	assert_int_equal(spm_open(&p, path, NULL), 0);
	check_page(p, 10);
	assert_int_equal(spm_close(p), 0);
	/* wrong option on open: minor_bits is fixed at create */
	assert_int_equal(spm_open(&p, path, "minor_bits=3"), SPM_E_OPTION);
	remove_pool_files(path);
}

/* the write that overflows a minor waits for the page's reads, which go
 * to the bank first (SuperMem 3.4.4: read into the cache, then re-encrypt
 * and write back), not for a read-write chain line by line: in the supermem
 * profile a page is on one bank, 64 reads of tRCD + tCL = 63 ns each */
static void reencryption_timing(void **state)
{
	(void)state;
	char path[4096];
	pool_path(path, sizeof(path), "reenc-t");
	remove_pool_files(path);
	spm_pool *p = NULL;
	assert_int_equal(spm_create(&p, path, 4u << 20, "design=supermem;minor_bits=2"), 0);
	uint8_t *page = page_of(p);
	uint64_t worst = 0, quiet = UINT64_MAX;
	for (unsigned r = 0; r < 12; r++) {
		spm_model_work(p, 50000); /* every earlier write has drained */
		uint64_t t0 = stat_of(p, "time.modeled_ns"), re0 = stat_of(p, "ctr.reencrypted_pages");
		page[0] = (uint8_t)r;
		spm_persist(p, page, 64);
		uint64_t dt = stat_of(p, "time.modeled_ns") - t0;
		if (stat_of(p, "ctr.reencrypted_pages") > re0)
			worst = dt > worst ? dt : worst;
		else
			quiet = dt < quiet ? dt : quiet;
	}
	print_message("persist of one line: %llu ns, %llu ns when it re-encrypts its page\n",
		      (unsigned long long)quiet, (unsigned long long)worst);
	assert_true(quiet < 1000);
	assert_true(worst >= 64 * 63);
	assert_true(worst < 64 * (63 + 313));
	assert_int_equal(spm_close(p), 0);
	remove_pool_files(path);
}

/* persist_time -- modeled ns of 512 single-line persists, one line in
 * each of 8 pages in turn, on a fresh pool of design */
static uint64_t persist_time(const char *design, const char *placement)
{
	char path[4096], opts[128];
	pool_path(path, sizeof(path), design);
	remove_pool_files(path);
	snprintf(opts, sizeof(opts), "design=%s;profile=supermem%s%s", design,
		 placement ? ";ctr_placement=" : "", placement ? placement : "");
	spm_pool *p = NULL;
	assert_int_equal(spm_create(&p, path, 4u << 20, opts), 0);
	uint8_t *root = spm_root(p, 9 * 4096);
	assert_non_null(root);
	uint8_t *pages = (uint8_t *)(((uintptr_t)root + 4095) & ~(uintptr_t)4095);
	uint64_t t0 = stat_of(p, "time.modeled_ns");
	for (unsigned i = 0; i < 512; i++) {
		uint8_t *line = pages + (i % 8) * 4096 + (i / 8) * 64;
		line[0] = (uint8_t)(i + 1);
		spm_persist(p, line, 64);
	}
	uint64_t dt = stat_of(p, "time.modeled_ns") - t0;
	assert_int_equal(spm_close(p), 0);
	remove_pool_files(path);
	return dt;
}

/* the supermem profile's banks (SuperMem 3.3, 5.1.2): a program's memory
 * is one bank; wt's SingleBank counter area is in that bank too (bank 0,
 * where a pool under 1 GiB is), so each persist costs two writes of it;
 * XBank puts the counter in bank X + 4, where it overlaps the data;
 * SameBank is wt's cost again */
static void bank_placement(void **state)
{
	(void)state;
	uint64_t plain = persist_time("plain", NULL), wt = persist_time("wt", NULL);
	uint64_t xbank = persist_time("wt-xbank", NULL), same = persist_time("wt", "same");
	print_message("512 persists: plain %llu ns, wt %llu, wt-xbank %llu, wt same-bank %llu\n",
		      (unsigned long long)plain, (unsigned long long)wt,
		      (unsigned long long)xbank, (unsigned long long)same);
	assert_true(plain >= 512ull * 300);    /* 8 pages, one bank: tWR each */
	assert_true(wt * 10 >= plain * 18);    /* >= 1.8x */
	assert_true(same * 10 >= plain * 18);
	assert_true(xbank * 10 <= plain * 12); /* <= 1.2x */
}

/* child: open (recovery) and, unless mode is "open", the writes of
 * write_rounds, with SPM_CRASH set by the parent */
static int child_main(const char *mode, const char *path)
{
	spm_pool *p = NULL;
	if (spm_open(&p, path, NULL))
		return 2;
	if (strcmp(mode, "open") != 0)
		write_rounds(p, page_of(p), 10);
	spm_close(p);
	return 3; /* the crash point was not reached */
}

/* crash_child -- run the child in mode under SPM_CRASH=crash; killed? */
static void crash_child(const char *mode, const char *path, const char *crash)
{
	char env[256];
	snprintf(env, sizeof(env), "SPM_CRASH=%s", crash);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		putenv(env);
		execl(self_exe, self_exe, mode, path, (char *)NULL);
		_exit(4);
	}
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
}

/* killed in the middle of a page re-encryption, at each of its steps, the
 * pool recovers: the RSR finishes the page and no plaintext changes */
static void reencryption_crash(void **state)
{
	(void)state;
	/* the last two crash again inside the recovery's resumed re-encryption */
	static const char *const points[] = {
		"point:reenc.begin:2", "point:reenc.line_done:1", "point:reenc.line_done:40",
		"point:reenc.line_done:63", "point:reenc.end:1", "point:wpq.coalesced:3",
		"point:reenc.line_done:5", "point:reenc.line_done:70",
	};
	unsigned npoints = sizeof(points) / sizeof(points[0]);
	for (unsigned i = 0; i < npoints; i++) {
		char path[4096];
		pool_path(path, sizeof(path), "rcrash");
		remove_pool_files(path);
		spm_pool *p = NULL;
		assert_int_equal(spm_create(&p, path, 4u << 20, "design=supermem;minor_bits=2"),
				 0);
		uint8_t *page = page_of(p);
		persist_page(p, page, 1);
		assert_int_equal(spm_close(p), 0);
		crash_child("--child", path, points[i]);
		if (i >= npoints - 2)
			crash_child("--child-open", path, "point:reenc.line_done:3");
		/* recover; the line-0 writes before the kill are durable or not,
		 * every other line is intact */
		assert_int_equal(spm_open(&p, path, NULL), 0);
		page = page_of(p);
		uint64_t v;
		for (unsigned l = 1; l < 64; l++) {
			memcpy(&v, page + l * 64 + 8, 8);
			assert_true(v == 1000003u + l * 64 + 8);
		}
		memcpy(&v, page, 8);
		assert_true(v == 1000003u + 0 || (v >= 77 && v < 87));
		/* and it keeps working: more overflows, then a clean reopen */
		write_rounds(p, page, 10);
		assert_int_equal(spm_close(p), 0);
		assert_int_equal(spm_open(&p, path, NULL), 0);
		check_page(p, 10);
		assert_int_equal(spm_close(p), 0);
		remove_pool_files(path);
	}
}

/* child: rewrite a page created by range_crash in one persist */
static int child_range(const char *path)
{
	spm_pool *p = NULL;
	if (spm_open(&p, path, NULL))
		return 2;
	persist_page(p, page_of(p), 2);
	spm_close(p);
	return 3;
}

/*
 * A range persist killed half way: in a design where every write is
 * counter-atomic, each line is old or new, never undecryptable.  (Found
 * here: the counters of a batch were all incremented before its lines were
 * enqueued, so a counter line written for line i carried the new counter of
 * line i+1 whose data was still under the old pad.)
 */
static void range_crash(void **state)
{
	(void)state;
	static const char *const designs[] = {"fca", "wt", "supermem"};
	for (unsigned d = 0; d < 3; d++)
		for (unsigned k = 1; k < 64; k += 9) {
			char path[4096], opts[64], crash[64];
			pool_path(path, sizeof(path), "range");
			remove_pool_files(path);
			snprintf(opts, sizeof(opts), "design=%s", designs[d]);
			spm_pool *p = NULL;
			assert_int_equal(spm_create(&p, path, 4u << 20, opts), 0);
			persist_page(p, page_of(p), 1);
			assert_int_equal(spm_close(p), 0);
			snprintf(crash, sizeof(crash), "point:wpq.ready:%u", k);
			crash_child("--child-range", path, crash);
			assert_int_equal(spm_open(&p, path, NULL), 0);
			uint8_t *page = page_of(p);
			unsigned fresh = 0;
			for (unsigned l = 0; l < 64; l++) {
				uint64_t v, old = 1 * 1000003u + l * 64 + 8,
					    new = 2 * 1000003u + l * 64 + 8;
				memcpy(&v, page + l * 64 + 8, 8);
				assert_true(v == old || v == new);
				fresh += v == new;
			}
			assert_true(fresh >= k - 1 && fresh <= k);
			assert_int_equal(spm_close(p), 0);
			remove_pool_files(path);
		}
}

/* an RSR naming a page in a clean pool, or one beyond the pool, is refused
 * with SPM_E_CORRUPT and nothing is written */
static void rsr_corrupt(void **state)
{
	(void)state;
	char path[4096], meta[4200];
	pool_path(path, sizeof(path), "rsr");
	remove_pool_files(path);
	spm_pool *p = NULL;
	assert_int_equal(spm_create(&p, path, 4u << 20, "design=supermem"), 0);
	assert_int_equal(spm_close(p), 0);
	snprintf(meta, sizeof(meta), "%s.meta", path);
	size_t n, n2;
	uint8_t *orig = slurp(meta, &n);
	const struct superblock *sb = (const struct superblock *)orig;
	uint64_t vals[] = {3, (4u << 20) / 4096 + 5};
	for (unsigned i = 0; i < 2; i++) {
		uint8_t *bad = malloc(n);
		assert_non_null(bad);
		memcpy(bad, orig, n);
		memcpy(bad + sb->adr_off, &vals[i], 8);
		if (i == 1) { /* beyond the pool, in a dirty pool */
			uint64_t dirty = SB_STATE_DIRTY;
			memcpy(bad + offsetof(struct superblock, state), &dirty, 8);
		}
		spit(meta, bad, n);
		assert_int_equal(spm_open(&p, path, NULL), SPM_E_CORRUPT);
		assert_non_null(strstr(spm_errormsg(), "re-encryption status register"));
		uint8_t *now = slurp(meta, &n2);
		assert_int_equal(n2, n);
		assert_memory_equal(now, bad, n);
		free(now);
		free(bad);
	}
	free(orig);
	remove_pool_files(path);
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "--child") == 0)
		return child_main("write", argv[2]);
	if (argc == 3 && strcmp(argv[1], "--child-range") == 0)
		return child_range(argv[2]);
	if (argc == 3 && strcmp(argv[1], "--child-open") == 0)
		return child_main("open", argv[2]);
	ssize_t n = readlink("/proc/self/exe", self_exe, sizeof(self_exe) - 1);
	if (n <= 0)
		return 1;
	self_exe[n] = '\0';
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(split_roundtrip),
		cmocka_unit_test(split_merge),
		cmocka_unit_test(coalescing),
		cmocka_unit_test(reencryption),
		cmocka_unit_test(reencryption_timing),
		cmocka_unit_test(bank_placement),
		cmocka_unit_test(reencryption_crash),
		cmocka_unit_test(range_crash),
		cmocka_unit_test(rsr_corrupt),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
