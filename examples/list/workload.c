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
 * A duplicated value (--dup) names its content, not its op: then the count
 * is that of the newest fresh value, p nodes from the head, + 1 + p (or,
 * with no fresh value, the number of nodes).
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
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

/* A walk from the head to the newest fresh value (--dup). */
struct fresh_arg {
	uint64_t pos;  /* nodes before it */
	uint64_t head; /* its header: its op index */
	int found;
};

static int find_fresh(void *arg, const void *val, size_t len)
{
	struct fresh_arg *a = arg;
	(void)len;
	a->head = ex_value_ver(val);
	if (!ex_value_is_dup(a->head))
		return a->found = 1; /* stops the walk */
	a->pos++;
	return 0;
}

/* ops_done -- k = the op index in the head value, + 1; under a duplicate,
 * that of the newest fresh value + 1 + the nodes before it. */
static int ops_done(struct ex_ctx *c, uint64_t *k)
{
	struct root *r = ex_root(c);
	const void *v;
	size_t len;
	if (list_front(c->pool, &r->list, &v, &len) ||
	    (v && (len < EX_VALUE_MIN || len > EX_VALUE_MAX)))
		return ex_fail(c, "list head: bad pointer %#" PRIx64, r->list.head);
	/* the head read once, as before --dup: v and its header are read by
	 * the modeled program (front: v's copy in a register) */
	const void *front = v;
	uint64_t head = front ? ex_value_ver(front) : 0;
	*k = front ? head + 1 : 0;
	if (!front || !ex_value_is_dup(head))
		return 0;
	struct fresh_arg a = {0, 0, 0};
	int rc = list_check(c->pool, &r->list, find_fresh, &a, c->why, sizeof(c->why));
	if (rc < 0)
		return -1;
	*k = a.found ? a.head + 1 + a.pos : a.pos;
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
	ex_value_put(c, v, len, j, VALUE_KEY);
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
	uint64_t next;     /* the op the next value must come from, once known */
	int known;         /* next is known: from the model, or from a fresh value
			    * (the list alone, under duplicates of --dup) */
};

/* visit -- the pos-th value from the head: intact, from the op before the
 * previous value's (ops k-1, k-2, ..., 0), of its run's value size.  The
 * list alone: a duplicate (--dup) names no op, so only the fresh values'
 * ops are checked, each its position's. */
static int visit(void *arg, const void *val, size_t len)
{
	struct visit_arg *a = arg;
	uint64_t ver;
	if (!ex_value_ok(val, len, VALUE_KEY, &ver))
		return ex_fail(a->c, "payload: value %" PRIu64 " from the head is corrupt "
			       "(%zu bytes)", a->pos, len);
	if (a->pos == 0 && a->k)
		a->next = *a->k - 1, a->known = 1;
	if (!a->known && !ex_value_is_dup(ver))
		a->next = ver, a->known = 1;
	if (a->known) {
		const struct ex_run *run = a->k ? ex_run_of(a->c, a->next) : NULL;
		uint64_t want = run ? ex_value_head(run, a->next) : a->next;
		if (a->next == UINT64_MAX || ((run || !ex_value_is_dup(ver)) && ver != want)) {
			char got[48], dup[48], exp[64] = "";
			ex_value_name(ver, got, sizeof(got));
			if (ex_value_is_dup(want)) {
				ex_value_name(want, dup, sizeof(dup));
				snprintf(exp, sizeof(exp), " (%s)", dup);
			}
			return ex_fail(a->c, "order: value %" PRIu64 " from the head is %s, "
				       "expected op %" PRIu64 "%s", a->pos, got, a->next, exp);
		}
		if (run && len != run->value_size)
			return ex_fail(a->c, "content: op %" PRIu64 " has a %zu-byte value, its "
				       "run wrote %" PRIu64, a->next, len, run->value_size);
		a->next--;
	}
	a->pos++;
	return 0;
}

/* verify -- the list holds the values of ops k-1 .. 0, newest first. */
static int verify(struct ex_ctx *c, void *model, uint64_t *items)
{
	struct root *r = ex_root(c);
	struct visit_arg a = {c, model, 0, 0, 0};
	if (list_check(c->pool, &r->list, visit, &a, c->why, sizeof(c->why)))
		return -1;
	if (a.pos && a.known && a.next != UINT64_MAX)
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

