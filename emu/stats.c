/* stats.c -- the statistics table of the emulated machine, read by name. */
#include <string.h>

#include "spm.h"
#include "emu_internal.h"

static const char *const stat_names[STAT__N] = {
#define STAT(id, name) [id] = name,
#include "stats.def"
#undef STAT
};

/* Every name emu_stat reads, NULL-terminated: the table's, then the clocks. */
#define CORE(i) "time.core" #i "_ns"
#define CORES10(d) CORE(d##0), CORE(d##1), CORE(d##2), CORE(d##3), CORE(d##4), \
		   CORE(d##5), CORE(d##6), CORE(d##7), CORE(d##8), CORE(d##9)
static const char *const all_names[] = {
#define STAT(id, name) name,
#include "stats.def"
#undef STAT
	"time.modeled_ns",
	CORE(0), CORE(1), CORE(2), CORE(3), CORE(4), CORE(5), CORE(6), CORE(7), CORE(8),
	CORE(9), CORES10(1), CORES10(2), CORES10(3), CORES10(4), CORES10(5),
	CORE(60), CORE(61), CORE(62), CORE(63),
	NULL,
};
#undef CORES10
#undef CORE
_Static_assert(sizeof(all_names) / sizeof(all_names[0]) == STAT__N + 1 + EMU_MAX_CORES + 1,
	       "a clock name for every modeled core");

/* emu_stat_names -- every statistic's name, NULL-terminated. */
const char *const *emu_stat_names(void)
{
	return all_names;
}

/* core_clock_name -- is name "time.core<i>_ns" with i < EMU_MAX_CORES (no
 * leading zero)? */
static int core_clock_name(const char *name, unsigned *core)
{
	const char *digit0 = name + sizeof("time.core") - 1, *p = digit0;
	unsigned i = 0;
	if (strncmp(name, "time.core", sizeof("time.core") - 1) != 0)
		return 0;
	for (; *p >= '0' && *p <= '9' && p - digit0 < 3; p++)
		i = i * 10 + (unsigned)(*p - '0');
	if (p == digit0 || (p - digit0 > 1 && *digit0 == '0') || strcmp(p, "_ns") != 0 ||
	    i >= EMU_MAX_CORES)
		return 0;
	*core = i;
	return 1;
}

/* table_stat -- the index of name in the statistics table, or -1. */
static int table_stat(const char *name)
{
	for (unsigned i = 0; i < STAT__N; i++)
		if (strcmp(stat_names[i], name) == 0)
			return (int)i;
	return -1;
}

/* The runtime's events (emu_stat_rt_add): their statistics. */
static const enum stat_id rt_stats[] = {
	[EMU_RT_TX_COMMITTED] = ST_TX_COMMITTED,
	[EMU_RT_TX_ABORTED] = ST_TX_ABORTED,
	[EMU_RT_ROLLED_BACK] = ST_REC_ROLLED_BACK,
	[EMU_RT_EVICTED] = ST_EVICTED,
	[EMU_RT_LOG_WRAPS] = ST_TX_LOG_WRAPS,
};
#define RT_N (sizeof(rt_stats) / sizeof(rt_stats[0]))
_Static_assert(RT_N <= 8, "a stripe holds every runtime event");

/* rt_index -- the runtime event counted as statistic i, or -1. */
static int rt_index(int i)
{
	for (unsigned k = 0; k < RT_N; k++)
		if ((int)rt_stats[k] == i)
			return (int)k;
	return -1;
}

/* rt_sum -- runtime event k summed over the stripes. */
static uint64_t rt_sum(const struct emu *e, int k)
{
	uint64_t sum = 0;
	for (unsigned s = 0; s < sizeof(e->rt) / sizeof(e->rt[0]); s++)
		sum += __atomic_load_n(&e->rt[s].n[k], __ATOMIC_RELAXED);
	return sum;
}

/* makespan -- tm_makespan, the clocks read atomically (with channels a
 * channel stores a core's clock without the pool's lock: channel.c). */
static uint64_t makespan(const struct emu *e)
{
	uint64_t m = 0;
	for (unsigned i = 0; i < EMU_MAX_CORES; i++) {
		uint64_t c = __atomic_load_n(&e->tm.clock[i], __ATOMIC_RELAXED);
		m = c > m ? c : m;
	}
	return m;
}

/* emu_stat -- the value of statistic name. */
int emu_stat(struct emu *e, const char *name, uint64_t *value)
{
	if (!name || !value)
		return emu_err(SPM_E_INVAL, "spm_stat: NULL argument");
	pthread_mutex_lock(&e->lock);
	int rc = 0, i, k;
	unsigned core;
	if (strcmp(name, "time.modeled_ns") == 0)
		*value = makespan(e) / 1000;
	else if (core_clock_name(name, &core)) /* (channels store it unlocked) */
		*value = __atomic_load_n(&e->tm.clock[core], __ATOMIC_RELAXED) / 1000;
	else if ((i = table_stat(name)) == ST_AES_OPS) /* kept by the engine (timing.c) */
		*value = e->tm.aes_ops + chan_stat_sum(e, -1);
	else if (i == ST_AES_QUEUE_NS)
		*value = (e->tm.aes_wait + chan_stat_sum(e, -2)) / 1000;
	else if (i == ST_MEM_WRITES)
		*value = e->tm.wn + e->stat[i] + chan_stat_sum(e, -3) + chan_stat_sum(e, i);
	else if (i == ST_MEM_WRITE_NS)
		*value = (e->tm.wlat + e->tm.wpre + chan_stat_sum(e, -4)) / 1000 + e->stat[i] +
			 chan_stat_sum(e, i);
	else if (i >= ST_DEDUP_SHARED && i <= ST_DEDUP_OVERHEAD_PPM) /* gauges */
		*value = e->dedup ? dedup_gauge(e, i) : 0;
	else if ((k = rt_index(i)) >= 0) /* the runtime's events, in stripes */
		*value = rt_sum(e, k);
	else if (i >= 0) /* the pool's and its channels' */
		*value = __atomic_load_n(&e->stat[i], __ATOMIC_RELAXED) + chan_stat_sum(e, i);
	else
		rc = SPM_E_INVAL;
	pthread_mutex_unlock(&e->lock);
	if (rc) /* the message only on failure: a read leaves the last one */
		return emu_err(rc, "spm_stat: unknown statistic \"%s\"", name);
	return 0;
}

/* emu_stat_reset -- zero the statistics and the modeled clocks. */
void emu_stat_reset(struct emu *e)
{
	pthread_mutex_lock(&e->lock);
	for (unsigned i = 0; i < STAT__N; i++)
		__atomic_store_n(&e->stat[i], 0, __ATOMIC_RELAXED);
	for (unsigned s = 0; s < sizeof(e->rt) / sizeof(e->rt[0]); s++) /* changed unlocked */
		for (unsigned k = 0; k < RT_N; k++)
			__atomic_store_n(&e->rt[s].n[k], 0, __ATOMIC_RELAXED);
	tm_reset(&e->tm);
	read_queue_reset(e); /* the caches keep their lines: warm, as after a prefill */
	pthread_mutex_unlock(&e->lock);
	chan_stat_reset(e);
}

/* emu_stat_rt_add -- a runtime event (transactions): an atomic add to the
 * calling thread's stripe, no lock; the controller never changes these
 * statistics, and emu_stat and emu_stat_reset touch them atomically. */
void emu_stat_rt_add(struct emu *e, enum emu_rt_stat which, uint64_t n)
{
	static unsigned next_stripe;
	static __thread unsigned stripe; /* 1 + the thread's stripe; 0: none yet */
	if (!stripe)
		stripe = __atomic_fetch_add(&next_stripe, 1, __ATOMIC_RELAXED) %
				 (sizeof(e->rt) / sizeof(e->rt[0])) + 1;
	__atomic_fetch_add(&e->rt[stripe - 1].n[which], n, __ATOMIC_RELAXED);
}

/* emu_set_log_range -- the lines of the transaction log, for media.writes.log. */
void emu_set_log_range(struct emu *e, uint64_t first, uint64_t n)
{
	e->log_first = first;
	e->log_n = n;
	chan_settings(e);
}
