/*
 * test_create_crash.c -- spm_create is atomic: killed at every crash point
 * it passes (SPM_CRASH=after:N in a forked child, N = 1 .. all of them),
 * either the path is free for a new spm_create, or the pool opens complete;
 * never a pool that is refused for good.  For each encrypting design and
 * plain, with the key made by the creation and with an adopted key.  And
 * spm_rekey, killed at every crash point it passes: the pool opens with
 * its content, at once or after spm_rekey runs again.
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
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "test_files.h"

#include <spm.h>

#define POOL_SIZE (4u << 20)

static char dir[2048];

static int exists(const char *p)
{
	struct stat st;
	return lstat(p, &st) == 0;
}

/*
 * The steps of the sweeps, each run in a child (run_step): the crash
 * injector is set up once per process, at its first spm call, so this test
 * process never calls spm itself, and a child exits with its step's code.
 */
enum step {
	CREATE,         /* spm_create(path, opts) and close: 0 */
	OPEN_OR_CREATE, /* after a killed creation: the pool opens (10) or a new
			 * spm_create of the path succeeds (11) */
	MAKE_OLD,       /* an sca pool whose root says "old state": 0 */
	MAKE_NEW,       /* its root set to "new state": 0 */
	REKEY,          /* spm_rekey(path): 0 */
	FINISH,         /* after a killed re-key: the pool opens with "old
			 * state", at once or after one more spm_rekey: 0 */
};
enum { OPENED = 10, CREATED = 11 };

/* set_text -- open path (or create it) and set the root's text; 0 or 3. */
static int set_text(const char *path, int create, const char *text)
{
	spm_pool *p = NULL;
	int rc = create ? spm_create(&p, path, POOL_SIZE, "design=sca")
			: spm_open(&p, path, NULL);
	char *r = rc ? NULL : spm_root(p, 64);
	if (!r || spm_tx_begin(p) || spm_tx_add(p, r, 64))
		return fprintf(stderr, "set_text: %s\n", spm_errormsg()), 3;
	snprintf(r, 64, "%s", text);
	return spm_tx_commit(p) || spm_close(p) ? 3 : 0;
}

/* open_or_create -- OPEN_OR_CREATE; 2 if neither works. */
static int open_or_create(const char *path, const char *opts)
{
	spm_pool *p = NULL;
	if (spm_open(&p, path, opts && strstr(opts, "key_file") ? opts : NULL) == 0)
		return spm_root(p, 64) && spm_close(p) == 0 ? OPENED : 3;
	if (spm_create(&p, path, POOL_SIZE, opts) != 0) {
		fprintf(stderr, "the pool does not open and the path is not free: %s\n",
			spm_errormsg());
		return 2;
	}
	return spm_root(p, 64) && spm_close(p) == 0 ? CREATED : 3;
}

/* finish -- FINISH: a rollback is a re-key killed before its meta file was
 * placed, a mismatch one killed between its two renames. */
static int finish(const char *path)
{
	spm_pool *p = NULL;
	int rc = spm_open(&p, path, NULL);
	if (rc == SPM_E_ROLLBACK || rc == SPM_E_MISMATCH) {
		if (spm_rekey(path, NULL))
			return fprintf(stderr, "finish: rekey: %s\n", spm_errormsg()), 3;
		rc = spm_open(&p, path, NULL);
	}
	if (rc)
		return fprintf(stderr, "finish: open: %s\n", spm_errormsg()), 3;
	const char *r = spm_root(p, 64);
	int ok = r && strcmp(r, "old state") == 0;
	return spm_close(p) == 0 && ok ? 0 : 4;
}

