/*
 * test_test_knobs.c -- the knobs that exist for tests only are refused in a
 * normal run: ctr_recovery=none (pads reused after a crash), SPM_AUDIT (a
 * checksum of every plaintext line in a file) and SPM_POWERFAIL (written
 * lines put back) need SPM_TEST_KNOBS=1, from SPM_CONF and from the options
 * argument alike, and nothing is created or changed when they are refused.
 * SPM_CRASH=point:NAME with a NAME not in the list of crash points is
 * refused, naming the points, on stderr and by spm_create and spm_open; every
 * listed name is accepted, and a crash point hit that the list lacks stops
 * the process.
 *
 * SPM_CRASH and SPM_POWERFAIL are parsed once per process, so their cases run
 * in children (this program run again, with --child) that report spm's
 * result and message on their stderr, a pipe to the parent.
 */
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

#include "emu.h"
#include "test_files.h"

#define POOL_SIZE (4u << 20)

static char dir[2048];

/* pool_path -- a pool file name of this process in the test directory. */
static void pool_path(char *out, size_t n, const char *tag)
{
	snprintf(out, n, "%s/knobs_%ld_%s", dir, (long)getpid(), tag);
}

/* knobs -- the test switch on or off. */
static void knobs(int on)
{
	if (on)
		assert_int_equal(setenv("SPM_TEST_KNOBS", "1", 1), 0);
	else
		assert_int_equal(unsetenv("SPM_TEST_KNOBS"), 0);
}

/* create_rc -- spm_create's result with opts (closed again if made). */
static int create_rc(const char *path, const char *opts)
{
	spm_pool *p = NULL;
	remove_pool_files(path);
	int rc = spm_create(&p, path, POOL_SIZE, opts);
	if (rc == 0)
		assert_int_equal(spm_close(p), 0);
	return rc;
}

/* open_rc -- spm_open's result with opts (closed again if open). */
static int open_rc(const char *path, const char *opts)
{
	spm_pool *p = NULL;
	int rc = spm_open(&p, path, opts);
	if (rc == 0)
		assert_int_equal(spm_close(p), 0);
	return rc;
}

/* assert_msg_has -- spm_errormsg() names s. */
static void assert_msg_has(const char *s)
{
	if (!strstr(spm_errormsg(), s))
		fail_msg("message \"%s\" does not name \"%s\"", spm_errormsg(), s);
}

/* assert_unchanged -- the pool's three files are as img saw them. */
static void assert_unchanged(const char *path, const struct pool_image *img)
{
	char f[4300];
	for (unsigned i = 0; i < 3; i++) {
		pool_file(f, sizeof(f), path, i);
		assert_file_is(f, img->bytes[i], img->len[i]);
	}
}

/* ctr_recovery=none: refused without the switch from SPM_CONF and from the
 * options (no files left), accepted with it; advance is no test knob. */
static void test_ctr_recovery_none(void **state)
{
	(void)state;
	char path[2200];
	pool_path(path, sizeof(path), "ctr");
	knobs(0);
	assert_int_equal(setenv("SPM_CONF", "ctr_recovery=none", 1), 0);
	assert_int_equal(create_rc(path, NULL), SPM_E_OPTION);
	assert_msg_has("SPM_CONF: ctr_recovery=none");
	assert_msg_has("SPM_TEST_KNOBS=1");
	assert_int_equal(access(path, F_OK), -1);
	assert_int_equal(unsetenv("SPM_CONF"), 0);
	assert_int_equal(create_rc(path, "design=unsafe;ctr_recovery=none"), SPM_E_OPTION);
	assert_int_equal(access(path, F_OK), -1);
	assert_int_equal(create_rc(path, "ctr_recovery=advance"), 0);
	assert_int_equal(open_rc(path, "ctr_recovery=none"), SPM_E_OPTION);
	/* the switch must say 1 */
	assert_int_equal(setenv("SPM_TEST_KNOBS", "yes", 1), 0);
	assert_int_equal(open_rc(path, "ctr_recovery=none"), SPM_E_OPTION);
	knobs(1);
	assert_int_equal(setenv("SPM_CONF", "ctr_recovery=none", 1), 0);
	assert_int_equal(open_rc(path, NULL), 0);
	assert_int_equal(create_rc(path, NULL), 0);
	assert_int_equal(unsetenv("SPM_CONF"), 0);
	remove_pool_files(path);
}

