/*
 * workload.c -- the workload of spm-bptree: the B+ tree of bptree.h under the map workload of
 * ex_map.h (inserts, updates, deletes, lookups of random 64-bit keys).
 *
 *   spm-bptree create POOL "design=sca"
 *   spm-bptree run POOL 20000 --seed 7 --value-size 256
 *   spm-bptree check POOL
 *
 * Each operation that changes the tree is one transaction, which also
 * advances the pool's operation count: after a crash the tree and the count
 * agree, and check compares the tree with a replay of that many operations.
 */
#include <stddef.h>
#include <string.h>

#include "bptree.h"
#include "ex_map.h"

/* The root object: the common head, then the tree's handle in the line of
 * the op count (one snapshot covers both). */
struct root {
	struct ex_head h;
	struct bptree tree;
};
_Static_assert(offsetof(struct root, tree) + sizeof(struct bptree) <= EX_HOT_LINE + SPM_LINE,
	       "the handle shares the op count's line");

/* The B+ tree's operations in the shape the map workload drives. */
static void *get(spm_pool *pool, const void *map, uint64_t key, size_t *len)
{
	return bptree_get(pool, map, key, len);
}

static int put(spm_pool *pool, void *map, uint64_t key, size_t len, void **val)
{
	return bptree_put(pool, map, key, len, val);
}

static int del(spm_pool *pool, void *map, uint64_t key)
{
	return bptree_del(pool, map, key);
}

static int check(spm_pool *pool, const void *map, ex_map_visit_fn visit, void *arg,
		 char *why, size_t why_len)
{
	return bptree_check(pool, map, visit, arg, why, why_len);
}

static uint64_t count(const void *map)
{
	return ((const struct bptree *)map)->count;
}

static const struct ex_map_ops ops = {get, put, del, check, count};

/* op -- operation j of the map workload (ex_map_do) on this B+ tree. */
static int op(struct ex_ctx *c, uint64_t j)
{
	struct root *r = ex_root(c);
	return ex_map_do(c, j, &r->tree, &ops);
}

/* verify -- the B+ tree's invariants, then its content against the model. */
static int verify(struct ex_ctx *c, void *model, uint64_t *items)
{
	struct root *r = ex_root(c);
	return ex_map_verify(c, model, items, &r->tree, &ops);
}

const struct ex_ds ex_ds_bptree = {
	.name = "bptree",
	.magic = "SPMXBPTR",
	.root_size = sizeof(struct root),
	.has_mix = 1,
	.op = op,
	.model_new = ex_map_model_new,
	.model_op = ex_map_model_op,
	.verify = verify,
	.model_free = ex_map_model_free,
};

