/*
 * timing.c -- the timing model: per-core modeled clocks and the shared
 * resources of the memory controller as busy-until times (banks, write queue
 * slots, the AES engine), with the PCM timings of SCA Table 2
 * (tRCD/tCL/tCWD/tFAW/tWTR/tWR).  Times are picoseconds.  Deterministic: the
 * same sequence of requests gives the same times.
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

/* tm_init -- the model of profile p with the given queue depths and banks. */
void tm_init(struct timing *t, const struct profile *p, unsigned wpq_data,
	     unsigned wpq_ctr, unsigned banks, unsigned bank_lines)
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
	memset(t->bank_free, 0, sizeof(t->bank_free));
	memset(t->bank_last_write, 0, sizeof(t->bank_last_write));
	memset(t->act, 0, sizeof(t->act));
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

/*
 * activate -- a row activation at or after at, honouring tFAW (4 per
 * window).  *ap is the slot of the oldest of the last four activations
 * (t->act_pos, held by the caller while it issues a run of writes).
 */
static inline uint64_t activate(struct timing *t, unsigned *ap, uint64_t faw, uint64_t at)
{
	uint64_t oldest = t->act[*ap];
	if (oldest && at < oldest + faw)
		at = oldest + faw;
	t->act[*ap] = at ? at : 1;
	*ap = (*ap + 1) & 3;
	return at;
}

/*
 * write_slot -- a write enters queue q when a slot is free (acceptance, the
 * point of durability under ADR) and drains to its bank in FIFO order:
 * the bank is busy tCWD + tWR (busy).  The slot frees when the write
 * completes.  *pos is q's next slot and *ap the activation slot (q->pos and
 * t->act_pos, held by the caller); faw is tFAW.
 */
static inline uint64_t write_slot(struct timing *t, struct tm_queue *q, unsigned *pos,
				  unsigned *ap, uint64_t faw, uint64_t busy, unsigned bank,
				  uint64_t addr, uint64_t ready, int *stalled)
{
	uint64_t slot = q->slot_free[*pos];
	uint64_t accept = max64(ready, slot);
	*stalled = slot > ready;
	uint64_t start = activate(t, ap, faw, max64(accept, t->bank_free[bank]));
	uint64_t done = start + busy;
	t->bank_free[bank] = done;
	t->bank_last_write[bank] = 1;
	q->slot_free[*pos] = done;
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
	unsigned pos = q->pos, ap = t->act_pos;
	uint64_t accept = write_slot(t, q, &pos, &ap, t->faw, t->cwd + t->wr, bank, addr,
				     ready, stalled);
	q->pos = pos;
	t->act_pos = ap;
	return accept;
}

/*
 * tm_write_n -- n writes into queue q one after the other, exactly as n
 * tm_write calls (write i: bank[i], addr[i], ready at ready[i]); returns the
 * latest acceptance and adds the writes that waited for a slot to *stalls.
 * The queue and activation positions and the timings stay in registers.
 */
uint64_t tm_write_n(struct timing *t, struct tm_queue *q, const uint16_t *bank,
		    const uint64_t *addr, const uint64_t *ready, unsigned n,
		    uint64_t *stalls)
{
	uint64_t last = 0, waited = 0;
	const uint64_t faw = t->faw, busy = t->cwd + t->wr;
	unsigned pos = q->pos, ap = t->act_pos;
	for (unsigned i = 0; i < n; i++) {
		int stalled;
		last = max64(last, write_slot(t, q, &pos, &ap, faw, busy, bank[i], addr[i],
					      ready[i], &stalled));
		waited += (uint64_t)stalled;
	}
	q->pos = pos;
	t->act_pos = ap;
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
	const uint64_t faw = t->faw, busy = t->cwd + t->wr;
	unsigned pd = qd->pos, pc = qc->pos, ap = t->act_pos;
	unsigned *pcp = qc == qd ? &pd : &pc; /* a shared queue has one position */
	for (unsigned i = 0; i < n; i++) {
		int sc, sd;
		uint64_t cacc = write_slot(t, qc, pcp, &ap, faw, busy, cbank[i], caddr[i],
					   cready[i], &sc);
		uint64_t dacc = write_slot(t, qd, &pd, &ap, faw, busy, dbank[i], daddr[i],
					   max64(dready[i], cacc), &sd);
		last = max64(last, max64(cacc, dacc));
		waited += (uint64_t)sc + (uint64_t)sd;
	}
	qc->pos = pc;
	qd->pos = pd;
	t->act_pos = ap;
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

/* tm_read -- a read of bank at time at: tRCD + tCL, after tWTR following a write. */
uint64_t tm_read(struct timing *t, unsigned bank, uint64_t at)
{
	uint64_t free = t->bank_free[bank];
	if (t->bank_last_write[bank])
		free += t->wtr;
	unsigned ap = t->act_pos;
	uint64_t start = activate(t, &ap, t->faw, max64(at, free));
	t->act_pos = ap;
	uint64_t done = start + t->rcd + t->cl;
	t->bank_free[bank] = done;
	t->bank_last_write[bank] = 0;
	return done;
}

/* tm_makespan -- the modeled time of the run: the latest core clock. */
uint64_t tm_makespan(const struct timing *t)
{
	uint64_t m = 0;
	for (unsigned i = 0; i < EMU_MAX_CORES; i++)
		m = max64(m, t->clock[i]);
	return m;
}
