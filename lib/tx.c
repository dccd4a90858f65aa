/*
 * tx.c -- undo-log transactions in the three stages of the counter-atomicity
 * paper's Figure 9:
 *   prepare  spm_tx_add: the old lines go to the lane's log, the log lines'
 *            counters are written back, barrier.  The first entry also sets
 *            the lane header (a CounterAtomic slot line) active.
 *   mutate   spm_tx_commit: the modified lines are written back, their
 *            counters written back, barrier.
 *   commit   the lane header is set inactive: one counter-atomic write,
 *            barrier (Figure 9 line 17, Backup.valid = false).
 * A crash before the commit write rolls the transaction back at open.
 *
 * Snapshots are whole lines.  In a design with selective counter-atomicity a
 * line written without its counter is unreadable after a crash, so every
 * byte of such a line must be recoverable from the log; for the same reason
 * each log entry starts on a line of its own, so writing an entry never
 * rewrites a line holding an older one.  Where entries and header slots go
 * in the lane, and how recovery finds them: txlog.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pool_internal.h"

static uint64_t round_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) / a * a;
}

/* vec_push -- append a range. */
int vec_push(struct vec *v, uint64_t off, uint64_t len)
{
	if (v->n == v->cap) {
		size_t cap = v->cap ? v->cap * 2 : 16;
		struct range *r = realloc(v->r, cap * sizeof(*r));
		if (!r)
			return emu_err(-ENOMEM, "out of memory for a transaction");
		v->r = r;
		v->cap = cap;
	}
	v->r[v->n++] = (struct range){off, len};
	return 0;
}

static unsigned lane_index(spm_pool *p, struct lane *l)
{
	return (unsigned)(l - p->lanes);
}

/* lane_of -- the lane whose open transaction thread me owns, or NULL.  The
 * lane begun last is tried first (a thread alone: always its own).  No bitmap
 * of the lanes in use: its atomic read-modify-writes at every begin and
 * release (full barriers on x86, behind the controller's streaming stores)
 * would cost every transaction to spare a thread whose hint missed a scan of
 * 16 owners. */
static struct lane *lane_of(spm_pool *p, uint64_t me)
{
	int hint = thread_lane_hint(p->uid); /* the thread's own lane: no other's line */
	if (hint >= 0 && __atomic_load_n(&p->lanes[hint].owner, __ATOMIC_ACQUIRE) == me)
		return &p->lanes[hint];
	for (unsigned i = 0; i < POOL_NLANES; i++)
		if (__atomic_load_n(&p->lanes[i].owner, __ATOMIC_ACQUIRE) == me)
			return &p->lanes[i];
	return NULL;
}

/* my_lane -- the lane of the calling thread's open transaction, or NULL;
 * its core set to the thread's core now (spm_core_set may come at any time). */
static inline struct lane *my_lane(spm_pool *p)
{
	unsigned core;
	struct lane *l = lane_of(p, thread_self(p, &core));
	if (l)
		l->core = core;
	return l;
}

/* fill_lane_header -- slot gen of lane i in the view; its pool offset. */
static uint64_t fill_lane_header(spm_pool *p, unsigned i, uint64_t active, uint64_t gen,
				 uint64_t log_start)
{
	struct lane_hdr *h = txlog_slot(p, i, gen);
	h->active = active;
	h->gen = gen;
	h->log_start = log_start;
	return (uint64_t)((uint8_t *)h - p->view);
}

/* set_lane_header -- the counter-atomic write that opens or commits, fenced:
 * slot gen of lane i, on core. */
static void set_lane_header(spm_pool *p, unsigned core, unsigned i, uint64_t active,
			    uint64_t gen, uint64_t log_start)
{
	uint64_t off = fill_lane_header(p, i, active, gen, log_start);
	pool_write_range_f(p, core, off, SPM_LINE, EMU_WB_FENCE);
}

