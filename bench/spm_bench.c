/* spm_bench.c -- spm-bench: the example workloads on each design, a table normalized to plain, and CSV. */
/*
 *   spm-bench [--designs LIST] [--workloads LIST] [--ops N] [--tx-size LIST]
 *             [--cores LIST] [--threads N] [--profile NAME] [--seed S]
 *             [--set key=value]... [--csv FILE] [--reps N] [--dir DIR] [--prefault 0|1]
 *             [--footprint BYTES] [--elements N] [--mix insert|mixed]
 *             [--keys uniform|zipf:THETA] [--work-ns N] [--dup PCT]
 *
 * With no flags: the main comparison of the counter-atomicity paper (SCA,
 * HPCA 2018, Figure 12): the five workloads on plain, ideal, colocated,
 * colocated-cc, fca, sca and libpmemobj ("pmdk").  See README "Benchmarks".
 * The workloads skiplist, bptree, stream and records, --keys zipf:THETA and
 * --dup PCT above 0 are spm's only: with the design pmdk they are refused.
 * stream (bench_stream.c) is not transactional: plain loads and stores over
 * two arrays of --footprint bytes (64 MiB unless given), written back only by
 * the modeled LLC's evictions.  records (bench_records.c) writes 256-byte
 * records of a table of --footprint bytes in transactions: new zeroed ones,
 * copies, repeats of a recent one and fresh ones, the duplicate lines of a
 * logging or order-table program.
 *
 * --dup PCT (0..100, default 0): PCT% of the values the example workloads
 * write repeat one of 256 fixed contents (Zipf's law), byte for byte after
 * their 8-byte header (examples/common/ex_main.h, "Values"), the others are
 * fresh; 0 writes exactly what they wrote before the flag existed.  stream
 * and records write no such values (records has duplicates of its own).
 * The CSV's last column, dup, is PCT (empty for stream and records).
 *
 * Each measurement creates a pool in --dir, makes one instance of the
 * workload per modeled core, resets the statistics, runs --ops operations per
 * core (the measured phase), reads the statistics, and removes the pool.
 * Modeled cores are interleaved deterministically: the core with the smallest
 * modeled clock does its next operation.  Exit status: 0; 1 if a measurement
 * failed; 2 for bad usage (a bad flag or value, an unknown design, workload or
 * option, a CSV path that cannot be written), found before anything runs; 3 if
 * the CSV could not be written at the end.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

#define MAX_LIST 32u

#define DEFAULT_DESIGNS "plain,ideal,colocated,colocated-cc,fca,sca,pmdk"
#define DEFAULT_WORKLOADS "array,queue,hashmap,btree,rbtree"
#define DEFAULT_OPS 100000u
/* four times the sca profile's LLC per core (2 MB): the maps and the array
 * are filled past the modeled caches before the measured phase */
#define DEFAULT_FOOTPRINT (8ull << 20)
/* stream's arrays: 32 times the sca profile's LLC per core */
#define STREAM_FOOTPRINT (64ull << 20)

struct list {
	char *item[MAX_LIST];
	unsigned n;
};

struct args {
	struct list designs, workloads, tx_sizes, cores;
	struct bench_cfg base;
	unsigned reps;
	int footprint_given; /* --footprint: stream's too, else STREAM_FOOTPRINT */
	const char *csv;
	char set[2048];
};

