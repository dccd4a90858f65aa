/*
 * ex_main.c -- the command line every spm-<name> example shares: create,
 * run (a deterministic random workload, timed, with the pool's statistics)
 * and check (recover, verify the structure's invariants, replay the run log
 * into a model and compare).  See ex_main.h for the operation numbering.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ex_main.h"

#define EX_VERSION 1u

/* The statistics a run prints, in spm.h's order. */
static const char *const stat_names[] = {
	"tx.committed", "tx.aborted", "time.modeled_ns", "media.writes",
	"media.writes.data", "media.writes.counter", "media.writes.log",
	"media.writes.meta", "media.reads", "ctr_cache.hits", "ctr_cache.misses",
	"ctr_cache.evictions", "ctr_cache.writebacks", "aes.pads", "wpq.stalls",
	"wpq.coalesced", "ctrl.ca_writes", "ctrl.writes", "recovery.drained",
	"recovery.dropped", "recovery.rolled_back", "ctr.reencrypted_pages",
};

/* ---- values, randomness, small helpers --------------------------------- */

void ex_fill(void *dst, size_t len, uint64_t ver, uint64_t key)
{
	uint8_t *d = dst;
	uint64_t s = ex_mix64(ver ^ ex_mix64(key));
	memcpy(d, &ver, sizeof(ver));
	size_t i = sizeof(ver);
	for (; i + 8 <= len; i += 8) {
		uint64_t w = ex_mix64(s += 0x9e3779b97f4a7c15ull);
		memcpy(d + i, &w, 8);
	}
	if (i < len) {
		uint64_t w = ex_mix64(s += 0x9e3779b97f4a7c15ull);
		memcpy(d + i, &w, len - i);
	}
}

uint64_t ex_value_ver(const void *src)
{
	uint64_t ver;
	memcpy(&ver, src, sizeof(ver));
	return ver;
}

int ex_value_ok(const void *src, size_t len, uint64_t key, uint64_t *ver)
{
	const uint8_t *p = src;
	if (len < EX_VALUE_MIN || len > EX_VALUE_MAX)
		return 0;
	*ver = ex_value_ver(src);
	if (ex_value_is_dup(*ver)) /* a duplicate (--dup): its bytes name no key */
		return ex_dup_ok(src, len);
	uint64_t s = ex_mix64(*ver ^ ex_mix64(key));
	size_t i = sizeof(uint64_t);
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

const struct ex_run *ex_run_of(struct ex_ctx *c, uint64_t j)
{
	static const struct ex_run none;
	if (c->nruns == 0)
		return &none;
	/* usually the current record; otherwise the last one starting at or
	 * before j (records are in first_op order) */
	const struct ex_run *r = &c->runs[c->cur];
	if (j >= r->first_op && (c->cur + 1 == c->nruns || j < r[1].first_op))
		return r;
	for (uint64_t i = c->nruns; i-- > 0;)
		if (c->runs[i].first_op <= j)
			return &c->runs[i];
	return &c->runs[0];
}

uint64_t ex_rand(struct ex_ctx *c, uint64_t j, uint64_t stream)
{
	uint64_t seed = ex_run_of(c, j)->seed;
	return ex_mix64(ex_mix64(seed ^ (stream << 48)) ^ j);
}

int ex_tx_count(struct ex_ctx *c, uint64_t j)
{
	int rc = spm_tx_add(c->pool, &c->head->ops, sizeof(c->head->ops));
	if (rc == 0)
		c->head->ops = j + 1;
	return rc;
}

int ex_fail(struct ex_ctx *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->why, sizeof(c->why), fmt, ap);
	va_end(ap);
	return -1;
}

/* ---- command line ------------------------------------------------------- */

static const char *prog = "spm-example";

