/*
 * test_rekey_key.c -- spm_rekey_key: every line of a clean pool re-encrypted
 * under a new random key that replaces the key file's.  The content is the
 * same after it, the key bytes are new, and a saved copy of the old key
 * file no longer opens the pool.  Killed at every crash point it passes
 * (SPM_CRASH=after:N in a forked child, N = 1 .. the count), the pool opens
 * with its content under the old key or the new one, whichever key file is
 * in place after the open's own completion, and a second spm_rekey_key
 * (after that open, or with none before it) succeeds and leaves no
 * temporary.  Integrity pools and key files shared
 * with another pool are refused with the files unchanged.
 */
#include <dirent.h>
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
#define ROOT_SIZE 16384u

static char dir[2048];

static int exists(const char *p)
{
	struct stat st;
	return lstat(p, &st) == 0;
}

/* The steps, each run in a child (run_step): the crash injector is set up
 * once per process, at its first spm call, so this process never calls spm. */
enum step {
	MAKE,       /* a pool of design opts with the pattern in its root: 0 */
	REKEY,      /* spm_rekey_key(path, NULL): 0 */
	CHECK,      /* the pool opens (default key file) with the pattern: 0 */
	OLD_KEY,    /* spm_open with key_file=<opts> is refused SPM_E_KEY: 0 */
	REFUSED,    /* spm_rekey_key is refused with SPM_E_INVAL: 0 */
};

/* pattern -- byte i of the root's content. */
static uint8_t pattern(size_t i)
{
	return (uint8_t)(i * 131u + (i >> 8) * 7u + 1u);
}

static int make(const char *path, const char *opts)
{
	spm_pool *p = NULL;
	if (spm_create(&p, path, POOL_SIZE, opts))
		return fprintf(stderr, "create: %s\n", spm_errormsg()), 3;
	uint8_t *r = spm_root(p, ROOT_SIZE);
	if (!r || spm_tx_begin(p) || spm_tx_add(p, r, ROOT_SIZE))
		return fprintf(stderr, "make: %s\n", spm_errormsg()), 3;
	for (size_t i = 0; i < ROOT_SIZE; i++)
		r[i] = pattern(i);
	return spm_tx_commit(p) || spm_close(p) ? 3 : 0;
}

static int check(const char *path)
{
	spm_pool *p = NULL;
	if (spm_open(&p, path, NULL))
		return fprintf(stderr, "check: open: %s\n", spm_errormsg()), 3;
	const uint8_t *r = spm_root(p, ROOT_SIZE);
	int ok = r != NULL;
	for (size_t i = 0; ok && i < ROOT_SIZE; i++)
		ok = r[i] == pattern(i);
	if (!ok)
		fprintf(stderr, "check: the root's content differs\n");
	return spm_close(p) == 0 && ok ? 0 : 4;
}

static int do_step(enum step step, const char *path, const char *opts)
{
	spm_pool *p = NULL;
	char o[4400];
	int rc;
	switch (step) {
	case MAKE:
		return make(path, opts);
	case REKEY:
		if (spm_rekey_key(path, opts))
			return fprintf(stderr, "rekey: %s\n", spm_errormsg()), 3;
		return 0;
	case CHECK:
		return check(path);
	case OLD_KEY:
		snprintf(o, sizeof(o), "key_file=%s", opts);
		rc = spm_open(&p, path, o);
		if (rc == 0)
			spm_close(p);
		return rc == SPM_E_KEY ? 0 : (fprintf(stderr, "old key: %d\n", rc), 6);
	case REFUSED:
		rc = spm_rekey_key(path, opts);
		return rc == SPM_E_INVAL ? 0 : (fprintf(stderr, "refused: %d %s\n", rc,
						       spm_errormsg()), 6);
	}
	return 5;
}

struct step_arg {
	enum step step;
	const char *path, *opts;
};

/* step_in_child -- run_in_child's function: the step, test knobs on. */
static int step_in_child(const void *arg)
{
	const struct step_arg *a = arg;
	setenv("SPM_TEST_KNOBS", "1", 1);
	return do_step(a->step, a->path, a->opts);
}

/* run_step -- step on path (opts) in a child with SPM_CRASH=crash (NULL:
 * none); its wait status, and for crash "count" its crash points in
 * *points.  The test fails if the child exits with a code other than 0. */
static int run_step(enum step step, const char *path, const char *opts, const char *crash,
		    long *points)
{
	char err[8192];
	struct step_arg a = {step, path, opts};
	int status = run_in_child(step_in_child, &a, crash, err, sizeof(err), points);
	if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
		fail_msg("step %d on %s (SPM_CRASH=%s): exit %d: %s", step, path,
			 crash ? crash : "", WEXITSTATUS(status), err);
	return status;
}

