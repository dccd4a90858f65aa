/*
 * rbtree.h -- a persistent red-black tree: a map from 64-bit keys to
 * byte-string values, on spm's public API.
 *
 * Each node carries its value inline (one object per item, as in the
 * papers' RB-tree workload).  Insertion and deletion rebalance with
 * recolourings and at most two (insert) or three (delete) rotations
 * (CLRS, chapter 13); 0 is the nil leaf, which is black.
 *
 * Transactions: rbtree_put and rbtree_del must be called inside a
 * transaction of the calling thread; each snapshots only the header line of
 * every node it relinks or recolours.  On error the caller must abort the
 * transaction.  One writer at a time per tree.
 */
#ifndef EX_RBTREE_H
#define EX_RBTREE_H 1

#include <stddef.h>
#include <stdint.h>

#include <spm.h>

/* The tree's handle: 16 bytes to embed in a persistent object. */
struct rbtree {
	spm_off_t root; /* 0: empty */
	uint64_t count;
};

/* rbtree_get -- the value of key (its size in *len), or NULL. */
void *rbtree_get(spm_pool *pool, const struct rbtree *t, uint64_t key, size_t *len);

/*
 * rbtree_put -- in a transaction: make key's value a new value of len bytes
 * and return it in *val, to be filled by the caller before commit.  A value
 * of another size replaces the node.  0 or an spm error code.
 */
int rbtree_put(spm_pool *pool, struct rbtree *t, uint64_t key, size_t len, void **val);

/* rbtree_del -- in a transaction: remove key.  1 removed, 0 absent, < 0 error. */
int rbtree_del(spm_pool *pool, struct rbtree *t, uint64_t key);

/*
 * rbtree_check -- verify every invariant (pointers, parent links, key
 * order, colours: a black root, no red node with a red child, one black
 * height; the item count) while calling visit on each item in key order;
 * safe on a damaged tree.  0, or -1 with the broken invariant in why, or
 * visit's non-zero result.
 */
typedef int (*rbtree_visit_fn)(void *arg, uint64_t key, const void *val, size_t len);
int rbtree_check(spm_pool *pool, const struct rbtree *t, rbtree_visit_fn visit,
		 void *arg, char *why, size_t whylen);

#endif