/* usage_to -- the usage text on f. */
static void usage_to(FILE *f, const struct ex_ds *ds)
{
	static const char map_flags[] = " [--mix mixed|insert]\n"
					"            [--keys uniform|zipf:THETA]";
	fprintf(f,
		"usage: %s create POOL [OPTIONS] [--size BYTES]\n"
		"       %s run POOL N [--seed S] [--value-size B] [--dup PCT] [--progress K]%s%s\n"
		"       %s check POOL\n"
		"       %s --help\n"
		"OPTIONS is spm's \"key=value;...\" (e.g. \"design=sca\"); --size is the pool\n"
		"size (default %u MiB, suffixes k, m, g); --value-size is %u..%u bytes\n"
		"(default %u).  --dup PCT, 0..%u (default 0): PCT%% of the values written\n"
		"repeat one of %u fixed contents (chosen by Zipf's law), byte for byte\n"
		"after their 8-byte header, the others are fresh.  The pool is made with\n"
		"layout=spm-%s, and only a pool of that layout is opened.  After an\n"
		"unclean shutdown check also prints what recovery did.\n",
		prog, prog, ds->has_mix ? map_flags : "",
		ds->has_elements ? " [--elements E]" : "", prog, prog,
		EX_POOL_DEFAULT >> 20, EX_VALUE_MIN, EX_VALUE_MAX, EX_VALUE_DEFAULT, EX_DUP_MAX,
		EX_DUP_CONTENTS, ds->name);
	if (ds->has_mix)
		fprintf(f,
			"--mix: mixed (default: 60%% inserts, 15%% updates, 15%% deletes, 10%%\n"
			"lookups) or insert (inserts only).  --keys: uniform (default: each insert\n"
			"a new random key, the others one of the last 1024 ops' keys) or\n"
			"zipf:THETA, 0 < THETA < 1 (every op's key drawn from %u keys by Zipf's\n"
			"law, THETA the skew; 0.99 as YCSB): kept in the run log, so check\n"
			"replays the same keys.\n",
			EX_ZIPF_KEYS);
}

