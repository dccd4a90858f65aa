/* bench_run.c -- one measurement: C instances of a workload in one pool, cores interleaved by modeled clock. */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

const struct bench_stat bench_stats[] = {
	{"writes", "media.writes"},
	{"writes_data", "media.writes.data"},
	{"writes_counter", "media.writes.counter"},
	{"writes_log", "media.writes.log"},
	{"writes_meta", "media.writes.meta"},
	{"reads", "media.reads"},
	{"ctr_hits", "ctr_cache.hits"},
	{"ctr_misses", "ctr_cache.misses"},
	{"coalesced", "wpq.coalesced"},
	{"bytes_written", "media.bytes_written"},
	{"ca_writes", "ctrl.ca_writes"},
	{"ctr_writebacks", "ctr_cache.writebacks"},
	{"ctr_evictions", "ctr_cache.evictions"},
	{"wpq_stalls", "wpq.stalls"},
	{"tx_committed", "tx.committed"},
	{"tx_aborted", "tx.aborted"},
	/* appended after the options column (BENCH_STATS_CORE on) */
	{"accesses", "core.accesses"},
	{"llc_misses", "llc.misses"},
	{"mem_reads", "mem.reads"},
	{"loads", "core.loads"},
	{"stores", "core.stores"},
	{"l1_misses", "l1.misses"},
	{"l2_misses", "l2.misses"},
	{"llc_writebacks", "llc.writebacks"},
	{"mem_read_ns", "mem.read_ns"},
	{"aes_ops", "aes.ops"},
	{"aes_queue_ns", "aes.queue_ns"},
	{"redo_commits", "redo.commits"},
	{"redo_commit_ns", "redo.commit_ns"},
	{"redo_records", "redo.records"},
	{"redo_entries", "redo.entries"},
	{"redo_enc_ns", "redo.enc_ns"},
	{"redo_inplace", "redo.inplace_lines"},
	{"redo_log_reads", "redo.log_reads"},
	{"redo_ctrbuf_writes", "redo.ctrbuf_writes"},
	{"mac_computed", "mac.computed"},
	{"mac_verified", "mac.verified"},
	{"bmt_node_writes", "bmt.node_writes"},
	{"bmt_drains", "bmt.drains"},
	{"bmt_drain_lines", "bmt.drain_lines"},
};
const unsigned bench_nstats = sizeof(bench_stats) / sizeof(bench_stats[0]);
_Static_assert(sizeof(bench_stats) / sizeof(bench_stats[0]) <= BENCH_MAX_STATS,
	       "room for the statistics");

/* after the keys column (bench.h) */
const struct bench_stat bench_stats_mem[] = {
	{"mem_writes", "mem.writes"},
	{"mem_write_ns", "mem.write_ns"},
	{"dedup_writes", "dedup.writes"},
	{"dedup_cancelled", "dedup.writes_cancelled"},
	{"dedup_crc_hits", "dedup.crc_hits"},
	{"dedup_compare_fail", "dedup.compare_fail"},
	{"dedup_predict_right", "dedup.predict_right"},
	{"dedup_predict_wrong", "dedup.predict_wrong"},
	{"dedup_shared_lines", "dedup.shared_lines"},
	{"dedup_overhead_ppm", "dedup.overhead_ppm"},
};
const unsigned bench_nstats_mem = sizeof(bench_stats_mem) / sizeof(bench_stats_mem[0]);
_Static_assert(sizeof(bench_stats_mem) / sizeof(bench_stats_mem[0]) <= BENCH_MAX_MEM,
	       "room for the memory's statistics");

uint64_t bench_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t round64(uint64_t v)
{
	return (v + 63) / 64 * 64;
}

/* array_elements -- the array's length: --elements, else the footprint, else 1024. */
static uint64_t array_elements(const struct bench_cfg *cfg)
{
	if (cfg->elements)
		return cfg->elements;
	if (cfg->footprint)
		return cfg->footprint / round64(cfg->tx_size) > 2
			       ? cfg->footprint / round64(cfg->tx_size) : 2;
	return 1024;
}