/* write_ranges -- write back and counter-write-back a set of line ranges. */
static void write_ranges(spm_pool *p, unsigned core, const struct vec *v)
{
	if (v->n)
		pool_write_ranges(p, core, v->r, v->n, EMU_WB_CCWB);
}

/* restore_entry -- the view's bytes of undo entry e put back. */
static void restore_entry(spm_pool *p, const struct log_entry *e)
{
	uint64_t len = txlog_entry_len(e);
	if (e->len & LOG_FILL)
		for (uint64_t b = 0; b < len; b += LOG_FILL_BYTES)
			memcpy(p->view + e->off + b, e + 1, LOG_FILL_BYTES);
	else
		memcpy(p->view + e->off, e + 1, len);
}

/* close_rolled_back -- persist the restored ranges, then close lane i's
 * transaction gen (counter-atomic): the end of a rollback. */
static void close_rolled_back(spm_pool *p, unsigned core, unsigned i, uint64_t gen,
			      uint64_t start, const struct vec *restored)
{
	write_ranges(p, core, restored);
	spm_drain(p);
	emu_crash_point("tx.rolled_back");
	set_lane_header(p, core, i, 0, gen, start);
}

/*
 * lane_rollback -- recovery's rollback: restore every entry of generation
 * gen, started at ring offset start, in lane i, newest first (the oldest
 * snapshot of a byte is the one that stays), persist the restored lines,
 * then close the lane (counter-atomic).  A crash in the middle is recovered
 * again; out of memory, the open fails and the next one tries again.
 */
static int lane_rollback(spm_pool *p, unsigned core, unsigned i, uint64_t gen,
			 uint64_t start)
{
	uint8_t *base = txlog_base(p, i);
	struct vec found = {0}, restored = {0};
	int rc = txlog_scan(p, i, gen, start, &found);
	for (size_t k = found.n; k-- > 0 && !rc;) {
		struct log_entry *e = (struct log_entry *)(base + found.r[k].off);
		restore_entry(p, e);
		rc = vec_push(&restored, e->off, txlog_entry_len(e));
	}
	if (!rc)
		close_rolled_back(p, core, i, gen, start, &restored);
	free(restored.r);
	free(found.r);
	return rc;
}

/*
 * lane_abort_rollback -- lane_rollback of lane l's open transaction from
 * what the lane recorded as it logged (its entries' ring offsets, and the
 * ranges they restore, l->logged): nothing to allocate, so an abort cannot
 * fail.  (It did out of memory: the lane was released with its header
 * still active, the next transaction's header outranked it, and the aborted
 * writes became durable; found by a review.)
 */
static void lane_abort_rollback(spm_pool *p, struct lane *l)
{
	unsigned i = lane_index(p, l);
	uint8_t *base = txlog_base(p, i);
	for (size_t k = l->entries.n; k-- > 0;)
		restore_entry(p, (const struct log_entry *)(base + l->entries.r[k].off));
	close_rolled_back(p, l->core, i, l->gen, l->log_start, &l->logged);
}

/* unclaim -- the lines of lane l's transaction are free to others again:
 * its logged ranges' lines no longer owned, its logged ranges emptied. */
static void unclaim(spm_pool *p, struct lane *l)
{
	const uint8_t me = (uint8_t)(lane_index(p, l) + 1);
	for (size_t i = 0; i < l->logged.n; i++)
		for (uint64_t line = l->logged.r[i].off / SPM_LINE;
		     line * SPM_LINE < l->logged.r[i].off + l->logged.r[i].len; line++)
			if (__atomic_load_n(&p->line_owner[line], __ATOMIC_RELAXED) == me)
				__atomic_store_n(&p->line_owner[line], 0, __ATOMIC_RELEASE);
	l->logged.n = 0;
}