/* usage -- a usage error: what is wrong (fmt), then the usage; exit 2. */
static int usage(const struct ex_ds *ds, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int usage(const struct ex_ds *ds, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	usage_to(stderr, ds);
	return 2;
}

/* bad_flag -- a usage error about flag a (unknown, or without its value, or
 * with a bad value v). */
static int bad_flag(const struct ex_ds *ds, const char *a, const char *v)
{
	if (!v)
		return usage(ds, "%s: unknown flag, or its value is missing", a);
	return usage(ds, "%s %s: bad value", a, v);
}

/* parse_num -- a whole number with an optional binary suffix; -1 if bad. */
static int parse_num(const char *s, uint64_t *out)
{
	char *end;
	if (!s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 0);
	if (errno)
		return -1;
	unsigned shift = 0;
	if (*end == 'k' || *end == 'K')
		shift = 10;
	else if (*end == 'm' || *end == 'M')
		shift = 20;
	else if (*end == 'g' || *end == 'G')
		shift = 30;
	if (shift)
		end++;
	if (*end || (shift && v > (UINT64_MAX >> shift)))
		return -1;
	*out = (uint64_t)v << shift;
	return 0;
}

/* spm_fail -- report an spm error (its message, then the code's text unless
 * the message already ends with it); exit code `code`. */
static int spm_fail(const char *what, int rc, int code)
{
	const char *msg = spm_errormsg(), *text = spm_strerror(rc);
	size_t m = strlen(msg), t = strlen(text);
	int said = m >= t && strcmp(msg + m - t, text) == 0;
	fprintf(stderr, "%s: %s: %s%s%s\n", prog, what, m ? msg : text,
		m && !said ? " -- " : "", m && !said ? text : "");
	return code;
}

/* exit_of -- the exit status of a failed spm_open or spm_create, one per
 * kind of error: 10 + the error's place among spm's codes (10 not a pool,
 * 11 truncated, 12 corrupt, 13 files of two pools, 14 version, 15 wrong key,
 * 16 key file, 17 design, 18 option, 19 no space, 20 invalid, 21 busy,
 * 22 transaction state, 23 crypto library, 24 rollback, 25 layout, 26 not
 * the pool's design), 3 a system error (-errno: a
 * missing file, no permission, no memory). */
static int exit_of(int rc)
{
	if (rc <= SPM_E_BASE && rc >= SPM_E_LAST)
		return 10 + (SPM_E_BASE - rc);
	return EX_EXIT_SYSTEM;
}

/* layout_option -- "layout=spm-<name>", the layout of ds's pools. */
static void layout_option(const struct ex_ds *ds, char *buf, size_t size)
{
	snprintf(buf, size, "layout=spm-%s", ds->name);
}

/* open_pool -- open (recovering) a pool of ds's layout and find the root; 0,
 * or an exit code. */
static int open_pool(struct ex_ctx *c, const struct ex_ds *ds, const char *path)
{
	char layout[80];
	layout_option(ds, layout, sizeof(layout));
	int rc = spm_open(&c->pool, path, layout);
	if (rc)
		return spm_fail("open", rc, exit_of(rc));
	c->head = spm_root(c->pool, ds->root_size);
	if (!c->head) { /* another example's smaller root, or no room for one */
		fprintf(stderr, "%s: %s has no %s root: %s\n", prog, path, ds->name,
			spm_errormsg());
		spm_close(c->pool);
		return EX_EXIT_OTHER;
	}
	if (memcmp(c->head->magic, ds->magic, 8) != 0 || c->head->version != EX_VERSION) {
		fprintf(stderr, "%s: %s is not a %s pool (made by another spm-<name>?)\n",
			prog, path, ds->name);
		spm_close(c->pool);
		return EX_EXIT_OTHER;
	}
	c->ds = ds;
	return 0;
}

/* close_pool -- close; exit code 1 if that fails, else `code`. */
static int close_pool(struct ex_ctx *c, int code)
{
	int rc = spm_close(c->pool);
	c->pool = NULL;
	if (rc)
		return spm_fail("close", rc, 1);
	return code;
}

/* ops_done -- k, from the root or from the structure. */
static int ops_done(struct ex_ctx *c, uint64_t *k)
{
	if (c->ds->ops_done)
		return c->ds->ops_done(c, k);
	*k = c->head->ops;
	return 0;
}

/* load_log -- the run log, checked enough to be followed. */
static int load_log(struct ex_ctx *c)
{
	struct ex_head *h = c->head;
	c->nruns = h->nruns;
	c->runs = NULL;
	c->cur = 0;
	if (h->nruns > h->runs_cap)
		return ex_fail(c, "run log: %" PRIu64 " records, capacity %" PRIu64,
			       h->nruns, h->runs_cap);
	if (h->runs_cap == 0)
		return h->runs == 0 ? 0 : ex_fail(c, "run log: no capacity but an array");
	if (h->runs_cap > (1u << 30) ||
	    !(c->runs = ex_obj(c->pool, h->runs, h->runs_cap * sizeof(struct ex_run))))
		return ex_fail(c, "run log: bad array %" PRIu64 " x %" PRIu64, h->runs,
			       h->runs_cap);
	return 0;
}

/* ---- create ------------------------------------------------------------- */

/* init_head -- inside a transaction: the magic and the empty structure. */
static int init_head(struct ex_ctx *c)
{
	memcpy(c->head->magic, c->ds->magic, 8);
	c->head->version = EX_VERSION;
	return c->ds->init ? c->ds->init(c) : 0;
}

/* with_layout -- options, then ds's layout (which wins over a layout= in
 * options); malloc'd, NULL without memory. */
static char *with_layout(const struct ex_ds *ds, const char *options)
{
	char layout[80];
	layout_option(ds, layout, sizeof(layout));
	size_t n = (options ? strlen(options) : 0) + strlen(layout) + 2;
	char *s = malloc(n);
	if (s)
		snprintf(s, n, "%s%s%s", options ? options : "", options ? ";" : "", layout);
	return s;
}

static int cmd_create(const struct ex_ds *ds, int argc, char **argv)
{
	const char *path = NULL, *options = NULL;
	uint64_t size = EX_POOL_DEFAULT;
	for (int i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--size") == 0 && i + 1 < argc) {
			if (parse_num(argv[i + 1], &size))
				return bad_flag(ds, argv[i], argv[i + 1]);
			i++;
		} else if (argv[i][0] == '-' && argv[i][1] == '-') {
			return bad_flag(ds, argv[i], NULL);
		} else if (!path) {
			path = argv[i];
		} else if (!options) {
			options = argv[i];
		} else {
			return usage(ds, "create: extra argument %s", argv[i]);
		}
	}
	if (!path)
		return usage(ds, "create: no POOL");
	char *opts = with_layout(ds, options);
	if (!opts) {
		fprintf(stderr, "%s: out of memory\n", prog);
		return EX_EXIT_SYSTEM;
	}
	struct ex_ctx c = {.ds = ds};
	int rc = spm_create(&c.pool, path, size, opts);
	free(opts);
	if (rc)
		return spm_fail("create", rc, exit_of(rc));
	c.head = spm_root(c.pool, ds->root_size);
	if (!c.head) {
		spm_fail("root", SPM_E_INVAL, 1);
		return close_pool(&c, 1);
	}
	/* one transaction: the magic, and the structure's empty state */
	if ((rc = spm_tx_begin(c.pool)) ||
	    (rc = spm_tx_add(c.pool, c.head, SPM_LINE)) || (rc = init_head(&c)) ||
	    (rc = spm_tx_commit(c.pool)))
		goto fail;
	printf("created %s: %s, %zu bytes, design %s\n", path, ds->name, spm_size(c.pool),
	       spm_design(c.pool));
	return close_pool(&c, 0);
fail:
	spm_tx_abort(c.pool);
	spm_fail("create", rc, 1);
	return close_pool(&c, 1);
}

