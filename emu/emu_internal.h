/*
 * emu_internal.h -- the emulated machine's parts, shared by the files of emu/.
 * Never included by lib/ (which sees only emu.h); tests may include it.
 */
#ifndef SPM_EMU_INTERNAL_H
#define SPM_EMU_INTERNAL_H 1

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "emu.h"

/* ------------------------------------------------------------ designs */

/* The policies of the design table (doc/design.md) that this build implements. */
enum enc_policy { ENC_NONE, ENC_CTR };
enum cc_policy {
	CC_NONE,    /* no counter cache: every counter is fetched (colocated) */
	CC_WB,      /* write-back, volatile */
	CC_BATTERY, /* write-back, battery-backed: survives a crash (ideal) */
	CC_WT,      /* write-through: never dirty (SuperMem 3.2) */
};
enum ca_policy {
	CA_NONE,       /* counters reach media only on eviction (unsafe, ideal) */
	CA_FULL,       /* every write: data + counter entries with ready bits */
	CA_SELECTIVE,  /* CounterAtomic lines as FULL, counter_cache_writeback */
	CA_COLOCATED,  /* data and counter in one wide (72 B) write */
};

/* Where the counter line of data in bank X is stored (SuperMem 3.3, Fig. 8). */
enum ctr_placement {
	CP_INTERLEAVE, /* a counter area at a fixed address, interleaved like the data */
	CP_SINGLE,     /* SingleBank: every counter line in the bank where that area begins */
	CP_SAME,       /* SameBank: in bank X */
	CP_XBANK,      /* XBank: in bank (X + N/2) mod N */
};
enum ctr_layout_id { LAYOUT_MONO = 0, LAYOUT_SPLIT = 1 };
/* Who logs transactions (redo.c): the runtime's undo log, or the
 * controller's redo log in one of the redo-logging paper's three forms. */
enum log_policy {
	LOG_SW,    /* software undo log (lib/tx.c) */
	LOG_SRL,   /* Secure Redo Logging: entries under the log address's counter */
	LOG_LAME,  /* Log-Aware Memory Encryption (§III.B): under the home's */
	LOG_CLAME, /* LAME with compact log records (§III.C) */
};
/* Integrity (bmt.c): data MACs and a Bonsai Merkle tree over the counters,
 * and how the tree reaches the media (cc-NVM §5's five designs). */
enum integ_policy {
	INTEG_NONE,
	INTEG_NOCC,     /* cached metadata, written on eviction: no crash consistency */
	INTEG_SC,       /* strict: every write-back persists its path atomically */
	INTEG_OSIRIS,   /* Osiris Plus: counters every N updates, the tree rebuilt */
	INTEG_EPOCH,    /* cc-NVM §4.2: epochs drained atomically (w/o DS) */
	INTEG_EPOCH_DS, /* cc-NVM §4.3: and deferred spreading */
};
/* Line deduplication (dedup.c): DeWrite's order of duplicate detection and
 * encryption (its Figure 2). */
enum dedup_policy {
	DEDUP_NONE,
	DEDUP_PREDICT,  /* the history window decides (DeWrite §"Prediction") */
	DEDUP_DIRECT,   /* detect, then encrypt a unique line (Fig. 2(a)) */
	DEDUP_PARALLEL, /* detect and encrypt at once (Fig. 2(b)) */
};

struct design {
	const char *name;
	enum enc_policy enc;
	enum cc_policy cc;
	enum ca_policy ca;
	int honours_ccwb; /* counter_cache_writeback() acts */
	enum ctr_layout_id layout;
	enum ctr_placement placement;
	int coalesce; /* counter write coalescing in the queue (SuperMem 3.4.3) */
	enum log_policy logging; /* who logs transactions */
	const char *profile; /* default profile */
	const char *paper; /* where it comes from */
	enum integ_policy integrity; /* data MACs and tree (bmt.c); 0: none */
	enum dedup_policy dedup;     /* line deduplication (dedup.c); 0: none */
};

const struct design *design_find(const char *name);
const struct design *design_table(unsigned *n);
/* "plain, ideal, ..." -- the preset names, for messages. */
const char *design_names(void);
/* the placement called name, or -1 */
int placement_find(const char *name);

/* A configuration/timing profile: one paper's configuration table. */
struct profile {
	const char *name;
	double t_rcd, t_cl, t_cwd, t_faw, t_wtr, t_wr; /* ns */
	double aes_ns;      /* pad latency */
	double aes_issue_ns; /* engine occupancy per line (pipelined) */
	double cc_hit_ns;   /* counter cache lookup */
	double issue_ns;    /* cost of issuing one clwb at the core */
	unsigned ctr_cache_kib, ctr_cache_ways, wpq_data, wpq_ctr, banks;
	unsigned bank_lines; /* consecutive lines per bank (1: line interleaving) */
	int wpq_shared;      /* data and counters share the data queue's slots */
	int bank_hash;       /* XOR-fold higher address bits into the bank index */
	int wpq_inorder;     /* a core's queued writes reach their banks in queue order */
	/* the core model (cache.c): clock, caches (KiB, ways, lookup cycles),
	 * the issue cost of one access, the read queue */
	double ghz;
	unsigned l1_kib, l1_ways, l1_cyc;
	unsigned l2_kib, l2_ways, l2_cyc; /* private L2; 0 KiB: none (the LLC is L2) */
	unsigned llc_kib, llc_ways, llc_cyc;
	int llc_per_core;    /* llc_kib per modeled core (cores=), shared */
	int ctr_per_core;    /* ctr_cache_kib per modeled core, shared */
	double access_cyc;   /* issue cost of one load or store (cache.c: calibration) */
	unsigned rq_entries; /* read queue */
	double bus_mhz;      /* the channel's DDR data bus clock: two beats per cycle */
	unsigned line_beats; /* beats of one line transfer on that bus */
	double mac_ns;       /* one MAC (HMAC) computation (integrity designs) */
	double daq_ns;       /* a dirty address queue lookup (cc-NVM) */
	double crc_ns;       /* a line's CRC-32 (DeWrite) */
	double cmp_ns;       /* the compare of two lines (DeWrite) */
};

const struct profile *profile_find(const char *name);

/* ------------------------------------------------------------ crypto */

struct crypto;
int crypto_new(struct crypto **out, const uint8_t *key, unsigned bits);
void crypto_free(struct crypto *c);
/* ECB-encrypt n 16-byte blocks (seeds) into out: the engine's raw pad function. */
int crypto_blocks(struct crypto *c, const uint8_t *seeds, size_t n, uint8_t *out);
/* Pads of n lines: line[i] with counter ctr[i], 64 bytes each, into out. */
int crypto_line_pads(struct crypto *c, const uint64_t *line, const uint64_t *ctr,
		     size_t n, uint8_t *out);
