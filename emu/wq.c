/*
 * wq.c -- the data and counter write queues in the ADR region of the meta
 * file (SCA section 5.2.2).  An entry is durable once its state word is
 * stored; only ready entries drain at a crash.  A counter-atomic pair is a
 * data entry marked PAIRED (ready iff its partner counter entry is ready) and
 * a counter entry whose ready bit is set by one 8-byte store: the pair becomes
 * ready together, atomically, as the paper's ADR-protected ready-bit update.
 * A data entry whose ciphertext is being written is first marked RESERVED
 * with its line and counter, and recovery advances such a line as it does a
 * dropped pair's; the dropped pairs are kept in the ADR header until then.
 */
#include <stdlib.h>
#include <string.h>

#include "emu_internal.h"
#include "wq.h"

/* wq_attach -- a queue over cap ADR slots, of which depth are used. */
void wq_attach(struct wq *q, struct wq_entry *slots, unsigned cap,
	       unsigned depth, struct tm_queue *tmq)
{
	q->slot = slots;
	q->cap = cap;
	q->depth = depth;
	q->head = q->tail = 0;
	q->count = 0;
	q->tmq = tmq;
}

/*
 * The queue's steps below take two flags that cannot change while a pool is
 * open, as arguments: persist (the media's persist_on: writes need a persist
 * call) and armed (emu_crash_armed, set before the first pool opens).  A run
 * of steps reads them once; with both 0 the compiler drops every check.
 */
#define WQ_INLINE static inline __attribute__((always_inline))

/* persist_if -- media_persist, where the durability mode needs it. */
WQ_INLINE void persist_if(const struct emu *e, int persist, const void *addr, size_t len)
{
	if (persist)
		media_persist(&e->media, addr, len);
}

/* crash_if -- emu_crash_point, where crash points are armed. */
WQ_INLINE void crash_if(int armed, const char *name)
{
	if (armed)
		emu_crash_point(name);
}

/* store_state -- the one store that makes an entry's new state durable. */
WQ_INLINE void store_state(struct emu *e, int persist, struct wq_entry *w, uint64_t state)
{
	__atomic_store_n(&w->state, state, __ATOMIC_RELEASE);
	persist_if(e, persist, &w->state, sizeof(w->state));
}

/*
 * mark_reserved -- before a pad's ciphertext goes into slot w: the line and
 * the counter it is encrypted under, then the reserved state, durable first.
 * A crash before the entry is published leaves the ciphertext in the file;
 * recovery then advances the line past that counter as for a dropped pair
 * (a second encryption under it would sit beside this one).  The counter is
 * kept in the slot's spare words (pad), which publish never writes: publish
 * stores seq and addr before the state that ends the reservation, and a
 * kill between them must still find the counter.
 */
WQ_INLINE void mark_reserved(struct emu *e, int persist, struct wq_entry *w, uint64_t line,
			     uint64_t ctr)
{
	memcpy(w->pad, &ctr, sizeof(ctr));
	persist_if(e, persist, w->pad, sizeof(ctr));
	w->addr = line;
	__atomic_store_n(&w->state, (uint64_t)WQ_RESERVED, __ATOMIC_RELEASE);
	persist_if(e, persist, w, offsetof(struct wq_entry, aux));
}

/* reserved_ctr -- the counter a reserved slot's ciphertext is under. */
static uint64_t reserved_ctr(const struct wq_entry *w)
{
	uint64_t ctr;
	memcpy(&ctr, w->pad, sizeof(ctr));
	return ctr;
}

/* wq_mark_reserved -- mark_reserved with the media's durability mode. */
void wq_mark_reserved(struct emu *e, struct wq_entry *w, uint64_t line, uint64_t ctr)
{
	mark_reserved(e, e->media.persist_on, w, line, ctr);
}

/*
 * wq_mark_reserved_log -- a redo log block's slot (redo.c): its ciphertext
 * is under (home line, ctr), but it is published with a log line for its
 * address, stored before the state that ends the reservation; so the home
 * line is kept in the spare words too, after the counter, and the state is
 * RESERVED | LOG (reserved_line).
 */
