/*
 * preload.h -- libspm-preload.so, spm under unmodified libpmem/libpmemobj
 * programs (LD_PRELOAD): what its files share.
 *
 * A file whose path matches SPM_PRELOAD_PATHS (colon-separated shell globs)
 * is an spm pool of layout "preload" (a raw pool: lib/pool.c).  The program
 * sees the data file without its first page (the controller's plaintext data
 * header): its offset o is the pool's offset SHIM_BASE + o.  Mapping the file
 * maps the pool's plaintext view, a shared memory object, at that offset, so
 * that several mappings of one pool alias as the page cache makes them; a
 * flush writes lines back through the controller, a drain fences.
 *
 *   real.c      the functions interposed, as libc and libpmem define them
 *   registry.c  pools, the descriptors and mappings that name them
 *   libc.c      open, close, stat, read/write, mmap, munmap, msync, unlink...
 *   libpmem.c   pmem_map_file, pmem_persist, pmem_flush, pmem_drain, ...
 *
 * Calls the shim makes into spm (and spm's own calls to the functions the
 * shim interposes) run with shim_inside set: they pass straight through.
 */
#ifndef SPM_PRELOAD_H
#define SPM_PRELOAD_H 1

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "spm.h"

#define SHIM_BASE 4096u /* EMU_DATA_HDR_SIZE: the data file's header page */
#define SHIM_MAX_FD 65536 /* descriptors at or above it are never pools */

/* The real functions (real.c): resolved once, with dlsym(RTLD_NEXT). */
struct shim_real {
	int (*open)(const char *, int, ...);
	int (*openat)(int, const char *, int, ...);
	int (*close)(int);
	int (*fcntl)(int, int, ...);
	int (*statx)(int, const char *, int, unsigned, struct statx *);
	int (*unlinkat)(int, const char *, int);
	int (*rename)(const char *, const char *);
	int (*renameat)(int, const char *, int, const char *);
	int (*renameat2)(int, const char *, int, const char *, unsigned);
	int (*dup)(int);
	int (*dup2)(int, int);
	int (*dup3)(int, int, int);
	int (*stat)(const char *, struct stat *);
	int (*lstat)(const char *, struct stat *);
	int (*fstat)(int, struct stat *);
	int (*fstatat)(int, const char *, struct stat *, int);
	off_t (*lseek)(int, off_t, int);
	int (*ftruncate)(int, off_t);
	int (*posix_fallocate)(int, off_t, off_t);
	int (*fallocate)(int, int, off_t, off_t);
	ssize_t (*read)(int, void *, size_t);
	ssize_t (*write)(int, const void *, size_t);
	ssize_t (*pread)(int, void *, size_t, off_t);
	ssize_t (*pwrite)(int, const void *, size_t, off_t);
	void *(*mmap)(void *, size_t, int, int, int, off_t);
	int (*munmap)(void *, size_t);
	int (*msync)(void *, size_t, int);
	int (*unlink)(const char *);
	void *(*pmem_map_file)(const char *, size_t, int, mode_t, size_t *, int *);
	int (*pmem_unmap)(void *, size_t);
	void (*pmem_persist)(const void *, size_t);
	void (*pmem_flush)(const void *, size_t);
	void (*pmem_deep_flush)(const void *, size_t);
	int (*pmem_deep_persist)(const void *, size_t);
	int (*pmem_deep_drain)(const void *, size_t);
	void (*pmem_drain)(void);
	int (*pmem_msync)(const void *, size_t);
	int (*pmem_is_pmem)(const void *, size_t);
	void *(*pmem_memmove)(void *, const void *, size_t, unsigned);
	void *(*pmem_memcpy)(void *, const void *, size_t, unsigned);
	void *(*pmem_memset)(void *, int, size_t, unsigned);
	void *(*pmem_memmove_persist)(void *, const void *, size_t);
	void *(*pmem_memcpy_persist)(void *, const void *, size_t);
	void *(*pmem_memset_persist)(void *, int, size_t);
	void *(*pmem_memmove_nodrain)(void *, const void *, size_t);
	void *(*pmem_memcpy_nodrain)(void *, const void *, size_t);
	void *(*pmem_memset_nodrain)(void *, int, size_t);
};
extern struct shim_real shim_real;
void shim_resolve(void); /* fills shim_real (idempotent) */

