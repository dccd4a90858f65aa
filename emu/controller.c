/*
 * controller.c -- the secure memory controller's data path (doc/design.md,
 * "Layers"; SCA section 5.2): a written-back line gets a new counter from
 * the counter cache, a pad from the AES engine, and enters the ADR write
 * queues as the design's counter-atomicity policy says.  Every step is
 * charged to the calling core's modeled clock.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "emu_internal.h"
#include "wq.h"

static inline uint64_t max64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* fold3 -- the XOR of every 3-bit group of unit (bank_of with 8 banks). */
static inline uint64_t fold3(uint64_t unit)
{
	unit ^= unit >> 48;
	unit ^= unit >> 24;
	unit ^= unit >> 12;
	unit ^= unit >> 6;
	unit ^= unit >> 3;
	return unit & 7;
}

/*
 * bank_of -- banks are interleaved every bank_lines lines of address (a
 * shift where it is a power of two: a division per write costs ~40 cycles).
 * With bank_hash the higher bits are XOR-folded into the bank index
 * (permutation-based interleaving, as memory controllers do): consecutive
 * units still go round the banks, and structures at a power-of-two stride
 * -- one log lane per core, 64 KiB apart -- no longer all meet in one bank.
 */
static inline unsigned bank_of(const struct emu *e, uint64_t addr)
{
	if (e->tm.bank_fold3) /* the profiles' 8 hashed banks: one test */
		return (unsigned)fold3(addr >> e->tm.bank_shift);
	uint64_t unit = e->tm.bank_shift >= 0 ? addr >> e->tm.bank_shift
					      : addr / e->tm.bank_lines;
	if (e->tm.bank_fold) { /* low bank_bits bits: XOR of every bank_bits-bit group */
		const unsigned b = e->tm.bank_bits;
		if (b == 3)
			unit = fold3(unit);
		else
			for (unsigned s = e->tm.bank_fold; s >= b; s /= 2)
				unit ^= unit >> s;
	}
	return (unsigned)(e->tm.bank_mask ? unit & e->tm.bank_mask : unit % e->tm.banks);
}

static inline unsigned data_bank(const struct emu *e, uint64_t line)
{
	return bank_of(e, line);
}

/* ctrl_bank_of -- the bank of any line address (redo.c: the log area). */
unsigned ctrl_bank_of(const struct emu *e, uint64_t addr)
{
	return bank_of(e, addr);
}

/* ctrl_data_bank -- the bank of a data line (reenc.c). */
unsigned ctrl_data_bank(const struct emu *e, uint64_t line)
{
	return data_bank(e, line);
}

/*
 * CTR_AREA -- the line address where the counter area begins, for the bank
 * mapping: 2^42 lines, just past the largest pool (2^48 bytes), the same for
 * every pool.  A controller's counter storage is a fixed region of the
 * physical address space; placed right after the pool's last line, every
 * counter line's bank moved with the pool's size, and so did modeled
 * results (spm-bench --ops sets the pool's size; tests/test_poolsize.c).
 */
#define CTR_AREA (1ull << 42)

/*
 * ctr_bank -- the bank of counter line cl (SuperMem 3.3, Figure 8): in the
 * counter area (CTR_AREA), interleaved like the data (interleave); all in
 * the one bank where that area begins (SingleBank: bank 0 under the
 * supermem profile's 1 GiB banks, where a pool under 1 GiB is); in the bank
 * X of the data it covers (SameBank); or in bank (X + N/2) mod N (XBank).
 * The data's bank X is that of its first line.  No bank depends on the
 * pool's size.
 */
static inline unsigned ctr_bank(const struct emu *e, uint64_t cl)
{
	unsigned n = e->tm.banks, x;
	switch (e->placement) {
	case CP_SINGLE:
		return bank_of(e, CTR_AREA);
	case CP_SAME:
		return data_bank(e, cl * e->layout->lines_per_ctr_line);
	case CP_XBANK:
		x = data_bank(e, cl * e->layout->lines_per_ctr_line);
		return (x + n / 2) % n;
	case CP_INTERLEAVE:
	default:
		return bank_of(e, CTR_AREA + cl);
	}
}

/* ctrl_ctr_bank -- ctr_bank, for redo.c. */
unsigned ctrl_ctr_bank(const struct emu *e, uint64_t cl)
{
	return ctr_bank(e, cl);
}

static inline void note_pending(struct emu *e, unsigned core, uint64_t accept)
{
	e->tm.pending[core] = max64(e->tm.pending[core], accept);
}

/*
 * enqueue_ctr -- a counter line write; ready unless it is half of a pair.
 * With counter write coalescing (SuperMem 3.4.3), a write of a counter line
 * that still waits in the queue is replaced by this newer one, which holds
 * all of its counters: the pair costs no second media write or bank time;
 * the older entry is removed once this one is ready (ctrl_coalesce).
 */
static struct wq_entry *enqueue_ctr(struct emu *e, unsigned core, uint64_t cl,
				    uint64_t at, int ready, uint64_t *accept)
{
	int stalled = 0;
	struct tm_queue *tq = e->tm.wpq_shared ? &e->tm.qdata : &e->tm.qctr;
	if (e->design->coalesce && tm_queued(&e->tm, tq, cl | TM_CTR_ADDR, at)) {
		*accept = at;
		e->stat[ST_WPQ_COALESCED]++;
	} else {
		*accept = e->tm.off ? at
				    : tm_write(&e->tm, core, tq, ctr_bank(e, cl), cl | TM_CTR_ADDR,
					       at, &stalled);
		e->stat[ST_WPQ_STALLS] += (uint64_t)stalled;
		e->stat[ST_MEDIA_WRITES]++;
		e->stat[ST_MEDIA_WRITES_COUNTER]++;
		e->stat[ST_MEDIA_BYTES] += EMU_LINE;
	}
	note_pending(e, core, *accept);
	/* the counter line is encoded straight into its slot */
	ctr_line_encode(e, cl, wq_reserve(e, &e->qctr)->payload);
	struct wq_entry *w = wq_publish(e, &e->qctr, cl, 0, ready ? WQ_READY : 0);
	emu_crash_point("wpq.ctr_enqueued");
	if (ready)
		ctrl_coalesce(e, cl, w);
	return w;
}

/*
 * ctrl_coalesce -- remove the older ready entries of counter line cl from
 * the counter queue (SuperMem 3.4.3): newest, ready, holds every counter
 * they hold.  Only ready entries go: an unready one's pair may still be
 * dropped at a crash, and the partner data entry of a removed one has its
 * own ready bit.  The queues are separate, which is the paper's flag bit.
 */
void ctrl_coalesce(struct emu *e, uint64_t cl, const struct wq_entry *newest)
{
	if (!e->design->coalesce)
		return;
	struct wq *q = &e->qctr;
	for (unsigned i = 0, at = q->head; i < q->count; i++, at = (at + 1) % q->depth) {
		struct wq_entry *w = &q->slot[at];
		if (w != newest && w->addr == cl && (w->state & WQ_READY))
			wq_remove(e, w);
	}
}

/* count_data_write -- statistics of one data (or log) line write. */
static void count_data_write(struct emu *e, uint64_t line, unsigned bytes)
{
	e->stat[ST_MEDIA_WRITES]++;
	if (line >= e->log_first && line < e->log_first + e->log_n)
		e->stat[ST_MEDIA_WRITES_LOG]++;
	else
		e->stat[ST_MEDIA_WRITES_DATA]++;
	e->stat[ST_MEDIA_BYTES] += bytes;
}

/*
 * write_direct -- a ready data entry that would be drained before the call
 * that made it returns (a range at least as long as the queue, the queue
 * drained first) is written straight home: the durable state after every
 * line is the same as through the queue, without the copy through the slot.
 */