/* usage -- the flags and defaults, to out; returns 2 (bad usage). */
static int usage(FILE *out)
{
	fprintf(out,
		"usage: spm-bench [--designs LIST] [--workloads LIST] [--ops N] [--tx-size LIST]\n"
		"                 [--cores LIST] [--threads N] [--profile NAME] [--seed S]\n"
		"                 [--set key=value]... [--csv FILE] [--reps N] [--dir DIR]\n"
		"                 [--footprint BYTES] [--elements N] [--mix insert|mixed]\n"
		"                 [--keys uniform|zipf:THETA] [--work-ns N] [--prefault 0|1]\n"
		"                 [--dup PCT]\n"
		"LIST is comma separated.  Defaults: --designs %s\n"
		"--workloads %s --ops %u (per core) --tx-size 64 --cores 1 --threads 1\n"
		"--profile sca --seed 1 --reps 1 --dir /tmp --mix insert --keys uniform.\n"
		"Workloads: array queue hashmap btree rbtree skiplist bptree stream records\n"
		"(pmdk: the first five).  stream: no transactions, an op updates one line of an\n"
		"array with plain loads and stores (3 in 4 sequential, 1 random), write-backs\n"
		"are LLC evictions; its two arrays are --footprint bytes (64m unless given), one\n"
		"pass over them warms up; --tx-size does not apply.  records: an op writes one\n"
		"256-byte record of a table of --footprint bytes (1024 records for 0) in a\n"
		"transaction: 30%% new and zeroed, 20%% a copy of an earlier one, 20%% a repeat\n"
		"of a recent one, 30%% fresh; one pass fills the table first; --tx-size and\n"
		"--dup do not apply.\n"
		"--dup PCT: PCT%% (0..100, default 0) of the values the example workloads write\n"
		"repeat one of %u fixed contents (Zipf's law), byte for byte after their 8-byte\n"
		"header; the rest are fresh (not with the design pmdk).\n"
		"--keys: the maps' keys in the measured phase (the prefill's are\n"
		"uniform): uniform, or zipf:THETA, 0 < THETA < 1, Zipf's law over %u keys\n"
		"(0.99: YCSB's skew; not with the design pmdk).\n"
		"--set k=v: an spm_create option (repeatable); --footprint B: fill each map\n"
		"instance with about B bytes first (8m; 0: none); --elements N: array length\n"
		"(footprint / size, or 1024); --reps N: repeat, report medians; --work-ns N: modeled\n"
		"core time of each op's own work (spm_model_work; default 0: none);\n"
		"--prefault 1 (default): every pool's pages, spm's and libpmemobj's, are\n"
		"mapped when it is created, outside the measured phase (spm prefault=1,\n"
		"libpmemobj prefault.at_create); 0: first touches fall inside the runs.\n"
		"Ranges: --ops >= 1, --tx-size %u..%u, --cores and --threads 1..%u, --reps\n"
		"1..256, --work-ns <= 10^9, --elements 2..2^24, --dup 0..100; numbers but\n"
		"--dup take k, m, g.\n"
		"Exit: 0; 1 a run failed; 2 bad usage (before any run); 3 CSV not written.\n",
		DEFAULT_DESIGNS, DEFAULT_WORKLOADS, DEFAULT_OPS, EX_DUP_CONTENTS, EX_ZIPF_KEYS,
		EX_VALUE_MIN, EX_VALUE_MAX, BENCH_MAX_CORES);
	return 2;
}

/* parse_num -- a whole number with an optional k, m or g suffix; -1 if bad. */
static int parse_num(const char *s, uint64_t *out)
{
	char *end;
	if (!s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 0);
	unsigned shift = *end == 'k' || *end == 'K'   ? 10
			 : *end == 'm' || *end == 'M' ? 20
			 : *end == 'g' || *end == 'G' ? 30
						      : 0;
	end += shift != 0;
	if (errno || *end || (shift && v > (UINT64_MAX >> shift)))
		return -1;
	*out = (uint64_t)v << shift;
	return 0;
}

/* split -- a comma separated list (s is kept and cut); -1 if empty or too long. */
static int split(char *s, struct list *l)
{
	l->n = 0;
	for (char *tok = strtok(s, ","); tok; tok = strtok(NULL, ",")) {
		if (l->n == MAX_LIST)
			return -1;
		l->item[l->n++] = tok;
	}
	return l->n ? 0 : -1;
}

/* num_list -- every item of l is a number in [lo, hi]? */
static int num_list(const struct list *l, uint64_t lo, uint64_t hi)
{
	for (unsigned i = 0; i < l->n; i++) {
		uint64_t v;
		if (parse_num(l->item[i], &v) || v < lo || v > hi)
			return -1;
	}
	return 0;
}