/* lane_release -- forget the volatile state and free the lane. */
static void lane_release(spm_pool *p, struct lane *l)
{
	unclaim(p, l);
	l->allocs.n = l->frees.n = 0;
	txlog_advance(p, l);
	l->hdr_written = 0;
	if (__atomic_load_n(&l->owner, __ATOMIC_RELAXED) == thread_id())
		--*thread_lanes(); /* not for another thread's, aborted at close */
	__atomic_store_n(&l->owner, 0, __ATOMIC_RELEASE);
}

/* lane_take -- lane i for thread me if it is free. */
static int lane_take(spm_pool *p, unsigned i, uint64_t me)
{
	uint64_t free_owner = 0;
	struct lane *l = &p->lanes[i];
	/* acquire: the lane's last owner wrote its fields before its release
	 * store of owner = 0 (lane_release) */
	if (__atomic_load_n(&l->owner, __ATOMIC_RELAXED) != 0 ||
	    !__atomic_compare_exchange_n(&l->owner, &free_owner, me, 0, __ATOMIC_ACQUIRE,
					 __ATOMIC_RELAXED))
		return 0;
	thread_lane_note(p->uid, i);
	return 1;
}

SPM_API int spm_tx_begin(spm_pool *pool)
{
	if (!pool)
		return emu_err(SPM_E_INVAL, "spm_tx_begin: NULL pool");
	if (pool_forked(pool))
		return pool_forked_err("spm_tx_begin");
	if (pool->raw)
		return emu_err(SPM_E_LAYOUT, "spm_tx_begin: a pool of layout %s "
			       "(libspm-preload.so's) has no heap", POOL_PRELOAD_LAYOUT);
	unsigned core;
	uint64_t me = thread_self(pool, &core);
	unsigned *held = thread_lanes();
	if (*held && lane_of(pool, me)) /* none held: in no transaction */
		return emu_err(SPM_E_TXSTATE, "spm_tx_begin: this thread is already in a "
			       "transaction");
	int rc;
	if (pool->track && (rc = track_begin(pool))) /* one at a time (track.c) */
		return rc;
	struct lane *l = NULL;
	/* a modeled core starts from its own lane: cores run one at a time
	 * in host order, and first-free would give them all lane 0, one log
	 * and one header counter line (a hot bank no real core set shares) */
	unsigned first = core % POOL_NLANES;
	for (unsigned k = 0; k < POOL_NLANES && !l; k++) {
		unsigned i = (first + k) % POOL_NLANES;
		if (lane_take(pool, i, me))
			l = &pool->lanes[i];
	}
	if (!l) {
		if (pool->track)
			track_end(pool);
		return emu_err(SPM_E_BUSY, "spm_tx_begin: all %u lanes are in use",
			       POOL_NLANES);
	}
	++*held;
	l->gen++; /* the lane's newest gen, kept from open (tx_recover) */
	l->hdr_written = 0;
	l->core = core;
	l->logged.n = l->entries.n = l->allocs.n = l->frees.n = 0;
	return 0;
}

/* covered -- is [off, off+len) inside a range of v? */
static int covered(const struct vec *v, uint64_t off, uint64_t len)
{
	for (size_t i = 0; i < v->n; i++)
		if (v->r[i].off <= off && off + len <= v->r[i].off + v->r[i].len)
			return 1;
	return 0;
}

/* line_logged -- is line in a range of v (owned before this claim)? */
static int line_logged(const struct vec *v, uint64_t line)
{
	for (size_t i = 0; i < v->n; i++)
		if (v->r[i].off < (line + 1) * SPM_LINE && line * SPM_LINE < v->r[i].off + v->r[i].len)
			return 1;
	return 0;
}

/*
 * claim_lines -- the transaction of lane l now owns lines [off, off+len).
 * Snapshots are whole lines, so two open transactions may not both own a
 * line: rolling one back would undo the other's bytes of it.  The second
 * gets SPM_E_BUSY (abort and retry, or lock the object).
 */
