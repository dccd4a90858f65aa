/*
 * alloc.c -- the crash-safe allocator.  The heap is a run of 64-byte units
 * (one line each, so objects never share a line).  Two persistent bitmaps
 * describe it: "used" (unit allocated) and "start" (unit begins an object;
 * an object runs to the next start bit or free unit).  A volatile "busy"
 * bitmap (used or reserved) serves allocation.
 *
 * spm_tx_alloc only reserves in the busy bitmap.  At commit, under the
 * locks of the arenas they are in, the bitmap words of every allocation and
 * free are snapshotted into the transaction's undo log and changed, so they
 * become durable with the transaction's commit write or are rolled back
 * with it: nothing leaks or is handed out twice across a crash.
 *
 * Arenas: the heap in POOL_NARENAS runs of units, each a whole number of
 * bitmap lines (256 units), so two arenas never share a line of either
 * bitmap.  Commits whose allocations and frees are in different arenas
 * hold different locks and run at once; one that spans several takes
 * theirs in order.  With alloc=lanes (profile=heap's default) each lane
 * looks for free units from its own cursor, which starts in its own part
 * of the heap: threads allocate in different arenas.  Without it one
 * cursor serves every lane (the papers' runs: placement, and so modeled
 * results, as before arenas).  A lane takes an arena no other lane holds
 * when its own are full (arena_owner), so two lanes meet in one only when
 * every arena is held; objects larger than an arena, and a heap with no
 * room left in the lane's arenas, take the next fit anywhere.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "pool_internal.h"

enum { USED = 0, START = 1 };

/* bm -- the interleaved persistent bitmaps: word 2*i + which. */
static uint64_t *bm(spm_pool *p)
{
	return (uint64_t *)(p->view + p->hdr->bm_off);
}

/* pbit -- bit i of persistent bitmap which (atomic: the walk of
 * alloc_object_units holds only its arenas' locks). */
static int pbit(spm_pool *p, int which, uint64_t i)
{
	return (__atomic_load_n(&bm(p)[2 * (i / 64) + (uint64_t)which], __ATOMIC_ACQUIRE) >>
		(i % 64)) & 1;
}

/* set_pbits -- bits [first, first+n) of persistent bitmap which (the
 * caller holds the arenas' locks: one writer per word). */
static void set_pbits(spm_pool *p, int which, uint64_t first, uint64_t n, int value)
{
	uint64_t *w = bm(p);
	for (uint64_t i = first; i < first + n; i++) {
		uint64_t *word = &w[2 * (i / 64) + (uint64_t)which];
		uint64_t v = __atomic_load_n(word, __ATOMIC_RELAXED);
		v = value ? v | 1ull << (i % 64) : v & ~(1ull << (i % 64));
		__atomic_store_n(word, v, __ATOMIC_RELEASE);
	}
}

static int bit(const uint64_t *w, uint64_t i)
{
	return (w[i / 64] >> (i % 64)) & 1;
}

static void set_bits(uint64_t *w, uint64_t first, uint64_t n, int value)
{
	for (uint64_t i = first; i < first + n; i++) {
		if (value)
			w[i / 64] |= 1ull << (i % 64);
		else
			w[i / 64] &= ~(1ull << (i % 64));
	}
}

/* owner_bytes -- the size of the lines' owner map. */
static size_t owner_bytes(const spm_pool *p)
{
	return (p->size / SPM_LINE + 4095) / 4096 * 4096;
}

