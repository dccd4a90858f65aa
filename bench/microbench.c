/*
 * microbench.c -- wall-clock microbenchmark of spm's persistence hot paths,
 * measured side by side in one run with clock_gettime(CLOCK_MONOTONIC).
 *
 *  persist_line         store to one 64-byte line of a 1 MiB allocated object,
 *                       then spm_persist() of that line; a different line each
 *                       op, cycling through the object.  Designs sca (target
 *                       <= 250 ns/op) and, for comparison, plain, fca, ideal,
 *                       unsafe; plus a raw libpmem baseline: pmem_map_file() of
 *                       a file of the same size in the same directory, store +
 *                       pmem_persist() of one line.
 *  persist_4k_per_line  stores to the 64 lines of a 4 KiB page of the object,
 *                       then one spm_persist() of the page, reported per line
 *                       (sca target <= 30 ns); libpmem for reference.
 *  open_<size>_filled   spm_open() alone of a 1 GiB sca pool whose every line
 *                       was written (target <= 1 s); open_<size>_fresh: the
 *                       same for a never-written pool.  close_* (spm_close of
 *                       the opened pool) and fill_per_line (the bulk persist
 *                       that filled the pool) are for information.
 *
 * Per-op times are MEDIANS over --reps repetitions of batches of --ops ops.
 * The subjects of a group are measured in every repetition in turn (rotating
 * which goes first), after one untimed warm-up pass over the whole object, so
 * machine drift hits them alike.  Opens are timed --opens times each.
 * PASS/FAIL against the targets is printed but never changes the exit status:
 * 0 unless the benchmark itself could not run (then 1; 2 for bad usage).
 *
 *   spm-microbench [--dir DIR] [--reps N] [--ops N] [--opens N] [--quick]
 *                  [--only line|range|open] [--csv FILE]
 *
 * Files go to a fresh directory DIR/spm-microbench.XXXXXX (DIR defaults to
 * $TMPDIR, else /tmp), removed at the end.  The pools use the library's
 * defaults apart from design=; SPM_CONF, if set, still applies and is printed.
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include <libpmem.h>
#include <spm.h>

#define LINE ((size_t)SPM_LINE)
#define PAGE ((size_t)4096)
#define OBJ_SIZE ((size_t)1 << 20)
#define OBJ_LINES ((unsigned)(OBJ_SIZE / LINE))
#define OBJ_PAGES ((unsigned)(OBJ_SIZE / PAGE))
#define SMALL_POOL ((size_t)8 << 20)     /* holds the 1 MiB object */
#define GIB ((size_t)1 << 30)
#define FILL_OBJ ((size_t)8 << 20)       /* the fill: objects of 8 MiB, one per tx */
#define FILL_CHUNK ((size_t)8 << 20)     /* spm_persist chunk of the fill */
#define MAX_REPS 1000u
#define MAX_RESULTS 32u
#define MAX_OPENS 100u

#define TARGET_LINE_NS 250.0
#define TARGET_4K_LINE_NS 30.0
#define TARGET_OPEN_1GIB_NS 1e9

struct opts {
	const char *dir;
	const char *csv;
	const char *only; /* NULL: every group */
	unsigned reps, ops, opens;
	size_t open_size;
	int quick;
};

struct result {
	char metric[64];
	char design[16];
	double median_ns, min_ns, max_ns;
	double target_ns; /* 0: no target for this metric */
	int gated;        /* the target applies to this row (else information) */
};

struct results {
	struct result r[MAX_RESULTS];
	unsigned n;
};

/* A thing persisted to: an object of an spm pool or a raw libpmem mapping. */
struct subject {
	char design[16];
	char path[PATH_MAX];
	spm_pool *pool; /* NULL: libpmem */
	uint8_t *obj;
	size_t map_len; /* libpmem only */
	unsigned cursor;
	double samples[MAX_REPS];
};

typedef void (*op_fn)(struct subject *s, uint64_t stamp);

/* ------------------------------------------------------------ helpers */

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* summarize -- median, min and max of n samples (n >= 1). */
static void summarize(const double *v, unsigned n, struct result *r)
{
	double s[MAX_REPS > MAX_OPENS ? MAX_REPS : MAX_OPENS];
	memcpy(s, v, n * sizeof(*v));
	qsort(s, n, sizeof(*s), cmp_double);
	r->median_ns = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
	r->min_ns = s[0];
	r->max_ns = s[n - 1];
}