static void write_direct(struct emu *e, uint64_t line, const uint8_t *plain,
			 const uint8_t *pad, uint64_t ctr, uint64_t aux, uint64_t flags)
{
	uint8_t *home = e->media.data + line * EMU_LINE;
	if (pad) {
		if (__builtin_expect(e->audit_fd >= 0, 0))
			audit_pad(e, line, ctr, plain);
		line_xor_stream(home, plain, pad);
	} else {
		line_stream(home, plain);
	}
	media_persist(&e->media, home, EMU_LINE);
	if ((flags & WQ_COLOC) && aux > e->ctr_home[line]) {
		e->ctr_home[line] = aux;
		media_persist(&e->media, &e->ctr_home[line], sizeof(uint64_t));
	}
	emu_crash_point("wpq.data_direct");
}

/* enqueue_data -- a data line write: plaintext XOR pad straight into the slot. */
static struct wq_entry *enqueue_data(struct emu *e, unsigned core, uint64_t line,
				     const uint8_t *plain, const uint8_t *pad,
				     uint64_t ctr, uint64_t at, uint64_t aux,
				     uint64_t flags)
{
	int stalled = 0;
	uint64_t accept = e->tm.off ? at
				    : tm_write(&e->tm, core, &e->tm.qdata, data_bank(e, line), line,
					       at, &stalled);
	e->stat[ST_WPQ_STALLS] += (uint64_t)stalled;
	count_data_write(e, line, e->design->ca == CA_COLOCATED ? EMU_LINE + 8 : EMU_LINE);
	note_pending(e, core, accept);
	if (e->direct && !(flags & (WQ_PAIRED | WQ_COLOC))) {
		write_direct(e, line, plain, pad, ctr, aux, flags);
		return NULL;
	}
	struct wq_entry *w = wq_reserve(e, &e->qdata);
	if (pad) {
		/* the pad is used: its ciphertext is now in the (ADR) media */
		wq_mark_reserved(e, w, line, ctr); /* before the audit record too */
		if (__builtin_expect(e->audit_fd >= 0, 0))
			audit_pad(e, line, ctr, plain);
		line_xor(w->payload, plain, pad);
		/* not for a page re-encryption's line: its resume encrypts the
		 * same plaintext under the same counter again, which the
		 * invariant allows (the auditor compares plaintexts; the
		 * point stays out so sweep counts compare) */
		if (!(flags & WQ_RSR))
			emu_crash_point("wpq.payload_written");
	} else {
		memcpy(w->payload, plain, EMU_LINE);
	}
	w = wq_publish(e, &e->qdata, line, aux, flags);
	emu_crash_point("wpq.data_enqueued");
	return w;
}

/* shadow_record -- Anubis-style: the way now holding cl is recorded durably. */
static void shadow_record(struct emu *e, uint64_t cl)
{
	/* recovery reads the table it left (ctrl_advance_stale) and writes
	 * only counter-atomic pairs, which leave no dirty counter: recording
	 * would overwrite a slot not yet read, whose lines would keep their
	 * lost counters */
	if (e->recovering)
		return;
	uint64_t *slot = &e->shadow[e->cc.last - e->cc.way];
	if (*slot == cl + 1)
		return;
	__atomic_store_n(slot, cl + 1, __ATOMIC_RELEASE);
	media_persist(&e->media, slot, sizeof(*slot));
	e->stat[ST_MEDIA_WRITES_META]++;
	emu_crash_point("ctr.shadow_recorded");
}

/*
 * ctr_filled -- counter line cl missed and took way (cc_access): its dirty
 * victim is written back before the way is reused, and where dirty
 * counters can be lost the way's new line is recorded in the shadow table.
 */
static inline void ctr_filled(struct emu *e, unsigned core, uint64_t cl, struct cc_way *way,
			      uint64_t victim, int victim_dirty, uint64_t t)
{
	if (victim_dirty) {
		uint64_t acc;
		e->stat[ST_CC_EVICTIONS]++;
		if (e->bmt) { /* a counter or tree line: the integrity design's policy */
			bmt_victim(e, core, victim, t);
		} else if (e->redo) { /* speculative counters go to the counter buffer */
			redo_ctr_victim(e, core, victim, t);
		} else {
			enqueue_ctr(e, core, victim, t, 1, &acc);
			emu_crash_point("ctr.evicted");
		}
	}
	e->cc.last = way;
	if (e->tracks_stale)
		shadow_record(e, cl);
}

/*
 * counter_for_write -- increment the line's counter through the counter
 * cache.  A write that misses does not stall (SCA 5.2.1) but the fetch of the
 * counter line occupies its bank; a dirty victim is written back before its
 * way is reused.  Where dirty counters can be lost at a crash, the way's new
 * line is recorded in the shadow table and a line is written back after at
 * most stop_loss increments (Osiris-style), so recovery knows which counters
 * may be stale and by how much.  Returns when the counter is known.
 */
static uint64_t counter_for_write(struct emu *e, unsigned core, uint64_t line,
				  uint64_t t, uint64_t *ctr)
{
	/* the new counter is stored (write_one) only when its data enters the
	 * queue: a counter line written before then -- an earlier line's pair,
	 * an eviction -- must not carry it while the line's data in the media
	 * is still under the old pad */
	*ctr = e->cur_ctr[line] + 1;
	if (e->design->cc == CC_NONE)
		return t; /* the counter travels with the data */
	uint64_t cl = line >> e->layout->ctr_shift, victim = 0;
	int victim_dirty;
	int dirty = e->design->ca != CA_COLOCATED && e->design->ca != CA_FULL;
	if (cc_access(&e->cc, cl, dirty, &victim, &victim_dirty) == CC_HIT) {
		e->stat[ST_CC_HITS]++;
	} else {
		struct cc_way *way = e->cc.last;
		e->stat[ST_CC_MISSES]++;
		e->stat[ST_MEDIA_READS]++;
		if (!e->tm.off)
			tm_read(&e->tm, core, ctr_bank(e, cl), t);
		ctr_filled(e, core, cl, way, victim, victim_dirty, t);
	}
	if (e->tracks_stale && e->cc.last->incs >= e->stop_loss) {
		/* written back without this write's increment (stored when its
		 * data is enqueued): the line stays dirty with that one */
		uint64_t acc;
		e->cc.last->incs = 1;
		e->stat[ST_CC_STOP_LOSS]++;
		enqueue_ctr(e, core, cl, t, 1, &acc);
	}
	return t + e->tm.cc_hit;
}

/*
 * ctrl_counter_for_read -- the counter of line for a read issued at t (read.c):
 * from the counter cache (not made dirty), or on a miss by reading its
 * counter line -- for the co-located designs with a counter cache, the
 * data line itself again, whose 72 bytes hold it (SCA 3.2.1) -- while a
 * dirty victim is written back.  Returns when the counter is known.
 */
uint64_t ctrl_counter_for_read(struct emu *e, unsigned core, uint64_t line, uint64_t t)
{
	uint64_t cl = line >> e->layout->ctr_shift, victim = 0;
	int victim_dirty;
	if (cc_access(&e->cc, cl, 0, &victim, &victim_dirty) == CC_HIT) {
		e->stat[ST_CC_HITS]++;
		return t + e->tm.cc_hit;
	}
	struct cc_way *way = e->cc.last;
	e->stat[ST_CC_MISSES]++;
	e->stat[ST_MEDIA_READS]++;
	unsigned bank;
	if (!e->redo || !redo_ctr_buffered(e, cl, &bank))
		bank = e->design->ca == CA_COLOCATED ? data_bank(e, line) : ctr_bank(e, cl);
	uint64_t done = tm_read_first(&e->tm, core, bank, t + e->tm.cc_hit);
	ctr_filled(e, core, cl, way, victim, victim_dirty, t);
	return done;
}

/*
 * hit_run -- how many of lines l, l+1, ... (at most n) counter_for_write
 * would take as hits on the counter cache's last way without a stop-loss
 * write-back or (split) a page re-encryption first: the lines of l's counter
 * line, if that line is the one the cache used last (consecutive lines share
 * it).  0: the first line takes counter_for_write.
 */
