/* test_roundtrip.c -- public API round trip on every design: transactions, persist, allocator, root, offsets, statistics, close/open. */
#include <errno.h>
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
#define NOBJ 8
#define PERSISTED 1000
#define MAX_FILL 512

static const char *const designs[] = {"plain", "ideal", "unsafe", "colocated",
				      "colocated-cc", "fca", "sca", "wt", "wt-cwc",
				      "wt-xbank", "supermem"};

/* Every statistic spm.h lists. */
static const char *const stat_names[] = {
	"tx.committed", "tx.aborted", "tx.log_wraps", "time.modeled_ns", "media.writes",
	"media.writes.data", "media.writes.counter", "media.writes.log",
	"media.writes.meta", "media.reads", "ctr_cache.hits", "ctr_cache.misses",
	"ctr_cache.evictions", "ctr_cache.writebacks", "aes.pads", "wpq.stalls",
	"wpq.coalesced", "ctrl.ca_writes", "ctrl.writes", "recovery.drained",
	"recovery.dropped", "recovery.rolled_back"};

/* The root object of the round trip. */
struct rt_root {
	uint64_t magic;
	uint64_t nobj;
	spm_off_t obj[NOBJ + 1];
	uint64_t objsize[NOBJ + 1];
	char msg[64];
	uint8_t persisted[PERSISTED];
};

static const size_t obj_sizes[NOBJ] = {1, 63, 64, 65, 100, 1000, 4096, 70000};

/* pool_path -- a pool path in SPM_TEST_DIR (or /tmp) for this process. */
static void pool_path(char *buf, size_t n, const char *tag)
{
	const char *dir = getenv("SPM_TEST_DIR");
	if (!dir || !*dir)
		dir = "/tmp";
	snprintf(buf, n, "%s/rt-%ld-%s", dir, (long)getpid(), tag);
}

/* remove_pool -- delete path, path.meta and path.key. */
static void remove_pool(const char *path)
{
	char buf[4200];
	unlink(path);
	snprintf(buf, sizeof(buf), "%s.meta", path);
	unlink(buf);
	snprintf(buf, sizeof(buf), "%s.key", path);
	unlink(buf);
}

static uint8_t pat(unsigned obj, size_t i)
{
	return (uint8_t)(obj * 131u + i * 7u + (i >> 8) + 1u);
}

static uint64_t stat_of(spm_pool *p, const char *name)
{
	uint64_t v = ~0ull;
	assert_int_equal(spm_stat(p, name, &v), 0);
	return v;
}

/* check_objects -- every byte of the objects and the persisted area. */
static void check_objects(spm_pool *p, struct rt_root *r, unsigned modified)
{
	assert_int_equal(r->magic, 0x5350524f4f54ull);
	assert_string_equal(r->msg, "round trip");
	assert_int_equal(r->nobj, NOBJ);
	for (unsigned k = 0; k < NOBJ; k++) {
		uint8_t *o = spm_ptr(p, r->obj[k]);
		assert_non_null(o);
		assert_int_equal(r->objsize[k], obj_sizes[k]);
		for (size_t i = 0; i < obj_sizes[k]; i++) {
			uint8_t want = pat(k, i);
			if (modified && k == 5 && i >= 10 && i < 200)
				want = (uint8_t)(0xA0 ^ i);
			if (modified && k == 7 && i >= 65000 && i < 65100)
				want = 0x5A;
			if (o[i] != want)
				fail_msg("object %u byte %zu: %#x, want %#x", k, i, o[i], want);
		}
	}
	for (size_t i = 0; i < PERSISTED; i++)
		assert_int_equal(r->persisted[i], (uint8_t)(i * 13 + 5));
}

/* check_stats_readable -- every name of spm.h reads; an unknown one does not. */
static void check_stats_readable(spm_pool *p)
{
	for (size_t i = 0; i < sizeof(stat_names) / sizeof(stat_names[0]); i++) {
		uint64_t v = 0xdeadbeef;
		int rc = spm_stat(p, stat_names[i], &v);
		if (rc != 0)
			fail_msg("spm_stat(%s) = %d: %s", stat_names[i], rc, spm_errormsg());
	}
	uint64_t v;
	assert_int_equal(spm_stat(p, "no.such.stat", &v), SPM_E_INVAL);
	assert_int_equal(spm_stat(p, "media", &v), SPM_E_INVAL);
}

