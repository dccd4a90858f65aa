/*
 * bmt.c -- integrity: a data MAC per line and a Bonsai Merkle tree over the
 * counters (cc-NVM §2.2, after Rogers et al.), kept consistent across a
 * crash in the five ways cc-NVM §5 compares (doc/design.md, "Integrity").
 *
 * The data MAC of a line is over (ciphertext, counter, line address); it
 * travels in the line's write queue entry and reaches the media with it, so
 * the two are atomic under ADR (§4.4: "data HMACs are not cached").  The
 * tree's leaves are the counter lines; an inner node is a 64-byte line of
 * four 16-byte MACs, one per child (4-ary, §5); the root is the MAC of the
 * top node, kept in the persistent registers (tcb.c), never in the files.
 * Every item -- a counter line (item = its index) or a node (item = counter
 * lines + node index) -- is MACed with its item number, so no item can be
 * moved to another place in the tree.
 *
 * The controller keeps every counter (cur_ctr) and every node (node[]) in
 * volatile memory; the metadata cache (the counter cache, both kinds of
 * line) decides only hits, misses and evictions.  A node whose subtree
 * changed is stale until it is recomputed: the tree is recomputed lazily,
 * bottom-up, when a root is needed (each stale node once).
 *
 *  bmt-nocc    metadata written when a dirty line is evicted; the root at
 *              a clean close.  No crash consistency (the normalization base).
 *  sc          each write-back goes through the drain buffer with its
 *              counter line and every node of its path, atomically, and
 *              the root register is updated: one write-back, one drain.
 *  osiris      counters persisted every N updates of their line; the tree
 *              never (rebuilt at recovery); the root updated per write-back.
 *  ccnvm-nods  §4.2: dirty lines listed in the dirty address queue (M) and
 *              drained atomically (start / end, ROOT_old / ROOT_new) when
 *              it is full, a dirty line is evicted, or a counter line has
 *              had N updates; ROOT_new per write-back.
 *  ccnvm       §4.3: nodes recomputed only at a drain; N_wb counts the
 *              write-backs since the last one.
 *
 * The drain buffer (the paper's write pending queue in its blocked mode) is
 * an ADR-protected area of the meta file: entries first, the count, the
 * root register, then the end signal (one store in the ADR header), the
 * entries home, ROOT_old, and the buffer cleared.  Recovery applies a
 * buffer whose end signal is set and forgets one whose end is not (§4.2).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "spm.h"
#include "emu_internal.h"
#include "mac.h"
#include "wq.h"

#define ARITY 4u
#define MAX_LEVELS 40u
#define ROOT_ID UINT64_MAX
#define N_DEFAULT 16u
#define M_DEFAULT 64u
#define M_MAX 256u
#define DRAIN_CAP (M_MAX + MAX_LEVELS + 2u)
#define MAX_PATH (MAX_LEVELS + 1u)
#define FIRST_LINE (EMU_DATA_HDR_SIZE / EMU_LINE)

enum { KIND_CTR = 1, KIND_NODE = 2, KIND_DATA = 3 };

/* One drain buffer entry: a counter line, a node or (sc) a data line. */
struct drain_ent {
	uint64_t kind, item, ctr, pad;
	uint8_t payload[EMU_LINE];
	uint8_t mac[16];
	uint8_t pad2[16];
};
_Static_assert(sizeof(struct drain_ent) == 128, "drain entry layout");
/* The drain register, in the ADR header (ADR_BMT_OFF). */
struct drain_reg {
	uint64_t count; /* entries of the buffer being drained */
	uint64_t end;   /* 1: the end signal: the buffer goes home */
};
_Static_assert(ADR_BMT_OFF >= ADR_REDO_OFF + sizeof(struct redo_regs) &&
	       ADR_BMT_OFF + sizeof(struct drain_reg) <= ADR_HDR_SIZE, "drain register");

struct bmt {
	enum integ_policy pol;
	uint64_t nctr, nnodes, nitems;
	unsigned levels;
	uint64_t lvl_first[MAX_LEVELS], lvl_n[MAX_LEVELS];
	uint8_t *node;      /* every inner node, current (volatile) */
	uint8_t *node_home; /* the nodes in the meta file */
	uint64_t *stale;    /* items whose parent's slot is out of date */
	uint64_t *in_daq;   /* items in the dirty address queue */
	uint64_t *daq;      /* the dirty address queue (items) */
	unsigned daq_n, m, n_limit;
	uint16_t *upd;      /* a counter line's updates since it was persisted */
	struct mac *mac;
	struct tcb *tcb;
	struct tcb_regs regs;
	struct drain_reg *dreg;
	struct drain_ent *dbuf;
	uint64_t busy_until; /* a drain blocks later write-backs until then */
	uint8_t key[16];
	struct spm_tamper *out; /* spm_verify's list */
	size_t max, *found;
};

static inline uint64_t max64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

static inline int bit_get(const uint64_t *bm, uint64_t i)
{
	return (bm[i / 64] >> (i % 64)) & 1;
}

static inline void bit_set(uint64_t *bm, uint64_t i)
{
	bm[i / 64] |= 1ull << (i % 64);
}

static inline void bit_clear(uint64_t *bm, uint64_t i)
{
	bm[i / 64] &= ~(1ull << (i % 64));
}

/* ------------------------------------------------------------ geometry */

/* geometry -- levels of inner nodes over nctr leaves; their node counts. */
static unsigned geometry(uint64_t nctr, uint64_t *first, uint64_t *n, uint64_t *nnodes)
{
	unsigned levels = 0;
	uint64_t below = nctr, total = 0;
	do {
		uint64_t here = (below + ARITY - 1) / ARITY;
		if (levels < MAX_LEVELS) {
			first[levels] = total;
			n[levels] = here;
		}
		total += here;
		levels++;
		below = here;
	} while (below > 1);
	*nnodes = total;
	return levels;
}

void bmt_layout(const struct design *d, uint64_t nlines, uint64_t *mac_size,
		uint64_t *tree_size, uint64_t *drain_size)
{
	*mac_size = *tree_size = *drain_size = 0;
	if (!d->integrity)
		return;
	uint64_t first[MAX_LEVELS], n[MAX_LEVELS], nnodes;
	geometry(nlines / 8, first, n, &nnodes);
	*mac_size = (nlines * 16 + EMU_PAGE - 1) / EMU_PAGE * EMU_PAGE;
	*tree_size = (nnodes * EMU_LINE + EMU_PAGE - 1) / EMU_PAGE * EMU_PAGE;
	*drain_size = (DRAIN_CAP * sizeof(struct drain_ent) + EMU_PAGE - 1) / EMU_PAGE * EMU_PAGE;
}

/* level_of -- the level of node g. */
static unsigned level_of(const struct bmt *b, uint64_t g)
{
	unsigned k = 0;
	while (k + 1 < b->levels && g >= b->lvl_first[k + 1])
		k++;
	return k;
}

