/*
 * skiplist.c -- a persistent skip list (Pugh 1990) with a head node of full
 * height.  A change relinks the predecessors of a node at each of its
 * levels: relink() snapshots exactly those links (one range per
 * predecessor, whose links at consecutive levels are contiguous), and
 * new nodes come from spm_tx_alloc and need no snapshot.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ex_util.h"
#include "skiplist.h"

#define MAXL SKIPLIST_MAX_LEVEL

struct node {
	uint64_t key;
	uint32_t len;     /* of the value */
	uint32_t height;  /* in the lists of levels 0..height-1 */
	spm_off_t next[]; /* height links, then the value */
};

static struct node *N(spm_pool *p, spm_off_t off)
{
	return spm_ptr(p, off);
}

/* node_size -- the bytes of a node of height h with a value of len bytes. */
static size_t node_size(unsigned h, size_t len)
{
	return sizeof(struct node) + h * sizeof(spm_off_t) + len;
}

/* value_of -- the value of x, after its links. */
static uint8_t *value_of(struct node *x)
{
	return (uint8_t *)&x->next[x->height];
}

/* height_of -- one level, and one more for each 2-bit group of rnd, from
 * the lowest, that is 11 (probability 1/4 each), up to MAXL. */
static unsigned height_of(uint64_t rnd)
{
	unsigned h = 1;
	while (h < MAXL && (rnd & 3) == 3) {
		h++;
		rnd >>= 2;
	}
	return h;
}

/* new_node -- a node of height h for key, its links unset; 0 if no space. */
static spm_off_t new_node(spm_pool *p, uint64_t key, size_t len, unsigned h)
{
	spm_off_t o = spm_tx_alloc(p, node_size(h, len));
	if (o) {
		struct node *x = N(p, o);
		x->key = key;
		x->len = (uint32_t)len;
		x->height = h;
	}
	return o;
}

int skiplist_init(spm_pool *pool, struct skiplist *l)
{
	spm_off_t h = new_node(pool, 0, 0, MAXL);
	if (!h)
		return SPM_E_NOSPACE;
	memset(N(pool, h)->next, 0, MAXL * sizeof(spm_off_t));
	int rc = spm_tx_add(pool, l, sizeof(*l));
	if (rc)
		return rc;
	*l = (struct skiplist){.head = h};
	return 0;
}

/*
 * find -- the node of key, or 0.  pred (if not NULL) gets, for every level,
 * the last node before key there (the head above the levels in use).
 */
static spm_off_t find(spm_pool *p, const struct skiplist *l, uint64_t key, spm_off_t *pred)
{
	spm_off_t x = l->head;
	unsigned top = l->level < MAXL ? (unsigned)l->level : MAXL;
	for (unsigned i = top; pred && i < MAXL; i++)
		pred[i] = x;
	for (unsigned i = top; i-- > 0;) {
		spm_off_t y;
		while ((y = N(p, x)->next[i]) && N(p, y)->key < key)
			x = y;
		if (pred)
			pred[i] = x;
	}
	spm_off_t y = N(p, x)->next[0];
	return y && N(p, y)->key == key ? y : 0;
}

void *skiplist_get(spm_pool *pool, const struct skiplist *l, uint64_t key, size_t *len)
{
	spm_off_t o = find(pool, l, key, NULL);
	if (!o)
		return NULL;
	*len = N(pool, o)->len;
	return value_of(N(pool, o));
}

/* relink -- the link of pred[i] at level i becomes to[i], for i < h; the
 * links of one predecessor at consecutive levels are one snapshot. */
static int relink(spm_pool *p, const spm_off_t *pred, unsigned h, const spm_off_t *to)
{
	for (unsigned i = 0; i < h;) {
		unsigned k = i + 1;
		while (k < h && pred[k] == pred[i])
			k++;
		struct node *x = N(p, pred[i]);
		int rc = spm_tx_add(p, &x->next[i], (k - i) * sizeof(spm_off_t));
		if (rc)
			return rc;
		for (; i < k; i++)
			x->next[i] = to[i];
	}
	return 0;
}

/* replace -- a node with a value of len bytes takes o's place (same key,
 * height and links); o is freed. */
static int replace(spm_pool *p, const spm_off_t *pred, spm_off_t o, size_t len, void **val)
{
	struct node *x = N(p, o);
	spm_off_t no = new_node(p, x->key, len, x->height), to[MAXL];
	if (!no)
		return SPM_E_NOSPACE;
	struct node *n = N(p, no);
	memcpy(n->next, x->next, x->height * sizeof(spm_off_t));
	for (unsigned i = 0; i < x->height; i++)
		to[i] = no;
	int rc = relink(p, pred, x->height, to);
	if (!rc)
		rc = spm_tx_free(p, o);
	if (!rc)
		*val = value_of(n);
	return rc;
}