/* alloc_init -- the busy bitmap from the persistent used bitmap. */
int alloc_init(spm_pool *p)
{
	uint64_t words = p->hdr->bm_words;
	p->busy = malloc(words * sizeof(uint64_t) + sizeof(uint64_t));
	if (!p->busy)
		return emu_err(-ENOMEM, "out of memory for the allocator");
	/* the lines' owners (tx.c, claim_lines): a byte a line, touched only
	 * where transactions snapshot */
	p->line_owner = mmap(NULL, owner_bytes(p), PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p->line_owner == MAP_FAILED) {
		p->line_owner = NULL;
		free(p->busy);
		p->busy = NULL;
		return emu_err(-ENOMEM, "out of memory for the lines' owners");
	}
	for (uint64_t i = 0; i < words; i++)
		p->busy[i] = bm(p)[2 * i + USED];
	/* units past the end of the heap are never free */
	uint64_t tail = p->hdr->heap_units % 64;
	if (tail)
		p->busy[words - 1] |= ~0ull << tail;
	p->cursor = 0;
	uint64_t per = (p->hdr->heap_units + POOL_NARENAS - 1) / POOL_NARENAS;
	p->arena_units = (per + 255) / 256 * 256;
	for (unsigned i = 0; i < POOL_NLANES; i++)
		p->lanes[i].cursor = p->alloc_lanes ? p->arena_units * (i * POOL_NARENAS /
									 POOL_NLANES)
						    : 0;
	memset(p->arena_owner, 0, sizeof(p->arena_owner));
	return 0;
}

/* arenas_of -- the arenas units [u, u+n) are in (a mask). */
static uint64_t arenas_of(const spm_pool *p, uint64_t u, uint64_t n)
{
	uint64_t a = u / p->arena_units, b = (u + n - 1) / p->arena_units, mask = 0;
	for (uint64_t i = a; i <= b && i < POOL_NARENAS; i++)
		mask |= 1ull << i;
	return mask;
}

/* alloc_arenas -- the arenas of lane l's allocations and frees. */
uint64_t alloc_arenas(spm_pool *p, const struct lane *l)
{
	uint64_t mask = 0;
	for (size_t i = 0; i < l->allocs.n + l->frees.n; i++) {
		struct range r = i < l->allocs.n ? l->allocs.r[i] : l->frees.r[i - l->allocs.n];
		mask |= arenas_of(p, (r.off - p->hdr->heap_off) / UNIT, r.len / UNIT);
	}
	return mask;
}

/* alloc_lock_arenas -- lock the arenas of mask, in order (no deadlock). */
void alloc_lock_arenas(spm_pool *p, uint64_t mask)
{
	for (; mask; mask &= mask - 1)
		pthread_mutex_lock(&p->arenas[__builtin_ctzll(mask)].lock);
}

void alloc_unlock_arenas(spm_pool *p, uint64_t mask)
{
	for (; mask; mask &= mask - 1)
		pthread_mutex_unlock(&p->arenas[__builtin_ctzll(mask)].lock);
}

void alloc_fini(spm_pool *p)
{
	free(p->busy);
	p->busy = NULL;
	if (p->line_owner)
		munmap(p->line_owner, owner_bytes(p));
	p->line_owner = NULL;
}

/* find_run -- n free units in busy from start onwards, below limit. */
static int64_t find_run(const uint64_t *busy, uint64_t start, uint64_t limit,
			uint64_t n)
{
	uint64_t run = 0, i = start;
	while (i < limit) {
		if (run == 0 && i % 64 == 0 && busy[i / 64] == ~0ull) {
			i += 64;
			continue;
		}
		if (bit(busy, i)) {
			run = 0;
		} else if (++run == n) {
			return (int64_t)(i + 1 - n);
		}
		i++;
	}
	return -1;
}

/* reserve_in_arenas -- alloc=lanes: units free units in lane l's arenas
 * (next fit from its cursor), else in the next arena no lane holds, which
 * becomes l's; -1 if none (the caller holds busy_lock). */
