/* test_redo.c -- the controller's redo log (emu/redo.c): compact headers, record planning, partial counters; srl, lame and clame commit, abort, hold, fill and wrap their log, overflow partial counters, replay committed records across killed recoveries, reuse no pad, refuse a damaged log leaving the files as they were; the early-apply negative control is caught. */
#define _GNU_SOURCE
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
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "test_files.h"

#include <spm.h>
#include "emu_internal.h"

#define POOL_SIZE (4u << 20)
#define NL 64u                /* record lines of the workload */
#define W 10u                 /* record lines a transaction writes */
#define PLAIN_ENTRIES (1 + W) /* a transaction without allocation: root + W lines */
#define PMASK ((1ull << CLAME_PARTIAL_BITS) - 1)

static const char *const designs[] = {"srl", "lame", "clame"};
#define NDESIGNS (sizeof(designs) / sizeof(designs[0]))

static char self_exe[4096];

/* The root: one line. */
struct root {
	uint64_t count;  /* transactions committed */
	uint64_t sum;    /* sum of f(i, 0), i < count */
	spm_off_t recs;  /* NL record lines */
	spm_off_t obj;   /* the newest object allocated, or 0 */
	uint64_t obj_tx; /* the transaction that allocated it */
	uint64_t pad[3];
};
_Static_assert(sizeof(struct root) == 64, "the root is one line");

struct line {
	uint64_t w[8];
};

static uint64_t f(uint64_t i, uint64_t j)
{
	uint64_t z = i * 8 + j + 0x9e3779b97f4a7c15ull;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* rng -- splitmix64 step. */
static uint64_t rng(uint64_t *s)
{
	*s += 0x9e3779b97f4a7c15ull;
	return f(*s, 0);
}

static void pool_path(char *buf, size_t n, const char *tag)
{
	const char *dir = getenv("SPM_TEST_DIR");
	snprintf(buf, n, "%s/redo-%ld-%s", dir && *dir ? dir : "/tmp", (long)getpid(), tag);
}

static uint64_t stat_of(spm_pool *p, const char *name)
{
	uint64_t v = 0;
	assert_int_equal(spm_stat(p, name, &v), 0);
	return v;
}

/* ---------------------------------------------------------------- workload */

/* new_pool -- a pool of opts at path with its root and NL record lines. */
static spm_pool *new_pool(const char *path, const char *opts)
{
	spm_pool *p = fresh_pool(path, POOL_SIZE, opts);
	struct root *r = spm_root(p, sizeof(*r));
	assert_non_null(r);
	assert_int_equal(spm_tx_begin(p), 0);
	spm_off_t recs = spm_tx_alloc(p, NL * sizeof(struct line));
	assert_true(recs != 0);
	assert_int_equal(spm_tx_add(p, r, sizeof(*r)), 0);
	r->recs = recs;
	assert_int_equal(spm_tx_commit(p), 0);
	return p;
}

/* one_tx -- transaction number root->count: W record lines, the root, and
 * (alloc 1: always, 2: even numbers) a new object replacing the old. */
static int one_tx(spm_pool *p, unsigned alloc)
{
	struct root *r = spm_root(p, sizeof(*r));
	if (!r || spm_tx_begin(p))
		return -1;
	uint64_t i = r->count;
	struct line *rec = spm_ptr(p, r->recs);
	if (spm_tx_add(p, r, sizeof(*r)))
		goto abort;
	for (unsigned j = 0; j < W; j++) {
		struct line *l = rec + (7 * i + j) % NL;
		if (spm_tx_add(p, l, sizeof(*l)))
			goto abort;
		for (unsigned w = 0; w < 8; w++)
			l->w[w] = f(i, 8 * j + w);
	}
	if (alloc == 1 || (alloc == 2 && i % 2 == 0)) {
		spm_off_t off = spm_tx_alloc(p, 128);
		if (!off || (r->obj && spm_tx_free(p, r->obj)))
			goto abort;
		uint64_t *o = spm_ptr(p, off);
		o[0] = i;
		o[1] = f(i, 99);
		r->obj = off;
		r->obj_tx = i;
	}
	r->sum += f(i, 0);
	r->count = i + 1;
	return spm_tx_commit(p);
abort:
	spm_tx_abort(p);
	return -1;
}

/* eight_lines_tx -- transaction n (not one_tx's): the first 8 record lines. */
static int eight_lines_tx(spm_pool *p, uint64_t n)
{
	struct root *r = spm_root(p, sizeof(*r));
	struct line *rec = r ? spm_ptr(p, r->recs) : NULL;
	if (!rec || spm_tx_begin(p))
		return -1;
	for (unsigned k = 0; k < 8; k++) {
		if (spm_tx_add(p, &rec[k], sizeof(rec[k]))) {
			spm_tx_abort(p);
			return -1;
		}
		for (unsigned w = 0; w < 8; w++)
			rec[k].w[w] = f(1000 + n, 8 * k + w);
	}
	return spm_tx_commit(p);
}

/* verify -- the pool holds exactly what its first root->count transactions
 * wrote (count in *k): NULL, or why not. */
static const char *verify(spm_pool *p, uint64_t *k_out)
{
	static char why[160];
	struct root *r = spm_root(p, sizeof(*r));
	if (!r)
		return "no root";
	uint64_t k = r->count;
	*k_out = k;
	if (k > 100000)
		return "count out of range";
	const struct line *rec = spm_ptr(p, r->recs);
	if (!r->recs || !rec)
		return "record lines lost";
	struct line want[NL];
	memset(want, 0, sizeof(want));
	uint64_t sum = 0;
	for (uint64_t i = 0; i < k; i++) {
		for (unsigned j = 0; j < W; j++)
			for (unsigned w = 0; w < 8; w++)
				want[(7 * i + j) % NL].w[w] = f(i, 8 * j + w);
		sum += f(i, 0);
	}
	for (unsigned l = 0; l < NL; l++)
		if (memcmp(&rec[l], &want[l], sizeof(want[l])))
			return snprintf(why, sizeof(why), "record line %u wrong (count %llu)", l,
					(unsigned long long)k), why;
	if (r->sum != sum)
		return snprintf(why, sizeof(why), "running sum wrong (count %llu)",
				(unsigned long long)k), why;
	if (r->obj) {
		const uint64_t *o = spm_ptr(p, r->obj);
		if (!o || r->obj_tx >= k || o[0] != r->obj_tx || o[1] != f(r->obj_tx, 99))
			return "object wrong";
		for (unsigned w = 2; w < 16; w++)
			if (o[w])
				return "object wrong";
	}
	return NULL;
}

/* check -- open the pool at path: NULL if it holds what its first k
 * transactions wrote with lo <= k <= hi (k in *k), else why not. */
static const char *check(const char *path, uint64_t lo, uint64_t hi, uint64_t *k)
{
	static char why[300];
	spm_pool *p = NULL;
	*k = UINT64_MAX;
	if (spm_open(&p, path, NULL))
		return snprintf(why, sizeof(why), "open: %s", spm_errormsg()), why;
	const char *bad = verify(p, k);
	if (bad)
		snprintf(why, sizeof(why), "%s", bad);
	else if (*k < lo || *k > hi)
		snprintf(why, sizeof(why), "count %llu, want %llu..%llu", (unsigned long long)*k,
			 (unsigned long long)lo, (unsigned long long)hi);
	assert_int_equal(spm_close(p), 0);
	return bad || *k < lo || *k > hi ? why : NULL;
}

/* assert_holds -- the pool at path holds exactly k transactions. */
static void assert_holds(const char *path, uint64_t k, const char *what)
{
	uint64_t got;
	const char *bad = check(path, k, k, &got);
	if (bad)
		fail_msg("%s: %s", what, bad);
}

/* ---------------------------------------------------------------- children */

/* child_main -- "--child MODE PATH OPTS NTX ALLOC": open the pool with OPTS;
 * run: NTX transactions (one_tx); eight: NTX eight_lines_tx; hold:
 * declare, modify and persist W lines, then die with the transaction
 * open; open: recovery only. */
static int child_main(int argc, char **argv)
{
	if (argc != 7)
		return 2;
	const char *mode = argv[2], *path = argv[3], *opts = argv[4];
	unsigned ntx = (unsigned)atoi(argv[5]), alloc = (unsigned)atoi(argv[6]);
	spm_pool *p = NULL;
	if (spm_open(&p, path, *opts ? opts : NULL))
		return 3;
	if (!strcmp(mode, "run")) {
		for (unsigned t = 0; t < ntx; t++)
			if (one_tx(p, alloc))
				return 4;
	} else if (!strcmp(mode, "eight")) {
		for (unsigned t = 0; t < ntx; t++)
			if (eight_lines_tx(p, t + 1))
				return 4;
	} else if (!strcmp(mode, "hold")) {
		struct root *r = spm_root(p, sizeof(*r));
		struct line *rec = r ? spm_ptr(p, r->recs) : NULL;
		if (!rec || spm_tx_begin(p) || spm_tx_add(p, r, sizeof(*r)))
			return 4;
		for (unsigned j = 0; j < W; j++) {
			if (spm_tx_add(p, &rec[j], sizeof(rec[j])))
				return 4;
			memset(&rec[j], 0x5a, sizeof(rec[j]));
		}
		r->count += 1000;
		spm_persist(p, r, sizeof(*r));
		spm_persist(p, rec, W * sizeof(*rec));
		spm_drain(p);
		uint64_t held = 0;
		if (spm_stat(p, "redo.held_writebacks", &held) || held < PLAIN_ENTRIES)
			return 7;
		kill(getpid(), SIGKILL);
	}
	return spm_close(p) ? 4 : 0;
}

/* spawn -- this program as a child (child_main) with SPM_CRASH=crash; its
 * wait status. */
static int spawn(const char *mode, const char *path, const char *opts, unsigned ntx,
		 unsigned alloc, const char *crash)
{
	char n[16], a[16];
	snprintf(n, sizeof(n), "%u", ntx);
	snprintf(a, sizeof(a), "%u", alloc);
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (setenv("SPM_CRASH", crash ? crash : "", 1) ||
		    !freopen("/dev/null", "w", stderr)) /* its kill messages */
			_exit(5);
		char *const args[] = {self_exe, "--child", (char *)mode, (char *)path,
				      (char *)(opts ? opts : ""), n, a, NULL};
		execv(self_exe, args);
		_exit(6);
	}
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	return st;
}

