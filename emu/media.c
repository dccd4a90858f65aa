/*
 * media.c -- the emulated DIMM: <path> (ciphertext of line i at offset 64*i,
 * page 0 a plaintext data header) and <path>.meta (superblock, ADR region,
 * counter storage, CounterAtomic bitmap), mapped with libpmem
 * (doc/design.md, "Files") with every block allocated (back_file), and
 * the prefaulting of mappings (emu_populate, emu_prefault: these files and
 * the runtime's view).
 *
 * Durability of media writes, chosen once at open (a function pointer):
 *  - pmem:  pmem_persist (CPU cache flush + fence); power-fail durable on a DAX
 *           file system (tested by SPM_POWERFAIL, powerfail.c).  Used by "auto"
 *           where libpmem reports real pmem.
 *  - none:  plain stores into the shared mapping; they survive the death of
 *           the process at any instruction (the page cache holds them), which
 *           is spm's crash model.  Used by "auto" on ordinary files.
 *  - msync: pmem_msync of every media write; power-fail durable on any file
 *           system, at the price of a system call per write.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libpmem.h>

#include "spm.h"
#include "emu_internal.h"

static void persist_none(const struct media *m, const void *addr, size_t len)
{
	(void)m;
	(void)addr;
	(void)len;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

static void persist_pmem(const struct media *m, const void *addr, size_t len)
{
	(void)m;
	pmem_persist(addr, len);
}

static void persist_msync(const struct media *m, const void *addr, size_t len)
{
	(void)m;
	pmem_msync(addr, len);
}

static void media_choose_fn(struct media *m, int durability);

/* media_choose_persist -- the durability function, chosen once. */
void media_choose_persist(struct media *m, int durability)
{
	media_choose_fn(m, durability);
	m->persist_on = m->persist != persist_none;
}

/* media_choose_fn -- the function of a durability mode. */
static void media_choose_fn(struct media *m, int durability)
{
	switch (durability) {
	case EMU_DUR_PMEM:
		m->persist = persist_pmem;
		break;
	case EMU_DUR_MSYNC:
		m->persist = persist_msync;
		break;
	case EMU_DUR_NONE:
		m->persist = persist_none;
		break;
	default:
		m->persist = (m->data_is_pmem && m->meta_is_pmem) ? persist_pmem
								 : persist_none;
	}
}

/* meta_path_of -- "<path>.meta", malloc'd. */
static char *suffixed(const char *path, const char *suffix)
{
	size_t n = strlen(path) + strlen(suffix) + 1;
	char *s = malloc(n);
	if (s)
		snprintf(s, n, "%s%s", path, suffix);
	return s;
}

/* lock_file -- an exclusive flock on the file at path, its descriptor in *fd. */
static int lock_file(const char *path, int *fd)
{
	*fd = open(path, O_RDONLY | O_CLOEXEC);
	if (*fd < 0)
		return emu_err(-errno, "%s: %s", path, strerror(errno));
	if (flock(*fd, LOCK_EX | LOCK_NB) != 0) {
		int e = errno;
		close(*fd);
		*fd = -1;
		if (e == EWOULDBLOCK)
			return emu_err(SPM_E_BUSY, "%s: pool is already open (in this or another "
				       "process, perhaps under another name: a hard link)", path);
		return emu_err(-e, "%s: flock: %s", path, strerror(e));
	}
	return 0;
}

/*
 * lock_pool -- one process at a time: an exclusive flock on the data file
 * and on the meta file.  Both, because either can be shared with a second
 * opener: a copy of the data file beside a hard link to the live meta file
 * would otherwise open while the owner runs, and its writes would destroy
 * the owner's counters and queues.  (The key file is shared by design: it
 * is locked only while a generation is raised, key.c.)
 */
static int lock_pool(struct media *m, int lock_data)
{
	int rc = lock_data ? lock_file(m->data_path, &m->lock_fd) : 0;
	if (!rc && (rc = lock_file(m->meta_path, &m->meta_lock_fd))) {
		close(m->lock_fd);
		m->lock_fd = -1;
	}
	return rc;
}

/*
 * back_file -- every block of the file at path allocated (posix_fallocate),
 * its bytes unchanged.  A store into a hole of a shared file mapping on a
 * full file system is a SIGBUS, at any instruction and in recovery too
 * (seen on a full tmpfs: the pool could not be opened until space was
 * freed), so the blocks are taken when the pool is created or opened,
 * where running out of space is an error; libpmemobj allocates its pool
 * files the same way.
 */
