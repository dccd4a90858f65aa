/*
 * channel.c -- memory channels (channels=N): the controller made N times
 * over, as a memory system with N channels has N controllers, each with
 * its own write pending queues and ADR domain.  Physical pages are
 * interleaved across the channels (page p is channel p mod N's), and a
 * page's counter lines are in its own channel: a counter line covers lines
 * of one page only (8 in the mono layout, 64 in the split one), so a
 * counter-atomic pair never spans two channels.
 *
 * A channel is a struct emu of its own -- lock, write queues over its slice
 * of the ADR region, counter cache slice (with its slice of the shadow
 * table), AES context, banks and bus, statistics -- sharing the pool's
 * media, newest counters and CounterAtomic bits, of which it touches only
 * its own pages' (the papers' profiles have one channel: no channel is
 * made and nothing here runs).  Sequence numbers step by N from each
 * channel's own first, so the ADR region's entries stay distinct and in
 * order per line; recovery runs at open, before the channels exist, and
 * drains the whole region, every channel's slice.  The one re-encryption
 * status register is held by one channel at a time (reenc.c, rsr_lock).
 *
 * A core's clock is the pool's (tm.clock of the pool's own controller); a
 * channel works on a copy while it holds its lock.  A fence waits for the
 * channels the core wrote since its last one.  With timing=off there is no
 * clock, and a fence has nothing to wait for: the write path takes one
 * channel's lock per channel written and nothing else shared.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "spm.h"
#include "emu_internal.h"
#include "wq.h"

/* A core's hot state, on a cache line of its own: the channels it wrote
 * since its last fence (bit c: channel c). */
struct chan_core {
	uint64_t written;
} __attribute__((aligned(64)));

/* chan_allowed -- the design's mechanisms are all per line or per page:
 * the redo log, the integrity tree and the dedup tables are one per pool. */
static int chan_allowed(const struct design *d)
{
	return d->logging == LOG_SW && d->integrity == INTEG_NONE && d->dedup == DEDUP_NONE;
}

/* online_channels -- profile=heap's default: a channel per online CPU. */
static unsigned online_channels(void)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	if (cpus < 1)
		return 1;
	return cpus > (long)EMU_MAX_CHANNELS ? EMU_MAX_CHANNELS : (unsigned)cpus;
}

/* slice_kib -- the size of each of n channels' slices of the pool's
 * counter cache (chan_new makes them). */
static unsigned slice_kib(const struct emu *e, unsigned n)
{
	uint64_t lines = (uint64_t)e->cc.sets * e->cc.ways / n;
	unsigned kib = (unsigned)(lines * EMU_LINE / 1024);
	return kib ? kib : 1;
}

/* chan_count -- the channels cfg asks for (profile=heap: one per online
 * CPU where the design can have more than one), checked -- the counter
 * cache's slices against its ways and the shadow table's slots (the pool's
 * slots) here, before the open's recovery writes anything. */
int chan_count(const struct emu *e, const struct emu_config *cfg, uint64_t slots,
	       unsigned *n)
{
	const int heap = strcmp(cfg->profile, "heap") == 0;
	unsigned want = cfg->channels;
	if (!want)
		want = heap && chan_allowed(e->design) ? online_channels() : 1;
	if (want > EMU_MAX_CHANNELS)
		return emu_err(SPM_E_OPTION, "channels=%u: at most %u", want, EMU_MAX_CHANNELS);
	if (want > 1 && !chan_allowed(e->design))
		return emu_err(SPM_E_OPTION, "channels=%u: design %s keeps one %s for the whole "
			       "pool: it has one channel", want, e->design->name,
			       e->design->logging != LOG_SW ? "redo log"
			       : e->design->integrity ? "integrity tree"
						      : "set of dedup tables");
	if (want > 1 && e->cm)
		return emu_err(SPM_E_OPTION, "channels=%u: the modeled caches are shared by "
			       "every channel: needs core_model=off or timing=off", want);
	if (want > 1 && e->cc.way) {
		const unsigned kib = slice_kib(e, want), ways = e->cc.ways;
		const uint64_t lines = (uint64_t)kib * 1024 / EMU_LINE;
		if (lines < ways || lines / ways * ways > slots / want)
			return emu_err(SPM_E_OPTION, "channels=%u: each channel's slice of the "
				       "counter cache (%u KiB of %u) %s", want, kib,
				       e->cc.sets * ways * (unsigned)EMU_LINE / 1024,
				       lines < ways ? "has fewer lines than ctr_cache_ways"
						    : "outgrows the shadow table");
	}
	*n = want;
	return 0;
}