static int killed(int st)
{
	return WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL;
}

static void assert_killed(int st, const char *what)
{
	if (!killed(st))
		fail_msg("%s: the child was not killed (status 0x%x, exit %d)", what, st,
			 WIFEXITED(st) ? WEXITSTATUS(st) : -1);
}

/* ------------------------------------------------ the log in the meta file */

static void meta_of(char *buf, size_t n, const char *path)
{
	snprintf(buf, n, "%s.meta", path);
}

/* read_log -- the superblock and the redo registers of the pool at path. */
static void read_log(const char *path, struct superblock *sb, struct redo_regs *g)
{
	char meta[4300];
	meta_of(meta, sizeof(meta), path);
	int fd = open(meta, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, sb, sizeof(*sb), 0), sizeof(*sb));
	assert_int_equal(pread(fd, g, sizeof(*g), (off_t)(sb->adr_off + ADR_REDO_OFF)),
			 sizeof(*g));
	close(fd);
}

/* put_meta -- n bytes of buf at offset off of the pool's meta file. */
static void put_meta(const char *path, uint64_t off, const void *buf, size_t n)
{
	char meta[4300];
	meta_of(meta, sizeof(meta), path);
	int fd = open(meta, O_WRONLY);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, buf, n, (off_t)off), (ssize_t)n);
	close(fd);
}

static unsigned rec_lines_of(const char *design)
{
	return strcmp(design, "clame") ? 17 : 9;
}

/*
 * header_off -- the meta file offset of the header of a committed record
 * not yet applied (in [head, committed)) whose line has no newer copy in
 * the ADR data queue (recovery would take that one).
 */
static uint64_t header_off(const char *path, const char *design)
{
	struct superblock sb;
	struct redo_regs g;
	read_log(path, &sb, &g);
	unsigned rl = rec_lines_of(design);
	uint64_t nrec = sb.log_lines / rl;
	char meta[4300];
	meta_of(meta, sizeof(meta), path);
	int fd = open(meta, O_RDONLY);
	assert_true(fd >= 0);
	size_t len = (size_t)sb.adr_data_cap * sizeof(struct wq_entry);
	struct wq_entry *q = malloc(len);
	assert_non_null(q);
	assert_int_equal(pread(fd, q, len, (off_t)(sb.adr_off + ADR_HDR_SIZE)), (ssize_t)len);
	close(fd);
	uint64_t off = 0;
	for (uint64_t rec = g.head; rec < g.committed && !off; rec++) {
		uint64_t hl = (rec % nrec) * rl;
		int queued = 0;
		for (unsigned i = 0; i < sb.adr_data_cap; i++)
			queued |= (q[i].state & (WQ_VALID | WQ_LOG)) == (WQ_VALID | WQ_LOG) &&
				  q[i].addr == hl;
		if (!queued)
			off = sb.log_off + hl * EMU_LINE;
	}
	free(q);
	if (!off)
		fail_msg("%s: no committed record's header is in the log area", design);
	return off;
}

/* corrupt_header -- a committed record's header names line bad (its first
 * item, or for clame its first item with a partial counter). */
static void corrupt_header(const char *path, const char *design, uint64_t bad)
{
	char meta[4300];
	meta_of(meta, sizeof(meta), path);
	uint64_t off = header_off(path, design);
	uint8_t h[EMU_LINE];
	int fd = open(meta, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, h, sizeof(h), (off_t)off), sizeof(h));
	close(fd);
	if (!strcmp(design, "clame")) {
		struct redo_item it[8];
		unsigned valid = clame_hdr_unpack(h, it), s = 0;
		while (s < 8 && !((valid >> s & 1) && it[s].partial))
			s++;
		assert_true(s < 8);
		it[s].line = bad;
		clame_hdr_pack(h, it, valid);
	} else {
		uint64_t a[8];
		memcpy(a, h, sizeof(a));
		unsigned s = 0;
		while (s < 8 && !a[s])
			s++;
		assert_true(s < 8);
		a[s] = bad + 1;
		memcpy(h, a, sizeof(a));
	}
	put_meta(path, off, h, sizeof(h));
}

/* corrupt_counter -- a committed record's first entry gets a counter no
 * recovery may use: srl and lame, its counter block all ones; clame, its
 * first item's partial counter 0 (an overflow) with no counter block
 * after it (the next item made valid). */