static uint64_t num_at(const struct list *l, unsigned i)
{
	uint64_t v = 0;
	parse_num(l->item[i], &v);
	return v;
}

/* add_set -- append key=value to the options string (not prefault: --prefault
 * sets it for libpmemobj too). */
static int add_set(struct args *a, const char *kv)
{
	size_t used = strlen(a->set);
	if (!strchr(kv, '=') || strchr(kv, ';') || used + strlen(kv) + 2 > sizeof(a->set))
		return -1;
	if (strncmp(kv, "prefault=", 9) == 0) {
		fprintf(stderr, "spm-bench: --set prefault: use --prefault 0|1, which sets "
			"libpmemobj's prefault as well\n");
		return -1;
	}
	snprintf(a->set + used, sizeof(a->set) - used, "%s%s", used ? ";" : "", kv);
	return 0;
}

/* The flags: one list, for parse_flag's dispatch and bad_flag's names. */
#define BENCH_FLAGS(X)                                                                     \
	X(DESIGNS, "--designs") X(WORKLOADS, "--workloads") X(TX_SIZE, "--tx-size")        \
	X(CORES, "--cores") X(PROFILE, "--profile") X(DIR, "--dir") X(CSV, "--csv")       \
	X(SET, "--set") X(MIX, "--mix") X(OPS, "--ops") X(THREADS, "--threads")           \
	X(SEED, "--seed") X(REPS, "--reps") X(WORK_NS, "--work-ns")                       \
	X(FOOTPRINT, "--footprint") X(ELEMENTS, "--elements") X(PREFAULT, "--prefault")   \
	X(KEYS, "--keys") X(DUP, "--dup")
#define FLAG_ID(id, name) FLAG_##id,
#define FLAG_NAME(id, name) name,
enum flag_id { BENCH_FLAGS(FLAG_ID) FLAG_COUNT };
static const char *const flag_names[FLAG_COUNT] = {BENCH_FLAGS(FLAG_NAME)};

/* flag_of -- the flag named f, or FLAG_COUNT. */
static enum flag_id flag_of(const char *f)
{
	unsigned i = 0;
	while (i < FLAG_COUNT && strcmp(f, flag_names[i]) != 0)
		i++;
	return (enum flag_id)i;
}

/* num_in -- a number flag's value v into *n, in [lo, hi]; -1 if not. */
static int num_in(const char *v, uint64_t *n, uint64_t lo, uint64_t hi)
{
	return parse_num(v, n) || *n < lo || *n > hi ? -1 : 0;
}

/* parse_flag -- flag f (one of flag_names) with value v; -1 if v is bad. */
static int parse_flag(struct args *a, enum flag_id f, char *v)
{
	uint64_t n = 0;
	struct bench_cfg *b = &a->base;
	switch (f) {
	case FLAG_DESIGNS:
		return split(v, &a->designs);
	case FLAG_WORKLOADS:
		return split(v, &a->workloads);
	case FLAG_TX_SIZE:
		return split(v, &a->tx_sizes) ||
		       num_list(&a->tx_sizes, EX_VALUE_MIN, EX_VALUE_MAX);
	case FLAG_CORES:
		return split(v, &a->cores) || num_list(&a->cores, 1, BENCH_MAX_CORES);
	case FLAG_PROFILE:
		return b->profile = v, 0;
	case FLAG_DIR:
		return b->dir = v, 0;
	case FLAG_CSV:
		return a->csv = v, 0;
	case FLAG_SET:
		return add_set(a, v);
	case FLAG_MIX:
		b->mix = strcmp(v, "mixed") == 0 ? EX_MIX_MIXED : EX_MIX_INSERT;
		return strcmp(v, "mixed") && strcmp(v, "insert") ? -1 : 0;
	case FLAG_OPS:
		return num_in(v, &n, 1, UINT64_MAX) ? -1 : (b->ops = n, 0);
	case FLAG_THREADS:
		return num_in(v, &n, 1, BENCH_MAX_CORES) ? -1 : (b->threads = (unsigned)n, 0);
	case FLAG_SEED:
		return num_in(v, &n, 0, UINT64_MAX) ? -1 : (b->seed = n, 0);
	case FLAG_REPS:
		return num_in(v, &n, 1, 256) ? -1 : (a->reps = (unsigned)n, 0);
	case FLAG_WORK_NS:
		return num_in(v, &n, 0, 1000000000) ? -1 : (b->work_ns = n, 0);
	case FLAG_FOOTPRINT:
		a->footprint_given = 1;
		return num_in(v, &n, 0, UINT64_MAX) ? -1 : (b->footprint = n, 0);
	case FLAG_ELEMENTS:
		if (num_in(v, &n, 0, 1u << 24) || n == 1)
			return -1;
		return b->elements = n, 0;
	case FLAG_PREFAULT:
		return num_in(v, &n, 0, 1) ? -1 : (b->prefault = (int)n, 0);
	case FLAG_KEYS:
		return ex_keys_parse(v, &b->keys);
	case FLAG_DUP:
		return ex_dup_parse(v, &n) ? -1 : (bench_dup = (unsigned)n, 0);
	case FLAG_COUNT:
		break;
	}
	return -1;
}