/* ---- run ---------------------------------------------------------------- */

/* append_run -- the run's record, durable before its first op (with the
 * structure's start hook in the same transaction). */
static int append_run(struct ex_ctx *c, const struct ex_run *r)
{
	spm_pool *pool = c->pool;
	struct ex_head *h = c->head;
	int rc = spm_tx_begin(pool);
	if (rc)
		return rc;
	if ((rc = spm_tx_add(pool, &h->nruns, 3 * sizeof(uint64_t))))
		goto fail;
	if (h->nruns == h->runs_cap) {
		/* grow the log: a new array, the old one freed, in this tx */
		uint64_t cap = h->runs_cap ? 2 * h->runs_cap : 16;
		spm_off_t off = spm_tx_alloc(pool, cap * sizeof(struct ex_run));
		if (!off) {
			rc = SPM_E_NOSPACE;
			goto fail;
		}
		if (h->runs_cap) {
			memcpy(spm_ptr(pool, off), spm_ptr(pool, h->runs),
			       h->nruns * sizeof(struct ex_run));
			if ((rc = spm_tx_free(pool, h->runs)))
				goto fail;
		}
		h->runs = off;
		h->runs_cap = cap;
	}
	struct ex_run *slot = (struct ex_run *)spm_ptr(pool, h->runs) + h->nruns;
	if ((rc = spm_tx_add(pool, slot, sizeof(*slot))))
		goto fail;
	*slot = *r;
	h->nruns++;
	c->runs = spm_ptr(pool, h->runs);
	c->nruns = h->nruns;
	c->cur = h->nruns - 1;
	if (c->ds->start && (rc = c->ds->start(c, slot)))
		goto fail;
	return spm_tx_commit(pool);
fail:
	spm_tx_abort(pool);
	return rc;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmd_run(const struct ex_ds *ds, int argc, char **argv)
{
	const char *path = NULL, *nstr = NULL;
	uint64_t n = 0, seed = 1, vs = EX_VALUE_DEFAULT, progress = 0, mix = EX_MIX_MIXED;
	uint64_t elements = 1024, keys = 0, dup = 0;
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		int bad = 0;
		if (strcmp(a, "--seed") == 0)
			bad = parse_num(v, &seed), i++;
		else if (strcmp(a, "--value-size") == 0)
			bad = parse_num(v, &vs) || vs < EX_VALUE_MIN || vs > EX_VALUE_MAX, i++;
		else if (strcmp(a, "--dup") == 0) {
			uint64_t pct = 0; /* dup's address is not taken: a register */
			bad = ex_dup_parse(v, &pct), dup = pct, i++;
		} else if (strcmp(a, "--progress") == 0)
			bad = parse_num(v, &progress), i++;
		else if (strcmp(a, "--elements") == 0 && ds->has_elements)
			bad = parse_num(v, &elements) || elements < 2 || elements > (1u << 24),
			i++;
		else if (strcmp(a, "--mix") == 0 && ds->has_mix && v) {
			if (strcmp(v, "mixed") == 0)
				mix = EX_MIX_MIXED;
			else if (strcmp(v, "insert") == 0)
				mix = EX_MIX_INSERT;
			else
				bad = 1;
			i++;
		} else if (strcmp(a, "--keys") == 0 && ds->has_mix && v) {
			bad = ex_keys_parse(v, &keys), i++;
		} else if (a[0] == '-' && a[1] == '-') {
			v = NULL, bad = 1;
		} else if (!path) {
			path = a;
		} else if (!nstr) {
			nstr = a;
		} else {
			return usage(ds, "run: extra argument %s", a);
		}
		if (bad)
			return bad_flag(ds, a, v);
	}
	if (!path || !nstr)
		return usage(ds, "run: POOL and N are needed");
	if (parse_num(nstr, &n))
		return usage(ds, "run: N %s: not a number", nstr);

	struct ex_ctx c = {0};
	int code = open_pool(&c, ds, path);
	if (code)
		return code;
	uint64_t first;
	struct ex_run r = {.seed = seed, .n_ops = n, .value_size = vs, .mix = mix,
			   .param = elements, .keys = keys, .dup = dup};
	/* the keys as the run's line names them, made now: work done between
	 * the ops and the statistics is charged to the run.  (--dup's note is
	 * made apart, and dup kept in a register: at --dup 0 the run makes not
	 * one access more than before --dup existed.) */
	char dist[48] = "", dnote[32];
	if (keys) {
		r.mix |= EX_MIX_ZIPF;
		strcpy(dist, ", keys ");
		ex_keys_name(keys, dist + strlen(dist), sizeof(dist) - strlen(dist));
	}
	if (dup)
		snprintf(dnote, sizeof(dnote), ", dup %" PRIu64 "%%", dup);
	int rc = ex_instance_begin_run(&c, &r, &first);
	if (rc == -EINVAL) {
		fprintf(stderr, "%s: %s is damaged (%s); see '%s check'\n", prog, path,
			c.why, prog);
		return close_pool(&c, 1);
	}
	if (rc) {
		ex_instance_free(&c);
		spm_fail("starting the run", rc, 1);
		return close_pool(&c, 1);
	}

	spm_stat_reset(c.pool);
	double t0 = now();
	uint64_t end = first + n;
	for (uint64_t j = first; j < end; j++) {
		if ((rc = ds->op(&c, j))) {
			ex_instance_free(&c);
			char what[64];
			snprintf(what, sizeof(what), "op %" PRIu64, j);
			spm_fail(what, rc, 1);
			return close_pool(&c, 1);
		}
		if (progress && (j + 1 - first) % progress == 0) {
			printf("progress ops=%" PRIu64 "\n", j + 1);
			fflush(stdout);
		}
	}
	uint64_t k = end;
	if ((rc = ex_instance_end_run(&c, end))) {
		ex_instance_free(&c);
		spm_fail("counting the run", rc, 1);
		return close_pool(&c, 1);
	}
	double secs = now() - t0;
	ex_instance_free(&c);

	const struct ex_run *rec = &c.runs[c.cur];
	printf("%s: %" PRIu64 " ops in %.3f s: %.0f ops/s (design %s, value %" PRIu64
	       " B, seed %" PRIu64 "%s%s, ops %" PRIu64 "..%" PRIu64 ")\n",
	       ds->name, n, secs, secs > 0 ? (double)n / secs : 0.0, spm_design(c.pool),
	       rec->value_size, seed, dist, dup ? dnote : "", first, k);
	uint64_t v;
	if (n && spm_stat(c.pool, "time.modeled_ns", &v) == 0)
		printf("modeled: %.1f ns/op\n", (double)v / (double)n);
	for (size_t i = 0; i < sizeof(stat_names) / sizeof(stat_names[0]); i++)
		if (spm_stat(c.pool, stat_names[i], &v) == 0)
			printf("  %-22s %" PRIu64 "\n", stat_names[i], v);
	return close_pool(&c, 0);
}