/* The same under the controller's lock (its own cipher context). */
int crypto_line_pads_ctl(struct crypto *c, const uint64_t *line, const uint64_t *ctr,
			 size_t n, uint8_t *out);
/* The same, but a failure leaves no message (-1): pads made ahead of need. */
int crypto_line_pads_try(struct crypto *c, const uint64_t *line, const uint64_t *ctr,
			 size_t n, uint8_t *out);
/* The same in the calling thread's context, without the controller's lock. */
int crypto_line_pads_any_try(struct crypto *c, const uint64_t *line, const uint64_t *ctr,
			     size_t n, uint8_t *out);
/* HKDF-SHA256 (key, salt, info) -> out. */
int crypto_hkdf(const uint8_t *key, size_t keylen, const uint8_t *salt,
		size_t saltlen, const char *info, uint8_t *out, size_t outlen);

/* ------------------------------------------------------------ timing */

#define TM_MAX_BANKS 64
#define TM_MAX_QUEUE 256
#define TM_MAX_WINDOW EMU_MAX_WPQ_WINDOW

/* A write queue's slots in modeled time: when each slot frees. */
struct tm_queue {
	uint64_t slot_free[TM_MAX_QUEUE];
	uint64_t slot_start[TM_MAX_QUEUE]; /* when the slot's write reaches its bank */
	uint64_t slot_addr[TM_MAX_QUEUE];  /* its address (TM_CTR_ADDR: a counter line) */
	unsigned cap, pos; /* entries; the next in FIFO order */
	int any;           /* an entry frees whenever its write completes (take_slot) */
	int inorder;       /* a core's write reaches its bank no earlier than the one
			    * window writes before it in the core's queue order (window 1:
			    * its last); set before the first write: plain copies keep no
			    * issue_win */
	unsigned window;   /* 1..TM_MAX_WINDOW (wpq_window) */
	unsigned win_pos[EMU_MAX_CORES]; /* inorder: each core's next issue_win entry */
	uint64_t issue_win[EMU_MAX_CORES][TM_MAX_WINDOW]; /* inorder: the starts of each
							   * core's last window writes (a ring) */
};
#define TM_CTR_ADDR (1ull << 63)

/*
 * A calendar: the latest busy intervals booked on one resource, sorted and
 * disjoint.  A request takes the earliest gap at or after its time, so
 * cores run one operation at a time in host order still meet in
 * modeled-time order.  A full calendar forgets its older half; before floor
 * (the end of what it forgot) the resource counts as busy.
 */
#define TM_CAL 64
struct tm_cal {
	uint64_t floor;
	unsigned n;
	uint64_t write[TM_CAL]; /* 1: interval i is writes (a read after them waits tWTR) */
	uint64_t start[TM_CAL], end[TM_CAL];
};

/*
 * The data bus's bookings, one burst each, by the bucket of time they end
 * in: buckets about a burst long in a ring of TM_BUS_SLOTS (emu/timing.c,
 * "the data bus").
 */
#define TM_BUS_SLOTS 8192u

struct timing {
	uint64_t rcd, cl, cwd, faw, wtr, wr, aes, aes_issue, cc_hit, issue; /* ps */
	uint64_t mac, daq; /* ps: a MAC, a dirty address queue lookup (integrity) */
	uint64_t crc, cmp; /* ps: a CRC-32, a compare of two lines (dedup) */
	/* write latency (mem.write_ns): the data queue's writes from ready to
	 * done at their bank, the time before the queue, and the writes */
	uint64_t wlat, wpre, wn;
	uint64_t min_req; /* the shortest bank request: no calendar gap below it is of use */
	uint64_t busy;    /* cwd + wr: a write's time at its bank */
	uint64_t burst;   /* one line's transfer on the data bus (0: timing off) */
	unsigned bus_bits; /* the data bus's width: a line moves in line_beats beats */
	uint64_t bus_inv;  /* ceil(2^64 / burst): a time x's bus bucket is x * bus_inv >> 64 */
	uint64_t bus_span; /* 2 burst - 2: the ends of bursts that meet one */
	uint64_t bus_top;  /* the latest time the bus is modeled at: 2^64 - 1 - 2 burst */
	unsigned banks, bank_mask; /* mask: banks - 1 if a power of two, else 0 */
	unsigned bank_lines;       /* consecutive lines per bank */
	int bank_shift;            /* log2(bank_lines) if a power of two, else -1 */
	unsigned bank_bits;        /* log2(banks) if a power of two, else 0 */
	unsigned bank_fold;        /* bank_hash: the first XOR-fold shift (0: no hash) */
	int bank_fold3;            /* bank_shift >= 0 and 8 banks hashed: ctrl bank_of's usual case */
	int wpq_shared;            /* counter writes take data queue slots */
	int core_banks;            /* a core's bank b is bank (b + core) mod banks */
	int off;                   /* timing=off: no memory model, every request served at once */
	struct tm_cal bank[TM_MAX_BANKS];
	uint64_t bus[TM_BUS_SLOTS + 2]; /* the data bus: each bucket's burst end (0: none);
					 * the first two again after the ring */
	uint64_t act[EMU_MAX_CORES][4]; /* each core's last four activations, a ring
					 * (tFAW; 0: none yet) */
	uint8_t act_next[EMU_MAX_CORES]; /* the ring's oldest: the next replaced */
	struct tm_cal aes_cal; /* the AES engine's entry slots (tm_aes) */
	uint64_t aes_ops, aes_wait; /* pads booked on the engine; ps they waited for it */
	struct tm_queue qdata, qctr;
	uint64_t clock[EMU_MAX_CORES];
	uint64_t pending[EMU_MAX_CORES];
};

void tm_init(struct timing *t, const struct profile *p, unsigned wpq_data,
	     unsigned wpq_ctr, unsigned banks, unsigned bank_lines, int bank_hash,
	     unsigned line_bytes);
void tm_reset(struct timing *t);
void tm_off(struct timing *t);
/* Modeled time at which a pad for a request ready at time t is done. */
uint64_t tm_aes(struct timing *t, uint64_t ready);
/* Enqueue a write to bank at time ready; returns acceptance time; *stalled. */
uint64_t tm_write(struct timing *t, unsigned core, struct tm_queue *q, unsigned bank,
		  uint64_t addr, uint64_t ready, int *stalled);
