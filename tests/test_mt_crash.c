/* test_mt_crash.c -- kill -9 of a process whose threads commit transactions at once: after recovery each thread's committed transactions are all there, whole, and nothing of the others; the allocator hands out nothing twice; no pad was used twice (SPM_AUDIT).  The unsafe design fails it.  The same with power failures (SPM_POWERFAIL, durability=pmem) struck at a crash point of any thread; durability=none fails that.  SPM_TEST_CHANNELS=N (2..16) runs it all with memory channels (channels=N;timing=off, at create and at every open), on the designs that allow them only (the redo designs are skipped); SPM_TEST_THREADS=N (1..4) sets the threads of a child. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
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
#define NTHREADS 4 /* at most: the root has a slot for each */
#define NREC 4096u  /* records per thread: one line each */
#define LISTMAX 3u  /* live nodes kept in a thread's list */
#define ROUNDS 40   /* kills per design */
#define POWER_ROUNDS 24 /* power failures per design */

/* The threads of a child (SPM_TEST_THREADS, at most NTHREADS), and the
 * options every create and open adds (SPM_TEST_CHANNELS: channels). */
static unsigned nthreads = NTHREADS;
static char open_opts[64];
static unsigned channels = 1;

/* knobs -- SPM_TEST_THREADS and SPM_TEST_CHANNELS, read (bad values: exit 2). */
static void knobs(void)
{
	const char *t = getenv("SPM_TEST_THREADS"), *c = getenv("SPM_TEST_CHANNELS");
	if (t && *t) {
		nthreads = (unsigned)atoi(t);
		if (nthreads < 1 || nthreads > NTHREADS) {
			fprintf(stderr, "SPM_TEST_THREADS=%s: 1..%u\n", t, NTHREADS);
			exit(2);
		}
	}
	if (c && *c) {
		channels = (unsigned)atoi(c);
		if (channels < 1 || channels > 16) {
			fprintf(stderr, "SPM_TEST_CHANNELS=%s: 1..16\n", c);
			exit(2);
		}
		snprintf(open_opts, sizeof(open_opts), "channels=%u;timing=off", channels);
	}
}

/* A thread's slot: one line of the root. */
struct slot {
	uint64_t count;   /* transactions committed */
	uint64_t sum;     /* sum of f(t, i, 0) for i < count */
	spm_off_t recs;   /* NREC records */
	spm_off_t head;   /* newest node */
	uint64_t listlen; /* min(count, LISTMAX) */
	uint64_t pad[3];
};
_Static_assert(sizeof(struct slot) == 64, "a slot is one line");

struct mroot {
	struct slot t[NTHREADS];
};

struct rec {
	uint64_t v[8];
};

struct node {
	uint64_t val, check, size;
	spm_off_t next;
};

/* What the child's threads have committed, seen by the parent. */
struct shared {
	uint64_t commits;
};

