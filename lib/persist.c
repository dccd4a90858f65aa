/*
 * persist.c -- the CPU side of persistence: clwb (spm_flush), sfence
 * (spm_drain), CounterAtomic declarations and counter_cache_writeback
 * (SCA section 4.3), each handed to the controller as line ranges (a
 * transaction's commit: all its ranges in one call, pool_write_ranges; a
 * few such calls in one controller entry, pool_write_batches).  The calling
 * thread's id, modeled core and count of lanes held live in one TLS block
 * (thread_self, thread_lanes); the transaction code passes the core down
 * rather than look it up again.
 *
 * Also the process-wide state behind them: the fork generation (a pool is
 * refused in a child of the process that opened it) and the list of open
 * pools, which a thread's exit walks to abort the transactions it left open.
 */
#include <pthread.h>

#include "access.h"
#include "pool_internal.h"

/* The calling thread's id, modeled core and lanes held, read by every
 * runtime call: initial-exec, so a read is one %fs-relative load rather
 * than a __tls_get_addr call (the latter was 3 % of an SCA hash-table
 * insert's time with timing=off).  A module with initial-exec variables must
 * have its whole TLS block in static TLS, which glibc keeps a few hundred
 * bytes of for libraries loaded by dlopen(); this struct is the library's
 * only thread-local variable (the error message is a per-thread heap
 * buffer, emu/err.c), and test_dlopen loads libspm.so that way.  TLS
 * descriptors (-mtls-dialect=gnu2) were tried and dropped (doc/tried.md):
 * where dlopen() finds static TLS short their resolver calls into malloc yet
 * must preserve every register, a path the C library has had to fix. */
struct self {
	uint64_t id;       /* thread_id, 0 until first asked */
	uint64_t core_uid; /* a closed pool's address may be reused: its uid is not */
	unsigned core;     /* the core set on the pool of uid core_uid */
	unsigned lanes;    /* transaction lanes it holds, in every pool */
	uint64_t lane_uid; /* the pool of its last lane taken (lane_idx) */
	unsigned lane_idx;
	/* the pool whose view holds [view_lo, view_lo + view_span), found for
	 * an access (pool_at) while views_gen was view_gen */
	unsigned view_gen;
	uintptr_t view_lo, view_span;
	spm_pool *view_pool;
};
static __thread struct self self __attribute__((tls_model("initial-exec")));
static uint64_t next_thread_id = 1;

/*
 * Process-wide state.  pool_fork_gen is raised in every child of fork() (a
 * pthread_atfork handler), so a pool whose fork_gen differs was opened by
 * another process: one load and compare per call, no getpid() system call.
 * The pools of the process are in a list under reg_lock; a thread that has
 * an id carries a value under exit_key, so that its exit runs thread_exit.
 * reg_lock is held across fork() (the child's list is then whole).
 */
unsigned pool_fork_gen;
static pthread_once_t proc_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static spm_pool *reg_head;
static pthread_key_t exit_key;
static int exit_key_ok;

/* fork_prepare, fork_parent, fork_child -- around fork(): the child raises
 * the generation, so that every pool it inherited is refused. */
static void fork_prepare(void)
{
	pthread_mutex_lock(&reg_lock);
}

static void fork_parent(void)
{
	pthread_mutex_unlock(&reg_lock);
}

static void views_off_locked(void);

static void fork_child(void)
{
	__atomic_store_n(&pool_fork_gen, pool_fork_gen + 1, __ATOMIC_RELAXED);
	views_off_locked(); /* the child models none of its parent's views */
	pthread_mutex_unlock(&reg_lock);
}

/* thread_exit -- exit_key's destructor: abort every transaction the exiting
 * thread left open, in each pool of the process that it did not inherit
 * across a fork, and free their lanes. */
static void thread_exit(void *unused)
{
	(void)unused;
	if (!self.lanes || !self.id) /* in no transaction: nothing to walk */
		return;
	pthread_mutex_lock(&reg_lock);
	for (spm_pool *p = reg_head; p; p = p->reg_next)
		if (!pool_forked(p))
			tx_thread_exit(p, self.id);
	pthread_mutex_unlock(&reg_lock);
}

