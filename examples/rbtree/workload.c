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

/* op -- operation j of the workload. */
static int op(struct ex_ctx *c, uint64_t j)
{
	spm_pool *pool = c->pool;
	struct root *r = ex_root(c);
	struct ex_map_op m;
	ex_map_plan(c, j, &m);

	if (m.kind != EX_MAP_INSERT) {
		/* a lookup, or an update or delete that may miss: look first */
		size_t len;
		const void *v = rbtree_get(pool, &r->tree, m.key, &len);
		if (!v)
			return 0; /* a miss changes nothing: no transaction */
		if (m.kind == EX_MAP_LOOKUP) {
			memcpy(c->buf, v, len); /* a lookup reads the value */
			return 0;
		}
	}

	int rc = spm_tx_begin(pool);
	if (rc)
		return rc;
	if ((rc = ex_tx_count(c, j)))
		goto abort;
	if (m.kind == EX_MAP_DELETE) {
		if ((rc = rbtree_del(pool, &r->tree, m.key)) < 0)
			goto abort;
	} else {
		void *v;
		if ((rc = rbtree_put(pool, &r->tree, m.key, m.len, &v)))
			goto abort;
		ex_fill(v, m.len, j, m.key); /* the payload: value-size bytes */
	}
	return spm_tx_commit(pool);
abort:
	spm_tx_abort(pool);
	return rc;
}

struct visit_arg {
	struct ex_ctx *c;
	void *model;
};

static int visit(void *arg, uint64_t key, const void *val, size_t len)
{
	struct visit_arg *a = arg;
	return ex_map_visit(a->c, a->model, key, val, len);
}

/* verify -- the tree's invariants, then its content against the model. */
static int verify(struct ex_ctx *c, void *model, uint64_t *items)
{
	struct root *r = ex_root(c);
	struct visit_arg a = {c, model};
	if (rbtree_check(c->pool, &r->tree, visit, &a, c->why, sizeof(c->why)))
		return -1;
	return ex_map_finish(c, model, r->tree.count, items);
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

