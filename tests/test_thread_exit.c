/*
 * test_thread_exit.c -- a thread that exits with a transaction open: the
 * transaction is aborted at its exit and its lane freed, whether the thread
 * returns or calls pthread_exit, one at a time or many at once, in several
 * pools, and when the pool was closed before the thread exits.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <spm.h>

#include "test_files.h"

#define LANES 16       /* the pool's lanes (more threads than that must exit) */
#define EXITS 40       /* threads exiting inside a transaction, one at a time */
#define SLOTS 64       /* root lines: one per concurrent thread */

struct troot {
	struct {
		uint64_t v;
		uint8_t pad[56];
	} line[SLOTS];
};

/* pool_path -- a pool path of this process in the test directory. */
static void pool_path(char *buf, size_t n, const char *tag)
{
	const char *dir = getenv("SPM_TEST_DIR");
	snprintf(buf, n, "%s/texit-%ld-%s", dir && *dir ? dir : "/tmp", (long)getpid(), tag);
}

/* make_pool -- a new pool with a zeroed root; its root in *r. */
static spm_pool *make_pool(const char *path, struct troot **r)
{
	spm_pool *p = NULL;
	remove_pool_files(path);
	assert_int_equal(spm_create(&p, path, 8u << 20, "design=sca"), 0);
	*r = spm_root(p, sizeof(**r));
	assert_non_null(*r);
	return p;
}

/* stat_of -- statistic name of p. */
static uint64_t stat_of(spm_pool *p, const char *name)
{
	uint64_t v = UINT64_MAX;
	assert_int_equal(spm_stat(p, name, &v), 0);
	return v;
}

struct job {
	spm_pool *pool[3]; /* NULL: not used */
	struct troot *root[3];
	unsigned slot;
	int use_exit;       /* pthread_exit rather than return */
	pthread_barrier_t *in_tx, *go; /* NULL: no wait */
	int rc;             /* 0 if every call in the thread worked */
};

/* exit_in_tx -- begin a transaction in each pool of the job, snapshot and change
 * its slot's line, then exit without commit or abort. */
static void *exit_in_tx(void *arg)
{
	struct job *j = arg;
	for (int k = 0; k < 3; k++) {
		if (!j->pool[k])
			continue;
		uint64_t *v = &j->root[k]->line[j->slot].v;
		if (spm_tx_begin(j->pool[k]) || spm_tx_add(j->pool[k], v, sizeof(*v)))
			j->rc = -1;
		*v = 1000 + j->slot;
		spm_persist(j->pool[k], v, sizeof(*v)); /* durable until rolled back */
	}
	if (j->in_tx)
		pthread_barrier_wait(j->in_tx);
	if (j->go)
		pthread_barrier_wait(j->go);
	if (j->use_exit)
		pthread_exit(NULL);
	return NULL;
}

/* run -- one thread of job j, joined. */
static void run(struct job *j)
{
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, exit_in_tx, j), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(j->rc, 0);
}

/* all_zero -- every root line of r holds 0 (every change rolled back). */
static void all_zero(const struct troot *r)
{
	for (unsigned i = 0; i < SLOTS; i++)
		assert_int_equal(r->line[i].v, 0);
}

/* reopen_clean -- close p, open it again: nothing to roll back, root zero. */
static void reopen_clean(spm_pool *p, const char *path)
{
	assert_int_equal(spm_close(p), 0);
	assert_int_equal(spm_open(&p, path, NULL), 0);
	assert_int_equal(stat_of(p, "recovery.rolled_back"), 0);
	all_zero(spm_root(p, sizeof(struct troot)));
	assert_int_equal(spm_close(p), 0);
	remove_pool_files(path);
}

/*
 * exits_free_lanes -- 40 threads, one after the other, each exits inside a
 * transaction (half by return, half by pthread_exit).  Each is aborted:
 * its change undone, its lane free, its line free to others.  Before, the
 * 17th thread's spm_tx_begin and every later one failed with SPM_E_BUSY.
 */
static void exits_free_lanes(void **state)
{
	(void)state;
	char path[4096];
	pool_path(path, sizeof(path), "seq");
	struct troot *r;
	spm_pool *p = make_pool(path, &r);
	for (unsigned i = 0; i < EXITS; i++) {
		struct job j = {.pool = {p}, .root = {r}, .slot = i % 2, .use_exit = (int)(i & 1)};
		run(&j);
		assert_int_equal(r->line[i % 2].v, 0);
	}
	assert_int_equal(stat_of(p, "tx.aborted"), EXITS);
	/* a lane is free */
	assert_int_equal(spm_tx_begin(p), 0);
	/* the dead threads' line is no longer claimed */
	assert_int_equal(spm_tx_add(p, &r->line[0].v, sizeof(uint64_t)), 0);
	r->line[0].v = 5;
	spm_tx_abort(p);
	all_zero(r);
	reopen_clean(p, path);
}

