/*
 * bptree.c -- a persistent B+ tree: items in linked leaves, separator keys
 * in the inner nodes; one-pass insertion with preemptive splits, one-pass
 * deletion with preemptive borrows and merges.  Every change to a node is
 * preceded by a snapshot of exactly the lines it touches (log_leaf,
 * log_inner); new nodes and values come from spm_tx_alloc and need none.
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "bptree.h"
#include "ex_util.h"

#define LMAX 16          /* items per leaf */
#define LMIN (LMAX / 2)  /* ... but for the root */
#define IMAX 15          /* keys per inner node */
#define IMIN (IMAX / 2)  /* ... but for the root */

struct item {
	uint64_t key;
	spm_off_t val;
	uint64_t len;
};

/* The first bytes of every node. */
struct hdr {
	uint32_t n;    /* items (leaf) or keys (inner) in use */
	uint32_t leaf; /* 1: a leaf */
};

struct leaf {
	struct hdr h;
	spm_off_t next; /* the next leaf in key order; 0: the last */
	struct item it[LMAX];
};

struct inner {
	struct hdr h;
	uint64_t key[IMAX];
	spm_off_t child[IMAX + 1];
};

static struct hdr *H(spm_pool *p, spm_off_t off)
{
	return spm_ptr(p, off);
}

static struct leaf *L(spm_pool *p, spm_off_t off)
{
	return spm_ptr(p, off);
}

static struct inner *I(spm_pool *p, spm_off_t off)
{
	return spm_ptr(p, off);
}

/* full -- can node o take no more? */
static int full(spm_pool *p, spm_off_t o)
{
	const struct hdr *h = H(p, o);
	return h->n >= (h->leaf ? LMAX : IMAX);
}

/* above_min -- can node o (not the root) lose one? */
static int above_min(spm_pool *p, spm_off_t o)
{
	const struct hdr *h = H(p, o);
	return h->n > (h->leaf ? LMIN : IMIN);
}

/* log_leaf -- snapshot leaf x's header and link (if hdr) and items [i0, i1). */
static int log_leaf(spm_pool *p, struct leaf *x, int hdr, unsigned i0, unsigned i1)
{
	struct ex_range r[2] = {
		{x, hdr ? offsetof(struct leaf, it) : 0},
		{&x->it[i0], i1 > i0 ? (i1 - i0) * sizeof(struct item) : 0},
	};
	return ex_tx_add_ranges(p, r, 2);
}

/* log_inner -- snapshot inner x's header (if hdr), keys [k0, k1) and
 * children [c0, c1). */
static int log_inner(spm_pool *p, struct inner *x, int hdr, unsigned k0, unsigned k1,
		     unsigned c0, unsigned c1)
{
	struct ex_range r[3] = {
		{x, hdr ? sizeof(x->h) : 0},
		{&x->key[k0], k1 > k0 ? (k1 - k0) * sizeof(uint64_t) : 0},
		{&x->child[c0], c1 > c0 ? (c1 - c0) * sizeof(spm_off_t) : 0},
	};
	return ex_tx_add_ranges(p, r, 3);
}