/* item_bytes -- heap bytes one stored item takes, generously (value, node share). */
static uint64_t item_bytes(const struct bench_cfg *cfg)
{
	return round64(cfg->tx_size) + 192;
}

/* prefill_ops -- the inserts that fill a map instance to about the footprint
 * (the array's footprint is its length; the queue's operations touch its ends);
 * stream's warm-up pass, which leaves the LLC full of its dirty lines;
 * records' pass that fills its table. */
static uint64_t prefill_ops(const struct bench_cfg *cfg)
{
	const struct ex_ds *ds = bench_ds(cfg->workload);
	if (ds == &bench_ds_stream)
		return bench_stream_warmup(cfg->footprint);
	if (ds == &bench_ds_records)
		return bench_records_warmup(cfg->footprint);
	if (!cfg->footprint || !ds || !ds->has_mix)
		return 0;
	return cfg->footprint / item_bytes(cfg);
}

/* run_param -- the runs' param: the array's or stream's elements, records' slots. */
static uint64_t run_param(const struct bench_cfg *cfg)
{
	if (strcmp(cfg->workload, "stream") == 0)
		return bench_stream_elements(cfg->footprint);
	if (strcmp(cfg->workload, "records") == 0)
		return bench_records_slots(cfg->footprint);
	return array_elements(cfg);
}

size_t bench_pool_size(const struct bench_cfg *cfg)
{
	uint64_t per_core;
	if (strcmp(cfg->workload, "array") == 0)
		per_core = array_elements(cfg) * round64(cfg->tx_size) * 2 + (1u << 20);
	else if (strcmp(cfg->workload, "stream") == 0) /* two arrays */
		per_core = bench_stream_elements(cfg->footprint) * 2 * sizeof(uint64_t) * 9 / 8 +
			   (1u << 20);
	else if (strcmp(cfg->workload, "records") == 0) /* the table, aligned */
		per_core = (bench_records_slots(cfg->footprint) + 1) * BENCH_RECORD * 9 / 8 +
			   (1u << 20);
	else /* every op may insert; a queue frees as much as it adds, on average */
		per_core = (cfg->ops + prefill_ops(cfg)) * item_bytes(cfg) * 5 / 4 +
			   (256u << 10);
	uint64_t cores = cfg->cores > cfg->threads ? cfg->cores : cfg->threads;
	uint64_t size = (16u << 20) + cores * per_core;
	return (size_t)((size + (1u << 20) - 1) & ~(uint64_t)((1u << 20) - 1));
}

/* ---- driving the cores ---------------------------------------------------- */

struct core {
	struct ex_ctx ctx;
	uint64_t first, done, n;
	char clock_stat[32]; /* time.core<i>_ns */
};

struct driver {
	spm_pool *pool;
	struct core *core;
	unsigned ncores, threads, tid;
	uint64_t work_ns;
	int rc;
	char why[160];
};

/* next_core -- this thread's core with the smallest clock that has ops left. */
static int next_core(struct driver *d, const uint64_t *clk)
{
	int best = -1;
	for (unsigned i = d->tid; i < d->ncores; i += d->threads)
		if (d->core[i].done < d->core[i].n && (best < 0 || clk[i] < clk[best]))
			best = (int)i;
	return best;
}

/* drive -- run this thread's cores to the end, always advancing the one
 * whose modeled clock is smallest (ties: the lowest core). */
static void *drive(void *arg)
{
	struct driver *d = arg;
	uint64_t clk[BENCH_MAX_CORES] = {0};
	int mine = (int)((d->ncores - d->tid + d->threads - 1) / d->threads);
	int i, cur = -1;
	while ((i = next_core(d, clk)) >= 0) {
		struct core *c = &d->core[i];
		if (i != cur && spm_core_set(d->pool, (unsigned)i) == 0)
			cur = i;
		spm_model_work(d->pool, d->work_ns); /* the op's own work, then its memory traffic */
		int rc = c->ctx.ds->op(&c->ctx, c->first + c->done);
		if (rc) {
			d->rc = rc;
			snprintf(d->why, sizeof(d->why), "core %d op %" PRIu64 ": %s", i,
				 c->first + c->done, *spm_errormsg() ? spm_errormsg()
								     : spm_strerror(rc));
			return NULL;
		}
		c->done++;
		if (mine > 1)
			spm_stat(d->pool, c->clock_stat, &clk[i]);
	}
	return NULL;
}