/* do_step -- step, in the child: its exit code. */
static int do_step(enum step step, const char *path, const char *opts)
{
	spm_pool *p = NULL;
	switch (step) {
	case CREATE:
		if (spm_create(&p, path, POOL_SIZE, opts))
			return fprintf(stderr, "create: %s\n", spm_errormsg()), 3;
		return spm_close(p) ? 4 : 0;
	case OPEN_OR_CREATE:
		return open_or_create(path, opts);
	case MAKE_OLD:
		return set_text(path, 1, "old state");
	case MAKE_NEW:
		return set_text(path, 0, "new state");
	case REKEY:
		return spm_rekey(path, NULL) ? 3 : 0;
	case FINISH:
		return finish(path);
	}
	return 5;
}

struct step_arg {
	enum step step;
	const char *path, *opts;
};

/* step_in_child -- run_in_child's function: the step. */
static int step_in_child(const void *arg)
{
	const struct step_arg *a = arg;
	return do_step(a->step, a->path, a->opts);
}

/* run_step -- step on path (opts) in a child with SPM_CRASH=crash (NULL:
 * none); its wait status, and for crash "count" its crash points in
 * *points.  The test fails if the child exits with a code other than 0 or
 * those in want (0-terminated). */
static int run_step(enum step step, const char *path, const char *opts, const char *crash,
		    long *points, const int *want)
{
	char err[8192];
	struct step_arg a = {step, path, opts};
	int status = run_in_child(step_in_child, &a, crash, err, sizeof(err), points);
	int ok = !WIFEXITED(status) || WEXITSTATUS(status) == 0;
	for (unsigned i = 0; want && want[i] && !ok; i++)
		ok = WEXITSTATUS(status) == want[i];
	if (!ok)
		fail_msg("step %d on %s (SPM_CRASH=%s): exit %d: %s", step, path,
			 crash ? crash : "", WEXITSTATUS(status), err);
	return status;
}

/* expect_killed -- status is the child's death by SPM_CRASH's SIGKILL. */
static void expect_killed(int status, const char *crash)
{
	if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL)
		fail_msg("SPM_CRASH=%s: not killed (status %d)", crash, status);
}

/* complete_or_free -- after a creation killed at a crash point: 1 if the
 * pool opened, 0 if the path was free for a new spm_create. */
static int complete_or_free(const char *path, const char *opts)
{
	static const int want[] = {OPENED, CREATED, 0};
	int status = run_step(OPEN_OR_CREATE, path, opts, NULL, NULL, want);
	if (!WIFEXITED(status) || WEXITSTATUS(status) == 0)
		fail_msg("%s: status %d", path, status);
	return WEXITSTATUS(status) == OPENED;
}

/* sweep -- every crash point of spm_create(path, opts). */
static void sweep(const char *tag, const char *opts, const char *adopt_key)
{
	char path[4096], tmp[4300];
	snprintf(path, sizeof(path), "%s/createcrash-%ld-%s", dir, (long)getpid(), tag);
	remove_pool_files(path);
	long points;
	run_step(CREATE, path, opts, "count", &points, NULL);
	assert_true(points > 4);
	unsigned opened = 0;
	for (long n = 1; n <= points; n++) {
		char crash[64];
		remove_pool_files(path);
		snprintf(tmp, sizeof(tmp), "%s.new", path);
		unlink(tmp);
		snprintf(tmp, sizeof(tmp), "%s.meta.new", path);
		unlink(tmp);
		if (adopt_key)
			assert_true(exists(adopt_key));
		snprintf(crash, sizeof(crash), "after:%ld", n);
		expect_killed(run_step(CREATE, path, opts, crash, NULL, NULL), crash);
		opened += complete_or_free(path, opts);
		/* and no temporary is left once a pool stands at the path */
		snprintf(tmp, sizeof(tmp), "%s.new", path);
		assert_false(exists(tmp));
		snprintf(tmp, sizeof(tmp), "%s.meta.new", path);
		assert_false(exists(tmp));
	}
	/* the last points are after the commit: those pools open */
	assert_true(opened >= 1);
	assert_true(opened < (unsigned)points);
	remove_pool_files(path);
	print_message("%s: %ld crash points, %u left a pool, %ld a free path\n", tag, points,
		      opened, points - (long)opened);
}

