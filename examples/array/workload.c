/*
 * workload.c -- the workload of spm-array: the array of array.h under the papers' array-swap
 * workload.  The first run creates the array: --elements E elements
 * (default 1024) of the run's value size, element i holding the value of
 * "op" i; every operation then swaps two random elements.
 *
 *   spm-array create POOL "design=sca"
 *   spm-array run POOL 20000 --seed 7 --value-size 256 --elements 4096
 *   spm-array check POOL
 *
 * Each swap is one transaction that also advances the pool's operation
 * count.  check verifies that the elements are a permutation of the
 * original ones, each intact, and that the permutation is the one the run
 * log's swaps produce.  With --dup PCT on the first run, PCT% of the
 * elements are duplicates (ex_main.h, "Values"): an element holds a whole
 * content, so with --value-size 64 each duplicate is one line identical to
 * every other of its content, and with 256 four (a 256-byte unit where the
 * array's data is 256-byte aligned).  A duplicate names its content, not
 * its original index: the pool alone shows only that each is intact; the
 * replay, which knows each original's content, checks every position.
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "ex_main.h"

#define VALUE_KEY 0xa77au /* the key element payloads derive from */

struct root {
	struct ex_head h;
	struct array a; /* in the line of the op count */
};
_Static_assert(offsetof(struct root, a) + sizeof(struct array) <= EX_HOT_LINE + SPM_LINE,
	       "the handle shares the op count's line");

/* dup_ignored -- a later run's --dup, which the first run's fixed, said so
 * (reading the run log is the harness's work: not modeled). */
EX_NOT_MODELED static void dup_ignored(const struct ex_ctx *c, const struct ex_run *run)
{
	if (run->dup != c->runs[0].dup)
		fprintf(stderr, "spm-array: the elements' contents were fixed by the first run "
			"(--dup %" PRIu64 "); --dup %" PRIu64 " ignored\n", c->runs[0].dup,
			run->dup);
}

/* start -- the first run creates the array, in the run's first transaction. */
static int start(struct ex_ctx *c, const struct ex_run *run)
{
	struct root *r = ex_root(c);
	if (r->a.data) {
		if (run->value_size != r->a.size)
			fprintf(stderr, "spm-array: the elements are %" PRIu64 " bytes (fixed by "
				"the first run); --value-size %" PRIu64 " ignored\n", r->a.size,
				run->value_size);
		dup_ignored(c, run);
		return 0;
	}
	int rc = array_init(c->pool, &r->a, run->param, run->value_size);
	for (uint64_t i = 0; !rc && i < r->a.n; i++) /* original i: "op" i of this run */
		ex_value_write(run, array_at(c->pool, &r->a, i), r->a.size, i, VALUE_KEY);
	return rc;
}

/* pair -- the two elements op j swaps. */
static void pair(struct ex_ctx *c, uint64_t j, uint64_t n, uint64_t *x, uint64_t *y)
{
	uint64_t rnd = ex_rand(c, j, 0);
	*x = (rnd >> 32) % n;
	*y = (rnd & 0xffffffffu) % (n - 1);
	if (*y >= *x)
		(*y)++;
}

static int op(struct ex_ctx *c, uint64_t j)
{
	spm_pool *pool = c->pool;
	struct root *r = ex_root(c);
	uint64_t x, y;
	pair(c, j, r->a.n, &x, &y);
	int rc = spm_tx_begin(pool);
	if (rc)
		return rc;
	if ((rc = ex_tx_count(c, j)) || (rc = array_swap(pool, &r->a, x, y))) {
		spm_tx_abort(pool);
		return rc;
	}
	return spm_tx_commit(pool);
}

/* The model: which original element each position holds. */
struct model {
	uint64_t n, size;
	uint64_t *perm;
	const struct ex_run *first; /* the run that made the originals */
};

