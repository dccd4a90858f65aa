/*
 * real.c -- the functions libspm-preload.so interposes, as the libraries
 * after it (libc, libpmem) define them: dlsym(RTLD_NEXT), once.
 */
#define _GNU_SOURCE 1
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include "preload.h"

struct shim_real shim_real;
__thread int shim_inside __attribute__((tls_model("initial-exec"))); /* a preloaded library: static TLS, no __tls_get_addr */

static int resolved;

/* next -- the definition after this library's; a missing one is fatal: a
 * pool's bytes must never reach a function the shim did not see. */
static void *next(const char *name)
{
	void *f = dlsym(RTLD_NEXT, name);
	if (!f) {
		fprintf(stderr, "spm-preload: %s not found after libspm-preload.so: %s\n", name,
			dlerror());
		abort();
	}
	return f;
}

#define RESOLVE(name) (*(void **)&shim_real.name = next(#name))

/* shim_resolve -- shim_real filled.  Threads racing here store the same
 * values. */
void shim_resolve(void)
{
	if (__atomic_load_n(&resolved, __ATOMIC_ACQUIRE))
		return;
	RESOLVE(open);
	RESOLVE(openat);
	RESOLVE(close);
	RESOLVE(fcntl);
	RESOLVE(statx);
	RESOLVE(unlinkat);
	RESOLVE(rename);
	RESOLVE(renameat);
	RESOLVE(renameat2);
	RESOLVE(dup);
	RESOLVE(dup2);
	RESOLVE(dup3);
	RESOLVE(stat);
	RESOLVE(lstat);
	RESOLVE(fstat);
	RESOLVE(fstatat);
	RESOLVE(lseek);
	RESOLVE(ftruncate);
	RESOLVE(posix_fallocate);
	RESOLVE(fallocate);
	RESOLVE(read);
	RESOLVE(write);
	RESOLVE(pread);
	RESOLVE(pwrite);
	RESOLVE(mmap);
	RESOLVE(munmap);
	RESOLVE(msync);
	RESOLVE(unlink);
	RESOLVE(pmem_map_file);
	RESOLVE(pmem_unmap);
	RESOLVE(pmem_persist);
	RESOLVE(pmem_flush);
	RESOLVE(pmem_deep_flush);
	RESOLVE(pmem_deep_persist);
	RESOLVE(pmem_deep_drain);
	RESOLVE(pmem_drain);
	RESOLVE(pmem_msync);
	RESOLVE(pmem_is_pmem);
	RESOLVE(pmem_memmove);
	RESOLVE(pmem_memcpy);
	RESOLVE(pmem_memset);
	RESOLVE(pmem_memmove_persist);
	RESOLVE(pmem_memcpy_persist);
	RESOLVE(pmem_memset_persist);
	RESOLVE(pmem_memmove_nodrain);
	RESOLVE(pmem_memcpy_nodrain);
	RESOLVE(pmem_memset_nodrain);
	__atomic_store_n(&resolved, 1, __ATOMIC_RELEASE);
}
