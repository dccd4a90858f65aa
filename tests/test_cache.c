/*
 * test_cache.c -- the execution-driven core model (emu/cache.c, emu/read.c):
 * L1, private L2 and shared LLC hits and misses on known patterns and their
 * LRU order; write-back of dirty lines leaving the LLC through the
 * controller's write path, nothing for clean ones, and lines cleaned by a
 * flush in every cache; the latency of a memory read (tRCD + tCL, a counter
 * cache miss, serialized decryption of the co-located design, none for
 * plain; reads before queued writes); determinism; the model off; accesses
 * outside every pool; the LLC shared by the cores.  Pools use tiny caches
 * (l1_kib=1: 2 sets of 8 ways; llc_kib=4: 8 sets of 8 ways) so that set
 * conflicts are easy to make.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "emu_internal.h"
#include "pool_internal.h"
#include "test_files.h"

/* Lines well inside the heap of a 4 MiB pool (its first MiB is the
 * headers and the transaction lanes); each test takes its own, multiples of
 * 8 (the first line of a counter line of the mono layout). */
#define POOL_SIZE (4u << 20)
#define BASE 40000u

/* The sca profile's memory timing, ns (SCA Table 2). */
#define T_RCD 48u
#define T_CL 15u
#define T_AES 40u

static void pool_path(char *buf, size_t n, const char *tag)
{
	const char *dir = getenv("SPM_TEST_DIR");
	snprintf(buf, n, "%s/cache-%ld-%s", dir && *dir ? dir : "/tmp", (long)getpid(), tag);
}

/* A pool and its file name. */
struct tp {
	spm_pool *p;
	struct emu *e;
	char path[4096];
};

/* tp_new -- a fresh pool with opts whose accesses are modeled (unless
 * modeled is 0), statistics and clocks zeroed. */
static void tp_new(struct tp *t, const char *tag, const char *opts, int modeled)
{
	pool_path(t->path, sizeof(t->path), tag);
	t->p = fresh_pool(t->path, POOL_SIZE, opts);
	t->e = t->p->emu;
	assert_non_null(t->e);
	assert_int_equal(emu_models_accesses(t->e), modeled);
	spm_stat_reset(t->p);
}

static void tp_done(struct tp *t)
{
	assert_int_equal(spm_close(t->p), 0);
	remove_pool_files(t->path);
	t->p = NULL;
	t->e = NULL;
}

static uint64_t stat_of(const struct tp *t, const char *name)
{
	uint64_t v = 0;
	assert_int_equal(spm_stat(t->p, name, &v), 0);
	return v;
}

/* clock_ps -- core's modeled clock, in ps (exact: time.coreN_ns rounds down). */
static uint64_t clock_ps(const struct tp *t, unsigned core)
{
	return t->e->tm.clock[core];
}

/* outside_n -- n accesses of core outside every pool. */
static void outside_n(const struct tp *t, unsigned core, uint64_t n)
{
	emu_access_pending(t->e, core, n, 0, 0, UINT64_MAX);
}

static void load(const struct tp *t, unsigned core, uint64_t line)
{
	emu_access(t->e, core, line, 1, 0, 1);
}

static void store(const struct tp *t, unsigned core, uint64_t line)
{
	emu_access(t->e, core, line, 1, 1, 1);
}

/* The statistics a test follows, as one snapshot. */
struct snap {
	uint64_t l1h, l1m, l2h, l2m, llch, llcm, wb, reads, read_ns, mreads, mwrites, cwrites,
		cch, ccm, pads, acc, loads, stores;
};

static struct snap snap_of(const struct tp *t)
{
	struct snap s = {
		stat_of(t, "l1.hits"),	      stat_of(t, "l1.misses"),
		stat_of(t, "l2.hits"),	      stat_of(t, "l2.misses"),
		stat_of(t, "llc.hits"),	      stat_of(t, "llc.misses"),
		stat_of(t, "llc.writebacks"), stat_of(t, "mem.reads"),
		stat_of(t, "mem.read_ns"),    stat_of(t, "media.reads"),
		stat_of(t, "media.writes"),   stat_of(t, "ctrl.writes"),
		stat_of(t, "ctr_cache.hits"), stat_of(t, "ctr_cache.misses"),
		stat_of(t, "aes.pads"),	      stat_of(t, "core.accesses"),
		stat_of(t, "core.loads"),     stat_of(t, "core.stores"),
	};
	return s;
}