/* upper -- the child of x whose range holds key: the separators <= key. */
static unsigned upper(const struct inner *x, uint64_t key)
{
	unsigned lo = 0, hi = x->h.n;
	while (lo < hi) {
		unsigned mid = (lo + hi) / 2;
		if (x->key[mid] <= key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* lower -- the first item of leaf x with a key >= key. */
static unsigned lower(const struct leaf *x, uint64_t key)
{
	unsigned lo = 0, hi = x->h.n;
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
static struct item *find(spm_pool *p, const struct bptree *t, uint64_t key)
{
	spm_off_t o = t->root;
	if (!o)
		return NULL;
	while (!H(p, o)->leaf)
		o = I(p, o)->child[upper(I(p, o), key)];
	struct leaf *x = L(p, o);
	unsigned i = lower(x, key);
	return i < x->h.n && x->it[i].key == key ? &x->it[i] : NULL;
}

void *bptree_get(spm_pool *pool, const struct bptree *t, uint64_t key, size_t *len)
{
	struct item *it = find(pool, t, key);
	if (!it)
		return NULL;
	*len = it->len;
	return spm_ptr(pool, it->val);
}

/* ---- insertion ------------------------------------------------------------ */

/* new_node -- an empty leaf or inner node, owned by the transaction; 0 if
 * there is no space. */
static spm_off_t new_node(spm_pool *p, uint32_t leaf)
{
	spm_off_t o = spm_tx_alloc(p, leaf ? sizeof(struct leaf) : sizeof(struct inner));
	if (o)
		*H(p, o) = (struct hdr){0, leaf};
	return o;
}

/* add_sep -- separator key at place i of x (not full), with the child on
 * its right. */
static int add_sep(spm_pool *p, struct inner *x, unsigned i, uint64_t key, spm_off_t right)
{
	unsigned n = x->h.n;
	int rc = log_inner(p, x, 1, i, n + 1, i + 1, n + 2);
	if (rc)
		return rc;
	memmove(&x->key[i + 1], &x->key[i], (n - i) * sizeof(uint64_t));
	memmove(&x->child[i + 2], &x->child[i + 1], (n - i) * sizeof(spm_off_t));
	x->key[i] = key;
	x->child[i + 1] = right;
	x->h.n = n + 1;
	return 0;
}

/* split_leaf -- the full leaf child i of x keeps its lower half; the upper
 * half goes to a new leaf after it, whose first key is copied up into x. */
static int split_leaf(spm_pool *p, struct inner *x, unsigned i)
{
	struct leaf *c = L(p, x->child[i]);
	spm_off_t ro = new_node(p, 1);
	if (!ro)
		return SPM_E_NOSPACE;
	struct leaf *r = L(p, ro);
	r->h.n = LMAX - LMIN;
	r->next = c->next;
	memcpy(r->it, &c->it[LMIN], (LMAX - LMIN) * sizeof(struct item));
	int rc = log_leaf(p, c, 1, 0, 0);
	if (rc)
		return rc;
	c->h.n = LMIN; /* its upper items stay behind as garbage: no write */
	c->next = ro;
	return add_sep(p, x, i, r->it[0].key, ro);
}

/* split_inner -- the full inner child i of x keeps its lower keys; its
 * middle key moves up into x, the keys and children above it to a new node. */
static int split_inner(spm_pool *p, struct inner *x, unsigned i)
{
	struct inner *c = I(p, x->child[i]);
	spm_off_t ro = new_node(p, 0);
	if (!ro)
		return SPM_E_NOSPACE;
	struct inner *r = I(p, ro);
	unsigned m = IMAX / 2;
	r->h.n = IMAX - m - 1;
	memcpy(r->key, &c->key[m + 1], r->h.n * sizeof(uint64_t));
	memcpy(r->child, &c->child[m + 1], (r->h.n + 1) * sizeof(spm_off_t));
	int rc = log_inner(p, c, 1, 0, 0, 0, 0);
	if (rc)
		return rc;
	c->h.n = m;
	return add_sep(p, x, i, c->key[m], ro);
}

static int split_child(spm_pool *p, struct inner *x, unsigned i)
{
	return H(p, x->child[i])->leaf ? split_leaf(p, x, i) : split_inner(p, x, i);
}

/* insert_nonfull -- put an absent key below node o (not full). */
static int insert_nonfull(spm_pool *p, spm_off_t o, struct item item)
{
	int rc;
	while (!H(p, o)->leaf) {
		struct inner *x = I(p, o);
		unsigned i = upper(x, item.key);
		if (full(p, x->child[i])) {
			if ((rc = split_child(p, x, i)))
				return rc;
			if (item.key >= x->key[i])
				i++;
		}
		o = x->child[i];
	}
	struct leaf *x = L(p, o);
	unsigned i = lower(x, item.key), n = x->h.n;
	if ((rc = log_leaf(p, x, 1, i, n + 1)))
		return rc;
	memmove(&x->it[i + 1], &x->it[i], (n - i) * sizeof(struct item));
	x->it[i] = item;
	x->h.n = n + 1;
	return 0;
}

/* grow -- the tree's first leaf, or a new root above a full one. */
static int grow(spm_pool *p, struct bptree *t)
{
	if (!t->root)
		return (t->root = new_node(p, 1)) ? 0 : SPM_E_NOSPACE;
	if (!full(p, t->root))
		return 0;
	spm_off_t so = new_node(p, 0);
	if (!so)
		return SPM_E_NOSPACE;
	I(p, so)->child[0] = t->root;
	t->root = so;
	return split_child(p, I(p, so), 0);
}

int bptree_put(spm_pool *pool, struct bptree *t, uint64_t key, size_t len, void **val)
{
	if (len == 0)
		return SPM_E_INVAL;
	struct item *it = find(pool, t, key);
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
	if ((rc = spm_tx_add(pool, t, sizeof(*t))) || (rc = grow(pool, t)) ||
	    (rc = insert_nonfull(pool, t->root, (struct item){key, v, len})))
		return rc;
	t->count++;
	return 0;
}

/* ---- deletion ------------------------------------------------------------- */

/* merge_leaves -- leaf r's items join leaf c, its left neighbour. */
static int merge_leaves(spm_pool *p, struct leaf *c, struct leaf *r)
{
	unsigned cn = c->h.n, rn = r->h.n;
	int rc = log_leaf(p, c, 1, cn, cn + rn);
	if (rc)
		return rc;
	memcpy(&c->it[cn], r->it, rn * sizeof(struct item));
	c->next = r->next;
	c->h.n = cn + rn;
	return 0;
}

/* merge_inners -- the separator sep, then inner r's keys and children, join
 * inner c, r's left neighbour. */
static int merge_inners(spm_pool *p, struct inner *c, uint64_t sep, struct inner *r)
{
	unsigned cn = c->h.n, rn = r->h.n;
	int rc = log_inner(p, c, 1, cn, cn + 1 + rn, cn + 1, cn + 2 + rn);
	if (rc)
		return rc;
	c->key[cn] = sep;
	memcpy(&c->key[cn + 1], r->key, rn * sizeof(uint64_t));
	memcpy(&c->child[cn + 1], r->child, (rn + 1) * sizeof(spm_off_t));
	c->h.n = cn + 1 + rn;
	return 0;
}

/* merge -- child i+1 of x joins child i; separator i and child i+1 leave x,
 * and the right node is freed.  Both children are at their minimum. */
static int merge(spm_pool *p, struct inner *x, unsigned i)
{
	spm_off_t co = x->child[i], ro = x->child[i + 1];
	unsigned n = x->h.n;
	int rc = H(p, ro)->leaf ? merge_leaves(p, L(p, co), L(p, ro))
				: merge_inners(p, I(p, co), x->key[i], I(p, ro));
	if (!rc)
		rc = log_inner(p, x, 1, i, n - 1, i + 1, n);
	if (!rc)
		rc = spm_tx_free(p, ro);
	if (rc)
		return rc;
	memmove(&x->key[i], &x->key[i + 1], (n - 1 - i) * sizeof(uint64_t));
	memmove(&x->child[i + 1], &x->child[i + 2], (n - 1 - i) * sizeof(spm_off_t));
	x->h.n = n - 1;
	return 0;
}

/* borrow_left_leaf -- leaf c (child i of x) takes the last item of leaf l,
 * its left neighbour; c's new first key is separator i-1. */
static int borrow_left_leaf(spm_pool *p, struct inner *x, unsigned i, struct leaf *c,
			    struct leaf *l)
{
	unsigned cn = c->h.n, ln = l->h.n;
	int rc = log_leaf(p, c, 1, 0, cn + 1);
	if (!rc)
		rc = log_leaf(p, l, 1, 0, 0);
	if (rc)
		return rc;
	memmove(&c->it[1], &c->it[0], cn * sizeof(struct item));
	c->it[0] = l->it[ln - 1];
	c->h.n = cn + 1;
	l->h.n = ln - 1;
	x->key[i - 1] = c->it[0].key;
	return 0;
}

/* borrow_left_inner -- inner c (child i of x) takes separator i-1 and the
 * last child of inner l, its left neighbour, whose last key moves up. */
static int borrow_left_inner(spm_pool *p, struct inner *x, unsigned i, struct inner *c,
			     struct inner *l)
{
	unsigned cn = c->h.n, ln = l->h.n;
	int rc = log_inner(p, c, 1, 0, cn + 1, 0, cn + 2);
	if (!rc)
		rc = log_inner(p, l, 1, 0, 0, 0, 0);
	if (rc)
		return rc;
	memmove(&c->key[1], &c->key[0], cn * sizeof(uint64_t));
	memmove(&c->child[1], &c->child[0], (cn + 1) * sizeof(spm_off_t));
	c->key[0] = x->key[i - 1];
	c->child[0] = l->child[ln];
	c->h.n = cn + 1;
	x->key[i - 1] = l->key[ln - 1];
	l->h.n = ln - 1;
	return 0;
}

/* borrow_right_leaf -- leaf c (child i of x) takes the first item of leaf r,
 * its right neighbour; r's new first key is separator i. */
static int borrow_right_leaf(spm_pool *p, struct inner *x, unsigned i, struct leaf *c,
			     struct leaf *r)
{
	unsigned cn = c->h.n, rn = r->h.n;
	int rc = log_leaf(p, c, 1, cn, cn + 1);
	if (!rc)
		rc = log_leaf(p, r, 1, 0, rn - 1);
	if (rc)
		return rc;
	c->it[cn] = r->it[0];
	c->h.n = cn + 1;
	memmove(&r->it[0], &r->it[1], (rn - 1) * sizeof(struct item));
	r->h.n = rn - 1;
	x->key[i] = r->it[0].key;
	return 0;
}

/* borrow_right_inner -- inner c (child i of x) takes separator i and the
 * first child of inner r, its right neighbour, whose first key moves up. */
static int borrow_right_inner(spm_pool *p, struct inner *x, unsigned i, struct inner *c,
			      struct inner *r)
{
	unsigned cn = c->h.n, rn = r->h.n;
	int rc = log_inner(p, c, 1, cn, cn + 1, cn + 1, cn + 2);
	if (!rc)
		rc = log_inner(p, r, 1, 0, rn - 1, 0, rn);
	if (rc)
		return rc;
	c->key[cn] = x->key[i];
	c->child[cn + 1] = r->child[0];
	c->h.n = cn + 1;
	x->key[i] = r->key[0];
	memmove(&r->key[0], &r->key[1], (rn - 1) * sizeof(uint64_t));
	memmove(&r->child[0], &r->child[1], rn * sizeof(spm_off_t));
	r->h.n = rn - 1;
	return 0;
}

/* fix_child -- child *i of x is at its minimum: give it one more (from a
 * neighbour) or merge it with one; *i is then the child to descend into. */
static int fix_child(spm_pool *p, struct inner *x, unsigned *i)
{
	spm_off_t co = x->child[*i];
	int leaf = H(p, co)->leaf, rc;
	if (*i > 0 && above_min(p, x->child[*i - 1])) {
		spm_off_t lo = x->child[*i - 1];
		if ((rc = log_inner(p, x, 0, *i - 1, *i, 0, 0)))
			return rc;
		return leaf ? borrow_left_leaf(p, x, *i, L(p, co), L(p, lo))
			    : borrow_left_inner(p, x, *i, I(p, co), I(p, lo));
	}
	if (*i < x->h.n && above_min(p, x->child[*i + 1])) {
		spm_off_t ro = x->child[*i + 1];
		if ((rc = log_inner(p, x, 0, *i, *i + 1, 0, 0)))
			return rc;
		return leaf ? borrow_right_leaf(p, x, *i, L(p, co), L(p, ro))
			    : borrow_right_inner(p, x, *i, I(p, co), I(p, ro));
	}
	if (*i == x->h.n)
		--*i; /* the last child merges into its left neighbour */
	return merge(p, x, *i);
}

/* remove_key -- remove key below node o, making sure each child descended
 * into can lose one.  1 removed (its value in *val), 0 absent, < 0 error. */
static int remove_key(spm_pool *p, spm_off_t o, uint64_t key, spm_off_t *val)
{
	int rc;
	while (!H(p, o)->leaf) {
		struct inner *x = I(p, o);
		unsigned i = upper(x, key);
		if (!above_min(p, x->child[i]) && (rc = fix_child(p, x, &i)))
			return rc;
		o = x->child[i];
	}
	struct leaf *x = L(p, o);
	unsigned i = lower(x, key), n = x->h.n;
	if (i == n || x->it[i].key != key)
		return 0;
	if ((rc = log_leaf(p, x, 1, i, n - 1)))
		return rc;
	*val = x->it[i].val;
	memmove(&x->it[i], &x->it[i + 1], (n - 1 - i) * sizeof(struct item));
	x->h.n = n - 1;
	return 1;
}

int bptree_del(spm_pool *pool, struct bptree *t, uint64_t key)
{
	if (!find(pool, t, key))
		return 0;
	spm_off_t val = 0;
	int rc = spm_tx_add(pool, t, sizeof(*t));
	if (!rc)
		rc = remove_key(pool, t->root, key, &val);
	if (rc < 0)
		return rc;
	struct hdr *r = H(pool, t->root);
	if (r->n == 0) {
		/* an empty root leaf (an empty tree), or a root whose two
		 * children merged: the tree shrinks by one level */
		spm_off_t old = t->root;
		t->root = r->leaf ? 0 : I(pool, old)->child[0];
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
	bptree_visit_fn visit;
	void *arg;
	char *why;
	size_t whylen;
	uint64_t items, limit;
	int leaf_depth;
	spm_off_t last_off;      /* the last leaf visited, in key order */
	const struct leaf *last;
};

/* The key range of a subtree: [lo, hi), either end possibly open. */
struct range {
	int has_lo, has_hi;
	uint64_t lo, hi;
};

#define FAIL(k, ...) (snprintf((k)->why, (k)->whylen, __VA_ARGS__), -1)

static int in_range(const struct range *r, uint64_t key)
{
	return (!r->has_lo || key >= r->lo) && (!r->has_hi || key < r->hi);
}

/* chk_leaf -- leaf x at o: fill, the chain reaching it, its items. */
static int chk_leaf(struct chk *k, spm_off_t o, const struct leaf *x, int root,
		    const struct range *r)
{
	if (x->h.n > LMAX || x->h.n < (root ? 1u : LMIN))
		return FAIL(k, "bptree fill: leaf %#" PRIx64 " holds %u items (%u..%u)", o,
			    x->h.n, root ? 1u : LMIN, LMAX);
	if (k->last && k->last->next != o)
		return FAIL(k, "bptree chain: leaf %#" PRIx64 " links %#" PRIx64 ", not the "
			    "next leaf %#" PRIx64, k->last_off, k->last->next, o);
	k->last = x;
	k->last_off = o;
	for (unsigned i = 0; i < x->h.n; i++) {
		const struct item *it = &x->it[i];
		if ((i && it->key <= x->it[i - 1].key) || !in_range(r, it->key))
			return FAIL(k, "bptree order: key %#" PRIx64 " at %u in leaf %#" PRIx64
				    " (range %#" PRIx64 "..%#" PRIx64 ")", it->key, i, o, r->lo,
				    r->hi);
		if (++k->items > k->limit)
			return FAIL(k, "bptree count: more than %" PRIu64 " items", k->limit);
		const void *v = ex_obj(k->p, it->val, it->len);
		if (!v)
			return FAIL(k, "bptree value: key %#" PRIx64 " has a bad value %#" PRIx64
				    " of %" PRIu64 " bytes", it->key, it->val, it->len);
		int rc = k->visit(k->arg, it->key, v, it->len);
		if (rc)
			return rc;
	}
	return 0;
}

static int chk_node(struct chk *k, spm_off_t o, int depth, int root, const struct range *r);

/* chk_inner -- inner x at o: fill, separators, then each child in its range. */
static int chk_inner(struct chk *k, spm_off_t o, const struct inner *x, int depth,
		     int root, const struct range *r)
{
	if (x->h.n > IMAX || x->h.n < (root ? 1u : IMIN))
		return FAIL(k, "bptree fill: inner node %#" PRIx64 " holds %u keys (%u..%u)",
			    o, x->h.n, root ? 1u : IMIN, IMAX);
	for (unsigned i = 0; i < x->h.n; i++)
		if ((i && x->key[i] <= x->key[i - 1]) || !in_range(r, x->key[i]))
			return FAIL(k, "bptree order: separator %#" PRIx64 " at %u in node %#"
				    PRIx64, x->key[i], i, o);
	for (unsigned i = 0; i <= x->h.n; i++) {
		struct range c = *r;
		if (i)
			c.has_lo = 1, c.lo = x->key[i - 1];
		if (i < x->h.n)
			c.has_hi = 1, c.hi = x->key[i];
		int rc = chk_node(k, x->child[i], depth + 1, 0, &c);
		if (rc)
			return rc;
	}
	return 0;
}

/* chk_node -- the subtree at o, all of whose keys lie in r. */
static int chk_node(struct chk *k, spm_off_t o, int depth, int root, const struct range *r)
{
	if (depth > 64)
		return FAIL(k, "bptree balance: deeper than 64 levels (a cycle?)");
	const struct hdr *h = ex_obj(k->p, o, sizeof(*h));
	if (!h || h->leaf > 1 ||
	    !ex_obj(k->p, o, h->leaf ? sizeof(struct leaf) : sizeof(struct inner)))
		return FAIL(k, "bptree node: bad pointer %#" PRIx64 " at depth %d%s", o, depth,
			    h && h->leaf > 1 ? " (bad leaf flag)" : "");
	if (!h->leaf)
		return chk_inner(k, o, (const struct inner *)h, depth, root, r);
	if (k->leaf_depth < 0)
		k->leaf_depth = depth;
	else if (k->leaf_depth != depth)
		return FAIL(k, "bptree balance: leaves at depths %d and %d", k->leaf_depth,
			    depth);
	return chk_leaf(k, o, (const struct leaf *)h, root, r);
}

int bptree_check(spm_pool *pool, const struct bptree *t, bptree_visit_fn visit,
		 void *arg, char *why, size_t whylen)
{
	struct chk k = {pool, visit, arg, why, whylen, 0, t->count, -1, 0, NULL};
	struct range all = {0, 0, 0, 0};
	if (!t->root)
		return t->count ? FAIL(&k, "bptree count: empty tree, count %" PRIu64,
				       t->count)
				: 0;
	int rc = chk_node(&k, t->root, 0, 1, &all);
	if (!rc && k.last->next)
		return FAIL(&k, "bptree chain: the last leaf %#" PRIx64 " links %#" PRIx64,
			    k.last_off, k.last->next);
	if (!rc && k.items != t->count)
		return FAIL(&k, "bptree count: %" PRIu64 " items, count says %" PRIu64,
			    k.items, t->count);
	return rc;
}
