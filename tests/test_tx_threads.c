/* test_tx_threads.c -- concurrent transactions: per-thread lists built with spm_tx_alloc/spm_tx_free survive close/open; a 17th concurrent transaction gets SPM_E_BUSY; a thread is in at most one transaction per pool. */
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <spm.h>

#define POOL_SIZE (8u << 20)
#define NTHREADS 4
#define ITERS 300
#define NLANES 16
#define NSTRESS 24
#define STRESS_TX 200

static const char *const designs[] = {"plain", "ideal", "unsafe", "colocated",
				      "colocated-cc", "fca", "sca", "wt", "wt-cwc",
				      "wt-xbank", "supermem"};

/* One thread's list head: a line of its own. */
struct slot {
	spm_off_t head;
	uint64_t len;
	uint64_t commits;
	uint64_t value;
	uint64_t pad[4];
};
_Static_assert(sizeof(struct slot) == 64, "a slot is one line");

struct troot {
	struct slot t[NSTRESS];
};

struct node {
	uint64_t thread, seq, size;
	spm_off_t next;
	uint8_t payload[];
};

static void pool_path(char *buf, size_t n, const char *tag)
{
	const char *dir = getenv("SPM_TEST_DIR");
	if (!dir || !*dir)
		dir = "/tmp";
	snprintf(buf, n, "%s/threads-%ld-%s", dir, (long)getpid(), tag);
}

static void remove_pool(const char *path)
{
	char buf[4200];
	unlink(path);
	snprintf(buf, sizeof(buf), "%s.meta", path);
	unlink(buf);
	snprintf(buf, sizeof(buf), "%s.key", path);
	unlink(buf);
}

static uint8_t pbyte(uint64_t thread, uint64_t seq, size_t i)
{
	return (uint8_t)(thread * 37 + seq * 11 + i);
}

static size_t node_size(uint64_t seq)
{
	return 64 * (1 + seq % 4);
}

/* What a thread expects its list to be (newest first). */
struct expect {
	uint64_t seq[ITERS];
	size_t n;
	uint64_t commits, aborts;
	char err[256]; /* first failure seen by the thread */
};

struct worker {
	spm_pool *pool;
	struct troot *root;
	unsigned id;
	struct expect ex;
};

