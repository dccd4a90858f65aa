/*
 * array.c -- a persistent array with transactional swaps (see array.h).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "array.h"
#include "ex_util.h"

int array_init(spm_pool *pool, struct array *a, uint64_t n, size_t size)
{
	uint64_t stride = (size + SPM_LINE - 1) / SPM_LINE * SPM_LINE;
	if (n == 0 || size == 0 || n > spm_size(pool) / stride)
		return SPM_E_INVAL;
	spm_off_t o = spm_tx_alloc(pool, n * stride);
	if (!o)
		return SPM_E_NOSPACE;
	int rc = spm_tx_add(pool, a, sizeof(*a));
	if (rc)
		return rc;
	*a = (struct array){.data = o, .n = n, .size = size, .stride = stride};
	return 0;
}

void *array_at(spm_pool *pool, const struct array *a, uint64_t i)
{
	return (uint8_t *)spm_ptr(pool, a->data) + i * a->stride;
}

int array_swap(spm_pool *pool, const struct array *a, uint64_t i, uint64_t j)
{
	if (i == j || i >= a->n || j >= a->n)
		return SPM_E_INVAL;
	uint8_t *x = array_at(pool, a, i < j ? i : j), *y = array_at(pool, a, i < j ? j : i);
	struct ex_range r[2] = {{x, a->size}, {y, a->size}};
	int rc = ex_tx_add_ranges(pool, r, 2);
	if (rc)
		return rc;
	uint8_t tmp[256];
	for (size_t k = 0; k < a->size; k += sizeof(tmp)) {
		size_t m = a->size - k < sizeof(tmp) ? a->size - k : sizeof(tmp);
		memcpy(tmp, x + k, m);
		memcpy(x + k, y + k, m);
		memcpy(y + k, tmp, m);
	}
	return 0;
}

int array_check(spm_pool *pool, const struct array *a, char *why, size_t whylen)
{
	if (!a->data)
		return a->n || a->size ? (snprintf(why, whylen, "array handle: no data, %" PRIu64
						   " elements", a->n), -1)
				       : 0;
	if (a->size == 0 || a->stride != (a->size + SPM_LINE - 1) / SPM_LINE * SPM_LINE ||
	    a->n == 0 || a->n > spm_size(pool) / a->stride ||
	    !ex_obj(pool, a->data, a->n * a->stride)) {
		snprintf(why, whylen, "array handle: %" PRIu64 " elements of %" PRIu64
			 " bytes at %#" PRIx64 " do not fit the pool", a->n, a->size, a->data);
		return -1;
	}
	return 0;
}