/* parent -- the item holding item's MAC; UINT64_MAX for the top node. */
static uint64_t parent(const struct bmt *b, uint64_t item)
{
	if (item < b->nctr)
		return b->nctr + b->lvl_first[0] + item / ARITY;
	uint64_t g = item - b->nctr;
	unsigned k = level_of(b, g);
	if (k + 1 == b->levels)
		return UINT64_MAX;
	return b->nctr + b->lvl_first[k + 1] + (g - b->lvl_first[k]) / ARITY;
}

/* child -- child j of node g (UINT64_MAX: none). */
static uint64_t child(const struct bmt *b, uint64_t g, unsigned j)
{
	unsigned k = level_of(b, g);
	uint64_t c = (g - b->lvl_first[k]) * ARITY + j;
	if (k == 0)
		return c < b->nctr ? c : UINT64_MAX;
	return c < b->lvl_n[k - 1] ? b->nctr + b->lvl_first[k - 1] + c : UINT64_MAX;
}

/* path -- item's path: itself, then its ancestors to the top; the length. */
static unsigned path_of(const struct bmt *b, uint64_t item, uint64_t *out)
{
	unsigned n = 0;
	for (; item != UINT64_MAX && n < MAX_PATH; item = parent(b, item))
		out[n++] = item;
	return n;
}

static inline uint64_t top_item(const struct bmt *b)
{
	return b->nctr + b->lvl_first[b->levels - 1];
}

/* ------------------------------------------------------------ the tree */

/* content -- item's current 64 bytes (volatile). */
static void content(const struct emu *e, const struct bmt *b, uint64_t item, uint8_t out[64])
{
	if (item < b->nctr)
		ctr_line_encode(e, item, out);
	else
		memcpy(out, b->node + (item - b->nctr) * EMU_LINE, EMU_LINE);
}

/* home_content -- item's 64 bytes in the media. */
static const uint8_t *home_content(const struct emu *e, const struct bmt *b, uint64_t item)
{
	if (item < b->nctr)
		return (const uint8_t *)e->ctr_home + item * EMU_LINE;
	return b->node_home + (item - b->nctr) * EMU_LINE;
}

static __attribute__((noreturn, cold)) void mac_fatal(void)
{
	fprintf(stderr, "spm: %s: aborting\n", emu_errmsg());
	abort();
}

/* item_mac -- the MAC of 64 bytes as item's. */
static void item_mac(struct emu *e, const uint8_t in[64], uint64_t item, uint8_t out[16])
{
	if (mac_node(e->bmt->mac, in, item, out))
		mac_fatal();
	e->stat[ST_MAC_COMPUTED]++;
}

/* mark_changed -- item (a counter line) changed: it and its ancestors are
 * stale (an ancestor of a stale item always is). */
static void mark_changed(struct bmt *b, uint64_t item)
{
	for (; item != UINT64_MAX && !bit_get(b->stale, item); item = parent(b, item))
		bit_set(b->stale, item);
}

/* refresh -- node g's slots of stale children recomputed (theirs first). */
static void refresh(struct emu *e, struct bmt *b, uint64_t g)
{
	uint8_t buf[EMU_LINE];
	for (unsigned j = 0; j < ARITY; j++) {
		uint64_t c = child(b, g, j);
		if (c == UINT64_MAX || !bit_get(b->stale, c))
			continue;
		if (c >= b->nctr)
			refresh(e, b, c - b->nctr);
		content(e, b, c, buf);
		item_mac(e, buf, c, b->node + g * EMU_LINE + j * 16);
		bit_clear(b->stale, c);
	}
}

/* tree_root -- the root over the current counters (stale nodes recomputed). */
static void tree_root(struct emu *e, struct bmt *b, uint8_t out[16])
{
	uint64_t top = top_item(b);
	if (bit_get(b->stale, top))
		refresh(e, b, top - b->nctr);
	bit_clear(b->stale, top);
	item_mac(e, b->node + (top - b->nctr) * EMU_LINE, ROOT_ID, out);
}

/* rebuild -- every node recomputed from the current counters; the root. */
static void rebuild(struct emu *e, struct bmt *b, uint8_t root[16])
{
	memset(b->stale, 0xff, (b->nitems + 63) / 64 * 8);
	tree_root(e, b, root);
}

/* ------------------------------------------------------------ registers */

static void regs_store(struct bmt *b)
{
	tcb_write(b->tcb, &b->regs);
}

/* regs_settle -- the registers of a tree in the media whose root is root,
 * no write-back since (as a drain leaves them), stored. */
static void regs_settle(struct bmt *b, const uint8_t root[16])
{
	memcpy(b->regs.root_old, root, 16);
	memcpy(b->regs.root_new, root, 16);
	memcpy(b->regs.root_prev, root, 16);
	b->regs.n_wb = 0;
	b->regs.inflight_line = b->regs.inflight_ctr = b->regs.inflight_step = 0;
	b->regs.draining = 0;
	regs_store(b);
}

/* ------------------------------------------------------------ modeled costs */

static inline void note_pending(struct emu *e, unsigned core, uint64_t accept)
{
	e->tm.pending[core] = max64(e->tm.pending[core], accept);
}

/* bank_of_item -- the bank of a metadata line (counter area addresses). */
static unsigned bank_of_item(const struct emu *e, uint64_t item)
{
	return ctrl_ctr_bank(e, item);
}

/* meta_write -- a metadata line's write into the (shared) write queue,
 * ready at t; its acceptance. */
static uint64_t meta_write(struct emu *e, unsigned core, uint64_t item, uint64_t t)
{
	int stalled = 0;
	struct tm_queue *q = e->tm.wpq_shared ? &e->tm.qdata : &e->tm.qctr;
	uint64_t acc = tm_write(&e->tm, core, q, bank_of_item(e, item), item | TM_CTR_ADDR, t,
				&stalled);
	e->stat[ST_WPQ_STALLS] += (uint64_t)stalled;
	e->stat[ST_MEDIA_WRITES]++;
	e->stat[ST_MEDIA_BYTES] += EMU_LINE;
	if (item < e->bmt->nctr) {
		e->stat[ST_MEDIA_WRITES_COUNTER]++;
	} else {
		e->stat[ST_MEDIA_WRITES_META]++;
		e->stat[ST_BMT_NODE_WRITES]++;
	}
	return acc;
}

/* ------------------------------------------------------------ persisting */

/* item_home -- item's current content written home (nodes refreshed). */
static void item_home(struct emu *e, struct bmt *b, uint64_t item)
{
	uint8_t *dst = (uint8_t *)home_content(e, b, item);
	if (item >= b->nctr && bit_get(b->stale, item)) {
		/* its slots first; it stays stale for its own parent */
		refresh(e, b, item - b->nctr);
	}
	content(e, b, item, dst);
	media_persist(&e->media, dst, EMU_LINE);
}

/* apply -- the drain buffer's first n entries home (idempotent). */
static void apply(struct emu *e, struct bmt *b, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		const struct drain_ent *d = &b->dbuf[i];
		uint8_t *dst;
		if (d->kind == KIND_DATA) {
			uint8_t *mac = e->mac_home + d->item * 16;
			memcpy(mac, d->mac, 16);
			media_persist(&e->media, mac, 16);
			dst = e->media.data + d->item * EMU_LINE;
		} else {
			dst = (uint8_t *)home_content(e, b, d->item);
		}
		memcpy(dst, d->payload, EMU_LINE);
		media_persist(&e->media, dst, EMU_LINE);
	}
}

