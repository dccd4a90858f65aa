/*
 * timing.c -- the timing model: per-core modeled clocks and the shared
 * resources of the memory controller (banks, row activations, write queue
 * slots, the AES engine), with the PCM timings of SCA Table 2
 * (tRCD/tCL/tCWD/tFAW/tWTR/tWR).  Times are picoseconds.  Deterministic: the
 * same sequence of requests gives the same times.
 *
 * Modeled cores run one operation at a time in host order (spm-bench), so a
 * core's request may come after requests of other cores that are later in
 * modeled time.  Banks and activations are therefore calendars (struct
 * tm_cal): a request takes the earliest free gap at or after its time, not
 * the end of the latest booking, which would drag a lagging core to the
 * leading core's clock.  Queue slots stay a ring (a write waits for the
 * one cap writes before it to complete) and the AES engine a busy-until
 * pipeline: letting a write take any slot free by then, or the engine's
 * gaps, moved SCA's 1-8 core results by under 1 %.
 */
#include <string.h>

#include "emu_internal.h"

static uint64_t ps(double ns)
{
	return (uint64_t)(ns * 1000.0 + 0.5);
}

static uint64_t max64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* tm_init -- the model of profile p with the given queue depths and banks
 * (bank_hash: permute banks by the higher address bits, see ctrl bank_of). */
void tm_init(struct timing *t, const struct profile *p, unsigned wpq_data,
	     unsigned wpq_ctr, unsigned banks, unsigned bank_lines, int bank_hash)
{
	memset(t, 0, sizeof(*t));
	t->rcd = ps(p->t_rcd);
	t->cl = ps(p->t_cl);
	t->cwd = ps(p->t_cwd);
	t->faw = ps(p->t_faw);
	t->wtr = ps(p->t_wtr);
	t->wr = ps(p->t_wr);
	t->aes = ps(p->aes_ns);
	t->aes_issue = ps(p->aes_issue_ns);
	t->cc_hit = ps(p->cc_hit_ns);
	t->issue = ps(p->issue_ns);
	t->banks = banks;
	t->bank_mask = (banks & (banks - 1)) == 0 ? banks - 1 : 0;
	t->bank_bits = t->bank_mask ? (unsigned)__builtin_ctz(banks) : 0;
	t->bank_fold = 0;
	if (bank_hash && t->bank_bits)
		for (unsigned f = t->bank_bits; f < 64; f *= 2)
			t->bank_fold = f; /* shifts fold, fold/2, ... bank_bits */
	t->bank_lines = bank_lines ? bank_lines : 1;
	t->bank_shift = (t->bank_lines & (t->bank_lines - 1)) ? -1
							   : __builtin_ctz(t->bank_lines);
	t->wpq_shared = p->wpq_shared;
	t->qdata.cap = wpq_data;
	t->qctr.cap = wpq_ctr;
}

/* tm_reset -- every clock and resource back to time 0. */
void tm_reset(struct timing *t)
{
	for (unsigned b = 0; b < TM_MAX_BANKS; b++)
		t->bank[b].n = 0, t->bank[b].floor = 0, t->bank[b].writes = 0;
	t->act.n = 0;
	t->act.floor = 0;
	memset(t->clock, 0, sizeof(t->clock));
	memset(t->pending, 0, sizeof(t->pending));
	memset(t->qdata.slot_free, 0, sizeof(t->qdata.slot_free));
	memset(t->qctr.slot_free, 0, sizeof(t->qctr.slot_free));
	memset(t->qdata.slot_start, 0, sizeof(t->qdata.slot_start));
	memset(t->qctr.slot_start, 0, sizeof(t->qctr.slot_start));
	t->aes_free = 0;
	t->qdata.pos = t->qctr.pos = 0;
}

/* tm_aes -- the engine is pipelined: latency aes, one line per aes_issue. */
uint64_t tm_aes(struct timing *t, uint64_t ready)
{
	uint64_t start = max64(ready, t->aes_free);
	t->aes_free = start + t->aes_issue;
	return start + t->aes;
}

/* ---- calendars ---- */

/* cal_make_room -- a full calendar forgets its older half: before the end
 * of what it forgot the resource counts as busy from now on. */
static inline void cal_make_room(struct tm_cal *c)
{
	if (c->n < TM_CAL)
		return;
	const unsigned h = TM_CAL / 2;
	c->floor = max64(c->floor, c->end[h - 1]);
	memmove(c->start, c->start + h, (TM_CAL - h) * sizeof(c->start[0]));
	memmove(c->end, c->end + h, (TM_CAL - h) * sizeof(c->end[0]));
	c->writes >>= h;
	c->n -= h;
}

/*
 * cal_find -- the earliest start at or after at of a request that holds the
 * resource for len; *pos is where it goes in the calendar.  wtr: the gap a
 * read keeps after a write (0 for writes).  Requests in time order find
 * their place at the end at once.
 */
