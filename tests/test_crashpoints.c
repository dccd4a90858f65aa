/* test_crashpoints.c -- the SPM_CRASH injector (emu/crash.c) and the controller's crash points, in forked children. */
/*
 * SPM_CRASH is parsed once per process (pthread_once, at the first
 * spm_create/spm_open), so every case runs in a child made by fork(): the
 * child sets SPM_CRASH, sends its stderr into a pipe and only then makes its
 * first spm call.  The parent (the cmocka runner) never calls an spm
 * function, so each child starts with the injector unparsed; fork without
 * exec suffices and keeps the workloads plain C functions.  The parent reads
 * the child's stderr (markers printed by the workload, the "count" report)
 * and its wait status.  Children exit with exit(), not _exit(), so that the
 * atexit report of SPM_CRASH=count runs.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include <spm.h>

#define POOL_SIZE (4u << 20)

static char test_dir[2048];
static unsigned path_seq;

/* new_path -- a fresh pool file name in SPM_TEST_DIR (or /tmp). */
static void new_path(char *out, size_t n, const char *tag)
{
	snprintf(out, n, "%s/unit_crash_%ld_%s_%u", test_dir, (long)getpid(), tag,
		 path_seq++);
}

static int exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

static void remove_pool(const char *path)
{
	char p[4200];
	unlink(path);
	snprintf(p, sizeof(p), "%s.meta", path);
	unlink(p);
	snprintf(p, sizeof(p), "%s.key", path);
	unlink(p);
}

static void assert_no_files(const char *path)
{
	char p[4200];
	assert_false(exists(path));
	snprintf(p, sizeof(p), "%s.meta", path);
	assert_false(exists(p));
	snprintf(p, sizeof(p), "%s.key", path);
	assert_false(exists(p));
}

/* ------------------------------------------------------------ child side */

/* mark -- a progress line for the parent: "mark: <what>". */
static void mark(const char *fmt, ...)
{
	va_list ap;
	char buf[128];
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fprintf(stderr, "mark: %s\n", buf);
}

static int failed(const char *what, int rc)
{
	fprintf(stderr, "error: %s: %d %s: %s\n", what, rc, spm_strerror(rc), spm_errormsg());
	return 3;
}

typedef int (*workload_fn)(const char *path, const char *options);

/* wl_full -- create, root (a transaction), CounterAtomic lines, persists,
 * four transactions, counter write-back, close. */
static int wl_full(const char *path, const char *options)
{
	spm_pool *p;
	int rc = spm_create(&p, path, POOL_SIZE, options);
	if (rc)
		return failed("spm_create", rc);
	mark("created");
	uint8_t *r = spm_root(p, 4096);
	if (!r)
		return failed("spm_root", -1);
	mark("root");
	if ((rc = spm_counter_atomic(p, r, 256)))
		return failed("spm_counter_atomic", rc);
	for (unsigned i = 0; i < 8; i++) {
		memset(r + 64 * i, (int)(i + 1), 64);
		spm_persist(p, r + 64 * i, 64);
	}
	mark("persisted");
	for (unsigned i = 0; i < 4; i++) {
		uint8_t *x = r + 1024 + 128 * i;
		if ((rc = spm_tx_begin(p)) || (rc = spm_tx_add(p, x, 128)))
			return failed("spm_tx_begin/add", rc);
		memset(x, (int)(0x40 + i), 128);
		if ((rc = spm_tx_commit(p)))
			return failed("spm_tx_commit", rc);
		mark("commit %u", i);
	}
	spm_counter_cache_writeback(p, r, 4096);
	spm_drain(p);
	if ((rc = spm_close(p)))
		return failed("spm_close", rc);
	mark("closed");
	return 0;
}

/* raw_lines -- 8 lines in the middle of the pool (no transaction, no root). */
static uint8_t *raw_lines(spm_pool *p)
{
	return spm_ptr(p, spm_size(p) / 2);
}

