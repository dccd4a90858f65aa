/*
 * track.c -- transactions that find their own writes (tx_track=pages):
 * spm_tx_add becomes optional.
 *
 * The pool's heap pages in the view are read-only (mprotect) while no
 * store has made them writable: the whole heap at open, and at each
 * spm_tx_begin the pages written since the last one.  In a transaction the
 * first store to a page faults; the SIGSEGV handler copies the page's old
 * content into a snapshot slot and makes the page writable, and the store
 * is retried.  Outside a transaction a fault only makes the page writable
 * (and listed, to be protected again at the next spm_tx_begin): the cost
 * of a transaction is a system call and a fault per page it writes, not a
 * pass over the heap.  At commit each page written is compared with
 * its snapshot line by line, and every changed line is handed to the
 * transaction code (tx.c) exactly as an spm_tx_add of it would be: logged
 * from the snapshot (the old content) in the undo designs, declared to the
 * controller in the redo designs.  An abort copies the snapshots back.
 *
 * The store reaches the view before its line is logged, so nothing may
 * write such a line back before the commit has logged it: natural
 * evictions of the core model skip the lines of written pages until the
 * transaction ends (emu_set_hold), and spm_flush of them logs them first
 * (the owner) or waits for the transaction's end (another thread).
 *
 * Threads.  Page protection belongs to the process, not to a thread, so
 * the tracked transactions of one pool run one at a time (spm_tx_begin
 * waits), and while one is open every first store to a heap page, by any
 * thread, is snapshotted for it: stores of other threads to the heap are
 * the open transaction's (committed or undone with it).  Between
 * transactions nothing is tracked.
 *
 * Only the heap is protected: the pool header, the lanes' logs and the
 * allocator's bitmaps, which the runtime writes during a transaction, lie
 * below heap_off and are never read-only.  The runtime's own stores to the
 * heap in a transaction (spm_tx_alloc's zeroing, an abort's restore) take
 * the same path without a fault (track_touch), or come after the heap is
 * writable again.
 *
 * Memory: the snapshot area is one anonymous mapping of the heap's size
 * made at open (MAP_NORESERVE: only the pages a transaction writes are
 * backed), whose pages past the first TRACK_KEEP are given back after each
 * transaction; one 32-bit word of state and one of page list per heap page.
 * The handler allocates nothing and takes no lock: atomic words, memcpy,
 * mprotect and sched_yield (the last two system calls are not on POSIX's
 * list of async-signal-safe functions, but are plain system calls on
 * Linux, as GC write barriers use them), and write and abort if an
 * mprotect fails.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "pool_internal.h"

#define TRACK_PAGE 4096u
#define TRACK_KEEP 64u      /* snapshot pages kept backed between transactions */
#define TRACK_MAX 64u       /* tracked pools at once in a process */
#define SLOT_BUSY UINT32_MAX /* a page's state while its snapshot is taken */
#define SLOT_RW (UINT32_MAX - 1) /* writable, written outside a transaction */
#define PAGE_NONE UINT32_MAX /* a page list entry not yet written */

struct track {
	uint8_t *heap;      /* the view's heap: [heap, heap + span) */
	uint64_t heap_off;  /* its pool offset */
	size_t span;
	uint32_t npages;
	uint32_t *slot;     /* per heap page: 0 (read-only), k + 1 (snapshot k),
			     * SLOT_BUSY or SLOT_RW */
	uint32_t *pages;    /* snapshot k's heap page, in fault order */
	uint32_t n;         /* snapshots taken in the open transaction */
	uint32_t *rw;       /* the pages in SLOT_RW (protected at the next begin) */
	uint32_t nrw;
	uint8_t *snap;      /* npages * TRACK_PAGE, MAP_NORESERVE */
	int open;           /* a tracked transaction is open: faults are its own */
	int inflight;       /* faults being handled (track_end waits for them) */
	/* one tracked transaction at a time (any thread may end it) */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int busy;
	uint64_t owner;     /* thread_id of its thread */
	uint64_t gen;       /* transactions begun */
};

