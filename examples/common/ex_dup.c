/*
 * ex_dup.c -- duplicated values (--dup PCT, see "Values" in ex_main.h):
 * which ops write one of EX_DUP_CONTENTS fixed contents instead of a fresh
 * value, which content (Zipf's law over the content ids), and its bytes.
 *
 * The choice is harness bookkeeping, not the modeled program's work: the
 * functions that make it (reading the run record, the random word, the
 * Zipf table) are not instrumented (NOT_MODELED), so a run with --dup 0
 * makes exactly the loads and stores it made before --dup existed, and a
 * run with --dup PCT differs from it only in the bytes its values hold.
 * The stores of a value (ex_fill, ex_fill_dup) are instrumented as always.
 */
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "ex_main.h"

#define NOT_MODELED EX_NOT_MODELED
#define DUP_STREAM 0x64u             /* ex_rand's stream of the choice ("d") */
#define DUP_SALT 0x6475706c69636174u /* "duplicat": contents are no op's bytes */

/* ---- the choice (not modeled) --------------------------------------------- */

/* cdf[i]: the Zipf weights of content ids 0..i, summed (1 / (id + 1)^theta). */
static double cdf[EX_DUP_CONTENTS];
static pthread_once_t cdf_once = PTHREAD_ONCE_INIT;

NOT_MODELED static void cdf_init(void)
{
	double sum = 0.0;
	for (unsigned i = 0; i < EX_DUP_CONTENTS; i++) {
		sum += pow((double)(i + 1), -EX_DUP_THETA);
		cdf[i] = sum;
	}
}

/* zipf_id -- the content id the random word w draws (its top 53 bits the
 * uniform variate): the first id whose summed weight exceeds it. */
NOT_MODELED static uint64_t zipf_id(uint64_t w)
{
	pthread_once(&cdf_once, cdf_init);
	double u = (double)(w >> 11) * 0x1p-53 * cdf[EX_DUP_CONTENTS - 1];
	unsigned lo = 0, hi = EX_DUP_CONTENTS - 1;
	while (lo < hi) {
		unsigned mid = (lo + hi) / 2;
		if (cdf[mid] > u)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

NOT_MODELED uint64_t ex_value_content(const struct ex_run *r, uint64_t j)
{
	uint64_t pct = r->dup;
	if (pct == 0)
		return EX_DUP_NONE;
	/* ex_rand's word of stream DUP_STREAM, from the record itself (the
	 * array's elements are "ops" of the first run whatever their index) */
	uint64_t w = ex_mix64(ex_mix64(r->seed ^ ((uint64_t)DUP_STREAM << 48)) ^ j);
	if (w % 100 >= pct)
		return EX_DUP_NONE;
	return zipf_id(ex_mix64(w));
}

/* run_at -- the record of op j, as ex_run_of finds it (a copy: this one is
 * not modeled, ex_run_of is). */
NOT_MODELED static const struct ex_run *run_at(const struct ex_ctx *c, uint64_t j)
{
	static const struct ex_run none;
	if (c->nruns == 0)
		return &none;
	const struct ex_run *r = &c->runs[c->cur];
	if (j >= r->first_op && (c->cur + 1 == c->nruns || j < r[1].first_op))
		return r;
	for (uint64_t i = c->nruns; i-- > 0;)
		if (c->runs[i].first_op <= j)
			return &c->runs[i];
	return &c->runs[0];
}

NOT_MODELED static uint64_t content_at(const struct ex_ctx *c, uint64_t j)
{
	return ex_value_content(run_at(c, j), j);
}

/* ---- the values ------------------------------------------------------------- */

uint64_t ex_value_head(const struct ex_run *r, uint64_t j)
{
	uint64_t id = ex_value_content(r, j);
	return id == EX_DUP_NONE ? j : EX_VALUE_DUP | id;
}

/* ex_fill_dup and ex_dup_ok repeat the word stream of ex_fill and
 * ex_value_ok with another seed: those are instrumented code, and sharing
 * the loop through a function changed the stack traffic the core model
 * charges, and so every design's modeled time (measured). */
void ex_fill_dup(void *dst, size_t len, uint64_t content)
{
	uint8_t *d = dst;
	uint64_t head = EX_VALUE_DUP | content, s = ex_mix64(content ^ DUP_SALT);
	memcpy(d, &head, sizeof(head));
	size_t i = sizeof(head);
	for (; i + 8 <= len; i += 8) {
		uint64_t w = ex_mix64(s += 0x9e3779b97f4a7c15ull);
		memcpy(d + i, &w, 8);
	}
	if (i < len) {
		uint64_t w = ex_mix64(s += 0x9e3779b97f4a7c15ull);
		memcpy(d + i, &w, len - i);
	}
}

/* ex_dup_ok -- are the len bytes at src the duplicate of the content id
 * their header names?  (ex_value_ok's other half.) */
int ex_dup_ok(const void *src, size_t len)
{
	const uint8_t *p = src;
	uint64_t head = ex_value_ver(src), id = head & ~EX_VALUE_DUP;
	if (!ex_value_is_dup(head) || id >= EX_DUP_CONTENTS)
		return 0;
	uint64_t s = ex_mix64(id ^ DUP_SALT);
	size_t i = sizeof(head);
	for (; i + 8 <= len; i += 8) {
		uint64_t w = ex_mix64(s += 0x9e3779b97f4a7c15ull);
		if (memcmp(p + i, &w, 8) != 0)
			return 0;
	}
	if (i < len) {
		uint64_t w = ex_mix64(s += 0x9e3779b97f4a7c15ull);
		if (memcmp(p + i, &w, len - i) != 0)
			return 0;
	}
	return 1;
}

void ex_value_write(const struct ex_run *r, void *dst, size_t len, uint64_t j, uint64_t key)
{
	uint64_t id = ex_value_content(r, j);
	if (id == EX_DUP_NONE)
		ex_fill(dst, len, j, key);
	else
		ex_fill_dup(dst, len, id);
}

void ex_value_put(struct ex_ctx *c, void *dst, size_t len, uint64_t j, uint64_t key)
{
	uint64_t id = content_at(c, j);
	if (id == EX_DUP_NONE)
		ex_fill(dst, len, j, key);
	else
		ex_fill_dup(dst, len, id);
}

void ex_value_name(uint64_t head, char *buf, size_t size)
{
	if (ex_value_is_dup(head))
		snprintf(buf, size, "duplicate content %" PRIu64, (uint64_t)(head & ~EX_VALUE_DUP));
	else
		snprintf(buf, size, "op %" PRIu64, head);
}

int ex_dup_parse(const char *s, uint64_t *pct)
{
	uint64_t v = 0;
	if (!s || !*s || strlen(s) > 3)
		return -1;
	for (const char *p = s; *p; p++) {
		if (*p < '0' || *p > '9')
			return -1;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	if (v > EX_DUP_MAX)
		return -1;
	*pct = v;
	return 0;
}
