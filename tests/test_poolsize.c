/* test_poolsize.c -- modeled results do not depend on the pool's size: the same transactions and persists on the same offsets of an 8 MiB and a 40 MiB pool give the same modeled time and media writes (a counter line's bank once followed the pool's last line), for sca, supermem and both counter placements that are not tied to the data's bank. */
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

/* sizes whose line counts XOR-fold to different banks (8 and 64 MiB, 2^17
 * and 2^20 lines, fold alike under the sca profile's bank hash) */
#define SMALL (8u << 20)
#define LARGE (40u << 20)
#define REGION_OFF (4u << 20) /* in the heap of both pools */
#define REGION (2u << 20)
#define OPS 400

/* pool_path -- a pool path in SPM_TEST_DIR (or /tmp) for this process. */
static void pool_path(char *buf, size_t n, const char *tag)
{
	const char *dir = getenv("SPM_TEST_DIR");
	if (!dir || !*dir)
		dir = "/tmp";
	snprintf(buf, n, "%s/ps-%ld-%s", dir, (long)getpid(), tag);
}

/* stat_of -- statistic name of p. */
static uint64_t stat_of(spm_pool *p, const char *name)
{
	uint64_t v = UINT64_MAX;
	assert_int_equal(spm_stat(p, name, &v), 0);
	return v;
}

struct result {
	uint64_t modeled_ns, writes, counter_writes, stalls;
};

/*
 * run -- a pool of size bytes made with opts; from its statistics reset on,
 * OPS transactions of four 64-byte records each at pseudo-random offsets of
 * the region at REGION_OFF, and after every fourth a plain 256-byte store
 * persisted: the same offsets whatever the size.
 */
static struct result run(const char *opts, size_t size)
{
	char path[4096];
	pool_path(path, sizeof(path), "run");
	spm_pool *p = fresh_pool(path, size, opts);
	uint8_t *region = spm_ptr(p, REGION_OFF);
	assert_non_null(region);
	spm_stat_reset(p);
	uint64_t rng = 0x9e3779b97f4a7c15ull;
	for (unsigned i = 0; i < OPS; i++) {
		assert_int_equal(spm_tx_begin(p), 0);
		for (unsigned r = 0; r < 4; r++) {
			rng = rng * 6364136223846793005ull + 1442695040888963407ull;
			uint8_t *at = region + (size_t)((rng >> 33) % (REGION / 64)) * 64;
			assert_int_equal(spm_tx_add(p, at, 64), 0);
			memset(at, (int)(rng >> 56), 64);
		}
		assert_int_equal(spm_tx_commit(p), 0);
		if (i % 4 == 3) {
			uint8_t *at = region + (size_t)((rng >> 20) % (REGION / 256)) * 256;
			memset(at, (int)i, 256);
			spm_persist(p, at, 256);
		}
	}
	struct result res = {stat_of(p, "time.modeled_ns"), stat_of(p, "media.writes"),
			     stat_of(p, "media.writes.counter"), stat_of(p, "wpq.stalls")};
	assert_int_equal(spm_close(p), 0);
	remove_pool_files(path);
	return res;
}

/* same_in_both -- opts on a small and a large pool give the same results. */
static void same_in_both(const char *opts)
{
	struct result a = run(opts, SMALL), b = run(opts, LARGE);
	/* the sequence did write counters and time passed */
	assert_true(a.modeled_ns > 0 && a.counter_writes > 0);
	if (a.modeled_ns != b.modeled_ns || a.writes != b.writes ||
	    a.counter_writes != b.counter_writes || a.stalls != b.stalls)
		fail_msg("%s: %u MiB: %llu ns, %llu writes (%llu counter), %llu stalls; "
			 "%u MiB: %llu ns, %llu writes (%llu counter), %llu stalls",
			 opts, SMALL >> 20, (unsigned long long)a.modeled_ns,
			 (unsigned long long)a.writes, (unsigned long long)a.counter_writes,
			 (unsigned long long)a.stalls, LARGE >> 20,
			 (unsigned long long)b.modeled_ns, (unsigned long long)b.writes,
			 (unsigned long long)b.counter_writes, (unsigned long long)b.stalls);
}

/* sca: counter lines interleaved like the data (CP_INTERLEAVE). */
static void test_sca(void **state)
{
	(void)state;
	same_in_both("design=sca");
}

/* supermem: counter lines in the bank across from their data's (XBank). */
static void test_supermem(void **state)
{
	(void)state;
	same_in_both("design=supermem");
}

/* SingleBank with line-interleaved banks: the one counter bank. */
static void test_single(void **state)
{
	(void)state;
	same_in_both("design=sca;ctr_placement=single");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sca),
		cmocka_unit_test(test_supermem),
		cmocka_unit_test(test_single),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
