/*
 * test_meta_geometry.c -- superblocks with a valid checksum but a geometry
 * that would make the controller read or write outside the meta or data
 * file, and dirty pools whose ADR entries address lines outside the pool,
 * are refused with SPM_E_CORRUPT before any file is modified.  Found by
 * fuzz_open; each case crashed or modified the pool before.
 * And what a review of recovery found with such superblocks and ADR regions
 * (a review): split counters chasing a far counter, stop_loss = 1.
 *
 * Internal: builds the bad superblocks with struct superblock.
 */
#include <fcntl.h>
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

#include "test_files.h"

#include <spm.h>
#include "emu_internal.h"

#define POOL_SIZE (4u << 20)

static char path[4200], meta_path[4300], key_path[4300];
static uint8_t *img_data, *img_meta, *img_key;
static size_t len_data, len_meta, len_key;
static struct superblock sb0; /* the pool's superblock */

static const char msg_text[] = "geometry";





static int setup(void **state)
{
	(void)state;
	const char *d = getenv("SPM_TEST_DIR");
	snprintf(path, sizeof(path), "%s/geom-%ld", d && *d ? d : "/tmp", (long)getpid());
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
	img_data = slurp(path, &len_data);
	img_meta = slurp(meta_path, &len_meta);
	img_key = slurp(key_path, &len_key);
	memcpy(&sb0, img_meta, sizeof(sb0));
	return sb0.state == SB_STATE_CLEAN && sb0.meta_size == len_meta ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	remove_pool_files(path);
	free(img_data);
	free(img_meta);
	free(img_key);
	return 0;
}

/*
 * refused -- write the pool with meta (mlen bytes), open: SPM_E_CORRUPT with
 * a message naming the meta file and needle, and no file modified.
 */
static void refused(const char *what, const uint8_t *meta, size_t mlen, const char *needle)
{
	spit(path, img_data, len_data);
	spit(meta_path, meta, mlen);
	spit(key_path, img_key, len_key);
	spm_pool *p = NULL;
	int rc = spm_open(&p, path, NULL);
	if (rc == 0)
		spm_close(p);
	const char *msg = spm_errormsg();
	print_message("  %-34s %d %s\n", what, rc, rc ? msg : "opened");
	if (rc != SPM_E_CORRUPT)
		fail_msg("%s: spm_open = %d (%s), expected SPM_E_CORRUPT", what, rc,
			 rc ? spm_strerror(rc) : "success");
	assert_null(p);
	assert_non_null(strstr(msg, meta_path));
	assert_non_null(strstr(msg, needle));
	size_t n;
	uint8_t *b = slurp(path, &n);
	if (n != len_data || memcmp(b, img_data, n) != 0)
		fail_msg("%s: the data file was modified", what);
	free(b);
	b = slurp(meta_path, &n);
	if (n != mlen || memcmp(b, meta, n) != 0)
		fail_msg("%s: the meta file was modified", what);
	free(b);
	b = slurp(key_path, &n);
	if (n != len_key || memcmp(b, img_key, n) != 0)
		fail_msg("%s: the key file was modified", what);
	free(b);
}

/* with_sb -- the pool's meta file with superblock s (checksum fixed). */
static uint8_t *with_sb(struct superblock s, size_t mlen)
{
	uint8_t *m = calloc(1, mlen > len_meta ? mlen : len_meta);
	assert_non_null(m);
	memcpy(m, img_meta, len_meta);
	s.checksum = sb_crc(&s);
	memcpy(m, &s, sizeof(s));
	return m;
}

static void geometry(void **state)
{
	(void)state;
	struct superblock s = sb0;
	/* ADR region 64 bytes longer (and the file): counters not page aligned */
	s.adr_size += 64, s.ctr_off += 64, s.ca_off += 64, s.shadow_off += 64;
	s.meta_size += 64;
	uint8_t *m = with_sb(s, len_meta + 64);
	refused("regions not page aligned", m, len_meta + 64, "geometry");
	free(m);
	/* sizes 2^63 larger: every sum wraps around to the real layout */
	s = sb0;
	s.adr_size += 1ull << 63, s.ctr_off += 1ull << 63, s.ctr_size += 1ull << 63;
	m = with_sb(s, len_meta);
	refused("region sums wrap around", m, len_meta, "geometry");
	s.state = SB_STATE_DIRTY; /* and dirty, with a counter entry to recover */
	free(m);
	m = with_sb(s, len_meta);
	struct wq_entry w = {.seq = 1, .addr = 0, .state = WQ_VALID | WQ_READY};
	memcpy(m + sb0.adr_off + ADR_HDR_SIZE + sb0.adr_data_cap * sizeof(w), &w, sizeof(w));
	refused("region sums wrap around, dirty", m, len_meta, "geometry");
	free(m);
	/* the shadow table past the end of the file */
	s = sb0;
	s.shadow_slots = sb0.shadow_slots + 1;
	s.meta_size = sb0.meta_size; /* the formula says one page more */
	m = with_sb(s, len_meta);
	refused("shadow table past meta_size", m, len_meta, "geometry");
	free(m);
}

