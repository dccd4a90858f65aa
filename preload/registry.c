/*
 * registry.c -- the preload shim's bookkeeping: which paths are pools, the
 * pools the program has open, the descriptors that name them and the
 * address ranges that map them; flush, drain and plaintext I/O through them.
 *
 * Flushes, drains and plaintext I/O -- every pmem_flush of the program --
 * read the mappings; opening, closing, mapping and unmapping change them,
 * rarely.  So the readers take no lock: they read a snapshot of the
 * mappings under userspace RCU (liburcu's bulletproof flavour, which
 * registers a thread at its first read-side section: the program's threads
 * are not ours to register).  Writers change the mappings and the pools
 * under one mutex, publish a new snapshot, wait for a grace period, and
 * only then free the old snapshot and close the pools nothing maps or
 * names any more: a reader never sees a pool closed under it.  The
 * descriptor table is read without a lock.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <urcu/urcu-bp.h>

#include "../lib/pool_internal.h"
#include "preload.h"

static pthread_mutex_t reg = PTHREAD_MUTEX_INITIALIZER; /* the writers' */
static pthread_mutex_t convert_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned fork_gen; /* children of fork(): pools opened before are not theirs */
static struct shim_pool *pools;
static struct shim_pool *closing; /* no longer named: closed after a grace period */
static struct shim_map *maps;     /* the writers' copy (reg) */
static size_t nmaps, maps_cap;
static int maps_changed;          /* since the last snapshot (reg) */
static size_t nmaps_seen; /* nmaps, read without the lock by shim_maps_any */
/* The readers' copy: published whole, never changed after (RCU). */
struct map_snap {
	size_t n;
	struct shim_map m[];
};
static struct map_snap *snap;

/* One descriptor's entry: allocated at its number's first use, never freed
 * (a racing reader never sees freed memory). */
struct shim_fd {
	int tracked;
	struct shim_pool *sp;
	dev_t dev; /* the file it was opened on: a descriptor closed behind the */
	ino_t ino; /* shim's back (fclose, close_range) and reused is told apart */
	char path[PATH_MAX];
};
static struct shim_fd *fd_tab[SHIM_MAX_FD];

void shim_lock(void)
{
	pthread_mutex_lock(&reg);
}

static void settle_locked(void);

/* shim_unlock -- a new snapshot of the mappings published if they changed;
 * after a grace period the old one freed and the pools no longer named
 * closed; the writers' mutex released. */
void shim_unlock(void)
{
	settle_locked();
	pthread_mutex_unlock(&reg);
}

/* shim_read_lock, shim_read_unlock -- a read-side section: the snapshot
 * and the pools it names stay as they are until its end. */
void shim_read_lock(void)
{
	urcu_bp_read_lock();
}

void shim_read_unlock(void)
{
	urcu_bp_read_unlock();
}

/* shim_abs -- path made absolute (lexically, against the working
 * directory) in buf; 0, or -1 if it does not fit. */
static int shim_abs(const char *path, char *buf, size_t n)
{
	if (path[0] == '/')
		return (size_t)snprintf(buf, n, "%s", path) < n ? 0 : -1;
	char cwd[PATH_MAX];
	if (!getcwd(cwd, sizeof(cwd)))
		return -1;
	return (size_t)snprintf(buf, n, "%s/%s", cwd, path) < n ? 0 : -1;
}

static int ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* shim_path_matches -- path (absolute, or made so) matches a glob of
 * SPM_PRELOAD_PATHS; a pool's own .meta and .key files never do. */
int shim_path_matches(const char *path)
{
	const char *globs = getenv("SPM_PRELOAD_PATHS");
	char abs[PATH_MAX], pat[PATH_MAX];
	if (!globs || !*globs || !path || !*path || ends_with(path, ".meta") ||
	    ends_with(path, ".key") || shim_abs(path, abs, sizeof(abs)))
		return 0;
	for (const char *g = globs; *g;) {
		size_t len = strcspn(g, ":");
		if (len && len < sizeof(pat)) {
			memcpy(pat, g, len);
			pat[len] = '\0';
			if (fnmatch(pat, abs, FNM_PATHNAME) == 0)
				return 1;
		}
		g += len + (g[len] == ':');
	}
	return 0;
}