/* --------------------------------------------------------------- hits */

/* level_has -- does cache level lv hold line?  Its way in *idx. */
static int level_has(const struct cache_level *lv, uint64_t line, size_t *idx)
{
	for (size_t i = 0; i < (size_t)lv->sets * lv->ways; i++)
		if (lv->tag[i] == line + 1) {
			*idx = i;
			return 1;
		}
	return 0;
}

/* A first load misses L1 and the LLC and reads memory once; a second hits
 * L1; nine lines of one L1 set evict the least recently used, which then
 * misses L1 and hits the LLC; touching the oldest before the ninth evicts
 * the next oldest instead; an LLC hit renews the line's place in the LLC. */
static void hits_and_misses(void **state)
{
	(void)state;
	struct tp t;
	tp_new(&t, "hits", "design=sca;l1_kib=1;llc_kib=4", 1);
	assert_int_equal(t.e->cm->llc.sets, 8);
	assert_int_equal(t.e->cm->llc.ways, 8);

	const uint64_t a = BASE;
	load(&t, 0, a);
	assert_non_null(t.e->cm->core[0]);
	assert_int_equal(t.e->cm->core[0]->l1.sets, 2);
	assert_int_equal(t.e->cm->core[0]->l1.ways, 8);
	struct snap s = snap_of(&t);
	assert_int_equal(s.acc, 1);
	assert_int_equal(s.loads, 1);
	assert_int_equal(s.stores, 0);
	assert_int_equal(s.l1m, 1);
	assert_int_equal(s.l1h, 0);
	assert_int_equal(s.llcm, 1);
	assert_int_equal(s.llch, 0);
	assert_int_equal(s.reads, 1);
	load(&t, 0, a);
	s = snap_of(&t);
	assert_int_equal(s.l1h, 1);
	assert_int_equal(s.l1m, 1);
	assert_int_equal(s.llcm, 1);
	assert_int_equal(s.reads, 1);

	/* 9 lines of L1 set 0 (stride 2): the first is evicted from L1 only */
	const uint64_t b = BASE + 64;
	for (unsigned k = 0; k < 9; k++)
		load(&t, 0, b + 2 * k);
	struct snap s0 = snap_of(&t);
	assert_int_equal(s0.l1m - s.l1m, 9);
	assert_int_equal(s0.reads - s.reads, 9);
	load(&t, 0, b);
	s = snap_of(&t);
	assert_int_equal(s.l1m - s0.l1m, 1);
	assert_int_equal(s.l1h - s0.l1h, 0);
	assert_int_equal(s.llch - s0.llch, 1);
	assert_int_equal(s.reads - s0.reads, 0);

	/* LRU: the oldest touched before the 9th, the second oldest goes */
	const uint64_t c = BASE + 128;
	for (unsigned k = 0; k < 8; k++)
		load(&t, 0, c + 2 * k);
	s0 = snap_of(&t);
	load(&t, 0, c);
	s = snap_of(&t);
	assert_int_equal(s.l1h - s0.l1h, 1);
	load(&t, 0, c + 16);
	s0 = snap_of(&t);
	load(&t, 0, c); /* kept */
	s = snap_of(&t);
	assert_int_equal(s.l1h - s0.l1h, 1);
	assert_int_equal(s.l1m - s0.l1m, 0);
	load(&t, 0, c + 2); /* evicted from L1, in the LLC */
	s0 = snap_of(&t);
	assert_int_equal(s0.l1m - s.l1m, 1);
	assert_int_equal(s0.llch - s.llch, 1);
	assert_int_equal(s0.reads - s.reads, 0);
	/* the other set's lines never disturbed set 0 */
	load(&t, 0, c + 1);
	s = snap_of(&t);
	assert_int_equal(s.l1m - s0.l1m, 1);
	assert_int_equal(s.llcm - s0.llcm, 1);

	/* LRU in the LLC: an LLC hit makes the line the newest of its set.
	 * d + 8k share an L1 set and an LLC set; d + 2 only the L1 set. */
	const uint64_t d = BASE + 256;
	for (unsigned k = 0; k < 8; k++)
		load(&t, 0, d + 8 * k); /* both sets full, d the oldest in each */
	load(&t, 0, d + 2);	/* d leaves L1 only */
	s0 = snap_of(&t);
	load(&t, 0, d); /* an LLC hit; d + 8 leaves L1 */
	s = snap_of(&t);
	assert_int_equal(s.llch - s0.llch, 1);
	load(&t, 0, d + 64); /* the LLC's oldest goes: d + 8, not d */
	s0 = snap_of(&t);
	load(&t, 0, d + 8);
	s = snap_of(&t);
	assert_int_equal(s.l1m - s0.l1m, 1);
	assert_int_equal(s.llcm - s0.llcm, 1);
	assert_int_equal(s.reads - s0.reads, 1);
	tp_done(&t);
}