/* check_offsets -- spm_ptr/spm_off round trip; out-of-pool values refused. */
static void check_offsets(spm_pool *p, struct rt_root *r)
{
	size_t size = spm_size(p);
	assert_int_equal(size, POOL_SIZE);
	for (unsigned k = 0; k < NOBJ; k++) {
		void *o = spm_ptr(p, r->obj[k]);
		assert_non_null(o);
		assert_int_equal(spm_off(p, o), r->obj[k]);
		uint8_t *last = (uint8_t *)o + obj_sizes[k] - 1;
		assert_int_equal(spm_off(p, last), r->obj[k] + obj_sizes[k] - 1);
		assert_ptr_equal(spm_ptr(p, spm_off(p, last)), last);
	}
	spm_off_t roff = spm_off(p, r);
	assert_true(roff != 0);
	assert_ptr_equal(spm_ptr(p, roff), r);
	uint8_t *end = spm_ptr(p, size - 1);
	assert_non_null(end);
	assert_int_equal(spm_off(p, end), size - 1);
	assert_null(spm_ptr(p, 0));
	assert_null(spm_ptr(p, size));
	assert_null(spm_ptr(p, size + 64));
	assert_null(spm_ptr(p, UINT64_MAX));
	assert_null(spm_ptr(p, 64)); /* the data header page is not the heap */
	assert_null(spm_ptr(NULL, roff));
	int local = 0;
	assert_int_equal(spm_off(p, &local), 0);
	assert_int_equal(spm_off(p, NULL), 0);
	assert_int_equal(spm_off(p, end + 1), 0);
	assert_int_equal(spm_off(p, end + 4096), 0);
	assert_int_equal(spm_off(NULL, r), 0);
}

/* check_txstate -- misuse of transactions is refused with SPM_E_TXSTATE. */
static void check_txstate(spm_pool *p, struct rt_root *r)
{
	assert_int_equal(spm_tx_add(p, r, 8), SPM_E_TXSTATE);
	assert_int_equal(spm_tx_commit(p), SPM_E_TXSTATE);
	assert_int_equal(spm_tx_free(p, r->obj[0]), SPM_E_TXSTATE);
	assert_int_equal(spm_tx_alloc(p, 64), 0);
	assert_int_equal(spm_tx_begin(p), 0);
	assert_int_equal(spm_tx_begin(p), SPM_E_TXSTATE);
	assert_true(spm_errormsg()[0] != '\0');
	/* still usable after the refused nested begin */
	assert_int_equal(spm_tx_add(p, &r->magic, 8), 0);
	int local;
	assert_int_equal(spm_tx_add(p, &local, sizeof(local)), SPM_E_INVAL);
	/* a range larger than a transaction log cannot be logged */
	uint8_t *big = spm_ptr(p, r->obj[7]);
	assert_int_not_equal(spm_tx_add(p, big, 70000), 0);
	assert_int_equal(spm_tx_free(p, 0), SPM_E_INVAL);
	assert_int_equal(spm_tx_free(p, r->obj[3] + 64), SPM_E_INVAL);
	assert_int_equal(spm_tx_commit(p), 0);
	assert_int_equal(spm_tx_commit(p), SPM_E_TXSTATE);
	assert_int_equal(spm_tx_add(p, r, 8), SPM_E_TXSTATE);
}

/* check_abort -- an aborted transaction restores the old content, in view and media. */
static void check_abort(spm_pool *p, struct rt_root *r)
{
	uint64_t aborted = stat_of(p, "tx.aborted");
	uint64_t committed = stat_of(p, "tx.committed");
	uint8_t *o = spm_ptr(p, r->obj[6]);
	uint8_t before[4096];
	memcpy(before, o, sizeof(before));
	struct rt_root rbefore = *r;
	assert_int_equal(spm_tx_begin(p), 0);
	assert_int_equal(spm_tx_add(p, o + 100, 3000), 0);
	assert_int_equal(spm_tx_add(p, r, sizeof(*r)), 0);
	memset(o + 100, 0xEE, 3000);
	spm_off_t extra = spm_tx_alloc(p, 256);
	assert_true(extra != 0);
	r->obj[NOBJ] = extra;
	r->nobj = NOBJ + 1;
	strcpy(r->msg, "aborted");
	memset(r->persisted, 0, PERSISTED);
	spm_tx_abort(p);
	assert_memory_equal(o, before, sizeof(before));
	assert_memory_equal(r, &rbefore, sizeof(*r));
	assert_int_equal(stat_of(p, "tx.aborted"), aborted + 1);
	assert_int_equal(stat_of(p, "tx.committed"), committed);
	/* the aborted allocation is not an object */
	assert_int_equal(spm_tx_begin(p), 0);
	assert_int_equal(spm_tx_free(p, extra), SPM_E_INVAL);
	spm_tx_abort(p);
	/* abort of a transaction that logged nothing, and abort outside a tx */
	assert_int_equal(spm_tx_begin(p), 0);
	spm_tx_abort(p);
	spm_tx_abort(p);
	assert_int_equal(stat_of(p, "tx.aborted"), aborted + 3);
}

