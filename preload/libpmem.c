/*
 * libpmem.c -- libpmem's calls, interposed: on an address that maps an spm
 * pool a flush writes its lines back through the controller (a clwb), a
 * drain fences (an sfence), and the pool is persistent memory; pmem_map_file
 * of a path that matches SPM_PRELOAD_PATHS maps the pool's view.  On every
 * other address they are libpmem's.
 */
#define _GNU_SOURCE 1
#undef _FORTIFY_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libpmem.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "preload.h"

#define EXPORT __attribute__((visibility("default")))

/* persist -- flush and drain the pool lines of a range; the bytes of it
 * that map a pool (the caller gives the whole range to libpmem if fewer) */
static size_t persist(const void *addr, size_t len)
{
	size_t covered = shim_inside ? 0 : shim_flush(addr, len);
	if (covered)
		shim_drain();
	return covered;
}

EXPORT void pmem_persist(const void *addr, size_t len)
{
	shim_resolve();
	if (persist(addr, len) < len)
		shim_real.pmem_persist(addr, len);
}

EXPORT void pmem_flush(const void *addr, size_t len)
{
	shim_resolve();
	if (shim_inside || shim_flush(addr, len) < len)
		shim_real.pmem_flush(addr, len);
}

EXPORT void pmem_deep_flush(const void *addr, size_t len)
{
	shim_resolve();
	if (shim_inside || shim_flush(addr, len) < len)
		shim_real.pmem_deep_flush(addr, len);
}

EXPORT int pmem_deep_persist(const void *addr, size_t len)
{
	shim_resolve();
	return persist(addr, len) == len ? 0 : shim_real.pmem_deep_persist(addr, len);
}

EXPORT int pmem_deep_drain(const void *addr, size_t len)
{
	shim_resolve();
	if (shim_inside)
		return shim_real.pmem_deep_drain(addr, len);
	shim_drain();
	return shim_real.pmem_deep_drain(addr, len);
}

EXPORT void pmem_drain(void)
{
	shim_resolve();
	if (!shim_inside && shim_maps_any())
		shim_drain();
	shim_real.pmem_drain();
}

EXPORT int pmem_msync(const void *addr, size_t len)
{
	shim_resolve();
	return persist(addr, len) == len ? 0 : shim_real.pmem_msync(addr, len);
}

EXPORT int pmem_is_pmem(const void *addr, size_t len)
{
	shim_resolve();
	if (!shim_inside && shim_maps_any()) {
		shim_read_lock();
		int in = shim_map_find(addr) != NULL;
		shim_read_unlock();
		if (in)
			return 1;
	}
	return shim_real.pmem_is_pmem(addr, len);
}

/* in_pool -- dest is in a mapping of a pool */
static int in_pool(const void *dest)
{
	if (shim_inside || !shim_maps_any())
		return 0;
	shim_read_lock();
	int in = shim_map_find(dest) != NULL;
	shim_read_unlock();
	return in;
}

/* done -- after a copy into a pool: flushed and drained as flags ask */
static void *done(void *dest, size_t len, unsigned flags)
{
	if (!(flags & PMEM_F_MEM_NOFLUSH))
		shim_flush(dest, len);
	if (!(flags & PMEM_F_MEM_NODRAIN))
		shim_drain();
	return dest;
}

EXPORT void *pmem_memmove(void *dest, const void *src, size_t len, unsigned flags)
{
	shim_resolve();
	if (!in_pool(dest))
		return shim_real.pmem_memmove(dest, src, len, flags);
	memmove(dest, src, len);
	return done(dest, len, flags);
}

EXPORT void *pmem_memcpy(void *dest, const void *src, size_t len, unsigned flags)
{
	shim_resolve();
	if (!in_pool(dest))
		return shim_real.pmem_memcpy(dest, src, len, flags);
	memcpy(dest, src, len);
	return done(dest, len, flags);
}

EXPORT void *pmem_memset(void *dest, int c, size_t len, unsigned flags)
{
	shim_resolve();
	if (!in_pool(dest))
		return shim_real.pmem_memset(dest, c, len, flags);
	memset(dest, c, len);
	return done(dest, len, flags);
}

EXPORT void *pmem_memmove_persist(void *dest, const void *src, size_t len)
{
	return pmem_memmove(dest, src, len, 0);
}