static void corrupt_counter(const char *path, const char *design)
{
	uint64_t off = header_off(path, design);
	char meta[4300];
	meta_of(meta, sizeof(meta), path);
	uint8_t h[EMU_LINE];
	int fd = open(meta, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, h, sizeof(h), (off_t)off), sizeof(h));
	close(fd);
	if (!strcmp(design, "clame")) {
		struct redo_item it[8];
		unsigned valid = clame_hdr_unpack(h, it);
		assert_true(valid & 1);
		it[0].partial = 0;
		it[1].line = it[0].line;
		it[1].partial = 1;
		clame_hdr_pack(h, it, valid | 3);
		put_meta(path, off, h, sizeof(h));
		return;
	}
	uint8_t ones[EMU_LINE];
	memset(ones, 0xff, sizeof(ones));
	put_meta(path, off + 2 * EMU_LINE, ones, sizeof(ones)); /* slot 0's counter block */
}

/* queue_good_copy -- the crashed pool's intact header of the record
 * header_off finds (taken from crashed) put into a free ADR data queue
 * slot as a valid log entry that is not ready: recovery drops it, so the
 * (damaged) log area's copy is the one it would read. */
static void queue_good_copy(const char *path, const char *design,
			    const struct pool_image *crashed)
{
	struct superblock sb;
	struct redo_regs g;
	read_log(path, &sb, &g);
	uint64_t off = header_off(path, design);
	char meta[4300];
	meta_of(meta, sizeof(meta), path);
	int fd = open(meta, O_RDONLY);
	assert_true(fd >= 0);
	struct wq_entry w;
	unsigned i = 0;
	for (; i < sb.adr_data_cap; i++) {
		off_t at = (off_t)(sb.adr_off + ADR_HDR_SIZE + (uint64_t)i * sizeof(w));
		assert_int_equal(pread(fd, &w, sizeof(w), at), sizeof(w));
		if (!w.state)
			break;
	}
	close(fd);
	assert_true(i < sb.adr_data_cap);
	memset(&w, 0, sizeof(w));
	w.seq = UINT64_MAX / 2;
	w.addr = (off - sb.log_off) / EMU_LINE;
	w.state = WQ_VALID | WQ_LOG; /* not WQ_READY */
	memcpy(w.payload, crashed->bytes[1] + off, EMU_LINE);
	put_meta(path, sb.adr_off + ADR_HDR_SIZE + (uint64_t)i * sizeof(w), &w, sizeof(w));
}

/* set_regs -- the pool's redo registers := g. */
static void set_regs(const char *path, const struct redo_regs *g)
{
	struct superblock sb;
	struct redo_regs old;
	read_log(path, &sb, &old);
	put_meta(path, sb.adr_off + ADR_REDO_OFF, g, sizeof(*g));
}

/* assert_refused -- spm_open of the pool at path fails with SPM_E_CORRUPT,
 * saying the redo log, and leaves its three files byte for byte. */
static void assert_refused(const char *path, const char *what)
{
	struct pool_image before = {0}, after = {0};
	pool_save(path, &before);
	spm_pool *p = NULL;
	int rc = spm_open(&p, path, NULL);
	if (rc == 0) {
		spm_close(p);
		fail_msg("%s: the pool was opened", what);
	}
	if (rc != SPM_E_CORRUPT)
		fail_msg("%s: spm_open returned %d (%s), want SPM_E_CORRUPT", what, rc,
			 spm_errormsg());
	if (!strstr(spm_errormsg(), "redo log"))
		fail_msg("%s: the message does not say the redo log: %s", what, spm_errormsg());
	pool_save(path, &after);
	static const char *const file[3] = {"data", "meta", "key"};
	for (unsigned i = 0; i < 3; i++)
		if (before.len[i] != after.len[i] ||
		    memcmp(before.bytes[i], after.bytes[i], before.len[i]))
			fail_msg("%s: the refused open modified the %s file", what, file[i]);
	pool_image_free(&before);
	pool_image_free(&after);
}

/*
 * crashed_pool -- a pool of design at path with pre transactions, closed,
 * then a child that commits ntx more and is killed right after the last
 * commit: its records committed, not applied (head < committed = tail).
 * The registers go to *g.
 */
static void crashed_pool(const char *path, const char *design, unsigned pre, unsigned ntx,
			 struct redo_regs *g)
{
	char opts[64], crash[64];
	snprintf(opts, sizeof(opts), "design=%s", design);
	spm_pool *p = new_pool(path, opts);
	for (unsigned t = 0; t < pre; t++)
		assert_int_equal(one_tx(p, 2), 0);
	assert_int_equal(spm_close(p), 0);
	snprintf(crash, sizeof(crash), "point:redo.committed:%u", ntx);
	assert_killed(spawn("run", path, "", ntx, 2, crash), "killed after a commit");
	struct superblock sb;
	read_log(path, &sb, g);
	if (!(g->head < g->committed && g->committed == g->tail))
		fail_msg("%s: registers head %llu committed %llu tail %llu: want committed "
			 "records not yet applied", design, (unsigned long long)g->head,
			 (unsigned long long)g->committed, (unsigned long long)g->tail);
	/* every transaction of the child left two records at least */
	assert_true(g->committed - g->head >= 2 * ntx);
}

/* --------------------------------------------------------- compact records */

/* ref_bits -- bits [pos, pos+n) of the little-endian bit string b. */
static uint64_t ref_bits(const uint8_t *b, unsigned pos, unsigned n)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)(b[(pos + i) / 8] >> ((pos + i) % 8) & 1) << i;
	return v;
}

/* round_trip -- it[] and valid packed, unpacked back, and where Fig. 5 puts them. */
static void round_trip(const struct redo_item it[8], unsigned valid)
{
	uint8_t h[EMU_LINE];
	memset(h, 0xa5, sizeof(h));
	clame_hdr_pack(h, it, valid);
	struct redo_item back[8];
	assert_int_equal(clame_hdr_unpack(h, back), valid);
	for (unsigned i = 0; i < 8; i++) {
		assert_int_equal(back[i].line, it[i].line);
		assert_int_equal(back[i].partial, it[i].partial);
		assert_int_equal(ref_bits(h, 63 * i, CLAME_ADDR_BITS), it[i].line);
		assert_int_equal(ref_bits(h, 63 * i + CLAME_ADDR_BITS, CLAME_PARTIAL_BITS),
				 it[i].partial);
	}
	assert_int_equal(ref_bits(h, 504, 8), valid);
}

static void clame_header_round_trip(void **state)
{
	(void)state;
	uint64_t s = 2024;
	struct redo_item it[8];
	for (unsigned n = 0; n < 4000; n++) {
		for (unsigned i = 0; i < 8; i++) {
			it[i].line = rng(&s) & ((1ull << CLAME_ADDR_BITS) - 1);
			it[i].partial = (uint32_t)(rng(&s) & PMASK);
		}
		round_trip(it, (unsigned)(rng(&s) & 0xff));
	}
	/* the extremes: every bit of the header set, none, one item alone */
	uint8_t h[EMU_LINE], want[EMU_LINE];
	memset(want, 0xff, sizeof(want));
	for (unsigned i = 0; i < 8; i++)
		it[i] = (struct redo_item){(1ull << CLAME_ADDR_BITS) - 1, (uint32_t)PMASK};
	round_trip(it, 0xff);
	clame_hdr_pack(h, it, 0xff);
	assert_memory_equal(h, want, sizeof(h));
	memset(it, 0, sizeof(it));
	round_trip(it, 0);
	memset(want, 0, sizeof(want));
	clame_hdr_pack(h, it, 0);
	assert_memory_equal(h, want, sizeof(h));
	for (unsigned k = 0; k < 8; k++) {
		memset(it, 0, sizeof(it));
		it[k] = (struct redo_item){(1ull << CLAME_ADDR_BITS) - 1, 1};
		round_trip(it, 1u << k);
		clame_hdr_pack(h, it, 1u << k);
		for (unsigned b = 0; b < 512; b++) {
			int want = (b >= 63 * k && b <= 63 * k + CLAME_ADDR_BITS) || b == 504 + k;
			assert_int_equal(ref_bits(h, b, 1), (uint64_t)want);
		}
	}
}