void wq_mark_reserved_log(struct emu *e, struct wq_entry *w, uint64_t line, uint64_t ctr)
{
	const int persist = e->media.persist_on;
	memcpy(w->pad, &ctr, sizeof(ctr));
	memcpy(w->pad + sizeof(ctr), &line, sizeof(line));
	persist_if(e, persist, w->pad, 2 * sizeof(ctr));
	w->addr = line;
	__atomic_store_n(&w->state, (uint64_t)(WQ_RESERVED | WQ_LOG), __ATOMIC_RELEASE);
	persist_if(e, persist, w, offsetof(struct wq_entry, aux));
}

/* reserved_line -- the line a reserved slot's ciphertext is for. */
uint64_t wq_reserved_line(const struct wq_entry *w)
{
	uint64_t line = w->addr;
	if (w->state & WQ_LOG)
		memcpy(&line, w->pad + sizeof(uint64_t), sizeof(line));
	return line;
}

/* set_ready -- the store that sets an entry's ready bit. */
WQ_INLINE void set_ready(struct emu *e, int persist, struct wq_entry *w)
{
	store_state(e, persist, w, w->state | WQ_READY);
}

/* home_write_data -- write a data entry's payload (and co-located counter) home. */
WQ_INLINE void home_write_data(struct emu *e, int persist, const struct wq_entry *w)
{
	if (__builtin_expect(w->state & WQ_LOG, 0)) { /* a redo log line (redo.c) */
		uint8_t *log = e->media.meta + e->sb->log_off + w->addr * EMU_LINE;
		memcpy(log, w->payload, EMU_LINE);
		persist_if(e, persist, log, EMU_LINE);
		return;
	}
	if ((w->state & WQ_MAC) && e->mac_home) { /* its data MAC goes home with it (bmt.c) */
		uint8_t *mac = e->mac_home + w->addr * 16;
		memcpy(mac, w->pad + 16, 16);
		persist_if(e, persist, mac, 16);
	}
	uint8_t *home = e->media.data + w->addr * EMU_LINE;
	/* non-temporal: the home line is not read again while open.  The
	 * process-crash model needs no fence (the CPU drains its write-
	 * combining buffers at the kill); pmem_persist fences on pmem */
	line_stream(home, w->payload);
	persist_if(e, persist, home, EMU_LINE);
	if (w->state & WQ_COLOC) {
		uint64_t *c = &e->ctr_home[w->addr];
		if (w->aux > *c)
			*c = w->aux;
		persist_if(e, persist, c, sizeof(*c));
	}
}

/* home_write -- write an entry's payload to its home in the media.
 * in_order: every earlier write of the home was drained before (the
 * queue's FIFO order), so a counter line payload is the newest. */
WQ_INLINE void home_write(struct emu *e, int persist, const struct wq_entry *w, int is_ctr,
			  int in_order)
{
	if (!is_ctr) {
		home_write_data(e, persist, w);
		return;
	}
	/* counter line: counters only grow, so a late drain never rolls one back
	 * (mono: the co-located counters of data entries also write home).  In
	 * queue order, with no other writer, the payload is the newest: it is
	 * streamed home without reading the old line (a cache miss each) */
	uint8_t *home = (uint8_t *)e->ctr_home + w->addr * EMU_LINE;
	if (in_order && e->ctr_home_fifo)
		line_stream(home, w->payload);
	else
		ctr_merge_home(e->layout, e->minor_bits, home, w->payload);
	persist_if(e, persist, home, EMU_LINE);
}

/* wq_home_write -- home_write with the media's durability mode. */
void wq_home_write(struct emu *e, const struct wq_entry *w, int is_ctr, int in_order)
{
	home_write(e, e->media.persist_on, w, is_ctr, in_order);
}

/* drain_head -- write the oldest entry of q home and free its slot (a slot
 * whose entry was removed by coalescing is just passed). */
WQ_INLINE void drain_head(struct emu *e, int persist, int armed, struct wq *q, int is_ctr)
{
	struct wq_entry *w = &q->slot[q->head];
	if (w->state & WQ_VALID) {
		home_write(e, persist, w, is_ctr, 1);
		crash_if(armed, "drain.home_written");
		store_state(e, persist, w, 0);
		crash_if(armed, "drain.entry_freed");
	}
	if (++q->head == q->depth)
		q->head = 0;
	q->count--;
}

/* wq_drain_one -- drain_head of q. */
void wq_drain_one(struct emu *e, struct wq *q)
{
	drain_head(e, e->media.persist_on, emu_crash_armed, q, q == &e->qctr);
}