/* proc_init -- the fork handlers and the exit key, once per process. */
static void proc_init(void)
{
	(void)pthread_atfork(fork_prepare, fork_parent, fork_child);
	exit_key_ok = pthread_key_create(&exit_key, thread_exit) == 0;
}

/* proc_fini -- the library is unloaded (dlclose): no destructor of ours may
 * run at a later thread's exit. */
static __attribute__((destructor)) void proc_fini(void)
{
	if (__atomic_load_n(&exit_key_ok, __ATOMIC_ACQUIRE))
		pthread_key_delete(exit_key);
	exit_key_ok = 0;
}

/* pool_register -- p joins the process's pools (at pool_new), under its
 * fork generation of now. */
void pool_register(spm_pool *p)
{
	pthread_once(&proc_once, proc_init);
	pthread_mutex_lock(&reg_lock);
	p->fork_gen = __atomic_load_n(&pool_fork_gen, __ATOMIC_RELAXED);
	p->reg_next = reg_head;
	p->reg_prev = NULL;
	if (reg_head)
		reg_head->reg_prev = p;
	reg_head = p;
	p->registered = 1;
	pthread_mutex_unlock(&reg_lock);
}

/*
 * The views whose accesses are modeled (the core model, access.c): the
 * window spanning them all is what the instrumentation entry points test
 * every access against; views_gen changes whenever the set does, so a
 * thread's remembered view (pool_at) is found again.  Under reg_lock.
 */
SPM_API struct spm_access_window spm_access_window;
static unsigned views_gen = 1;

static void views_update_locked(void)
{
	uintptr_t lo = UINTPTR_MAX, hi = 0;
	for (spm_pool *p = reg_head; p; p = p->reg_next)
		if (p->access_on) {
			uintptr_t v = (uintptr_t)p->view;
			lo = v < lo ? v : lo;
			hi = v + p->size > hi ? v + p->size : hi;
		}
	__atomic_store_n(&spm_access_window.span, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&spm_access_window.lo, hi ? lo : 0, __ATOMIC_RELAXED);
	__atomic_store_n(&spm_access_window.span, hi ? hi - lo : 0, __ATOMIC_RELEASE);
	__atomic_store_n(&views_gen, views_gen + 1, __ATOMIC_RELEASE);
}

/* views_off_locked -- in a child of fork(): no view is modeled (its
 * accesses would reach the parent's controller state and files). */
static void views_off_locked(void)
{
	for (spm_pool *p = reg_head; p; p = p->reg_next)
		p->access_on = 0;
	views_update_locked();
}

/* pool_access_on -- p's view is ready: model its accesses, if its emu does. */
void pool_access_on(spm_pool *p)
{
	if (!emu_models_accesses(p->emu))
		return;
	emu_set_view(p->emu, p->view);
	pthread_mutex_lock(&reg_lock);
	p->access_on = 1;
	views_update_locked();
	pthread_mutex_unlock(&reg_lock);
}

/* pool_at -- the pool whose modeled view holds a, or NULL; *off its offset. */
spm_pool *pool_at(uintptr_t a, uint64_t *off)
{
	struct self *s = &self;
	if (s->view_gen == __atomic_load_n(&views_gen, __ATOMIC_ACQUIRE) &&
	    a - s->view_lo < s->view_span) {
		*off = a - s->view_lo;
		return s->view_pool;
	}
	spm_pool *found = NULL;
	pthread_mutex_lock(&reg_lock);
	for (spm_pool *p = reg_head; p && !found; p = p->reg_next)
		if (p->access_on && a - (uintptr_t)p->view < p->size && !pool_forked(p))
			found = p;
	if (found) {
		s->view_gen = views_gen;
		s->view_lo = (uintptr_t)found->view;
		s->view_span = found->size;
		s->view_pool = found;
		*off = a - s->view_lo;
	}
	pthread_mutex_unlock(&reg_lock);
	return found;
}