static void sweep_sca(void **state)
{
	(void)state;
	sweep("sca", "design=sca", NULL);
}

static void sweep_supermem(void **state)
{
	(void)state;
	sweep("supermem", "design=supermem", NULL);
}

static void sweep_plain(void **state)
{
	(void)state;
	sweep("plain", "design=plain", NULL);
}

/* sweep_adopted_key -- a key named with key_file= is never removed by the
 * clearing of an interrupted creation. */
static void sweep_adopted_key(void **state)
{
	(void)state;
	char key[4200], opts[4400], base[4096];
	snprintf(base, sizeof(base), "%s/createcrash-%ld-keysrc", dir, (long)getpid());
	remove_pool_files(base);
	assert_int_equal(complete_or_free(base, NULL), 0); /* the key's first pool */
	snprintf(key, sizeof(key), "%s.key", base);
	size_t n;
	uint8_t *k = slurp(key, &n);
	snprintf(opts, sizeof(opts), "design=fca;key_file=%s", key);
	sweep("adopted", opts, key);
	/* the shared key is still there and the same key; its records grow
	 * (one per pool that used it), none vanishes */
	size_t n2;
	uint8_t *k2 = slurp(key, &n2);
	assert_true(n2 >= n);
	assert_memory_equal(k2, k, 48);
	free(k2);
	free(k);
	remove_pool_files(base);
}

/*
 * sweep_rekey -- spm_rekey of a restored copy killed at every crash point it
 * passes, twice in a row: afterwards the pool opens with the copy's
 * content, at once or after spm_rekey is run again, and no temporary file
 * is left.
 */
static void sweep_rekey(void **state)
{
	(void)state;
	char path[4096], meta[4300], tmp[4300];
	snprintf(path, sizeof(path), "%s/createcrash-%ld-rekey", dir, (long)getpid());
	snprintf(meta, sizeof(meta), "%s.meta", path);
	remove_pool_files(path);
	run_step(MAKE_OLD, path, NULL, NULL, NULL, NULL);
	size_t nd, nm;
	uint8_t *d = slurp(path, &nd), *m = slurp(meta, &nm);
	run_step(MAKE_NEW, path, NULL, NULL, NULL, NULL);
	long points;
	spit(path, d, nd);
	spit(meta, m, nm);
	run_step(REKEY, path, NULL, "count", &points, NULL);
	assert_true(points >= 3);
	for (long k = 1; k <= points; k++) {
		char crash[64];
		snprintf(crash, sizeof(crash), "after:%ld", k);
		spit(path, d, nd); /* the restored copy again */
		spit(meta, m, nm);
		expect_killed(run_step(REKEY, path, NULL, crash, NULL, NULL), crash);
		/* and the next re-key killed at the same point (or finishing
		 * the first one's renames, where it passes no point) */
		int status = run_step(REKEY, path, NULL, crash, NULL, NULL);
		if (WIFSIGNALED(status) && WTERMSIG(status) != SIGKILL)
			fail_msg("SPM_CRASH=%s, again: status %d", crash, status);
		run_step(FINISH, path, NULL, NULL, NULL, NULL);
		snprintf(tmp, sizeof(tmp), "%s.new", path);
		assert_false(exists(tmp));
		snprintf(tmp, sizeof(tmp), "%s.meta.new", path);
		assert_false(exists(tmp));
	}
	print_message("rekey: %ld crash points, each finished\n", points);
	free(d);
	free(m);
	remove_pool_files(path);
}

int main(void)
{
	const char *d = getenv("SPM_TEST_DIR");
	snprintf(dir, sizeof(dir), "%s", d && *d ? d : "/tmp");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sweep_sca),
		cmocka_unit_test(sweep_supermem),
		cmocka_unit_test(sweep_plain),
		cmocka_unit_test(sweep_adopted_key),
		cmocka_unit_test(sweep_rekey),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
