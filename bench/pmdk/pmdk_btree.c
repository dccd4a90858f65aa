/* pmdk_btree.c -- the B-tree workload on libpmemobj: the B-tree of examples/btree (minimum
 * degree 8, one-pass insertion with preemptive splits, CLRS chapter 18; values separate
 * objects; each change snapshots exactly the node ranges it touches); op j inserts key(j)
 * with a value-size value in one transaction. */
#include <inttypes.h>
#include <string.h>

#include "pmdk_internal.h"

#define T 8              /* minimum degree */
#define MAXK (2 * T - 1) /* items per node */

struct item {
	uint64_t key;
	PMEMoid val;
	uint64_t len;
};

struct node {
	uint32_t n;    /* items in use */
	uint32_t leaf; /* 1: no children */
	struct item it[MAXK];
	PMEMoid child[MAXK + 1];
};

struct btree {
	PMEMoid root; /* null: empty */
	uint64_t count;
};

struct root {
	uint64_t ops;
	struct btree tree;
};
_Static_assert(sizeof(struct root) <= PMDK_LINE, "the root is one line");

static struct node *N(PMEMoid o)
{
	return pmemobj_direct(o);
}

/* log_node -- snapshot the parts of x about to change: its header if hdr, items [i0, i1),
 * children [c0, c1).  Empty ranges are skipped. */