/* join -- dir/name into out; -1 if it does not fit. */
static int join(char *out, size_t n, const char *dir, const char *name)
{
	int k = snprintf(out, n, "%s/%s", dir, name);
	return k < 0 || (size_t)k >= n ? -1 : 0;
}

/* remove_pool -- unlink a pool's files (path, path.meta, path.key). */
static void remove_pool(const char *path)
{
	static const char *const sfx[] = {"", ".meta", ".key", ".key.tcb"};
	char p[PATH_MAX + 8];
	for (unsigned i = 0; i < 4; i++) {
		snprintf(p, sizeof(p), "%s%s", path, sfx[i]);
		unlink(p);
	}
}

/* fail -- report an spm error; returns -1. */
static int fail(const char *what, int rc)
{
	fprintf(stderr, "spm-microbench: %s: %s (%s)\n", what, spm_errormsg(),
		rc ? spm_strerror(rc) : "NULL");
	return -1;
}

/* add_result -- append a row; the returned row is to be summarized. */
static struct result *add_result(struct results *res, const char *metric,
				 const char *design, double target, int gated)
{
	if (res->n == MAX_RESULTS)
		return NULL;
	struct result *r = &res->r[res->n++];
	memset(r, 0, sizeof(*r));
	snprintf(r->metric, sizeof(r->metric), "%s", metric);
	snprintf(r->design, sizeof(r->design), "%s", design);
	r->target_ns = target;
	r->gated = gated;
	return r;
}

/* size_label -- "1GiB", "64MiB". */
static void size_label(char *out, size_t n, size_t size)
{
	if (size % GIB == 0)
		snprintf(out, n, "%zuGiB", size / GIB);
	else
		snprintf(out, n, "%zuMiB", size >> 20);
}

/* ------------------------------------------------------------ subjects */

/* subject_spm -- a pool of design with a 1 MiB root object, in dir. */
static int subject_spm(struct subject *s, const char *dir, const char *group,
		       const char *design)
{
	char name[64], opt[64];
	memset(s, 0, sizeof(*s));
	snprintf(s->design, sizeof(s->design), "%s", design);
	snprintf(name, sizeof(name), "%s-%s.pool", group, design);
	snprintf(opt, sizeof(opt), "design=%s", design);
	if (join(s->path, sizeof(s->path), dir, name))
		return fail("path too long", 0);
	int rc = spm_create(&s->pool, s->path, SMALL_POOL, opt);
	if (rc)
		return fail(s->path, rc);
	s->obj = spm_root(s->pool, OBJ_SIZE);
	if (!s->obj)
		return fail("spm_root", 0);
	return 0;
}

/* subject_pmem -- a raw libpmem mapping of OBJ_SIZE bytes in dir. */
static int subject_pmem(struct subject *s, const char *dir, const char *group,
			int *is_pmem)
{
	char name[64];
	memset(s, 0, sizeof(*s));
	snprintf(s->design, sizeof(s->design), "libpmem");
	snprintf(name, sizeof(name), "%s-libpmem.raw", group);
	if (join(s->path, sizeof(s->path), dir, name))
		return fail("path too long", 0);
	s->obj = pmem_map_file(s->path, OBJ_SIZE, PMEM_FILE_CREATE | PMEM_FILE_EXCL,
			       0600, &s->map_len, is_pmem);
	if (!s->obj) {
		fprintf(stderr, "spm-microbench: %s: %s\n", s->path, pmem_errormsg());
		return -1;
	}
	return 0;
}

/* subject_close -- close or unmap, and remove the files. */
static void subject_close(struct subject *s)
{
	if (s->pool) {
		spm_close(s->pool);
		remove_pool(s->path);
	} else if (s->obj) {
		pmem_unmap(s->obj, s->map_len);
		unlink(s->path);
	}
	s->pool = NULL;
	s->obj = NULL;
}

static void persist(struct subject *s, void *p, size_t n)
{
	if (s->pool)
		spm_persist(s->pool, p, n);
	else
		pmem_persist(p, n);
}