static inline unsigned hit_run(const struct emu *e, uint64_t l, unsigned n,
			       unsigned dirty)
{
	const struct cc_way *w = e->cc.last;
	unsigned shift = e->layout->ctr_shift;
	if (e->design->cc == CC_NONE || !w || w->tag != (l >> shift) + 1)
		return 0;
	uint64_t left = (((l >> shift) + 1) << shift) - l; /* lines left in the counter line */
	if (left < n)
		n = (unsigned)left;
	if (e->tracks_stale) {
		/* line j is a hit without a stop-loss write-back while
		 * w->incs + j * dirty + dirty < stop_loss */
		uint64_t incs = w->incs;
		if (incs + dirty >= e->stop_loss)
			return 0;
		if (dirty && e->stop_loss - incs - 1 < n)
			n = (unsigned)(e->stop_loss - incs - 1);
	}
	if (e->layout->id == LAYOUT_SPLIT)
		for (unsigned j = 0; j < n; j++)
			if (reenc_needed(e, l + j))
				return j;
	return n;
}

/*
 * take_hits -- the counters and times of m lines from i on (hit_run), as m
 * counter_for_write hits each followed by its pad: one issue slot, a cache
 * hit, the AES engine.  The way's LRU stamp, dirty bit and increment count
 * end as m cc_access hits leave them.
 */
static inline void take_hits(struct emu *e, unsigned core, unsigned i, unsigned m,
			     unsigned dirty, uint64_t first, uint64_t *ctrs,
			     uint64_t *t_ctr, uint64_t *t_pad)
{
	struct timing *tm = &e->tm;
	struct cc_way *w = e->cc.last;
	uint64_t clk = tm->clock[core];
	const uint64_t issue = tm->issue, hit = tm->cc_hit;
	const uint64_t *cur = e->cur_ctr + first;
	if (tm->off) /* the lean path: no engine to book (issue, hit: 0) */
		for (unsigned j = i; j < i + m; j++) {
			ctrs[j] = cur[j] + 1;
			t_ctr[j] = t_pad[j] = clk;
		}
	else
		for (unsigned j = i; j < i + m; j++) {
			ctrs[j] = cur[j] + 1;
			t_ctr[j] = clk + hit;
			clk += issue;
			t_pad[j] = tm_aes(tm, t_ctr[j]);
		}
	tm->clock[core] = clk;
	e->cc.tick += m;
	w->lru = e->cc.tick;
	w->dirty |= (uint8_t)dirty;
	w->incs += dirty * m;
	e->stat[ST_CC_HITS] += m;
}

/*
 * emu_prefetch_counters -- the host-side cost of a write-back is mostly the
 * cache miss on the line's newest counter (cur_ctr) and its CounterAtomic
 * bit; the runtime calls this when it learns which lines a transaction
 * will write (snapshot, alloc), so the miss overlaps the program's own
 * work.  Read-only, lock-free; no statistic or modeled time changes.
 */
void emu_prefetch_counters(const struct emu *e, uint64_t first, uint64_t n)
{
	if (!e->cur_ctr || first >= e->nlines || n == 0)
		return;
	if (n > e->nlines - first)
		n = e->nlines - first;
	if (n > 64)
		n = 64; /* a hint: the first lines are the ones a miss would stall */
	for (uint64_t l = first & ~7ull; l < first + n; l += 8)
		__builtin_prefetch(&e->cur_ctr[l], 0, 3);
	/* and their CounterAtomic bits (lone_run, ca_run read them) */
	__builtin_prefetch(&e->ca_bits[first / 8], 0, 3);
	__builtin_prefetch(&e->ca_bits[(first + n - 1) / 8], 0, 3);
}

/* write_ca_pair -- a counter-atomic write: data + counter, ready together. */
static void write_ca_pair(struct emu *e, unsigned core, uint64_t line,
			  const uint8_t *plain, const uint8_t *pad, uint64_t ctr,
			  uint64_t t_ctr, uint64_t t_pad)
{
	uint64_t cl = line >> e->layout->ctr_shift, ctr_acc;
	struct wq_entry *c = enqueue_ctr(e, core, cl, t_ctr, 0, &ctr_acc);
	/* the data entry is ready iff its partner is: SCA 5.2.2 step (ii) */
	struct wq_entry *d = enqueue_data(e, core, line, plain, pad, ctr,
					  max64(t_pad, ctr_acc), c->seq, WQ_PAIRED);
	e->tm.wpre += max64(t_pad, ctr_acc) - t_pad; /* mem.write_ns: the partner's wait */
	/* SCA 5.2.2: one ADR-protected update makes both entries ready; the
	 * same for SuperMem's register (3.2, Figure 7): both or neither */
	wq_set_ready(e, c);
	emu_crash_point("wpq.ready");
	wq_set_ready(e, d);
	ctrl_coalesce(e, cl, c);
	cc_clean(&e->cc, cl);
	e->stat[ST_CA_WRITES]++;
}

/* write_one -- one line through the design's policy (pad NULL: no encryption). */
static void write_one(struct emu *e, unsigned core, uint64_t line,
		      const uint8_t *plain, const uint8_t *pad, uint64_t ctr,
		      uint64_t t_ctr, uint64_t t_pad)
{
	if (pad) /* atomic: read without the lock (ctrl_prepads_unlocked) */
		__atomic_store_n(&e->cur_ctr[line], ctr, __ATOMIC_RELAXED);
	switch (e->design->ca) {
	case CA_COLOCATED:
		enqueue_data(e, core, line, plain, pad, ctr, t_pad, ctr, WQ_COLOC | WQ_READY);
		return;
	case CA_FULL:
		write_ca_pair(e, core, line, plain, pad, ctr, t_ctr, t_pad);
		return;
	case CA_SELECTIVE:
		if (emu_is_counter_atomic(e, line)) {
			write_ca_pair(e, core, line, plain, pad, ctr, t_ctr, t_pad);
			return;
		}
		/* an ordinary write: its counter stays cached */
		__attribute__((fallthrough));
	case CA_NONE:
		if (e->design->cc == CC_BATTERY) {
			/* the battery keeps the cached counter: it is durable from the
			 * moment its data entry is, modeled by carrying it in the entry
			 * (no extra media write is counted) */
			enqueue_data(e, core, line, plain, pad, ctr, t_pad, ctr,
				     WQ_COLOC | WQ_READY);
			return;
		}
		enqueue_data(e, core, line, plain, pad, ctr, t_pad, 0, WQ_READY);
		return;
	}
}

/*
 * ca_bits_until -- how many of lines l, l+1, ... (at most n) come before the
 * first whose CounterAtomic bit, XORed with flip (0: is set, 0xff: is
 * clear), is 1; the bits are read a byte (8 lines) at a time.
 */
static unsigned ca_bits_until(const struct emu *e, uint64_t l, unsigned n, uint8_t flip)
{
	for (unsigned i = 0; i < n;) {
		uint64_t li = l + i;
		unsigned bits = (unsigned)(uint8_t)(__atomic_load_n(&e->ca_bits[li / 8],
								     __ATOMIC_RELAXED) ^ flip) >>
				(li % 8);
		if (bits) {
			unsigned at = i + (unsigned)__builtin_ctz(bits);
			return at < n ? at : n;
		}
		i += 8 - (unsigned)(li % 8);
	}
	return n;
}

/*
 * lone_flags -- the state flags of the one ready data entry (no counter
 * entry) that write_one makes of a line that is not CounterAtomic, or 0
 * where every line is a counter-atomic pair.  The entry's aux is the
 * counter iff the flags have WQ_COLOC.  Follows write_one.
 */
static uint64_t lone_flags(const struct emu *e)
{
	switch (e->design->ca) {
	case CA_COLOCATED:
		return WQ_COLOC | WQ_READY;
	case CA_FULL:
		return 0;
	case CA_SELECTIVE:
	case CA_NONE:
		return e->design->cc == CC_BATTERY ? WQ_COLOC | WQ_READY : WQ_READY;
	}
	return 0;
}

/* lone_run -- how many of lines l, l+1, ... (at most n) write_one writes as
 * lone entries: all, or up to the first CounterAtomic one where the design
 * pairs those (CA_SELECTIVE). */
static unsigned lone_run(const struct emu *e, uint64_t l, unsigned n)
{
	if (e->design->ca != CA_SELECTIVE)
		return n;
	return ca_bits_until(e, l, n, 0);
}