static int claim_lines(spm_pool *p, struct lane *l, uint64_t off, uint64_t len)
{
	const uint8_t me = (uint8_t)(lane_index(p, l) + 1);
	const uint64_t first = off / SPM_LINE, end = (off + len + SPM_LINE - 1) / SPM_LINE;
	/* each line's owner byte taken with one compare-and-swap: threads
	 * that snapshot different lines share nothing here */
	for (uint64_t line = first; line < end; line++) {
		uint8_t was = 0;
		if (__atomic_compare_exchange_n(&p->line_owner[line], &was, me, 0,
						__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE) ||
		    was == me)
			continue;
		/* another's: the lines this call took go back */
		for (uint64_t k = first; k < line; k++)
			if (!line_logged(&l->logged, k))
				__atomic_store_n(&p->line_owner[k], 0, __ATOMIC_RELEASE);
		return emu_err(SPM_E_BUSY, "spm_tx_add: line at offset %llu is snapshotted by "
			       "another open transaction", (unsigned long long)(line * SPM_LINE));
	}
	int rc = vec_push(&l->logged, off, len);
	if (rc)
		for (uint64_t k = first; k < end; k++)
			if (!line_logged(&l->logged, k))
				__atomic_store_n(&p->line_owner[k], 0, __ATOMIC_RELEASE);
	return rc;
}

/* copy_old -- the old bytes of [off, off+len) into dst: the view's, or
 * with tx_track=pages what the transaction's snapshots hold (track.c). */
static inline void copy_old(spm_pool *p, void *dst, uint64_t off, uint64_t len)
{
	if (__builtin_expect(p->track != NULL, 0))
		track_copy_old(p, dst, off, len);
	else
		memcpy(dst, p->view + off, len);
}

/* tx_snapshot -- prepare stage for one line range: log it (its bytes, or
 * with fill the 16-byte pattern they repeat) and persist the log. */
static int tx_snapshot(spm_pool *p, struct lane *l, uint64_t off, uint64_t len,
		       const uint64_t *fill)
{
	unsigned li = lane_index(p, l);
	uint64_t need = txlog_need(fill ? LOG_FILL_BYTES : len), pos;
	int rc = txlog_place(p, l, need, &pos);
	if (rc)
		return rc;
	/* recorded and claimed before the entry is written: a refused line
	 * leaves the ring as it was */
	if ((rc = vec_push(&l->entries, pos, need)))
		return rc;
	if ((rc = claim_lines(p, l, off, len))) {
		l->entries.n--;
		return rc;
	}
	uint8_t *ring = txlog_base(p, li);
	uint64_t eoff = (uint64_t)(ring - p->view) + pos;
	struct log_entry *e = (struct log_entry *)(ring + pos);
	e->off = off;
	e->len = fill ? len | LOG_FILL : len;
	e->gen = l->gen;
	e->start = l->log_start;
	if (fill)
		memcpy(e + 1, fill, LOG_FILL_BYTES);
	else
		copy_old(p, e + 1, off, len);
	e->sum = txlog_entry_sum(e, (uint8_t *)(e + 1));
	/* prepare: the entry and its counters, then (first entry) the lane
	 * header, one barrier (Figure 9 lines 9-11) */
	if (!l->hdr_written) { /* one controller entry for both */
		struct range r[2] = {{eoff, need},
				     {fill_lane_header(p, li, 1, l->gen, l->log_start), SPM_LINE}};
		struct pool_batch b[2] = {{r, 1, EMU_WB_CCWB}, {r + 1, 1, EMU_WB_FENCE}};
		pool_write_batches(p, l->core, b, 2);
		l->hdr_written = 1;
	} else {
		pool_write_range_f(p, l->core, eoff, need, EMU_WB_CCWB | EMU_WB_FENCE);
	}
	emu_crash_point("tx.logged");
	l->log_pos = pos + need;
	return 0;
}

