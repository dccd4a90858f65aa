/*
 * queue.c -- a persistent FIFO queue (see queue.h).
 */
#include <inttypes.h>
#include <stdio.h>

#include "ex_util.h"
#include "queue.h"

struct node {
	spm_off_t next; /* toward the tail */
	uint64_t len;
	uint8_t val[];
};

static struct node *N(spm_pool *p, spm_off_t off)
{
	return spm_ptr(p, off);
}

int queue_push(spm_pool *pool, struct queue *q, size_t len, void **val)
{
	if (len == 0)
		return SPM_E_INVAL;
	spm_off_t o = spm_tx_alloc(pool, sizeof(struct node) + len);
	if (!o)
		return SPM_E_NOSPACE;
	N(pool, o)->len = len;
	int rc = spm_tx_add(pool, q, sizeof(*q));
	if (rc)
		return rc;
	if (q->tail) {
		struct node *t = N(pool, q->tail);
		if ((rc = spm_tx_add(pool, &t->next, sizeof(t->next))))
			return rc;
		t->next = o;
	} else {
		q->head = o;
	}
	q->tail = o;
	q->count++;
	*val = N(pool, o)->val;
	return 0;
}

void *queue_front(spm_pool *pool, const struct queue *q, size_t *len)
{
	if (!q->head)
		return NULL;
	*len = N(pool, q->head)->len;
	return N(pool, q->head)->val;
}

int queue_pop(spm_pool *pool, struct queue *q)
{
	spm_off_t o = q->head;
	if (!o)
		return 0;
	int rc = spm_tx_add(pool, q, sizeof(*q));
	if (!rc)
		rc = spm_tx_free(pool, o);
	if (rc)
		return rc;
	q->head = N(pool, o)->next;
	if (!q->head)
		q->tail = 0;
	q->count--;
	return 1;
}

#define FAIL(...) (snprintf(why, whylen, __VA_ARGS__), -1)

int queue_check(spm_pool *pool, const struct queue *q, queue_visit_fn visit, void *arg,
		char *why, size_t whylen)
{
	if (!q->head != !q->tail || !q->head != !q->count)
		return FAIL("queue ends: head %#" PRIx64 ", tail %#" PRIx64 ", count %" PRIu64,
			    q->head, q->tail, q->count);
	uint64_t n = 0;
	spm_off_t last = 0;
	for (spm_off_t o = q->head; o; o = N(pool, o)->next) {
		const struct node *x = ex_obj(pool, o, sizeof(*x));
		if (!x || x->len == 0 || x->len > spm_size(pool) ||
		    !ex_obj(pool, o, sizeof(*x) + x->len))
			return FAIL("queue chain: bad node %#" PRIx64 " at position %" PRIu64, o, n);
		if (++n > q->count)
			return FAIL("queue count: more than %" PRIu64 " nodes (a cycle?)", q->count);
		int rc = visit(arg, x->val, x->len);
		if (rc)
			return rc;
		last = o;
	}
	if (n != q->count)
		return FAIL("queue count: %" PRIu64 " nodes, count says %" PRIu64, n, q->count);
	if (last != q->tail)
		return FAIL("queue ends: the chain ends at %#" PRIx64 ", tail is %#" PRIx64, last,
			    q->tail);
	return 0;
}