/* shim_has_meta -- path has a .meta file beside it: an spm pool's data file. */
int shim_has_meta(const char *path)
{
	char meta[PATH_MAX];
	struct stat st;
	if ((size_t)snprintf(meta, sizeof(meta), "%s.meta", path) >= sizeof(meta))
		return 0;
	return shim_real.stat(meta, &st) == 0;
}

/* shim_errno -- an spm error code as the errno a file call would set, after
 * spm's message (which names the file) on stderr. */
int shim_errno(int rc, const char *path)
{
	const char *msg = spm_errormsg();
	fprintf(stderr, "spm-preload: %s\n", msg && *msg ? msg : path);
	if (rc > SPM_E_BASE && rc < 0)
		return -rc;
	switch (rc) {
	case SPM_E_KEY:
	case SPM_E_KEYFILE:
	case SPM_E_ROLLBACK:
		return EACCES;
	case SPM_E_BUSY:
		return EBUSY;
	case SPM_E_NOSPACE:
		return ENOSPC;
	case SPM_E_OPTION:
	case SPM_E_DESIGN:
	case SPM_E_WRONGDESIGN:
	case SPM_E_LAYOUT:
	case SPM_E_INVAL:
		return EINVAL;
	default: /* not a pool, truncated, corrupt, tampered, ... */
		return EIO;
	}
}

static void shim_close_all(void);

/* shim_pool_get -- the pool at path, opened (size 0) or created; its
 * reference taken.  NULL with spm's code in *rc (errno for a system
 * error), nothing printed: the caller says what failed. */
struct shim_pool *shim_pool_get(const char *path, size_t size, int *rc)
{
	struct stat st;
	*rc = 0;
	shim_lock();
	if (!size && shim_real.stat(path, &st) == 0)
		for (struct shim_pool *sp = pools; sp; sp = sp->next)
			if (sp->dev == st.st_dev && sp->ino == st.st_ino &&
			    sp->fork_gen == fork_gen) {
				sp->refs++;
				shim_unlock();
				return sp;
			}
	struct shim_pool *sp = calloc(1, sizeof(*sp));
	if (!sp) {
		shim_unlock();
		*rc = -ENOMEM;
		return NULL;
	}
	const char *force = getenv("SPM_PRELOAD_FORCE");
	spm_pool *p = NULL;
	shim_inside++;
	*rc = pool_preload(&p, path, size ? size + SHIM_BASE : 0, force && !strcmp(force, "1"));
	if (!*rc && shim_real.stat(path, &st) != 0)
		*rc = -errno;
	if (*rc && p)
		spm_close(p);
	shim_inside--;
	if (*rc) {
		free(sp);
		shim_unlock();
		return NULL;
	}
	sp->pool = p;
	sp->view = p->view;
	sp->size = p->size - SHIM_BASE;
	sp->view_fd = p->view_fd;
	sp->dev = st.st_dev;
	sp->ino = st.st_ino;
	sp->fork_gen = fork_gen;
	sp->refs = 1;
	sp->next = pools;
	pools = sp;
	shim_unlock();
	return sp;
}

/* pool_put_locked -- shim_pool_put with the registry held: a pool no
 * longer named waits in closing for the next grace period (settle_locked). */
static void pool_put_locked(struct shim_pool *sp)
{
	if (--sp->refs)
		return;
	for (struct shim_pool **pp = &pools; *pp; pp = &(*pp)->next)
		if (*pp == sp) {
			*pp = sp->next;
			break;
		}
	sp->next = closing;
	closing = sp;
}

/* close_pool -- a pool no reader can reach any more, closed and freed. */
static void close_pool(struct shim_pool *sp)
{
	if (sp->fork_gen != fork_gen) { /* the parent's: its copy let go, no more */
		free(sp);
		return;
	}
	shim_inside++;
	int rc = spm_close(sp->pool);
	shim_inside--;
	if (rc)
		(void)shim_errno(rc, "spm_close");
	free(sp);
}

