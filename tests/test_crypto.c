/* test_crypto.c -- the AES engine (emu/crypto.c): SP 800-38A CTR known answers, line pads, key sizes, HKDF. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <pthread.h>

#include "spm.h"
#include "emu_internal.h"
#include "test_hex.h"


/* seed -- seed(line, ctr, b) = le64(4*line + b) || le64(ctr). */
static void seed(uint8_t out[16], uint64_t line, uint64_t ctr, unsigned b)
{
	put_le64(out, 4 * line + b);
	put_le64(out + 8, ctr);
}

/* new_engine -- an engine for a hex key of bits bits. */
static struct crypto *new_engine(const char *key_hex, unsigned bits)
{
	uint8_t key[32];
	hex(key_hex, key, bits / 8);
	struct crypto *c = NULL;
	assert_int_equal(crypto_new(&c, key, bits), 0);
	assert_non_null(c);
	return c;
}

/* SP 800-38A Appendix F.5: the common plaintext and initial counter block. */
static const char *const sp_plain[4] = {
	"6bc1bee22e409f96e93d7e117393172a",
	"ae2d8a571e03ac9c9eb76fac45af8e51",
	"30c81c46a35ce411e5fbc1191a0a52ef",
	"f69f2445df4f9b17ad2b417be66c3710",
};
static const char *const sp_counter[4] = {
	"f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff",
	"f0f1f2f3f4f5f6f7f8f9fafbfcfdff00",
	"f0f1f2f3f4f5f6f7f8f9fafbfcfdff01",
	"f0f1f2f3f4f5f6f7f8f9fafbfcfdff02",
};

/* ctr_kat -- CTR encryption through crypto_blocks (ECB of the counter blocks, XOR). */
static void ctr_kat(const char *key_hex, unsigned bits, const char *const cipher[4])
{
	struct crypto *c = new_engine(key_hex, bits);
	uint8_t seeds[64], pads[64], plain[64], want[64], got[64];
	for (unsigned b = 0; b < 4; b++) {
		hex(sp_counter[b], seeds + 16 * b, 16);
		hex(sp_plain[b], plain + 16 * b, 16);
		hex(cipher[b], want + 16 * b, 16);
	}
	memset(pads, 0, sizeof(pads));
	assert_int_equal(crypto_blocks(c, seeds, 4, pads), 0);
	for (unsigned i = 0; i < 64; i++)
		got[i] = plain[i] ^ pads[i];
	assert_memory_equal(got, want, 64);
	/* block by block gives the same pads as one batch */
	for (unsigned b = 0; b < 4; b++) {
		uint8_t one[16];
		assert_int_equal(crypto_blocks(c, seeds + 16 * b, 1, one), 0);
		assert_memory_equal(one, pads + 16 * b, 16);
	}
	crypto_free(c);
}

/* SP 800-38A F.5.1 CTR-AES128.Encrypt */
static void test_sp800_38a_f51_aes128(void **state)
{
	(void)state;
	static const char *const cipher[4] = {
		"874d6191b620e3261bef6864990db6ce",
		"9806f66b7970fdff8617187bb9fffdff",
		"5ae4df3edbd5d35e5b4f09020db03eab",
		"1e031dda2fbe03d1792170a0f3009cee",
	};
	ctr_kat("2b7e151628aed2a6abf7158809cf4f3c", 128, cipher);
}

/* SP 800-38A F.5.5 CTR-AES256.Encrypt */
static void test_sp800_38a_f55_aes256(void **state)
{
	(void)state;
	static const char *const cipher[4] = {
		"601ec313775789a5b7a7f504bbf3d228",
		"f443e3ca4d62b59aca84e990cacaf5c5",
		"2b0930daa23de94ce87017ba2d84988d",
		"dfc9c58db67aada613c2dd08457941a6",
	};
	ctr_kat("603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4",
		256, cipher);
}

/* crypto_line_pads (and the controller's _ctl and quiet _try variants)
 * equal crypto_blocks of the documented seeds, across batches. */
