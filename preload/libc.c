/*
 * libc.c -- the C library's file calls, interposed: on a file that matches
 * SPM_PRELOAD_PATHS they act on the spm pool (plaintext, the program's
 * size, mappings of the pool's view); on every other file they are libc's.
 */
#define _GNU_SOURCE 1
#undef _FORTIFY_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "preload.h"

#define EXPORT __attribute__((visibility("default")))

extern void __chk_fail(void) __attribute__((noreturn)); /* glibc's */

/* pool_file_open -- open(2) of a path that matches: the descriptor is
 * tracked; if the file is a pool (a .meta beside it) the pool is opened.
 * An spm pool of another program (another layout) is left alone. */
static int pool_file_open(const char *path, int flags, mode_t mode)
{
	int pool = shim_has_meta(path);
	if (pool && (flags & O_TRUNC)) {
		fprintf(stderr, "spm-preload: %s: O_TRUNC would destroy the pool\n", path);
		errno = EINVAL;
		return -1;
	}
	int fd = shim_real.open(path, flags, mode);
	if (fd < 0 || fd >= SHIM_MAX_FD)
		return fd;
	struct shim_pool *sp = NULL;
	int rc = 0;
	if (pool && !(sp = shim_pool_get(path, 0, &rc))) {
		if (rc == SPM_E_LAYOUT) { /* spm's own pool, of a program linked with it */
			shim_fd_release(fd);
			return fd;
		}
		shim_real.close(fd);
		errno = shim_errno(rc, path);
		return -1;
	}
	shim_fd_set(fd, path, sp);
	return fd;
}

static mode_t mode_arg(int flags, va_list ap)
{
	return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ? (mode_t)va_arg(ap, int) : 0;
}

/* untracked -- a descriptor the shim does not track (stale entry let go) */
static int untracked(int fd)
{
	if (fd >= 0 && !shim_inside)
		shim_fd_release(fd);
	return fd;
}

EXPORT int open(const char *path, int flags, ...)
{
	va_list ap;
	va_start(ap, flags);
	mode_t mode = mode_arg(flags, ap);
	va_end(ap);
	shim_resolve();
	if (shim_inside || !shim_path_matches(path))
		return untracked(shim_real.open(path, flags, mode));
	return pool_file_open(path, flags, mode);
}

EXPORT int open64(const char *path, int flags, ...)
{
	va_list ap;
	va_start(ap, flags);
	mode_t mode = mode_arg(flags, ap);
	va_end(ap);
	return open(path, flags, mode);
}

/* openat: a path relative to a directory descriptor is never a pool's */
EXPORT int openat(int dirfd, const char *path, int flags, ...)
{
	va_list ap;
	va_start(ap, flags);
	mode_t mode = mode_arg(flags, ap);
	va_end(ap);
	shim_resolve();
	if (!shim_inside && (path[0] == '/' || dirfd == AT_FDCWD))
		return open(path, flags, mode);
	return untracked(shim_real.openat(dirfd, path, flags, mode));
}

EXPORT int openat64(int dirfd, const char *path, int flags, ...)
{
	va_list ap;
	va_start(ap, flags);
	mode_t mode = mode_arg(flags, ap);
	va_end(ap);
	return openat(dirfd, path, flags, mode);
}

/* the fortified entry points (_FORTIFY_SOURCE) of the same calls */
EXPORT int __open_2(const char *path, int flags)
{
	return open(path, flags);
}

EXPORT int __open64_2(const char *path, int flags)
{
	return open(path, flags);
}

EXPORT int __openat_2(int dirfd, const char *path, int flags)
{
	return openat(dirfd, path, flags);
}

EXPORT int __openat64_2(int dirfd, const char *path, int flags)
{
	return openat(dirfd, path, flags);
}

EXPORT int close(int fd)
{
	shim_resolve();
	if (shim_inside || !shim_fd_tracked(fd))
		return shim_real.close(fd);
	struct shim_pool *sp = shim_fd_pool(fd);
	shim_fd_forget(fd);
	int rc = shim_real.close(fd);
	if (sp)
		shim_pool_put(sp);
	return rc;
}

/* dup_track -- newfd, a copy of oldfd, names what oldfd names (a reference of
 * its pool taken), or nothing. */
