/*
 * bench_records.c -- the workload records of spm-bench: a persistent table of
 * fixed-size records (256 bytes, 256-byte aligned: four lines, one aligned
 * 256-byte unit each) written in transactions, whose duplicate lines arise
 * the way a real program's do, not from a duplication knob (--dup does not
 * apply).  Op j writes record slot j mod S of a table of S slots (--footprint
 * / 256; 1024 for --footprint 0), a circular log, in one transaction with the
 * op count (its old content undo-logged), as one of:
 *
 *   30%  new     a new record allocated zeroed, spm_tx_alloc-style: the whole
 *                record zero, then its 32-byte header filled (id, kind,
 *                time stamp); lines 1-3 are zero lines;
 *   20%  copy    a copy of an earlier record (any of the table's others): the
 *                whole record copied, then the header rewritten (a new id, the
 *                source, a stamp); lines 1-3 repeat the source's;
 *   20%  repeat  a record identical to a recent one (one of the last 8): the
 *                same status or log line again; all four lines repeat it;
 *   30%  fresh   a unique record: header and 224 bytes of body from (seed, j).
 *
 * The proportions are those of a logging or order-table program: most rows
 * start as zero-filled slots whose few set fields sit in the header (new
 * orders, empty log entries), a fifth are clones of existing rows (amended
 * orders, copied buffers), a fifth repeat a line written moments ago
 * (heartbeats, the same status message), and under a third carry new data.
 * About 3/4 of the lines of new and copied records and every line of a
 * repeat duplicate a line already in the pool: some 57% of the data lines
 * written, none of them from the fresh records.
 *
 * Everything op j does follows from (its run's seed, j): the kind and the
 * source from one random word, a fresh record's bytes from another; slot j mod
 * S holds the last record op j' = j - S wrote, so the earlier records a copy
 * or a repeat reads are always written ones.  In spm-bench a warm-up pass
 * (one write per slot, bench_records_warmup) fills the table before the
 * measured phase, as the maps are filled first.  Nothing is checked after a
 * crash: there is no replay model.
 */
#include <stdint.h>
#include <string.h>

#include "bench.h"

#define MIN_SLOTS 16u
#define DEFAULT_SLOTS 1024u
#define RECENT 8u /* a repeat copies one of the last RECENT records */

enum kind { NEW = 1, COPY, REPEAT, FRESH };

/* One record: a header line's first 32 bytes, then the body. */
struct record {
	uint64_t id;    /* the op that wrote it (a repeat: the op it repeats) */
	uint32_t kind;  /* enum kind */
	uint32_t len;   /* body bytes in use */
	uint64_t src;   /* a copy: the op whose record it copied */
	uint64_t stamp; /* a time stamp (a function of the op) */
	uint8_t body[BENCH_RECORD - 32];
};
_Static_assert(sizeof(struct record) == BENCH_RECORD, "a record is four lines");

struct root {
	struct ex_head h;
	spm_off_t table; /* slots records, BENCH_RECORD-aligned; 0: not made yet */
	uint64_t slots;
};

uint64_t bench_records_slots(uint64_t footprint)
{
	uint64_t n = footprint ? footprint / BENCH_RECORD : DEFAULT_SLOTS;
	return n < MIN_SLOTS ? MIN_SLOTS : n;
}

uint64_t bench_records_warmup(uint64_t footprint)
{
	return footprint ? bench_records_slots(footprint) : 0;
}

/* start -- the first run makes the table (param slots, zeroed by the
 * allocation), in the run's transaction. */
static int start(struct ex_ctx *c, const struct ex_run *run)
{
	struct root *r = ex_root(c);
	if (r->table)
		return 0;
	uint64_t n = run->param < MIN_SLOTS ? MIN_SLOTS : run->param;
	int rc = spm_tx_add(c->pool, &r->table, 2 * sizeof(uint64_t));
	if (rc)
		return rc;
	/* objects are line aligned: room to align the table to a record */
	spm_off_t o = spm_tx_alloc(c->pool, n * BENCH_RECORD + BENCH_RECORD - SPM_LINE);
	if (!o)
		return spm_errcode() ? spm_errcode() : SPM_E_NOSPACE;
	r->table = (o + BENCH_RECORD - 1) / BENCH_RECORD * BENCH_RECORD;
	r->slots = n;
	return 0;
}

/* kind_of -- what op j writes, and (copy, repeat) the op whose record it
 * reads, from its first random word. */
static enum kind kind_of(struct ex_ctx *c, uint64_t j, uint64_t slots, uint64_t *src)
{
	uint64_t rnd = ex_rand(c, j, 0), pct = rnd % 100, back = rnd >> 32;
	enum kind k = pct < 30 ? NEW : pct < 50 ? COPY : pct < 70 ? REPEAT : FRESH;
	if (k == COPY || k == REPEAT) {
		if (j == 0) /* nothing written yet */
			return FRESH;
		/* a copy: any other slot written; a repeat: a recent one */
		uint64_t span = k == COPY ? slots - 1 : RECENT;
		*src = j - 1 - back % (j < span ? j : span);
	}
	return k;
}

static int op(struct ex_ctx *c, uint64_t j)
{
	spm_pool *pool = c->pool;
	struct root *r = ex_root(c);
	uint64_t slots = r->slots, src = 0;
	struct record *t = spm_ptr(pool, r->table), *dst = &t[j % slots];
	enum kind k = kind_of(c, j, slots, &src);
	int rc = spm_tx_begin(pool);
	if (rc)
		return rc;
	if ((rc = ex_tx_count(c, j)) || (rc = spm_tx_add(pool, dst, sizeof(*dst)))) {
		spm_tx_abort(pool);
		return rc;
	}
	uint64_t stamp = ex_rand(c, j, 1);
	switch (k) {
	case NEW:
		memset(dst, 0, sizeof(*dst));
		dst->id = j;
		dst->kind = NEW;
		dst->stamp = stamp;
		break;
	case COPY:
		memcpy(dst, &t[src % slots], sizeof(*dst));
		dst->id = j;
		dst->kind = COPY;
		dst->src = src;
		dst->stamp = stamp;
		break;
	case REPEAT:
		memcpy(dst, &t[src % slots], sizeof(*dst));
		break;
	case FRESH: {
		uint64_t s = stamp;
		dst->id = j;
		dst->kind = FRESH;
		dst->len = sizeof(dst->body);
		dst->src = 0;
		dst->stamp = stamp;
		for (size_t i = 0; i < sizeof(dst->body); i += 8) {
			uint64_t w = ex_mix64(s += 0x9e3779b97f4a7c15ull);
			memcpy(dst->body + i, &w, 8);
		}
		break;
	}
	}
	return spm_tx_commit(pool);
}

const struct ex_ds bench_ds_records = {
	.name = "records",
	.magic = "SPMXRECS",
	.root_size = sizeof(struct root),
	.start = start,
	.op = op,
};
