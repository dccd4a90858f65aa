/*
 * rbtree.c -- a persistent red-black tree (CLRS chapter 13) with 0 as the
 * black nil leaf.  Before a node's links or colour change, touch() snapshots
 * its header line -- once per transaction, spm skips lines already logged.
 * New nodes come from spm_tx_alloc and need no snapshot.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ex_util.h"
#include "rbtree.h"

enum { BLACK = 0, RED = 1 };

struct node {
	spm_off_t left, right, parent;
	uint64_t key;
	uint32_t len;   /* of the value */
	uint32_t color;
	uint8_t val[];  /* the value, inline */
};

static struct node *N(spm_pool *p, spm_off_t off)
{
	return spm_ptr(p, off);
}

static uint32_t color(spm_pool *p, spm_off_t o)
{
	return o ? N(p, o)->color : BLACK;
}

/* touch -- snapshot the header line of node o (nothing for nil). */
static int touch(spm_pool *p, spm_off_t o)
{
	return o ? spm_tx_add(p, N(p, o), sizeof(struct node)) : 0;
}

/* touch_link -- snapshot the link that points to a child of parent: the
 * parent's header, or the tree's root pointer. */
static int touch_link(spm_pool *p, struct rbtree *t, spm_off_t parent)
{
	return parent ? touch(p, parent) : spm_tx_add(p, &t->root, sizeof(t->root));
}

/* set_link -- parent's link to old now points to new (touched before). */
static void set_link(spm_pool *p, struct rbtree *t, spm_off_t parent, spm_off_t old,
		     spm_off_t new)
{
	if (!parent)
		t->root = new;
	else if (N(p, parent)->left == old)
		N(p, parent)->left = new;
	else
		N(p, parent)->right = new;
}

/* rotate -- rotate left (dir 0) or right (dir 1) around x. */
static int rotate(spm_pool *p, struct rbtree *t, spm_off_t xo, int dir)
{
	struct node *x = N(p, xo);
	spm_off_t yo = dir ? x->left : x->right;
	struct node *y = N(p, yo);
	spm_off_t mid = dir ? y->right : y->left; /* the subtree that moves */
	int rc;
	if ((rc = touch(p, xo)) || (rc = touch(p, yo)) || (rc = touch(p, mid)) ||
	    (rc = touch_link(p, t, x->parent)))
		return rc;
	if (dir) {
		x->left = mid;
		y->right = xo;
	} else {
		x->right = mid;
		y->left = xo;
	}
	if (mid)
		N(p, mid)->parent = xo;
	y->parent = x->parent;
	set_link(p, t, x->parent, xo, yo);
	x->parent = yo;
	return 0;
}

/* find -- the node of key, or 0; *parent gets the last node visited. */
static spm_off_t find(spm_pool *p, const struct rbtree *t, uint64_t key,
		      spm_off_t *parent)
{
	spm_off_t o = t->root, last = 0;
	while (o) {
		struct node *x = N(p, o);
		if (key == x->key)
			break;
		last = o;
		o = key < x->key ? x->left : x->right;
	}
	if (parent)
		*parent = last;
	return o;
}

void *rbtree_get(spm_pool *pool, const struct rbtree *t, uint64_t key, size_t *len)
{
	spm_off_t o = find(pool, t, key, NULL);
	if (!o)
		return NULL;
	*len = N(pool, o)->len;
	return N(pool, o)->val;
}

/* insert_fixup -- restore the colours after z (red) was linked in. */
static int insert_fixup(spm_pool *p, struct rbtree *t, spm_off_t z)
{
	int rc;
	while (color(p, N(p, z)->parent) == RED) {
		spm_off_t zp = N(p, z)->parent, g = N(p, zp)->parent;
		int left = zp == N(p, g)->left; /* is the parent a left child? */
		spm_off_t u = left ? N(p, g)->right : N(p, g)->left;
		if (color(p, u) == RED) {
			/* red uncle: recolour and move up */
			if ((rc = touch(p, zp)) || (rc = touch(p, u)) || (rc = touch(p, g)))
				return rc;
			N(p, zp)->color = N(p, u)->color = BLACK;
			N(p, g)->color = RED;
			z = g;
			continue;
		}
		if (z == (left ? N(p, zp)->right : N(p, zp)->left)) {
			/* inner grandchild: rotate it to the outside */
			z = zp;
			if ((rc = rotate(p, t, z, !left)))
				return rc;
			zp = N(p, z)->parent;
		}
		if ((rc = touch(p, zp)) || (rc = touch(p, g)))
			return rc;
		N(p, zp)->color = BLACK;
		N(p, g)->color = RED;
		if ((rc = rotate(p, t, g, left)))
			return rc;
	}
	if (N(p, t->root)->color != BLACK) {
		if ((rc = touch(p, t->root)))
			return rc;
		N(p, t->root)->color = BLACK;
	}
	return 0;
}