/* key_bytes -- the 32 key bytes of the key file at key (offset 16). */
static void key_bytes(const char *key, uint8_t out[32])
{
	size_t n;
	uint8_t *k = slurp(key, &n);
	assert_true(n >= 48);
	memcpy(out, k + 16, 32);
	free(k);
}

/* no_leftovers -- no temporary of a re-key beside the pool at path. */
static void no_leftovers(const char *path)
{
	char tmp[4400];
	snprintf(tmp, sizeof(tmp), "%s.new", path);
	assert_false(exists(tmp));
	snprintf(tmp, sizeof(tmp), "%s.meta.new", path);
	assert_false(exists(tmp));
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	char prefix[4400];
	snprintf(prefix, sizeof(prefix), "%s.key.new", base);
	DIR *d = opendir(dir);
	assert_non_null(d);
	struct dirent *e;
	while ((e = readdir(d)))
		if (strncmp(e->d_name, prefix, strlen(prefix)) == 0)
			fail_msg("a new key's temporary is left: %s", e->d_name);
	closedir(d);
}

/* test_rekey_new_key -- the content stays, the key changes, the old key
 * file (a saved copy) and the old pool files are refused. */
static void test_rekey_new_key(void **state)
{
	(void)state;
	char path[4096], key[4300], saved[4300];
	snprintf(path, sizeof(path), "%s/rekeykey-%ld-basic", dir, (long)getpid());
	snprintf(key, sizeof(key), "%s.key", path);
	snprintf(saved, sizeof(saved), "%s.saved-key", path);
	remove_pool_files(path);
	run_step(MAKE, path, "design=sca", NULL, NULL);
	struct pool_image old = {0};
	pool_save(path, &old);
	spit(saved, old.bytes[2], old.len[2]);
	uint8_t k0[32], k1[32], k2[32];
	key_bytes(key, k0);
	run_step(REKEY, path, NULL, NULL, NULL);
	key_bytes(key, k1);
	assert_memory_not_equal(k0, k1, 16);
	no_leftovers(path);
	run_step(CHECK, path, NULL, NULL, NULL);
	run_step(OLD_KEY, path, saved, NULL, NULL);
	/* every line was re-encrypted: the data file shares no line with the old */
	size_t nd;
	uint8_t *d = slurp(path, &nd);
	assert_int_equal(nd, old.len[0]);
	size_t same = 0;
	for (size_t off = 4096; off < nd; off += 64)
		same += memcmp(d + off, old.bytes[0] + off, 64) == 0;
	assert_int_equal(same, 0);
	free(d);
	/* and again: another key */
	run_step(REKEY, path, NULL, NULL, NULL);
	key_bytes(key, k2);
	assert_memory_not_equal(k1, k2, 16);
	run_step(CHECK, path, NULL, NULL, NULL);
	/* killed with its new key written; that key cut short as a kill while
	 * writing it would leave it: the next re-key clears it */
	int status = run_step(REKEY, path, NULL, "point:rekey.files_made", NULL);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	const char *base = strrchr(path, '/') + 1;
	char prefix[4400], tmp_key[4400];
	snprintf(prefix, sizeof(prefix), "%s.key.new.", base);
	tmp_key[0] = '\0';
	DIR *dp = opendir(dir);
	assert_non_null(dp);
	struct dirent *e;
	while ((e = readdir(dp)))
		if (strncmp(e->d_name, prefix, strlen(prefix)) == 0)
			snprintf(tmp_key, sizeof(tmp_key), "%s/%s", dir, e->d_name);
	closedir(dp);
	assert_true(tmp_key[0] != '\0');
	assert_int_equal(truncate(tmp_key, 10), 0);
	run_step(CHECK, path, NULL, NULL, NULL);
	run_step(REKEY, path, NULL, NULL, NULL);
	no_leftovers(path);
	run_step(CHECK, path, NULL, NULL, NULL);
	/* the old pool files under the new key: refused */
	pool_restore_files(path, &old);
	run_step(OLD_KEY, path, key, NULL, NULL);
	pool_image_free(&old);
	unlink(saved);
	remove_pool_files(path);
}

/* test_rekey_refusals -- an integrity pool, a plain one and a key file
 * another pool uses are refused, their files unchanged. */