/*
 * redo_declare -- spm_tx_add in the redo designs (srl, lame, clame): the
 * controller logs the transaction's lines at commit (emu/redo.c), so the
 * lines are only claimed, held back from write-backs until then, and their
 * bytes kept in memory for an abort.  Nothing is written.
 */
static int redo_declare(spm_pool *p, struct lane *l, uint64_t off, uint64_t len)
{
	if (l->saved_len + len > l->saved_cap) {
		size_t cap = l->saved_cap ? l->saved_cap : 4096;
		while (cap < l->saved_len + len)
			cap *= 2;
		uint8_t *b = realloc(l->saved, cap);
		if (!b)
			return emu_err(-ENOMEM, "out of memory for a transaction");
		l->saved = b;
		l->saved_cap = cap;
	}
	int rc = claim_lines(p, l, off, len);
	if (rc)
		return rc;
	copy_old(p, l->saved + l->saved_len, off, len);
	l->saved_len += len;
	emu_redo_hold(p->emu, off / SPM_LINE, len / SPM_LINE);
	return 0;
}

/* redo_abort -- the declared ranges' bytes back in the view, newest first;
 * they were never written back, so the media holds them already. */
static void redo_abort(spm_pool *p, struct lane *l)
{
	size_t at = l->saved_len;
	struct emu_range r[16];
	size_t nr = 0;
	for (size_t k = l->logged.n; k-- > 0;) {
		const struct range *g = &l->logged.r[k];
		at -= g->len;
		memcpy(p->view + g->off, l->saved + at, g->len);
		r[nr++] = (struct emu_range){g->off / SPM_LINE, g->len / SPM_LINE};
		if (nr == 16 || k == 0) {
			emu_redo_release(p->emu, r, nr);
			nr = 0;
		}
	}
	l->saved_len = 0;
}

/* redo_commit -- the transaction's declared lines to the controller, which
 * logs and commits them (0 once its commit record is in the ADR domain).
 * Its allocations are written home first, as in the undo designs: nothing
 * reaches them before the commit (their bitmap bits and the pointers to
 * them are among the declared lines), so they need no log. */
static int redo_commit(spm_pool *p, struct lane *l)
{
	size_t n = l->logged.n;
	if (l->allocs.n)
		pool_write_ranges(p, l->core, l->allocs.r, l->allocs.n, 0);
	if (!n)
		return 0;
	struct emu_range *r = malloc(n * sizeof(*r));
	if (!r)
		return emu_err(-ENOMEM, "out of memory for a commit");
	for (size_t i = 0; i < n; i++) {
		const struct range *g = &l->logged.r[i];
		uint64_t first = g->off / SPM_LINE;
		r[i] = (struct emu_range){first, round_up(g->off + g->len, SPM_LINE) / SPM_LINE -
						       first};
	}
	int rc = emu_redo_commit(p->emu, l->core, r, n, p->view);
	free(r);
	if (!rc)
		l->saved_len = 0;
	return rc;
}

/* tx_add_off -- spm_tx_add on a pool offset; with fill, the range's bytes
 * all repeat that 16-byte pattern and go into one fill entry (tx_snapshot). */
static int tx_add_off(spm_pool *p, struct lane *l, uint64_t off, uint64_t len,
		      const uint64_t *fill)
{
	uint64_t lanes_end = p->hdr->lane_off + (uint64_t)POOL_NLANES * p->hdr->lane_size;
	if (off < POOL_HDR_OFF || off >= p->size || len > p->size - off ||
	    (off < lanes_end && off + len > p->hdr->lane_off))
		return emu_err(SPM_E_INVAL, "spm_tx_add: range not inside the heap");
	if (len == 0)
		return 0;
	uint64_t first = off / SPM_LINE * SPM_LINE;
	uint64_t end = round_up(off + len, SPM_LINE);
	evict_maybe(p);
	if (covered(&l->logged, first, end - first) || covered(&l->allocs, off, len))
		return 0;
	int rc = emu_is_redo(p->emu) ? redo_declare(p, l, first, end - first)
				     : tx_snapshot(p, l, first, end - first, fill);
	if (!rc) {
		evict_note(p, first, end - first); /* the program modifies it next */
		emu_prefetch_counters(p->emu, first / SPM_LINE, (end - first) / SPM_LINE);
	}
	return rc;
}