/* inside spm, or inside the shim's own bookkeeping: pass through */
extern __thread int shim_inside __attribute__((tls_model("initial-exec")));

/* A pool the program has open (by descriptor or mapping). */
struct shim_pool {
	spm_pool *pool;
	uint8_t *view;   /* spm's view: the program's offset o is view[SHIM_BASE + o] */
	size_t size;     /* the program's size: the data file's less SHIM_BASE */
	int view_fd;     /* the view's shared memory object */
	dev_t dev;       /* the data file */
	ino_t ino;
	unsigned refs;   /* descriptors and mappings */
	unsigned fork_gen; /* the process's fork generation at its open */
	struct shim_pool *next;
};

/* A range of the program's address space mapping part of a pool. */
struct shim_map {
	uint8_t *addr;
	size_t len;
	uint64_t off; /* the program's offset of addr */
	struct shim_pool *sp;
};

/* registry.c: every call returns with the registry unlocked */
int shim_path_matches(const char *path);
int shim_has_meta(const char *path);
void shim_lock(void);    /* the registry, to change it */
void shim_unlock(void);  /* (the change published to readers first) */
void shim_read_lock(void);   /* the registry, to use it: an RCU read-side */
void shim_read_unlock(void); /* section (no lock; registry.c) */
/* the pool at path (opened, or created with size bytes if size != 0),
 * its reference taken; NULL with spm's code in *rc, nothing printed */
struct shim_pool *shim_pool_get(const char *path, size_t size, int *rc);
void shim_pool_put(struct shim_pool *sp); /* the last reference closes it */
/* descriptors: the pool an open descriptor names, or NULL; a stale entry
 * (the descriptor closed behind the shim and reused) is let go */
struct shim_pool *shim_fd_pool(int fd);
int shim_fd_tracked(int fd);       /* a matching file's descriptor */
const char *shim_fd_path(int fd);  /* its path as opened */
void shim_fd_set(int fd, const char *path, struct shim_pool *sp);
void shim_fd_attach(int fd, struct shim_pool *sp);
void shim_fd_forget(int fd);
void shim_fd_release(int fd);      /* a new untracked descriptor: stale entry let go */
/* mappings: mmap and munmap with the registry held across the system call */
void *shim_map_pool(void *addr, size_t len, int prot, int flags, struct shim_pool *sp,
		    uint64_t off);
void *shim_map_other(void *addr, size_t len, int prot, int flags, int fd, off_t off);
int shim_unmap(void *addr, size_t len);
const struct shim_map *shim_map_find(const void *addr); /* in a read-side section */
int shim_maps_any(void);
/* flush [addr, addr+len) wherever it maps a pool; the bytes that did */
size_t shim_flush(const void *addr, size_t len);
void shim_drain(void);
/* the data file of the pool at path made from the plain file open at fd
 * (all zeros: a file the program just made), fd re-pointed at it */
struct shim_pool *shim_convert(int fd, const char *path);
int shim_all_zero(int fd, uint64_t size);
/* plaintext I/O on a pool (n clipped at its size) */
ssize_t shim_pread(struct shim_pool *sp, void *buf, size_t n, uint64_t off);
ssize_t shim_pwrite(struct shim_pool *sp, const void *buf, size_t n, uint64_t off);
/* a stat of a pool's data file as the program sees it */
void shim_stat_fix(struct stat *st);
/* an spm error as errno, its message on stderr */
int shim_errno(int spm_rc, const char *path);

#endif
