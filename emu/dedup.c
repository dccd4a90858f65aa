/*
 * dedup.c -- DeWrite's line deduplication in the controller, with hash-mode
 * encryption (the DeWrite paper; doc/design.md, "Deduplication").
 *
 * The pool is cut into units of dd_unit lines (DeWrite's 256-byte lines:
 * four of ours; or one).  A logical unit (what the view holds, page 1 on)
 * is stored in a physical unit of the data file; several logical units
 * with the same content share one.  A write-back of a unit:
 *   CRC-32 of its plaintext (zlib); the hash table gives a candidate with
 *   that CRC; its line is read, decrypted and compared: equal, the write is
 *   cancelled and the unit mapped to the candidate (a reference more);
 *   else it is encrypted into a free physical unit and mapped there
 *   (copy on write: a shared unit's other readers never see the write).
 *   A physical unit whose references reach zero returns to the free list.
 * The pad of a physical line comes from the key, the line's address and its
 * unit's hash word (no counter): dewrite_pad=crc is the paper's, the CRC
 * alone, which repeats a pad for two contents with one CRC at one address;
 * dewrite_pad=version (the default) adds a per-unit version raised at each
 * allocation, so no pad is ever used twice.
 *
 * The four tables: the address mapping (logical -> physical + 1, 0: never
 * written) and the inverted hash table (physical line -> CRC | version << 32,
 * in the counter area, whose words are the pads' second input) are the
 * truth, written as the write happens; the hash table (CRC -> physical),
 * the reference counts and the free-space bitmap follow from them, are kept
 * in memory and stored at close, and are rebuilt at a recovery.  Crash
 * consistency (doc/design.md): a unique unit's data entries are durable in
 * the ADR queue before its mapping names it, its hash word is durable before
 * its pad is used, and a physical unit is free only once the mapping that
 * named it has moved on.  The metadata cache is the counter cache: it models
 * the tables' traffic (its misses are reads, its dirty victims writes) and
 * is battery-backed, as the baseline's (ideal) counter cache.
 */
#include <errno.h>
#include <stdio.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "spm.h"
#include "emu_internal.h"

#define NONE UINT64_MAX
#define MAX_UNIT 4u

/* The metadata cache's line ids: a table's kind above bit 40, the line's
 * index within the table below. */
enum md_kind { MD_MAP = 1, MD_INV = 2, MD_HASH = 3, MD_FSM = 4 };
#define MD_SHIFT 40

struct dedup {
	unsigned g;          /* lines per unit */
	unsigned pad_mode;   /* DD_PAD_CRC or DD_PAD_VERSION */
	unsigned window;     /* the history window: writes remembered (1..63) */
	uint64_t history;    /* their duplicate states, the newest in bit 0 */
	uint64_t nunits;     /* the pool's units (nlines / g) */
	uint64_t first_log;  /* the first logical unit (page 1: past the header page) */
	uint64_t first_phys; /* the first physical unit (past the header's bytes) */
	uint32_t *map;       /* in the meta file: the address mapping */
	uint32_t *ref_home;  /* in the meta file: the reference counts (close, recovery) */
	uint8_t *fsm_home;   /* in the meta file: the free-space bitmap (1: free) */
	uint32_t *hash_home; /* in the meta file: the hash table's slots */
	uint32_t *ref;       /* each physical unit's references */
	uint32_t *free_stack; /* the free physical units, the next on top */
	uint64_t nfree;
	uint32_t *hash;      /* physical unit + 1 by CRC, linear probing (0: empty) */
	uint64_t hash_mask;
	uint64_t live, shared; /* units referenced; referenced more than once */
	int early_map;         /* negative control: the mapping before the data */
};

static inline uint64_t max64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

static uint64_t round_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) / a * a;
}

/* hash_slots -- the hash table's slots for nunits units: a power of two,
 * at least twice the units (linear probing stays short). */
static uint64_t hash_slots(uint64_t nunits)
{
	uint64_t s = 16;
	while (s < 2 * nunits)
		s *= 2;
	return s;
}

/* The area's parts, each page-rounded: mapping, references, bitmap, hash. */
static uint64_t part_map(uint64_t nunits)
{
	return round_up(nunits * 4, EMU_PAGE);
}
static uint64_t part_fsm(uint64_t nunits)
{
	return round_up((nunits + 7) / 8, EMU_PAGE);
}

/* dedup_area_size -- the meta file's dedup area (0: not a dedup design). */
uint64_t dedup_area_size(const struct design *d, uint64_t nlines, unsigned unit)
{
	if (!d || d->dedup == DEDUP_NONE || !unit)
		return 0;
	uint64_t nunits = nlines / unit;
	return 2 * part_map(nunits) + part_fsm(nunits) + round_up(hash_slots(nunits) * 4,
								    EMU_PAGE);
}

