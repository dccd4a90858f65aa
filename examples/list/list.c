/*
 * list.c -- a persistent list with CounterAtomic head updates (see list.h).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "ex_util.h"
#include "list.h"

#define SLAB_MIN (64u * 1024u)

struct node {
	spm_off_t next;
	uint64_t len;
	uint8_t val[];
};

/* A slab: this header line, then nodes, each starting on a line of its
 * own (writing a new node must never rewrite a line of a published one). */
struct slab {
	spm_off_t prev; /* the previous slab */
	uint64_t size;  /* bytes, header included */
	uint64_t pad[6];
};

static uint64_t node_size(uint64_t len)
{
	return (sizeof(struct node) + len + SPM_LINE - 1) / SPM_LINE * SPM_LINE;
}

int list_init(spm_pool *pool, struct list *l)
{
	return spm_counter_atomic(pool, &l->head, sizeof(l->head));
}

/* new_slab -- a transaction: a slab of at least need bytes of nodes. */
static int new_slab(spm_pool *pool, struct list *l, uint64_t need, spm_off_t *first)
{
	uint64_t size = sizeof(struct slab) + need;
	if (size < SLAB_MIN)
		size = SLAB_MIN;
	int rc = spm_tx_begin(pool);
	if (rc)
		return rc;
	spm_off_t o = spm_tx_alloc(pool, size);
	if (!o) {
		spm_tx_abort(pool);
		return SPM_E_NOSPACE;
	}
	struct slab *s = spm_ptr(pool, o);
	s->prev = l->slab;
	s->size = size;
	if ((rc = spm_tx_add(pool, &l->slab, sizeof(l->slab)))) {
		spm_tx_abort(pool);
		return rc;
	}
	l->slab = o;
	if ((rc = spm_tx_commit(pool)))
		return rc;
	*first = o + sizeof(struct slab);
	return 0;
}

int list_reserve(spm_pool *pool, struct list *l, size_t len, void **val)
{
	uint64_t need = node_size(len), at = 0;
	if (len == 0)
		return SPM_E_INVAL;
	if (l->slab) {
		/* the next free place: just past the head, if the head is in the
		 * newest slab, else that slab's start */
		struct slab *s = spm_ptr(pool, l->slab);
		uint64_t lo = l->slab + sizeof(*s), hi = l->slab + s->size;
		at = lo;
		if (l->head >= lo && l->head < hi) {
			struct node *h = spm_ptr(pool, l->head);
			at = l->head + node_size(h->len);
		}
		if (at + need > hi)
			at = 0;
	}
	if (!at) {
		int rc = new_slab(pool, l, need, &at);
		if (rc)
			return rc;
	}
	struct node *n = spm_ptr(pool, at);
	n->next = l->head;
	n->len = len;
	*val = n->val;
	return 0;
}

void list_publish(spm_pool *pool, struct list *l, void *val)
{
	struct node *n = (struct node *)((uint8_t *)val - offsetof(struct node, val));
	size_t size = node_size(n->len);
	/* Figure 4 steps 1-2: the node and its counters become durable ... */
	spm_flush(pool, n, size);
	spm_counter_cache_writeback(pool, n, size);
	spm_drain(pool);
	/* ... before step 3, the counter-atomic write of the head */
	l->head = spm_off(pool, n);
	spm_persist(pool, &l->head, sizeof(l->head));
}

int list_front(spm_pool *pool, const struct list *l, const void **val, size_t *len)
{
	*val = NULL;
	if (!l->head)
		return 0;
	const struct node *n = ex_obj(pool, l->head, sizeof(*n));
	if (!n || n->len == 0 || n->len > spm_size(pool) ||
	    !ex_obj(pool, l->head, sizeof(*n) + n->len))
		return -1;
	*val = n->val;
	*len = n->len;
	return 0;
}

#define FAIL(...) (snprintf(why, whylen, __VA_ARGS__), rc = -1)

int list_check(spm_pool *pool, const struct list *l, list_visit_fn visit, void *arg,
	       char *why, size_t whylen)
{
	/* the slabs, newest first */
	struct range {
		uint64_t lo, hi;
	} *slabs = NULL;
	size_t ns = 0, cap = 0;
	int rc = 0;
	for (spm_off_t o = l->slab; o && !rc;) {
		const struct slab *s = ex_obj(pool, o, sizeof(*s));
		if (!s || s->size < SLAB_MIN || !ex_obj(pool, o, s->size)) {
			FAIL("list slabs: bad slab %#" PRIx64, o);
			break;
		}
		if (ns == cap) {
			struct range *r = realloc(slabs, (cap = cap ? 2 * cap : 16) * sizeof(*r));
			if (!r) {
				FAIL("list: out of memory");
				break;
			}
			slabs = r;
		}
		if (ns > spm_size(pool) / SLAB_MIN) {
			FAIL("list slabs: more slabs than fit the pool (a cycle?)");
			break;
		}
		slabs[ns++] = (struct range){o + sizeof(*s), o + s->size};
		o = s->prev;
	}
	/* the nodes, newest first: each inside a slab, never overlapping one
	 * already seen in the same slab (they run downwards within a slab) */
	uint64_t n = 0, limit = spm_size(pool) / SPM_LINE;
	size_t cur = 0;
	uint64_t below = UINT64_MAX;
	for (spm_off_t o = l->head; o && !rc; n++) {
		const struct node *x = ex_obj(pool, o, sizeof(*x));
		if (!x || x->len == 0 || x->len > spm_size(pool)) {
			FAIL("list chain: bad node %#" PRIx64 " at position %" PRIu64, o, n);
			break;
		}
		uint64_t end = o + node_size(x->len);
		while (cur < ns && !(o >= slabs[cur].lo && end <= slabs[cur].hi)) {
			cur++; /* the chain moved on to an older slab */
			below = UINT64_MAX;
		}
		if (cur == ns) {
			FAIL("list chain membership: node %#" PRIx64 " at position %" PRIu64
			     " is in no slab (or out of order)", o, n);
			break;
		}
		if (end > below) {
			FAIL("list chain: node %#" PRIx64 " overlaps a newer one", o);
			break;
		}
		below = o;
		if (n >= limit) {
			FAIL("list chain: longer than the pool allows (a cycle?)");
			break;
		}
		if ((rc = visit(arg, x->val, x->len)))
			break;
		o = x->next;
	}
	free(slabs);
	return rc;
}
