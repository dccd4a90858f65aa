/* test_crash.c -- real crashes (kill -9, SPM_CRASH crash points) lose no committed transaction and leave consistent data on ideal, fca, sca (and colocated*); the unsafe baseline really fails. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include <spm.h>

#define POOL_SIZE (4u << 20)
#define NREC 16384u  /* records: one line each, 1 MiB */
#define LISTMAX 4u   /* live nodes kept in the root's list */
#define KILL_ROUNDS 8
#define RANDOM_SEEDS 40
#define AFTER_MAX 160
#define SWEEP_MAX_TX 40

/* The root: one line. */
struct croot {
	uint64_t count;   /* transactions committed */
	uint64_t sum;     /* sum of f(i, 0) for i < count */
	spm_off_t recs;   /* NREC records */
	spm_off_t head;   /* newest node */
	uint64_t listlen; /* min(count, LISTMAX) */
	spm_off_t pat;    /* the negative control's line */
	uint64_t pad[2];
};
_Static_assert(sizeof(struct croot) == 64, "root is one line");

struct rec {
	uint64_t v[8];
};

struct node {
	uint64_t val;
	spm_off_t next;
	uint64_t check;
	uint64_t size;
};

static char self_exe[4096];

static uint64_t f(uint64_t i, uint64_t j)
{
	uint64_t z = i * 8 + j + 0x9e3779b97f4a7c15ull;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static size_t node_size(uint64_t i)
{
	return 64 + (size_t)(i % 3) * 64;
}

static void pool_path(char *buf, size_t n, const char *tag)
{
	const char *dir = getenv("SPM_TEST_DIR");
	if (!dir || !*dir)
		dir = "/tmp";
	snprintf(buf, n, "%s/crash-%ld-%s", dir, (long)getpid(), tag);
}

static void remove_pool(const char *path)
{
	char buf[4200];
	unlink(path);
	snprintf(buf, sizeof(buf), "%s.meta", path);
	unlink(buf);
	snprintf(buf, sizeof(buf), "%s.key", path);
	unlink(buf);
}

/* ------------------------------------------------------------ workload */

/* one_tx -- transaction number root->count: record, sum, list, counter. */
static int one_tx(spm_pool *p, struct croot *r)
{
	uint64_t i = r->count;
	if (i >= NREC)
		return 1;
	struct rec *rec = (struct rec *)spm_ptr(p, r->recs) + i;
	if (spm_tx_begin(p) || spm_tx_add(p, r, sizeof(*r)) || spm_tx_add(p, rec, sizeof(*rec)))
		return -1;
	for (unsigned j = 0; j < 8; j++)
		rec->v[j] = f(i, j);
	spm_off_t off = spm_tx_alloc(p, node_size(i));
	if (!off)
		return -1;
	struct node *n = spm_ptr(p, off);
	n->val = i;
	n->next = r->head;
	n->check = f(i, 99);
	n->size = node_size(i);
	r->head = off;
	r->listlen++;
	if (r->listlen > LISTMAX) {
		struct node *last = spm_ptr(p, r->head);
		for (unsigned k = 1; k < LISTMAX; k++)
			last = spm_ptr(p, last->next);
		if (spm_tx_add(p, &last->next, sizeof(last->next)) ||
		    spm_tx_free(p, last->next))
			return -1;
		last->next = 0;
		r->listlen--;
	}
	r->sum += f(i, 0);
	r->count = i + 1;
	return spm_tx_commit(p) ? -1 : 0;
}

/*
 * verify -- the data is consistent: count k, records [0, k) right and nothing
 * beyond, the sum, the list of the last min(k, LISTMAX) nodes.  NULL or why not.
 */
static const char *verify(spm_pool *p, uint64_t *k_out)
{
	static char why[256];
	struct croot *r = spm_root(p, sizeof(*r));
	if (!r)
		return "no root";
	uint64_t k = r->count;
	*k_out = k;
	if (k > NREC)
		return snprintf(why, sizeof(why), "count %llu out of range",
				(unsigned long long)k), why;
	const struct rec *rec = spm_ptr(p, r->recs);
	if (!rec)
		return "record array lost";
	uint64_t sum = 0;
	for (uint64_t i = 0; i < NREC; i++)
		for (unsigned j = 0; j < 8; j++)
			if (rec[i].v[j] != (i < k ? f(i, j) : 0))
				return snprintf(why, sizeof(why),
						"record %llu word %u wrong (count %llu)",
						(unsigned long long)i, j,
						(unsigned long long)k), why;
	for (uint64_t i = 0; i < k; i++)
		sum += f(i, 0);
	if (sum != r->sum)
		return "running sum wrong";
	uint64_t want = k < LISTMAX ? k : LISTMAX;
	if (r->listlen != want)
		return snprintf(why, sizeof(why), "list length %llu, want %llu",
				(unsigned long long)r->listlen, (unsigned long long)want), why;
	spm_off_t off = r->head;
	for (uint64_t n = 0; n < want; n++) {
		const struct node *nd = spm_ptr(p, off);
		if (!nd || nd->val != k - 1 - n || nd->check != f(k - 1 - n, 99) ||
		    nd->size != node_size(k - 1 - n))
			return snprintf(why, sizeof(why), "list node %llu wrong",
					(unsigned long long)n), why;
		off = nd->next;
	}
	if (off != 0)
		return "list too long";
	return NULL;
}

/* overlaps -- [a, a+an) and [b, b+bn) intersect. */
static int overlaps(uint64_t a, uint64_t an, uint64_t b, uint64_t bn)
{
	return a < b + bn && b < a + an;
}

/* check_allocator -- new objects overlap none of the live ones (nothing handed out twice). */
static const char *check_allocator(spm_pool *p)
{
	struct croot *r = spm_root(p, sizeof(*r));
	const char *bad = NULL;
	if (!r || spm_tx_begin(p) != 0)
		return "cannot begin a transaction";
	for (unsigned t = 0; t < 8 && !bad; t++) {
		size_t sz = 64 + 64 * (t % 3);
		spm_off_t o = spm_tx_alloc(p, sz);
		if (!o) {
			bad = "allocation failed";
			break;
		}
		if (overlaps(o, sz, spm_off(p, r), sizeof(*r)) ||
		    overlaps(o, sz, r->recs, NREC * sizeof(struct rec)) ||
		    overlaps(o, sz, r->pat, 64))
			bad = "a new object overlaps the root, records or control line";
		for (spm_off_t n = r->head; n && !bad;) {
			const struct node *nd = spm_ptr(p, n);
			if (!nd)
				bad = "list broken";
			else if (overlaps(o, sz, n, nd->size))
				bad = "a new object overlaps a live node";
			else
				n = nd->next;
		}
	}
	spm_tx_abort(p);
	return bad;
}

/* setup_pool -- a fresh pool with the root, records and the control line. */
static void setup_pool(const char *path, const char *design, int ca_pattern)
{
	char opts[64];
	snprintf(opts, sizeof(opts), "design=%s", design);
	remove_pool(path);
	spm_pool *p = NULL;
	int rc = spm_create(&p, path, POOL_SIZE, opts);
	if (rc)
		fail_msg("spm_create %s: %d %s", design, rc, spm_errormsg());
	struct croot *r = spm_root(p, sizeof(*r));
	assert_non_null(r);
	assert_int_equal(spm_tx_begin(p), 0);
	assert_int_equal(spm_tx_add(p, r, sizeof(*r)), 0);
	r->recs = spm_tx_alloc(p, NREC * sizeof(struct rec));
	r->pat = spm_tx_alloc(p, 64);
	assert_true(r->recs != 0 && r->pat != 0);
	assert_int_equal(spm_tx_commit(p), 0);
	if (ca_pattern)
		assert_int_equal(spm_counter_atomic(p, spm_ptr(p, r->pat), 64), 0);
	assert_int_equal(spm_close(p), 0);
}

/* ------------------------------------------------------------ the child */

static void put_u64(int fd, uint64_t v)
{
	if (write(fd, &v, sizeof(v)) != (ssize_t)sizeof(v))
		_exit(12);
}

/*
 * child_main -- --child tx PATH FD MAX_TX | --child pattern PATH FD VARIANT.
 * tx: verify the pool as found, then run transactions, writing the count to FD
 * after each commit.  pattern: persist the control line, report, wait to die.
 */
static int child_main(int argc, char **argv)
{
	if (argc != 6)
		return 20;
	const char *mode = argv[2], *path = argv[3];
	int fd = atoi(argv[4]);
	spm_pool *p = NULL;
	if (spm_open(&p, path, NULL) != 0) {
		fprintf(stderr, "child: spm_open: %s\n", spm_errormsg());
		return 10;
	}
	struct croot *r = spm_root(p, sizeof(*r));
	if (!r)
		return 11;
	if (strcmp(mode, "pattern") == 0) {
		uint8_t *line = spm_ptr(p, r->pat);
		for (unsigned i = 0; i < 64; i++)
			line[i] = (uint8_t)(0xC0 + i);
		spm_persist(p, line, 64);
		if (strcmp(argv[5], "ccwb") == 0) {
			spm_counter_cache_writeback(p, line, 64);
			spm_drain(p);
		}
		put_u64(fd, 1);
		for (;;)
			pause(); /* killed by the parent */
	}
	uint64_t k;
	const char *why = verify(p, &k);
	if (why) {
		fprintf(stderr, "child: inconsistent at open: %s\n", why);
		return 3;
	}
	put_u64(fd, k); /* what this child found */
	uint64_t max_tx = strtoull(argv[5], NULL, 10);
	for (uint64_t t = 0; t < max_tx; t++) {
		int rc = one_tx(p, r);
		if (rc > 0)
			break;
		if (rc < 0) {
			fprintf(stderr, "child: transaction failed: %s\n", spm_errormsg());
			return 4;
		}
		put_u64(fd, r->count);
	}
	return spm_close(p) ? 5 : 0;
}

/* ------------------------------------------------------------ the parent */

struct child {
	pid_t pid;
	int fd;
};

/* spawn -- run this binary as a child with SPM_CRASH = crash (NULL: unset). */
static struct child spawn(const char *mode, const char *path, const char *arg,
			  const char *crash)
{
	int pfd[2];
	assert_int_equal(pipe(pfd), 0);
	/* a small pipe keeps the child at most a few hundred transactions ahead */
	fcntl(pfd[1], F_SETPIPE_SZ, 4096);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(pfd[0]);
		if (crash)
			setenv("SPM_CRASH", crash, 1);
		else
			unsetenv("SPM_CRASH");
		char fdbuf[16];
		snprintf(fdbuf, sizeof(fdbuf), "%d", pfd[1]);
		char *const args[] = {self_exe, "--child", (char *)mode, (char *)path,
				      fdbuf, (char *)arg, NULL};
		execv(self_exe, args);
		_exit(127);
	}
	close(pfd[1]);
	return (struct child){pid, pfd[0]};
}