/* settle_locked -- the writers' changes made visible: a new snapshot of
 * the mappings published if they changed, then (if anything is to be freed
 * or closed) a grace period, after which no reader holds the old snapshot
 * or a pool in closing. */
static void settle_locked(void)
{
	struct map_snap *old = NULL;
	if (maps_changed) {
		struct map_snap *s = malloc(sizeof(*s) + nmaps * sizeof(s->m[0]));
		if (!s) /* out of memory: readers keep the old snapshot, and every
			 * pool it names stays open (the next change retries) */
			return;
		s->n = nmaps;
		memcpy(s->m, maps, nmaps * sizeof(s->m[0]));
		old = rcu_xchg_pointer(&snap, s);
		maps_changed = 0;
		__atomic_store_n(&nmaps_seen, nmaps, __ATOMIC_RELEASE);
	}
	if (!old && !closing)
		return;
	urcu_bp_synchronize_rcu();
	free(old);
	while (closing) {
		struct shim_pool *sp = closing;
		closing = sp->next;
		close_pool(sp);
	}
}

void shim_pool_put(struct shim_pool *sp)
{
	shim_lock();
	pool_put_locked(sp);
	shim_unlock();
}

/* shim_close_all -- at exit (OpenSSL still there: shim_init):
 * every pool still open closed cleanly (what the program left unflushed is
 * lost, as at a power failure); what still names a pool forgets it, so a
 * later munmap or close (another library's exit code) finds nothing. */
static void shim_close_all(void)
{
	shim_lock();
	nmaps = 0;
	maps_changed = 1;
	__atomic_store_n(&nmaps_seen, 0, __ATOMIC_RELEASE);
	for (int fd = 0; fd < SHIM_MAX_FD; fd++) {
		struct shim_fd *e = __atomic_load_n(&fd_tab[fd], __ATOMIC_ACQUIRE);
		if (e) {
			__atomic_store_n(&e->tracked, 0, __ATOMIC_RELEASE);
			__atomic_store_n(&e->sp, NULL, __ATOMIC_RELEASE);
		}
	}
	while (pools) {
		struct shim_pool *sp = pools;
		sp->refs = 1;
		pool_put_locked(sp);
	}
	shim_unlock();
}

/* fork_child -- in a child of fork(): the pools open so far are the
 * parent's (spm refuses a forked handle), flushes of them are not its. */
static void fork_child(void)
{
	fork_gen++;
}

/* shim_init -- at load: OpenSSL initialised without its exit handler,
 * which would tear it down before shim_close_all closes the pools with it
 * (the exit handlers of the program's libraries run before the shim's own
 * clean-up); its memory is the process's until the end.  A child of fork()
 * told apart. */
__attribute__((constructor)) static void shim_init(void)
{
	(void)OPENSSL_init_crypto(OPENSSL_INIT_NO_ATEXIT, NULL);
	(void)atexit(shim_close_all);
	(void)pthread_atfork(NULL, NULL, fork_child);
	/* liburcu's own state around fork(): a child that goes on without exec */
	(void)pthread_atfork(urcu_bp_before_fork, urcu_bp_after_fork_parent,
			     urcu_bp_after_fork_child);
}

/* descriptors */

static struct shim_fd *fd_entry(int fd, int make)
{
	if (fd < 0 || fd >= SHIM_MAX_FD)
		return NULL;
	struct shim_fd *e = __atomic_load_n(&fd_tab[fd], __ATOMIC_ACQUIRE);
	if (e || !make)
		return e;
	e = calloc(1, sizeof(*e));
	struct shim_fd *none = NULL;
	if (e && !__atomic_compare_exchange_n(&fd_tab[fd], &none, e, 0, __ATOMIC_ACQ_REL,
					      __ATOMIC_ACQUIRE)) {
		free(e);
		e = none;
	}
	return e;
}

