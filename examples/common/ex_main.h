/*
 * ex_main.h -- what every spm-<name> example shares: the command line
 * (create / run / check), the run log kept in the pool, the deterministic
 * operation sequence, payloads, and the replay that check compares against.
 *
 * An example is a persistent data structure (a small library, <name>.h and
 * <name>.c, on the public API only) plus a table of callbacks (struct ex_ds)
 * that main() hands to ex_main():
 *
 *   spm-<name> create POOL [OPTIONS] [--size BYTES]
 *   spm-<name> run POOL N [--seed S] [--value-size B] [--dup PCT] [--progress K] ...
 *                  (maps: [--mix mixed|insert] [--keys uniform|zipf:THETA])
 *   spm-<name> check POOL
 *   spm-<name> --help
 *
 * A pool is created with layout=spm-<name> and opened with it: another
 * program's pool is refused (exit 25) before anything is written.  After an
 * unclean shutdown check prints, after its verdict, one line of what
 * recovery did (queue entries drained and dropped, transactions rolled
 * back, lines re-encrypted).
 *
 * The operations are numbered globally across runs: op j is the j-th
 * operation ever applied to the pool.  Every run appends a record {seed,
 * first_op, n_ops, value_size, dup, ...} to the run log in the root (durably,
 * before its first operation), and op j draws its randomness from (the seed
 * of the run that executed it, j) only.  Each operation makes the count of
 * operations done, k, durable together with its own effect (in the same
 * transaction, or for the list derived from the list itself), so after any
 * crash the pool holds exactly the effect of ops 0..k-1, and check can
 * rebuild that effect in plain memory (the model) and compare.
 *
 * Record i executed ops [first_op(i), first_op(i+1)) -- a run that crashed
 * did fewer than it asked for, and the next run continues at k -- and the
 * last record executed [first_op, k).
 */
#ifndef EX_MAIN_H
#define EX_MAIN_H 1

#include <stddef.h>
#include <stdint.h>

#include <spm.h>

#include "ex_keys.h"
#include "ex_util.h"

#define EX_VALUE_MIN 8u       /* a value starts with the 8-byte op index */
#define EX_VALUE_MAX 16384u   /* keeps one operation inside one transaction log */
#define EX_VALUE_DEFAULT 64u
#define EX_POOL_DEFAULT (64u << 20)
/* exit statuses: 0 ok (and --help), 1 a check or run failed, 2 usage (the
 * message names the bad flag or argument), 3 a system error (at open or
 * create, or no memory for check's model), 4 a pool that is not this
 * example's (another example's root, or no room for a root), 10-26 spm's
 * error codes at open or create (ex_main.c: exit_of; 25 another layout) */
#define EX_EXIT_SYSTEM 3
#define EX_EXIT_OTHER 4

/* Workload mixes for the map structures (btree, bptree, hashmap, rbtree,
 * skiplist). */
enum ex_mix {
	EX_MIX_MIXED = 0,  /* 60% insert, 15% update, 15% delete, 10% lookup */
	EX_MIX_INSERT = 1, /* inserts only: the papers' B-tree / hash / RB-tree runs */
};
/* A record's mix is an enum ex_mix (EX_MIX_KIND bits), with EX_MIX_ZIPF set
 * when its keys are not uniform (the distribution is in its keys field):
 * so a uniform op reads no more of its record than it did before --keys
 * (the core model sees every load). */
#define EX_MIX_KIND 0xffu
#define EX_MIX_ZIPF 0x100u

/* A run record: one line of the run log. */
struct ex_run {
	uint64_t seed;
	uint64_t first_op;   /* global index of the run's first operation */
	uint64_t n_ops;      /* operations asked for */
	uint64_t value_size; /* payload bytes per operation */
	uint64_t mix;        /* enum ex_mix, | EX_MIX_ZIPF (see above) */
	uint64_t param;      /* structure specific (array: elements) */
	uint64_t keys;       /* key distribution (ex_keys.h): 0 uniform */
	uint64_t dup;        /* --dup: percent of values that repeat a content
			      * (0..100; 0, as in a log written before --dup: none) */
};
_Static_assert(sizeof(struct ex_run) == SPM_LINE, "a run record is one line");

/*
 * The head of every example's root object: three lines.  Line 0 is written
 * at create only (so a crash can never damage the magic), line 1 when a run
 * starts, line 2 by every operation: put the structure's most written root
 * fields right after ops, in that same line, so that one snapshot covers
 * both.
 */
