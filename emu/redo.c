/*
 * redo.c -- hardware redo logging in the memory controller (the redo-logging
 * paper, "Efficient Hardware Redo Logging for Secure Persistent Memory"):
 * at a transaction's commit the controller writes its lines as encrypted
 * redo log entries, then a commit record, and later copies them home in
 * place, in the background.  Three designs of it (design.c's logging column):
 *   srl    a logged block is encrypted under the log address and the log
 *          address's counter; in-place update decrypts it and encrypts it
 *          again under the home address and a new home counter (§IV.A);
 *   lame   encrypted under the home address and its next home counter, so
 *          in-place update copies ciphertext (§III.B);
 *   clame  lame with compact records: a header of eight (45-bit line,
 *          18-bit partial counter) items and eight blocks (§III.C).
 * srl and lame entries carry a 64-byte counter block each.
 *
 * The log area is a ring of records in the meta file, written through the
 * ADR data queue like every other line (entries flagged WQ_LOG), in order:
 * a record's header before its blocks.  Three registers in the ADR region's
 * header say which records mean what (struct redo_regs): [head, committed)
 * belong to committed transactions not yet applied in place, [committed,
 * tail) may hold what a crash interrupted.  Record numbers only grow: the
 * srl pad of a log line is (log line, record number + 1), used once.
 *
 * Pads are never reused (doc/design.md, "Redo logging"): a lame entry is
 * encrypted under the counter its home line *will* have.  The tail register
 * covers a record before its header is written, the header names every
 * line before its block's ciphertext is, and a block's slot is reserved
 * with (home line, counter) before its ciphertext is put in it (wq.c).  A
 * recovery applies the committed records, then advances the home line of
 * every entry it finds past the commit (and every reserved slot) beyond the
 * counter that entry used (ctrl_advance_stale), then moves every register
 * to the tail: no record number and no (line, counter) is used twice.
 *
 * Volatile state, all under the controller's lock: the mapping table (home
 * line -> its newest logged version: counter, record, log line; §III.A),
 * the counter-mapping table of counter lines in the counter buffer (§III.D;
 * the buffer is modeled -- its writes and reads are booked and counted --
 * but not stored, since recovery takes counters from the log, as the paper
 * says), and the lines an open transaction declared (held: their
 * write-backs wait for the commit, which logs them).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "spm.h"
#include "emu_internal.h"
#include "wq.h"

_Static_assert(ADR_DROPPED_OFF + sizeof(struct adr_dropped) <= ADR_REDO_OFF &&
	       ADR_REDO_OFF + sizeof(struct redo_regs) <= ADR_HDR_SIZE,
	       "the redo registers in the ADR header");

#define CLAME_PMASK ((1u << CLAME_PARTIAL_BITS) - 1)
#define MAP_ENTRY_BYTES 16u   /* a mapping table entry: line and log address */
#define TABLE_KIB 512u        /* the paper's Table I: both mapping tables */

static inline uint64_t max64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* rec_lines -- lines of one record: a header and eight blocks, each with
 * its counter block except in compact records. */
static unsigned rec_lines(enum log_policy pol)
{
	return pol == LOG_CLAME ? 9 : 17;
}

/* ---------------------------------------------------- compact records */

/* put_bits -- bits [pos, pos+n) of the little-endian bit string b := v. */
static void put_bits(uint8_t *b, unsigned pos, unsigned n, uint64_t v)
{
	for (unsigned i = 0; i < n; i++, pos++) {
		uint8_t m = (uint8_t)(1u << (pos % 8));
		if ((v >> i) & 1)
			b[pos / 8] |= m;
		else
			b[pos / 8] &= (uint8_t)~m;
	}
}

/* get_bits -- bits [pos, pos+n) of the little-endian bit string b. */
static uint64_t get_bits(const uint8_t *b, unsigned pos, unsigned n)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < n; i++, pos++)
		v |= (uint64_t)((b[pos / 8] >> (pos % 8)) & 1) << i;
	return v;
}

/* clame_hdr_pack -- §III.C, Fig. 5: eight 63-bit items and 8 valid bits. */
void clame_hdr_pack(uint8_t out[EMU_LINE], const struct redo_item it[8], unsigned valid)
{
	memset(out, 0, EMU_LINE);
	for (unsigned i = 0; i < 8; i++) {
		put_bits(out, 63 * i, CLAME_ADDR_BITS, it[i].line);
		put_bits(out, 63 * i + CLAME_ADDR_BITS, CLAME_PARTIAL_BITS, it[i].partial);
	}
	put_bits(out, 504, 8, valid & 0xff);
}

/* clame_hdr_unpack -- the items of a compact header; its valid bits. */
unsigned clame_hdr_unpack(const uint8_t in[EMU_LINE], struct redo_item it[8])
{
	for (unsigned i = 0; i < 8; i++) {
		it[i].line = get_bits(in, 63 * i, CLAME_ADDR_BITS);
		it[i].partial = (uint32_t)get_bits(in, 63 * i + CLAME_ADDR_BITS,
						   CLAME_PARTIAL_BITS);
	}
	return (unsigned)get_bits(in, 504, 8);
}

/* clame_full_ctr -- the counter with low bits partial nearest to last, the
 * line's last known counter.  A logged counter is within 2^17 of it: the
 * line's entries not yet applied are fewer (the log holds at most 2^16
 * entries: redo_check_log_size), and a replay may find the home counter
 * already at an entry's counter or past it (a crash in an in-place update). */
uint64_t clame_full_ctr(uint64_t last, uint32_t partial)
{
	const uint64_t span = (uint64_t)CLAME_PMASK + 1, half = span / 2;
	uint64_t full = (last & ~(uint64_t)CLAME_PMASK) | partial;
	if (full + half < last)
		full += span;
	else if (full > last + half && full >= span)
		full -= span;
	return full;
}

/* redo_check_log_size -- a log of log_lines lines fits design d: a record
 * at least; compact records at most 2^16 entries (clame_full_ctr). */
int redo_check_log_size(const struct design *d, uint64_t log_lines)
{
	if (d->logging == LOG_SW)
		return 0;
	uint64_t nrec = log_lines / rec_lines(d->logging);
	if (nrec < 1)
		return emu_err(SPM_E_OPTION, "log_kib: a redo log holds a record at least");
	if (d->logging == LOG_CLAME && nrec * 8 > (1u << 16))
		return emu_err(SPM_E_OPTION, "log_kib: at most %u KiB for clame (2^16 entries: "
			       "its 18-bit partial counters must stand for one counter each)",
			       (1u << 13) * rec_lines(LOG_CLAME) * EMU_LINE / 1024);
	return 0;
}

/* overflows -- does a compact item of counter ctr need its full counter
 * block (§III.C: its partial counter wrapped to zero)? */
static inline int overflows(uint64_t ctr)
{
	return (ctr & CLAME_PMASK) == 0;
}

/*
 * redo_plan -- records for n entries with counters ctr[]: eight entries a
 * record; compact records put an overflowing entry's full counter block in
 * the next data slot (its valid bit clear), and an 8th item that overflows
 * moves on to the next record, leaving the slot unused (§III.C).
 */
uint64_t redo_plan(enum log_policy pol, const uint64_t *ctr, size_t n, uint32_t *slot_of)
{
	uint64_t rec = 0;
	unsigned slot = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned need = pol == LOG_CLAME && overflows(ctr[i]) ? 2 : 1;
		if (slot + need > 8) {
			rec++;
			slot = 0;
		}
		slot_of[i] = (uint32_t)(rec * 8 + slot);
		slot += need;
	}
	return n ? rec + 1 : 0;
}

