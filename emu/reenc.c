/*
 * reenc.c -- page re-encryption for split counters (SuperMem 3.4.4).  When
 * a line's minor counter would overflow, the page's major counter grows by
 * one and every line of the page is re-encrypted under (new major, minor 0),
 * its plaintext unchanged.  Crash-safe through the re-encryption status
 * register (RSR: page, old major, done bits) kept in the ADR region:
 *  1. the page's lines are drained home, the RSR is filled and then made
 *     active by one 8-byte store;
 *  2. each line is decrypted from home under its old counter, encrypted
 *     under the new one and enqueued (an RSR entry: complete once valid, so
 *     recovery rolls it forward), then its done bit is set;
 *  3. the page's counter line (new major, minors 0) is enqueued, ready;
 *  4. the RSR is cleared by one store.
 * After a crash, a line of the active page is under the new major iff its
 * done bit is set (reenc_interpret); recovery then re-encrypts the lines not
 * done and finishes the page (reenc_resume).  Each re-encrypted line is
 * written like a regular flush (SuperMem: the same register, CWC and XBank).
 */
#include <stdlib.h>
#include <string.h>

#include "emu_internal.h"
#include "wq.h"

static inline uint64_t max64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* rsr_store -- one ADR-protected 8-byte store to the register. */
static void rsr_store(struct emu *e, uint64_t *word, uint64_t v)
{
	__atomic_store_n(word, v, __ATOMIC_RELEASE);
	media_persist(&e->media, word, sizeof(*word));
}

/* reenc_needed -- would the next write of line overflow its minor counter? */
int reenc_needed(const struct emu *e, uint64_t line)
{
	if (e->layout->id != LAYOUT_SPLIT)
		return 0;
	uint64_t mask = (1ull << e->minor_bits) - 1;
	return (e->cur_ctr[line] & mask) == mask;
}

/* rsr_covers -- is line in the page the RSR is re-encrypting? */
int rsr_covers(const struct emu *e, uint64_t line)
{
	return e->rsr && e->rsr->active == line / 64 + 1;
}

/* rsr_mark_done -- line is under the new major: its done bit (one store). */
void rsr_mark_done(struct emu *e, uint64_t line)
{
	rsr_store(e, &e->rsr->done, e->rsr->done | 1ull << (line % 64));
}

/* reenc_line -- line l, decrypted from home under its counter, re-encrypted
 * under newctr and enqueued at modeled time t_pad (its read and pad done). */
static int reenc_line(struct emu *e, unsigned core, uint64_t l, uint64_t newctr,
		      uint64_t t_pad)
{
	uint8_t plain[EMU_LINE] = {0}, pad[EMU_LINE];
	uint64_t old = e->cur_ctr[l];
	if (old) {
		if (crypto_line_pads_ctl(e->crypto, &l, &old, 1, pad)) /* (under the lock) */
			return -1;
		line_xor(plain, e->media.data + l * EMU_LINE, pad);
	}
	if (crypto_line_pads_ctl(e->crypto, &l, &newctr, 1, pad))
		return -1;
	e->stat[ST_AES_PADS] += old ? 2 : 1;
	e->stat[ST_MEDIA_READS]++;
	__atomic_store_n(&e->cur_ctr[l], newctr, __ATOMIC_RELAXED); /* (prepads) */
	ctrl_enqueue_data(e, core, l, plain, pad, newctr, t_pad, 0, WQ_RSR | WQ_READY);
	rsr_mark_done(e, l);
	emu_crash_point("reenc.line_done");
	return 0;
}

/* reenc_todo -- is line l of the RSR's page still to be re-encrypted? */
static int reenc_todo(const struct emu *e, uint64_t l)
{
	return l >= EMU_DATA_HDR_SIZE / EMU_LINE && l < e->nlines &&
	       !(e->rsr->done >> (l % 64) & 1);
}

/*
 * reenc_timing -- when each line of the page still to do has been read and
 * its pads made: SuperMem 3.4.4 reads all lines of the page into the cache
 * first, then re-encrypts and writes them back, so the reads queue at their
 * banks ahead of the page's writes (which drain through the write queue
 * behind them).  Returns the time the last pad is ready.
 */
