/*
 * ex_map.c -- the map workload (see ex_map.h), its keys (uniform or
 * Zipfian, ex_keys.h) and its model: an open-addressing hash table in plain
 * memory.
 */
#include <string.h>
#include <inttypes.h>
#include <stdlib.h>

#include "ex_map.h"

#define WINDOW 1024u /* updates, deletes and lookups aim at the last WINDOW ops */

/* zipf_key -- the key of op j of a Zipfian run: the rank its key word draws
 * (the constants are the context's, made again if they are another run's). */
static uint64_t zipf_key(struct ex_ctx *c, const struct ex_run *run, uint64_t j)
{
	if (c->zipf.code != run->keys && ex_zipf_init(&c->zipf, run->keys))
		return ex_rand(c, j, 1); /* never: check refuses such a record first */
	return ex_zipf_key(ex_zipf_rank(&c->zipf, ex_rand(c, j, 1)));
}

void ex_map_plan(struct ex_ctx *c, uint64_t j, struct ex_map_op *op)
{
	const struct ex_run *run = ex_run_of(c, j);
	uint64_t r = ex_rand(c, j, 0), pct = r % 100;
	op->len = run->value_size;
	op->kind = EX_MAP_INSERT;
	uint64_t mix = run->mix;
	if ((mix & EX_MIX_KIND) == EX_MIX_MIXED && j > 0)
		op->kind = pct < 60 ? EX_MAP_INSERT
			   : pct < 75 ? EX_MAP_UPDATE
			   : pct < 90 ? EX_MAP_DELETE
				      : EX_MAP_LOOKUP;
	if (mix & EX_MIX_ZIPF) {
		op->key = zipf_key(c, run, j);
		return;
	}
	uint64_t i = j;
	if (op->kind != EX_MAP_INSERT)
		i = j - 1 - (r >> 32) % (j < WINDOW ? j : WINDOW);
	op->key = ex_rand(c, i, 1);
}

/* ---- the model ------------------------------------------------------------ */

enum { SLOT_EMPTY, SLOT_FULL, SLOT_GONE };

struct slot {
	uint64_t key, ver;
	uint32_t len;
	uint8_t state, seen;
};

struct model {
	struct slot *s;
	uint64_t cap;  /* power of two */
	uint64_t n;    /* full slots */
	uint64_t used; /* full + gone */
	uint64_t seen;
};

void *ex_map_model_new(struct ex_ctx *c)
{
	(void)c;
	struct model *m = calloc(1, sizeof(*m));
	if (m && !(m->s = calloc(m->cap = 1024, sizeof(*m->s)))) {
		free(m);
		m = NULL;
	}
	return m;
}

void ex_map_model_free(void *model)
{
	struct model *m = model;
	if (m)
		free(m->s);
	free(m);
}