static int64_t reserve_in_arenas(spm_pool *p, struct lane *l, uint64_t units)
{
	const uint64_t total = p->hdr->heap_units, au = p->arena_units;
	const uint8_t me = (uint8_t)(l - p->lanes + 1);
	if (units > au)
		return -1;
	const unsigned a0 = (unsigned)(l->cursor / au % POOL_NARENAS);
	for (unsigned k = 0; k < POOL_NARENAS; k++) {
		unsigned a = (a0 + k) % POOL_NARENAS;
		uint64_t lo = a * au, hi = lo + au < total ? lo + au : total;
		if (lo >= total || (p->arena_owner[a] && p->arena_owner[a] != me))
			continue;
		uint64_t from = k == 0 && l->cursor > lo ? l->cursor : lo;
		int64_t at = find_run(p->busy, from, hi, units);
		if (at < 0 && from > lo)
			at = find_run(p->busy, lo, hi, units);
		if (at >= 0) {
			p->arena_owner[a] = me;
			return at;
		}
	}
	return -1;
}

/* alloc_reserve -- reserve units free units (next fit, from lane l's
 * cursor with alloc=lanes, else the pool's); their offset in *off. */
int alloc_reserve(spm_pool *p, struct lane *l, uint64_t units, uint64_t *off)
{
	uint64_t *cursor = p->alloc_lanes ? &l->cursor : &p->cursor;
	uint64_t total = p->hdr->heap_units;
	if (units == 0 || units > total)
		return emu_err(SPM_E_NOSPACE, "spm_tx_alloc: %llu bytes do not fit the heap",
			       (unsigned long long)(units * UNIT));
	pthread_mutex_lock(&p->busy_lock);
	int64_t at = p->alloc_lanes ? reserve_in_arenas(p, l, units) : -1;
	if (at < 0)
		at = find_run(p->busy, *cursor, total, units);
	if (at < 0)
		at = find_run(p->busy, 0, total, units);
	if (at >= 0) {
		set_bits(p->busy, (uint64_t)at, units, 1);
		*cursor = (uint64_t)at + units;
	}
	pthread_mutex_unlock(&p->busy_lock);
	if (at < 0)
		return emu_err(SPM_E_NOSPACE, "spm_tx_alloc: no free run of %llu bytes",
			       (unsigned long long)(units * UNIT));
	*off = p->hdr->heap_off + (uint64_t)at * UNIT;
	return 0;
}

/* alloc_unreserve -- give back a reservation (abort, or free after commit). */
void alloc_unreserve(spm_pool *p, uint64_t off, uint64_t units)
{
	pthread_mutex_lock(&p->busy_lock);
	set_bits(p->busy, (off - p->hdr->heap_off) / UNIT, units, 0);
	pthread_mutex_unlock(&p->busy_lock);
}

/* alloc_object_units -- the size of the allocated object at off.  The walk
 * holds the locks of the arenas it reads (taken in order as it goes on):
 * a commit's bitmap stores are ordered for an unlocked reader, but its
 * abort (alloc_commit failed midway: tx_abort_lane) restores the snapshot
 * words with plain copies, in no such order. */
int alloc_object_units(spm_pool *p, uint64_t off, uint64_t *units)
{
	uint64_t h = p->hdr->heap_off, total = p->hdr->heap_units, au = p->arena_units;
	if (off < h || (off - h) % UNIT || (off - h) / UNIT >= total)
		return emu_err(SPM_E_INVAL, "spm_tx_free: %llu is not an object",
			       (unsigned long long)off);
	uint64_t u = (off - h) / UNIT, held = 1ull << (u / au);
	int rc = 0;
	alloc_lock_arenas(p, held);
	if (!pbit(p, USED, u) || !pbit(p, START, u)) {
		rc = emu_err(SPM_E_INVAL, "spm_tx_free: %llu is not an allocated object",
			     (unsigned long long)off);
	} else {
		uint64_t end = u + 1;
		for (; end < total; end++) {
			if (end % au == 0) { /* into the next arena (end < total: one of 64) */
				pthread_mutex_lock(&p->arenas[end / au].lock);
				held |= 1ull << (end / au);
			}
			if (!pbit(p, USED, end) || pbit(p, START, end))
				break;
		}
		*units = end - u;
	}
	alloc_unlock_arenas(p, held);
	return rc;
}