/* With a private L2 (supermem: L2 2 KiB, 4 sets): a first load misses all
 * three levels; evicted from L1 it hits L2, at L2's latency (15 cycles at
 * 2 GHz) beyond the access cost, the LLC untouched. */
static void l2_hits(void **state)
{
	(void)state;
	struct tp t;
	tp_new(&t, "l2", "design=supermem;l1_kib=1;l2_kib=2;llc_kib=8;access_ns=1", 1);
	const uint64_t a = BASE;
	load(&t, 0, a);
	assert_int_equal(t.e->cm->core[0]->depth, 3);
	assert_int_equal(t.e->cm->core[0]->l2.sets, 4);
	struct snap s = snap_of(&t);
	assert_int_equal(s.l1m, 1);
	assert_int_equal(s.l2m, 1);
	assert_int_equal(s.llcm, 1);
	assert_int_equal(s.reads, 1);
	for (unsigned k = 1; k <= 8; k++) /* L1 set 0; L2 sets 0 and 2, 5 and 4 lines */
		load(&t, 0, a + 2 * k);
	struct snap s0 = snap_of(&t);
	uint64_t c0 = clock_ps(&t, 0);
	load(&t, 0, a);
	s = snap_of(&t);
	assert_int_equal(s.l1m - s0.l1m, 1);
	assert_int_equal(s.l2h - s0.l2h, 1);
	assert_int_equal(s.l2m - s0.l2m, 0);
	assert_int_equal(s.llch - s0.llch, 0);
	assert_int_equal(s.llcm - s0.llcm, 0);
	assert_int_equal(s.reads - s0.reads, 0);
	assert_int_equal(clock_ps(&t, 0) - c0, 1000 + 7500);
	tp_done(&t);
}

/* --------------------------------------------------------- write-back */

/* evict_set -- core loads n other lines of line's LLC set (8 sets: stride
 * 8; they share its L1 set too), so that line leaves every cache. */
static void evict_set(const struct tp *t, unsigned core, uint64_t line, unsigned n)
{
	for (unsigned k = 1; k <= n; k++)
		load(t, core, line + 8 * k);
}

/* A stored line leaving the LLC is written back once, through the write
 * path (media.writes); a clean line leaving writes nothing; a line flushed
 * after its store is clean everywhere, and leaves without a write-back. */