/* ---------------------------------------------------------------- planning */

static void plan_clame_overflow(void **state)
{
	(void)state;
	enum { N = 12 };
	const uint64_t ovf = 3ull << CLAME_PARTIAL_BITS; /* low 18 bits zero */
	for (unsigned pos = 1; pos <= 8; pos++) {
		uint64_t ctr[N];
		uint32_t slot[N];
		for (unsigned i = 0; i < N; i++)
			ctr[i] = ovf + 1 + i;
		ctr[pos - 1] = ovf;
		uint64_t nrec = redo_plan(LOG_CLAME, ctr, N, slot);
		for (unsigned i = 0; i + 1 < pos; i++)
			assert_int_equal(slot[i], i);
		if (pos < 8) {
			/* in place; the next slot is its counter block's */
			assert_int_equal(slot[pos - 1], pos - 1);
			for (unsigned i = pos; i < N; i++)
				assert_int_equal(slot[i], i + 1);
		} else {
			/* no room for its counter block: on to the next record,
			 * slot 7 unused */
			assert_int_equal(slot[7], 8);
			for (unsigned i = 8; i < N; i++)
				assert_int_equal(slot[i], i + 2);
		}
		for (unsigned i = 0; i < N; i++)
			assert_true(slot[i] != slot[pos - 1] + 1);
		assert_int_equal(nrec, 2);
	}
	/* counter 0 overflows too; two overflows in a row; one at the end */
	uint64_t c2[4] = {0, 1ull << CLAME_PARTIAL_BITS, 5, 6};
	uint32_t s2[4];
	assert_int_equal(redo_plan(LOG_CLAME, c2, 4, s2), 1);
	assert_int_equal(s2[0], 0);
	assert_int_equal(s2[1], 2);
	assert_int_equal(s2[2], 4);
	assert_int_equal(s2[3], 5);
	uint64_t c3[8] = {1, 2, 3, 4, 5, 6, 7, 8ull << CLAME_PARTIAL_BITS};
	uint32_t s3[8];
	assert_int_equal(redo_plan(LOG_CLAME, c3, 8, s3), 2);
	assert_int_equal(s3[7], 8);
	assert_int_equal(redo_plan(LOG_CLAME, c3, 7, s3), 1);
	assert_int_equal(redo_plan(LOG_CLAME, c3, 0, s3), 0);
}

static void plan_eight_per_record(void **state)
{
	(void)state;
	enum { N = 20 };
	uint64_t ctr[N];
	uint32_t slot[N];
	for (unsigned i = 0; i < N; i++) /* overflowing counters among them */
		ctr[i] = i % 3 ? (uint64_t)i << CLAME_PARTIAL_BITS : i + 1;
	static const enum log_policy pol[] = {LOG_LAME, LOG_SRL};
	for (unsigned k = 0; k < 2; k++) {
		for (size_t n = 0; n <= N; n++) {
			memset(slot, 0xff, sizeof(slot));
			assert_int_equal(redo_plan(pol[k], ctr, n, slot), (n + 7) / 8);
			for (unsigned i = 0; i < n; i++)
				assert_int_equal(slot[i], i);
		}
	}
	/* clame without overflows: the same */
	for (unsigned i = 0; i < N; i++)
		ctr[i] = i + 1;
	assert_int_equal(redo_plan(LOG_CLAME, ctr, N, slot), 3);
	for (unsigned i = 0; i < N; i++)
		assert_int_equal(slot[i], i);
}

/* -------------------------------------------------------- partial counters */

static void clame_full_counter(void **state)
{
	(void)state;
	const uint64_t span = PMASK + 1;
	/* plain cases */
	assert_int_equal(clame_full_ctr(5, 6), 6);
	assert_int_equal(clame_full_ctr(0, 1), 1);
	/* across a 2^18 boundary, forward: the counter wrapped its low bits */
	assert_int_equal(clame_full_ctr(span - 3, 2), span + 2);
	assert_int_equal(clame_full_ctr(span - 1, 1), span + 1);
	assert_int_equal(clame_full_ctr(7 * span - 10, 5), 7 * span + 5);
	/* backward: the last known counter is already past the entry's (a replay) */
	assert_int_equal(clame_full_ctr(span + 2, (uint32_t)PMASK), span - 1);
	assert_int_equal(clame_full_ctr(5 * span + 1, (uint32_t)PMASK - 4), 5 * span - 5);
	/* equal to last: a replay after a crash in an in-place update */
	assert_int_equal(clame_full_ctr(1000, 1000), 1000);
	assert_int_equal(clame_full_ctr(7 * span + 5, 5), 7 * span + 5);
	assert_int_equal(clame_full_ctr(span - 1, (uint32_t)PMASK), span - 1);
	assert_int_equal(clame_full_ctr(span + 1, 1), span + 1);
	/* no negative counters */
	assert_int_equal(clame_full_ctr(3, (uint32_t)PMASK), PMASK);
	/* any counter within 2^17 of the last known one */
	uint64_t s = 7;
	for (unsigned n = 0; n < 20000; n++) {
		uint64_t last = span / 2 + rng(&s) % (1ull << 40);
		int64_t d = (int64_t)(rng(&s) % (span - 1)) - (int64_t)(span / 2 - 1);
		uint64_t full = last + (uint64_t)d;
		uint32_t partial = (uint32_t)(full & PMASK);
		if (clame_full_ctr(last, partial) != full)
			fail_msg("clame_full_ctr(%llu, %u) = %llu, want %llu",
				 (unsigned long long)last, partial,
				 (unsigned long long)clame_full_ctr(last, partial),
				 (unsigned long long)full);
	}
}

/* --------------------------------------------------------- through the API */

/* commit_and_reopen -- transactions commit through the log (its statistics
 * count them), and a reopen finds what they wrote. */
