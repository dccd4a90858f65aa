/*
 * ex_util.c -- tight transaction snapshots and checked persistent pointers.
 */
#include <stdint.h>

#include "ex_util.h"

int ex_tx_add_ranges(spm_pool *pool, const struct ex_range *r, unsigned n)
{
	unsigned i = 0;
	while (i < n) {
		if (r[i].len == 0) {
			i++;
			continue;
		}
		uintptr_t lo = (uintptr_t)r[i].addr, hi = lo + r[i].len;
		/* absorb the next ranges that start at most one line past ours */
		while (++i < n) {
			uintptr_t a = (uintptr_t)r[i].addr;
			if (r[i].len == 0)
				continue;
			if (a / SPM_LINE > (hi + SPM_LINE - 1) / SPM_LINE)
				break;
			if (a + r[i].len > hi)
				hi = a + r[i].len;
		}
		int rc = spm_tx_add(pool, (const void *)lo, hi - lo);
		if (rc)
			return rc;
	}
	return 0;
}

void *ex_obj(spm_pool *pool, spm_off_t off, size_t len)
{
	if (off == 0 || off % SPM_LINE || len == 0 || off + len < off)
		return NULL;
	uint8_t *p = spm_ptr(pool, off);
	if (!p || !spm_ptr(pool, off + len - 1))
		return NULL;
	return p;
}
