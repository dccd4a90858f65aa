/*
 * pool.c -- pools: create, open (with recovery), close; the plaintext view;
 * persistent offsets; the root object; statistics.
 *
 * Heap layout (offsets into the pool):
 *   0       data header page (the controller's, not application data)
 *   4096    pool header (struct pool_hdr)
 *   8192    POOL_NLANES transaction lanes of POOL_LANE_SIZE; lines 0-7 of
 *           each are its CounterAtomic header slots, then its log ring
 *           (txlog.c)
 *   ...     allocation bitmaps: used bits, then object-start bits
 *   ...     the heap, in 64-byte units (page aligned)
 * A raw pool (the preload shim's) has no heap: every byte from 4096 on is
 * the program's.
 */
#define _GNU_SOURCE 1 /* memfd_create */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

#include "access.h"
#include "pool_internal.h"

static uint64_t round_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) / a * a;
}

static uint32_t hdr_crc(const struct pool_hdr *h)
{
	return (uint32_t)crc32(0L, (const Bytef *)h, offsetof(struct pool_hdr, checksum));
}

/* view_shared -- a raw pool's view: a shared memory object of the pool's
 * size (p->view_fd), so that every mapping of it aliases the view. */
static int view_shared(spm_pool *p)
{
	p->view_fd = memfd_create("spm-view", MFD_CLOEXEC);
	if (p->view_fd < 0)
		return emu_err(-errno, "cannot make a view: memfd_create: %s", strerror(errno));
	if (ftruncate(p->view_fd, (off_t)p->size) != 0)
		return emu_err(-errno, "cannot size a %zu-byte view: %s", p->size, strerror(errno));
	p->view = mmap(NULL, p->size, PROT_READ | PROT_WRITE, MAP_SHARED, p->view_fd, 0);
	if (p->view == MAP_FAILED) {
		p->view = NULL;
		return emu_err(-ENOMEM, "cannot map a %zu-byte view", p->size);
	}
	return 0;
}

/* view_map -- anonymous plaintext view of the whole pool (the CPU cache domain). */
static int view_map(spm_pool *p)
{
	if (p->raw)
		return view_shared(p);
	p->view = mmap(NULL, p->size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p->view == MAP_FAILED) {
		p->view = NULL;
		return emu_err(-ENOMEM, "cannot map a %zu-byte view", p->size);
	}
#ifdef MADV_HUGEPAGE
	/* transparent huge pages where the kernel offers them on request: the
	 * program's pointer chasing through the view misses the TLB far less
	 * (+4 % hashmap ops/s in spm-bench); a touched 2 MiB region is then
	 * zeroed whole */
	(void)madvise(p->view, p->size, MADV_HUGEPAGE);
#endif
	p->hdr = (struct pool_hdr *)(p->view + POOL_HDR_OFF);
	return 0;
}

/* pool_new -- a handle with its locks, in the process's list of pools;
 * raw: no heap; its allocator's cursors as cfg says (alloc=, profile=heap). */
static spm_pool *pool_new(const struct emu_config *cfg, int raw)
{
	static uint64_t next_uid = 1;
	/* on a cache-line boundary: its lanes and arenas are a line each */
	spm_pool *p = aligned_alloc(64, (sizeof(*p) + 63) & ~(size_t)63);
	if (!p)
		return NULL;
	memset(p, 0, sizeof(*p));
	p->uid = __atomic_fetch_add(&next_uid, 1, __ATOMIC_RELAXED);
	pthread_mutex_init(&p->root_lock, NULL);
	pthread_mutex_init(&p->evict_lock, NULL);
	for (unsigned i = 0; i < POOL_NARENAS; i++)
		pthread_mutex_init(&p->arenas[i].lock, NULL);
	pthread_mutex_init(&p->busy_lock, NULL);
	p->view_fd = -1;
	pool_register(p);
	p->raw = raw;
	p->alloc_lanes = cfg->alloc_lanes >= 0 ? cfg->alloc_lanes
						: strcmp(cfg->profile, "heap") == 0;
	return p;
}