static void test_rekey_refusals(void **state)
{
	(void)state;
	char path[4096], other[4200], opts[4400];
	struct pool_image img = {0};
	static const char *const designs[] = {"design=ccnvm", "design=plain"};
	snprintf(path, sizeof(path), "%s/rekeykey-%ld-refuse", dir, (long)getpid());
	for (unsigned i = 0; i < 2; i++) {
		remove_pool_files(path);
		run_step(MAKE, path, designs[i], NULL, NULL);
		if (i == 0)
			pool_save(path, &img);
		run_step(REFUSED, path, NULL, NULL, NULL);
		if (i == 0) {
			char f[4300];
			for (unsigned j = 0; j < 3; j++) {
				pool_file(f, sizeof(f), path, j);
				assert_file_is(f, img.bytes[j], img.len[j]);
			}
		}
		run_step(CHECK, path, NULL, NULL, NULL);
	}
	/* a key file recording a second pool */
	remove_pool_files(path);
	snprintf(other, sizeof(other), "%s.key.tcb", path);
	unlink(other); /* the integrity pool's registers */
	run_step(MAKE, path, "design=sca", NULL, NULL);
	snprintf(other, sizeof(other), "%s-other", path);
	remove_pool_files(other);
	snprintf(opts, sizeof(opts), "design=sca;key_file=%s.key", path);
	run_step(MAKE, other, opts, NULL, NULL);
	pool_save(path, &img);
	run_step(REFUSED, path, NULL, NULL, NULL);
	char f[4300];
	for (unsigned j = 0; j < 3; j++) {
		pool_file(f, sizeof(f), path, j);
		assert_file_is(f, img.bytes[j], img.len[j]);
	}
	no_leftovers(path);
	pool_image_free(&img);
	remove_pool_files(other);
	remove_pool_files(path);
}

/*
 * sweep -- spm_rekey_key killed at every crash point it passes (design
 * opts): the pool opens with its content under the key file in place
 * after the open (the old key or the new one), and a second re-key
 * succeeds and leaves no temporary.
 */
static void sweep(const char *tag, const char *opts)
{
	char path[4096], key[4300];
	snprintf(path, sizeof(path), "%s/rekeykey-%ld-%s", dir, (long)getpid(), tag);
	snprintf(key, sizeof(key), "%s.key", path);
	remove_pool_files(path);
	run_step(MAKE, path, opts, NULL, NULL);
	struct pool_image img = {0};
	pool_save(path, &img);
	uint8_t k0[32], k[32];
	key_bytes(key, k0);
	long points;
	run_step(REKEY, path, NULL, "count", &points);
	assert_true(points >= 4);
	pool_restore(path, &img);
	unsigned old_key = 0, new_key = 0;
	for (long n = 1; n <= points; n++) {
		char crash[64];
		snprintf(crash, sizeof(crash), "after:%ld", n);
		pool_restore(path, &img); /* the pool as made, its key too */
		int status = run_step(REKEY, path, NULL, crash, NULL);
		if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL)
			fail_msg("SPM_CRASH=%s: not killed (status %d)", crash, status);
		run_step(CHECK, path, NULL, NULL, NULL);
		key_bytes(key, k);
		if (memcmp(k, k0, 32) == 0)
			old_key++;
		else
			new_key++;
		/* a second re-key succeeds, clears what the first left */
		run_step(REKEY, path, NULL, NULL, NULL);
		no_leftovers(path);
		run_step(CHECK, path, NULL, NULL, NULL);
		key_bytes(key, k);
		assert_memory_not_equal(k, k0, 16);
		/* killed there again, and re-keyed with no open before: the
		 * re-key finishes or clears what the first left */
		pool_restore(path, &img);
		status = run_step(REKEY, path, NULL, crash, NULL);
		if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL)
			fail_msg("SPM_CRASH=%s, again: not killed (status %d)", crash, status);
		run_step(REKEY, path, NULL, NULL, NULL);
		no_leftovers(path);
		run_step(CHECK, path, NULL, NULL, NULL);
		key_bytes(key, k);
		assert_memory_not_equal(k, k0, 16);
	}
	/* the points before the first rename leave the old key, the later
	 * ones the new */
	assert_true(old_key >= 1);
	assert_true(new_key >= 3);
	print_message("%s: %ld crash points, %u opened under the old key, %u under the new\n",
		      tag, points, old_key, new_key);
	pool_image_free(&img);
	remove_pool_files(path);
}

static void sweep_sca(void **state)
{
	(void)state;
	sweep("sca", "design=sca");
}

static void sweep_supermem(void **state)
{
	(void)state;
	sweep("supermem", "design=supermem");
}

int main(void)
{
	const char *d = getenv("SPM_TEST_DIR");
	snprintf(dir, sizeof(dir), "%s", d && *d ? d : "/tmp");
	mkdir(dir, 0700);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rekey_new_key),
		cmocka_unit_test(test_rekey_refusals),
		cmocka_unit_test(sweep_sca),
		cmocka_unit_test(sweep_supermem),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
