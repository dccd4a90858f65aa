/*
 * cache.c -- the CPU caches of the execution-driven core model (doc/design.md,
 * "The core model"): each modeled core has a private L1 (and a private L2
 * where the profile has one, SuperMem Table 2), and one last-level cache is
 * shared by the cores (SCA Table 2: "L2 cache 2MB per core (shared)").
 * Set-associative, LRU, write-back, write-allocate, not inclusive: a line
 * is filled into every level it missed in, and a dirty line leaving a level
 * is written into the next one (allocated there if absent).  A line missing
 * in the LLC is a memory read (read.c); a dirty line leaving the LLC is a
 * natural eviction, written back through the design's write path with the
 * view's current plaintext, so its crash semantics are those of any
 * written-back line.  A clwb (the runtime's flush) cleans the line in every
 * core's caches and the LLC, as clwb does in a coherent hierarchy; stores
 * of one core do not invalidate another core's copy (no coherence protocol:
 * the modeled cores of spm-bench each work on their own instance).
 *
 * Timing: every access costs the core access_ps (its issue cost, the
 * instructions around it); a load stalls the core for its latency beyond
 * L1 -- each level's lookup, and the memory read -- with no overlap between
 * misses (a blocking core: the workloads chase pointers, whose loads
 * depend on one another); a store never stalls, though its miss still
 * reads the line (write-allocate) and occupies the bank.  The L1 lookup is
 * inside the issue cost.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "spm.h"
#include "emu_internal.h"

/* level_init -- an empty cache of kib KiB with ways ways. */
static int level_init(struct cache_level *lv, unsigned kib, unsigned ways, uint64_t hit_ps,
		      enum stat_id st_hit, enum stat_id st_miss)
{
	memset(lv, 0, sizeof(*lv));
	uint64_t lines = (uint64_t)kib * 1024 / EMU_LINE;
	if (ways == 0 || ways > lines)
		ways = lines ? (unsigned)lines : 1;
	lv->ways = ways;
	lv->sets = (unsigned)(lines / ways ? lines / ways : 1);
	lv->set_mask = (lv->sets & (lv->sets - 1)) == 0 ? lv->sets - 1 : 0;
	lv->hit_ps = hit_ps;
	lv->kib = kib;
	lv->st_hit = st_hit;
	lv->st_miss = st_miss;
	size_t n = (size_t)lv->sets * ways;
	lv->tag = calloc(n, sizeof(*lv->tag));
	lv->stamp = calloc(n, sizeof(*lv->stamp));
	lv->dirty = calloc(n, 1);
	return lv->tag && lv->stamp && lv->dirty ? 0 : -ENOMEM;
}

static void level_fini(struct cache_level *lv)
{
	free(lv->tag);
	free(lv->stamp);
	free(lv->dirty);
	memset(lv, 0, sizeof(*lv));
}

/* set_of -- the first way index of line's set. */
static inline size_t set_of(const struct cache_level *lv, uint64_t line)
{
	uint64_t set = lv->set_mask || lv->sets == 1 ? line & lv->set_mask : line % lv->sets;
	return (size_t)set * lv->ways;
}

/* level_find -- is line in lv?  Its way index in *idx. */
static inline int level_find(const struct cache_level *lv, uint64_t line, size_t *idx)
{
	const size_t base = set_of(lv, line);
	const uint64_t *tag = lv->tag + base;
	for (unsigned w = 0; w < lv->ways; w++)
		if (tag[w] == line + 1) {
			*idx = base + w;
			return 1;
		}
	return 0;
}

/* level_victim -- the way of line's set to fill: an invalid one, else the
 * least recently used. */
static size_t level_victim(const struct cache_level *lv, uint64_t line)
{
	const size_t base = set_of(lv, line);
	size_t best = base;
	for (unsigned w = 0; w < lv->ways; w++) {
		if (!lv->tag[base + w])
			return base + w;
		if (lv->stamp[base + w] < lv->stamp[best])
			best = base + w;
	}
	return best;
}