static uint64_t reenc_timing(struct emu *e, unsigned core, uint64_t first, uint64_t t,
			     uint64_t t_pad[64])
{
	uint64_t t_done = t;
	for (uint64_t l = first; l < first + 64; l++) {
		if (!reenc_todo(e, l))
			continue;
		uint64_t t_read = tm_read(&e->tm, core, ctrl_data_bank(e, l), t);
		t_pad[l % 64] = tm_aes(&e->tm, t_read);
		t_done = max64(t_done, t_pad[l % 64]);
	}
	return t_done;
}

/* reenc_finish -- the lines not yet done, the counter line, the RSR cleared. */
static int reenc_finish(struct emu *e, unsigned core, uint64_t page)
{
	uint64_t first = page * 64, t_pad[64], acc;
	uint64_t newctr = (e->rsr->old_major + 1) << e->minor_bits;
	uint64_t t_done = reenc_timing(e, core, first, e->tm.clock[core], t_pad);
	int saved_direct = e->direct;
	e->direct = 0; /* every line through the queue, as an RSR entry */
	for (uint64_t l = first; l < first + 64; l++) {
		if (!reenc_todo(e, l))
			continue;
		if (reenc_line(e, core, l, newctr, t_pad[l % 64])) {
			e->direct = saved_direct;
			return -1;
		}
	}
	e->direct = saved_direct;
	ctrl_enqueue_ctr(e, core, page, t_done, 1, &acc);
	cc_clean(&e->cc, page);
	rsr_store(e, &e->rsr->active, 0);
	emu_crash_point("reenc.end");
	/* the write that overflowed waits for the page */
	e->tm.clock[core] = max64(e->tm.clock[core], t_done);
	return 0;
}

/* reenc_page -- re-encrypt page under its major + 1 (the caller holds the
 * lock).  With channels the pool's one register is held by one channel's
 * re-encryption at a time (rsr_lock, taken under the channel's lock and
 * never the other way round). */
int reenc_page(struct emu *e, unsigned core, uint64_t page)
{
	if (e->rsr_lock)
		pthread_mutex_lock(e->rsr_lock);
	int rc = reenc_page_to(e, core, page, 0);
	if (e->rsr_lock)
		pthread_mutex_unlock(e->rsr_lock);
	return rc;
}

/* reenc_page_to -- re-encrypt page under the larger of its major + 1 and
 * new_major.  The register records new major - 1 as old_major: a line not
 * done is read under its own counter, never under old_major. */
int reenc_page_to(struct emu *e, unsigned core, uint64_t page, uint64_t new_major)
{
	uint64_t first = page * 64, major = new_major ? new_major - 1 : 0;
	for (uint64_t l = first; l < first + 64 && l < e->nlines; l++)
		major = max64(major, e->cur_ctr[l] >> e->minor_bits);
	/* home must hold each line's newest ciphertext before it is read */
	wq_drain_all(e, &e->qdata);
	e->rsr->old_major = major;
	e->rsr->done = 0;
	media_persist(&e->media, &e->rsr->old_major, 2 * sizeof(uint64_t));
	rsr_store(e, &e->rsr->active, page + 1);
	emu_crash_point("reenc.begin");
	e->stat[ST_REENC_PAGES]++;
	return reenc_finish(e, core, page);
}

/* reenc_interpret -- after recovery drained the queues: the lines of the
 * RSR's page whose done bit is set are under the new major, minor 0. */
void reenc_interpret(struct emu *e)
{
	if (!e->rsr || !e->rsr->active || e->layout->id != LAYOUT_SPLIT)
		return;
	uint64_t first = (e->rsr->active - 1) * 64;
	uint64_t newctr = (e->rsr->old_major + 1) << e->minor_bits;
	for (unsigned i = 0; i < 64 && first + i < e->nlines; i++)
		if (e->rsr->done >> i & 1)
			e->cur_ctr[first + i] = newctr;
}

/* reenc_resume -- finish the page a crash interrupted (recovery). */
int reenc_resume(struct emu *e)
{
	if (!e->rsr || !e->rsr->active || e->layout->id != LAYOUT_SPLIT)
		return 0;
	return reenc_finish(e, 0, e->rsr->active - 1);
}