/* SPM_AUDIT: refused without the switch at create (no files) and at open
 * (no file changed, no audit file made); with it, pads are recorded. */
static void test_audit_gated(void **state)
{
	(void)state;
	char path[2200], audit[2300];
	struct pool_image img = {0};
	pool_path(path, sizeof(path), "audit");
	snprintf(audit, sizeof(audit), "%s.audit", path);
	unlink(audit);
	knobs(0);
	assert_int_equal(create_rc(path, NULL), 0);
	pool_save(path, &img);
	assert_int_equal(setenv("SPM_AUDIT", audit, 1), 0);
	assert_int_equal(open_rc(path, NULL), SPM_E_OPTION);
	assert_msg_has("SPM_AUDIT");
	assert_msg_has("SPM_TEST_KNOBS=1");
	assert_unchanged(path, &img);
	assert_int_equal(access(audit, F_OK), -1);
	assert_int_equal(create_rc(path, NULL), SPM_E_OPTION);
	assert_int_equal(access(path, F_OK), -1);
	knobs(1);
	assert_int_equal(create_rc(path, NULL), 0);
	size_t len = 0;
	free(slurp(audit, &len));
	assert_true(len > 0);
	assert_int_equal(unsetenv("SPM_AUDIT"), 0);
	unlink(audit);
	pool_image_free(&img);
	remove_pool_files(path);
}

/* A child's report: its exit status and what it wrote to stderr. */
struct child {
	int status;
	char err[8192];
};

/* child_main -- in the child: spm_create or spm_open of path, "rc=<code>
 * msg=<message>" on stderr; or (unlisted) hit a listed and an unlisted
 * crash point. */
static int child_main(const char *action, const char *path)
{
	if (strcmp(action, "unlisted") == 0) {
		emu_crash_init();
		emu_crash_point("wpq.ready"); /* listed: counted */
		emu_crash_point("no.such.point");
		return 0;
	}
	spm_pool *p = NULL;
	int rc = strcmp(action, "create") == 0 ? spm_create(&p, path, POOL_SIZE, NULL)
					       : spm_open(&p, path, NULL);
	fprintf(stderr, "rc=%d msg=%s\n", rc, spm_errormsg());
	if (rc == 0)
		spm_close(p);
	return 0;
}

/* run_child -- this program run again with SPM_CRASH, SPM_POWERFAIL (NULL:
 * unset) and the switch (on) to do action on path; its stderr and status
 * into c. */
static void run_child(const char *crash, const char *power, int on, const char *action,
		      const char *path, struct child *c)
{
	int fd[2];
	assert_int_equal(pipe(fd), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(fd[1], 2);
		close(fd[0]);
		close(fd[1]);
		(crash ? setenv("SPM_CRASH", crash, 1) : unsetenv("SPM_CRASH"));
		(power ? setenv("SPM_POWERFAIL", power, 1) : unsetenv("SPM_POWERFAIL"));
		(on ? setenv("SPM_TEST_KNOBS", "1", 1) : unsetenv("SPM_TEST_KNOBS"));
		execl("/proc/self/exe", "test_test_knobs", "--child", action, path,
		      (char *)NULL);
		_exit(127);
	}
	close(fd[1]);
	size_t n = 0;
	ssize_t r;
	while (n < sizeof(c->err) - 1 && (r = read(fd[0], c->err + n, sizeof(c->err) - 1 - n)) > 0)
		n += (size_t)r;
	c->err[n] = '\0';
	close(fd[0]);
	assert_int_equal(waitpid(pid, &c->status, 0), pid);
}

/* rc_of -- the code the child reported. */
static int rc_of(const struct child *c)
{
	const char *s = strstr(c->err, "rc=");
	int rc = 1;
	if (!s || sscanf(s, "rc=%d", &rc) != 1)
		fail_msg("no rc in the child's stderr: %s", c->err);
	return rc;
}

