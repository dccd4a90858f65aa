/*
 * ex_map.h -- the workload of the map examples (bptree, btree, hashmap,
 * rbtree, skiplist): the operation op j is, its model in plain memory, and
 * the comparison of a pool's map with the model.
 *
 * Op j is drawn from (the seed of its run, j):
 *   insert  key(j) -> a value of the run's value size (an update if present;
 *           with --dup, maybe a duplicate: ex_main.h, "Values")
 *   update  key(j - d), if present: a new value
 *   delete  key(j - d), if present
 *   lookup  key(j - d): read the value, change nothing
 * with 1 <= d <= 1024 and key(i) a random 64-bit word of op i, so that about
 * half of the updates, deletes and lookups find their key.  The mix is 60 /
 * 15 / 15 / 10 percent (--mix mixed) or inserts only (--mix insert, the
 * papers' workloads).  An update or delete that misses changes nothing and,
 * like a lookup, needs no transaction.  Those are uniform keys; a run with
 * Zipfian keys (--keys zipf:THETA, ex_keys.h) draws the key of every op,
 * whatever its kind, from the Zipfian distribution instead, so an insert of
 * a popular key is mostly an update.
 */
#ifndef EX_MAP_H
#define EX_MAP_H 1

#include "ex_main.h"

enum ex_map_kind { EX_MAP_INSERT, EX_MAP_UPDATE, EX_MAP_DELETE, EX_MAP_LOOKUP };

struct ex_map_op {
	enum ex_map_kind kind;
	uint64_t key;
	size_t len; /* value size of an insert or update */
};

/* ex_map_plan -- what op j is. */
void ex_map_plan(struct ex_ctx *c, uint64_t j, struct ex_map_op *op);

/* The model: key -> (op index of its value, value size). */
void *ex_map_model_new(struct ex_ctx *c);
int ex_map_model_op(struct ex_ctx *c, void *model, uint64_t j);
void ex_map_model_free(void *model);

/* ex_map_visit -- one item of the pool's map against the model (each key
 * must be visited once; model NULL: the value must just be intact); 0 or
 * -1 with c->why set. */
int ex_map_visit(struct ex_ctx *c, void *model, uint64_t key, const void *val,
		 size_t len);
/* The operations of a persistent map (btree, rbtree, ...), so that one
 * copy of the map workload drives them all. */
typedef int (*ex_map_visit_fn)(void *arg, uint64_t key, const void *val, size_t len);
struct ex_map_ops {
	void *(*get)(spm_pool *pool, const void *map, uint64_t key, size_t *len);
	int (*put)(spm_pool *pool, void *map, uint64_t key, size_t len, void **val);
	int (*del)(spm_pool *pool, void *map, uint64_t key);
	int (*check)(spm_pool *pool, const void *map, ex_map_visit_fn visit, void *arg,
		     char *why, size_t why_len);
	uint64_t (*count)(const void *map);
};

/* ex_map_do -- op j of the map workload on map: a lookup, or a miss, needs
 * no transaction; a change is one transaction with the op count. */
int ex_map_do(struct ex_ctx *c, uint64_t j, void *map, const struct ex_map_ops *ops);

/* ex_map_verify -- the map's invariants, then its content against the model. */
int ex_map_verify(struct ex_ctx *c, void *model, uint64_t *items, const void *map,
		  const struct ex_map_ops *ops);

/* ex_map_finish -- after the visits: nothing missing, and the map's own
 * item count is right. */
int ex_map_finish(struct ex_ctx *c, void *model, uint64_t count, uint64_t *items);

#endif