/* pair_off -- the pool offset of bitmap word pair i (used, start: 16 bytes). */
static uint64_t pair_off(spm_pool *p, uint64_t i)
{
	return (uint64_t)((uint8_t *)(bm(p) + 2 * i) - p->view);
}

/* uniform -- do word pairs [a, b) all hold the pair a? */
static int uniform(spm_pool *p, uint64_t a, uint64_t b)
{
	const uint64_t *w = bm(p);
	for (uint64_t i = a + 1; i < b; i++)
		if (w[2 * i] != w[2 * a] || w[2 * i + 1] != w[2 * a + 1])
			return 0;
	return 1;
}

/*
 * log_words -- snapshot both bitmaps' words for units [u, u+n).  Whole
 * lines of word pairs inside the range are uniform (all free before an
 * allocation, all used before a free) and, past FILL_MIN_PAIRS, go into
 * one fill entry: a snapshot of an object's 2 bits per 64 bytes would not
 * fit the ring past ~8 MiB.
 */
static int log_words(spm_pool *p, uint64_t u, uint64_t n)
{
	enum { PAIRS_PER_LINE = SPM_LINE / 16, FILL_MIN_PAIRS = 8 * PAIRS_PER_LINE };
	uint64_t w0 = u / 64, w1 = (u + n - 1) / 64;
	/* past the pair of unit u, which holds the object's start bit */
	uint64_t a = (w0 + 1 + PAIRS_PER_LINE - 1) / PAIRS_PER_LINE * PAIRS_PER_LINE;
	uint64_t b = (u + n) / 64 / PAIRS_PER_LINE * PAIRS_PER_LINE;
	if (b < a + FILL_MIN_PAIRS || !uniform(p, a, b))
		return tx_add_internal(p, pair_off(p, w0), (w1 - w0 + 1) * 16, NULL);
	const uint64_t *w = bm(p);
	const uint64_t pattern[2] = {w[2 * a], w[2 * a + 1]};
	int rc = 0;
	if (a > w0)
		rc = tx_add_internal(p, pair_off(p, w0), (a - w0) * 16, NULL);
	if (!rc)
		rc = tx_add_internal(p, pair_off(p, a), (b - a) * 16, pattern);
	if (!rc && w1 >= b)
		rc = tx_add_internal(p, pair_off(p, b), (w1 - b + 1) * 16, NULL);
	return rc;
}

/* alloc_commit -- apply the transaction's allocations and frees, logged. */
int alloc_commit(spm_pool *p, struct lane *l)
{
	for (size_t i = 0; i < l->allocs.n + l->frees.n; i++) {
		int is_alloc = i < l->allocs.n;
		struct range r = is_alloc ? l->allocs.r[i] : l->frees.r[i - l->allocs.n];
		uint64_t u = (r.off - p->hdr->heap_off) / UNIT, n = r.len / UNIT;
		int rc = log_words(p, u, n);
		if (rc)
			return rc;
		/* a walk over an object's units stops at a unit not used or a
		 * start: a new object shows its start before its used bits, a
		 * freed one loses its used bits before its start (a reader
		 * without the arenas' locks would see no object run on into its
		 * neighbour -- but an abort's restore has no such order, so
		 * alloc_object_units takes them) */
		if (is_alloc) {
			set_pbits(p, START, u, 1, 1);
			set_pbits(p, USED, u, n, 1);
		} else {
			set_pbits(p, USED, u, n, 0);
			set_pbits(p, START, u, 1, 0);
		}
	}
	return 0;
}

/* alloc_after_commit -- freed units become available once the free is durable. */
void alloc_after_commit(spm_pool *p, struct lane *l)
{
	for (size_t i = 0; i < l->frees.n; i++)
		alloc_unreserve(p, l->frees.r[i].off, l->frees.r[i].len / UNIT);
}