static void *model_new(struct ex_ctx *c)
{
	struct model *m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	if (c->nruns) { /* the first run made the array */
		m->n = c->runs[0].param;
		m->size = c->runs[0].value_size;
		m->first = &c->runs[0];
	}
	if (m->n > (1u << 24)) /* a damaged log: verify will say so */
		m->n = 0;
	if (!(m->perm = malloc((m->n + 1) * sizeof(uint64_t)))) {
		free(m);
		return NULL;
	}
	for (uint64_t i = 0; i < m->n; i++)
		m->perm[i] = i;
	return m;
}

static void model_free(void *model)
{
	struct model *m = model;
	free(m->perm);
	free(m);
}

static int model_op(struct ex_ctx *c, void *model, uint64_t j)
{
	struct model *m = model;
	uint64_t x, y, t;
	if (m->n < 2)
		return ex_fail(c, "run log: the first run asked for %" PRIu64 " elements", m->n);
	pair(c, j, m->n, &x, &y);
	t = m->perm[x];
	m->perm[x] = m->perm[y];
	m->perm[y] = t;
	return 0;
}

/* what -- an element's header as text: "original I" or "duplicate content D". */
static void what(uint64_t head, char *buf, size_t size)
{
	if (ex_value_is_dup(head))
		ex_value_name(head, buf, size);
	else
		snprintf(buf, size, "original %" PRIu64, head);
}

/* verify -- a permutation of intact elements (and the model's).  An
 * original is known by the index in its header, a duplicate (--dup) by its
 * content only: there the model's original must have that content. */
static int verify(struct ex_ctx *c, void *model, uint64_t *items)
{
	struct model *m = model;
	struct root *r = ex_root(c);
	const struct array *a = &r->a;
	if (array_check(c->pool, a, c->why, sizeof(c->why)))
		return -1;
	if (m && (a->n != m->n || (m->n && a->size != m->size)))
		return ex_fail(c, "array handle: %" PRIu64 " elements of %" PRIu64 " bytes, the "
			       "first run made %" PRIu64 " of %" PRIu64, a->n, a->size, m->n,
			       m->size);
	uint8_t *seen = calloc(a->n + 1, 1);
	if (!seen)
		return ex_fail(c, "out of memory");
	int rc = 0;
	for (uint64_t i = 0; i < a->n && !rc; i++) {
		const void *e = array_at(c->pool, a, i);
		uint64_t id = ex_value_ver(e), want = 0;
		int dup = ex_value_is_dup(id);
		char got[48], exp[48];
		what(id, got, sizeof(got));
		if (m) { /* the original at i, as the first run wrote it */
			want = m->first ? ex_value_head(m->first, m->perm[i]) : m->perm[i];
			what(want, exp, sizeof(exp));
		}
		if (!dup && (id >= a->n || seen[id]))
			rc = ex_fail(c, "permutation: element %" PRIu64 " holds original %" PRIu64
				     "%s", i, id, id < a->n ? " twice" : ", out of range");
		else if (!ex_value_ok(e, a->size, VALUE_KEY, &id))
			rc = ex_fail(c, "payload: element %" PRIu64 " (%s) is corrupt", i, got);
		else if (m && id != want)
			rc = ex_fail(c, "content: element %" PRIu64 " holds %s, the replay "
				     "original %" PRIu64 "%s%s%s", i, got, m->perm[i],
				     dup || ex_value_is_dup(want) ? " (" : "",
				     dup || ex_value_is_dup(want) ? exp : "",
				     dup || ex_value_is_dup(want) ? ")" : "");
		else if (!dup)
			seen[id] = 1;
	}
	free(seen);
	*items = a->n;
	return rc;
}

const struct ex_ds ex_ds_array = {
	.name = "array",
	.magic = "SPMXARRY",
	.root_size = sizeof(struct root),
	.has_elements = 1,
	.start = start,
	.op = op,
	.model_new = model_new,
	.model_op = model_op,
	.verify = verify,
	.model_free = model_free,
};