static void log_node(struct node *x, int hdr, unsigned i0, unsigned i1, unsigned c0,
		     unsigned c1)
{
	struct pmdk_range r[3] = {
		{x, hdr ? sizeof(x->n) : 0},
		{&x->it[i0], i1 > i0 ? (i1 - i0) * sizeof(struct item) : 0},
		{&x->child[c0], !x->leaf && c1 > c0 ? (c1 - c0) * sizeof(PMEMoid) : 0},
	};
	pmdk_tx_add_ranges(r, 3);
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

/* find -- the item of key, or NULL. */
static struct item *find(const struct btree *t, uint64_t key)
{
	for (PMEMoid o = t->root; !OID_IS_NULL(o);) {
		struct node *x = N(o);
		unsigned i = lower(x, key);
		if (i < x->n && x->it[i].key == key)
			return &x->it[i];
		if (x->leaf)
			break;
		o = x->child[i];
	}
	return NULL;
}

/* new_node -- in a transaction: an empty node. */
static struct node *new_node(uint32_t leaf, PMEMoid *o)
{
	*o = pmemobj_tx_zalloc(sizeof(struct node), PMDK_TYPE);
	struct node *x = N(*o);
	x->leaf = leaf;
	return x;
}

/* split_child -- x->child[i] is full: its upper T-1 items go to a new node, its median
 * moves up into x (not full).  Changes the child's n, x's items [i, n] and children
 * [i+1, n+1]. */
static void split_child(struct node *x, unsigned i)
{
	struct node *y = N(x->child[i]);
	PMEMoid zo;
	struct node *z = new_node(y->leaf, &zo);
	z->n = T - 1;
	memcpy(z->it, &y->it[T], (T - 1) * sizeof(struct item));
	if (!y->leaf)
		memcpy(z->child, &y->child[T], T * sizeof(PMEMoid));
	log_node(y, 1, 0, 0, 0, 0);
	log_node(x, 1, i, x->n + 1, i + 1, x->n + 2);
	y->n = T - 1; /* its upper items stay behind as garbage: no write */
	memmove(&x->it[i + 1], &x->it[i], (x->n - i) * sizeof(struct item));
	memmove(&x->child[i + 2], &x->child[i + 1], (x->n - i) * sizeof(PMEMoid));
	x->it[i] = y->it[T - 1];
	x->child[i + 1] = zo;
	x->n++;
}

/* insert_nonfull -- put an absent key below x (not full). */
static void insert_nonfull(struct node *x, struct item item)
{
	while (!x->leaf) {
		unsigned i = lower(x, item.key);
		if (N(x->child[i])->n == MAXK) {
			split_child(x, i);
			if (item.key > x->it[i].key)
				i++;
		}
		x = N(x->child[i]);
	}
	unsigned i = lower(x, item.key);
	log_node(x, 1, i, x->n + 1, 0, 0);
	memmove(&x->it[i + 1], &x->it[i], (x->n - i) * sizeof(struct item));
	x->it[i] = item;
	x->n++;
}

/* grow_root -- in a transaction: the tree gets a root with room for one more item. */
static void grow_root(struct btree *t)
{
	if (OID_IS_NULL(t->root)) {
		new_node(1, &t->root);
	} else if (N(t->root)->n == MAXK) { /* a full root: one level more */
		PMEMoid so;
		struct node *s = new_node(0, &so);
		s->child[0] = t->root;
		t->root = so;
		split_child(s, 0);
	}
}

/* put -- in a transaction: key's value becomes a new len-byte value; returns it to fill. */
static void *put(struct btree *t, uint64_t key, size_t len)
{
	struct item *it = find(t, key);
	if (it) { /* present (same size in a run): overwrite in place */
		void *v = pmemobj_direct(it->val);
		pmemobj_tx_add_range_direct(v, len);
		return v;
	}
	PMEMoid v = pmemobj_tx_alloc(len, PMDK_TYPE);
	pmemobj_tx_add_range_direct(t, sizeof(*t));
	grow_root(t);
	insert_nonfull(N(t->root), (struct item){key, v, len});
	t->count++;
	return pmemobj_direct(v);
}

/* op -- in its transaction: op j inserts key(j) with its value. */
static void op(struct pmdk_ctx *c, uint64_t j)
{
	struct root *r = c->root;
	uint64_t key = pmdk_map_key(c, j);
	pmdk_tx_count(c, j);
	pmdk_fill(put(&r->tree, key, c->value_size), c->value_size, j, key);
}

static uint64_t items(const struct pmdk_ctx *c)
{
	return ((const struct root *)c->root)->tree.count;
}

/* ---- check ---------------------------------------------------------------- */

/* Bounds on the keys of a subtree: (lo, hi), each side open if absent. */
struct bounds {
	int has_lo, has_hi;
	uint64_t lo, hi;
};

struct walk {
	struct pmdk_ctx *c;
	uint64_t limit;  /* the tree's count */
	int leaf_depth;  /* -1 until the first leaf */
};

static int chk_node(struct walk *w, PMEMoid o, int depth, struct bounds b);

/* chk_shape -- node x's fill and, for a leaf, its depth. */
static int chk_shape(struct walk *w, const struct node *x, PMEMoid o, int depth)
{
	unsigned min = depth ? T - 1 : 1;
	if (x->leaf > 1 || x->n > MAXK || x->n < min)
		return pmdk_fail(w->c, "btree fill: node %#" PRIx64 " holds %u items (%u..%u), "
				 "leaf flag %u", o.off, x->n, min, MAXK, x->leaf);
	if (x->leaf && w->leaf_depth >= 0 && w->leaf_depth != depth)
		return pmdk_fail(w->c, "btree balance: leaves at depths %d and %d", w->leaf_depth,
				 depth);
	if (x->leaf)
		w->leaf_depth = depth;
	return 0;
}

/* chk_item -- item i of x: within b (after item i - 1), its value intact. */
static int chk_item(struct walk *w, const struct node *x, unsigned i, struct bounds b)
{
	const struct item *it = &x->it[i];
	if ((b.has_lo && it->key <= b.lo) || (b.has_hi && it->key >= b.hi))
		return pmdk_fail(w->c, "btree order: key %#" PRIx64 " outside (%#" PRIx64 ", %#"
				 PRIx64 ")", it->key, b.lo, b.hi);
	if (w->c->visited >= w->limit)
		return pmdk_fail(w->c, "btree count: more than %" PRIu64 " items", w->limit);
	const void *v = pmdk_obj(w->c, it->val, it->len);
	if (!v)
		return pmdk_fail(w->c, "btree value: key %#" PRIx64 " has a bad value", it->key);
	return pmdk_map_visit(w->c, it->key, v, it->len);
}

/* chk_node -- the subtree at o, all of whose keys lie within b; in key order. */
static int chk_node(struct walk *w, PMEMoid o, int depth, struct bounds b)
{
	const struct node *x = pmdk_obj(w->c, o, sizeof(struct node));
	if (depth > 64 || !x)
		return pmdk_fail(w->c, "btree node: bad pointer %#" PRIx64 " at depth %d", o.off,
				 depth);
	if (chk_shape(w, x, o, depth))
		return -1;
	for (unsigned i = 0; i <= x->n; i++) {
		struct bounds cb = {i ? 1 : b.has_lo, i < x->n ? 1 : b.has_hi,
				    i ? x->it[i - 1].key : b.lo, i < x->n ? x->it[i].key : b.hi};
		struct bounds ib = {cb.has_lo, b.has_hi, cb.lo, b.hi}; /* after item i - 1 */
		if (!x->leaf && chk_node(w, x->child[i], depth + 1, cb))
			return -1;
		if (i < x->n && chk_item(w, x, i, ib))
			return -1;
	}
	return 0;
}

static int check(struct pmdk_ctx *c, uint64_t *n)
{
	const struct root *r = c->root;
	struct walk w = {c, r->tree.count, -1};
	if (pmdk_map_begin(c))
		return -1;
	int rc = OID_IS_NULL(r->tree.root) ? 0
					   : chk_node(&w, r->tree.root, 0, (struct bounds){0});
	return pmdk_map_end(c, rc, r->tree.count, n);
}

const struct pmdk_wl pmdk_btree_wl = {
	.name = "btree",
	.root_size = sizeof(struct root),
	.op = op,
	.items = items,
	.check = check,
};