/* dedup_check_sb -- the superblock's dedup fields fit its design and geometry. */
int dedup_check_sb(const char *meta_path, const struct superblock *sb)
{
	const struct design *d = design_find(sb->design);
	int want = d && d->dedup != DEDUP_NONE;
	int ok = want ? (sb->dd_unit == 1 || sb->dd_unit == MAX_UNIT) && sb->dd_pad <= 1 &&
			       sb->nlines / sb->dd_unit < UINT32_MAX &&
			       sb->dd_size == dedup_area_size(d, sb->nlines, sb->dd_unit) &&
			       sb->dd_off % EMU_PAGE == 0 && sb->dd_off <= sb->meta_size &&
			       sb->dd_size == sb->meta_size - sb->dd_off
		      : !sb->dd_off && !sb->dd_size && !sb->dd_unit && !sb->dd_pad;
	if (!ok)
		return emu_err(SPM_E_CORRUPT, "%s: inconsistent deduplication geometry",
			       meta_path);
	return 0;
}

/*
 * dedup_check_adr -- a dirty dedup pool's ADR region holds only what its
 * write path makes: ready data entries and reserved slots, no counter
 * entry, no dropped pair (recovery would re-encrypt a line of a unit in
 * counter mode, apart from its unit's word).  w: the data queue's dcap
 * entries, then the counter queue's, total in all.
 */
int dedup_check_adr(const char *meta_path, const struct superblock *sb,
		    const struct wq_entry *w, unsigned dcap, unsigned total, uint64_t ndropped)
{
	const struct design *d = design_find(sb->design);
	if (!d || d->dedup == DEDUP_NONE)
		return 0;
	if (ndropped)
		return emu_err(SPM_E_CORRUPT, "%s: the ADR region lists dropped pairs, which a "
			       "deduplicating design never makes (damaged)", meta_path);
	for (unsigned i = 0; i < total; i++) {
		uint64_t st = w[i].state;
		int bad = i >= dcap ? st != 0
				    : (st & WQ_VALID) ? (st & ~(uint64_t)(WQ_VALID | WQ_READY)) != 0
						      : st != 0 && st != WQ_RESERVED;
		if (bad)
			return emu_err(SPM_E_CORRUPT, "%s: ADR %s queue entry %u is of a kind a "
				       "deduplicating design never makes (damaged)", meta_path,
				       i >= dcap ? "counter" : "data", i >= dcap ? i - dcap : i);
	}
	return 0;
}

/*
 * dedup_check_tables -- before anything is written: every mapping names a
 * physical unit of the pool (or none), only logical units map, and fewer
 * units are retired than the spare ones (else a write could find no free
 * unit).  The meta file is read, not changed.
 */
