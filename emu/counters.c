/*
 * counters.c -- counter storage layouts.  The controller works with each
 * line's effective counter; a layout stores the counters of the lines one
 * counter line covers.
 *  mono:  one 8-byte counter per data line, eight to a 64-byte counter line
 *         (SCA section 5.2.1);
 *  split: one counter line per 4 KiB page, a 64-bit major counter and 64
 *         7-bit minor counters (SuperMem section 3.4.1, Figure 9); a line's
 *         effective counter is major << minor_bits | minor.  minor_bits is 7
 *         (the paper); fewer bits (an option) make minor overflow, and so page
 *         re-encryption (reenc.c), frequent enough to test.
 */
#include <string.h>

#include "emu_internal.h"

static void mono_encode(const uint64_t *ctr, unsigned minor_bits, uint8_t out[64])
{
	(void)minor_bits;
	memcpy(out, ctr, 64);
}

static void mono_decode(const uint8_t in[64], unsigned minor_bits, uint64_t *ctr)
{
	(void)minor_bits;
	memcpy(ctr, in, 64);
}

/* le_load / le_store -- n (<= 8) little-endian bytes. */
static inline uint64_t le_load(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;
	for (unsigned b = 0; b < n; b++)
		v |= (uint64_t)p[b] << (8 * b);
	return v;
}

static inline void le_store(uint8_t *p, uint64_t v, unsigned n)
{
	for (unsigned b = 0; b < n; b++)
		p[b] = (uint8_t)(v >> (8 * b));
}

/*
 * split_encode -- bytes 0-7 the major (little-endian), then minor i in the 7
 * bits at bit 64 + 7i: eight minors fill 7 bytes.  Every counter of a page
 * shares the major (page re-encryption moves them all at once), so the major
 * is the largest.
 */
static void split_encode(const uint64_t *ctr, unsigned minor_bits, uint8_t out[64])
{
	uint64_t major = 0, mask = (1ull << minor_bits) - 1;
	for (unsigned i = 0; i < 64; i++)
		if (ctr[i] >> minor_bits > major)
			major = ctr[i] >> minor_bits;
	le_store(out, major, 8);
	for (unsigned g = 0; g < 8; g++) {
		uint64_t packed = 0;
		for (unsigned j = 0; j < 8; j++)
			packed |= (ctr[8 * g + j] & mask) << (7 * j);
		le_store(out + 8 + 7 * g, packed, 7);
	}
}

static void split_decode(const uint8_t in[64], unsigned minor_bits, uint64_t *ctr)
{
	uint64_t major = le_load(in, 8) << minor_bits, mask = (1ull << minor_bits) - 1;
	for (unsigned g = 0; g < 8; g++) {
		uint64_t packed = le_load(in + 8 + 7 * g, 7);
		for (unsigned j = 0; j < 8; j++)
			ctr[8 * g + j] = major | (packed >> (7 * j) & mask);
	}
}

const struct ctr_layout ctr_layout_mono = {
	.name = "mono",
	.id = LAYOUT_MONO,
	.lines_per_ctr_line = 8,
	.ctr_shift = 3,
	.encode = mono_encode,
	.decode = mono_decode,
};

const struct ctr_layout ctr_layout_split = {
	.name = "split",
	.id = LAYOUT_SPLIT,
	.lines_per_ctr_line = 64,
	.ctr_shift = 6,
	.encode = split_encode,
	.decode = split_decode,
};

/* ctr_layout_of -- the layout with superblock id, or NULL. */
const struct ctr_layout *ctr_layout_of(unsigned id)
{
	return id == LAYOUT_MONO ? &ctr_layout_mono : id == LAYOUT_SPLIT ? &ctr_layout_split
									 : NULL;
}

/* ctr_storage_bytes -- one 64-byte counter line per lines_per data lines. */
uint64_t ctr_storage_bytes(const struct ctr_layout *l, uint64_t nlines)
{
	return (nlines + l->lines_per_ctr_line - 1) / l->lines_per_ctr_line * 64;
}

/*
 * ctr_merge_home -- counters only grow, so a late drain of an older payload
 * never rolls a counter back: each line keeps the larger counter.  A split
 * payload is a snapshot of one page under one major, so the merge is either
 * side whole or, under the same major, minor by minor.
 */
void ctr_merge_home(const struct ctr_layout *l, unsigned minor_bits,
		    uint8_t home[64], const uint8_t payload[64])
{
	if (l->id == LAYOUT_MONO) { /* 8 plain counters: merge in place */
		for (unsigned i = 0; i < 8; i++) {
			uint64_t hv, pv;
			memcpy(&hv, home + 8 * i, 8);
			memcpy(&pv, payload + 8 * i, 8);
			if (pv > hv)
				memcpy(home + 8 * i, &pv, 8);
		}
		return;
	}
	uint64_t h[64], p[64];
	unsigned n = l->lines_per_ctr_line;
	l->decode(home, minor_bits, h);
	l->decode(payload, minor_bits, p);
	int changed = 0;
	for (unsigned i = 0; i < n; i++)
		if (p[i] > h[i]) {
			h[i] = p[i];
			changed = 1;
		}
	if (changed)
		l->encode(h, minor_bits, home);
}