/* Lines write_lines_locked encrypts at a time, so the most n of write_run and
 * write_pairs: their bank arrays have this size, not n (a stack frame sized
 * per call cost ~1 % of the instructions per SCA run, ~3 % per plain run). */
enum { WRITE_BATCH = 32 };

/*
 * write_run -- n lone lines of a batch (lone_run), as n calls of write_one
 * would write them: the same durable stores and crash points in the same
 * order, the first ndirect straight home (write_direct).  The run's modeled
 * writes touch only volatile state and are computed first; so are its
 * counters (volatile; no counter line is written during a run).
 */
static void write_run(struct emu *e, unsigned core, const uint64_t *line,
		      const uint64_t *ctr, const uint64_t *t_pad, unsigned n,
		      unsigned ndirect, const uint8_t *view, const uint8_t *pads,
		      uint64_t flags)
{
	uint16_t bank[WRITE_BATCH]; /* 16 bits: its stores leave the bank geometry in registers */
	uint64_t stalls = 0, in_log = 0;
	const uint64_t log_first = e->log_first, log_n = e->log_n;
	for (unsigned i = 0; i < n; i++)
		in_log += line[i] - log_first < log_n; /* as count_data_write */
	for (unsigned i = 0; !e->tm.off && i < n; i++)
		bank[i] = (uint16_t)data_bank(e, line[i]);
	if (pads) {
		uint64_t *cur = e->cur_ctr;
		for (unsigned i = 0; i < n; i++)
			__atomic_store_n(&cur[line[i]], ctr[i], __ATOMIC_RELAXED);
	}
	uint64_t accept = e->tm.off ? 0 /* the lean path: nothing waits */
			  : e->tm.qdata.any
				  ? tm_write_n_any(&e->tm, core, &e->tm.qdata, bank, line, t_pad, n,
						   &stalls)
				  : tm_write_n(&e->tm, core, &e->tm.qdata, bank, line, t_pad, n, &stalls);
	e->stat[ST_WPQ_STALLS] += stalls;
	e->stat[ST_MEDIA_WRITES] += n;
	e->stat[ST_MEDIA_WRITES_LOG] += in_log;
	e->stat[ST_MEDIA_WRITES_DATA] += n - in_log;
	e->stat[ST_MEDIA_BYTES] +=
		(uint64_t)n * (e->design->ca == CA_COLOCATED ? EMU_LINE + 8 : EMU_LINE);
	note_pending(e, core, accept);
	for (unsigned i = 0; i < ndirect; i++)
		write_direct(e, line[i], view + line[i] * EMU_LINE,
			     pads ? pads + (size_t)i * EMU_LINE : NULL, ctr[i],
			     (flags & WQ_COLOC) ? ctr[i] : 0, flags);
	if (ndirect < n)
		wq_push_data(e, &e->qdata, line + ndirect, ctr + ndirect, n - ndirect, view,
			     pads ? pads + (size_t)ndirect * EMU_LINE : NULL, flags);
}

/*
 * ca_run -- how many of lines l, l+1, ... (at most n) write_one writes as
 * counter-atomic pairs that write_pairs may batch: every line (CA_FULL) or
 * up to the first that is not CounterAtomic (CA_SELECTIVE), where counter
 * lines are not coalesced (a coalesced pair looks at the queue: write_one).
 */
static unsigned ca_run(const struct emu *e, uint64_t l, unsigned n)
{
	if (e->design->coalesce)
		return 0;
	if (e->design->ca == CA_FULL)
		return n;
	if (e->design->ca != CA_SELECTIVE)
		return 0;
	return ca_bits_until(e, l, n, 0xff);
}

/*
 * write_pairs -- n encrypted counter-atomic lines of a batch (ca_run), as n
 * calls of write_one would write them (write_ca_pair, SCA 5.2.2): the same
 * modeled writes, statistics, durable stores and crash points in the same
 * order.  The modeled writes touch only volatile state and are computed
 * first (tm_write_pairs), the queue entries then (wq_push_pairs).  No
 * counter line is coalesced; each pair's counter line is cleaned in the
 * counter cache (consecutive pairs of one counter line: once).
 */
static void write_pairs(struct emu *e, unsigned core, const uint64_t *line,
			const uint64_t *ctr, const uint64_t *t_ctr, const uint64_t *t_pad,
			unsigned n, const uint8_t *view, const uint8_t *pads)
{
	uint16_t cbank[WRITE_BATCH], dbank[WRITE_BATCH];
	uint64_t caddr[WRITE_BATCH], stalls = 0, in_log = 0;
	const uint64_t log_first = e->log_first, log_n = e->log_n;
	const unsigned shift = e->layout->ctr_shift;
	for (unsigned i = 0; i < n; i++)
		in_log += line[i] - log_first < log_n; /* as count_data_write */
	for (unsigned i = 0; !e->tm.off && i < n; i++) {
		uint64_t cl = line[i] >> shift;
		cbank[i] = (uint16_t)ctr_bank(e, cl);
		caddr[i] = cl | TM_CTR_ADDR;
		dbank[i] = (uint16_t)data_bank(e, line[i]);
	}
	struct tm_queue *tq = e->tm.wpq_shared ? &e->tm.qdata : &e->tm.qctr;
	uint64_t accept = e->tm.off ? 0 /* the lean path: nothing waits */
			  : (e->tm.qdata.any ? tm_write_pairs_any : tm_write_pairs)(
				&e->tm, core, tq, &e->tm.qdata, cbank, caddr, t_ctr, dbank, line,
				t_pad, n, &stalls);
	e->stat[ST_WPQ_STALLS] += stalls;
	e->stat[ST_MEDIA_WRITES] += 2 * (uint64_t)n;
	e->stat[ST_MEDIA_WRITES_COUNTER] += n;
	e->stat[ST_MEDIA_WRITES_LOG] += in_log;
	e->stat[ST_MEDIA_WRITES_DATA] += n - in_log;
	e->stat[ST_MEDIA_BYTES] += 2 * (uint64_t)n * EMU_LINE;
	e->stat[ST_CA_WRITES] += n;
	note_pending(e, core, accept);
	wq_push_pairs(e, line, ctr, n, view, pads);
	for (unsigned i = 0; i < n; i++)
		if (i == 0 || line[i] >> shift != line[i - 1] >> shift)
			cc_clean(&e->cc, line[i] >> shift);
}

static void ctr_writeback_ranges(struct emu *e, unsigned core, const struct emu_range *r,
				 size_t n);
static void fence_locked(struct emu *e, unsigned core);

/* crypto_fatal -- OpenSSL failed in the middle of a write-back: nothing
 * safe to do (a line half written is a crash); say why, then abort. */
static __attribute__((noreturn, cold)) void crypto_fatal(void)
{
	fprintf(stderr, "spm: %s: aborting\n", emu_errmsg());
	abort();
}

/* prepads_make -- the pads of every line of ranges r[0..n-1] under the
 * counter its next write takes, if they are few enough; else none. */
static void prepads_make(struct emu *e, const struct emu_range *r, size_t n,
			 struct prepads *pp)
{
	unsigned m = 0;
	pp->n = pp->pos = 0;
	for (size_t i = 0; i < n; i++) {
		if (r[i].n > PREPAD_MAX - m)
			return;
		for (uint64_t l = r[i].first; l < r[i].first + r[i].n; l++) {
			pp->line[m] = l;
			pp->ctr[m++] = e->cur_ctr[l] + 1;
		}
	}
	if (!crypto_line_pads_try(e->crypto, pp->line, pp->ctr, m, pp->pad))
		pp->n = m; /* else each batch makes its own (crypto_fatal if that fails) */
}

/* prepads_take -- the pads of lines first.. (k) under ctrs: those made
 * next, or (memory channels take their lines' in their own order) any made
 * for exactly these lines and counters; else NULL. */
static const uint8_t *prepads_take(struct prepads *pp, uint64_t first, const uint64_t *ctrs,
				   unsigned k)
{
	if (!pp || pp->n < k)
		return NULL;
	unsigned pos = pp->pos;
	if (pp->n - pos < k || pp->line[pos] != first)
		for (pos = 0; pos + k <= pp->n && pp->line[pos] != first; pos++)
			;
	if (pos + k > pp->n)
		return NULL;
	for (unsigned i = 0; i < k; i++)
		if (pp->line[pos + i] != first + i || pp->ctr[pos + i] != ctrs[i])
			return NULL;
	pp->pos = pos + k;
	return pp->pad + (size_t)pos * EMU_LINE;
}

