/*
 * hashmap.c -- a persistent linear-hashing table (see hashmap.h).  Every
 * pointer store goes through set(), which snapshots the word first and
 * skips stores that change nothing, so a transaction logs exactly the lines
 * it modifies.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ex_util.h"
#include "hashmap.h"

#define N0 64u        /* buckets at level 0 */
#define SEG 256u      /* buckets per segment */
#define DIR0 16u      /* directory slots at first */

struct dir {
	uint64_t cap;      /* segment slots (a power of two) */
	spm_off_t seg[];   /* segments of SEG bucket heads, 0 until needed */
};

struct entry {
	spm_off_t next;
	uint64_t key;
	uint64_t len;
	uint8_t val[];
};

static struct entry *E(spm_pool *p, spm_off_t off)
{
	return spm_ptr(p, off);
}

/* hash -- murmur3's 64-bit finaliser. */
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
static spm_off_t *head(spm_pool *p, const struct hashmap *h, uint64_t b)
{
	struct dir *d = spm_ptr(p, h->dir);
	spm_off_t *seg = spm_ptr(p, d->seg[b / SEG]);
	return &seg[b % SEG];
}

/* set -- *w = v in the transaction (nothing if it already is). */
static int set(spm_pool *p, spm_off_t *w, spm_off_t v)
{
	if (*w == v)
		return 0;
	int rc = spm_tx_add(p, w, sizeof(*w));
	if (!rc)
		*w = v;
	return rc;
}

int hashmap_init(spm_pool *pool, struct hashmap *h)
{
	spm_off_t d = spm_tx_alloc(pool, sizeof(struct dir) + DIR0 * sizeof(spm_off_t));
	spm_off_t s = spm_tx_alloc(pool, SEG * sizeof(spm_off_t));
	if (!d || !s)
		return SPM_E_NOSPACE;
	int rc = spm_tx_add(pool, h, sizeof(*h));
	if (rc)
		return rc;
	struct dir *dir = spm_ptr(pool, d);
	dir->cap = DIR0;
	dir->seg[0] = s;
	*h = (struct hashmap){.dir = d};
	return 0;
}

/* link_of -- the pointer that points to key's entry (or is 0 if absent). */
static spm_off_t *link_of(spm_pool *p, const struct hashmap *h, uint64_t key)
{
	spm_off_t *link = head(p, h, bucket(h, hash(key)));
	while (*link && E(p, *link)->key != key)
		link = &E(p, *link)->next;
	return link;
}

void *hashmap_get(spm_pool *pool, const struct hashmap *h, uint64_t key, size_t *len)
{
	spm_off_t o = *link_of(pool, h, key);
	if (!o)
		return NULL;
	*len = E(pool, o)->len;
	return E(pool, o)->val;
}

/* new_entry -- an entry for key with room for len bytes, owned by the tx. */
static spm_off_t new_entry(spm_pool *p, uint64_t key, size_t len, spm_off_t next)
{
	spm_off_t o = spm_tx_alloc(p, sizeof(struct entry) + len);
	if (o) {
		struct entry *e = E(p, o);
		e->next = next;
		e->key = key;
		e->len = len;
	}
	return o;
}

/* segment -- make sure the segment of bucket b exists (directory grown). */
static int segment(spm_pool *p, struct hashmap *h, uint64_t b)
{
	struct dir *d = spm_ptr(p, h->dir);
	uint64_t si = b / SEG;
	if (si >= d->cap) {
		/* a directory twice as large; the old one is freed */
		uint64_t cap = 2 * d->cap;
		spm_off_t no = spm_tx_alloc(p, sizeof(struct dir) + cap * sizeof(spm_off_t));
		if (!no)
			return SPM_E_NOSPACE;
		struct dir *nd = spm_ptr(p, no);
		memcpy(nd, d, sizeof(struct dir) + d->cap * sizeof(spm_off_t));
		nd->cap = cap;
		int rc = spm_tx_free(p, h->dir);
		if (rc)
			return rc;
		h->dir = no; /* the handle was snapshotted by the caller */
		d = nd;
	}
	if (d->seg[si])
		return 0;
	spm_off_t s = spm_tx_alloc(p, SEG * sizeof(spm_off_t));
	return s ? set(p, &d->seg[si], s) : SPM_E_NOSPACE;
}

/*
 * split_one -- split bucket `split` into itself and bucket split + 64 *
 * 2^level, keeping the order of both chains; advance split (and level at
 * the end of a round).  The handle was snapshotted by the caller.
 */
static int split_one(spm_pool *p, struct hashmap *h)
{
	uint64_t n = (uint64_t)N0 << h->level, from = h->split, to = from + n;
	int rc = segment(p, h, to);
	if (rc)
		return rc;
	spm_off_t *keep = head(p, h, from), *move = head(p, h, to);
	spm_off_t o = *keep;
	while (o) {
		struct entry *e = E(p, o);
		spm_off_t next = e->next;
		spm_off_t **tail = (hash(e->key) & (2 * n - 1)) == to ? &move : &keep;
		if ((rc = set(p, *tail, o)))
			return rc;
		*tail = &e->next;
		o = next;
	}
	if ((rc = set(p, keep, 0)) || (rc = set(p, move, 0)))
		return rc;
	if (++h->split == n) {
		h->level++;
		h->split = 0;
	}
	return 0;
}

