/*
 * skiplist.h -- a persistent skip list: a map from 64-bit keys to
 * byte-string values, on spm's public API.
 *
 * Each node carries its key, its value inline (one object per item, as the
 * rbtree) and a tower of 1..SKIPLIST_MAX_LEVEL forward links; a node is in
 * the lists of levels 0..height-1, and each level is sorted by key (Pugh,
 * "Skip lists: a probabilistic alternative to balanced trees", CACM 1990).
 * A head node of full height starts every level.  The caller chooses the
 * height of a new node by handing skiplist_put a random word (each further
 * level with probability 1/4): the list is then a function of its
 * operations and their words, never of a generator's hidden state.
 *
 * Transactions: skiplist_init, skiplist_put and skiplist_del must be called
 * inside a transaction of the calling thread; they snapshot only the links
 * they change (and the handle).  On error the caller must abort the
 * transaction.  One writer at a time per list.
 */
#ifndef EX_SKIPLIST_H
#define EX_SKIPLIST_H 1

#include <stddef.h>
#include <stdint.h>

#include <spm.h>

#define SKIPLIST_MAX_LEVEL 20 /* 4^20 items before the top level fills up */

/* The list's handle: 24 bytes to embed in a persistent object. */
struct skiplist {
	spm_off_t head;  /* the head node (skiplist_init) */
	uint64_t count;  /* items */
	uint64_t level;  /* levels in use: the head's links above are 0 */
};

/* skiplist_init -- in a transaction: an empty list (its head node). */
int skiplist_init(spm_pool *pool, struct skiplist *l);

/* skiplist_get -- the value of key (its size in *len), or NULL. */
void *skiplist_get(spm_pool *pool, const struct skiplist *l, uint64_t key, size_t *len);

/*
 * skiplist_put -- in a transaction: make key's value a new value of len
 * bytes (len >= 1) and return it in *val, to be filled by the caller before
 * commit.  A new key's node is 1 + (the number of trailing pairs of 1 bits
 * of rnd) levels high, at most SKIPLIST_MAX_LEVEL; a value of another size
 * replaces the node (same height).  0 or an spm error code.
 */
int skiplist_put(spm_pool *pool, struct skiplist *l, uint64_t key, size_t len,
		 uint64_t rnd, void **val);

/* skiplist_del -- in a transaction: remove key.  1 removed, 0 absent, < 0 error. */
int skiplist_del(spm_pool *pool, struct skiplist *l, uint64_t key);

/*
 * skiplist_check -- verify every invariant (pointers, node heights, level 0
 * sorted by key, each level i exactly the nodes higher than i in the same
 * order, nothing above the level in use, the item count) while calling
 * visit on each item in key order; safe on a damaged list.  0, or -1 with
 * the broken invariant in why, or visit's non-zero result.
 */
typedef int (*skiplist_visit_fn)(void *arg, uint64_t key, const void *val, size_t len);
int skiplist_check(spm_pool *pool, const struct skiplist *l, skiplist_visit_fn visit,
		   void *arg, char *why, size_t whylen);

#endif
