/*
 * test_dedup.c -- the dedup designs (emu/dedup.c): duplicate write-backs
 * cancelled and shared, a shared unit overwritten without changing its other
 * readers, units freed when their last reader moves on, a CRC collision
 * compared and written apart, the paper's CRC pads shown reused by the
 * auditor on a constructed collision (and the version pads not), the
 * options, re-keying refused, and damaged tables and ADR regions refused
 * before anything is written.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <cmocka.h>

#include "test_files.h"

#include <spm.h>
#include "emu_internal.h"

#define POOL_SIZE (4u << 20)
#define UNITS 64u

static char dir[1024];

static void pool_path(char *out, size_t n, const char *name)
{
	snprintf(out, n, "%s/dedup-%ld-%s", dir, (long)getpid(), name);
}

static void remove_all(const char *path)
{
	static const char *const sfx[] = {"", ".meta", ".key", ".audit"};
	char p[1200];
	for (unsigned i = 0; i < 4; i++) {
		snprintf(p, sizeof(p), "%s%s", path, sfx[i]);
		unlink(p);
	}
}

static uint64_t stat_of(spm_pool *p, const char *name)
{
	uint64_t v = 0;
	assert_int_equal(spm_stat(p, name, &v), 0);
	return v;
}

/* units -- UNITS slots of size bytes in the root, each size-aligned in the
 * view (the root is allocated with a slot to spare). */
static uint8_t *units(spm_pool *p, size_t size)
{
	uint8_t *root = spm_root(p, (UNITS + 1) * size);
	assert_non_null(root);
	uintptr_t a = ((uintptr_t)root + size - 1) / size * size;
	return (uint8_t *)a;
}

static void fill(uint8_t *dst, size_t n, uint64_t seed)
{
	for (size_t i = 0; i < n; i++) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		dst[i] = (uint8_t)(seed >> 56);
	}
}

static void put(spm_pool *p, uint8_t *slot, const uint8_t *v, size_t n)
{
	memcpy(slot, v, n);
	spm_persist(p, slot, n);
}

/* Duplicates cancelled and shared; one reader overwritten, the others
 * unchanged across a reopen; every slot made unique, every shared unit freed. */
static void check_sharing(const char *opts, size_t size)
{
	char path[1200];
	pool_path(path, sizeof(path), "share");
	remove_all(path);
	spm_pool *p;
	assert_int_equal(spm_create(&p, path, POOL_SIZE, opts), 0);
	uint8_t *u = units(p, size);
	uint8_t a[256], b[256];
	fill(a, size, 1);
	fill(b, size, 2);
	spm_stat_reset(p);
	/* the zeroed root's units share one already */
	uint64_t shared0 = stat_of(p, "dedup.shared_lines");
	for (unsigned i = 0; i < 10; i++)
		put(p, u + i * size, a, size);
	assert_int_equal(stat_of(p, "dedup.writes"), 10);
	assert_int_equal(stat_of(p, "dedup.writes_cancelled"), 9);
	assert_int_equal(stat_of(p, "dedup.crc_hits"), 9);
	assert_int_equal(stat_of(p, "dedup.compare_fail"), 0);
	assert_int_equal(stat_of(p, "media.writes.data"), size / 64); /* one unit written */
	assert_int_equal(stat_of(p, "dedup.shared_lines"), shared0 + 1);
	uint64_t live = stat_of(p, "dedup.live_lines");
	put(p, u + 3 * size, b, size); /* a shared unit overwritten: copy on write */
	assert_int_equal(stat_of(p, "dedup.live_lines"), live + 1);
	assert_int_equal(spm_close(p), 0);

	assert_int_equal(spm_open(&p, path, opts), 0);
	u = units(p, size);
	for (unsigned i = 0; i < 10; i++)
		assert_memory_equal(u + i * size, i == 3 ? b : a, size);
	assert_int_equal(stat_of(p, "dedup.shared_lines"), shared0 + 1);
	live = stat_of(p, "dedup.live_lines");
	for (unsigned i = 0; i < 10; i++) { /* every slot unique: the shared unit freed */
		uint8_t v[256];
		fill(v, size, 100 + i);
		put(p, u + i * size, v, size);
	}
	assert_int_equal(stat_of(p, "dedup.shared_lines"), shared0);
	/* a and b held two units; ten unique units now, each referenced once */
	assert_int_equal(stat_of(p, "dedup.live_lines"), live - 2 + 10);
	uint64_t ppm = stat_of(p, "dedup.overhead_ppm");
	assert_true(ppm > 0);
	print_message("  %s: storage overhead %.2f %% (the paper's count)\n", opts,
		      (double)ppm / 1e4);
	assert_int_equal(spm_close(p), 0);
	assert_int_equal(spm_open(&p, path, opts), 0); /* the stored tables agree */
	u = units(p, size);
	for (unsigned i = 0; i < 10; i++) {
		uint8_t v[256];
		fill(v, size, 100 + i);
		assert_memory_equal(u + i * size, v, size);
	}
	assert_int_equal(spm_close(p), 0);
	remove_all(path);
}

