/*
 * pool_internal.h -- the runtime's data: the pool handle, the persistent
 * layout of the heap (pool header, transaction lanes, allocation bitmaps) and
 * the volatile transaction state.  Private to lib/.
 */
#ifndef SPM_POOL_INTERNAL_H
#define SPM_POOL_INTERNAL_H 1

#include <pthread.h>
#include <stdint.h>

#include "spm.h"
#include "../emu/emu.h"

#define POOL_HDR_OFF 4096u     /* one line after the data header page */
#define POOL_MAGIC "SPMHEAP\0"
#define POOL_VERSION 5u /* 4: header slots and ring logs (txlog.c); 5: fill entries */
#define POOL_NLANES 16u /* at most 255: a line's owner is a byte (lane + 1) */
#define POOL_LANE_SIZE (64u * 1024u)
#define POOL_MIN_SIZE (4u << 20)
#define POOL_MAX_SIZE (1ull << 48) /* 256 TiB: far beyond any file here, and no size_t wraps */
#define UNIT 64u /* allocation unit: one line */
/* A lane: LANE_SLOTS header slots (CounterAtomic lines; transaction g uses
 * slot g mod LANE_SLOTS), then the log, a ring of entries (txlog.c).  The
 * slots fill one counter line of the mono layout, so slots and log lines
 * never share a counter line, nor its bank. */
#define LANE_SLOTS 8u
#define LANE_LOG_OFF (LANE_SLOTS * 64u)
/* a transaction's log starts on a counter line of the mono layout */
#define LANE_LOG_ALIGN 512u

/* The pool header: one line at POOL_HDR_OFF, encrypted like all data. */
struct pool_hdr {
	char magic[8];
	uint32_t version;
	uint32_t nlanes;
	uint64_t lane_off, lane_size;
	uint64_t bm_off, bm_words; /* used and start bitmaps, words interleaved */
	uint64_t heap_off, heap_units;
	uint32_t checksum; /* crc32 of the fields above */
	uint32_t pad;
	/* changed by transactions */
	uint64_t root_off, root_size;
};
_Static_assert(sizeof(struct pool_hdr) <= 128, "pool_hdr fits two lines");
_Static_assert(POOL_NLANES <= 255, "a line's owner is lane + 1 in a byte");

/* A lane header slot: a CounterAtomic line (Figure 9's Backup.valid).  The
 * slot with the highest gen is the lane's header. */
struct lane_hdr {
	uint64_t active;    /* 1: the log holds a transaction's undo entries */
	uint64_t gen;       /* generation of the entries that belong to it */
	uint64_t log_start; /* where its entries start in the ring (version 4) */
};

/* An undo log entry: header, then len bytes of old data padded to 8; or,
 * with LOG_FILL in len (version 5), 16 bytes that the old data repeated
 * over len bytes (an allocation's bitmap words: a megabyte of heap takes
 * 4 KiB of bitmap, which a snapshot could not fit in the ring). */
#define LOG_FILL (1ull << 63)
#define LOG_FILL_BYTES 16u
struct log_entry {
	uint64_t off;
	uint64_t len; /* bytes restored; LOG_FILL: from a 16-byte pattern */
	uint64_t gen;
	uint64_t start; /* the log_start of its transaction (version 4) */
	uint64_t sum;   /* entry_sum() of off, len, gen, start and the data */
};

struct range {
	uint64_t off, len;
};

struct vec {
	struct range *r;
	size_t n, cap;
};

/* A lane: the volatile state of the transaction using it, on cache lines
 * of its own (its owner writes it at every operation). */
struct lane {
	uint64_t cursor; /* alloc_lanes: where its next allocation is looked for */
	uint64_t owner; /* thread id of the owner; 0 = free */
	uint64_t gen;       /* of the open transaction; then of the last one */
	uint64_t log_start; /* ring offset of the open transaction's first entry */
	uint64_t log_pos;   /* ring offset of its next entry */
	uint64_t log_head;  /* where the next transaction's log may start */
	int wrapped;        /* its entries went on at offset 0 */
	int hdr_written;
	unsigned core;      /* the owner's modeled core at its latest call */
	struct vec logged;  /* ranges snapshotted */
	struct vec entries; /* ring offset (off) of each undo entry, oldest first:
			     * an abort rolls back without allocating */
	struct vec allocs;  /* (off, units) reserved by tx_alloc */
	struct vec frees;   /* (off, units) freed at commit */
	/* the redo designs (tx.c): the bytes each logged range held when it was
	 * declared, in order, for an abort (nothing else is logged by the runtime) */
	uint8_t *saved;
	size_t saved_len, saved_cap;
} __attribute__((aligned(64)));