/* replace -- a node with a value of another size takes x's place. */
static int replace(spm_pool *p, struct rbtree *t, spm_off_t xo, size_t len, void **val)
{
	struct node *x = N(p, xo);
	spm_off_t no = spm_tx_alloc(p, sizeof(struct node) + len);
	if (!no)
		return SPM_E_NOSPACE;
	struct node *n = N(p, no);
	*n = *x;
	n->len = (uint32_t)len;
	int rc;
	if ((rc = touch_link(p, t, x->parent)) || (rc = touch(p, x->left)) ||
	    (rc = touch(p, x->right)) || (rc = spm_tx_free(p, xo)))
		return rc;
	set_link(p, t, x->parent, xo, no);
	if (x->left)
		N(p, x->left)->parent = no;
	if (x->right)
		N(p, x->right)->parent = no;
	*val = n->val;
	return 0;
}

int rbtree_put(spm_pool *pool, struct rbtree *t, uint64_t key, size_t len, void **val)
{
	if (len == 0 || len > UINT32_MAX)
		return SPM_E_INVAL;
	spm_off_t parent, o = find(pool, t, key, &parent);
	int rc;
	if (o) {
		struct node *x = N(pool, o);
		if (x->len != len)
			return replace(pool, t, o, len, val);
		if ((rc = spm_tx_add(pool, x->val, len)))
			return rc;
		*val = x->val;
		return 0;
	}
	spm_off_t zo = spm_tx_alloc(pool, sizeof(struct node) + len);
	if (!zo)
		return SPM_E_NOSPACE;
	struct node *z = N(pool, zo);
	z->key = key;
	z->len = (uint32_t)len;
	z->color = RED;
	z->parent = parent;
	if ((rc = spm_tx_add(pool, t, sizeof(*t))) || (rc = touch(pool, parent)))
		return rc;
	if (!parent)
		t->root = zo;
	else if (key < N(pool, parent)->key)
		N(pool, parent)->left = zo;
	else
		N(pool, parent)->right = zo;
	t->count++;
	*val = z->val;
	return insert_fixup(pool, t, zo);
}

/* transplant -- v (maybe nil) takes u's place under u's parent. */
static int transplant(spm_pool *p, struct rbtree *t, spm_off_t u, spm_off_t v)
{
	spm_off_t up = N(p, u)->parent;
	int rc;
	if ((rc = touch_link(p, t, up)) || (rc = touch(p, v)))
		return rc;
	set_link(p, t, up, u, v);
	if (v)
		N(p, v)->parent = up;
	return 0;
}

/* delete_fixup -- x (maybe nil, child of xp) carries an extra black. */
static int delete_fixup(spm_pool *p, struct rbtree *t, spm_off_t x, spm_off_t xp)
{
	int rc;
	while (x != t->root && color(p, x) == BLACK) {
		int left = x == N(p, xp)->left; /* is x a left child? */
#define SIB(o) (left ? N(p, o)->right : N(p, o)->left)  /* w's side */
#define NEAR(o) (left ? N(p, o)->left : N(p, o)->right) /* w's child near x */
		spm_off_t w = SIB(xp);
		if (color(p, w) == RED) {
			/* red sibling: rotate it up, the new sibling is black */
			if ((rc = touch(p, w)) || (rc = touch(p, xp)))
				return rc;
			N(p, w)->color = BLACK;
			N(p, xp)->color = RED;
			if ((rc = rotate(p, t, xp, !left)))
				return rc;
			w = SIB(xp);
		}
		if (color(p, NEAR(w)) == BLACK && color(p, SIB(w)) == BLACK) {
			/* black nephews: recolour the sibling, move up */
			if ((rc = touch(p, w)))
				return rc;
			N(p, w)->color = RED;
			x = xp;
			xp = N(p, x)->parent;
			continue;
		}
		if (color(p, SIB(w)) == BLACK) {
			/* only the near nephew is red: rotate it outward */
			if ((rc = touch(p, NEAR(w))) || (rc = touch(p, w)))
				return rc;
			N(p, NEAR(w))->color = BLACK;
			N(p, w)->color = RED;
			if ((rc = rotate(p, t, w, left)))
				return rc;
			w = SIB(xp);
		}
		/* the far nephew is red: one rotation ends it */
		if ((rc = touch(p, w)) || (rc = touch(p, xp)) || (rc = touch(p, SIB(w))))
			return rc;
		N(p, w)->color = N(p, xp)->color;
		N(p, xp)->color = BLACK;
		N(p, SIB(w))->color = BLACK;
		if ((rc = rotate(p, t, xp, !left)))
			return rc;
		x = t->root;
#undef SIB
#undef NEAR
	}
	if (x && N(p, x)->color != BLACK) {
		if ((rc = touch(p, x)))
			return rc;
		N(p, x)->color = BLACK;
	}
	return 0;
}