static void write_back(void **state)
{
	(void)state;
	struct tp t;
	tp_new(&t, "wb", "design=sca;l1_kib=1;llc_kib=4", 1);
	const uint64_t x = BASE;
	store(&t, 0, x);
	struct snap s = snap_of(&t);
	assert_int_equal(s.stores, 1);
	assert_int_equal(s.loads, 0);
	assert_int_equal(s.reads, 1); /* write-allocate */
	assert_int_equal(s.wb, 0);
	assert_int_equal(s.cwrites, 0);
	assert_int_equal(s.mwrites, 0);
	evict_set(&t, 0, x, 8); /* out of L1, into the LLC: still cached */
	s = snap_of(&t);
	assert_int_equal(s.wb, 0);
	assert_int_equal(s.cwrites, 0);
	/* the write-back costs the core nothing: the load whose fill evicts
	 * x stalls as long as the one before it (both miss everywhere, their
	 * counters too, and no bank is busy before the write-back) */
	uint64_t adv_prev = 0, adv_evict = 0;
	for (unsigned k = 9; k <= 24; k++) {
		uint64_t wb0 = stat_of(&t, "llc.writebacks"), c0 = clock_ps(&t, 0);
		load(&t, 0, x + 8 * k);
		uint64_t adv = clock_ps(&t, 0) - c0;
		if (stat_of(&t, "llc.writebacks") != wb0)
			adv_evict = adv;
		else if (!adv_evict)
			adv_prev = adv;
	}
	assert_true(adv_prev > 0);
	assert_int_equal(adv_evict, adv_prev);
	s = snap_of(&t);
	assert_int_equal(s.wb, 1);
	assert_int_equal(s.cwrites, 1);
	assert_true(s.mwrites >= 1);
	assert_true(stat_of(&t, "media.writes.data") >= 1);
	/* written back once: a load brings it back clean */
	load(&t, 0, x);
	evict_set(&t, 0, x, 24);
	struct snap s0 = snap_of(&t);
	assert_int_equal(s0.wb, 1);
	assert_int_equal(s0.mwrites, s.mwrites);

	/* a clean line: nothing written */
	const uint64_t y = BASE + 512;
	load(&t, 0, y);
	evict_set(&t, 0, y, 24);
	s = snap_of(&t);
	assert_int_equal(s.wb, s0.wb);
	assert_int_equal(s.cwrites, s0.cwrites);
	assert_int_equal(s.mwrites, s0.mwrites);

	/* stored, then flushed: clean in L1, leaves without a write-back */
	const uint64_t z = BASE + 1024;
	store(&t, 0, z);
	s0 = snap_of(&t);
	spm_flush(t.p, spm_ptr(t.p, z * 64), 64);
	s = snap_of(&t);
	assert_int_equal(s.cwrites - s0.cwrites, 1); /* the flush's write */
	evict_set(&t, 0, z, 24);
	s0 = snap_of(&t);
	assert_int_equal(s0.wb, s.wb);
	assert_int_equal(s0.cwrites, s.cwrites);
	assert_int_equal(s0.mwrites, s.mwrites);

	/* stored, out of L1 into the LLC (dirty there), persisted: clean */
	const uint64_t w = BASE + 1536;
	store(&t, 0, w);
	evict_set(&t, 0, w, 8);
	assert_int_equal(stat_of(&t, "llc.writebacks"), s0.wb);
	spm_persist(t.p, spm_ptr(t.p, w * 64), 64);
	s = snap_of(&t);
	evict_set(&t, 0, w, 24);
	s0 = snap_of(&t);
	assert_int_equal(s0.wb, s.wb);
	assert_int_equal(s0.cwrites, s.cwrites);
	tp_done(&t);
}

/* A flush cleans the line in every core's caches and in a private L2:
 * stored by two cores (one copy pushed down into its L2), flushed once by
 * core 0, then evicted everywhere: no write-back; without the flush, the
 * same pattern writes back. */
static void flush_cleans_everywhere(void **state)
{
	(void)state;
	for (unsigned flush = 0; flush < 2; flush++) {
		struct tp t;
		tp_new(&t, flush ? "clean-f" : "clean-n",
		       "design=supermem;cores=2;l1_kib=1;l2_kib=2;llc_kib=8", 1);
		const uint64_t z = BASE;
		store(&t, 0, z);
		store(&t, 1, z);
		for (unsigned k = 1; k <= 8; k++) /* core 1's copy: L1 -> its L2 */
			load(&t, 1, z + 2 * k);
		assert_int_equal(stat_of(&t, "llc.writebacks"), 0);
		if (flush)
			spm_flush(t.p, spm_ptr(t.p, z * 64), 64);
		/* LLC 8 KiB 8-way: 16 sets; L2: 4 sets; stride 16 hits all sets */
		for (unsigned c = 0; c < 2; c++)
			for (unsigned k = 1; k <= 40; k++)
				load(&t, c, z + 16 * k);
		for (unsigned k = 1; k <= 40; k++)
			load(&t, 0, z + 16 * k + 16 * 41);
		uint64_t wb = stat_of(&t, "llc.writebacks");
		if (flush)
			assert_int_equal(wb, 0);
		else
			assert_true(wb >= 1);
		tp_done(&t);
	}
}

/* ------------------------------------------------------------ latency */

/* A cold load is a memory read of at least tRCD + tCL; its counter missing
 * in the counter cache is read too (media.reads 2) and the pad is made
 * after it, so it takes longer than a read whose counter line is cached. */