/* ---- instances: the same, for a program driving structures in-process ---- */

int ex_instance_new(spm_pool *pool, const struct ex_ds *ds, struct ex_ctx *c)
{
	*c = (struct ex_ctx){.pool = pool, .ds = ds};
	int rc = spm_tx_begin(pool);
	if (rc)
		return rc;
	spm_off_t off = spm_tx_alloc(pool, ds->root_size);
	if (!off) {
		rc = SPM_E_NOSPACE;
		goto fail;
	}
	c->head = spm_ptr(pool, off);
	if ((rc = init_head(c)) || (rc = spm_tx_commit(pool)))
		goto fail;
	return 0;
fail:
	spm_tx_abort(pool);
	c->head = NULL;
	return rc;
}

int ex_instance_begin_run(struct ex_ctx *c, const struct ex_run *r, uint64_t *first)
{
	if (load_log(c) || ops_done(c, first))
		return -EINVAL;
	if (!c->buf && !(c->buf = malloc(EX_VALUE_MAX)))
		return -ENOMEM;
	struct ex_run rec = *r;
	rec.first_op = *first;
	int rc = append_run(c, &rec);
	/* a Zipfian run's constants now, not inside its first op */
	if (rc == 0 && (rec.mix & EX_MIX_ZIPF))
		ex_zipf_init(&c->zipf, rec.keys);
	return rc;
}