/* pool_unregister -- p leaves the list (once; again is a no-op).  It waits
 * for an exiting thread that is aborting its transaction in p. */
void pool_unregister(spm_pool *p)
{
	pthread_mutex_lock(&reg_lock);
	if (p->access_on) {
		p->access_on = 0;
		views_update_locked();
	}
	if (p->registered) {
		if (p->reg_prev)
			p->reg_prev->reg_next = p->reg_next;
		else
			reg_head = p->reg_next;
		if (p->reg_next)
			p->reg_next->reg_prev = p->reg_prev;
		p->registered = 0;
	}
	pthread_mutex_unlock(&reg_lock);
}

/* pool_forked_err -- the refusal of a pool used in a child of fork(). */
int pool_forked_err(const char *fn)
{
	return emu_err(SPM_E_INVAL, "%s: pool used after fork (it belongs to the process "
		       "that opened it)", fn);
}

/* new_id -- the calling thread's id, assigned on its first call; its exit
 * will abort what it leaves open (thread_exit). */
static __attribute__((noinline)) uint64_t new_id(void)
{
	self.id = __atomic_fetch_add(&next_thread_id, 1, __ATOMIC_RELAXED);
	pthread_once(&proc_once, proc_init);
	if (exit_key_ok)
		(void)pthread_setspecific(exit_key, (void *)1);
	return self.id;
}

/* thread_id -- a small unique id of the calling thread (never 0). */
uint64_t thread_id(void)
{
	uint64_t id = self.id;
	return id ? id : new_id();
}

/* thread_lanes -- the count of lanes the calling thread holds (lane_take
 * adds one, its own lane_release takes it back): 0 means it is in no
 * transaction of any pool, which spm_tx_begin then knows without a scan.
 * Only the thread changes its count, so a lane freed by another thread's
 * spm_close (tx_abort_all) leaves it too high: that thread scans, as
 * before, and stays correct. */
unsigned *thread_lanes(void)
{
	return &self.lanes;
}

/* thread_lane_note -- the calling thread took lane idx of the pool of uid
 * (lane_of looks there first: no other lane's line is read). */
void thread_lane_note(uint64_t uid, unsigned idx)
{
	self.lane_uid = uid;
	self.lane_idx = idx;
}

/* thread_lane_hint -- the lane the calling thread took last on the pool of
 * uid, or -1. */
int thread_lane_hint(uint64_t uid)
{
	return self.lane_uid == uid ? (int)self.lane_idx : -1;
}

/* pool_core -- the modeled core of this thread on pool p; the core work
 * it did outside every pool since, charged (access.c). */
unsigned pool_core(spm_pool *p)
{
	unsigned core = self.core_uid == p->uid ? self.core : 0;
	access_sync(p, core);
	return core;
}

/* pool_core_of -- pool_core without the charge. */
unsigned pool_core_of(spm_pool *p)
{
	return self.core_uid == p->uid ? self.core : 0;
}

/* thread_self -- thread_id(), and pool_core(p) in *core. */
uint64_t thread_self(spm_pool *p, unsigned *core)
{
	struct self s = self; /* a copy: one TLS lookup, before any branch */
	*core = s.core_uid == p->uid ? s.core : 0;
	access_sync(p, *core);
	return s.id ? s.id : new_id();
}

SPM_API int spm_core_set(spm_pool *pool, unsigned core)
{
	if (pool && pool_forked(pool))
		return pool_forked_err("spm_core_set");
	if (!pool || core >= EMU_MAX_CORES)
		return emu_err(SPM_E_INVAL, "spm_core_set: core %u out of range [0, %u)",
			       core, EMU_MAX_CORES);
	access_sync(pool, pool_core_of(pool)); /* the work before, on the core before */
	self.core_uid = pool->uid;
	self.core = core;
	return 0;
}

