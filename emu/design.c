/*
 * design.c -- the designs as rows of one table of policies (doc/design.md)
 * and the configuration profiles (each paper's Table 2).
 */
#include <string.h>

#include "emu_internal.h"

/* The presets.  Columns: name, encryption, counter cache (dedup: the
 * metadata cache), counter-atomicity,
 * honours counter_cache_writeback(), counter layout, counter placement,
 * counter write coalescing, logging, default profile, source, integrity,
 * deduplication. */
static const struct design designs[] = {
	{"plain", ENC_NONE, CC_NONE, CA_NONE, 0, LAYOUT_MONO, CP_INTERLEAVE, 0, LOG_SW, "sca",
	 "SCA 6.1: no-encryption design", INTEG_NONE, DEDUP_NONE},
	{"ideal", ENC_CTR, CC_BATTERY, CA_NONE, 0, LAYOUT_MONO, CP_INTERLEAVE, 0, LOG_SW, "sca",
	 "SCA 6.1: ideal design, battery-backed counter cache, no counter-atomicity cost", INTEG_NONE, DEDUP_NONE},
	{"unsafe", ENC_CTR, CC_WB, CA_NONE, 0, LAYOUT_MONO, CP_INTERLEAVE, 0, LOG_SW, "sca",
	 "negative control: write-back counter cache, no battery, no counter-atomicity", INTEG_NONE, DEDUP_NONE},
	{"colocated", ENC_CTR, CC_NONE, CA_COLOCATED, 0, LAYOUT_MONO, CP_INTERLEAVE, 0, LOG_SW, "sca",
	 "SCA 3.2.1, Fig. 5(a): data and counter in one 72 B write, no counter cache", INTEG_NONE, DEDUP_NONE},
	{"colocated-cc", ENC_CTR, CC_WB, CA_COLOCATED, 0, LAYOUT_MONO, CP_INTERLEAVE, 0, LOG_SW, "sca",
	 "SCA 3.2.1, Fig. 5(b): co-located write plus a counter cache for reads", INTEG_NONE, DEDUP_NONE},
	{"fca", ENC_CTR, CC_WB, CA_FULL, 0, LAYOUT_MONO, CP_INTERLEAVE, 0, LOG_SW, "sca",
	 "SCA 3.2.2: full counter-atomicity, every write pairs data and counter", INTEG_NONE, DEDUP_NONE},
	{"sca", ENC_CTR, CC_WB, CA_SELECTIVE, 1, LAYOUT_MONO, CP_INTERLEAVE, 0, LOG_SW, "sca",
	 "SCA 4-5: selective counter-atomicity, CounterAtomic + counter_cache_writeback", INTEG_NONE, DEDUP_NONE},
	{"wt", ENC_CTR, CC_WT, CA_FULL, 0, LAYOUT_SPLIT, CP_SINGLE, 0, LOG_SW, "supermem",
	 "SuperMem 3.2, 4: write-through counter cache with a register, split "
	 "counters in one bank (WT)", INTEG_NONE, DEDUP_NONE},
	{"wt-cwc", ENC_CTR, CC_WT, CA_FULL, 0, LAYOUT_SPLIT, CP_SINGLE, 1, LOG_SW, "supermem",
	 "SuperMem 3.4: WT plus counter write coalescing (WT+CWC)", INTEG_NONE, DEDUP_NONE},
	{"wt-xbank", ENC_CTR, CC_WT, CA_FULL, 0, LAYOUT_SPLIT, CP_XBANK, 0, LOG_SW, "supermem",
	 "SuperMem 3.3: WT plus cross-bank counter storage (WT+XBank)", INTEG_NONE, DEDUP_NONE},
	{"supermem", ENC_CTR, CC_WT, CA_FULL, 0, LAYOUT_SPLIT, CP_XBANK, 1, LOG_SW, "supermem",
	 "SuperMem 3: WT + XBank + CWC", INTEG_NONE, DEDUP_NONE},
	/* the redo designs: transactions logged by the controller (redo.c);
	 * a write-back outside a commit is a counter-atomic pair */
	{"srl", ENC_CTR, CC_WB, CA_FULL, 0, LAYOUT_MONO, CP_INTERLEAVE, 0, LOG_SRL, "redo",
	 "Redo logging IV.A: Secure Redo Logging, entries under the log address's counter", INTEG_NONE, DEDUP_NONE},
	{"lame", ENC_CTR, CC_WB, CA_FULL, 0, LAYOUT_MONO, CP_INTERLEAVE, 0, LOG_LAME, "redo",
	 "Redo logging III.B: Log-Aware Memory Encryption, entries under the home's", INTEG_NONE, DEDUP_NONE},
	{"clame", ENC_CTR, CC_WB, CA_FULL, 0, LAYOUT_MONO, CP_INTERLEAVE, 0, LOG_CLAME, "redo",
	 "Redo logging III.C: LAME with compact log records", INTEG_NONE, DEDUP_NONE},
	/* the integrity designs: data MACs and a Bonsai Merkle tree (bmt.c),
	 * whose write path replaces the counter-atomicity columns */
	{"bmt-nocc", ENC_CTR, CC_WB, CA_NONE, 0, LAYOUT_MONO, CP_INTERLEAVE, 0, LOG_SW, "ccnvm",
	 "cc-NVM 5: w/o CC, cached counters and tree written on eviction", INTEG_NOCC, DEDUP_NONE},
	{"sc", ENC_CTR, CC_WB, CA_NONE, 0, LAYOUT_MONO, CP_INTERLEAVE, 0, LOG_SW, "ccnvm",
	 "cc-NVM 5: strict consistency, each write-back persists its tree path", INTEG_SC, DEDUP_NONE},
	{"osiris", ENC_CTR, CC_WB, CA_NONE, 0, LAYOUT_MONO, CP_INTERLEAVE, 0, LOG_SW, "ccnvm",
	 "cc-NVM 5: Osiris Plus, counters every N updates, tree rebuilt", INTEG_OSIRIS, DEDUP_NONE},
	{"ccnvm-nods", ENC_CTR, CC_WB, CA_NONE, 0, LAYOUT_MONO, CP_INTERLEAVE, 0, LOG_SW,
	 "ccnvm", "cc-NVM 4.2: epoch-based consistent BMT", INTEG_EPOCH, DEDUP_NONE},
	{"ccnvm", ENC_CTR, CC_WB, CA_NONE, 0, LAYOUT_MONO, CP_INTERLEAVE, 0, LOG_SW, "ccnvm",
	 "cc-NVM 4.3: epochs and deferred spreading", INTEG_EPOCH_DS, DEDUP_NONE},
	/* the dedup designs (dedup.c): a line's pad from its physical address
	 * and its hash (hash-mode encryption), no counters; the metadata cache
	 * is the counter cache, battery-backed as ideal's (the baseline) */
	{"dewrite", ENC_CTR, CC_BATTERY, CA_NONE, 0, LAYOUT_MONO, CP_INTERLEAVE, 0, LOG_SW,
	 "dewrite", "DeWrite: deduplication, hash-mode encryption, prediction", INTEG_NONE,
	 DEDUP_PREDICT},
	{"dewrite-direct", ENC_CTR, CC_BATTERY, CA_NONE, 0, LAYOUT_MONO, CP_INTERLEAVE, 0,
	 LOG_SW, "dewrite", "DeWrite Fig. 2(a): detect, then encrypt", INTEG_NONE,
	 DEDUP_DIRECT},
	{"dewrite-parallel", ENC_CTR, CC_BATTERY, CA_NONE, 0, LAYOUT_MONO, CP_INTERLEAVE, 0,
	 LOG_SW, "dewrite", "DeWrite Fig. 2(b): detect and encrypt in parallel", INTEG_NONE,
	 DEDUP_PARALLEL},
};

