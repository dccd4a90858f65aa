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
 * ctrl_read_line -- a read of data line for core, issued at at; returns
 * when its plaintext is ready.  The read waits for a read queue entry (the
 * entry it takes frees when the read is done: a ring, as the write queue),
 * then for its bank (tm_read_first: ahead of queued writes).
 */
uint64_t ctrl_read_line(struct emu *e, unsigned core, uint64_t line, uint64_t at)
{
	struct timing *tm = &e->tm;
	if (!e->rq.cap)
		read_queue_reset(e);
	uint64_t *slot = &e->rq.free[e->rq.pos];
	const uint64_t issued = at;
	at = max64(at, *slot);
	if (e->dedup) { /* through the address mapping (dedup.c) */
		uint64_t ready = dedup_read(e, core, line, at);
		*slot = ready;
		e->rq.pos = e->rq.pos + 1 == e->rq.cap ? 0 : e->rq.pos + 1;
		e->stat[ST_MEM_READS]++;
		e->stat[ST_MEM_READ_NS] += (ready - issued + 500) / 1000;
		return ready;
	}
	uint64_t from = line; /* where its newest version is: home, or the redo log */
	if (e->redo)
		redo_read_from_log(e, line, at, &from);
	uint64_t data = tm_read_first(tm, core, from == line ? ctrl_data_bank(e, line)
							      : ctrl_bank_of(e, from), at),
		 ready = data;
	if (e->design->enc == ENC_CTR) {
		if (e->bmt) { /* counter and tree from the metadata cache, the MAC checked */
			ready = bmt_read_verify(e, core, line, at);
			ready = max64(data, ready) + tm->mac;
		} else if (e->design->cc == CC_NONE) {
			ready = tm_aes_unbooked(tm, data); /* the counter came with the data */
		} else {
			uint64_t ctr = ctrl_counter_for_read(e, core, line, at);
			ready = max64(data, tm_aes_unbooked(tm, ctr));
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