/* lines_of -- the lines of [off, off+len) clipped to the pool; 0 if none. */
static uint64_t lines_of(spm_pool *p, uint64_t off, uint64_t len, uint64_t *first)
{
	*first = 0;
	if (len == 0 || off >= p->size)
		return 0;
	if (off < POOL_HDR_OFF) { /* page 0 is the controller's data header */
		if (off + len <= POOL_HDR_OFF)
			return 0;
		len -= POOL_HDR_OFF - off;
		off = POOL_HDR_OFF;
	}
	if (len > p->size - off)
		len = p->size - off;
	*first = off / SPM_LINE;
	return (off + len + SPM_LINE - 1) / SPM_LINE - *first;
}

/* pool_write_range_f -- write back the lines of a pool range on core (flags:
 * EMU_WB_*). */
void pool_write_range_f(spm_pool *p, unsigned core, uint64_t off, uint64_t len,
			unsigned flags)
{
	uint64_t first, n = lines_of(p, off, len, &first);
	if (n) {
		evict_clean(p, first, n); /* first: see evict.c */
		emu_write_lines(p->emu, core, first, n, p->view, flags);
	} else if (flags & EMU_WB_FENCE) {
		emu_fence(p->emu, core);
	}
}

/* pool_write_range -- write back the lines of a pool range. */
void pool_write_range(spm_pool *p, uint64_t off, uint64_t len)
{
	pool_write_range_f(p, pool_core(p), off, len, 0);
}

/* ccwb_range -- counter_cache_writeback of a pool range on core. */
static void ccwb_range(spm_pool *p, unsigned core, uint64_t off, uint64_t len)
{
	uint64_t first, n = lines_of(p, off, len, &first);
	if (n)
		emu_ctr_writeback(p->emu, core, first, n);
}

/* clip_ranges -- the non-empty line ranges of pool ranges r[0..n-1] into lr. */
static size_t clip_ranges(spm_pool *p, const struct range *r, size_t n, struct emu_range *lr)
{
	size_t m = 0;
	for (size_t k = 0; k < n; k++) {
		lr[m].n = lines_of(p, r[k].off, r[k].len, &lr[m].first);
		m += lr[m].n != 0;
	}
	return m;
}

enum { CHUNK = 64, MAX_BATCHES = 4 };

/*
 * pool_write_ranges -- pool_write_range of each of n ranges in order, then
 * (flags EMU_WB_CCWB) pool_ccwb_range of each, then (EMU_WB_FENCE) a fence:
 * one controller entry for up to 64 ranges (a transaction's commit).
 */
void pool_write_ranges(spm_pool *p, unsigned core, const struct range *r, size_t n,
		       unsigned flags)
{
	struct emu_range lr[CHUNK];
	if (n <= CHUNK) {
		struct pool_batch b = {r, n, flags};
		pool_write_batches(p, core, &b, 1);
		return;
	}
	/* more: every write first, a chunk at a time, then the rest */
	for (size_t k = 0; k < n; k += CHUNK) {
		size_t m = clip_ranges(p, r + k, n - k < CHUNK ? n - k : CHUNK, lr);
		for (size_t i = 0; i < m; i++)
			evict_clean(p, lr[i].first, lr[i].n);
		emu_write_ranges(p->emu, core, lr, m, p->view, 0);
	}
	for (size_t k = 0; (flags & EMU_WB_CCWB) && k < n; k++)
		ccwb_range(p, core, r[k].off, r[k].len);
	if (flags & EMU_WB_FENCE)
		emu_fence(p->emu, core);
}

/*
 * pool_write_batches -- pool_write_ranges of each of nb batches in order:
 * one controller entry up to each fence when they hold at most 64 ranges
 * in all (emu_write_batches), else one pool_write_ranges each.
 */
