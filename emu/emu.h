/*
 * emu.h -- the only door from the runtime (lib/) into the emulated secure
 * memory (emu/): media files, controller, crypto engine, counters, counter
 * cache, ADR write queues, timing model, crash points and statistics.
 */
#ifndef SPM_EMU_H
#define SPM_EMU_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define EMU_LINE 64u
#define EMU_PAGE 4096u
#define EMU_MAX_CORES 64u
#define EMU_MAX_WPQ_WINDOW 64u /* wpq_window's largest */
/* Page 0 of the data file is the data header; the heap starts after it. */
#define EMU_DATA_HDR_SIZE EMU_PAGE

enum emu_durability {
	EMU_DUR_AUTO,  /* pmem flush where libpmem reports pmem, stores elsewhere */
	EMU_DUR_PMEM,  /* always pmem_persist (CPU cache flush) */
	EMU_DUR_MSYNC, /* pmem_msync every media write */
	EMU_DUR_NONE,  /* plain stores: durable against process crash only */
};

struct spm_tamper;
/* Everything the options string can set below the runtime; 0 = default. */
struct emu_config {
	char design[32];
	char layout[64];     /* layout=NAME: stored at create, checked at open ("" = any) */
	char profile[32];
	char key_file[4096];
	unsigned aes_bits;
	unsigned ctr_cache_kib;
	unsigned ctr_cache_ways;
	unsigned wpq_data;
	unsigned wpq_ctr;
	unsigned banks;
	int durability; /* enum emu_durability */
	int no_ctr_recovery; /* ctr_recovery=none: do not advance lost counters (a test
				knob: refused unless emu_test_knobs()) */
	unsigned minor_bits; /* split counters: bits of a minor counter (create) */
	unsigned bank_lines; /* consecutive lines per bank */
	int bank_hash;       /* XOR-fold higher address bits into the bank; -1 = profile */
	int core_banks;      /* each modeled core's memory in its own banks (0: shared) */
	int wpq_any;         /* a write takes any free queue entry (0: in FIFO order) */
	int wpq_inorder;     /* queued writes reach their banks in order; -1 = profile */
	unsigned wpq_window; /* inorder: a write waits for the one this many before it (0: 1) */
	int timing_off;      /* timing=off: no memory model (spm as a heap, not a study) */
	unsigned channels;   /* memory channels (channel.c); 0: 1, or profile=heap's */
	int prefault;        /* prefault=1: map every page of the files and the view at
				create and open (as PMDK's prefault.at_create/at_open) */
	char ctr_placement[16]; /* interleave, single, same, xbank; "" = the design's */
	/* the core model (cache.c): the modeled machine's cores (sizes the
	 * shared LLC and counter cache where the profile gives them per core),
	 * cache sizes (0 = profile), the issue cost of an access (ns;
	 * negative = profile), core_model=off: accesses not modeled */
	unsigned cores, l1_kib, l2_kib, llc_kib;
	int core_model_off;
	double access_ns;
	/* timing overrides in ns; negative = profile value */
	double t_rcd, t_cl, t_cwd, t_faw, t_wtr, t_wr, aes_ns;
	double bus_mhz; /* the data bus clock in MHz; 0 or negative = profile value */
	unsigned log_kib; /* the redo designs' log area at create (0: 1024) */
	int redo_early_apply; /* a negative control (test knob): redo records applied
			       * in place before their commit record */
	unsigned bmt_n; /* integrity designs: updates of a metadata line before it is
			 * persisted (cc-NVM's N; 0: 16) */
	unsigned bmt_m; /* cc-NVM's dirty address queue entries (M; 0: 64) */
	unsigned dedup_line; /* dedup designs: bytes per deduplicated unit, 64 or 256
			      * (create; 0: 256) */
	int dewrite_pad;     /* their pads: 1 crc (the paper's), 2 version (create;
			      * 0: version) */
	unsigned dedup_window; /* the history window's writes (0: 3) */
	int dedup_early_map; /* a negative control (test knob): a unique unit mapped
			      * before its data entries are written */
	int lock_data_off;   /* the data file is not flocked: its program locks it (the
			      * preload shim; the meta file still is), not an option */
	int alloc_lanes;     /* alloc=lanes (1) or shared (0) cursor: the runtime's
			      * allocator (lib/alloc.c); -1: lanes under profile=heap */
	int tx_track;        /* tx_track=pages: the runtime finds a transaction's
			      * writes itself (lib/track.c); not the controller's */
	struct spm_tamper *tamper_out; /* spm_verify: where the open lists what it */
	size_t tamper_max, *tamper_found; /* found tampered (NULL: nowhere) */
};

