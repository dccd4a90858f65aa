/* test_ctr_cache.c -- the counter cache (emu/ctr_cache.c): hits, misses, LRU victims, dirty state, flush, invalidate, sizes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "spm.h"
#include "emu_internal.h"

#define NO_VICTIM 0xdeadbeefull

/* A small cache for the tests: 1 KiB = 16 lines, 4 ways, so 4 sets; line
 * cl lives in set cl % 4. */
enum { KIB = 1, WAYS = 4, SETS = 4 };

static void small_cache(struct ctr_cache *c)
{
	memset(c, 0, sizeof(*c));
	assert_int_equal(cc_init(c, KIB, WAYS), 0);
	assert_int_equal(c->ways, WAYS);
	assert_int_equal(c->sets, SETS);
}

/* access -- cc_access; *victim is NO_VICTIM when none was reported. */
static enum cc_result access_line(struct ctr_cache *c, uint64_t cl, int dirty,
				  uint64_t *victim, int *victim_dirty)
{
	*victim = NO_VICTIM;
	*victim_dirty = -1;
	return cc_access(c, cl, dirty, victim, victim_dirty);
}

/* expect_miss -- a miss reporting victim (NO_VICTIM: none) with dirtiness vd. */
static void expect_miss(struct ctr_cache *c, uint64_t cl, int dirty, uint64_t victim,
			int vd)
{
	uint64_t v;
	int d;
	assert_int_equal(access_line(c, cl, dirty, &v, &d), CC_MISS);
	assert_int_equal(v, victim);
	assert_int_equal(d, vd);
}

static void expect_hit(struct ctr_cache *c, uint64_t cl, int dirty)
{
	uint64_t v;
	int d;
	assert_int_equal(access_line(c, cl, dirty, &v, &d), CC_HIT);
	assert_int_equal(v, NO_VICTIM);
	assert_int_equal(d, 0);
}

/* A first access misses without a victim, the next ones hit. */
static void test_miss_then_hit(void **state)
{
	(void)state;
	struct ctr_cache c;
	small_cache(&c);
	expect_miss(&c, 5, 0, NO_VICTIM, 0);
	expect_hit(&c, 5, 0);
	expect_hit(&c, 5, 1);
	expect_miss(&c, 9, 0, NO_VICTIM, 0); /* same set as 5, a free way */
	expect_hit(&c, 9, 0);
	expect_hit(&c, 5, 0);
	expect_miss(&c, 6, 0, NO_VICTIM, 0); /* another set */
	cc_fini(&c);
	assert_null(c.way);
}

/* Filling a set's ways, touching some, evicts the least recently used. */
static void test_lru_victim(void **state)
{
	(void)state;
	struct ctr_cache c;
	small_cache(&c);
	/* set 0 gets 0, 4, 8, 12; set 1 gets 1 */
	expect_miss(&c, 0, 0, NO_VICTIM, 0);
	expect_miss(&c, 4, 0, NO_VICTIM, 0);
	expect_miss(&c, 1, 0, NO_VICTIM, 0);
	expect_miss(&c, 8, 0, NO_VICTIM, 0);
	expect_miss(&c, 12, 0, NO_VICTIM, 0);
	/* touch 0 and 8: LRU order is now 4, 12, 0, 8 */
	expect_hit(&c, 0, 0);
	expect_hit(&c, 8, 0);
	expect_miss(&c, 16, 0, 4, 0);
	expect_miss(&c, 20, 0, 12, 0);
	expect_hit(&c, 8, 0); /* order: 0, 16, 20, 8 */
	expect_miss(&c, 24, 0, 0, 0);
	expect_miss(&c, 28, 0, 16, 0);
	/* the evicted lines miss, the others still hit */
	expect_hit(&c, 8, 0);
	expect_hit(&c, 20, 0);
	expect_hit(&c, 24, 0);
	expect_hit(&c, 28, 0);
	/* set 1 was never disturbed by set 0's evictions */
	expect_hit(&c, 1, 0);
	/* and 4 comes back as a miss, evicting the LRU of set 0 (8) */
	expect_miss(&c, 4, 0, 8, 0);
	cc_fini(&c);
}

