/*
 * btree.h -- a persistent B-tree: a map from 64-bit keys to byte-string
 * values, on spm's public API.
 *
 * A node holds up to 15 sorted items {key, value offset, value size} and 16
 * children (minimum degree 8); every node but the root holds at least 7.
 * Values are separate objects of exactly their size.  Insertion splits full
 * nodes on the way down and deletion merges or borrows on the way down
 * (CLRS, chapter 18), so each operation is one pass from the root.
 *
 * Transactions: btree_put and btree_del must be called inside a
 * transaction of the calling thread (spm_tx_begin); they snapshot exactly
 * the lines they change, so the caller can add its own updates (a counter,
 * say) to the same transaction and commit or abort the lot.  On error the
 * caller must abort the transaction.  One writer at a time per tree.
 */
#ifndef EX_BTREE_H
#define EX_BTREE_H 1

#include <stddef.h>
#include <stdint.h>

#include <spm.h>

/* The tree's handle: 16 bytes to embed in a persistent object (the root). */
struct btree {
	spm_off_t root; /* 0: the tree is empty */
	uint64_t count; /* items */
};

/* btree_get -- the value of key (its size in *len), or NULL. */
void *btree_get(spm_pool *pool, const struct btree *t, uint64_t key, size_t *len);

/*
 * btree_put -- in a transaction: make key's value a new value of len bytes
 * (len >= 1) and return it in *val, to be filled by the caller before commit
 * (it is part of the transaction: a new object, or the old one snapshotted
 * when it has the same size).  0 or an spm error code.
 */
int btree_put(spm_pool *pool, struct btree *t, uint64_t key, size_t len, void **val);

/* btree_del -- in a transaction: remove key.  1 removed, 0 absent, < 0 error. */
int btree_del(spm_pool *pool, struct btree *t, uint64_t key);

/*
 * btree_check -- verify every invariant (pointers, fill of each node, key
 * order, all leaves at one depth, the item count) while calling visit on
 * each item in key order; safe on a damaged tree.  0, or -1 with the broken
 * invariant described in why, or visit's non-zero result.
 */
typedef int (*btree_visit_fn)(void *arg, uint64_t key, const void *val, size_t len);
int btree_check(spm_pool *pool, const struct btree *t, btree_visit_fn visit,
		void *arg, char *why, size_t whylen);

#endif