/* ---------------------------------------------------- geometry */

/* The log area's default size: 1 MiB (a transaction of the examples'
 * largest values needs some 40 KiB of it). */
uint64_t redo_log_lines_default(const struct design *d)
{
	return d->logging == LOG_SW ? 0 : (1u << 20) / EMU_LINE;
}

/* data_slot_line -- log line (within the area) of block slot s of record r. */
static inline uint64_t data_slot_line(const struct redo *r, uint64_t rec, unsigned s);
/* ctr_slot_line -- log line of the counter block of slot s (not compact). */
static inline uint64_t ctr_slot_line(const struct redo *r, uint64_t rec, unsigned s);

/* ---------------------------------------------------- tables */

struct lmap_ent {
	uint64_t key_p1;   /* key + 1; 0: empty */
	uint64_t ctr;      /* mapping: the newest logged counter */
	uint64_t rec;      /* mapping: the record of the newest entry */
	uint64_t log_line; /* mapping: its block's log line */
	uint64_t pending;  /* mapping: entries not yet applied */
	uint64_t home_at;  /* mapping: modeled time its newest entry is home */
};
/* An open-addressing hash table of line numbers (linear probing,
 * deletion by backward shift). */
struct lmap {
	struct lmap_ent *e;
	uint64_t mask, n;
};

struct redo {
	enum log_policy pol;
	uint8_t *log;      /* the log area in the meta file */
	uint64_t log_lines;
	unsigned rec_lines;
	uint64_t nrec;     /* records in the ring */
	uint64_t apply_at; /* in-place update once this many records are in use */
	struct redo_regs *regs;
	struct lmap map;   /* the mapping table */
	struct lmap cmt;   /* the counter-mapping table */
	uint64_t cbuf_next; /* the counter buffer's next slot (a ring) */
	uint64_t cbuf_slots;
	uint8_t *held;     /* a bit per data line: declared by an open transaction */
	uint64_t first_line;
};

static inline uint64_t data_slot_line(const struct redo *r, uint64_t rec, unsigned s)
{
	uint64_t base = (rec % r->nrec) * r->rec_lines;
	return base + 1 + (r->pol == LOG_CLAME ? s : 2 * s);
}

static inline uint64_t ctr_slot_line(const struct redo *r, uint64_t rec, unsigned s)
{
	return (rec % r->nrec) * r->rec_lines + 2 + 2 * s;
}

static inline uint64_t hdr_line(const struct redo *r, uint64_t rec)
{
	return (rec % r->nrec) * r->rec_lines;
}

static int lmap_init(struct lmap *m, uint64_t want)
{
	uint64_t cap = 64;
	while (cap < 2 * want)
		cap *= 2;
	m->e = calloc(cap, sizeof(*m->e));
	m->mask = cap - 1;
	m->n = 0;
	return m->e ? 0 : -1;
}

static inline uint64_t lmap_hash(const struct lmap *m, uint64_t key)
{
	return ((key + 1) * 0x9e3779b97f4a7c15ull >> 20) & m->mask;
}

/* lmap_get -- the entry of key, or NULL. */
static struct lmap_ent *lmap_get(const struct lmap *m, uint64_t key)
{
	for (uint64_t i = lmap_hash(m, key);; i = (i + 1) & m->mask) {
		if (m->e[i].key_p1 == key + 1)
			return &m->e[i];
		if (!m->e[i].key_p1)
			return NULL;
	}
}

/* lmap_put -- the entry of key, made (zeroed) if new; NULL if full. */
static struct lmap_ent *lmap_put(struct lmap *m, uint64_t key)
{
	struct lmap_ent *x = lmap_get(m, key);
	if (x)
		return x;
	if (m->n + 1 > m->mask / 4 * 3) { /* grow: keep probes short */
		struct lmap old = *m;
		if (lmap_init(m, (old.mask + 1)))
			return *m = old, NULL;
		for (uint64_t i = 0; i <= old.mask; i++)
			if (old.e[i].key_p1)
				*lmap_put(m, old.e[i].key_p1 - 1) = old.e[i];
		free(old.e);
	}
	uint64_t i = lmap_hash(m, key);
	while (m->e[i].key_p1)
		i = (i + 1) & m->mask;
	memset(&m->e[i], 0, sizeof(m->e[i]));
	m->e[i].key_p1 = key + 1;
	m->n++;
	return &m->e[i];
}

/* lmap_del -- remove entry x (backward shift: no tombstones). */
static void lmap_del(struct lmap *m, struct lmap_ent *x)
{
	uint64_t i = (uint64_t)(x - m->e);
	m->e[i].key_p1 = 0;
	m->n--;
	for (uint64_t j = (i + 1) & m->mask; m->e[j].key_p1; j = (j + 1) & m->mask) {
		uint64_t h = lmap_hash(m, m->e[j].key_p1 - 1);
		/* j's entry may move to i if i lies cyclically in [h, j) */
		if (((j - h) & m->mask) >= ((j - i) & m->mask)) {
			m->e[i] = m->e[j];
			m->e[j].key_p1 = 0;
			i = j;
		}
	}
}

/* ---------------------------------------------------- attach */

/* redo_attach -- the log of an opened or created pool (its registers are
 * in the ADR header): volatile tables empty. */
int redo_attach(struct emu *e)
{
	if (e->design->logging == LOG_SW)
		return 0;
	struct redo *r = calloc(1, sizeof(*r));
	if (!r)
		return emu_err(-ENOMEM, "out of memory for the redo log");
	e->redo = r;
	r->pol = e->design->logging;
	r->log = e->media.meta + e->sb->log_off;
	r->log_lines = e->sb->log_lines;
	r->rec_lines = rec_lines(r->pol);
	r->nrec = r->log_lines / r->rec_lines;
	r->apply_at = r->nrec / 2 ? r->nrec / 2 : 1;
	r->regs = (struct redo_regs *)(e->media.meta + e->sb->adr_off + ADR_REDO_OFF);
	r->cbuf_slots = (uint64_t)TABLE_KIB * 1024 / MAP_ENTRY_BYTES;
	r->first_line = EMU_DATA_HDR_SIZE / EMU_LINE;
	r->held = calloc((e->nlines + 7) / 8, 1);
	if (!r->held || lmap_init(&r->map, r->nrec * 8) || lmap_init(&r->cmt, 1024))
		return emu_err(-ENOMEM, "out of memory for the redo log");
	return 0;
}

void redo_free(struct emu *e)
{
	struct redo *r = e->redo;
	if (!r)
		return;
	free(r->held);
	free(r->map.e);
	free(r->cmt.e);
	free(r);
	e->redo = NULL;
}

/* store_reg -- one ADR register, durably (a plain 8-byte store). */
static void store_reg(struct emu *e, uint64_t *reg, uint64_t v)
{
	__atomic_store_n(reg, v, __ATOMIC_RELEASE);
	media_persist(&e->media, reg, sizeof(*reg));
}

/* ---------------------------------------------------- reading records */

/* An entry of a record as read back from the log area. */
struct log_entry_view {
	uint64_t line;     /* home line */
	uint64_t ctr;      /* lame/clame: its counter; srl: the log line's */
	uint64_t log_line; /* its block */
};

/* committed_of -- the end of the committed records: committed, or head
 * where a recovery's forgetting store moved head past it (redo_recover_finish). */
static inline uint64_t committed_of(const struct redo_regs *g)
{
	return max64(g->committed, g->head);
}

