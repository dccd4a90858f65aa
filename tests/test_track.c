/* test_track.c -- transactions that find their own writes (tx_track=pages):
 * stores without spm_tx_add commit and survive reopen, or a crash anywhere in
 * the commit leaves all or nothing; abort restores; explicit spm_tx_add
 * alongside; a line stored twice; stores across pages; a fault outside any
 * view still kills the process; threads; stores outside transactions; bad
 * option values. */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include <spm.h>

#include "test_files.h"

#define POOL_SIZE (8u << 20)
#define ROOT_SIZE (3 * 4096 + 512)

/* the transactional design families: undo (ideal, fca, sca, the SuperMem
 * designs), redo (lame, srl), integrity (ccnvm), dedup (dewrite), plain */
static const char *const designs[] = {"plain", "ideal", "fca", "sca", "supermem",
				      "lame", "srl", "ccnvm", "dewrite"};
#define NDESIGNS (sizeof(designs) / sizeof(designs[0]))

static void path_of(char *buf, size_t n, const char *tag)
{
	const char *dir = getenv("SPM_TEST_DIR");
	snprintf(buf, n, "%s/track-%ld-%s", dir && *dir ? dir : "/tmp", (long)getpid(), tag);
}

/* remove_all -- the pool's files and the integrity designs' registers */
static void remove_all(const char *path)
{
	char tcb[600];
	snprintf(tcb, sizeof(tcb), "%s.key.tcb", path);
	unlink(tcb);
	remove_pool_files(path);
}

static spm_pool *make(const char *path, const char *design)
{
	char opts[128];
	snprintf(opts, sizeof(opts), "design=%s;tx_track=pages", design);
	return fresh_pool(path, POOL_SIZE, opts);
}

static spm_pool *reopen(const char *path, const char *opts)
{
	spm_pool *p = NULL;
	int rc = spm_open(&p, path, opts);
	if (rc)
		fail_msg("spm_open %s: %d %s", path, rc, spm_errormsg());
	return p;
}

/* fill -- the root's bytes as transaction v leaves them: bytes at a few
 * places, one range across a page boundary */
static void fill(uint8_t *r, unsigned v)
{
	r[0] = (uint8_t)v;
	r[100] = (uint8_t)(v + 1);
	memset(r + 4096 - 10, (int)(v + 2), 20); /* across the first page boundary */
	r[2 * 4096 + 7] = (uint8_t)(v + 3);
	r[ROOT_SIZE - 1] = (uint8_t)(v + 4);
}

static int filled(const uint8_t *r, unsigned v)
{
	uint8_t want[ROOT_SIZE];
	memcpy(want, r, ROOT_SIZE);
	fill(want, v);
	return memcmp(want, r, ROOT_SIZE) == 0;
}

/* a transaction without spm_tx_add commits; the stores survive reopen */
static void test_commit_reopen(void **state)
{
	(void)state;
	for (size_t d = 0; d < NDESIGNS; d++) {
		char path[512];
		path_of(path, sizeof(path), designs[d]);
		spm_pool *p = make(path, designs[d]);
		uint8_t *r = spm_root(p, ROOT_SIZE);
		assert_non_null(r);
		for (unsigned v = 1; v <= 3; v++) {
			assert_int_equal(spm_tx_begin(p), 0);
			fill(r, v);
			r[100] = (uint8_t)(v + 1); /* the same line twice */
			assert_int_equal(spm_tx_commit(p), 0);
		}
		uint64_t c = 0;
		assert_int_equal(spm_stat(p, "tx.committed", &c), 0);
		assert_true(c >= 3);
		assert_int_equal(spm_close(p), 0);
		p = reopen(path, NULL); /* tracked or not: the same pool */
		r = spm_root(p, ROOT_SIZE);
		assert_non_null(r);
		if (!filled(r, 3))
			fail_msg("%s: committed stores lost", designs[d]);
		assert_int_equal(spm_close(p), 0);
		remove_all(path);
	}
}