int rbtree_del(spm_pool *pool, struct rbtree *t, uint64_t key)
{
	spm_pool *p = pool;
	spm_off_t zo = find(p, t, key, NULL);
	if (!zo)
		return 0;
	struct node *z = N(p, zo);
	spm_off_t x, xp;
	uint32_t removed = z->color; /* the colour that leaves its place */
	int rc = spm_tx_add(p, t, sizeof(*t));
	if (rc)
		return rc;
	if (!z->left || !z->right) {
		x = z->left ? z->left : z->right;
		xp = z->parent;
		if ((rc = transplant(p, t, zo, x)))
			return rc;
	} else {
		/* two children: the successor y takes z's place and colour */
		spm_off_t yo = z->right;
		while (N(p, yo)->left)
			yo = N(p, yo)->left;
		struct node *y = N(p, yo);
		removed = y->color;
		x = y->right;
		if (y->parent == zo) {
			xp = yo;
		} else {
			xp = y->parent;
			if ((rc = transplant(p, t, yo, x)) || (rc = touch(p, yo)) ||
			    (rc = touch(p, z->right)))
				return rc;
			y->right = z->right;
			N(p, y->right)->parent = yo;
		}
		if ((rc = transplant(p, t, zo, yo)) || (rc = touch(p, z->left)))
			return rc;
		y->left = z->left;
		N(p, y->left)->parent = yo;
		y->color = z->color;
	}
	if (removed == BLACK && (rc = delete_fixup(p, t, x, xp)))
		return rc;
	t->count--;
	if ((rc = spm_tx_free(p, zo)))
		return rc;
	return 1;
}

/* ---- check ---------------------------------------------------------------- */

struct chk {
	spm_pool *p;
	rbtree_visit_fn visit;
	void *arg;
	char *why;
	size_t whylen;
	uint64_t items, limit;
};

#define FAIL(k, ...) (snprintf((k)->why, (k)->whylen, __VA_ARGS__), -1)

/* chk_node -- the subtree at o (child of parent), keys in (lo, hi); its
 * black height in *bh. */
static int chk_node(struct chk *k, spm_off_t o, spm_off_t parent, int depth,
		    int has_lo, uint64_t lo, int has_hi, uint64_t hi, int *bh)
{
	if (!o) {
		*bh = 1;
		return 0;
	}
	if (depth > 128)
		return FAIL(k, "rbtree balance: deeper than 128 levels (a cycle?)");
	const struct node *x = ex_obj(k->p, o, sizeof(*x));
	if (!x || !ex_obj(k->p, o, sizeof(*x) + x->len))
		return FAIL(k, "rbtree node: bad pointer %#" PRIx64 " at depth %d", o, depth);
	if (x->parent != parent)
		return FAIL(k, "rbtree links: node %#" PRIx64 " has parent %#" PRIx64
			    ", it hangs under %#" PRIx64, o, x->parent, parent);
	if (x->color > RED)
		return FAIL(k, "rbtree colour: node %#" PRIx64 " has colour %u", o, x->color);
	if (x->color == RED && color(k->p, parent) == RED)
		return FAIL(k, "rbtree colour: red node %#" PRIx64 " under a red parent", o);
	if ((has_lo && x->key <= lo) || (has_hi && x->key >= hi))
		return FAIL(k, "rbtree order: key %#" PRIx64 " outside (%#" PRIx64 ", %#"
			    PRIx64 ")", x->key, lo, hi);
	int lbh, rbh, rc;
	if ((rc = chk_node(k, x->left, o, depth + 1, has_lo, lo, 1, x->key, &lbh)))
		return rc;
	if (++k->items > k->limit)
		return FAIL(k, "rbtree count: more than %" PRIu64 " items", k->limit);
	if ((rc = k->visit(k->arg, x->key, x->val, x->len)))
		return rc;
	if ((rc = chk_node(k, x->right, o, depth + 1, 1, x->key, has_hi, hi, &rbh)))
		return rc;
	if (lbh != rbh)
		return FAIL(k, "rbtree balance: black heights %d and %d under %#" PRIx64, lbh,
			    rbh, o);
	*bh = lbh + (x->color == BLACK);
	return 0;
}

int rbtree_check(spm_pool *pool, const struct rbtree *t, rbtree_visit_fn visit,
		 void *arg, char *why, size_t whylen)
{
	struct chk k = {pool, visit, arg, why, whylen, 0, t->count};
	int bh;
	if (t->root) {
		const struct node *r = ex_obj(pool, t->root, sizeof(*r));
		if (r && r->color != BLACK)
			return FAIL(&k, "rbtree colour: the root is red");
	}
	int rc = chk_node(&k, t->root, 0, 0, 0, 0, 0, 0, &bh);
	if (!rc && k.items != t->count)
		return FAIL(&k, "rbtree count: %" PRIu64 " items, count says %" PRIu64,
			    k.items, t->count);
	return rc;
}