static void chan_free_one(struct emu *ch);

/* chan_new -- channel c of n: a copy of the pool's controller with its own
 * lock, queues (slice c of the ADR region), counter cache and its slice of
 * the shadow table, AES context, timing and statistics. */
static int chan_new(struct emu *e, unsigned c, unsigned n, struct emu **out)
{
	struct emu *ch = aligned_alloc(64, (sizeof(*ch) + 63) & ~(size_t)63);
	if (!ch)
		return emu_err(-ENOMEM, "out of memory for channel %u", c);
	memcpy(ch, e, sizeof(*ch));
	ch->chan = NULL;
	ch->nch = 0;
	ch->chan_core = NULL;
	ch->crypto = NULL;
	memset(&ch->cc, 0, sizeof(ch->cc));
	memset(ch->stat, 0, sizeof(ch->stat));
	ch->dropped = NULL;
	ch->ndropped = 0;
	ch->made_key = ch->made_key_tmp = ch->key_path = NULL;
	ch->final_data = ch->final_meta = NULL;
	ch->lock_ready = 0;
	int rc;
	if (e->crypto && (rc = crypto_clone(e->crypto, &ch->crypto))) {
		free(ch);
		return rc;
	}
	if (e->cc.way && (rc = cc_init(&ch->cc, slice_kib(e, n), e->cc.ways))) {
		crypto_free(ch->crypto);
		free(ch);
		return rc;
	}
	uint64_t slots = e->shadow_slots / n;
	if ((uint64_t)ch->cc.sets * ch->cc.ways > slots) {
		chan_free_one(ch);
		return emu_err(SPM_E_OPTION, "channels=%u: the counter cache's slices outgrow "
			       "the shadow table", n);
	}
	ch->shadow = e->shadow + c * slots;
	ch->shadow_slots = slots;
	/* the queues: slice c of each ADR area, at most the profile's depth */
	unsigned dslice = e->qdata.cap / n, cslice = e->qctr.cap / n;
	unsigned dd = e->qdata.depth < dslice ? e->qdata.depth : dslice;
	unsigned cd = e->qctr.depth < cslice ? e->qctr.depth : cslice;
	tm_reset(&ch->tm);
	ch->tm.qdata.cap = dd;
	ch->tm.qctr.cap = cd;
	wq_attach(&ch->qdata, e->qdata.slot + (size_t)c * dslice, dslice, dd, &ch->tm.qdata);
	wq_attach(&ch->qctr, e->qctr.slot + (size_t)c * cslice, cslice, cd, &ch->tm.qctr);
	read_queue_reset(ch);
	ch->next_seq = e->next_seq + c;
	ch->seq_step = n;
	ch->rsr_lock = e->rsr_lock;
	pthread_mutex_init(&ch->lock, NULL);
	ch->lock_ready = 1;
	*out = ch;
	return 0;
}

/* chan_free_one -- a channel's own parts. */
static void chan_free_one(struct emu *ch)
{
	if (!ch)
		return;
	crypto_free(ch->crypto);
	cc_fini(&ch->cc);
	if (ch->lock_ready)
		pthread_mutex_destroy(&ch->lock);
	free(ch);
}