int skiplist_put(spm_pool *pool, struct skiplist *l, uint64_t key, size_t len,
		 uint64_t rnd, void **val)
{
	if (len == 0 || len > UINT32_MAX)
		return SPM_E_INVAL;
	spm_off_t pred[MAXL], to[MAXL];
	spm_off_t o = find(pool, l, key, pred);
	int rc;
	if (o) {
		struct node *x = N(pool, o);
		if (x->len != len)
			return replace(pool, pred, o, len, val);
		if ((rc = spm_tx_add(pool, value_of(x), len)))
			return rc;
		*val = value_of(x);
		return 0;
	}
	unsigned h = height_of(rnd);
	spm_off_t no = new_node(pool, key, len, h);
	if (!no)
		return SPM_E_NOSPACE;
	struct node *n = N(pool, no);
	for (unsigned i = 0; i < h; i++) {
		n->next[i] = N(pool, pred[i])->next[i];
		to[i] = no;
	}
	if ((rc = spm_tx_add(pool, l, sizeof(*l))) || (rc = relink(pool, pred, h, to)))
		return rc;
	l->count++;
	if (h > l->level)
		l->level = h;
	*val = value_of(n);
	return 0;
}

int skiplist_del(spm_pool *pool, struct skiplist *l, uint64_t key)
{
	spm_off_t pred[MAXL], to[MAXL];
	spm_off_t o = find(pool, l, key, pred);
	if (!o)
		return 0;
	struct node *x = N(pool, o), *head = N(pool, l->head);
	for (unsigned i = 0; i < x->height; i++)
		to[i] = x->next[i];
	int rc = spm_tx_add(pool, l, sizeof(*l));
	if (!rc)
		rc = relink(pool, pred, x->height, to);
	if (rc)
		return rc;
	l->count--;
	while (l->level > 0 && !head->next[l->level - 1])
		l->level--; /* the top levels emptied */
	if ((rc = spm_tx_free(pool, o)))
		return rc;
	return 1;
}

/* ---- check ---------------------------------------------------------------- */

struct chk {
	spm_pool *p;
	const struct skiplist *l;
	char *why;
	size_t whylen;
	spm_off_t want[MAXL]; /* the node each level's list must reach next */
};

#define FAIL(k, ...) (snprintf((k)->why, (k)->whylen, __VA_ARGS__), -1)

/* chk_head -- the head node, the level in use, and the links above it. */
static int chk_head(struct chk *k)
{
	const struct node *h = ex_obj(k->p, k->l->head, node_size(MAXL, 0));
	if (!h)
		return FAIL(k, "skiplist head: bad pointer %#" PRIx64, k->l->head);
	if (h->height != MAXL)
		return FAIL(k, "skiplist head: height %u, not %u", h->height, MAXL);
	if (k->l->level > MAXL)
		return FAIL(k, "skiplist level: %" PRIu64 " levels in use (at most %u)",
			    k->l->level, MAXL);
	for (unsigned i = 0; i < MAXL; i++) {
		if (i >= k->l->level && h->next[i])
			return FAIL(k, "skiplist level: level %u is above the %" PRIu64
				    " in use but links %#" PRIx64, i, k->l->level, h->next[i]);
		k->want[i] = h->next[i];
	}
	if (k->l->level && !h->next[k->l->level - 1])
		return FAIL(k, "skiplist level: the top level in use, %" PRIu64 ", is empty",
			    k->l->level - 1);
	return 0;
}

/* chk_node -- node o, met on level 0 after a key below its own (if any):
 * its size, height and key, and every level it is on reaches it; *out = it. */
static int chk_node(struct chk *k, spm_off_t o, int has_prev, uint64_t prev,
		    const struct node **out)
{
	const struct node *x = ex_obj(k->p, o, sizeof(*x));
	if (!x)
		return FAIL(k, "skiplist node: bad pointer %#" PRIx64, o);
	if (x->height < 1 || x->height > k->l->level)
		return FAIL(k, "skiplist node: %#" PRIx64 " has height %u (levels in use %"
			    PRIu64 ")", o, x->height, k->l->level);
	if (x->len == 0 || !ex_obj(k->p, o, node_size(x->height, x->len)))
		return FAIL(k, "skiplist node: %#" PRIx64 " has a bad value size %u", o, x->len);
	if (has_prev && x->key <= prev)
		return FAIL(k, "skiplist order: key %#" PRIx64 " after %#" PRIx64, x->key, prev);
	for (unsigned i = 0; i < x->height; i++) {
		if (k->want[i] != o)
			return FAIL(k, "skiplist links: level %u reaches %#" PRIx64 " where node %#"
				    PRIx64 " (key %#" PRIx64 ", height %u) is next", i, k->want[i],
				    o, x->key, x->height);
		k->want[i] = x->next[i];
	}
	*out = x;
	return 0;
}

int skiplist_check(spm_pool *pool, const struct skiplist *l, skiplist_visit_fn visit,
		   void *arg, char *why, size_t whylen)
{
	struct chk k = {.p = pool, .l = l, .why = why, .whylen = whylen};
	if (chk_head(&k))
		return -1;
	uint64_t items = 0, prev = 0;
	for (spm_off_t o = k.want[0]; o;) {
		const struct node *x;
		if (chk_node(&k, o, items > 0, prev, &x))
			return -1;
		if (++items > l->count)
			return FAIL(&k, "skiplist count: more than %" PRIu64 " items", l->count);
		int rc = visit(arg, x->key, (const uint8_t *)&x->next[x->height], x->len);
		if (rc)
			return rc;
		prev = x->key;
		o = x->next[0];
	}
	for (unsigned i = 1; i < MAXL; i++)
		if (k.want[i])
			return FAIL(&k, "skiplist links: level %u goes on past the last node, to %#"
				    PRIx64, i, k.want[i]);
	if (items != l->count)
		return FAIL(&k, "skiplist count: %" PRIu64 " items, count says %" PRIu64, items,
			    l->count);
	return 0;
}