/* A fully associative cache (one set) keeps LRU over all its ways. */
static void test_lru_one_set(void **state)
{
	(void)state;
	struct ctr_cache c;
	assert_int_equal(cc_init(&c, 1, 16), 0);
	assert_int_equal(c.sets, 1);
	for (uint64_t i = 0; i < 16; i++)
		expect_miss(&c, 100 + i, 0, NO_VICTIM, 0);
	for (uint64_t i = 0; i < 16; i += 2) /* touch the even ones */
		expect_hit(&c, 100 + i, 0);
	for (uint64_t i = 1; i < 16; i += 2) /* odd ones go first, oldest first */
		expect_miss(&c, 200 + i, 0, 100 + i, 0);
	expect_miss(&c, 300, 0, 100, 0);
	cc_fini(&c);
}

/* A dirty victim is reported dirty; dirt sticks across clean hits and is added by dirty hits. */
static void test_dirty_victim(void **state)
{
	(void)state;
	struct ctr_cache c;
	small_cache(&c);
	expect_miss(&c, 0, 1, NO_VICTIM, 0); /* dirty */
	expect_miss(&c, 4, 0, NO_VICTIM, 0); /* clean */
	expect_miss(&c, 8, 0, NO_VICTIM, 0); /* clean, then dirtied by a hit */
	expect_miss(&c, 12, 1, NO_VICTIM, 0); /* dirty, then hit clean */
	expect_hit(&c, 0, 0);
	expect_hit(&c, 4, 0);
	expect_hit(&c, 8, 1);
	expect_hit(&c, 12, 0);
	/* LRU order 0, 4, 8, 12 */
	expect_miss(&c, 16, 0, 0, 1);
	expect_miss(&c, 20, 0, 4, 0);
	expect_miss(&c, 24, 0, 8, 1);
	expect_miss(&c, 28, 0, 12, 1);
	/* re-inserted clean: a victim's dirt does not pass to the newcomer */
	expect_miss(&c, 32, 0, 16, 0);
	cc_fini(&c);
}

/* cc_clean returns 1 only for a cached dirty line, and cleans it. */
static void test_clean(void **state)
{
	(void)state;
	struct ctr_cache c;
	small_cache(&c);
	assert_int_equal(cc_clean(&c, 3), 0); /* not cached */
	expect_miss(&c, 3, 1, NO_VICTIM, 0);
	expect_miss(&c, 7, 0, NO_VICTIM, 0);
	assert_int_equal(cc_clean(&c, 7), 0); /* cached clean */
	assert_int_equal(cc_clean(&c, 11), 0); /* same set, not cached */
	assert_int_equal(cc_clean(&c, 3), 1); /* cached dirty */
	assert_int_equal(cc_clean(&c, 3), 0); /* now clean */
	expect_hit(&c, 3, 0);                 /* still cached */
	expect_hit(&c, 3, 1);                 /* dirty again */
	assert_int_equal(cc_clean(&c, 3), 1);
	/* fill set 3 (3, 7, 15, 19; LRU 7, 3, 15, 19): the cleaned line is evicted clean */
	expect_miss(&c, 15, 0, NO_VICTIM, 0);
	expect_miss(&c, 19, 0, NO_VICTIM, 0);
	expect_miss(&c, 23, 0, 7, 0);
	expect_miss(&c, 27, 0, 3, 0);
	cc_fini(&c);
}

struct visits {
	uint64_t cl[64];
	unsigned n;
};

static void record(void *arg, uint64_t cl)
{
	struct visits *v = arg;
	assert_true(v->n < 64);
	v->cl[v->n++] = cl;
}

/* times -- how often cl was visited. */
static unsigned times(const struct visits *v, uint64_t cl)
{
	unsigned k = 0;
	for (unsigned i = 0; i < v->n; i++)
		k += v->cl[i] == cl;
	return k;
}