int dedup_check_tables(const char *meta_path, const struct superblock *sb)
{
	const struct design *d = design_find(sb->design);
	if (!d || d->dedup == DEDUP_NONE)
		return 0;
	const uint64_t g = sb->dd_unit, nunits = sb->nlines / g;
	const uint64_t first_log = EMU_DATA_HDR_SIZE / EMU_LINE / g;
	const uint64_t first_phys = (CREATE_HEAD / EMU_LINE + g - 1) / g;
	int fd = open(meta_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return emu_err(-errno, "%s: %s", meta_path, strerror(errno));
	const uint8_t *m = mmap(NULL, sb->meta_size, PROT_READ, MAP_SHARED, fd, 0);
	int err = errno;
	close(fd);
	if (m == MAP_FAILED)
		return emu_err(-err, "%s: %s", meta_path, strerror(err));
	const uint32_t *map = (const uint32_t *)(m + sb->dd_off);
	const uint64_t *word = (const uint64_t *)(m + sb->ctr_off);
	int rc = 0;
	for (uint64_t u = 0; u < nunits && !rc; u++)
		if (map[u] && (u < first_log || map[u] - 1 < first_phys || map[u] - 1 >= nunits))
			rc = emu_err(SPM_E_CORRUPT, "%s: the deduplication mapping of unit %llu names "
				     "unit %llu, outside the pool (damaged)", meta_path,
				     (unsigned long long)u, (unsigned long long)map[u] - 1);
	uint64_t retired = 0;
	for (uint64_t p = first_phys; p < nunits && !rc && sb->dd_pad == DD_PAD_VERSION; p++)
		retired += word[p * g] >> 32 == UINT32_MAX;
	if (!rc && retired >= first_log - first_phys)
		rc = emu_err(SPM_E_CORRUPT, "%s: %llu units retired (a version at its end), as "
			     "many as the spare ones (damaged)", meta_path,
			     (unsigned long long)retired);
	munmap((void *)m, sb->meta_size);
	return rc;
}

/* ---- the tables ------------------------------------------------------------- */

/* word_of -- physical unit p's hash word (its first line's: all are equal). */
static inline uint64_t word_of(const struct emu *e, uint64_t p)
{
	return e->cur_ctr[p * e->dedup->g];
}

static inline uint32_t crc_of(const struct emu *e, uint64_t p)
{
	return (uint32_t)word_of(e, p);
}

static inline uint64_t slot_of(const struct dedup *d, uint32_t crc)
{
	/* CRCs are spread already; mixed so that patterned ones probe short */
	return ((uint64_t)crc * 0x9e3779b97f4a7c15ull >> 20) & d->hash_mask;
}

/*
 * hash_line -- the metadata line of crc's hash table slot, as the model
 * charges it: in a table of two slots per referenced unit (a table that
 * grows with its entries, as DeWrite's, whose size follows the unique
 * lines), not the pool-sized one kept here.  Its lines are as many as the
 * live units need, so the metadata cache holds a hot table whole.
 */
static uint64_t hash_line(const struct dedup *d, uint32_t crc)
{
	uint64_t cap = 64;
	while (cap < 2 * d->live)
		cap *= 2;
	return (((uint64_t)crc * 0x9e3779b97f4a7c15ull >> 20) & (cap - 1)) / 16;
}

/* hash_find -- the physical unit the hash table gives for crc, or NONE;
 * *slot: where its probe began (the hash line the model reads). */
static uint64_t hash_find(const struct emu *e, uint32_t crc, uint64_t *slot)
{
	const struct dedup *d = e->dedup;
	uint64_t s = *slot = slot_of(d, crc);
	for (; d->hash[s]; s = (s + 1) & d->hash_mask)
		if (crc_of(e, d->hash[s] - 1) == crc)
			return d->hash[s] - 1;
	return NONE;
}

/* hash_put -- crc now names p (a unit with the same CRC is replaced: the
 * newest content is the one a duplicate most likely repeats). */
static void hash_put(struct emu *e, uint32_t crc, uint64_t p)
{
	struct dedup *d = e->dedup;
	uint64_t s = slot_of(d, crc);
	for (; d->hash[s]; s = (s + 1) & d->hash_mask)
		if (crc_of(e, d->hash[s] - 1) == crc)
			break;
	d->hash[s] = (uint32_t)(p + 1);
}

/* hash_drop -- p leaves the hash table if it is there (backward-shift
 * deletion: every later entry of the run stays reachable). */
static void hash_drop(struct emu *e, uint64_t p)
{
	struct dedup *d = e->dedup;
	uint64_t s = slot_of(d, crc_of(e, p));
	while (d->hash[s] && d->hash[s] != p + 1)
		s = (s + 1) & d->hash_mask;
	if (!d->hash[s])
		return;
	uint64_t hole = s;
	for (uint64_t j = (s + 1) & d->hash_mask; d->hash[j]; j = (j + 1) & d->hash_mask) {
		uint64_t home = slot_of(d, crc_of(e, d->hash[j] - 1));
		/* j's entry may fill the hole unless its home lies in (hole, j] */
		int between = hole <= j ? home > hole && home <= j : home > hole || home <= j;
		if (!between) {
			d->hash[hole] = d->hash[j];
			hole = j;
		}
	}
	d->hash[hole] = 0;
}

/* retired -- a unit whose version would wrap is never allocated again (as
 * a worn-out line: 2^32 writes is beyond any cell's endurance). */
static inline int retired(const struct emu *e, uint64_t p)
{
	return e->dedup->pad_mode == DD_PAD_VERSION && (word_of(e, p) >> 32) == UINT32_MAX;
}

/* ---- the metadata cache --------------------------------------------------- */

/*
 * md_access -- table kind's line idx through the metadata cache at time t
 * (dirty: an update); returns when its entry is known.  A miss reads the
 * line and decrypts it after (the tables are encrypted directly: DeWrite,
 * "Hardware architecture"); a dirty victim is written back (modeled: the
 * tables' functional state is written as it changes).
 */
static uint64_t md_access(struct emu *e, unsigned core, enum md_kind kind, uint64_t idx,
			  uint64_t t, int dirty)
{
	struct timing *tm = &e->tm;
	uint64_t id = (uint64_t)kind << MD_SHIFT | idx, victim = 0;
	int victim_dirty = 0;
	if (cc_access(&e->cc, id, dirty, &victim, &victim_dirty) == CC_HIT) {
		e->stat[ST_CC_HITS]++;
		return t + tm->cc_hit;
	}
	e->stat[ST_CC_MISSES]++;
	e->stat[ST_MEDIA_READS]++;
	uint64_t done = tm_read(tm, core, ctrl_ctr_bank(e, idx), t);
	if (victim_dirty) {
		int stalled;
		struct tm_queue *q = tm->wpq_shared ? &tm->qdata : &tm->qctr;
		e->stat[ST_CC_EVICTIONS]++;
		e->stat[ST_MEDIA_WRITES]++;
		e->stat[ST_MEDIA_WRITES_META]++;
		e->stat[ST_MEDIA_BYTES] += EMU_LINE;
		tm_write(tm, core, q, ctrl_ctr_bank(e, victim & ((1ull << MD_SHIFT) - 1)),
			 victim | TM_CTR_ADDR, t, &stalled);
		e->stat[ST_WPQ_STALLS] += (uint64_t)stalled;
	}
	return done + tm->aes;
}

/* ---- references ----------------------------------------------------------- */

/* map_store -- logical unit u now names physical unit p (one durable store:
 * the write's commit). */
static void map_store(struct emu *e, uint64_t u, uint64_t p)
{
	uint32_t *m = &e->dedup->map[u];
	__atomic_store_n(m, (uint32_t)(p + 1), __ATOMIC_RELEASE);
	media_persist(&e->media, m, sizeof(*m));
	emu_crash_point("dedup.mapped");
}

static void ref_add(struct dedup *d, uint64_t p)
{
	if (++d->ref[p] == 2)
		d->shared++;
}

/* release -- p lost a reference (its logical unit's mapping has moved on,
 * durably); unreferenced, it is free. */
static void release(struct emu *e, unsigned core, uint64_t p, uint64_t t)
{
	struct dedup *d = e->dedup;
	if (--d->ref[p] == 1)
		d->shared--;
	md_access(e, core, MD_HASH, hash_line(d, crc_of(e, p)), t, 1);
	if (d->ref[p])
		return;
	d->live--;
	hash_drop(e, p);
	md_access(e, core, MD_FSM, p / 512, t, 1);
	if (!retired(e, p))
		d->free_stack[d->nfree++] = (uint32_t)p;
}

/* alloc -- a free physical unit (there always is one: the physical units
 * outnumber the logical ones by the header page's spare lines). */
static uint64_t alloc(struct emu *e)
{
	struct dedup *d = e->dedup;
	if (!d->nfree) {
		fprintf(stderr, "spm: no free physical line (every spare line retired)\n");
		abort();
	}
	return d->free_stack[--d->nfree];
}

/* ---- reading a physical unit ---------------------------------------------- */

/* newest_ciphertext -- physical line pl's newest ciphertext: its youngest
 * entry still in the data queue, or its home. */
static const uint8_t *newest_ciphertext(const struct emu *e, uint64_t pl)
{
	const struct wq *q = &e->qdata;
	const struct wq_entry *best = NULL;
	for (unsigned i = 0; i < q->depth; i++) {
		const struct wq_entry *w = &q->slot[i];
		if ((w->state & WQ_VALID) && w->addr == pl && (!best || w->seq > best->seq))
			best = w;
	}
	return best ? best->payload : e->media.data + pl * EMU_LINE;
}

/* unit_plain -- physical unit p decrypted into out (g lines). */
static void unit_plain(struct emu *e, uint64_t p, uint8_t *out)
{
	const unsigned g = e->dedup->g;
	uint64_t lines[MAX_UNIT], ctrs[MAX_UNIT];
	uint8_t pads[MAX_UNIT * EMU_LINE];
	for (unsigned i = 0; i < g; i++) {
		lines[i] = p * g + i;
		ctrs[i] = word_of(e, p);
	}
	if (crypto_line_pads_ctl(e->crypto, lines, ctrs, g, pads)) {
		fprintf(stderr, "spm: AES failed in the controller\n");
		abort();
	}
	for (unsigned i = 0; i < g; i++)
		line_xor(out + i * EMU_LINE, newest_ciphertext(e, lines[i]), pads + i * EMU_LINE);
}

/* ---- the write path ------------------------------------------------------- */

/* predict_dup -- the history window's guess: most of its writes were duplicates. */
static int predict_dup(const struct dedup *d)
{
	uint64_t mask = (1ull << d->window) - 1;
	return 2u * (unsigned)__builtin_popcountll(d->history & mask) > d->window;
}

/* cancelled -- a duplicate of physical unit p: no write, u mapped to p. */
static void cancelled(struct emu *e, unsigned core, uint64_t u, uint64_t p, uint64_t t_det)
{
	struct dedup *d = e->dedup;
	uint64_t old = d->map[u] ? d->map[u] - 1 : NONE;
	e->stat[ST_DEDUP_CANCELLED]++;
	md_access(e, core, MD_MAP, u / 16, t_det, 1);
	if (old == p)
		return;
	md_access(e, core, MD_HASH, hash_line(d, crc_of(e, p)), t_det, 1);
	ref_add(d, p);
	map_store(e, u, p);
	if (old != NONE)
		release(e, core, old, t_det);
}

/*
 * unique -- plaintext plain of logical unit u (CRC crc) into a free physical
 * unit: its hash word durable first (the pads' input), then its lines
 * through the data queue, ready at ready_at (detection done) and not
 * before their pads (made from pad_at on); then the tables and the mapping.
 */
static void unique(struct emu *e, unsigned core, uint64_t u, const uint8_t *plain,
		   uint32_t crc, uint64_t t, uint64_t pad_at, uint64_t ready_at)
{
	struct dedup *d = e->dedup;
	struct timing *tm = &e->tm;
	const unsigned g = d->g;
	uint64_t old = d->map[u] ? d->map[u] - 1 : NONE;
	uint64_t p = alloc(e);
	uint64_t ver = d->pad_mode == DD_PAD_VERSION ? (word_of(e, p) >> 32) + 1 : 0;
	uint64_t word = ver << 32 | crc;
	md_access(e, core, MD_FSM, p / 512, t, 1);
	md_access(e, core, MD_INV, p * g / 8, t, 1);
	/* the pads' input is durable before a pad is used: a unit allocated
	 * again after a crash takes the next version */
	for (unsigned i = 0; i < g; i++) {
		e->cur_ctr[p * g + i] = word;
		e->ctr_home[p * g + i] = word;
	}
	media_persist(&e->media, &e->ctr_home[p * g], g * sizeof(uint64_t));
	emu_crash_point("dedup.hash_written");
	if (d->early_map) /* the negative control: named before its data is durable */
		map_store(e, u, p);
	uint64_t lines[MAX_UNIT], ctrs[MAX_UNIT];
	uint8_t pads[MAX_UNIT * EMU_LINE];
	for (unsigned i = 0; i < g; i++) {
		lines[i] = p * g + i;
		ctrs[i] = word;
	}
	if (crypto_line_pads_ctl(e->crypto, lines, ctrs, g, pads)) {
		fprintf(stderr, "spm: AES failed in the controller\n");
		abort();
	}
	e->stat[ST_AES_PADS] += g;
	for (unsigned i = 0; i < g; i++) {
		uint64_t ready = max64(tm_aes(tm, pad_at), ready_at);
		tm->wpre += ready - t;
		ctrl_enqueue_data(e, core, lines[i], plain + i * EMU_LINE, pads + i * EMU_LINE, word,
				  ready, 0, WQ_READY);
	}
	/* media.writes.log or .data by the logical line, not the physical one
	 * the queue saw */
	for (unsigned i = 0; i < g; i++) {
		int logical = u * g + i - e->log_first < e->log_n;
		int physical = lines[i] - e->log_first < e->log_n;
		if (logical != physical) {
			e->stat[ST_MEDIA_WRITES_LOG] += logical ? 1 : (uint64_t)-1;
			e->stat[ST_MEDIA_WRITES_DATA] += logical ? (uint64_t)-1 : 1;
		}
	}
	md_access(e, core, MD_HASH, hash_line(d, crc), ready_at, 1);
	md_access(e, core, MD_MAP, u / 16, ready_at, 1);
	d->ref[p] = 1;
	d->live++;
	hash_put(e, crc, p);
	map_store(e, u, p);
	if (old != NONE)
		release(e, core, old, ready_at);
}

/* write_unit -- logical unit u's write-back, its plaintext from view; the
 * request reaches the controller at t. */
static void write_unit(struct emu *e, unsigned core, uint64_t u, const uint8_t *view, uint64_t t)
{
	struct dedup *d = e->dedup;
	struct timing *tm = &e->tm;
	const unsigned g = d->g;
	const uint8_t *plain = view + u * g * EMU_LINE;
	const size_t len = (size_t)g * EMU_LINE;
	e->stat[ST_DEDUP_WRITES]++;
	uint32_t crc = (uint32_t)crc32(0L, plain, (uInt)len);
	uint64_t t_crc = t + tm->crc, slot;
	uint64_t cand = hash_find(e, crc, &slot);
	uint64_t t_det = md_access(e, core, MD_HASH, hash_line(d, crc), t_crc, 0);
	int dup = 0;
	if (cand != NONE) { /* read, decrypt and compare the candidate */
		uint8_t other[MAX_UNIT * EMU_LINE];
		e->stat[ST_DEDUP_CRC_HITS]++;
		unit_plain(e, cand, other);
		uint64_t t_rd = 0;
		for (unsigned i = 0; i < g; i++)
			t_rd = max64(t_rd, tm_read(tm, core, ctrl_data_bank(e, cand * g + i), t_det));
		uint64_t t_word = md_access(e, core, MD_INV, cand * g / 8, t_det, 0);
		e->stat[ST_MEDIA_READS] += g;
		e->stat[ST_AES_PADS] += g;
		t_det = max64(t_rd, tm_aes_unbooked(tm, t_word)) + tm->cmp;
		dup = memcmp(other, plain, len) == 0;
		e->stat[ST_DEDUP_COMPARE_FAIL] += !dup;
	}
	/* the history window (DeWrite, "Prediction"): its guess, then this write */
	int guess = predict_dup(d);
	e->stat[guess == dup ? ST_DEDUP_PREDICT_RIGHT : ST_DEDUP_PREDICT_WRONG]++;
	d->history = d->history << 1 | (uint64_t)dup;
	/* Figure 2: encrypt in parallel with the detection (its pad from the
	 * CRC on), or after it */
	enum dedup_policy pol = e->design->dedup;
	int parallel = pol == DEDUP_PARALLEL || (pol == DEDUP_PREDICT && !guess);
	if (dup) {
		if (parallel) { /* a pad made for nothing: the engine's time */
			for (unsigned i = 0; i < g; i++)
				tm_aes(tm, t_crc);
			e->stat[ST_AES_PADS] += g;
		}
		cancelled(e, core, u, cand, t_det);
		e->tm.pending[core] = max64(e->tm.pending[core], t_det);
		if (!tm->off) { /* mem.write_ns: a cancelled write ends with its detection */
			tm->wpre += (t_det - t) * g;
			tm->wn += g;
		}
		return;
	}
	unique(e, core, u, plain, crc, t, parallel ? t_crc : t_det, t_det);
}

/* dedup_write_ranges -- the write-backs of n ranges of lines: each unit
 * they touch once per range, in order (the caller holds the lock). */
void dedup_write_ranges(struct emu *e, unsigned core, const struct emu_range *r, size_t n,
			const void *view)
{
	struct dedup *d = e->dedup;
	struct timing *tm = &e->tm;
	for (size_t i = 0; i < n; i++) {
		if (!r[i].n)
			continue;
		e->stat[ST_CTRL_WRITES] += r[i].n;
		uint64_t first = r[i].first, end = r[i].first + r[i].n;
		for (uint64_t u = first / d->g; u * d->g < end; u++) {
			uint64_t lo = max64(u * d->g, first), hi = (u + 1) * d->g;
			uint64_t t = tm->clock[core];
			tm->clock[core] += tm->issue * ((hi < end ? hi : end) - lo);
			if (u >= d->first_log && u < d->nunits)
				write_unit(e, core, u, view, t);
		}
	}
}

/* ---- the read path -------------------------------------------------------- */

/* dedup_read -- a read of data line issued at at (read.c): the mapping
 * first, then the physical line, its pad made meanwhile from its hash word
 * (the metadata cache); when its plaintext is ready.  A unit never written
 * is zero: no media read. */
uint64_t dedup_read(struct emu *e, unsigned core, uint64_t line, uint64_t at)
{
	struct dedup *d = e->dedup;
	uint64_t u = line / d->g;
	uint64_t t_map = md_access(e, core, MD_MAP, u / 16, at, 0);
	if (u >= d->nunits || !d->map[u])
		return t_map;
	uint64_t pl = (uint64_t)(d->map[u] - 1) * d->g + line % d->g;
	uint64_t t_word = md_access(e, core, MD_INV, pl / 8, t_map, 0);
	uint64_t data = tm_read_first(&e->tm, core, ctrl_data_bank(e, pl), t_map);
	e->stat[ST_MEDIA_READS]++;
	e->stat[ST_AES_PADS]++;
	return max64(data, tm_aes_unbooked(&e->tm, t_word));
}

/* dedup_load_view -- the view at open: every mapped logical unit decrypted
 * from its physical unit (a unit never written stays zero). */
int dedup_load_view(struct emu *e, void *view)
{
	enum { BATCH = 64 };
	struct dedup *d = e->dedup;
	uint64_t lines[BATCH], ctrs[BATCH], dst[BATCH], nread = 0;
	uint8_t pads[BATCH * EMU_LINE];
	unsigned k = 0;
	for (uint64_t u = d->first_log; u <= d->nunits; u++) {
		if (u < d->nunits && d->map[u]) {
			uint64_t p = d->map[u] - 1;
			for (unsigned i = 0; i < d->g; i++) {
				lines[k] = p * d->g + i;
				ctrs[k] = word_of(e, p);
				dst[k++] = u * d->g + i;
			}
			if (k + d->g <= BATCH)
				continue;
		}
		if (!k)
			continue;
		if (crypto_line_pads(e->crypto, lines, ctrs, k, pads))
			return SPM_E_CRYPTO;
		for (unsigned i = 0; i < k; i++)
			line_xor((uint8_t *)view + dst[i] * EMU_LINE,
				 e->media.data + lines[i] * EMU_LINE, pads + i * EMU_LINE);
		nread += k;
		k = 0;
	}
	e->stat[ST_AES_PADS] += nread;
	e->stat[ST_MEDIA_READS] += nread;
	uint64_t per_read = e->tm.rcd + e->tm.cl + e->tm.burst;
	uint64_t banks = e->tm.banks ? e->tm.banks : 1;
	e->tm.clock[0] += max64(nread * per_read / banks, nread * e->tm.burst);
	return 0;
}

/* ---- open, close ----------------------------------------------------------- */

/* dedup_attach -- the tables in the meta file, the volatile ones allocated
 * (filled by dedup_open or dedup_create). */
int dedup_attach(struct emu *e, const struct emu_config *cfg)
{
	const struct superblock *sb = e->sb;
	if (e->design->dedup == DEDUP_NONE)
		return 0;
	struct dedup *d = calloc(1, sizeof(*d));
	if (!d)
		return emu_err(-ENOMEM, "out of memory");
	e->dedup = d;
	d->g = sb->dd_unit;
	d->pad_mode = sb->dd_pad;
	d->window = cfg->dedup_window ? cfg->dedup_window : 3; /* DeWrite: three writes */
	d->early_map = cfg->dedup_early_map;
	d->nunits = e->nlines / d->g;
	d->first_log = EMU_DATA_HDR_SIZE / EMU_LINE / d->g;
	d->first_phys = (CREATE_HEAD / EMU_LINE + d->g - 1) / d->g;
	uint8_t *area = e->media.meta + sb->dd_off;
	d->map = (uint32_t *)area;
	d->ref_home = (uint32_t *)(area + part_map(d->nunits));
	d->fsm_home = area + 2 * part_map(d->nunits);
	d->hash_home = (uint32_t *)(area + 2 * part_map(d->nunits) + part_fsm(d->nunits));
	uint64_t slots = hash_slots(d->nunits);
	d->hash_mask = slots - 1;
	d->ref = calloc(d->nunits, sizeof(*d->ref));
	d->free_stack = malloc(d->nunits * sizeof(*d->free_stack));
	d->hash = calloc(slots, sizeof(*d->hash));
	if (!d->ref || !d->free_stack || !d->hash)
		return emu_err(-ENOMEM, "out of memory for the deduplication tables");
	return 0;
}

void dedup_free(struct emu *e)
{
	struct dedup *d = e->dedup;
	if (!d)
		return;
	free(d->ref);
	free(d->free_stack);
	free(d->hash);
	free(d);
	e->dedup = NULL;
}

/* rebuild -- references, free list and hash table from the mapping and
 * the hash words; -1 if the mapping names a unit outside the physical ones
 * or a unit outside the logical ones maps anything. */
static int rebuild(struct emu *e)
{
	struct dedup *d = e->dedup;
	memset(d->ref, 0, d->nunits * sizeof(*d->ref));
	memset(d->hash, 0, (d->hash_mask + 1) * sizeof(*d->hash));
	d->live = d->shared = d->nfree = 0;
	for (uint64_t u = 0; u < d->nunits; u++) {
		uint64_t m = d->map[u];
		if (!m)
			continue;
		if (u < d->first_log || m - 1 < d->first_phys || m - 1 >= d->nunits)
			return -1;
		ref_add(d, m - 1);
	}
	for (uint64_t p = d->nunits; p-- > d->first_phys;) {
		if (d->ref[p])
			continue;
		if (!retired(e, p))
			d->free_stack[d->nfree++] = (uint32_t)p; /* the lowest on top */
	}
	for (uint64_t p = d->first_phys; p < d->nunits; p++) {
		if (!d->ref[p])
			continue;
		d->live++;
		uint64_t slot;
		if (hash_find(e, crc_of(e, p), &slot) == NONE)
			hash_put(e, crc_of(e, p), p);
	}
	return 0;
}

/* fsm_bit -- physical unit p free in the bitmap form (units outside the
 * physical ones are never free). */
static inline int fsm_bit(const struct dedup *d, uint64_t p)
{
	return p >= d->first_phys && !d->ref[p];
}

/* store_tables -- the derived tables written to the meta file. */
static void store_tables(struct emu *e)
{
	struct dedup *d = e->dedup;
	memcpy(d->ref_home, d->ref, d->nunits * sizeof(*d->ref));
	memset(d->fsm_home, 0, (d->nunits + 7) / 8);
	for (uint64_t p = 0; p < d->nunits; p++)
		if (fsm_bit(d, p))
			d->fsm_home[p / 8] |= (uint8_t)(1u << (p % 8));
	memcpy(d->hash_home, d->hash, (d->hash_mask + 1) * sizeof(*d->hash));
	media_persist(&e->media, d->ref_home, d->nunits * sizeof(*d->ref));
	media_persist(&e->media, d->fsm_home, (d->nunits + 7) / 8);
	media_persist(&e->media, d->hash_home, (d->hash_mask + 1) * sizeof(*d->hash));
}

/* tables_match -- the stored references and bitmap are the rebuilt ones. */
static int tables_match(const struct emu *e)
{
	const struct dedup *d = e->dedup;
	if (memcmp(d->ref_home, d->ref, d->nunits * sizeof(*d->ref)) != 0)
		return 0;
	for (uint64_t p = 0; p < d->nunits; p++)
		if (((d->fsm_home[p / 8] >> (p % 8)) & 1) != fsm_bit(d, p))
			return 0;
	return 1;
}

/* dedup_create -- a new pool: nothing mapped, every physical unit free;
 * the spare lines of the header page hold ciphertext too (as the rest,
 * create_fill_ciphertext). */
int dedup_create(struct emu *e)
{
	struct dedup *d = e->dedup;
	if (!d)
		return 0;
	uint64_t first = d->first_phys * d->g, n = EMU_DATA_HDR_SIZE / EMU_LINE - first;
	uint64_t lines[EMU_PAGE / EMU_LINE], ctrs[EMU_PAGE / EMU_LINE] = {0};
	for (uint64_t i = 0; i < n; i++)
		lines[i] = first + i;
	if (crypto_line_pads(e->crypto, lines, ctrs, n, e->media.data + first * EMU_LINE))
		return SPM_E_CRYPTO;
	media_persist(&e->media, e->media.data + first * EMU_LINE, n * EMU_LINE);
	rebuild(e);
	store_tables(e);
	return 0;
}

/* dedup_open -- after recovery drained the queues: the tables rebuilt from
 * the mapping; a clean pool's stored ones must agree (nothing is written),
 * a dirty pool's are replaced. */
int dedup_open(struct emu *e)
{
	if (!e->dedup)
		return 0;
	if (rebuild(e))
		return emu_err(SPM_E_CORRUPT, "%s: the deduplication mapping names a line "
			       "outside the pool (damaged)", e->media.meta_path);
	if (!e->was_dirty && !tables_match(e))
		return emu_err(SPM_E_CORRUPT, "%s: the deduplication tables disagree with "
			       "the address mapping (damaged)", e->media.meta_path);
	if (e->was_dirty)
		store_tables(e);
	return 0;
}

/* count_victim -- cc_flush_all's callback at close: a dirty table line's
 * write-back (modeled; the tables are in the media already). */
static void count_victim(void *arg, uint64_t id)
{
	struct emu *e = arg;
	(void)id;
	e->stat[ST_CC_WRITEBACKS]++;
	e->stat[ST_MEDIA_WRITES]++;
	e->stat[ST_MEDIA_WRITES_META]++;
}

/* dedup_close -- the derived tables stored (the queues are drained). */
void dedup_close(struct emu *e)
{
	if (!e->dedup)
		return;
	cc_flush_all(&e->cc, count_victim, e);
	store_tables(e);
}

/* dedup_gauge -- the statistics that are states, not counts. */
uint64_t dedup_gauge(const struct emu *e, int stat)
{
	const struct dedup *d = e->dedup;
	uint64_t data = (d->nunits - d->first_log) * d->g * EMU_LINE;
	switch (stat) {
	case ST_DEDUP_SHARED:
		return d->shared;
	case ST_DEDUP_LIVE:
		return d->live;
	case ST_DEDUP_TABLE_BYTES:
		return e->sb->dd_size + d->nunits * d->g * sizeof(uint64_t);
	case ST_DEDUP_OVERHEAD_PPM: {
		/* the paper's count ("Metadata storage"): the mapping and the
		 * inverted hash 4 bytes + 1 bit per line, the hash table 9
		 * bytes per unique line, the free-space table 1 bit per line
		 * (the version of dewrite_pad=version: 4 bytes more per line) */
		uint64_t logical = d->nunits - d->first_log;
		uint64_t bits = logical * (2 * (32 + 1) + 1) + d->live * 9 * 8;
		if (d->pad_mode == DD_PAD_VERSION)
			bits += logical * 32;
		return data ? bits / 8 * 1000000 / data : 0;
	}
	}
	return 0;
}
