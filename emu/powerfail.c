/*
 * powerfail.c -- the power-failure injector (SPM_POWERFAIL), a test harness
 * for the flushing durability modes (pmem, msync).
 *
 * A killed process loses nothing it stored into the shared mapping: that is
 * spm's crash model, and SPM_CRASH tests it.  A power failure loses more: on
 * persistent memory only what was flushed and fenced (pmem_persist) is sure
 * to be in the media; any other line written since may or may not have
 * reached it, whole (a cache line is written back as a unit).  The claim that
 * durability=pmem survives power failure is tested here, without the power
 * failure:
 *
 *   SPM_POWERFAIL=SEED:P   every media mapping keeps a shadow: its bytes as
 *                          of the last persist of each line (a copy of the
 *                          file at map time, updated line by line by every
 *                          media_persist).  When SPM_CRASH kills the process,
 *                          each line that differs from its shadow survives
 *                          with probability P (seeded by SEED and the crash
 *                          point); the others are put back to their shadow
 *                          before the kill.  P=0: nothing unpersisted
 *                          survives; P=0.5: a random half, in any order.
 *   SPM_POWERFAIL=SEED:P:close   the same, and the power also fails as each
 *                          pool is closed (after its last persist).
 *
 * With durability=none nothing is persisted explicitly, so the image is the
 * file as opened plus a random part of what was written since: the negative
 * control (crash_sweep --power).  Test use only: the shadows double the
 * memory of a pool and a persist becomes a copy.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spm.h"
#include "emu_internal.h"

#define PF_MAX_MEDIA 16 /* pools open at once in one process, at most */

/* A shadowed media: its two mappings as of each line's last persist. */
struct shadow {
	const struct media *m; /* NULL: a free entry */
	uint8_t *data, *meta;
};

static struct {
	int armed, parse_error;
	int at_close; /* ":close": the power also fails as each pool is closed */
	uint64_t seed;
	double p;
	struct shadow open[PF_MAX_MEDIA];
} pf;

static pthread_once_t pf_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t pf_lock = PTHREAD_MUTEX_INITIALIZER;

/* parse -- read SPM_POWERFAIL once per process. */
static void parse(void)
{
	const char *v = getenv("SPM_POWERFAIL");
	if (!v || !*v)
		return;
	char *end;
	errno = 0;
	unsigned long long seed = strtoull(v, &end, 10);
	if (errno || end == v || *v == '-' || *end != ':') {
		pf.parse_error = 1;
		return;
	}
	const char *ps = end + 1;
	double p = strtod(ps, &end);
	if (end == ps || !(p >= 0.0 && p <= 1.0) || (*end && strcmp(end, ":close"))) {
		pf.parse_error = 1;
		return;
	}
	pf.at_close = *end != '\0';
	pf.seed = seed;
	pf.p = p;
	pf.armed = 1;
}

/* emu_powerfail_init -- parse SPM_POWERFAIL; a bad value is an option error. */
int emu_powerfail_init(void)
{
	pthread_once(&pf_once, parse);
	if (pf.parse_error)
		return emu_err(SPM_E_OPTION, "SPM_POWERFAIL: bad value \"%s\" (SEED:P[:close], "
			       "P in [0, 1])",
			       getenv("SPM_POWERFAIL"));
	return 0;
}

/* lines_of -- the whole lines of [addr, addr+len) inside [base, base+size):
 * their first byte offset and their byte count (0: none). */
static size_t lines_of(const uint8_t *base, size_t size, const void *addr, size_t len,
		       size_t *off)
{
	uintptr_t b = (uintptr_t)base, a = (uintptr_t)addr;
	if (!base || a + len <= b || a >= b + size)
		return 0;
	size_t lo = a > b ? a - b : 0, hi = a + len - b;
	if (hi > size)
		hi = size;
	lo &= ~(size_t)(EMU_LINE - 1);
	hi = (hi + EMU_LINE - 1) & ~(size_t)(EMU_LINE - 1);
	if (hi > size)
		hi = size;
	*off = lo;
	return hi - lo;
}

/* pf_persist -- the persist of a shadowed media: the lines are durable now.
 * Each persist is also a crash point, before its lines are (power.persist),
 * so a sweep fails the power between any two persists, with the stores
 * that the persist was to make durable still in the balance. */
static void pf_persist(const struct media *m, const void *addr, size_t len)
{
	emu_crash_point("power.persist");
	pthread_mutex_lock(&pf_lock);
	for (unsigned i = 0; i < PF_MAX_MEDIA; i++) {
		const struct shadow *sh = &pf.open[i];
		size_t off, n;
		/* by its mapping: a memory channel (channel.c) persists through
		 * its own copy of the pool's struct media */
		if (!sh->m || sh->m->data != m->data)
			continue;
		if ((n = lines_of(m->data, m->data_len, addr, len, &off)))
			memcpy(sh->data + off, m->data + off, n);
		if ((n = lines_of(m->meta, m->meta_len, addr, len, &off)))
			memcpy(sh->meta + off, m->meta + off, n);
	}
	pthread_mutex_unlock(&pf_lock);
}