/* bad_flag -- say which flag or value was refused, on stderr; -1. */
static int bad_flag(const char *f, const char *v)
{
	if (strncmp(f, "--", 2) != 0)
		fprintf(stderr, "spm-bench: unexpected argument \"%s\"\n", f);
	else if (flag_of(f) == FLAG_COUNT)
		fprintf(stderr, "spm-bench: unknown flag %s\n", f);
	else if (!v)
		fprintf(stderr, "spm-bench: %s needs a value\n", f);
	else
		fprintf(stderr, "spm-bench: %s \"%s\": not a valid value (see below)\n", f, v);
	return -1;
}

/* parse_args -- the defaults, then the flags; -1 if one is bad (said on stderr). */
static int parse_args(struct args *a, int argc, char **argv)
{
	static char t[] = "64", c[] = "1", dd[sizeof(DEFAULT_DESIGNS)] = DEFAULT_DESIGNS,
		    dw[sizeof(DEFAULT_WORKLOADS)] = DEFAULT_WORKLOADS;
	if (split(dd, &a->designs) || split(dw, &a->workloads) || split(t, &a->tx_sizes) ||
	    split(c, &a->cores))
		return -1;
	a->base = (struct bench_cfg){.profile = "sca", .dir = "/tmp", .threads = 1,
				     .ops = DEFAULT_OPS, .seed = 1, .mix = EX_MIX_INSERT,
				     .prefault = 1, .footprint = DEFAULT_FOOTPRINT};
	a->reps = 1;
	for (int i = 1; i < argc; i++) {
		char *v = i + 1 < argc ? argv[i + 1] : NULL;
		char copy[256] = ""; /* split() cuts v */
		snprintf(copy, sizeof(copy), "%s", v ? v : "");
		enum flag_id f = flag_of(argv[i]);
		if (f == FLAG_COUNT || !v || parse_flag(a, f, v))
			return bad_flag(argv[i], v ? copy : NULL);
		i++;
	}
	a->base.set = a->set;
	return 0;
}

/* ---- checks before the long part ---------------------------------------------- */

/* check_design -- a tiny pool with the design's options: bad names and --set
 * keys are refused now rather than minutes later. */
static int check_design(const struct args *a, const char *design)
{
	if (strcmp(design, "pmdk") == 0)
		return 0;
	char path[4096], opts[2560];
	struct bench_cfg cfg = a->base;
	cfg.design = design;
	snprintf(path, sizeof(path), "%s/spm-bench.%ld.check", a->base.dir, (long)getpid());
	bench_options(&cfg, opts, sizeof(opts));
	spm_pool *pool;
	int rc = spm_create(&pool, path, 4u << 20, opts);
	if (rc == 0)
		rc = spm_close(pool);
	else
		fprintf(stderr, "spm-bench: %s: %s\n", opts,
			*spm_errormsg() ? spm_errormsg() : spm_strerror(rc));
	unlink(path);
	strcat(path, ".meta");
	unlink(path);
	path[strlen(path) - 5] = 0;
	strcat(path, ".key");
	unlink(path);
	strcat(path, ".tcb"); /* the integrity designs' registers */
	unlink(path);
	return rc ? -1 : 0;
}

