/* pmdk_common.c -- the helpers the libpmemobj workloads share (see pmdk_internal.h). */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pmdk_internal.h"

#define GOLDEN 0x9e3779b97f4a7c15ull

/* word -- the next payload word of the stream s. */
static uint64_t word(uint64_t *s)
{
	return pmdk_mix64(*s += GOLDEN);
}

void pmdk_fill(void *dst, size_t len, uint64_t ver, uint64_t key)
{
	uint8_t *d = dst;
	uint64_t s = pmdk_mix64(ver ^ pmdk_mix64(key)), w;
	memcpy(d, &ver, sizeof(ver));
	size_t i = sizeof(ver);
	for (; i + 8 <= len; i += 8) {
		w = word(&s);
		memcpy(d + i, &w, 8);
	}
	if (i < len) {
		w = word(&s);
		memcpy(d + i, &w, len - i);
	}
}

int pmdk_value_ok(const void *src, size_t len, uint64_t key, uint64_t *ver)
{
	const uint8_t *p = src;
	uint64_t w;
	if (len < PMDK_VALUE_MIN || len > PMDK_VALUE_MAX)
		return 0;
	memcpy(ver, p, sizeof(*ver));
	uint64_t s = pmdk_mix64(*ver ^ pmdk_mix64(key));
	size_t i = sizeof(*ver);
	for (; i + 8 <= len; i += 8) {
		w = word(&s);
		if (memcmp(p + i, &w, 8) != 0)
			return 0;
	}
	if (i < len) {
		w = word(&s);
		if (memcmp(p + i, &w, len - i) != 0)
			return 0;
	}
	return 1;
}

void pmdk_tx_count(struct pmdk_ctx *c, uint64_t j)
{
	pmemobj_tx_add_range_direct(c->root, c->root_size);
	*(uint64_t *)c->root = j + 1;
}

void pmdk_tx_add_ranges(const struct pmdk_range *r, unsigned n)
{
	uintptr_t lo = 0, hi = 0; /* the pending merged range [lo, hi); lo 0: none */
	for (unsigned i = 0; i < n; i++) {
		uintptr_t a = (uintptr_t)r[i].addr, b = a + r[i].len;
		if (r[i].len == 0)
			continue;
		if (lo && a >= hi + PMDK_LINE) { /* a line or more away: snapshot the pending one */
			pmemobj_tx_add_range_direct((const void *)lo, hi - lo);
			lo = 0;
		}
		if (!lo)
			lo = a, hi = b;
		else if (b > hi)
			hi = b;
	}
	if (lo)
		pmemobj_tx_add_range_direct((const void *)lo, hi - lo);
}

void *pmdk_obj(const struct pmdk_ctx *c, PMEMoid oid, size_t len)
{
	if (OID_IS_NULL(oid) || oid.pool_uuid_lo != c->uuid_lo || oid.off >= c->pool_size ||
	    len > c->pool_size - oid.off)
		return NULL;
	return pmemobj_direct(oid);
}

int pmdk_fail(struct pmdk_ctx *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->why, sizeof(c->why), fmt, ap);
	va_end(ap);
	return -1;
}

/* ---- map check ------------------------------------------------------------ */

int pmdk_map_begin(struct pmdk_ctx *c)
{
	c->visited = 0;
	c->seen = calloc(c->ops + 1, 1);
	return c->seen ? 0 : pmdk_fail(c, "out of memory");
}

int pmdk_map_visit(struct pmdk_ctx *c, uint64_t key, const void *val, size_t len)
{
	uint64_t ver;
	if (len != c->value_size)
		return pmdk_fail(c, "content: key %#" PRIx64 " has a %zu-byte value, not %zu", key,
				 len, c->value_size);
	if (!pmdk_value_ok(val, len, key, &ver))
		return pmdk_fail(c, "payload: the value of key %#" PRIx64 " is corrupt", key);
	if (ver >= c->ops || pmdk_map_key(c, ver) != key)
		return pmdk_fail(c, "content: key %#" PRIx64 " holds the value of op %" PRIu64
				 ", which inserted another key", key, ver);
	if (c->seen[ver])
		return pmdk_fail(c, "content: key %#" PRIx64 " is in the map twice", key);
	c->seen[ver] = 1;
	c->visited++;
	return 0;
}

int pmdk_map_end(struct pmdk_ctx *c, int walk_rc, uint64_t count, uint64_t *items)
{
	free(c->seen);
	c->seen = NULL;
	*items = c->visited;
	if (walk_rc)
		return walk_rc;
	if (c->visited != count)
		return pmdk_fail(c, "count: the map says %" PRIu64 " items, it holds %" PRIu64,
				 count, c->visited);
	if (c->visited != c->ops)
		return pmdk_fail(c, "content: %" PRIu64 " items after %" PRIu64 " distinct inserts",
				 c->visited, c->ops);
	return 0;
}