/* wl_plain_writes -- ordinary write-backs only. */
static int wl_plain_writes(const char *path, const char *options)
{
	spm_pool *p;
	int rc = spm_create(&p, path, POOL_SIZE, options);
	if (rc)
		return failed("spm_create", rc);
	mark("created");
	uint8_t *b = raw_lines(p);
	memset(b, 0x5a, 512);
	spm_persist(p, b, 512);
	mark("persisted");
	if ((rc = spm_close(p)))
		return failed("spm_close", rc);
	mark("closed");
	return 0;
}

/* wl_ca_writes -- the same lines, declared CounterAtomic first. */
static int wl_ca_writes(const char *path, const char *options)
{
	spm_pool *p;
	int rc = spm_create(&p, path, POOL_SIZE, options);
	if (rc)
		return failed("spm_create", rc);
	mark("created");
	uint8_t *b = raw_lines(p);
	if ((rc = spm_counter_atomic(p, b, 512)))
		return failed("spm_counter_atomic", rc);
	mark("declared");
	memset(b, 0x5a, 512);
	spm_persist(p, b, 512);
	mark("persisted");
	if ((rc = spm_close(p)))
		return failed("spm_close", rc);
	mark("closed");
	return 0;
}

/* wl_open_flush_drain -- open a clean pool (no crash point), then one flush
 * (one point: the data entry enqueued) and one drain (one point: the fence),
 * with a marker between each step. */
static int wl_open_flush_drain(const char *path, const char *options)
{
	spm_pool *p;
	int rc = spm_open(&p, path, options);
	if (rc)
		return failed("spm_open", rc);
	mark("opened");
	uint8_t *b = raw_lines(p);
	b[0]++;
	spm_flush(p, b, 1);
	mark("flushed");
	spm_drain(p);
	mark("drained");
	if ((rc = spm_close(p)))
		return failed("spm_close", rc);
	mark("closed");
	return 0;
}

/* wl_steps -- open a clean pool, then 100 persists of one line each, with a
 * marker after each: where a crash happened, to within one step. */
static int wl_steps(const char *path, const char *options)
{
	spm_pool *p;
	int rc = spm_open(&p, path, options);
	if (rc)
		return failed("spm_open", rc);
	mark("opened");
	uint8_t *b = raw_lines(p);
	for (unsigned i = 0; i < 100; i++) {
		b[64 * i]++;
		spm_persist(p, b + 64 * i, 1);
		mark("step %u", i);
	}
	if ((rc = spm_close(p)))
		return failed("spm_close", rc);
	mark("closed");
	return 0;
}

/* wl_create_only -- report spm_create's result. */
static int wl_create_only(const char *path, const char *options)
{
	spm_pool *p = NULL;
	int rc = spm_create(&p, path, POOL_SIZE, options);
	fprintf(stderr, "rc=%d\nmsg=%s\n", rc, spm_errormsg());
	if (!rc)
		spm_close(p);
	return 0;
}

/* wl_open_only -- report spm_open's result. */
static int wl_open_only(const char *path, const char *options)
{
	spm_pool *p = NULL;
	int rc = spm_open(&p, path, options);
	fprintf(stderr, "rc=%d\nmsg=%s\n", rc, spm_errormsg());
	if (!rc && (rc = spm_close(p)))
		return failed("spm_close", rc);
	return 0;
}

/* ------------------------------------------------------------ parent side */

struct child {
	char crash[128]; /* SPM_CRASH of the run, for messages */
	int status;
	char err[65536]; /* the child's stderr, after a leading '\n' */
	size_t len;
};