static void test_sharing_256(void **state)
{
	(void)state;
	check_sharing("design=dewrite", 256);
}

static void test_sharing_64(void **state)
{
	(void)state;
	check_sharing("design=dewrite-direct;dedup_line=64", 64);
}

/* collide -- b: a with bits flipped so that its CRC-32 is a's (CRC is
 * affine: crc(a ^ d) = crc(a) ^ crc(d) ^ crc(0) for equal lengths; a d of
 * the first 33 bits' flips whose CRC differences cancel always exists). */
static void collide(const uint8_t *a, uint8_t *b, size_t n)
{
	uint8_t *z = calloc(1, n), *e1 = calloc(1, n);
	assert_non_null(z);
	assert_non_null(e1);
	uint32_t zero = (uint32_t)crc32(0L, z, (uInt)n), v[33];
	uint64_t comb[33];
	for (unsigned i = 0; i < 33; i++) {
		memset(e1, 0, n);
		e1[i / 8] = (uint8_t)(1u << (i % 8));
		v[i] = (uint32_t)crc32(0L, e1, (uInt)n) ^ zero;
		comb[i] = 1ull << i;
	}
	uint64_t d = 0;
	/* Gaussian elimination over GF(2): 33 vectors of 32 bits are dependent */
	for (unsigned bit = 0, row = 0; bit < 32 && row < 33; bit++) {
		unsigned piv = row;
		while (piv < 33 && !((v[piv] >> bit) & 1))
			piv++;
		if (piv == 33)
			continue;
		uint32_t tv = v[piv];
		uint64_t tc = comb[piv];
		v[piv] = v[row], comb[piv] = comb[row];
		v[row] = tv, comb[row] = tc;
		for (unsigned j = 0; j < 33; j++)
			if (j != row && ((v[j] >> bit) & 1))
				v[j] ^= v[row], comb[j] ^= comb[row];
		row++;
	}
	for (unsigned j = 0; j < 33 && !d; j++)
		if (!v[j])
			d = comb[j];
	assert_true(d != 0);
	memcpy(b, a, n);
	for (unsigned i = 0; i < 33; i++)
		if ((d >> i) & 1)
			b[i / 8] ^= (uint8_t)(1u << (i % 8));
	assert_int_equal(crc32(0L, a, (uInt)n), crc32(0L, b, (uInt)n));
	assert_memory_not_equal(a, b, n);
	free(z);
	free(e1);
}

/*
 * One unit rewritten a, c, b with crc(b) = crc(a): a's physical unit is
 * freed when c is written and taken again for b (the free list is last in,
 * first out), so under dewrite_pad=crc b is encrypted with a's pad.  Then a
 * second slot written a while b is at the first: its CRC finds b, the
 * compare fails, it is written apart.  Returns the auditor's reused pads.
 */
static unsigned collision_run(const char *opts, size_t size)
{
	char path[1200], audit[1300];
	pool_path(path, sizeof(path), "collide");
	remove_all(path);
	snprintf(audit, sizeof(audit), "%s.audit", path);
	setenv("SPM_AUDIT", audit, 1);
	spm_pool *p;
	assert_int_equal(spm_create(&p, path, POOL_SIZE, opts), 0);
	uint8_t *u = units(p, size);
	uint8_t a[256], b[256], c[256];
	fill(a, size, 7);
	fill(c, size, 8);
	collide(a, b, size);
	put(p, u, a, size);
	put(p, u, c, size);
	put(p, u, b, size);
	spm_stat_reset(p);
	put(p, u + size, a, size);
	assert_int_equal(stat_of(p, "dedup.crc_hits"), 1);
	assert_int_equal(stat_of(p, "dedup.compare_fail"), 1);
	assert_int_equal(stat_of(p, "dedup.writes_cancelled"), 0);
	assert_int_equal(spm_close(p), 0);
	assert_int_equal(spm_open(&p, path, opts), 0);
	u = units(p, size);
	assert_memory_equal(u, b, size);
	assert_memory_equal(u + size, a, size);
	assert_int_equal(spm_close(p), 0);
	unsetenv("SPM_AUDIT");
	unsigned records = 0, reused = audit_reused(audit, &records);
	assert_true(records > 0);
	remove_all(path);
	return reused;
}

