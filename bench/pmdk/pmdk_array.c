/* pmdk_array.c -- array swap on libpmemobj: a fixed array of ELEMENTS value-size elements
 * (each on line boundaries, as in examples/array), element i first holding the value of "op"
 * i; op j swaps the random pair spm-array's op j swaps, in one transaction that snapshots
 * both elements. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "pmdk_internal.h"

#define ELEMENTS 1024u    /* spm-array's default --elements */
#define VALUE_KEY 0xa77au /* the key element payloads derive from (as examples/array) */

struct root {
	uint64_t ops;
	PMEMoid data;     /* n elements of size bytes, one every stride bytes from a line */
	uint64_t n, size, stride;
};
_Static_assert(sizeof(struct root) <= PMDK_LINE, "the root is one line");

/* elem -- element i (the array starts at the first line boundary of its object). */
static uint8_t *elem(const struct root *r, uint64_t i)
{
	uintptr_t base = (uintptr_t)pmemobj_direct(r->data);
	base = (base + PMDK_LINE - 1) & ~(uintptr_t)(PMDK_LINE - 1);
	return (uint8_t *)base + i * r->stride;
}

/* init -- in a transaction: the array, element i holding value i. */
static void init(struct pmdk_ctx *c, uint64_t j)
{
	struct root *r = c->root;
	size_t size = c->value_size;
	(void)j;
	pmemobj_tx_add_range_direct(r, sizeof(*r));
	r->n = ELEMENTS;
	r->size = size;
	r->stride = (size + PMDK_LINE - 1) / PMDK_LINE * PMDK_LINE;
	r->data = pmemobj_tx_zalloc(r->n * r->stride + PMDK_LINE, PMDK_TYPE);
	for (uint64_t i = 0; i < r->n; i++)
		pmdk_fill(elem(r, i), size, i, VALUE_KEY);
}

/* pair -- the two elements op j swaps (examples/array). */
static void pair(const struct pmdk_ctx *c, uint64_t j, uint64_t n, uint64_t *x, uint64_t *y)
{
	uint64_t rnd = pmdk_rand(c, j, 0);
	*x = (rnd >> 32) % n;
	*y = (rnd & 0xffffffffu) % (n - 1);
	if (*y >= *x)
		(*y)++;
}

/* swap -- in a transaction: exchange elements x and y (x != y). */
static void swap(const struct root *r, uint64_t x, uint64_t y)
{
	uint8_t *a = elem(r, x < y ? x : y), *b = elem(r, x < y ? y : x), tmp[256];
	struct pmdk_range snap[2] = {{a, r->size}, {b, r->size}};
	pmdk_tx_add_ranges(snap, 2);
	for (size_t k = 0; k < r->size; k += sizeof(tmp)) {
		size_t m = r->size - k < sizeof(tmp) ? r->size - k : sizeof(tmp);
		memcpy(tmp, a + k, m);
		memcpy(a + k, b + k, m);
		memcpy(b + k, tmp, m);
	}
}

/* op -- in its transaction: op j swaps its pair. */
static void op(struct pmdk_ctx *c, uint64_t j)
{
	const struct root *r = c->root;
	uint64_t x, y;
	pair(c, j, r->n, &x, &y);
	pmdk_tx_count(c, j);
	swap(r, x, y);
}

static uint64_t items(const struct pmdk_ctx *c)
{
	return ((const struct root *)c->root)->n;
}

/* replay -- which original element each position holds after the run's swaps. */
static uint64_t *replay(const struct pmdk_ctx *c, uint64_t n)
{
	uint64_t *perm = malloc(n * sizeof(*perm)), x, y, t;
	for (uint64_t i = 0; perm && i < n; i++)
		perm[i] = i;
	for (uint64_t j = 0; perm && j < c->ops; j++) {
		pair(c, j, n, &x, &y);
		t = perm[x];
		perm[x] = perm[y];
		perm[y] = t;
	}
	return perm;
}

/* check_elems -- each element intact and the replay's original. */
static int check_elems(struct pmdk_ctx *c, const struct root *r, const uint64_t *perm)
{
	for (uint64_t i = 0, id; i < r->n; i++) {
		if (!pmdk_value_ok(elem(r, i), r->size, VALUE_KEY, &id))
			return pmdk_fail(c, "payload: element %" PRIu64 " is corrupt", i);
		if (id != perm[i])
			return pmdk_fail(c, "content: element %" PRIu64 " holds original %" PRIu64
					 ", the replay %" PRIu64, i, id, perm[i]);
	}
	return 0;
}

static int check(struct pmdk_ctx *c, uint64_t *n)
{
	const struct root *r = c->root;
	*n = r->n;
	if (r->n != ELEMENTS || r->size != c->value_size ||
	    r->stride != (r->size + PMDK_LINE - 1) / PMDK_LINE * PMDK_LINE ||
	    !pmdk_obj(c, r->data, r->n * r->stride + PMDK_LINE))
		return pmdk_fail(c, "array handle: %" PRIu64 " elements of %" PRIu64 " bytes at %#"
				 PRIx64, r->n, r->size, r->data.off);
	uint64_t *perm = replay(c, r->n);
	if (!perm)
		return pmdk_fail(c, "out of memory");
	int rc = check_elems(c, r, perm);
	free(perm);
	return rc;
}

const struct pmdk_wl pmdk_array_wl = {
	.name = "array",
	.root_size = sizeof(struct root),
	.init = init,
	.op = op,
	.items = items,
	.check = check,
};
