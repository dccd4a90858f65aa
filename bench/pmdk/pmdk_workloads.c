/* pmdk_workloads.c -- pmdk_run: create the pool, build the empty structure, time the ops,
 * optionally reopen and check (see pmdk_workloads.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "pmdk_internal.h"
#include "pmdk_workloads.h"

static const struct pmdk_wl *const table[] = {
	&pmdk_array_wl, &pmdk_queue_wl, &pmdk_hashmap_wl, &pmdk_btree_wl, &pmdk_rbtree_wl,
};
static const char *const names[] = {"array", "queue", "hashmap", "btree", "rbtree", NULL};
_Static_assert(sizeof(names) / sizeof(names[0]) == sizeof(table) / sizeof(table[0]) + 1,
	       "a name per workload");

const char *const *pmdk_workloads(void)
{
	return names;
}

static const struct pmdk_wl *find_wl(const char *name)
{
	for (size_t i = 0; name && i < sizeof(table) / sizeof(table[0]); i++)
		if (strcmp(table[i]->name, name) == 0)
			return table[i];
	return NULL;
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* layout -- the pool's layout name: one per workload. */
static void layout(const struct pmdk_wl *wl, char *buf, size_t len)
{
	snprintf(buf, len, "spm-pmdk-%s", wl->name);
}

/* in_tx -- body(c, j) as one transaction; 0, or -1 (pmemobj_errormsg says why). */
static int in_tx(struct pmdk_ctx *c, pmdk_body *body, uint64_t j)
{
	volatile int rc = 0; /* set after the longjmp of an abort */
	TX_BEGIN(c->pop) {
		body(c, j);
	} TX_ONABORT {
		rc = -1;
	} TX_END
	return rc;
}

/* attach -- the root object of an open pool into c. */
static int attach(struct pmdk_ctx *c, const struct pmdk_wl *wl)
{
	PMEMoid root = pmemobj_root(c->pop, wl->root_size);
	if (OID_IS_NULL(root)) {
		fprintf(stderr, "pmdk: root object: %s\n", pmemobj_errormsg());
		return -1;
	}
	c->root = pmemobj_direct(root);
	c->root_size = wl->root_size;
	c->uuid_lo = root.pool_uuid_lo;
	return 0;
}

/* create -- a fresh pool at path holding the empty structure. */
static int create(struct pmdk_ctx *c, const struct pmdk_wl *wl, const char *path)
{
	char name[64];
	layout(wl, name, sizeof(name));
	c->pop = pmemobj_create(path, name, c->pool_size, 0600);
	if (!c->pop) {
		fprintf(stderr, "pmdk: create %s (%zu bytes): %s\n", path, c->pool_size,
			pmemobj_errormsg());
		return -1;
	}
	int rc = attach(c, wl);
	if (rc == 0 && wl->init && (rc = in_tx(c, wl->init, 0)))
		fprintf(stderr, "pmdk: %s: building the empty structure: transaction aborted: %s\n",
			wl->name, pmemobj_errormsg());
	if (rc) {
		pmemobj_close(c->pop);
		c->pop = NULL;
	}
	return rc;
}

/* reopen -- close the pool and open it again (the check reads what was persisted). */
static int reopen(struct pmdk_ctx *c, const struct pmdk_wl *wl, const char *path)
{
	char name[64];
	layout(wl, name, sizeof(name));
	pmemobj_close(c->pop);
	c->pop = pmemobj_open(path, name);
	if (!c->pop) {
		fprintf(stderr, "pmdk: open %s: %s\n", path, pmemobj_errormsg());
		return -1;
	}
	return attach(c, wl);
}

/* run_ops -- ops 0..c->ops-1, timed. */
static int run_ops(struct pmdk_ctx *c, const struct pmdk_wl *wl, struct pmdk_result *out)
{
	uint64_t t0 = now_ns();
	for (uint64_t j = 0; j < c->ops; j++) {
		if (in_tx(c, wl->op, j)) {
			fprintf(stderr, "pmdk: %s op %" PRIu64 ": transaction aborted: %s\n", wl->name,
				j, pmemobj_errormsg());
			return -1;
		}
	}
	out->wall_ns = now_ns() - t0;
	out->ops = c->ops;
	out->items = wl->items(c);
	return 0;
}