/*
 * parse_record -- the entries of record rec of a log of geometry r (nlines
 * data lines), its lines at h (header first), in slot order.  last(line)
 * gives a compact item's line's last known counter (clame_full_ctr).
 * Returns the number of entries, or -1 if the record is malformed: a line
 * outside the pool's data, an overflow with no counter block after it.
 */
static int parse_record(const struct redo *r, uint64_t nlines, const uint8_t *h, uint64_t rec,
			uint64_t (*last)(void *, uint64_t), void *arg,
			struct log_entry_view out[8])
{
	const uint8_t *log = h - hdr_line(r, rec) * EMU_LINE; /* slot lines relative to it */
	int n = 0;
	if (r->pol == LOG_CLAME) {
		struct redo_item it[8];
		unsigned valid = clame_hdr_unpack(h, it);
		for (unsigned s = 0; s < 8; s++) {
			if (!(valid >> s & 1))
				continue;
			if (it[s].line < r->first_line || it[s].line >= nlines)
				return -1;
			uint64_t ctr;
			if (it[s].partial == 0) { /* overflow: the full block follows */
				if (s == 7 || (valid >> (s + 1) & 1))
					return -1;
				uint64_t c[8];
				ctr_layout_mono.decode(log + data_slot_line(r, rec, s + 1) * EMU_LINE,
						       0, c);
				ctr = c[it[s].line % 8];
			} else {
				ctr = clame_full_ctr(last(arg, it[s].line), it[s].partial);
			}
			out[n++] = (struct log_entry_view){it[s].line, ctr,
							   data_slot_line(r, rec, s)};
		}
		return n;
	}
	uint64_t addr[8];
	memcpy(addr, h, sizeof(addr));
	for (unsigned s = 0; s < 8; s++) {
		if (!addr[s])
			continue;
		uint64_t line = addr[s] - 1, c[8];
		if (line < r->first_line || line >= nlines)
			return -1;
		uint64_t dl = data_slot_line(r, rec, s);
		ctr_layout_mono.decode(log + ctr_slot_line(r, rec, s) * EMU_LINE, 0, c);
		/* srl: the block holds the log lines' counters; lame the home's */
		uint64_t ctr = r->pol == LOG_SRL ? c[(REDO_LOG_AREA + dl) % 8] : c[line % 8];
		out[n++] = (struct log_entry_view){line, ctr, dl};
	}
	return n;
}

/* read_record -- parse_record of record rec of e's log area. */
static int read_record(const struct emu *e, uint64_t rec, uint64_t (*last)(void *, uint64_t),
		       void *arg, struct log_entry_view out[8])
{
	const struct redo *r = e->redo;
	return parse_record(r, e->nlines, r->log + hdr_line(r, rec) * EMU_LINE, rec, last, arg,
			    out);
}

/* last_known -- a line's last known counter: its mapping entry's (the
 * entries read so far), else its home counter. */
static uint64_t last_known(void *arg, uint64_t line)
{
	struct emu *e = arg;
	struct lmap_ent *m = lmap_get(&e->redo->map, line);
	return m && m->ctr > e->cur_ctr[line] ? m->ctr : e->cur_ctr[line];
}

/* last_home -- the home counter only (records read while applying them). */
static uint64_t last_home(void *arg, uint64_t line)
{
	return ((struct emu *)arg)->cur_ctr[line];
}

/* ---------------------------------------------------- applying */

/* speculative -- has any line of counter line cl an entry not yet applied
 * (at modeled time at; UINT64_MAX: in the media, whenever)? */
static int speculative(const struct emu *e, uint64_t cl, uint64_t at)
{
	for (uint64_t l = cl * 8; l < cl * 8 + 8; l++) {
		const struct lmap_ent *m = lmap_get(&e->redo->map, l);
		if (m && (at == UINT64_MAX || at < m->home_at))
			return 1;
	}
	return 0;
}

/*
 * apply_entry -- entry x of a committed record in place: home counter then
 * home data, straight to the media (the queues are drained first: no older
 * write of the line waits there).  A crash in between is applied again:
 * lame copies the same ciphertext under the same counter; srl encrypts
 * again under a counter past the one stored.
 */
static int apply_entry(struct emu *e, const struct log_entry_view *x)
{
	const struct redo *r = e->redo;
	uint8_t *home = e->media.data + x->line * EMU_LINE;
	const uint8_t *blk = r->log + x->log_line * EMU_LINE;
	uint64_t ctr = x->ctr;
	if (r->pol == LOG_SRL) {
		uint8_t pads[2 * EMU_LINE], plain[EMU_LINE];
		uint64_t lines[2] = {REDO_LOG_AREA + x->log_line, x->line};
		uint64_t ctrs[2] = {x->ctr, e->cur_ctr[x->line] + 1};
		ctr = ctrs[1];
		if (crypto_line_pads(e->crypto, lines, ctrs, 2, pads))
			return -1;
		line_xor(plain, blk, pads);
		/* the counter is home before its pad is used: a replay after a
		 * crash anywhere below takes a newer one (the same entry, or an
		 * older entry of the line, would otherwise reuse it) */
		e->ctr_home[x->line] = ctr;
		media_persist(&e->media, &e->ctr_home[x->line], sizeof(uint64_t));
		e->cur_ctr[x->line] = ctr;
		emu_crash_point("redo.ctr_applied");
		if (__builtin_expect(e->audit_fd >= 0, 0))
			audit_pad(e, x->line, ctr, plain);
		line_xor(home, plain, pads + EMU_LINE);
	} else {
		if (ctr > e->ctr_home[x->line]) {
			e->ctr_home[x->line] = ctr;
			media_persist(&e->media, &e->ctr_home[x->line], sizeof(uint64_t));
		}
		e->cur_ctr[x->line] = ctr;
		emu_crash_point("redo.ctr_applied");
		memcpy(home, blk, EMU_LINE);
	}
	media_persist(&e->media, home, EMU_LINE);
	e->stat[ST_REDO_INPLACE]++;
	return 0;
}

/* unmap_entry -- line's entry is home: its mapping entry goes with its
 * last pending entry, and so does its counter line's counter-mapping entry
 * once no line of it has one.  (The counter cache's dirty bits stay: when
 * a dirty line leaves the cache, redo_ctr_victim asks whether its counters
 * were home by then in modeled time, which the update's wall-time batches
 * must not decide.) */
static void unmap_entry(struct emu *e, uint64_t line)
{
	struct redo *r = e->redo;
	struct lmap_ent *m = lmap_get(&r->map, line);
	if (!m || --m->pending)
		return;
	lmap_del(&r->map, m);
	uint64_t cl = line >> 3;
	if (!speculative(e, cl, UINT64_MAX)) {
		struct lmap_ent *c = lmap_get(&r->cmt, cl);
		if (c)
			lmap_del(&r->cmt, c);
	}
}

/*
 * model_apply -- the modeled cost of applying n entries of one record in
 * the background from time t: reads of the header and of each block and,
 * srl and lame, its counter block (srl: decryption and encryption on the
 * engine; clame: each home counter line read to merge), the home data
 * writes and one write of each counter line.
 * Not charged to a core: the banks, the queue and the engine are busy.
 * Returns when its last home write is accepted.
 */