/* f -- the value of word j of thread t's record i. */
static uint64_t f(unsigned t, uint64_t i, uint64_t j)
{
	uint64_t z = ((uint64_t)t << 40) + i * 8 + j + 0x9e3779b97f4a7c15ull;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static size_t node_size(uint64_t i)
{
	return 64 + (size_t)(i % 3) * 64;
}

static void paths(const char *design, char *pool, char *audit, size_t n)
{
	const char *dir = getenv("SPM_TEST_DIR");
	if (!dir || !*dir)
		dir = "/tmp";
	snprintf(pool, n, "%s/mtcrash-%ld-%s", dir, (long)getpid(), design);
	snprintf(audit, n, "%s/mtcrash-%ld-%s.audit", dir, (long)getpid(), design);
}

/* ------------------------------------------------------------ workload */

/* one_tx -- thread t's transaction number s->count: its record, sum, list
 * (a node allocated, the oldest beyond LISTMAX freed) and count.  1 when
 * the records are used up, -1 on an error. */
static int one_tx(spm_pool *p, unsigned t, struct slot *s)
{
	uint64_t i = s->count;
	if (i >= NREC)
		return 1;
	struct rec *rec = (struct rec *)spm_ptr(p, s->recs) + i;
	if (spm_tx_begin(p) || spm_tx_add(p, s, sizeof(*s)) || spm_tx_add(p, rec, sizeof(*rec)))
		return -1;
	for (unsigned j = 0; j < 8; j++)
		rec->v[j] = f(t, i, j);
	spm_off_t off = spm_tx_alloc(p, node_size(i));
	if (!off)
		return -1;
	struct node *n = spm_ptr(p, off);
	*n = (struct node){i, f(t, i, 99), node_size(i), s->head};
	s->head = off;
	if (++s->listlen > LISTMAX) {
		struct node *last = spm_ptr(p, s->head);
		for (unsigned k = 1; k < LISTMAX; k++)
			last = spm_ptr(p, last->next);
		if (spm_tx_add(p, &last->next, sizeof(last->next)) || spm_tx_free(p, last->next))
			return -1;
		last->next = 0;
		s->listlen--;
	}
	s->sum += f(t, i, 0);
	s->count = i + 1;
	return spm_tx_commit(p) ? -1 : 0;
}

struct worker {
	spm_pool *pool;
	unsigned t;
	struct shared *sh;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct mroot *r = spm_root(w->pool, sizeof(*r));
	int rc;
	while ((rc = one_tx(w->pool, w->t, &r->t[w->t])) == 0)
		__atomic_fetch_add(&w->sh->commits, 1, __ATOMIC_RELEASE);
	if (rc < 0) {
		fprintf(stderr, "thread %u: %s\n", w->t, spm_errormsg());
		_exit(3);
	}
	return NULL;
}

/* child -- open the pool and run nthreads workers until killed (or done). */
static void child(const char *pool, struct shared *sh)
{
	spm_pool *p;
	if (spm_open(&p, pool, open_opts)) {
		fprintf(stderr, "child: %s\n", spm_errormsg());
		_exit(2);
	}
	pthread_t th[NTHREADS];
	struct worker w[NTHREADS];
	for (unsigned t = 0; t < nthreads; t++) {
		w[t] = (struct worker){p, t, sh};
		if (pthread_create(&th[t], NULL, worker_main, &w[t]))
			_exit(4);
	}
	for (unsigned t = 0; t < nthreads; t++)
		pthread_join(th[t], NULL);
	spm_close(p);
	_exit(0);
}

/* ------------------------------------------------------------ checks */

/* verify_slot -- thread t's data is consistent: records [0, count) right
 * and none beyond, the sum, its list.  NULL or why not. */
static const char *verify_slot(spm_pool *p, unsigned t, const struct slot *s)
{
	static char why[160];
	uint64_t k = s->count;
	if (k > NREC)
		return "count out of range";
	const struct rec *rec = spm_ptr(p, s->recs);
	uint64_t sum = 0;
	for (uint64_t i = 0; i < NREC; i++)
		for (unsigned j = 0; j < 8; j++)
			if (rec[i].v[j] != (i < k ? f(t, i, j) : 0))
				return snprintf(why, sizeof(why), "thread %u record %llu word %u "
						"wrong (count %llu)", t, (unsigned long long)i,
						j, (unsigned long long)k), why;
	for (uint64_t i = 0; i < k; i++)
		sum += f(t, i, 0);
	if (sum != s->sum)
		return "running sum wrong";
	uint64_t want = k < LISTMAX ? k : LISTMAX;
	if (s->listlen != want)
		return "list length wrong";
	spm_off_t off = s->head;
	for (uint64_t n = 0; n < want; n++) {
		const struct node *nd = spm_ptr(p, off);
		if (!nd || nd->val != k - 1 - n || nd->check != f(t, k - 1 - n, 99) ||
		    nd->size != node_size(k - 1 - n))
			return "list node wrong";
		off = nd->next;
	}
	return off ? "list too long" : NULL;
}

static int overlaps(uint64_t a, uint64_t an, uint64_t b, uint64_t bn)
{
	return a < b + bn && b < a + an;
}

/* fresh_overlaps -- a new object overlaps a live one (handed out twice)? */
static const char *fresh_overlaps(spm_pool *p, const struct mroot *r)
{
	const char *bad = NULL;
	if (spm_tx_begin(p))
		return "cannot begin a transaction";
	for (unsigned a = 0; a < 8 && !bad; a++) {
		size_t sz = node_size(a);
		spm_off_t o = spm_tx_alloc(p, sz);
		if (!o) {
			bad = "allocation failed";
			break;
		}
		if (overlaps(o, sz, spm_off(p, r), sizeof(*r)))
			bad = "a new object overlaps the root";
		for (unsigned t = 0; t < NTHREADS && !bad; t++) {
			if (overlaps(o, sz, r->t[t].recs, NREC * sizeof(struct rec)))
				bad = "a new object overlaps a record array";
			for (spm_off_t n = r->t[t].head; n && !bad;) {
				const struct node *nd = spm_ptr(p, n);
				if (overlaps(o, sz, n, nd->size))
					bad = "a new object overlaps a live node";
				n = nd->next;
			}
		}
	}
	spm_tx_abort(p);
	return bad;
}

/* recover_and_check -- open (recovering), check every slot and the
 * allocator; the transactions committed in all; NULL or why not. */
static const char *recover_and_check(const char *pool, uint64_t *total)
{
	spm_pool *p;
	if (spm_open(&p, pool, open_opts))
		return spm_errormsg();
	struct mroot *r = spm_root(p, sizeof(*r));
	const char *bad = r ? NULL : "no root";
	*total = 0;
	for (unsigned t = 0; t < NTHREADS && !bad; t++) {
		bad = verify_slot(p, t, &r->t[t]);
		*total += r->t[t].count;
	}
	if (!bad)
		bad = fresh_overlaps(p, r);
	spm_close(p);
	return bad;
}

/* setup -- a fresh pool: the root and each thread's records. */
static void setup(const char *pool, const char *design)
{
	char opts[128];
	snprintf(opts, sizeof(opts), "design=%s;%s", design, open_opts);
	spm_pool *p = fresh_pool(pool, POOL_SIZE, opts);
	struct mroot *r = spm_root(p, sizeof(*r));
	assert_non_null(r);
	assert_int_equal(spm_tx_begin(p), 0);
	assert_int_equal(spm_tx_add(p, r, sizeof(*r)), 0);
	for (unsigned t = 0; t < NTHREADS; t++) {
		r->t[t].recs = spm_tx_alloc(p, NREC * sizeof(struct rec));
		assert_true(r->t[t].recs != 0);
	}
	assert_int_equal(spm_tx_commit(p), 0);
	assert_int_equal(spm_close(p), 0);
}

/* kill_round -- a child runs the threads; once `more` further commits are
 * seen it is killed (SIGKILL); the commits seen by then.  *done: the child
 * finished first. */
static uint64_t kill_round(const char *pool, struct shared *sh, uint64_t more, int *done)
{
	uint64_t target = __atomic_load_n(&sh->commits, __ATOMIC_ACQUIRE) + more;
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		child(pool, sh);
	int st;
	*done = 0;
	while (__atomic_load_n(&sh->commits, __ATOMIC_ACQUIRE) < target) {
		if (waitpid(pid, &st, WNOHANG) == pid) { /* finished or failed */
			assert_true(WIFEXITED(st));
			assert_int_equal(WEXITSTATUS(st), 0);
			*done = 1;
			return __atomic_load_n(&sh->commits, __ATOMIC_ACQUIRE);
		}
		sched_yield();
	}
	kill(pid, SIGKILL);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	if (WIFEXITED(st)) { /* it finished just before the signal */
		assert_int_equal(WEXITSTATUS(st), 0);
		*done = 1;
	} else {
		assert_true(WIFSIGNALED(st));
	}
	return __atomic_load_n(&sh->commits, __ATOMIC_ACQUIRE);
}

/* power_round -- a child (this program run again, "power-child", so that
 * it reads SPM_CRASH and SPM_POWERFAIL afresh) runs the threads with conf
 * until a crash point of any of them fails the power (SPM_CRASH=random):
 * the commits seen by then.  *done: the child finished first. */
static uint64_t power_round(const char *pool, struct shared *sh, int shm, uint64_t seed,
			    const char *conf, int *done)
{
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char crash[64], power[64], fd[16];
		snprintf(crash, sizeof(crash), "random:%llu:0.0005", (unsigned long long)seed);
		snprintf(power, sizeof(power), "%llu:0.5", (unsigned long long)seed);
		snprintf(fd, sizeof(fd), "%d", shm);
		if (setenv("SPM_CRASH", crash, 1) || setenv("SPM_POWERFAIL", power, 1) ||
		    setenv("SPM_CONF", conf, 1))
			_exit(4);
		execl("/proc/self/exe", "test_mt_crash", "power-child", pool, fd, (char *)NULL);
		_exit(5);
	}
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	*done = WIFEXITED(st);
	if (*done)
		assert_int_equal(WEXITSTATUS(st), 0);
	else
		assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	return __atomic_load_n(&sh->commits, __ATOMIC_ACQUIRE);
}