static void dreg_store(struct emu *e, uint64_t *word, uint64_t v)
{
	__atomic_store_n(word, v, __ATOMIC_RELEASE);
	media_persist(&e->media, word, sizeof(*word));
}

/*
 * drain -- atomic draining (§4.2): the dirty address queue's lines (and,
 * for sc, one data line first) through the drain buffer into the media,
 * ROOT_new, the end signal, the lines home, ROOT_old.  Modeled: the lines
 * enter the write queue from t (after the deferred MACs, §4.3); later
 * write-backs wait for the last.  Returns when the drain is done.
 */
static uint64_t drain(struct emu *e, unsigned core, uint64_t t, const struct drain_ent *data,
		      const uint8_t *plain)
{
	struct bmt *b = e->bmt;
	if (!b->daq_n && !data)
		return t;
	uint64_t macs = e->stat[ST_MAC_COMPUTED];
	uint8_t root[16];
	for (unsigned i = 0; i < b->daq_n; i++) /* the buffer holds current nodes */
		if (b->daq[i] >= b->nctr && bit_get(b->stale, b->daq[i]))
			refresh(e, b, b->daq[i] - b->nctr);
	tree_root(e, b, root);
	if (b->pol == INTEG_EPOCH_DS) /* the deferred MACs, one after another */
		t += (e->stat[ST_MAC_COMPUTED] - macs) * e->tm.mac;
	struct drain_reg *r = b->dreg;
	unsigned k = 0;
	if (data) { /* the data line's pad is noted as used before its ciphertext is in */
		struct drain_ent *d = &b->dbuf[k++];
		d->kind = KIND_DATA;
		d->item = data->item;
		d->ctr = data->ctr;
		media_persist(&e->media, d, 32);
		dreg_store(e, &r->count, 1);
		if (__builtin_expect(e->audit_fd >= 0, 0))
			audit_pad(e, data->item, data->ctr, plain);
		memcpy(d->payload, data->payload, EMU_LINE);
		memcpy(d->mac, data->mac, 16);
		media_persist(&e->media, d->payload, EMU_LINE + 16);
	}
	for (unsigned i = 0; i < b->daq_n; i++) {
		struct drain_ent *d = &b->dbuf[k++];
		d->kind = b->daq[i] < b->nctr ? KIND_CTR : KIND_NODE;
		d->item = b->daq[i];
		d->ctr = 0;
		content(e, b, b->daq[i], d->payload);
		media_persist(&e->media, d, sizeof(*d));
	}
	dreg_store(e, &r->count, k);
	emu_crash_point("bmt.drain_buffered");
	memcpy(b->regs.root_new, root, 16);
	b->regs.draining = 1; /* with ROOT_new: an end signal now is this drain's */
	regs_store(b);
	dreg_store(e, &r->end, 1); /* the end signal: from here the drain completes */
	emu_crash_point("bmt.drain_end");
	apply(e, b, k);
	emu_crash_point("bmt.drain_applied");
	regs_settle(b, root); /* ROOT_old = ROOT_new, N_wb = 0 */
	emu_crash_point("bmt.drain_committed");
	dreg_store(e, &r->count, 0);
	dreg_store(e, &r->end, 0);
	/* modeled: every line into the write queue */
	uint64_t done = t;
	for (unsigned i = data ? 1 : 0; i < k; i++)
		done = max64(done, meta_write(e, core, b->dbuf[i].item, t));
	for (unsigned i = 0; i < b->daq_n; i++) {
		uint64_t it = b->daq[i];
		bit_clear(b->in_daq, it);
		cc_clean(&e->cc, it);
		if (it < b->nctr)
			b->upd[it] = 0;
	}
	e->stat[ST_BMT_DRAINS]++;
	e->stat[ST_BMT_DRAIN_LINES] += b->daq_n;
	b->daq_n = 0;
	note_pending(e, core, done);
	b->busy_until = max64(b->busy_until, done);
	return done;
}

/* is_epoch -- the designs with a dirty address queue. */
static inline int is_epoch(const struct bmt *b)
{
	return b->pol == INTEG_EPOCH || b->pol == INTEG_EPOCH_DS;
}

/* daq_missing -- how many of the n items are not in the queue yet. */
static unsigned daq_missing(const struct bmt *b, const uint64_t *items, unsigned n)
{
	unsigned miss = 0;
	for (unsigned i = 0; i < n; i++)
		miss += !bit_get(b->in_daq, items[i]);
	return miss;
}

static void daq_add(struct bmt *b, uint64_t item)
{
	if (bit_get(b->in_daq, item))
		return;
	bit_set(b->in_daq, item);
	b->daq[b->daq_n++] = item;
}

/*
 * victim -- a dirty metadata line left the cache: bmt-nocc writes it home;
 * osiris writes a counter line home (its nodes are never persisted); the
 * epoch designs drain (§4.2 trigger 2).  Returns when it is done.
 */
static uint64_t victim(struct emu *e, unsigned core, uint64_t item, uint64_t t)
{
	struct bmt *b = e->bmt;
	e->stat[ST_CC_EVICTIONS]++;
	switch (b->pol) {
	case INTEG_NOCC:
		item_home(e, b, item);
		return meta_write(e, core, item, t);
	case INTEG_OSIRIS:
		if (item >= b->nctr)
			return t;
		item_home(e, b, item);
		b->upd[item] = 0;
		return meta_write(e, core, item, t);
	case INTEG_EPOCH:
	case INTEG_EPOCH_DS:
		return bit_get(b->in_daq, item) ? drain(e, core, t, NULL, NULL) : t;
	default:
		return t;
	}
}

void bmt_victim(struct emu *e, unsigned core, uint64_t id, uint64_t t)
{
	victim(e, core, id, t);
}

/*
 * meta_fetch -- the metadata cache lookups of a write-back (or a read) of
 * counter line path[0]: the counter line, then, while they miss, its
 * ancestors (a fetched line is verified against its parent: one MAC each,
 * one after another); every ancestor where the design updates the whole
 * path (all).  Returns when the counter is known.
 */
static uint64_t meta_fetch(struct emu *e, unsigned core, const uint64_t *path, unsigned n,
			   int all, int is_read, uint64_t t)
{
	struct timing *tm = &e->tm;
	uint64_t known = t + tm->cc_hit, fetched = t + tm->cc_hit;
	unsigned verify = 0;
	int walking = 1;
	for (unsigned i = 0; i < n && (walking || all); i++) {
		uint64_t vic = 0;
		int vdirty = 0;
		if (cc_access(&e->cc, path[i], 0, &vic, &vdirty) == CC_HIT) {
			e->stat[ST_CC_HITS]++;
			walking = 0; /* a cached line is verified */
			continue;
		}
		e->stat[ST_CC_MISSES]++;
		e->stat[ST_MEDIA_READS]++;
		/* a read's fetches go before queued writes, as its data does
		 * (read.c); a write-back's take their turn */
		uint64_t got = is_read ? tm_read_first(tm, core, bank_of_item(e, path[i]), t)
				       : tm_read(tm, core, bank_of_item(e, path[i]), t);
		fetched = max64(fetched, got);
		if (walking)
			verify++;
		if (vdirty) { /* a drain blocks write-backs (§4.2), not reads */
			uint64_t done = victim(e, core, vic, t);
			if (!is_read)
				t = max64(t, done);
		}
	}
	if (verify) {
		known = fetched + verify * tm->mac;
		e->stat[ST_MAC_VERIFIED] += verify;
	}
	return known;
}