/* run_phase -- the measured phase: threads drive their share of the cores. */
static int run_phase(spm_pool *pool, struct core *core, unsigned ncores,
		     unsigned threads, uint64_t work_ns, uint64_t *wall_ns)
{
	struct driver d[BENCH_MAX_CORES];
	pthread_t tid[BENCH_MAX_CORES];
	for (unsigned t = 0; t < threads; t++)
		d[t] = (struct driver){pool, core, ncores, threads, t, work_ns, 0, ""};
	uint64_t t0 = bench_now_ns();
	unsigned started = 1;
	for (; started < threads; started++)
		if (pthread_create(&tid[started], NULL, drive, &d[started]))
			break;
	drive(&d[0]);
	for (unsigned t = 1; t < started; t++)
		pthread_join(tid[t], NULL);
	*wall_ns = bench_now_ns() - t0;
	if (started < threads) {
		fprintf(stderr, "spm-bench: cannot start %u threads\n", threads);
		return -1;
	}
	for (unsigned t = 0; t < threads; t++)
		if (d[t].rc) {
			fprintf(stderr, "spm-bench: %s\n", d[t].why);
			return -1;
		}
	return 0;
}

/* ---- one measurement ------------------------------------------------------ */

static int spm_fail(const char *what, int rc)
{
	fprintf(stderr, "spm-bench: %s: %s\n", what,
		*spm_errormsg() ? spm_errormsg() : spm_strerror(rc));
	return -1;
}

/* remove_pool -- the pool's files (and the integrity designs' registers). */
static void remove_pool(const char *path)
{
	char p[4200];
	unlink(path);
	snprintf(p, sizeof(p), "%s.meta", path);
	unlink(p);
	snprintf(p, sizeof(p), "%s.key", path);
	unlink(p);
	snprintf(p, sizeof(p), "%s.key.tcb", path);
	unlink(p);
}

/* pool_path -- a fresh name for a pool in cfg->dir. */
static void pool_path(const struct bench_cfg *cfg, char *buf, size_t len)
{
	static unsigned seq;
	snprintf(buf, len, "%s/spm-bench.%ld.%u", cfg->dir, (long)getpid(), seq++);
	remove_pool(buf);
}

unsigned bench_dup;

/* pass_dup -- --dup into a run of ds, if it writes values (the prefill's
 * too).  Not modeled: setup's own accesses are charged to the pool before
 * its statistics are reset (EX_NOT_MODELED). */
EX_NOT_MODELED static void pass_dup(struct ex_run *r, const struct ex_ds *ds)
{
	if (ds != &bench_ds_stream && ds != &bench_ds_records) /* bench_takes_dup */
		r->dup = bench_dup;
}

/* read_mem -- the memory's and deduplication's statistics (not modeled). */
EX_NOT_MODELED static void read_mem(spm_pool *pool, struct bench_mem *mem)
{
	for (unsigned s = 0; s < bench_nstats_mem; s++)
		spm_stat(pool, bench_stats_mem[s].name, &mem->stat[s]);
	mem->valid = 1;
}