/* pool_free -- release the handle (not the emulated machine). */
static void pool_free(spm_pool *p)
{
	if (!p)
		return;
	pool_unregister(p);
	track_fini(p);
	for (unsigned i = 0; i < POOL_NLANES; i++) {
		free(p->lanes[i].logged.r);
		free(p->lanes[i].entries.r);
		free(p->lanes[i].allocs.r);
		free(p->lanes[i].frees.r);
		free(p->lanes[i].saved);
	}
	alloc_fini(p);
	if (p->view)
		munmap(p->view, p->size);
	if (p->view_fd >= 0)
		close(p->view_fd);
	pthread_mutex_destroy(&p->root_lock);
	pthread_mutex_destroy(&p->evict_lock);
	for (unsigned i = 0; i < POOL_NARENAS; i++)
		pthread_mutex_destroy(&p->arenas[i].lock);
	pthread_mutex_destroy(&p->busy_lock);
	free(p);
}

/* layout_init -- the heap layout of a new pool of size bytes. */
static int layout_init(spm_pool *p)
{
	struct pool_hdr *h = p->hdr;
	memset(h, 0, sizeof(*h));
	memcpy(h->magic, POOL_MAGIC, 8);
	h->version = POOL_VERSION;
	h->nlanes = POOL_NLANES;
	h->lane_off = POOL_HDR_OFF + 4096;
	h->lane_size = POOL_LANE_SIZE;
	uint64_t after_lanes = h->lane_off + (uint64_t)POOL_NLANES * POOL_LANE_SIZE;
	/* units cover everything after the bitmaps; solve for a fixed point */
	uint64_t units = (p->size - after_lanes) / UNIT;
	uint64_t words = (units + 63) / 64;
	h->bm_off = after_lanes;
	h->heap_off = round_up(h->bm_off + 2 * words * 8, 4096);
	if (h->heap_off >= p->size)
		return emu_err(SPM_E_INVAL, "pool too small for its heap");
	h->heap_units = (p->size - h->heap_off) / UNIT;
	h->bm_words = (h->heap_units + 63) / 64;
	h->checksum = hdr_crc(h);
	return 0;
}

/*
 * hdr_counter_atomic -- the pool header's two lines are CounterAtomic.  Its
 * second line holds the checksum of the first, which open checks before
 * recovery can run, and the root's offset, which the first spm_root writes
 * in a transaction.  Written without its counter (SCA's mutate stage), a
 * crash could leave that line unreadable, and the undo log that holds it
 * would never be read: the pool refused at every open ("heap header
 * unreadable"; found by a review).  A counter-atomic line is always
 * readable.  The header changes only at create and at the first spm_root.
 */
static void hdr_counter_atomic(spm_pool *p)
{
	const uint64_t first = POOL_HDR_OFF / SPM_LINE;
	const uint64_t n = (sizeof(struct pool_hdr) + SPM_LINE - 1) / SPM_LINE;
	for (uint64_t l = first; l < first + n; l++)
		if (!emu_is_counter_atomic(p->emu, l))
			emu_set_counter_atomic(p->emu, l, 1);
}

/* check_layout -- the header decrypted from media is sane. */
static int check_layout(spm_pool *p, const char *path)
{
	struct pool_hdr *h = p->hdr;
	if (memcmp(h->magic, POOL_MAGIC, 8) != 0 || h->checksum != hdr_crc(h))
		return emu_err(SPM_E_CORRUPT, "%s: heap header unreadable", path);
	if (h->version != POOL_VERSION)
		return emu_err(SPM_E_VERSION, "%s: heap version %u, this library reads %u "
			       "(no upgrade from older pre-1.0 heaps)", path, h->version,
			       POOL_VERSION);
	if (h->nlanes != POOL_NLANES || h->lane_size != POOL_LANE_SIZE ||
	    h->heap_off >= p->size || h->heap_units > (p->size - h->heap_off) / UNIT ||
	    h->bm_off + 2 * h->bm_words * 8 > h->heap_off ||
	    (h->root_off && (h->root_off < h->heap_off || h->root_off >= p->size)))
		return emu_err(SPM_E_CORRUPT, "%s: heap header inconsistent", path);
	return 0;
}