/* fd_release -- e (of fd) names nothing any more: its pool let go */
static void fd_release(struct shim_fd *e)
{
	struct shim_pool *sp = __atomic_exchange_n(&e->sp, NULL, __ATOMIC_ACQ_REL);
	__atomic_store_n(&e->tracked, 0, __ATOMIC_RELEASE);
	if (sp)
		shim_pool_put(sp);
}

/* fd_live -- fd's entry, if it is tracked and fd is still the file it was
 * opened on; a stale entry (fd closed behind the shim's back and reused)
 * is released.  A system call (fstat) for tracked descriptors only. */
static struct shim_fd *fd_live(int fd)
{
	struct shim_fd *e = fd_entry(fd, 0);
	if (!e || !__atomic_load_n(&e->tracked, __ATOMIC_ACQUIRE))
		return NULL;
	struct stat st;
	if (shim_real.fstat(fd, &st) == 0 && st.st_dev == e->dev && st.st_ino == e->ino)
		return e;
	fd_release(e);
	return NULL;
}

struct shim_pool *shim_fd_pool(int fd)
{
	struct shim_fd *e = fd_live(fd);
	return e ? __atomic_load_n(&e->sp, __ATOMIC_ACQUIRE) : NULL;
}

int shim_fd_tracked(int fd)
{
	return fd_live(fd) != NULL;
}

const char *shim_fd_path(int fd)
{
	struct shim_fd *e = fd_entry(fd, 0);
	return e ? e->path : "";
}

/* fd_identity -- e records the file fd is open on now */
static void fd_identity(struct shim_fd *e, int fd)
{
	struct stat st;
	if (shim_real.fstat(fd, &st) == 0) {
		e->dev = st.st_dev;
		e->ino = st.st_ino;
	}
}

void shim_fd_set(int fd, const char *path, struct shim_pool *sp)
{
	struct shim_fd *e = fd_entry(fd, 1);
	if (!e)
		return;
	if (path != e->path && shim_abs(path, e->path, sizeof(e->path)))
		snprintf(e->path, sizeof(e->path), "%s", path);
	fd_identity(e, fd);
	__atomic_store_n(&e->sp, sp, __ATOMIC_RELEASE);
	__atomic_store_n(&e->tracked, 1, __ATOMIC_RELEASE);
}

void shim_fd_attach(int fd, struct shim_pool *sp)
{
	struct shim_fd *e = fd_entry(fd, 0);
	if (!e)
		return;
	fd_identity(e, fd);
	__atomic_store_n(&e->sp, sp, __ATOMIC_RELEASE);
}

void shim_fd_forget(int fd)
{
	struct shim_fd *e = fd_entry(fd, 0);
	if (!e)
		return;
	__atomic_store_n(&e->tracked, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&e->sp, NULL, __ATOMIC_RELEASE);
}

/* shim_fd_release -- a descriptor the kernel has just handed out that the
 * shim does not track: a stale entry of its number let go */
void shim_fd_release(int fd)
{
	struct shim_fd *e = fd_entry(fd, 0);
	if (e && __atomic_load_n(&e->tracked, __ATOMIC_ACQUIRE))
		fd_release(e);
}

/* mappings */

int shim_maps_any(void)
{
	return __atomic_load_n(&nmaps_seen, __ATOMIC_ACQUIRE) != 0;
}

/* map_add_locked -- [addr, addr+len) maps the pool sp from the program's
 * offset off (a reference of sp taken); 0 or -1 (ENOMEM). */
static int map_add_locked(void *addr, size_t len, uint64_t off, struct shim_pool *sp)
{
	if (nmaps == maps_cap) {
		size_t cap = maps_cap ? 2 * maps_cap : 16;
		struct shim_map *m = realloc(maps, cap * sizeof(*m));
		if (!m) {
			errno = ENOMEM;
			return -1;
		}
		maps = m;
		maps_cap = cap;
	}
	maps[nmaps++] = (struct shim_map){.addr = addr, .len = len, .off = off, .sp = sp};
	sp->refs++;
	maps_changed = 1;
	__atomic_store_n(&nmaps_seen, nmaps, __ATOMIC_RELEASE);
	return 0;
}

