/*
 * design.c -- the designs as rows of one table of policies (ARCHITECTURE.md
 * section 6) and the configuration profiles (each paper's Table 2).
 */
#include <string.h>

#include "emu_internal.h"

/* The presets.  Columns: name, encryption, counter cache, counter-atomicity,
 * honours counter_cache_writeback(), source. */
static const struct design designs[] = {
	{"plain", ENC_NONE, CC_NONE, CA_NONE, 0,
	 "SCA 6.1: no-encryption design"},
	{"ideal", ENC_CTR, CC_BATTERY, CA_NONE, 0,
	 "SCA 6.1: ideal design, battery-backed counter cache, no counter-atomicity cost"},
	{"unsafe", ENC_CTR, CC_WB, CA_NONE, 0,
	 "negative control: write-back counter cache, no battery, no counter-atomicity"},
	{"colocated", ENC_CTR, CC_NONE, CA_COLOCATED, 0,
	 "SCA 3.2.1, Fig. 5(a): data and counter in one 72 B write, no counter cache"},
	{"colocated-cc", ENC_CTR, CC_WB, CA_COLOCATED, 0,
	 "SCA 3.2.1, Fig. 5(b): co-located write plus a counter cache for reads"},
	{"fca", ENC_CTR, CC_WB, CA_FULL, 0,
	 "SCA 3.2.2: full counter-atomicity, every write pairs data and counter"},
	{"sca", ENC_CTR, CC_WB, CA_SELECTIVE, 1,
	 "SCA 4-5: selective counter-atomicity, CounterAtomic + counter_cache_writeback"},
};

/* design_find -- the preset called name, or NULL. */
const struct design *design_find(const char *name)
{
	for (unsigned i = 0; i < sizeof(designs) / sizeof(designs[0]); i++)
		if (strcmp(designs[i].name, name) == 0)
			return &designs[i];
	return NULL;
}

/* design_table -- all presets. */
const struct design *design_table(unsigned *n)
{
	*n = sizeof(designs) / sizeof(designs[0]);
	return designs;
}

/* The profiles.  sca: SCA Table 2 (PCM 48/15/13/50/7.5/300 ns, 40 ns AES,
 * 1 MB 16-way counter cache, 64-entry data and 16-entry counter queues).
 * supermem: SuperMem Table 2 (8 banks, 32-entry write queue, 256 KB 8-way
 * counter cache, 24-cycle AES at 2 GHz = 12 ns, 8-cycle counter cache). */
static const struct profile profiles[] = {
	{"sca", 48, 15, 13, 50, 7.5, 300, 40, 4, 2, 1, 1024, 16, 64, 16, 8},
	{"supermem", 48, 15, 13, 50, 7.5, 300, 12, 2, 4, 1, 256, 8, 32, 32, 8},
};

/* profile_find -- the profile called name, or NULL. */
const struct profile *profile_find(const char *name)
{
	for (unsigned i = 0; i < sizeof(profiles) / sizeof(profiles[0]); i++)
		if (strcmp(profiles[i].name, name) == 0)
			return &profiles[i];
	return NULL;
}