/* chan_attach -- the pool's n channels (nothing for one). */
int chan_attach(struct emu *e, unsigned n)
{
	if (n <= 1)
		return 0;
	/* nothing of the pool's own controller outlives it: its queues drained
	 * and its dirty counters written back (the shadow table's slots its
	 * ways used become channel 0's) */
	ctrl_drain_all(e);
	e->rsr_lock = malloc(sizeof(*e->rsr_lock));
	e->chan = calloc(n, sizeof(*e->chan));
	e->chan_core = aligned_alloc(64, sizeof(struct chan_core) * EMU_MAX_CORES);
	if (!e->rsr_lock || !e->chan || !e->chan_core) {
		free(e->rsr_lock);
		free(e->chan);
		free(e->chan_core);
		e->rsr_lock = NULL;
		e->chan = NULL;
		e->chan_core = NULL;
		return emu_err(-ENOMEM, "out of memory for %u channels", n);
	}
	pthread_mutex_init(e->rsr_lock, NULL);
	memset(e->chan_core, 0, sizeof(struct chan_core) * EMU_MAX_CORES);
	e->nch = n;
	for (unsigned c = 0; c < n; c++) {
		int rc = chan_new(e, c, n, &e->chan[c]);
		if (rc) {
			chan_free(e);
			return rc;
		}
	}
	return 0;
}

/* merge -- a channel's statistics into the pool's (at close). */
static void merge(struct emu *e, const struct emu *ch)
{
	for (unsigned i = 0; i < STAT__N; i++)
		e->stat[i] += ch->stat[i];
	e->tm.aes_ops += ch->tm.aes_ops;
	e->tm.aes_wait += ch->tm.aes_wait;
	e->tm.wn += ch->tm.wn;
	e->tm.wlat += ch->tm.wlat;
	e->tm.wpre += ch->tm.wpre;
}

/* chan_close -- every channel's dirty counters and queues to media, its
 * statistics into the pool's; then the channels are gone. */
void chan_close(struct emu *e)
{
	if (!e->chan)
		return;
	for (unsigned c = 0; c < e->nch; c++) {
		struct emu *ch = e->chan[c];
		pthread_mutex_lock(&ch->lock);
		ctrl_drain_all(ch);
		pthread_mutex_unlock(&ch->lock);
		merge(e, ch);
	}
	chan_free(e);
}

/* chan_free -- the channels freed, nothing written. */
void chan_free(struct emu *e)
{
	if (e->chan)
		for (unsigned c = 0; c < e->nch; c++)
			chan_free_one(e->chan[c]);
	free(e->chan);
	free(e->chan_core);
	if (e->rsr_lock)
		pthread_mutex_destroy(e->rsr_lock);
	free(e->rsr_lock);
	e->chan = NULL;
	e->chan_core = NULL;
	e->rsr_lock = NULL;
	e->nch = 0;
}

/* enter -- channel ch locked for core: the core's clock is the pool's. */
static inline struct emu *enter(struct emu *e, unsigned c, unsigned core)
{
	struct emu *ch = e->chan[c];
	if (pthread_mutex_trylock(&ch->lock)) {
		/* held by a thread on another CPU for a short while: spin a
		 * little before a sleep and a wake-up in the kernel (glibc's
		 * adaptive mutex does so too, but made one thread's path
		 * slower: doc/tried.md, "Locks and threads") */
		int spins = 200;
		while (spins-- > 0 && pthread_mutex_trylock(&ch->lock))
			__builtin_ia32_pause();
		if (spins < 0)
			pthread_mutex_lock(&ch->lock);
	}
	if (!e->tm.off)
		ch->tm.clock[core] = __atomic_load_n(&e->tm.clock[core], __ATOMIC_RELAXED);
	return ch;
}

/* leave -- the core's clock back to the pool, the channel unlocked. */
static inline void leave(struct emu *e, struct emu *ch, unsigned core)
{
	if (!e->tm.off)
		__atomic_store_n(&e->tm.clock[core], ch->tm.clock[core], __ATOMIC_RELAXED);
	pthread_mutex_unlock(&ch->lock);
}

/*
 * channel_of -- the channel of page p: consecutive pages go round the
 * channels, and the higher bits of the page number are XOR-folded in (as
 * controllers hash their channel bits), so structures at a power-of-two
 * stride -- one log lane per core, 64 KiB apart -- do not all meet in one
 * channel.
 */
