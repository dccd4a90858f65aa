/* pmdk_workloads.h -- the five benchmark workloads on libpmemobj (unencrypted baseline). */
#ifndef PMDK_WORKLOADS_H
#define PMDK_WORKLOADS_H 1

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

struct pmdk_result { uint64_t ops; uint64_t wall_ns; uint64_t items; };

/* workload: "array" | "queue" | "hashmap" | "btree" | "rbtree".  Creates a fresh pool file at
 * path (pool_size bytes; the caller removes it afterwards), runs `ops` operations with
 * `value_size`-byte payloads from `seed` (each op one transaction), times the operations only
 * (not create/close) with CLOCK_MONOTONIC, fills *out. 0 on success, -1 with a message on stderr. */
int pmdk_run(const char *workload, const char *path, size_t pool_size, uint64_t ops,
             size_t value_size, uint64_t seed, struct pmdk_result *out);

/* pmdk_run_check -- pmdk_run, then close and reopen the pool and walk the structure: its
 * invariants, every payload intact, its content equal to a replay of the ops, and its item
 * count (out->items: the items found).  0 on success, -1 with the broken invariant on stderr. */
int pmdk_run_check(const char *workload, const char *path, size_t pool_size, uint64_t ops,
                   size_t value_size, uint64_t seed, struct pmdk_result *out);

/* pmdk_verify -- open the existing pool at path (libpmemobj recovers it), then its root's
 * op count k and the structure's check against a replay of ops 0..k-1 (the state a crash
 * leaves); out->ops is k, out->items the items found.  0, or -1 with the reason on stderr. */
int pmdk_verify(const char *workload, const char *path, size_t value_size, uint64_t seed,
                struct pmdk_result *out);

/* pmdk_announce -- after this, each run prints "pmdk WORKLOAD: created PATH" to f, flushed,
 * once its pool holds the empty structure and before its first op (NULL: no more). */
void pmdk_announce(FILE *f);

/* pmdk_prefault -- libpmemobj's prefault.at_create for the pools created after
 * (every page mapped at create, as spm's prefault=1); 0 or -1. */
int pmdk_prefault(int on);

/* pmdk_workloads -- the names, NULL-terminated. */
const char *const *pmdk_workloads(void);

#endif
