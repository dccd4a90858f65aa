/*
 * btree.c -- a persistent B-tree of minimum degree T (CLRS chapter 18):
 * one-pass insertion with preemptive splits, one-pass deletion with
 * preemptive merges and borrows.  Every change to a node is preceded by a
 * snapshot of exactly the lines it touches (log_node); new nodes and values
 * come from spm_tx_alloc and need none.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "btree.h"
#include "ex_util.h"

#define T 8               /* minimum degree */
#define MAXK (2 * T - 1)  /* items per node */

struct item {
	uint64_t key;
	spm_off_t val;
	uint64_t len;
};

struct node {
	uint32_t n;    /* items in use */
	uint32_t leaf; /* 1: no children */
	struct item it[MAXK];
	spm_off_t child[MAXK + 1];
};

static struct node *N(spm_pool *p, spm_off_t off)
{
	return spm_ptr(p, off);
}

/*
 * log_node -- snapshot the parts of x about to change: its header (n) if
 * hdr, items [i0, i1), children [c0, c1).  Empty ranges are skipped.
 */
static int log_node(spm_pool *p, struct node *x, int hdr, unsigned i0, unsigned i1,
		    unsigned c0, unsigned c1)
{
	struct ex_range r[3] = {
		{x, hdr ? sizeof(x->n) : 0},
		{&x->it[i0], i1 > i0 ? (i1 - i0) * sizeof(struct item) : 0},
		{&x->child[c0], !x->leaf && c1 > c0 ? (c1 - c0) * sizeof(spm_off_t) : 0},
	};
	return ex_tx_add_ranges(p, r, 3);
}