/* reserve -- the slot the next entry goes to (the oldest drains if full). */
WQ_INLINE struct wq_entry *reserve(struct emu *e, int persist, int armed, struct wq *q,
				   int is_ctr)
{
	if (q->count == q->depth)
		drain_head(e, persist, armed, q, is_ctr);
	return &q->slot[q->tail];
}

/* wq_reserve -- reserve with the media's durability mode. */
struct wq_entry *wq_reserve(struct emu *e, struct wq *q)
{
	return reserve(e, e->media.persist_on, emu_crash_armed, q, q == &e->qctr);
}

/* publish -- make the reserved slot, its payload filled, a valid entry with
 * sequence number seq: its fields are durable before its state is. */
WQ_INLINE struct wq_entry *publish(struct emu *e, int persist, struct wq *q, uint64_t seq,
				   uint64_t addr, uint64_t aux, uint64_t flags)
{
	struct wq_entry *w = &q->slot[q->tail];
	w->seq = seq;
	w->addr = addr;
	w->aux = aux;
	persist_if(e, persist, w, offsetof(struct wq_entry, pad));
	store_state(e, persist, w, flags | WQ_VALID);
	if (++q->tail == q->depth)
		q->tail = 0;
	q->count++;
	return w;
}

/* wq_next_seq -- the next entry's sequence number: every channel's step
 * over the numbers from its own first, so no two entries of the ADR region
 * share one (recovery sorts them and finds a pair's partner by it). */
static inline uint64_t wq_next_seq(struct emu *e)
{
	uint64_t seq = e->next_seq;
	e->next_seq += e->seq_step;
	return seq;
}

/* wq_publish -- make the reserved slot, its payload filled, a valid entry. */
struct wq_entry *wq_publish(struct emu *e, struct wq *q, uint64_t addr,
			    uint64_t aux, uint64_t flags)
{
	return publish(e, e->media.persist_on, q, wq_next_seq(e), addr, aux, flags);
}

/*
 * push_run -- wq_push_data's entries with the flags persist, armed and
 * audit fixed.  The queue's positions and the sequence number are volatile:
 * they stay in registers for the run (a crash point that kills loses them
 * as it loses every other volatile state).
 */
WQ_INLINE void push_run(struct emu *e, int persist, int armed, int audit, struct wq *q,
			const uint64_t *line, const uint64_t *ctr, unsigned n,
			const uint8_t *view, const uint8_t *pads, uint64_t flags)
{
	struct wq lq = *q;
	int is_ctr = q == &e->qctr;
	uint64_t seq = e->next_seq;
	const uint64_t step = e->seq_step;
	for (unsigned i = 0; i < n; i++) {
		struct wq_entry *w = reserve(e, persist, armed, &lq, is_ctr);
		const uint8_t *plain = view + line[i] * EMU_LINE;
		if (pads) {
			/* the pad is used: its ciphertext is now in the (ADR) media */
			mark_reserved(e, persist, w, line[i], ctr[i]);
			if (audit)
				audit_pad(e, line[i], ctr[i], plain);
			line_xor(w->payload, plain, pads + (size_t)i * EMU_LINE);
			crash_if(armed, "wpq.payload_written");
		} else {
			memcpy(w->payload, plain, EMU_LINE);
		}
		publish(e, persist, &lq, seq, line[i], (flags & WQ_COLOC) ? ctr[i] : 0, flags);
		seq += step;
		crash_if(armed, "wpq.data_enqueued");
	}
	*q = lq;
	e->next_seq = seq;
}

/*
 * wq_push_data -- n data entries appended to q in order, each as wq_reserve,
 * a payload fill and wq_publish (with wpq.data_enqueued after it, as
 * enqueue_data): entry i is line[i], its payload view[64 * line[i]] XOR
 * pads[64 * i] (pads NULL: the plaintext), its aux ctr[i] if flags has
 * WQ_COLOC, else 0.  Each pad is audited as it is used.
 */
void wq_push_data(struct emu *e, struct wq *q, const uint64_t *line, const uint64_t *ctr,
		  unsigned n, const uint8_t *view, const uint8_t *pads, uint64_t flags)
{
	int audit = pads && __builtin_expect(e->audit_fd >= 0, 0);
	int persist = e->media.persist_on, armed = emu_crash_armed;
	if (!persist && !armed && !audit) /* the common case, without checks */
		push_run(e, 0, 0, 0, q, line, ctr, n, view, pads, flags);
	else
		push_run(e, persist, armed, audit, q, line, ctr, n, view, pads, flags);
}

