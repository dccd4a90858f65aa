/* pmdk_hashmap.c -- the hash table workload on libpmemobj: the linear-hashing table of
 * examples/hashmap (64 * 2^level + split chained buckets in segments of 256 under a
 * directory that doubles; a bucket splits whenever the items outnumber the buckets), values
 * inline in the entries; op j inserts key(j) with a value-size value in one transaction. */
#include <inttypes.h>
#include <string.h>

#include "pmdk_internal.h"

#define N0 64u   /* buckets at level 0 */
#define SEG 256u /* buckets per segment */
#define DIR0 16u /* directory slots at first */

struct dir {
	uint64_t cap;  /* segment slots (a power of two) */
	PMEMoid seg[]; /* segments of SEG bucket heads, null until needed */
};

struct entry {
	PMEMoid next;
	uint64_t key;
	uint64_t len;
	uint8_t val[];
};

struct hashmap {
	PMEMoid dir;
	uint64_t count; /* items */
	uint64_t level; /* N0 << level buckets before this round's splits */
	uint64_t split; /* the next bucket to split */
};

struct root {
	uint64_t ops;
	struct hashmap map;
};
_Static_assert(sizeof(struct root) <= PMDK_LINE, "the root is one line");

static struct entry *E(PMEMoid o)
{
	return pmemobj_direct(o);
}

/* hash -- murmur3's 64-bit finaliser (as examples/hashmap). */
static uint64_t hash(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	k *= 0xc4ceb9fe1a85ec53ull;
	return k ^ (k >> 33);
}

static uint64_t nbuckets(const struct hashmap *h)
{
	return ((uint64_t)N0 << h->level) + h->split;
}

/* bucket -- the bucket of a hash value. */
static uint64_t bucket(const struct hashmap *h, uint64_t hv)
{
	uint64_t n = (uint64_t)N0 << h->level, b = hv & (n - 1);
	return b < h->split ? hv & (2 * n - 1) : b;
}

/* head -- the head pointer of bucket b (its segment exists). */
static PMEMoid *head(const struct hashmap *h, uint64_t b)
{
	struct dir *d = pmemobj_direct(h->dir);
	PMEMoid *seg = pmemobj_direct(d->seg[b / SEG]);
	return &seg[b % SEG];
}

/* set -- in a transaction: *w = v, snapshotted (nothing if it already is). */
static void set(PMEMoid *w, PMEMoid v)
{
	if (OID_EQUALS(*w, v))
		return;
	pmemobj_tx_add_range_direct(w, sizeof(*w));
	*w = v;
}

/* init -- in a transaction: an empty table. */
static void init(struct pmdk_ctx *c, uint64_t j)
{
	struct hashmap *h = &((struct root *)c->root)->map;
	(void)j;
	PMEMoid d = pmemobj_tx_zalloc(sizeof(struct dir) + DIR0 * sizeof(PMEMoid), PMDK_TYPE);
	struct dir *dir = pmemobj_direct(d);
	dir->cap = DIR0;
	dir->seg[0] = pmemobj_tx_zalloc(SEG * sizeof(PMEMoid), PMDK_TYPE);
	pmemobj_tx_add_range_direct(h, sizeof(*h));
	*h = (struct hashmap){.dir = d};
}

/* link_of -- the pointer that points to key's entry (or is null if absent). */
static PMEMoid *link_of(const struct hashmap *h, uint64_t key)
{
	PMEMoid *link = head(h, bucket(h, hash(key)));
	while (!OID_IS_NULL(*link) && E(*link)->key != key)
		link = &E(*link)->next;
	return link;
}

/* grow_dir -- in a transaction: a directory twice as large (the handle is snapshotted). */
static struct dir *grow_dir(struct hashmap *h, struct dir *d)
{
	uint64_t cap = 2 * d->cap;
	PMEMoid no = pmemobj_tx_zalloc(sizeof(struct dir) + cap * sizeof(PMEMoid), PMDK_TYPE);
	struct dir *nd = pmemobj_direct(no);
	memcpy(nd, d, sizeof(struct dir) + d->cap * sizeof(PMEMoid));
	nd->cap = cap;
	pmemobj_tx_free(h->dir);
	h->dir = no;
	return nd;
}

/* segment -- in a transaction: make sure the segment of bucket b exists. */
static void segment(struct hashmap *h, uint64_t b)
{
	struct dir *d = pmemobj_direct(h->dir);
	if (b / SEG >= d->cap)
		d = grow_dir(h, d);
	if (OID_IS_NULL(d->seg[b / SEG]))
		set(&d->seg[b / SEG], pmemobj_tx_zalloc(SEG * sizeof(PMEMoid), PMDK_TYPE));
}

/* split_one -- in a transaction: split bucket `split` into itself and split + N0 * 2^level,
 * keeping the order of both chains; advance split (the handle is snapshotted). */
static void split_one(struct hashmap *h)
{
	uint64_t n = (uint64_t)N0 << h->level, from = h->split, to = from + n;
	segment(h, to);
	PMEMoid *keep = head(h, from), *move = head(h, to);
	for (PMEMoid o = *keep; !OID_IS_NULL(o);) {
		struct entry *e = E(o);
		PMEMoid next = e->next;
		PMEMoid **tail = (hash(e->key) & (2 * n - 1)) == to ? &move : &keep;
		set(*tail, o);
		*tail = &e->next;
		o = next;
	}
	set(keep, OID_NULL);
	set(move, OID_NULL);
	if (++h->split == n) {
		h->level++;
		h->split = 0;
	}
}