static uint64_t model_apply(struct emu *e, unsigned core, uint64_t rec,
			    const struct log_entry_view *x, int n, uint64_t t)
{
	struct redo *r = e->redo;
	struct timing *tm = &e->tm;
	int stalled;
	uint64_t hdr = tm_read(tm, core, ctrl_bank_of(e, REDO_LOG_AREA + hdr_line(r, rec)), t);
	e->stat[ST_MEDIA_READS]++;
	/* the record's counter lines, each written once, when its counters are known */
	uint64_t cls[8], cl_ready[8], done = t;
	unsigned ncl = 0;
	for (int i = 0; i < n; i++) {
		const uint64_t log_line = REDO_LOG_AREA + x[i].log_line, cl = x[i].line >> 3;
		uint64_t blk = tm_read(tm, core, ctrl_bank_of(e, log_line), hdr), ready = blk;
		e->stat[ST_MEDIA_READS]++;
		unsigned k = 0;
		while (k < ncl && cls[k] != cl)
			k++;
		if (k == ncl) {
			cls[ncl] = cl;
			cl_ready[ncl++] = hdr;
			if (r->pol == LOG_CLAME) { /* §III.C: the old line, read to merge */
				cl_ready[k] = tm_read(tm, core, ctrl_ctr_bank(e, cl), hdr);
				e->stat[ST_MEDIA_READS]++;
			}
		}
		if (r->pol != LOG_CLAME) { /* the entry's counter block */
			uint64_t cblk = tm_read(tm, core, ctrl_bank_of(e, log_line + 1), hdr);
			e->stat[ST_MEDIA_READS]++;
			if (r->pol == LOG_LAME)
				cl_ready[k] = max64(cl_ready[k], cblk);
			ready = max64(ready, cblk);
		}
		if (r->pol == LOG_SRL) {
			/* decryption under the log counter, and the pad of the home's
			 * next counter (the counter cache) at once: two engine slots */
			uint64_t victim, known;
			int vd;
			if (cc_access(&e->cc, cl, 0, &victim, &vd) == CC_HIT) {
				e->stat[ST_CC_HITS]++;
				known = hdr + tm->cc_hit;
			} else {
				e->stat[ST_CC_MISSES]++;
				e->stat[ST_MEDIA_READS]++;
				known = tm_read(tm, core, ctrl_ctr_bank(e, cl), hdr);
				if (vd)
					redo_ctr_victim(e, core, victim, hdr);
			}
			ready = max64(tm_aes(tm, ready), tm_aes(tm, known));
			cl_ready[k] = max64(cl_ready[k], known);
			e->stat[ST_AES_PADS] += 2;
		}
		done = max64(done, tm_write(tm, core, &tm->qdata, ctrl_data_bank(e, x[i].line),
					    x[i].line, ready, &stalled));
		e->stat[ST_MEDIA_WRITES]++;
		e->stat[ST_MEDIA_WRITES_DATA]++;
		e->stat[ST_MEDIA_BYTES] += EMU_LINE;
	}
	struct tm_queue *q = tm->wpq_shared ? &tm->qdata : &tm->qctr;
	for (unsigned k = 0; k < ncl; k++) {
		done = max64(done, tm_write(tm, core, q, ctrl_ctr_bank(e, cls[k]),
					    cls[k] | TM_CTR_ADDR, cl_ready[k], &stalled));
		e->stat[ST_MEDIA_WRITES]++;
		e->stat[ST_MEDIA_WRITES_COUNTER]++;
		e->stat[ST_MEDIA_BYTES] += EMU_LINE;
	}
	return done;
}

/*
 * apply_until -- in-place update of records [head, end) (all committed),
 * in order; then head moves on.  The queues are drained first: the
 * records' lines are in the log area, and no older write of a home line
 * still waits to be drained over what is applied.  Not modeled here: the
 * modeled in-place update of a commit's records starts as it commits
 * (commit_locked), whenever the media get them.
 */
static int apply_until(struct emu *e, uint64_t end)
{
	struct redo *r = e->redo;
	uint64_t head = r->regs->head;
	if (head >= end)
		return 0;
	wq_drain_all(e, &e->qdata);
	wq_drain_all(e, &e->qctr);
	for (uint64_t rec = head; rec < end; rec++) {
		struct log_entry_view x[8];
		int n = read_record(e, rec, last_home, e, x);
		if (n < 0)
			return emu_err(SPM_E_CORRUPT, "%s: redo log record %llu is damaged",
				       e->media.meta_path, (unsigned long long)rec);
		for (int i = 0; i < n; i++) {
			if (apply_entry(e, &x[i]))
				return -1;
			unmap_entry(e, x[i].line);
		}
		emu_crash_point("redo.applied");
	}
	store_reg(e, &r->regs->head, end);
	emu_crash_point("redo.head");
	return 0;
}

static __attribute__((noreturn, cold)) void redo_fatal(void)
{
	fprintf(stderr, "spm: %s: aborting\n", emu_errmsg());
	abort();
}

/* redo_apply_all -- every committed record in place (a close). */
void redo_apply_all(struct emu *e)
{
	if (e->redo && apply_until(e, committed_of(e->redo->regs)))
		redo_fatal();
}

/* ---------------------------------------------------- the write path */

static inline int is_held(const struct redo *r, uint64_t line)
{
	return r->held[line / 8] >> (line % 8) & 1;
}

/* apply_for -- line is about to be written home: its logged versions first. */
static void apply_for(struct emu *e, uint64_t line)
{
	struct lmap_ent *m = lmap_get(&e->redo->map, line);
	if (m && apply_until(e, m->rec + 1))
		redo_fatal();
}

/*
 * redo_write_ranges -- a write-back outside a commit (a flush, an eviction,
 * the runtime's own metadata): lines an open transaction declared wait for
 * its commit (counted, not written); the others go home through the plain
 * path (counter-atomic pairs), their logged versions applied first.
 */
void redo_write_ranges(struct emu *e, unsigned core, const struct emu_range *rg, size_t n,
		       const void *view, unsigned flags)
{
	struct redo *r = e->redo;
	struct emu_range run[32];
	size_t nrun = 0;
	for (size_t i = 0; i < n; i++) {
		for (uint64_t l = rg[i].first; l < rg[i].first + rg[i].n; l++) {
			if (l < e->nlines && is_held(r, l)) {
				e->stat[ST_REDO_HELD]++;
				continue;
			}
			apply_for(e, l);
			if (nrun && run[nrun - 1].first + run[nrun - 1].n == l) {
				run[nrun - 1].n++;
				continue;
			}
			if (nrun == 32) {
				ctrl_write_ranges_plain(e, core, run, nrun, view, 0);
				nrun = 0;
			}
			run[nrun++] = (struct emu_range){l, 1};
		}
	}
	ctrl_write_ranges_plain(e, core, run, nrun, view, flags);
}

/* redo_evict_skip -- a natural eviction of line: 1 if it must wait (an open
 * transaction declared it); else its logged versions are applied first. */
int redo_evict_skip(struct emu *e, uint64_t line)
{
	if (line < e->nlines && is_held(e->redo, line)) {
		e->stat[ST_REDO_HELD]++;
		return 1;
	}
	apply_for(e, line);
	return 0;
}

/* ---------------------------------------------------- counters (§III.D) */

/*
 * redo_ctr_victim -- the counter cache evicts dirty counter line cl at t:
 * with speculative counters (entries not applied) it may not go home, and
 * goes to the counter buffer, found through the counter-mapping table; a
 * line with none left is home already (apply wrote it).
 */
void redo_ctr_victim(struct emu *e, unsigned core, uint64_t cl, uint64_t t)
{
	struct redo *r = e->redo;
	if (!speculative(e, cl, t)) /* its in-place update is done by now */
		return;
	struct lmap_ent *c = lmap_put(&r->cmt, cl);
	if (!c)
		return; /* no memory for the table: the model loses a buffer hit */
	c->rec = r->cbuf_next++ % r->cbuf_slots;
	int stalled;
	tm_write(&e->tm, core, &e->tm.qdata, ctrl_bank_of(e, REDO_CTRBUF_AREA + c->rec),
		 REDO_CTRBUF_AREA + c->rec, t, &stalled);
	e->stat[ST_REDO_CTRBUF_WRITES]++;
	e->stat[ST_MEDIA_WRITES]++;
	e->stat[ST_MEDIA_WRITES_COUNTER]++;
	e->stat[ST_MEDIA_BYTES] += EMU_LINE;
}

