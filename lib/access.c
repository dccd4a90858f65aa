/*
 * access.c -- the runtime side of the execution-driven core model
 * (doc/design.md, "The core model"): the loads and stores of a program built
 * with spm_instrument() arrive here from its instrumentation entry points
 * (instrument.c) when they fall in the window of modeled views.  Each goes
 * to the model of the pool whose view it touches, on the calling thread's
 * core (spm_core_set); the accesses the thread made outside every pool
 * since its last report are charged to the same core as core work.  Work
 * done outside before a runtime call is charged at the call (access_sync),
 * so a write-back issues after the work that preceded it.
 */
#include "access.h"
#include "pool_internal.h"

/* the instrumented program's collector of its threads' pending counts;
 * NULL in a program that is not instrumented */
void (*access_collect)(struct spm_access_pending *p);

SPM_API void spm_access_enable(void (*collect)(struct spm_access_pending *p))
{
	__atomic_store_n(&access_collect, collect, __ATOMIC_RELEASE);
}

/*
 * charge -- the pending counts n of the calling thread: its outside
 * accesses as core work on core of p; its loads and stores of its last
 * line on the pool whose view holds that line (p, or another), which
 * checks they still hit L1 (the core may be another thread's too, or a
 * flush elsewhere may have cleaned the line).
 */
static void charge(spm_pool *p, unsigned core, const struct spm_access_pending *n)
{
	uint64_t outside = n->outside, loads = n->loads, stores = n->stores, line = UINT64_MAX;
	if (loads | stores) {
		uint64_t off;
		spm_pool *q = n->line ? pool_at((uintptr_t)n->line, &off) : NULL;
		if (!q) { /* its view is gone: core work */
			outside += loads + stores;
			loads = stores = 0;
		} else if (q != p) {
			emu_access_pending(q->emu, pool_core_of(q), 0, loads, stores,
					   off / SPM_LINE);
			loads = stores = 0;
		} else {
			line = off / SPM_LINE;
		}
	}
	if (outside | loads | stores)
		emu_access_pending(p->emu, core, outside, loads, stores, line);
}

/* access_sync_slow -- charge the calling thread's pending accesses to core on p. */
void access_sync_slow(spm_pool *p, unsigned core)
{
	struct spm_access_pending n;
	access_collect(&n);
	if ((n.outside | n.loads | n.stores) && !pool_forked(p))
		charge(p, core, &n);
}

SPM_API int spm_access(const void *addr, uint64_t len, unsigned store,
		       const struct spm_access_pending *pending, uint64_t issued)
{
	uint64_t off;
	spm_pool *p = pool_at((uintptr_t)addr, &off);
	if (!p) /* between two views, or in a view no longer modeled */
		return 0;
	unsigned core = pool_core_of(p);
	charge(p, core, pending);
	if (len > p->size - off)
		len = p->size - off;
	if (len) {
		uint64_t first = off / SPM_LINE, n = (off + len - 1) / SPM_LINE - first + 1;
		emu_access(p->emu, core, first, n, store, issued);
	}
	return 1;
}