/* n writes into q in order, as n tm_write calls; the latest acceptance
 * (banks are 16-bit: TM_MAX_BANKS fits). */
_Static_assert(TM_MAX_BANKS <= UINT16_MAX, "a bank number fits 16 bits");
uint64_t tm_write_n(struct timing *t, unsigned core, struct tm_queue *q, const uint16_t *bank,
		    const uint64_t *addr, const uint64_t *ready, unsigned n,
		    uint64_t *stalls);
/* n counter-atomic pairs (counter write into qc, then data write into qd,
 * ready at the later of its pad and its partner's acceptance), as 2n
 * tm_write calls; the latest acceptance. */
uint64_t tm_write_pairs(struct timing *t, unsigned core, struct tm_queue *qc, struct tm_queue *qd,
			const uint16_t *cbank, const uint64_t *caddr,
			const uint64_t *cready, const uint16_t *dbank,
			const uint64_t *daddr, const uint64_t *dready, unsigned n,
			uint64_t *stalls);
/* The same where the queues take any free entry (tm_queue.any); the caller
 * chooses, so that the FIFO functions stay small enough to inline. */
uint64_t tm_write_n_any(struct timing *t, unsigned core, struct tm_queue *q,
			const uint16_t *bank, const uint64_t *addr, const uint64_t *ready,
			unsigned n, uint64_t *stalls);
uint64_t tm_write_pairs_any(struct timing *t, unsigned core, struct tm_queue *qc,
			    struct tm_queue *qd, const uint16_t *cbank, const uint64_t *caddr,
			    const uint64_t *cready, const uint16_t *dbank, const uint64_t *daddr,
			    const uint64_t *dready, unsigned n, uint64_t *stalls);
/* Is a write of addr in q at time at, not yet at its bank? (coalescing) */
int tm_queued(const struct timing *t, const struct tm_queue *q, uint64_t addr,
	      uint64_t at);
/* A read from bank issued at time t; returns when its data has crossed the bus. */
uint64_t tm_read(struct timing *t, unsigned core, unsigned bank, uint64_t at);
/* a read that goes before queued writes (read.c): when its data is out, unbooked */
uint64_t tm_read_first(const struct timing *t, unsigned core, unsigned bank, uint64_t at);
/* a read's pad: the engine's latency, unbooked (read.c) */
uint64_t tm_aes_unbooked(const struct timing *t, uint64_t at);
uint64_t tm_makespan(const struct timing *t);
/* when bank b's latest booked request ends (0: none) */
uint64_t tm_bank_free(const struct timing *t, unsigned b);

/* ------------------------------------------------------------ counter cache */

struct cc_way {
	uint64_t tag; /* counter line index + 1; 0 = invalid */
	uint64_t lru;
	uint32_t incs; /* increments since the line was last written back */
	uint8_t dirty;
};

struct ctr_cache {
	unsigned sets, ways;
	uint64_t set_mask; /* sets - 1 if a power of two, else 0 */
	struct cc_way *way;
	struct cc_way *last; /* the way of the last access (fast path) */
	uint64_t tick;
};

enum cc_result { CC_HIT, CC_MISS };
int cc_init(struct ctr_cache *c, unsigned kib, unsigned ways);
void cc_fini(struct ctr_cache *c);
/* Look up counter line cl; on a miss insert it and report the victim.
 * Afterwards c->last is the way now holding cl (its index: c->last - c->way). */
enum cc_result cc_access(struct ctr_cache *c, uint64_t cl, int make_dirty,
			 uint64_t *victim, int *victim_dirty);
/* If cl is cached and dirty, clean it and return 1. */
int cc_clean(struct ctr_cache *c, uint64_t cl);
/* If cl is cached, make it dirty and return 1 (a miss inserts nothing). */
int cc_mark_dirty(struct ctr_cache *c, uint64_t cl);
/* Iterate dirty lines: calls fn(cl) for each and cleans it. */
void cc_flush_all(struct ctr_cache *c, void (*fn)(void *, uint64_t), void *arg);
void cc_invalidate_all(struct ctr_cache *c);

/* ------------------------------------------------------------ counters */

/*
 * The counter storage layout behind an interface.  The controller keeps each
 * line's effective counter (the value in its pads) as a u64; a layout says
 * how a 64-byte counter line stores the counters of the lines it covers.
 *  mono:  8-byte counter per line, 8 per counter line (SCA 5.2.1);
 *  split: per 4 KiB page a 64-bit major and 64 7-bit minors (SuperMem
 *         3.4.1); effective counter = major << minor_bits | minor.
 */
struct ctr_layout {
	const char *name;
	enum ctr_layout_id id;
	unsigned lines_per_ctr_line; /* data lines covered by one counter line */
	unsigned ctr_shift;          /* log2(lines_per_ctr_line) */
	/* the counter line of the effective counters ctr[0..lines_per-1] */
	void (*encode)(const uint64_t *ctr, unsigned minor_bits, uint8_t out[64]);
	/* the effective counters stored in a counter line */
	void (*decode)(const uint8_t in[64], unsigned minor_bits, uint64_t *ctr);
};
extern const struct ctr_layout ctr_layout_mono, ctr_layout_split;
const struct ctr_layout *ctr_layout_of(unsigned id);
/* bytes of counter storage for nlines data lines */
uint64_t ctr_storage_bytes(const struct ctr_layout *l, uint64_t nlines);
/* merge a counter line payload into its home: counters only grow */
void ctr_merge_home(const struct ctr_layout *l, unsigned minor_bits,
		    uint8_t home[64], const uint8_t payload[64]);
#define SPLIT_MINOR_BITS 7u

/* ------------------------------------------------------------ media */

#define SB_MAGIC "SPMMETA\0"
#define DH_MAGIC "SPMDATA\0"
/* 2: keyed epoch words, the generation in the key file, the layout name */
#define SPM_FORMAT_VERSION 2u
#define SB_STATE_CLEAN 0x434c45414e000001ull
#define SB_STATE_DIRTY 0x4449525459000002ull

/* The data file's header, page 0 of <path> (plaintext, not application data). */
struct data_hdr {
	char magic[8];
	uint32_t version;
	uint32_t hdr_size;
	uint8_t uuid[16];
	uint64_t pool_size;
	uint32_t checksum; /* crc32 of everything before it */
	uint32_t pad;
};
_Static_assert(sizeof(struct data_hdr) == 48, "data_hdr layout");