/* map_remove_locked -- [addr, addr+len) no longer maps any pool: mappings
 * inside it forgotten (their references dropped), ones that overlap it
 * trimmed or split. */
static void map_remove_locked(void *addr, size_t len)
{
	uint8_t *lo = addr, *hi = lo + len;
	if (nmaps == maps_cap) { /* room for a split */
		struct shim_map *m = realloc(maps, (maps_cap ? 2 * maps_cap : 16) * sizeof(*m));
		if (m) {
			maps = m;
			maps_cap = maps_cap ? 2 * maps_cap : 16;
		}
	}
	for (size_t i = 0; i < nmaps;) {
		struct shim_map *m = &maps[i];
		uint8_t *mlo = m->addr, *mhi = m->addr + m->len;
		if (mhi <= lo || mlo >= hi) {
			i++;
			continue;
		}
		if (mlo < lo && mhi > hi && nmaps < maps_cap) { /* a hole: split */
			maps[nmaps++] = (struct shim_map){.addr = hi, .len = (size_t)(mhi - hi),
							  .off = m->off + (uint64_t)(hi - mlo),
							  .sp = m->sp};
			m->sp->refs++;
			m->len = (size_t)(lo - mlo);
			i++;
		} else if (mlo < lo) { /* its tail */
			m->len = (size_t)(lo - mlo);
			i++;
		} else if (mhi > hi) { /* its head */
			m->off += (uint64_t)(hi - mlo);
			m->addr = hi;
			m->len = (size_t)(mhi - hi);
			i++;
		} else { /* all of it */
			struct shim_pool *sp = m->sp;
			maps[i] = maps[--nmaps];
			pool_put_locked(sp);
		}
		maps_changed = 1;
	}
	if (maps_changed) /* the count falls at settle_locked, with the snapshot */
		__atomic_store_n(&nmaps_seen, nmaps > nmaps_seen ? nmaps : nmaps_seen,
				 __ATOMIC_RELEASE);
}

/* shim_map_pool -- mmap of the pool sp from the program's offset off: its
 * view mapped there and recorded (shared mappings), with the registry held
 * so that no other thread's munmap or mmap of the same addresses comes
 * between the two. */
void *shim_map_pool(void *addr, size_t len, int prot, int flags, struct shim_pool *sp,
		    uint64_t off)
{
	shim_lock();
	void *a = shim_real.mmap(addr, len, prot, flags, sp->view_fd, (off_t)(off + SHIM_BASE));
	if (a != MAP_FAILED) {
		map_remove_locked(a, len); /* MAP_FIXED over an earlier mapping */
		if (!(flags & MAP_PRIVATE) && map_add_locked(a, len, off, sp)) {
			shim_real.munmap(a, len);
			a = MAP_FAILED;
		}
	}
	shim_unlock();
	return a;
}

/* shim_map_other -- an mmap of anything else with MAP_FIXED where pools may
 * be mapped: what it replaces is forgotten, under the registry. */
void *shim_map_other(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	shim_lock();
	void *a = shim_real.mmap(addr, len, prot, flags, fd, off);
	if (a != MAP_FAILED)
		map_remove_locked(a, len);
	shim_unlock();
	return a;
}

/* shim_unmap -- munmap, and [addr, addr+len) forgotten, under the registry */
int shim_unmap(void *addr, size_t len)
{
	shim_lock();
	int rc = shim_real.munmap(addr, len);
	if (rc == 0)
		map_remove_locked(addr, len);
	shim_unlock();
	return rc;
}

/* shim_map_find -- the mapping of a pool that holds addr, or NULL (in a
 * read-side section of the caller's). */
const struct shim_map *shim_map_find(const void *addr)
{
	const uint8_t *a = addr;
	const struct map_snap *s = rcu_dereference(snap);
	for (size_t i = 0; s && i < s->n; i++)
		if (a >= s->m[i].addr && a < s->m[i].addr + s->m[i].len)
			return &s->m[i];
	return NULL;
}