/* ------------------------------------------------------------ the write path */

/* persist_ctr_line -- counter line cl made durable, as the design makes it:
 * osiris writes it home, the epoch designs drain.  When it is done. */
static uint64_t persist_ctr_line(struct emu *e, unsigned core, uint64_t cl, uint64_t t)
{
	struct bmt *b = e->bmt;
	if (is_epoch(b))
		return drain(e, core, t, NULL, NULL);
	if (b->pol != INTEG_OSIRIS)
		return t;
	item_home(e, b, cl);
	cc_clean(&e->cc, cl);
	b->upd[cl] = 0;
	uint64_t acc = meta_write(e, core, cl, t);
	note_pending(e, core, acc);
	emu_crash_point("bmt.ctr_persisted");
	return acc;
}

/*
 * write_line -- one write-back of line under its design (min_ctr: the
 * counter at least; 0: the next).  Order: drain triggers that need no part
 * of this write first, then the counter, its pad and the data MAC, the
 * metadata and registers, the data entry, and the triggers it causes.
 */
static void write_line(struct emu *e, unsigned core, uint64_t line, const uint8_t *plain,
		       uint64_t min_ctr)
{
	struct bmt *b = e->bmt;
	struct timing *tm = &e->tm;
	uint64_t path[MAX_PATH];
	const uint64_t cl = line >> e->layout->ctr_shift;
	const unsigned npath = path_of(b, cl, path);
	uint64_t t = max64(tm->clock[core], b->busy_until);
	tm->clock[core] += tm->issue;
	/* the counter's step: 1, or more for recovery's re-encryption */
	uint64_t ctr = e->cur_ctr[line] + 1;
	if (ctr < min_ctr)
		ctr = min_ctr;
	const uint64_t step = ctr - e->cur_ctr[line];
	/* §4.2 trigger 1: no room in the dirty address queue for this write-back */
	if (is_epoch(b) && b->daq_n + daq_missing(b, path, npath) > b->m)
		t = drain(e, core, t, NULL, NULL);
	/* a counter never runs more than N ahead of the media's (§4.4's trial;
	 * recovery's re-encryption steps one more: the trial takes N + 1) */
	if (b->upd[cl] + step > b->n_limit)
		t = persist_ctr_line(e, core, cl, t);
	int whole_path = b->pol != INTEG_EPOCH_DS;
	uint64_t t_ctr = meta_fetch(e, core, path, npath, whole_path, 0, t);
	uint8_t pad[EMU_LINE], mac[16];
	if (crypto_line_pads_ctl(e->crypto, &line, &ctr, 1, pad))
		mac_fatal();
	e->stat[ST_AES_PADS]++;
	e->stat[ST_CTRL_WRITES]++;
	uint64_t t_pad = tm_aes(tm, t_ctr), t_mac = t_pad + tm->mac;
	/* the root (sc, osiris, ccnvm-nods): every node of the path, one after
	 * another, before the data may enter the queue (§5.1) */
	uint64_t t_ready = t_mac;
	if (b->pol == INTEG_SC || b->pol == INTEG_OSIRIS || b->pol == INTEG_EPOCH)
		t_ready += (uint64_t)npath * tm->mac;
	if (is_epoch(b))
		t_ready = max64(t_ready, t_ctr + tm->daq);
	e->cur_ctr[line] = ctr;
	mark_changed(b, cl);

	if (b->pol == INTEG_SC) {
		struct drain_ent d;
		d.item = line;
		d.ctr = ctr;
		line_xor(d.payload, plain, pad);
		if (mac_line(b->mac, d.payload, ctr, line, d.mac))
			mac_fatal();
		e->stat[ST_MAC_COMPUTED]++;
		for (unsigned i = 0; i < npath; i++)
			daq_add(b, path[i]);
		uint64_t acc = drain(e, core, t_ready, &d, plain);
		int stalled = 0;
		acc = max64(acc, tm_write(tm, core, &tm->qdata, ctrl_data_bank(e, line), line,
					  t_ready, &stalled));
		e->stat[ST_WPQ_STALLS] += (uint64_t)stalled;
		e->stat[ST_MEDIA_WRITES]++;
		e->stat[ST_MEDIA_WRITES_DATA]++;
		e->stat[ST_MEDIA_BYTES] += EMU_LINE;
		note_pending(e, core, acc);
		return;
	}

	struct wq_entry *w = wq_reserve(e, &e->qdata);
	wq_mark_reserved(e, w, line, ctr); /* before the audit record too */
	if (__builtin_expect(e->audit_fd >= 0, 0))
		audit_pad(e, line, ctr, plain);
	line_xor(w->payload, plain, pad);
	emu_crash_point("wpq.payload_written");
	if (mac_line(b->mac, w->payload, ctr, line, mac))
		mac_fatal();
	e->stat[ST_MAC_COMPUTED]++;
	memcpy(w->pad + 16, mac, 16);
	media_persist(&e->media, w->pad + 16, 16);
	/* the metadata in the cache, the registers */
	switch (b->pol) {
	case INTEG_NOCC:
		for (unsigned i = 0; i < npath; i++)
			if (!cc_mark_dirty(&e->cc, path[i]))
				item_home(e, b, path[i]); /* not cached: written through */
		break;
	case INTEG_OSIRIS:
	case INTEG_EPOCH:
		memcpy(b->regs.root_prev, b->regs.root_new, 16);
		tree_root(e, b, b->regs.root_new);
		__attribute__((fallthrough));
	case INTEG_EPOCH_DS:
		if (b->pol != INTEG_OSIRIS) {
			for (unsigned i = 0; i < npath; i++) {
				daq_add(b, path[i]);
				cc_mark_dirty(&e->cc, path[i]);
			}
		} else {
			cc_mark_dirty(&e->cc, cl);
		}
		b->regs.n_wb += step; /* N_wb: the increments since the last drain */
		b->regs.inflight_line = line + 1; /* counted, not yet valid */
		b->regs.inflight_ctr = ctr;
		b->regs.inflight_step = step;
		regs_store(b);
		break;
	default:
		break;
	}
	int stalled = 0;
	uint64_t acc = tm_write(tm, core, &tm->qdata, ctrl_data_bank(e, line), line, t_ready,
				&stalled);
	e->stat[ST_WPQ_STALLS] += (uint64_t)stalled;
	e->stat[ST_MEDIA_WRITES]++;
	e->stat[ST_MEDIA_WRITES_DATA]++;
	e->stat[ST_MEDIA_BYTES] += EMU_LINE;
	note_pending(e, core, acc);
	wq_publish(e, &e->qdata, line, 0, WQ_READY | WQ_MAC);
	emu_crash_point("wpq.data_enqueued");
	if (b->regs.inflight_line) { /* valid now: recovery never takes it back */
		b->regs.inflight_line = b->regs.inflight_ctr = b->regs.inflight_step = 0;
		regs_store(b);
	}
	/* after the data: a counter line persisted now never runs ahead of it */
	if (b->pol == INTEG_OSIRIS || is_epoch(b)) {
		b->upd[cl] = (uint16_t)(b->upd[cl] + step);
		if (b->upd[cl] >= b->n_limit) /* Osiris: every N updates; §4.2 trigger 3 */
			persist_ctr_line(e, core, cl, t_ready);
	}
}