static void commit_and_reopen(void **state)
{
	const char *design = *state;
	char path[4200], opts[64];
	pool_path(path, sizeof(path), design);
	snprintf(opts, sizeof(opts), "design=%s", design);
	spm_pool *p = new_pool(path, opts);
	for (unsigned t = 0; t < 12; t++) {
		uint64_t c0 = stat_of(p, "redo.commits"), e0 = stat_of(p, "redo.entries"),
			 r0 = stat_of(p, "redo.records");
		int alloc = t % 2 == 0; /* one_tx(.., 2): even transaction numbers */
		assert_int_equal(one_tx(p, 2), 0);
		uint64_t de = stat_of(p, "redo.entries") - e0;
		uint64_t dr = stat_of(p, "redo.records") - r0;
		assert_int_equal(stat_of(p, "redo.commits") - c0, 1);
		if (alloc) { /* the bitmap's one or two lines, the object's two
			      * if allocations are logged */
			assert_true(de >= PLAIN_ENTRIES + 1 && de <= PLAIN_ENTRIES + 4);
		} else {
			assert_int_equal(de, PLAIN_ENTRIES);
		}
		assert_int_equal(dr, (de + 7) / 8); /* 8 entries a record, no overflow */
	}
	uint64_t k;
	const char *bad = verify(p, &k);
	if (bad)
		fail_msg("%s: the view: %s", design, bad);
	assert_int_equal(k, 12);
	assert_true(stat_of(p, "aes.pads") > 0);
	assert_int_equal(spm_close(p), 0);
	assert_holds(path, 12, "reopened");
	remove_pool_files(path);
}

/* abort_restores -- spm_tx_abort puts the view back; the lines, held while
 * the transaction was open, were never written home. */
static void abort_restores(void **state)
{
	const char *design = *state;
	char path[4200], opts[64];
	pool_path(path, sizeof(path), design);
	snprintf(opts, sizeof(opts), "design=%s", design);
	spm_pool *p = new_pool(path, opts);
	for (unsigned t = 0; t < 4; t++)
		assert_int_equal(one_tx(p, 1), 0);
	uint64_t c0 = stat_of(p, "redo.commits"), h0 = stat_of(p, "redo.held_writebacks");
	struct root *r = spm_root(p, sizeof(*r));
	struct line *rec = spm_ptr(p, r->recs);
	assert_int_equal(spm_tx_begin(p), 0);
	assert_int_equal(spm_tx_add(p, r, sizeof(*r)), 0);
	assert_int_equal(spm_tx_add(p, rec, 3 * sizeof(*rec)), 0);
	memset(rec, 0x77, 3 * sizeof(*rec));
	r->count = 99;
	spm_off_t off = spm_tx_alloc(p, 256);
	assert_true(off != 0);
	memset(spm_ptr(p, off), 0x33, 256);
	spm_persist(p, rec, 3 * sizeof(*rec)); /* held: written at the commit only */
	assert_true(stat_of(p, "redo.held_writebacks") >= h0 + 3);
	spm_tx_abort(p);
	assert_int_equal(stat_of(p, "redo.commits"), c0);
	uint64_t k;
	const char *bad = verify(p, &k);
	if (bad)
		fail_msg("%s: the view after the abort: %s", design, bad);
	assert_int_equal(k, 4);
	assert_int_equal(spm_close(p), 0);
	assert_holds(path, 4, "reopened after an abort");
	/* the log goes on */
	assert_int_equal(spm_open(&p, path, NULL), 0);
	assert_int_equal(one_tx(p, 1), 0);
	assert_int_equal(spm_close(p), 0);
	assert_holds(path, 5, "a commit after the abort");
	remove_pool_files(path);
}

/* held_lines_crash -- a transaction's declared lines persisted while it is
 * open, then a kill: their write-backs waited, a reopen finds the old data. */
static void held_lines_crash(void **state)
{
	const char *design = *state;
	char path[4200], opts[64];
	pool_path(path, sizeof(path), design);
	snprintf(opts, sizeof(opts), "design=%s", design);
	spm_pool *p = new_pool(path, opts);
	for (unsigned t = 0; t < 3; t++)
		assert_int_equal(one_tx(p, 1), 0);
	assert_int_equal(spm_close(p), 0);
	assert_killed(spawn("hold", path, "", 0, 0, NULL), "killed in a transaction");
	assert_holds(path, 3, "a transaction's persisted lines after a kill");
	remove_pool_files(path);
}

/* The tiny log's root: seven objects of 4 lines. */
struct tiny_root {
	spm_off_t obj[7];
	uint64_t count;
};
_Static_assert(sizeof(struct tiny_root) == 64, "the tiny log's root is one line");

/* tiny_image -- the root and the objects, in a buffer of 64 + 7 * 256 bytes. */
static void tiny_image(spm_pool *p, const struct tiny_root *r, uint8_t *out)
{
	memcpy(out, r, 64);
	for (unsigned i = 0; i < 7; i++)
		memcpy(out + 64 + 256 * i, spm_ptr(p, r->obj[i]), 256);
}

/* tiny_log -- log_kib=2: a transaction of more lines than the log holds
 * fails at commit with SPM_E_NOSPACE and changes nothing; smaller ones go on. */
static void tiny_log(void **state)
{
	const char *design = *state;
	char path[4200], opts[64];
	pool_path(path, sizeof(path), design);
	snprintf(opts, sizeof(opts), "design=%s;log_kib=2", design);
	spm_pool *p = fresh_pool(path, POOL_SIZE, opts);
	struct tiny_root *r = spm_root(p, sizeof(*r));
	assert_non_null(r);
	/* each object in a transaction of one record (the root, the bitmap
	 * and at most the object's 4 lines) */
	for (unsigned i = 0; i < 7; i++) {
		assert_int_equal(spm_tx_begin(p), 0);
		spm_off_t obj = spm_tx_alloc(p, 256);
		assert_true(obj != 0);
		memset(spm_ptr(p, obj), 0x10 + i, 256);
		assert_int_equal(spm_tx_add(p, r, sizeof(*r)), 0);
		r->obj[i] = obj;
		r->count = i + 1;
		assert_int_equal(spm_tx_commit(p), 0);
	}
	uint8_t old[64 + 7 * 256], now[sizeof(old)];
	tiny_image(p, r, old);
	/* 1 + 7 * 4 lines: more than 24 (clame: 3 records) or 8 (srl, lame: 1) */
	uint64_t c0 = stat_of(p, "redo.commits");
	assert_int_equal(spm_tx_begin(p), 0);
	assert_int_equal(spm_tx_add(p, r, sizeof(*r)), 0);
	for (unsigned i = 0; i < 7; i++) {
		assert_int_equal(spm_tx_add(p, spm_ptr(p, r->obj[i]), 256), 0);
		memset(spm_ptr(p, r->obj[i]), 0x22, 256);
	}
	spm_off_t big = spm_tx_alloc(p, 2048);
	assert_true(big != 0);
	memset(spm_ptr(p, big), 0x44, 2048);
	r->obj[0] = big;
	r->count = 99;
	int rc = spm_tx_commit(p);
	if (rc != SPM_E_NOSPACE)
		fail_msg("%s: a transaction larger than the log: commit returned %d (%s), want "
			 "SPM_E_NOSPACE", design, rc, spm_errormsg());
	assert_non_null(strstr(spm_errormsg(), "redo log"));
	assert_int_equal(stat_of(p, "redo.commits"), c0);
	tiny_image(p, r, now);
	assert_memory_equal(now, old, sizeof(old));
	/* the log goes on: a small transaction commits */
	uint8_t *o = spm_ptr(p, r->obj[3]);
	assert_int_equal(spm_tx_begin(p), 0);
	assert_int_equal(spm_tx_add(p, o, 64), 0);
	memset(o, 0x55, 64);
	assert_int_equal(spm_tx_commit(p), 0);
	memset(old + 64 + 3 * 256, 0x55, 64);
	assert_int_equal(spm_close(p), 0);
	assert_int_equal(spm_open(&p, path, NULL), 0);
	r = spm_root(p, sizeof(*r));
	assert_non_null(r);
	tiny_image(p, r, now);
	assert_memory_equal(now, old, sizeof(old));
	assert_int_equal(spm_close(p), 0);
	remove_pool_files(path);
}