void emu_config_init(struct emu_config *cfg);

struct emu;

/* Create the media files (path, path.meta, key file); checks the design. */
int emu_create(struct emu **out, const char *path, uint64_t size,
	       const struct emu_config *cfg);
/* Open and validate the media; runs controller recovery if it was dirty; a
 * clean pool stays clean until emu_mark_dirty. */
int emu_open(struct emu **out, const char *path, const struct emu_config *cfg);
/* Drain queues, write back counters, mark clean, unmap, free. */
int emu_close(struct emu *e);
/* Unmap and free without a clean shutdown (the pool stays dirty). */
void emu_abandon(struct emu *e);
/* Free a pool whose creation is not committed and remove its files. */
void emu_discard(struct emu *e);
/* Mark an opened pool in use (dirty) before its first write; a clean pool
 * that is refused before this is left unmodified.  0, or an error recording
 * its generation in the key file (the pool stays clean). */
int emu_mark_dirty(struct emu *e);
/* Put a created pool's files in place (until then they have temporary
 * names and a crash leaves no pool); 0 or an error (then emu_discard). */
int emu_commit_create(struct emu *e);
/* The file-level fields of spm_info (superblock, state, epoch) of the pool
 * at path, validated as emu_open validates, nothing written. */
struct spm_info;
int emu_info(const char *path, struct spm_info *out);
/* Give the clean pool at path a new uuid and re-encrypt it under the key
 * derived for it (a restored copy made safe to use: rekey.c). */
int emu_rekey(const char *path, const struct emu_config *cfg);
/* The same under a new random key, which replaces the key file's (rekey.c). */
int emu_rekey_key(const char *path, const struct emu_config *cfg);

bool emu_was_dirty(const struct emu *e);
uint64_t emu_size(const struct emu *e);
const char *emu_design_name(const struct emu *e);
const char *emu_layout(const struct emu *e); /* the pool's layout name ("" = none) */
/* the design called name keeps programs without CounterAtomic annotations
 * crash consistent: 1, 0, or -1 if there is no such design (design.c) */
int emu_design_unannotated(const char *name);
/* the design keeps data MACs and a tree (bmt.c) */
bool emu_has_integrity(const struct emu *e);
/* Fault in every page of [addr, addr+len) writable, contents unchanged. */
void emu_prefault(void *addr, size_t len);
/* emu_prefault of both media files (create, or open once marked dirty). */
void emu_prefault_media(struct emu *e);
/* Fill the plaintext view (size emu_size()) by decrypting every data line. */
int emu_load_view(struct emu *e, void *view);

/* clwb of lines [first, first+n) whose plaintext is at view + 64*line;
 * flags may add, under the same controller entry, a counter_cache_writeback
 * of those lines (EMU_WB_CCWB) and then a fence (EMU_WB_FENCE). */
enum { EMU_WB_CCWB = 1u, EMU_WB_FENCE = 2u };
void emu_write_lines(struct emu *e, unsigned core, uint64_t first, uint64_t n,
		     const void *view, unsigned flags);
/* Lines [first, first+n) of one range. */
struct emu_range {
	uint64_t first, n;
};
/* emu_write_lines of each of n ranges in order, then (EMU_WB_CCWB) the
 * counter_cache_writeback of each in order, then (EMU_WB_FENCE) a fence,
 * under one controller entry. */
void emu_write_ranges(struct emu *e, unsigned core, const struct emu_range *r, size_t n,
		      const void *view, unsigned flags);
/* A batch: the arguments of one emu_write_ranges. */
struct emu_batch {
	const struct emu_range *r;
	size_t n;
	unsigned flags;
};
/* emu_write_ranges of each of nb batches in order, under one controller
 * entry up to each fence (a fence's crash point follows that entry). */
void emu_write_batches(struct emu *e, unsigned core, const struct emu_batch *b, size_t nb,
		       const void *view);
/* sfence: the core's write-backs are accepted into the ADR domain. */
void emu_fence(struct emu *e, unsigned core);
/* Charge ns of the program's own work (not memory traffic) to core's clock. */
void emu_work(struct emu *e, unsigned core, uint64_t ns);
/*
 * The execution-driven core model (cache.c).  emu_access -- the program's
 * load (store 0) or store on core of lines [first, first+n), issued
 * accesses of the core for it: the issue cost of each, then the caches,
 * line by line; a load that misses stalls the core.  Lines outside the
 * data area are not modeled.  emu_access_pending -- outside accesses
 * elsewhere (core work only), and loads and stores of line (UINT64_MAX:
 * none) that were core's last accesses, reported later in a batch: L1
 * hits, unless the line left core's L1 or was cleaned since (another
 * thread on the core, a flush elsewhere), when the first is a real access
 * (emu_access).  Both are
 * no-ops where the model is off (emu_models_accesses 0: timing=off or
 * core_model=off).
 */
