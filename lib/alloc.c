/*
 * alloc.c -- the crash-safe allocator.  The heap is a run of 64-byte units
 * (one line each, so objects never share a line).  Two persistent bitmaps
 * describe it: "used" (unit allocated) and "start" (unit begins an object;
 * an object runs to the next start bit or free unit).  A volatile "busy"
 * bitmap (used or reserved) serves allocation.
 *
 * spm_tx_alloc only reserves in the busy bitmap.  At commit, under bm_lock,
 * the bitmap words of every allocation and free are snapshotted into the
 * transaction's undo log and changed, so they become durable with the
 * transaction's commit write or are rolled back with it: nothing leaks or is
 * handed out twice across a crash.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pool_internal.h"

enum { USED = 0, START = 1 };

/* bm -- the interleaved persistent bitmaps: word 2*i + which. */
static uint64_t *bm(spm_pool *p)
{
	return (uint64_t *)(p->view + p->hdr->bm_off);
}

/* pbit -- bit i of persistent bitmap which. */
static int pbit(spm_pool *p, int which, uint64_t i)
{
	return (bm(p)[2 * (i / 64) + (uint64_t)which] >> (i % 64)) & 1;
}

/* set_pbits -- bits [first, first+n) of persistent bitmap which. */
static void set_pbits(spm_pool *p, int which, uint64_t first, uint64_t n, int value)
{
	uint64_t *w = bm(p);
	for (uint64_t i = first; i < first + n; i++) {
		uint64_t *word = &w[2 * (i / 64) + (uint64_t)which];
		if (value)
			*word |= 1ull << (i % 64);
		else
			*word &= ~(1ull << (i % 64));
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

/* alloc_init -- the busy bitmap from the persistent used bitmap. */
int alloc_init(spm_pool *p)
{
	uint64_t words = p->hdr->bm_words;
	p->busy = malloc(words * sizeof(uint64_t) + sizeof(uint64_t));
	if (!p->busy)
		return emu_err(-ENOMEM, "out of memory for the allocator");
	for (uint64_t i = 0; i < words; i++)
		p->busy[i] = bm(p)[2 * i + USED];
	/* units past the end of the heap are never free */
	uint64_t tail = p->hdr->heap_units % 64;
	if (tail)
		p->busy[words - 1] |= ~0ull << tail;
	p->cursor = 0;
	return 0;
}

void alloc_fini(spm_pool *p)
{
	free(p->busy);
	p->busy = NULL;
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

/* alloc_reserve -- reserve units free units (next fit); their offset in *off. */
int alloc_reserve(spm_pool *p, uint64_t units, uint64_t *off)
{
	uint64_t total = p->hdr->heap_units;
	if (units == 0 || units > total)
		return emu_err(SPM_E_NOSPACE, "spm_tx_alloc: %llu bytes do not fit the heap",
			       (unsigned long long)(units * UNIT));
	pthread_mutex_lock(&p->busy_lock);
	int64_t at = find_run(p->busy, p->cursor, total, units);
	if (at < 0)
		at = find_run(p->busy, 0, total, units);
	if (at >= 0) {
		set_bits(p->busy, (uint64_t)at, units, 1);
		p->cursor = (uint64_t)at + units;
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

/* alloc_object_units -- the size of the allocated object at off. */
int alloc_object_units(spm_pool *p, uint64_t off, uint64_t *units)
{
	uint64_t h = p->hdr->heap_off, total = p->hdr->heap_units;
	if (off < h || (off - h) % UNIT || (off - h) / UNIT >= total)
		return emu_err(SPM_E_INVAL, "spm_tx_free: %llu is not an object",
			       (unsigned long long)off);
	uint64_t u = (off - h) / UNIT;
	if (!pbit(p, USED, u) || !pbit(p, START, u))
		return emu_err(SPM_E_INVAL, "spm_tx_free: %llu is not an allocated object",
			       (unsigned long long)off);
	uint64_t end = u + 1;
	while (end < total && pbit(p, USED, end) && !pbit(p, START, end))
		end++;
	*units = end - u;
	return 0;
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
		set_pbits(p, USED, u, n, is_alloc);
		set_pbits(p, START, u, 1, is_alloc);
	}
	return 0;
}

/* alloc_after_commit -- freed units become available once the free is durable. */
void alloc_after_commit(spm_pool *p, struct lane *l)
{
	for (size_t i = 0; i < l->frees.n; i++)
		alloc_unreserve(p, l->frees.r[i].off, l->frees.r[i].len / UNIT);
}