/* ring_wraps -- log_kib=16: the ring wraps many times, records applied in
 * place on the way; a reopen finds every transaction. */
static void ring_wraps(void **state)
{
	const char *design = *state;
	char path[4200], opts[64];
	pool_path(path, sizeof(path), design);
	snprintf(opts, sizeof(opts), "design=%s;log_kib=16", design);
	spm_pool *p = new_pool(path, opts);
	for (unsigned t = 0; t < 60; t++)
		assert_int_equal(one_tx(p, 2), 0);
	assert_true(stat_of(p, "redo.records") > 2 * (16 * 1024 / 64 / rec_lines_of(design)));
	assert_true(stat_of(p, "redo.inplace_lines") >= 40 * PLAIN_ENTRIES);
	uint64_t k;
	const char *bad = verify(p, &k);
	if (bad)
		fail_msg("%s: the view: %s", design, bad);
	assert_int_equal(spm_close(p), 0);
	assert_holds(path, 60, "reopened after the ring wrapped");
	remove_pool_files(path);
}

/* options -- log_kib= only for the redo designs, within bounds; nothing is
 * created when refused. */
static void options(void **state)
{
	(void)state;
	char path[4200];
	pool_path(path, sizeof(path), "opts");
	static const char *const bad[] = {"design=sca;log_kib=64", "design=ideal;log_kib=2",
					  "design=lame;log_kib=1", "design=clame;log_kib=8192",
					  "design=clame;log_kib=4609"};
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		remove_pool_files(path);
		spm_pool *p = NULL;
		int rc = spm_create(&p, path, POOL_SIZE, bad[i]);
		if (rc != SPM_E_OPTION)
			fail_msg("spm_create(%s) returned %d (%s), want SPM_E_OPTION", bad[i], rc,
				 spm_errormsg());
		assert_non_null(strstr(spm_errormsg(), "log_kib"));
		assert_int_equal(access(path, F_OK), -1);
	}
	/* clame's largest log: 2^16 entries */
	spm_pool *p = fresh_pool(path, POOL_SIZE, "design=clame;log_kib=4608");
	struct superblock sb;
	struct redo_regs g;
	read_log(path, &sb, &g);
	assert_int_equal(sb.log_lines / 9 * 8, 1u << 16);
	assert_int_equal(spm_close(p), 0);
	/* an sca pool opened with log_kib= */
	p = fresh_pool(path, POOL_SIZE, "design=sca");
	assert_int_equal(spm_close(p), 0);
	int rc = spm_open(&p, path, "log_kib=64");
	if (rc == 0)
		spm_close(p);
	assert_int_equal(rc, SPM_E_OPTION);
	/* a redo pool opened with another log_kib= than its own; its own is fine */
	remove_pool_files(path);
	p = fresh_pool(path, POOL_SIZE, "design=lame;log_kib=32");
	assert_int_equal(spm_close(p), 0);
	rc = spm_open(&p, path, "log_kib=64");
	if (rc == 0)
		spm_close(p);
	assert_int_equal(rc, SPM_E_OPTION);
	assert_non_null(strstr(spm_errormsg(), "log_kib"));
	assert_int_equal(spm_open(&p, path, "log_kib=32"), 0);
	assert_int_equal(spm_close(p), 0);
	remove_pool_files(path);
}

/* ----------------------------------------------------------------- crashes */

/*
 * replay_idempotent -- committed records not yet applied are replayed by a
 * recovery that is itself killed in the middle of applying them, again and
 * again (its counter written, its data not; a record done, the head not
 * moved); the last open finds exactly what was committed, and no pad
 * encrypted two plaintexts.
 */
static void replay_idempotent(void **state)
{
	const char *design = *state;
	char path[4200], audit[4300];
	pool_path(path, sizeof(path), design);
	snprintf(audit, sizeof(audit), "%s.audit", path);
	unlink(audit);
	assert_int_equal(setenv("SPM_AUDIT", audit, 1), 0);
	struct redo_regs g0, g;
	struct superblock sb;
	crashed_pool(path, design, 3, 5, &g0);
	static const char *const kills[] = {
		"point:redo.ctr_applied:1", "point:redo.applied:3",    "point:redo.ctr_applied:40",
		"point:redo.ctr_applied:12", "point:redo.applied:9",   "point:redo.ctr_applied:12",
		"point:redo.ctr_applied:2",
	};
	for (unsigned i = 0; i < sizeof(kills) / sizeof(kills[0]); i++) {
		assert_killed(spawn("open", path, "", 0, 0, kills[i]), kills[i]);
		read_log(path, &sb, &g);
		/* the head moves once every record is applied */
		assert_int_equal(g.head, g0.head);
		assert_int_equal(g.committed, g0.committed);
		assert_int_equal(g.tail, g0.tail);
	}
	assert_holds(path, 8, "recovered after recoveries killed in replay");
	read_log(path, &sb, &g);
	assert_true(g.head == g.committed && g.committed == g.tail && g.head >= g0.committed);
	assert_holds(path, 8, "opened again");
	assert_int_equal(unsetenv("SPM_AUDIT"), 0);
	unsigned records;
	assert_int_equal(audit_reused(audit, &records), 0);
	assert_true(records > 0);
	unlink(audit);
	remove_pool_files(path);
}

/* applied_then_killed -- with a small log (log_kib=16) records are applied
 * in place as transactions commit, the head moving on; a kill right after
 * a commit loses none of them. */
static void applied_then_killed(void **state)
{
	const char *design = *state;
	char path[4200], opts[64];
	pool_path(path, sizeof(path), design);
	snprintf(opts, sizeof(opts), "design=%s;log_kib=16", design);
	spm_pool *p = new_pool(path, opts);
	for (unsigned t = 0; t < 2; t++)
		assert_int_equal(one_tx(p, 2), 0);
	assert_int_equal(spm_close(p), 0);
	struct superblock sb;
	struct redo_regs g0, g;
	read_log(path, &sb, &g0);
	assert_killed(spawn("run", path, "", 20, 2, "point:redo.committed:20"),
		      "killed after a commit");
	read_log(path, &sb, &g);
	assert_true(g.head > g0.committed); /* applied in place before the kill */
	assert_holds(path, 22, "recovered after in-place updates");
	remove_pool_files(path);
}

/* other_tx -- a transaction writing data of no one_tx to the root and the
 * lines transaction number 2 writes; other_holds -- the pool holds it. */
static void other_tx(spm_pool *p)
{
	struct root *r = spm_root(p, sizeof(*r));
	assert_non_null(r);
	struct line *rec = spm_ptr(p, r->recs);
	assert_int_equal(spm_tx_begin(p), 0);
	assert_int_equal(spm_tx_add(p, r, sizeof(*r)), 0);
	r->pad[0] = 0xdeadbeef;
	for (unsigned j = 0; j < W; j++) {
		struct line *l = rec + (14 + j) % NL;
		assert_int_equal(spm_tx_add(p, l, sizeof(*l)), 0);
		for (unsigned w = 0; w < 8; w++)
			l->w[w] = ~f(j, w);
	}
	assert_int_equal(spm_tx_commit(p), 0);
}