static inline unsigned channel_of(const struct emu *e, uint64_t page)
{
	uint64_t h = page ^ (page >> 4) ^ (page >> 8) ^ (page >> 12) ^ (page >> 16) ^
		     (page >> 20) ^ (page >> 24) ^ (page >> 28);
	return (unsigned)(e->nch & (e->nch - 1) ? h % e->nch : h & (e->nch - 1));
}

/* chan_of_line -- the channel of data line (0 with one channel). */
unsigned chan_of_line(const struct emu *e, uint64_t line)
{
	return e->chan ? channel_of(e, line / 64) : 0;
}

/* Pieces a channel takes at a time from a call's ranges. */
enum { CHAN_PIECES = 32 };

/* A call's ranges cut at page boundaries and sorted into their channels,
 * in order (a page that follows its channel's last piece extends it). */
struct pieces {
	struct emu_range r[EMU_MAX_CHANNELS][CHAN_PIECES];
	unsigned n[EMU_MAX_CHANNELS];
	uint64_t mask; /* the channels with pieces, or written since */
};

/* A channel's step over its pieces, under its lock. */
typedef void (*chan_fn)(struct emu *ch, unsigned core, const struct emu_range *r,
			unsigned n, const void *view, unsigned flags, struct prepads *pp);

static void write_fn(struct emu *ch, unsigned core, const struct emu_range *r, unsigned n,
		     const void *view, unsigned flags, struct prepads *pp)
{
	ctrl_write_ranges_locked(ch, core, r, n, view, flags & EMU_WB_CCWB, pp);
}

static void ccwb_fn(struct emu *ch, unsigned core, const struct emu_range *r, unsigned n,
		    const void *view, unsigned flags, struct prepads *pp)
{
	(void)view;
	(void)flags;
	(void)pp;
	ctrl_ctr_writeback_locked(ch, core, r, n);
}

/* flush -- channel c's pieces through fn under its lock, then none. */
static void flush(struct emu *e, struct pieces *pc, unsigned c, unsigned core, chan_fn fn,
		  const void *view, unsigned flags, struct prepads *pp)
{
	struct emu *ch = enter(e, c, core);
	fn(ch, core, pc->r[c], pc->n[c], view, flags, pp);
	leave(e, ch, core);
	pc->n[c] = 0;
}

/*
 * for_channels -- fn over the lines of ranges r[0..n-1], each channel's
 * under its lock, CHAN_PIECES pieces at a time; a channel's lines keep
 * their order, lines of different channels between two fences have none,
 * as clwbs before an sfence.  The channels written, in pc->mask.
 */
static void for_channels(struct emu *e, struct pieces *pc, unsigned core,
			 const struct emu_range *r, size_t n, chan_fn fn, const void *view,
			 unsigned flags, struct prepads *pp)
{
	memset(pc->n, 0, sizeof(pc->n[0]) * e->nch);
	pc->mask = 0;
	for (size_t i = 0; i < n; i++) {
		const uint64_t end = r[i].first + r[i].n;
		for (uint64_t a = r[i].first, b; a < end; a = b) {
			b = (a / 64 + 1) * 64 < end ? (a / 64 + 1) * 64 : end;
			unsigned c = channel_of(e, a / 64), k = pc->n[c];
			pc->mask |= 1ull << c;
			if (k && pc->r[c][k - 1].first + pc->r[c][k - 1].n == a) {
				pc->r[c][k - 1].n += b - a;
				continue;
			}
			if (k == CHAN_PIECES)
				flush(e, pc, c, core, fn, view, flags, pp);
			pc->r[c][pc->n[c]++] = (struct emu_range){a, b - a};
		}
	}
	for (uint64_t m = pc->mask; m; m &= m - 1) {
		unsigned c = (unsigned)__builtin_ctzll(m);
		if (pc->n[c])
			flush(e, pc, c, core, fn, view, flags, pp);
	}
}

