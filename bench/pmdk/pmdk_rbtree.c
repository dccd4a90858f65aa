/* pmdk_rbtree.c -- the red-black tree workload on libpmemobj: the tree of examples/rbtree
 * (CLRS chapter 13, null as the black nil leaf, values inline in the nodes; before a node's
 * links or colour change its header is snapshotted, once per transaction); op j inserts
 * key(j) with a value-size value in one transaction, rebalancing by recolouring and
 * rotations. */
#include <inttypes.h>
#include <string.h>

#include "pmdk_internal.h"

enum { BLACK = 0, RED = 1 };

struct node {
	PMEMoid left, right, parent;
	uint64_t key;
	uint32_t len; /* of the value */
	uint32_t color;
	uint8_t val[]; /* the value, inline */
};

struct rbtree {
	PMEMoid root; /* null: empty */
	uint64_t count;
};

struct root {
	uint64_t ops;
	struct rbtree tree;
};
_Static_assert(sizeof(struct root) <= PMDK_LINE, "the root is one line");

static struct node *N(PMEMoid o)
{
	return pmemobj_direct(o);
}

static uint32_t color(PMEMoid o)
{
	return OID_IS_NULL(o) ? BLACK : N(o)->color;
}

static int same(PMEMoid a, PMEMoid b)
{
	return a.off == b.off;
}

/* touch -- in a transaction: snapshot the header of node o (nothing for nil). */
static void touch(PMEMoid o)
{
	if (!OID_IS_NULL(o))
		pmemobj_tx_add_range_direct(N(o), sizeof(struct node));
}

/* touch_link -- snapshot the link to a child of parent: its header, or the root pointer. */
static void touch_link(struct rbtree *t, PMEMoid parent)
{
	if (OID_IS_NULL(parent))
		pmemobj_tx_add_range_direct(&t->root, sizeof(t->root));
	else
		touch(parent);
}

/* set_link -- parent's link to old now points to new (touched before). */
static void set_link(struct rbtree *t, PMEMoid parent, PMEMoid old, PMEMoid new)
{
	if (OID_IS_NULL(parent))
		t->root = new;
	else if (same(N(parent)->left, old))
		N(parent)->left = new;
	else
		N(parent)->right = new;
}

/* rotate -- rotate left (dir 0) or right (dir 1) around x. */
static void rotate(struct rbtree *t, PMEMoid xo, int dir)
{
	struct node *x = N(xo);
	PMEMoid yo = dir ? x->left : x->right;
	struct node *y = N(yo);
	PMEMoid mid = dir ? y->right : y->left; /* the subtree that moves */
	touch(xo);
	touch(yo);
	touch(mid);
	touch_link(t, x->parent);
	if (dir) {
		x->left = mid;
		y->right = xo;
	} else {
		x->right = mid;
		y->left = xo;
	}
	if (!OID_IS_NULL(mid))
		N(mid)->parent = xo;
	y->parent = x->parent;
	set_link(t, x->parent, xo, yo);
	x->parent = yo;
}

/* find -- the node of key, or null; *parent gets the last node visited. */
static PMEMoid find(const struct rbtree *t, uint64_t key, PMEMoid *parent)
{
	PMEMoid o = t->root, last = OID_NULL;
	while (!OID_IS_NULL(o) && N(o)->key != key) {
		last = o;
		o = key < N(o)->key ? N(o)->left : N(o)->right;
	}
	*parent = last;
	return o;
}

/* recolour -- red uncle u: parent and uncle black, grandparent red. */
static void recolour(PMEMoid zp, PMEMoid u, PMEMoid g)
{
	touch(zp);
	touch(u);
	touch(g);
	N(zp)->color = N(u)->color = BLACK;
	N(g)->color = RED;
}

/* insert_fixup -- restore the colours after z (red) was linked in. */
static void insert_fixup(struct rbtree *t, PMEMoid z)
{
	while (color(N(z)->parent) == RED) {
		PMEMoid zp = N(z)->parent, g = N(zp)->parent;
		int left = same(zp, N(g)->left); /* is the parent a left child? */
		PMEMoid u = left ? N(g)->right : N(g)->left;
		if (color(u) == RED) {
			recolour(zp, u, g);
			z = g;
			continue;
		}
		if (same(z, left ? N(zp)->right : N(zp)->left)) {
			/* inner grandchild: rotate it to the outside */
			z = zp;
			rotate(t, z, !left);
			zp = N(z)->parent;
		}
		touch(zp);
		touch(g);
		N(zp)->color = BLACK;
		N(g)->color = RED;
		rotate(t, g, left);
	}
	if (N(t->root)->color != BLACK) {
		touch(t->root);
		N(t->root)->color = BLACK;
	}
}

