/*
 * test_abort_nomem.c -- spm_tx_abort restores the transaction's ranges even
 * when no memory can be allocated.  The rollback used to collect the undo
 * entries into vectors it allocated; out of memory it restored nothing, the
 * lane was released with its header still active, the lane's next
 * transaction outranked that header, and the aborted writes became durable
 * (found by a review).  It now rolls back from what the lane recorded as
 * it logged.  This program defines realloc (libspm's vectors grow with it),
 * which fails while abort runs; so it is not built with the sanitizers,
 * which own the allocator.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "test_files.h"
#include <spm.h>

static int no_memory;      /* realloc fails */
static unsigned refused;   /* reallocs failed */

void *realloc(void *ptr, size_t n)
{
	static void *(*real)(void *, size_t);
	if (no_memory) {
		refused++;
		return NULL;
	}
	if (!real)
		*(void **)&real = dlsym(RTLD_NEXT, "realloc");
	return real ? real(ptr, n) : NULL;
}

#define WORDS 64 /* 8 lines */

struct root {
	uint64_t w[WORDS];
	uint64_t other[8]; /* a line of its own */
};

static char pool[2200];

/* abort_out_of_memory -- a transaction snapshots line 0, then lines 0-7 (a
 * range the first does not cover: line 0 is logged twice, the second time
 * modified), is aborted with realloc failing: every word is as before, also
 * after a later transaction on the same lane, a close and an open. */
static void abort_out_of_memory(void **state)
{
	(void)state;
	remove_pool_files(pool);
	spm_pool *p;
	assert_int_equal(spm_create(&p, pool, 8 << 20, "design=sca"), 0);
	struct root *r = spm_root(p, sizeof(*r));
	assert_non_null(r);
	assert_int_equal(spm_tx_begin(p), 0);
	assert_int_equal(spm_tx_add(p, r, sizeof(*r)), 0);
	for (unsigned i = 0; i < WORDS; i++)
		r->w[i] = i + 1;
	assert_int_equal(spm_tx_commit(p), 0);

	assert_int_equal(spm_tx_begin(p), 0);
	assert_int_equal(spm_tx_add(p, &r->w[0], 8), 0);
	r->w[0] = 1000;
	assert_int_equal(spm_tx_add(p, r->w, sizeof(r->w)), 0);
	for (unsigned i = 0; i < WORDS; i++)
		r->w[i] = 2000 + i;
	refused = 0;
	no_memory = 1;
	spm_tx_abort(p);
	no_memory = 0;
	for (unsigned i = 0; i < WORDS; i++)
		assert_int_equal(r->w[i], i + 1);

	/* the lane's next transaction, on another line */
	assert_int_equal(spm_tx_begin(p), 0);
	assert_int_equal(spm_tx_add(p, r->other, 8), 0);
	r->other[0] = 7;
	assert_int_equal(spm_tx_commit(p), 0);
	assert_int_equal(spm_close(p), 0);
	assert_int_equal(spm_open(&p, pool, NULL), 0);
	r = spm_root(p, sizeof(*r));
	assert_non_null(r);
	for (unsigned i = 0; i < WORDS; i++)
		assert_int_equal(r->w[i], i + 1);
	assert_int_equal(r->other[0], 7);
	assert_int_equal(spm_close(p), 0);
	print_message("abort with realloc failing: restored (%u reallocs refused)\n", refused);
	remove_pool_files(pool);
}

int main(void)
{
	const char *base = getenv("SPM_TEST_DIR");
	snprintf(pool, sizeof(pool), "%s/abortnomem-%d", base && *base ? base : "/tmp",
		 (int)getpid());
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(abort_out_of_memory),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