EXPORT void *pmem_memcpy_persist(void *dest, const void *src, size_t len)
{
	return pmem_memcpy(dest, src, len, 0);
}

EXPORT void *pmem_memset_persist(void *dest, int c, size_t len)
{
	return pmem_memset(dest, c, len, 0);
}

EXPORT void *pmem_memmove_nodrain(void *dest, const void *src, size_t len)
{
	return pmem_memmove(dest, src, len, PMEM_F_MEM_NODRAIN);
}

EXPORT void *pmem_memcpy_nodrain(void *dest, const void *src, size_t len)
{
	return pmem_memcpy(dest, src, len, PMEM_F_MEM_NODRAIN);
}

EXPORT void *pmem_memset_nodrain(void *dest, int c, size_t len)
{
	return pmem_memset(dest, c, len, PMEM_F_MEM_NODRAIN);
}

/* map_pool -- the pool at path, from pmem_map_file's flags: opened, made
 * (PMEM_FILE_CREATE where no file is), or converted (an existing plain
 * file of zeros, resized to len with PMEM_FILE_CREATE); its reference
 * taken, or NULL with errno set. */
static struct shim_pool *map_pool(const char *path, size_t len, int flags, mode_t mode)
{
	struct stat st;
	int rc, exists = shim_real.stat(path, &st) == 0;
	struct shim_pool *sp;
	if (exists && (flags & PMEM_FILE_CREATE) && (flags & PMEM_FILE_EXCL)) {
		errno = EEXIST;
		return NULL;
	}
	if (shim_has_meta(path)) {
		if (!(sp = shim_pool_get(path, 0, &rc))) {
			errno = shim_errno(rc, path);
			return NULL;
		}
		if ((flags & PMEM_FILE_CREATE) && len && len != sp->size) {
			fprintf(stderr, "spm-preload: %s: an spm pool keeps its size (%zu bytes, "
				"%zu asked)\n", path, sp->size, len);
			shim_pool_put(sp);
			errno = EINVAL;
			return NULL;
		}
		return sp;
	}
	if (!exists) {
		if (!(flags & PMEM_FILE_CREATE) || !len) {
			errno = (flags & PMEM_FILE_CREATE) ? EINVAL : ENOENT;
			return NULL;
		}
		if (!(sp = shim_pool_get(path, len, &rc))) {
			errno = shim_errno(rc, path);
			return NULL;
		}
		(void)chmod(path, mode & 07777); /* the program's mode for the data file */
		return sp;
	}
	int fd = shim_real.open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	int e = 0;
	/* checked before any change: a refused file is left as it was */
	if (!S_ISREG(st.st_mode) || !shim_all_zero(fd, (uint64_t)st.st_size)) {
		fprintf(stderr, "spm-preload: %s: matches SPM_PRELOAD_PATHS but holds data and is "
			"not an spm pool (no %s.meta): spm does not import plaintext\n", path, path);
		e = EINVAL;
	} else if ((flags & PMEM_FILE_CREATE) && len && (size_t)st.st_size != len &&
		   shim_real.ftruncate(fd, (off_t)len) != 0) {
		e = errno;
	}
	sp = e ? NULL : shim_convert(fd, path);
	if (!e && !sp)
		e = errno;
	shim_real.close(fd); /* the reference it took is the caller's */
	errno = e;
	return sp;
}

EXPORT void *pmem_map_file(const char *path, size_t len, int flags, mode_t mode,
			   size_t *mapped_lenp, int *is_pmemp)
{
	shim_resolve();
	if (shim_inside || (flags & PMEM_FILE_TMPFILE) || !shim_path_matches(path))
		return shim_real.pmem_map_file(path, len, flags, mode, mapped_lenp, is_pmemp);
	struct shim_pool *sp = map_pool(path, len, flags, mode);
	if (!sp)
		return NULL;
	void *a = shim_map_pool(NULL, sp->size, PROT_READ | PROT_WRITE, MAP_SHARED, sp, 0);
	int e = errno;
	if (a != MAP_FAILED) {
		if (mapped_lenp)
			*mapped_lenp = sp->size;
		if (is_pmemp)
			*is_pmemp = 1;
	}
	shim_pool_put(sp); /* the mapping holds its own reference */
	errno = e;
	return a == MAP_FAILED ? NULL : a;
}

EXPORT int pmem_unmap(void *addr, size_t len)
{
	shim_resolve();
	return munmap(addr, len);
}