/* ctrl_prepads_unlocked -- prepads_make for a caller without the lock. */
void ctrl_prepads_unlocked(struct emu *e, const struct emu_range *r, size_t n,
			   struct prepads *pp)
{
	unsigned m = 0;
	pp->n = pp->pos = 0;
	if (e->design->enc != ENC_CTR)
		return;
	for (size_t i = 0; i < n; i++) {
		if (r[i].n > PREPAD_MAX - m)
			return;
		for (uint64_t l = r[i].first; l < r[i].first + r[i].n; l++) {
			pp->line[m] = l;
			pp->ctr[m++] = __atomic_load_n(&e->cur_ctr[l], __ATOMIC_RELAXED) + 1;
		}
	}
	if (!crypto_line_pads_any_try(e->crypto, pp->line, pp->ctr, m, pp->pad))
		pp->n = m;
}

/* write_lines_locked -- clwb of n lines: encrypt in batches (or take the
 * pads pp made), enqueue each (the caller holds the lock; core is in range). */
static __attribute__((noinline, noclone)) void write_lines_locked(struct emu *e, unsigned core,
							 uint64_t first, uint64_t n,
							 const uint8_t *base, struct prepads *pp)
{
	enum { BATCH = WRITE_BATCH };
	uint64_t lines[BATCH], ctrs[BATCH], t_ctr[BATCH], t_pad[BATCH];
	uint8_t pads[BATCH * EMU_LINE];
	struct timing *tm = &e->tm;
	int enc = e->design->enc == ENC_CTR;
	uint64_t lone = lone_flags(e);
	unsigned dirty = e->design->ca != CA_COLOCATED && e->design->ca != CA_FULL;
	/* lines of a range longer than the queue would drain within this call */
	uint64_t direct_left = n > e->qdata.depth ? n - e->qdata.depth : 0;
	if (direct_left)
		wq_drain_all(e, &e->qdata);
	while (n) {
		unsigned k = n > BATCH ? BATCH : (unsigned)n;
		for (unsigned i = 0; i < k; i++)
			lines[i] = first + i;
		for (unsigned i = 0, m; i < k; i++) {
			if (enc && (m = hit_run(e, first + i, k - i, dirty))) {
				take_hits(e, core, i, m, dirty, first, ctrs, t_ctr, t_pad);
				i += m - 1;
				continue;
			}
			if (enc && reenc_needed(e, first + i)) {
				/* a minor counter overflows: the batch ends here, and
				 * the next one re-encrypts the page first */
				if (i) {
					k = i;
					break;
				}
				if (reenc_page(e, core, (first + i) / 64))
					crypto_fatal();
			}
			uint64_t t = tm->clock[core];
			tm->clock[core] += tm->issue;
			if (!enc) {
				t_ctr[i] = t_pad[i] = t;
				ctrs[i] = 0;
				continue;
			}
			t_ctr[i] = counter_for_write(e, core, lines[i], t, &ctrs[i]);
			t_pad[i] = tm->off ? t_ctr[i] : tm_aes(tm, t_ctr[i]);
		}
		e->stat[ST_CTRL_WRITES] += k;
		if (enc && !tm->off) /* mem.write_ns: the counter and the pad before the queue */
			for (unsigned i = 0; i < k; i++)
				tm->wpre += t_pad[i] - t_ctr[i] +
					    (e->design->cc != CC_NONE ? tm->cc_hit : 0);
		const uint8_t *pad = pads;
		if (enc) {
			if (!(pad = prepads_take(pp, first, ctrs, k))) {
				/* a failed call leaves its seeds, not pads, in pads */
				if (crypto_line_pads_ctl(e->crypto, lines, ctrs, k, pads))
					crypto_fatal();
				pad = pads;
			}
			e->stat[ST_AES_PADS] += k;
		}
		for (unsigned i = 0, run; i < k; i += run) {
			run = lone ? lone_run(e, lines[i], k - i) : 0;
			if (run) { /* lone entries: write_one's path, batched */
				/* a co-located counter goes home with its line through
				 * the queue: written straight home the two are two
				 * stores, and a kill between them leaves the line ahead
				 * of its counter (a pad used again) */
				unsigned nd = (lone & WQ_COLOC) ? 0
					      : direct_left < run ? (unsigned)direct_left : run;
				direct_left -= nd;
				write_run(e, core, lines + i, ctrs + i, t_pad + i, run, nd, base,
					  enc ? pad + i * EMU_LINE : NULL, lone);
				continue;
			}
			if (enc && (run = ca_run(e, lines[i], k - i))) {
				/* counter-atomic pairs: write_one's path, batched;
				 * a pair never goes straight home */
				direct_left -= direct_left < run ? direct_left : run;
				write_pairs(e, core, lines + i, ctrs + i, t_ctr + i, t_pad + i,
					    run, base, pad + i * EMU_LINE);
				continue;
			}
			e->direct = direct_left > 0;
			direct_left -= e->direct;
			write_one(e, core, lines[i], base + lines[i] * EMU_LINE,
				  enc ? pad + i * EMU_LINE : NULL, ctrs[i], t_ctr[i],
				  t_pad[i]);
			run = 1;
		}
		e->direct = 0;
		first += k;
		n -= k;
	}
}

/* write_ranges_prepadded -- write_lines_locked of n ranges in order, the
 * pads of all made at once (prepads_make); out of line: its frame is large. */
static __attribute__((noinline)) void write_ranges_prepadded(struct emu *e, unsigned core,
							     const struct emu_range *r, size_t n,
							     const uint8_t *view)
{
	struct prepads pp;
	prepads_make(e, r, n, &pp);
	for (size_t i = 0; i < n; i++)
		if (r[i].n)
			write_lines_locked(e, core, r[i].first, r[i].n, view, &pp);
}

/* write_ranges_plain -- the work of emu_write_ranges without a redo log
 * (the caller holds the lock; core is in range); inline, for the flags its
 * callers pass. */
static inline __attribute__((always_inline)) void
write_ranges_plain(struct emu *e, unsigned core, const struct emu_range *r, size_t n,
		   const void *view, unsigned flags, struct prepads *pp)
{
	if (__builtin_expect(e->cm && e->cm->nmade, 0)) /* clwb: clean in every cache */
		for (size_t i = 0; i < n; i++)
			cache_clean(e, r[i].first, r[i].n);
	if (!pp && n > 1 && e->design->enc == ENC_CTR)
		write_ranges_prepadded(e, core, r, n, view);
	else
		for (size_t i = 0; i < n; i++)
			if (r[i].n)
				write_lines_locked(e, core, r[i].first, r[i].n, view, pp);
	if (flags & EMU_WB_CCWB)
		ctr_writeback_ranges(e, core, r, n);
	if (flags & EMU_WB_FENCE)
		fence_locked(e, core);
}

/* ctrl_write_ranges_plain -- write_ranges_plain, for redo.c. */
void ctrl_write_ranges_plain(struct emu *e, unsigned core, const struct emu_range *r,
			     size_t n, const void *view, unsigned flags)
{
	write_ranges_plain(e, core, r, n, view, flags, NULL);
}

/* write_ranges_locked -- write_ranges_plain, or in the redo designs
 * redo_write_ranges (lines of open transactions wait for their commit). */
static inline __attribute__((always_inline)) void
write_ranges_locked(struct emu *e, unsigned core, const struct emu_range *r, size_t n,
		    const void *view, unsigned flags, struct prepads *pp)
{
	if (__builtin_expect(e->redo != NULL || e->bmt != NULL || e->dedup != NULL, 0)) {
		if (e->cm && e->cm->nmade)
			for (size_t i = 0; i < n; i++)
				cache_clean(e, r[i].first, r[i].n);
		if (e->bmt || e->dedup) { /* the integrity and dedup designs' own paths */
			if (e->bmt)
				bmt_write_ranges(e, core, r, n, view);
			else
				dedup_write_ranges(e, core, r, n, view);
			if (flags & EMU_WB_FENCE)
				fence_locked(e, core);
			return;
		}
		redo_write_ranges(e, core, r, n, view, flags);
		return;
	}
	write_ranges_plain(e, core, r, n, view, flags, pp);
}

