/* test_mac.c -- the MAC engine (emu/mac.c): SipHash-2-4-128 known answers, the
 * line and node message layouts, mac_lines against mac_line, every input in
 * the MAC, line and node MACs apart. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "spm.h"
#include "emu.h"
#include "mac.h"
#include "test_hex.h"

/* fill -- n bytes of a fixed pseudo-random sequence from seed. */
static void fill(uint8_t *p, size_t n, uint32_t seed)
{
	uint32_t x = seed * 2654435761u + 1;
	for (size_t i = 0; i < n; i++) {
		x ^= x << 13, x ^= x >> 17, x ^= x << 5;
		p[i] = (uint8_t)x;
	}
}

static const uint8_t key_a[16] = { 0x0f, 0x1e, 0x2d, 0x3c, 0x4b, 0x5a, 0x69, 0x78,
				   0x87, 0x96, 0xa5, 0xb4, 0xc3, 0xd2, 0xe1, 0xf0 };

static struct mac *new_mac(const uint8_t key[16])
{
	struct mac *m = NULL;
	assert_int_equal(mac_new(&m, key), 0);
	assert_non_null(m);
	return m;
}

/* The SipHash reference implementation's SipHash-2-4-128 vectors (vectors.h,
 * vectors_sip128): key 00 01 .. 0f, message 00 01 .. (len-1).  One context
 * for all, in turn: each message re-initializes it. */
static void siphash_vectors(void **state)
{
	(void)state;
	static const struct {
		size_t len;
		const char *tag;
	} v[] = {
		{ 0, "a3817f04ba25a8e66df67214c7550293" },
		{ 1, "da87c1d86b99af44347659119b22fc45" },
		{ 7, "a1f1ebbed8dbc153c0b84aa61ff08239" },
		{ 8, "3b62a9ba6258f5610f83e264f31497b4" },
		{ 15, "5493e99933b0a8117e08ec0f97cfc3d9" },
		{ 16, "6ee2a4ca67b054bbfd3315bf85230577" },
		{ 63, "5150d1772f50834a503e069a973fbd7c" },
	};
	uint8_t key[16], msg[64];
	for (unsigned i = 0; i < 16; i++)
		key[i] = (uint8_t)i;
	for (unsigned i = 0; i < 64; i++)
		msg[i] = (uint8_t)i;
	struct mac *m = new_mac(key);
	for (int round = 0; round < 2; round++)
		for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
			uint8_t want[16], got[16];
			hex(v[i].tag, want, sizeof(want));
			assert_int_equal(mac_raw(m, msg, v[i].len, got), 0);
			assert_memory_equal(got, want, sizeof(want));
		}
	mac_free(m);
}

/* The line MAC is the primitive over 0x01 || ct || le64(ctr) || le64(line),
 * the node MAC over 0x02 || child || le64(id). */
static void message_layouts(void **state)
{
	(void)state;
	struct mac *m = new_mac(key_a);
	uint8_t ct[64], msg[81], want[16], got[16];
	fill(ct, sizeof(ct), 1);
	uint64_t ctr = 0x0123456789abcdefull, line = 0xfedcba9876543210ull;

	msg[0] = 0x01;
	memcpy(msg + 1, ct, 64);
	put_le64(msg + 65, ctr);
	put_le64(msg + 73, line);
	assert_int_equal(mac_raw(m, msg, 81, want), 0);
	assert_int_equal(mac_line(m, ct, ctr, line, got), 0);
	assert_memory_equal(got, want, 16);

	msg[0] = 0x02;
	assert_int_equal(mac_raw(m, msg, 73, want), 0);
	assert_int_equal(mac_node(m, ct, ctr, got), 0);
	assert_memory_equal(got, want, 16);
	mac_free(m);
}

/* mac_lines gives each line's mac_line, whatever the batch size. */
static void lines_agree(void **state)
{
	(void)state;
	enum { N = 133 };
	struct mac *m = new_mac(key_a);
	uint8_t *ct = malloc(64 * N), *batch = malloc(16 * N), one[16];
	uint64_t ctr[N], line[N];
	assert_non_null(ct);
	assert_non_null(batch);
	fill(ct, 64 * N, 2);
	for (unsigned i = 0; i < N; i++)
		ctr[i] = (uint64_t)i * 0x9e3779b97f4a7c15ull, line[i] = 1000 + 7 * i;
	assert_int_equal(mac_lines(m, ct, ctr, line, 0, batch), 0);
	assert_int_equal(mac_lines(m, ct, ctr, line, N, batch), 0);
	for (unsigned i = 0; i < N; i++) {
		assert_int_equal(mac_line(m, ct + 64 * i, ctr[i], line[i], one), 0);
		assert_memory_equal(one, batch + 16 * i, 16);
	}
	/* a batch that starts mid-array */
	assert_int_equal(mac_lines(m, ct + 64 * 5, ctr + 5, line + 5, 3, batch), 0);
	for (unsigned i = 0; i < 3; i++) {
		assert_int_equal(mac_line(m, ct + 64 * (5 + i), ctr[5 + i], line[5 + i], one), 0);
		assert_memory_equal(one, batch + 16 * i, 16);
	}
	free(ct);
	free(batch);
	mac_free(m);
}

