/*
 * test_integrity.c -- the integrity designs' options, register file and
 * recovery (emu/bmt.c, emu/tcb.c): bmt_n / bmt_m fixed at create and
 * refused elsewhere; the register file's trust rules, and a missing one
 * refused without a file made; spm_rekey refused; a crash recovered by MAC
 * trial (recovery.mac_retries, the data intact); and cc-NVM 4.4's potential
 * replay -- a line written since the last drain put back with its old MAC
 * after a crash: ccnvm detects it by N_wb but cannot locate it, ccnvm-nods
 * by the rebuilt root, sc locates it (its counter was persisted).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "test_files.h"

#include <spm.h>
#include "emu_internal.h"

#define POOL_SIZE (4u << 20)
#define OBJ 8192u /* the root object: 128 lines */

static char dir[1024];

static void pool_path(char *out, size_t n, const char *name)
{
	snprintf(out, n, "%s/integ-%ld-%s", dir, (long)getpid(), name);
}

/* remove_all -- a pool's files and its register file. */
static void remove_all(const char *path)
{
	static const char *const sfx[] = {"", ".meta", ".key", ".key.tcb"};
	char p[1200];
	for (unsigned i = 0; i < 4; i++) {
		snprintf(p, sizeof(p), "%s%s", path, sfx[i]);
		unlink(p);
	}
}

static char opts_buf[128];
static const char *opts(const char *design)
{
	snprintf(opts_buf, sizeof(opts_buf), "design=%s;durability=none", design);
	return opts_buf;
}

/* make -- a fresh pool of design with its root object filled with fill. */
static void make(const char *path, const char *design, uint8_t fill)
{
	spm_pool *p;
	remove_all(path);
	assert_int_equal(spm_create(&p, path, POOL_SIZE, opts(design)), 0);
	uint8_t *root = spm_root(p, OBJ);
	assert_non_null(root);
	memset(root, fill, OBJ);
	spm_persist(p, root, OBJ);
	assert_int_equal(spm_close(p), 0);
}

static void test_options(void **state)
{
	(void)state;
	char path[1100];
	spm_pool *p;
	pool_path(path, sizeof(path), "opts");
	remove_all(path);
	/* only the integrity designs have N and M; out of range is refused */
	assert_int_equal(spm_create(&p, path, POOL_SIZE, "design=sca;bmt_n=8"), SPM_E_OPTION);
	assert_int_equal(access(path, F_OK), -1);
	assert_int_equal(spm_create(&p, path, POOL_SIZE, "design=ccnvm;bmt_n=0"), SPM_E_OPTION);
	assert_int_equal(spm_create(&p, path, POOL_SIZE, "design=ccnvm;bmt_m=257"), SPM_E_OPTION);
	/* fixed at create: another value at open is refused, the same one taken */
	assert_int_equal(spm_create(&p, path, POOL_SIZE, "design=ccnvm;bmt_n=8;bmt_m=32"), 0);
	assert_int_equal(spm_close(p), 0);
	assert_int_equal(spm_open(&p, path, "bmt_n=16"), SPM_E_OPTION);
	assert_non_null(strstr(spm_errormsg(), "bmt_n=8"));
	assert_int_equal(spm_open(&p, path, "bmt_m=64"), SPM_E_OPTION);
	assert_int_equal(spm_open(&p, path, "bmt_n=8;bmt_m=32"), 0);
	assert_int_equal(spm_close(p), 0);
	/* not an integrity design: spm_verify says so */
	char plain[1100];
	pool_path(plain, sizeof(plain), "optsca");
	make(plain, "sca", 1);
	struct spm_tamper t;
	size_t n = 7;
	assert_int_equal(spm_verify(plain, NULL, &t, 1, &n), SPM_E_INVAL);
	assert_int_equal(n, 0);
	remove_all(plain);
	remove_all(path);
}

static void test_register_file(void **state)
{
	(void)state;
	char path[1100], tcb[1200];
	spm_pool *p;
	pool_path(path, sizeof(path), "tcb");
	make(path, "ccnvm", 2);
	snprintf(tcb, sizeof(tcb), "%s.key.tcb", path);
	/* the key file's trust rules */
	assert_int_equal(chmod(tcb, 0644), 0);
	assert_int_equal(spm_open(&p, path, NULL), SPM_E_KEYFILE);
	assert_int_equal(chmod(tcb, 0600), 0);
	assert_int_equal(spm_open(&p, path, NULL), 0);
	assert_int_equal(spm_close(p), 0);
	/* gone: the root is gone -- refused, and no file made in its place */
	char keep[1300];
	snprintf(keep, sizeof(keep), "%s.keep", tcb);
	assert_int_equal(rename(tcb, keep), 0);
	assert_int_equal(spm_open(&p, path, NULL), SPM_E_TAMPERED);
	assert_int_equal(access(tcb, F_OK), -1);
	assert_int_equal(rename(keep, tcb), 0);
	/* a register file without this pool's record: the same */
	char other[1100];
	pool_path(other, sizeof(other), "tcb-other");
	make(other, "ccnvm", 3);
	char other_tcb[1200];
	snprintf(other_tcb, sizeof(other_tcb), "%s.key.tcb", other);
	size_t len;
	uint8_t *saved = slurp(tcb, &len);
	uint8_t *foreign = slurp(other_tcb, &len);
	spit(tcb, foreign, len);
	assert_int_equal(spm_open(&p, path, NULL), SPM_E_TAMPERED);
	assert_file_is(tcb, foreign, len); /* no record added by an open */
	free(foreign);
	spit(tcb, saved, len);
	free(saved);
	assert_int_equal(spm_open(&p, path, NULL), 0);
	assert_int_equal(spm_close(p), 0);
	/* re-keying would need new MACs, tree and registers */
	assert_int_equal(spm_rekey(path, NULL), SPM_E_INVAL);
	assert_int_equal(spm_open(&p, path, NULL), 0);
	assert_int_equal(spm_close(p), 0);
	remove_all(other);
	remove_all(path);
}