/* the tracked pools of the process, read by the handler without a lock */
static struct track *tracked[TRACK_MAX];
static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sigaction old_segv;
static struct sigaction first_segv; /* the handler before spm's first install */
static __thread uintptr_t chain_frame; /* chain()'s frame in this thread's
					 * handler being run, or a stale one */
static int installed;

/* protect_fail -- an mprotect in the handler failed (rc != 0): out of
 * memory maps, the store can neither go on nor be tracked.  Fatal. */
static void protect_fail(int rc)
{
	if (!rc)
		return;
	static const char msg[] = "spm: tx_track=pages: mprotect failed in the write "
				  "fault handler\n";
	ssize_t w = write(2, msg, sizeof(msg) - 1);
	(void)w;
	abort();
}

/* snapshot_page -- the first store to the heap page holding a (in t's
 * heap) or the runtime's own: snapshot it and make it writable.
 * Async-signal-safe. */
static void snapshot_page(struct track *t, uintptr_t a)
{
	uint32_t pg = (uint32_t)((a - (uintptr_t)t->heap) / TRACK_PAGE);
	uint32_t s = 0;
	if (__atomic_compare_exchange_n(&t->slot[pg], &s, SLOT_BUSY, 0, __ATOMIC_ACQ_REL,
					__ATOMIC_ACQUIRE)) {
		uint32_t k = __atomic_fetch_add(&t->n, 1, __ATOMIC_RELAXED);
		uint8_t *page = t->heap + (size_t)pg * TRACK_PAGE;
		memcpy(t->snap + (size_t)k * TRACK_PAGE, page, TRACK_PAGE);
		protect_fail(mprotect(page, TRACK_PAGE, PROT_READ | PROT_WRITE));
		__atomic_store_n(&t->pages[k], pg, __ATOMIC_RELEASE);
		__atomic_store_n(&t->slot[pg], k + 1, __ATOMIC_RELEASE);
		return;
	}
	/* another thread snapshots it: wait until it is writable */
	while (__atomic_load_n(&t->slot[pg], __ATOMIC_ACQUIRE) == SLOT_BUSY)
		sched_yield();
}

/* writable_page -- a store outside a transaction to the read-only heap
 * page holding a: writable, listed for the next begin.  Async-signal-safe. */
static void writable_page(struct track *t, uintptr_t a)
{
	uint32_t pg = (uint32_t)((a - (uintptr_t)t->heap) / TRACK_PAGE);
	uint32_t s = 0;
	if (!__atomic_compare_exchange_n(&t->slot[pg], &s, SLOT_RW, 0, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE))
		return; /* another thread's: the store is retried until writable */
	uint32_t k = __atomic_fetch_add(&t->nrw, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&t->rw[k], pg, __ATOMIC_RELAXED);
	protect_fail(mprotect(t->heap + (size_t)pg * TRACK_PAGE, TRACK_PAGE,
			      PROT_READ | PROT_WRITE));
}

/* page_fault -- snapshot_page while a transaction is open (else the heap
 * is writable again: the store is retried); track_end waits for it. */
static void page_fault(struct track *t, uintptr_t a)
{
	__atomic_fetch_add(&t->inflight, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&t->open, __ATOMIC_SEQ_CST))
		snapshot_page(t, a);
	else
		writable_page(t, a);
	__atomic_fetch_sub(&t->inflight, 1, __ATOMIC_SEQ_CST);
}

/* chain -- a fault that is not a tracked page's: to the handler installed
 * before ours, or the default action (the process dies of it). */
