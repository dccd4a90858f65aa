/* test_dlopen.c -- libspm.so loaded with dlopen() (argv[1]), as a plugin or a
 * language binding loads it: its initial-exec thread-local state fits the
 * static TLS the C library keeps for that, the per-thread error messages
 * (heap buffers behind a pthread key) stay per thread and are freed with
 * their thread, and load/unload cycles do not use up the process's keys. */
#include <dlfcn.h>
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

#define POOL_SIZE (4u << 20)

static const char *lib_path;

/* The API through dlsym. */
struct api {
	void *handle;
	int (*create)(spm_pool **, const char *, size_t, const char *);
	int (*open)(spm_pool **, const char *, const char *);
	int (*close)(spm_pool *);
	void *(*root)(spm_pool *, size_t);
	int (*tx_begin)(spm_pool *);
	int (*tx_add)(spm_pool *, const void *, size_t);
	int (*tx_commit)(spm_pool *);
	const char *(*errormsg)(void);
};

static void *sym(void *h, const char *name)
{
	void *p = dlsym(h, name);
	if (!p)
		fail_msg("dlsym %s: %s", name, dlerror());
	return p;
}

static void api_load(struct api *a)
{
	a->handle = dlopen(lib_path, RTLD_NOW | RTLD_LOCAL);
	if (!a->handle)
		fail_msg("dlopen %s: %s", lib_path, dlerror());
	*(void **)&a->create = sym(a->handle, "spm_create");
	*(void **)&a->open = sym(a->handle, "spm_open");
	*(void **)&a->close = sym(a->handle, "spm_close");
	*(void **)&a->root = sym(a->handle, "spm_root");
	*(void **)&a->tx_begin = sym(a->handle, "spm_tx_begin");
	*(void **)&a->tx_add = sym(a->handle, "spm_tx_add");
	*(void **)&a->tx_commit = sym(a->handle, "spm_tx_commit");
	*(void **)&a->errormsg = sym(a->handle, "spm_errormsg");
}

static void pool_path(char *buf, size_t n, const char *tag)
{
	const char *dir = getenv("SPM_TEST_DIR");
	snprintf(buf, n, "%s/dlopen-%ld-%s", dir && *dir ? dir : "/tmp", (long)getpid(), tag);
}

/* A thread that makes an error of its own. */
struct errer {
	struct api *a;
	const char *path;
	int rc;
	char msg[1100];
};

static void *make_error(void *arg)
{
	struct errer *e = arg;
	spm_pool *p;
	if (e->a->errormsg()[0] != '\0')
		e->rc = 1; /* a new thread starts with no message */
	else
		e->rc = e->a->open(&p, e->path, NULL);
	snprintf(e->msg, sizeof(e->msg), "%s", e->a->errormsg());
	return NULL;
}

/* transactions -- create, a transaction, a refused nested begin with its
 * message, close, reopen: the library works when loaded with dlopen(). */
static void transactions(void **state)
{
	(void)state;
	struct api a;
	api_load(&a);
	char path[4096];
	pool_path(path, sizeof(path), "tx");
	remove_pool_files(path);
	spm_pool *p;
	assert_int_equal(a.create(&p, path, POOL_SIZE, "design=sca"), 0);
	uint64_t *r = a.root(p, 64);
	assert_non_null(r);
	for (uint64_t i = 1; i <= 100; i++) {
		assert_int_equal(a.tx_begin(p), 0);
		assert_int_equal(a.tx_add(p, r, 8), 0);
		*r = i;
		assert_int_equal(a.tx_commit(p), 0);
	}
	assert_int_equal(a.tx_begin(p), 0);
	assert_int_equal(a.tx_begin(p), SPM_E_TXSTATE);
	assert_non_null(strstr(a.errormsg(), "already in a transaction"));
	assert_int_equal(a.tx_commit(p), 0);
	assert_int_equal(a.close(p), 0);
	assert_int_equal(a.open(&p, path, NULL), 0);
	r = a.root(p, 64);
	assert_int_equal(*r, 100);
	assert_int_equal(a.close(p), 0);
	remove_pool_files(path);
	assert_int_equal(dlclose(a.handle), 0);
}

/* messages_per_thread -- each thread sees its own last message; a thread's
 * buffer is freed when it exits (the sanitizer build's leak check). */
static void messages_per_thread(void **state)
{
	(void)state;
	struct api a;
	api_load(&a);
	char path[4096], missing[4096];
	pool_path(path, sizeof(path), "notpool");
	pool_path(missing, sizeof(missing), "missing");
	remove_pool_files(missing);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	for (int i = 0; i < 8192; i++)
		fputc('x', f);
	fclose(f);
	spm_pool *p;
	/* this thread: a missing pool */
	assert_true(a.open(&p, missing, NULL) < 0);
	char mine[1100];
	snprintf(mine, sizeof(mine), "%s", a.errormsg());
	assert_non_null(strstr(mine, missing));
	/* other threads: a file that is no pool, each with its own message */
	for (int t = 0; t < 4; t++) {
		struct errer e = {.a = &a, .path = path};
		pthread_t th;
		assert_int_equal(pthread_create(&th, NULL, make_error, &e), 0);
		pthread_join(th, NULL);
		assert_true(e.rc < 0);
		assert_non_null(strstr(e.msg, path));
		assert_string_not_equal(e.msg, mine);
	}
	assert_string_equal(a.errormsg(), mine); /* unchanged by theirs */
	unlink(path);
	assert_int_equal(dlclose(a.handle), 0);
}

/* reload_cycles -- more dlopen/dlclose cycles than a process has pthread
 * keys (1024), an error message in each: the library is never unloaded
 * (-z nodelete), so its key is made once and messages keep working. */
static void reload_cycles(void **state)
{
	(void)state;
	char missing[4096];
	pool_path(missing, sizeof(missing), "reload-missing");
	remove_pool_files(missing);
	for (int i = 0; i < 1100; i++) {
		struct api a;
		api_load(&a);
		spm_pool *p;
		assert_true(a.open(&p, missing, NULL) < 0);
		if (!strstr(a.errormsg(), missing))
			fail_msg("cycle %d: message \"%s\"", i, a.errormsg());
		assert_int_equal(dlclose(a.handle), 0);
	}
	pthread_key_t k;
	assert_int_equal(pthread_key_create(&k, NULL), 0); /* keys are left */
	pthread_key_delete(k);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s LIBSPM_SO\n", argv[0]);
		return 2;
	}
	lib_path = argv[1];
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(transactions),
		cmocka_unit_test(messages_per_thread),
		cmocka_unit_test(reload_cycles),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