SPM_API int spm_tx_add(spm_pool *pool, const void *addr, size_t len)
{
	if (pool && pool_forked(pool))
		return pool_forked_err("spm_tx_add");
	struct lane *l = pool ? my_lane(pool) : NULL;
	if (!l)
		return emu_err(SPM_E_TXSTATE, "spm_tx_add: no transaction on this thread");
	const uint8_t *a = addr;
	if (a < pool->view || a >= pool->view + pool->size)
		return emu_err(SPM_E_INVAL, "spm_tx_add: address not in the pool");
	return tx_add_off(pool, l, (uint64_t)(a - pool->view), len, NULL);
}

/* line_in -- does a range of v hold the line at off? */
static int line_in(const struct vec *v, uint64_t off)
{
	for (size_t i = 0; i < v->n; i++)
		if (v->r[i].off <= off && off < v->r[i].off + v->r[i].len)
			return 1;
	return 0;
}

struct track_arg {
	spm_pool *p;
	struct lane *l;
};

/* track_add -- track_changed's step: a run of changed lines, without those
 * logged already (an explicit spm_tx_add) and the transaction's own
 * allocations (written at commit unlogged), through spm_tx_add's path. */
static int track_add(void *arg, uint64_t off, uint64_t len)
{
	struct track_arg *a = arg;
	uint64_t run = 0, n = 0;
	for (uint64_t o = off; o <= off + len; o += SPM_LINE) {
		if (o < off + len && !line_in(&a->l->logged, o) && !line_in(&a->l->allocs, o)) {
			if (!n)
				run = o;
			n += SPM_LINE;
			continue;
		}
		if (n) {
			int rc = tx_add_off(a->p, a->l, run, n, NULL);
			if (rc)
				return rc;
			n = 0;
		}
	}
	return 0;
}

/* track_log_lane -- the lines of [lo, hi) lane l's tracked transaction
 * changed, logged (undo) or declared (redo). */
static int track_log_lane(spm_pool *p, struct lane *l, uint64_t lo, uint64_t hi)
{
	struct track_arg a = {p, l};
	return track_changed(p, lo, hi, track_add, &a);
}

/* tx_track_log -- track_log_lane for the calling thread's transaction
 * (spm_flush inside it: its changed lines are logged before written back). */
int tx_track_log(spm_pool *p, uint64_t lo, uint64_t hi)
{
	struct lane *l = my_lane(p);
	return l ? track_log_lane(p, l, lo, hi) : 0;
}

/* tx_add_internal -- for the allocator's bitmap words at commit; fill:
 * whole lines whose bytes all repeat it (checked by the caller), or NULL. */
int tx_add_internal(spm_pool *p, uint64_t off, uint64_t len, const uint64_t *fill)
{
	struct lane *l = my_lane(p);
	return l ? tx_add_off(p, l, off, len, fill) : SPM_E_TXSTATE;
}

SPM_API spm_off_t spm_tx_alloc(spm_pool *pool, size_t size)
{
	if (pool && pool_forked(pool))
		return pool_forked_err("spm_tx_alloc"), 0;
	struct lane *l = pool ? my_lane(pool) : NULL;
	if (!l)
		return emu_err(SPM_E_TXSTATE, "spm_tx_alloc: no transaction on this thread"),
		       0;
	if (size == 0 || size > pool->size)
		return emu_err(SPM_E_INVAL, "spm_tx_alloc: bad size %zu", size), 0;
	uint64_t units = (size + UNIT - 1) / UNIT, off;
	if (alloc_reserve(pool, l, units, &off))
		return 0;
	if (vec_push(&l->allocs, off, units * UNIT)) {
		alloc_unreserve(pool, off, units);
		return 0;
	}
	if (pool->track) /* its pages' snapshots, without a fault each */
		track_touch(pool, off, units * UNIT);
	memset(pool->view + off, 0, units * UNIT);
	evict_maybe(pool);
	evict_note(pool, off, units * UNIT);
	emu_prefetch_counters(pool->emu, off / SPM_LINE, units * UNIT / SPM_LINE);
	return off;
}

