/*
 * counters.c -- counter storage layouts.  mono: one 8-byte counter per data
 * line, eight to a 64-byte counter line (SCA section 5.2.1).  The split layout
 * of SuperMem section 3.4.1 implements the same interface.
 */
#include "emu_internal.h"

static uint64_t mono_ctr_line_of(uint64_t line)
{
	return line / 8;
}

static uint64_t mono_storage_bytes(uint64_t nlines)
{
	return (nlines + 7) / 8 * 64;
}

const struct ctr_layout ctr_layout_mono = {
	.name = "mono",
	.ctr_line_of = mono_ctr_line_of,
	.lines_per_ctr_line = 8,
	.storage_bytes = mono_storage_bytes,
};