/*
 * pair_run -- wq_push_pairs' pairs with the flags persist, armed and audit
 * fixed (push_run).  Pair i, in the order enqueue_ctr, enqueue_data and
 * write_ca_pair store them: line[i]'s counter becomes ctr[i] (volatile);
 * the counter entry of its counter line, not ready, its payload the line's
 * counters encoded in place; the data entry PAIRED with it; then the
 * counter entry's ready bit, which makes both ready (SCA 5.2.2), and the
 * data entry's own.
 */
WQ_INLINE void pair_run(struct emu *e, int persist, int armed, int audit,
			const uint64_t *line, const uint64_t *ctr, unsigned n,
			const uint8_t *view, const uint8_t *pads)
{
	struct wq lc = e->qctr, ld = e->qdata;
	const unsigned shift = e->layout->ctr_shift;
	uint64_t seq = e->next_seq, *cur = e->cur_ctr;
	const uint64_t step = e->seq_step;
	for (unsigned i = 0; i < n; i++) {
		uint64_t cl = line[i] >> shift, cseq = seq;
		seq += step;
		__atomic_store_n(&cur[line[i]], ctr[i], __ATOMIC_RELAXED); /* (prepads) */
		struct wq_entry *c = reserve(e, persist, armed, &lc, 1);
		ctr_line_encode(e, cl, c->payload);
		publish(e, persist, &lc, cseq, cl, 0, 0);
		crash_if(armed, "wpq.ctr_enqueued");
		struct wq_entry *d = reserve(e, persist, armed, &ld, 0);
		mark_reserved(e, persist, d, line[i], ctr[i]);
		if (audit)
			audit_pad(e, line[i], ctr[i], view + line[i] * EMU_LINE);
		line_xor(d->payload, view + line[i] * EMU_LINE, pads + (size_t)i * EMU_LINE);
		crash_if(armed, "wpq.payload_written");
		publish(e, persist, &ld, seq, line[i], cseq, WQ_PAIRED);
		seq += step;
		crash_if(armed, "wpq.data_enqueued");
		set_ready(e, persist, c);
		crash_if(armed, "wpq.ready");
		set_ready(e, persist, d);
	}
	e->qctr = lc;
	e->qdata = ld;
	e->next_seq = seq;
}

/*
 * wq_push_pairs -- n counter-atomic pairs of encrypted lines, each as
 * write_one makes one (cur_ctr[line[i]] = ctr[i], then write_ca_pair) where
 * counter lines are not coalesced: the same durable stores and crash points
 * in the same order.  Line i's payload is view[64 * line[i]] XOR pads[64 * i].
 */
void wq_push_pairs(struct emu *e, const uint64_t *line, const uint64_t *ctr, unsigned n,
		   const uint8_t *view, const uint8_t *pads)
{
	int audit = __builtin_expect(e->audit_fd >= 0, 0);
	int persist = e->media.persist_on, armed = emu_crash_armed;
	if (!persist && !armed && !audit) /* the common case, without checks */
		pair_run(e, 0, 0, 0, line, ctr, n, view, pads);
	else
		pair_run(e, persist, armed, audit, line, ctr, n, view, pads);
}

/*
 * ctr_run -- wq_push_ctrs' entries with the flags persist and armed fixed
 * (push_run): each as enqueue_ctr makes a ready one, wq_reserve, the
 * counter line encoded in place, wq_publish, wpq.ctr_enqueued.
 */
WQ_INLINE void ctr_run(struct emu *e, int persist, int armed, const uint64_t *cl, unsigned n)
{
	struct wq lq = e->qctr;
	uint64_t seq = e->next_seq;
	const uint64_t step = e->seq_step;
	for (unsigned i = 0; i < n; i++) {
		struct wq_entry *w = reserve(e, persist, armed, &lq, 1);
		ctr_line_encode(e, cl[i], w->payload);
		publish(e, persist, &lq, seq, cl[i], 0, WQ_READY);
		seq += step;
		crash_if(armed, "wpq.ctr_enqueued");
	}
	e->qctr = lq;
	e->next_seq = seq;
}

/*
 * wq_push_ctrs -- n ready counter line entries appended to the counter
 * queue in order, each as enqueue_ctr makes one where counter lines are not
 * coalesced: the same durable stores and crash points in the same order.
 */