/* abort restores every page written; explicit spm_tx_add alongside */
static void test_abort(void **state)
{
	(void)state;
	for (size_t d = 0; d < NDESIGNS; d++) {
		char path[512];
		path_of(path, sizeof(path), designs[d]);
		spm_pool *p = make(path, designs[d]);
		uint8_t *r = spm_root(p, ROOT_SIZE);
		assert_int_equal(spm_tx_begin(p), 0);
		fill(r, 5);
		assert_int_equal(spm_tx_commit(p), 0);
		/* tracked stores, an explicit add before and after its page's
		 * first store, an allocation */
		assert_int_equal(spm_tx_begin(p), 0);
		assert_int_equal(spm_tx_add(p, r + 2 * 4096, 64), 0);
		fill(r, 9);
		assert_int_equal(spm_tx_add(p, r, 128), 0);
		r[1] = 77;
		spm_off_t o = spm_tx_alloc(p, 5000);
		assert_true(o != 0);
		memset(spm_ptr(p, o), 0x5a, 5000);
		spm_tx_abort(p);
		assert_true(filled(r, 5));
		assert_int_equal(r[1], 0);
		/* explicit spm_tx_add and tracked stores commit together, once */
		assert_int_equal(spm_tx_begin(p), 0);
		assert_int_equal(spm_tx_add(p, r, 64), 0);
		fill(r, 11);
		assert_int_equal(spm_tx_add(p, r + 4096 - 10, 20), 0);
		assert_int_equal(spm_tx_commit(p), 0);
		assert_int_equal(spm_close(p), 0);
		p = reopen(path, "tx_track=pages");
		r = spm_root(p, ROOT_SIZE);
		if (!filled(r, 11))
			fail_msg("%s: explicit and tracked stores", designs[d]);
		assert_int_equal(spm_close(p), 0);
		remove_all(path);
	}
}

struct crash_arg {
	const char *path, *design;
};

/* commit_child -- in a child: open, one tracked transaction (value 2 over
 * value 1), commit; killed at a crash point by SPM_CRASH */
static int commit_child(const void *a)
{
	const struct crash_arg *c = a;
	spm_pool *p = NULL;
	if (spm_open(&p, c->path, "tx_track=pages"))
		return 2;
	uint8_t *r = spm_root(p, ROOT_SIZE);
	if (!r || spm_tx_begin(p))
		return 3;
	fill(r, 2);
	if (spm_tx_commit(p))
		return 4;
	return spm_close(p) ? 5 : 0;
}

/* run_exec -- commit_child in a new process (SPM_CRASH is read once per
 * process: a fork of this one would keep its reading), with SPM_CRASH=crash;
 * for "count" its crash points into *points.  The wait status. */