/* free_check_root -- SPM_E_INVAL if off is the root object, which lives as
 * long as the pool (its offset stays in the pool header: freed, a later
 * allocation would overlap it). */
static int free_check_root(spm_pool *p, uint64_t off)
{
	uint64_t root = __atomic_load_n(&p->hdr->root_off, __ATOMIC_RELAXED);
	if (root && off == root)
		return emu_err(SPM_E_INVAL, "spm_tx_free: %llu is the root object, which "
			       "cannot be freed", (unsigned long long)off);
	return 0;
}

SPM_API int spm_tx_free(spm_pool *pool, spm_off_t off)
{
	if (pool && pool_forked(pool))
		return pool_forked_err("spm_tx_free");
	struct lane *l = pool ? my_lane(pool) : NULL;
	if (!l)
		return emu_err(SPM_E_TXSTATE, "spm_tx_free: no transaction on this thread");
	for (size_t i = 0; i < l->allocs.n; i++)
		if (l->allocs.r[i].off == off) { /* allocated and freed in one tx */
			alloc_unreserve(pool, off, l->allocs.r[i].len / UNIT);
			l->allocs.r[i] = l->allocs.r[--l->allocs.n];
			return 0;
		}
	for (size_t i = 0; i < l->frees.n; i++)
		if (l->frees.r[i].off == off)
			return emu_err(SPM_E_INVAL, "spm_tx_free: offset %llu freed twice",
				       (unsigned long long)off);
	/* the persistent bitmaps are read under the locks of the arenas the
	 * object is in (alloc_object_units): a commit failing midway in another
	 * thread restores their words as its abort rolls back */
	uint64_t units;
	int rc = free_check_root(pool, off);
	if (!rc)
		rc = alloc_object_units(pool, off, &units);
	if (rc)
		return rc;
	return vec_push(&l->frees, off, units * UNIT);
}

/* tx_end -- release the lane after commit or abort. */
static void tx_end(spm_pool *p, struct lane *l, enum emu_rt_stat what)
{
	emu_stat_rt_add(p->emu, what, 1);
	lane_release(p, l);
	if (p->track)
		track_end(p);
}

/* tx_abort_lane -- roll back lane l of this process. */
static void tx_abort_lane(spm_pool *p, struct lane *l)
{
	if (p->track) /* the pages it wrote as they were; then the log's lines */
		track_restore(p);
	if (l->hdr_written)
		lane_abort_rollback(p, l);
	else if (l->saved_len)
		redo_abort(p, l);
	for (size_t i = 0; i < l->allocs.n; i++)
		alloc_unreserve(p, l->allocs.r[i].off, l->allocs.r[i].len / UNIT);
	tx_end(p, l, EMU_RT_TX_ABORTED);
}

SPM_API void spm_tx_abort(spm_pool *pool)
{
	if (pool && pool_forked(pool)) {
		pool_forked_err("spm_tx_abort");
		return;
	}
	struct lane *l = pool ? my_lane(pool) : NULL;
	if (l)
		tx_abort_lane(pool, l);
}

