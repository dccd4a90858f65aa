/*
 * access.h -- between libspm and the instrumentation entry points that
 * spm_instrument() links into a program (lib/instrument.c): not for
 * programs to call.  The window bounds every pool view whose accesses are
 * modeled; an access inside it is handed to spm_access, one outside is core
 * work, counted by the entry points per thread and reported with the next
 * access inside or collected by the library at its next call (the function
 * spm_access_enable registers); so are repeated accesses to one line.
 */
#ifndef SPM_ACCESS_H
#define SPM_ACCESS_H 1

#include <stdint.h>

#include "spm.h"

struct spm_access_window {
	uintptr_t lo, span; /* [lo, lo + span): span 0 when no view is modeled */
};
SPM_API extern struct spm_access_window spm_access_window;

/* What the entry points counted without calling in: accesses outside the
 * window, and loads and stores of the line of the thread's last access
 * inside it (L1 hits for certain: nothing of its core ran in between). */
struct spm_access_pending {
	uint64_t outside, loads, stores;
	const void *line; /* an address in the line of the loads and stores */
};

/* The instrumented program starts: collect(p) moves the calling thread's
 * pending counts into *p and forgets its last line (a runtime call may
 * clean or move it). */
SPM_API void spm_access_enable(void (*collect)(struct spm_access_pending *p));
/* len bytes at addr, inside the window, loaded (store 0) or stored: issued
 * accesses of the core (a copy of len bytes is len / 8 of them), after
 * the pending ones.  1: modeled, the pending counts taken; 0: addr is in
 * no modeled view (the window spans the gaps between views), nothing
 * taken -- the access is core work. */
SPM_API int spm_access(const void *addr, uint64_t len, unsigned store,
		       const struct spm_access_pending *pending, uint64_t issued);

#endif
