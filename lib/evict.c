/*
 * evict.c -- the eviction injector, SPM_EVICT=SEED:P.  A real CPU cache may
 * write a dirty line back at any time, before the program flushes it.  With
 * the injector on, every runtime call (flush, fence, snapshot, allocation)
 * evicts, with probability P, one to four lines drawn at random from the
 * pool's recently dirtied lines: their current view content -- modified and
 * not yet committed -- is written back through the controller.  A cache
 * writes back only dirty lines: lines enter the set when a transaction
 * snapshots or allocates them (the program is about to store to them) and
 * leave it when they are written back (flushed or evicted).  Stores outside
 * transactions are invisible to the runtime and never evicted early.
 * Deterministic for a seed.  Off: one predictable branch per call.
 *
 * With threads, a line must not be evicted once its flush has begun: a
 * write-back after a transaction's commit (its lines and their counters
 * persisted) would write the line again under a counter only the counter
 * cache holds, and with selective counter-atomicity a crash then loses a
 * committed line.  So the flush paths clean their lines before they write
 * them (persist.c), and an eviction writes its lines while it holds
 * evict_lock: a flush that cleans one of them waits for that write, and
 * its own write comes after it.  (Found by test_mt_crash with
 * SPM_EVICT.)
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "pool_internal.h"

static struct {
	int on, bad;
	uint64_t seed;
	double p;
} cfg;
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* parse -- SPM_EVICT, once per process. */
static void parse(void)
{
	const char *v = getenv("SPM_EVICT");
	if (!v || !*v)
		return;
	char *end;
	errno = 0;
	cfg.seed = strtoull(v, &end, 10);
	if (errno || end == v || *end != ':')
		goto bad;
	const char *ps = end + 1;
	cfg.p = strtod(ps, &end);
	if (end == ps || *end || !(cfg.p >= 0 && cfg.p <= 1))
		goto bad;
	cfg.on = 1;
	return;
bad:
	cfg.bad = 1;
}

/* evict_init -- the pool's injector state; SPM_E_OPTION for a bad SPM_EVICT. */
int evict_init(spm_pool *p)
{
	pthread_once(&once, parse);
	if (cfg.bad)
		return emu_err(SPM_E_OPTION, "SPM_EVICT: bad value \"%s\" (SEED:P)",
			       getenv("SPM_EVICT"));
	p->evict_on = cfg.on;
	p->evict_rng = cfg.seed * 0x9e3779b97f4a7c15ull + 1;
	return 0;
}

static uint64_t next(spm_pool *p)
{
	uint64_t x = p->evict_rng;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	p->evict_rng = x;
	return x * 0x2545F4914F6CDD1Dull;
}

/* evict_clean_slow -- lines [first, first+n) were written back: clean now. */
void evict_clean_slow(spm_pool *p, uint64_t first, uint64_t n)
{
	pthread_mutex_lock(&p->evict_lock);
	for (unsigned i = 0; i < p->evict_n; i++)
		if (p->evict_ring[i] >= first && p->evict_ring[i] < first + n)
			p->evict_ring[i] = UINT64_MAX;
	pthread_mutex_unlock(&p->evict_lock);
}

/* evict_note_slow -- remember up to 8 lines of a range as dirty. */
void evict_note_slow(spm_pool *p, uint64_t off, uint64_t len)
{
	pthread_mutex_lock(&p->evict_lock);
	uint64_t first = off / SPM_LINE, n = (off + len + SPM_LINE - 1) / SPM_LINE - first;
	for (uint64_t i = 0; i < n && i < 8; i++) {
		uint64_t l = first + (n <= 8 ? i : next(p) % n);
		p->evict_ring[p->evict_pos] = l;
		p->evict_pos = (p->evict_pos + 1) % EVICT_RING;
		if (p->evict_n < EVICT_RING)
			p->evict_n++;
	}
	pthread_mutex_unlock(&p->evict_lock);
}

/* evict_maybe_slow -- with probability P, write back random recent lines. */
void evict_maybe_slow(spm_pool *p)
{
	uint64_t lines[4];
	unsigned k = 0;
	pthread_mutex_lock(&p->evict_lock);
	if (p->evict_n && (double)(next(p) >> 11) / 9007199254740992.0 < cfg.p) {
		unsigned want = 1 + (unsigned)(next(p) % 4);
		for (unsigned i = 0; i < 4 * want && k < want; i++) {
			uint64_t *slot = &p->evict_ring[next(p) % p->evict_n];
			/* tx_track=pages: a line of a page the open transaction
			 * wrote stays until it is logged (track.c) */
			if (*slot != UINT64_MAX && !(p->track && track_line_held(p, *slot))) {
				lines[k++] = *slot;
				*slot = UINT64_MAX; /* written back: clean */
			}
		}
	}
	/* under evict_lock (see the top of the file); the controller's lock
	 * is only ever taken inside it, never the other way round */
	for (unsigned i = 0; i < k; i++)
		emu_write_lines(p->emu, pool_core(p), lines[i], 1, p->view, 0);
	pthread_mutex_unlock(&p->evict_lock);
	if (k)
		emu_stat_rt_add(p->emu, EMU_RT_EVICTED, k);
}