SPM_API int spm_tx_commit(spm_pool *pool)
{
	if (pool && pool_forked(pool))
		return pool_forked_err("spm_tx_commit");
	struct lane *l = pool ? my_lane(pool) : NULL;
	if (!l)
		return emu_err(SPM_E_TXSTATE, "spm_tx_commit: no transaction on this thread");
	if (pool->track) { /* the lines it changed, logged as spm_tx_add would */
		int rc = track_log_lane(pool, l, 0, pool->size);
		if (rc) {
			tx_abort_lane(pool, l);
			return rc;
		}
	}
	/* the arenas of its allocations and frees, locked until it is durable */
	const uint64_t arenas = l->allocs.n || l->frees.n ? alloc_arenas(pool, l) : 0;
	if (arenas) {
		alloc_lock_arenas(pool, arenas);
		int rc = alloc_commit(pool, l);
		if (rc) {
			tx_abort_lane(pool, l);
			alloc_unlock_arenas(pool, arenas);
			return rc;
		}
	}
	if (emu_is_redo(pool->emu)) {
		/* the controller logs and commits (emu/redo.c) */
		int rc = redo_commit(pool, l);
		if (rc) {
			tx_abort_lane(pool, l);
			alloc_unlock_arenas(pool, arenas);
			return rc;
		}
		emu_crash_point("tx.committed");
	} else if (l->hdr_written || l->allocs.n) {
		/* mutate: Figure 9 lines 13-15 */
		if (pool->evict_on) { /* the drain may write back evicted lines first */
			write_ranges(pool, l->core, &l->logged);
			write_ranges(pool, l->core, &l->allocs);
			spm_drain(pool);
		} else { /* the same, the fence under the one controller entry */
			struct pool_batch b[2] = {
				{l->logged.r, l->logged.n, EMU_WB_CCWB},
				{l->allocs.r, l->allocs.n, EMU_WB_CCWB | EMU_WB_FENCE}};
			pool_write_batches(pool, l->core, b, 2);
		}
		emu_crash_point("tx.mutated");
		/* commit: Figure 9 line 17, a counter-atomic write */
		if (l->hdr_written)
			set_lane_header(pool, l->core, lane_index(pool, l), 0, l->gen,
					l->log_start);
		emu_crash_point("tx.committed");
	}
	/* durable: nothing can roll back now, the lines are free to others */
	unclaim(pool, l);
	if (arenas) {
		alloc_after_commit(pool, l);
		alloc_unlock_arenas(pool, arenas);
	}
	tx_end(pool, l, EMU_RT_TX_COMMITTED);
	return 0;
}

/* tx_recover -- at open: roll back every lane left active by a crash; each
 * lane's transactions go on from its newest gen, their logs from offset 0. */
int tx_recover(spm_pool *p)
{
	for (unsigned i = 0; i < POOL_NLANES; i++) {
		struct lane_hdr *h = txlog_newest(p, i);
		p->lanes[i].gen = h->gen;
		p->lanes[i].log_head = 0;
		if (!h->active)
			continue;
		int rc = lane_rollback(p, pool_core(p), i, h->gen, h->log_start);
		if (rc)
			return rc;
		emu_stat_rt_add(p->emu, EMU_RT_ROLLED_BACK, 1);
	}
	return 0;
}

/* tx_abort_all -- at close: abort transactions still open. */
void tx_abort_all(spm_pool *p)
{
	for (unsigned i = 0; i < POOL_NLANES; i++)
		if (p->lanes[i].owner) {
			p->lanes[i].core = pool_core(p); /* charged to the closing thread */
			tx_abort_lane(p, &p->lanes[i]);
		}
}

/* tx_thread_exit -- thread me is exiting (persist.c's exit destructor):
 * abort its open transaction in p, if any, and free the lane. */
void tx_thread_exit(spm_pool *p, uint64_t me)
{
	struct lane *l = lane_of(p, me);
	if (l)
		tx_abort_lane(p, l);
}

/* tx_in_tx -- has the calling thread an open transaction in p? */
int tx_in_tx(spm_pool *p)
{
	unsigned core;
	uint64_t me = thread_self(p, &core);
	return *thread_lanes() && lane_of(p, me);
}