static void read_latency(void **state)
{
	(void)state;
	struct tp t;
	tp_new(&t, "lat", "design=sca;l1_kib=1;llc_kib=4", 1);
	const uint64_t a = BASE;
	uint64_t c0 = clock_ps(&t, 0);
	load(&t, 0, a);
	struct snap s = snap_of(&t);
	uint64_t adv1 = clock_ps(&t, 0) - c0;
	assert_int_equal(s.reads, 1);
	assert_int_equal(s.ccm, 1);
	assert_int_equal(s.cch, 0);
	assert_int_equal(s.mreads, 2); /* the line and its counter line */
	assert_int_equal(s.pads, 1);
	const uint64_t miss_ns = s.read_ns;
	assert_true(miss_ns >= T_RCD + T_CL + T_AES); /* counter read, then the pad */
	assert_true(adv1 >= (uint64_t)(T_RCD + T_CL) * 1000);
	assert_true(stat_of(&t, "time.core0_ns") >= T_RCD + T_CL);

	/* another line of the same counter line: the counter hits */
	c0 = clock_ps(&t, 0);
	load(&t, 0, a + 1);
	struct snap s1 = snap_of(&t);
	uint64_t adv2 = clock_ps(&t, 0) - c0;
	assert_int_equal(s1.reads, 2);
	assert_int_equal(s1.ccm, 1);
	assert_int_equal(s1.cch, 1);
	assert_int_equal(s1.mreads, 3);
	const uint64_t hit_ns = s1.read_ns - s.read_ns;
	assert_true(hit_ns >= T_RCD + T_CL);
	assert_true(adv2 >= (uint64_t)(T_RCD + T_CL) * 1000);
	assert_true(miss_ns > hit_ns);
	assert_true(adv1 > adv2);
	/* an L1 hit: no read, no stall beyond the access cost */
	c0 = clock_ps(&t, 0);
	load(&t, 0, a + 1);
	assert_int_equal(stat_of(&t, "mem.reads"), 2);
	assert_int_equal(clock_ps(&t, 0) - c0, t.e->cm->access_ps);
	/* a store miss reads the line but does not stall the core */
	c0 = clock_ps(&t, 0);
	store(&t, 0, a + 2);
	assert_int_equal(stat_of(&t, "mem.reads"), 3);
	assert_int_equal(clock_ps(&t, 0) - c0, t.e->cm->access_ps);
	tp_done(&t);
}

/* Reads go before queued writes: a load of a bank busy with a row of
 * written-back lines waits only for the write in progress (and tWTR), not
 * for the row, and books nothing on the bank. */
static void read_priority(void **state)
{
	(void)state;
	struct tp t;
	tp_new(&t, "prio", "design=sca;l1_kib=1;llc_kib=4", 1);
	const uint64_t r = BASE;
	const unsigned bank = ctrl_data_bank(t.e, r);
	unsigned n = 0;
	for (uint64_t l = BASE + 4096; n < 20; l++)
		if (ctrl_data_bank(t.e, l) == bank) {
			spm_flush(t.p, spm_ptr(t.p, l * 64), 64);
			n++;
		}
	assert_int_equal(stat_of(&t, "ctrl.writes"), 20);
	emu_work(t.e, 0, 1000); /* into the row of writes */
	const struct timing *tm = &t.e->tm;
	const uint64_t busy = tm->cwd + tm->wr, free0 = tm_bank_free(tm, bank);
	assert_true(free0 > clock_ps(&t, 0) + 4 * busy);
	uint64_t ns0 = stat_of(&t, "mem.read_ns");
	load(&t, 0, r);
	assert_int_equal(stat_of(&t, "mem.reads"), 1);
	uint64_t read_ns = stat_of(&t, "mem.read_ns") - ns0;
	/* at worst: a counter lookup and read, each behind one write and
	 * tWTR, then the pad */
	uint64_t worst_ps = tm->cc_hit + busy + tm->wtr + tm->rcd + tm->cl + tm->burst + tm->aes;
	assert_true(read_ns >= T_RCD + T_CL);
	assert_true(read_ns * 1000 <= worst_ps + 1000);
	assert_int_equal(tm_bank_free(tm, bank), free0);

	/* a read arriving inside the row waits for the end of the write in
	 * progress (the row's writes take busy each from its start), tWTR,
	 * then tRCD + tCL and the burst */
	const struct tm_cal *cal = &tm->bank[bank];
	assert_true(cal->n >= 1);
	const uint64_t s0 = cal->start[0];
	assert_true(cal->write[0]);
	assert_true(cal->end[0] - s0 >= 4 * busy);
	for (unsigned w = 0; w < 3; w++) {
		uint64_t at = s0 + w * busy + busy / 3;
		assert_int_equal(tm_read_first(tm, 0, bank, at),
				 s0 + (w + 1) * busy + tm->wtr + tm->rcd + tm->cl + tm->burst);
	}
	/* before the row starts: served at once */
	assert_true(s0 >= 1000);
	assert_int_equal(tm_read_first(tm, 0, bank, s0 - 1000),
			 s0 - 1000 + tm->rcd + tm->cl + tm->burst);
	tp_done(&t);
}