/* power_child -- the process power_round starts: child() with the commit
 * count in the shared memory it inherited as fd. */
static int power_child(const char *pool, int fd)
{
	struct shared *sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (sh == MAP_FAILED)
		return 6;
	child(pool, sh);
	return 0;
}

/* rounds -- ROUNDS kills of design's threads (power_conf NULL), or
 * POWER_ROUNDS power failures under power_conf, each followed by recovery
 * and the checks; the rounds whose checks failed (the first reason in why). */
static unsigned rounds(const char *design, const char *power_conf, int audit_on,
		       unsigned *reused, unsigned *audited, const char **why)
{
	char pool[2200], audit[2200];
	paths(design, pool, audit, sizeof(pool));
	unlink(audit);
	setup(pool, design);
	if (audit_on)
		setenv("SPM_AUDIT", audit, 1); /* the children's pads and recovery's */
	/* shared with the children, across exec too */
	int shm = memfd_create("test_mt_crash", 0);
	assert_true(shm >= 0);
	assert_int_equal(ftruncate(shm, sizeof(struct shared)), 0);
	struct shared *sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED, shm, 0);
	assert_true(sh != MAP_FAILED);
	sh->commits = 0;
	static char first_why[256];
	unsigned failed = 0, seed = 12345;
	*why = NULL;
	for (unsigned k = 0; k < (power_conf ? POWER_ROUNDS : ROUNDS); k++) {
		seed = seed * 1103515245u + 12345u;
		int done;
		uint64_t seen = power_conf
					? power_round(pool, sh, shm, seed >> 8, power_conf, &done)
					: kill_round(pool, sh, 1 + (seed >> 16) % 400, &done),
			 total = 0;
		const char *bad = recover_and_check(pool, &total);
		if (!bad && total < seen)
			bad = "a committed transaction was lost";
		if (bad) {
			failed++;
			if (!*why) { /* copied: bad may be spm_errormsg(), which setup clears */
				snprintf(first_why, sizeof(first_why), "%s", bad);
				*why = first_why;
			}
			setup(pool, design); /* start the next round from a sound pool */
			sh->commits = 0;
		} else {
			sh->commits = total; /* what the next child starts from */
		}
		if (done)
			break;
	}
	unsetenv("SPM_AUDIT");
	*reused = *audited = 0;
	if (audit_on)
		*reused = audit_reused(audit, audited);
	munmap(sh, sizeof(*sh));
	close(shm);
	remove_pool_files(pool);
	unlink(audit);
	return failed;
}

