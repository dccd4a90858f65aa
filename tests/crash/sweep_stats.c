/*
 * sweep_stats.c -- the example commands with the core model's statistics
 * shown: `sweep_stats NAME ARGS...` does what `spm-NAME ARGS...` does, built
 * the same way (the same instrumented workload libraries), and at each
 * spm_close (linked with --wrap=spm_close) prints to stderr
 *
 *   sweep-stat llc.writebacks N
 *
 * and the other statistics below, counted since the command's last
 * spm_stat_reset (a run resets them before its first operation).  The
 * crash harness (crash_sweep --stats-bin) runs a sweep's workload with it
 * once per design: a sweep on tiny caches whose workload makes no natural
 * eviction (a dirty line leaving the last-level cache before the program
 * flushes it) tests nothing of the eviction path, and fails.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <spm.h>

#include "ex_main.h"

/* The statistics printed at close: the natural evictions first. */
static const char *const shown[] = {"llc.writebacks", "llc.misses", "l1.misses",
				    "core.stores", "media.writes"};

int __real_spm_close(spm_pool *pool);

/* __wrap_spm_close -- spm_close, the statistics printed first. */
int __wrap_spm_close(spm_pool *pool)
{
	for (size_t i = 0; pool && i < sizeof(shown) / sizeof(shown[0]); i++) {
		uint64_t v;
		if (spm_stat(pool, shown[i], &v) == 0)
			fprintf(stderr, "sweep-stat %s %" PRIu64 "\n", shown[i], v);
	}
	return __real_spm_close(pool);
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		const struct ex_ds *ds;
	} table[] = {{"array", &ex_ds_array},	  {"bptree", &ex_ds_bptree},
		     {"btree", &ex_ds_btree},	  {"hashmap", &ex_ds_hashmap},
		     {"list", &ex_ds_list},	  {"queue", &ex_ds_queue},
		     {"rbtree", &ex_ds_rbtree},	  {"skiplist", &ex_ds_skiplist}};
	for (size_t i = 0; argc > 1 && i < sizeof(table) / sizeof(table[0]); i++)
		if (strcmp(argv[1], table[i].name) == 0)
			return ex_main(table[i].ds, argc - 1, argv + 1);
	fprintf(stderr, "usage: sweep_stats array|bptree|btree|hashmap|list|queue|rbtree|skiplist "
			"create|run|check ...\n");
	return 2;
}