void bmt_write_ranges(struct emu *e, unsigned core, const struct emu_range *r, size_t n,
		      const void *view)
{
	for (size_t i = 0; i < n; i++)
		for (uint64_t l = r[i].first; l < r[i].first + r[i].n; l++)
			write_line(e, core, l, (const uint8_t *)view + l * EMU_LINE, 0);
}

/* bmt_advance_line -- recovery's re-encryption of line l (controller.c's
 * advance_line) under a counter of at least min_ctr, through the design. */
int bmt_advance_line(struct emu *e, uint64_t l, uint64_t min_ctr)
{
	uint8_t plain[EMU_LINE] = {0}, pad[EMU_LINE];
	uint64_t ctr = e->cur_ctr[l];
	if (ctr) {
		if (crypto_line_pads(e->crypto, &l, &ctr, 1, pad))
			return -1;
		line_xor(plain, e->media.data + l * EMU_LINE, pad);
	}
	write_line(e, 0, l, plain, min_ctr);
	wq_drain_all(e, &e->qdata);
	e->stat[ST_REC_REENCRYPTED]++;
	return 0;
}

/* bmt_read_verify -- a read of line: its counter from the metadata cache
 * (a miss fetched and verified up the tree); when its pad is ready.  The
 * data MAC's check follows the data (read.c). */
uint64_t bmt_read_verify(struct emu *e, unsigned core, uint64_t line, uint64_t t)
{
	struct bmt *b = e->bmt;
	uint64_t path[MAX_PATH];
	unsigned n = path_of(b, line >> e->layout->ctr_shift, path);
	uint64_t known = meta_fetch(e, core, path, n, 0, 1, t);
	e->stat[ST_MAC_VERIFIED]++;
	return tm_aes_unbooked(&e->tm, known);
}

/* ------------------------------------------------------------ tampering */

/* A tampered item found; the first one names the refusal. */
struct findings {
	struct spm_tamper *out;
	size_t max, n;
	int kind0;
	uint64_t off0;
};

static void found(struct findings *f, int kind, uint64_t off)
{
	if (f->n == 0) {
		f->kind0 = kind;
		f->off0 = off;
	}
	if (f->out && f->n < f->max)
		f->out[f->n] = (struct spm_tamper){kind, off};
	f->n++;
}

/* item_offset -- where a mismatching item is, as spm_tamper reports it. */
static void found_item(const struct emu *e, const struct bmt *b, struct findings *f,
		       uint64_t item)
{
	if (item < b->nctr)
		found(f, SPM_TAMPER_COUNTER, item * e->layout->lines_per_ctr_line * EMU_LINE);
	else
		found(f, SPM_TAMPER_NODE, e->sb->tree_off + (item - b->nctr) * EMU_LINE);
}

static const char *kind_name(int kind)
{
	switch (kind) {
	case SPM_TAMPER_DATA:
		return "a data line or its MAC (spoofing or splicing): its MAC fails";
	case SPM_TAMPER_COUNTER:
		return "a counter line (replayed or spoofed): it does not match its tree node";
	case SPM_TAMPER_NODE:
		return "a tree node (replayed or spoofed): it does not match its parent";
	case SPM_TAMPER_ROOT:
		return "the whole pool (a rollback of both files): the tree does not match "
		       "the root register";
	default:
		return "a replay after the crash, not locatable: the write-backs since the "
		       "last drain do not add up";
	}
}

/* refuse -- SPM_E_TAMPERED naming the first finding. */
static int refuse(struct emu *e, const struct findings *f)
{
	struct bmt *b = e->bmt;
	if (b->found)
		*b->found = f->n;
	const char *where = f->kind0 == SPM_TAMPER_NODE ? "meta file offset" : "offset";
	return emu_err(SPM_E_TAMPERED, "%s: tampered with: %zu item%s, the first at %s %llu: "
		       "%s", e->media.data_path, f->n, f->n == 1 ? "" : "s", where,
		       (unsigned long long)f->off0, kind_name(f->kind0));
}

/* verify_tree_home -- every node in the media against its children there,
 * the top against root (cc-NVM 4.4 step 1: a replay is where a parent and
 * child disagree). */
static void verify_tree_home(struct emu *e, struct bmt *b, const uint8_t root[16],
			     struct findings *f)
{
	uint8_t m[16];
	size_t before = f->n;
	for (uint64_t g = 0; g < b->nnodes; g++)
		for (unsigned j = 0; j < ARITY; j++) {
			uint64_t c = child(b, g, j);
			if (c == UINT64_MAX)
				break;
			item_mac(e, home_content(e, b, c), c, m);
			e->stat[ST_MAC_VERIFIED]++;
			if (CRYPTO_memcmp(m, b->node_home + g * EMU_LINE + j * 16, 16) != 0)
				found_item(e, b, f, c);
		}
	item_mac(e, home_content(e, b, top_item(b)), ROOT_ID, m);
	if (CRYPTO_memcmp(m, root, 16) != 0 && f->n == before)
		found(f, SPM_TAMPER_ROOT, 0);
}

/* One thread's share of the data MACs. */
struct vjob {
	struct emu *e;
	uint64_t from, to;
	unsigned trial; /* counters tried past the stored one (0: exact) */
	uint64_t retries, verified;
	uint64_t *bad;
	size_t nbad, cap;
	int rc;
};