/* cc_flush_all visits exactly the dirty lines, once each, and cleans them. */
static void test_flush_all(void **state)
{
	(void)state;
	struct ctr_cache c;
	small_cache(&c);
	/* 16 lines fill the cache; every third is dirty, one more dirtied by a hit,
	 * one cleaned by cc_clean, and one dirty line evicted before the flush */
	for (uint64_t cl = 0; cl < 16; cl++)
		expect_miss(&c, cl, cl % 3 == 0, NO_VICTIM, 0);
	expect_hit(&c, 1, 1);
	assert_int_equal(cc_clean(&c, 6), 1);
	/* set 3 holds 3, 7, 11, 15 in LRU order; 3 (dirty) is evicted */
	expect_miss(&c, 19, 0, 3, 1);
	struct visits v = {.n = 0};
	cc_flush_all(&c, record, &v);
	const uint64_t dirty[] = {0, 1, 9, 12, 15};
	assert_int_equal(v.n, sizeof(dirty) / sizeof(dirty[0]));
	for (size_t i = 0; i < sizeof(dirty) / sizeof(dirty[0]); i++)
		assert_int_equal(times(&v, dirty[i]), 1);
	/* all clean now: a second flush visits nothing, cc_clean finds nothing */
	struct visits w = {.n = 0};
	cc_flush_all(&c, record, &w);
	assert_int_equal(w.n, 0);
	for (uint64_t cl = 0; cl < 20; cl++)
		assert_int_equal(cc_clean(&c, cl), 0);
	/* the lines stay cached */
	expect_hit(&c, 0, 0);
	expect_hit(&c, 19, 0);
	cc_fini(&c);
}

/* cc_invalidate_all empties the cache: misses, no victims, nothing to flush. */
static void test_invalidate_all(void **state)
{
	(void)state;
	struct ctr_cache c;
	small_cache(&c);
	for (uint64_t cl = 0; cl < 16; cl++)
		expect_miss(&c, cl, 1, NO_VICTIM, 0);
	cc_invalidate_all(&c);
	struct visits v = {.n = 0};
	cc_flush_all(&c, record, &v);
	assert_int_equal(v.n, 0);
	assert_int_equal(cc_clean(&c, 5), 0);
	for (uint64_t cl = 0; cl < 16; cl++)
		expect_miss(&c, cl, 0, NO_VICTIM, 0);
	/* and LRU works afresh */
	expect_hit(&c, 0, 0);
	expect_miss(&c, 16, 0, 4, 0);
	cc_fini(&c);
}

/* Zero sizes and more ways than lines are SPM_E_OPTION; good sizes are accepted. */
static void test_bad_sizes(void **state)
{
	(void)state;
	struct {
		unsigned kib, ways;
	} bad[] = {{0, 16}, {16, 0}, {0, 0}, {1, 17}, {1, 1024}, {2, 33}};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct ctr_cache c;
		memset(&c, 0, sizeof(c));
		emu_err_clear();
		assert_int_equal(cc_init(&c, bad[i].kib, bad[i].ways), SPM_E_OPTION);
		assert_null(c.way);
		assert_true(emu_errmsg()[0] != '\0');
	}
	struct {
		unsigned kib, ways;
	} good[] = {{1, 1}, {1, 16}, {2, 32}, {1024, 16}, {256, 8}};
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		struct ctr_cache c;
		assert_int_equal(cc_init(&c, good[i].kib, good[i].ways), 0);
		assert_non_null(c.way);
		assert_int_equal((uint64_t)c.sets * c.ways, (uint64_t)good[i].kib * 1024 / 64);
		cc_fini(&c);
	}
}

/* A direct-mapped cache (1 way): every conflicting line evicts the previous one. */
static void test_direct_mapped(void **state)
{
	(void)state;
	struct ctr_cache c;
	assert_int_equal(cc_init(&c, 1, 1), 0);
	assert_int_equal(c.sets, 16);
	expect_miss(&c, 3, 1, NO_VICTIM, 0);
	expect_miss(&c, 4, 0, NO_VICTIM, 0);
	expect_miss(&c, 19, 0, 3, 1);
	expect_hit(&c, 4, 0);
	expect_miss(&c, 35, 0, 19, 0);
	cc_fini(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_miss_then_hit),
		cmocka_unit_test(test_lru_victim),
		cmocka_unit_test(test_lru_one_set),
		cmocka_unit_test(test_dirty_victim),
		cmocka_unit_test(test_clean),
		cmocka_unit_test(test_flush_all),
		cmocka_unit_test(test_invalidate_all),
		cmocka_unit_test(test_bad_sizes),
		cmocka_unit_test(test_direct_mapped),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