void wq_push_ctrs(struct emu *e, const uint64_t *cl, unsigned n)
{
	int persist = e->media.persist_on, armed = emu_crash_armed;
	if (!persist && !armed) /* the common case, without checks */
		ctr_run(e, 0, 0, cl, n);
	else
		ctr_run(e, persist, armed, cl, n);
}

/* wq_remove -- take a queued entry out without writing it home (one store). */
void wq_remove(struct emu *e, struct wq_entry *w)
{
	store_state(e, e->media.persist_on, w, 0);
	emu_crash_point("wpq.coalesced");
}

/* wq_set_ready -- set an entry's ready bit. */
void wq_set_ready(struct emu *e, struct wq_entry *w)
{
	set_ready(e, e->media.persist_on, w);
}

/* wq_drain_all -- drain every entry of q, oldest first. */
void wq_drain_all(struct emu *e, struct wq *q)
{
	while (q->count)
		wq_drain_one(e, q);
}

struct rec_entry {
	struct wq_entry *w;
	int is_ctr;
};

static int by_seq(const void *a, const void *b)
{
	const struct rec_entry *x = a, *y = b;
	return x->w->seq < y->w->seq ? -1 : x->w->seq > y->w->seq;
}

/* add_dropped -- line's pad under counter ctr was used (in memory). */
static void add_dropped(struct emu *e, uint64_t line, uint64_t ctr)
{
	struct dropped *d = realloc(e->dropped, (e->ndropped + 1) * sizeof(*d));
	if (!d)
		abort();
	e->dropped = d;
	d[e->ndropped++] = (struct dropped){line, ctr};
}

/* ctrl_note_dropped -- add_dropped, for the redo log's recovery (redo.c). */
void ctrl_note_dropped(struct emu *e, uint64_t line, uint64_t ctr)
{
	add_dropped(e, line, ctr);
}

/* note_dropped -- an unready pair's data was encrypted under its partner's counter. */
static void note_dropped(struct emu *e, const struct wq_entry *w,
			 const struct wq_entry *ctr, unsigned cap)
{
	for (unsigned i = 0; i < cap; i++)
		if ((ctr[i].state & WQ_VALID) && ctr[i].seq == w->aux) {
			uint64_t c[64];
			unsigned per = e->layout->lines_per_ctr_line;
			e->layout->decode(ctr[i].payload, e->minor_bits, c);
			add_dropped(e, w->addr, c[w->addr % per]);
			return;
		}
}

/*
 * keep_dropped -- the dropped pairs durable in the ADR header (struct
 * adr_dropped) before the queues that hold them are cleared: entries first,
 * then their count with one store.  The table's entries (a recovery that
 * crashed) were loaded first; it holds one entry per line, whose counter
 * only grows (only the largest matters, ctrl_advance_stale).  -1 if full.
 */
static int keep_dropped(struct emu *e, int persist, size_t loaded)
{
	struct adr_dropped *t = e->adr_dropped;
	uint64_t n = t->n;
	for (size_t i = loaded; i < e->ndropped; i++) {
		const struct dropped *d = &e->dropped[i];
		uint64_t k = 0;
		while (k < n && t->e[k].line != d->line)
			k++;
		if (k < n) { /* one entry per line: the larger counter, one store */
			if (t->e[k].ctr < d->ctr) {
				__atomic_store_n(&t->e[k].ctr, d->ctr, __ATOMIC_RELEASE);
				persist_if(e, persist, &t->e[k].ctr, sizeof(t->e[k].ctr));
			}
			continue;
		}
		if (n == ADR_DROPPED_MAX)
			return -1;
		t->e[n].line = d->line;
		t->e[n].ctr = d->ctr;
		persist_if(e, persist, &t->e[n], sizeof(t->e[n]));
		n++;
	}
	__atomic_store_n(&t->n, n, __ATOMIC_RELEASE);
	persist_if(e, persist, &t->n, sizeof(t->n));
	return 0;
}

/* ctrl_keep_noted -- the lines noted dropped since index from (bmt.c's
 * recovery) made durable in the ADR header's table; -1 if it is full. */
int ctrl_keep_noted(struct emu *e, size_t from)
{
	return keep_dropped(e, e->media.persist_on, from);
}

/* wq_dropped_done -- every dropped pair's line is past its counter: the
 * table is emptied (ctrl_advance_stale). */