/* put -- in a transaction: key's value becomes a new len-byte value; returns it to fill. */
static void *put(struct hashmap *h, uint64_t key, size_t len)
{
	PMEMoid *link = link_of(h, key);
	if (!OID_IS_NULL(*link)) { /* present (same size in a run): overwrite in place */
		struct entry *e = E(*link);
		pmemobj_tx_add_range_direct(e->val, len);
		return e->val;
	}
	PMEMoid *hd = head(h, bucket(h, hash(key)));
	PMEMoid o = pmemobj_tx_alloc(sizeof(struct entry) + len, PMDK_TYPE);
	struct entry *e = E(o);
	e->next = *hd;
	e->key = key;
	e->len = len;
	pmemobj_tx_add_range_direct(h, sizeof(*h));
	set(hd, o);
	if (++h->count > nbuckets(h))
		split_one(h);
	return e->val;
}

/* op -- in its transaction: op j inserts key(j) with its value. */
static void op(struct pmdk_ctx *c, uint64_t j)
{
	struct root *r = c->root;
	uint64_t key = pmdk_map_key(c, j);
	pmdk_tx_count(c, j);
	pmdk_fill(put(&r->map, key, c->value_size), c->value_size, j, key);
}

static uint64_t items(const struct pmdk_ctx *c)
{
	return ((const struct root *)c->root)->map.count;
}

/* ---- check ---------------------------------------------------------------- */

/* check_chain -- bucket b's chain: valid entries that hash to b, each visited. */
static int check_chain(struct pmdk_ctx *c, const struct hashmap *h, uint64_t b, PMEMoid o)
{
	for (; !OID_IS_NULL(o); o = E(o)->next) {
		const struct entry *e = pmdk_obj(c, o, sizeof(*e));
		if (!e || e->len > c->pool_size || !pmdk_obj(c, o, sizeof(*e) + e->len))
			return pmdk_fail(c, "hashmap chain: bad entry %#" PRIx64 " in bucket %" PRIu64,
					 o.off, b);
		if (c->visited >= h->count)
			return pmdk_fail(c, "hashmap count: more than %" PRIu64 " items", h->count);
		if (bucket(h, hash(e->key)) != b)
			return pmdk_fail(c, "hashmap chain membership: key %#" PRIx64 " in bucket %"
					 PRIu64 ", it hashes to %" PRIu64, e->key, b,
					 bucket(h, hash(e->key)));
		if (pmdk_map_visit(c, e->key, e->val, e->len))
			return -1;
	}
	return 0;
}

/* check_segment -- segment si: present iff it has live buckets, empty past the end. */
static int check_segment(struct pmdk_ctx *c, const struct hashmap *h, const struct dir *d,
			 uint64_t si)
{
	uint64_t nb = nbuckets(h);
	const PMEMoid *seg = NULL;
	if (!OID_IS_NULL(d->seg[si]) && !(seg = pmdk_obj(c, d->seg[si], SEG * sizeof(PMEMoid))))
		return pmdk_fail(c, "hashmap directory: segment %" PRIu64 " at a bad pointer", si);
	if (!seg)
		return si * SEG < nb ? pmdk_fail(c, "hashmap directory: segment %" PRIu64
						 " missing", si) : 0;
	for (uint64_t b = si * SEG; b < (si + 1) * SEG; b++) {
		if (b >= nb && !OID_IS_NULL(seg[b % SEG]))
			return pmdk_fail(c, "hashmap fill: bucket %" PRIu64 " past the end (%" PRIu64
					 ") is not empty", b, nb);
		if (check_chain(c, h, b, seg[b % SEG]))
			return -1;
	}
	return 0;
}

/* check_table -- the directory's shape, the fill, then every segment. */
static int check_table(struct pmdk_ctx *c, const struct hashmap *h)
{
	const struct dir *d = pmdk_obj(c, h->dir, sizeof(*d));
	if (!d || d->cap < DIR0 || (d->cap & (d->cap - 1)) || d->cap > (1u << 24) ||
	    !pmdk_obj(c, h->dir, sizeof(*d) + d->cap * sizeof(PMEMoid)))
		return pmdk_fail(c, "hashmap directory: bad pointer %#" PRIx64, h->dir.off);
	if (h->level > 32 || h->split >= (uint64_t)N0 << h->level ||
	    nbuckets(h) > d->cap * SEG || h->count > nbuckets(h))
		return pmdk_fail(c, "hashmap size: level %" PRIu64 ", split %" PRIu64 ", %" PRIu64
				 " items, directory of %" PRIu64, h->level, h->split, h->count,
				 d->cap);
	for (uint64_t si = 0; si < d->cap; si++)
		if (check_segment(c, h, d, si))
			return -1;
	return 0;
}

static int check(struct pmdk_ctx *c, uint64_t *n)
{
	const struct root *r = c->root;
	if (pmdk_map_begin(c))
		return -1;
	return pmdk_map_end(c, check_table(c, &r->map), r->map.count, n);
}

const struct pmdk_wl pmdk_hashmap_wl = {
	.name = "hashmap",
	.root_size = sizeof(struct root),
	.init = init,
	.op = op,
	.items = items,
	.check = check,
};