/* ctrl_write_ranges_locked -- write_ranges_locked, for channel.c. */
void ctrl_write_ranges_locked(struct emu *e, unsigned core, const struct emu_range *r,
			      size_t n, const void *view, unsigned flags, struct prepads *pp)
{
	write_ranges_locked(e, core, r, n, view, flags, pp);
}

/*
 * ctrl_evict_line -- a natural eviction (cache.c): the LLC writes dirty line
 * back, its plaintext taken from view now, through the design's write path
 * (the crash semantics of any written-back line).  The core neither issues
 * nor waits for it: its clock and the writes a fence waits for are as they
 * were; the write takes its queue entry and bank time.
 */
void ctrl_evict_line(struct emu *e, unsigned core, uint64_t line, const uint8_t *view)
{
	const uint64_t clock = e->tm.clock[core], pending = e->tm.pending[core];
	if (e->hold && e->hold(e->hold_arg, line))
		return;
	if (e->redo && redo_evict_skip(e, line))
		return;
	if (e->bmt || e->dedup) {
		struct emu_range r = {line, 1};
		if (e->bmt)
			bmt_write_ranges(e, core, &r, 1, view);
		else
			dedup_write_ranges(e, core, &r, 1, view);
	} else {
		write_lines_locked(e, core, line, 1, view, NULL);
	}
	e->tm.clock[core] = clock;
	e->tm.pending[core] = pending;
}

/* emu_set_hold -- natural evictions of the lines held() names wait. */
void emu_set_hold(struct emu *e, int (*held)(const void *arg, uint64_t line),
		  const void *arg)
{
	pthread_mutex_lock(&e->lock);
	e->hold_arg = arg;
	e->hold = held;
	pthread_mutex_unlock(&e->lock);
	chan_settings(e);
}

/* emu_write_lines -- clwb of n lines, then (flags) counter_cache_writeback
 * of them and an sfence. */
void emu_write_lines(struct emu *e, unsigned core, uint64_t first, uint64_t n,
		     const void *view, unsigned flags)
{
	struct emu_range r = {first, n};
	emu_write_ranges(e, core, &r, 1, view, flags);
}

/*
 * emu_write_ranges -- clwb of the lines of n ranges in order, then (flags)
 * counter_cache_writeback of each range in order and an sfence: the same as
 * emu_write_lines of each range followed by emu_ctr_writeback of each, under
 * one hold of the lock (a transaction's commit, Figure 9 lines 13-15).
 */
void emu_write_ranges(struct emu *e, unsigned core, const struct emu_range *r, size_t n,
		      const void *view, unsigned flags)
{
	if (core >= EMU_MAX_CORES)
		core = 0;
	if (e->chan) {
		chan_write_ranges(e, core, r, n, view, flags);
	} else {
		pthread_mutex_lock(&e->lock);
		write_ranges_locked(e, core, r, n, view, flags, NULL);
		pthread_mutex_unlock(&e->lock);
	}
	if (flags & EMU_WB_FENCE)
		emu_crash_point("fence");
}

/*
 * emu_write_batches -- emu_write_ranges of each of nb batches in order: one
 * hold of the lock up to and including each fence, whose crash point comes
 * right after the lock is released (a transaction's first log entry and its
 * lane header; its modified lines and its allocations).
 */
void emu_write_batches(struct emu *e, unsigned core, const struct emu_batch *b, size_t nb,
		       const void *view)
{
	int locked = 0;
	if (core >= EMU_MAX_CORES)
		core = 0;
	if (e->chan) { /* each batch through its channels, a fence after it */
		for (size_t i = 0; i < nb; i++)
			emu_write_ranges(e, core, b[i].r, b[i].n, view, b[i].flags);
		return;
	}
	for (size_t i = 0; i < nb; i++) {
		if (!locked)
			pthread_mutex_lock(&e->lock);
		locked = 1;
		write_ranges_locked(e, core, b[i].r, b[i].n, view, b[i].flags, NULL);
		if (b[i].flags & EMU_WB_FENCE) {
			pthread_mutex_unlock(&e->lock);
			locked = 0;
			emu_crash_point("fence");
		}
	}
	if (locked)
		pthread_mutex_unlock(&e->lock);
}

/*
 * advance_line -- re-encrypt line l, as a counter-atomic pair, under a
 * counter of at least min_ctr: its content decrypted under the stored counter
 * is written again under a counter never used before.  Nothing of the line
 * may be queued (the caller drains).
 */
static int advance_line(struct emu *e, uint64_t l, uint64_t min_ctr)
{
	uint8_t plain[EMU_LINE] = {0}, pad[EMU_LINE];
	if (e->bmt) /* through the integrity design's write path */
		return bmt_advance_line(e, l, min_ctr);
	/* split counters: a counter beyond the line's minor range takes the
	 * page to a new major (every counter of the old one is then smaller):
	 * the smallest major m with m << minor_bits at least min_ctr - 1, in
	 * one re-encryption (one major at a time, a counter far ahead took an
	 * open hours, as a review found) */
	if (e->layout->id == LAYOUT_SPLIT &&
	    (min_ctr > e->cur_ctr[l] + 1 || reenc_needed(e, l))) {
		const unsigned bits = e->minor_bits;
		uint64_t major = min_ctr > 1 ? ((min_ctr - 2) >> bits) + 1 : 0;
		if (reenc_page_to(e, 0, l / 64, major))
			return -1;
		wq_drain_all(e, &e->qdata);
		wq_drain_all(e, &e->qctr);
	}
	uint64_t ctr = e->cur_ctr[l];
	if (ctr) {
		if (crypto_line_pads(e->crypto, &l, &ctr, 1, pad))
			return -1;
		for (unsigned b = 0; b < EMU_LINE; b++)
			plain[b] = e->media.data[l * EMU_LINE + b] ^ pad[b];
	}
	/* min_ctr is not stored before counter_for_write: a stop-loss
	 * write-back there would carry a counter the line's home data is not
	 * under, and a crash in the pair below would leave it durable (a
	 * review found it: stop_loss = 1 lost the line) */
	uint64_t newctr, t = counter_for_write(e, 0, l, 0, &newctr);
	if (newctr < min_ctr)
		newctr = min_ctr;
	if (crypto_line_pads(e->crypto, &l, &newctr, 1, pad))
		return -1;
	e->cur_ctr[l] = newctr;
	write_ca_pair(e, 0, l, plain, pad, newctr, t, t);
	e->stat[ST_REC_REENCRYPTED]++;
	return 0;
}

/*
 * ctrl_advance_stale -- at an unclean recovery, no counter value that may
 * have encrypted a line may encrypt it again (doc/design.md, "Security invariants"):
 *  - lines of an unready pair dropped by recovery: their pad was used for a
 *    ciphertext that reached the ADR region; advanced past that counter;
 *  - where dirty counters can be lost, every counter line the shadow table
 *    names may have lost up to stop_loss increments; its lines are advanced
 *    by stop_loss.
 * Each line is re-encrypted as a counter-atomic pair; a crash in the middle
 * is recovered again.  -1 if re-encryption failed, -2 if the ADR region
 * names a counter no write could have used (damaged).
 */
static int advance_stale(struct emu *e, uint64_t first_line);

int ctrl_advance_stale(struct emu *e)
{
	uint64_t first_line = EMU_DATA_HDR_SIZE / EMU_LINE;
	int rc = advance_stale(e, first_line);
	e->recovering = 0;
	return rc;
}

/* by_line_ctr_desc -- dropped writes by line, then the largest counter first. */
static int by_line_ctr_desc(const void *a, const void *b)
{
	const struct dropped *x = a, *y = b;
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	return x->ctr > y->ctr ? -1 : x->ctr < y->ctr;
}