static void adr_entries(void **state)
{
	(void)state;
	struct superblock s = sb0;
	s.state = SB_STATE_DIRTY;
	size_t dq = sb0.adr_off + ADR_HDR_SIZE;
	size_t cq = dq + sb0.adr_data_cap * sizeof(struct wq_entry);
	uint64_t ctr_lines = (sb0.nlines + 7) / 8;
	struct {
		const char *what;
		size_t at;
		uint64_t addr;
	} c[] = {
		{"data entry at line 2^40", dq, 1ull << 40},
		{"data entry one past the pool", dq + 5 * sizeof(struct wq_entry), sb0.nlines},
		{"last data entry, line 2^64-1", cq - sizeof(struct wq_entry), UINT64_MAX},
		{"counter entry one past", cq, ctr_lines},
		{"last counter entry, line 2^63",
		 cq + (sb0.adr_ctr_cap - 1) * sizeof(struct wq_entry), 1ull << 63},
	};
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		uint8_t *m = with_sb(s, len_meta);
		struct wq_entry w = {.seq = 1, .addr = c[i].addr, .state = WQ_VALID | WQ_READY};
		memcpy(m + c[i].at, &w, sizeof(w));
		refused(c[i].what, m, len_meta, "beyond the pool");
		/* not valid: ignored by recovery, no reason to refuse */
		w.state = WQ_READY;
		memcpy(m + c[i].at, &w, sizeof(w));
		spit(meta_path, m, len_meta);
		spit(key_path, img_key, len_key); /* the key as of the copy */
		spm_pool *p = NULL;
		if (spm_open(&p, path, NULL))
			fail_msg("%s, entry not valid: %s", c[i].what, spm_errormsg());
		assert_int_equal(spm_close(p), 0);
		free(m);
	}
	/* in range: recovered (the line's own ciphertext written home again) */
	uint64_t line = sb0.nlines - 1;
	uint8_t *m = with_sb(s, len_meta);
	struct wq_entry w = {.seq = 1, .addr = line, .state = WQ_VALID | WQ_READY};
	memcpy(w.payload, img_data + line * EMU_LINE, EMU_LINE);
	memcpy(m + dq, &w, sizeof(w));
	w = (struct wq_entry){.seq = 2, .addr = ctr_lines - 1, .state = WQ_VALID | WQ_READY};
	memcpy(w.payload, img_meta + sb0.ctr_off + (ctr_lines - 1) * EMU_LINE, EMU_LINE);
	memcpy(m + cq, &w, sizeof(w));
	spit(path, img_data, len_data);
	spit(meta_path, m, len_meta);
	spit(key_path, img_key, len_key); /* the key as of the copy */
	free(m);
	spm_pool *p = NULL;
	if (spm_open(&p, path, NULL))
		fail_msg("dirty pool with entries in range: %s", spm_errormsg());
	uint64_t drained = 0;
	assert_int_equal(spm_stat(p, "recovery.drained", &drained), 0);
	assert_int_equal(drained, 2);
	const char *r = spm_root(p, 64);
	assert_non_null(r);
	assert_string_equal(r, msg_text);
	assert_int_equal(spm_close(p), 0);
}

/*
 * reserved -- the ADR header's dropped-pairs table and reserved data slots
 * (a review): a count beyond the table, or any entry in a clean pool, is
 * refused before a file changes; a reserved slot in range is recovered (its
 * line re-encrypted past the slot's counter), one that names a counter no
 * write could have used is SPM_E_CORRUPT (split counters would chase it
 * one page re-encryption at a time).
 */