static inline void touch(struct cache_level *lv, size_t idx)
{
	lv->stamp[idx] = ++lv->tick;
}

static size_t fill(struct emu *e, struct core_caches *c, unsigned core, unsigned i,
		   uint64_t line, int dirty);

/* write_down -- dirty line leaves level i of core's path: into the level
 * below (allocated if absent), or from the LLC to memory (a natural
 * eviction through the design's write path). */
static void write_down(struct emu *e, struct core_caches *c, unsigned core, unsigned i,
		       uint64_t line)
{
	if (i + 1 == c->depth) {
		e->stat[ST_LLC_WRITEBACKS]++;
		ctrl_evict_line(e, core, line, e->cm->view);
		return;
	}
	struct cache_level *lv = c->path[i + 1];
	size_t idx;
	if (level_find(lv, line, &idx)) {
		lv->dirty[idx] = 1;
		touch(lv, idx);
		return;
	}
	fill(e, c, core, i + 1, line, 1);
}

/* fill -- line enters level i of core's path (dirty or clean); the victim
 * it replaces goes down if dirty.  Returns its way index. */
static size_t fill(struct emu *e, struct core_caches *c, unsigned core, unsigned i,
		   uint64_t line, int dirty)
{
	struct cache_level *lv = c->path[i];
	size_t idx = level_victim(lv, line);
	uint64_t old = lv->tag[idx];
	int old_dirty = lv->dirty[idx];
	lv->tag[idx] = line + 1;
	lv->dirty[idx] = (uint8_t)dirty;
	touch(lv, idx);
	/* after the way is taken: a write-back cannot reach back into level i */
	if (old && old_dirty)
		write_down(e, c, core, i, old - 1);
	return idx;
}

/* fetch -- line missed in level i of core's path at time at: look in the
 * levels below, fill those it misses in; returns the latency from at until
 * its data reaches level i. */
static uint64_t fetch(struct emu *e, struct core_caches *c, unsigned core, unsigned i,
		      uint64_t line, uint64_t at)
{
	if (i + 1 == c->depth) {
		uint64_t done = ctrl_read_line(e, core, line, at);
		return done > at ? done - at : 0;
	}
	struct cache_level *lv = c->path[i + 1];
	uint64_t lat = lv->hit_ps;
	size_t idx;
	if (level_find(lv, line, &idx)) {
		e->stat[lv->st_hit]++;
		touch(lv, idx);
		return lat;
	}
	e->stat[lv->st_miss]++;
	lat += fetch(e, c, core, i + 1, line, at + lat);
	fill(e, c, core, i + 1, line, 0);
	return lat;
}

/* core_caches_new -- core's private caches, empty; NULL if out of memory. */
static struct core_caches *core_caches_new(struct cache_model *m)
{
	struct core_caches *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	int rc = level_init(&c->l1, m->l1_kib, m->l1_ways, 0, ST_L1_HITS, ST_L1_MISSES);
	if (!rc && m->l2_kib)
		rc = level_init(&c->l2, m->l2_kib, m->l2_ways, m->l2_ps, ST_L2_HITS,
				ST_L2_MISSES);
	if (rc) {
		level_fini(&c->l1);
		level_fini(&c->l2);
		free(c);
		return NULL;
	}
	c->path[c->depth++] = &c->l1;
	if (m->l2_kib)
		c->path[c->depth++] = &c->l2;
	c->path[c->depth++] = &m->llc;
	return c;
}

/*
 * cache_access -- core loads (store 0) or stores line: an L1 hit costs
 * nothing beyond the issue cost; a miss fetches the line from below and
 * fills L1.  Returns the core's stall in ps: a load's latency beyond L1,
 * 0 for a store.  The caller holds the controller's lock.
 */