/* op_line -- store to the next line, persist it. */
static void op_line(struct subject *s, uint64_t stamp)
{
	uint8_t *p = s->obj + (size_t)s->cursor * LINE;
	memcpy(p, &stamp, sizeof(stamp));
	persist(s, p, LINE);
	s->cursor = (s->cursor + 1) % OBJ_LINES;
}

/* op_page -- store to each line of the next 4 KiB page, persist the page. */
static void op_page(struct subject *s, uint64_t stamp)
{
	uint8_t *p = s->obj + (size_t)s->cursor * PAGE;
	for (size_t off = 0; off < PAGE; off += LINE)
		memcpy(p + off, &stamp, sizeof(stamp));
	persist(s, p, PAGE);
	s->cursor = (s->cursor + 1) % OBJ_PAGES;
}

/* time_batch -- ns per unit of ops calls of op (units per op). */
static double time_batch(struct subject *s, op_fn op, unsigned ops, unsigned units)
{
	uint64_t t0 = now_ns();
	for (unsigned i = 0; i < ops; i++)
		op(s, t0 + i);
	uint64_t t1 = now_ns();
	return (double)(t1 - t0) / ((double)ops * units);
}

/* run_interleaved -- warm up each subject, then reps rounds of one batch each. */
static void run_interleaved(struct subject *subj, unsigned n, op_fn op,
			    unsigned warm_ops, unsigned units, const struct opts *o)
{
	for (unsigned k = 0; k < n; k++)
		for (unsigned i = 0; i < warm_ops; i++)
			op(&subj[k], i);
	for (unsigned r = 0; r < o->reps; r++)
		for (unsigned k = 0; k < n; k++) {
			struct subject *s = &subj[(k + r) % n];
			s->samples[r] = time_batch(s, op, o->ops, units);
		}
}

/* record_subjects -- one result row per subject; gated_design meets the target. */
static void record_subjects(struct results *res, const char *metric,
			    struct subject *subj, unsigned n, double target,
			    const char *gated_design, const struct opts *o)
{
	for (unsigned k = 0; k < n; k++) {
		struct result *r = add_result(res, metric, subj[k].design, target,
					      strcmp(subj[k].design, gated_design) == 0);
		if (r)
			summarize(subj[k].samples, o->reps, r);
	}
}

/* ------------------------------------------------------------ groups */

/* group_persist -- persist_line or persist_4k_per_line over the subjects. */
static int group_persist(const struct opts *o, const char *dir, const char *group,
			 const char *const *designs, unsigned nd, struct results *res)
{
	int line = strcmp(group, "line") == 0, is_pmem = 0, rc = 0;
	struct subject *subj = calloc(nd + 1, sizeof(*subj));
	if (!subj)
		return fail("out of memory", 0);
	unsigned n = 0;
	for (; n < nd && !rc; n++)
		rc = subject_spm(&subj[n], dir, group, designs[n]);
	if (!rc)
		rc = subject_pmem(&subj[n++], dir, group, &is_pmem);
	if (!rc) {
		printf("  %s: libpmem reports is_pmem=%d for %s\n", group, is_pmem, dir);
		fflush(stdout);
		run_interleaved(subj, n, line ? op_line : op_page,
				line ? OBJ_LINES : OBJ_PAGES,
				line ? 1 : (unsigned)(PAGE / LINE), o);
		record_subjects(res, line ? "persist_line" : "persist_4k_per_line", subj,
				n, line ? TARGET_LINE_NS : TARGET_4K_LINE_NS, "sca", o);
	}
	for (unsigned k = 0; k < n; k++)
		subject_close(&subj[k]);
	free(subj);
	return rc;
}

/* alloc_object -- one object of size bytes in its own transaction; 0 if none. */
static spm_off_t alloc_object(spm_pool *p, size_t size)
{
	if (spm_tx_begin(p))
		return 0;
	spm_off_t off = spm_tx_alloc(p, size);
	if (!off) {
		spm_tx_abort(p);
		return 0;
	}
	return spm_tx_commit(p) == 0 ? off : 0;
}

/* stamp_lines -- a store to every line of [obj, obj+len). */
static void stamp_lines(uint8_t *obj, size_t len)
{
	for (size_t off = 0; off < len; off += LINE) {
		uint64_t v = (uint64_t)(uintptr_t)(obj + off) ^ 0x5eedf00dull;
		memcpy(obj + off, &v, sizeof(v));
	}
}

