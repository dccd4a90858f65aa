/*
 * workload.c -- the workload of spm-list: the list of list.h, the counter-atomicity paper's
 * Figure 4.  Every operation inserts a node holding a value of the run's
 * value size at the head, without a transaction: the node is written,
 * persisted and its counters written back, then the CounterAtomic head is
 * pointed at it.
 *
 *   spm-list create POOL "design=sca"
 *   spm-list run POOL 20000 --seed 7 --value-size 256
 *   spm-list check POOL
 *
 * There is no operation counter to update atomically with the head: the
 * value of op j starts with j, so the count of operations done is the head
 * value's op index + 1, always consistent with the list.  check verifies that
 * the list holds exactly the values of ops k-1, k-2, ..., 0, each intact.
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>

#include "ex_main.h"
#include "list.h"

#define VALUE_KEY 0x1157u /* the key the payload bytes derive from, with op j */

struct root {
	struct ex_head h;
	struct list list; /* its own lines: the head line is CounterAtomic */
};
_Static_assert(offsetof(struct root, list) % SPM_LINE == 0, "the list is line aligned");

static int init(struct ex_ctx *c)
{
	struct root *r = ex_root(c);
	return list_init(c->pool, &r->list);
}

/* ops_done -- k = the op index in the head value, + 1. */
static int ops_done(struct ex_ctx *c, uint64_t *k)
{
	struct root *r = ex_root(c);
	const void *v;
	size_t len;
	if (list_front(c->pool, &r->list, &v, &len) ||
	    (v && (len < EX_VALUE_MIN || len > EX_VALUE_MAX)))
		return ex_fail(c, "list head: bad pointer %#" PRIx64, r->list.head);
	*k = v ? ex_value_ver(v) + 1 : 0;
	return 0;
}

static int op(struct ex_ctx *c, uint64_t j)
{
	struct root *r = ex_root(c);
	size_t len = ex_run_of(c, j)->value_size;
	void *v;
	int rc = list_reserve(c->pool, &r->list, len, &v);
	if (rc)
		return rc;
	ex_fill(v, len, j, VALUE_KEY);
	list_publish(c->pool, &r->list, v);
	return 0;
}

/* The model is just the number of ops: op j inserts the value of op j. */
static void *model_new(struct ex_ctx *c)
{
	(void)c;
	return calloc(1, sizeof(uint64_t));
}

static int model_op(struct ex_ctx *c, void *model, uint64_t j)
{
	(void)c;
	*(uint64_t *)model = j + 1;
	return 0;
}

struct visit_arg {
	struct ex_ctx *c;
	const uint64_t *k; /* the model: ops replayed; NULL: the list alone */
	uint64_t pos;      /* values seen */
	uint64_t next;     /* the op the next value must come from */
};

/* visit -- the pos-th value from the head: intact, from the op before the
 * previous value's (ops k-1, k-2, ..., 0), of its run's value size. */
static int visit(void *arg, const void *val, size_t len)
{
	struct visit_arg *a = arg;
	uint64_t ver;
	if (!ex_value_ok(val, len, VALUE_KEY, &ver))
		return ex_fail(a->c, "payload: value %" PRIu64 " from the head is corrupt "
			       "(%zu bytes)", a->pos, len);
	if (a->pos == 0)
		a->next = a->k ? *a->k - 1 : ver;
	if (ver != a->next || a->next == UINT64_MAX)
		return ex_fail(a->c, "order: value %" PRIu64 " from the head is op %" PRIu64
			       ", expected op %" PRIu64, a->pos, ver, a->next);
	if (a->k && len != ex_run_of(a->c, ver)->value_size)
		return ex_fail(a->c, "content: op %" PRIu64 " has a %zu-byte value, its run "
			       "wrote %" PRIu64, ver, len, ex_run_of(a->c, ver)->value_size);
	a->pos++;
	a->next--;
	return 0;
}

/* verify -- the list holds the values of ops k-1 .. 0, newest first. */
static int verify(struct ex_ctx *c, void *model, uint64_t *items)
{
	struct root *r = ex_root(c);
	struct visit_arg a = {c, model, 0, 0};
	if (list_check(c->pool, &r->list, visit, &a, c->why, sizeof(c->why)))
		return -1;
	if (a.pos && a.next != UINT64_MAX)
		return ex_fail(c, "order: the oldest value is op %" PRIu64 ", not op 0",
			       a.next + 1);
	if (a.k && a.pos != *a.k)
		return ex_fail(c, "content: %" PRIu64 " values, the replay has %" PRIu64, a.pos,
			       *a.k);
	*items = a.pos;
	return 0;
}

static void model_free(void *model)
{
	free(model);
}

const struct ex_ds ex_ds_list = {
	.name = "list",
	.magic = "SPMXLIST",
	.root_size = sizeof(struct root),
	.init = init,
	.op = op,
	.ops_done = ops_done,
	.model_new = model_new,
	.model_op = model_op,
	.verify = verify,
	.model_free = model_free,
};