static void reserved(void **state)
{
	(void)state;
	size_t table = sb0.adr_off + ADR_DROPPED_OFF, dq = sb0.adr_off + ADR_HDR_SIZE;
	uint64_t n = ADR_DROPPED_MAX + 1;
	struct superblock s = sb0;
	s.state = SB_STATE_DIRTY;
	uint8_t *m = with_sb(s, len_meta);
	memcpy(m + table, &n, 8);
	refused("dropped table overfull", m, len_meta, "dropped-pairs table");
	free(m);
	n = 1;
	m = with_sb(sb0, len_meta); /* clean */
	memcpy(m + table, &n, 8);
	refused("dropped entry in a clean pool", m, len_meta, "dropped-pairs table");
	free(m);
	/* a reserved slot whose counter is in reach: its line is re-encrypted
	 * past it.  The counter is in the slot's pad; seq is what publish
	 * stores first, as a kill inside publish leaves it (as a review found:
	 * recovery took seq for the counter) */
	uint64_t line = sb0.nlines - 1, ctr = 40;
	struct wq_entry w = {.seq = 3, .addr = line, .state = WQ_RESERVED};
	memcpy(w.pad, &ctr, sizeof(ctr));
	m = with_sb(s, len_meta);
	memcpy(m + dq, &w, sizeof(w));
	spit(path, img_data, len_data);
	spit(meta_path, m, len_meta);
	spit(key_path, img_key, len_key); /* the key as of the copy */
	spm_pool *p = NULL;
	if (spm_open(&p, path, NULL))
		fail_msg("reserved slot in reach: %s", spm_errormsg());
	uint64_t re = 0;
	assert_int_equal(spm_stat(p, "recovery.reencrypted", &re), 0);
	assert_true(re >= 1);
	const char *r = spm_root(p, 64);
	assert_non_null(r);
	assert_string_equal(r, msg_text);
	assert_int_equal(spm_close(p), 0);
	size_t n_meta;
	uint8_t *after = slurp(meta_path, &n_meta); /* sca: a 64-bit counter per line */
	uint64_t stored;
	memcpy(&stored, after + sb0.ctr_off + line * 8, sizeof(stored));
	free(after);
	if (stored <= ctr)
		fail_msg("the reserved line's counter is %llu, not past %llu",
			 (unsigned long long)stored, (unsigned long long)ctr);
	/* and one far beyond any write: refused before a file changes (until
	 * before the fix, after recovery had raised the epochs and drained) */
	ctr = 1ull << 62;
	memcpy(w.pad, &ctr, sizeof(ctr));
	memcpy(m + dq, &w, sizeof(w));
	refused("reserved slot far beyond", m, len_meta, "far beyond");
	/* the same counter in the dropped table */
	memset(m + dq, 0, sizeof(w));
	uint64_t entry[2] = {line, ctr};
	n = 1;
	memcpy(m + table, &n, 8);
	memcpy(m + table + 16, entry, sizeof(entry));
	refused("dropped entry far beyond", m, len_meta, "far beyond");
	/* an unready pair whose counter entry names such a counter */
	n = 0;
	memcpy(m + table, &n, 8);
	uint64_t c8[8] = {0};
	c8[line % 8] = ctr;
	struct wq_entry d = {.seq = 11, .addr = line, .state = WQ_VALID | WQ_PAIRED, .aux = 10};
	struct wq_entry c = {.seq = 10, .addr = line / 8, .state = WQ_VALID};
	ctr_layout_mono.encode(c8, 0, c.payload);
	memcpy(m + dq, &d, sizeof(d));
	memcpy(m + dq + (size_t)sb0.adr_data_cap * sizeof(struct wq_entry), &c, sizeof(c));
	refused("unready pair far beyond", m, len_meta, "far beyond");
	memset(m + dq, 0, sizeof(d));
	memset(m + dq + (size_t)sb0.adr_data_cap * sizeof(struct wq_entry), 0, sizeof(c));
	/* more reserved slots (distinct lines) than the table holds */
	n = 0;
	memcpy(m + table, &n, 8);
	for (unsigned i = 0; i <= ADR_DROPPED_MAX && i < sb0.adr_data_cap; i++) {
		struct wq_entry r = {.addr = sb0.nlines - 1 - i, .state = WQ_RESERVED};
		ctr = 1;
		memcpy(r.pad, &ctr, sizeof(ctr));
		memcpy(m + dq + i * sizeof(r), &r, sizeof(r));
	}
	assert_true(sb0.adr_data_cap > ADR_DROPPED_MAX);
	refused("more reserved slots than the table", m, len_meta, "dropped pairs");
	free(m);
	spit(path, img_data, len_data);
	spit(meta_path, img_meta, len_meta);
	spit(key_path, img_key, len_key); /* the key as of the copy */
}

/*
 * split_far_lead -- split counters, 1-bit minors: a reserved slot 2^30
 * ahead of its line's counter (within the damage bound) is recovered in one
 * page re-encryption.  One major at a time, the open took hours (a review,
 * a review found: 2^29 re-encryptions); the statistic says how many ran.
 */