/* allocate_heap -- allocate the whole heap in objects, storing to every line. */
static size_t allocate_heap(spm_pool *p)
{
	size_t total = 0;
	for (size_t sz = FILL_OBJ; sz >= LINE; sz /= 2) {
		spm_off_t off;
		while ((off = alloc_object(p, sz)) != 0) {
			stamp_lines(spm_ptr(p, off), sz);
			total += sz;
		}
	}
	return total;
}

/*
 * fill_pool -- every line of the pool written: the heap is allocated and
 * stored to, then every addressable line (offset 4096 to the end: pool
 * header, lanes, bitmaps, heap) is persisted in big chunks.  Persisting the
 * runtime's own lines rewrites their current, committed content.
 */
static int fill_pool(spm_pool *p, double *per_line_ns)
{
	size_t size = spm_size(p);
	size_t heap = allocate_heap(p);
	if (heap < size / 2)
		return fail("allocating the heap for the fill", 0);
	uint8_t *base = (uint8_t *)spm_ptr(p, PAGE) - PAGE;
	uint64_t t0 = now_ns();
	for (size_t off = PAGE; off < size; off += FILL_CHUNK)
		spm_persist(p, base + off, size - off < FILL_CHUNK ? size - off : FILL_CHUNK);
	uint64_t t1 = now_ns();
	*per_line_ns = (double)(t1 - t0) / (double)((size - PAGE) / LINE);
	return 0;
}

/* time_opens -- n timed spm_open, each followed by a timed spm_close. */
static int time_opens(const char *path, unsigned n, double *open_ns, double *close_ns)
{
	for (unsigned i = 0; i < n; i++) {
		spm_pool *p;
		uint64_t t0 = now_ns();
		int rc = spm_open(&p, path, NULL);
		uint64_t t1 = now_ns();
		if (rc)
			return fail(path, rc);
		rc = spm_close(p);
		uint64_t t2 = now_ns();
		if (rc)
			return fail("spm_close", rc);
		open_ns[i] = (double)(t1 - t0);
		close_ns[i] = (double)(t2 - t1);
	}
	return 0;
}

/* record_opens -- rows open_<label>_<kind> (target) and close_<label>_<kind>. */
static void record_opens(struct results *res, const char *label, const char *kind,
			 const double *open_ns, const double *close_ns, double target,
			 int gated, unsigned n)
{
	char metric[64];
	snprintf(metric, sizeof(metric), "open_%s_%s", label, kind);
	struct result *r = add_result(res, metric, "sca", target, gated);
	if (r)
		summarize(open_ns, n, r);
	snprintf(metric, sizeof(metric), "close_%s_%s", label, kind);
	if ((r = add_result(res, metric, "sca", 0, 0)))
		summarize(close_ns, n, r);
}

/* enough_space -- room in dir for a filled pool of size bytes (+ meta, slack). */
static int enough_space(const char *dir, size_t size)
{
	struct statvfs sv;
	if (statvfs(dir, &sv) != 0)
		return 1; /* let spm_create report it */
	return (double)sv.f_bavail * (double)sv.f_frsize >
	       (double)size * 1.25 + (double)(256u << 20);
}

/* open_one -- create a pool of size, optionally fill it, close, time opens. */
static int open_one(const struct opts *o, const char *path, int filled,
		    const char *label, double target, struct results *res)
{
	spm_pool *p;
	double fill_ns = 0, open_ns[MAX_OPENS], close_ns[MAX_OPENS];
	int rc = spm_create(&p, path, o->open_size, "design=sca");
	if (rc)
		return fail(path, rc);
	if (filled && fill_pool(p, &fill_ns)) {
		spm_close(p);
		return -1;
	}
	if ((rc = spm_close(p)))
		return fail("spm_close", rc);
	if (time_opens(path, o->opens, open_ns, close_ns))
		return -1;
	record_opens(res, label, filled ? "filled" : "fresh", open_ns, close_ns,
		     target, filled, o->opens);
	if (filled) {
		char metric[64];
		snprintf(metric, sizeof(metric), "fill_%s_per_line", label);
		struct result *r = add_result(res, metric, "sca", 0, 0);
		if (r)
			r->median_ns = r->min_ns = r->max_ns = fill_ns;
	}
	return 0;
}