static int back_file(const char *path)
{
	int fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return emu_err(-errno, "%s: %s", path, strerror(errno));
	struct stat st;
	if (fstat(fd, &st)) {
		int e = errno;
		close(fd);
		return emu_err(-e, "%s: %s", path, strerror(e));
	}
	int e = posix_fallocate(fd, 0, st.st_size);
	close(fd);
	if (e)
		return emu_err(-e, "%s: cannot allocate its %lld bytes: %s", path,
			       (long long)st.st_size, strerror(e));
	return 0;
}

/* same_file -- the name path still refers to the file open at fd. */
int same_file(int fd, const char *path)
{
	struct stat a, b;
	return fstat(fd, &a) == 0 && lstat(path, &b) == 0 && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino;
}

/*
 * make_locked -- a new file at path (O_EXCL, mode 0600, no link followed),
 * flocked at once through the descriptor that made it (so that a creation
 * clearing leftovers never takes it for one), its first n bytes head, size
 * bytes allocated (posix_fallocate, as libpmemobj: no SIGBUS at a later
 * store on a full file system); the descriptor, or an error and no file.
 */
static int make_locked(const char *path, uint64_t size, const void *head, size_t n)
{
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return emu_err(-errno, "%s: cannot create: %s", path, strerror(errno));
	int e = 0;
	if (flock(fd, LOCK_EX | LOCK_NB) != 0)
		e = errno;
	else if (pwrite(fd, head, n, 0) != (ssize_t)n)
		e = errno ? errno : EIO;
	else
		e = posix_fallocate(fd, 0, (off_t)size);
	if (e) {
		unlink(path); /* made just now, and locked: ours */
		close(fd);
		return emu_err(-e, "%s: cannot create: %s", path, strerror(e));
	}
	return fd;
}

/* map_made -- the file made at path (open at fd, its first n bytes head)
 * mapped with libpmem, checked to be that file. */
static void *map_made(int fd, const char *path, const void *head, size_t n, size_t *len,
		      int *is_pmem)
{
	void *a = pmem_map_file(path, 0, 0, 0, len, is_pmem);
	if (!a) {
		emu_err(-errno, "%s: cannot map: %s", path, strerror(errno));
		return NULL;
	}
	if (!same_file(fd, path) || *len < n || memcmp(a, head, n) != 0) {
		pmem_unmap(a, *len);
		emu_err(-EEXIST, "%s: replaced while the pool was being created", path);
		return NULL;
	}
	return a;
}

/* media_unlink_own -- remove the files at m's names if they are still the
 * ones m holds locked (a failed creation's files, never another's). */
void media_unlink_own(const struct media *m)
{
	if (m->meta_lock_fd >= 0 && m->meta_path && same_file(m->meta_lock_fd, m->meta_path))
		unlink(m->meta_path);
	if (m->lock_fd >= 0 && m->data_path && same_file(m->lock_fd, m->data_path))
		unlink(m->data_path);
}

/*
 * media_create -- new files of the given sizes at path and meta_path, each
 * made, locked and given its first bytes (data_head, meta_head: what names
 * the creation) in one step, then allocated and mapped; fails if either
 * exists, and then leaves neither.
 */
int media_create(struct media *m, const char *path, const char *meta_path, uint64_t size,
		 uint64_t meta_size, int durability, const void *data_head, size_t data_n,
		 const void *meta_head, size_t meta_n)
{
	memset(m, 0, sizeof(*m));
	m->lock_fd = m->meta_lock_fd = -1;
	m->data_path = strdup(path);
	m->meta_path = strdup(meta_path);
	int rc = 0;
	if (!m->data_path || !m->meta_path)
		rc = emu_err(-ENOMEM, "out of memory");
	if (!rc && (m->lock_fd = make_locked(path, size, data_head, data_n)) < 0)
		rc = m->lock_fd;
	if (!rc && (m->meta_lock_fd = make_locked(meta_path, meta_size, meta_head, meta_n)) < 0)
		rc = m->meta_lock_fd;
	if (!rc && !(m->data = map_made(m->lock_fd, path, data_head, data_n, &m->data_len,
					&m->data_is_pmem)))
		rc = emu_errcode();
	if (!rc && !(m->meta = map_made(m->meta_lock_fd, meta_path, meta_head, meta_n,
					&m->meta_len, &m->meta_is_pmem)))
		rc = emu_errcode();
	if (!rc) {
		media_choose_persist(m, durability);
		rc = emu_powerfail_attach(m);
	}
	if (rc) {
		media_unlink_own(m);
		media_close(m);
	}
	return rc;
}

