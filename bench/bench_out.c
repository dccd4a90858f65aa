/* bench_out.c -- spm-bench's output: medians, the tables normalized to plain, the CSV file. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* median_of -- the median of n values (the mean of the middle two if n is even). */
static uint64_t median_of(uint64_t *v, unsigned n)
{
	qsort(v, n, sizeof(*v), cmp_u64);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

void bench_median(const struct bench_result *res, unsigned n, struct bench_result *out)
{
	uint64_t v[256];
	if (n > 256)
		n = 256;
	*out = res[0];
#define MEDIAN(field)                                  \
	do {                                           \
		for (unsigned i = 0; i < n; i++)       \
			v[i] = res[i].field;           \
		out->field = median_of(v, n);          \
	} while (0)
	MEDIAN(ops);
	MEDIAN(modeled_ns);
	MEDIAN(wall_ns);
	MEDIAN(items);
	for (unsigned s = 0; s < bench_nstats; s++)
		MEDIAN(stat[s]);
#undef MEDIAN
}

/* mem_median -- median_of, not modeled (insertion sort: no qsort callback,
 * which would be instrumented). */
EX_NOT_MODELED static uint64_t mem_median(uint64_t *v, unsigned n)
{
	for (unsigned i = 1; i < n; i++)
		for (unsigned k = i; k > 0 && v[k - 1] > v[k]; k--) {
			uint64_t t = v[k];
			v[k] = v[k - 1];
			v[k - 1] = t;
		}
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

EX_NOT_MODELED void bench_mem_median(const struct bench_mem *mem, unsigned n,
				     struct bench_mem *out)
{
	uint64_t v[256];
	out->valid = 0;
	for (unsigned s = 0; s < BENCH_MAX_MEM; s++)
		out->stat[s] = 0;
	for (unsigned s = 0; s < bench_nstats_mem; s++) {
		unsigned k = 0;
		for (unsigned i = 0; i < n && k < 256; i++)
			if (mem[i].valid)
				v[k++] = mem[i].stat[s];
		if (k)
			out->stat[s] = mem_median(v, k), out->valid = 1;
	}
}

/* ---- tables ---------------------------------------------------------------- */

/* same_group -- same workload, cores, threads and transaction size? */
static int same_group(const struct bench_cfg *a, const struct bench_cfg *b)
{
	return strcmp(a->workload, b->workload) == 0 && a->cores == b->cores &&
	       a->threads == b->threads && a->tx_size == b->tx_size;
}

static double per_op(uint64_t v, uint64_t ops)
{
	return ops ? (double)v / (double)ops : 0.0;
}

/* group_model -- which timing model the rows of rows[first]'s group used:
 * execution-driven where the program's accesses reached it (an
 * instrumented spm-bench), else the write-only model. */
static const char *group_model(const struct bench_row *rows, size_t n, size_t first)
{
	int any = 0, accesses = 0;
	for (size_t i = first; i < n; i++)
		if (same_group(&rows[i].cfg, &rows[first].cfg) && rows[i].res.modeled) {
			any = 1;
			accesses |= rows[i].res.stat[BENCH_STAT_ACCESSES] != 0;
		}
	return !any ? "none (wall clock only)"
	       : accesses ? "execution-driven (the program's loads and stores, caches, reads)"
			  : "write-only (write-backs and fences; the program is not instrumented)";
}

/* print_group -- one table: the rows of rows[first]'s group. */
static void print_group(const struct bench_row *rows, size_t n, size_t first)
{
	const struct bench_cfg *g = &rows[first].cfg;
	const struct bench_row *plain = NULL;
	for (size_t i = first; i < n; i++)
		if (same_group(&rows[i].cfg, g) && rows[i].res.modeled &&
		    strcmp(rows[i].cfg.design, "plain") == 0)
			plain = &rows[i];
	printf("\n%s: %" PRIu64 " B per op, %u core%s, %u thread%s, %" PRIu64
	       " ops per core, profile %s%s%s\n", g->workload, g->tx_size, g->cores,
	       g->cores == 1 ? "" : "s", g->threads, g->threads == 1 ? "" : "s", g->ops,
	       g->profile, g->set && *g->set ? ", " : "", g->set ? g->set : "");
	if (g->work_ns)
		printf("  (each op charged %" PRIu64 " ns of modeled core work)\n", g->work_ns);
	if (g->keys && bench_ds(g->workload) && bench_ds(g->workload)->has_mix) {
		char keys[48];
		ex_keys_name(g->keys, keys, sizeof(keys));
		printf("  keys: %s\n", keys);
	}
	if (bench_dup && bench_takes_dup(g->workload))
		printf("  dup: %u%% of the values repeat one of %u contents\n", bench_dup,
		       EX_DUP_CONTENTS);
	printf("  model: %s\n", group_model(rows, n, first));
	printf("  %-13s %12s %14s %10s %10s %10s\n", "design", "ops/s wall",
	       "modeled ns/op", "norm.time", "writes/op", "norm.wr");
	for (size_t i = first; i < n; i++) {
		const struct bench_row *r = &rows[i];
		if (!same_group(&r->cfg, g))
			continue;
		double ops_s = r->res.wall_ns ? (double)r->res.ops * 1e9 / (double)r->res.wall_ns
					      : 0.0;
		printf("  %-13s %12.0f", r->cfg.design, ops_s);
		if (!r->res.modeled) {
			printf(" %14s %10s %10s %10s\n", "-", "-", "-", "-");
			continue;
		}
		double ns = per_op(r->res.modeled_ns, r->res.ops);
		double wr = per_op(r->res.stat[0], r->res.ops);
		printf(" %14.1f", ns);
		if (plain && plain->res.modeled_ns)
			printf(" %10.3f", (double)r->res.modeled_ns / (double)plain->res.modeled_ns);
		else
			printf(" %10s", "-");
		printf(" %10.2f", wr);
		if (plain && plain->res.stat[0])
			printf(" %10.3f\n", (double)r->res.stat[0] / (double)plain->res.stat[0]);
		else
			printf(" %10s\n", "-");
	}
}

void bench_print_tables(const struct bench_row *rows, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int seen = 0;
		for (size_t k = 0; k < i && !seen; k++)
			seen = same_group(&rows[k].cfg, &rows[i].cfg);
		if (!seen)
			print_group(rows, n, i);
	}
	printf("\nnorm.time: modeled time / plain's; norm.wr: media writes / plain's "
	       "(same workload, cores, size).\n");
#ifdef SPM_BENCH_INSTRUMENTED
	printf("ops/s wall: spm's rows ran instrumented (the core model's own cost is in them);\n"
	       "compare wall clock with libpmemobj using spm-bench-native.\n");
#endif
}

/* ---- CSV ------------------------------------------------------------------- */

/* put_stat -- CSV column of statistic s (empty where nothing is modeled). */
static void put_stat(FILE *f, const struct bench_row *r, unsigned s)
{
	if (r->res.modeled)
		fprintf(f, ",%" PRIu64, r->res.stat[s]);
	else
		fputc(',', f);
}

/* put_mem -- the same for memory statistic s (bench_stats_mem). */
static void put_mem(FILE *f, const struct bench_row *r, unsigned s)
{
	if (r->res.modeled && r->mem.valid)
		fprintf(f, ",%" PRIu64, r->mem.stat[s]);
	else
		fputc(',', f);
}

int bench_write_csv(const char *path, const struct bench_row *rows, size_t n)
{
	FILE *f = strcmp(path, "-") == 0 ? stdout : fopen(path, "w");
	if (!f) {
		perror(path);
		return -1;
	}
	/* a column keys, when they are not uniform (uniform runs keep the
	 * columns they always had), after the core model's statistics; then
	 * the memory's and deduplication's, and last dup (--dup) */
	int keys = 0;
	for (size_t i = 0; i < n; i++)
		keys |= rows[i].cfg.keys != 0;
	fprintf(f, "design,workload,profile,cores,threads,tx_size,ops,modeled_ns,wall_ns");
	for (unsigned s = 0; s < BENCH_STATS_CORE; s++)
		fprintf(f, ",%s", bench_stats[s].column);
	fprintf(f, ",footprint,work_ns,reps,options");
	for (unsigned s = BENCH_STATS_CORE; s < bench_nstats; s++)
		fprintf(f, ",%s", bench_stats[s].column);
	if (keys)
		fputs(",keys", f);
	for (unsigned s = 0; s < bench_nstats_mem; s++)
		fprintf(f, ",%s", bench_stats_mem[s].column);
	fputs(",dup\n", f);
	for (size_t i = 0; i < n; i++) {
		const struct bench_row *r = &rows[i];
		const struct bench_cfg *c = &r->cfg;
		fprintf(f, "%s,%s,%s,%u,%u,%" PRIu64 ",%" PRIu64 ",", c->design, c->workload,
			c->profile, c->cores, c->threads, c->tx_size, r->res.ops);
		if (r->res.modeled)
			fprintf(f, "%" PRIu64, r->res.modeled_ns);
		fprintf(f, ",%" PRIu64, r->res.wall_ns);
		for (unsigned s = 0; s < BENCH_STATS_CORE; s++)
			put_stat(f, r, s);
		char opts[2560];
		if (r->res.modeled)
			bench_options(c, opts, sizeof(opts));
		else /* libpmemobj: how libpmem persists */
			snprintf(opts, sizeof(opts),
				 "PMEM_IS_PMEM_FORCE=%s;PMEM_NO_FLUSH=%s;prefault.at_create=%d",
				 getenv("PMEM_IS_PMEM_FORCE") ? getenv("PMEM_IS_PMEM_FORCE") : "",
				 getenv("PMEM_NO_FLUSH") ? getenv("PMEM_NO_FLUSH") : "", c->prefault);
		/* pmdk has no modeled clock to charge work to */
		fprintf(f, ",%" PRIu64 ",%" PRIu64 ",%u,\"%s\"", c->footprint,
			r->res.modeled ? c->work_ns : 0, r->reps, opts);
		for (unsigned s = BENCH_STATS_CORE; s < bench_nstats; s++)
			put_stat(f, r, s);
		if (keys) {
			char name[48] = ""; /* the array and the queue have no keys */
			if (bench_ds(c->workload) && bench_ds(c->workload)->has_mix)
				ex_keys_name(c->keys, name, sizeof(name));
			fprintf(f, ",%s", name);
		}
		for (unsigned s = 0; s < bench_nstats_mem; s++)
			put_mem(f, r, s);
		if (bench_takes_dup(c->workload)) /* stream and records write no values */
			fprintf(f, ",%u\n", bench_dup);
		else
			fputs(",\n", f);
	}
	if (f == stdout)
		return fflush(f) ? -1 : 0;
	if (fclose(f)) {
		perror(path);
		return -1;
	}
	return 0;
}