/* run_child -- fork; the child sets SPM_CRASH (NULL: unset) and runs fn. */
static void run_child(const char *crash, workload_fn fn, const char *path,
		      const char *options, struct child *c)
{
	int fds[2];
	assert_int_equal(pipe(fds), 0);
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		/* cmocka's handlers would resume the test runner in the child */
		const int sigs[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGSYS, SIGABRT};
		for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
			signal(sigs[i], SIG_DFL);
		close(fds[0]);
		if (dup2(fds[1], 2) < 0)
			_exit(120);
		close(fds[1]);
		if (crash ? setenv("SPM_CRASH", crash, 1) : unsetenv("SPM_CRASH"))
			_exit(121);
		exit(fn(path, options));
	}
	close(fds[1]);
	snprintf(c->crash, sizeof(c->crash), "%s", crash ? crash : "(unset)");
	c->err[0] = '\n';
	c->len = 1;
	for (;;) {
		char buf[4096];
		ssize_t n = read(fds[0], buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		size_t room = sizeof(c->err) - 1 - c->len;
		size_t k = (size_t)n < room ? (size_t)n : room;
		memcpy(c->err + c->len, buf, k);
		c->len += k;
	}
	c->err[c->len] = '\0';
	close(fds[0]);
	pid_t w;
	do
		w = waitpid(pid, &c->status, 0);
	while (w < 0 && errno == EINTR);
	assert_int_equal(w, pid);
}

/* describe -- the status in words, for failure messages. */
static const char *describe(const struct child *c, char *buf, size_t n)
{
	if (WIFEXITED(c->status))
		snprintf(buf, n, "exited %d", WEXITSTATUS(c->status));
	else if (WIFSIGNALED(c->status))
		snprintf(buf, n, "killed by signal %d", WTERMSIG(c->status));
	else
		snprintf(buf, n, "status 0x%x", (unsigned)c->status);
	return buf;
}

/* expect_exit0 -- the child exited normally with 0. */
static void expect_exit0(const struct child *c, const char *crash)
{
	char buf[64];
	if (!WIFEXITED(c->status) || WEXITSTATUS(c->status) != 0)
		fail_msg("SPM_CRASH=%s: child %s, want exit 0; stderr:%s", crash ? crash : "",
			 describe(c, buf, sizeof(buf)), c->err);
}

/* expect_killed -- the child died of SIGKILL (the emulated power failure). */
static void expect_killed(const struct child *c, const char *crash)
{
	char buf[64];
	if (!WIFSIGNALED(c->status) || WTERMSIG(c->status) != SIGKILL)
		fail_msg("SPM_CRASH=%s: child %s, want SIGKILL; stderr:%s", crash,
			 describe(c, buf, sizeof(buf)), c->err);
	if (strstr(c->err, "\nerror: "))
		fail_msg("SPM_CRASH=%s: the workload failed before the crash:%s", crash,
			 c->err);
}

/* marked -- did the child print the marker line? */
static int marked(const struct child *c, const char *what)
{
	char line[160];
	snprintf(line, sizeof(line), "\nmark: %s\n", what);
	return strstr(c->err, line) != NULL;
}

/* expect_mark -- the marker was (want = 1) or was not (want = 0) printed. */
static void expect_mark(const struct child *c, const char *what, int want)
{
	if (marked(c, what) != want)
		fail_msg("SPM_CRASH=%s: marker \"%s\" %s; stderr:%s", c->crash, what,
			 want ? "missing" : "present", c->err);
}

/* points_of -- the N of "spm-crash-points: N" (-1 if absent). */
static long long points_of(const struct child *c)
{
	const char *s = strstr(c->err, "\nspm-crash-points: ");
	long long n = -1;
	if (s && sscanf(s, "\nspm-crash-points: %lld", &n) != 1)
		n = -1;
	return n;
}

/* count_points -- run fn with SPM_CRASH=count: it must finish, N > 0. */
static long long count_points(workload_fn fn, const char *options)
{
	char path[4096];
	static struct child c;
	new_path(path, sizeof(path), "count");
	run_child("count", fn, path, options, &c);
	remove_pool(path);
	expect_exit0(&c, "count");
	expect_mark(&c, "closed", 1);
	long long n = points_of(&c);
	if (n <= 0)
		fail_msg("SPM_CRASH=count: no positive \"spm-crash-points: N\" on stderr:%s",
			 c.err);
	return n;
}

