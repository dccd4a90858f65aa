/*
 * ex_keys.h -- the key distributions of the map workloads (--keys):
 *
 *   uniform     every insert a fresh random 64-bit key of its own op;
 *               updates, deletes and lookups one of the last 1024 ops'
 *               keys (ex_map.h).  The default, and what a run record
 *               without a distribution means.
 *   zipf:THETA  every op's key drawn from EX_ZIPF_KEYS keys with Zipf's
 *               law of exponent THETA, 0 < THETA < 1: the key of rank i
 *               (0 the most popular) with probability proportional to
 *               1 / (i + 1)^THETA (0.99: YCSB's default skew).  Ranks come
 *               from the generator of Gray et al., "Quickly generating
 *               billion-record synthetic databases" (SIGMOD 1994), the one
 *               YCSB uses, applied to one random word of the op, so op j
 *               depends on (its run's seed, j) only; rank i is key
 *               ex_zipf_key(i), a bijective hash, so that the popular keys
 *               lie anywhere in the 64-bit key space (YCSB's "scrambled"
 *               Zipfian) and are the same in every run.
 *
 * A distribution is a 64-bit code, kept in the run record (struct ex_run,
 * keys): 0 for uniform, else the IEEE-754 bits of THETA.
 */
#ifndef EX_KEYS_H
#define EX_KEYS_H 1

#include <stddef.h>
#include <stdint.h>

#define EX_ZIPF_KEYS (1u << 20) /* the keys a Zipfian run draws from */

/* ex_keys_parse -- "uniform" or "zipf:THETA" into *code; -1 if s is
 * neither, or THETA is not a number in (0, 1). */
int ex_keys_parse(const char *s, uint64_t *code);

/* ex_keys_valid -- is code a distribution (0, or a THETA in (0, 1))? */
int ex_keys_valid(uint64_t code);

/* ex_keys_name -- the distribution as --keys takes it, into buf. */
void ex_keys_name(uint64_t code, char *buf, size_t size);

/* The constants of one Zipfian distribution over EX_ZIPF_KEYS ranks. */
struct ex_zipf {
	uint64_t code; /* of these constants; 0: none yet */
	double zetan;  /* zeta(n, theta): the sum of 1 / i^theta, i = 1..n */
	double zeta2;  /* zeta(2, theta) */
	double alpha;  /* 1 / (1 - theta) */
	double eta;
};

/* ex_zipf_init -- the constants of distribution code (a zipf one); -1 if
 * code is not.  O(EX_ZIPF_KEYS): done once per run, not per op. */
int ex_zipf_init(struct ex_zipf *z, uint64_t code);

/* ex_zipf_rank -- the rank, in [0, EX_ZIPF_KEYS), that the random word
 * rnd draws (its top 53 bits are the uniform variate). */
uint64_t ex_zipf_rank(const struct ex_zipf *z, uint64_t rnd);

/* ex_zipf_key -- the key of rank i. */
uint64_t ex_zipf_key(uint64_t rank);

#endif
