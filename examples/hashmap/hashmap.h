/*
 * hashmap.h -- a persistent chained hash table that grows: a map from
 * 64-bit keys to byte-string values, on spm's public API.
 *
 * Linear hashing (Litwin 1980): the table has 64 * 2^level + split buckets;
 * a key hashing to h lives in bucket h mod (64 * 2^level), or h mod
 * (64 * 2^(level+1)) if that is below split.  Whenever an insertion makes
 * the items outnumber the buckets, bucket `split` is split in two: only its
 * own chain is rewritten, so growing costs a bounded transaction, never a
 * rehash of the whole table.  Buckets live in segments of 256 reached
 * through a directory that doubles when full.  Each entry carries its value
 * inline.
 *
 * Transactions: hashmap_init, hashmap_put and hashmap_del must be called
 * inside a transaction of the calling thread; they snapshot only the words
 * they change (bucket heads, next pointers, the handle).  On error the
 * caller must abort the transaction.  One writer at a time per table.
 */
#ifndef EX_HASHMAP_H
#define EX_HASHMAP_H 1

#include <stddef.h>
#include <stdint.h>

#include <spm.h>

/* The table's handle: 32 bytes to embed in a persistent object. */
struct hashmap {
	spm_off_t dir;  /* the segment directory */
	uint64_t count; /* items */
	uint64_t level; /* 64 << level buckets before this round's splits */
	uint64_t split; /* the next bucket to split */
};

/* hashmap_init -- in a transaction: an empty table in *h. 0 or an error. */
int hashmap_init(spm_pool *pool, struct hashmap *h);

/* hashmap_get -- the value of key (its size in *len), or NULL. */
void *hashmap_get(spm_pool *pool, const struct hashmap *h, uint64_t key, size_t *len);

/*
 * hashmap_put -- in a transaction: make key's value a new value of len
 * bytes and return it in *val, to be filled by the caller before commit.
 * 0 or an spm error code.
 */
int hashmap_put(spm_pool *pool, struct hashmap *h, uint64_t key, size_t len,
		void **val);

/* hashmap_del -- in a transaction: remove key.  1 removed, 0 absent, < 0 error. */
int hashmap_del(spm_pool *pool, struct hashmap *h, uint64_t key);

/*
 * hashmap_check -- verify every invariant (directory and segments, every
 * entry in the chain of the bucket its key hashes to, no more items than
 * buckets, empty buckets past the end, the item count) while calling visit
 * on each item; safe on a damaged table.  0, or -1 with the broken
 * invariant in why, or visit's non-zero result.
 */
typedef int (*hashmap_visit_fn)(void *arg, uint64_t key, const void *val, size_t len);
int hashmap_check(spm_pool *pool, const struct hashmap *h, hashmap_visit_fn visit,
		  void *arg, char *why, size_t whylen);

#endif
