/*
 * access.h -- between libspm and the instrumentation entry points that
 * spm_instrument() links into a program (lib/instrument.c): not for
 * programs to call.  The window bounds every pool view whose accesses are
 * modeled; an access inside it is handed to spm_access, one outside is core
 * work, counted by the entry points per thread and reported with the next
 * access inside (outside) or collected by the library (the function
 * spm_access_enable registers).
 */
#ifndef SPM_ACCESS_H
#define SPM_ACCESS_H 1

#include <stdint.h>

#include "spm.h"

struct spm_access_window {
	uintptr_t lo, span; /* [lo, lo + span): span 0 when no view is modeled */
};
SPM_API extern struct spm_access_window spm_access_window;

/* The instrumented program starts: collect() returns and zeroes the calling
 * thread's count of accesses outside the window. */
SPM_API void spm_access_enable(uint64_t (*collect)(void));
/* len bytes at addr, inside the window, loaded (store 0) or stored, after
 * outside accesses elsewhere; issued: the accesses the core made for them
 * (a copy of len bytes is len / 8 of them). */
SPM_API void spm_access(const void *addr, uint64_t len, unsigned store, uint64_t outside,
			uint64_t issued);

#endif