static void test_crc_pads_reused(void **state)
{
	(void)state;
	assert_true(collision_run("design=dewrite;dewrite_pad=crc", 256) > 0);
	assert_true(collision_run("design=dewrite;dewrite_pad=crc;dedup_line=64", 64) > 0);
}

static void test_version_pads_unique(void **state)
{
	(void)state;
	assert_int_equal(collision_run("design=dewrite", 256), 0);
	assert_int_equal(collision_run("design=dewrite;dedup_line=64", 64), 0);
}

static void test_options(void **state)
{
	(void)state;
	char path[1200];
	pool_path(path, sizeof(path), "opts");
	remove_all(path);
	spm_pool *p;
	assert_int_equal(spm_create(&p, path, POOL_SIZE, "design=dewrite;dedup_line=128"),
			 SPM_E_OPTION);
	assert_int_equal(spm_create(&p, path, POOL_SIZE, "design=dewrite;dewrite_pad=sha"),
			 SPM_E_OPTION);
	assert_int_equal(spm_create(&p, path, POOL_SIZE, "design=dewrite;dedup_window=0"),
			 SPM_E_OPTION);
	assert_int_equal(spm_create(&p, path, POOL_SIZE, "design=sca;dedup_line=64"),
			 SPM_E_OPTION);
	assert_int_equal(spm_create(&p, path, POOL_SIZE, "design=dewrite;dedup_line=64"), 0);
	assert_int_equal(spm_close(p), 0);
	assert_int_equal(spm_open(&p, path, "dedup_line=256"), SPM_E_OPTION);
	assert_int_equal(spm_open(&p, path, "dewrite_pad=crc"), SPM_E_OPTION);
	assert_int_equal(spm_open(&p, path, "dedup_window=8"), 0);
	assert_int_equal(spm_close(p), 0);
	/* the free units and the header page's spare lines are outside the view
	 * a re-key would re-encrypt */
	assert_int_equal(spm_rekey(path, NULL), SPM_E_INVAL);
	assert_non_null(strstr(spm_errormsg(), "deduplicating"));
	/* the negative control is a test knob */
	unsetenv("SPM_TEST_KNOBS");
	assert_int_equal(spm_open(&p, path, "dedup_early_map=1"), SPM_E_OPTION);
	setenv("SPM_TEST_KNOBS", "1", 1);
	remove_all(path);
}

/* read_sb -- the superblock of path's meta file. */
static void read_sb(const char *path, struct superblock *sb)
{
	char meta[1300];
	snprintf(meta, sizeof(meta), "%s.meta", path);
	FILE *f = fopen(meta, "rb");
	assert_non_null(f);
	assert_int_equal(fread(sb, sizeof(*sb), 1, f), 1);
	fclose(f);
}

/* poke -- the 4 bytes at off of path's meta file set to v. */
static void poke(const char *path, uint64_t off, uint32_t v)
{
	char meta[1300];
	snprintf(meta, sizeof(meta), "%s.meta", path);
	FILE *f = fopen(meta, "r+b");
	assert_non_null(f);
	assert_int_equal(fseek(f, (long)off, SEEK_SET), 0);
	assert_int_equal(fwrite(&v, 4, 1, f), 1);
	fclose(f);
}

/* A clean pool whose stored reference counts or mapping are damaged is
 * refused, and left as it was. */
static void test_damaged_tables(void **state)
{
	(void)state;
	char path[1200], meta[1300];
	pool_path(path, sizeof(path), "damage");
	snprintf(meta, sizeof(meta), "%s.meta", path);
	for (int what = 0; what < 2; what++) {
		remove_all(path);
		spm_pool *p;
		assert_int_equal(spm_create(&p, path, POOL_SIZE, "design=dewrite"), 0);
		uint8_t *u = units(p, 256), v[256];
		fill(v, 256, 3);
		put(p, u, v, 256);
		put(p, u + 256, v, 256);
		assert_int_equal(spm_close(p), 0);
		struct superblock sb;
		read_sb(path, &sb);
		uint64_t nunits = sb.nlines / sb.dd_unit;
		uint64_t maps = (nunits * 4 + 4095) / 4096 * 4096;
		if (what == 0) /* a reference count: the unit at 0x100 is never used */
			poke(path, sb.dd_off + maps + 4 * 1, 5);
		else /* a mapping past the pool */
			poke(path, sb.dd_off + 4 * (nunits - 1), (uint32_t)nunits + 7);
		size_t n0 = 0;
		uint8_t *before = slurp(meta, &n0);
		assert_int_equal(spm_open(&p, path, NULL), SPM_E_CORRUPT);
		assert_non_null(strstr(spm_errormsg(), "dedup"));
		assert_file_is(meta, before, n0);
		free(before);
	}
	remove_all(path);
}