void emu_access(struct emu *e, unsigned core, uint64_t first, uint64_t n, unsigned store,
		uint64_t issued);
void emu_access_pending(struct emu *e, unsigned core, uint64_t outside, uint64_t l1_loads,
			uint64_t l1_stores, uint64_t line);
int emu_models_accesses(const struct emu *e);
/* The plaintext view natural evictions write back from (the runtime's). */
void emu_set_view(struct emu *e, const void *view);
/* emu_set_hold -- a natural eviction of a line for which held(arg, line)
 * returns nonzero is not written back (the line stays the program's until
 * the runtime writes it itself): lines an open transaction stored to
 * before their old content is logged (lib/track.c).  held is called with
 * the controller's lock held and must not call into emu; NULL: none. */
void emu_set_hold(struct emu *e, int (*held)(const void *arg, uint64_t line),
		  const void *arg);
/*
 * The redo designs (emu/redo.c: srl, lame, clame): the controller logs a
 * transaction's lines.  emu_is_redo -- is this one of them?  emu_redo_hold
 * -- lines an open transaction declared: their write-backs wait for it.
 * emu_redo_release -- an aborted transaction's lines, no longer held.
 * emu_redo_commit -- the transaction's lines (plaintext in view) logged and
 * committed: 0 once its commit record is in the ADR domain, or an error
 * (SPM_E_NOSPACE: larger than the log) with nothing committed.
 */
int emu_is_redo(const struct emu *e);
void emu_redo_hold(struct emu *e, uint64_t first, uint64_t n);
void emu_redo_release(struct emu *e, const struct emu_range *r, size_t n);
int emu_redo_commit(struct emu *e, unsigned core, const struct emu_range *r, size_t n,
		    const void *view);
/* counter_cache_writeback() for the counters of lines [first, first+n). */
void emu_ctr_writeback(struct emu *e, unsigned core, uint64_t first, uint64_t n);
/* A hint, no modeled effect: lines [first, first+n) will be written back
 * soon; bring their counters into the host's CPU cache. */
void emu_prefetch_counters(const struct emu *e, uint64_t first, uint64_t n);
/* Declare lines CounterAtomic, persistently. */
void emu_set_counter_atomic(struct emu *e, uint64_t first, uint64_t n);
bool emu_is_counter_atomic(const struct emu *e, uint64_t line);

int emu_stat(struct emu *e, const char *name, uint64_t *value);
/* Every name emu_stat reads, NULL-terminated. */
const char *const *emu_stat_names(void);
void emu_stat_reset(struct emu *e);
/* Runtime-side statistics kept in the same table. */
enum emu_rt_stat { EMU_RT_TX_COMMITTED, EMU_RT_TX_ABORTED, EMU_RT_ROLLED_BACK, EMU_RT_EVICTED,
		    EMU_RT_LOG_WRAPS };
void emu_stat_rt_add(struct emu *e, enum emu_rt_stat which, uint64_t n);
/* Mark lines [first, first+n) as transaction log (for media.writes.log). */
void emu_set_log_range(struct emu *e, uint64_t first, uint64_t n);

/* Crash points (emu/crash.c): one predictable branch when disarmed. */
extern int emu_crash_armed;
void emu_crash_hit(const char *name);
static inline void emu_crash_point(const char *name)
{
	if (__builtin_expect(emu_crash_armed, 0))
		emu_crash_hit(name);
}
void emu_crash_init(void);
int emu_crash_init_checked(void);
/* The names of every crash point, NULL-terminated: the one list that
 * SPM_CRASH=point:NAME is checked against (emu/crash.c). */
extern const char *const emu_crash_point_names[];
/* Test knobs (ctr_recovery=none, SPM_AUDIT, SPM_POWERFAIL) harm a normal run;
 * they are accepted only with SPM_TEST_KNOBS=1 in the environment.  1 if so. */
int emu_test_knobs(void);
#define EMU_TEST_KNOBS_ENV "SPM_TEST_KNOBS"

/* Per-thread error message and code (emu/err.c); used by lib for
 * spm_errormsg() and spm_errcode(). */
int emu_err(int code, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
const char *emu_errmsg(void);
int emu_errcode(void);
void emu_err_clear(void);

#endif