static void *verify_range(void *arg)
{
	enum { BATCH = 64 };
	struct vjob *j = arg;
	struct emu *e = j->e;
	struct mac *m;
	if ((j->rc = mac_new(&m, e->bmt->key)))
		return NULL;
	uint64_t lines[BATCH], ctrs[BATCH];
	uint8_t macs[BATCH * 16], one[16];
	for (uint64_t l = j->from; l < j->to && !j->rc; l += BATCH) {
		unsigned n = j->to - l < BATCH ? (unsigned)(j->to - l) : BATCH;
		for (unsigned i = 0; i < n; i++) {
			lines[i] = l + i;
			ctrs[i] = e->ctr_home[l + i];
		}
		if ((j->rc = mac_lines(m, e->media.data + l * EMU_LINE, ctrs, lines, n, macs)))
			break;
		j->verified += n;
		for (unsigned i = 0; i < n; i++) {
			const uint8_t *want = e->mac_home + (l + i) * 16;
			if (CRYPTO_memcmp(macs + i * 16, want, 16) == 0)
				continue;
			unsigned k;
			for (k = 1; k <= j->trial; k++) {
				uint64_t c = ctrs[i] + k;
				if ((j->rc = mac_line(m, e->media.data + (l + i) * EMU_LINE, c,
						      l + i, one)))
					break;
				if (CRYPTO_memcmp(one, want, 16) == 0)
					break;
			}
			if (j->rc)
				break;
			if (k <= j->trial) { /* §4.4: the newest counter, recovered */
				e->cur_ctr[l + i] = ctrs[i] + k;
				j->retries += k;
				continue;
			}
			if (j->nbad == j->cap) {
				size_t cap = j->cap ? 2 * j->cap : 64;
				uint64_t *nb = realloc(j->bad, cap * sizeof(*nb));
				if (!nb) {
					j->rc = emu_err(-ENOMEM, "out of memory");
					break;
				}
				j->bad = nb;
				j->cap = cap;
			}
			j->bad[j->nbad++] = l + i;
		}
	}
	mac_free(m);
	return NULL;
}

/* verify_data -- every line's MAC (two threads), a counter found by trial
 * where trial > 0 (into cur_ctr); the retries' total. */
static int verify_data(struct emu *e, unsigned trial, struct findings *f, uint64_t *retries)
{
	enum { THREADS = 2 };
	struct vjob job[THREADS];
	pthread_t tid[THREADS];
	int started[THREADS] = {0};
	uint64_t span = e->nlines - FIRST_LINE;
	int rc = 0;
	for (unsigned i = 0; i < THREADS; i++) {
		job[i] = (struct vjob){.e = e, .trial = trial};
		job[i].from = FIRST_LINE + span * i / THREADS;
		job[i].to = FIRST_LINE + span * (i + 1) / THREADS;
		if (i > 0 && pthread_create(&tid[i], NULL, verify_range, &job[i]) == 0)
			started[i] = 1;
	}
	verify_range(&job[0]);
	for (unsigned i = 1; i < THREADS; i++) {
		if (started[i])
			pthread_join(tid[i], NULL);
		else
			verify_range(&job[i]);
	}
	*retries = 0;
	for (unsigned i = 0; i < THREADS; i++) {
		if (job[i].rc && !rc)
			rc = job[i].rc;
		*retries += job[i].retries;
		e->stat[ST_MAC_VERIFIED] += job[i].verified;
		for (size_t k = 0; k < job[i].nbad; k++)
			found(f, SPM_TAMPER_DATA, job[i].bad[k] * EMU_LINE);
		free(job[i].bad);
	}
	return rc;
}

/* ------------------------------------------------------------ set-up */

int bmt_attach(struct emu *e, const struct emu_config *cfg)
{
	if (!e->design->integrity)
		return 0;
	struct superblock *sb = e->sb;
	struct bmt *b = calloc(1, sizeof(*b));
	if (!b)
		return emu_err(-ENOMEM, "out of memory");
	e->bmt = b;
	b->pol = e->design->integrity;
	b->nctr = e->nlines >> e->layout->ctr_shift;
	b->levels = geometry(b->nctr, b->lvl_first, b->lvl_n, &b->nnodes);
	b->nitems = b->nctr + b->nnodes;
	b->n_limit = sb->bmt_n;
	b->m = sb->bmt_m;
	if (cfg->bmt_n && cfg->bmt_n != b->n_limit)
		return emu_err(SPM_E_OPTION, "bmt_n=%u: %s was created with bmt_n=%u", cfg->bmt_n,
			       e->media.data_path, b->n_limit);
	if (cfg->bmt_m && cfg->bmt_m != b->m)
		return emu_err(SPM_E_OPTION, "bmt_m=%u: %s was created with bmt_m=%u", cfg->bmt_m,
			       e->media.data_path, b->m);
	b->out = cfg->tamper_out;
	b->max = cfg->tamper_max;
	b->found = cfg->tamper_found;
	size_t words = (b->nitems + 63) / 64;
	b->node = calloc(b->nnodes, EMU_LINE);
	b->stale = calloc(words, 8);
	b->in_daq = calloc(words, 8);
	b->daq = calloc(M_MAX + MAX_PATH, sizeof(*b->daq));
	b->upd = calloc(b->nctr, sizeof(*b->upd));
	if (!b->node || !b->stale || !b->in_daq || !b->daq || !b->upd)
		return emu_err(-ENOMEM, "out of memory for the integrity tree");
	b->node_home = e->media.meta + sb->tree_off;
	b->dreg = (struct drain_reg *)(e->media.meta + sb->adr_off + ADR_BMT_OFF);
	b->dbuf = (struct drain_ent *)(e->media.meta + sb->drain_off);
	int rc = crypto_hkdf(e->key_raw, e->key_bits / 8, e->sb_uuid, 16, "spm mac", b->key,
			     sizeof(b->key));
	if (!rc)
		rc = mac_new(&b->mac, b->key);
	if (!rc)
		rc = tcb_open(&b->tcb, e->key_path, e->sb_uuid, e->creating);
	return rc;
}

void bmt_free(struct emu *e)
{
	struct bmt *b = e->bmt;
	if (!b)
		return;
	mac_free(b->mac);
	tcb_close(b->tcb);
	OPENSSL_cleanse(b->key, sizeof(b->key));
	free(b->node);
	free(b->stale);
	free(b->in_daq);
	free(b->daq);
	free(b->upd);
	free(b);
	e->bmt = NULL;
}

/* sb_mac -- the superblock's MAC (all of it but its checksum and state). */
static int sb_mac(struct emu *e, struct bmt *b, uint8_t out[16])
{
	struct superblock copy;
	memcpy(&copy, e->sb, offsetof(struct superblock, state));
	copy.checksum = 0;
	return mac_raw(b->mac, &copy, offsetof(struct superblock, state), out);
}

/* bmt_create -- a new pool's MACs (its lines are under counter 0), its tree
 * and registers. */
int bmt_create(struct emu *e)
{
	struct bmt *b = e->bmt;
	if (!b)
		return 0;
	enum { BATCH = 256 };
	uint64_t lines[BATCH], ctrs[BATCH] = {0};
	for (uint64_t l = FIRST_LINE; l < e->nlines; l += BATCH) {
		unsigned n = e->nlines - l < BATCH ? (unsigned)(e->nlines - l) : BATCH;
		for (unsigned i = 0; i < n; i++)
			lines[i] = l + i;
		if (mac_lines(b->mac, e->media.data + l * EMU_LINE, ctrs, lines, n,
			      e->mac_home + l * 16))
			return SPM_E_CRYPTO;
	}
	media_persist(&e->media, e->mac_home, e->nlines * 16);
	uint8_t root[16];
	rebuild(e, b, root);
	memcpy(b->node_home, b->node, b->nnodes * EMU_LINE);
	media_persist(&e->media, b->node_home, b->nnodes * EMU_LINE);
	memset(&b->regs, 0, sizeof(b->regs));
	if (sb_mac(e, b, b->regs.sb_mac))
		return SPM_E_CRYPTO;
	regs_settle(b, root); /* not clean: a new pool is dirty until its close */
	return 0;
}

