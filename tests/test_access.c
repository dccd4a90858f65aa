/*
 * test_access.c -- an instrumented program's accesses reaching the core
 * model (lib/instrument.c, lib/access.c).  This test is itself built with
 * spm_instrument(): its loads and stores of a view are the ones modeled.
 *   - a child of fork() models nothing of its parent's pool: its stores to
 *     the inherited view never reach the parent's controller (a natural
 *     eviction there would write the parent's data file under counters the
 *     parent uses again: reused pads);
 *   - a thread's repeated accesses to one line, counted in the entry points
 *     as L1 hits, are checked when reported: another thread on the same
 *     core moved the line out meanwhile, so the first is a miss;
 *   - an address in no view (the window spans the gaps between views) is
 *     refused by spm_access, which takes nothing: the access is core work.
 * Pools use tiny caches (l1_kib=1: 16 lines, llc_kib=4: 64 lines).
 */
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
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

#include "access.h"
#include "spm.h"
#include "test_files.h"

#define POOL_SIZE (8u << 20)
#define TINY "design=sca;l1_kib=1;llc_kib=4"

static void pool_path(char *buf, size_t n, const char *tag)
{
	const char *dir = getenv("SPM_TEST_DIR");
	snprintf(buf, n, "%s/access-%ld-%s", dir && *dir ? dir : "/tmp", (long)getpid(), tag);
}

/* Not instrumented (NOT_MODELED): the counts this test checks are not
 * moved by its own bookkeeping's accesses. */
#define NOT_MODELED __attribute__((no_sanitize("thread"), noinline))

NOT_MODELED static uint64_t stat_of(spm_pool *p, const char *name)
{
	uint64_t v = 0;
	assert_int_equal(spm_stat(p, name, &v), 0);
	return v;
}

/* read_file -- the whole of path, malloc'd; its length in *len. */
static uint8_t *read_file(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	off_t end = lseek(fd, 0, SEEK_END);
	assert_true(end > 0);
	uint8_t *buf = malloc((size_t)end);
	assert_non_null(buf);
	assert_int_equal(pread(fd, buf, (size_t)end, 0), end);
	close(fd);
	*len = (size_t)end;
	return buf;
}

/* The child of fork() stores to 4096 lines of the inherited view and
 * exits: the parent's data file is as it was. */
static void fork_child_models_nothing(void **state)
{
	(void)state;
	char path[4096];
	pool_path(path, sizeof(path), "fork");
	spm_pool *p = fresh_pool(path, POOL_SIZE, TINY);
	volatile uint8_t *v = spm_ptr(p, 1u << 20);
	assert_non_null((void *)v);
	for (unsigned i = 0; i < 256; i++) /* the parent's own accesses */
		v[i * 64] = (uint8_t)i;
	spm_persist(p, (void *)v, 256 * 64);
	assert_true(stat_of(p, "core.stores") >= 256);
	size_t len0, len1;
	uint8_t *before = read_file(path, &len0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		for (unsigned i = 0; i < 4096; i++)
			v[i * 64] = (uint8_t)(i + 7);
		_exit(0);
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	uint8_t *after = read_file(path, &len1);
	assert_int_equal(len0, len1);
	assert_memory_equal(before, after, len0);
	free(before);
	free(after);
	assert_int_equal(spm_close(p), 0);
	remove_pool_files(path);
}

struct sweep {
	volatile uint8_t *base;
	unsigned lines;
};

/* sweep_lines -- load lines 1..n of base (a thread on core 0 too). */
static void *sweep_lines(void *arg)
{
	struct sweep *s = arg;
	unsigned sum = 0;
	for (unsigned i = 1; i <= s->lines; i++)
		sum += s->base[i * 64];
	return (void *)(uintptr_t)sum;
}

/* A loads line X; thread B (core 0 as well) loads 200 other lines, which
 * moves X out of L1 and the LLC; A loads X 100 more times, which the entry
 * points count as repeats of A's last line: reported, the first of them is
 * an L1 miss and a memory read. */
static void shared_core_repeats(void **state)
{
	(void)state;
	char path[4096];
	pool_path(path, sizeof(path), "repeat");
	spm_pool *p = fresh_pool(path, POOL_SIZE, TINY);
	volatile uint8_t *x = spm_ptr(p, 1u << 20);
	assert_non_null((void *)x);
	spm_stat_reset(p);
	unsigned sum = x[0];
	uint64_t misses0 = stat_of(p, "l1.misses"), reads0 = stat_of(p, "mem.reads");
	assert_int_equal(misses0, 1);
	struct sweep s = {x, 200};
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, sweep_lines, &s), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	for (unsigned i = 0; i < 100; i++)
		sum += x[8];
	uint64_t misses = stat_of(p, "l1.misses"), reads = stat_of(p, "mem.reads");
	assert_int_equal(misses, misses0 + 200 + 1);
	assert_int_equal(reads, reads0 + 200 + 1);
	assert_int_equal(stat_of(p, "core.loads"), 1 + 200 + 100);
	(void)sum;
	assert_int_equal(spm_close(p), 0);
	remove_pool_files(path);
}

/* spm_access of an address in no view returns 0 and takes nothing. */
NOT_MODELED static void no_view_refused(void **state)
{
	(void)state;
	char path[4096];
	pool_path(path, sizeof(path), "gap");
	spm_pool *p = fresh_pool(path, POOL_SIZE, TINY);
	uint8_t *other = mmap(NULL, 1u << 20, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(other != MAP_FAILED);
	spm_stat_reset(p);
	struct spm_access_pending pending = {5, 0, 0, NULL};
	assert_int_equal(spm_access(other + 4096, 8, 1, &pending, 1), 0);
	assert_int_equal(stat_of(p, "core.accesses"), 0);
	uint8_t *in = spm_ptr(p, 2u << 20);
	assert_int_equal(spm_access(in, 8, 1, &pending, 1), 1);
	assert_int_equal(stat_of(p, "core.accesses"), 5 + 1);
	munmap(other, 1u << 20);
	assert_int_equal(spm_close(p), 0);
	remove_pool_files(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fork_child_models_nothing),
		cmocka_unit_test(shared_core_repeats),
		cmocka_unit_test(no_view_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