/* heap_create -- a new pool's heap: its header, lanes and bitmaps. */
static int heap_create(spm_pool *p)
{
	int rc;
	if ((rc = layout_init(p)) || (rc = alloc_init(p)))
		return rc;
	/* Figure 9: each lane's header slots are CounterAtomic */
	for (unsigned i = 0; i < POOL_NLANES; i++)
		emu_set_counter_atomic(p->emu,
				       (p->hdr->lane_off + (uint64_t)i * POOL_LANE_SIZE) / SPM_LINE,
				       LANE_SLOTS);
	emu_set_log_range(p->emu, p->hdr->lane_off / SPM_LINE,
			  (uint64_t)POOL_NLANES * POOL_LANE_SIZE / SPM_LINE);
	pool_write_range(p, POOL_HDR_OFF, sizeof(struct pool_hdr));
	pool_ccwb_range(p, POOL_HDR_OFF, sizeof(struct pool_hdr));
	spm_drain(p);
	/* after the header's first write, which no recovery depends on (a
	 * crash inside spm_create, before its commit below, leaves no pool),
	 * so that a create makes no counter-atomic write of its own */
	hdr_counter_atomic(p);
	return 0;
}

/* create_pool -- spm_create with the options parsed into cfg; raw: no heap. */
static int create_pool(spm_pool **pool, const char *path, size_t size,
		       const struct emu_config *cfg, int raw)
{
	spm_pool *p = pool_new(cfg, raw);
	if (!p)
		return emu_err(-ENOMEM, "out of memory");
	int rc;
	if ((rc = evict_init(p)))
		goto fail;
	if ((rc = emu_create(&p->emu, path, size, cfg)))
		goto fail;
	p->size = emu_size(p->emu);
	if ((rc = view_map(p)) || (!raw && (rc = heap_create(p))))
		goto fail_files;
	if (cfg->prefault) {
		emu_prefault(p->view, p->size);
		emu_prefault_media(p->emu);
	}
	if ((!raw && cfg->tx_track && (rc = track_init(p))) || (rc = emu_commit_create(p->emu)))
		goto fail_files;
	emu_stat_reset(p->emu);
	pool_access_on(p);
	*pool = p;
	return 0;
fail_files:
	emu_discard(p->emu); /* refused: no files left behind */
	p->emu = NULL;
fail:
	if (p->emu)
		emu_close(p->emu);
	pool_free(p);
	return rc;
}

SPM_API int spm_create(spm_pool **pool, const char *path, size_t size,
		       const char *options)
{
	emu_err_clear();
	if (!pool || !path)
		return emu_err(SPM_E_INVAL, "spm_create: NULL argument");
	if (size < POOL_MIN_SIZE)
		return emu_err(SPM_E_INVAL, "spm_create: %s: size %zu is below the minimum "
			       "of %u bytes", path, size, POOL_MIN_SIZE);
	if ((uint64_t)size > POOL_MAX_SIZE)
		return emu_err(SPM_E_INVAL, "spm_create: %s: size %zu is above the maximum "
			       "of 2^48 bytes", path, size);
	struct emu_config cfg;
	int rc = config_parse(&cfg, options);
	return rc ? rc : create_pool(pool, path, size, &cfg, 0);
}