/* advance_stale -- ctrl_advance_stale's work, with shadow_record off. */
static int advance_stale(struct emu *e, uint64_t first_line)
{
	e->recovering = 1;
	if (reenc_resume(e))
		return -1;
	/* the view is loaded from home next */
	wq_drain_all(e, &e->qdata);
	wq_drain_all(e, &e->qctr);
	/* by line, the largest counter first: each line is advanced once, past
	 * the largest counter any dropped write of it used (a recovery that
	 * crashed left older ones in the table; an interrupted redo commit
	 * may name a line in several records) */
	if (e->ndropped > 1) /* (none: e->dropped is NULL, which qsort may not take) */
		qsort(e->dropped, e->ndropped, sizeof(e->dropped[0]), by_line_ctr_desc);
	for (size_t i = 0; i < e->ndropped; i++) {
		uint64_t l = e->dropped[i].line, c = e->dropped[i].ctr;
		if (i > 0 && e->dropped[i - 1].line == l)
			continue;
		if (l < first_line || l >= e->nlines)
			continue;
		/* no write runs ahead of its stored counter by more than the
		 * stop-loss bound (at most 2^32, checked at open) or a page
		 * re-encryption's step: a larger lead is a damaged ADR region,
		 * which split counters would chase page re-encryption by page
		 * re-encryption */
		if (c > e->cur_ctr[l] && c - e->cur_ctr[l] > e->stop_loss + (1ull << 32))
			return -2;
		if (c >= e->cur_ctr[l] && advance_line(e, l, c + 1))
			return -1;
		wq_drain_all(e, &e->qdata);
		wq_drain_all(e, &e->qctr);
	}
	/* every dropped line is past its counter, durably: the table kept
	 * them until now (a crash above finds them again) */
	wq_dropped_done(e);
	for (uint64_t s = 0; e->tracks_stale && s < e->shadow_slots; s++) {
		if (!e->shadow[s])
			continue;
		uint64_t cl = e->shadow[s] - 1;
		uint64_t l0 = cl * e->layout->lines_per_ctr_line;
		for (uint64_t l = l0; l < l0 + e->layout->lines_per_ctr_line && l < e->nlines;
		     l++)
			if (l >= first_line &&
			    advance_line(e, l, e->cur_ctr[l] + e->stop_loss + 1))
				return -1;
		/* home is read above: nothing of these lines may still be queued */
		wq_drain_all(e, &e->qdata);
		wq_drain_all(e, &e->qctr);
	}
	if (e->tracks_stale) {
		/* the cache starts empty; so does its shadow */
		cc_invalidate_all(&e->cc);
		memset(e->shadow, 0, e->shadow_slots * sizeof(uint64_t));
		media_persist(&e->media, e->shadow, e->shadow_slots * sizeof(uint64_t));
	}
	return 0;
}

/* fence_locked -- sfence: the core waits until its write-backs are accepted. */
static void fence_locked(struct emu *e, unsigned core)
{
	e->tm.clock[core] = max64(e->tm.clock[core], e->tm.pending[core]);
	e->tm.pending[core] = 0;
}

/* ctrl_fence_locked -- fence_locked, for channel.c. */
void ctrl_fence_locked(struct emu *e, unsigned core)
{
	fence_locked(e, core);
}

/* emu_fence -- sfence. */
void emu_fence(struct emu *e, unsigned core)
{
	if (core >= EMU_MAX_CORES)
		core = 0;
	if (e->chan) {
		chan_fence(e, core);
	} else {
		pthread_mutex_lock(&e->lock);
		fence_locked(e, core);
		pthread_mutex_unlock(&e->lock);
	}
	emu_crash_point("fence");
}

/*
 * emu_work -- ns of the program's own work on core: instructions and cache
 * misses, which never reach the controller.  Write-backs already accepted
 * drain to their banks meanwhile, so work hides write latency up to the
 * point where the queues fill.
 */
void emu_work(struct emu *e, unsigned core, uint64_t ns)
{
	if (core >= EMU_MAX_CORES)
		core = 0;
	if (e->chan && e->tm.off)
		return; /* no clock to charge, and no lock to take */
	pthread_mutex_lock(&e->lock); /* with channels: the core clocks' */
	uint64_t ps = ns > UINT64_MAX / 1000 ? UINT64_MAX : ns * 1000, *clk = &e->tm.clock[core];
	uint64_t now = __atomic_load_n(clk, __ATOMIC_RELAXED);
	__atomic_store_n(clk, now > UINT64_MAX - ps ? UINT64_MAX : now + ps, /* saturating */
			 __ATOMIC_RELAXED);
	pthread_mutex_unlock(&e->lock);
}

/* emu_ctr_writeback -- counter_cache_writeback() (SCA 5.2.2, steps 9-11). */
void emu_ctr_writeback(struct emu *e, unsigned core, uint64_t first, uint64_t n)
{
	if (!e->design->honours_ccwb || n == 0)
		return;
	if (core >= EMU_MAX_CORES)
		core = 0;
	if (e->chan) {
		chan_ctr_writeback(e, core, first, n);
		return;
	}
	struct emu_range r = {first, n};
	pthread_mutex_lock(&e->lock);
	ctr_writeback_ranges(e, core, &r, 1);
	pthread_mutex_unlock(&e->lock);
}

/* ctrl_ctr_writeback_locked -- counter_cache_writeback of ranges, for channel.c. */
void ctrl_ctr_writeback_locked(struct emu *e, unsigned core, const struct emu_range *r,
			       size_t n)
{
	ctr_writeback_ranges(e, core, r, n);
}

/*
 * write_ctr_lines -- the ready write-backs of counter lines cl[0..n-1] at
 * the core's clock, as n enqueue_ctr calls make them: their modeled writes
 * touch only volatile state and are computed first, the queue entries then
 * (wq_push_ctrs), with the same durable stores and crash points in the same
 * order.  Where counter writes coalesce, each looks at the queue first:
 * enqueue_ctr one by one.
 */
static void write_ctr_lines(struct emu *e, unsigned core, const uint64_t *cl, unsigned n)
{
	const uint64_t at = e->tm.clock[core];
	e->stat[ST_CC_WRITEBACKS] += n;
	if (e->design->coalesce) {
		for (unsigned i = 0; i < n; i++) {
			uint64_t acc;
			enqueue_ctr(e, core, cl[i], at, 1, &acc);
		}
		return;
	}
	struct tm_queue *tq = e->tm.wpq_shared ? &e->tm.qdata : &e->tm.qctr;
	uint64_t accept = 0, stalls = 0;
	for (unsigned i = 0; !e->tm.off && i < n; i++) { /* the lean path: nothing waits */
		int stalled;
		accept = max64(accept, tm_write(&e->tm, core, tq, ctr_bank(e, cl[i]),
						cl[i] | TM_CTR_ADDR, at, &stalled));
		stalls += (uint64_t)stalled;
	}
	e->stat[ST_WPQ_STALLS] += stalls;
	e->stat[ST_MEDIA_WRITES] += n;
	e->stat[ST_MEDIA_WRITES_COUNTER] += n;
	e->stat[ST_MEDIA_BYTES] += (uint64_t)n * EMU_LINE;
	note_pending(e, core, accept);
	wq_push_ctrs(e, cl, n);
}

/*
 * ctr_writeback_ranges -- write back the dirty counter lines of n ranges in
 * order (counter_cache_writeback of each), a chunk of lines at a time: each
 * is cleaned in the cache, then the chunk is written (write_ctr_lines).  A
 * line cleaned is clean for the later ranges, as one range at a time.
 */
static void ctr_writeback_ranges(struct emu *e, unsigned core, const struct emu_range *r,
				 size_t n)
{
	enum { CHUNK = 64 };
	uint64_t cl[CHUNK];
	unsigned m = 0;
	if (!e->design->honours_ccwb)
		return;
	const unsigned shift = e->layout->ctr_shift;
	for (size_t i = 0; i < n; i++) {
		if (!r[i].n)
			continue;
		const uint64_t cl1 = (r[i].first + r[i].n - 1) >> shift;
		for (uint64_t c = r[i].first >> shift; c <= cl1; c++) {
			if (!cc_clean(&e->cc, c))
				continue;
			cl[m++] = c;
			if (m == CHUNK) {
				write_ctr_lines(e, core, cl, m);
				m = 0;
			}
		}
	}
	if (m)
		write_ctr_lines(e, core, cl, m);
}