/* count: the child finishes normally and reports N > 0 points, the same N each time. */
static void test_count(void **state)
{
	(void)state;
	long long n1 = count_points(wl_full, NULL);
	long long n2 = count_points(wl_full, NULL);
	assert_int_equal(n1, n2);
	/* a bigger workload passes more points */
	long long small = count_points(wl_plain_writes, NULL);
	assert_true(small < n1);
	/* without SPM_CRASH nothing is reported */
	char path[4096];
	static struct child c;
	new_path(path, sizeof(path), "nocount");
	run_child(NULL, wl_full, path, NULL, &c);
	remove_pool(path);
	expect_exit0(&c, NULL);
	expect_mark(&c, "closed", 1);
	assert_null(strstr(c.err, "spm-crash-points"));
}

/* reopen_ok -- a fresh child without SPM_CRASH opens (recovers) and closes the pool. */
static void reopen_ok(const char *path, const char *crash)
{
	static struct child c;
	run_child(NULL, wl_open_only, path, NULL, &c);
	expect_exit0(&c, NULL);
	if (!strstr(c.err, "\nrc=0\n"))
		fail_msg("after SPM_CRASH=%s the pool does not open:%s", crash, c.err);
}

/* after:K kills for 1 <= K <= N and not for K > N. */
static void test_after(void **state)
{
	(void)state;
	long long n = count_points(wl_full, NULL);
	long long ks[] = {1, 2, 3, n / 4, n / 2, n - 1, n};
	static struct child c;
	char path[4096], crash[64];
	for (size_t i = 0; i < sizeof(ks) / sizeof(ks[0]); i++) {
		if (ks[i] < 1)
			ks[i] = 1;
		snprintf(crash, sizeof(crash), "after:%lld", ks[i]);
		new_path(path, sizeof(path), "after");
		run_child(crash, wl_full, path, NULL, &c);
		expect_killed(&c, crash);
		expect_mark(&c, "closed", 0);
		assert_null(strstr(c.err, "spm-crash-points"));
		if (ks[i] == 1)
			expect_mark(&c, "created", 0); /* spm_create has points */
		if (ks[i] == n)
			expect_mark(&c, "commit 3", 1); /* the last point is in close */
		/* a pool whose creation completed recovers from the crash */
		if (marked(&c, "created"))
			reopen_ok(path, crash);
		remove_pool(path);
	}
	/* a sweep: the later the crash, the further the workload got */
	int last_progress = -1;
	for (long long k = 1; k <= n; k += n / 12 + 1) {
		snprintf(crash, sizeof(crash), "after:%lld", k);
		new_path(path, sizeof(path), "sweep");
		run_child(crash, wl_full, path, NULL, &c);
		remove_pool(path);
		expect_killed(&c, crash);
		int progress = marked(&c, "created") + marked(&c, "root") +
			       marked(&c, "persisted") + marked(&c, "commit 0") +
			       marked(&c, "commit 1") + marked(&c, "commit 2") +
			       marked(&c, "commit 3");
		assert_true(progress >= last_progress);
		last_progress = progress;
	}
	const long long beyond[] = {n + 1, n + 100};
	for (size_t i = 0; i < 2; i++) {
		snprintf(crash, sizeof(crash), "after:%lld", beyond[i]);
		new_path(path, sizeof(path), "after");
		run_child(crash, wl_full, path, NULL, &c);
		remove_pool(path);
		expect_exit0(&c, crash);
		expect_mark(&c, "closed", 1);
	}
}