/* skip_without_channels -- with SPM_TEST_CHANNELS, a design that has one
 * channel (a redo log) is skipped. */
static void skip_without_channels(const char *design)
{
	if (channels > 1 && (!strcmp(design, "srl") || !strcmp(design, "lame") ||
			     !strcmp(design, "clame"))) {
		print_message("%s: one channel only (a redo log): skipped\n", design);
		skip();
	}
}

/* A safe design: every kill is recovered, no pad is reused. */
static void safe_design(void **state)
{
	const char *design = *state, *why;
	skip_without_channels(design);
	unsigned reused, audited;
	int encrypted = strcmp(design, "plain") != 0;
	unsigned failed = rounds(design, NULL, encrypted, &reused, &audited, &why);
	print_message("%s: %u of %u kills failed%s%s, %u reused pads of %u audited\n",
		      design, failed, ROUNDS, why ? ": " : "", why ? why : "", reused, audited);
	assert_int_equal(failed, 0);
	assert_int_equal(reused, 0);
	assert_true(!encrypted || audited > 0); /* the auditor saw the pads */
}

/* The negative control: the unsafe design (a write-back counter cache
 * without counter-atomicity) loses counters at a kill and fails. */
static void unsafe_fails(void **state)
{
	(void)state;
	const char *why;
	unsigned reused, audited;
	unsigned failed = rounds("unsafe", NULL, 0, &reused, &audited, &why);
	print_message("unsafe: %u of %u kills failed (%s)\n", failed, ROUNDS,
		      why ? why : "none");
	assert_true(failed > 0);
}

