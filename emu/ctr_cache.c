/*
 * ctr_cache.c -- the counter cache: set-associative, LRU, write-back (SCA
 * section 5.2.1; 1 MB 16-way in SCA Table 2).  It tracks which counter lines
 * are cached and dirty; the counter values themselves are the controller's.
 */
#include <errno.h>
#include <stdlib.h>

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
	c->last = NULL;
	c->tick = 0;
	c->way = calloc((size_t)c->sets * ways, sizeof(*c->way));
	if (!c->way)
		return emu_err(-ENOMEM, "out of memory for the counter cache");
	return 0;
}

void cc_fini(struct ctr_cache *c)
{
	free(c->way);
	c->way = NULL;
}

/* set_of -- the ways of the set holding counter line cl. */
static struct cc_way *set_of(struct ctr_cache *c, uint64_t cl)
{
	size_t set = c->set_mask ? (size_t)(cl & c->set_mask) : (size_t)(cl % c->sets);
	return c->way + set * c->ways;
}

/* cc_access -- look up cl; on a miss insert it, evicting the LRU way. */
enum cc_result cc_access(struct ctr_cache *c, uint64_t cl, int make_dirty,
			 uint64_t *victim, int *victim_dirty)
{
	uint64_t tag = cl + 1;
	*victim_dirty = 0;
	if (c->last && c->last->tag == tag) { /* consecutive lines share a counter line */
		c->last->lru = ++c->tick;
		c->last->dirty |= (uint8_t)make_dirty;
		c->last->incs += (uint32_t)make_dirty;
		return CC_HIT;
	}
	struct cc_way *w = set_of(c, cl), *lru = w;
	for (unsigned i = 0; i < c->ways; i++) {
		if (w[i].tag == tag) {
			w[i].lru = ++c->tick;
			w[i].dirty |= (uint8_t)make_dirty;
			w[i].incs += (uint32_t)make_dirty;
			c->last = &w[i];
			return CC_HIT;
		}
		if (w[i].lru < lru->lru)
			lru = &w[i];
	}
	if (lru->tag) {
		*victim = lru->tag - 1;
		*victim_dirty = lru->dirty;
	}
	lru->tag = tag;
	lru->lru = ++c->tick;
	lru->dirty = (uint8_t)make_dirty;
	lru->incs = (uint32_t)make_dirty;
	c->last = lru;
	return CC_MISS;
}

/* clean -- way w is written back: clean, no increments since. */
static int clean(struct cc_way *w)
{
	int was = w->dirty;
	w->dirty = 0;
	w->incs = 0;
	return was;
}

/* cc_clean -- if cl is cached dirty, mark it clean and return 1.  A line is
 * in at most one way: the last accessed one is tried first. */
int cc_clean(struct ctr_cache *c, uint64_t cl)
{
	if (c->last && c->last->tag == cl + 1)
		return clean(c->last);
	struct cc_way *w = set_of(c, cl);
	for (unsigned i = 0; i < c->ways; i++)
		if (w[i].tag == cl + 1)
			return clean(&w[i]);
	return 0;
}

/* cc_mark_dirty -- if cl is cached, make it dirty (one more increment) and
 * return 1; a line not cached is not brought in. */
int cc_mark_dirty(struct ctr_cache *c, uint64_t cl)
{
	struct cc_way *w = set_of(c, cl);
	for (unsigned i = 0; i < c->ways; i++)
		if (w[i].tag == cl + 1) {
			w[i].dirty = 1;
			w[i].incs++;
			return 1;
		}
	return 0;
}

/* cc_flush_all -- call fn for every dirty line and clean it. */
void cc_flush_all(struct ctr_cache *c, void (*fn)(void *, uint64_t), void *arg)
{
	for (size_t i = 0; i < (size_t)c->sets * c->ways; i++)
		if (c->way[i].tag && c->way[i].dirty) {
			c->way[i].dirty = 0;
			c->way[i].incs = 0;
			fn(arg, c->way[i].tag - 1);
		}
}

/* cc_invalidate_all -- empty the cache (its content is lost, as at a crash). */
void cc_invalidate_all(struct ctr_cache *c)
{
	for (size_t i = 0; i < (size_t)c->sets * c->ways; i++)
		c->way[i] = (struct cc_way){0};
	c->last = NULL;
	c->tick = 0;
}