static void test_line_pads_match_seed_layout(void **state)
{
	(void)state;
	enum { N = 150 }; /* more than one internal batch of 64 lines */
	static uint64_t line[N], ctr[N];
	static uint8_t seeds[N * 64], want[N * 64], got[N * 64];
	struct crypto *c = new_engine("2b7e151628aed2a6abf7158809cf4f3c", 128);
	for (unsigned i = 0; i < N; i++) {
		line[i] = 1000003ull * i + 7;
		ctr[i] = i % 3 == 0 ? UINT64_MAX - i : (uint64_t)i * i + 1;
		for (unsigned b = 0; b < 4; b++)
			seed(seeds + 64 * i + 16 * b, line[i], ctr[i], b);
	}
	assert_int_equal(crypto_blocks(c, seeds, 4 * N, want), 0);
	memset(got, 0, sizeof(got));
	assert_int_equal(crypto_line_pads(c, line, ctr, N, got), 0);
	assert_memory_equal(got, want, sizeof(got));
	memset(got, 0, sizeof(got));
	assert_int_equal(crypto_line_pads_ctl(c, line, ctr, N, got), 0);
	assert_memory_equal(got, want, sizeof(got));
	memset(got, 0, sizeof(got));
	assert_int_equal(crypto_line_pads_try(c, line, ctr, N, got), 0);
	assert_memory_equal(got, want, sizeof(got));
	crypto_free(c);
}

/* Pads differ for every different (line, counter), and block by block within a pad. */
static void test_line_pads_unique(void **state)
{
	(void)state;
	const uint64_t lines[] = {0, 1, 2, 64, 1ull << 40};
	const uint64_t ctrs[] = {0, 1, 2, 1ull << 32};
	enum { NL = 5, NC = 4, N = NL * NC };
	uint64_t line[N], ctr[N];
	uint8_t pads[N * 64];
	for (unsigned i = 0; i < NL; i++)
		for (unsigned j = 0; j < NC; j++) {
			line[i * NC + j] = lines[i];
			ctr[i * NC + j] = ctrs[j];
		}
	struct crypto *c = new_engine("603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4", 256);
	assert_int_equal(crypto_line_pads(c, line, ctr, N, pads), 0);
	/* every 16-byte block of every pad is distinct: seeds are unique per (line, ctr, b) */
	for (unsigned x = 0; x < 4 * N; x++)
		for (unsigned y = x + 1; y < 4 * N; y++)
			assert_memory_not_equal(pads + 16 * x, pads + 16 * y, 16);
	/* the same (line, ctr) gives the same pad again (it is a function) */
	uint8_t again[64];
	assert_int_equal(crypto_line_pads(c, &line[7], &ctr[7], 1, again), 0);
	assert_memory_equal(again, pads + 7 * 64, 64);
	crypto_free(c);
}

/* The key matters: the same seeds under another key give other pads. */
static void test_line_pads_depend_on_key(void **state)
{
	(void)state;
	struct crypto *a = new_engine("2b7e151628aed2a6abf7158809cf4f3c", 128);
	struct crypto *b = new_engine("2b7e151628aed2a6abf7158809cf4f3d", 128);
	uint64_t line = 77, ctr = 5;
	uint8_t pa[64], pb[64];
	assert_int_equal(crypto_line_pads(a, &line, &ctr, 1, pa), 0);
	assert_int_equal(crypto_line_pads(b, &line, &ctr, 1, pb), 0);
	assert_memory_not_equal(pa, pb, 64);
	crypto_free(a);
	crypto_free(b);
}

struct thread_arg {
	struct crypto *c;
	uint8_t pad[64];
	int rc;
};

static void *pad_thread(void *p)
{
	struct thread_arg *a = p;
	uint64_t line = 12345, ctr = 678;
	a->rc = crypto_line_pads(a->c, &line, &ctr, 1, a->pad);
	return NULL;
}

/* Another thread (its own OpenSSL context) computes the same pads. */
static void test_line_pads_other_thread(void **state)
{
	(void)state;
	struct crypto *c = new_engine("2b7e151628aed2a6abf7158809cf4f3c", 128);
	struct thread_arg main_arg = {.c = c, .rc = -1}, th_arg = {.c = c, .rc = -1};
	pad_thread(&main_arg);
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, pad_thread, &th_arg), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(main_arg.rc, 0);
	assert_int_equal(th_arg.rc, 0);
	assert_memory_equal(main_arg.pad, th_arg.pad, 64);
	crypto_free(c);
}