/*
 * crash_after_writes -- a child opens the pool, writes n lines of the root
 * object from line first on (value fill) one persist each, then lines
 * [64, 64 + pushed) of a second region, one persist for them all, and dies
 * without closing (a crash: the queues stay in the ADR region).
 */
static void crash_after_writes(const char *path, unsigned first, unsigned n, uint8_t fill,
			       unsigned pushed)
{
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		spm_pool *p;
		if (spm_open(&p, path, NULL))
			_exit(3);
		uint8_t *root = spm_root(p, OBJ);
		for (unsigned i = first; i < first + n; i++) {
			memset(root + 64 * i, fill, 64);
			spm_persist(p, root + 64 * i, 64);
		}
		memset(root + 64 * 64, fill, 64 * pushed);
		spm_persist(p, root + 64 * 64, 64 * pushed);
		_exit(0);
	}
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static void test_recovery_by_trial(void **state)
{
	(void)state;
	const char *const designs[] = {"osiris", "ccnvm-nods", "ccnvm"};
	for (unsigned d = 0; d < 3; d++) {
		char path[1100];
		spm_pool *p;
		pool_path(path, sizeof(path), designs[d]);
		make(path, designs[d], 4);
		crash_after_writes(path, 0, 8, 5, 0);
		assert_int_equal(spm_open(&p, path, NULL), 0);
		uint64_t retries = 0;
		assert_int_equal(spm_stat(p, "recovery.mac_retries", &retries), 0);
		assert_true(retries >= 1); /* counters newer than the media's, found again */
		const uint8_t *root = spm_ptr(p, spm_off(p, spm_root(p, OBJ)));
		for (unsigned i = 0; i < OBJ; i++)
			assert_int_equal(root[i], i < 8 * 64 ? 5 : 4);
		assert_int_equal(spm_close(p), 0);
		struct spm_tamper t;
		size_t n = 1;
		assert_int_equal(spm_verify(path, NULL, &t, 1, &n), 0);
		assert_int_equal(n, 0);
		remove_all(path);
	}
}

/* line_of -- the data line of the root object's line i. */
static uint64_t line_of(const char *path, unsigned i)
{
	spm_pool *p;
	assert_int_equal(spm_open(&p, path, NULL), 0);
	uint64_t off = spm_off(p, spm_root(p, OBJ)) + 64ull * i;
	assert_int_equal(spm_close(p), 0);
	return off / 64;
}

/* replay -- after a crash, line L and its MAC put back as in old (files). */
static void replay(const char *path, const uint8_t *old_data, const uint8_t *old_meta,
		   uint64_t L)
{
	char meta[1200];
	snprintf(meta, sizeof(meta), "%s.meta", path);
	size_t dlen, mlen;
	uint8_t *d = slurp(path, &dlen), *m = slurp(meta, &mlen);
	const struct superblock *sb = (const void *)m;
	memcpy(d + 64 * L, old_data + 64 * L, 64);
	memcpy(m + sb->mac_off + 16 * L, old_meta + sb->mac_off + 16 * L, 16);
	spit(path, d, dlen);
	spit(meta, m, mlen);
	free(d);
	free(m);
}