void wq_dropped_done(struct emu *e)
{
	__atomic_store_n(&e->adr_dropped->n, 0, __ATOMIC_RELEASE);
	persist_if(e, e->media.persist_on, &e->adr_dropped->n, sizeof(e->adr_dropped->n));
}

/* partner_ready -- is the counter entry with sequence seq ready? */
static int partner_ready(struct wq_entry *ctr, unsigned cap, uint64_t seq)
{
	for (unsigned i = 0; i < cap; i++)
		if ((ctr[i].state & WQ_VALID) && ctr[i].seq == seq)
			return (ctr[i].state & WQ_READY) != 0;
	return 0;
}

/*
 * wq_recover -- what ADR's backup power does at a failure: drain the ready
 * entries of both queues to their homes in order, drop the rest (SCA 5.2.2,
 * step 13).  Idempotent: an entry is freed only after its home is written,
 * so a crash during recovery is recovered again.
 */
int wq_recover(struct emu *e, struct wq_entry *data, unsigned dcap,
	       struct wq_entry *ctr, unsigned ccap, uint64_t *drained,
	       uint64_t *dropped)
{
	struct rec_entry *r = malloc(sizeof(*r) * (dcap + ccap + 1));
	if (!r)
		return -1;
	unsigned n = 0;
	*drained = *dropped = 0;
	/* a recovery that crashed left these (check_rsr bounded the count) */
	const struct adr_dropped *t = e->adr_dropped;
	for (uint64_t k = 0; k < t->n; k++)
		add_dropped(e, t->e[k].line, t->e[k].ctr);
	size_t loaded = e->ndropped;
	for (unsigned i = 0; i < dcap; i++) {
		struct wq_entry *w = &data[i];
		/* its ciphertext was being written: the line is advanced past its
		 * counter (the dedup designs' hash word was raised before, dedup.c) */
		if ((w->state & (WQ_VALID | WQ_RESERVED)) == WQ_RESERVED &&
		    e->design->dedup == DEDUP_NONE)
			add_dropped(e, wq_reserved_line(w), reserved_ctr(w));
		if (!(w->state & WQ_VALID))
			continue;
		/* a re-encrypted line is complete once valid: rolled forward */
		int ready = (w->state & (WQ_READY | WQ_RSR)) ||
			    ((w->state & WQ_PAIRED) && partner_ready(ctr, ccap, w->aux));
		if (ready) {
			r[n++] = (struct rec_entry){w, 0};
		} else {
			++*dropped;
			if (w->state & WQ_PAIRED)
				note_dropped(e, w, ctr, ccap);
		}
	}
	for (unsigned i = 0; i < ccap; i++) {
		struct wq_entry *w = &ctr[i];
		if (!(w->state & WQ_VALID))
			continue;
		if (w->state & WQ_READY)
			r[n++] = (struct rec_entry){w, 1};
		else
			++*dropped;
	}
	qsort(r, n, sizeof(*r), by_seq);
	for (unsigned i = 0; i < n; i++) {
		/* a crash in recovery repeats it: an older entry may follow a newer */
		wq_home_write(e, r[i].w, r[i].is_ctr, 0);
		if ((r[i].w->state & WQ_RSR) && rsr_covers(e, r[i].w->addr))
			rsr_mark_done(e, r[i].w->addr);
		emu_crash_point("recovery.entry_drained");
	}
	*drained = n;
	if (keep_dropped(e, e->media.persist_on, loaded)) {
		free(r);
		return -2;
	}
	emu_crash_point("recovery.dropped_kept");
	/* the drained entries freed oldest first: whatever a crash leaves valid
	 * is the newest writes of their lines, which the next recovery writes
	 * home again in order.  (Freed in slot order, an older write of a line
	 * in a later slot of the ring could outlive a newer one and be written
	 * home over it, under a counter that had moved on.)  A data entry ready
	 * through its partner alone may outlive the partner: the next recovery
	 * drops it, and its home and counter are already written. */
	for (unsigned i = 0; i < n; i++) {
		store_state(e, e->media.persist_on, r[i].w, 0);
		emu_crash_point("recovery.entry_freed");
	}
	free(r);
	for (unsigned i = 0; i < dcap; i++)
		if (data[i].state)
			store_state(e, e->media.persist_on, &data[i], 0);
	for (unsigned i = 0; i < ccap; i++)
		if (ctr[i].state)
			store_state(e, e->media.persist_on, &ctr[i], 0);
	return 0;
}