/* lower -- the first i with x->it[i].key >= key. */
static unsigned lower(const struct node *x, uint64_t key)
{
	unsigned lo = 0, hi = x->n;
	while (lo < hi) {
		unsigned mid = (lo + hi) / 2;
		if (x->it[mid].key < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* find -- the item of key (and its node in *at), or NULL. */
static struct item *find(spm_pool *p, const struct btree *t, uint64_t key,
			 struct node **at)
{
	for (spm_off_t o = t->root; o;) {
		struct node *x = N(p, o);
		unsigned i = lower(x, key);
		if (i < x->n && x->it[i].key == key) {
			*at = x;
			return &x->it[i];
		}
		if (x->leaf)
			break;
		o = x->child[i];
	}
	return NULL;
}

void *btree_get(spm_pool *pool, const struct btree *t, uint64_t key, size_t *len)
{
	struct node *x;
	struct item *it = find(pool, t, key, &x);
	if (!it)
		return NULL;
	*len = it->len;
	return spm_ptr(pool, it->val);
}

/* new_node -- an empty node, owned by the transaction. */
static struct node *new_node(spm_pool *p, uint32_t leaf, spm_off_t *off)
{
	*off = spm_tx_alloc(p, sizeof(struct node));
	if (!*off)
		return NULL;
	struct node *x = N(p, *off);
	x->leaf = leaf;
	return x;
}

/*
 * split_child -- x->child[i] is full: its upper T-1 items go to a new node,
 * its median moves up into x (x is not full).  Changes: the child's n,
 * x's items [i, n] and children [i+1, n+1].
 */
static int split_child(spm_pool *p, struct node *x, unsigned i)
{
	struct node *y = N(p, x->child[i]);
	spm_off_t zo;
	struct node *z = new_node(p, y->leaf, &zo);
	if (!z)
		return SPM_E_NOSPACE;
	z->n = T - 1;
	memcpy(z->it, &y->it[T], (T - 1) * sizeof(struct item));
	if (!y->leaf)
		memcpy(z->child, &y->child[T], T * sizeof(spm_off_t));
	int rc = log_node(p, y, 1, 0, 0, 0, 0);
	if (!rc)
		rc = log_node(p, x, 1, i, x->n + 1, i + 1, x->n + 2);
	if (rc)
		return rc;
	y->n = T - 1; /* its upper items stay behind as garbage: no write */
	memmove(&x->it[i + 1], &x->it[i], (x->n - i) * sizeof(struct item));
	memmove(&x->child[i + 2], &x->child[i + 1], (x->n - i) * sizeof(spm_off_t));
	x->it[i] = y->it[T - 1];
	x->child[i + 1] = zo;
	x->n++;
	return 0;
}

/* insert_nonfull -- put an absent key below x (not full). */
static int insert_nonfull(spm_pool *p, struct node *x, struct item item)
{
	while (!x->leaf) {
		unsigned i = lower(x, item.key);
		if (N(p, x->child[i])->n == MAXK) {
			int rc = split_child(p, x, i);
			if (rc)
				return rc;
			if (item.key > x->it[i].key)
				i++;
		}
		x = N(p, x->child[i]);
	}
	unsigned i = lower(x, item.key);
	int rc = log_node(p, x, 1, i, x->n + 1, 0, 0);
	if (rc)
		return rc;
	memmove(&x->it[i + 1], &x->it[i], (x->n - i) * sizeof(struct item));
	x->it[i] = item;
	x->n++;
	return 0;
}

int btree_put(spm_pool *pool, struct btree *t, uint64_t key, size_t len, void **val)
{
	if (len == 0)
		return SPM_E_INVAL;
	struct node *x;
	struct item *it = find(pool, t, key, &x);
	int rc;
	if (it && it->len == len) {
		/* same size: overwrite in place */
		void *v = spm_ptr(pool, it->val);
		if ((rc = spm_tx_add(pool, v, len)))
			return rc;
		*val = v;
		return 0;
	}
	spm_off_t v = spm_tx_alloc(pool, len);
	if (!v)
		return SPM_E_NOSPACE;
	*val = spm_ptr(pool, v);
	if (it) {
		/* another size: a new value object */
		if ((rc = spm_tx_free(pool, it->val)) ||
		    (rc = spm_tx_add(pool, it, sizeof(*it))))
			return rc;
		it->val = v;
		it->len = len;
		return 0;
	}
	if ((rc = spm_tx_add(pool, t, sizeof(*t))))
		return rc;
	if (!t->root) {
		if (!new_node(pool, 1, &t->root))
			return SPM_E_NOSPACE;
	} else if (N(pool, t->root)->n == MAXK) {
		/* a full root: the tree grows by one level */
		spm_off_t so;
		struct node *s = new_node(pool, 0, &so);
		if (!s)
			return SPM_E_NOSPACE;
		s->child[0] = t->root;
		t->root = so;
		if ((rc = split_child(pool, s, 0)))
			return rc;
	}
	if ((rc = insert_nonfull(pool, N(pool, t->root),
				 (struct item){key, v, len})))
		return rc;
	t->count++;
	return 0;
}

/*
 * merge -- x->child[i], the item x->it[i] and x->child[i+1] become one node
 * (x->child[i]); the right node is freed.  Both children are small enough.
 */
static int merge(spm_pool *p, struct node *x, unsigned i)
{
	struct node *y = N(p, x->child[i]), *z = N(p, x->child[i + 1]);
	unsigned yn = y->n, zn = z->n;
	int rc = log_node(p, y, 1, yn, yn + 1 + zn, yn + 1, yn + 2 + zn);
	if (!rc)
		rc = log_node(p, x, 1, i, x->n - 1, i + 1, x->n);
	if (!rc)
		rc = spm_tx_free(p, x->child[i + 1]);
	if (rc)
		return rc;
	y->it[yn] = x->it[i];
	memcpy(&y->it[yn + 1], z->it, zn * sizeof(struct item));
	if (!y->leaf)
		memcpy(&y->child[yn + 1], z->child, (zn + 1) * sizeof(spm_off_t));
	y->n = yn + 1 + zn;
	memmove(&x->it[i], &x->it[i + 1], (x->n - 1 - i) * sizeof(struct item));
	memmove(&x->child[i + 1], &x->child[i + 2], (x->n - 1 - i) * sizeof(spm_off_t));
	x->n--;
	return 0;
}

/* borrow_left -- x->child[i] takes an item through x from its left sibling. */
static int borrow_left(spm_pool *p, struct node *x, unsigned i)
{
	struct node *c = N(p, x->child[i]), *l = N(p, x->child[i - 1]);
	unsigned cn = c->n, ln = l->n;
	int rc = log_node(p, c, 1, 0, cn + 1, 0, cn + 2);
	if (!rc)
		rc = log_node(p, x, 0, i - 1, i, 0, 0);
	if (!rc)
		rc = log_node(p, l, 1, 0, 0, 0, 0);
	if (rc)
		return rc;
	memmove(&c->it[1], &c->it[0], cn * sizeof(struct item));
	c->it[0] = x->it[i - 1];
	if (!c->leaf) {
		memmove(&c->child[1], &c->child[0], (cn + 1) * sizeof(spm_off_t));
		c->child[0] = l->child[ln];
	}
	c->n++;
	x->it[i - 1] = l->it[ln - 1];
	l->n--;
	return 0;
}

/* borrow_right -- x->child[i] takes an item through x from its right sibling. */
static int borrow_right(spm_pool *p, struct node *x, unsigned i)
{
	struct node *c = N(p, x->child[i]), *r = N(p, x->child[i + 1]);
	unsigned cn = c->n, rn = r->n;
	int rc = log_node(p, c, 1, cn, cn + 1, cn + 1, cn + 2);
	if (!rc)
		rc = log_node(p, x, 0, i, i + 1, 0, 0);
	if (!rc)
		rc = log_node(p, r, 1, 0, rn - 1, 0, rn);
	if (rc)
		return rc;
	c->it[cn] = x->it[i];
	if (!c->leaf)
		c->child[cn + 1] = r->child[0];
	c->n++;
	x->it[i] = r->it[0];
	memmove(&r->it[0], &r->it[1], (rn - 1) * sizeof(struct item));
	if (!r->leaf)
		memmove(&r->child[0], &r->child[1], rn * sizeof(spm_off_t));
	r->n--;
	return 0;
}

/*
 * remove_key -- remove key from the subtree of x, whose root has at least T
 * items (or is the tree's root).  Each child we descend into is first given
 * T items, so the leaf that finally loses one never underflows.  *val gets
 * the value of the removed item.
 */
static int remove_key(spm_pool *p, struct node *x, uint64_t key, spm_off_t *val)
{
	spm_off_t moved;
	int rc;
	for (;;) {
		unsigned i = lower(x, key);
		int found = i < x->n && x->it[i].key == key;
		if (x->leaf) {
			if (!found)
				return 0;
			if ((rc = log_node(p, x, 1, i, x->n - 1, 0, 0)))
				return rc;
			*val = x->it[i].val;
			memmove(&x->it[i], &x->it[i + 1], (x->n - 1 - i) * sizeof(struct item));
			x->n--;
			return 1;
		}
		struct node *y = N(p, x->child[i]);
		if (found) {
			struct node *z = N(p, x->child[i + 1]), *d;
			if (y->n >= T || z->n >= T) {
				/* replace the item by its predecessor (successor),
				 * then remove that one from the child */
				struct item rep;
				if (y->n >= T) {
					for (d = y; !d->leaf; d = N(p, d->child[d->n]))
						;
					rep = d->it[d->n - 1];
				} else {
					for (d = z; !d->leaf; d = N(p, d->child[0]))
						;
					rep = d->it[0];
					y = z;
				}
				if ((rc = log_node(p, x, 0, i, i + 1, 0, 0)))
					return rc;
				*val = x->it[i].val;
				x->it[i] = rep;
				x = y;
				key = rep.key;
				val = &moved; /* that value lives on in x */
				continue;
			}
			/* both children are minimal: merge them around the key */
			if ((rc = merge(p, x, i)))
				return rc;
			x = y;
			continue;
		}
		if (y->n == T - 1) {
			/* give the child T items before descending */
			if (i > 0 && N(p, x->child[i - 1])->n >= T)
				rc = borrow_left(p, x, i);
			else if (i < x->n && N(p, x->child[i + 1])->n >= T)
				rc = borrow_right(p, x, i);
			else if (i < x->n)
				rc = merge(p, x, i);
			else
				rc = merge(p, x, --i);
			if (rc)
				return rc;
		}
		x = N(p, x->child[i]);
	}
}

int btree_del(spm_pool *pool, struct btree *t, uint64_t key)
{
	struct node *x;
	if (!find(pool, t, key, &x))
		return 0;
	spm_off_t val = 0;
	int rc = spm_tx_add(pool, t, sizeof(*t));
	if (!rc)
		rc = remove_key(pool, N(pool, t->root), key, &val);
	if (rc < 0)
		return rc;
	struct node *r = N(pool, t->root);
	if (r->n == 0) {
		/* the root emptied: the tree shrinks by one level (or is empty) */
		spm_off_t old = t->root;
		t->root = r->leaf ? 0 : r->child[0];
		int frc = spm_tx_free(pool, old);
		if (frc)
			return frc;
	}
	if (rc == 1) {
		t->count--;
		int frc = spm_tx_free(pool, val);
		if (frc)
			return frc;
	}
	return rc;
}

/* ---- check ---------------------------------------------------------------- */

struct chk {
	spm_pool *p;
	btree_visit_fn visit;
	void *arg;
	char *why;
	size_t whylen;
	uint64_t items, limit;
	int leaf_depth;
};

#define FAIL(k, ...) (snprintf((k)->why, (k)->whylen, __VA_ARGS__), -1)

/* chk_node -- the subtree at o, all of whose keys lie in (lo, hi). */
static int chk_node(struct chk *k, spm_off_t o, int depth, int root, int has_lo,
		    uint64_t lo, int has_hi, uint64_t hi)
{
	if (depth > 64)
		return FAIL(k, "btree balance: deeper than 64 levels (a cycle?)");
	const struct node *x = ex_obj(k->p, o, sizeof(*x));
	if (!x)
		return FAIL(k, "btree node: bad pointer %#" PRIx64 " at depth %d", o, depth);
	if (x->leaf > 1)
		return FAIL(k, "btree node: %#" PRIx64 " has leaf flag %u", o, x->leaf);
	if (x->n > MAXK || x->n < (root ? 1u : T - 1u))
		return FAIL(k, "btree fill: node %#" PRIx64 " holds %u items (%u..%u)", o,
			    x->n, root ? 1u : T - 1u, MAXK);
	if (x->leaf) {
		if (k->leaf_depth < 0)
			k->leaf_depth = depth;
		else if (k->leaf_depth != depth)
			return FAIL(k, "btree balance: leaves at depths %d and %d",
				    k->leaf_depth, depth);
	}
	for (unsigned i = 0; i <= x->n; i++) {
		uint64_t clo = i ? x->it[i - 1].key : lo, chi = i < x->n ? x->it[i].key : hi;
		int chas_lo = i ? 1 : has_lo, chas_hi = i < x->n ? 1 : has_hi;
		if (!x->leaf) {
			int rc = chk_node(k, x->child[i], depth + 1, 0, chas_lo, clo, chas_hi, chi);
			if (rc)
				return rc;
		}
		if (i == x->n)
			break;
		const struct item *it = &x->it[i];
		if ((has_lo || i) && it->key <= clo)
			return FAIL(k, "btree order: key %#" PRIx64 " after %#" PRIx64
				    " in node %#" PRIx64, it->key, clo, o);
		if (has_hi && it->key >= hi)
			return FAIL(k, "btree order: key %#" PRIx64 " not below %#" PRIx64
				    " in node %#" PRIx64, it->key, hi, o);
		if (++k->items > k->limit)
			return FAIL(k, "btree count: more than %" PRIu64 " items", k->limit);
		const void *v = ex_obj(k->p, it->val, it->len);
		if (!v)
			return FAIL(k, "btree value: key %#" PRIx64 " has a bad value %#" PRIx64
				    " of %" PRIu64 " bytes", it->key, it->val, it->len);
		int rc = k->visit(k->arg, it->key, v, it->len);
		if (rc)
			return rc;
	}
	return 0;
}

int btree_check(spm_pool *pool, const struct btree *t, btree_visit_fn visit,
		void *arg, char *why, size_t whylen)
{
	struct chk k = {pool, visit, arg, why, whylen, 0, t->count, -1};
	if (!t->root)
		return t->count ? FAIL(&k, "btree count: empty tree, count %" PRIu64,
				       t->count)
				: 0;
	int rc = chk_node(&k, t->root, 0, 1, 0, 0, 0, 0);
	if (!rc && k.items != t->count)
		return FAIL(&k, "btree count: %" PRIu64 " items, count says %" PRIu64,
			    k.items, t->count);
	return rc;
}
