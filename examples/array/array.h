/*
 * array.h -- a persistent fixed array of equal-size elements whose pairs
 * are swapped in transactions (the papers' "array swap" workload), on spm's
 * public API.  Elements start on line boundaries, so a swap writes exactly
 * the lines of its two elements.
 *
 * Transactions: array_init and array_swap must be called inside a
 * transaction of the calling thread.  On error the caller must abort it.
 */
#ifndef EX_ARRAY_H
#define EX_ARRAY_H 1

#include <stddef.h>
#include <stdint.h>

#include <spm.h>

/* The array's handle: 32 bytes to embed in a persistent object. */
struct array {
	spm_off_t data;  /* n elements, one every `stride` bytes; 0: none yet */
	uint64_t n;
	uint64_t size;   /* bytes per element */
	uint64_t stride; /* size rounded up to whole lines */
};

/* array_init -- in a transaction: n zeroed elements of size bytes, to be
 * filled (array_at) before commit.  0 or an error code. */
int array_init(spm_pool *pool, struct array *a, uint64_t n, size_t size);

/* array_at -- element i (i < n). */
void *array_at(spm_pool *pool, const struct array *a, uint64_t i);

/* array_swap -- in a transaction: exchange elements i and j (i != j). */
int array_swap(spm_pool *pool, const struct array *a, uint64_t i, uint64_t j);

/* array_check -- the handle describes an array inside the pool: 0, or -1
 * with the broken invariant in why.  (What the elements hold is the
 * caller's to check.) */
int array_check(spm_pool *pool, const struct array *a, char *why, size_t whylen);

#endif