/* cold_read -- a load of line BASE on a fresh pool of design, its counter
 * line warmed by a load of BASE + 1 first: the read's mem.read_ns, the
 * core's stall in ps, aes.pads and ctr_cache.hits. */
struct cold {
	uint64_t read_ns, adv, pads, cch;
};
static struct cold cold_read(const char *design)
{
	char opts[128];
	snprintf(opts, sizeof(opts), "design=%s;l1_kib=1;llc_kib=4", design);
	struct tp t;
	tp_new(&t, design, opts, 1);
	load(&t, 0, BASE + 1);
	spm_stat_reset(t.p);
	load(&t, 0, BASE);
	struct cold c = {stat_of(&t, "mem.read_ns"), clock_ps(&t, 0), stat_of(&t, "aes.pads"),
			 stat_of(&t, "ctr_cache.hits")};
	assert_int_equal(stat_of(&t, "mem.reads"), 1);
	tp_done(&t);
	return c;
}

/* Co-located without a counter cache decrypts after the read (at least
 * one AES latency more than ideal, whose counter hits and whose pad
 * overlaps the read); plain decrypts nothing. */
static void colocated_serialized(void **state)
{
	(void)state;
	struct cold ideal = cold_read("ideal"), coloc = cold_read("colocated"),
		    plain = cold_read("plain");
	assert_int_equal(ideal.cch, 1);
	assert_int_equal(ideal.pads, 1);
	assert_int_equal(coloc.pads, 1);
	assert_int_equal(plain.pads, 0);
	assert_int_equal(plain.cch, 0);
	assert_true(ideal.read_ns >= T_RCD + T_CL);
	assert_true(coloc.read_ns >= ideal.read_ns + T_AES);
	assert_true(coloc.adv >= ideal.adv + (uint64_t)T_AES * 1000);
	assert_true(plain.read_ns >= T_RCD + T_CL);
	assert_true(plain.read_ns <= ideal.read_ns);
	assert_true(plain.read_ns < coloc.read_ns);
}

/* -------------------------------------------------------- determinism */

static uint64_t rng;
static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* run_sequence -- a fixed pseudo-random mix of loads, stores (some of
 * several lines), flushes and outside accesses on two cores of a fresh
 * pool; every statistic's value into out (spm_stat_names order). */
static void run_sequence(const char *opts, uint64_t *out, size_t nout)
{
	struct tp t;
	tp_new(&t, "det", opts, 1);
	rng = 0x9e3779b97f4a7c15ull;
	for (unsigned i = 0; i < 4000; i++) {
		uint64_t r = next();
		unsigned core = (unsigned)(r & 1);
		uint64_t line = BASE + (r >> 8) % 1024;
		switch ((r >> 4) % 8) {
		case 0:
			emu_access(t.e, core, line, 1 + (r >> 40) % 4, 1, 3);
			break;
		case 1:
			store(&t, core, line);
			break;
		case 2:
			spm_flush(t.p, spm_ptr(t.p, line * 64), 64);
			break;
		case 3:
			outside_n(&t, core, 1 + (r >> 40) % 16);
			break;
		default:
			load(&t, core, line);
		}
	}
	const char *const *names = spm_stat_names();
	for (size_t i = 0; names[i]; i++) {
		assert_true(i < nout);
		assert_int_equal(spm_stat(t.p, names[i], &out[i]), 0);
	}
	assert_true(stat_of(&t, "core.accesses") > 0);
	assert_true(stat_of(&t, "llc.writebacks") > 0);
	tp_done(&t);
}

/* The same accesses on two fresh pools of one design give the same clocks
 * and statistics. */
