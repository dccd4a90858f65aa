/* stats.c -- the statistics table of the emulated machine, read by name. */
#include <string.h>

#include "spm.h"
#include "emu_internal.h"

static const char *const stat_names[STAT__N] = {
#define STAT(id, name) [id] = name,
#include "stats.def"
#undef STAT
};

/* core_clock_name -- is name "time.core<i>_ns" with i < EMU_MAX_CORES? */
static int core_clock_name(const char *name, unsigned *core)
{
	const char *p = name + sizeof("time.core") - 1;
	unsigned i = 0, digits = 0;
	if (strncmp(name, "time.core", sizeof("time.core") - 1) != 0)
		return 0;
	for (; *p >= '0' && *p <= '9' && digits < 3; p++, digits++)
		i = i * 10 + (unsigned)(*p - '0');
	if (!digits || (digits > 1 && p[-digits] == '0') || strcmp(p, "_ns") != 0 ||
	    i >= EMU_MAX_CORES)
		return 0;
	*core = i;
	return 1;
}

/* emu_stat -- the value of statistic name. */
int emu_stat(struct emu *e, const char *name, uint64_t *value)
{
	if (!name || !value)
		return emu_err(SPM_E_INVAL, "spm_stat: NULL argument");
	pthread_mutex_lock(&e->lock);
	int rc = 0;
	unsigned core;
	if (strcmp(name, "time.modeled_ns") == 0) {
		*value = tm_makespan(&e->tm) / 1000;
	} else if (core_clock_name(name, &core)) {
		*value = e->tm.clock[core] / 1000;
	} else {
		rc = emu_err(SPM_E_INVAL, "spm_stat: unknown statistic \"%s\"", name);
		for (unsigned i = 0; i < STAT__N; i++)
			if (strcmp(stat_names[i], name) == 0) {
				*value = __atomic_load_n(&e->stat[i], __ATOMIC_RELAXED);
				rc = 0;
				break;
			}
	}
	pthread_mutex_unlock(&e->lock);
	return rc;
}

/* emu_stat_reset -- zero the statistics and the modeled clocks. */
void emu_stat_reset(struct emu *e)
{
	pthread_mutex_lock(&e->lock);
	for (unsigned i = 0; i < STAT__N; i++) /* runtime stats change unlocked */
		__atomic_store_n(&e->stat[i], 0, __ATOMIC_RELAXED);
	tm_reset(&e->tm);
	pthread_mutex_unlock(&e->lock);
}

/* emu_stat_rt_add -- a runtime event (transactions): an atomic add, no lock;
 * the controller never changes these statistics, and emu_stat and
 * emu_stat_reset touch them atomically. */
void emu_stat_rt_add(struct emu *e, enum emu_rt_stat which, uint64_t n)
{
	static const enum stat_id map[] = {
		[EMU_RT_TX_COMMITTED] = ST_TX_COMMITTED,
		[EMU_RT_TX_ABORTED] = ST_TX_ABORTED,
		[EMU_RT_ROLLED_BACK] = ST_REC_ROLLED_BACK,
		[EMU_RT_EVICTED] = ST_EVICTED,
		[EMU_RT_LOG_WRAPS] = ST_TX_LOG_WRAPS,
	};
	__atomic_fetch_add(&e->stat[map[which]], n, __ATOMIC_RELAXED);
}

/* emu_set_log_range -- the lines of the transaction log, for media.writes.log. */
void emu_set_log_range(struct emu *e, uint64_t first, uint64_t n)
{
	e->log_first = first;
	e->log_n = n;
}