/* find -- the slot of key, or the slot to put it in. */
static struct slot *find(struct model *m, uint64_t key)
{
	struct slot *gone = NULL;
	for (uint64_t i = ex_mix64(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		struct slot *s = &m->s[i];
		if (s->state == SLOT_EMPTY)
			return gone ? gone : s;
		if (s->state == SLOT_GONE) {
			if (!gone)
				gone = s;
		} else if (s->key == key) {
			return s;
		}
	}
}

/* grow -- rehash into twice the slots (dropping tombstones). */
static int grow(struct model *m)
{
	struct model n = {.cap = m->cap * 2};
	if (!(n.s = calloc(n.cap, sizeof(*n.s))))
		return -1;
	for (uint64_t i = 0; i < m->cap; i++)
		if (m->s[i].state == SLOT_FULL) {
			*find(&n, m->s[i].key) = m->s[i];
			n.n++;
		}
	free(m->s);
	n.used = n.n;
	*m = n;
	return 0;
}

int ex_map_model_op(struct ex_ctx *c, void *model, uint64_t j)
{
	struct model *m = model;
	struct ex_map_op op;
	ex_map_plan(c, j, &op);
	if ((m->used + 1) * 2 > m->cap && grow(m))
		return ex_fail(c, "model: out of memory");
	struct slot *s = find(m, op.key);
	int present = s->state == SLOT_FULL;
	switch (op.kind) {
	case EX_MAP_INSERT:
	case EX_MAP_UPDATE:
		if (!present && op.kind == EX_MAP_UPDATE)
			break;
		if (!present) {
			if (s->state == SLOT_EMPTY)
				m->used++;
			m->n++;
		}
		*s = (struct slot){.key = op.key, .ver = j, .len = (uint32_t)op.len,
				   .state = SLOT_FULL};
		break;
	case EX_MAP_DELETE:
		if (present) {
			s->state = SLOT_GONE;
			m->n--;
		}
		break;
	case EX_MAP_LOOKUP:
		break;
	}
	return 0;
}

/* ---- comparison ----------------------------------------------------------- */

int ex_map_visit(struct ex_ctx *c, void *model, uint64_t key, const void *val,
		 size_t len)
{
	struct model *m = model;
	uint64_t ver;
	if (!m) /* the map alone: the value must be intact */
		return ex_value_ok(val, len, key, &ver)
			       ? 0
			       : ex_fail(c, "payload: the %zu-byte value of key %#" PRIx64
					 " is corrupt", len, key);
	struct slot *s = find(m, key);
	if (s->state != SLOT_FULL)
		return ex_fail(c, "content: key %#" PRIx64 " is in the map, the replay "
			       "does not have it", key);
	if (s->seen)
		return ex_fail(c, "content: key %#" PRIx64 " is in the map twice", key);
	if (len != s->len)
		return ex_fail(c, "content: key %#" PRIx64 " has a %zu-byte value, the "
			       "replay %u bytes", key, len, s->len);
	char got[48], want[48];
	ex_value_name(ex_value_ver(val), got, sizeof(got));
	if (!ex_value_ok(val, len, key, &ver))
		return ex_fail(c, "payload: the value of key %#" PRIx64 " is corrupt "
			       "(claims %s)", key, got);
	/* op s->ver's value: its op index, or (--dup) the content it repeats */
	uint64_t head = ex_value_head(ex_run_of(c, s->ver), s->ver);
	if (ver != head) {
		ex_value_name(head, want, sizeof(want));
		return ex_fail(c, "content: key %#" PRIx64 " holds the value of %s, the "
			       "replay that of op %" PRIu64 "%s%s%s", key, got, s->ver,
			       ex_value_is_dup(head) ? " (" : "",
			       ex_value_is_dup(head) ? want : "", ex_value_is_dup(head) ? ")" : "");
	}
	s->seen = 1;
	m->seen++;
	return 0;
}

int ex_map_finish(struct ex_ctx *c, void *model, uint64_t count, uint64_t *items)
{
	struct model *m = model;
	*items = count;
	if (!m)
		return 0;
	if (m->seen != m->n) {
		for (uint64_t i = 0; i < m->cap; i++)
			if (m->s[i].state == SLOT_FULL && !m->s[i].seen)
				return ex_fail(c, "content: %" PRIu64 " keys missing, e.g. key %#"
					       PRIx64 " (op %" PRIu64 ")", m->n - m->seen,
					       m->s[i].key, m->s[i].ver);
	}
	if (count != m->n)
		return ex_fail(c, "count: the map says %" PRIu64 " items, it holds %" PRIu64,
			       count, m->n);
	*items = m->n;
	return 0;
}

/* ex_map_do -- op j of the map workload (see ex_map.h). */
int ex_map_do(struct ex_ctx *c, uint64_t j, void *map, const struct ex_map_ops *ops)
{
	spm_pool *pool = c->pool;
	struct ex_map_op m;
	ex_map_plan(c, j, &m);

	if (m.kind != EX_MAP_INSERT) {
		/* a lookup, or an update or delete that may miss: look first */
		size_t len;
		const void *v = ops->get(pool, map, m.key, &len);
		if (!v)
			return 0; /* a miss changes nothing: no transaction */
		if (m.kind == EX_MAP_LOOKUP) {
			memcpy(c->buf, v, len); /* a lookup reads the value */
			return 0;
		}
	}

	int rc = spm_tx_begin(pool);
	if (rc)
		return rc;
	if ((rc = ex_tx_count(c, j)))
		goto abort;
	if (m.kind == EX_MAP_DELETE) {
		if ((rc = ops->del(pool, map, m.key)) < 0)
			goto abort;
	} else {
		void *v;
		if ((rc = ops->put(pool, map, m.key, m.len, &v)))
			goto abort;
		ex_value_put(c, v, m.len, j, m.key); /* the payload: value-size bytes */
	}
	return spm_tx_commit(pool);
abort:
	spm_tx_abort(pool);
	return rc;
}

struct visit_arg {
	struct ex_ctx *c;
	void *model;
};

static int visit(void *arg, uint64_t key, const void *val, size_t len)
{
	struct visit_arg *a = arg;
	return ex_map_visit(a->c, a->model, key, val, len);
}

/* ex_map_verify -- the map's invariants, then its content against the model. */
int ex_map_verify(struct ex_ctx *c, void *model, uint64_t *items, const void *map,
		  const struct ex_map_ops *ops)
{
	struct visit_arg a = {c, model};
	if (ops->check(c->pool, map, visit, &a, c->why, sizeof(c->why)))
		return -1;
	return ex_map_finish(c, model, ops->count(map), items);
}