struct ex_head {
	char magic[8];
	uint64_t version;
	uint64_t reserved0[6];
	/* line 1: the run log */
	uint64_t nruns;
	uint64_t runs_cap;
	spm_off_t runs; /* struct ex_run[runs_cap] */
	uint64_t reserved1[5];
	/* line 2: k, the number of operations done (see ex_tx_count) */
	uint64_t ops;
};
#define EX_HOT_LINE offsetof(struct ex_head, ops)
_Static_assert(offsetof(struct ex_head, ops) == 2 * SPM_LINE, "ops starts line 2");

/* The state of one command. */
struct ex_ctx {
	spm_pool *pool;
	struct ex_head *head; /* the root */
	const struct ex_ds *ds;
	const struct ex_run *runs; /* the run log (in the pool) */
	uint64_t nruns;
	uint64_t cur;           /* index of the record of the op being done / replayed */
	uint8_t *buf;           /* scratch of EX_VALUE_MAX bytes (lookups read into it) */
	struct ex_zipf zipf;    /* the constants of the last Zipfian run met */
	char why[512];          /* check: the broken invariant */
};

/* The callbacks of one structure. */
struct ex_ds {
	const char *name;       /* "btree": the command is spm-btree */
	const char *magic;      /* 8 bytes, identifies the pool's structure */
	size_t root_size;       /* the root object, struct ex_head first */
	unsigned has_mix;       /* --mix and --keys accepted (the map workload) */
	unsigned has_elements;  /* --elements accepted (array) */
	/* create: initialise the structure, inside the creating transaction */
	int (*init)(struct ex_ctx *c);
	/* run start, inside the transaction that appends record r (may be NULL) */
	int (*start)(struct ex_ctx *c, const struct ex_run *r);
	/* do op j.  If it changes the structure, its effect and k = j + 1
	 * become durable together (one transaction), or neither does; an op
	 * that changes nothing (a lookup, a miss) needs no transaction and
	 * is counted by the next change or at the end of the run */
	int (*op)(struct ex_ctx *c, uint64_t j);
	/* k when it is derived from the structure (list); NULL: head->ops */
	int (*ops_done)(struct ex_ctx *c, uint64_t *k);
	/* check: a model of the empty structure, op j applied to it, compare */
	void *(*model_new)(struct ex_ctx *c);
	int (*model_op)(struct ex_ctx *c, void *model, uint64_t j);
	/* model NULL: 0 if the structure's invariants hold and every value
	 * is intact; else 0 if the pool's structure equals the model (*items
	 * = its size); otherwise -1 with the broken invariant in c->why */
	int (*verify)(struct ex_ctx *c, void *model, uint64_t *items);
	void (*model_free)(void *model);
};

/* The workloads' tables, one per examples/<name>/workload.c (library
 * ex_<name>_workload): the commands and spm-bench drive them. */
extern const struct ex_ds ex_ds_array, ex_ds_bptree, ex_ds_btree, ex_ds_hashmap,
	ex_ds_list, ex_ds_queue, ex_ds_rbtree, ex_ds_skiplist;

/* ex_main -- the whole command line of spm-<ds->name>. */
int ex_main(const struct ex_ds *ds, int argc, char **argv);

/*
 * Instances: the commands' create and run for a program that drives several
 * structures in one pool in-process (a benchmark).  An instance's head
 * (ds->root_size bytes, struct ex_head first) is an object of the heap
 * instead of the root; it is initialised as create does and keeps its own
 * run log as run does.  Do op j with c->ds->op(c, j).
 *
 * ex_instance_new       -- a new instance of ds in pool, in one transaction.
 * ex_instance_begin_run -- append the record r (its first_op is ignored) as
 *                          run does; *first = the index of its first op.
 *                          -EINVAL with c->why set if the run log is damaged.
 * ex_instance_end_run   -- after ops [*first, end): count trailing ops that
 *                          changed nothing (lookups), as run does.
 * ex_instance_free      -- free the context's scratch (the objects stay).
 * The commands create and run are built on the same code.
 */
int ex_instance_new(spm_pool *pool, const struct ex_ds *ds, struct ex_ctx *c);
int ex_instance_begin_run(struct ex_ctx *c, const struct ex_run *r, uint64_t *first);
int ex_instance_end_run(struct ex_ctx *c, uint64_t end);
void ex_instance_free(struct ex_ctx *c);

/* ex_root -- the structure's root: the root object cast (struct ex_head first). */
static inline void *ex_root(struct ex_ctx *c)
{
	return c->head;
}

/* ex_run_of -- the record of the run that executed op j. */
const struct ex_run *ex_run_of(struct ex_ctx *c, uint64_t j);

/* ex_rand -- the random word number `stream` of op j (a function of the
 * seed of op j's run, j and stream only). */