void pool_write_batches(spm_pool *p, unsigned core, const struct pool_batch *b, size_t nb)
{
	struct emu_range lr[CHUNK];
	struct emu_batch eb[MAX_BATCHES];
	size_t total = 0, m = 0;
	for (size_t i = 0; i < nb; i++)
		total += b[i].n;
	if (nb > MAX_BATCHES || total > CHUNK) {
		for (size_t i = 0; i < nb; i++)
			pool_write_ranges(p, core, b[i].r, b[i].n, b[i].flags);
		return;
	}
	for (size_t i = 0; i < nb; i++) {
		eb[i] = (struct emu_batch){lr + m, clip_ranges(p, b[i].r, b[i].n, lr + m),
					   b[i].flags};
		m += eb[i].n;
	}
	for (size_t i = 0; i < m; i++)
		evict_clean(p, lr[i].first, lr[i].n);
	emu_write_batches(p->emu, core, eb, nb, p->view);
}

/* pool_ccwb_range -- counter_cache_writeback of a pool range. */
void pool_ccwb_range(spm_pool *p, uint64_t off, uint64_t len)
{
	ccwb_range(p, pool_core(p), off, len);
}

/* view_off -- offset of addr in the view, or UINT64_MAX. */
static uint64_t view_off(spm_pool *p, const void *addr)
{
	const uint8_t *a = addr;
	if (!p || a < p->view || a >= p->view + p->size)
		return UINT64_MAX;
	return (uint64_t)(a - p->view);
}

/* flush -- spm_flush of a pool of this process. */
static inline void flush(spm_pool *pool, const void *addr, size_t len)
{
	uint64_t off = view_off(pool, addr);
	if (off == UINT64_MAX)
		return;
	/* tx_track=pages: lines an open transaction changed are logged first,
	 * or (another thread's) wait for its end; not written unlogged */
	if (__builtin_expect(pool->track != NULL, 0) && track_flush(pool, off, len))
		return;
	evict_maybe(pool);
	pool_write_range(pool, off, len);
}

/* drain -- spm_drain of a pool of this process. */
static inline void drain(spm_pool *pool)
{
	evict_maybe(pool);
	emu_fence(pool->emu, pool_core(pool));
}

SPM_API void spm_flush(spm_pool *pool, const void *addr, size_t len)
{
	if (pool && pool_forked(pool)) {
		pool_forked_err("spm_flush");
		return;
	}
	flush(pool, addr, len);
}

SPM_API void spm_drain(spm_pool *pool)
{
	if (!pool)
		return;
	if (pool_forked(pool)) {
		pool_forked_err("spm_drain");
		return;
	}
	drain(pool);
}

SPM_API void spm_persist(spm_pool *pool, const void *addr, size_t len)
{
	if (!pool)
		return;
	if (pool_forked(pool)) {
		pool_forked_err("spm_persist");
		return;
	}
	flush(pool, addr, len);
	drain(pool);
}

SPM_API void spm_model_work(spm_pool *pool, uint64_t ns)
{
	if (pool && pool_forked(pool))
		pool_forked_err("spm_model_work");
	else if (pool && ns && ns <= UINT64_MAX / 1000)
		emu_work(pool->emu, pool_core(pool), ns);
}

SPM_API int spm_counter_atomic(spm_pool *pool, const void *addr, size_t len)
{
	if (pool && pool_forked(pool))
		return pool_forked_err("spm_counter_atomic");
	uint64_t off = view_off(pool, addr), first = 0;
	if (off == UINT64_MAX || off < POOL_HDR_OFF || len == 0 || len > pool->size - off)
		return emu_err(SPM_E_INVAL, "spm_counter_atomic: range not inside the pool");
	uint64_t n = lines_of(pool, off, len, &first);
	emu_set_counter_atomic(pool->emu, first, n);
	return 0;
}

SPM_API void spm_counter_cache_writeback(spm_pool *pool, const void *addr, size_t len)
{
	if (pool && pool_forked(pool)) {
		pool_forked_err("spm_counter_cache_writeback");
		return;
	}
	uint64_t off = view_off(pool, addr);
	if (off != UINT64_MAX)
		pool_ccwb_range(pool, off, len);
}