/* next_value -- the next count from the child; 0 at EOF. */
static int next_value(struct child *c, uint64_t *v)
{
	uint8_t buf[8];
	size_t got = 0;
	while (got < sizeof(buf)) {
		ssize_t n = read(c->fd, buf + got, sizeof(buf) - got);
		if (n < 0 && errno == EINTR)
			continue;
		assert_true(n >= 0);
		if (n == 0) {
			assert_int_equal(got, 0); /* never half a value */
			return 0;
		}
		got += (size_t)n;
	}
	memcpy(v, buf, sizeof(*v));
	return 1;
}

/* reap -- read to EOF (max value into *max), wait; the wait status. */
static int reap(struct child *c, uint64_t *max)
{
	uint64_t v;
	while (next_value(c, &v))
		if (v > *max)
			*max = v;
	close(c->fd);
	int status;
	assert_int_equal(waitpid(c->pid, &status, 0), c->pid);
	return status;
}

static int killed(int status)
{
	return WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
}

/*
 * check_pool -- open (recovering), verify, check the allocator, close.
 * Committed work kept: reported <= k <= reported + 1 (the last transaction
 * may have committed without being reported).  NULL or why not.
 */
static const char *check_pool(const char *path, uint64_t reported, uint64_t *k)
{
	static char why[512];
	spm_pool *p = NULL;
	int rc = spm_open(&p, path, NULL);
	if (rc)
		return snprintf(why, sizeof(why), "spm_open: %d %s", rc, spm_errormsg()), why;
	const char *bad = verify(p, k);
	if (!bad && (*k < reported || *k > reported + 1)) {
		snprintf(why, sizeof(why), "count %llu, child reported %llu",
			 (unsigned long long)*k, (unsigned long long)reported);
		bad = why;
	}
	if (!bad)
		bad = check_allocator(p);
	assert_int_equal(spm_close(p), 0);
	return bad;
}

