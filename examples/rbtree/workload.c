/*
 * workload.c -- the workload of spm-rbtree: the red-black tree of rbtree.h under the map workload of
 * ex_map.h (inserts, updates, deletes, lookups of random 64-bit keys).
 *
 *   spm-rbtree create POOL "design=sca"
 *   spm-rbtree run POOL 20000 --seed 7 --value-size 256
 *   spm-rbtree check POOL
 *
 * Each operation that changes the tree is one transaction, which also
 * advances the pool's operation count: after a crash the tree and the count
 * agree, and check compares the tree with a replay of that many operations.
 */
#include <stddef.h>
#include <string.h>

#include "rbtree.h"
#include "ex_map.h"

/* The root object: the common head, then the tree's handle in the line of
 * the op count (one snapshot covers both). */
struct root {
	struct ex_head h;
	struct rbtree tree;
};
_Static_assert(offsetof(struct root, tree) + sizeof(struct rbtree) <= EX_HOT_LINE + SPM_LINE,
	       "the handle shares the op count's line");

/* The rbtree's operations in the shape the map workload drives. */
static void *get(spm_pool *pool, const void *map, uint64_t key, size_t *len)
{
	return rbtree_get(pool, map, key, len);
}

static int put(spm_pool *pool, void *map, uint64_t key, size_t len, void **val)
{
	return rbtree_put(pool, map, key, len, val);
}

static int del(spm_pool *pool, void *map, uint64_t key)
{
	return rbtree_del(pool, map, key);
}

static int check(spm_pool *pool, const void *map, ex_map_visit_fn visit, void *arg,
		 char *why, size_t why_len)
{
	return rbtree_check(pool, map, visit, arg, why, why_len);
}

static uint64_t count(const void *map)
{
	return ((const struct rbtree *)map)->count;
}

static const struct ex_map_ops ops = {get, put, del, check, count};

/* op -- operation j of the map workload (ex_map_do) on this rbtree. */
static int op(struct ex_ctx *c, uint64_t j)
{
	struct root *r = ex_root(c);
	return ex_map_do(c, j, &r->tree, &ops);
}

/* verify -- the rbtree's invariants, then its content against the model. */
static int verify(struct ex_ctx *c, void *model, uint64_t *items)
{
	struct root *r = ex_root(c);
	return ex_map_verify(c, model, items, &r->tree, &ops);
}

const struct ex_ds ex_ds_rbtree = {
	.name = "rbtree",
	.magic = "SPMXRBTR",
	.root_size = sizeof(struct root),
	.has_mix = 1,
	.op = op,
	.model_new = ex_map_model_new,
	.model_op = ex_map_model_op,
	.verify = verify,
	.model_free = ex_map_model_free,
};