/* design_names -- the preset names, comma separated. */
const char *design_names(void)
{
	return "plain, ideal, unsafe, colocated, colocated-cc, fca, sca, wt, wt-cwc, "
	       "wt-xbank, supermem, srl, lame, clame, bmt-nocc, sc, osiris, ccnvm-nods, ccnvm, "
	       "dewrite, dewrite-direct, dewrite-parallel";
}

/* placement_find -- the counter placement called name (the ctr_placement
 * option), or -1. */
int placement_find(const char *name)
{
	static const char *const names[] = {"interleave", "single", "same", "xbank"};
	for (int i = 0; i < 4; i++)
		if (strcmp(names[i], name) == 0)
			return i;
	return -1;
}

/*
 * emu_design_unannotated -- whether the design called name keeps a program
 * that makes no CounterAtomic annotations crash consistent: 1 yes, 0 no,
 * -1 no such design.  Not: selective counter-atomicity (sca: only the
 * annotated writes are paired with their counters), and write-back counter
 * caches with no atomicity, no battery and no counter recovery (unsafe,
 * bmt-nocc).  The integrity designs recover counters (sc, osiris, ccnvm...)
 * and the dedup designs take pads from the hash, not a cached counter.
 */
int emu_design_unannotated(const char *name)
{
	const struct design *d = design_find(name);
	if (!d)
		return -1;
	if (d->ca == CA_SELECTIVE)
		return 0;
	if (d->enc == ENC_CTR && d->cc == CC_WB && d->ca == CA_NONE && d->dedup == DEDUP_NONE &&
	    (d->integrity == INTEG_NONE || d->integrity == INTEG_NOCC))
		return 0;
	return 1;
}

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
 * 1 MB 16-way counter cache, 64-entry data and 16-entry counter queues),
 * banks interleaved by line, the bank index XOR-folded with the higher
 * address bits (SCA does not state its mapping; without the fold every
 * core's log lane, 64 KiB apart, commits through one bank).
 * supermem: SuperMem Table 2 (8 banks, one 32-entry write queue shared by
 * data and counters, 256 KB 8-way counter cache, 24-cycle AES at 2 GHz =
 * 12 ns, 8-cycle counter cache).  Banks are contiguous 1 GiB ranges (8 GB
 * in 8 banks): SuperMem 5.1.2 gives each program "the memory footprint size
 * that is equal to the size of a memory bank", and 3.3 has an application's
 * continuous memory in one bank, its counters in the same bank (SingleBank:
 * the counter area's bank, bank 0, where a pool under 1 GiB is) or in
 * bank (X + N/2) mod N (XBank).
 * Its queue issues a core's writes to their banks in queue order: CWC
 * removes the older of two entries of a counter line, not the newer, "to
 * delay the counter cache line write for merging more writes" (3.4.3),
 * which only delays anything if a write leaves the queue in its order; the
 * longer queue removing more counter writes (Figure 16) says the same.  SCA
 * does not say; its profile issues a write as soon as its bank is free.
 * The data bus: SCA Table 2 has "8GB PCM, 533MHz" with a DDR3 interface, a
 * 64-bit bus (72-bit for the co-located designs, SCA 3.2.1), so a line is
 * 8 beats, 4 cycles of 533 MHz: 7.5 ns.  SuperMem Table 2 gives no memory
 * bus; its profile takes SCA's 533 MHz. */
/* The core model's part of the profiles (cache.c).  sca: SCA Table 2 --
 * 4 GHz out-of-order cores, L1 D 64 KB 8-way private, "L2 cache 2MB per
 * core (shared), 8-way" (the LLC, 2 MB times cores=), "Counter cache 1MB
 * per core (shared)", a 32-entry read queue.  The table gives no cache
 * latencies: those of gem5's example caches (its simulator), 2 cycles for
 * L1 (within an access's issue cost) and 20 for L2.  supermem: SuperMem
 * Table 2 -- 2 GHz, private L1 64 KB 8-way 2 cycles, private L2 512 KB
 * 8-way 15 cycles, shared L3 4 MB 8-way 30 cycles; it gives no read queue
 * (32, as SCA's).  ACCESS_CYC, the issue cost of one load or store, is
 * calibrated in doc/results.md ("Calibrating the core"): the instructions
 * the workloads execute per memory access, at the sustained IPC of an
 * out-of-order core on code that hits its caches. */
#define ACCESS_CYC 3.0
/* redo: the redo-logging paper's Table I -- 4 out-of-order cores at 2 GHz,
 * L1 D 32 KB 8-way 2 cycles, L2 256 KB 8-way 8 cycles private, LLC 2 MB per
 * core 16-way 25 cycles shared; 32 write queue entries (one queue, shared
 * by data, counters and log), 64 read queue entries, 512 KB counter cache
 * (its ways not given: 8); PCM 300 / 48 ns write / read as SCA's (its
 * references), the same timings; 2 ranks of 16 banks: 32 banks, lines
 * interleaved and hashed as in SCA's profile; 40 ns AES in a 16-stage
 * pipeline: a line enters every 40 / 16 = 2.5 ns, one engine shared by
 * every pad (AES queueing is modeled).  The mapping and counter-mapping
 * tables (512 KB each) are redo.c's. */

/* ccnvm: cc-NVM §5 -- one out-of-order core at 3 GHz, L1 D 32 KB 2-way 2
 * cycles, shared L2 256 KB 8-way 20 cycles (the last level), a 128 KB 8-way
 * counter and tree cache at 32 cycles; PCM read / write 60 / 150 ns (tRCD +
 * tCL, tCWD + tWR with SCA's tCL and tCWD); 32 / 64-entry read / write
 * queues, one write queue (the dirty address queue drains into it); 72 ns
 * AES, pipelined as SCA's engine (16 stages); HMAC 80 cycles; the dirty
 * address queue's lookup 32 cycles.  Banks are not given: SCA's 8. */
/* dewrite: DeWrite's own numbers -- a CRC-32 in 15 ns, a line read in 75 ns
 * (tRCD + tCL: tRCD 60 with SCA's tCL 15), a 1-cycle compare (0.25 ns at
 * SCA's 4 GHz) -- and SCA's Table 2 otherwise (the setup of the works it
 * compares with); its metadata cache is SCA's counter cache. */
static const struct profile profiles[] = {
	{"sca", 48, 15, 13, 50, 7.5, 300, 40, 4, 2, 1, 1024, 16, 64, 16, 8, 1,
	 .wpq_shared = 0, .bank_hash = 1, .wpq_inorder = 0, .bus_mhz = 533, .line_beats = 8,
	 .ghz = 4.0, .l1_kib = 64, .l1_ways = 8, .l1_cyc = 2, .l2_kib = 0,
	 .llc_kib = 2048, .llc_ways = 8, .llc_cyc = 20, .llc_per_core = 1,
	 .ctr_per_core = 1, .access_cyc = ACCESS_CYC, .rq_entries = 32},
	{"supermem", 48, 15, 13, 50, 7.5, 300, 12, 2, 4, 1, 256, 8, 32, 32, 8, 1u << 24,
	 .wpq_shared = 1, .bank_hash = 0, .wpq_inorder = 1, .bus_mhz = 533, .line_beats = 8,
	 .ghz = 2.0, .l1_kib = 64, .l1_ways = 8, .l1_cyc = 2, .l2_kib = 512, .l2_ways = 8,
	 .l2_cyc = 15, .llc_kib = 4096, .llc_ways = 8, .llc_cyc = 30, .llc_per_core = 0,
	 .ctr_per_core = 0, .access_cyc = ACCESS_CYC, .rq_entries = 32},
	{"redo", 48, 15, 13, 50, 7.5, 300, 40, 2.5, 2, 1, 512, 8, 32, 32, 32, 1,
	 .wpq_shared = 1, .bank_hash = 1, .wpq_inorder = 0, .bus_mhz = 533, .line_beats = 8,
	 .ghz = 2.0, .l1_kib = 32, .l1_ways = 8, .l1_cyc = 2, .l2_kib = 256, .l2_ways = 8,
	 .l2_cyc = 8, .llc_kib = 2048, .llc_ways = 16, .llc_cyc = 25, .llc_per_core = 1,
	 .ctr_per_core = 0, .access_cyc = ACCESS_CYC, .rq_entries = 64},
	{"ccnvm", 45, 15, 13, 50, 7.5, 137, 72, 4.5, 32.0 / 3, 1, 128, 8, 64, 64, 8, 1,
	 .wpq_shared = 1, .bank_hash = 1, .wpq_inorder = 0, .bus_mhz = 533, .line_beats = 8,
	 .ghz = 3.0, .l1_kib = 32, .l1_ways = 2, .l1_cyc = 2, .l2_kib = 0,
	 .llc_kib = 256, .llc_ways = 8, .llc_cyc = 20, .llc_per_core = 0,
	 .ctr_per_core = 0, .access_cyc = ACCESS_CYC, .rq_entries = 32,
	 .mac_ns = 80.0 / 3, .daq_ns = 32.0 / 3},
	{"dewrite", 60, 15, 13, 50, 7.5, 300, 40, 4, 2, 1, 1024, 16, 64, 16, 8, 1,
	 .wpq_shared = 0, .bank_hash = 1, .wpq_inorder = 0, .bus_mhz = 533, .line_beats = 8,
	 .ghz = 4.0, .l1_kib = 64, .l1_ways = 8, .l1_cyc = 2, .l2_kib = 0,
	 .llc_kib = 2048, .llc_ways = 8, .llc_cyc = 20, .llc_per_core = 1,
	 .ctr_per_core = 1, .access_cyc = ACCESS_CYC, .rq_entries = 32,
	 .crc_ns = 15, .cmp_ns = 0.25},
};

/* profile_find -- the profile called name, or NULL. */
const struct profile *profile_find(const char *name)
{
	for (unsigned i = 0; i < sizeof(profiles) / sizeof(profiles[0]); i++)
		if (strcmp(profiles[i].name, name) == 0)
			return &profiles[i];
	return NULL;
}
