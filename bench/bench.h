/* bench.h -- spm-bench's parts: one measurement, its result, the workloads, the output. */
#ifndef SPM_BENCH_H
#define SPM_BENCH_H 1

#include <stddef.h>
#include <stdint.h>

#include "ex_main.h"

#define BENCH_MAX_CORES 64u

/* One measurement: a workload on a design. */
struct bench_cfg {
	const char *design;   /* an spm design, or "pmdk" */
	const char *workload; /* array queue hashmap btree rbtree skiplist bptree stream
			       * records */
	const char *profile;
	const char *set;      /* extra spm options "k=v;k=v" ("" if none) */
	const char *dir;      /* where pools go */
	unsigned cores;       /* modeled cores, one instance each */
	unsigned threads;     /* real threads, sharing out the cores */
	uint64_t ops;         /* operations per core */
	uint64_t tx_size;     /* value bytes per operation */
	uint64_t seed;        /* core i uses seed + i */
	uint64_t footprint;   /* bytes of data per core before the measured phase
			       * (stream: its two arrays) */
	uint64_t elements;    /* array elements (0: from footprint, else 1024) */
	unsigned mix;         /* enum ex_mix for the map workloads */
	uint64_t keys;        /* their key distribution (ex_keys.h; 0: uniform) */
	uint64_t work_ns;     /* modeled core work before each op (spm_model_work) */
	int prefault;         /* pools' pages mapped at create (spm and libpmemobj) */
};

/*
 * --dup PCT: the percent of the values the example workloads write that
 * repeat a content (ex_main.h, "Values"; not stream or records), one for
 * the whole sweep.  Not a field of struct bench_cfg, which spm-bench copies
 * field by field in instrumented code between two measurements, work that
 * is charged to the next pool (EX_NOT_MODELED in ex_main.h): it is read
 * there by functions that are not modeled only.
 */
extern unsigned bench_dup;

/* The statistics a measurement records: CSV column, spm_stat name. */
struct bench_stat {
	const char *column, *name;
};
extern const struct bench_stat bench_stats[];
extern const unsigned bench_nstats;
#define BENCH_MAX_STATS 48u
/* bench_stats from this one on are the core model's: CSV columns after the
 * options column (the columns before keep their order) */
#define BENCH_STATS_CORE 16u
#define BENCH_STAT_ACCESSES 16u
#define BENCH_STAT_LLC_MISSES 17u
/*
 * The memory's and line deduplication's statistics: CSV columns after the
 * keys column, if there is one (so every column before keeps its place),
 * and before the last, dup.  Kept apart from struct bench_result, and read,
 * reduced and kept by functions that are not instrumented (EX_NOT_MODELED):
 * what spm-bench does between two measurements is charged to the next
 * pool, and results grown by them would move the integrity designs'
 * modeled times.
 */
extern const struct bench_stat bench_stats_mem[];
extern const unsigned bench_nstats_mem;
#define BENCH_MAX_MEM 16u
struct bench_mem {
	int valid; /* read from a measurement that succeeded */
	uint64_t stat[BENCH_MAX_MEM];
};

/* What a measurement gives (modeled 0 for pmdk: wall time only). */
struct bench_result {
	int modeled;
	uint64_t ops;        /* all cores */
	uint64_t modeled_ns; /* time.modeled_ns of the measured phase */
	uint64_t wall_ns;    /* wall clock of the measured phase */
	uint64_t items;      /* pmdk: items at the end */
	uint64_t stat[BENCH_MAX_STATS];
};

/* bench_ds -- the callback table of example workload name, or NULL. */
const struct ex_ds *bench_ds(const char *name);

/*
 * The workload stream (bench_stream.c): plain loads and stores over two arrays,
 * no transactions, write-backs by LLC eviction only.  Its elements per array
 * for a footprint, the ops of its warm-up (one whole pass), and the persist
 * of its arrays when a run ends (outside the measured phase).
 */
extern const struct ex_ds bench_ds_stream;
uint64_t bench_stream_elements(uint64_t footprint);
uint64_t bench_stream_warmup(uint64_t footprint);
void bench_stream_end(struct ex_ctx *c);

/*
 * The workload records (bench_records.c): a table of fixed-size records
 * written in transactions, whose duplicate lines come from zeroed, copied
 * and repeated records.  Its slots for a footprint (1024 for 0), the ops of
 * its warm-up (one pass over the table; none for footprint 0), and its
 * record size.
 */
extern const struct ex_ds bench_ds_records;
uint64_t bench_records_slots(uint64_t footprint);
uint64_t bench_records_warmup(uint64_t footprint);
#define BENCH_RECORD 256u

/* bench_takes_dup -- does workload name write values (--dup applies)? */
int bench_takes_dup(const char *name);

/* bench_run_spm / bench_run_pmdk -- one measurement; 0 or -1 (message on
 * stderr).  bench_run_spm also sets *mem (pmdk has none). */
int bench_run_spm(const struct bench_cfg *cfg, struct bench_result *out, struct bench_mem *mem);
int bench_run_pmdk(const struct bench_cfg *cfg, struct bench_result *out);
int bench_have_pmdk(void);
/* bench_pmdk_has -- does the design pmdk have workload name? */
int bench_pmdk_has(const char *name);

/*
 * bench_options -- the spm_create options of cfg: design, profile,
 * durability=none (plain stores into the pool files, spm's default on an
 * ordinary file, whatever libpmem is told; see pmem_env in spm_bench.c),
 * prefault, then the --set pairs, which win.
 */
void bench_options(const struct bench_cfg *cfg, char *buf, size_t len);

/* bench_pool_size -- the pool bytes a measurement needs. */
size_t bench_pool_size(const struct bench_cfg *cfg);

/* A finished measurement: its configuration and the median of its repetitions. */
struct bench_row {
	struct bench_cfg cfg;
	struct bench_result res;
	unsigned reps;
	struct bench_mem mem;
};

/* bench_median -- res[0..n) reduced field by field to its median, into *out. */
void bench_median(const struct bench_result *res, unsigned n, struct bench_result *out);
/* bench_mem_median -- the same for the valid ones of mem[0..n) (not modeled). */
void bench_mem_median(const struct bench_mem *mem, unsigned n, struct bench_mem *out);

/* bench_print_tables -- the tables, one per workload, normalized to plain. */
void bench_print_tables(const struct bench_row *rows, size_t n);

/* bench_write_csv -- the CSV file; 0 or -1 (message on stderr). */
int bench_write_csv(const char *path, const struct bench_row *rows, size_t n);

/* bench_now_ns -- CLOCK_MONOTONIC in nanoseconds. */
uint64_t bench_now_ns(void);

#endif
