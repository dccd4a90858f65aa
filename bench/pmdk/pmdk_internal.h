/* pmdk_internal.h -- what the libpmemobj workloads share: the run context, the table of a
 * workload's callbacks, and the op randomness and payloads of examples/common (same formulas:
 * op j of a run with seed s draws ex_rand(s, j, stream), a value is ex_fill's bytes).
 *
 * Every workload's root object starts with `uint64_t ops` (k, the operations done) followed
 * by the structure's handle, all within one 64-byte line: like the examples, each op's
 * transaction snapshots that line once (pmdk_tx_count) and sets k = j + 1 with its effect.
 * The driver runs each op (and init) in its own TX_BEGIN, so a failing transactional call
 * aborts the transaction and jumps to its TX_ONABORT: the structure code needs no error
 * paths. */
#ifndef PMDK_INTERNAL_H
#define PMDK_INTERNAL_H 1

#include <stddef.h>
#include <stdint.h>

#include <libpmemobj.h>

#define PMDK_VALUE_MIN 8u     /* a value starts with the 8-byte op index */
#define PMDK_VALUE_MAX 16384u /* the examples' bound */
#define PMDK_TYPE 1u          /* the type number of every object */
#define PMDK_LINE 64u

/* The state of one run. */
struct pmdk_ctx {
	PMEMobjpool *pop;
	void *root;          /* the workload's root object: uint64_t ops, then its handle */
	size_t root_size;
	uint64_t uuid_lo;    /* the pool's, for pmdk_obj */
	size_t pool_size;
	uint64_t seed;
	size_t value_size;
	uint64_t ops;        /* ops asked for (check: done) */
	uint8_t *buf;        /* PMDK_VALUE_MAX bytes of scratch: a dequeue reads into it */
	uint8_t *seen;       /* map check: one byte per op */
	uint64_t visited;    /* map check: items visited */
	char why[256];       /* check: the broken invariant */
};

/* A transaction's body: the driver runs it inside TX_BEGIN .. TX_END. */
typedef void pmdk_body(struct pmdk_ctx *c, uint64_t j);

/* The callbacks of one workload. */
struct pmdk_wl {
	const char *name;
	size_t root_size;  /* at most one line */
	pmdk_body *init;   /* the empty structure in the zeroed root (j = 0; not timed), or NULL */
	pmdk_body *op;     /* op j: its effect and k = j + 1, one transaction */
	uint64_t (*items)(const struct pmdk_ctx *c);       /* the items it holds */
	int (*check)(struct pmdk_ctx *c, uint64_t *items); /* invariants, content: 0 or -1 */
};

extern const struct pmdk_wl pmdk_array_wl, pmdk_queue_wl, pmdk_hashmap_wl, pmdk_btree_wl,
	pmdk_rbtree_wl;

/* pmdk_mix64 -- splitmix64's finaliser (ex_mix64). */
static inline uint64_t pmdk_mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* pmdk_rand -- random word `stream` of op j (ex_rand of a single run from op 0). */
static inline uint64_t pmdk_rand(const struct pmdk_ctx *c, uint64_t j, uint64_t stream)
{
	return pmdk_mix64(pmdk_mix64(c->seed ^ (stream << 48)) ^ j);
}

/* pmdk_map_key -- the key op j of a map workload inserts (ex_map_plan, insert mix).  A
 * bijection of j, so the keys of a run are distinct and every op adds an item. */
static inline uint64_t pmdk_map_key(const struct pmdk_ctx *c, uint64_t j)
{
	return pmdk_rand(c, j, 1);
}

/* Values (ex_fill, ex_value_ok): op index `ver`, then bytes derived from (ver, key). */
void pmdk_fill(void *dst, size_t len, uint64_t ver, uint64_t key);
int pmdk_value_ok(const void *src, size_t len, uint64_t key, uint64_t *ver);

/* pmdk_tx_count -- in op j's transaction: snapshot the root's line, k = j + 1. */
void pmdk_tx_count(struct pmdk_ctx *c, uint64_t j);

/* pmdk_tx_add_ranges -- in a transaction: snapshot n ranges given in increasing address
 * order (empty ones skipped), merging those less than a line apart into one snapshot. */
struct pmdk_range {
	const void *addr;
	size_t len;
};
void pmdk_tx_add_ranges(const struct pmdk_range *r, unsigned n);

/* pmdk_obj -- the address of [oid, oid + len) if it lies inside this pool, else NULL: for
 * following persistent pointers in a check. */
void *pmdk_obj(const struct pmdk_ctx *c, PMEMoid oid, size_t len);

/* pmdk_fail -- record a broken invariant in c->why; returns -1. */
int pmdk_fail(struct pmdk_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Map check: begin, visit each item once, end with the walk's result and the map's own
 * count.  The map must hold exactly the keys of ops 0..ops-1, each with the intact
 * value-size value of its op. */
int pmdk_map_begin(struct pmdk_ctx *c);
int pmdk_map_visit(struct pmdk_ctx *c, uint64_t key, const void *val, size_t len);
int pmdk_map_end(struct pmdk_ctx *c, int walk_rc, uint64_t count, uint64_t *items);

#endif
