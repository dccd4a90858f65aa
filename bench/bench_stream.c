/*
 * bench_stream.c -- the workload stream of spm-bench: a program that is not
 * transactional, as SPEC CPU's are.  Two arrays of 64-bit elements, a and b,
 * fill --footprint bytes (half each); op j updates one line's worth of a with
 * plain loads and stores: three ops in four are the next chunk of a
 * sequential pass, a[i] = a[i] * 3 + b[i] for the 8 elements of one line,
 * and the fourth is one read-modify-write of a random element of a.  No
 * transaction, flush or fence: the stores reach the controller only as the
 * modeled LLC's dirty evictions (README, "The core model"), so it means
 * something only in an instrumented spm-bench.  Array a is persisted once,
 * after the measured phase (bench_stream_end, from bench_run.c), as a
 * program that finishes.
 *
 * Op j's place in the pass follows from j alone, and the op count is made
 * durable only at the end of a run (ex_instance_end_run), so a run continues
 * the pass where the warm-up run (one whole pass, bench_stream_warmup) left
 * it, with the LLC full of dirty lines of a.  Nothing is checked after a
 * crash: there is no replay model.
 */
#include <stdint.h>

#include "bench.h"

#define LINE_ELEMS (SPM_LINE / sizeof(uint64_t))
#define GROUP 4u /* ops GROUP-1 of every GROUP: streaming; the last: random */
#define MIN_ELEMS (4 * LINE_ELEMS)

struct root {
	struct ex_head h;
	spm_off_t a, b; /* n elements each; 0: not made yet */
	uint64_t n;
};

uint64_t bench_stream_elements(uint64_t footprint)
{
	uint64_t n = footprint / (2 * sizeof(uint64_t)) / LINE_ELEMS * LINE_ELEMS;
	return n < MIN_ELEMS ? MIN_ELEMS : n;
}

uint64_t bench_stream_warmup(uint64_t footprint)
{
	uint64_t chunks = bench_stream_elements(footprint) / LINE_ELEMS;
	return chunks / (GROUP - 1) * GROUP + chunks % (GROUP - 1);
}

/* start -- the first run makes the arrays (a[i] = i, b[i] = a hash of i),
 * param elements each, in the run's transaction. */
static int start(struct ex_ctx *c, const struct ex_run *run)
{
	struct root *r = ex_root(c);
	if (r->a)
		return 0;
	uint64_t n = run->param < MIN_ELEMS ? MIN_ELEMS : run->param / LINE_ELEMS * LINE_ELEMS;
	int rc = spm_tx_add(c->pool, &r->a, 3 * sizeof(uint64_t));
	if (rc)
		return rc;
	spm_off_t a = spm_tx_alloc(c->pool, n * sizeof(uint64_t));
	spm_off_t b = a ? spm_tx_alloc(c->pool, n * sizeof(uint64_t)) : 0;
	if (!b)
		return spm_errcode() ? spm_errcode() : SPM_E_NOSPACE;
	uint64_t *x = spm_ptr(c->pool, a), *y = spm_ptr(c->pool, b);
	for (uint64_t i = 0; i < n; i++) {
		x[i] = i;
		y[i] = ex_mix64(i);
	}
	r->a = a;
	r->b = b;
	r->n = n;
	return 0;
}

/* pass_chunk -- a[first, first + 8): the next line of the pass. */
static void pass_chunk(uint64_t *a, const uint64_t *b, uint64_t first)
{
	for (uint64_t i = first; i < first + LINE_ELEMS; i++)
		a[i] = a[i] * 3 + b[i];
}

static int op(struct ex_ctx *c, uint64_t j)
{
	struct root *r = ex_root(c);
	uint64_t *a = spm_ptr(c->pool, r->a), n = r->n;
	if (j % GROUP == GROUP - 1) {
		uint64_t x = ex_rand(c, j, 0), i = x % n;
		a[i] = a[i] * 5 + (x >> 32);
		return 0;
	}
	uint64_t step = j / GROUP * (GROUP - 1) + j % GROUP; /* streaming ops before j */
	pass_chunk(a, spm_ptr(c->pool, r->b), step % (n / LINE_ELEMS) * LINE_ELEMS);
	return 0;
}

void bench_stream_end(struct ex_ctx *c)
{
	struct root *r = ex_root(c);
	if (r->a) /* b is only read */
		spm_persist(c->pool, spm_ptr(c->pool, r->a), r->n * sizeof(uint64_t));
}

const struct ex_ds bench_ds_stream = {
	.name = "stream",
	.magic = "SPMXSTRM",
	.root_size = sizeof(struct root),
	.start = start,
	.op = op,
};