/* The superblock of <path>.meta. */
struct superblock {
	char magic[8];
	uint32_t version;
	uint32_t sb_size;
	uint8_t uuid[16];
	uint64_t pool_size;
	uint64_t nlines;
	char design[32];
	uint32_t aes_bits;
	uint32_t ctr_layout; /* 0 = mono */
	uint32_t adr_data_cap;
	uint32_t adr_ctr_cap;
	uint64_t adr_off, adr_size;
	uint64_t ctr_off, ctr_size;
	uint64_t ca_off, ca_size;
	uint64_t meta_size;
	uint8_t kcv[16]; /* key check value: HKDF(key, uuid, "spm kcv") */
	uint64_t features;
	uint32_t checksum; /* crc32 of the superblock but this word and state */
	uint32_t pad;
	uint64_t shadow_off;   /* counter cache shadow table (Anubis-style) */
	uint64_t shadow_slots; /* one u64 per counter cache way */
	uint64_t stop_loss;    /* Osiris-style bound on lost increments */
	uint32_t minor_bits;   /* split layout: bits of a minor counter (1..7) */
	uint32_t pad2;
	char layout[64];       /* layout=NAME given at create, NUL-padded ("" = none) */
	uint64_t log_off;      /* the redo designs' log area (redo.c), after the shadow */
	uint64_t log_lines;    /* table; 0: none */
	uint64_t mac_off, mac_size;     /* integrity (bmt.c): 16-byte data MACs */
	uint64_t tree_off, tree_size;   /* the tree's inner nodes, level by level */
	uint64_t drain_off, drain_size; /* the drain buffer (ADR-protected) */
	uint32_t bmt_n, bmt_m;          /* cc-NVM's N and M, fixed at create */
	uint64_t dd_off, dd_size;       /* dedup (dedup.c): its tables, last */
	uint32_t dd_unit;               /* lines per deduplicated unit (1 or 4) */
	uint32_t dd_pad;                /* the pad's input: 0 CRC, 1 CRC and version */
	uint8_t reserved[512 - 376];
	/* not checksummed: written alone with one 8-byte store */
	uint64_t state;
};
_Static_assert(offsetof(struct superblock, checksum) == 176, "sb layout");
_Static_assert(offsetof(struct superblock, state) == 512, "sb state offset");
_Static_assert(offsetof(struct superblock, layout) == 216, "sb layout offset");

/* sb_crc -- the superblock's checksum (all of it but the checksum and state words). */
uint32_t sb_crc(const struct superblock *sb);

/* One write queue entry in the ADR region. */
enum {
	WQ_VALID = 1u,  /* entry written */
	WQ_READY = 2u,  /* may drain (at a crash, only ready entries do) */
	WQ_PAIRED = 4u, /* data half of a counter-atomic pair: ready iff partner is */
	WQ_COLOC = 8u,  /* the entry's counter is in aux and goes home with it */
	WQ_RSR = 16u,   /* a line re-encrypted under the RSR (reenc.c): complete
			   once valid, rolled forward at recovery */
	WQ_RESERVED = 32u, /* not valid yet: its ciphertext is being written, under
			    * the counter held in pad, for the line in addr
			    * (recovery advances the line past it) */
	WQ_LOG = 64u,   /* addr is a line of the redo log area, not of the data */
	WQ_MAC = 128u,  /* the line's data MAC is in pad[16..31]: it goes home with it */
};
struct wq_entry {
	uint64_t seq;
	uint64_t addr; /* data line, or counter line */
	uint64_t state;
	uint64_t aux; /* partner seq (PAIRED) or counter (COLOC) */
	uint8_t payload[64];
	uint8_t pad[32];
};
_Static_assert(sizeof(struct wq_entry) == 128, "wq_entry layout");

/* The epoch words (emu.c, "Epochs"): the data file's, in line 1 of its
 * header page; the superblock's and its next, right after the state word. */
#define DH_EPOCH_OFF 64u
#define SB_EPOCH_OFF 520u
#define SB_NEXT_OFF 528u

#define ADR_HDR_SIZE 4096u

/* The re-encryption status register (SuperMem 3.4.4), first in the ADR
 * region's header: ADR-protected like the queues. */
struct rsr {
	uint64_t active;    /* page + 1 while the page is re-encrypted, else 0 */
	uint64_t old_major; /* the page's major before */
	uint64_t done;      /* bit i: line i of the page is under the new major */
	uint64_t pad;
};
/*
 * The lines of the unready pairs a recovery dropped, and the counters their
 * dropped ciphertext used, kept in the ADR region's header from the moment
 * the queues are cleared until every one is re-encrypted past its counter
 * (ctrl_advance_stale): a crash in between finds them again.  One entry per
 * line (its largest counter); a crash leaves at most a few unready pairs or
 * reserved slots, all under the controller's lock.
 */
#define ADR_DROPPED_OFF 64u
#define ADR_DROPPED_MAX 240u
struct adr_dropped {
	uint64_t n; /* entries, set with one store after they are written */
	uint64_t pad;
	struct {
		uint64_t line, ctr;
	} e[ADR_DROPPED_MAX];
};
_Static_assert(ADR_DROPPED_OFF >= sizeof(struct rsr) &&
	       ADR_DROPPED_OFF + sizeof(struct adr_dropped) <= ADR_HDR_SIZE,
	       "the dropped table in the ADR header");
#define SHADOW_SLOTS 131072u /* counter caches up to 8 MiB */
#define STOP_LOSS_DEFAULT (1u << 20)

struct media {
	char *data_path, *meta_path;
	uint8_t *data; /* mapped data file */
	uint8_t *meta; /* mapped meta file */
	size_t data_len, meta_len;
	int data_is_pmem, meta_is_pmem;
	int lock_fd, meta_lock_fd; /* flocked: one opener of either file at a time */
	int persist_on; /* 0: plain stores suffice (persist_none) */
	void (*persist)(const struct media *m, const void *addr, size_t len);
};

/* line_xor -- dst = a XOR b, 64 bytes (SSE2 on x86-64). */
static inline void line_xor(void *dst, const void *a, const void *b)
{
#ifdef __SSE2__
	for (unsigned i = 0; i < 4; i++) {
		__m128i x = _mm_loadu_si128((const __m128i *)a + i);
		__m128i y = _mm_loadu_si128((const __m128i *)b + i);
		_mm_storeu_si128((__m128i *)dst + i, _mm_xor_si128(x, y));
	}
#else
	uint64_t x[8], y[8];
	memcpy(x, a, 64);
	memcpy(y, b, 64);
	for (unsigned i = 0; i < 8; i++)
		x[i] ^= y[i];
	memcpy(dst, x, 64);
#endif
}

