/* test_zipf.c -- the key distributions of the map workloads (examples/common/ex_keys.c): --keys parsing, Zipfian keys skewed (at theta 0.99 the most drawn of 10000 keys hundreds of times, uniform keys once) and a function of (seed, op index) only, and uniform keys the same op sequence as before the option existed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ex_map.h"

#define DRAWS 10000u

/* one_run -- a context whose run log is one record (no pool: planning an
 * op reads the log only). */
static void one_run(struct ex_ctx *c, struct ex_run *r, uint64_t seed, uint64_t mix,
		    const char *keys)
{
	uint64_t code = 1;
	assert_int_equal(ex_keys_parse(keys, &code), 0);
	*r = (struct ex_run){.seed = seed, .n_ops = DRAWS, .value_size = 64, .mix = mix,
			     .keys = code};
	if (code)
		r->mix |= EX_MIX_ZIPF;
	*c = (struct ex_ctx){.runs = r, .nruns = 1};
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* most_drawn -- how often the most frequent of keys[0..n) occurs (sorts
 * keys); *distinct gets the number of distinct keys. */
static unsigned most_drawn(uint64_t *keys, unsigned n, unsigned *distinct)
{
	qsort(keys, n, sizeof(*keys), cmp_u64);
	unsigned best = 0, run = 0;
	*distinct = 0;
	for (unsigned i = 0; i < n; i++) {
		run = i && keys[i] == keys[i - 1] ? run + 1 : 1;
		*distinct += run == 1;
		if (run > best)
			best = run;
	}
	return best;
}

/* draw -- the keys of ops 0..DRAWS-1 of c's run, in op order. */
static void draw(struct ex_ctx *c, uint64_t *keys)
{
	for (uint64_t j = 0; j < DRAWS; j++) {
		struct ex_map_op op;
		ex_map_plan(c, j, &op);
		keys[j] = op.key;
	}
}

/* --keys: uniform, or zipf:THETA with 0 < THETA < 1; nothing else. */
static void test_parse(void **state)
{
	(void)state;
	static const char *const bad[] = {
		"zipf:0", "zipf:abc", "zipf:-1", "zipf:1", "zipf:1.5", "zipf:", "zipf",
		"zipf:0.5x", "zipf: 0.5", "zipf:nan", "zipf:inf", "zipf:-0.5", "Uniform",
		"", "zipf:1e-400", "zipf:0.0",
	};
	uint64_t code = 7;
	char name[48];
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(ex_keys_parse(bad[i], &code), -1);
	assert_int_equal(ex_keys_parse(NULL, &code), -1);
	assert_int_equal(code, 7); /* untouched by a refusal */
	assert_int_equal(ex_keys_parse("uniform", &code), 0);
	assert_int_equal(code, 0);
	ex_keys_name(code, name, sizeof(name));
	assert_string_equal(name, "uniform");
	assert_int_equal(ex_keys_parse("zipf:0.99", &code), 0);
	assert_true(code != 0 && ex_keys_valid(code));
	ex_keys_name(code, name, sizeof(name));
	assert_string_equal(name, "zipf:0.99");
	assert_int_equal(ex_keys_parse("zipf:.5", &code), 0);
	/* a damaged record's distribution: not a THETA in (0, 1) */
	double one = 1.0, neg = -0.5;
	memcpy(&code, &one, sizeof(code));
	assert_false(ex_keys_valid(code));
	memcpy(&code, &neg, sizeof(code));
	assert_false(ex_keys_valid(code));
	assert_true(ex_keys_valid(0));
}

/* 10000 draws at theta 0.99: the most frequent key hundreds of times (about
 * 1 / zeta(2^20, 0.99), 6.5 %), uniform keys all different. */
static void test_skewed(void **state)
{
	(void)state;
	uint64_t *keys = malloc(DRAWS * sizeof(*keys));
	struct ex_ctx c;
	struct ex_run r;
	unsigned zd, ud;
	assert_non_null(keys);
	one_run(&c, &r, 7, EX_MIX_INSERT, "zipf:0.99");
	draw(&c, keys);
	unsigned zipf = most_drawn(keys, DRAWS, &zd);
	one_run(&c, &r, 7, EX_MIX_INSERT, "uniform");
	draw(&c, keys);
	unsigned uniform = most_drawn(keys, DRAWS, &ud);
	print_message("most drawn key: zipf:0.99 %u times (%u distinct keys), uniform %u "
		      "(%u)\n", zipf, zd, uniform, ud);
	assert_int_equal(uniform, 1);
	assert_true(zipf >= 400 && zipf <= 900);
	assert_true(zd < DRAWS * 3 / 4);
	free(keys);
}

/* Ranks follow Zipf's law: rank 0 drawn with probability 1 / zeta(n,
 * theta), 2^0.99 times as often as rank 1 (these two exactly; the method's
 * closed form for the ranks after approximates, e.g. rank 2 a little more
 * often than 1 / 3^0.99 of rank 0), more often than rank 2; every rank
 * below EX_ZIPF_KEYS. */
static void test_ranks(void **state)
{
	(void)state;
	struct ex_zipf z = {0};
	uint64_t code, n[3] = {0}, x = 1;
	assert_int_equal(ex_keys_parse("zipf:0.99", &code), 0);
	assert_int_equal(ex_zipf_init(&z, code), 0);
	assert_int_equal(ex_zipf_init(&z, 0), -1); /* uniform has no constants */
	for (unsigned i = 0; i < 200000; i++) {
		uint64_t rank = ex_zipf_rank(&z, ex_mix64(x++));
		assert_true(rank < EX_ZIPF_KEYS);
		if (rank < 3)
			n[rank]++;
	}
	double p0 = (double)n[0] / 200000.0, r1 = (double)n[0] / (double)n[1];
	print_message("rank 0: %.4f of the draws (1 / zeta: %.4f), rank 0 / 1: %.2f, rank "
		      "0 / 2: %.2f\n", p0, 1.0 / z.zetan, r1, (double)n[0] / (double)n[2]);
	assert_true(p0 > 0.9 / z.zetan && p0 < 1.1 / z.zetan);
	assert_true(r1 > 1.8 && r1 < 2.2);
	assert_true(n[1] > n[2]);
	assert_int_equal(ex_zipf_rank(&z, 0), 0);
	assert_true(ex_zipf_rank(&z, UINT64_MAX) > EX_ZIPF_KEYS / 2);
}

/* Op j's key depends on (seed, j) only: the same in any order, in a fresh
 * context or one holding another run's constants; another seed, other keys. */
static void test_deterministic(void **state)
{
	(void)state;
	uint64_t *a = malloc(DRAWS * sizeof(*a)), *b = malloc(DRAWS * sizeof(*b));
	struct ex_ctx c;
	struct ex_run r[2];
	assert_non_null(a);
	assert_non_null(b);
	one_run(&c, &r[0], 7, EX_MIX_MIXED, "zipf:0.99");
	draw(&c, a);
	one_run(&c, &r[0], 7, EX_MIX_MIXED, "zipf:0.99");
	for (uint64_t j = DRAWS; j-- > 0;) {
		struct ex_map_op op;
		ex_map_plan(&c, j, &op);
		b[j] = op.key;
	}
	assert_memory_equal(a, b, DRAWS * sizeof(*a));
	/* two records of two thetas, some of their ops planned alternately
	 * (each switch makes the context's constants again) */
	one_run(&c, &r[1], 9, EX_MIX_MIXED, "zipf:0.5");
	r[0].n_ops = r[1].first_op = DRAWS / 2;
	c = (struct ex_ctx){.runs = r, .nruns = 2};
	for (uint64_t j = 0; j < 8; j++) {
		struct ex_map_op op;
		ex_map_plan(&c, j, &op);
		assert_int_equal(op.key, a[j]);
		ex_map_plan(&c, DRAWS / 2 + j, &op);
		b[j] = op.key;
	}
	struct ex_run alone;
	one_run(&c, &alone, 9, EX_MIX_MIXED, "zipf:0.5");
	for (uint64_t j = 0; j < 8; j++) {
		struct ex_map_op op;
		ex_map_plan(&c, DRAWS / 2 + j, &op);
		assert_int_equal(op.key, b[j]);
	}
	one_run(&c, &r[0], 8, EX_MIX_MIXED, "zipf:0.99");
	draw(&c, b);
	assert_true(memcmp(a, b, DRAWS * sizeof(*a)) != 0);
	free(a);
	free(b);
}

/* fnv -- the FNV-1a hash of (kind, key, len) of ops 0..9999 of two runs
 * (seed 7 for 6000 ops of 64 bytes, then seed 8, 200 bytes). */
static uint64_t fnv(uint64_t mix)
{
	struct ex_run runs[2] = {
		{.seed = 7, .first_op = 0, .n_ops = 6000, .value_size = 64, .mix = mix},
		{.seed = 8, .first_op = 6000, .n_ops = 4000, .value_size = 200, .mix = mix},
	};
	struct ex_ctx c = {.runs = runs, .nruns = 2};
	uint64_t h = 0xcbf29ce484222325ull;
	for (uint64_t j = 0; j < 10000; j++) {
		struct ex_map_op op;
		ex_map_plan(&c, j, &op);
		uint64_t w[3] = {op.kind, op.key, op.len};
		for (int i = 0; i < 3; i++) {
			h ^= w[i];
			h *= 0x100000001b3ull;
		}
	}
	return h;
}

/* Uniform keys (a record without a distribution, as every record before
 * --keys): the op sequence as it always was, for both mixes (the hashes
 * of the workload before the option). */
static void test_uniform_unchanged(void **state)
{
	(void)state;
	assert_int_equal(fnv(EX_MIX_MIXED), 0x0dae248065154b67ull);
	assert_int_equal(fnv(EX_MIX_INSERT), 0xf6e503bc30ef4cdfull);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_skewed),
		cmocka_unit_test(test_ranks),
		cmocka_unit_test(test_deterministic),
		cmocka_unit_test(test_uniform_unchanged),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