/* media_unlock_data -- the data file's flock released (its descriptor
 * closed): the program that maps the pool through the preload shim locks
 * the data file itself, and no extra descriptor of it may stay open. */
void media_unlock_data(struct media *m)
{
	if (m->lock_fd >= 0)
		close(m->lock_fd);
	m->lock_fd = -1;
}

/* media_open -- map both existing files read-write (validated by the caller
 * first), their blocks allocated first (a pool copied sparse, or made by an
 * spm that made them sparse); lock_data 0: only the meta file is locked. */
int media_open(struct media *m, const char *path, int durability, int lock_data)
{
	memset(m, 0, sizeof(*m));
	m->lock_fd = m->meta_lock_fd = -1;
	m->data_path = strdup(path);
	m->meta_path = suffixed(path, ".meta");
	if (!m->data_path || !m->meta_path) {
		media_close(m);
		return emu_err(-ENOMEM, "out of memory");
	}
	int rc = lock_pool(m, lock_data);
	if (!rc && !(rc = back_file(m->data_path)))
		rc = back_file(m->meta_path);
	if (rc) {
		media_close(m);
		return rc;
	}
	m->data = pmem_map_file(path, 0, 0, 0, &m->data_len, &m->data_is_pmem);
	if (!m->data) {
		int e = errno;
		media_close(m);
		return emu_err(-e, "%s: cannot map: %s", path, strerror(e));
	}
	m->meta = pmem_map_file(m->meta_path, 0, 0, 0, &m->meta_len,
				&m->meta_is_pmem);
	if (!m->meta) {
		int e = errno;
		rc = emu_err(-e, "%s: cannot map: %s", m->meta_path, strerror(e));
		media_close(m);
		return rc;
	}
	media_choose_persist(m, durability);
	if ((rc = emu_powerfail_attach(m))) {
		media_close(m);
		return rc;
	}
	return 0;
}

/*
 * emu_populate -- the pages of [addr, addr+len) (widened to whole pages)
 * faulted in writable in one system call, contents unchanged
 * (MADV_POPULATE_WRITE, Linux 5.14); 0, or -1 with errno (EINVAL: the
 * kernel has no such advice).
 */
int emu_populate(void *addr, size_t len)
{
#ifdef MADV_POPULATE_WRITE
	uintptr_t a = (uintptr_t)addr & ~(uintptr_t)(EMU_PAGE - 1);
	return madvise((void *)a, len + ((uintptr_t)addr - a), MADV_POPULATE_WRITE);
#else
	(void)addr;
	(void)len;
	errno = EINVAL;
	return -1;
#endif
}

/*
 * emu_prefault -- every page of [addr, addr+len) faulted in writable, its
 * contents unchanged (MADV_POPULATE_WRITE, Linux 5.14; on a kernel without
 * it, one store per page of the byte it holds).  A fresh pool's first
 * touches -- the view's pages zeroed, the media file's holes filled -- then
 * happen here and not inside the program's first transactions, as PMDK's
 * prefault.at_create.  Best effort: where the kernel cannot (no memory, no
 * room on the file system) the pages stay as they were and fault later.
 */
void emu_prefault(void *addr, size_t len)
{
	if (emu_populate(addr, len) == 0 || errno != EINVAL)
		return;
	long page = sysconf(_SC_PAGESIZE);
	volatile uint8_t *p = addr;
	for (size_t off = 0; off < len; off += (size_t)(page > 0 ? page : 4096))
		p[off] = p[off];
}

/* media_prefault -- emu_prefault of both files' mappings. */
void media_prefault(struct media *m)
{
	emu_prefault(m->data, m->data_len);
	emu_prefault(m->meta, m->meta_len);
}

/* media_close -- unmap, unlock, free. */
void media_close(struct media *m)
{
	emu_powerfail_detach(m);
	if (m->data)
		pmem_unmap(m->data, m->data_len);
	if (m->meta)
		pmem_unmap(m->meta, m->meta_len);
	if (m->lock_fd >= 0)
		close(m->lock_fd);
	if (m->meta_lock_fd >= 0)
		close(m->meta_lock_fd);
	free(m->data_path);
	free(m->meta_path);
	memset(m, 0, sizeof(*m));
	m->lock_fd = m->meta_lock_fd = -1;
}