/* open_pool -- spm_open with the options parsed into cfg; raw: no heap. */
static int open_pool(spm_pool **pool, const char *path, const struct emu_config *cfg, int raw)
{
	spm_pool *p = pool_new(cfg, raw);
	if (!p)
		return emu_err(-ENOMEM, "out of memory");
	int rc;
	if ((rc = evict_init(p)))
		goto fail;
	if ((rc = emu_open(&p->emu, path, cfg)))
		goto fail;
	p->size = emu_size(p->emu);
	/* a pool of the preload shim has no heap: spm_open reads its bytes */
	raw = p->raw = raw || strcmp(emu_layout(p->emu), POOL_PRELOAD_LAYOUT) == 0;
	if ((rc = view_map(p)))
		goto fail;
	if (cfg->prefault) /* the view is the process's own memory: no file changes */
		emu_prefault(p->view, p->size);
	if ((rc = emu_load_view(p->emu, p->view)) || (!raw && (rc = check_layout(p, path))))
		goto fail;
	if ((rc = emu_mark_dirty(p->emu))) /* checked: from here on the pool may change */
		goto fail;
	if (cfg->prefault)
		emu_prefault_media(p->emu);
	if (!raw) {
		hdr_counter_atomic(p); /* a pool made before these bits existed has none */
		emu_set_log_range(p->emu, p->hdr->lane_off / SPM_LINE,
				  (uint64_t)POOL_NLANES * POOL_LANE_SIZE / SPM_LINE);
		if ((rc = tx_recover(p)) || (rc = alloc_init(p)) ||
		    (cfg->tx_track && (rc = track_init(p))))
			goto fail;
	}
	pool_access_on(p);
	*pool = p;
	return 0;
fail:
	/* refused: leave the pool as it is, dirty if it was, never marked clean */
	emu_abandon(p->emu);
	p->emu = NULL;
	pool_free(p);
	return rc;
}

SPM_API int spm_open(spm_pool **pool, const char *path, const char *options)
{
	emu_err_clear();
	if (!pool || !path)
		return emu_err(SPM_E_INVAL, "spm_open: NULL argument");
	struct emu_config cfg;
	int rc = config_parse(&cfg, options);
	return rc ? rc : open_pool(pool, path, &cfg, 0);
}

SPM_API int spm_verify(const char *path, const char *options, struct spm_tamper *out,
		       size_t max, size_t *found)
{
	emu_err_clear();
	if (!path || !found || (max && !out))
		return emu_err(SPM_E_INVAL, "spm_verify: NULL argument");
	*found = 0;
	struct emu_config cfg;
	int rc = config_parse(&cfg, options);
	if (rc)
		return rc;
	cfg.tamper_out = out;
	cfg.tamper_max = max;
	cfg.tamper_found = found;
	struct emu *e;
	if ((rc = emu_open(&e, path, &cfg)))
		return rc;
	if (!emu_has_integrity(e))
		rc = emu_err(SPM_E_INVAL, "spm_verify: %s: design %s keeps no MACs (bmt-nocc, sc, "
			     "osiris, ccnvm-nods and ccnvm do)", path, emu_design_name(e));
	emu_abandon(e); /* verified: nothing more is written */
	return rc;
}

SPM_API int spm_info(const char *path, const char *options, struct spm_info *out)
{
	emu_err_clear();
	if (!path || !out)
		return emu_err(SPM_E_INVAL, "spm_info: NULL argument");
	memset(out, 0, sizeof(*out));
	struct emu_config cfg;
	int rc = config_parse(&cfg, options);
	if (rc || (rc = emu_info(path, out)) || out->dirty)
		return rc; /* dirty: its heap is what recovery will make it */
	if (strcmp(out->layout, POOL_PRELOAD_LAYOUT) == 0)
		return 0; /* the preload shim's: no heap (heap_known 0) */
	/* clean: opened as spm_open opens it, which writes nothing to a clean
	 * pool before emu_mark_dirty (never called here), and abandoned */
	spm_pool *p = pool_new(&cfg, 0);
	if (!p)
		return emu_err(-ENOMEM, "out of memory");
	if ((rc = emu_open(&p->emu, path, &cfg)))
		goto out;
	p->size = emu_size(p->emu);
	if ((rc = view_map(p)) || (rc = emu_load_view(p->emu, p->view)) ||
	    (rc = check_layout(p, path)))
		goto out;
	const struct pool_hdr *h = p->hdr;
	const uint64_t *w = (const uint64_t *)(p->view + h->bm_off);
	uint64_t used = 0, starts = 0;
	for (uint64_t i = 0; i < h->bm_words; i++) {
		used += (uint64_t)__builtin_popcountll(w[2 * i]);
		starts += (uint64_t)__builtin_popcountll(w[2 * i + 1]);
	}
	out->root_size = h->root_off ? h->root_size : 0;
	out->heap_bytes = h->heap_units * UNIT;
	out->heap_used = used * UNIT;
	out->heap_objects = starts;
	out->heap_known = 1;
out:
	emu_abandon(p->emu); /* read: nothing is written */
	p->emu = NULL;
	pool_free(p);
	return rc;
}