uint64_t cache_access(struct emu *e, unsigned core, uint64_t line, unsigned store)
{
	struct cache_model *m = e->cm;
	struct core_caches *c = m->core[core];
	if (__builtin_expect(!c, 0)) {
		if (!(c = m->core[core] = core_caches_new(m)))
			return 0; /* out of memory: the access is not modeled */
		m->made[m->nmade++] = (uint8_t)core;
	}
	struct cache_level *l1 = &c->l1;
	size_t idx = 0;
	if (c->last_line == line + 1 || level_find(l1, line, &idx)) {
		if (c->last_line == line + 1)
			idx = c->last_idx;
		e->stat[ST_L1_HITS]++;
		touch(l1, idx);
		l1->dirty[idx] |= (uint8_t)(store != 0);
		c->last_line = line + 1;
		c->last_idx = (unsigned)idx;
		return 0;
	}
	e->stat[ST_L1_MISSES]++;
	uint64_t lat = fetch(e, c, core, 0, line, e->tm.clock[core]);
	idx = fill(e, c, core, 0, line, store != 0);
	c->last_line = line + 1;
	c->last_idx = (unsigned)idx;
	return store ? 0 : lat;
}

/* clean_in -- line, if lv holds it, is clean. */
static inline void clean_in(struct cache_level *lv, uint64_t line)
{
	size_t idx;
	if (lv->tag && level_find(lv, line, &idx))
		lv->dirty[idx] = 0;
}

/* cache_clean -- clwb of lines [first, first+n): each is written back by
 * the caller, so wherever it is cached it is clean now. */
void cache_clean(struct emu *e, uint64_t first, uint64_t n)
{
	struct cache_model *m = e->cm;
	for (uint64_t l = first; l < first + n; l++) {
		for (unsigned k = 0; k < m->nmade; k++) {
			struct core_caches *c = m->core[m->made[k]];
			clean_in(&c->l1, l);
			clean_in(&c->l2, l);
		}
		clean_in(&m->llc, l);
	}
}

/* cycles_ps -- n cycles of a clock of ghz GHz, in ps. */
static uint64_t cycles_ps(double n, double ghz)
{
	return (uint64_t)(n * 1000.0 / ghz + 0.5);
}

/*
 * cache_model_new -- the model of e's profile, unless timing or the model
 * is off (e->cm stays NULL).  cores= sizes the shared LLC (and, in emu.c,
 * the counter cache) where the profile gives them per core.
 */
int cache_model_new(struct emu *e, const struct emu_config *cfg)
{
	const struct profile *p = e->profile;
	if (cfg->timing_off || cfg->core_model_off || strcmp(cfg->profile, "heap") == 0)
		return 0;
	struct cache_model *m = calloc(1, sizeof(*m));
	if (!m)
		return emu_err(-ENOMEM, "out of memory");
	unsigned cores = cfg->cores ? cfg->cores : 1;
	unsigned llc_kib = cfg->llc_kib ? cfg->llc_kib
			   : p->llc_per_core ? p->llc_kib * cores : p->llc_kib;
	if (cfg->l2_kib && !p->l2_kib) {
		free(m);
		return emu_err(SPM_E_OPTION, "l2_kib=%u: the %s profile has no private L2 "
			       "(its LLC is the second level: llc_kib)", cfg->l2_kib, p->name);
	}
	m->l1_kib = cfg->l1_kib ? cfg->l1_kib : p->l1_kib;
	m->l1_ways = p->l1_ways;
	m->l2_kib = cfg->l2_kib ? cfg->l2_kib : p->l2_kib;
	m->l2_ways = p->l2_ways;
	m->l2_ps = cycles_ps(p->l2_cyc, p->ghz);
	m->access_ps = cfg->access_ns >= 0 ? (uint64_t)(cfg->access_ns * 1000.0 + 0.5)
					   : cycles_ps(p->access_cyc, p->ghz);
	m->first_line = EMU_DATA_HDR_SIZE / EMU_LINE;
	if (level_init(&m->llc, llc_kib, p->llc_ways, cycles_ps(p->llc_cyc, p->ghz),
		       ST_LLC_HITS, ST_LLC_MISSES)) {
		level_fini(&m->llc);
		free(m);
		return emu_err(-ENOMEM, "out of memory for a %u KiB LLC model", llc_kib);
	}
	e->cm = m;
	return 0;
}

