/* pmdk_queue.c -- the queue workload on libpmemobj: a FIFO singly linked list of nodes that
 * carry their value inline; op j enqueues a value-size value or dequeues the oldest, at
 * random as spm-queue's op j does (an empty queue always enqueues), in one transaction. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "pmdk_internal.h"

#define VALUE_KEY 0x51u /* the key payloads derive from, with op j (as examples/queue) */

struct node {
	PMEMoid next; /* toward the tail */
	uint64_t len;
	uint8_t val[];
};

struct queue {
	PMEMoid head; /* oldest node, null if empty */
	PMEMoid tail; /* newest node, null if empty */
	uint64_t count;
};

struct root {
	uint64_t ops;
	struct queue q;
};
_Static_assert(sizeof(struct root) <= PMDK_LINE, "the root is one line");

static struct node *N(PMEMoid o)
{
	return pmemobj_direct(o);
}

/* push -- in a transaction: append a node of len bytes; its value, to be filled. */
static void *push(struct queue *q, size_t len)
{
	PMEMoid o = pmemobj_tx_alloc(sizeof(struct node) + len, PMDK_TYPE);
	struct node *n = N(o);
	n->next = OID_NULL;
	n->len = len;
	pmemobj_tx_add_range_direct(q, sizeof(*q));
	if (OID_IS_NULL(q->tail)) {
		q->head = o;
	} else {
		struct node *t = N(q->tail);
		pmemobj_tx_add_range_direct(&t->next, sizeof(t->next));
		t->next = o;
	}
	q->tail = o;
	q->count++;
	return n->val;
}

/* pop -- in a transaction: remove the oldest node (the queue is not empty). */
static void pop(struct queue *q)
{
	PMEMoid o = q->head;
	pmemobj_tx_add_range_direct(q, sizeof(*q));
	q->head = N(o)->next;
	if (OID_IS_NULL(q->head))
		q->tail = OID_NULL;
	q->count--;
	pmemobj_tx_free(o);
}

/* enqueues -- does op j enqueue (given whether the queue is empty)? */
static int enqueues(const struct pmdk_ctx *c, uint64_t j, int empty)
{
	return empty || (pmdk_rand(c, j, 0) & 1) == 0;
}

/* op -- in its transaction: op j enqueues a value or dequeues (reads out) the oldest. */
static void op(struct pmdk_ctx *c, uint64_t j)
{
	struct root *r = c->root;
	pmdk_tx_count(c, j);
	if (enqueues(c, j, OID_IS_NULL(r->q.head))) {
		pmdk_fill(push(&r->q, c->value_size), c->value_size, j, VALUE_KEY);
		return;
	}
	const struct node *f = N(r->q.head);
	memcpy(c->buf, f->val, f->len); /* a dequeue hands the value out */
	pop(&r->q);
}

static uint64_t items(const struct pmdk_ctx *c)
{
	return ((const struct root *)c->root)->q.count;
}

/* replay -- the ops whose values the queue holds, oldest first (*n of them). */
static uint64_t *replay(const struct pmdk_ctx *c, uint64_t *n)
{
	uint64_t *enq = malloc((c->ops + 1) * sizeof(*enq)), first = 0, last = 0;
	for (uint64_t j = 0; enq && j < c->ops; j++) {
		if (enqueues(c, j, first == last))
			enq[last++] = j;
		else
			first++;
	}
	*n = last - first;
	if (enq)
		memmove(enq, enq + first, *n * sizeof(*enq));
	return enq;
}

/* walk -- the chain from head: intact values, in the replay's order, ending at tail. */
static int walk(struct pmdk_ctx *c, const struct queue *q, const uint64_t *want, uint64_t n)
{
	uint64_t pos = 0, ver;
	PMEMoid last = OID_NULL;
	for (PMEMoid o = q->head; !OID_IS_NULL(o); o = N(o)->next, pos++) {
		const struct node *x = pmdk_obj(c, o, sizeof(*x));
		if (!x || x->len != c->value_size || !pmdk_obj(c, o, sizeof(*x) + x->len))
			return pmdk_fail(c, "queue chain: bad node %#" PRIx64 " at position %" PRIu64,
					 o.off, pos);
		if (pos >= n)
			return pmdk_fail(c, "queue count: more than the replay's %" PRIu64 " nodes", n);
		if (!pmdk_value_ok(x->val, x->len, VALUE_KEY, &ver))
			return pmdk_fail(c, "payload: value %" PRIu64 " from the front is corrupt", pos);
		if (ver != want[pos])
			return pmdk_fail(c, "content: value %" PRIu64 " from the front is op %" PRIu64
					 ", the replay has op %" PRIu64, pos, ver, want[pos]);
		last = o;
	}
	if (pos != n || q->count != n)
		return pmdk_fail(c, "queue count: %" PRIu64 " nodes, count says %" PRIu64
				 ", the replay %" PRIu64, pos, q->count, n);
	if (!OID_EQUALS(last, q->tail))
		return pmdk_fail(c, "queue ends: the chain ends at %#" PRIx64 ", tail is %#" PRIx64,
				 last.off, q->tail.off);
	return 0;
}

static int check(struct pmdk_ctx *c, uint64_t *items_out)
{
	const struct root *r = c->root;
	uint64_t n;
	uint64_t *want = replay(c, &n);
	if (!want)
		return pmdk_fail(c, "out of memory");
	int rc = walk(c, &r->q, want, n);
	free(want);
	*items_out = n;
	return rc;
}

const struct pmdk_wl pmdk_queue_wl = {
	.name = "queue",
	.root_size = sizeof(struct root),
	.op = op,
	.items = items,
	.check = check,
};