/* next_map -- the mapping of snapshot s of a pool that holds a, else the
 * first that starts in (a, end), or NULL */
static const struct shim_map *next_map(const struct map_snap *s, const uint8_t *a,
				       const uint8_t *end)
{
	const struct shim_map *best = NULL;
	for (size_t i = 0; s && i < s->n; i++) {
		const struct shim_map *m = &s->m[i];
		if (a >= m->addr && a < m->addr + m->len)
			return m;
		if (m->addr > a && m->addr < end && (!best || m->addr < best->addr))
			best = m;
	}
	return best;
}

/* shim_flush -- each line of [addr, addr+len) that maps a pool (of this
 * process: not a parent's, after fork) written back through its
 * controller; the bytes of the range that map one (the caller gives the
 * rest, if any, to the real function). */
size_t shim_flush(const void *addr, size_t len)
{
	if (!shim_maps_any())
		return 0;
	const uint8_t *a = addr, *end = a + len;
	size_t covered = 0;
	shim_read_lock();
	const struct map_snap *s = rcu_dereference(snap);
	while (a < end) {
		const struct shim_map *m = next_map(s, a, end);
		if (!m)
			break;
		if (m->addr > a)
			a = m->addr; /* a gap: not a pool's */
		size_t n = (size_t)(m->addr + m->len - a);
		if (n > (size_t)(end - a))
			n = (size_t)(end - a);
		uint64_t off = m->off + (uint64_t)(a - m->addr);
		if (off < m->sp->size && m->sp->fork_gen == fork_gen) {
			size_t k = n > m->sp->size - off ? m->sp->size - off : n;
			shim_inside++;
			spm_flush(m->sp->pool, m->sp->view + SHIM_BASE + off, k);
			shim_inside--;
			covered += k;
		}
		a += n;
	}
	shim_read_unlock();
	return covered;
}

/* shim_drain -- a fence: every pool's lines this thread wrote back are
 * durable when it returns (the pools mapped: a line reaches a pool's
 * controller through a mapping's flush, or a write that persists itself). */
void shim_drain(void)
{
	shim_read_lock();
	const struct map_snap *s = rcu_dereference(snap);
	shim_inside++;
	for (size_t i = 0; s && i < s->n; i++) {
		struct shim_pool *sp = s->m[i].sp;
		size_t k = 0;
		while (k < i && s->m[k].sp != sp) /* each pool once */
			k++;
		if (k == i && sp->fork_gen == fork_gen)
			spm_drain(sp->pool);
	}
	shim_inside--;
	shim_read_unlock();
}

/* plaintext I/O */

ssize_t shim_pread(struct shim_pool *sp, void *buf, size_t n, uint64_t off)
{
	if (off >= sp->size)
		return 0;
	if (n > sp->size - off)
		n = sp->size - off;
	memcpy(buf, sp->view + SHIM_BASE + off, n);
	return (ssize_t)n;
}

ssize_t shim_pwrite(struct shim_pool *sp, const void *buf, size_t n, uint64_t off)
{
	if (n && off >= sp->size) {
		errno = EFBIG; /* a pool does not grow */
		return -1;
	}
	if (n > sp->size - off)
		n = sp->size - off;
	memcpy(sp->view + SHIM_BASE + off, buf, n);
	shim_read_lock(); /* the pool stays open until its end */
	shim_inside++;
	spm_persist(sp->pool, sp->view + SHIM_BASE + off, n);
	shim_inside--;
	shim_read_unlock();
	return (ssize_t)n;
}

void shim_stat_fix(struct stat *st)
{
	if (st->st_size >= (off_t)SHIM_BASE)
		st->st_size -= SHIM_BASE;
	if (st->st_blocks >= (blkcnt_t)(SHIM_BASE / 512))
		st->st_blocks -= SHIM_BASE / 512;
}