static void chain(int sig, siginfo_t *si, void *uc)
{
	/* ours installed again over a handler that chains back to ours: on
	 * the way round (a deeper frame than the chain() that called it), the
	 * handler there before spm's first.  A handler that left by longjmp
	 * leaves a stale frame, higher on the stack than any later one's */
	char here;
	uintptr_t frame = (uintptr_t)&here;
	int loop = chain_frame && frame < chain_frame;
	struct sigaction prev = loop ? first_segv : old_segv;
	if ((prev.sa_flags & SA_SIGINFO) ||
	    (prev.sa_handler != SIG_DFL && prev.sa_handler != SIG_IGN)) {
		/* as the kernel would have run it: one-shot handlers reset
		 * (then the next fault takes the default action), its mask */
		if (prev.sa_flags & SA_RESETHAND) {
			memset(&old_segv, 0, sizeof(old_segv));
			old_segv.sa_handler = SIG_DFL;
			sigemptyset(&old_segv.sa_mask);
		}
		sigset_t before;
		pthread_sigmask(SIG_BLOCK, &prev.sa_mask, &before);
		uintptr_t outer = chain_frame;
		if (!loop)
			chain_frame = frame;
		if (prev.sa_flags & SA_SIGINFO)
			prev.sa_sigaction(sig, si, uc);
		else
			prev.sa_handler(sig);
		chain_frame = outer;
		pthread_sigmask(SIG_SETMASK, &before, NULL);
		return;
	}
	/* default: uninstall and let the fault repeat (or re-raise a sent one) */
	struct sigaction dfl;
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	sigaction(sig, &dfl, NULL);
	if (!si || si->si_code <= 0)
		raise(sig);
}

/* on_segv -- the SIGSEGV handler: a write to a read-only page of a tracked
 * heap is a first write (page_fault); anything else is chained. */
static void on_segv(int sig, siginfo_t *si, void *uc)
{
	int saved = errno;
	if (si && si->si_code == SEGV_ACCERR) {
		uintptr_t a = (uintptr_t)si->si_addr;
		for (unsigned i = 0; i < TRACK_MAX; i++) {
			struct track *t = __atomic_load_n(&tracked[i], __ATOMIC_ACQUIRE);
			if (!t || a - (uintptr_t)t->heap >= t->span)
				continue;
			page_fault(t, a);
			errno = saved;
			return;
		}
	}
	errno = saved;
	chain(sig, si, uc);
}

/* async_signals -- every signal but the synchronous ones (a fault in a
 * handler must still be delivered, or the kernel kills the process) */
static void async_signals(sigset_t *set)
{
	sigfillset(set);
	sigdelset(set, SIGSEGV);
	sigdelset(set, SIGBUS);
	sigdelset(set, SIGILL);
	sigdelset(set, SIGFPE);
	sigdelset(set, SIGTRAP);
}

/* install -- our handler (at each tracked open, unless it is the one in
 * place: a program, or a test harness, may have installed its own since,
 * which ours then chains to); the one before it kept for chaining.  Never
 * uninstalled: a handler installed after ours may chain to it (if that one
 * chains back to ours, chain() breaks the loop).  Other signals wait while
 * it runs (a signal handler's store to a page being snapshotted would
 * otherwise fault forever); SA_ONSTACK: a program's alternate stack serves
 * it on a stack overflow. */
