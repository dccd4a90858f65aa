/*
 * workload.c -- the workload of spm-skiplist: the skip list of skiplist.h under the map
 * workload of ex_map.h (inserts, updates, deletes, lookups of random 64-bit keys).
 *
 *   spm-skiplist create POOL "design=sca"
 *   spm-skiplist run POOL 20000 --seed 7 --value-size 256 --keys zipf:0.99
 *   spm-skiplist check POOL
 *
 * Each operation that changes the list is one transaction, which also
 * advances the pool's operation count: after a crash the list and the count
 * agree, and check compares the list with a replay of that many operations.
 * The height of a new node comes from a random word of the op that inserts
 * it (stream 3 of ex_rand), so a replay builds the same list.
 */
#include <stddef.h>
#include <string.h>

#include "skiplist.h"
#include "ex_map.h"

/* The root object: the common head, then the list's handle in the line of
 * the op count (one snapshot covers both). */
struct root {
	struct ex_head h;
	struct skiplist list;
};
_Static_assert(offsetof(struct root, list) + sizeof(struct skiplist) <= EX_HOT_LINE + SPM_LINE,
	       "the handle shares the op count's line");

/* What the map workload hands the operations: the list, and the random
 * word of the op for the height of a node it inserts. */
struct map {
	struct skiplist *list;
	uint64_t rnd;
};

/* init -- at create, inside its transaction: an empty list. */
static int init(struct ex_ctx *c)
{
	struct root *r = ex_root(c);
	return skiplist_init(c->pool, &r->list);
}

/* The skip list's operations in the shape the map workload drives. */
static void *get(spm_pool *pool, const void *map, uint64_t key, size_t *len)
{
	return skiplist_get(pool, ((const struct map *)map)->list, key, len);
}

static int put(spm_pool *pool, void *map, uint64_t key, size_t len, void **val)
{
	struct map *m = map;
	return skiplist_put(pool, m->list, key, len, m->rnd, val);
}

static int del(spm_pool *pool, void *map, uint64_t key)
{
	return skiplist_del(pool, ((struct map *)map)->list, key);
}

static int check(spm_pool *pool, const void *map, ex_map_visit_fn visit, void *arg,
		 char *why, size_t why_len)
{
	return skiplist_check(pool, ((const struct map *)map)->list, visit, arg, why, why_len);
}

static uint64_t count(const void *map)
{
	return ((const struct map *)map)->list->count;
}

static const struct ex_map_ops ops = {get, put, del, check, count};

/* op -- operation j of the map workload (ex_map_do) on this skip list. */
static int op(struct ex_ctx *c, uint64_t j)
{
	struct root *r = ex_root(c);
	struct map m = {&r->list, ex_rand(c, j, 3)};
	return ex_map_do(c, j, &m, &ops);
}

/* verify -- the skip list's invariants, then its content against the model. */
static int verify(struct ex_ctx *c, void *model, uint64_t *items)
{
	struct root *r = ex_root(c);
	struct map m = {&r->list, 0};
	return ex_map_verify(c, model, items, &m, &ops);
}

const struct ex_ds ex_ds_skiplist = {
	.name = "skiplist",
	.magic = "SPMXSKIP",
	.root_size = sizeof(struct root),
	.has_mix = 1,
	.init = init,
	.op = op,
	.model_new = ex_map_model_new,
	.model_op = ex_map_model_op,
	.verify = verify,
	.model_free = ex_map_model_free,
};