/* emu_powerfail_attach -- with SPM_POWERFAIL set, shadow m's two mappings
 * (as they are now) and make its persists update the shadows.  Called once
 * the files are mapped and the durability mode chosen.  0, -ENOMEM, or
 * SPM_E_BUSY with more than PF_MAX_MEDIA pools open. */
int emu_powerfail_attach(struct media *m)
{
	pthread_once(&pf_once, parse);
	if (!pf.armed)
		return 0;
	struct shadow sh = {m, malloc(m->data_len), malloc(m->meta_len)};
	if (!sh.data || !sh.meta) {
		free(sh.data);
		free(sh.meta);
		return emu_err(-ENOMEM, "SPM_POWERFAIL: out of memory for the shadows");
	}
	memcpy(sh.data, m->data, m->data_len);
	memcpy(sh.meta, m->meta, m->meta_len);
	pthread_mutex_lock(&pf_lock);
	unsigned i = 0;
	while (i < PF_MAX_MEDIA && pf.open[i].m)
		i++;
	if (i < PF_MAX_MEDIA)
		pf.open[i] = sh;
	pthread_mutex_unlock(&pf_lock);
	if (i == PF_MAX_MEDIA) {
		free(sh.data);
		free(sh.meta);
		return emu_err(SPM_E_BUSY, "SPM_POWERFAIL: more than %u pools open", PF_MAX_MEDIA);
	}
	if (m->persist_on)
		m->persist = pf_persist;
	return 0;
}

/* next -- xorshift64*: 53 random bits in [0, 1). */
static double next(uint64_t *x)
{
	*x ^= *x >> 12;
	*x ^= *x << 25;
	*x ^= *x >> 27;
	return (double)((*x * 0x2545F4914F6CDD1Dull) >> 11) / 9007199254740992.0;
}

/* fail_region -- each line of live that differs from its shadow survives
 * with probability p, else gets the shadow's bytes back. */
static void fail_region(uint8_t *live, const uint8_t *shadow, size_t len, double p,
			uint64_t *rng)
{
	for (size_t off = 0; off + EMU_LINE <= len; off += EMU_LINE)
		if (memcmp(live + off, shadow + off, EMU_LINE) != 0 && !(next(rng) < p))
			memcpy(live + off, shadow + off, EMU_LINE);
}

/* emu_powerfail_detach -- m is being unmapped: forget its shadows (with
 * ":close", after a power failure: a clean close must have persisted all
 * that the next open needs). */
void emu_powerfail_detach(const struct media *m)
{
	if (!pf.armed)
		return;
	uint64_t rng = (pf.seed * 0x9e3779b97f4a7c15ull) | 1;
	pthread_mutex_lock(&pf_lock);
	for (unsigned i = 0; i < PF_MAX_MEDIA; i++)
		if (pf.open[i].m == m) {
			if (pf.at_close) {
				fail_region(m->data, pf.open[i].data, m->data_len, pf.p, &rng);
				fail_region(m->meta, pf.open[i].meta, m->meta_len, pf.p, &rng);
			}
			free(pf.open[i].data);
			free(pf.open[i].meta);
			pf.open[i] = (struct shadow){0};
		}
	pthread_mutex_unlock(&pf_lock);
}

/* emu_powerfail_apply -- the image a power failure at crash point hit
 * leaves, put into every shadowed mapping; it returns holding pf_lock, so
 * that no persist completes after it (the process dies next). */
void emu_powerfail_apply(uint64_t hit)
{
	if (!pf.armed)
		return;
	uint64_t rng = (pf.seed ^ hit * 0x9e3779b97f4a7c15ull) | 1;
	pthread_mutex_lock(&pf_lock);
	for (unsigned i = 0; i < PF_MAX_MEDIA; i++) {
		const struct shadow *sh = &pf.open[i];
		if (!sh->m)
			continue;
		fail_region(sh->m->data, sh->data, sh->m->data_len, pf.p, &rng);
		fail_region(sh->m->meta, sh->meta, sh->m->meta_len, pf.p, &rng);
	}
	/* pf_lock stays held: the process dies next (crash.c: die).  Another
	 * thread may have passed its power.persist crash point before this one
	 * took crash_lock and be waiting here: released, it would complete a
	 * persist the image above did not see, return, and store lines that
	 * depend on it before SIGKILL lands -- an image no power failure leaves. */
}
