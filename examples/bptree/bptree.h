/*
 * bptree.h -- a persistent B+ tree: a map from 64-bit keys to byte-string
 * values, on spm's public API.
 *
 * Items {key, value offset, value size} live in the leaves only, 8..16 to a
 * leaf, sorted, and every leaf links to the next one in key order; inner
 * nodes hold 7..15 separator keys and one more child (the root: at least
 * one key, or a single leaf of 1..16 items), child i holding the keys from
 * separator i-1 (included) to separator i (excluded).  Values are separate
 * objects of exactly their size.  Insertion splits full nodes on the way
 * down (a leaf's upper half moves to a new right neighbour, whose first key
 * is copied up); deletion borrows or merges on the way down, so every
 * operation is one pass from the root.
 *
 * Transactions: bptree_put and bptree_del must be called inside a
 * transaction of the calling thread; they snapshot exactly the lines they
 * change.  On error the caller must abort the transaction.  One writer at a
 * time per tree.
 */
#ifndef EX_BPTREE_H
#define EX_BPTREE_H 1

#include <stddef.h>
#include <stdint.h>

#include <spm.h>

/* The tree's handle: 16 bytes to embed in a persistent object. */
struct bptree {
	spm_off_t root; /* 0: the tree is empty */
	uint64_t count; /* items */
};

/* bptree_get -- the value of key (its size in *len), or NULL. */
void *bptree_get(spm_pool *pool, const struct bptree *t, uint64_t key, size_t *len);

/*
 * bptree_put -- in a transaction: make key's value a new value of len bytes
 * (len >= 1) and return it in *val, to be filled by the caller before commit
 * (a new object, or the old one snapshotted when it has the same size).
 * 0 or an spm error code.
 */
int bptree_put(spm_pool *pool, struct bptree *t, uint64_t key, size_t len, void **val);

/* bptree_del -- in a transaction: remove key.  1 removed, 0 absent, < 0 error. */
int bptree_del(spm_pool *pool, struct bptree *t, uint64_t key);

/*
 * bptree_check -- verify every invariant (pointers, fill of each node, key
 * order within nodes and against the separators above, all leaves at one
 * depth, the leaf chain linking the leaves in key order and ending in 0,
 * the item count) while calling visit on each item in key order; safe on a
 * damaged tree.  0, or -1 with the broken invariant in why, or visit's
 * non-zero result.
 */
typedef int (*bptree_visit_fn)(void *arg, uint64_t key, const void *val, size_t len);
int bptree_check(spm_pool *pool, const struct bptree *t, bptree_visit_fn visit,
		 void *arg, char *why, size_t whylen);

#endif
