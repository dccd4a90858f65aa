/*
 * test_hex.h -- what the known-answer tests share: a hex string decoded
 * (hex) and a little-endian 64-bit field (put_le64), the encoding of the
 * seeds (crypto.c) and of the MACs' fields (mac.c).  Include after
 * <cmocka.h>: a bad digit fails the test.
 */
#ifndef SPM_TEST_HEX_H
#define SPM_TEST_HEX_H 1

#include <stdint.h>
#include <string.h>

/* hex -- decode exactly n bytes of the hex string s into out. */
static inline void hex(const char *s, uint8_t *out, size_t n)
{
	assert_int_equal(strlen(s), 2 * n);
	for (size_t i = 0; i < n; i++) {
		unsigned v = 0;
		for (int k = 0; k < 2; k++) {
			char c = s[2 * i + (size_t)k];
			unsigned d = 0;
			if (c >= '0' && c <= '9')
				d = (unsigned)(c - '0');
			else if (c >= 'a' && c <= 'f')
				d = (unsigned)(c - 'a' + 10);
			else
				fail_msg("bad hex digit '%c'", c);
			v = v * 16 + d;
		}
		out[i] = (uint8_t)v;
	}
}

/* put_le64 -- v little-endian. */
static inline void put_le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

#endif