/* setup -- the instances, their runs (a prefill first, unmeasured). */
static int setup(spm_pool *pool, const struct bench_cfg *cfg, const struct ex_ds *ds,
		 struct core *core, unsigned ncores)
{
	uint64_t pre = prefill_ops(cfg);
	for (unsigned i = 0; i < ncores; i++) {
		struct core *c = &core[i];
		struct ex_run r = {.seed = cfg->seed + i, .value_size = cfg->tx_size,
				   .mix = cfg->mix, .param = run_param(cfg)};
		pass_dup(&r, ds);
		if (cfg->keys && ds->has_mix) { /* the measured run's keys (not the prefill's) */
			r.mix |= EX_MIX_ZIPF;
			r.keys = cfg->keys;
		}
		int rc = ex_instance_new(pool, ds, &c->ctx);
		if (rc)
			return spm_fail("creating an instance", rc);
		snprintf(c->clock_stat, sizeof(c->clock_stat), "time.core%u_ns", i);
		if (pre) {
			struct ex_run p = r;
			p.seed = ~r.seed;
			p.n_ops = pre;
			p.mix = EX_MIX_INSERT;
			p.keys = 0;
			if ((rc = ex_instance_begin_run(&c->ctx, &p, &c->first)))
				return spm_fail("starting the prefill", rc);
			for (uint64_t j = 0; j < pre; j++)
				if ((rc = ds->op(&c->ctx, c->first + j)))
					return spm_fail("prefill", rc);
			/* ops that count themselves did; stream's are counted here */
			if ((rc = ex_instance_end_run(&c->ctx, c->first + pre)))
				return spm_fail("ending the prefill", rc);
		}
		r.n_ops = cfg->ops;
		if ((rc = ex_instance_begin_run(&c->ctx, &r, &c->first)))
			return spm_fail("starting the run", rc);
		c->n = cfg->ops;
		c->done = 0;
	}
	return 0;
}

/* finish -- count trailing lookups, as spm-<name> run does (stream: persist its
 * arrays first, as a program that ends); stats read before. */
static int finish(struct core *core, unsigned ncores)
{
	int bad = 0;
	for (unsigned i = 0; i < ncores; i++) {
		if (core[i].ctx.head) {
			if (core[i].ctx.ds == &bench_ds_stream)
				bench_stream_end(&core[i].ctx);
			int rc = ex_instance_end_run(&core[i].ctx, core[i].first + core[i].done);
			if (rc && !bad)
				bad = spm_fail("ending the run", rc);
		}
		ex_instance_free(&core[i].ctx);
	}
	return bad;
}

void bench_options(const struct bench_cfg *cfg, char *buf, size_t len)
{
	unsigned cores = cfg->cores > cfg->threads ? cfg->cores : cfg->threads;
	snprintf(buf, len, "design=%s;profile=%s;durability=none;prefault=%d;cores=%u%s%s",
		 cfg->design, cfg->profile, cfg->prefault, cores ? cores : 1,
		 cfg->set && *cfg->set ? ";" : "", cfg->set ? cfg->set : "");
}

int bench_run_spm(const struct bench_cfg *cfg, struct bench_result *out, struct bench_mem *mem)
{
	const struct ex_ds *ds = bench_ds(cfg->workload);
	unsigned threads = cfg->threads ? cfg->threads : 1;
	unsigned ncores = cfg->cores > threads ? cfg->cores : threads;
	char path[4096], opts[2048];
	if (!ds) {
		fprintf(stderr, "spm-bench: unknown workload %s\n", cfg->workload);
		return -1;
	}
	if (ncores > BENCH_MAX_CORES) {
		fprintf(stderr, "spm-bench: at most %u cores\n", BENCH_MAX_CORES);
		return -1;
	}
	pool_path(cfg, path, sizeof(path));
	bench_options(cfg, opts, sizeof(opts));
	spm_pool *pool;
	int rc = spm_create(&pool, path, bench_pool_size(cfg), opts);
	if (rc) {
		spm_fail("create", rc);
		remove_pool(path);
		return -1;
	}
	struct core *core = calloc(ncores, sizeof(*core));
	int bad = !core || setup(pool, cfg, ds, core, ncores);
	memset(out, 0, sizeof(*out));
	if (!bad) {
		spm_stat_reset(pool);
		bad = run_phase(pool, core, ncores, threads, cfg->work_ns, &out->wall_ns);
	}
	if (!bad) {
		out->modeled = 1;
		out->ops = (uint64_t)ncores * cfg->ops;
		spm_stat(pool, "time.modeled_ns", &out->modeled_ns);
		for (unsigned s = 0; s < bench_nstats; s++)
			spm_stat(pool, bench_stats[s].name, &out->stat[s]);
		read_mem(pool, mem);
	}
	if (core)
		bad |= finish(core, ncores);
	free(core);
	if ((rc = spm_close(pool)) && !bad)
		bad = spm_fail("close", rc);
	remove_pool(path);
	return bad ? -1 : 0;
}