static int dup_track(int oldfd, int newfd)
{
	if (newfd < 0 || shim_inside)
		return newfd;
	if (shim_fd_tracked(oldfd) && newfd < SHIM_MAX_FD) {
		struct shim_pool *sp = shim_fd_pool(oldfd);
		if (sp) {
			shim_lock();
			sp->refs++;
			shim_unlock();
		}
		shim_fd_set(newfd, shim_fd_path(oldfd), sp);
	} else {
		shim_fd_release(newfd);
	}
	return newfd;
}

/* dup_drop -- newfd is about to be replaced by dup2/dup3: what it named
 * let go, as close() would. */
static void dup_drop(int oldfd, int newfd)
{
	if (shim_inside || oldfd == newfd || !shim_fd_tracked(newfd))
		return;
	struct shim_pool *sp = shim_fd_pool(newfd);
	shim_fd_forget(newfd);
	if (sp)
		shim_pool_put(sp);
}

EXPORT int dup(int fd)
{
	shim_resolve();
	return dup_track(fd, shim_real.dup(fd));
}

EXPORT int dup2(int oldfd, int newfd)
{
	shim_resolve();
	if (shim_real.fcntl(oldfd, F_GETFD) < 0 || oldfd == newfd) /* EBADF, or nothing to do */
		return shim_real.dup2(oldfd, newfd);
	dup_drop(oldfd, newfd);
	return dup_track(oldfd, shim_real.dup2(oldfd, newfd));
}

EXPORT int dup3(int oldfd, int newfd, int flags)
{
	shim_resolve();
	if (shim_real.fcntl(oldfd, F_GETFD) < 0 || oldfd == newfd)
		return shim_real.dup3(oldfd, newfd, flags);
	dup_drop(oldfd, newfd);
	return dup_track(oldfd, shim_real.dup3(oldfd, newfd, flags));
}

/* fcntl: F_DUPFD and F_DUPFD_CLOEXEC are dups; the rest is libc's (its third
 * argument read as glibc's own fcntl reads it, one pointer-sized word) */
EXPORT int fcntl(int fd, int cmd, ...)
{
	va_list ap;
	va_start(ap, cmd);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	shim_resolve();
	int rc = shim_real.fcntl(fd, cmd, arg);
	if (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC)
		return dup_track(fd, rc);
	return rc;
}

EXPORT int fcntl64(int fd, int cmd, ...)
{
	va_list ap;
	va_start(ap, cmd);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	return fcntl(fd, cmd, arg);
}

/* stat family: a pool's data file shows the program's size */

static int path_is_pool(const char *path, mode_t m)
{
	return !shim_inside && S_ISREG(m) && shim_path_matches(path) && shim_has_meta(path);
}

EXPORT int stat(const char *path, struct stat *st)
{
	shim_resolve();
	int rc = shim_real.stat(path, st);
	if (rc == 0 && path_is_pool(path, st->st_mode))
		shim_stat_fix(st);
	return rc;
}

EXPORT int lstat(const char *path, struct stat *st)
{
	shim_resolve();
	int rc = shim_real.lstat(path, st);
	if (rc == 0 && path_is_pool(path, st->st_mode))
		shim_stat_fix(st);
	return rc;
}

EXPORT int fstat(int fd, struct stat *st)
{
	shim_resolve();
	int rc = shim_real.fstat(fd, st);
	if (rc == 0 && !shim_inside && shim_fd_pool(fd))
		shim_stat_fix(st);
	return rc;
}

EXPORT int fstatat(int dirfd, const char *path, struct stat *st, int flags)
{
	shim_resolve();
	int rc = shim_real.fstatat(dirfd, path, st, flags);
	if (rc || shim_inside)
		return rc;
	if ((flags & AT_EMPTY_PATH) && !*path) {
		if (shim_fd_pool(dirfd))
			shim_stat_fix(st);
	} else if ((path[0] == '/' || dirfd == AT_FDCWD) && path_is_pool(path, st->st_mode)) {
		shim_stat_fix(st);
	}
	return rc;
}

/* x86-64: struct stat64 is struct stat, off64_t is off_t */
EXPORT int stat64(const char *path, struct stat64 *st)
{
	return stat(path, (struct stat *)st);
}

EXPORT int lstat64(const char *path, struct stat64 *st)
{
	return lstat(path, (struct stat *)st);
}

EXPORT int fstat64(int fd, struct stat64 *st)
{
	return fstat(fd, (struct stat *)st);
}