int ex_instance_end_run(struct ex_ctx *c, uint64_t end)
{
	/* trailing lookups change nothing, but are done: count them */
	if (c->ds->ops_done || end == 0 || c->head->ops == end)
		return 0;
	int rc = spm_tx_begin(c->pool);
	if (rc == 0 && (rc = ex_tx_count(c, end - 1)) == 0)
		rc = spm_tx_commit(c->pool);
	if (rc)
		spm_tx_abort(c->pool);
	return rc;
}

void ex_instance_free(struct ex_ctx *c)
{
	free(c->buf);
	c->buf = NULL;
}

/* ---- check -------------------------------------------------------------- */

/* replay -- ops [0, k) of the run log into the model. */
static int replay(struct ex_ctx *c, void *model, uint64_t k)
{
	if (c->nruns == 0)
		return k == 0 ? 0 : ex_fail(c, "op count: %" PRIu64 " ops but no run", k);
	for (uint64_t i = 0; i < c->nruns; i++) {
		const struct ex_run *r = &c->runs[i];
		uint64_t to = i + 1 < c->nruns ? c->runs[i + 1].first_op : k;
		if ((i == 0 && r->first_op != 0) || to < r->first_op ||
		    to - r->first_op > r->n_ops)
			return ex_fail(c, "run log: record %" PRIu64 " (first op %" PRIu64
				       ", %" PRIu64 " ops) does not fit the next (op %" PRIu64
				       ")", i, r->first_op, r->n_ops, to);
		if (r->value_size < EX_VALUE_MIN || r->value_size > EX_VALUE_MAX)
			return ex_fail(c, "run log: record %" PRIu64 " has value size %" PRIu64,
				       i, r->value_size);
		if (!(r->mix & EX_MIX_ZIPF) != !r->keys || !ex_keys_valid(r->keys))
			return ex_fail(c, "run log: record %" PRIu64 " has mix %#" PRIx64
				       " and key distribution %#" PRIx64, i, r->mix, r->keys);
		if (r->dup > EX_DUP_MAX)
			return ex_fail(c, "run log: record %" PRIu64 " has dup %" PRIu64 "%%", i,
				       r->dup);
		c->cur = i;
		for (uint64_t j = r->first_op; j < to; j++)
			if (c->ds->model_op(c, model, j))
				return -1;
	}
	return 0;
}