/* Two contexts of one key give the same MACs, another key other ones. */
static void same_key_same_mac(void **state)
{
	(void)state;
	struct mac *a = new_mac(key_a), *b = new_mac(key_a);
	uint8_t ct[64], x[16], y[16];
	fill(ct, sizeof(ct), 3);
	assert_int_equal(mac_line(a, ct, 5, 9, x), 0);
	assert_int_equal(mac_line(b, ct, 5, 9, y), 0);
	assert_memory_equal(x, y, 16);
	assert_int_equal(mac_line(a, ct, 5, 9, y), 0); /* again: the same */
	assert_memory_equal(x, y, 16);
	mac_free(a);
	mac_free(b);
	mac_free(NULL);
}

/* Any one ciphertext byte, the counter, the line address or the key changed:
 * another MAC. */
static void every_input_matters(void **state)
{
	(void)state;
	struct mac *m = new_mac(key_a);
	uint8_t ct[64], base[16], got[16];
	fill(ct, sizeof(ct), 4);
	const uint64_t ctr = 77, line = 4242;
	assert_int_equal(mac_line(m, ct, ctr, line, base), 0);

	for (unsigned i = 0; i < 64; i++)
		for (unsigned bit = 0; bit < 8; bit += 7) {
			ct[i] ^= (uint8_t)(1u << bit);
			assert_int_equal(mac_line(m, ct, ctr, line, got), 0);
			assert_memory_not_equal(got, base, 16);
			ct[i] ^= (uint8_t)(1u << bit);
		}
	for (unsigned bit = 0; bit < 64; bit++) {
		assert_int_equal(mac_line(m, ct, ctr ^ (1ull << bit), line, got), 0);
		assert_memory_not_equal(got, base, 16);
		assert_int_equal(mac_line(m, ct, ctr, line ^ (1ull << bit), got), 0);
		assert_memory_not_equal(got, base, 16);
	}
	/* the counter and the line address swapped */
	assert_int_equal(mac_line(m, ct, line, ctr, got), 0);
	assert_memory_not_equal(got, base, 16);
	assert_int_equal(mac_line(m, ct, ctr, line, got), 0);
	assert_memory_equal(got, base, 16);
	mac_free(m);

	uint8_t key[16];
	for (unsigned i = 0; i < 16; i++) {
		memcpy(key, key_a, sizeof(key));
		key[i] ^= 0x01;
		struct mac *k = new_mac(key);
		assert_int_equal(mac_line(k, ct, ctr, line, got), 0);
		assert_memory_not_equal(got, base, 16);
		mac_free(k);
	}
}

/* A node MAC never equals the line MAC of the same bytes (the domain byte),
 * and its child bytes and id are in it. */
static void node_apart_from_line(void **state)
{
	(void)state;
	struct mac *m = new_mac(key_a);
	uint8_t child[64], line_mac[16], node_mac[16], got[16];
	fill(child, sizeof(child), 5);
	static const uint64_t vals[] = { 0, 1, 63, 1ull << 32, ~0ull };
	for (unsigned i = 0; i < 5; i++)
		for (unsigned j = 0; j < 5; j++) {
			assert_int_equal(mac_line(m, child, vals[i], vals[j], line_mac), 0);
			assert_int_equal(mac_node(m, child, vals[i], node_mac), 0);
			assert_memory_not_equal(line_mac, node_mac, 16);
		}
	/* nor the bare primitive over the same fields without a domain byte */
	uint8_t msg[72];
	memcpy(msg, child, 64);
	put_le64(msg + 64, 9);
	assert_int_equal(mac_node(m, child, 9, node_mac), 0);
	assert_int_equal(mac_raw(m, msg, sizeof(msg), got), 0);
	assert_memory_not_equal(got, node_mac, 16);

	for (unsigned i = 0; i < 64; i++) {
		child[i] ^= 0x80;
		assert_int_equal(mac_node(m, child, 9, got), 0);
		assert_memory_not_equal(got, node_mac, 16);
		child[i] ^= 0x80;
	}
	for (unsigned bit = 0; bit < 64; bit++) {
		assert_int_equal(mac_node(m, child, 9 ^ (1ull << bit), got), 0);
		assert_memory_not_equal(got, node_mac, 16);
	}
	mac_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(siphash_vectors),
		cmocka_unit_test(message_layouts),
		cmocka_unit_test(lines_agree),
		cmocka_unit_test(same_key_same_mac),
		cmocka_unit_test(every_input_matters),
		cmocka_unit_test(node_apart_from_line),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
