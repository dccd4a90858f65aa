/*
 * workload.c -- the workload of spm-queue: the FIFO queue of queue.h under the papers' queue
 * workload: each operation enqueues a value of the run's value size or
 * dequeues the oldest one, at random (an empty queue always enqueues).
 *
 *   spm-queue create POOL "design=sca"
 *   spm-queue run POOL 20000 --seed 7 --value-size 256
 *   spm-queue check POOL
 *
 * Each operation is one transaction that also advances the pool's operation
 * count; check replays the run log into a ring buffer and compares it with
 * the queue, oldest first.
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "ex_main.h"
#include "queue.h"

#define VALUE_KEY 0x51u /* the key the payload bytes derive from, with op j */

struct root {
	struct ex_head h;
	struct queue q; /* in the line of the op count */
};
_Static_assert(offsetof(struct root, q) + sizeof(struct queue) <= EX_HOT_LINE + SPM_LINE,
	       "the handle shares the op count's line");

/* enqueues -- does op j enqueue (given whether the queue is empty)? */
static int enqueues(struct ex_ctx *c, uint64_t j, int empty)
{
	return empty || (ex_rand(c, j, 0) & 1) == 0;
}

static int op(struct ex_ctx *c, uint64_t j)
{
	spm_pool *pool = c->pool;
	struct root *r = ex_root(c);
	size_t len, vs = ex_run_of(c, j)->value_size;
	void *v = queue_front(pool, &r->q, &len);
	int push = enqueues(c, j, v == NULL);
	if (!push)
		memcpy(c->buf, v, len); /* a dequeue hands the value out */

	int rc = spm_tx_begin(pool);
	if (rc)
		return rc;
	if ((rc = ex_tx_count(c, j)))
		goto abort;
	if (push) {
		if ((rc = queue_push(pool, &r->q, vs, &v)))
			goto abort;
		ex_value_put(c, v, vs, j, VALUE_KEY);
	} else if ((rc = queue_pop(pool, &r->q)) < 0) {
		goto abort;
	}
	return spm_tx_commit(pool);
abort:
	spm_tx_abort(pool);
	return rc;
}

/* The model: the ops whose values are queued, oldest first (a ring). */
struct model {
	uint64_t *ver;
	uint64_t cap, first, n; /* cap: a power of two */
};

static void *model_new(struct ex_ctx *c)
{
	(void)c;
	struct model *m = calloc(1, sizeof(*m));
	if (m && !(m->ver = malloc((m->cap = 1024) * sizeof(uint64_t)))) {
		free(m);
		m = NULL;
	}
	return m;
}

static void model_free(void *model)
{
	struct model *m = model;
	free(m->ver);
	free(m);
}

static int model_op(struct ex_ctx *c, void *model, uint64_t j)
{
	struct model *m = model;
	if (!enqueues(c, j, m->n == 0)) {
		m->first = (m->first + 1) & (m->cap - 1);
		m->n--;
		return 0;
	}
	if (m->n == m->cap) {
		uint64_t *v = malloc(2 * m->cap * sizeof(uint64_t));
		if (!v)
			return ex_fail(c, "model: out of memory");
		for (uint64_t i = 0; i < m->n; i++)
			v[i] = m->ver[(m->first + i) & (m->cap - 1)];
		free(m->ver);
		m->ver = v;
		m->cap *= 2;
		m->first = 0;
	}
	m->ver[(m->first + m->n++) & (m->cap - 1)] = j;
	return 0;
}

struct visit_arg {
	struct ex_ctx *c;
	struct model *m; /* NULL: check the queue alone */
	uint64_t prev;   /* op of the previous fresh value */
	uint64_t pos;    /* values seen */
	int fresh;       /* a fresh value seen (prev is set) */
};

/* visit -- the next value from the oldest: intact, younger than the fresh
 * one before (a duplicate of --dup names no op), and the model's. */
static int visit(void *arg, const void *val, size_t len)
{
	struct visit_arg *a = arg;
	struct model *m = a->m;
	uint64_t ver;
	if (!ex_value_ok(val, len, VALUE_KEY, &ver))
		return ex_fail(a->c, "payload: value %" PRIu64 " from the front is corrupt "
			       "(%zu bytes)", a->pos, len);
	if (!ex_value_is_dup(ver)) {
		if (a->fresh && ver <= a->prev)
			return ex_fail(a->c, "FIFO order: op %" PRIu64 " queued behind op %" PRIu64,
				       ver, a->prev);
		a->prev = ver;
		a->fresh = 1;
	}
	a->pos++;
	if (!m) /* the queue alone */
		return 0;
	if (a->pos > m->n)
		return ex_fail(a->c, "content: more than the %" PRIu64 " values of the replay",
			       m->n);
	uint64_t want = m->ver[(m->first + a->pos - 1) & (m->cap - 1)];
	const struct ex_run *run = ex_run_of(a->c, want);
	if (ver != ex_value_head(run, want) || len != run->value_size) {
		char got[48];
		ex_value_name(ver, got, sizeof(got));
		return ex_fail(a->c, "content: value %" PRIu64 " from the front is %s (%zu "
			       "bytes), the replay has op %" PRIu64, a->pos - 1, got, len, want);
	}
	return 0;
}

static int verify(struct ex_ctx *c, void *model, uint64_t *items)
{
	struct root *r = ex_root(c);
	struct visit_arg a = {c, model, 0, 0, 0};
	if (queue_check(c->pool, &r->q, visit, &a, c->why, sizeof(c->why)))
		return -1;
	if (a.m && a.pos != a.m->n)
		return ex_fail(c, "content: %" PRIu64 " values, the replay has %" PRIu64, a.pos,
			       a.m->n);
	*items = a.pos;
	return 0;
}

const struct ex_ds ex_ds_queue = {
	.name = "queue",
	.magic = "SPMXQUEU",
	.root_size = sizeof(struct root),
	.op = op,
	.model_new = model_new,
	.model_op = model_op,
	.verify = verify,
	.model_free = model_free,
};