/* redo_ctr_buffered -- a counter cache miss on cl: 1 (and its bank) if the
 * counter-mapping table has it, which it then leaves (back in the cache). */
int redo_ctr_buffered(struct emu *e, uint64_t cl, unsigned *bank)
{
	struct lmap_ent *c = lmap_get(&e->redo->cmt, cl);
	if (!c)
		return 0;
	*bank = ctrl_bank_of(e, REDO_CTRBUF_AREA + c->rec);
	lmap_del(&e->redo->cmt, c);
	return 1;
}

/* ctr_access -- a counter line for a log entry's pad, at t: when it is
 * known.  The pad waits for a miss (the entry's write is on the commit's
 * critical path, §II.B); a dirty victim goes to the counter buffer. */
static uint64_t ctr_access(struct emu *e, unsigned core, uint64_t cl, int dirty, uint64_t t)
{
	uint64_t victim;
	int vd;
	if (cc_access(&e->cc, cl, dirty, &victim, &vd) == CC_HIT) {
		e->stat[ST_CC_HITS]++;
		return t + e->tm.cc_hit;
	}
	unsigned bank;
	e->stat[ST_CC_MISSES]++;
	e->stat[ST_MEDIA_READS]++;
	if (!redo_ctr_buffered(e, cl, &bank))
		bank = ctrl_ctr_bank(e, cl);
	uint64_t done = tm_read(&e->tm, core, bank, t + e->tm.cc_hit);
	if (vd)
		redo_ctr_victim(e, core, victim, t);
	return done;
}

/* redo_read_from_log -- a read of line at modeled time at: 1 (and the log
 * line's address) if its newest version is in the log then, not yet home
 * (the mapping table, §III.E). */
int redo_read_from_log(struct emu *e, uint64_t line, uint64_t at, uint64_t *log_addr)
{
	struct lmap_ent *m = lmap_get(&e->redo->map, line);
	if (!m || at >= m->home_at)
		return 0;
	*log_addr = REDO_LOG_AREA + m->log_line;
	e->stat[ST_REDO_LOG_READS]++;
	return 1;
}

/* ---------------------------------------------------- commit */