/* Power failures of persistent memory (durability=pmem) at a crash point of
 * any thread: lines not yet persisted are lost or kept at random
 * (SPM_POWERFAIL), the other threads stopped wherever they were. */
static void power_safe(void **state)
{
	const char *design = *state, *why;
	skip_without_channels(design);
	unsigned reused, audited;
	unsigned failed = rounds(design, "durability=pmem", 1, &reused, &audited, &why);
	print_message("%s: %u of %u power failures failed%s%s, %u reused pads of %u audited\n",
		      design, failed, POWER_ROUNDS, why ? ": " : "", why ? why : "", reused,
		      audited);
	assert_int_equal(failed, 0);
	assert_int_equal(reused, 0);
	assert_true(audited > 0);
}

/* The negative control: with durability=none nothing is persisted, and a
 * power failure loses commits. */
static void power_none_fails(void **state)
{
	(void)state;
	const char *why;
	unsigned reused, audited;
	unsigned failed = rounds("sca", "durability=none", 0, &reused, &audited, &why);
	print_message("sca, durability=none: %u of %u power failures failed (%s)\n", failed,
		      POWER_ROUNDS, why ? why : "none");
	assert_true(failed > 0);
}

int main(int argc, char **argv)
{
	knobs();
	if (argc == 4 && !strcmp(argv[1], "power-child"))
		return power_child(argv[2], atoi(argv[3]));
	if (channels > 1 || nthreads != NTHREADS)
		print_message("%u threads, %u channels (%s)\n", nthreads, channels,
			      open_opts[0] ? open_opts : "the designs' defaults");
	static const char *const designs[] = {"plain", "sca", "fca", "ideal", "supermem",
					      "srl", "lame", "clame"};
	static const char *const power_designs[] = {"sca", "fca", "supermem", "clame"};
	struct CMUnitTest tests[16];
	size_t n = 0;
	for (size_t i = 0; i < sizeof(designs) / sizeof(designs[0]); i++)
		tests[n++] = (struct CMUnitTest)cmocka_unit_test_prestate(safe_design,
									  (void *)designs[i]);
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(unsafe_fails);
	for (size_t i = 0; i < sizeof(power_designs) / sizeof(power_designs[0]); i++)
		tests[n++] = (struct CMUnitTest)cmocka_unit_test_prestate(power_safe,
									  (void *)power_designs[i]);
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(power_none_fails);
	return _cmocka_run_group_tests("test_mt_crash", tests, n, NULL, NULL);
}
