/* bench_pmdk.c -- the design "pmdk": the same workloads on libpmemobj (bench/pmdk), wall time only. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

#ifdef SPM_BENCH_HAVE_PMDK
#include "pmdk_workloads.h"

struct pmdk_job {
	const struct bench_cfg *cfg;
	char path[4096];
	uint64_t seed;
	struct pmdk_result res;
	int rc;
};

static void *pmdk_job_run(void *arg)
{
	struct pmdk_job *j = arg;
	/* libpmemobj keeps more per object than spm: twice the room */
	size_t size = 2 * bench_pool_size(j->cfg);
	j->rc = pmdk_run(j->cfg->workload, j->path, size, j->cfg->ops, j->cfg->tx_size,
			 j->seed, &j->res);
	unlink(j->path);
	return NULL;
}

int bench_have_pmdk(void)
{
	return 1;
}

int bench_pmdk_has(const char *name)
{
	for (const char *const *w = pmdk_workloads(); *w; w++)
		if (strcmp(*w, name) == 0)
			return 1;
	return 0;
}

/*
 * bench_run_pmdk -- one pool per thread, each running cfg->ops operations
 * (modeled cores do not apply: libpmemobj runs on the real machine).
 */
int bench_run_pmdk(const struct bench_cfg *cfg, struct bench_result *out)
{
	static unsigned seq;
	unsigned threads = cfg->threads ? cfg->threads : 1;
	struct pmdk_job job[BENCH_MAX_CORES];
	pthread_t tid[BENCH_MAX_CORES];
	if (threads > BENCH_MAX_CORES)
		return -1;
	if (pmdk_prefault(cfg->prefault)) {
		fprintf(stderr, "spm-bench: libpmemobj refused prefault.at_create=%d\n",
			cfg->prefault);
		return -1;
	}
	for (unsigned t = 0; t < threads; t++) {
		job[t] = (struct pmdk_job){.cfg = cfg, .seed = cfg->seed + t};
		snprintf(job[t].path, sizeof(job[t].path), "%s/spm-bench-pmdk.%ld.%u.%u",
			 cfg->dir, (long)getpid(), seq, t);
		unlink(job[t].path);
	}
	seq++;
	unsigned started = 1;
	for (; started < threads; started++)
		if (pthread_create(&tid[started], NULL, pmdk_job_run, &job[started]))
			break;
	pmdk_job_run(&job[0]);
	for (unsigned t = 1; t < started; t++)
		pthread_join(tid[t], NULL);
	memset(out, 0, sizeof(*out));
	for (unsigned t = 0; t < threads; t++) {
		if (t >= started || job[t].rc) {
			fprintf(stderr, "spm-bench: pmdk %s failed\n", cfg->workload);
			return -1;
		}
		out->ops += job[t].res.ops;
		out->items += job[t].res.items;
		if (job[t].res.wall_ns > out->wall_ns)
			out->wall_ns = job[t].res.wall_ns;
	}
	return 0;
}

#else

int bench_have_pmdk(void)
{
	return 0;
}

int bench_pmdk_has(const char *name)
{
	(void)name;
	return 0;
}

int bench_run_pmdk(const struct bench_cfg *cfg, struct bench_result *out)
{
	(void)cfg;
	(void)out;
	fprintf(stderr, "spm-bench: built without bench/pmdk (libpmemobj workloads)\n");
	return -1;
}

#endif