/* fill_heap -- allocate until no size fits; returns the object count. */
static size_t fill_heap(spm_pool *p, spm_off_t *offs, size_t *sizes)
{
	static const size_t classes[] = {1u << 20, 64u << 10, 4u << 10, 64};
	size_t n = 0;
	for (size_t c = 0; c < 4; c++) {
		for (;;) {
			assert_true(n < MAX_FILL);
			assert_int_equal(spm_tx_begin(p), 0);
			/* leave a known message behind to see tx_alloc set its own */
			assert_int_equal(spm_tx_begin(p), SPM_E_TXSTATE);
			char stale[1024];
			snprintf(stale, sizeof(stale), "%s", spm_errormsg());
			spm_off_t off = spm_tx_alloc(p, classes[c]);
			if (!off) {
				assert_true(spm_errormsg()[0] != '\0');
				assert_string_not_equal(spm_errormsg(), stale);
				spm_tx_abort(p);
				break;
			}
			uint8_t *o = spm_ptr(p, off);
			assert_non_null(o);
			o[0] = 1;
			o[classes[c] - 1] = 2;
			assert_int_equal(spm_tx_commit(p), 0);
			offs[n] = off;
			sizes[n++] = classes[c];
		}
	}
	return n;
}

/* check_alloc_free -- NOSPACE, then a free makes room, but only after commit. */
static void check_alloc_free(spm_pool *p)
{
	static spm_off_t offs[MAX_FILL];
	static size_t sizes[MAX_FILL];
	size_t n = fill_heap(p, offs, sizes);
	assert_true(n > 6);
	/* full: nothing fits, not even one line */
	assert_int_equal(spm_tx_begin(p), 0);
	assert_int_equal(spm_tx_alloc(p, 64), 0);
	assert_int_equal(spm_tx_alloc(p, 1), 0);
	spm_tx_abort(p);
	/* the last 4 KiB object: freed, but not reusable before commit */
	size_t victim = n;
	for (size_t i = 0; i < n; i++)
		if (sizes[i] == 4096)
			victim = i;
	assert_true(victim < n);
	spm_off_t x = offs[victim];
	assert_int_equal(spm_tx_begin(p), 0);
	assert_int_equal(spm_tx_free(p, x), 0);
	assert_int_equal(spm_tx_free(p, x), SPM_E_INVAL); /* twice in one tx */
	assert_int_equal(spm_tx_alloc(p, 4096), 0);
	assert_int_equal(spm_tx_alloc(p, 64), 0);
	assert_int_equal(spm_tx_commit(p), 0);
	/* freed twice across transactions */
	assert_int_equal(spm_tx_begin(p), 0);
	assert_int_equal(spm_tx_free(p, x), SPM_E_INVAL);
	spm_tx_abort(p);
	/* after commit the room is there, exactly where the object was */
	assert_int_equal(spm_tx_begin(p), 0);
	spm_off_t y = spm_tx_alloc(p, 4096);
	assert_int_equal(y, x);
	const uint8_t *yo = spm_ptr(p, y);
	for (size_t i = 0; i < 4096; i++)
		assert_int_equal(yo[i], 0);
	assert_int_equal(spm_tx_alloc(p, 64), 0);
	assert_int_equal(spm_tx_commit(p), 0);
	/* an aborted free leaves the object allocated */
	assert_int_equal(spm_tx_begin(p), 0);
	assert_int_equal(spm_tx_free(p, offs[0]), 0);
	spm_tx_abort(p);
	assert_int_equal(spm_tx_begin(p), 0);
	assert_int_equal(spm_tx_alloc(p, 64), 0);
	spm_tx_abort(p);
	/* free everything, a few objects per transaction */
	for (size_t i = 0; i < n; i += 8) {
		assert_int_equal(spm_tx_begin(p), 0);
		for (size_t j = i; j < n && j < i + 8; j++)
			assert_int_equal(spm_tx_free(p, offs[j]), 0);
		assert_int_equal(spm_tx_commit(p), 0);
	}
	/* a big object fits again */
	assert_int_equal(spm_tx_begin(p), 0);
	spm_off_t big = spm_tx_alloc(p, 1u << 20);
	assert_true(big != 0);
	assert_int_equal(spm_tx_free(p, big), 0); /* allocated and freed in one tx */
	assert_int_equal(spm_tx_commit(p), 0);
}