/*
 * check_csv -- can the CSV be written?  Checked before the runs, which may
 * take minutes; a file that did not exist is removed again, an existing one
 * is left as it was.
 */
static int check_csv(const char *path)
{
	if (!path || strcmp(path, "-") == 0)
		return 0;
	int existed = access(path, F_OK) == 0;
	FILE *f = fopen(path, "a");
	if (!f) {
		fprintf(stderr, "spm-bench: --csv %s: %s\n", path, strerror(errno));
		return -1;
	}
	fclose(f);
	if (!existed)
		unlink(path);
	return 0;
}

/* check_pmdk -- libpmemobj's workloads are five, with uniform keys: the
 * others with the design pmdk are refused (when it is built). */
static int check_pmdk(const struct args *a)
{
	int pmdk = 0;
	for (unsigned i = 0; i < a->designs.n; i++)
		pmdk |= strcmp(a->designs.item[i], "pmdk") == 0;
	if (!pmdk || !bench_have_pmdk())
		return 0;
	if (a->base.keys) {
		fprintf(stderr, "spm-bench: --keys zipf: the design pmdk has uniform keys only "
			"(leave it out of --designs)\n");
		return -1;
	}
	if (bench_dup) {
		fprintf(stderr, "spm-bench: --dup %u: the design pmdk writes fresh values "
			"only (leave it out of --designs)\n", bench_dup);
		return -1;
	}
	for (unsigned i = 0; i < a->workloads.n; i++)
		if (!bench_pmdk_has(a->workloads.item[i])) {
			fprintf(stderr, "spm-bench: the design pmdk has no %s workload (leave it "
				"out of --designs)\n", a->workloads.item[i]);
			return -1;
		}
	return 0;
}

static int check_args(const struct args *a)
{
	if (check_csv(a->csv))
		return -1;
	for (unsigned i = 0; i < a->workloads.n; i++)
		if (!bench_ds(a->workloads.item[i])) {
			fprintf(stderr, "spm-bench: unknown workload %s (array queue hashmap "
				"btree rbtree skiplist bptree stream records)\n",
				a->workloads.item[i]);
			return -1;
		}
	if (check_pmdk(a))
		return -1;
	for (unsigned i = 0; i < a->designs.n; i++)
		if (check_design(a, a->designs.item[i]))
			return -1;
	return 0;
}

/*
 * pmem_env -- the design pmdk: libpmemobj on an ordinary file would msync
 * every persist.  PMEM_IS_PMEM_FORCE=1 and PMEM_NO_FLUSH=1 make it persist
 * with stores and fences (no cache flush, no msync): durable against the
 * death of the process, spm's crash model, as cheaply as libpmemobj can be.
 * spm's pools get durability=none explicitly (bench_options), which is what
 * auto gives on an ordinary file.  libpmem reads PMEM_NO_FLUSH when it
 * loads, hence the re-exec.  Setting either variable yourself leaves the
 * environment as it is.
 */
static void pmem_env(char **argv)
{
	if (getenv("PMEM_IS_PMEM_FORCE") || getenv("PMEM_NO_FLUSH"))
		return;
	setenv("PMEM_IS_PMEM_FORCE", "1", 1);
	setenv("PMEM_NO_FLUSH", "1", 1);
	execv("/proc/self/exe", argv);
	fprintf(stderr, "spm-bench: cannot re-exec with PMEM_NO_FLUSH=1 (%s); libpmemobj "
		"and spm flush CPU caches\n", strerror(errno));
}

/* ---- the sweep ----------------------------------------------------------------- */

struct sweep {
	const struct args *a;
	struct bench_row *rows;
	size_t n, total, done;
	int failed;
	uint64_t t0;
};