/*
 * exits_at_once -- twice, 16 threads (every lane) in transactions exit
 * together; then each lane is free again.
 */
static void exits_at_once(void **state)
{
	(void)state;
	char path[4096];
	pool_path(path, sizeof(path), "par");
	struct troot *r;
	spm_pool *p = make_pool(path, &r);
	pthread_barrier_t in_tx, go;
	for (int round = 0; round < 2; round++) {
		struct job j[LANES];
		pthread_t t[LANES];
		assert_int_equal(pthread_barrier_init(&in_tx, NULL, LANES + 1), 0);
		assert_int_equal(pthread_barrier_init(&go, NULL, LANES + 1), 0);
		for (unsigned i = 0; i < LANES; i++) {
			j[i] = (struct job){.pool = {p}, .root = {r}, .slot = i,
					    .use_exit = round, .in_tx = &in_tx, .go = &go};
			assert_int_equal(pthread_create(&t[i], NULL, exit_in_tx, &j[i]), 0);
		}
		pthread_barrier_wait(&in_tx);
		/* every lane is taken now */
		assert_int_equal(spm_tx_begin(p), SPM_E_BUSY);
		pthread_barrier_wait(&go);
		for (unsigned i = 0; i < LANES; i++) {
			assert_int_equal(pthread_join(t[i], NULL), 0);
			assert_int_equal(j[i].rc, 0);
		}
		pthread_barrier_destroy(&in_tx);
		pthread_barrier_destroy(&go);
	}
	all_zero(r);
	assert_int_equal(stat_of(p, "tx.aborted"), 2 * LANES);
	assert_int_equal(spm_tx_begin(p), 0);
	assert_int_equal(spm_tx_commit(p), 0);
	reopen_clean(p, path);
}

/*
 * many_pools -- a thread with transactions open in two of three pools
 * exits: both are aborted, the third pool is untouched.
 */
static void many_pools(void **state)
{
	(void)state;
	char path[3][4096];
	spm_pool *p[3];
	struct troot *r[3];
	for (int k = 0; k < 3; k++) {
		char tag[8];
		snprintf(tag, sizeof(tag), "m%d", k);
		pool_path(path[k], sizeof(path[k]), tag);
		p[k] = make_pool(path[k], &r[k]);
	}
	for (unsigned i = 0; i < LANES + 1; i++) {
		struct job j = {.pool = {p[0], NULL, p[2]}, .root = {r[0], NULL, r[2]},
				.slot = 3};
		run(&j);
	}
	assert_int_equal(stat_of(p[0], "tx.aborted"), LANES + 1);
	assert_int_equal(stat_of(p[1], "tx.aborted"), 0);
	assert_int_equal(stat_of(p[2], "tx.aborted"), LANES + 1);
	for (int k = 0; k < 3; k++) {
		all_zero(r[k]);
		assert_int_equal(spm_tx_begin(p[k]), 0);
		assert_int_equal(spm_tx_commit(p[k]), 0);
		reopen_clean(p[k], path[k]);
	}
}

/*
 * closed_before_exit -- the pool is closed (aborting the thread's
 * transaction) while the thread is still alive; its exit then finds no
 * pool to abort in.  A pool opened at the same time is not touched.
 */
static void closed_before_exit(void **state)
{
	(void)state;
	char path[4096], other[4096];
	pool_path(path, sizeof(path), "closed");
	pool_path(other, sizeof(other), "other");
	struct troot *r, *r2;
	spm_pool *p = make_pool(path, &r);
	spm_pool *q = make_pool(other, &r2);
	pthread_barrier_t in_tx, go;
	assert_int_equal(pthread_barrier_init(&in_tx, NULL, 2), 0);
	assert_int_equal(pthread_barrier_init(&go, NULL, 2), 0);
	struct job j = {.pool = {p}, .root = {r}, .slot = 7, .in_tx = &in_tx, .go = &go};
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, exit_in_tx, &j), 0);
	pthread_barrier_wait(&in_tx);
	assert_int_equal(spm_close(p), 0); /* aborts the thread's transaction */
	pthread_barrier_wait(&go);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(j.rc, 0);
	assert_int_equal(stat_of(q, "tx.aborted"), 0);
	assert_int_equal(spm_open(&p, path, NULL), 0);
	assert_int_equal(stat_of(p, "recovery.rolled_back"), 0);
	all_zero(spm_root(p, sizeof(struct troot)));
	reopen_clean(p, path);
	reopen_clean(q, other);
	pthread_barrier_destroy(&in_tx);
	pthread_barrier_destroy(&go);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(exits_free_lanes),
		cmocka_unit_test(exits_at_once),
		cmocka_unit_test(many_pools),
		cmocka_unit_test(closed_before_exit),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