/* check_design_stats -- the per-design facts about counter writes. */
static void check_design_stats(spm_pool *p, const char *design)
{
	assert_true(stat_of(p, "media.writes") > 0);
	assert_true(stat_of(p, "ctrl.writes") > 0);
	if (strcmp(design, "plain") == 0) {
		assert_int_equal(stat_of(p, "media.writes.counter"), 0);
		assert_int_equal(stat_of(p, "aes.pads"), 0);
	} else {
		assert_true(stat_of(p, "aes.pads") > 0);
	}
	if (strcmp(design, "fca") == 0) {
		assert_true(stat_of(p, "ctrl.ca_writes") > 0);
		assert_true(stat_of(p, "media.writes.counter") > 0);
	}
	if (strcmp(design, "sca") == 0)
		assert_true(stat_of(p, "ctrl.ca_writes") > 0); /* the lane headers */
}

static void roundtrip(void **state)
{
	const char *design = *state;
	char path[4096], opts[64];
	pool_path(path, sizeof(path), design);
	remove_pool(path);
	snprintf(opts, sizeof(opts), "design=%s", design);
	spm_pool *p = NULL;
	int rc = spm_create(&p, path, POOL_SIZE, opts);
	if (rc)
		fail_msg("spm_create(%s): %d %s", design, rc, spm_errormsg());
	assert_string_equal(spm_design(p), design);
	assert_int_equal(spm_size(p), POOL_SIZE);
	check_stats_readable(p);

	/* the root: zeroed, the same object on every call, no larger than asked first */
	struct rt_root *r = spm_root(p, sizeof(*r));
	assert_non_null(r);
	for (size_t i = 0; i < sizeof(*r); i++)
		assert_int_equal(((uint8_t *)r)[i], 0);
	assert_ptr_equal(spm_root(p, sizeof(*r)), r);
	assert_ptr_equal(spm_root(p, 1), r);
	assert_null(spm_root(p, sizeof(*r) + 1));
	assert_null(spm_root(p, 0));
	spm_off_t root_off = spm_off(p, r);

	/* a transaction with allocations linked from the root */
	uint64_t c0 = stat_of(p, "tx.committed");
	assert_int_equal(spm_tx_begin(p), 0);
	assert_int_equal(spm_tx_add(p, r, offsetof(struct rt_root, persisted)), 0);
	r->magic = 0x5350524f4f54ull;
	strcpy(r->msg, "round trip");
	for (unsigned k = 0; k < NOBJ; k++) {
		spm_off_t off = spm_tx_alloc(p, obj_sizes[k]);
		assert_true(off != 0);
		assert_int_equal(off % SPM_LINE, 0);
		uint8_t *o = spm_ptr(p, off);
		assert_non_null(o);
		for (size_t i = 0; i < obj_sizes[k]; i++) {
			assert_int_equal(o[i], 0);
			o[i] = pat(k, i);
		}
		r->obj[k] = off;
		r->objsize[k] = obj_sizes[k];
	}
	r->nobj = NOBJ;
	assert_int_equal(spm_tx_commit(p), 0);
	assert_int_equal(stat_of(p, "tx.committed"), c0 + 1);
	/* objects do not overlap */
	for (unsigned a = 0; a < NOBJ; a++)
		for (unsigned b = 0; b < NOBJ; b++)
			if (a != b)
				assert_true(r->obj[a] + obj_sizes[a] <= r->obj[b] ||
					    r->obj[b] + obj_sizes[b] <= r->obj[a]);

	/* a second transaction modifying parts of two objects */
	uint8_t *o5 = spm_ptr(p, r->obj[5]), *o7 = spm_ptr(p, r->obj[7]);
	assert_int_equal(spm_tx_begin(p), 0);
	assert_int_equal(spm_tx_add(p, o5 + 10, 190), 0);
	assert_int_equal(spm_tx_add(p, o5 + 10, 190), 0); /* logged once */
	assert_int_equal(spm_tx_add(p, o7 + 65000, 100), 0);
	for (size_t i = 10; i < 200; i++)
		o5[i] = (uint8_t)(0xA0 ^ i);
	memset(o7 + 65000, 0x5A, 100);
	assert_int_equal(spm_tx_commit(p), 0);
	assert_int_equal(stat_of(p, "tx.committed"), c0 + 2);

	/* plain persistence without a transaction */
	for (size_t i = 0; i < PERSISTED; i++)
		r->persisted[i] = (uint8_t)(i * 13 + 5);
	spm_persist(p, r->persisted, 500);
	spm_flush(p, r->persisted + 500, PERSISTED - 500);
	spm_drain(p);
	spm_counter_cache_writeback(p, r->persisted, PERSISTED);
	spm_drain(p);

	check_objects(p, r, 1);
	check_offsets(p, r);
	check_txstate(p, r);
	check_design_stats(p, design);
	check_stats_readable(p);

	/* close and open: every byte of the heap comes back */
	size_t size = spm_size(p);
	uint8_t *image = malloc(size);
	assert_non_null(image);
	memcpy(image, spm_ptr(p, 4096), size - 4096);
	assert_int_equal(spm_close(p), 0);
	p = NULL;
	rc = spm_open(&p, path, NULL);
	if (rc)
		fail_msg("spm_open(%s): %d %s", design, rc, spm_errormsg());
	assert_string_equal(spm_design(p), design);
	assert_int_equal(spm_size(p), size);
	r = spm_root(p, sizeof(*r));
	assert_non_null(r);
	assert_int_equal(spm_off(p, r), root_off);
	assert_null(spm_root(p, sizeof(*r) + 1));
	assert_true(memcmp(image, spm_ptr(p, 4096), size - 4096) == 0);
	free(image);
	check_objects(p, r, 1);
	check_stats_readable(p);
	check_offsets(p, r);

	check_abort(p, r);
	check_objects(p, r, 1);
	check_alloc_free(p);
	check_objects(p, r, 1);
	assert_int_equal(spm_close(p), 0);

	/* once more, opening with the pool's own design named */
	p = NULL;
	assert_int_equal(spm_open(&p, path, opts), 0);
	r = spm_root(p, sizeof(*r));
	assert_non_null(r);
	assert_int_equal(spm_off(p, r), root_off);
	check_objects(p, r, 1);
	uint64_t c1 = stat_of(p, "tx.committed");
	assert_int_equal(spm_tx_begin(p), 0);
	assert_int_equal(spm_tx_add(p, &r->magic, 8), 0);
	assert_int_equal(spm_tx_commit(p), 0);
	assert_int_equal(stat_of(p, "tx.committed"), c1 + 1);
	assert_int_equal(spm_close(p), 0);
	remove_pool(path);
}