static inline uint64_t cal_find(const struct tm_cal *c, uint64_t at, uint64_t len,
				uint64_t wtr, unsigned *pos)
{
	at = max64(at, c->floor);
	unsigned k = c->n;
	while (k > 0 && c->end[k - 1] > at)
		k--;
	if (k > 0 && wtr && (c->writes >> (k - 1) & 1))
		at = max64(at, c->end[k - 1] + wtr);
	for (; k < c->n; k++) {
		if (at + len <= c->start[k])
			break;
		at = max64(at, c->end[k] + ((c->writes >> k & 1) ? wtr : 0));
	}
	*pos = k;
	return at;
}

/* cal_insert -- book [start, end) at position pos (from cal_find); a write
 * that follows a write without a gap extends its interval. */
static inline void cal_insert(struct tm_cal *c, unsigned pos, uint64_t start, uint64_t end,
			      int write)
{
	if (write && pos > 0 && (c->writes >> (pos - 1) & 1) && c->end[pos - 1] == start) {
		c->end[pos - 1] = end;
		return;
	}
	if (pos < c->n) {
		memmove(c->start + pos + 1, c->start + pos, (c->n - pos) * sizeof(c->start[0]));
		memmove(c->end + pos + 1, c->end + pos, (c->n - pos) * sizeof(c->end[0]));
	}
	uint64_t low = (1ull << pos) - 1; /* pos < TM_CAL <= 64 */
	c->writes = (c->writes & low) | ((c->writes & ~low) << 1) | ((uint64_t)(write != 0) << pos);
	c->start[pos] = start;
	c->end[pos] = end;
	c->n++;
}

/* ---- row activations (tFAW) ---- */

/*
 * faw_find -- the earliest activation at or after at that keeps every five
 * consecutive activations at least tFAW apart (at most four in any tFAW
 * window); *pos is its place among them.  Windows of at and the four
 * before it are mended by waiting; one that holds later activations only
 * by passing the next of them.
 */
static inline uint64_t faw_find(const struct timing *t, uint64_t at, unsigned *pos)
{
	const struct tm_acts *a = &t->act;
	const uint64_t faw = t->faw, *x = a->at;
	const unsigned n = a->n;
	at = max64(at, a->floor);
	unsigned k = n;
	for (;;) {
		while (k > 0 && x[k - 1] > at)
			k--;
		while (k < n && x[k] <= at)
			k++;
		if (!faw)
			break;
		if (k >= 4 && at < x[k - 4] + faw) {
			at = x[k - 4] + faw;
			continue;
		}
		unsigned later = n - k;
		if (!later)
			break;
		if ((k >= 3 && x[k] - x[k - 3] < faw) ||
		    (later >= 2 && k >= 2 && x[k + 1] - x[k - 2] < faw) ||
		    (later >= 3 && k >= 1 && x[k + 2] - x[k - 1] < faw) ||
		    (later >= 4 && x[k + 3] - at < faw)) {
			at = x[k];
			continue;
		}
		break;
	}
	*pos = k;
	return at;
}

/* act_make_room -- a full record forgets its older half; no activation may
 * be placed before the last one forgotten from now on. */
static inline void act_make_room(struct tm_acts *a)
{
	if (a->n < TM_ACT)
		return;
	const unsigned h = TM_ACT / 2;
	a->floor = max64(a->floor, a->at[h - 1]);
	memmove(a->at, a->at + h, (TM_ACT - h) * sizeof(a->at[0]));
	a->n -= h;
}

/* act_insert -- record an activation at time at, position pos (faw_find). */
static inline void act_insert(struct tm_acts *a, unsigned pos, uint64_t at)
{
	for (unsigned k = a->n; k > pos; k--)
		a->at[k] = a->at[k - 1];
	a->at[pos] = at;
	a->n++;
}

/*
 * book -- bank b for len from the earliest time at or after at when the
 * bank is free and a row activation is allowed (tFAW); returns the start.
 * wtr: as cal_find.
 */
static inline __attribute__((always_inline)) uint64_t book(struct timing *t, unsigned b, uint64_t at, uint64_t len,
			    uint64_t wtr, int write)
{
	struct tm_cal *c = &t->bank[b];
	cal_make_room(c);
	act_make_room(&t->act);
	unsigned pos, apos;
	for (;;) {
		uint64_t start = cal_find(c, at, len, wtr, &pos);
		at = faw_find(t, start, &apos);
		if (at == start)
			break;
	}
	cal_insert(c, pos, at, at + len, write);
	act_insert(&t->act, apos, at);
	return at;
}

/*
 * write_slot -- a write enters queue q when its slot is free (acceptance,
 * the point of durability under ADR) and drains to its bank: the bank is busy
 * tCWD + tWR (busy) from the first gap after acceptance (book).  The slot
 * frees when the write completes.  *pos is q's next slot (q->pos, held by
 * the caller).
 */