/* close_forked -- spm_close in a child of fork(): the child's copies of the
 * handle and the view are released, and nothing else.  The pool is its
 * parent's: no drain, no counter write-back, no epoch, not marked clean; its
 * lock is held by the parent's open file description, which the child's
 * close() of its descriptor leaves locked (never flock(LOCK_UN)). */
static int close_forked(spm_pool *pool)
{
	emu_abandon(pool->emu);
	pool->emu = NULL;
	pool_free(pool);
	return pool_forked_err("spm_close");
}

SPM_API int spm_rekey(const char *path, const char *options)
{
	emu_err_clear();
	if (!path)
		return emu_err(SPM_E_INVAL, "spm_rekey: NULL path");
	struct emu_config cfg;
	int rc = config_parse(&cfg, options);
	return rc ? rc : emu_rekey(path, &cfg);
}

SPM_API int spm_rekey_key(const char *path, const char *options)
{
	emu_err_clear();
	if (!path)
		return emu_err(SPM_E_INVAL, "spm_rekey_key: NULL path");
	struct emu_config cfg;
	int rc = config_parse(&cfg, options);
	return rc ? rc : emu_rekey_key(path, &cfg);
}

SPM_API int spm_close(spm_pool *pool)
{
	if (!pool)
		return emu_err(SPM_E_INVAL, "spm_close: NULL pool");
	if (pool_forked(pool))
		return close_forked(pool);
	/* out of the list first: a thread exiting in a transaction of the pool
	 * has aborted it, or leaves it to tx_abort_all */
	pool_unregister(pool);
	tx_abort_all(pool);
	int rc = emu_close(pool->emu);
	pool->emu = NULL;
	pool_free(pool);
	return rc;
}

SPM_API void *spm_ptr(spm_pool *pool, spm_off_t off)
{
	if (!pool || off < POOL_HDR_OFF || off >= pool->size)
		return NULL;
	if (pool_forked(pool))
		return pool_forked_err("spm_ptr"), NULL;
	return pool->view + off;
}

SPM_API spm_off_t spm_off(spm_pool *pool, const void *ptr)
{
	const uint8_t *a = ptr;
	if (!pool || a < pool->view + POOL_HDR_OFF || a >= pool->view + pool->size)
		return 0;
	if (pool_forked(pool))
		return pool_forked_err("spm_off"), 0;
	return (spm_off_t)(a - pool->view);
}

SPM_API size_t spm_size(spm_pool *pool)
{
	if (pool && pool_forked(pool))
		return pool_forked_err("spm_size"), 0;
	return pool ? pool->size : 0;
}

SPM_API const char *spm_design(spm_pool *pool)
{
	if (pool && pool_forked(pool))
		return pool_forked_err("spm_design"), NULL;
	return pool ? emu_design_name(pool->emu) : NULL;
}

SPM_API void *spm_root(spm_pool *pool, size_t size)
{
	if (!pool || size == 0)
		return emu_err(SPM_E_INVAL, "spm_root: size must be > 0"), NULL;
	if (pool_forked(pool))
		return pool_forked_err("spm_root"), NULL;
	if (pool->raw)
		return emu_err(SPM_E_LAYOUT, "spm_root: a pool of layout %s (libspm-preload.so's) "
			       "has no heap", POOL_PRELOAD_LAYOUT), NULL;
	if (tx_in_tx(pool))
		return emu_err(SPM_E_TXSTATE, "spm_root: called inside a transaction of "
			       "this thread"), NULL;
	pthread_mutex_lock(&pool->root_lock);
	struct pool_hdr *h = pool->hdr;
	void *ret = NULL;
	if (h->root_off) {
		if (size <= h->root_size)
			ret = pool->view + h->root_off;
		else
			emu_err(SPM_E_INVAL, "spm_root: %zu bytes asked, the root has %llu",
				size, (unsigned long long)h->root_size);
		pthread_mutex_unlock(&pool->root_lock);
		return ret;
	}
	if (spm_tx_begin(pool) == 0) {
		spm_off_t off = spm_tx_alloc(pool, size);
		if (off && spm_tx_add(pool, &h->root_off, 2 * sizeof(uint64_t)) == 0) {
			/* atomic: spm_tx_free reads it without root_lock */
			__atomic_store_n(&h->root_off, off, __ATOMIC_RELAXED);
			h->root_size = size;
			if (spm_tx_commit(pool) == 0)
				ret = pool->view + off;
		} else {
			spm_tx_abort(pool);
		}
	}
	pthread_mutex_unlock(&pool->root_lock);
	return ret;
}

