/* bench_ds.c -- the benchmark workloads by name: the examples' workload tables, stream and records. */
#include <string.h>

#include "bench.h"

/* bench_ds -- the table of workload name, or NULL. */
const struct ex_ds *bench_ds(const char *name)
{
	static const struct {
		const char *name;
		const struct ex_ds *ds;
	} table[] = {
		{"array", &ex_ds_array},     {"queue", &ex_ds_queue},
		{"hashmap", &ex_ds_hashmap}, {"btree", &ex_ds_btree},
		{"rbtree", &ex_ds_rbtree},   {"skiplist", &ex_ds_skiplist},
		{"bptree", &ex_ds_bptree},   {"stream", &bench_ds_stream},
		{"records", &bench_ds_records},
	};
	for (unsigned i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (strcmp(table[i].name, name) == 0)
			return table[i].ds;
	return NULL;
}

int bench_takes_dup(const char *name)
{
	const struct ex_ds *ds = bench_ds(name);
	return ds && ds != &bench_ds_stream && ds != &bench_ds_records;
}