static inline uint64_t write_slot(struct timing *t, struct tm_queue *q, unsigned *pos,
				  uint64_t busy, unsigned bank, uint64_t addr, uint64_t ready,
				  int *stalled)
{
	uint64_t slot = q->slot_free[*pos];
	uint64_t accept = max64(ready, slot);
	*stalled = slot > ready;
	uint64_t start = book(t, bank, accept, busy, 0, 1);
	q->slot_free[*pos] = start + busy;
	q->slot_start[*pos] = start;
	q->slot_addr[*pos] = addr;
	if (++*pos == q->cap)
		*pos = 0;
	return accept;
}

/* tm_write -- one write into queue q (write_slot); returns its acceptance. */
uint64_t tm_write(struct timing *t, struct tm_queue *q, unsigned bank,
		  uint64_t addr, uint64_t ready, int *stalled)
{
	unsigned pos = q->pos;
	uint64_t accept = write_slot(t, q, &pos, t->cwd + t->wr, bank, addr, ready, stalled);
	q->pos = pos;
	return accept;
}

/*
 * tm_write_n -- n writes into queue q one after the other, exactly as n
 * tm_write calls (write i: bank[i], addr[i], ready at ready[i]); returns the
 * latest acceptance and adds the writes that waited for a slot to *stalls.
 */
uint64_t tm_write_n(struct timing *t, struct tm_queue *q, const uint16_t *bank,
		    const uint64_t *addr, const uint64_t *ready, unsigned n,
		    uint64_t *stalls)
{
	uint64_t last = 0, waited = 0;
	const uint64_t busy = t->cwd + t->wr;
	unsigned pos = q->pos;
	for (unsigned i = 0; i < n; i++) {
		int stalled;
		last = max64(last, write_slot(t, q, &pos, busy, bank[i], addr[i], ready[i],
					      &stalled));
		waited += (uint64_t)stalled;
	}
	q->pos = pos;
	*stalls += waited;
	return last;
}

/*
 * tm_write_pairs -- n counter-atomic pairs, exactly as n pairs of tm_write
 * calls: pair i's counter line write (bank cbank[i], address caddr[i], ready
 * at cready[i]) into qc, then its data write (dbank[i], daddr[i]) into qd,
 * ready when both its pad (dready[i]) and its partner's acceptance are (SCA
 * 5.2.2: the data entry waits for its counter entry).  qc may be qd (a
 * shared queue).  Returns the latest acceptance; adds the writes that
 * waited for a slot to *stalls.
 */
uint64_t tm_write_pairs(struct timing *t, struct tm_queue *qc, struct tm_queue *qd,
			const uint16_t *cbank, const uint64_t *caddr,
			const uint64_t *cready, const uint16_t *dbank,
			const uint64_t *daddr, const uint64_t *dready, unsigned n,
			uint64_t *stalls)
{
	uint64_t last = 0, waited = 0;
	const uint64_t busy = t->cwd + t->wr;
	unsigned pd = qd->pos, pc = qc->pos;
	unsigned *pcp = qc == qd ? &pd : &pc; /* a shared queue has one position */
	for (unsigned i = 0; i < n; i++) {
		int sc, sd;
		uint64_t cacc = write_slot(t, qc, pcp, busy, cbank[i], caddr[i], cready[i], &sc);
		uint64_t dacc = write_slot(t, qd, &pd, busy, dbank[i], daddr[i],
					   max64(dready[i], cacc), &sd);
		last = max64(last, max64(cacc, dacc));
		waited += (uint64_t)sc + (uint64_t)sd;
	}
	qc->pos = pc;
	qd->pos = pd;
	*stalls += waited;
	return last;
}

/*
 * tm_queued -- a write of addr entered q and has not reached its bank by
 * time at: it still waits in the queue, where a newer write of the same
 * counter line may replace it (SuperMem 3.4.3).
 */
int tm_queued(const struct timing *t, const struct tm_queue *q, uint64_t addr,
	      uint64_t at)
{
	(void)t;
	for (unsigned i = 0; i < q->cap; i++)
		if (q->slot_addr[i] == addr && q->slot_start[i] > at)
			return 1;
	return 0;
}

/* tm_read -- a read of bank at time at: tRCD + tCL, tWTR after a write. */
uint64_t tm_read(struct timing *t, unsigned bank, uint64_t at)
{
	const uint64_t len = t->rcd + t->cl;
	return book(t, bank, at, len, t->wtr, 0) + len;
}

/* tm_makespan -- the modeled time of the run: the latest core clock. */
uint64_t tm_makespan(const struct timing *t)
{
	uint64_t m = 0;
	for (unsigned i = 0; i < EMU_MAX_CORES; i++)
		m = max64(m, t->clock[i]);
	return m;
}

/* tm_bank_free -- when bank b's latest booked request ends. */
uint64_t tm_bank_free(const struct timing *t, unsigned b)
{
	const struct tm_cal *c = &t->bank[b];
	return c->n ? c->end[c->n - 1] : c->floor;
}