static void other_holds(const char *path, uint64_t count)
{
	spm_pool *p = NULL;
	assert_int_equal(spm_open(&p, path, NULL), 0);
	struct root *r = spm_root(p, sizeof(*r));
	assert_non_null(r);
	assert_int_equal(r->count, count);
	assert_int_equal(r->pad[0], 0xdeadbeef);
	const struct line *rec = spm_ptr(p, r->recs);
	for (unsigned j = 0; j < W; j++)
		for (unsigned w = 0; w < 8; w++)
			assert_int_equal(rec[(14 + j) % NL].w[w], ~f(j, w));
	assert_int_equal(spm_close(p), 0);
}

/*
 * interrupted_commit -- a commit killed before its commit record (its
 * records reserved, a header or a block written, every entry logged): the
 * transaction is gone after recovery, and the lines it logged are past the
 * counters it used -- a later transaction writing other data to them
 * reuses no pad (SPM_AUDIT).
 */
static void interrupted_commit(void **state)
{
	const char *design = *state;
	char path[4200], audit[4300], opts[64], kill[4][64];
	pool_path(path, sizeof(path), design);
	snprintf(audit, sizeof(audit), "%s.audit", path);
	snprintf(opts, sizeof(opts), "design=%s", design);
	/* the third transaction's: two records each */
	snprintf(kill[0], sizeof(kill[0]), "point:redo.reserved:3");
	snprintf(kill[1], sizeof(kill[1]), "point:redo.header_written:5");
	snprintf(kill[2], sizeof(kill[2]), "point:redo.block_written:%u", 2 * PLAIN_ENTRIES + 4);
	snprintf(kill[3], sizeof(kill[3]), "point:redo.logged:3");
	for (unsigned i = 0; i < 4; i++) {
		unlink(audit); /* one pool (one key) an audit */
		assert_int_equal(setenv("SPM_AUDIT", audit, 1), 0);
		assert_int_equal(spm_close(new_pool(path, opts)), 0);
		assert_killed(spawn("run", path, "", 3, 0, kill[i]), kill[i]);
		/* recoveries killed once the committed records are home, and
		 * once the registers are at the tail */
		assert_killed(spawn("open", path, "", 0, 0, "point:redo.head:1"), "redo.head");
		assert_killed(spawn("open", path, "", 0, 0, "point:redo.recovered:1"),
			      "redo.recovered");
		assert_holds(path, 2, kill[i]);
		spm_pool *p = NULL;
		assert_int_equal(spm_open(&p, path, NULL), 0);
		other_tx(p);
		assert_int_equal(spm_close(p), 0);
		other_holds(path, 2);
		assert_int_equal(unsetenv("SPM_AUDIT"), 0);
		unsigned records, reused = audit_reused(audit, &records);
		if (reused)
			fail_msg("%s killed at %s: %u pads reused", design, kill[i], reused);
		assert_true(records > 0);
	}
	unlink(audit);
	remove_pool_files(path);
}

/* eight_lines_hold -- the pool at path holds eight_lines_tx number n. */
static void eight_lines_hold(const char *path, uint64_t n)
{
	spm_pool *p = NULL;
	assert_int_equal(spm_open(&p, path, NULL), 0);
	struct root *r = spm_root(p, sizeof(*r));
	assert_non_null(r);
	const struct line *rec = spm_ptr(p, r->recs);
	for (unsigned k = 0; k < 8; k++)
		for (unsigned w = 0; w < 8; w++)
			if (rec[k].w[w] != f(1000 + n, 8 * k + w))
				fail_msg("record line %u word %u: not transaction %llu's", k, w,
					 (unsigned long long)n);
	assert_int_equal(spm_close(p), 0);
}

/* near_overflow -- record line k of the closed clame pool at path gets the
 * home counter base - 1 - k (its content garbage until written again):
 * eight_lines_tx number k + 1 after it overflows that line's partial
 * counter, at item k + 1 of its record. */
static void near_overflow(const char *path, uint64_t base)
{
	spm_pool *p = NULL;
	assert_int_equal(spm_open(&p, path, NULL), 0);
	struct root *r = spm_root(p, sizeof(*r));
	assert_non_null(r);
	uint64_t line0 = r->recs / EMU_LINE;
	assert_int_equal(spm_close(p), 0);
	struct superblock sb;
	struct redo_regs g;
	read_log(path, &sb, &g);
	assert_int_equal(sb.ctr_layout, 0);
	for (unsigned k = 0; k < 8; k++) {
		uint64_t c = base - 1 - k;
		put_meta(path, sb.ctr_off + (line0 + k) * sizeof(uint64_t), &c, sizeof(c));
	}
}

/*
 * clame_overflow -- compact records through the runtime, a line's partial
 * counter overflowing at each item position 1..8 in turn: one more record
 * for its counter block, the content right after a reopen; then the same
 * committed, killed, and replayed by recoveries killed in the middle (the
 * full counters across the 2^18 boundary), with no pad reused.
 */
static void clame_overflow(void **state)
{
	(void)state;
	char path[4200], audit[4300];
	pool_path(path, sizeof(path), "overflow");
	snprintf(audit, sizeof(audit), "%s.audit", path);
	unlink(audit);
	assert_int_equal(setenv("SPM_AUDIT", audit, 1), 0);
	assert_int_equal(spm_close(new_pool(path, "design=clame")), 0);
	near_overflow(path, 1ull << CLAME_PARTIAL_BITS);
	spm_pool *p = NULL;
	assert_int_equal(spm_open(&p, path, NULL), 0);
	for (uint64_t n = 1; n <= 10; n++) {
		uint64_t r0 = stat_of(p, "redo.records"), e0 = stat_of(p, "redo.entries");
		assert_int_equal(eight_lines_tx(p, n), 0);
		assert_int_equal(stat_of(p, "redo.entries") - e0, 8);
		assert_int_equal(stat_of(p, "redo.records") - r0, n <= 8 ? 2 : 1);
	}
	assert_int_equal(spm_close(p), 0);
	eight_lines_hold(path, 10);
	/* again past 2 * 2^18, killed after the last commit, then replayed */
	near_overflow(path, 2ull << CLAME_PARTIAL_BITS);
	assert_killed(spawn("eight", path, "", 10, 0, "point:redo.committed:10"),
		      "killed after a commit");
	static const char *const kills[] = {"point:redo.ctr_applied:5", "point:redo.applied:9",
					    "point:redo.ctr_applied:70", "point:redo.applied:2",
					    "point:redo.ctr_applied:33"};
	for (unsigned i = 0; i < sizeof(kills) / sizeof(kills[0]); i++)
		assert_killed(spawn("open", path, "", 0, 0, kills[i]), kills[i]);
	eight_lines_hold(path, 10);
	assert_int_equal(unsetenv("SPM_AUDIT"), 0);
	unsigned records;
	assert_int_equal(audit_reused(audit, &records), 0);
	assert_true(records > 0);
	unlink(audit);
	remove_pool_files(path);
}

/*
 * damaged_log_refused -- a crashed pool's committed record naming a line
 * outside the pool's data, or registers out of order, is refused
 * (SPM_E_CORRUPT, the message says the redo log) before any file is
 * written; the intact pool then recovers.
 */