/* inflight_dropped -- the last write-back the registers counted was dropped
 * by recovery (its entry was not yet valid): it never happened. */
static int inflight_dropped(const struct emu *e, const struct tcb_regs *r)
{
	if (!r->inflight_line)
		return 0;
	for (size_t i = 0; i < e->ndropped; i++)
		if (e->dropped[i].line == r->inflight_line - 1 &&
		    e->dropped[i].ctr == r->inflight_ctr)
			return 1;
	return 0;
}

/* recover_drain -- a drain cut short: applied if its end signal was set
 * (§4.2), else forgotten, the data line's pad (sc) noted as used. */
static int recover_drain(struct emu *e, struct bmt *b)
{
	struct drain_reg *r = b->dreg;
	uint64_t n = r->count; /* bounded by bmt_check_adr */
	if (r->end && b->regs.draining) { /* the end signal of the drain the registers name */
		uint8_t root[16];
		apply(e, b, n);
		memcpy(root, b->regs.root_new, 16); /* the drain stored it before its end */
		regs_settle(b, root);
	} else if (r->end) {
		/* the registers say no drain is under way: this one was
		 * committed (a crash before the register was cleared), or the
		 * word was set by someone else: either way nothing to apply */
	} else {
		size_t from = e->ndropped;
		for (uint64_t i = 0; i < n; i++)
			if (b->dbuf[i].kind == KIND_DATA && b->dbuf[i].item < e->nlines)
				ctrl_note_dropped(e, b->dbuf[i].item, b->dbuf[i].ctr);
		/* durable before the buffer is forgotten: a crash before every
		 * such line is advanced finds them in the ADR table */
		if (e->ndropped > from && ctrl_keep_noted(e, from))
			return emu_err(SPM_E_CORRUPT, "%s: more than %u dropped writes to "
				       "recover", e->media.meta_path, ADR_DROPPED_MAX);
	}
	if (b->regs.draining) { /* cut before its end: forgotten (§4.2) */
		b->regs.draining = 0;
		regs_store(b);
	}
	if (r->count || r->end) {
		dreg_store(e, &r->count, 0);
		dreg_store(e, &r->end, 0);
	}
	return 0;
}

/* persist_recovered -- the counters recovered by trial made durable as the
 * design makes counters durable: a drain (the epoch designs: every such
 * line was in the dirty address queue at the crash), or written home. */
static void persist_recovered(struct emu *e, struct bmt *b, const uint8_t root[16])
{
	const unsigned per = e->layout->lines_per_ctr_line;
	for (uint64_t cl = 0; cl < b->nctr; cl++) {
		if (memcmp(e->cur_ctr + cl * per, e->ctr_home + cl * per, per * 8) == 0)
			continue;
		if (is_epoch(b)) {
			uint64_t path[MAX_PATH];
			unsigned n = path_of(b, cl, path);
			if (daq_missing(b, path, n) > M_MAX + MAX_PATH - b->daq_n)
				drain(e, 0, 0, NULL, NULL);
			for (unsigned i = 0; i < n; i++)
				daq_add(b, path[i]);
		} else {
			item_home(e, b, cl);
		}
	}
	if (is_epoch(b))
		drain(e, 0, 0, NULL, NULL);
	/* the registers as after a drain even where none was needed: the
	 * write-backs counted before the crash are accounted for */
	regs_settle(b, root);
	b->busy_until = 0;
}

/*
 * bmt_open -- a clean pool: every node and line verified against the
 * registers, nothing written.  A dirty one (ADR queues already drained):
 * cc-NVM 4.4 -- a cut drain finished or forgotten, replays located where
 * parent and child disagree, stale counters recovered by MAC trial (at most
 * N tries; none matching: spoofing or splicing), N_retry against N_wb
 * (ccnvm) or the rebuilt root against ROOT_new (ccnvm-nods, osiris); then
 * the tree rebuilt and the recovered counters persisted.
 */
int bmt_open(struct emu *e)
{
	struct bmt *b = e->bmt;
	if (!b)
		return 0;
	struct findings f = {.out = b->out, .max = b->max};
	if (b->found)
		*b->found = 0;
	if (tcb_read(b->tcb, &b->regs) != 0) {
		found(&f, SPM_TAMPER_ROOT, 0);
		return refuse(e, &f);
	}
	uint64_t retries = 0;
	int rc;
	uint8_t sbm[16];
	if ((rc = sb_mac(e, b, sbm)))
		return rc;
	if (CRYPTO_memcmp(sbm, b->regs.sb_mac, 16) != 0) {
		/* its design, geometry, N or M are not those the registers were
		 * made for */
		found(&f, SPM_TAMPER_ROOT, 0);
		return refuse(e, &f);
	}
	if (!e->was_dirty && (!b->regs.clean || b->regs.draining || b->regs.n_wb ||
			      CRYPTO_memcmp(b->regs.root_old, b->regs.root_new, 16) != 0)) {
		/* marked clean in the files, not in the registers: a crashed
		 * pool's state word changed, to skip recovery's checks */
		found(&f, SPM_TAMPER_REPLAY, 0);
		return refuse(e, &f);
	}
	if (!e->was_dirty) {
		verify_tree_home(e, b, b->regs.root_old, &f);
		if ((rc = verify_data(e, 0, &f, &retries)))
			return rc;
		if (f.n)
			return refuse(e, &f);
		memcpy(b->node, b->node_home, b->nnodes * EMU_LINE);
		return 0;
	}
	if ((rc = recover_drain(e, b)))
		return rc;
	int dropped = inflight_dropped(e, &b->regs);
	uint64_t n_wb = b->regs.n_wb;
	if (dropped) /* counted, and never valid: it did not happen */
		n_wb = n_wb > b->regs.inflight_step ? n_wb - b->regs.inflight_step : 0;
	const uint8_t *root_new = dropped ? b->regs.root_prev : b->regs.root_new;
	if (b->pol != INTEG_OSIRIS)
		verify_tree_home(e, b, b->regs.root_old, &f);
	unsigned trial = b->pol == INTEG_OSIRIS || is_epoch(b) ? b->n_limit + 1 : 0;
	if ((rc = verify_data(e, trial, &f, &retries)))
		return rc;
	e->stat[ST_REC_MAC_RETRIES] += retries;
	uint8_t root[16];
	rebuild(e, b, root);
	if (!f.n && b->pol == INTEG_EPOCH_DS && retries != n_wb)
		found(&f, SPM_TAMPER_REPLAY, 0);
	if (!f.n && (b->pol == INTEG_EPOCH || b->pol == INTEG_OSIRIS) &&
	    CRYPTO_memcmp(root, root_new, 16) != 0)
		found(&f, SPM_TAMPER_REPLAY, 0);
	if (f.n)
		return refuse(e, &f);
	persist_recovered(e, b, root);
	emu_crash_point("bmt.recovered");
	return 0;
}