/* cache_model_free -- e's model, if any. */
void cache_model_free(struct emu *e)
{
	struct cache_model *m = e->cm;
	if (!m)
		return;
	for (unsigned k = 0; k < EMU_MAX_CORES; k++)
		if (m->core[k]) {
			level_fini(&m->core[k]->l1);
			level_fini(&m->core[k]->l2);
			free(m->core[k]);
		}
	level_fini(&m->llc);
	free(m);
	e->cm = NULL;
}

/* emu_models_accesses -- does e model the program's accesses? */
int emu_models_accesses(const struct emu *e)
{
	return e->cm != NULL;
}

/* emu_set_view -- the plaintext natural evictions are written back from. */
void emu_set_view(struct emu *e, const void *view)
{
	if (e->cm)
		e->cm->view = view;
}

/* sat_add -- a + b, at most UINT64_MAX (a clock saturates, as emu_work's). */
static inline uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* sat_mul -- a * b, at most UINT64_MAX. */
static inline uint64_t sat_mul(uint64_t a, uint64_t b)
{
	return b && a > UINT64_MAX / b ? UINT64_MAX : a * b;
}

/* modeled -- is line in the data area the caches model? */
static inline int modeled(const struct emu *e, uint64_t line)
{
	return e->cm->view && line >= e->cm->first_line && line < e->nlines;
}

/* emu_access -- see emu.h. */
void emu_access(struct emu *e, unsigned core, uint64_t first, uint64_t n, unsigned store,
		uint64_t issued)
{
	struct cache_model *m = e->cm;
	if (!m)
		return;
	if (core >= EMU_MAX_CORES)
		core = 0;
	pthread_mutex_lock(&e->lock);
	uint64_t *clk = &e->tm.clock[core];
	*clk = sat_add(*clk, sat_mul(issued, m->access_ps));
	e->stat[ST_CORE_ACCESSES] += issued;
	for (uint64_t l = first; l < first + n; l++)
		if (modeled(e, l)) {
			e->stat[store ? ST_CORE_STORES : ST_CORE_LOADS]++;
			*clk = sat_add(*clk, cache_access(e, core, l, store));
		}
	pthread_mutex_unlock(&e->lock);
}

/*
 * still_hit -- core's pending loads and stores of line: hits if its L1
 * still holds the line (dirty already where stores are pending); else the
 * first is an access of its own (its stall returned, its hit or miss
 * counted by cache_access) and *hits one fewer.
 */
static uint64_t still_hit(struct emu *e, unsigned core, uint64_t line, uint64_t stores,
			  uint64_t *hits)
{
	struct core_caches *c = e->cm->core[core];
	size_t idx;
	if (c && level_find(&c->l1, line, &idx)) {
		if (stores)
			c->l1.dirty[idx] = 1;
		return 0;
	}
	*hits -= 1;
	return cache_access(e, core, line, stores != 0);
}

/* emu_access_pending -- see emu.h: the issue cost of every access, and the
 * L1 hits of line. */
void emu_access_pending(struct emu *e, unsigned core, uint64_t outside, uint64_t l1_loads,
			uint64_t l1_stores, uint64_t line)
{
	if (!e->cm)
		return;
	if (core >= EMU_MAX_CORES)
		core = 0;
	uint64_t hits = l1_loads + l1_stores, n = outside + hits;
	pthread_mutex_lock(&e->lock);
	uint64_t *clk = &e->tm.clock[core];
	*clk = sat_add(*clk, sat_mul(n, e->cm->access_ps));
	e->stat[ST_CORE_ACCESSES] += n;
	if (hits && modeled(e, line)) {
		e->stat[ST_CORE_LOADS] += l1_loads;
		e->stat[ST_CORE_STORES] += l1_stores;
		*clk = sat_add(*clk, still_hit(e, core, line, l1_stores, &hits));
		e->stat[ST_L1_HITS] += hits;
	}
	pthread_mutex_unlock(&e->lock);
}