/* point:wpq.ready is reached by counter-atomic writes only. */
static void test_point_wpq_ready(void **state)
{
	(void)state;
	static struct child c;
	char path[4096];
	const char *crash = "point:wpq.ready";

	/* sca, CounterAtomic lines written back: killed after the declaration */
	new_path(path, sizeof(path), "ready");
	run_child(crash, wl_ca_writes, path, "design=sca", &c);
	remove_pool(path);
	expect_killed(&c, crash);
	expect_mark(&c, "declared", 1);
	expect_mark(&c, "persisted", 0);

	/* sca, ordinary lines only: no counter-atomic write, no kill */
	new_path(path, sizeof(path), "ready");
	run_child(crash, wl_plain_writes, path, "design=sca", &c);
	remove_pool(path);
	expect_exit0(&c, crash);
	expect_mark(&c, "closed", 1);

	/* the declaration is harmless where it is not honoured */
	const char *others[] = {"design=plain", "design=unsafe", "design=colocated"};
	for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
		new_path(path, sizeof(path), "ready");
		run_child(crash, wl_ca_writes, path, others[i], &c);
		remove_pool(path);
		expect_exit0(&c, crash);
		expect_mark(&c, "closed", 1);
	}

	/* fca pairs every write: killed at the pool header's first write-back */
	new_path(path, sizeof(path), "ready");
	run_child(crash, wl_plain_writes, path, "design=fca", &c);
	remove_pool(path);
	expect_killed(&c, crash);
	expect_mark(&c, "created", 0);

	/* the K of point:NAME:K counts hits of NAME: 8 CounterAtomic lines, 8 hits */
	new_path(path, sizeof(path), "ready");
	run_child("point:wpq.ready:8", wl_ca_writes, path, "design=sca", &c);
	remove_pool(path);
	expect_killed(&c, "point:wpq.ready:8");
	expect_mark(&c, "persisted", 0);
	new_path(path, sizeof(path), "ready");
	run_child("point:wpq.ready:9", wl_ca_writes, path, "design=sca", &c);
	remove_pool(path);
	expect_exit0(&c, "point:wpq.ready:9");
	expect_mark(&c, "closed", 1);
}

/* point:tx.committed:K kills at the Kth commit (spm_root's transaction is the first). */
static void test_point_tx_committed(void **state)
{
	(void)state;
	static struct child c;
	char path[4096];

	new_path(path, sizeof(path), "txc");
	run_child("point:tx.committed:2", wl_full, path, NULL, &c);
	expect_killed(&c, "point:tx.committed:2");
	expect_mark(&c, "root", 1);
	expect_mark(&c, "persisted", 1);
	expect_mark(&c, "commit 0", 0);
	reopen_ok(path, "point:tx.committed:2");
	remove_pool(path);

	new_path(path, sizeof(path), "txc");
	run_child("point:tx.committed", wl_full, path, NULL, &c); /* K = 1 */
	remove_pool(path);
	expect_killed(&c, "point:tx.committed");
	expect_mark(&c, "created", 1);
	expect_mark(&c, "root", 0);

	new_path(path, sizeof(path), "txc");
	run_child("point:tx.committed:5", wl_full, path, NULL, &c);
	remove_pool(path);
	expect_killed(&c, "point:tx.committed:5");
	expect_mark(&c, "commit 2", 1);
	expect_mark(&c, "commit 3", 0);

	/* five commits in all: a sixth is never reached */
	new_path(path, sizeof(path), "txc");
	run_child("point:tx.committed:6", wl_full, path, NULL, &c);
	remove_pool(path);
	expect_exit0(&c, "point:tx.committed:6");
	expect_mark(&c, "closed", 1);
	/* an unknown point name is refused: test_bad_values */
}

/* make_pool -- a clean pool made by a child without SPM_CRASH. */
static void make_pool(char *path, size_t n, const char *tag)
{
	static struct child c;
	new_path(path, n, tag);
	run_child(NULL, wl_plain_writes, path, NULL, &c);
	expect_exit0(&c, NULL);
	expect_mark(&c, "closed", 1);
}

/* run_on_clean -- fn on a fresh clean pool (a killed run leaves its pool dirty,
 * and recovery at the next open passes points of its own). */
static void run_on_clean(const char *crash, workload_fn fn, struct child *c)
{
	char path[4096];
	make_pool(path, sizeof(path), "clean");
	run_child(crash, fn, path, NULL, c);
	remove_pool(path);
}