/* bmt_close -- every cached update of counters and tree persisted, the
 * roots the tree's (before the pool is marked clean). */
void bmt_close(struct emu *e)
{
	struct bmt *b = e->bmt;
	if (!b)
		return;
	if (is_epoch(b) || b->pol == INTEG_SC) {
		/* sc: everything persisted at each write-back */
		drain(e, 0, e->tm.clock[0], NULL, NULL);
		b->regs.clean = 1;
		regs_store(b);
		return;
	}
	uint8_t root[16];
	tree_root(e, b, root);
	for (uint64_t cl = 0; cl < b->nctr; cl++)
		item_home(e, b, cl);
	memcpy(b->node_home, b->node, b->nnodes * EMU_LINE);
	media_persist(&e->media, b->node_home, b->nnodes * EMU_LINE);
	b->regs.clean = 1;
	regs_settle(b, root);
}

/* bmt_mark_dirty -- in use from now on: a crash is not a clean close. */
void bmt_mark_dirty(struct emu *e)
{
	struct bmt *b = e->bmt;
	if (!b || !b->regs.clean)
		return;
	b->regs.clean = 0;
	regs_store(b);
}

/* bmt_check_sb -- the integrity areas fit the design, the pool and the
 * meta file, and do not overlap the areas before them (validate, before
 * anything is written: recovery writes MACs there). */
int bmt_check_sb(const char *meta_path, const struct superblock *sb)
{
	char name[sizeof(sb->design) + 1];
	memcpy(name, sb->design, sizeof(sb->design));
	name[sizeof(sb->design)] = '\0';
	const struct design *d = design_find(name);
	uint64_t mac_size, tree_size, drain_size;
	if (!d)
		return 0; /* validate refuses it */
	bmt_layout(d, sb->nlines, &mac_size, &tree_size, &drain_size);
	if (!d->integrity)
		return sb->mac_size || sb->tree_size || sb->drain_size
			       ? emu_err(SPM_E_CORRUPT, "%s: integrity areas in a pool of "
					 "design %s", meta_path, name)
			       : 0;
	uint64_t start = sb->log_lines ? sb->log_off + sb->log_lines * EMU_LINE
				       : sb->shadow_off + sb->shadow_slots * 8;
	uint64_t first[MAX_LEVELS], cnt[MAX_LEVELS], nnodes;
	unsigned levels = geometry(sb->nlines / 8, first, cnt, &nnodes);
	if (sb->nlines < FIRST_LINE + 8 || sb->nlines % 8 || sb->pool_size % EMU_PAGE ||
	    levels >= MAX_LEVELS || sb->bmt_m < levels + 1)
		return emu_err(SPM_E_CORRUPT, "%s: bad integrity geometry", meta_path);
	if (sb->mac_size != mac_size || sb->tree_size != tree_size ||
	    sb->drain_size != drain_size || sb->mac_off < start ||
	    sb->tree_off < sb->mac_off + mac_size || sb->drain_off < sb->tree_off + tree_size ||
	    sb->drain_off > sb->meta_size || sb->meta_size - sb->drain_off < drain_size ||
	    sb->bmt_n < 1 || sb->bmt_n > 4096 || sb->bmt_m < 4 || sb->bmt_m > M_MAX)
		return emu_err(SPM_E_CORRUPT, "%s: bad integrity areas", meta_path);
	return 0;
}

/* bmt_discard -- a creation refused: the register file it made goes too. */
void bmt_discard(struct emu *e)
{
	if (e->bmt)
		tcb_discard(e->bmt->tcb);
}

/* bmt_min_m -- the smallest dirty address queue for a pool of nlines lines:
 * one write-back's counter line and path (its tree's height + 1). */
unsigned bmt_min_m(uint64_t nlines)
{
	uint64_t first[MAX_LEVELS], cnt[MAX_LEVELS], nnodes;
	return geometry(nlines / 8, first, cnt, &nnodes) + 1;
}

/* bmt_check_no_registers -- an encrypting pool of a design without
 * integrity whose uuid has integrity registers: its superblock's design was
 * rewritten (with its checksum) to turn the checks off. */
int bmt_check_no_registers(const char *key_path, const uint8_t uuid[16], const char *path,
			   const char *design)
{
	if (!tcb_has_record(key_path, uuid))
		return 0;
	return emu_err(SPM_E_TAMPERED, "%s: tampered with: its meta file names design %s, "
		       "but %s.tcb holds the integrity registers of this pool (an integrity "
		       "design's pool, its design rewritten to skip the checks)", path, design,
		       key_path);
}

/*
 * bmt_check_adr -- a dirty pool's drain register and buffer as recovery will
 * read them, before anything is written: the end signal 0 or 1, at most
 * DRAIN_CAP entries, each a counter line or node of the tree or (sc) a data
 * line of the heap; and the data queue's entries carry a MAC only where the
 * design has MACs.
 */
int bmt_check_adr(int meta_fd, const char *meta_path, const struct superblock *sb,
		  const struct wq_entry *data_q, unsigned dcap)
{
	for (unsigned i = 0; i < dcap; i++)
		if ((data_q[i].state & WQ_MAC) && (!sb->mac_size || (data_q[i].state & WQ_LOG)))
			return emu_err(SPM_E_CORRUPT, "%s: ADR data queue entry %u carries a MAC "
				       "the design does not have", meta_path, i);
	if (!sb->mac_size)
		return 0;
	struct drain_reg r;
	if (pread(meta_fd, &r, sizeof(r), (off_t)(sb->adr_off + ADR_BMT_OFF)) != (ssize_t)sizeof(r))
		return emu_err(SPM_E_TRUNCATED, "%s: cannot read the ADR region", meta_path);
	if (r.end > 1 || r.count > DRAIN_CAP)
		return emu_err(SPM_E_CORRUPT, "%s: bad drain register", meta_path);
	char name[sizeof(sb->design) + 1];
	memcpy(name, sb->design, sizeof(sb->design));
	name[sizeof(sb->design)] = '\0';
	const struct design *d = design_find(name);
	uint64_t first[MAX_LEVELS], cnt[MAX_LEVELS], nnodes, nctr = sb->nlines / 8;
	geometry(nctr, first, cnt, &nnodes);
	for (uint64_t i = 0; i < r.count; i++) {
		struct drain_ent x;
		if (pread(meta_fd, &x, 32, (off_t)(sb->drain_off + i * sizeof(x))) != 32)
			return emu_err(SPM_E_TRUNCATED, "%s: cannot read the drain buffer", meta_path);
		int ok = (x.kind == KIND_CTR && x.item < nctr) ||
			 (x.kind == KIND_NODE && x.item >= nctr && x.item - nctr < nnodes) ||
			 (x.kind == KIND_DATA && d && d->integrity == INTEG_SC && i == 0 &&
			  x.item >= FIRST_LINE && x.item < sb->nlines);
		if (!ok)
			return emu_err(SPM_E_CORRUPT, "%s: drain buffer entry %llu names no line of "
				       "the pool", meta_path, (unsigned long long)i);
	}
	return 0;
}