/* workload -- the same operations on a fresh pool; returns its counter writes. */
static uint64_t workload(const char *design, uint64_t *ca_writes, uint64_t *writes)
{
	char path[4096], opts[64];
	pool_path(path, sizeof(path), design);
	remove_pool(path);
	snprintf(opts, sizeof(opts), "design=%s", design);
	spm_pool *p = NULL;
	assert_int_equal(spm_create(&p, path, POOL_SIZE, opts), 0);
	uint64_t *r = spm_root(p, 64 * 64);
	assert_non_null(r);
	spm_stat_reset(p);
	assert_int_equal(stat_of(p, "media.writes"), 0);
	assert_int_equal(stat_of(p, "tx.committed"), 0);
	for (unsigned t = 0; t < 40; t++) {
		assert_int_equal(spm_tx_begin(p), 0);
		for (unsigned k = 0; k < 3; k++) {
			uint64_t *w = r + 8 * ((t * 7 + k * 13) % 64);
			assert_int_equal(spm_tx_add(p, w, 64), 0);
			w[0] += t;
		}
		assert_int_equal(spm_tx_commit(p), 0);
		assert_int_equal(stat_of(p, "tx.committed"), t + 1);
		uint64_t *q = r + 8 * ((t * 5) % 60);
		q[1] = t;
		spm_persist(p, q, 256);
	}
	*ca_writes = stat_of(p, "ctrl.ca_writes");
	*writes = stat_of(p, "media.writes");
	uint64_t ctr = stat_of(p, "media.writes.counter");
	assert_int_equal(spm_close(p), 0);
	remove_pool(path);
	return ctr;
}