/* kill_rounds -- SIGKILL a child in the middle of its transactions, repeatedly. */
static void kill_rounds(void **state)
{
	const char *design = *state;
	char path[4096], arg[32];
	pool_path(path, sizeof(path), design);
	setup_pool(path, design, 0);
	snprintf(arg, sizeof(arg), "%u", NREC);
	uint64_t reported = 0, k = 0;
	for (int round = 0; round < KILL_ROUNDS; round++) {
		struct child c = spawn("tx", path, arg, NULL);
		uint64_t target = reported + 20 + (uint64_t)round * 7, v = 0;
		while (v < target)
			if (!next_value(&c, &v))
				fail_msg("%s round %d: child ended before %llu commits", design,
					 round, (unsigned long long)target);
		assert_int_equal(kill(c.pid, SIGKILL), 0);
		reported = v;
		int status = reap(&c, &reported);
		if (!killed(status))
			fail_msg("%s round %d: child not killed (status %#x)", design, round,
				 status);
		const char *why = check_pool(path, reported, &k);
		if (why)
			fail_msg("%s kill round %d: %s", design, round, why);
		reported = k;
	}
	print_message("%s: %d kills, %llu transactions kept\n", design, KILL_ROUNDS,
		      (unsigned long long)k);
	remove_pool(path);
}