/* chan_write_ranges -- emu_write_ranges over the channels: the pads of
 * its lines made first, without a lock (AES is the largest part of a
 * write-back: out of the channels' critical sections); clwb (and
 * EMU_WB_CCWB counter_cache_writeback) of each channel's lines under its
 * lock, then (EMU_WB_FENCE) a fence of the core. */
void chan_write_ranges(struct emu *e, unsigned core, const struct emu_range *r, size_t n,
		       const void *view, unsigned flags)
{
	struct pieces pc;
	struct prepads pp;
	ctrl_prepads_unlocked(e, r, n, &pp);
	for_channels(e, &pc, core, r, n, write_fn, view, flags, pp.n ? &pp : NULL);
	if (!e->tm.off)
		__atomic_fetch_or(&e->chan_core[core].written, pc.mask, __ATOMIC_RELAXED);
	if (flags & EMU_WB_FENCE)
		chan_fence(e, core);
}

/* chan_fence -- sfence: the core waits for its write-backs' acceptance in
 * every channel it wrote since its last fence (none to wait for where
 * timing is off). */
void chan_fence(struct emu *e, unsigned core)
{
	if (e->tm.off)
		return;
	uint64_t mask = __atomic_exchange_n(&e->chan_core[core].written, 0, __ATOMIC_RELAXED);
	while (mask) {
		unsigned c = (unsigned)__builtin_ctzll(mask);
		mask &= mask - 1;
		struct emu *ch = enter(e, c, core);
		ctrl_fence_locked(ch, core);
		leave(e, ch, core);
	}
}

/* chan_ctr_writeback -- counter_cache_writeback of lines [first, first+n),
 * each channel's in its channel. */
void chan_ctr_writeback(struct emu *e, unsigned core, uint64_t first, uint64_t n)
{
	struct emu_range r = {first, n};
	struct pieces pc;
	for_channels(e, &pc, core, &r, 1, ccwb_fn, NULL, 0, NULL);
	if (!e->tm.off) /* its counter writes are the next fence's to wait for */
		__atomic_fetch_or(&e->chan_core[core].written, pc.mask, __ATOMIC_RELAXED);
}

/* chan_stat_sum -- statistic i summed over the channels (negative: the
 * engine's and the write latency's counters, emu_internal.h). */
uint64_t chan_stat_sum(const struct emu *e, int i)
{
	uint64_t sum = 0;
	for (unsigned c = 0; e->chan && c < e->nch; c++) {
		struct emu *ch = e->chan[c];
		pthread_mutex_lock(&ch->lock);
		switch (i) {
		case -1: sum += ch->tm.aes_ops; break;
		case -2: sum += ch->tm.aes_wait; break;
		case -3: sum += ch->tm.wn; break;
		case -4: sum += ch->tm.wlat + ch->tm.wpre; break;
		default: sum += ch->stat[i]; break;
		}
		pthread_mutex_unlock(&ch->lock);
	}
	return sum;
}

/* chan_stat_reset -- every channel's statistics and modeled time zeroed. */
void chan_stat_reset(struct emu *e)
{
	for (unsigned c = 0; e->chan && c < e->nch; c++) {
		struct emu *ch = e->chan[c];
		pthread_mutex_lock(&ch->lock);
		memset(ch->stat, 0, sizeof(ch->stat));
		tm_reset(&ch->tm);
		read_queue_reset(ch);
		pthread_mutex_unlock(&ch->lock);
	}
	for (unsigned k = 0; e->chan_core && k < EMU_MAX_CORES; k++)
		__atomic_store_n(&e->chan_core[k].written, 0, __ATOMIC_RELAXED);
}

/* chan_settings -- what the runtime sets on the pool after it is open (the
 * eviction hold, the transaction log's lines), in every channel. */
void chan_settings(struct emu *e)
{
	for (unsigned c = 0; e->chan && c < e->nch; c++) {
		struct emu *ch = e->chan[c];
		pthread_mutex_lock(&ch->lock);
		ch->hold = e->hold;
		ch->hold_arg = e->hold_arg;
		ch->log_first = e->log_first;
		ch->log_n = e->log_n;
		pthread_mutex_unlock(&ch->lock);
	}
}