/* group_open -- open of a filled and of a fresh pool of o->open_size bytes. */
static int group_open(const struct opts *o, const char *dir, struct results *res)
{
	char label[24], path[PATH_MAX];
	size_label(label, sizeof(label), o->open_size);
	if (!enough_space(dir, o->open_size)) {
		printf("  open: SKIPPED, not enough free space in %s for a %s pool\n", dir,
		       label);
		return 0;
	}
	double target = TARGET_OPEN_1GIB_NS * (double)o->open_size / (double)GIB;
	const char *kinds[] = {"open-filled.pool", "open-fresh.pool"};
	for (unsigned i = 0; i < 2; i++) {
		if (join(path, sizeof(path), dir, kinds[i]))
			return fail("path too long", 0);
		printf("  open: %s pool of %s...\n", i == 0 ? "filling a" : "a fresh", label);
		fflush(stdout);
		int rc = open_one(o, path, i == 0, label, target, res);
		remove_pool(path);
		if (rc)
			return rc;
	}
	return 0;
}

/* ------------------------------------------------------------ output */

static const char *verdict(const struct result *r)
{
	if (!r->gated || r->target_ns <= 0)
		return "info";
	return r->median_ns <= r->target_ns ? "PASS" : "FAIL";
}

/* find_row -- the row of (metric, design), or NULL. */
static const struct result *find_row(const struct results *res, const char *metric,
				     const char *design)
{
	for (unsigned i = 0; i < res->n; i++)
		if (!strcmp(res->r[i].metric, metric) && !strcmp(res->r[i].design, design))
			return &res->r[i];
	return NULL;
}

static void print_table(const struct results *res)
{
	printf("\n%-26s %-8s %14s %14s %14s %12s %7s %7s\n", "metric", "design",
	       "median_ns", "min_ns", "max_ns", "target_ns", "ratio", "verdict");
	for (unsigned i = 0; i < res->n; i++) {
		const struct result *r = &res->r[i];
		printf("%-26s %-8s %14.1f %14.1f %14.1f ", r->metric, r->design,
		       r->median_ns, r->min_ns, r->max_ns);
		if (r->target_ns > 0)
			printf("%12.1f %7.2f %7s\n", r->target_ns, r->median_ns / r->target_ns,
			       verdict(r));
		else
			printf("%12s %7s %7s\n", "-", "-", verdict(r));
	}
	static const char *const metrics[] = {"persist_line", "persist_4k_per_line"};
	for (unsigned i = 0; i < 2; i++) {
		const struct result *a = find_row(res, metrics[i], "sca");
		const struct result *b = find_row(res, metrics[i], "libpmem");
		if (a && b && b->median_ns > 0)
			printf("%s: sca / libpmem = %.2f\n", metrics[i],
			       a->median_ns / b->median_ns);
	}
	printf("ratio = median / target (the target applies to the PASS/FAIL row; "
	       "'info' rows are for comparison)\n");
}

static int write_csv(const struct results *res, const char *file)
{
	FILE *f = fopen(file, "w");
	if (!f) {
		fprintf(stderr, "spm-microbench: %s: %s\n", file, strerror(errno));
		return -1;
	}
	fprintf(f, "metric,design,median_ns,ratio_to_target\n");
	for (unsigned i = 0; i < res->n; i++) {
		const struct result *r = &res->r[i];
		fprintf(f, "%s,%s,%.1f,", r->metric, r->design, r->median_ns);
		if (r->target_ns > 0)
			fprintf(f, "%.4f", r->median_ns / r->target_ns);
		fprintf(f, "\n");
	}
	return fclose(f) ? -1 : 0;
}

/* ------------------------------------------------------------ main */

static void usage(FILE *f)
{
	fprintf(f, "usage: spm-microbench [--dir DIR] [--reps N] [--ops N] [--opens N]\n"
		   "                      [--quick] [--only line|range|open] [--csv FILE]\n"
		   "  --dir DIR    where the pool files go (default $TMPDIR, else /tmp)\n"
		   "  --reps N     repetitions per persist metric (default 15)\n"
		   "  --ops N      ops per repetition (default 10000)\n"
		   "  --opens N    timed opens per pool (default 5)\n"
		   "  --quick      smoke run: 3 reps of 1000 ops, 2 opens of 64 MiB pools\n"
		   "  --only G     run one group: line, range or open\n"
		   "  --csv FILE   also write metric,design,median_ns,ratio_to_target\n");
}