/* line_stream -- copy 64 aligned bytes with non-temporal stores (no RFO). */
static inline void line_stream(void *dst, const void *src)
{
#ifdef __SSE2__
	for (unsigned i = 0; i < 4; i++)
		_mm_stream_si128((__m128i *)dst + i, _mm_loadu_si128((const __m128i *)src + i));
#else
	memcpy(dst, src, 64);
#endif
}

/* line_xor_stream -- dst = a XOR b with non-temporal stores (dst aligned). */
static inline void line_xor_stream(void *dst, const void *a, const void *b)
{
#ifdef __SSE2__
	for (unsigned i = 0; i < 4; i++) {
		__m128i x = _mm_loadu_si128((const __m128i *)a + i);
		__m128i y = _mm_loadu_si128((const __m128i *)b + i);
		_mm_stream_si128((__m128i *)dst + i, _mm_xor_si128(x, y));
	}
#else
	line_xor(dst, a, b);
#endif
}

/* media_persist -- make a media write durable per the pool's durability mode. */
static inline void media_persist(const struct media *m, const void *addr, size_t len)
{
	if (m->persist_on)
		m->persist(m, addr, len);
}

int media_create(struct media *m, const char *path, const char *meta_path, uint64_t size,
		 uint64_t meta_size, int durability, const void *data_head, size_t data_n,
		 const void *meta_head, size_t meta_n);
int same_file(int fd, const char *path);
void media_unlink_own(const struct media *m);
int media_open(struct media *m, const char *path, int durability, int lock_data);
void media_unlock_data(struct media *m);
void media_close(struct media *m);
void media_prefault(struct media *m);
int emu_populate(void *addr, size_t len);
void media_choose_persist(struct media *m, int durability);

/* powerfail.c */
int emu_powerfail_init(void);
int emu_powerfail_attach(struct media *m);
void emu_powerfail_detach(const struct media *m);
void emu_powerfail_apply(uint64_t hit);

/* ------------------------------------------------------------ write queues */

struct wq {
	struct wq_entry *slot; /* in the ADR region */
	unsigned cap;          /* entries in the ADR region */
	unsigned depth;        /* entries in use by the configuration */
	unsigned head, tail, count;
	struct tm_queue *tmq;
};

/* ------------------------------------------------------------ statistics */

enum stat_id {
#define STAT(id, name) id,
#include "stats.def"
#undef STAT
	STAT__N
};

/* ------------------------------------------------------------ core model */

/* One set-associative cache (cache.c): LRU, write-back, write-allocate. */
struct cache_level {
	uint64_t *tag;   /* line + 1 of each way, set after set (0: invalid) */
	uint64_t *stamp; /* each way's last use (LRU: the smallest goes) */
	uint8_t *dirty;
	unsigned sets, ways;
	uint64_t set_mask; /* sets - 1 if a power of two, else 0 (modulo) */
	uint64_t tick;
	uint64_t hit_ps;   /* lookup latency */
	unsigned kib;
	enum stat_id st_hit, st_miss;
};
/* A modeled core's caches: path[0] its L1, then its L2 if private, then the LLC. */
struct core_caches {
	struct cache_level l1, l2;
	struct cache_level *path[3];
	unsigned depth;
	uint64_t last_line; /* line + 1 of L1's way last_idx, the last one used */
	unsigned last_idx;
};
struct cache_model {
	struct core_caches *core[EMU_MAX_CORES]; /* made at the core's first access */
	uint8_t made[EMU_MAX_CORES];             /* the cores made, in order */
	unsigned nmade;                          /* 0: no access seen, nothing cached */
	struct cache_level llc;                  /* shared by the cores */
	unsigned l1_kib, l1_ways, l2_kib, l2_ways;
	uint64_t l1_ps, l2_ps;
	uint64_t access_ps;  /* issue cost of one access */
	uint64_t first_line; /* lines below (the data header) are not modeled */
	const uint8_t *view; /* where natural evictions take their plaintext */
};
int cache_model_new(struct emu *e, const struct emu_config *cfg);
void cache_model_free(struct emu *e);
/* the stall (ps) of core's access to line (caller holds the lock) */
uint64_t cache_access(struct emu *e, unsigned core, uint64_t line, unsigned store);
/* clwb of lines [first, first+n): clean wherever cached (caller holds the lock) */
void cache_clean(struct emu *e, uint64_t first, uint64_t n);
/* read.c: a memory read of data line at time at; when its plaintext is ready */
uint64_t ctrl_read_line(struct emu *e, unsigned core, uint64_t line, uint64_t at);
void read_queue_reset(struct emu *e);
/* controller.c, for the read path and the caches */
uint64_t ctrl_counter_for_read(struct emu *e, unsigned core, uint64_t line, uint64_t t);
void ctrl_evict_line(struct emu *e, unsigned core, uint64_t line, const uint8_t *view);

/* ------------------------------------------------------------ redo log (redo.c) */

/* The redo log's registers, in the ADR region's header after the dropped
 * table: record numbers, which only grow (slot = number mod records). */
#define ADR_REDO_OFF 3968u
struct redo_regs {
	uint64_t head;      /* the oldest record not yet applied in place */
	uint64_t committed; /* records below it belong to committed transactions */
	uint64_t tail;      /* records below it may have been written */
	uint64_t pad;
};
/* The integrity designs' drain register (bmt.c), in the ADR region's header
 * after the redo registers: the drain buffer's state. */
#define ADR_BMT_OFF 4032u
/* Line addresses of the log area and the counter buffer, for banks and pads:
 * past the data (< 2^42 lines) and the counter area (2^42). */
#define REDO_LOG_AREA (1ull << 43)
#define REDO_CTRBUF_AREA (REDO_LOG_AREA + (1ull << 40))
#define CLAME_PARTIAL_BITS 18u
#define CLAME_ADDR_BITS 45u
struct redo_item {
	uint64_t line;    /* the home line */
	uint32_t partial; /* the low 18 bits of its counter; 0: overflow */
};
/* A compact record's 64-byte header (§III.C): items 0..7 at bit 63 i, each a
 * 45-bit line and an 18-bit partial counter, then 8 valid bits. */
void clame_hdr_pack(uint8_t out[EMU_LINE], const struct redo_item it[8], unsigned valid);
unsigned clame_hdr_unpack(const uint8_t in[EMU_LINE], struct redo_item it[8]);
/* the full counter an item's partial stands for, given the line's last
 * known counter (each logged write raised it by one; overflow: caller) */