static void test_potential_replay(void **state)
{
	(void)state;
	const struct {
		const char *design;
		int kind; /* what spm_verify lists first */
	} cases[] = {
		{"ccnvm", SPM_TAMPER_REPLAY},      /* §4.4 step 3: N_retry != N_wb */
		{"ccnvm-nods", SPM_TAMPER_REPLAY}, /* the rebuilt root is not ROOT_new */
		{"sc", SPM_TAMPER_DATA},           /* its counter was persisted: located */
	};
	for (unsigned c = 0; c < 3; c++) {
		char path[1100], meta[1200];
		pool_path(path, sizeof(path), cases[c].design);
		snprintf(meta, sizeof(meta), "%s.meta", path);
		make(path, cases[c].design, 6);
		uint64_t L = line_of(path, 3);
		size_t dlen, mlen;
		uint8_t *old_data = slurp(path, &dlen), *old_meta = slurp(meta, &mlen);
		/* line 3 rewritten, then 70 lines more: its queue entry is home
		 * before the crash (a 64-entry queue), its counter line not (no
		 * drain: 8 updates a counter line, a few dozen dirty lines) */
		crash_after_writes(path, 3, 1, 7, 70);
		/* untampered, the crash recovers; on a copy, so the crashed state
		 * can be attacked after */
		replay(path, old_data, old_meta, L);
		struct spm_tamper t[8];
		size_t n = 0;
		int rc = spm_verify(path, NULL, t, 8, &n);
		print_message("  %s: replay of line %llu since the last drain: %d, %zu item(s), "
			      "first kind %d at %llu\n", cases[c].design, (unsigned long long)L,
			      rc, n, n ? t[0].kind : 0, n ? (unsigned long long)t[0].offset : 0);
		assert_int_equal(rc, SPM_E_TAMPERED);
		assert_true(n >= 1);
		assert_int_equal(t[0].kind, cases[c].kind);
		if (cases[c].kind == SPM_TAMPER_DATA)
			assert_int_equal(t[0].offset, 64 * L);
		spm_pool *p;
		assert_int_equal(spm_open(&p, path, NULL), SPM_E_TAMPERED);
		free(old_data);
		free(old_meta);
		remove_all(path);
	}
}

/* The same crash without the replay: no alarm, the new value there. */
static void test_crash_no_alarm(void **state)
{
	(void)state;
	const char *const designs[] = {"sc", "osiris", "ccnvm-nods", "ccnvm"};
	for (unsigned d = 0; d < 4; d++) {
		char path[1100];
		spm_pool *p;
		pool_path(path, sizeof(path), designs[d]);
		make(path, designs[d], 6);
		crash_after_writes(path, 3, 1, 7, 70);
		struct spm_tamper t;
		size_t n = 1;
		assert_int_equal(spm_verify(path, NULL, &t, 1, &n), 0);
		assert_int_equal(n, 0);
		assert_int_equal(spm_open(&p, path, NULL), 0);
		const uint8_t *root = spm_root(p, OBJ);
		assert_int_equal(root[3 * 64], 7);
		assert_int_equal(root[64 * 64], 7);
		assert_int_equal(root[2 * 64], 6);
		assert_int_equal(spm_close(p), 0);
		remove_all(path);
	}
}

/* set_state_clean -- a crashed pool's state word set to clean, as an
 * attacker would to skip recovery (the word is outside the checksum). */
static void set_state_clean(const char *path)
{
	char meta[1200];
	snprintf(meta, sizeof(meta), "%s.meta", path);
	size_t len;
	uint8_t *m = slurp(meta, &len);
	struct superblock *sb = (void *)m;
	sb->state = SB_STATE_CLEAN;
	spit(meta, m, len);
	free(m);
}

/* rename_design -- the superblock names another design, its checksum redone,
 * the integrity areas gone: a pool without MACs to the eye. */
static void rename_design(const char *path, const char *design)
{
	char meta[1200];
	snprintf(meta, sizeof(meta), "%s.meta", path);
	size_t len;
	uint8_t *m = slurp(meta, &len);
	struct superblock *sb = (void *)m;
	uint64_t size = sb->mac_off;
	memset(sb->design, 0, sizeof(sb->design));
	snprintf(sb->design, sizeof(sb->design), "%s", design);
	sb->mac_off = sb->mac_size = sb->tree_off = sb->tree_size = 0;
	sb->drain_off = sb->drain_size = 0;
	sb->bmt_n = sb->bmt_m = 0;
	sb->meta_size = size;
	sb->checksum = sb_crc(sb);
	spit(meta, m, size);
	free(m);
}

static void test_state_words(void **state)
{
	(void)state;
	char path[1100];
	spm_pool *p;
	/* too small a dirty address queue for a write-back's lines */
	pool_path(path, sizeof(path), "words");
	remove_all(path);
	assert_int_equal(spm_create(&p, path, POOL_SIZE, "design=ccnvm;bmt_m=4"), SPM_E_OPTION);
	assert_int_equal(access(path, F_OK), -1);
	const char *const designs[] = {"osiris", "ccnvm-nods", "ccnvm"};
	for (unsigned d = 0; d < 3; d++) {
		make(path, designs[d], 8);
		crash_after_writes(path, 0, 4, 9, 0);
		set_state_clean(path);
		assert_int_equal(spm_open(&p, path, NULL), SPM_E_TAMPERED);
		remove_all(path);
	}
	/* an integrity pool renamed to a design without MACs */
	make(path, "ccnvm", 10);
	rename_design(path, "sca");
	assert_int_equal(spm_open(&p, path, NULL), SPM_E_TAMPERED);
	assert_non_null(strstr(spm_errormsg(), "design sca"));
	remove_all(path);
}

int main(void)
{
	const char *d = getenv("SPM_TEST_DIR");
	snprintf(dir, sizeof(dir), "%s", d && *d ? d : "/tmp");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_options),
		cmocka_unit_test(test_register_file),
		cmocka_unit_test(test_recovery_by_trial),
		cmocka_unit_test(test_potential_replay),
		cmocka_unit_test(test_crash_no_alarm),
		cmocka_unit_test(test_state_words),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
