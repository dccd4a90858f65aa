/*
 * read.c -- the controller's read path (SCA 3.2.1, Figures 5 and 6): a line
 * the core model misses in its last-level cache is read from its bank
 * through the read queue.  In counter mode its counter is looked up in the
 * counter cache meanwhile (a miss reads the counter line too) and the pad
 * is made while the data is read, so decryption overlaps the read when the
 * counter hits; where the counter travels with the data (co-located without
 * a counter cache) the pad can only be made once the read is done
 * (Fig. 6(a)).  The read changes nothing in the media: the plaintext is in
 * the view already; the model decides only when it arrives.
 */
#include "emu_internal.h"

static inline uint64_t max64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* read_queue_reset -- every read queue entry free at time 0 (the clocks'
 * reset); the profile's depth. */
void read_queue_reset(struct emu *e)
{
	memset(e->rq.free, 0, sizeof(e->rq.free));
	e->rq.pos = 0;
	if (!e->rq.cap) {
		unsigned cap = e->profile->rq_entries;
		e->rq.cap = cap && cap <= TM_MAX_QUEUE ? cap : 32;
	}
}

/*
 * pad_at -- when a read's pad, begun at at, is ready: the engine's latency.
 * The pad does not book the engine (tm_aes): the engine is a busy-until
 * pipeline served in the order requests arrive, and a read's pad begins
 * when its counter or its data arrives, in the future of the core's clock,
 * where it would hold back the pads of the core's next write-backs,
 * requested at earlier modeled times (a store miss does not stall the
 * core).  Pipelined, the engine takes a line every aes_issue: its
 * occupancy moves results by under 1 % (timing.c), its ordering by much
 * more (doc/tried.md, "The core model").
 */
static inline uint64_t pad_at(const struct timing *tm, uint64_t at)
{
	return tm->off ? at : at + tm->aes;
}

/*
 * ctrl_read_bank -- a read of bank (core's bank, with core_banks) arriving at
 * at: when its data is out.  Reads go before queued writes that have not
 * started (read priority, as FR-FCFS memory controllers schedule): the read
 * waits only for the request its bank is serving at at (and tWTR after a
 * write), then takes tRCD + tCL and its burst on the bus (not booked on the
 * bus either).  A calendar joins back-to-back bookings
 * into one interval, so the request in progress is taken to be a write
 * (tCWD + tWR) in a row of writes from the interval's start.  It is not booked on the bank's calendar,
 * so writes already scheduled keep their times; a read therefore delays no
 * write, and two reads of one bank do not wait for each other (with
 * blocking cores, a core has at most one load miss in flight).
 */
uint64_t ctrl_read_bank(struct emu *e, unsigned core, unsigned bank, uint64_t at)
{
	const struct timing *t = &e->tm;
	if (t->off)
		return at;
	if (t->core_banks)
		bank = (bank + core) % t->banks;
	const struct tm_cal *c = &t->bank[bank];
	const uint64_t busy = t->busy ? t->busy : 1;
	uint64_t start = at;
	if (at < c->floor) /* in what the calendar forgot: as if one write serves */
		start = c->floor < at + busy ? c->floor : at + busy;
	unsigned k = c->n; /* back to the first booking that ends after start */
	while (k > 0 && c->end[k - 1] > start)
		k--;
	for (; k < c->n && c->start[k] <= start; k++)
		if (start < c->end[k]) {
			/* a booking joins back-to-back requests: the one in
			 * progress at start ends at the next multiple of a
			 * write's time from the booking's start */
			uint64_t done = c->start[k] + ((start - c->start[k]) / busy + 1) * busy;
			start = (done < c->end[k] ? done : c->end[k]) + (c->write[k] ? t->wtr : 0);
		}
	return start + t->rcd + t->cl + t->burst; /* the data crosses the bus */
}

/*
 * ctrl_read_line -- a read of data line for core, issued at at; returns
 * when its plaintext is ready.  The read waits for a read queue entry (the
 * entry it takes frees when the read is done: a ring, as the write queue),
 * then for its bank (ctrl_read_bank).
 */
uint64_t ctrl_read_line(struct emu *e, unsigned core, uint64_t line, uint64_t at)
{
	struct timing *tm = &e->tm;
	if (!e->rq.cap)
		read_queue_reset(e);
	uint64_t *slot = &e->rq.free[e->rq.pos];
	const uint64_t issued = at;
	at = max64(at, *slot);
	uint64_t data = ctrl_read_bank(e, core, ctrl_data_bank(e, line), at), ready = data;
	if (e->design->enc == ENC_CTR) {
		if (e->design->cc == CC_NONE) {
			ready = pad_at(tm, data); /* the counter came with the data */
		} else {
			uint64_t ctr = ctrl_counter_for_read(e, core, line, at);
			ready = max64(data, pad_at(tm, ctr));
		}
		e->stat[ST_AES_PADS]++;
	}
	*slot = ready;
	e->rq.pos = e->rq.pos + 1 == e->rq.cap ? 0 : e->rq.pos + 1;
	e->stat[ST_MEM_READS]++;
	e->stat[ST_MEDIA_READS]++;
	e->stat[ST_MEM_READ_NS] += (ready - issued + 500) / 1000; /* the queue's wait too */
	return ready;
}