uint64_t clame_full_ctr(uint64_t last, uint32_t partial);
/* The planning of records: n lines with counters ctr[] laid out into
 * records (overflow slots, an 8th item that overflows moving on): the
 * number of records; slot_of[i] = record * 8 + slot of line i. */
uint64_t redo_plan(enum log_policy pol, const uint64_t *ctr, size_t n, uint32_t *slot_of);
uint64_t redo_log_lines_default(const struct design *d);
int redo_check_log_size(const struct design *d, uint64_t log_lines);
int redo_attach(struct emu *e);
void redo_free(struct emu *e);
int redo_check(int meta_fd, const char *meta_path, const struct superblock *sb,
	       const struct wq_entry *data_q, unsigned dcap);
int redo_recover(struct emu *e);
int redo_recover_finish(struct emu *e);
void redo_apply_all(struct emu *e);
/* controller.c's write path, for the redo designs' lines that go home */
void redo_write_ranges(struct emu *e, unsigned core, const struct emu_range *r, size_t n,
		       const void *view, unsigned flags);
int redo_evict_skip(struct emu *e, uint64_t line);
void redo_ctr_victim(struct emu *e, unsigned core, uint64_t cl, uint64_t t);
int redo_ctr_buffered(struct emu *e, uint64_t cl, unsigned *bank);
int redo_read_from_log(struct emu *e, uint64_t line, uint64_t at, uint64_t *log_addr);

/* ------------------------------------------------------------ integrity (bmt.c) */

/* the meta file's integrity areas for a pool of nlines lines (sizes in
 * bytes, page-rounded; all 0 without integrity) */
void bmt_layout(const struct design *d, uint64_t nlines, uint64_t *mac_size,
		uint64_t *tree_size, uint64_t *drain_size);
int bmt_attach(struct emu *e, const struct emu_config *cfg);
void bmt_free(struct emu *e);
/* a new pool: every line's MAC and the tree over its counters, roots set */
int bmt_create(struct emu *e);
/* open: a clean pool verified; a dirty one recovered (cc-NVM §4.4) */
int bmt_open(struct emu *e);
void bmt_write_ranges(struct emu *e, unsigned core, const struct emu_range *r, size_t n,
		      const void *view);
/* a counter/metadata cache victim (controller.c's ctr_filled) */
void bmt_victim(struct emu *e, unsigned core, uint64_t id, uint64_t t);
/* close: every cached update persisted, both roots the tree's */
void bmt_close(struct emu *e);
/* the pool is in use from now on (emu_mark_dirty, after its state word) */
void bmt_mark_dirty(struct emu *e);
/* the smallest bmt_m for a pool of nlines lines (its tree's height + 1) */
unsigned bmt_min_m(uint64_t nlines);
/* a pool with registers (an integrity design's) opened as another design */
int bmt_check_no_registers(const char *key_path, const uint8_t uuid[16], const char *path,
			   const char *design);
/* the drain register and buffer, and the queues' MAC flags, of a dirty pool
 * (validate, before anything is written) */
int bmt_check_adr(int meta_fd, const char *meta_path, const struct superblock *sb,
		  const struct wq_entry *data_q, unsigned dcap);
/* the read path: a fetched line's MAC checked (modeled time) */
uint64_t bmt_read_verify(struct emu *e, unsigned core, uint64_t line, uint64_t t);
int bmt_advance_line(struct emu *e, uint64_t l, uint64_t min_ctr);
void bmt_discard(struct emu *e);
/* the superblock's integrity fields fit the design and the file */
int bmt_check_sb(const char *meta_path, const struct superblock *sb);

/* ------------------------------------------------------------ dedup (dedup.c) */

enum { DD_PAD_CRC = 0, DD_PAD_VERSION = 1 };
/* the meta file's dedup area for a pool of nlines lines in units of unit
 * lines (bytes, page-rounded; 0 without dedup) */
uint64_t dedup_area_size(const struct design *d, uint64_t nlines, unsigned unit);
int dedup_attach(struct emu *e, const struct emu_config *cfg);
/* a new pool: nothing mapped, every physical unit free */
int dedup_create(struct emu *e);
void dedup_free(struct emu *e);
/* open: the tables rebuilt from the mapping (dirty) or checked (clean) */
int dedup_open(struct emu *e);
void dedup_write_ranges(struct emu *e, unsigned core, const struct emu_range *r, size_t n,
			const void *view);
uint64_t dedup_read(struct emu *e, unsigned core, uint64_t line, uint64_t at);
int dedup_load_view(struct emu *e, void *view);
void dedup_close(struct emu *e);
uint64_t dedup_gauge(const struct emu *e, int stat);
int dedup_check_sb(const char *meta_path, const struct superblock *sb);
/* a dirty pool's ADR region (validate, before anything is written) */
int dedup_check_adr(const char *meta_path, const struct superblock *sb,
		    const struct wq_entry *w, unsigned dcap, unsigned total, uint64_t ndropped);
/* the mapping's bounds and the retired units (validate: read only) */
int dedup_check_tables(const char *meta_path, const struct superblock *sb);

/* ------------------------------------------------------------ the controller */

