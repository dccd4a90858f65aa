/*
 * ex_util.h -- two helpers every example library uses on top of <spm.h>:
 * tight transaction snapshots, and following persistent pointers that may
 * be garbage.
 */
#ifndef EX_UTIL_H
#define EX_UTIL_H 1

#include <stddef.h>

#include <spm.h>

/*
 * ex_tx_add_ranges -- spm_tx_add of n ranges given in increasing address
 * order, merging ranges whose lines overlap or touch into one snapshot.
 * Each spm_tx_add is one log write and one barrier, and spm snapshots whole
 * lines, so this logs every changed line once and nothing else.
 */
struct ex_range {
	const void *addr;
	size_t len; /* 0: skipped */
};
int ex_tx_add_ranges(spm_pool *pool, const struct ex_range *r, unsigned n);

/*
 * ex_obj -- the view address of the object [off, off+len) if it lies inside
 * the pool and off is line aligned (every spm object is); else NULL.  For
 * following persistent pointers where they may be garbage (a check after a
 * crash of a design without counter-atomicity).
 */
void *ex_obj(spm_pool *pool, spm_off_t off, size_t len);

#endif