SPM_API int spm_stat(spm_pool *pool, const char *name, uint64_t *value)
{
	if (!pool)
		return emu_err(SPM_E_INVAL, "spm_stat: NULL pool");
	if (pool_forked(pool))
		return pool_forked_err("spm_stat");
	access_sync(pool, pool_core_of(pool)); /* the calling thread's pending accesses */
	return emu_stat(pool->emu, name, value);
}

SPM_API const char *const *spm_stat_names(void)
{
	return emu_stat_names();
}

SPM_API void spm_stat_reset(spm_pool *pool)
{
	if (pool && pool_forked(pool))
		pool_forked_err("spm_stat_reset");
	else if (pool) {
		if (access_collect) { /* the core work before now is not measured */
			struct spm_access_pending drop;
			access_collect(&drop);
		}
		emu_stat_reset(pool->emu);
	}
}

/* preload_safe -- the design of a preload pool keeps unannotated programs
 * crash consistent, or force; else SPM_E_OPTION naming the ones that do. */
static int preload_safe(const char *path, const char *design, int force)
{
	if (force || emu_design_unannotated(design) != 0)
		return 0;
	return emu_err(SPM_E_OPTION, "%s: design %s keeps only annotated (CounterAtomic) writes "
		       "crash consistent, and programs under the preload shim make none; use "
		       "supermem or another safe design (README \"Unmodified PMDK programs\"), "
		       "or SPM_PRELOAD_FORCE=1", path, design);
}

/*
 * pool_preload -- the preload shim's pool at path (preload/): a raw pool of
 * layout "preload", its view shared (view_fd), its data file left unlocked
 * for the program to lock; created with size bytes if size is not 0, of
 * design supermem unless SPM_CONF names one.  A design that is not safe
 * for programs without annotations is refused unless force.
 */
int pool_preload(spm_pool **pool, const char *path, size_t size, int force)
{
	emu_err_clear();
	struct emu_config cfg;
	int rc = config_parse(&cfg, NULL);
	if (rc)
		return rc;
	if (cfg.layout[0] && strcmp(cfg.layout, POOL_PRELOAD_LAYOUT) != 0)
		return emu_err(SPM_E_OPTION, "%s: layout=%s: the preload shim's pools have layout "
			       "%s", path, cfg.layout, POOL_PRELOAD_LAYOUT);
	snprintf(cfg.layout, sizeof(cfg.layout), "%s", POOL_PRELOAD_LAYOUT);
	cfg.lock_data_off = 1;
	if (!size) { /* the design read from the headers: a refusal writes nothing */
		struct spm_info in;
		memset(&in, 0, sizeof(in));
		if ((rc = emu_info(path, &in)) || (rc = preload_safe(path, in.design, force)))
			return rc;
		return open_pool(pool, path, &cfg, 1);
	}
	if (!cfg.design[0])
		snprintf(cfg.design, sizeof(cfg.design), "supermem");
	if ((rc = preload_safe(path, cfg.design, force)))
		return rc;
	if (size < POOL_MIN_SIZE || (uint64_t)size > POOL_MAX_SIZE)
		return emu_err(SPM_E_INVAL, "%s: size %zu: a pool under the preload shim takes "
			       "%u bytes to 2^48", path, size, POOL_MIN_SIZE - EMU_DATA_HDR_SIZE);
	return create_pool(pool, path, size, &cfg, 1);
}