struct emu {
	pthread_mutex_t lock;
	int lock_ready; /* lock initialised (runtime_init) */
	const struct design *design;
	const struct profile *profile;
	const struct ctr_layout *layout;
	unsigned minor_bits;       /* split layout */
	enum ctr_placement placement;
	struct rsr *rsr;           /* in the ADR region */
	struct adr_dropped *adr_dropped; /* in the ADR region's header */
	struct media media;
	struct superblock *sb;
	uint64_t nlines;
	struct crypto *crypto;
	struct ctr_cache cc;
	uint64_t *cur_ctr; /* the newest counter of each line (volatile) */
	uint64_t *ctr_home; /* counter storage in the meta file */
	int cur_ctr_anon;   /* cur_ctr is anonymous memory (decoded), not a private map */
	uint8_t *ca_bits;   /* CounterAtomic bitmap in the meta file */
	struct wq qdata, qctr;
	uint64_t next_seq;
	struct timing tm;
	uint64_t stat[STAT__N];
	uint64_t log_first, log_n;
	int was_dirty;
	/* lost-counter protection (doc/design.md, "Security invariants") */
	int tracks_stale;   /* the design can lose dirty counters at a crash */
	int ctr_home_fifo;  /* only the counter queue, in order, writes ctr_home
			     * while open (no co-located counters in data entries) */
	int no_ctr_recovery; /* ctr_recovery=none */
	uint64_t *shadow;   /* in the meta file: counter line + 1 per cache way */
	uint64_t shadow_slots;
	uint64_t stop_loss;
	int audit_fd;       /* SPM_AUDIT: every encryption pad, or -1 */
	char *made_key;     /* the key file this creation makes (placed at its commit) */
	char *made_key_tmp; /* its temporary name until then */
	char *key_path;     /* the key file (its generation raised with the epochs) */
	uint8_t key_raw[32]; /* the key file's key, to check it is still the one there */
	unsigned key_bits;
	uint8_t epoch_key[32]; /* HKDF(key, uuid, "spm epoch"): the epoch words' MAC key */
	int has_epoch_key;  /* an encrypting pool: its epoch words carry a keyed MAC */
	uint8_t sb_uuid[16]; /* the pool's uuid (the epoch MAC covers it) */
	char layout_name[65]; /* the superblock's layout name, NUL-terminated */
	int data_unlocked;  /* emu_config.lock_data_off: no flock held on the data file */
	int creating;       /* spm_create not yet committed: the files have temporary names */
	char *final_data, *final_meta; /* create: their names once committed */
	uint64_t epoch;     /* of both files (emu.c: epochs) */
	int recovering;     /* ctrl_advance_stale runs: no shadow records */
	struct dropped { uint64_t line, ctr; } *dropped; /* unready pairs dropped */
	int direct; /* the current line of a long range bypasses the queue */
	size_t ndropped;
	struct cache_model *cm; /* the core model, or NULL (off) */
	struct redo *redo;      /* the redo log (redo.c), or NULL (LOG_SW) */
	struct bmt *bmt;        /* data MACs and tree (bmt.c), or NULL */
	struct dedup *dedup;    /* line deduplication (dedup.c), or NULL */
	uint8_t *mac_home;      /* the data MACs in the meta file (bmt.c), or NULL */
	int redo_early_apply;   /* negative control: records applied before commit */
	/* emu_set_hold: natural evictions of these lines wait (lib/track.c) */
	int (*hold)(const void *arg, uint64_t line);
	const void *hold_arg;
	struct {
		uint64_t free[TM_MAX_QUEUE]; /* when each read queue entry frees */
		unsigned cap, pos;
	} rq;
	/* memory channels (channel.c): the controllers of channels=N, or NULL
	 * (one channel: this one); in a channel, its sequence numbers step by
	 * N and rsr_lock serialises the one re-encryption status register */
	struct emu **chan;
	unsigned nch;
	unsigned seq_step;
	pthread_mutex_t *rsr_lock;
	struct chan_core *chan_core; /* per core: the channels written since its fence */
	/* the runtime's events (emu_stat_rt_add), counted in stripes on cache
	 * lines of their own: threads committing at once do not share a line */
	struct rt_stripe {
		uint64_t n[8];
	} __attribute__((aligned(64))) rt[16];
};

/* ctr_line_encode -- the current content of counter line cl, in its layout
 * (pools are whole pages: every counter line covers lines of the pool). */
static inline void ctr_line_encode(const struct emu *e, uint64_t cl, uint8_t out[EMU_LINE])
{
	e->layout->encode(e->cur_ctr + cl * e->layout->lines_per_ctr_line, e->minor_bits,
			  out);
}

/* channel.c: memory channels (channels=N) */
#define EMU_MAX_CHANNELS 16u
/* the channels cfg asks for, checked against the design and the core model
 * and, for the pool's shadow slots, the counter cache's slices (0 and *n
 * set, or an error) */
int chan_count(const struct emu *e, const struct emu_config *cfg, uint64_t slots,
	       unsigned *n);
/* the pool opened or made: its n controllers (n 1: none made) */
int chan_attach(struct emu *e, unsigned n);
/* close: every channel's counters and queues to media, statistics merged */
void chan_close(struct emu *e);
void chan_free(struct emu *e);
/* the channel of data line (0 with one channel) */
unsigned chan_of_line(const struct emu *e, uint64_t line);
void chan_write_ranges(struct emu *e, unsigned core, const struct emu_range *r, size_t n,
		       const void *view, unsigned flags);
void chan_fence(struct emu *e, unsigned core);
void chan_ctr_writeback(struct emu *e, unsigned core, uint64_t first, uint64_t n);
/* the sum of a statistic over the channels (ST_* index; -1..-5: the engine's
 * aes_ops, aes_wait, and wn, wlat, wpre) */
uint64_t chan_stat_sum(const struct emu *e, int i);
void chan_stat_reset(struct emu *e);
/* the eviction hold and the log's lines, set on the pool, in every channel */
void chan_settings(struct emu *e);
/*
 * The pads of a call's lines, made in one AES call before the first is
 * written (an engine call costs far more than a line's pad): a batch takes
 * those made for exactly its lines and counters, else makes its own (a line
 * written twice, a page re-encrypted).  A pad made and not taken encrypts
 * nothing; a pad is a function of (line, counter), so any that matches is
 * the one the write needs.
 */
enum { PREPAD_MAX = 64 };
struct prepads {
	unsigned n, pos; /* pads made; the next to take */
	uint64_t line[PREPAD_MAX], ctr[PREPAD_MAX];
	uint8_t pad[PREPAD_MAX * EMU_LINE];
};
/* channel.c: the pads of every line of ranges r[0..n-1] under the counter
 * its next write takes, made in the calling thread's AES context without a
 * lock (the counters read atomically: a write elsewhere in between makes
 * them miss, never wrong); pp->n 0 if they are too many */
void ctrl_prepads_unlocked(struct emu *e, const struct emu_range *r, size_t n,
			   struct prepads *pp);
/* controller.c's locked steps, for channel.c (pp: pads made ahead, or NULL) */
void ctrl_write_ranges_locked(struct emu *e, unsigned core, const struct emu_range *r,
			      size_t n, const void *view, unsigned flags, struct prepads *pp);
void ctrl_fence_locked(struct emu *e, unsigned core);
void ctrl_ctr_writeback_locked(struct emu *e, unsigned core, const struct emu_range *r,
			       size_t n);
/* crypto.c: another engine under c's key (a channel's own contexts) */
int crypto_clone(const struct crypto *c, struct crypto **out);

/* audit.c: the test-only pad-reuse auditor (SPM_AUDIT=FILE). */
int audit_open(struct emu *e);
void audit_pad(struct emu *e, uint64_t line, uint64_t ctr, const uint8_t *plain);
void audit_close(struct emu *e);

/* controller internals used across files */
struct wq_entry *ctrl_enqueue_data(struct emu *e, unsigned core, uint64_t line,
				   const uint8_t *plain, const uint8_t *pad, uint64_t ctr,
				   uint64_t at, uint64_t aux, uint64_t flags);