/* The heap's arenas (alloc.c): each with the lock its commits' bitmap
 * updates take, on a cache line of its own. */
#define POOL_NARENAS 64u
struct arena {
	pthread_mutex_t lock;
} __attribute__((aligned(64)));

struct spm_pool {
	struct emu *emu;
	uint64_t uid;             /* unique in the process: handles' addresses are reused */
	unsigned fork_gen;        /* pool_fork_gen at create or open (pool_forked) */
	int registered;           /* in the process's list of pools (reg_lock) */
	spm_pool *reg_next, *reg_prev;
	uint8_t *view;
	size_t size;
	struct pool_hdr *hdr;
	pthread_mutex_t root_lock; /* the first spm_root() */
	uint8_t *line_owner;      /* per line: lane + 1 of the open transaction that
				   * snapshotted it, or 0 (claim_lines; volatile) */
	pthread_mutex_t busy_lock; /* the volatile busy bitmap */
	uint64_t *busy;           /* used | reserved, one bit per unit */
	uint64_t cursor;          /* next-fit position (one for every lane) */
	int alloc_lanes;          /* alloc=lanes: each lane its own next-fit cursor,
				   * starting in its own part of the heap */
	uint64_t arena_units;     /* units per arena (a multiple of 256) */
	uint8_t arena_owner[POOL_NARENAS]; /* alloc=lanes: lane + 1 allocating in it
					    * (busy_lock); 0: none yet */
	struct arena arenas[POOL_NARENAS]; /* persistent bitmap updates at commit */
	struct lane lanes[POOL_NLANES];
	/* eviction injector (evict.c) */
	int evict_on;
	pthread_mutex_t evict_lock;
	uint64_t evict_rng;
	uint64_t evict_ring[64];
	unsigned evict_pos, evict_n;
	int access_on; /* its view's accesses are modeled (reg_lock) */
	/* a raw pool (pool_preload): no heap, every byte after the data header
	 * page the program's; its view a shared memory object (view_fd) that
	 * the preload shim maps again wherever the program maps the file */
	int raw;
	int view_fd;
	struct track *track; /* tx_track=pages (track.c), or NULL */
};
#define EVICT_RING 64u

/* evict.c */
int evict_init(spm_pool *p);
void evict_note_slow(spm_pool *p, uint64_t off, uint64_t len);
void evict_maybe_slow(spm_pool *p);
void evict_clean_slow(spm_pool *p, uint64_t first, uint64_t n);
static inline void evict_clean(spm_pool *p, uint64_t first, uint64_t n)
{
	if (__builtin_expect(p->evict_on, 0))
		evict_clean_slow(p, first, n);
}
static inline void evict_note(spm_pool *p, uint64_t off, uint64_t len)
{
	if (__builtin_expect(p->evict_on, 0))
		evict_note_slow(p, off, len);
}
static inline void evict_maybe(spm_pool *p)
{
	if (__builtin_expect(p->evict_on, 0))
		evict_maybe_slow(p);
}

/* pool.c: the preload shim's pools (preload/).  A raw pool of layout
 * "preload" at path (options from SPM_CONF), opened, or created with size
 * bytes if size is not 0; its data file is not flocked (the program locks
 * it); a design unsafe for unannotated programs refused unless force. */
#define POOL_PRELOAD_LAYOUT "preload"
int pool_preload(spm_pool **pool, const char *path, size_t size, int force);

/* config.c */
int config_parse(struct emu_config *cfg, const char *options);

/* persist.c */
/* the arguments of one pool_write_ranges */
struct pool_batch {
	const struct range *r;
	size_t n;
	unsigned flags;
};
unsigned pool_core(spm_pool *p);
unsigned pool_core_of(spm_pool *p);
uint64_t thread_self(spm_pool *p, unsigned *core);
void pool_access_on(spm_pool *p);
spm_pool *pool_at(uintptr_t a, uint64_t *off);
/* access.c */
struct spm_access_pending;
extern void (*access_collect)(struct spm_access_pending *p);
void access_sync_slow(spm_pool *p, unsigned core);
/* access_sync -- charge the calling thread's core work outside every pool
 * (an instrumented program's) to core on p: one load and a predictable
 * branch in a program that is not instrumented. */
