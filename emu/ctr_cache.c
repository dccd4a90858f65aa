/*
 * ctr_cache.c -- the counter cache: set-associative, LRU, write-back (SCA
 * section 5.2.1; 1 MB 16-way in SCA Table 2).  It tracks which counter lines
 * are cached and dirty; the counter values themselves are the controller's.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "spm.h"
#include "emu_internal.h"

/* cc_init -- kib KiB of 64-byte lines in ways-way sets (lines / ways sets). */
int cc_init(struct ctr_cache *c, unsigned kib, unsigned ways)
{
	if (ways == 0 || kib == 0)
		return emu_err(SPM_E_OPTION, "ctr_cache_kib and ctr_cache_ways must be > 0");
	uint64_t lines = (uint64_t)kib * 1024 / 64;
	if (lines < ways)
		return emu_err(SPM_E_OPTION,
			       "ctr_cache_kib=%u, ctr_cache_ways=%u: fewer lines than ways",
			       kib, ways);
	c->ways = ways;
	c->sets = (unsigned)(lines / ways);
	c->set_mask = (c->sets & (c->sets - 1)) == 0 ? c->sets - 1 : 0;
	c->last = 0;
	c->tick = 0;
	size_t n = (size_t)c->sets * ways;
	c->tag = calloc(n, sizeof(*c->tag));
	c->lru = calloc(n, sizeof(*c->lru));
	c->way = calloc(n, sizeof(*c->way));
	if (!c->tag || !c->lru || !c->way) {
		cc_fini(c);
		return emu_err(-ENOMEM, "out of memory for the counter cache");
	}
	return 0;
}

void cc_fini(struct ctr_cache *c)
{
	free(c->tag);
	free(c->lru);
	free(c->way);
	c->tag = c->lru = NULL;
	c->way = NULL;
}

/* set_of -- the index of the first way of the set holding counter line cl. */
static size_t set_of(const struct ctr_cache *c, uint64_t cl)
{
	size_t set = c->set_mask ? (size_t)(cl & c->set_mask) : (size_t)(cl % c->sets);
	return set * c->ways;
}

/* touch -- an access to way i: its LRU stamp, dirty bit, increment count. */
static void touch(struct ctr_cache *c, size_t i, int make_dirty)
{
	c->lru[i] = ++c->tick;
	c->way[i].dirty |= (uint8_t)make_dirty;
	c->way[i].incs += (uint32_t)make_dirty;
	c->last = i;
}

/* cc_access -- look up cl; on a miss insert it, evicting the LRU way (the
 * first way of the set with the smallest stamp). */
enum cc_result cc_access(struct ctr_cache *c, uint64_t cl, int make_dirty,
			 uint64_t *victim, int *victim_dirty)
{
	uint64_t tag = cl + 1;
	*victim_dirty = 0;
	if (c->tag[c->last] == tag) { /* consecutive lines share a counter line */
		touch(c, c->last, make_dirty);
		return CC_HIT;
	}
	size_t s = set_of(c, cl), lru = s;
	const uint64_t *t = c->tag + s;
	for (unsigned i = 0; i < c->ways; i++)
		if (t[i] == tag) {
			touch(c, s + i, make_dirty);
			return CC_HIT;
		}
	for (unsigned i = 1; i < c->ways; i++)
		if (c->lru[s + i] < c->lru[lru])
			lru = s + i;
	if (c->tag[lru]) {
		*victim = c->tag[lru] - 1;
		*victim_dirty = c->way[lru].dirty;
	}
	c->tag[lru] = tag;
	c->lru[lru] = ++c->tick;
	c->way[lru] = (struct cc_way){.incs = (uint32_t)make_dirty,
				      .dirty = (uint8_t)make_dirty};
	c->last = lru;
	return CC_MISS;
}

/* clean -- way i is written back: clean, no increments since. */
static int clean(struct ctr_cache *c, size_t i)
{
	int was = c->way[i].dirty;
	c->way[i] = (struct cc_way){0};
	return was;
}

/* cc_clean -- if cl is cached dirty, mark it clean and return 1.  A line is
 * in at most one way: the last accessed one is tried first. */
int cc_clean(struct ctr_cache *c, uint64_t cl)
{
	if (c->tag[c->last] == cl + 1)
		return clean(c, c->last);
	size_t s = set_of(c, cl);
	for (unsigned i = 0; i < c->ways; i++)
		if (c->tag[s + i] == cl + 1)
			return clean(c, s + i);
	return 0;
}

/* cc_flush_all -- call fn for every dirty line and clean it. */
void cc_flush_all(struct ctr_cache *c, void (*fn)(void *, uint64_t), void *arg)
{
	for (size_t i = 0; i < (size_t)c->sets * c->ways; i++)
		if (c->tag[i] && c->way[i].dirty) {
			c->way[i] = (struct cc_way){0};
			fn(arg, c->tag[i] - 1);
		}
}

/* cc_invalidate_all -- empty the cache (its content is lost, as at a crash). */
void cc_invalidate_all(struct ctr_cache *c)
{
	size_t n = (size_t)c->sets * c->ways;
	memset(c->tag, 0, n * sizeof(*c->tag));
	memset(c->lru, 0, n * sizeof(*c->lru));
	memset(c->way, 0, n * sizeof(*c->way));
	c->last = 0;
	c->tick = 0;
}