int hashmap_put(spm_pool *pool, struct hashmap *h, uint64_t key, size_t len,
		void **val)
{
	if (len == 0)
		return SPM_E_INVAL;
	spm_off_t *link = link_of(pool, h, key), o;
	int rc;
	if (*link) {
		struct entry *e = E(pool, *link);
		if (e->len == len) {
			/* same size: overwrite in place */
			if ((rc = spm_tx_add(pool, e->val, len)))
				return rc;
			*val = e->val;
			return 0;
		}
		/* another size: a new entry takes the old one's place */
		if (!(o = new_entry(pool, key, len, e->next)))
			return SPM_E_NOSPACE;
		if ((rc = spm_tx_free(pool, *link)) || (rc = set(pool, link, o)))
			return rc;
		*val = E(pool, o)->val;
		return 0;
	}
	/* a new entry at the head of its chain */
	spm_off_t *hd = head(pool, h, bucket(h, hash(key)));
	if (!(o = new_entry(pool, key, len, *hd)))
		return SPM_E_NOSPACE;
	if ((rc = spm_tx_add(pool, h, sizeof(*h))) || (rc = set(pool, hd, o)))
		return rc;
	*val = E(pool, o)->val;
	if (++h->count > nbuckets(h))
		return split_one(pool, h);
	return 0;
}

int hashmap_del(spm_pool *pool, struct hashmap *h, uint64_t key)
{
	spm_off_t *link = link_of(pool, h, key), o = *link;
	if (!o)
		return 0;
	int rc;
	if ((rc = spm_tx_add(pool, h, sizeof(*h))) || (rc = set(pool, link, E(pool, o)->next)) ||
	    (rc = spm_tx_free(pool, o)))
		return rc;
	h->count--;
	return 1;
}

/* ---- check ---------------------------------------------------------------- */

#define FAIL(...) (snprintf(why, whylen, __VA_ARGS__), -1)

int hashmap_check(spm_pool *pool, const struct hashmap *h, hashmap_visit_fn visit,
		  void *arg, char *why, size_t whylen)
{
	const struct dir *d = ex_obj(pool, h->dir, sizeof(*d));
	if (!d || d->cap < DIR0 || (d->cap & (d->cap - 1)) || d->cap > (1u << 24) ||
	    !ex_obj(pool, h->dir, sizeof(*d) + d->cap * sizeof(spm_off_t)))
		return FAIL("hashmap directory: bad pointer %#" PRIx64, h->dir);
	if (h->level > 32 || h->split >= (uint64_t)N0 << h->level)
		return FAIL("hashmap size: level %" PRIu64 ", split %" PRIu64, h->level,
			    h->split);
	uint64_t nb = nbuckets(h), items = 0;
	if (nb > d->cap * SEG)
		return FAIL("hashmap directory: %" PRIu64 " buckets, room for %" PRIu64, nb,
			    d->cap * SEG);
	if (h->count > nb)
		return FAIL("hashmap fill: %" PRIu64 " items in %" PRIu64 " buckets", h->count,
			    nb);
	for (uint64_t si = 0; si < d->cap; si++) {
		const spm_off_t *seg = NULL;
		if (d->seg[si] && !(seg = ex_obj(pool, d->seg[si], SEG * sizeof(spm_off_t))))
			return FAIL("hashmap directory: segment %" PRIu64 " at bad pointer %#"
				    PRIx64, si, d->seg[si]);
		if (!seg) {
			if (si * SEG < nb)
				return FAIL("hashmap directory: segment %" PRIu64 " missing", si);
			continue;
		}
		for (uint64_t b = si * SEG; b < (si + 1) * SEG; b++) {
			spm_off_t o = seg[b % SEG];
			if (b >= nb && o)
				return FAIL("hashmap fill: bucket %" PRIu64 " past the end (%" PRIu64
					    ") is not empty", b, nb);
			for (; o; o = ((const struct entry *)spm_ptr(pool, o))->next) {
				const struct entry *e = ex_obj(pool, o, sizeof(*e));
				if (!e || e->len > spm_size(pool) ||
				    !ex_obj(pool, o, sizeof(*e) + e->len))
					return FAIL("hashmap chain: bad entry %#" PRIx64
						    " in bucket %" PRIu64, o, b);
				if (++items > h->count)
					return FAIL("hashmap count: more than %" PRIu64
						    " items (a cycle?)", h->count);
				if (bucket(h, hash(e->key)) != b)
					return FAIL("hashmap chain membership: key %#" PRIx64
						    " in bucket %" PRIu64 ", it hashes to %" PRIu64,
						    e->key, b, bucket(h, hash(e->key)));
				int rc = visit(arg, e->key, e->val, e->len);
				if (rc)
					return rc;
			}
		}
	}
	if (items != h->count)
		return FAIL("hashmap count: %" PRIu64 " items, count says %" PRIu64, items,
			    h->count);
	return 0;
}