/*
 * sweep -- one child per SPM_CRASH value.  Checked pools are verified after
 * every second run (so half of the children recover a crashed pool with the
 * crash points armed) and at the end.  Returns the number of failed checks;
 * with fresh != 0 every run starts from a new pool.
 */
static unsigned sweep(const char *design, int fresh, unsigned *runs, unsigned *crashed)
{
	char path[4096], crash[64], arg[16];
	pool_path(path, sizeof(path), design);
	snprintf(arg, sizeof(arg), "%u", SWEEP_MAX_TX);
	unsigned failures = 0, n = 0;
	uint64_t reported = 0, k = 0;
	*crashed = 0;
	if (!fresh)
		setup_pool(path, design, 0);
	for (unsigned i = 0; i < RANDOM_SEEDS + AFTER_MAX; i++, n++) {
		if (i < RANDOM_SEEDS)
			snprintf(crash, sizeof(crash), "random:%u:0.01", i + 1);
		else
			snprintf(crash, sizeof(crash), "after:%u", i - RANDOM_SEEDS + 1);
		if (fresh) {
			setup_pool(path, design, 0);
			reported = 0;
		}
		struct child c = spawn("tx", path, arg, crash);
		int status = reap(&c, &reported);
		int died = killed(status);
		*crashed += (unsigned)died;
		const char *why = NULL;
		if (!died && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
			why = "the child found the pool inconsistent or failed";
			if (!fresh)
				fail_msg("%s %s: child status %#x", design, crash, status);
		}
		if (!why && (fresh || i % 2 == 1 || i + 1 == RANDOM_SEEDS + AFTER_MAX)) {
			why = check_pool(path, reported, &k);
			if (!why)
				reported = k;
		}
		if (why) {
			failures++;
			if (!fresh)
				fail_msg("%s %s: %s", design, crash, why);
		}
	}
	*runs = n;
	if (!fresh)
		print_message("%s: %u runs, %u crashed, %llu transactions kept\n", design, n,
			      *crashed, (unsigned long long)k);
	remove_pool(path);
	return failures;
}

/* crash_points -- the counter-atomic designs pass every run. */
static void crash_points(void **state)
{
	const char *design = *state;
	unsigned runs, crashed;
	assert_int_equal(sweep(design, 0, &runs, &crashed), 0);
	assert_true(crashed > runs / 2); /* the sweep really crashed */
}

/* crash_points_unsafe -- the negative control fails some runs. */
static void crash_points_unsafe(void **state)
{
	(void)state;
	unsigned runs, crashed;
	unsigned failures = sweep("unsafe", 1, &runs, &crashed);
	print_message("unsafe: %u runs, %u crashed, %u failed the check\n", runs, crashed,
		      failures);
	assert_true(crashed > runs / 2);
	assert_true(failures > 0);
}

/* A negative-control case: design, pattern variant, whether the line must survive. */
struct pcase {
	const char *design, *variant;
	int ca, survives;
};

static const struct pcase pcases[] = {
	{"unsafe", "plain", 0, 0}, /* counter lost: the line is undecryptable */
	{"sca", "plain", 0, 0},    /* an ordinary sca write: same */
	{"sca", "plain", 1, 1},    /* declared CounterAtomic */
	{"sca", "ccwb", 0, 1},     /* counter_cache_writeback + drain */
	{"fca", "plain", 0, 1},
	{"ideal", "plain", 0, 1},
	{"colocated", "plain", 0, 1},
	{"colocated-cc", "plain", 0, 1},
	{"wt", "plain", 0, 1},
	{"supermem", "plain", 0, 1},
	{"lame", "plain", 0, 1}, /* outside a transaction: a counter-atomic pair */
};