EXPORT int fstatat64(int dirfd, const char *path, struct stat64 *st, int flags)
{
	return fstatat(dirfd, path, (struct stat *)st, flags);
}

EXPORT int statx(int dirfd, const char *path, int flags, unsigned mask, struct statx *stx)
{
	shim_resolve();
	int rc = shim_real.statx(dirfd, path, flags, mask, stx);
	if (rc || shim_inside)
		return rc;
	int pool = (flags & AT_EMPTY_PATH) && !*path
			   ? shim_fd_pool(dirfd) != NULL
			   : (path[0] == '/' || dirfd == AT_FDCWD) && path_is_pool(path, stx->stx_mode);
	if (pool) {
		if (stx->stx_size >= SHIM_BASE)
			stx->stx_size -= SHIM_BASE;
		if (stx->stx_blocks >= SHIM_BASE / 512)
			stx->stx_blocks -= SHIM_BASE / 512;
	}
	return rc;
}

/* the size: fixed */

EXPORT off_t lseek(int fd, off_t off, int whence)
{
	shim_resolve();
	struct shim_pool *sp = shim_inside ? NULL : shim_fd_pool(fd);
	if (!sp || (whence != SEEK_END && whence != SEEK_DATA && whence != SEEK_HOLE))
		return shim_real.lseek(fd, off, whence);
	off_t size = (off_t)sp->size;
	if (whence != SEEK_END && (off < 0 || off >= size)) {
		errno = ENXIO;
		return -1;
	}
	return shim_real.lseek(fd, whence == SEEK_END ? size + off : whence == SEEK_DATA ? off : size,
			       SEEK_SET);
}

EXPORT off_t lseek64(int fd, off_t off, int whence)
{
	return lseek(fd, off, whence);
}

EXPORT int ftruncate(int fd, off_t len)
{
	shim_resolve();
	struct shim_pool *sp = shim_inside ? NULL : shim_fd_pool(fd);
	if (!sp)
		return shim_real.ftruncate(fd, len);
	if (len == (off_t)sp->size)
		return 0;
	fprintf(stderr, "spm-preload: %s: an spm pool keeps its size (%zu bytes)\n",
		shim_fd_path(fd), sp->size);
	errno = EINVAL;
	return -1;
}

EXPORT int ftruncate64(int fd, off_t len)
{
	return ftruncate(fd, len);
}

EXPORT int posix_fallocate(int fd, off_t off, off_t len)
{
	shim_resolve();
	struct shim_pool *sp = shim_inside ? NULL : shim_fd_pool(fd);
	if (!sp)
		return shim_real.posix_fallocate(fd, off, len);
	return off >= 0 && len >= 0 && (uint64_t)off + (uint64_t)len <= sp->size ? 0 : EFBIG;
}

EXPORT int posix_fallocate64(int fd, off_t off, off_t len)
{
	return posix_fallocate(fd, off, len);
}

EXPORT int fallocate(int fd, int mode, off_t off, off_t len)
{
	shim_resolve();
	struct shim_pool *sp = shim_inside ? NULL : shim_fd_pool(fd);
	if (!sp)
		return shim_real.fallocate(fd, mode, off, len);
	if (mode != 0) {
		errno = EOPNOTSUPP; /* holes, collapses: not in a pool */
		return -1;
	}
	int e = posix_fallocate(fd, off, len);
	if (e)
		errno = e;
	return e ? -1 : 0;
}

EXPORT int fallocate64(int fd, int mode, off_t off, off_t len)
{
	return fallocate(fd, mode, off, len);
}

/* reads and writes: plaintext, as the descriptor's access mode allows */

/* may -- fd was opened for reading (want O_RDONLY) or writing (O_WRONLY);
 * else EBADF, as the kernel says it */
static int may(int fd, int want)
{
	int fl = shim_real.fcntl(fd, F_GETFL);
	int acc = fl < 0 ? -1 : fl & O_ACCMODE;
	if (acc == O_RDWR || acc == want)
		return 1;
	errno = EBADF;
	return 0;
}

EXPORT ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
	shim_resolve();
	struct shim_pool *sp = shim_inside ? NULL : shim_fd_pool(fd);
	if (!sp)
		return shim_real.pread(fd, buf, n, off);
	if (!may(fd, O_RDONLY))
		return -1;
	if (off < 0) {
		errno = EINVAL;
		return -1;
	}
	return shim_pread(sp, buf, n, (uint64_t)off);
}