/* crypto_new accepts 128 and 256 bits only; a rejected size leaves *out alone. */
static void test_new_rejects_bad_bits(void **state)
{
	(void)state;
	uint8_t key[64] = {0};
	const unsigned bad[] = {0, 1, 64, 127, 129, 192, 255, 257, 512};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct crypto *c = (struct crypto *)key; /* sentinel */
		emu_err_clear();
		assert_int_equal(crypto_new(&c, key, bad[i]), SPM_E_OPTION);
		assert_ptr_equal(c, (struct crypto *)key);
		assert_non_null(strstr(emu_errmsg(), "aes_bits"));
	}
	const unsigned good[] = {128, 256};
	for (size_t i = 0; i < 2; i++) {
		struct crypto *c = NULL;
		assert_int_equal(crypto_new(&c, key, good[i]), 0);
		assert_non_null(c);
		crypto_free(c);
	}
	crypto_free(NULL); /* harmless */
}

/* RFC 5869 A.1 (HKDF-SHA256 test case 1). */
static void test_hkdf_rfc5869_case1(void **state)
{
	(void)state;
	uint8_t ikm[22], salt[13], want[42], got[42];
	memset(ikm, 0x0b, sizeof(ikm));
	hex("000102030405060708090a0b0c", salt, sizeof(salt));
	/* info f0..f9 has no NUL byte, so it passes as a C string */
	const char info[] = "\xf0\xf1\xf2\xf3\xf4\xf5\xf6\xf7\xf8\xf9";
	hex("3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf"
	    "34007208d5b887185865", want, sizeof(want));
	memset(got, 0, sizeof(got));
	assert_int_equal(crypto_hkdf(ikm, sizeof(ikm), salt, sizeof(salt), info, got,
				     sizeof(got)), 0);
	assert_memory_equal(got, want, sizeof(want));
}

/* HKDF is deterministic and depends on key, salt, info. */
static void test_hkdf_deterministic_and_bound(void **state)
{
	(void)state;
	uint8_t key[32], salt[16], a[32], b[32], x[32];
	for (unsigned i = 0; i < 32; i++)
		key[i] = (uint8_t)(i * 7 + 1);
	for (unsigned i = 0; i < 16; i++)
		salt[i] = (uint8_t)(0xa0 + i);
	assert_int_equal(crypto_hkdf(key, 32, salt, 16, "spm enc", a, 32), 0);
	assert_int_equal(crypto_hkdf(key, 32, salt, 16, "spm enc", b, 32), 0);
	assert_memory_equal(a, b, 32);

	/* info */
	assert_int_equal(crypto_hkdf(key, 32, salt, 16, "spm kcv", x, 32), 0);
	assert_memory_not_equal(a, x, 32);
	/* salt: one bit, and one byte shorter */
	salt[15] ^= 1;
	assert_int_equal(crypto_hkdf(key, 32, salt, 16, "spm enc", x, 32), 0);
	assert_memory_not_equal(a, x, 32);
	salt[15] ^= 1;
	assert_int_equal(crypto_hkdf(key, 32, salt, 15, "spm enc", x, 32), 0);
	assert_memory_not_equal(a, x, 32);
	/* key: one bit, and 16 of the 32 bytes */
	key[0] ^= 0x80;
	assert_int_equal(crypto_hkdf(key, 32, salt, 16, "spm enc", x, 32), 0);
	assert_memory_not_equal(a, x, 32);
	key[0] ^= 0x80;
	assert_int_equal(crypto_hkdf(key, 16, salt, 16, "spm enc", x, 32), 0);
	assert_memory_not_equal(a, x, 32);
	/* a shorter output is a prefix of the longer one (RFC 5869 expand) */
	uint8_t s[16];
	assert_int_equal(crypto_hkdf(key, 32, salt, 16, "spm enc", s, 16), 0);
	assert_memory_equal(s, a, 16);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sp800_38a_f51_aes128),
		cmocka_unit_test(test_sp800_38a_f55_aes256),
		cmocka_unit_test(test_line_pads_match_seed_layout),
		cmocka_unit_test(test_line_pads_unique),
		cmocka_unit_test(test_line_pads_depend_on_key),
		cmocka_unit_test(test_line_pads_other_thread),
		cmocka_unit_test(test_new_rejects_bad_bits),
		cmocka_unit_test(test_hkdf_rfc5869_case1),
		cmocka_unit_test(test_hkdf_deterministic_and_bound),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