static int install(void)
{
	struct sigaction cur;
	if (installed && sigaction(SIGSEGV, NULL, &cur) == 0 &&
	    (cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == on_segv)
		return 0;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_segv;
	sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_NODEFER | SA_ONSTACK;
	async_signals(&sa.sa_mask);
	if (sigaction(SIGSEGV, &sa, &old_segv))
		return emu_err(-errno, "tx_track=pages: cannot install a SIGSEGV handler");
	if (!installed)
		first_segv = old_segv;
	installed = 1;
	return 0;
}

/* track_held -- emu's hold: is line in a page the open transaction wrote? */
static int track_held(const void *arg, uint64_t line)
{
	const struct track *t = arg;
	uint64_t off = line * SPM_LINE;
	if (off < t->heap_off || off - t->heap_off >= t->span)
		return 0;
	uint32_t s = __atomic_load_n(&t->slot[(off - t->heap_off) / TRACK_PAGE], __ATOMIC_RELAXED);
	return s != 0 && s != SLOT_RW;
}

/* track_line_held -- track_held for the eviction injector (evict.c). */
int track_line_held(spm_pool *p, uint64_t line)
{
	return track_held(p->track, line);
}

/* track_init -- tracking for pool p (tx_track=pages), after its heap is laid
 * out and recovered. */
int track_init(spm_pool *p)
{
	long ps = sysconf(_SC_PAGESIZE);
	if (ps != TRACK_PAGE || p->hdr->heap_off % TRACK_PAGE)
		return emu_err(SPM_E_OPTION, "tx_track=pages: needs %u-byte pages (this "
			       "system's are %ld bytes)", TRACK_PAGE, ps);
	struct track *t = calloc(1, sizeof(*t));
	if (!t)
		return emu_err(-ENOMEM, "tx_track=pages: out of memory");
	t->heap_off = p->hdr->heap_off;
	t->heap = p->view + t->heap_off;
	t->span = (p->size - t->heap_off) / TRACK_PAGE * TRACK_PAGE;
	if (t->span / TRACK_PAGE >= SLOT_RW - 1) { /* a page number fits a slot word */
		free(t);
		return emu_err(SPM_E_OPTION, "tx_track=pages: a heap of %zu bytes has more "
			       "pages than it tracks (2^32 - 2)", (size_t)(p->size - p->hdr->heap_off));
	}
	t->npages = (uint32_t)(t->span / TRACK_PAGE);
	t->slot = calloc(t->npages, sizeof(uint32_t));
	t->pages = malloc((size_t)t->npages * sizeof(uint32_t));
	t->rw = malloc((size_t)t->npages * sizeof(uint32_t));
	t->snap = mmap(NULL, t->span, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (!t->slot || !t->pages || !t->rw || t->snap == MAP_FAILED) {
		if (t->snap != MAP_FAILED)
			munmap(t->snap, t->span);
		free(t->slot);
		free(t->pages);
		free(t->rw);
		free(t);
		return emu_err(-ENOMEM, "tx_track=pages: out of memory for the page state");
	}
	memset(t->pages, 0xff, (size_t)t->npages * sizeof(uint32_t));
	pthread_mutex_init(&t->lock, NULL);
	pthread_cond_init(&t->cond, NULL);
#ifdef MADV_NOHUGEPAGE
	/* pages are protected one by one: a huge page would be split anyway */
	(void)madvise(p->view, p->size, MADV_NOHUGEPAGE);
#endif
	int rc = 0;
	pthread_mutex_lock(&reg_lock);
	unsigned i = 0;
	while (i < TRACK_MAX && tracked[i])
		i++;
	if (i == TRACK_MAX)
		rc = emu_err(SPM_E_BUSY, "tx_track=pages: at most %u pools are tracked at once",
			     TRACK_MAX);
	else if (!(rc = install()))
		__atomic_store_n(&tracked[i], t, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&reg_lock);
	/* the heap read-only from now on, but where a store made it writable */
	if (!rc && mprotect(t->heap, t->span, PROT_READ))
		rc = emu_err(-errno, "tx_track=pages: cannot protect the heap");
	p->track = t;
	if (!rc)
		emu_set_hold(p->emu, track_held, t);
	return rc;
}

/* track_fini -- at close: out of the handler's list, everything freed. */
void track_fini(spm_pool *p)
{
	struct track *t = p->track;
	if (!t)
		return;
	if (p->emu)
		emu_set_hold(p->emu, NULL, NULL);
	pthread_mutex_lock(&reg_lock);
	for (unsigned i = 0; i < TRACK_MAX; i++)
		if (tracked[i] == t)
			__atomic_store_n(&tracked[i], NULL, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&reg_lock);
	(void)mprotect(t->heap, t->span, PROT_READ | PROT_WRITE); /* the view's own again */
	munmap(t->snap, t->span);
	free(t->slot);
	free(t->pages);
	free(t->rw);
	pthread_mutex_destroy(&t->lock);
	pthread_cond_destroy(&t->cond);
	free(t);
	p->track = NULL;
}

/* track_begin -- spm_tx_begin of a tracked pool: wait for the open tracked
 * transaction of another thread, then make the heap read-only. */
int track_begin(spm_pool *p)
{
	struct track *t = p->track;
	pthread_mutex_lock(&t->lock);
	while (t->busy)
		pthread_cond_wait(&t->cond, &t->lock);
	t->busy = 1;
	t->owner = thread_id();
	t->gen++;
	pthread_mutex_unlock(&t->lock);
	/* no signal handler of this thread runs while pages change state
	 * under it (its store to one would fault forever) */
	sigset_t async, before;
	async_signals(&async);
	pthread_sigmask(SIG_BLOCK, &async, &before);
	__atomic_store_n(&t->open, 1, __ATOMIC_SEQ_CST);
	/* a fault that saw it closed has listed its page */
	while (__atomic_load_n(&t->inflight, __ATOMIC_SEQ_CST))
		sched_yield();
	/* the pages written since the last begin read-only again, a run of
	 * consecutive ones in one call */
	uint32_t n = __atomic_load_n(&t->nrw, __ATOMIC_ACQUIRE), k = 0;
	int err = 0;
	while (k < n) {
		uint32_t first = t->rw[k], len = 1;
		while (k + len < n && t->rw[k + len] == first + len)
			len++;
		if (mprotect(t->heap + (size_t)first * TRACK_PAGE, (size_t)len * TRACK_PAGE,
			     PROT_READ))
			err = errno;
		for (uint32_t j = 0; j < len; j++)
			__atomic_store_n(&t->slot[first + j], 0, __ATOMIC_RELEASE);
		k += len;
	}
	__atomic_store_n(&t->nrw, 0, __ATOMIC_RELEASE);
	pthread_sigmask(SIG_SETMASK, &before, NULL);
	if (err) { /* out of memory maps: nothing can be tracked */
		track_end(p);
		return emu_err(-err, "spm_tx_begin: tx_track=pages: cannot protect the heap");
	}
	return 0;
}

/* track_writable -- nothing more tracked: a store to a read-only page
 * now only makes it writable (the pages written stay listed, and held,
 * until track_end). */
void track_writable(spm_pool *p)
{
	struct track *t = p->track;
	if (!__atomic_load_n(&t->open, __ATOMIC_ACQUIRE))
		return;
	__atomic_store_n(&t->open, 0, __ATOMIC_SEQ_CST);
	/* a fault that saw it open finishes its snapshot first */
	while (__atomic_load_n(&t->inflight, __ATOMIC_SEQ_CST))
		sched_yield();
}

/* track_end -- the tracked transaction ended (committed or rolled back):
 * the heap writable, its pages forgotten (no longer held), the snapshot
 * memory past TRACK_KEEP pages given back, the next transaction let in. */
void track_end(spm_pool *p)
{
	struct track *t = p->track;
	sigset_t async, before; /* as in track_begin */
	async_signals(&async);
	pthread_sigmask(SIG_BLOCK, &async, &before);
	track_writable(p);
	uint32_t n = __atomic_load_n(&t->n, __ATOMIC_ACQUIRE);
	for (uint32_t k = 0; k < n; k++) { /* writable: listed for the next begin */
		uint32_t pg = __atomic_load_n(&t->pages[k], __ATOMIC_ACQUIRE);
		__atomic_store_n(&t->pages[k], PAGE_NONE, __ATOMIC_RELAXED);
		if (pg == PAGE_NONE)
			continue;
		uint32_t r = __atomic_fetch_add(&t->nrw, 1, __ATOMIC_RELAXED);
		__atomic_store_n(&t->rw[r], pg, __ATOMIC_RELAXED);
		__atomic_store_n(&t->slot[pg], SLOT_RW, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&t->n, 0, __ATOMIC_RELEASE);
	pthread_sigmask(SIG_SETMASK, &before, NULL);
	if (n > TRACK_KEEP)
		(void)madvise(t->snap + (size_t)TRACK_KEEP * TRACK_PAGE,
			      (size_t)(n - TRACK_KEEP) * TRACK_PAGE, MADV_DONTNEED);
	pthread_mutex_lock(&t->lock);
	t->busy = 0;
	t->owner = 0;
	pthread_cond_broadcast(&t->cond);
	pthread_mutex_unlock(&t->lock);
}

/* track_touch -- the runtime is about to store to [off, off+len) of the
 * heap in the open transaction (spm_tx_alloc): the pages' snapshots, as a
 * fault would take them, without the fault. */
void track_touch(spm_pool *p, uint64_t off, uint64_t len)
{
	struct track *t = p->track;
	if (!__atomic_load_n(&t->open, __ATOMIC_ACQUIRE) || !len || off < t->heap_off)
		return;
	uint64_t lo = (off - t->heap_off) / TRACK_PAGE * TRACK_PAGE;
	uint64_t hi = off + len - t->heap_off;
	for (uint64_t a = lo; a < hi && a < t->span; a += TRACK_PAGE)
		if (__atomic_load_n(&t->slot[a / TRACK_PAGE], __ATOMIC_ACQUIRE) == 0)
			page_fault(t, (uintptr_t)t->heap + a);
}

/* snapshot_of -- the snapshot of heap page pg, waiting for one being taken;
 * NULL if the open transaction did not write the page. */
static const uint8_t *snapshot_of(const struct track *t, uint32_t pg)
{
	uint32_t s;
	while ((s = __atomic_load_n(&t->slot[pg], __ATOMIC_ACQUIRE)) == SLOT_BUSY)
		sched_yield();
	return s && s != SLOT_RW ? t->snap + (size_t)(s - 1) * TRACK_PAGE : NULL;
}

/* track_copy_old -- the bytes [off, off+len) of the pool held before the
 * open transaction wrote them (from the snapshots; the view's where the
 * transaction wrote nothing) into dst: what spm_tx_add logs. */
void track_copy_old(spm_pool *p, void *dst, uint64_t off, uint64_t len)
{
	struct track *t = p->track;
	uint8_t *d = dst;
	while (len) {
		uint64_t n = len;
		const uint8_t *src = p->view + off;
		if (off >= t->heap_off && off - t->heap_off < t->span) {
			uint64_t in = (off - t->heap_off) % TRACK_PAGE;
			const uint8_t *s = snapshot_of(t, (uint32_t)((off - t->heap_off) / TRACK_PAGE));
			if (n > TRACK_PAGE - in)
				n = TRACK_PAGE - in;
			if (s)
				src = s + in;
		}
		memcpy(d, src, n);
		d += n;
		off += n;
		len -= n;
	}
}

/*
 * track_changed -- each run of lines in [lo, hi) (pool offsets) that the
 * open transaction changed: fn(arg, off, len) for it, in the order the
 * pages were first written; the first error fn returns stops it.
 */
int track_changed(spm_pool *p, uint64_t lo, uint64_t hi,
		  int (*fn)(void *arg, uint64_t off, uint64_t len), void *arg)
{
	struct track *t = p->track;
	for (uint32_t k = 0; k < __atomic_load_n(&t->n, __ATOMIC_ACQUIRE); k++) {
		uint32_t pg;
		while ((pg = __atomic_load_n(&t->pages[k], __ATOMIC_ACQUIRE)) == PAGE_NONE)
			sched_yield(); /* another thread's fault is taking it */
		uint64_t base = t->heap_off + (uint64_t)pg * TRACK_PAGE;
		if (base + TRACK_PAGE <= lo || base >= hi)
			continue;
		const uint8_t *s = t->snap + (size_t)k * TRACK_PAGE, *v = p->view + base;
		uint64_t run = 0, run_len = 0;
		for (unsigned i = 0; i <= TRACK_PAGE / SPM_LINE; i++) {
			uint64_t off = base + (uint64_t)i * SPM_LINE;
			int changed = i < TRACK_PAGE / SPM_LINE && off + SPM_LINE > lo && off < hi &&
				      memcmp(v + i * SPM_LINE, s + i * SPM_LINE, SPM_LINE) != 0;
			if (changed) {
				if (!run_len)
					run = off;
				run_len += SPM_LINE;
				continue;
			}
			if (run_len) {
				int rc = fn(arg, run, run_len);
				if (rc)
					return rc;
				run_len = 0;
			}
		}
	}
	return 0;
}

/* track_restore -- an abort: every page the open transaction wrote back as
 * it was, then the heap writable (nothing more tracked). */
void track_restore(spm_pool *p)
{
	struct track *t = p->track;
	if (!__atomic_load_n(&t->open, __ATOMIC_ACQUIRE))
		return;
	uint32_t n = __atomic_load_n(&t->n, __ATOMIC_ACQUIRE);
	for (uint32_t k = 0; k < n; k++) {
		uint32_t pg;
		while ((pg = __atomic_load_n(&t->pages[k], __ATOMIC_ACQUIRE)) == PAGE_NONE)
			sched_yield();
		memcpy(t->heap + (size_t)pg * TRACK_PAGE, t->snap + (size_t)k * TRACK_PAGE,
		       TRACK_PAGE);
	}
	track_writable(p);
}

/* track_open -- is a tracked transaction open in p?  Its thread's id in
 * *owner, its number in *gen. */
static int track_open(spm_pool *p, uint64_t *owner, uint64_t *gen)
{
	struct track *t = p->track;
	pthread_mutex_lock(&t->lock);
	int busy = t->busy;
	*owner = t->owner;
	*gen = t->gen;
	pthread_mutex_unlock(&t->lock);
	return busy;
}

/* wrote_in -- did the open transaction write a page of [off, off+len)? */
static int wrote_in(const struct track *t, uint64_t off, uint64_t len)
{
	if (!len || off + len <= t->heap_off || off >= t->heap_off + t->span)
		return 0;
	uint64_t lo = off < t->heap_off ? 0 : (off - t->heap_off) / TRACK_PAGE;
	uint64_t hi = (off + len - t->heap_off + TRACK_PAGE - 1) / TRACK_PAGE;
	for (uint64_t pg = lo; pg < hi && pg < t->npages; pg++) {
		uint32_t s = __atomic_load_n(&t->slot[pg], __ATOMIC_ACQUIRE);
		if (s && s != SLOT_RW)
			return 1;
	}
	return 0;
}

/*
 * track_flush -- spm_flush of [off, off+len) while a tracked transaction
 * may be open: lines it changed must be logged before they are written
 * back.  The transaction's own thread logs them now (tx_track_log); any
 * other thread waits for the transaction to end.  0 or the log's error.
 */
int track_flush(spm_pool *p, uint64_t off, uint64_t len)
{
	struct track *t = p->track;
	uint64_t owner, gen;
	if (!track_open(p, &owner, &gen) || !wrote_in(t, off, len))
		return 0;
	if (owner == thread_id())
		return tx_track_log(p, off, off + len);
	pthread_mutex_lock(&t->lock);
	while (t->busy && t->gen == gen)
		pthread_cond_wait(&t->cond, &t->lock);
	pthread_mutex_unlock(&t->lock);
	return 0;
}