/* mem_row -- design d's row's memory statistics, the median of its
 * repetitions' (not modeled: EX_NOT_MODELED in ex_main.h). */
EX_NOT_MODELED static void mem_row(const struct args *a, const struct bench_mem *mem,
				   unsigned d, struct bench_mem *out)
{
	bench_mem_median(&mem[(size_t)d * a->reps], a->reps, out);
}

/* measure -- reps repetitions of every design of one (workload, cores, size)
 * group, designs in turn inside each repetition; medians into the rows. */
static void measure(struct sweep *s, struct bench_cfg *g, int with_pmdk)
{
	const struct args *a = s->a;
	/* the results, then their memory statistics (one allocation: no more
	 * accesses here than before those existed; bench.h) */
	struct bench_result *res = calloc((size_t)a->designs.n * a->reps,
					  sizeof(*res) + sizeof(struct bench_mem));
	if (!res) {
		s->failed = 1;
		return;
	}
	struct bench_mem *mem = (struct bench_mem *)(res + (size_t)a->designs.n * a->reps);
	for (unsigned r = 0; r < a->reps; r++)
		for (unsigned d = 0; d < a->designs.n; d++) {
			struct bench_cfg cfg = *g;
			cfg.design = a->designs.item[d];
			int pmdk = strcmp(cfg.design, "pmdk") == 0;
			if (pmdk && !with_pmdk)
				continue;
			s->done++;
			uint64_t t = bench_now_ns();
			int rc = pmdk ? bench_run_pmdk(&cfg, &res[d * a->reps + r])
				      : bench_run_spm(&cfg, &res[d * a->reps + r],
						      &mem[d * a->reps + r]);
			const struct bench_result *x = &res[d * a->reps + r];
			if (rc) {
				s->failed = 1;
				res[d * a->reps + r].ops = 0;
				mem[d * a->reps + r].valid = 0;
				continue;
			}
			fprintf(stderr, "[%zu/%zu %3.0fs] %-12s %-7s cores %u tx %" PRIu64
				": %9.0f ops/s wall", s->done, s->total,
				(double)(bench_now_ns() - s->t0) * 1e-9, cfg.design, cfg.workload,
				cfg.cores, cfg.tx_size,
				x->wall_ns ? (double)x->ops * 1e9 / (double)x->wall_ns : 0.0);
			if (x->modeled)
				fprintf(stderr, ", %8.1f ns/op modeled",
					(double)x->modeled_ns / (double)(x->ops ? x->ops : 1));
			if (x->modeled && x->stat[BENCH_STAT_ACCESSES] && x->wall_ns)
				fprintf(stderr, ", %5.1f M accesses/s",
					(double)x->stat[BENCH_STAT_ACCESSES] * 1e3 /
						(double)x->wall_ns);
			fprintf(stderr, " (%.1f s)\n", (double)(bench_now_ns() - t) * 1e-9);
		}
	for (unsigned d = 0; d < a->designs.n; d++) {
		struct bench_row *row = &s->rows[s->n];
		row->cfg = *g;
		row->cfg.design = a->designs.item[d];
		if (strcmp(row->cfg.design, "pmdk") == 0 && !with_pmdk)
			continue;
		unsigned ok = 0;
		struct bench_result *good = &res[d * a->reps];
		for (unsigned r = 0; r < a->reps; r++)
			if (good[r].ops)
				good[ok++] = good[r];
		if (!ok)
			continue;
		bench_median(good, ok, &row->res);
		mem_row(a, mem, d, &row->mem);
		row->reps = ok;
		s->n++;
	}
	free(res);
}

/* dup_note -- ", dup PCT%" in buf for the first line, or "" for --dup 0.
 * Not modeled: spm-bench's own accesses before a measurement are charged to
 * its pool (EX_NOT_MODELED in ex_main.h). */
EX_NOT_MODELED static const char *dup_note(char *buf, size_t len)
{
	if (!bench_dup)
		return "";
	snprintf(buf, len, ", dup %u%%", bench_dup);
	return buf;
}