/* check -- reopen, then the root's op count and the structure's own check. */
static int check(struct pmdk_ctx *c, const struct pmdk_wl *wl, const char *path,
		 struct pmdk_result *out)
{
	if (reopen(c, wl, path))
		return -1;
	uint64_t done = *(const uint64_t *)c->root, items = 0;
	if (done != c->ops)
		pmdk_fail(c, "op count: the root says %" PRIu64 " ops, %" PRIu64 " were done",
			  done, c->ops);
	else if (wl->check(c, &items) == 0) {
		out->items = items;
		return 0;
	}
	fprintf(stderr, "pmdk: %s check failed: %s\n", wl->name, c->why);
	return -1;
}

static FILE *announce_to; /* pmdk_announce */

void pmdk_announce(FILE *f)
{
	announce_to = f;
}

static int run(const char *workload, const char *path, size_t pool_size, uint64_t ops,
	       size_t value_size, uint64_t seed, int do_check, struct pmdk_result *out)
{
	const struct pmdk_wl *wl = find_wl(workload);
	if (!wl || !path || !out || value_size < PMDK_VALUE_MIN || value_size > PMDK_VALUE_MAX) {
		fprintf(stderr, "pmdk: bad arguments (workload %s, value size %zu: %u..%u)\n",
			workload ? workload : "(null)", value_size, PMDK_VALUE_MIN, PMDK_VALUE_MAX);
		return -1;
	}
	struct pmdk_ctx c = {.pool_size = pool_size, .seed = seed, .value_size = value_size,
			     .ops = ops, .buf = malloc(PMDK_VALUE_MAX)};
	*out = (struct pmdk_result){0};
	int rc = -1;
	if (!c.buf)
		fprintf(stderr, "pmdk: out of memory\n");
	else if (create(&c, wl, path) == 0) {
		if (announce_to) {
			fprintf(announce_to, "pmdk %s: created %s\n", wl->name, path);
			fflush(announce_to);
		}
		rc = run_ops(&c, wl, out);
		if (rc == 0 && do_check)
			rc = check(&c, wl, path, out);
		if (c.pop)
			pmemobj_close(c.pop);
	}
	free(c.buf);
	return rc;
}

int pmdk_prefault(int on)
{
	return pmemobj_ctl_set(NULL, "prefault.at_create", &on);
}

int pmdk_run(const char *workload, const char *path, size_t pool_size, uint64_t ops,
	     size_t value_size, uint64_t seed, struct pmdk_result *out)
{
	return run(workload, path, pool_size, ops, value_size, seed, 0, out);
}

int pmdk_run_check(const char *workload, const char *path, size_t pool_size, uint64_t ops,
		   size_t value_size, uint64_t seed, struct pmdk_result *out)
{
	return run(workload, path, pool_size, ops, value_size, seed, 1, out);
}

int pmdk_verify(const char *workload, const char *path, size_t value_size, uint64_t seed,
		struct pmdk_result *out)
{
	const struct pmdk_wl *wl = find_wl(workload);
	if (!wl || !path || !out || value_size < PMDK_VALUE_MIN || value_size > PMDK_VALUE_MAX) {
		fprintf(stderr, "pmdk: bad arguments (workload %s, value size %zu: %u..%u)\n",
			workload ? workload : "(null)", value_size, PMDK_VALUE_MIN, PMDK_VALUE_MAX);
		return -1;
	}
	char name[64];
	layout(wl, name, sizeof(name));
	struct stat st;
	struct pmdk_ctx c = {.seed = seed, .value_size = value_size, .buf = malloc(PMDK_VALUE_MAX)};
	*out = (struct pmdk_result){0};
	int rc = -1;
	if (!c.buf)
		fprintf(stderr, "pmdk: out of memory\n");
	else if (stat(path, &st) != 0)
		fprintf(stderr, "pmdk: %s: %s\n", path, strerror(errno));
	else if ((c.pool_size = (size_t)st.st_size, !(c.pop = pmemobj_open(path, name))))
		fprintf(stderr, "pmdk: open %s: %s\n", path, pmemobj_errormsg());
	else if (attach(&c, wl) == 0) {
		c.ops = *(const uint64_t *)c.root;
		uint64_t items = 0;
		if (wl->check(&c, &items) == 0) {
			out->ops = c.ops;
			out->items = items;
			rc = 0;
		} else {
			fprintf(stderr, "pmdk: %s check failed: %s\n", wl->name, c.why);
		}
	}
	if (c.pop)
		pmemobj_close(c.pop);
	free(c.buf);
	return rc;
}