/* after:N and random:S:1 stop exactly at the Nth / first point. */
static void test_first_points(void **state)
{
	(void)state;
	static struct child c;
	/* opening a clean pool passes two points: the epoch raised in both
	 * files, then recorded in the key file; flush and drain one each */
	run_on_clean("count", wl_open_flush_drain, &c);
	expect_exit0(&c, "count");
	expect_mark(&c, "closed", 1);
	long long n = points_of(&c);
	assert_true(n >= 4);
	const char *in_open[] = {"after:1", "after:2", "random:1:1.0", "random:99:1",
				 "point:epoch.raised", "point:epoch.recorded"};
	for (size_t i = 0; i < sizeof(in_open) / sizeof(in_open[0]); i++) {
		run_on_clean(in_open[i], wl_open_flush_drain, &c);
		expect_killed(&c, in_open[i]);
		expect_mark(&c, "opened", 0);
	}

	/* a flushed line passes two: its ciphertext written (reserved), its
	 * entry published */
	const char *first[] = {"after:3", "after:4", "point:wpq.payload_written",
			       "point:wpq.data_enqueued"};
	for (size_t i = 0; i < sizeof(first) / sizeof(first[0]); i++) {
		run_on_clean(first[i], wl_open_flush_drain, &c);
		expect_killed(&c, first[i]);
		expect_mark(&c, "opened", 1);
		expect_mark(&c, "flushed", 0);
	}
	const char *second[] = {"after:5", "point:fence"};
	for (size_t i = 0; i < sizeof(second) / sizeof(second[0]); i++) {
		run_on_clean(second[i], wl_open_flush_drain, &c);
		expect_killed(&c, second[i]);
		expect_mark(&c, "flushed", 1);
		expect_mark(&c, "drained", 0);
	}
	/* the last point is in close; one more is never reached */
	char crash[64];
	snprintf(crash, sizeof(crash), "after:%lld", n);
	run_on_clean(crash, wl_open_flush_drain, &c);
	expect_killed(&c, crash);
	expect_mark(&c, "drained", 1);
	expect_mark(&c, "closed", 0);
	snprintf(crash, sizeof(crash), "after:%lld", n + 1);
	run_on_clean(crash, wl_open_flush_drain, &c);
	expect_exit0(&c, crash);
	expect_mark(&c, "closed", 1);
}

/* random:SEED:P -- P = 1 kills in spm_create's first points, P = 0 never
 * (test_first_points shows P = 1 kills at exactly the first point). */
static void test_random(void **state)
{
	(void)state;
	static struct child c;
	char path[4096];
	const char *always[] = {"random:1:1.0", "random:987654321:1"};
	for (size_t i = 0; i < 2; i++) {
		new_path(path, sizeof(path), "rand");
		run_child(always[i], wl_full, path, NULL, &c);
		remove_pool(path);
		expect_killed(&c, always[i]);
		expect_mark(&c, "created", 0);
	}
	const char *never[] = {"random:1:0", "random:5:0.0"};
	for (size_t i = 0; i < 2; i++) {
		new_path(path, sizeof(path), "rand");
		run_child(never[i], wl_full, path, NULL, &c);
		remove_pool(path);
		expect_exit0(&c, never[i]);
		expect_mark(&c, "closed", 1);
	}
}

/* steps_done -- how many steps of wl_steps the child finished. */
static unsigned steps_done(const struct child *c)
{
	unsigned k = 0;
	char what[32];
	for (;;) {
		snprintf(what, sizeof(what), "step %u", k);
		if (!marked(c, what))
			return k;
		k++;
	}
}

/* random:SEED:P crashes where the seed says: the same seed at the same step. */
static void test_random_seed(void **state)
{
	(void)state;
	static struct child c, d;
	const char *seeds[] = {"random:42:0.02", "random:43:0.02", "random:44:0.02",
			       "random:45:0.02"};
	unsigned at[4];
	int differ = 0;
	for (size_t i = 0; i < 4; i++) {
		run_on_clean(seeds[i], wl_steps, &c);
		run_on_clean(seeds[i], wl_steps, &d);
		expect_killed(&c, seeds[i]);
		expect_killed(&d, seeds[i]);
		expect_mark(&c, "opened", 1);
		at[i] = steps_done(&c);
		assert_int_equal(steps_done(&d), at[i]);
		assert_string_equal(c.err, d.err);
		differ |= i > 0 && at[i] != at[0];
	}
	/* the seed matters */
	assert_true(differ);
}