struct wq_entry *ctrl_enqueue_ctr(struct emu *e, unsigned core, uint64_t cl,
				  uint64_t at, int ready, uint64_t *accept);
void ctrl_coalesce(struct emu *e, uint64_t cl, const struct wq_entry *newest);
unsigned ctrl_data_bank(const struct emu *e, uint64_t line);
unsigned ctrl_ctr_bank(const struct emu *e, uint64_t cl);
unsigned ctrl_bank_of(const struct emu *e, uint64_t addr);
/* wq.c: line's pad under ctr was used by a write recovery discards (the
 * redo log's interrupted records): ctrl_advance_stale advances it */
void ctrl_note_dropped(struct emu *e, uint64_t line, uint64_t ctr);
/* those noted from index from on, durable in the ADR header; -1: full */
int ctrl_keep_noted(struct emu *e, size_t from);
/* the plain write path (no redo log), for redo.c */
void ctrl_write_ranges_plain(struct emu *e, unsigned core, const struct emu_range *r,
			     size_t n, const void *view, unsigned flags);
/* reenc.c: split counters' page re-encryption (SuperMem 3.4.4) */
int reenc_needed(const struct emu *e, uint64_t line);
int reenc_page(struct emu *e, unsigned core, uint64_t page);
int reenc_page_to(struct emu *e, unsigned core, uint64_t page, uint64_t new_major);
void reenc_interpret(struct emu *e);
int reenc_resume(struct emu *e);
int rsr_covers(const struct emu *e, uint64_t line);
void rsr_mark_done(struct emu *e, uint64_t line);
void ctrl_drain_all(struct emu *e);
int ctrl_recover(struct emu *e);
int ctrl_advance_stale(struct emu *e);
void ctrl_setup_queues(struct emu *e, unsigned depth_data, unsigned depth_ctr);
/* key.c: the key file, the processor's secret state (key and generations) */
struct keyfile {
	unsigned bits;   /* 128 or 256 */
	uint8_t key[32];
	int legacy;      /* a raw key file (no records): rewritten at the first raise */
	uint32_t nrec;
	struct keyfile_rec {
		uint8_t uuid[16];
		uint64_t generation; /* the pool files' epoch must reach it */
	} *rec;
};
void key_path_of(const char *key_file, const char *pool_path, char *out, size_t n);
int key_read(const char *path, struct keyfile *kf);
void key_free(struct keyfile *kf);
uint64_t key_generation(const struct keyfile *kf, const uint8_t uuid[16]);
void key_new_path(const char *path, const uint8_t uuid[16], char *out, size_t n);
int key_new(const char *path, unsigned bits, const uint8_t uuid[16], struct keyfile *kf);
int key_commit_new(const char *path, const uint8_t uuid[16]);
int key_write_new(const char *path, const uint8_t uuid[16], const struct keyfile *kf);
int key_commit_replace(const char *path, const uint8_t uuid[16]);
int key_has_room(const struct keyfile *kf, const uint8_t uuid[16]);
int key_raise(const char *path, const uint8_t uuid[16], uint64_t gen, const uint8_t *key,
	      unsigned bits);
int key_is_leftover(const char *path, const uint8_t uuid[16]);
struct stat;
/* fd (a key file, or the registers beside it) is the caller's own, 0600, one name */
int key_check_trust(int fd, const char *path, struct stat *st);
/* tcb.c: the integrity designs' persistent registers (cc-NVM §4.2-4.3) in
 * "<key file>.tcb", beside the key: never in the pool's files */
struct tcb_regs {
	uint8_t root_old[16];  /* the tree in the media at the last drain (ROOT_old) */
	uint8_t root_new[16];  /* ROOT_new */
	uint8_t root_prev[16]; /* ROOT_new before the last write-back counted */
	uint64_t n_wb;         /* counter steps since the last drain (N_wb) */
	uint64_t inflight_line; /* line + 1 of a write-back counted, its data entry not
				 * yet valid (0: none) */
	uint64_t inflight_ctr;  /* and its counter */
	uint64_t inflight_step; /* and its step, in n_wb */
	uint64_t clean;         /* 1: closed cleanly (bmt_close), 0 from emu_mark_dirty */
	uint64_t draining;      /* 1: a drain stored ROOT_new and may be cut short */
	uint8_t sb_mac[16];     /* the superblock's MAC: its design, geometry, N, M */
};
struct tcb;
int tcb_open(struct tcb **out, const char *key_path, const uint8_t uuid[16], int create);
void tcb_close(struct tcb *t);
void tcb_discard(struct tcb *t); /* remove the file if this open made it */
/* the newest intact copy; 0, or -1 if the pool has none (never written) */
int tcb_read(const struct tcb *t, struct tcb_regs *out);
/* 1 if "<key_path>.tcb" holds a record of the pool uuid (read only) */
int tcb_has_record(const char *key_path, const uint8_t uuid[16]);
/* regs become the newest copy with one store (a kill leaves old or new) */
void tcb_write(struct tcb *t, const struct tcb_regs *regs);
int rename_noreplace(const char *from, const char *to);
int sync_dir(const char *path);
/* create.c: atomic creation (temporary names, leftovers, commit) */
int check_names(const char *path, const char *key_path);
void create_temp_paths(const char *path, char *data, char *meta, size_t n);
int create_clear_leftover(const char *path, const char *named_key);
int create_commit(struct emu *e);
/* The mark of a data file being created: at CREATE_MARK_OFF of its header
 * page from its first write until after its commit (create.c). */
#define CREATE_MARK "spm: being made"
#define CREATE_MARK_OFF 128u
#define CREATE_HEAD 256u /* the bytes of the header page written when it is made */
void create_mark_clear(struct emu *e);
int anchor_read(int fd, uint8_t uuid[16]);
int file_uuid(const char *path, const char *magic, uint8_t uuid[16]);
/* emu.c, for rekey.c */
int emu_validate(const char *path, const char *meta_path, struct data_hdr *dh,
		 struct superblock *sb);
int emu_derive_keys(const uint8_t *key, unsigned bits, const uint8_t uuid[16], uint8_t *enc,
		    uint8_t kcv[16]);
uint32_t data_hdr_crc(const struct data_hdr *dh);
int emu_check_epochs(const struct media *m, const struct keyfile *kf, const uint8_t uuid[16]);
/* rekey.c, for emu.c: a re-key under a new key killed after its first rename
 * finished (1), none (0), or an error */
int emu_rekey_key_finish(const char *path, const char *key_path);
int create_fill_ciphertext(struct emu *e);

#endif