static void damaged_log_refused(void **state)
{
	const char *design = *state;
	char path[4200];
	pool_path(path, sizeof(path), design);
	struct redo_regs g0, g;
	struct superblock sb;
	crashed_pool(path, design, 2, 3, &g0);
	read_log(path, &sb, &g);
	struct pool_image crashed = {0};
	pool_save(path, &crashed);
	corrupt_header(path, design, sb.nlines + 100);
	assert_refused(path, "a record naming a line past the pool");
	pool_restore(path, &crashed);
	corrupt_header(path, design, 0);
	assert_refused(path, "a record naming a line of the data file's header");
	pool_restore(path, &crashed);
	corrupt_counter(path, design);
	assert_refused(path, "a record's counter damaged");
	pool_restore(path, &crashed);
	corrupt_header(path, design, sb.nlines + 100);
	queue_good_copy(path, design, &crashed);
	assert_refused(path, "a damaged header behind a queued copy that will not drain");
	pool_restore(path, &crashed);
	g = g0;
	g.tail = g.committed = g.head = 1ull << 62;
	set_regs(path, &g);
	assert_refused(path, "registers near 2^64");
	pool_restore(path, &crashed);
	g = g0;
	g.head = g0.committed + 1;
	set_regs(path, &g);
	assert_refused(path, "head past committed");
	pool_restore(path, &crashed);
	g = g0;
	g.committed = g0.tail + 1;
	set_regs(path, &g);
	assert_refused(path, "committed past tail");
	pool_restore(path, &crashed);
	g = g0;
	g.tail = g0.head + sb.log_lines / rec_lines_of(design) + 1;
	g.committed = g.tail;
	set_regs(path, &g);
	assert_refused(path, "more records than the ring");
	pool_restore(path, &crashed);
	assert_holds(path, 5, "the intact crashed pool");
	/* a clean pool's registers are checked too */
	read_log(path, &sb, &g);
	g.head = g.committed + 1;
	set_regs(path, &g);
	assert_refused(path, "a clean pool's head past committed");
	pool_image_free(&crashed);
	remove_pool_files(path);
}

/* killed_check -- a fresh pool of design; a child opened with opts runs 3
 * plain transactions (PLAIN_ENTRIES lines each) and is killed at crash; a
 * reopen checked (check: NULL if consistent with count in [lo, hi]). */
static const char *killed_check(const char *path, const char *design, const char *opts,
				const char *crash, uint64_t lo, uint64_t hi, uint64_t *k)
{
	char create[64];
	snprintf(create, sizeof(create), "design=%s", design);
	assert_int_equal(spm_close(new_pool(path, create)), 0);
	int st = spawn("run", path, opts, 3, 0, crash);
	if (crash)
		assert_killed(st, crash);
	else
		assert_int_equal(st, 0);
	return check(path, lo, hi, k);
}

/*
 * early_apply_caught -- the negative control: with redo_early_apply=1 the
 * controller applies a transaction's records in place before its commit
 * record.  Killed in between, the pool holds part of the transaction, and
 * the check that passes when the correct design is killed at the same
 * moment (logged, not committed) fails.  The kill is at the first in-place
 * write of the first transaction after an open (nothing committed is left
 * to replay), or in the middle of the third (the replay of the first two,
 * still in the log, rewrites the root and their lines, not the third's
 * fifth line).  Without SPM_TEST_KNOBS the knob is refused.
 */
static void early_apply_caught(void **state)
{
	(void)state;
	char path[4200], mid[64];
	pool_path(path, sizeof(path), "early");
	snprintf(mid, sizeof(mid), "point:redo.applied:%u", 2 * PLAIN_ENTRIES + 5);
	for (unsigned d = 0; d < NDESIGNS; d++) {
		const char *ds = designs[d], *bad;
		uint64_t k;
		/* the correct design, killed between the log and the commit record */
		bad = killed_check(path, ds, "", "point:redo.logged:1", 0, 0, &k);
		if (bad)
			fail_msg("%s: the control (first transaction) fails: %s", ds, bad);
		bad = killed_check(path, ds, "", "point:redo.logged:3", 2, 2, &k);
		if (bad)
			fail_msg("%s: the control (third transaction) fails: %s", ds, bad);
		/* the knob alone breaks nothing */
		bad = killed_check(path, ds, "redo_early_apply=1", NULL, 3, 3, &k);
		if (bad)
			fail_msg("%s: redo_early_apply=1 without a kill: %s", ds, bad);
		/* killed after an in-place write, before the commit record */
		static const char *const where[2] = {"first transaction", "third transaction"};
		const char *crash[2] = {"point:redo.applied:1", mid};
		const uint64_t lo[2] = {0, 2};
		for (unsigned c = 0; c < 2; c++) {
			const char *knob = "redo_early_apply=1";
			bad = killed_check(path, ds, knob, crash[c], lo[c], lo[c] + 1, &k);
			if (!bad)
				fail_msg("%s with %s, killed in the %s before its commit "
					 "record: a consistent pool (count %llu); the check "
					 "cannot tell", ds, knob, where[c], (unsigned long long)k);
			print_message("%s, redo_early_apply=1, killed in the %s: %s\n", ds,
				      where[c], bad ? bad : "");
		}
	}
	/* a test knob: refused without SPM_TEST_KNOBS=1 */
	remove_pool_files(path);
	spm_pool *p = NULL;
	assert_int_equal(unsetenv("SPM_TEST_KNOBS"), 0);
	int rc = spm_create(&p, path, POOL_SIZE, "design=lame;redo_early_apply=1");
	char msg[512];
	snprintf(msg, sizeof(msg), "%s", spm_errormsg());
	int exists = access(path, F_OK) == 0;
	assert_int_equal(setenv("SPM_TEST_KNOBS", "1", 1), 0);
	if (rc == 0)
		spm_close(p);
	assert_int_equal(rc, SPM_E_OPTION);
	assert_non_null(strstr(msg, "redo_early_apply"));
	assert_false(exists);
	/* and the same at open */
	assert_int_equal(spm_close(new_pool(path, "design=lame")), 0);
	assert_int_equal(unsetenv("SPM_TEST_KNOBS"), 0);
	rc = spm_open(&p, path, "redo_early_apply=1");
	assert_int_equal(setenv("SPM_TEST_KNOBS", "1", 1), 0);
	if (rc == 0)
		spm_close(p);
	assert_int_equal(rc, SPM_E_OPTION);
	remove_pool_files(path);
}

/* -------------------------------------------------------------------- main */

#define PER_DESIGN(fn) \
	{#fn "_srl", fn, NULL, NULL, "srl"}, {#fn "_lame", fn, NULL, NULL, "lame"}, \
	{#fn "_clame", fn, NULL, NULL, "clame"}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--child"))
		return child_main(argc, argv);
	ssize_t n = readlink("/proc/self/exe", self_exe, sizeof(self_exe) - 1);
	if (n <= 0)
		return 1;
	self_exe[n] = '\0';
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(clame_header_round_trip),
		cmocka_unit_test(plan_clame_overflow),
		cmocka_unit_test(plan_eight_per_record),
		cmocka_unit_test(clame_full_counter),
		cmocka_unit_test(options),
		PER_DESIGN(commit_and_reopen),
		PER_DESIGN(abort_restores),
		PER_DESIGN(held_lines_crash),
		PER_DESIGN(tiny_log),
		PER_DESIGN(ring_wraps),
		PER_DESIGN(replay_idempotent),
		PER_DESIGN(applied_then_killed),
		PER_DESIGN(interrupted_commit),
		cmocka_unit_test(clame_overflow),
		PER_DESIGN(damaged_log_refused),
		cmocka_unit_test(early_apply_caught),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
