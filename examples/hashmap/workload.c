/*
 * workload.c -- the workload of spm-hashmap: the hash table of hashmap.h under the map workload of
 * ex_map.h (inserts, updates, deletes, lookups of random 64-bit keys).
 *
 *   spm-hashmap create POOL "design=sca"
 *   spm-hashmap run POOL 20000 --seed 7 --value-size 256
 *   spm-hashmap check POOL
 *
 * Each operation that changes the table is one transaction, which also
 * advances the pool's operation count: after a crash the table and the count
 * agree, and check compares the table with a replay of that many operations.
 */
#include <stddef.h>
#include <string.h>

#include "hashmap.h"
#include "ex_map.h"

/* The root object: the common head, then the table's handle in the line of
 * the op count (one snapshot covers both). */
struct root {
	struct ex_head h;
	struct hashmap map;
};
_Static_assert(offsetof(struct root, map) + sizeof(struct hashmap) <= EX_HOT_LINE + SPM_LINE,
	       "the handle shares the op count's line");

/* init -- at create, inside its transaction: an empty table. */
static int init(struct ex_ctx *c)
{
	struct root *r = ex_root(c);
	return hashmap_init(c->pool, &r->map);
}

/* The hashmap's operations in the shape the map workload drives. */
static void *get(spm_pool *pool, const void *map, uint64_t key, size_t *len)
{
	return hashmap_get(pool, map, key, len);
}

static int put(spm_pool *pool, void *map, uint64_t key, size_t len, void **val)
{
	return hashmap_put(pool, map, key, len, val);
}

static int del(spm_pool *pool, void *map, uint64_t key)
{
	return hashmap_del(pool, map, key);
}

static int check(spm_pool *pool, const void *map, ex_map_visit_fn visit, void *arg,
		 char *why, size_t why_len)
{
	return hashmap_check(pool, map, visit, arg, why, why_len);
}

static uint64_t count(const void *map)
{
	return ((const struct hashmap *)map)->count;
}

static const struct ex_map_ops ops = {get, put, del, check, count};

/* op -- operation j of the map workload (ex_map_do) on this hashmap. */
static int op(struct ex_ctx *c, uint64_t j)
{
	struct root *r = ex_root(c);
	return ex_map_do(c, j, &r->map, &ops);
}

/* verify -- the hashmap's invariants, then its content against the model. */
static int verify(struct ex_ctx *c, void *model, uint64_t *items)
{
	struct root *r = ex_root(c);
	return ex_map_verify(c, model, items, &r->map, &ops);
}

const struct ex_ds ex_ds_hashmap = {
	.name = "hashmap",
	.magic = "SPMXHASH",
	.root_size = sizeof(struct root),
	.has_mix = 1,
	.init = init,
	.op = op,
	.model_new = ex_map_model_new,
	.model_op = ex_map_model_op,
	.verify = verify,
	.model_free = ex_map_model_free,
};