/* rc_of -- the "rc=" line of wl_create_only / wl_open_only. */
static int rc_of(const struct child *c)
{
	const char *s = strstr(c->err, "\nrc=");
	int rc = 1;
	if (!s || sscanf(s, "\nrc=%d", &rc) != 1)
		fail_msg("no rc line in the child's stderr:%s", c->err);
	return rc;
}

/* A bad SPM_CRASH makes spm_create and spm_open fail with SPM_E_OPTION. */
static void test_bad_values(void **state)
{
	(void)state;
	static const char *const bad[] = {
		"after:0", "bogus", "random:x:2", "after:", "after:-1", "after:5x",
		"after:abc", "point:", "point:fence:0", "point:fence:x", "random:1",
		"random:1:1.5", "random:1:-0.1", "random:1:abc", "random::0.5",
		"count:1", "AFTER:1", "point:no.such.point", "point:no.such.point:3",
		"point:wpq.redy",
	};
	static struct child c;
	char path[4096];
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		new_path(path, sizeof(path), "bad");
		run_child(bad[i], wl_create_only, path, NULL, &c);
		expect_exit0(&c, bad[i]);
		if (rc_of(&c) != SPM_E_OPTION)
			fail_msg("SPM_CRASH=%s: spm_create gave %d, want %d:%s", bad[i],
				 rc_of(&c), SPM_E_OPTION, c.err);
		assert_non_null(strstr(c.err, "SPM_CRASH"));
		assert_no_files(path);
	}
	/* spm_open too, on a good pool made by a child without SPM_CRASH */
	new_path(path, sizeof(path), "badopen");
	run_child(NULL, wl_create_only, path, NULL, &c);
	expect_exit0(&c, NULL);
	assert_int_equal(rc_of(&c), 0);
	for (size_t i = 0; i < 3; i++) {
		run_child(bad[i], wl_open_only, path, NULL, &c);
		expect_exit0(&c, bad[i]);
		assert_int_equal(rc_of(&c), SPM_E_OPTION);
		assert_non_null(strstr(c.err, "SPM_CRASH"));
	}
	/* the good values for contrast */
	const char *good[] = {"count", "after:1000000", "point:fence:1000000", "random:1:0"};
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		run_child(good[i], wl_open_only, path, NULL, &c);
		expect_exit0(&c, good[i]);
		assert_int_equal(rc_of(&c), 0);
	}
	remove_pool(path);
}

/* teardown -- remove what a failed test left behind (files of this process). */
static int teardown(void **state)
{
	(void)state;
	char prefix[64], path[4400];
	snprintf(prefix, sizeof(prefix), "unit_crash_%ld_", (long)getpid());
	DIR *d = opendir(test_dir);
	if (!d)
		return 0;
	struct dirent *e;
	while ((e = readdir(d)))
		if (strncmp(e->d_name, prefix, strlen(prefix)) == 0) {
			snprintf(path, sizeof(path), "%s/%s", test_dir, e->d_name);
			unlink(path);
		}
	closedir(d);
	return 0;
}

static int setup(void **state)
{
	(void)state;
	const char *d = getenv("SPM_TEST_DIR");
	snprintf(test_dir, sizeof(test_dir), "%s", d && *d ? d : "/tmp");
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_count),
		cmocka_unit_test(test_after),
		cmocka_unit_test(test_point_wpq_ready),
		cmocka_unit_test(test_point_tx_committed),
		cmocka_unit_test(test_random),
		cmocka_unit_test(test_random_seed),
		cmocka_unit_test(test_first_points),
		cmocka_unit_test(test_bad_values),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