static int run_exec(const char *path, const char *crash, long *points)
{
	int fds[2];
	assert_int_equal(pipe(fds), 0);
	fflush(stdout);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(fds[0]);
		dup2(fds[1], 2);
		setenv("SPM_CRASH", crash, 1);
		setenv("TRACK_CHILD", path, 1);
		execl("/proc/self/exe", "test_track", (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	char err[4096];
	return child_wait(pid, fds[0], err, sizeof(err), points);
}

/* a crash at every crash point of a tracked commit: all or nothing */
static void test_crash_commit(void **state)
{
	(void)state;
	static const char *const cd[] = {"sca", "supermem", "lame", "ccnvm", "dewrite",
					 "ideal"};
	for (size_t d = 0; d < sizeof(cd) / sizeof(cd[0]); d++) {
		char path[512];
		path_of(path, sizeof(path), cd[d]);
		spm_pool *p = make(path, cd[d]);
		uint8_t *r = spm_root(p, ROOT_SIZE);
		assert_int_equal(spm_tx_begin(p), 0);
		fill(r, 1);
		assert_int_equal(spm_tx_commit(p), 0);
		assert_int_equal(spm_close(p), 0);
		struct pool_image img = {0};
		pool_save(path, &img);
		/* the integrity designs' registers beside the key */
		char tcb[600];
		snprintf(tcb, sizeof(tcb), "%s.key.tcb", path);
		size_t tcb_len = 0;
		uint8_t *tcb_bytes = access(tcb, F_OK) == 0 ? slurp(tcb, &tcb_len) : NULL;
		long n = -1;
		int st = run_exec(path, "count", &n);
		assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
		assert_true(n > 0);
		unsigned olds = 0, news = 0;
		for (long k = 1; k <= n; k++) {
			pool_restore(path, &img);
			if (tcb_bytes)
				spit(tcb, tcb_bytes, tcb_len);
			char crash[32];
			snprintf(crash, sizeof(crash), "after:%ld", k);
			st = run_exec(path, crash, NULL);
			if (!WIFSIGNALED(st) && !(WIFEXITED(st) && WEXITSTATUS(st) == 0))
				fail_msg("%s: after:%ld: child status %#x", cd[d], k, st);
			p = reopen(path, NULL);
			r = spm_root(p, ROOT_SIZE);
			assert_non_null(r);
			if (filled(r, 1))
				olds++;
			else if (filled(r, 2))
				news++;
			else
				fail_msg("%s: after:%ld: neither before nor after", cd[d], k);
			assert_int_equal(spm_close(p), 0);
		}
		assert_true(olds > 0);
		pool_image_free(&img);
		free(tcb_bytes);
		unlink(tcb);
		remove_all(path);
	}
}

/* fault_child -- a store to a read-only page outside any view, a tracked
 * transaction open: the process must die of SIGSEGV */
static void user_segv(int sig)
{
	(void)sig;
	_exit(42);
}

static int fault_child(const void *a)
{
	const struct crash_arg *c = a;
	spm_pool *p = NULL;
	/* the handler before spm's: the default action, or the program's own
	 * (cmocka's is the test runner's) */
	signal(SIGSEGV, strcmp(c->design, "user") ? SIG_DFL : user_segv);
	if (spm_open(&p, c->path, "tx_track=pages"))
		return 2;
	uint8_t *r = spm_root(p, ROOT_SIZE);
	if (!r || spm_tx_begin(p))
		return 3;
	r[0] = 1; /* tracked: fine */
	volatile uint8_t *ro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ro == MAP_FAILED)
		return 4;
	ro[0] = 1; /* not the pool's: fatal */
	return 0;
}

static void test_foreign_fault(void **state)
{
	(void)state;
	char path[512], err[4096];
	path_of(path, sizeof(path), "fault");
	spm_pool *p = make(path, "sca");
	assert_non_null(spm_root(p, ROOT_SIZE));
	assert_int_equal(spm_close(p), 0);
	struct crash_arg a = {path, "dfl"};
	int st = run_in_child(fault_child, &a, NULL, err, sizeof(err), NULL);
	assert_true(WIFSIGNALED(st));
	assert_int_equal(WTERMSIG(st), SIGSEGV);
	a.design = "user"; /* chained to the program's handler */
	st = run_in_child(fault_child, &a, NULL, err, sizeof(err), NULL);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 42);
	remove_all(path);
}

#define NTHREADS 4
#define ITERS 200

struct tctx {
	spm_pool *p;
	uint64_t *mine; /* a line of the root, 8 threads' lines per page */
	uint64_t *obj;  /* an object of its own, allocated in its first transaction */
	unsigned id;
};

static void *worker(void *arg)
{
	struct tctx *c = arg;
	for (unsigned i = 0; i < ITERS; i++) {
		if (spm_tx_begin(c->p))
			return (void *)1;
		c->mine[0]++;
		c->mine[1] += 2;
		if (i % 7 == 3) { /* an abort now and then */
			spm_tx_abort(c->p);
			continue;
		}
		if (spm_tx_commit(c->p))
			return (void *)2;
	}
	return NULL;
}

/* threads: each stores to its own line of shared pages in tracked
 * transactions (one at a time); every commit counts, every abort not */