/* persist_then_kill -- a line persisted without a transaction, then SIGKILL. */
static void persist_then_kill(void **state)
{
	const struct pcase *pc = *state;
	char path[4096];
	pool_path(path, sizeof(path), pc->design);
	setup_pool(path, pc->design, pc->ca);
	struct child c = spawn("pattern", path, pc->variant, NULL);
	uint64_t v = 0;
	assert_int_equal(next_value(&c, &v), 1); /* persisted */
	assert_int_equal(kill(c.pid, SIGKILL), 0);
	assert_true(killed(reap(&c, &v)));
	spm_pool *p = NULL;
	int rc = spm_open(&p, path, NULL);
	if (rc)
		fail_msg("%s: reopen: %d %s", pc->design, rc, spm_errormsg());
	uint64_t drained = 0;
	assert_int_equal(spm_stat(p, "recovery.drained", &drained), 0);
	assert_true(drained > 0); /* the write was in the ADR queue at the crash */
	struct croot *r = spm_root(p, sizeof(*r));
	assert_non_null(r);
	const uint8_t *line = spm_ptr(p, r->pat);
	assert_non_null(line);
	uint8_t want[64], zero[64] = {0};
	for (unsigned i = 0; i < 64; i++)
		want[i] = (uint8_t)(0xC0 + i);
	if (pc->survives) {
		assert_memory_equal(line, want, 64);
	} else {
		/* neither the new nor the old content: undecryptable */
		assert_memory_not_equal(line, want, 64);
		assert_memory_not_equal(line, zero, 64);
	}
	assert_int_equal(spm_close(p), 0);
	remove_pool(path);
}

/* The designs that must survive every crash (the brief: ideal, fca, sca; the
 * co-located ones are counter-atomic too). */
static const char *const safe_designs[] = {"ideal", "fca", "sca", "colocated",
					   "colocated-cc", "wt", "wt-cwc", "wt-xbank",
					   "supermem", "lame"}; /* srl, clame: crash sweeps, test_redo */
#define NSAFE (sizeof(safe_designs) / sizeof(safe_designs[0]))

/* cleanup -- remove every pool a failed test may have left behind. */
static int cleanup(void **state)
{
	(void)state;
	static const char *const all[] = {"plain", "ideal", "unsafe", "colocated",
					  "colocated-cc", "fca", "sca", "wt", "wt-cwc",
					  "wt-xbank", "supermem", "srl", "lame", "clame"};
	char path[4096];
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		pool_path(path, sizeof(path), all[i]);
		remove_pool(path);
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--child") == 0)
		return child_main(argc, argv);
	ssize_t n = readlink("/proc/self/exe", self_exe, sizeof(self_exe) - 1);
	if (n <= 0)
		return 1;
	self_exe[n] = '\0';
	signal(SIGPIPE, SIG_IGN);
	struct CMUnitTest tests[64];
	char names[64][64];
	size_t t = 0;
	for (size_t i = 0; i < NSAFE; i++) {
		tests[t] = (struct CMUnitTest)cmocka_unit_test_prestate(kill_rounds,
									(void *)safe_designs[i]);
		snprintf(names[t], sizeof(names[t]), "kill9_%s", safe_designs[i]);
		tests[t].name = names[t];
		t++;
	}
	for (size_t i = 0; i < sizeof(pcases) / sizeof(pcases[0]); i++) {
		tests[t] = (struct CMUnitTest)cmocka_unit_test_prestate(persist_then_kill,
									(void *)&pcases[i]);
		snprintf(names[t], sizeof(names[t]), "persist_kill9_%s_%s%s", pcases[i].design,
			 pcases[i].variant, pcases[i].ca ? "_ca" : "");
		tests[t].name = names[t];
		t++;
	}
	for (size_t i = 0; i < NSAFE; i++) {
		tests[t] = (struct CMUnitTest)cmocka_unit_test_prestate(crash_points,
									(void *)safe_designs[i]);
		snprintf(names[t], sizeof(names[t]), "crash_points_%s", safe_designs[i]);
		tests[t].name = names[t];
		t++;
	}
	tests[t++] = (struct CMUnitTest)cmocka_unit_test(crash_points_unsafe);
	return _cmocka_run_group_tests("crash", tests, t, NULL, cleanup);
}