/* counter_writes -- sca writes fewer counters than fca; plain none. */
static void counter_writes(void **state)
{
	(void)state;
	uint64_t ca_fca, ca_sca, ca_plain, w_fca, w_sca, w_plain;
	uint64_t fca = workload("fca", &ca_fca, &w_fca);
	uint64_t sca = workload("sca", &ca_sca, &w_sca);
	uint64_t plain = workload("plain", &ca_plain, &w_plain);
	print_message("counter writes: fca %llu sca %llu plain %llu\n",
		      (unsigned long long)fca, (unsigned long long)sca,
		      (unsigned long long)plain);
	assert_true(fca > 0);
	assert_true(ca_fca > 0);
	assert_true(sca > 0);
	assert_true(sca < fca);
	assert_true(ca_sca < ca_fca);
	assert_int_equal(plain, 0);
	assert_int_equal(ca_plain, 0);
	assert_true(w_fca > 0 && w_sca > 0 && w_plain > 0);
}

/* persist_loop -- n persists of a 4 KiB page on a fresh sca pool, each
 * after work_ns of modeled core work; returns time.modeled_ns. */
static uint64_t persist_loop(unsigned n, uint64_t work_ns)
{
	char path[4096];
	pool_path(path, sizeof(path), "work");
	remove_pool(path);
	spm_pool *p = NULL;
	assert_int_equal(spm_create(&p, path, POOL_SIZE, "design=sca"), 0);
	uint8_t *r = spm_root(p, 64 * 64);
	assert_non_null(r);
	spm_stat_reset(p);
	for (unsigned i = 0; i < n; i++) {
		spm_model_work(p, work_ns);
		for (unsigned l = 0; l < 64; l++)
			r[64 * l] = (uint8_t)i;
		spm_persist(p, r, 64 * 64);
	}
	uint64_t t = stat_of(p, "time.modeled_ns");
	assert_int_equal(spm_close(p), 0);
	remove_pool(path);
	return t;
}

/* model_work -- spm_model_work advances the calling core's clock, and only
 * it; writes accepted before the work drain during it. */
static void model_work(void **state)
{
	(void)state;
	char path[4096];
	pool_path(path, sizeof(path), "work");
	remove_pool(path);
	spm_pool *p = NULL;
	assert_int_equal(spm_create(&p, path, POOL_SIZE, "design=plain"), 0);
	spm_stat_reset(p);
	spm_model_work(p, 5000);
	assert_int_equal(stat_of(p, "time.modeled_ns"), 5000);
	assert_int_equal(stat_of(p, "time.core0_ns"), 5000);
	assert_int_equal(spm_core_set(p, 1), 0);
	spm_model_work(p, 7000);
	spm_model_work(p, 0);
	assert_int_equal(stat_of(p, "time.core0_ns"), 5000);
	assert_int_equal(stat_of(p, "time.core1_ns"), 7000);
	assert_int_equal(stat_of(p, "time.modeled_ns"), 7000);
	spm_model_work(p, UINT64_MAX); /* would overflow the ps clock: ignored */
	assert_int_equal(stat_of(p, "time.core1_ns"), 7000);
	assert_int_equal(stat_of(p, "media.writes"), 0);
	assert_int_equal(spm_core_set(p, 0), 0);
	assert_int_equal(spm_close(p), 0);
	remove_pool(path);

	/* 100 page persists fill the queues (write-bound: 64 lines on 8 banks
	 * of 313 ns writes); 2 us of work before each hides most of their bank
	 * time: the total is less than the sum, at least the work itself */
	uint64_t bare = persist_loop(100, 0), work = persist_loop(100, 2000);
	print_message("100 page persists: %llu ns bare, %llu ns with 200000 ns of work\n",
		      (unsigned long long)bare, (unsigned long long)work);
	assert_true(bare > 100 * 1000);
	assert_true(work >= 100 * 2000);
	assert_true(work < bare + 100 * 2000 - bare / 2);
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
	pool_path(path, sizeof(path), "work");
	remove_pool(path);
	return 0;
}

int main(void)
{
	struct CMUnitTest tests[sizeof(designs) / sizeof(designs[0]) + 2];
	size_t n = 0;
	for (size_t i = 0; i < sizeof(designs) / sizeof(designs[0]); i++) {
		tests[n] = (struct CMUnitTest)cmocka_unit_test_prestate(roundtrip,
									(void *)designs[i]);
		tests[n++].name = designs[i];
	}
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(counter_writes);
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(model_work);
	return _cmocka_run_group_tests("roundtrip", tests, n, NULL, cleanup);
}