static void split_far_lead(void **state)
{
	(void)state;
	char sp[4300], sm[4400];
	snprintf(sp, sizeof(sp), "%s-split", path);
	snprintf(sm, sizeof(sm), "%s.meta", sp);
	remove_pool_files(sp);
	spm_pool *p = NULL;
	assert_int_equal(spm_create(&p, sp, POOL_SIZE, "design=wt;minor_bits=1"), 0);
	char *r = spm_root(p, 64);
	assert_non_null(r);
	assert_int_equal(spm_tx_begin(p), 0);
	assert_int_equal(spm_tx_add(p, r, 64), 0);
	strcpy(r, msg_text);
	assert_int_equal(spm_tx_commit(p), 0);
	assert_int_equal(spm_close(p), 0);
	size_t mlen;
	uint8_t *m = slurp(sm, &mlen);
	struct superblock s;
	memcpy(&s, m, sizeof(s));
	s.state = SB_STATE_DIRTY; /* a crashed run */
	s.checksum = sb_crc(&s);
	memcpy(m, &s, sizeof(s));
	uint64_t ctr = 1ull << 30;
	struct wq_entry w = {.addr = s.nlines - 1, .state = WQ_RESERVED};
	memcpy(w.pad, &ctr, sizeof(ctr));
	memcpy(m + s.adr_off + ADR_HDR_SIZE, &w, sizeof(w));
	spit(sm, m, mlen);
	free(m);
	assert_int_equal(spm_open(&p, sp, NULL), 0);
	uint64_t pages = 0;
	assert_int_equal(spm_stat(p, "ctr.reencrypted_pages", &pages), 0);
	print_message("  a reserved slot 2^30 ahead: %llu page re-encryptions\n",
		      (unsigned long long)pages);
	assert_int_equal(pages, 1);
	assert_string_equal(spm_root(p, 64), msg_text);
	assert_int_equal(spm_close(p), 0);
	remove_pool_files(sp);
}

/* Child modes of stop_loss_one, run with the crash injector (read once per
 * process): commit "second" and die; open (recover) and close. */
static int child(const char *mode, const char *pool)
{
	spm_pool *p;
	if (spm_open(&p, pool, NULL))
		return 3;
	if (!strcmp(mode, "commit")) {
		char *r = spm_root(p, 64);
		if (!r || spm_tx_begin(p) || spm_tx_add(p, r, 64))
			return 4;
		strcpy(r, "second");
		if (spm_tx_commit(p))
			return 5;
		kill(getpid(), SIGKILL); /* a crash after the commit */
	}
	return spm_close(p) ? 6 : 0;
}

/* run_child -- child(mode) in a fresh process with SPM_CRASH=crash (NULL:
 * none); its wait status. */
static int run_child(const char *mode, const char *crash)
{
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (crash)
			setenv("SPM_CRASH", crash, 1);
		execl("/proc/self/exe", "test_meta_geometry", mode, path, (char *)NULL);
		_exit(99);
	}
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	return st;
}

/*
 * stop_loss_one -- a superblock whose stop_loss is 1 (validate accepts
 * 1..2^32; spm_create writes 2^20): a committed transaction, a crash, a
 * recovery killed in its first re-encrypted pair, and a recovery again
 * keep the commit.  Recovery stored the target counter before its
 * counter-cache access, whose stop-loss write-back then carried a counter
 * the line's home data was not under (a review found it: the pool then
 * failed to open, "heap header unreadable").
 */
static void stop_loss_one(void **state)
{
	(void)state;
	struct superblock s = sb0;
	s.stop_loss = 1;
	uint8_t *m = with_sb(s, len_meta);
	spit(path, img_data, len_data);
	spit(meta_path, m, len_meta);
	spit(key_path, img_key, len_key);
	free(m);
	int st = run_child("commit", NULL);
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	st = run_child("open", "point:wpq.payload_written");
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	spm_pool *p = NULL;
	if (spm_open(&p, path, NULL))
		fail_msg("after a recovery killed in its first pair: %s", spm_errormsg());
	assert_string_equal(spm_root(p, 64), "second");
	assert_int_equal(spm_close(p), 0);
	spit(path, img_data, len_data);
	spit(meta_path, img_meta, len_meta);
	spit(key_path, img_key, len_key); /* the key as of the copy */
}

int main(int argc, char **argv)
{
	if (argc == 3) /* a child of stop_loss_one */
		return child(argv[1], argv[2]);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(geometry),
		cmocka_unit_test(adr_entries),
		cmocka_unit_test(reserved),
		cmocka_unit_test(split_far_lead),
		cmocka_unit_test(stop_loss_one),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