EXPORT ssize_t pread64(int fd, void *buf, size_t n, off_t off)
{
	return pread(fd, buf, n, off);
}

EXPORT ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
	shim_resolve();
	struct shim_pool *sp = shim_inside ? NULL : shim_fd_pool(fd);
	if (!sp)
		return shim_real.pwrite(fd, buf, n, off);
	if (!may(fd, O_WRONLY))
		return -1;
	if (off < 0) {
		errno = EINVAL;
		return -1;
	}
	return shim_pwrite(sp, buf, n, (uint64_t)off);
}

EXPORT ssize_t pwrite64(int fd, const void *buf, size_t n, off_t off)
{
	return pwrite(fd, buf, n, off);
}

EXPORT ssize_t read(int fd, void *buf, size_t n)
{
	shim_resolve();
	struct shim_pool *sp = shim_inside ? NULL : shim_fd_pool(fd);
	if (!sp)
		return shim_real.read(fd, buf, n);
	if (!may(fd, O_RDONLY))
		return -1;
	off_t pos = shim_real.lseek(fd, 0, SEEK_CUR);
	if (pos < 0)
		return -1;
	ssize_t r = shim_pread(sp, buf, n, (uint64_t)pos);
	if (r > 0)
		shim_real.lseek(fd, pos + r, SEEK_SET);
	return r;
}

EXPORT ssize_t write(int fd, const void *buf, size_t n)
{
	shim_resolve();
	struct shim_pool *sp = shim_inside ? NULL : shim_fd_pool(fd);
	if (!sp)
		return shim_real.write(fd, buf, n);
	if (!may(fd, O_WRONLY))
		return -1;
	int fl = shim_real.fcntl(fd, F_GETFL);
	off_t pos = fl >= 0 && (fl & O_APPEND) ? (off_t)sp->size : shim_real.lseek(fd, 0, SEEK_CUR);
	if (pos < 0)
		return -1;
	ssize_t r = shim_pwrite(sp, buf, n, (uint64_t)pos);
	if (r > 0)
		shim_real.lseek(fd, pos + r, SEEK_SET);
	return r;
}

EXPORT ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen)
{
	if (n > buflen)
		__chk_fail();
	return read(fd, buf, n);
}

EXPORT ssize_t __pread_chk(int fd, void *buf, size_t n, off_t off, size_t buflen)
{
	if (n > buflen)
		__chk_fail();
	return pread(fd, buf, n, off);
}

EXPORT ssize_t __pread64_chk(int fd, void *buf, size_t n, off_t off, size_t buflen)
{
	if (n > buflen)
		__chk_fail();
	return pread(fd, buf, n, off);
}

/* mappings: the pool's view */

EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	shim_resolve();
	if (shim_inside)
		return shim_real.mmap(addr, len, prot, flags, fd, off);
	if (fd < 0 || (flags & MAP_ANONYMOUS) || !shim_fd_tracked(fd))
		return (flags & MAP_FIXED) && shim_maps_any()
			       ? shim_map_other(addr, len, prot, flags, fd, off)
			       : shim_real.mmap(addr, len, prot, flags, fd, off);
	int shared = (flags & MAP_SHARED_VALIDATE) == MAP_SHARED ||
		     (flags & MAP_SHARED_VALIDATE) == MAP_SHARED_VALIDATE;
	struct shim_pool *sp = shim_fd_pool(fd);
	if (!sp) {
		/* a plain file becomes a pool only when the program maps it to
		 * write through (read-write, shared); else it is the file */
		int pfl = shim_real.fcntl(fd, F_GETFL);
		if (!shared || pfl < 0 || (pfl & O_ACCMODE) != O_RDWR)
			return (flags & MAP_FIXED) && shim_maps_any()
				       ? shim_map_other(addr, len, prot, flags, fd, off)
				       : shim_real.mmap(addr, len, prot, flags, fd, off);
		if (!(sp = shim_convert(fd, shim_fd_path(fd))))
			return MAP_FAILED;
	}
	if (off < 0 || off % 4096) {
		errno = EINVAL;
		return MAP_FAILED;
	}
	int fl = shim_real.fcntl(fd, F_GETFL);
	if (fl < 0 || (fl & O_ACCMODE) == O_WRONLY ||
	    (shared && (prot & PROT_WRITE) && (fl & O_ACCMODE) != O_RDWR)) {
		errno = EACCES; /* as the kernel: a shared writable map needs O_RDWR */
		return MAP_FAILED;
	}
	/* MAP_SYNC's promise (a flushed store is durable) is what the shim
	 * keeps: the view is shared memory, so the kernel's check is dropped */
	int mflags = flags & ~MAP_SYNC;
	if ((mflags & MAP_SHARED_VALIDATE) == MAP_SHARED_VALIDATE)
		mflags = (mflags & ~MAP_SHARED_VALIDATE) | MAP_SHARED;
	return shim_map_pool(addr, len, prot, mflags, sp, (uint64_t)off);
}

EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return mmap(addr, len, prot, flags, fd, off);
}

EXPORT int munmap(void *addr, size_t len)
{
	shim_resolve();
	if (shim_inside || !shim_maps_any())
		return shim_real.munmap(addr, len);
	return shim_unmap(addr, len);
}

EXPORT int msync(void *addr, size_t len, int flags)
{
	shim_resolve();
	size_t covered = shim_inside ? 0 : shim_flush(addr, len);
	if (covered)
		shim_drain();
	return covered == len ? 0 : shim_real.msync(addr, len, flags);
}

/* unlink, rename: a pool's data file takes its .meta (and its own .key and
 * .key.tcb) with it */

static const char *const companions[] = {".meta", ".key", ".key.tcb"};

/* own_key -- the pool's key file is <path>.key (no key_file= in SPM_CONF) */
static int own_key(void)
{
	const char *conf = getenv("SPM_CONF");
	return !conf || !strstr(conf, "key_file");
}

EXPORT int unlink(const char *path)
{
	shim_resolve();
	if (shim_inside || !shim_path_matches(path) || !shim_has_meta(path))
		return shim_real.unlink(path);
	int rc = shim_real.unlink(path);
	for (unsigned i = 0; rc == 0 && i < (own_key() ? 3u : 1u); i++) {
		char name[PATH_MAX + 16];
		snprintf(name, sizeof(name), "%s%s", path, companions[i]);
		(void)shim_real.unlink(name);
	}
	return rc;
}

EXPORT int unlinkat(int dirfd, const char *path, int flags)
{
	shim_resolve();
	if (!shim_inside && flags == 0 && (path[0] == '/' || dirfd == AT_FDCWD))
		return unlink(path);
	return shim_real.unlinkat(dirfd, path, flags);
}

/* pool_rename -- rename of a pool's data file from old to new (both plain
 * paths): its companions follow; rc of the data file's rename */
static int pool_rename(const char *old, const char *new, int rc)
{
	for (unsigned i = 0; rc == 0 && i < (own_key() ? 3u : 1u); i++) {
		char a[PATH_MAX + 16], b[PATH_MAX + 16];
		snprintf(a, sizeof(a), "%s%s", old, companions[i]);
		snprintf(b, sizeof(b), "%s%s", new, companions[i]);
		(void)shim_real.rename(a, b);
	}
	return rc;
}

static int renames_pool(int olddirfd, const char *old, int newdirfd, const char *new)
{
	return !shim_inside && (old[0] == '/' || olddirfd == AT_FDCWD) &&
	       (new[0] == '/' || newdirfd == AT_FDCWD) && shim_path_matches(old) &&
	       shim_has_meta(old);
}

EXPORT int rename(const char *old, const char *new)
{
	shim_resolve();
	if (!renames_pool(AT_FDCWD, old, AT_FDCWD, new))
		return shim_real.rename(old, new);
	return pool_rename(old, new, shim_real.rename(old, new));
}

EXPORT int renameat(int olddirfd, const char *old, int newdirfd, const char *new)
{
	shim_resolve();
	if (!renames_pool(olddirfd, old, newdirfd, new))
		return shim_real.renameat(olddirfd, old, newdirfd, new);
	return pool_rename(old, new, shim_real.renameat(olddirfd, old, newdirfd, new));
}

EXPORT int renameat2(int olddirfd, const char *old, int newdirfd, const char *new,
		     unsigned flags)
{
	shim_resolve();
	if ((flags & ~RENAME_NOREPLACE) || !renames_pool(olddirfd, old, newdirfd, new))
		return shim_real.renameat2(olddirfd, old, newdirfd, new, flags);
	return pool_rename(old, new, shim_real.renameat2(olddirfd, old, newdirfd, new, flags));
}