/* SPM_POWERFAIL: refused without the switch, accepted with it. */
static void test_powerfail_gated(void **state)
{
	(void)state;
	static struct child c;
	char path[2200];
	pool_path(path, sizeof(path), "power");
	remove_pool_files(path);
	run_child(NULL, "1:0.5:close", 0, "create", path, &c);
	assert_int_equal(rc_of(&c), SPM_E_OPTION);
	assert_non_null(strstr(c.err, "SPM_POWERFAIL"));
	assert_non_null(strstr(c.err, "SPM_TEST_KNOBS=1"));
	assert_int_equal(access(path, F_OK), -1);
	run_child(NULL, "1:0.5", 1, "create", path, &c);
	assert_int_equal(rc_of(&c), 0);
	remove_pool_files(path);
}

/* A misspelt point is refused at create and at open, with the list of
 * points on stderr and in the message; the pool is left as it was. */
static void test_unknown_point_refused(void **state)
{
	(void)state;
	static struct child c;
	char path[2200];
	struct pool_image img = {0};
	pool_path(path, sizeof(path), "point");
	remove_pool_files(path);
	static const char *const bad[] = {"point:wpq.redy", "point:wpq.redy:2",
					  "point:WPQ.READY", "point:fence.", "point:tx"};
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		run_child(bad[i], NULL, 0, "create", path, &c);
		assert_int_equal(rc_of(&c), SPM_E_OPTION);
		assert_int_equal(access(path, F_OK), -1);
		/* once on stderr by the injector, once in spm_errormsg */
		const char *first = strstr(c.err, "unknown crash point");
		assert_non_null(first);
		assert_non_null(strstr(first + 1, "unknown crash point"));
		for (const char *const *n = emu_crash_point_names; *n; n++)
			assert_non_null(strstr(c.err, *n));
	}
	assert_int_equal(create_rc(path, NULL), 0);
	pool_save(path, &img);
	run_child("point:wpq.redy", NULL, 0, "open", path, &c);
	assert_int_equal(rc_of(&c), SPM_E_OPTION);
	assert_non_null(strstr(c.err, "wpq.ready"));
	assert_unchanged(path, &img);
	pool_image_free(&img);
	remove_pool_files(path);
}

/* Every listed point is accepted (K large: none fires), and the list has
 * no name twice. */
static void test_listed_points_accepted(void **state)
{
	(void)state;
	static struct child c;
	char path[2200], crash[128];
	pool_path(path, sizeof(path), "listed");
	assert_int_equal(create_rc(path, NULL), 0);
	unsigned count = 0;
	for (const char *const *n = emu_crash_point_names; *n; n++, count++) {
		for (const char *const *m = n + 1; *m; m++)
			assert_string_not_equal(*n, *m);
		snprintf(crash, sizeof(crash), "point:%s:1000000000", *n);
		run_child(crash, NULL, 0, "open", path, &c);
		if (rc_of(&c) != 0)
			fail_msg("SPM_CRASH=%s refused: %s", crash, c.err);
	}
	assert_true(count >= 20);
	remove_pool_files(path);
}

/* A crash point that the list lacks stops an armed process (abort). */
static void test_unlisted_point_stops(void **state)
{
	(void)state;
	static struct child c;
	run_child("count", NULL, 0, "unlisted", "-", &c);
	assert_true(WIFSIGNALED(c.status) && WTERMSIG(c.status) == SIGABRT);
	assert_non_null(strstr(c.err, "\"no.such.point\" is not in emu_crash_point_names"));
}

int main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], "--child") == 0)
		return child_main(argv[2], argv[3]);
	const char *d = getenv("SPM_TEST_DIR");
	snprintf(dir, sizeof(dir), "%s", d && *d ? d : "/tmp");
	unsetenv("SPM_CONF");
	unsetenv("SPM_CRASH");
	unsetenv("SPM_AUDIT");
	unsetenv("SPM_POWERFAIL");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ctr_recovery_none),
		cmocka_unit_test(test_audit_gated),
		cmocka_unit_test(test_powerfail_gated),
		cmocka_unit_test(test_unknown_point_refused),
		cmocka_unit_test(test_listed_points_accepted),
		cmocka_unit_test(test_unlisted_point_stops),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