/* The statistics of what spm_open's recovery did, in the order printed. */
static const char *const recovery_stats[] = {
	"recovery.drained", "recovery.dropped", "recovery.rolled_back",
	"recovery.reencrypted",
};

/* recovery_line -- after an open that recovered something (an unclean
 * shutdown), what it did, as one line into buf; "" if it did nothing.  Read
 * right after the open: nothing resets the statistics before. */
static void recovery_line(spm_pool *pool, char *buf, size_t size)
{
	uint64_t v[4] = {0}, any = 0;
	for (unsigned i = 0; i < 4; i++)
		if (spm_stat(pool, recovery_stats[i], &v[i]) == 0)
			any |= v[i];
	buf[0] = '\0';
	if (any)
		snprintf(buf, size, "recovered: %" PRIu64 " queue entries drained, %" PRIu64
			 " dropped; %" PRIu64 " transactions rolled back; %" PRIu64
			 " lines re-encrypted\n", v[0], v[1], v[2], v[3]);
}

static int cmd_check(const struct ex_ds *ds, int argc, char **argv)
{
	if (argc == 0)
		return usage(ds, "check: no POOL");
	for (int i = 0; i < argc; i++)
		if (argv[i][0] == '-' && argv[i][1] == '-')
			return bad_flag(ds, argv[i], NULL);
	if (argc > 1)
		return usage(ds, "check: extra argument %s", argv[1]);
	struct ex_ctx c = {0};
	int code = open_pool(&c, ds, argv[0]);
	if (code)
		return code;
	char recovered[256];
	recovery_line(c.pool, recovered, sizeof(recovered));
	uint64_t k = 0, items = 0;
	void *model = NULL;
	/* first the structure alone (its invariants, every value intact), then
	 * the run log, the replay, and the structure against the replay */
	int bad = ds->verify(&c, NULL, &items) || load_log(&c) || ops_done(&c, &k);
	if (!bad) {
		model = ds->model_new(&c);
		if (!model) {
			fprintf(stderr, "%s: out of memory for the model\n", prog);
			return close_pool(&c, EX_EXIT_SYSTEM);
		}
		bad = replay(&c, model, k) || ds->verify(&c, model, &items);
		ds->model_free(model);
	}
	/* the verdict first (harnesses read it at the start), then recovery */
	if (bad) {
		printf("broken %s\n%s", c.why, recovered);
		return close_pool(&c, 1);
	}
	printf("ok ops=%" PRIu64 " items=%" PRIu64 "\n%s", k, items, recovered);
	return close_pool(&c, 0);
}

int ex_main(const struct ex_ds *ds, int argc, char **argv)
{
	static char name[64];
	snprintf(name, sizeof(name), "spm-%s", ds->name);
	prog = name;
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			usage_to(stdout, ds);
			return 0;
		}
	if (argc < 2)
		return usage(ds, "no command");
	if (strcmp(argv[1], "create") == 0)
		return cmd_create(ds, argc - 2, argv + 2);
	if (strcmp(argv[1], "run") == 0)
		return cmd_run(ds, argc - 2, argv + 2);
	if (strcmp(argv[1], "check") == 0)
		return cmd_check(ds, argc - 2, argv + 2);
	return usage(ds, "unknown command %s", argv[1]);
}