uint64_t ex_rand(struct ex_ctx *c, uint64_t j, uint64_t stream);

/* ex_mix64 -- splitmix64's finaliser: a bijective 64-bit hash. */
static inline uint64_t ex_mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/*
 * Values.  A value written by op j for key `key` is len bytes: an 8-byte
 * header, then bytes derived from it.  A fresh value's header is the op
 * index j, its bytes derived from (j, key) (ex_fill).  With --dup PCT (the
 * run record's dup), op j's value is instead, with probability PCT / 100,
 * a duplicate: one of EX_DUP_CONTENTS fixed contents, its id drawn by Zipf's
 * law (exponent EX_DUP_THETA, id 0 the most frequent) -- the repeated
 * strings, records and buffers of a real program.  A duplicate's header is
 * EX_VALUE_DUP | its content id, and its byte i is a function of (content
 * id, i) only, whatever the op, key, seed or length: so two values of one
 * content placed alike in their lines make byte-identical 64-byte lines
 * (and 256-byte units, where the layout aligns them).  Which ops write
 * duplicates and of what content follows from (the run's seed, j) only,
 * as everything else op j does, so the replay knows.
 *
 * ex_value_content -- op j of run r: EX_DUP_NONE (a fresh value) or a content id.
 * ex_value_head    -- the header op j of run r writes: j, or EX_VALUE_DUP | id.
 * ex_value_write   -- op j's value for key as run r writes it, into dst.
 * ex_value_put     -- the same for op j of c's run log (ex_run_of).
 * ex_fill          -- a fresh value; ex_fill_dup: a duplicate of content id.
 * ex_value_ok      -- is a value intact (either kind)?  Its header into *ver.
 * ex_value_name    -- a header as text: "op J" or "duplicate content ID".
 * ex_dup_parse     -- --dup's value: a decimal 0..100 into *pct; -1 if not.
 *
 * What a workload does with the record and the random word that choose a
 * value's content is not modeled (the core model never sees it, so --dup 0
 * runs exactly as before --dup existed); the value's stores are.
 */
#define EX_DUP_CONTENTS 256u
#define EX_DUP_THETA 0.99
#define EX_DUP_MAX 100u
#define EX_VALUE_DUP ((uint64_t)1 << 63)
#define EX_DUP_NONE UINT64_MAX
uint64_t ex_value_content(const struct ex_run *r, uint64_t j);
uint64_t ex_value_head(const struct ex_run *r, uint64_t j);
void ex_value_write(const struct ex_run *r, void *dst, size_t len, uint64_t j, uint64_t key);
void ex_value_put(struct ex_ctx *c, void *dst, size_t len, uint64_t j, uint64_t key);
void ex_fill(void *dst, size_t len, uint64_t ver, uint64_t key);
void ex_fill_dup(void *dst, size_t len, uint64_t content);
int ex_value_ok(const void *src, size_t len, uint64_t key, uint64_t *ver);
int ex_dup_ok(const void *src, size_t len);
uint64_t ex_value_ver(const void *src);
void ex_value_name(uint64_t head, char *buf, size_t size);
int ex_dup_parse(const char *s, uint64_t *pct);

/* ex_value_is_dup -- is head (a value's first 8 bytes) a duplicate's? */
static inline int ex_value_is_dup(uint64_t head)
{
	return (head & EX_VALUE_DUP) != 0;
}

/*
 * EX_NOT_MODELED -- a function the compiler does not instrument, for
 * harness bookkeeping that must cost the core model nothing (--dup's
 * choices, its note, spm-bench's memory and deduplication statistics).
 * Every access an instrumented program makes outside a pool is core work,
 * charged to the pool it next calls into: work spm-bench does between two
 * measurements too, charged to the next pool before its statistics are
 * reset, whose integrity designs' timing carries it into the measurement.
 * Not inlined, and no interprocedural change either (GCC's noipa), which
 * could move the function's loads of its arguments into its instrumented
 * callers.  Its memcpy and memset calls are still counted (wrapped at the
 * link), and its callers' reloads after the call: call it next to another
 * call.
 */
#if defined(__clang__)
#define EX_NOT_MODELED __attribute__((no_sanitize("thread"), noinline))
#else
#define EX_NOT_MODELED __attribute__((no_sanitize("thread"), noipa))
#endif

/* ex_tx_count -- inside op j's transaction: k = j + 1 (snapshots line 2). */
int ex_tx_count(struct ex_ctx *c, uint64_t j);

/* ex_fail -- record a broken invariant in c->why; returns -1. */
int ex_fail(struct ex_ctx *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