/* emu_set_counter_atomic -- set the persistent CounterAtomic bits. */
void emu_set_counter_atomic(struct emu *e, uint64_t first, uint64_t n)
{
	for (uint64_t l = first; l < first + n && l < e->nlines; l++) {
		__atomic_fetch_or(&e->ca_bits[l / 8], (uint8_t)(1u << (l % 8)),
				  __ATOMIC_RELAXED);
		media_persist(&e->media, &e->ca_bits[l / 8], 1);
	}
}

/* emu_is_counter_atomic -- is line declared CounterAtomic? */
bool emu_is_counter_atomic(const struct emu *e, uint64_t line)
{
	return (__atomic_load_n(&e->ca_bits[line / 8], __ATOMIC_RELAXED) >>
		(line % 8)) & 1;
}

/* writeback_victim -- cc_flush_all callback: enqueue a dirty counter line. */
static void writeback_victim(void *arg, uint64_t cl)
{
	struct emu *e = arg;
	uint64_t acc;
	e->stat[ST_CC_WRITEBACKS]++;
	enqueue_ctr(e, 0, cl, e->tm.clock[0], 1, &acc);
}

/* ctrl_drain_all -- at a clean shutdown: counters written back, queues drained. */
void ctrl_drain_all(struct emu *e)
{
	/* the integrity designs' cached counters and tree: bmt_close */
	/* and the dedup designs' tables: dedup_close */
	if (e->design->enc == ENC_CTR && e->design->cc != CC_NONE && !e->bmt && !e->dedup)
		cc_flush_all(&e->cc, writeback_victim, e);
	wq_drain_all(e, &e->qdata);
	wq_drain_all(e, &e->qctr);
}

/* is_zero_line -- 64 zero bytes? */
static int is_zero_line(const uint8_t *p)
{
	uint64_t acc = 0;
	for (unsigned i = 0; i < EMU_LINE / 8; i++) {
		uint64_t v;
		memcpy(&v, p + i * 8, 8);
		acc |= v;
	}
	return acc == 0;
}

struct load_job {
	struct emu *e;
	uint8_t *view;
	uint64_t from, to; /* lines */
	uint64_t nread;
	int rc;
};

/*
 * populate -- fault in a range of the view in one system call (far cheaper
 * than a page fault per page); where the kernel cannot, the stores that
 * follow fault page by page.  Never emu_prefault's store per page: the
 * range's first page may be the last of another loader's range.
 */
static void populate(uint8_t *addr, uint64_t len)
{
	(void)emu_populate(addr, len);
}

/* load_range -- decrypt lines [from, to) into the view, in ECB batches. */
static void *load_range(void *arg)
{
	enum { BATCH = 64 };
	struct load_job *j = arg;
	struct emu *e = j->e;
	uint64_t lines[BATCH], ctrs[BATCH];
	uint8_t pads[BATCH * EMU_LINE];
	const uint8_t *data = e->media.data;
	int enc = e->design->enc == ENC_CTR;
	unsigned k = 0;
	enum { CHUNK = 4096 }; /* lines populated at a time: 256 KiB, still in cache */
	uint64_t populated = j->from; /* the view is faulted in below this line */
	for (uint64_t l = j->from; l <= j->to; l++) {
		if (l < j->to) {
			const uint8_t *src = data + l * EMU_LINE;
			if (!enc) {
				if (!is_zero_line(src)) {
					memcpy(j->view + l * EMU_LINE, src, EMU_LINE);
					j->nread++;
				}
				continue;
			}
			/* counter 0: never written (its media line is zero) */
			if (e->cur_ctr[l] == 0)
				continue;
			if (l >= populated) { /* only where something is decrypted */
				uint64_t c0 = l - (l - j->from) % CHUNK;
				populated = c0 + CHUNK < j->to ? c0 + CHUNK : j->to;
				populate(j->view + c0 * EMU_LINE, (populated - c0) * EMU_LINE);
			}
			lines[k] = l;
			ctrs[k++] = e->cur_ctr[l];
			if (k < BATCH)
				continue;
		}
		if (!k)
			continue;
		if ((j->rc = crypto_line_pads(e->crypto, lines, ctrs, k, pads)))
			return NULL;
		for (unsigned i = 0; i < k; i++) {
			uint64_t *dst = (uint64_t *)(j->view + lines[i] * EMU_LINE);
			const uint64_t *src = (const uint64_t *)(data + lines[i] * EMU_LINE);
			const uint64_t *pad = (const uint64_t *)(pads + i * EMU_LINE);
			for (unsigned w = 0; w < EMU_LINE / 8; w++)
				dst[w] = src[w] ^ pad[w];
		}
		j->nread += k;
		k = 0;
	}
	return NULL;
}

/*
 * emu_load_view -- the read path at open: decrypt every written line into
 * the view (read misses), split over the machine's cores for large pools.  A
 * line never written stays zero.  Modeled as reads spread over the banks
 * (no faster than the data bus moves their lines), plus serialized decryption where the counter must come with the data
 * (co-located without a cache, SCA 3.2.1).
 */
int emu_load_view(struct emu *e, void *view)
{
	enum { MAX_THREADS = 8 };
	struct load_job job[MAX_THREADS];
	pthread_t tid[MAX_THREADS];
	if (e->dedup) /* through the address mapping */
		return dedup_load_view(e, view);
	uint64_t first = EMU_DATA_HDR_SIZE / EMU_LINE, n = e->nlines - first;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned threads = n < (1u << 18) || cpus < 2 ? 1
			   : (unsigned)(cpus > MAX_THREADS ? MAX_THREADS : cpus);
	int rc = 0;
	uint64_t nread = 0;
	for (unsigned t = 0; t < threads; t++)
		job[t] = (struct load_job){e, view, first + n * t / threads,
					   first + n * (t + 1) / threads, 0, 0};
	unsigned started = 1;
	for (; started < threads; started++)
		if (pthread_create(&tid[started], NULL, load_range, &job[started]))
			break;
	load_range(&job[0]);
	for (unsigned t = 1; t < threads; t++) {
		if (t < started)
			pthread_join(tid[t], NULL);
		else
			load_range(&job[t]); /* no thread: do it here */
	}
	for (unsigned t = 0; t < threads; t++) {
		nread += job[t].nread;
		if (job[t].rc)
			rc = job[t].rc;
	}
	if (e->design->enc == ENC_CTR)
		e->stat[ST_AES_PADS] += nread;
	uint64_t per = e->layout->lines_per_ctr_line;
	uint64_t ctr_lines = e->design->enc == ENC_CTR ? (e->nlines + per - 1) / per : 0;
	e->stat[ST_MEDIA_READS] += nread + ctr_lines;
	/* the banks read in parallel, their bursts cross the one bus in turn */
	uint64_t per_read = e->tm.rcd + e->tm.cl + e->tm.burst;
	uint64_t t = max64((nread + ctr_lines) * per_read / (e->tm.banks ? e->tm.banks : 1),
			   (nread + ctr_lines) * e->tm.burst);
	if (e->design->enc == ENC_CTR && e->design->cc == CC_NONE)
		t += nread * e->tm.aes;
	e->tm.clock[0] += t;
	return rc;
}

/* ctrl_enqueue_data -- enqueue_data for the other parts of the controller. */
struct wq_entry *ctrl_enqueue_data(struct emu *e, unsigned core, uint64_t line,
				   const uint8_t *plain, const uint8_t *pad, uint64_t ctr,
				   uint64_t at, uint64_t aux, uint64_t flags)
{
	return enqueue_data(e, core, line, plain, pad, ctr, at, aux, flags);
}

/* ctrl_enqueue_ctr -- enqueue_ctr for the other parts of the controller. */
struct wq_entry *ctrl_enqueue_ctr(struct emu *e, unsigned core, uint64_t cl,
				  uint64_t at, int ready, uint64_t *accept)
{
	return enqueue_ctr(e, core, cl, at, ready, accept);
}