static void determinism(void **state)
{
	(void)state;
	static const char *const opts[] = {
		"design=sca;cores=2;l1_kib=1;llc_kib=4",
		"design=supermem;cores=2;l1_kib=1;l2_kib=2;llc_kib=8",
	};
	enum { N = STAT__N + 1 + EMU_MAX_CORES + 1 };
	static uint64_t a[N], b[N];
	for (unsigned d = 0; d < 2; d++) {
		memset(a, 0, sizeof(a));
		memset(b, 0, sizeof(b));
		run_sequence(opts[d], a, N);
		run_sequence(opts[d], b, N);
		const char *const *names = spm_stat_names();
		for (size_t i = 0; names[i]; i++)
			if (a[i] != b[i])
				fail_msg("%s: %s differs: %llu then %llu", opts[d], names[i],
					 (unsigned long long)a[i], (unsigned long long)b[i]);
		assert_true(a[STAT__N + 1] > 0); /* time.core0_ns */
		assert_true(a[STAT__N + 2] > 0); /* time.core1_ns */
	}
}

/* ------------------------------------------------------- model off etc. */

/* core_model=off and timing=off: no model; emu_access and
 * emu_access_pending change nothing. */
static void model_off(void **state)
{
	(void)state;
	static const char *const opts[] = {"design=sca;core_model=off;l1_kib=1",
					   "design=sca;timing=off;l1_kib=1"};
	for (unsigned i = 0; i < 2; i++) {
		struct tp t;
		tp_new(&t, i ? "off-t" : "off-c", opts[i], 0);
		assert_null(t.e->cm);
		emu_access(t.e, 0, BASE, 4, 0, 4);
		emu_access(t.e, 0, BASE, 4, 1, 4);
		emu_access_pending(t.e, 0, 100, 5, 5, BASE);
		struct snap s = snap_of(&t);
		assert_int_equal(s.acc, 0);
		assert_int_equal(s.loads, 0);
		assert_int_equal(s.stores, 0);
		assert_int_equal(s.l1m + s.l1h + s.llcm + s.llch, 0);
		assert_int_equal(s.reads, 0);
		assert_int_equal(stat_of(&t, "time.core0_ns"), 0);
		tp_done(&t);
	}
}

/* Accesses outside every pool are core work only: n accesses, n *
 * access_ns on the core's clock (and no other core's); so are pending L1
 * hits, counted as loads, stores and L1 hits; emu_access charges its
 * count of accesses the same way, and lines outside the data area are not
 * modeled. */
static void outside(void **state)
{
	(void)state;
	struct tp t;
	tp_new(&t, "out", "design=sca;cores=4;access_ns=1", 1);
	assert_int_equal(t.e->cm->access_ps, 1000);
	outside_n(&t, 0, 1000);
	assert_int_equal(stat_of(&t, "core.accesses"), 1000);
	assert_int_equal(clock_ps(&t, 0), 1000 * 1000);
	assert_int_equal(stat_of(&t, "time.core0_ns"), 1000);
	outside_n(&t, 3, 250);
	assert_int_equal(stat_of(&t, "core.accesses"), 1250);
	assert_int_equal(stat_of(&t, "time.core3_ns"), 250);
	assert_int_equal(stat_of(&t, "time.core0_ns"), 1000);
	outside_n(&t, 0, 0);
	assert_int_equal(stat_of(&t, "core.accesses"), 1250);
	assert_int_equal(clock_ps(&t, 0), 1000 * 1000);
	assert_int_equal(stat_of(&t, "l1.misses") + stat_of(&t, "l1.hits"), 0);
	assert_int_equal(stat_of(&t, "core.loads") + stat_of(&t, "core.stores"), 0);

	/* pending L1 hits (repeats of the last line, counted by the entry
	 * points) of a line core 0's L1 holds: loads, stores and L1 hits,
	 * access cost only, and the line dirty after the stores */
	load(&t, 0, BASE);
	spm_stat_reset(t.p);
	uint64_t c0 = clock_ps(&t, 0);
	emu_access_pending(t.e, 0, 2, 3, 4, BASE);
	assert_int_equal(clock_ps(&t, 0) - c0, 9 * 1000);
	assert_int_equal(stat_of(&t, "core.accesses"), 9);
	assert_int_equal(stat_of(&t, "core.loads"), 3);
	assert_int_equal(stat_of(&t, "core.stores"), 4);
	assert_int_equal(stat_of(&t, "l1.hits"), 7);
	assert_int_equal(stat_of(&t, "l1.misses") + stat_of(&t, "mem.reads"), 0);
	size_t idx = 0;
	assert_true(level_has(&t.e->cm->core[0]->l1, BASE, &idx));
	assert_int_equal(t.e->cm->core[0]->l1.dirty[idx], 1);
	/* pending hits of a line core 1's L1 does not hold (another thread
	 * on core 1 moved it out, say): the first is a real access */
	spm_stat_reset(t.p);
	emu_access_pending(t.e, 1, 0, 2, 0, BASE + 1);
	assert_int_equal(stat_of(&t, "core.loads"), 2);
	assert_int_equal(stat_of(&t, "l1.misses"), 1);
	assert_int_equal(stat_of(&t, "l1.hits"), 1);
	assert_int_equal(stat_of(&t, "mem.reads"), 1);
	spm_stat_reset(t.p);

	/* emu_access's count of accesses: access_ns each; an L1 hit adds
	 * nothing (BASE is in core 0's L1 from above: two hits) */
	load(&t, 0, BASE);
	c0 = clock_ps(&t, 0);
	emu_access(t.e, 0, BASE, 1, 0, 5);
	assert_int_equal(clock_ps(&t, 0) - c0, 5 * 1000);
	assert_int_equal(stat_of(&t, "core.accesses"), 1 + 5);
	assert_int_equal(stat_of(&t, "core.loads"), 2);
	assert_int_equal(stat_of(&t, "l1.hits"), 2);

	/* the data header (lines below 64) and lines past the pool: access cost only */
	uint64_t loads = stat_of(&t, "core.loads"), reads = stat_of(&t, "mem.reads");
	c0 = clock_ps(&t, 0);
	emu_access(t.e, 0, 0, 64, 0, 64);
	emu_access(t.e, 0, POOL_SIZE / 64, 4, 1, 4);
	assert_int_equal(clock_ps(&t, 0) - c0, 68 * 1000);
	assert_int_equal(stat_of(&t, "core.loads"), loads);
	assert_int_equal(stat_of(&t, "core.stores"), 0);
	assert_int_equal(stat_of(&t, "mem.reads"), reads);
	tp_done(&t);
}