/* link_new -- in a transaction: a red node for key under parent; returns it. */
static PMEMoid link_new(struct rbtree *t, PMEMoid parent, uint64_t key, size_t len)
{
	PMEMoid zo = pmemobj_tx_alloc(sizeof(struct node) + len, PMDK_TYPE);
	*N(zo) = (struct node){.left = OID_NULL, .right = OID_NULL, .parent = parent,
			       .key = key, .len = (uint32_t)len, .color = RED};
	pmemobj_tx_add_range_direct(t, sizeof(*t));
	touch(parent);
	if (OID_IS_NULL(parent))
		t->root = zo;
	else if (key < N(parent)->key)
		N(parent)->left = zo;
	else
		N(parent)->right = zo;
	t->count++;
	return zo;
}

/* put -- in a transaction: key's value becomes a new len-byte value; returns it to fill. */
static void *put(struct rbtree *t, uint64_t key, size_t len)
{
	PMEMoid parent, o = find(t, key, &parent);
	if (!OID_IS_NULL(o)) { /* present (same size in a run): overwrite in place */
		pmemobj_tx_add_range_direct(N(o)->val, len);
		return N(o)->val;
	}
	o = link_new(t, parent, key, len);
	insert_fixup(t, o);
	return N(o)->val;
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
	uint64_t limit; /* the tree's count */
};

/* chk_here -- node x (at o, under parent) alone: links, colour, order. */
static int chk_here(struct walk *w, const struct node *x, PMEMoid o, PMEMoid parent,
		    struct bounds b)
{
	if (!same(x->parent, parent))
		return pmdk_fail(w->c, "rbtree links: node %#" PRIx64 " has parent %#" PRIx64
				 ", it hangs under %#" PRIx64, o.off, x->parent.off, parent.off);
	if (x->color > RED || (x->color == RED && color(parent) == RED))
		return pmdk_fail(w->c, "rbtree colour: node %#" PRIx64 " (colour %u) under a red "
				 "parent", o.off, x->color);
	if ((b.has_lo && x->key <= b.lo) || (b.has_hi && x->key >= b.hi))
		return pmdk_fail(w->c, "rbtree order: key %#" PRIx64 " outside (%#" PRIx64 ", %#"
				 PRIx64 ")", x->key, b.lo, b.hi);
	if (w->c->visited >= w->limit)
		return pmdk_fail(w->c, "rbtree count: more than %" PRIu64 " items", w->limit);
	return 0;
}

/* chk_node -- the subtree at o (child of parent), keys within b, in key order; its black
 * height in *bh. */
static int chk_node(struct walk *w, PMEMoid o, PMEMoid parent, int depth, struct bounds b,
		    int *bh)
{
	*bh = 1;
	if (OID_IS_NULL(o))
		return 0;
	const struct node *x = pmdk_obj(w->c, o, sizeof(*x));
	if (depth > 128 || !x || !pmdk_obj(w->c, o, sizeof(*x) + x->len))
		return pmdk_fail(w->c, "rbtree node: bad pointer %#" PRIx64 " at depth %d", o.off,
				 depth);
	int lbh, rbh;
	struct bounds lb = {b.has_lo, 1, b.lo, x->key}, rb = {1, b.has_hi, x->key, b.hi};
	if (chk_here(w, x, o, parent, b) || chk_node(w, x->left, o, depth + 1, lb, &lbh) ||
	    pmdk_map_visit(w->c, x->key, x->val, x->len) ||
	    chk_node(w, x->right, o, depth + 1, rb, &rbh))
		return -1;
	if (lbh != rbh)
		return pmdk_fail(w->c, "rbtree balance: black heights %d and %d under %#" PRIx64,
				 lbh, rbh, o.off);
	*bh = lbh + (x->color == BLACK);
	return 0;
}

static int check(struct pmdk_ctx *c, uint64_t *n)
{
	const struct root *r = c->root;
	struct walk w = {c, r->tree.count};
	int bh, rc = 0;
	if (pmdk_map_begin(c))
		return -1;
	const struct node *top = pmdk_obj(c, r->tree.root, sizeof(*top));
	if (top && top->color != BLACK)
		rc = pmdk_fail(c, "rbtree colour: the root is red");
	else
		rc = chk_node(&w, r->tree.root, OID_NULL, 0, (struct bounds){0}, &bh);
	return pmdk_map_end(c, rc, r->tree.count, n);
}

const struct pmdk_wl pmdk_rbtree_wl = {
	.name = "rbtree",
	.root_size = sizeof(struct root),
	.op = op,
	.items = items,
	.check = check,
};