int main(int argc, char **argv)
{
	struct args a;
	memset(&a, 0, sizeof(a));
	pmem_env(argv); /* first: parsing cuts the lists in argv */
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
			return usage(stdout), 0;
	if (parse_args(&a, argc, argv))
		return usage(stderr);
	if (check_args(&a))
		return 2;
	int have_pmdk_design = 0;
	for (unsigned i = 0; i < a.designs.n; i++)
		have_pmdk_design |= strcmp(a.designs.item[i], "pmdk") == 0;
	if (have_pmdk_design && !bench_have_pmdk()) {
		fprintf(stderr, "spm-bench: no bench/pmdk in this build: design pmdk skipped\n");
		for (unsigned i = 0; i < a.designs.n; i++)
			if (strcmp(a.designs.item[i], "pmdk") == 0)
				a.designs.item[i--] = a.designs.item[--a.designs.n];
		have_pmdk_design = 0;
	}
	size_t groups = (size_t)a.workloads.n * a.cores.n * a.tx_sizes.n;
	struct sweep s = {.a = &a, .rows = calloc(groups * a.designs.n, sizeof(struct bench_row)),
			  .t0 = bench_now_ns()};
	if (!s.rows)
		return 1;
	s.total = groups * a.reps * (a.designs.n - (size_t)have_pmdk_design) +
		  (size_t)have_pmdk_design * a.workloads.n * a.tx_sizes.n * a.reps;
	char opts[2560];
	struct bench_cfg show = a.base;
	show.design = "<design>";
	bench_options(&show, opts, sizeof(opts));
	char dnote[32]; /* --dup's, made apart (dup_note) */
	const char *dup = dup_note(dnote, sizeof(dnote));
	char keys[48] = "";
	if (a.base.keys) {
		strcpy(keys, ", keys ");
		ex_keys_name(a.base.keys, keys + strlen(keys), sizeof(keys) - strlen(keys));
	}
	fprintf(stderr, "spm-bench: %zu runs of %" PRIu64 " ops per core, options %s%s%s%s%s, "
		"pools in %s\n", s.total, a.base.ops, opts,
		getenv("SPM_CONF") ? ", SPM_CONF=" : "",
		getenv("SPM_CONF") ? getenv("SPM_CONF") : "", keys, dup, a.base.dir);
	if (have_pmdk_design)
		fprintf(stderr, "spm-bench: libpmemobj with PMEM_IS_PMEM_FORCE=%s "
			"PMEM_NO_FLUSH=%s, prefault.at_create=%d\n",
			getenv("PMEM_IS_PMEM_FORCE") ?: "(unset)",
			getenv("PMEM_NO_FLUSH") ?: "(unset)", a.base.prefault);
	for (unsigned w = 0; w < a.workloads.n; w++)
		for (unsigned c = 0; c < a.cores.n; c++)
			for (unsigned t = 0; t < a.tx_sizes.n; t++) {
				struct bench_cfg g = a.base;
				g.workload = a.workloads.item[w];
				g.cores = (unsigned)num_at(&a.cores, c);
				if (g.cores < g.threads)
					g.cores = g.threads;
				g.tx_size = num_at(&a.tx_sizes, t);
				if (!a.footprint_given && strcmp(g.workload, "stream") == 0)
					g.footprint = STREAM_FOOTPRINT;
				/* libpmemobj has no modeled cores: once per size */
				measure(&s, &g, c == 0);
			}
	bench_print_tables(s.rows, s.n);
	int rc = s.failed ? 1 : 0, csv_failed = a.csv && bench_write_csv(a.csv, s.rows, s.n);
	if (csv_failed)
		rc = 3;
	fprintf(stderr, "spm-bench: done in %.1f s%s%s%s\n",
		(double)(bench_now_ns() - s.t0) * 1e-9, a.csv ? ", CSV " : "",
		a.csv ? (csv_failed ? "NOT written to " : "in ") : "", a.csv ? a.csv : "");
	free(s.rows);
	return rc;
}