/* parse_count -- a whole number in [1, max]. */
static int parse_count(const char *v, unsigned max, unsigned *out)
{
	char *end;
	errno = 0;
	unsigned long x = strtoul(v, &end, 10);
	if (errno || end == v || *end || *v == '-' || x < 1 || x > max)
		return -1;
	*out = (unsigned)x;
	return 0;
}

static int parse_args(int argc, char **argv, struct opts *o)
{
	const char *tmp = getenv("TMPDIR");
	unsigned reps = 0, ops = 0, opens = 0;
	*o = (struct opts){tmp && *tmp ? tmp : "/tmp", NULL, NULL, 15, 10000, 5, GIB, 0};
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		int bad = 0;
		if (!strcmp(a, "--quick"))
			o->quick = 1;
		else if (!strcmp(a, "--help") || !strcmp(a, "-h"))
			return usage(stdout), 1;
		else if (!v)
			bad = 1;
		else if (!strcmp(a, "--dir"))
			o->dir = v;
		else if (!strcmp(a, "--csv"))
			o->csv = v;
		else if (!strcmp(a, "--only")) {
			o->only = v;
			bad = strcmp(v, "line") && strcmp(v, "range") && strcmp(v, "open");
		}
		else if (!strcmp(a, "--reps"))
			bad = parse_count(v, MAX_REPS, &reps);
		else if (!strcmp(a, "--ops"))
			bad = parse_count(v, 100000000u, &ops);
		else if (!strcmp(a, "--opens"))
			bad = parse_count(v, MAX_OPENS, &opens);
		else
			bad = 1;
		if (bad) {
			fprintf(stderr, "spm-microbench: bad argument %s%s%s\n", a,
				v ? " " : "", v ? v : "");
			return usage(stderr), 2;
		}
		i += strcmp(a, "--quick") != 0;
	}
	if (o->quick) {
		o->reps = 3;
		o->ops = 1000;
		o->opens = 2;
		o->open_size = (size_t)64 << 20;
	}
	o->reps = reps ? reps : o->reps;
	o->ops = ops ? ops : o->ops;
	o->opens = opens ? opens : o->opens;
	return 0;
}

static int wanted(const struct opts *o, const char *group)
{
	return !o->only || !strcmp(o->only, group);
}

static void print_header(const struct opts *o, const char *dir)
{
	const char *conf = getenv("SPM_CONF");
	printf("spm-microbench: %u reps x %u ops per persist metric (median of per-op ns), "
	       "%u opens per pool%s\n", o->reps, o->ops, o->opens,
	       o->quick ? " [--quick]" : "");
	printf("  dir %s; SPM_CONF=%s; benchmark compiled %s\n", dir,
	       conf ? conf : "(unset)",
#ifdef __OPTIMIZE__
	       "optimized"
#else
	       "without optimization"
#endif
	);
	fflush(stdout);
}

/* run_groups -- every wanted group; -1 on the first failure. */
static int run_groups(const struct opts *o, const char *dir, struct results *res)
{
	static const char *const line_designs[] = {"sca", "plain", "fca", "ideal", "unsafe"};
	static const char *const range_designs[] = {"sca"};
	if (wanted(o, "line") && group_persist(o, dir, "line", line_designs, 5, res))
		return -1;
	if (wanted(o, "range") && group_persist(o, dir, "range", range_designs, 1, res))
		return -1;
	if (wanted(o, "open") && group_open(o, dir, res))
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o;
	int rc = parse_args(argc, argv, &o);
	if (rc)
		return rc == 1 ? 0 : rc;
	char dir[PATH_MAX];
	if (join(dir, sizeof(dir), o.dir, "spm-microbench.XXXXXX") || !mkdtemp(dir)) {
		fprintf(stderr, "spm-microbench: cannot make a directory in %s: %s\n", o.dir,
			strerror(errno));
		return 1;
	}
	print_header(&o, dir);
	static struct results res;
	rc = run_groups(&o, dir, &res);
	rmdir(dir);
	print_table(&res);
	if (o.csv && write_csv(&res, o.csv))
		rc = -1;
	return rc ? 1 : 0;
}