static inline void access_sync(spm_pool *p, unsigned core)
{
	if (__builtin_expect(access_collect != NULL, 0))
		access_sync_slow(p, core);
}
void pool_write_range(spm_pool *p, uint64_t off, uint64_t len);
void pool_write_range_f(spm_pool *p, unsigned core, uint64_t off, uint64_t len,
			unsigned flags);
void pool_ccwb_range(spm_pool *p, uint64_t off, uint64_t len);
void pool_write_ranges(spm_pool *p, unsigned core, const struct range *r, size_t n,
		       unsigned flags);
void pool_write_batches(spm_pool *p, unsigned core, const struct pool_batch *b, size_t nb);
uint64_t thread_id(void);
unsigned *thread_lanes(void);
void thread_lane_note(uint64_t uid, unsigned idx);
int thread_lane_hint(uint64_t uid);
void pool_register(spm_pool *p);
void pool_unregister(spm_pool *p);
int pool_forked_err(const char *fn);
/* raised in every child of fork(); a pool records it at create and open */
extern unsigned pool_fork_gen;
/* pool_forked -- was p opened by another process (this one is a child of
 * fork() since)?  Its calls are refused (pool_forked_err): one load and a
 * predictable branch. */
static inline int pool_forked(const spm_pool *p)
{
	return __builtin_expect(__atomic_load_n(&pool_fork_gen, __ATOMIC_RELAXED) !=
				p->fork_gen, 0);
}

/* tx.c */
int tx_recover(spm_pool *p);
/* txlog.c */
uint64_t txlog_room(const spm_pool *p);
uint8_t *txlog_base(spm_pool *p, unsigned i);
struct lane_hdr *txlog_slot(spm_pool *p, unsigned i, uint64_t gen);
struct lane_hdr *txlog_newest(spm_pool *p, unsigned i);
uint64_t txlog_entry_sum(const struct log_entry *e, const uint8_t *data);
uint64_t txlog_need(uint64_t len);
uint64_t txlog_entry_len(const struct log_entry *e);
uint64_t txlog_entry_data(const struct log_entry *e);
int txlog_place(spm_pool *p, struct lane *l, uint64_t need, uint64_t *pos);
void txlog_advance(spm_pool *p, struct lane *l);
int txlog_scan(spm_pool *p, unsigned i, uint64_t gen, uint64_t start, struct vec *found);
void tx_abort_all(spm_pool *p);
void tx_thread_exit(spm_pool *p, uint64_t me);
int tx_in_tx(spm_pool *p);
int vec_push(struct vec *v, uint64_t off, uint64_t len);
int tx_add_internal(spm_pool *p, uint64_t off, uint64_t len, const uint64_t *fill);

/* track.c: transactions that find their own writes (tx_track=pages) */
int track_init(spm_pool *p);
void track_fini(spm_pool *p);
int track_begin(spm_pool *p);
void track_writable(spm_pool *p);
void track_end(spm_pool *p);
void track_touch(spm_pool *p, uint64_t off, uint64_t len);
void track_copy_old(spm_pool *p, void *dst, uint64_t off, uint64_t len);
int track_changed(spm_pool *p, uint64_t lo, uint64_t hi,
		  int (*fn)(void *arg, uint64_t off, uint64_t len), void *arg);
void track_restore(spm_pool *p);
int track_flush(spm_pool *p, uint64_t off, uint64_t len);
int track_line_held(spm_pool *p, uint64_t line);
/* tx.c: the lines of [lo, hi) the open tracked transaction changed, logged
 * (or declared) as spm_tx_add would */
int tx_track_log(spm_pool *p, uint64_t lo, uint64_t hi);

/* alloc.c */
int alloc_init(spm_pool *p);
void alloc_fini(spm_pool *p);
int alloc_reserve(spm_pool *p, struct lane *l, uint64_t units, uint64_t *off);
/* the arenas holding the units of the lane's allocations and frees (a mask) */
uint64_t alloc_arenas(spm_pool *p, const struct lane *l);
void alloc_lock_arenas(spm_pool *p, uint64_t mask);
void alloc_unlock_arenas(spm_pool *p, uint64_t mask);
void alloc_unreserve(spm_pool *p, uint64_t off, uint64_t units);
int alloc_object_units(spm_pool *p, uint64_t off, uint64_t *units);
int alloc_commit(spm_pool *p, struct lane *l);
void alloc_after_commit(spm_pool *p, struct lane *l);

#endif