/* dirty_pool -- a pool of design dewrite left dirty: a child writes two
 * equal units and a third, then exits without closing. */
static void dirty_pool(const char *path)
{
	remove_all(path);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		spm_pool *p;
		if (spm_create(&p, path, POOL_SIZE, "design=dewrite"))
			_exit(1);
		uint8_t *u = units(p, 256), v[256];
		fill(v, 256, 3);
		put(p, u, v, 256);
		put(p, u + 256, v, 256);
		fill(v, 256, 4);
		put(p, u + 512, v, 256);
		_exit(0);
	}
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* refused_unchanged -- opening path fails with SPM_E_CORRUPT and leaves
 * its data, meta and key files byte-identical. */
static void refused_unchanged(const char *path)
{
	static const char *const sfx[] = {"", ".meta", ".key"};
	uint8_t *before[3];
	size_t len[3];
	char f[1300];
	for (unsigned i = 0; i < 3; i++) {
		snprintf(f, sizeof(f), "%s%s", path, sfx[i]);
		before[i] = slurp(f, &len[i]);
	}
	spm_pool *p;
	assert_int_equal(spm_open(&p, path, NULL), SPM_E_CORRUPT);
	print_message("  refused: %s\n", spm_errormsg());
	for (unsigned i = 0; i < 3; i++) {
		snprintf(f, sizeof(f), "%s%s", path, sfx[i]);
		assert_file_is(f, before[i], len[i]);
		free(before[i]);
	}
}

/* Damaged dirty pools refused before recovery writes anything: a mapping
 * past the pool; a dropped-pair record in the ADR region (a counter
 * design's, which recovery would apply in counter mode to one line of a
 * unit); a counter queue entry.  A clean pool whose every spare unit is
 * retired (its version at its end) is refused, not aborted at a write. */
static void test_damaged_dirty(void **state)
{
	(void)state;
	char path[1200];
	pool_path(path, sizeof(path), "dirty");
	struct superblock sb;
	for (int what = 0; what < 3; what++) {
		dirty_pool(path);
		read_sb(path, &sb);
		uint64_t nunits = sb.nlines / sb.dd_unit;
		if (what == 0) {
			poke(path, sb.dd_off + 4 * (nunits - 1), (uint32_t)nunits + 7);
		} else if (what == 1) { /* n = 1, entry {line 300, counter 5} */
			poke(path, sb.adr_off + ADR_DROPPED_OFF + 16, 300);
			poke(path, sb.adr_off + ADR_DROPPED_OFF + 24, 5);
			poke(path, sb.adr_off + ADR_DROPPED_OFF, 1);
		} else { /* the counter queue's first entry: valid and ready */
			uint64_t ctr0 = sb.adr_off + ADR_HDR_SIZE +
					(uint64_t)sb.adr_data_cap * sizeof(struct wq_entry);
			poke(path, ctr0 + offsetof(struct wq_entry, state), WQ_VALID | WQ_READY);
		}
		refused_unchanged(path);
	}
	/* a clean pool, every spare unit's version at its end */
	remove_all(path);
	spm_pool *p;
	assert_int_equal(spm_create(&p, path, POOL_SIZE, "design=dewrite"), 0);
	assert_int_equal(spm_close(p), 0);
	read_sb(path, &sb);
	for (uint64_t u = 0; u < (uint64_t)sb.nlines / sb.dd_unit; u++)
		poke(path, sb.ctr_off + u * sb.dd_unit * 8 + 4, UINT32_MAX);
	refused_unchanged(path);
	remove_all(path);
}

int main(void)
{
	const char *d = getenv("SPM_TEST_DIR");
	snprintf(dir, sizeof(dir), "%s", d && *d ? d : "/tmp");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sharing_256),
		cmocka_unit_test(test_sharing_64),
		cmocka_unit_test(test_crc_pads_reused),
		cmocka_unit_test(test_version_pads_unique),
		cmocka_unit_test(test_options),
		cmocka_unit_test(test_damaged_tables),
		cmocka_unit_test(test_damaged_dirty),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