/* shim_all_zero -- the first size bytes of the file open at fd are zeros. */
int shim_all_zero(int fd, uint64_t size)
{
	static const uint8_t zeros[1 << 16];
	uint8_t *buf = malloc(sizeof(zeros));
	int ok = buf != NULL;
	for (uint64_t off = 0; ok && off < size;) {
		ssize_t n = shim_real.pread(fd, buf, sizeof(zeros), (off_t)off);
		if (n <= 0)
			break;
		ok = memcmp(buf, zeros, (size_t)n) == 0;
		off += (uint64_t)n;
	}
	free(buf);
	return ok;
}

/* unlink_pool -- the files of a pool made at path removed (a conversion
 * that could not finish) */
static void unlink_pool(const char *path)
{
	static const char *const suffix[] = {"", ".meta", ".key", ".key.tcb"};
	char name[PATH_MAX + 16];
	for (unsigned i = 0; i < 4; i++) {
		snprintf(name, sizeof(name), "%s%s", path, suffix[i]);
		(void)shim_real.unlink(name);
	}
}

/*
 * shim_convert -- the plain file open at fd (path, read-write) made an spm
 * pool: its size kept as the program's size, its content (zeros: a file
 * the program has just made and sized) the pool's.  The plain file is
 * moved aside, the pool made at path, then fd re-pointed at the pool's data
 * file (its status flags kept, and flocked as the program had it); the
 * plain file is removed last, or put back if the pool cannot be made.  A
 * file holding anything but zeros is refused: spm does not import
 * plaintext.  One conversion at a time; a descriptor another thread has
 * converted meanwhile gets that pool.  NULL with errno set and a message.
 */
struct shim_pool *shim_convert(int fd, const char *path)
{
	struct stat st;
	char aside[PATH_MAX + 16];
	pthread_mutex_lock(&convert_lock);
	struct shim_pool *sp = shim_fd_pool(fd);
	if (sp) {
		pthread_mutex_unlock(&convert_lock);
		return sp;
	}
	if (shim_real.fstat(fd, &st) != 0)
		goto fail;
	if (!S_ISREG(st.st_mode) || st.st_size <= 0 || st.st_size % 4096) {
		fprintf(stderr, "spm-preload: %s: a pool must be a regular file of a whole number "
			"of pages (it has %lld bytes)\n", path, (long long)st.st_size);
		errno = EINVAL;
		goto fail;
	}
	if (!shim_all_zero(fd, (uint64_t)st.st_size)) {
		fprintf(stderr, "spm-preload: %s: matches SPM_PRELOAD_PATHS but holds data and is "
			"not an spm pool (no %s.meta): spm does not import plaintext\n", path, path);
		errno = EINVAL;
		goto fail;
	}
	snprintf(aside, sizeof(aside), "%s.spm-plain", path);
	if (shim_real.rename(path, aside) != 0)
		goto fail;
	int rc;
	if (!(sp = shim_pool_get(path, (size_t)st.st_size, &rc))) {
		errno = shim_errno(rc, path);
		goto put_back;
	}
	int fl = fcntl(fd, F_GETFL), fdflags = fcntl(fd, F_GETFD);
	int nfd = shim_real.open(path, O_RDWR | O_CLOEXEC);
	if (nfd < 0 || shim_real.dup2(nfd, fd) < 0) {
		int e = errno;
		if (nfd >= 0)
			shim_real.close(nfd);
		shim_pool_put(sp);
		unlink_pool(path);
		errno = e;
		goto put_back;
	}
	shim_real.close(nfd);
	if (fdflags >= 0)
		(void)fcntl(fd, F_SETFD, fdflags);
	if (fl >= 0)
		(void)fcntl(fd, F_SETFL, fl);
	(void)flock(fd, LOCK_EX | LOCK_NB);
	(void)shim_real.unlink(aside);
	shim_fd_attach(fd, sp);
	pthread_mutex_unlock(&convert_lock);
	return sp;
put_back: {
	int e = errno;
	(void)shim_real.rename(aside, path);
	errno = e;
}
fail:
	pthread_mutex_unlock(&convert_lock);
	return NULL;
}