/* A commit's entries, sorted by line. */
struct commit_plan {
	uint64_t *line, *ctr;
	uint32_t *slot;
	size_t n;
	uint64_t nrec, first_rec;
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* plan_lines -- the distinct lines of ranges r[], in the data area. */
static int plan_lines(struct emu *e, const struct emu_range *rg, size_t n,
		      struct commit_plan *p)
{
	size_t total = 0;
	for (size_t i = 0; i < n; i++)
		total += rg[i].n;
	p->line = malloc((total + 1) * sizeof(uint64_t));
	p->ctr = malloc((total + 1) * sizeof(uint64_t));
	p->slot = malloc((total + 1) * sizeof(uint32_t));
	if (!p->line || !p->ctr || !p->slot)
		return emu_err(-ENOMEM, "out of memory for a commit");
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		for (uint64_t l = rg[i].first; l < rg[i].first + rg[i].n; l++)
			if (l >= e->redo->first_line && l < e->nlines)
				p->line[k++] = l;
	qsort(p->line, k, sizeof(uint64_t), cmp_u64);
	size_t u = 0;
	for (size_t i = 0; i < k; i++)
		if (!u || p->line[u - 1] != p->line[i])
			p->line[u++] = p->line[i];
	p->n = u;
	return 0;
}

/* entry_pad_line -- the (line, counter) a block is encrypted under. */
static inline void entry_seed(const struct redo *r, const struct commit_plan *p, size_t i,
			      uint64_t *line, uint64_t *ctr)
{
	uint64_t rec = p->first_rec + p->slot[i] / 8;
	if (r->pol == LOG_SRL) {
		*line = REDO_LOG_AREA + data_slot_line(r, rec, p->slot[i] % 8);
		*ctr = rec + 1;
	} else {
		*line = p->line[i];
		*ctr = p->ctr[i];
	}
}

/* counter_block -- the 64-byte counter block logged with entry i: srl the
 * log lines' counters (the record's), lame the home counter line with the
 * line's new counter. */
static void counter_block(const struct emu *e, const struct commit_plan *p, size_t i,
			  uint8_t out[EMU_LINE])
{
	const struct redo *r = e->redo;
	uint64_t c[8];
	if (r->pol == LOG_SRL) {
		for (unsigned k = 0; k < 8; k++)
			c[k] = p->first_rec + p->slot[i] / 8 + 1;
	} else {
		uint64_t base = p->line[i] & ~7ull;
		for (unsigned k = 0; k < 8; k++)
			c[k] = last_known((void *)e, base + k);
		c[p->line[i] % 8] = p->ctr[i];
	}
	ctr_layout_mono.encode(c, 0, out);
}

/* push_log -- one log line through the data queue, ready: its payload. */
static void push_log(struct emu *e, uint64_t log_line, const uint8_t *payload)
{
	struct wq_entry *w = wq_reserve(e, &e->qdata);
	memcpy(w->payload, payload, EMU_LINE);
	wq_publish(e, &e->qdata, log_line, 0, WQ_LOG | WQ_READY);
}

/* write_header -- record rec's header: the items of its entries. */
static void write_header(struct emu *e, const struct commit_plan *p, uint64_t rec,
			 size_t first, size_t end)
{
	const struct redo *r = e->redo;
	uint8_t h[EMU_LINE];
	memset(h, 0, sizeof(h));
	if (r->pol == LOG_CLAME) {
		struct redo_item it[8];
		unsigned valid = 0;
		memset(it, 0, sizeof(it));
		for (size_t i = first; i < end; i++) {
			unsigned s = p->slot[i] % 8;
			it[s].line = p->line[i];
			it[s].partial = (uint32_t)(p->ctr[i] & CLAME_PMASK);
			valid |= 1u << s;
		}
		clame_hdr_pack(h, it, valid);
	} else {
		uint64_t addr[8] = {0};
		for (size_t i = first; i < end; i++)
			addr[p->slot[i] % 8] = p->line[i] + 1;
		memcpy(h, addr, sizeof(addr));
	}
	push_log(e, hdr_line(r, rec), h);
}

/* write_counter_block -- entry i's counter block, if it has one (srl,
 * lame; a clame overflow's full counter line, in the next slot, §III.C). */
static void write_counter_block(struct emu *e, const struct commit_plan *p, size_t i)
{
	const struct redo *r = e->redo;
	uint64_t rec = p->first_rec + p->slot[i] / 8;
	uint8_t cb[EMU_LINE];
	if (r->pol != LOG_CLAME) {
		counter_block(e, p, i, cb);
		push_log(e, ctr_slot_line(r, rec, p->slot[i] % 8), cb);
	} else if (overflows(p->ctr[i])) {
		counter_block(e, p, i, cb);
		push_log(e, data_slot_line(r, rec, p->slot[i] % 8 + 1), cb);
	}
}

/* write_block -- entry i's block, encrypted with pad; its slot reserved
 * with the (line, counter) first (lame: a crash before it is published
 * advances the home line past the counter; wq.c). */
static void write_block(struct emu *e, const struct commit_plan *p, size_t i,
			const uint8_t *view, const uint8_t *pad)
{
	const struct redo *r = e->redo;
	uint64_t rec = p->first_rec + p->slot[i] / 8, sl, sc;
	const uint8_t *plain = view + p->line[i] * EMU_LINE;
	entry_seed(r, p, i, &sl, &sc);
	struct wq_entry *w = wq_reserve(e, &e->qdata);
	if (r->pol != LOG_SRL)
		wq_mark_reserved_log(e, w, p->line[i], p->ctr[i]);
	if (__builtin_expect(e->audit_fd >= 0, 0))
		audit_pad(e, sl, sc, plain);
	line_xor(w->payload, plain, pad);
	emu_crash_point("redo.block_written");
	wq_publish(e, &e->qdata, data_slot_line(r, rec, p->slot[i] % 8), 0, WQ_LOG | WQ_READY);
}

/*
 * model_commit -- the commit's modeled time on core: each entry's counter
 * (the home counter line; srl the log line's) and pad, its block and
 * counter block written; each record's header once its items are known;
 * the commit record once every write is accepted.  The core waits for it.
 */
static void model_commit(struct emu *e, unsigned core, const struct commit_plan *p)
{
	struct redo *r = e->redo;
	struct timing *tm = &e->tm;
	const uint64_t t0 = tm->clock[core];
	/* the commit record also waits for the core's earlier write-backs
	 * (its transaction's allocations, written home first): a fence */
	uint64_t hdr_ready[8] = {0}, accept = max64(t0, tm->pending[core]), stalls = 0;
	tm->pending[core] = 0;
	int stalled;
	for (size_t i = 0; i < p->n; i++) {
		uint64_t rec = p->first_rec + p->slot[i] / 8, sl, sc;
		uint64_t t = tm->clock[core];
		tm->clock[core] += tm->issue;
		entry_seed(r, p, i, &sl, &sc);
		uint64_t cl = (r->pol == LOG_SRL ? sl : p->line[i]) >> 3;
		uint64_t t_ctr = ctr_access(e, core, cl, r->pol != LOG_SRL, t);
		uint64_t t_pad = tm_aes(tm, t_ctr);
		e->stat[ST_REDO_ENC_NS] += (t_pad - t + 500) / 1000;
		uint64_t dl = REDO_LOG_AREA + data_slot_line(r, rec, p->slot[i] % 8);
		accept = max64(accept, tm_write(tm, core, &tm->qdata, ctrl_bank_of(e, dl), dl,
						t_pad, &stalled));
		stalls += (uint64_t)stalled;
		unsigned blocks = r->pol != LOG_CLAME || overflows(p->ctr[i]);
		if (blocks) {
			uint64_t cbl = dl + 1;
			accept = max64(accept, tm_write(tm, core, &tm->qdata, ctrl_bank_of(e, cbl),
							cbl, t_ctr, &stalled));
			stalls += (uint64_t)stalled;
		}
		e->stat[ST_MEDIA_WRITES] += 1 + blocks;
		e->stat[ST_MEDIA_WRITES_LOG] += 1 + blocks;
		e->stat[ST_MEDIA_BYTES] += EMU_LINE * (1 + blocks);
		e->stat[ST_AES_PADS]++;
		unsigned hr = (unsigned)(rec - p->first_rec) % 8;
		hdr_ready[hr] = max64(hdr_ready[hr], t_ctr);
		int last = i + 1 == p->n || p->slot[i + 1] / 8 != p->slot[i] / 8;
		if (last) { /* the header, its items known */
			uint64_t hl = REDO_LOG_AREA + hdr_line(r, rec);
			accept = max64(accept, tm_write(tm, core, &tm->qdata, ctrl_bank_of(e, hl),
							hl, hdr_ready[hr], &stalled));
			stalls += (uint64_t)stalled;
			hdr_ready[hr] = 0;
			e->stat[ST_MEDIA_WRITES]++;
			e->stat[ST_MEDIA_WRITES_LOG]++;
			e->stat[ST_MEDIA_BYTES] += EMU_LINE;
		}
	}
	/* the commit record: after every entry is accepted; commit records
	 * go round 64 lines past the log (one line would be a hot bank) */
	uint64_t cr = REDO_LOG_AREA + r->log_lines + p->first_rec % 64;
	accept = tm_write(tm, core, &tm->qdata, ctrl_bank_of(e, cr), cr, accept, &stalled);
	stalls += (uint64_t)stalled;
	e->stat[ST_MEDIA_WRITES]++;
	e->stat[ST_MEDIA_WRITES_LOG]++;
	e->stat[ST_MEDIA_BYTES] += EMU_LINE;
	e->stat[ST_WPQ_STALLS] += stalls;
	tm->clock[core] = max64(tm->clock[core], accept);
	e->stat[ST_REDO_COMMIT_NS] += (tm->clock[core] - t0) / 1000;
}

/* early_apply -- the negative control (redo_early_apply=1): the records
 * applied in place before the commit record, as a broken controller would;
 * a crash in between leaves a transaction half applied (the crash tests
 * must catch it). */
static int early_apply(struct emu *e, const struct commit_plan *p)
{
	wq_drain_all(e, &e->qdata);
	wq_drain_all(e, &e->qctr);
	for (uint64_t rec = p->first_rec; rec < p->first_rec + p->nrec; rec++) {
		struct log_entry_view x[8];
		int n = read_record(e, rec, last_home, e, x);
		for (int i = 0; i < n; i++) {
			if (apply_entry(e, &x[i]))
				return -1;
			emu_crash_point("redo.applied");
		}
	}
	return 0;
}

/* note_mapping -- the committed entries are the newest versions of their
 * lines (the mapping table). */
static int note_mapping(struct emu *e, const struct commit_plan *p)
{
	struct redo *r = e->redo;
	for (size_t i = 0; i < p->n; i++) {
		struct lmap_ent *m = lmap_put(&r->map, p->line[i]);
		if (!m)
			return -1;
		uint64_t rec = p->first_rec + p->slot[i] / 8;
		m->ctr = p->ctr[i];
		m->rec = rec;
		m->log_line = data_slot_line(r, rec, p->slot[i] % 8);
		m->pending++;
	}
	return 0;
}

/*
 * model_inplace -- the in-place update of a commit's records, modeled in
 * the background from the commit's end (the controller applies committed
 * records continuously, §III.E): the mapping table serves reads of the
 * lines until their home writes are accepted.  In wall time the records
 * are applied later, in batches (apply_until): every commit's update is
 * charged the same whenever that happens, and none is left out of a
 * measurement by still being in the log when it ends.
 */
static void model_inplace(struct emu *e, unsigned core, const struct commit_plan *p)
{
	const struct redo *r = e->redo;
	const uint64_t t = e->tm.clock[core];
	for (size_t i = 0; i < p->n;) {
		struct log_entry_view x[8];
		uint64_t rec = p->first_rec + p->slot[i] / 8;
		size_t first = i;
		int n = 0;
		for (; i < p->n && p->first_rec + p->slot[i] / 8 == rec; i++) {
			uint64_t sl, sc;
			entry_seed(r, p, i, &sl, &sc);
			x[n++] = (struct log_entry_view){p->line[i], sc,
							 data_slot_line(r, rec, p->slot[i] % 8)};
		}
		uint64_t done = model_apply(e, core, rec, x, n, t);
		for (size_t k = first; k < i; k++) {
			struct lmap_ent *m = lmap_get(&r->map, p->line[k]);
			if (m && m->rec == rec)
				m->home_at = done;
		}
	}
}

/* commit_locked -- emu_redo_commit under the lock, its plan made. */
static int commit_locked(struct emu *e, unsigned core, struct commit_plan *p, const uint8_t *view)
{
	struct redo *r = e->redo;
	for (size_t i = 0; i < p->n; i++) {
		uint64_t line = p->line[i];
		r->held[line / 8] &= (uint8_t)~(1u << (line % 8));
		/* lame: the counter the home line will have (srl: the home's is
		 * taken at in-place update) */
		p->ctr[i] = last_known(e, line) + 1;
	}
	p->nrec = redo_plan(r->pol, p->ctr, p->n, p->slot);
	if (p->nrec > r->nrec)
		return emu_err(SPM_E_NOSPACE, "a transaction of %zu lines does not fit the redo "
			       "log (%llu records of 8 lines; log_kib= makes it larger)",
			       p->n, (unsigned long long)r->nrec);
	if (r->regs->tail + p->nrec - r->regs->head > r->nrec &&
	    apply_until(e, committed_of(r->regs)))
		redo_fatal();
	/* the records are covered before any of their lines is written */
	p->first_rec = r->regs->tail;
	store_reg(e, &r->regs->tail, p->first_rec + p->nrec);
	emu_crash_point("redo.reserved");
	enum { BATCH = 32 };
	uint8_t pads[BATCH * EMU_LINE];
	uint64_t sl[BATCH], sc[BATCH];
	size_t i = 0;
	for (uint64_t rec = p->first_rec; rec < p->first_rec + p->nrec; rec++) {
		/* the record's counter blocks, then its header, then its blocks: a
		 * header found in the log has its counter blocks, and a block its
		 * header (recovery advances the lines a header names) */
		size_t end = i;
		while (end < p->n && p->first_rec + p->slot[end] / 8 == rec)
			end++;
		for (size_t k = i; k < end; k++)
			write_counter_block(e, p, k);
		write_header(e, p, rec, i, end);
		emu_crash_point("redo.header_written");
		while (i < end) {
			size_t k = 0;
			while (i + k < end && k < BATCH) {
				entry_seed(r, p, i + k, &sl[k], &sc[k]);
				k++;
			}
			if (crypto_line_pads_ctl(e->crypto, sl, sc, k, pads))
				redo_fatal();
			for (size_t j = 0; j < k; j++)
				write_block(e, p, i + j, view, pads + j * EMU_LINE);
			i += k;
		}
	}
	/* past the tail store nothing may fail: a record left below tail and
	 * above committed would be committed by the next commit's store */
	if (note_mapping(e, p)) {
		emu_err(-ENOMEM, "out of memory for the mapping table");
		redo_fatal();
	}
	model_commit(e, core, p);
	model_inplace(e, core, p);
	emu_crash_point("redo.logged");
	if (__builtin_expect(e->redo_early_apply, 0) && early_apply(e, p))
		redo_fatal();
	/* commit: one ADR register store (the commit record) */
	store_reg(e, &r->regs->committed, p->first_rec + p->nrec);
	e->stat[ST_REDO_COMMITS]++;
	e->stat[ST_REDO_RECORDS] += p->nrec;
	e->stat[ST_REDO_ENTRIES] += p->n;
	e->stat[ST_CTRL_WRITES] += p->n;
	return 0;
}

/*
 * emu_redo_commit -- a transaction's lines (ranges r[], plaintext in view)
 * logged and committed: 0 once the commit record is in the ADR domain.
 * In-place update follows once half the log is in use.
 */
int emu_redo_commit(struct emu *e, unsigned core, const struct emu_range *rg, size_t n,
		    const void *view)
{
	if (!e->redo)
		return emu_err(SPM_E_INVAL, "emu_redo_commit: not a redo design");
	if (core >= EMU_MAX_CORES)
		core = 0;
	struct commit_plan p = {0};
	int rc = 0;
	pthread_mutex_lock(&e->lock);
	if (e->cm && e->cm->nmade) /* the lines leave the caches: written back */
		for (size_t i = 0; i < n; i++)
			cache_clean(e, rg[i].first, rg[i].n);
	rc = plan_lines(e, rg, n, &p);
	if (!rc && p.n)
		rc = commit_locked(e, core, &p, view);
	if (!rc && e->redo->regs->tail - e->redo->regs->head >= e->redo->apply_at &&
	    apply_until(e, committed_of(e->redo->regs)))
		redo_fatal();
	pthread_mutex_unlock(&e->lock);
	emu_crash_point("redo.committed");
	free(p.line);
	free(p.ctr);
	free(p.slot);
	return rc;
}

/* emu_redo_hold -- lines [first, first+n) are declared by an open
 * transaction: their write-backs wait for its commit. */
void emu_redo_hold(struct emu *e, uint64_t first, uint64_t n)
{
	if (!e->redo)
		return;
	pthread_mutex_lock(&e->lock);
	for (uint64_t l = first; l < first + n && l < e->nlines; l++)
		e->redo->held[l / 8] |= (uint8_t)(1u << (l % 8));
	pthread_mutex_unlock(&e->lock);
}

/* emu_redo_release -- an aborted transaction's lines: no longer held. */
void emu_redo_release(struct emu *e, const struct emu_range *rg, size_t n)
{
	if (!e->redo)
		return;
	pthread_mutex_lock(&e->lock);
	for (size_t i = 0; i < n; i++)
		for (uint64_t l = rg[i].first; l < rg[i].first + rg[i].n && l < e->nlines; l++)
			e->redo->held[l / 8] &= (uint8_t)~(1u << (l % 8));
	pthread_mutex_unlock(&e->lock);
}

int emu_is_redo(const struct emu *e)
{
	return e->redo != NULL;
}

/* ---------------------------------------------------- recovery */

/*
 * redo_recover -- at an unclean open, after the queues were drained into
 * the log area: the committed records applied in order (a crash here is
 * recovered again: head moves only at the end); then the home line of
 * every entry past the commit noted (lame, clame) to be advanced past its
 * counter by ctrl_advance_stale, before redo_recover_finish forgets them.
 */
int redo_recover(struct emu *e)
{
	struct redo *r = e->redo;
	if (!r)
		return 0;
	int rc = apply_until(e, committed_of(r->regs));
	if (rc)
		return rc;
	if (r->pol == LOG_SRL)
		return 0; /* its log pads are record numbers, never used again */
	for (uint64_t rec = committed_of(r->regs); rec < r->regs->tail; rec++) {
		struct log_entry_view x[8];
		int n = read_record(e, rec, last_known, e, x);
		/* a record the crash cut short (or one of an earlier turn of
		 * the ring): its items name lines of the pool; the reserved
		 * slots cover blocks whose header was not written */
		for (int i = 0; i < n; i++) {
			struct lmap_ent *m = lmap_put(&r->map, x[i].line);
			if (m && x[i].ctr > m->ctr)
				m->ctr = x[i].ctr;
			if (x[i].ctr > e->cur_ctr[x[i].line])
				ctrl_note_dropped(e, x[i].line, x[i].ctr);
		}
	}
	/* the scratch entries go: nothing is pending after a recovery */
	memset(r->map.e, 0, (r->map.mask + 1) * sizeof(*r->map.e));
	r->map.n = 0;
	return 0;
}

/* redo_recover_finish -- every line is past the counters the interrupted
 * records used: the records are forgotten, by one store (head = tail;
 * committed_of reads a committed below head as head), then committed
 * follows.  (Two stores, committed first, let a crash between them turn
 * the interrupted records into committed ones.) */
int redo_recover_finish(struct emu *e)
{
	struct redo *r = e->redo;
	if (!r)
		return 0;
	store_reg(e, &r->regs->head, r->regs->tail);
	emu_crash_point("redo.recovered");
	store_reg(e, &r->regs->committed, r->regs->tail);
	return 0;
}

/* The state redo_check reads a pool's log with, before it is mapped. */
struct log_check {
	int fd;
	const struct superblock *sb;
	struct lmap seen; /* lines of the records read so far: their last counter */
	int failed;       /* a read failed */
};

/* home_ctr_of -- line's home counter, read from the meta file (mono). */
static uint64_t home_ctr_of(struct log_check *k, uint64_t line)
{
	uint64_t c = 0;
	if (pread(k->fd, &c, sizeof(c), (off_t)(k->sb->ctr_off + line * sizeof(c))) !=
	    (ssize_t)sizeof(c))
		k->failed = 1;
	return c;
}

/* check_last -- last_known for redo_check: the records read so far, else home. */
static uint64_t check_last(void *arg, uint64_t line)
{
	struct log_check *k = arg;
	struct lmap_ent *m = lmap_get(&k->seen, line);
	return m ? m->ctr : home_ctr_of(k, line);
}

/* record_as_recovered -- record rec's lines as recovery will read them:
 * the log area's, each overwritten by the newest ready copy in the ADR
 * data queue (wq_recover drains ready entries only, oldest first). */
static int record_as_recovered(const struct log_check *k, const struct redo *geo,
			       const struct wq_entry *dq, unsigned dcap, uint64_t rec,
			       uint8_t *buf)
{
	uint64_t hl = hdr_line(geo, rec);
	size_t len = (size_t)geo->rec_lines * EMU_LINE;
	if (pread(k->fd, buf, len, (off_t)(k->sb->log_off + hl * EMU_LINE)) != (ssize_t)len)
		return -1;
	for (unsigned j = 0; j < geo->rec_lines; j++) {
		uint64_t newest = 0;
		for (unsigned i = 0; i < dcap; i++)
			if ((dq[i].state & (WQ_VALID | WQ_LOG | WQ_READY)) ==
				    (WQ_VALID | WQ_LOG | WQ_READY) &&
			    dq[i].addr == hl + j && dq[i].seq >= newest) {
				newest = dq[i].seq;
				memcpy(buf + (size_t)j * EMU_LINE, dq[i].payload, EMU_LINE);
			}
	}
	return 0;
}

/* check_entry -- an entry of record rec as recovery will use it: srl's log
 * counter is the record's number; a committed lame or clame entry's counter
 * is above the line's earlier committed ones; none is more than 2^32
 * beyond what the line had (the bound ADR's dropped pairs have).  What it
 * breaks, or NULL. */
static const char *check_entry(struct log_check *k, enum log_policy pol,
			       const struct log_entry_view *x, uint64_t rec, int committed)
{
	if (pol == LOG_SRL)
		return committed && x->ctr != rec + 1 ? "a log counter not its record's" : NULL;
	struct lmap_ent *m = lmap_get(&k->seen, x->line);
	uint64_t last = m ? m->ctr : home_ctr_of(k, x->line);
	if (x->ctr > last && x->ctr - last > (1ull << 32))
		return "a counter far beyond its line's";
	if (committed && m && m->pending && x->ctr <= m->rec)
		return "a counter not above the line's earlier entry";
	if (!(m = lmap_put(&k->seen, x->line)))
		return "out of memory";
	/* ctr: the line's last known counter, as recovery keeps it (the
	 * committed entries in order, then the largest); rec: its last
	 * committed entry's counter, pending: it has one */
	m->ctr = committed ? x->ctr : max64(last, x->ctr);
	if (committed) {
		m->rec = x->ctr;
		m->pending = 1;
	}
	return NULL;
}

/* check_records -- every record in [head, tail) as recovery will read it. */
static const char *check_records(struct log_check *k, const struct redo *geo,
				 const struct redo_regs *g, const struct wq_entry *dq,
				 unsigned dcap, uint64_t *bad_rec)
{
	uint8_t *buf = malloc((size_t)geo->rec_lines * EMU_LINE);
	const char *why = buf ? NULL : "out of memory";
	for (uint64_t rec = g->head; rec < g->tail && !why; rec++) {
		struct log_entry_view x[8];
		*bad_rec = rec;
		if (record_as_recovered(k, geo, dq, dcap, rec, buf)) {
			why = "cannot read it";
			break;
		}
		int n = parse_record(geo, k->sb->nlines, buf, rec, check_last, k, x);
		if (n < 0)
			why = "a line outside the pool's data, or an overflow with no counter block";
		for (int i = 0; i < n && !why; i++)
			why = check_entry(k, geo->pol, &x[i], rec, rec < committed_of(g));
	}
	/* a line's last committed entry is at least its home counter (a replay
	 * ends with the line under its newest committed counter) */
	for (uint64_t i = 0; !why && geo->pol != LOG_SRL && i <= k->seen.mask; i++) {
		const struct lmap_ent *m = &k->seen.e[i];
		if (m->key_p1 && m->pending && m->rec < home_ctr_of(k, m->key_p1 - 1)) {
			why = "a line's last committed counter below its home's";
			*bad_rec = committed_of(g) - 1;
		}
	}
	free(buf);
	return why;
}

/*
 * redo_check -- before anything is written: the registers in order, below
 * 2^62 and within the ring (in a clean pool all equal: a clean close
 * applies every record), and every record recovery will read -- the log
 * area's lines as the ADR queue's ready entries will leave them -- names
 * lines of the pool's data, has the counter blocks its overflows need, and
 * holds counters a recovery may use (check_entry).  SPM_E_CORRUPT
 * otherwise.  dq: the ADR data queue's dcap entries (a clean pool: none).
 */
int redo_check(int fd, const char *meta_path, const struct superblock *sb,
	       const struct wq_entry *dq, unsigned dcap)
{
	const struct design *d = design_find(sb->design);
	if (!d || d->logging == LOG_SW)
		return 0;
	struct redo_regs g;
	if (pread(fd, &g, sizeof(g), (off_t)(sb->adr_off + ADR_REDO_OFF)) != (ssize_t)sizeof(g))
		return emu_err(SPM_E_TRUNCATED, "%s: cannot read the redo registers", meta_path);
	struct redo geo = {.pol = d->logging, .rec_lines = rec_lines(d->logging),
			   .first_line = EMU_DATA_HDR_SIZE / EMU_LINE};
	geo.nrec = sb->log_lines / geo.rec_lines;
	int clean = sb->state == SB_STATE_CLEAN;
	if (!(g.head <= g.tail && g.committed <= g.tail && g.tail - g.head <= geo.nrec &&
	      g.tail < (1ull << 62)) ||
	    (clean && !(g.head == g.tail && g.committed == g.tail)))
		return emu_err(SPM_E_CORRUPT, "%s: redo log registers out of order (head %llu, "
			       "committed %llu, tail %llu, %llu records%s)", meta_path,
			       (unsigned long long)g.head, (unsigned long long)g.committed,
			       (unsigned long long)g.tail, (unsigned long long)geo.nrec,
			       clean ? "; a clean pool's are equal" : "");
	struct log_check k = {.fd = fd, .sb = sb};
	if (lmap_init(&k.seen, 64))
		return emu_err(-ENOMEM, "out of memory");
	uint64_t bad_rec = 0;
	const char *why = check_records(&k, &geo, &g, dq, dcap, &bad_rec);
	free(k.seen.e);
	if (k.failed)
		return emu_err(SPM_E_TRUNCATED, "%s: cannot read the counters", meta_path);
	if (why)
		return emu_err(SPM_E_CORRUPT, "%s: redo log record %llu is damaged: %s",
			       meta_path, (unsigned long long)bad_rec, why);
	return 0;
}