static void test_threads(void **state)
{
	(void)state;
	static const char *const td[] = {"sca", "lame"};
	for (size_t d = 0; d < 2; d++) {
		char path[512];
		path_of(path, sizeof(path), td[d]);
		spm_pool *p = make(path, td[d]);
		uint64_t *r = spm_root(p, ROOT_SIZE);
		assert_non_null(r);
		pthread_t th[NTHREADS];
		struct tctx c[NTHREADS];
		for (unsigned i = 0; i < NTHREADS; i++) {
			c[i] = (struct tctx){p, r + 8 * i, NULL, i};
			assert_int_equal(pthread_create(&th[i], NULL, worker, &c[i]), 0);
		}
		for (unsigned i = 0; i < NTHREADS; i++) {
			void *ret;
			assert_int_equal(pthread_join(th[i], &ret), 0);
			assert_null(ret);
		}
		assert_int_equal(spm_close(p), 0);
		p = reopen(path, NULL);
		r = spm_root(p, ROOT_SIZE);
		unsigned commits = ITERS - (ITERS + 3) / 7;
		for (unsigned i = 0; i < NTHREADS; i++) {
			assert_int_equal(r[8 * i], commits);
			assert_int_equal(r[8 * i + 1], 2 * commits);
		}
		assert_int_equal(spm_close(p), 0);
		remove_all(path);
	}
}

/* stores outside a transaction are not tracked: durable with spm_persist
 * only; a flush inside the transaction of a line it changed is logged */
static void test_outside(void **state)
{
	(void)state;
	char path[512];
	path_of(path, sizeof(path), "outside");
	spm_pool *p = make(path, "sca");
	uint8_t *r = spm_root(p, ROOT_SIZE);
	r[64] = 1;		   /* never persisted */
	r[128] = 2;
	spm_persist(p, r + 128, 1); /* persisted */
	assert_int_equal(spm_tx_begin(p), 0);
	r[4096] = 3;
	spm_persist(p, r + 4096, 1); /* in the transaction: logged first */
	spm_tx_abort(p);
	assert_int_equal(r[4096], 0);
	assert_int_equal(spm_close(p), 0);
	p = reopen(path, "tx_track=pages");
	r = spm_root(p, ROOT_SIZE);
	assert_int_equal(r[64], 0);
	assert_int_equal(r[128], 2);
	assert_int_equal(r[4096], 0);
	assert_int_equal(spm_close(p), 0);
	remove_all(path);
}

/* bad values of tx_track are refused, naming the option */
static void test_options(void **state)
{
	(void)state;
	char path[512];
	path_of(path, sizeof(path), "opts");
	static const char *const bad[] = {"tx_track=page", "tx_track=", "tx_track=on",
					  "tx_track=1"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		spm_pool *p = NULL;
		remove_all(path);
		assert_int_equal(spm_create(&p, path, POOL_SIZE, bad[i]), SPM_E_OPTION);
		assert_non_null(strstr(spm_errormsg(), "tx_track"));
	}
	spm_pool *p = fresh_pool(path, POOL_SIZE, "tx_track=off");
	assert_int_equal(spm_close(p), 0);
	p = NULL;
	assert_int_equal(spm_open(&p, path, "tx_track=pagess"), SPM_E_OPTION);
	assert_non_null(strstr(spm_errormsg(), "tx_track"));
	setenv("SPM_CONF", "tx_track=yes", 1);
	assert_int_equal(spm_open(&p, path, NULL), SPM_E_OPTION);
	assert_non_null(strstr(spm_errormsg(), "SPM_CONF"));
	setenv("SPM_CONF", "tx_track=pages", 1);
	assert_int_equal(spm_open(&p, path, NULL), 0);
	assert_int_equal(spm_close(p), 0);
	setenv("SPM_CONF", "", 1);
	remove_all(path);
}

int main(void)
{
	const char *child = getenv("TRACK_CHILD");
	if (child) {
		struct crash_arg a = {child, NULL};
		return commit_child(&a);
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_options),
		cmocka_unit_test(test_commit_reopen),
		cmocka_unit_test(test_abort),
		cmocka_unit_test(test_outside),
		cmocka_unit_test(test_threads),
		cmocka_unit_test(test_foreign_fault),
		cmocka_unit_test(test_crash_commit),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