/* -------------------------------------------------------- multi-core */

/* The LLC is shared: a line core 0 loaded misses core 1's L1 and hits the
 * LLC (at its latency, 20 cycles at 4 GHz, beyond the access cost), with no
 * second memory read; core 0's clock does not move. */
static void shared_llc(void **state)
{
	(void)state;
	struct tp t;
	tp_new(&t, "mc", "design=sca;cores=2;l1_kib=1;llc_kib=4;access_ns=1", 1);
	const uint64_t a = BASE;
	load(&t, 0, a);
	struct snap s0 = snap_of(&t);
	assert_int_equal(s0.reads, 1);
	uint64_t c0 = clock_ps(&t, 0), c1 = clock_ps(&t, 1);
	assert_int_equal(c1, 0);
	load(&t, 1, a);
	struct snap s = snap_of(&t);
	assert_int_equal(s.l1m - s0.l1m, 1);
	assert_int_equal(s.llch - s0.llch, 1);
	assert_int_equal(s.llcm - s0.llcm, 0);
	assert_int_equal(s.reads, 1);
	assert_int_equal(clock_ps(&t, 1) - c1, 1000 + 5000);
	assert_int_equal(clock_ps(&t, 0), c0);
	/* both hit their own L1 now */
	load(&t, 0, a);
	load(&t, 1, a);
	s0 = snap_of(&t);
	assert_int_equal(s0.l1h - s.l1h, 2);
	assert_int_equal(s0.reads, 1);
	/* a line core 1 evicts from its L1 stays in core 0's */
	for (unsigned k = 1; k <= 8; k++)
		load(&t, 1, a + 2 * k);
	s = snap_of(&t);
	load(&t, 0, a);
	s0 = snap_of(&t);
	assert_int_equal(s0.l1h - s.l1h, 1);
	assert_int_equal(s0.l1m - s.l1m, 0);
	tp_done(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(hits_and_misses),
		cmocka_unit_test(l2_hits),
		cmocka_unit_test(write_back),
		cmocka_unit_test(flush_cleans_everywhere),
		cmocka_unit_test(read_latency),
		cmocka_unit_test(read_priority),
		cmocka_unit_test(colocated_serialized),
		cmocka_unit_test(determinism),
		cmocka_unit_test(model_off),
		cmocka_unit_test(outside),
		cmocka_unit_test(shared_llc),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