#define CHECK(w, cond)                                                               \
	do {                                                                         \
		if (!(cond)) {                                                       \
			if (!(w)->ex.err[0])                                         \
				snprintf((w)->ex.err, sizeof((w)->ex.err),           \
					 "thread %u line %d: %s (%s)", (w)->id,     \
					 __LINE__, #cond, spm_errormsg());           \
			return NULL;                                                 \
		}                                                                    \
	} while (0)

/* worker_main -- ITERS transactions on this thread's own list. */
static void *worker_main(void *arg)
{
	struct worker *w = arg;
	spm_pool *p = w->pool;
	struct slot *s = &w->root->t[w->id];
	CHECK(w, spm_core_set(p, w->id) == 0);
	for (uint64_t seq = 0; seq < ITERS; seq++) {
		CHECK(w, spm_tx_begin(p) == 0);
		CHECK(w, spm_tx_begin(p) == SPM_E_TXSTATE);
		size_t sz = node_size(seq);
		spm_off_t off = spm_tx_alloc(p, sz);
		CHECK(w, off != 0);
		struct node *n = spm_ptr(p, off);
		CHECK(w, n != NULL);
		n->thread = w->id;
		n->seq = seq;
		n->size = sz;
		for (size_t i = 0; i < sz - sizeof(*n); i++)
			n->payload[i] = pbyte(w->id, seq, i);
		CHECK(w, spm_tx_add(p, s, sizeof(*s)) == 0);
		struct slot before = *s;
		n->next = s->head;
		s->head = off;
		s->len++;
		s->commits++;
		if (seq % 5 == 4) {
			/* an aborted transaction changes nothing */
			spm_tx_abort(p);
			CHECK(w, memcmp(s, &before, sizeof(before)) == 0);
			w->ex.aborts++;
			continue;
		}
		int freed = 0;
		if (seq % 3 == 2 && n->next) {
			/* free the previous head: the node after the new one */
			struct node *victim = spm_ptr(p, n->next);
			CHECK(w, victim != NULL && victim->thread == w->id);
			CHECK(w, w->ex.n >= 1 && victim->seq == w->ex.seq[0]);
			n->next = victim->next;
			CHECK(w, spm_tx_free(p, spm_off(p, victim)) == 0);
			s->len--;
			freed = 1;
		}
		CHECK(w, spm_tx_commit(p) == 0);
		w->ex.commits++;
		/* the expected list, newest first */
		if (!freed) {
			memmove(&w->ex.seq[1], &w->ex.seq[0], w->ex.n * sizeof(uint64_t));
			w->ex.n++;
		}
		w->ex.seq[0] = seq;
	}
	return NULL;
}

/* check_list -- thread t's list in the pool is exactly ex. */
static void check_list(spm_pool *p, struct troot *r, unsigned t, const struct expect *ex)
{
	const struct slot *s = &r->t[t];
	assert_int_equal(s->len, ex->n);
	assert_int_equal(s->commits, ex->commits);
	spm_off_t off = s->head;
	for (size_t k = 0; k < ex->n; k++) {
		const struct node *n = spm_ptr(p, off);
		if (!n)
			fail_msg("thread %u: list ends at %zu of %zu", t, k, ex->n);
		assert_int_equal(n->thread, t);
		assert_int_equal(n->seq, ex->seq[k]);
		assert_int_equal(n->size, node_size(n->seq));
		for (size_t i = 0; i < n->size - sizeof(*n); i++)
			if (n->payload[i] != pbyte(t, n->seq, i))
				fail_msg("thread %u node %llu byte %zu wrong", t,
					 (unsigned long long)n->seq, i);
		off = n->next;
	}
	assert_int_equal(off, 0);
}

/* check_no_overlap -- no two live nodes of any list share a byte. */
static void check_no_overlap(spm_pool *p, struct troot *r, unsigned nthreads)
{
	uint64_t lo[NTHREADS * ITERS], hi[NTHREADS * ITERS];
	size_t n = 0;
	for (unsigned t = 0; t < nthreads; t++)
		for (spm_off_t off = r->t[t].head; off;) {
			const struct node *nd = spm_ptr(p, off);
			assert_non_null(nd);
			assert_true(n < NTHREADS * ITERS);
			lo[n] = off;
			hi[n++] = off + nd->size;
			off = nd->next;
		}
	for (size_t a = 0; a < n; a++)
		for (size_t b = a + 1; b < n; b++)
			assert_true(hi[a] <= lo[b] || hi[b] <= lo[a]);
}

static uint64_t stat_of(spm_pool *p, const char *name)
{
	uint64_t v = 0;
	assert_int_equal(spm_stat(p, name, &v), 0);
	return v;
}

/* four_threads -- NTHREADS threads, each its own list, then close/open. */
static void four_threads(void **state)
{
	const char *design = *state;
	char path[4096], opts[64];
	pool_path(path, sizeof(path), design);
	remove_pool(path);
	snprintf(opts, sizeof(opts), "design=%s", design);
	spm_pool *p = NULL;
	assert_int_equal(spm_create(&p, path, POOL_SIZE, opts), 0);
	struct troot *r = spm_root(p, sizeof(*r));
	assert_non_null(r);
	spm_stat_reset(p);
	static struct worker w[NTHREADS];
	pthread_t th[NTHREADS];
	for (unsigned t = 0; t < NTHREADS; t++) {
		memset(&w[t], 0, sizeof(w[t]));
		w[t].pool = p;
		w[t].root = r;
		w[t].id = t;
		assert_int_equal(pthread_create(&th[t], NULL, worker_main, &w[t]), 0);
	}
	uint64_t commits = 0, aborts = 0;
	for (unsigned t = 0; t < NTHREADS; t++) {
		assert_int_equal(pthread_join(th[t], NULL), 0);
		if (w[t].ex.err[0])
			fail_msg("%s: %s", design, w[t].ex.err);
		commits += w[t].ex.commits;
		aborts += w[t].ex.aborts;
	}
	assert_int_equal(commits, NTHREADS * (ITERS - ITERS / 5));
	assert_int_equal(stat_of(p, "tx.committed"), commits);
	assert_int_equal(stat_of(p, "tx.aborted"), aborts);
	for (unsigned t = 0; t < NTHREADS; t++)
		check_list(p, r, t, &w[t].ex);
	check_no_overlap(p, r, NTHREADS);
	assert_int_equal(spm_close(p), 0);

	p = NULL;
	assert_int_equal(spm_open(&p, path, NULL), 0);
	r = spm_root(p, sizeof(*r));
	assert_non_null(r);
	for (unsigned t = 0; t < NTHREADS; t++)
		check_list(p, r, t, &w[t].ex);
	check_no_overlap(p, r, NTHREADS);
	for (unsigned t = NTHREADS; t < NSTRESS; t++)
		assert_int_equal(r->t[t].head, 0);
	assert_int_equal(spm_close(p), 0);
	remove_pool(path);
}

/* ------------------------------------------------------------ lanes */

struct holder {
	spm_pool *pool;
	struct troot *root;
	unsigned id;
	pthread_barrier_t *bar;
	int begin_rc, commit_rc;
	spm_off_t obj;
};

/* holder_main -- open a transaction, hold it across the barrier, then end it. */
static void *holder_main(void *arg)
{
	struct holder *h = arg;
	spm_pool *p = h->pool;
	struct slot *s = &h->root->t[h->id];
	h->begin_rc = spm_tx_begin(p);
	if (h->begin_rc == 0 && spm_tx_add(p, s, sizeof(*s)) == 0) {
		h->obj = spm_tx_alloc(p, 128);
		s->value = 1000 + h->id;
		s->head = h->obj;
	}
	pthread_barrier_wait(h->bar); /* all transactions open */
	pthread_barrier_wait(h->bar); /* the 17th was refused */
	if (h->begin_rc == 0) {
		if (h->id % 2 == 0) {
			h->commit_rc = spm_tx_commit(p);
		} else {
			spm_tx_abort(p);
			h->commit_rc = 0;
		}
	}
	return NULL;
}

static void *seventeenth(void *arg)
{
	struct holder *h = arg;
	h->begin_rc = spm_tx_begin(h->pool);
	if (h->begin_rc == 0)
		spm_tx_abort(h->pool);
	return NULL;
}

/* lanes_busy -- 16 open transactions take every lane: the 17th gets SPM_E_BUSY. */
static void lanes_busy(void **state)
{
	(void)state;
	char path[4096];
	pool_path(path, sizeof(path), "lanes");
	remove_pool(path);
	spm_pool *p = NULL;
	assert_int_equal(spm_create(&p, path, POOL_SIZE, "design=sca"), 0);
	struct troot *r = spm_root(p, sizeof(*r));
	assert_non_null(r);
	pthread_barrier_t bar;
	assert_int_equal(pthread_barrier_init(&bar, NULL, NLANES + 1), 0);
	static struct holder h[NLANES + 1];
	pthread_t th[NLANES + 1];
	for (unsigned t = 0; t < NLANES; t++) {
		h[t] = (struct holder){p, r, t, &bar, -1, -1, 0};
		assert_int_equal(pthread_create(&th[t], NULL, holder_main, &h[t]), 0);
	}
	pthread_barrier_wait(&bar);
	/* the 17th: from this thread and from a new one (checked after release) */
	int main_rc = spm_tx_begin(p);
	int msg_set = spm_errormsg()[0] != '\0';
	int add_rc = spm_tx_add(p, r, 8); /* no tx was opened */
	h[NLANES] = (struct holder){p, r, NLANES, &bar, -1, -1, 0};
	int create_rc = pthread_create(&th[NLANES], NULL, seventeenth, &h[NLANES]);
	if (create_rc == 0)
		pthread_join(th[NLANES], NULL);
	int begun[NLANES];
	spm_off_t objs[NLANES];
	for (unsigned t = 0; t < NLANES; t++) {
		begun[t] = h[t].begin_rc;
		objs[t] = h[t].obj;
	}
	pthread_barrier_wait(&bar);
	for (unsigned t = 0; t < NLANES; t++) {
		assert_int_equal(pthread_join(th[t], NULL), 0);
		assert_int_equal(begun[t], 0);
		assert_true(objs[t] != 0);
		assert_int_equal(h[t].commit_rc, 0);
	}
	assert_int_equal(main_rc, SPM_E_BUSY);
	assert_true(msg_set);
	assert_int_equal(add_rc, SPM_E_TXSTATE);
	assert_int_equal(create_rc, 0);
	assert_int_equal(h[NLANES].begin_rc, SPM_E_BUSY);
	pthread_barrier_destroy(&bar);
	/* lanes are free again */
	assert_int_equal(spm_tx_begin(p), 0);
	assert_int_equal(spm_tx_commit(p), 0);
	for (int round = 0; round < 2; round++) {
		for (unsigned t = 0; t < NLANES; t++) {
			if (t % 2 == 0) {
				assert_int_equal(r->t[t].value, 1000 + t);
				assert_int_equal(r->t[t].head, h[t].obj);
			} else {
				assert_int_equal(r->t[t].value, 0);
				assert_int_equal(r->t[t].head, 0);
			}
		}
		/* committed objects are allocated, aborted ones are not */
		assert_int_equal(spm_tx_begin(p), 0);
		for (unsigned t = 0; t < NLANES; t++)
			assert_int_equal(spm_tx_free(p, h[t].obj), t % 2 == 0 ? 0 : SPM_E_INVAL);
		spm_tx_abort(p);
		assert_int_equal(spm_close(p), 0);
		p = NULL;
		assert_int_equal(spm_open(&p, path, NULL), 0);
		r = spm_root(p, sizeof(*r));
		assert_non_null(r);
	}
	assert_int_equal(spm_close(p), 0);
	remove_pool(path);
}

/* ------------------------------------------------------------ more threads than lanes */

struct stresser {
	pthread_barrier_t *start;
	spm_pool *pool;
	struct troot *root;
	unsigned id;
	unsigned busy, done;
	char err[128];
};

static void *stress_main(void *arg)
{
	struct stresser *st = arg;
	spm_pool *p = st->pool;
	struct slot *s = &st->root->t[st->id];
	pthread_barrier_wait(st->start);
	while (st->done < STRESS_TX) {
		int rc = spm_tx_begin(p);
		if (rc == SPM_E_BUSY) {
			st->busy++;
			sched_yield(); /* let a lane holder run */
			continue;
		}
		if (rc != 0 || spm_tx_add(p, s, sizeof(*s)) != 0) {
			snprintf(st->err, sizeof(st->err), "thread %u: %d %s", st->id, rc,
				 spm_errormsg());
			return NULL;
		}
		s->value += st->id + 1;
		s->commits++;
		if (spm_tx_commit(p) != 0) {
			snprintf(st->err, sizeof(st->err), "thread %u: commit: %s", st->id,
				 spm_errormsg());
			return NULL;
		}
		st->done++;
	}
	return NULL;
}

/* more_threads_than_lanes -- 24 threads share 16 lanes: only 0 or SPM_E_BUSY. */
static void more_threads_than_lanes(void **state)
{
	(void)state;
	char path[4096];
	pool_path(path, sizeof(path), "stress");
	remove_pool(path);
	spm_pool *p = NULL;
	assert_int_equal(spm_create(&p, path, POOL_SIZE, "design=fca"), 0);
	struct troot *r = spm_root(p, sizeof(*r));
	assert_non_null(r);
	static struct stresser st[NSTRESS];
	pthread_t th[NSTRESS];
	pthread_barrier_t start;
	assert_int_equal(pthread_barrier_init(&start, NULL, NSTRESS), 0);
	for (unsigned t = 0; t < NSTRESS; t++) {
		st[t] = (struct stresser){&start, p, r, t, 0, 0, ""};
		assert_int_equal(pthread_create(&th[t], NULL, stress_main, &st[t]), 0);
	}
	unsigned busy = 0;
	for (unsigned t = 0; t < NSTRESS; t++) {
		assert_int_equal(pthread_join(th[t], NULL), 0);
		if (st[t].err[0])
			fail_msg("%s", st[t].err);
		busy += st[t].busy;
	}
	pthread_barrier_destroy(&start);
	print_message("%u threads, %u SPM_E_BUSY retries\n", NSTRESS, busy);
	assert_int_equal(spm_close(p), 0);
	p = NULL;
	assert_int_equal(spm_open(&p, path, NULL), 0);
	r = spm_root(p, sizeof(*r));
	assert_non_null(r);
	for (unsigned t = 0; t < NSTRESS; t++) {
		assert_int_equal(r->t[t].commits, STRESS_TX);
		assert_int_equal(r->t[t].value, (uint64_t)STRESS_TX * (t + 1));
	}
	assert_int_equal(spm_close(p), 0);
	remove_pool(path);
}

/* cleanup -- remove every pool a failed test may have left behind. */
static int cleanup(void **state)
{
	(void)state;
	char path[4096];
	for (size_t i = 0; i < sizeof(designs) / sizeof(designs[0]); i++) {
		pool_path(path, sizeof(path), designs[i]);
		remove_pool(path);
	}
	pool_path(path, sizeof(path), "lanes");
	remove_pool(path);
	pool_path(path, sizeof(path), "stress");
	remove_pool(path);
	return 0;
}

/* A thread that holds a transaction in one pool. */
struct begun {
	spm_pool *pool;
	pthread_barrier_t *began, *closed;
	int rc_begin, rc_after;
	spm_pool *next; /* a pool it begins in after its first was closed */
};

static void *begin_and_wait(void *arg)
{
	struct begun *b = arg;
	b->rc_begin = spm_tx_begin(b->pool);
	pthread_barrier_wait(b->began);
	pthread_barrier_wait(b->closed); /* its pool was closed: tx aborted */
	/* its lane is free now (its count of lanes held stays 1: it scans);
	 * another pool takes its transactions, one at a time */
	b->rc_after = spm_tx_begin(b->next);
	if (b->rc_after == 0 && spm_tx_begin(b->next) != SPM_E_TXSTATE)
		b->rc_after = -1;
	if (b->rc_after == 0)
		b->rc_after = spm_tx_commit(b->next);
	return NULL;
}

/* nested_pools -- "already in a transaction" is per pool: a thread may hold
 * transactions in two pools at once, never two in one, also after other
 * threads' transactions were aborted by a close (spm_tx_begin knows a thread
 * in no transaction without looking at the lanes). */
static void nested_pools(void **state)
{
	(void)state;
	char pa[4096], pb[4096], pc[4096];
	pool_path(pa, sizeof(pa), "nest-a");
	pool_path(pb, sizeof(pb), "nest-b");
	pool_path(pc, sizeof(pc), "nest-c");
	remove_pool(pa);
	remove_pool(pb);
	remove_pool(pc);
	spm_pool *a, *b, *c;
	assert_int_equal(spm_create(&a, pa, POOL_SIZE, "design=sca"), 0);
	assert_int_equal(spm_create(&b, pb, POOL_SIZE, "design=sca"), 0);
	assert_int_equal(spm_create(&c, pc, POOL_SIZE, "design=sca"), 0);

	assert_int_equal(spm_tx_begin(a), 0);
	assert_int_equal(spm_tx_begin(b), 0);
	assert_int_equal(spm_tx_begin(b), SPM_E_TXSTATE);
	assert_int_equal(spm_tx_begin(a), SPM_E_TXSTATE);
	assert_int_equal(spm_tx_commit(a), 0);
	assert_int_equal(spm_tx_begin(b), SPM_E_TXSTATE); /* b's is still open */
	assert_int_equal(spm_tx_begin(a), 0);
	assert_int_equal(spm_tx_commit(a), 0);
	assert_int_equal(spm_tx_commit(b), 0);

	/* another thread's transaction in c, aborted when this thread closes
	 * c, while this thread holds one in a */
	pthread_barrier_t began, closed;
	pthread_barrier_init(&began, NULL, 2);
	pthread_barrier_init(&closed, NULL, 2);
	struct begun other = {.pool = c, .began = &began, .closed = &closed, .next = b};
	pthread_t t;
	assert_int_equal(spm_tx_begin(a), 0);
	assert_int_equal(pthread_create(&t, NULL, begin_and_wait, &other), 0);
	pthread_barrier_wait(&began);
	/* no assertion until the thread is joined: a failed one would leave it
	 * waiting on a barrier of this frame */
	int rc_close = spm_close(c);
	int rc_nested = spm_tx_begin(a); /* its own is open */
	pthread_barrier_wait(&closed);
	pthread_join(t, NULL);
	assert_int_equal(other.rc_begin, 0);
	assert_int_equal(rc_close, 0);
	assert_int_equal(rc_nested, SPM_E_TXSTATE);
	assert_int_equal(other.rc_after, 0);
	assert_int_equal(spm_tx_commit(a), 0);
	assert_int_equal(spm_tx_begin(a), 0);
	assert_int_equal(spm_tx_commit(a), 0);
	pthread_barrier_destroy(&began);
	pthread_barrier_destroy(&closed);
	assert_int_equal(spm_close(a), 0);
	assert_int_equal(spm_close(b), 0);
	remove_pool(pa);
	remove_pool(pb);
	remove_pool(pc);
}

/* free_beside_failed_commit -- spm_tx_free walks the bitmaps of an object
 * while another thread's commit fails midway through its bitmap updates
 * (its frees' snapshots outgrow the log: SPM_E_NOSPACE) and its abort
 * restores the words it changed, the first of them those of the object's
 * neighbour.  The walk holds the arenas' locks: ThreadSanitizer (.ci/run)
 * found the restore and the walk racing when it held none. */
enum { BIG_N = 1000, BIG_SIZE = 16384 };
struct beside {
	spm_pool *pool;
	spm_off_t x;
	int stop, rc;
};

static void *free_x_main(void *arg)
{
	struct beside *b = arg;
	for (int i = 0; i < 20000 && !__atomic_load_n(&b->stop, __ATOMIC_ACQUIRE); i++) {
		int rc = spm_tx_begin(b->pool);
		if (!rc)
			rc = spm_tx_free(b->pool, b->x);
		spm_tx_abort(b->pool);
		if (rc) {
			b->rc = rc;
			break;
		}
	}
	return NULL;
}

static void free_beside_failed_commit(void **state)
{
	(void)state;
	char path[4096];
	pool_path(path, sizeof(path), "beside");
	remove_pool(path);
	spm_pool *p;
	assert_int_equal(spm_create(&p, path, 64u << 20, "timing=off;alloc=shared"), 0);
	static spm_off_t objs[BIG_N];
	struct beside b = {.pool = p};
	/* x, then objects of 256 units each right after it: each one's free
	 * snapshots bitmap lines of its own */
	assert_int_equal(spm_tx_begin(p), 0);
	b.x = spm_tx_alloc(p, 64);
	assert_true(b.x != 0);
	assert_int_equal(spm_tx_commit(p), 0);
	for (int i = 0; i < BIG_N; i += 50) {
		assert_int_equal(spm_tx_begin(p), 0);
		for (int k = i; k < i + 50; k++)
			assert_true((objs[k] = spm_tx_alloc(p, BIG_SIZE)) != 0);
		assert_int_equal(spm_tx_commit(p), 0);
	}
	assert_int_equal(objs[0], b.x + 64);
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, free_x_main, &b), 0);
	int rc = 0;
	for (int r = 0; r < 10 && !rc; r++) {
		if ((rc = spm_tx_begin(p)))
			break;
		for (int i = 0; i < BIG_N && !rc; i++)
			rc = spm_tx_free(p, objs[i]);
		if (!rc && (rc = spm_tx_commit(p)) == SPM_E_NOSPACE)
			rc = 0;
		else if (!rc)
			rc = -1; /* it was to fail */
	}
	__atomic_store_n(&b.stop, 1, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	assert_int_equal(rc, 0);
	assert_int_equal(b.rc, 0);
	/* every object as it was: freed whole, one at a time */
	for (int i = 0; i < BIG_N; i += 100) {
		assert_int_equal(spm_tx_begin(p), 0);
		assert_int_equal(spm_tx_free(p, objs[i]), 0);
		assert_int_equal(spm_tx_commit(p), 0);
	}
	assert_int_equal(spm_close(p), 0);
	remove_pool(path);
}

int main(void)
{
	struct CMUnitTest tests[sizeof(designs) / sizeof(designs[0]) + 4];
	size_t n = 0;
	for (size_t i = 0; i < sizeof(designs) / sizeof(designs[0]); i++) {
		tests[n] = (struct CMUnitTest)cmocka_unit_test_prestate(four_threads,
									(void *)designs[i]);
		tests[n++].name = designs[i];
	}
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(lanes_busy);
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(more_threads_than_lanes);
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(nested_pools);
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(free_beside_failed_commit);
	return _cmocka_run_group_tests("tx_threads", tests, n, NULL, cleanup);
}
