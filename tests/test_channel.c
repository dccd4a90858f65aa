/*
 * test_channel.c -- memory channels (channels=N, emu/channel.c): a fence
 * waits for every channel the core wrote since its last one, and for no
 * other core's; the designs that allow channels keep their data across
 * close and open, the others and the core model are refused without a
 * file made or changed, and channels=0 and 17 are bad values; profile=heap
 * models no time and has a channel per online CPU where the design allows
 * (one where it does not); the write traffic of design plain does not
 * depend on the channels; a process killed at crash points of a 4-channel
 * pool leaves every committed transaction whole and no pad used twice.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "emu_internal.h"
#include "pool_internal.h"
#include "test_files.h"

#define POOL_SIZE (8u << 20)
/* pages in the second half of the pool: far from the headers and lanes */
#define FIRST_PAGE 1024u
#define NPAGES 2048u

static void pool_path(char *buf, size_t n, const char *tag)
{
	const char *dir = getenv("SPM_TEST_DIR");
	snprintf(buf, n, "%s/chan-%ld-%s", dir && *dir ? dir : "/tmp", (long)getpid(), tag);
}

static uint64_t stat_of(spm_pool *p, const char *name)
{
	uint64_t v = 0;
	assert_int_equal(spm_stat(p, name, &v), 0);
	return v;
}

/* pages_of -- the first n pages from FIRST_PAGE in channel c (into pg). */
static void pages_of(const struct emu *e, unsigned c, uint64_t *pg, unsigned n)
{
	unsigned k = 0;
	for (uint64_t p = FIRST_PAGE; p < NPAGES && k < n; p++)
		if (chan_of_line(e, p * 64) == c)
			pg[k++] = p;
	assert_int_equal(k, n);
}

/* ------------------------------------------------------------ fences */

/* fence_pool -- a fresh sca pool, timing on, core model off, 2 channels,
 * its statistics and clocks zeroed. */
static spm_pool *fence_pool(const char *path)
{
	spm_pool *p = fresh_pool(path, POOL_SIZE, "design=sca;core_model=off;channels=2");
	assert_int_equal(p->emu->nch, 2);
	assert_non_null(p->emu->chan);
	assert_false(p->emu->tm.off);
	spm_stat_reset(p);
	return p;
}

/* The writes of fence_ranges: 8 pages of channel 1, then one line of
 * channel 0 (the core's last write is in the early channel). */
struct fence_work {
	struct emu_range r[9];
	uint64_t line0;
};

static void fence_work_of(const struct emu *e, struct fence_work *w)
{
	uint64_t p1[8] = {0}, p0[1] = {0};
	pages_of(e, 1, p1, 8);
	pages_of(e, 0, p0, 1);
	for (unsigned i = 0; i < 8; i++)
		w->r[i] = (struct emu_range){p1[i] * 64, 64};
	w->line0 = p0[0] * 64 + 5;
	w->r[8] = (struct emu_range){w->line0, 1};
	assert_int_equal(chan_of_line(e, w->line0), 0);
	assert_int_equal(chan_of_line(e, w->r[0].first + 63), 1);
}

/* A fence waits for every channel the core wrote: channel 1's writes are
 * accepted late (its queue slice fills), channel 0's single line early;
 * the fence leaves the core's clock at the latest of them, each channel's
 * pending time for the core 0.  Another core's fence moves neither. */
static void fence_covers_channels(void **state)
{
	(void)state;
	char path[4096];
	pool_path(path, sizeof(path), "fence");
	spm_pool *p = fence_pool(path);
	struct emu *e = p->emu;
	const unsigned core = 3, other = 5;
	struct fence_work w;
	fence_work_of(e, &w);
	for (unsigned i = 0; i < 9; i++)
		emu_write_lines(e, core, w.r[i].first, w.r[i].n, p->view, 0);
	const uint64_t clk = e->tm.clock[core];
	const uint64_t p0 = e->chan[0]->tm.pending[core], p1 = e->chan[1]->tm.pending[core];
	print_message("before the fence: clock %llu ps, pending %llu ps (channel 0), %llu ps "
		      "(channel 1)\n", (unsigned long long)clk, (unsigned long long)p0,
		      (unsigned long long)p1);
	assert_true(p0 > 0);    /* the core wrote channel 0 */
	assert_true(p1 > p0);   /* channel 1 is the late one */
	assert_true(p1 > clk);  /* and the fence has to wait for it */

	/* another core writes and fences: this core's clock and pending stay */
	uint64_t pg[1] = {0};
	pages_of(e, 1, pg, 1);
	emu_write_lines(e, other, pg[0] * 64 + 7, 1, p->view, 0);
	emu_write_lines(e, other, w.line0 + 1, 1, p->view, 0);
	emu_fence(e, other);
	assert_true(e->tm.clock[other] > 0);
	assert_int_equal(e->chan[0]->tm.pending[other], 0);
	assert_int_equal(e->chan[1]->tm.pending[other], 0);
	assert_int_equal(e->tm.clock[core], clk);
	assert_int_equal(e->chan[0]->tm.pending[core], p0);
	assert_int_equal(e->chan[1]->tm.pending[core], p1);

	emu_fence(e, core);
	const uint64_t after = e->tm.clock[core];
	assert_true(after >= p0);
	assert_true(after >= p1);
	assert_int_equal(after, p1); /* max(clock, p0, p1) */
	assert_int_equal(e->chan[0]->tm.pending[core], 0);
	assert_int_equal(e->chan[1]->tm.pending[core], 0);
	/* a second fence has nothing to wait for */
	emu_fence(e, core);
	assert_int_equal(e->tm.clock[core], after);
	assert_int_equal(spm_close(p), 0);
	remove_pool_files(path);
}

/* The same through emu_write_ranges's EMU_WB_FENCE: two pools made alike,
 * one given the writes and then a fence, the other the writes with the
 * flag; the clocks agree, and reach channel 1's pending time. */
static void fence_flag_covers_channels(void **state)
{
	(void)state;
	char pa[4096], pb[4096];
	pool_path(pa, sizeof(pa), "fence-a");
	pool_path(pb, sizeof(pb), "fence-b");
	spm_pool *a = fence_pool(pa), *b = fence_pool(pb);
	const unsigned core = 2;
	struct fence_work w;
	fence_work_of(a->emu, &w);
	emu_write_ranges(a->emu, core, w.r, 9, a->view, 0);
	const uint64_t p0 = a->emu->chan[0]->tm.pending[core];
	const uint64_t p1 = a->emu->chan[1]->tm.pending[core];
	assert_true(p1 > p0 && p0 > 0);
	assert_true(p1 > a->emu->tm.clock[core]);
	emu_fence(a->emu, core);
	assert_int_equal(a->emu->tm.clock[core], p1);

	emu_write_ranges(b->emu, core, w.r, 9, b->view, EMU_WB_FENCE);
	assert_int_equal(b->emu->chan[0]->tm.pending[core], 0);
	assert_int_equal(b->emu->chan[1]->tm.pending[core], 0);
	assert_true(b->emu->tm.clock[core] >= p1);
	assert_int_equal(b->emu->tm.clock[core], a->emu->tm.clock[core]);
	/* and with the counter write-back flag as well (sca honours it) */
	emu_write_ranges(b->emu, core, w.r, 9, b->view, EMU_WB_FENCE | EMU_WB_CCWB);
	assert_int_equal(b->emu->chan[0]->tm.pending[core], 0);
	assert_int_equal(b->emu->chan[1]->tm.pending[core], 0);
	assert_true(b->emu->tm.clock[core] > p1);
	assert_int_equal(spm_close(a), 0);
	assert_int_equal(spm_close(b), 0);
	remove_pool_files(pa);
	remove_pool_files(pb);
}

/* ------------------------------------------------------------ options */

#define DATA_BYTES (40u << 10) /* 10 pages: every channel of 2 and 4 */

struct droot {
	spm_off_t data;
	uint64_t gen;
};

static uint8_t byte_of(uint64_t gen, size_t i)
{
	return (uint8_t)(i * 131 + gen * 7 + (i >> 9));
}

/* write_gen -- a transaction: the data object (allocated the first time)
 * filled for generation gen. */
static void write_gen(spm_pool *p, uint64_t gen)
{
	struct droot *r = spm_root(p, sizeof(*r));
	assert_non_null(r);
	assert_int_equal(spm_tx_begin(p), 0);
	assert_int_equal(spm_tx_add(p, r, sizeof(*r)), 0);
	if (!r->data) {
		r->data = spm_tx_alloc(p, DATA_BYTES);
		assert_true(r->data != 0);
	}
	uint8_t *d = spm_ptr(p, r->data);
	assert_int_equal(spm_tx_add(p, d, DATA_BYTES), 0);
	for (size_t i = 0; i < DATA_BYTES; i++)
		d[i] = byte_of(gen, i);
	r->gen = gen;
	assert_int_equal(spm_tx_commit(p), 0);
}

static void check_gen(spm_pool *p, uint64_t gen)
{
	struct droot *r = spm_root(p, sizeof(*r));
	assert_non_null(r);
	assert_int_equal(r->gen, gen);
	const uint8_t *d = spm_ptr(p, r->data);
	assert_non_null(d);
	for (size_t i = 0; i < DATA_BYTES; i++)
		if (d[i] != byte_of(gen, i))
			fail_msg("byte %zu of generation %llu wrong", i, (unsigned long long)gen);
}

/* channels=2 on each design that allows it (timing on with the core model
 * off, or timing off): transactions, close, open again with 2 channels and
 * with 1, the data whole each time. */
static void designs_with_channels(void **state)
{
	(void)state;
	static const char *const opts[] = {
		"design=sca;core_model=off;channels=2", "design=supermem;core_model=off;channels=2",
		"design=fca;timing=off;channels=2",	"design=plain;timing=off;channels=2",
		"design=ideal;timing=off;channels=2",	"design=sca;timing=off;channels=4",
	};
	for (size_t k = 0; k < sizeof(opts) / sizeof(opts[0]); k++) {
		char path[4096], tag[16];
		snprintf(tag, sizeof(tag), "opt%zu", k);
		pool_path(path, sizeof(path), tag);
		spm_pool *p = fresh_pool(path, POOL_SIZE, opts[k]);
		unsigned want = strstr(opts[k], "channels=4") ? 4 : 2;
		assert_int_equal(p->emu->nch, want);
		write_gen(p, 1);
		write_gen(p, 2);
		check_gen(p, 2);
		assert_int_equal(spm_close(p), 0);
		/* the channels are not stored: given again at open */
		assert_int_equal(spm_open(&p, path, opts[k] + strcspn(opts[k], ";") + 1), 0);
		assert_int_equal(p->emu->nch, want);
		check_gen(p, 2);
		write_gen(p, 3);
		assert_int_equal(spm_close(p), 0);
		/* one channel reads what two wrote */
		assert_int_equal(spm_open(&p, path, NULL), 0);
		assert_null(p->emu->chan);
		check_gen(p, 3);
		write_gen(p, 4);
		assert_int_equal(spm_close(p), 0);
		assert_int_equal(spm_open(&p, path, opts[k] + strcspn(opts[k], ";") + 1), 0);
		check_gen(p, 4);
		assert_int_equal(spm_close(p), 0);
		remove_pool_files(path);
	}
}

/* dir_entries -- the entries of dir other than . and .. */
static unsigned dir_entries(const char *dir)
{
	DIR *d = opendir(dir);
	assert_non_null(d);
	unsigned n = 0;
	for (struct dirent *de; (de = readdir(d));)
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

/* channels=2 refused (SPM_E_OPTION) for a design with a redo log, an
 * integrity tree or dedup tables, and with the core model on: spm_create
 * leaves no file, spm_open leaves the pool as it was; channels=0 and 17
 * are bad values. */
static void refusals(void **state)
{
	(void)state;
	char dir[4096], path[4200];
	pool_path(dir, sizeof(dir), "refuse");
	assert_int_equal(mkdir(dir, 0700), 0);
	snprintf(path, sizeof(path), "%s/pool", dir);
	static const char *const bad[] = {
		"design=lame;timing=off;channels=2",  "design=ccnvm;timing=off;channels=2",
		"design=dewrite;timing=off;channels=2", "design=sca;channels=2", /* core model on */
		"design=supermem;channels=2",	      "design=sca;channels=17",
		"design=sca;timing=off;channels=0",   "design=clame;profile=heap;channels=2",
		"design=osiris;core_model=off;channels=3",
	};
	spm_pool *p = NULL;
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		int rc = spm_create(&p, path, POOL_SIZE, bad[k]);
		if (rc != SPM_E_OPTION)
			fail_msg("spm_create(%s): %d, not SPM_E_OPTION", bad[k], rc);
		assert_int_equal(spm_errcode(), SPM_E_OPTION);
		assert_non_null(strstr(spm_errormsg(), "channels"));
		assert_int_equal(dir_entries(dir), 0);
	}
	/* existing pools opened with channels they cannot have: unchanged */
	static const char *const made[] = {"design=lame", "design=ccnvm", "design=dewrite",
					   "design=sca", "design=sca"};
	static const char *const reopen[] = {"timing=off;channels=2", "timing=off;channels=2",
					     "profile=heap;channels=2", "channels=2",
					     "timing=off;channels=17"};
	for (size_t k = 0; k < sizeof(made) / sizeof(made[0]); k++) {
		p = fresh_pool(path, POOL_SIZE, made[k]);
		write_gen(p, 1);
		assert_int_equal(spm_close(p), 0);
		struct pool_image img = {0};
		pool_save(path, &img);
		int rc = spm_open(&p, path, reopen[k]);
		if (rc != SPM_E_OPTION)
			fail_msg("spm_open(%s, %s): %d, not SPM_E_OPTION", made[k], reopen[k], rc);
		for (unsigned i = 0; i < 3; i++) {
			char f[4300];
			pool_file(f, sizeof(f), path, i);
			assert_file_is(f, img.bytes[i], img.len[i]);
		}
		pool_image_free(&img);
		/* and the pool still opens as it was made */
		assert_int_equal(spm_open(&p, path, NULL), 0);
		check_gen(p, 1);
		assert_int_equal(spm_close(p), 0);
		remove_pool_files(path);
	}
	rmdir(dir);
}

/* a counter cache cut into channels' slices too small for its ways (64 KiB,
 * 1024 ways: 512 lines a channel) is refused as an option before anything
 * is written -- a crashed pool's recovery included: its files as they were,
 * and it still opens (and recovers) without the option. */
static void refusal_cache_slices(void **state)
{
	(void)state;
	char path[4096];
	pool_path(path, sizeof(path), "slices");
	spm_pool *p = NULL;
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) { /* transactions, then a crash: the pool left dirty */
		p = fresh_pool(path, POOL_SIZE, "design=sca;timing=off");
		write_gen(p, 1);
		write_gen(p, 2);
		_exit(0);
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	struct pool_image img = {0};
	pool_save(path, &img);
	const char *opts = "timing=off;ctr_cache_kib=64;ctr_cache_ways=1024;channels=2";
	int rc = spm_open(&p, path, opts);
	if (rc != SPM_E_OPTION)
		fail_msg("spm_open(%s): %d, not SPM_E_OPTION (%s)", opts, rc, spm_errormsg());
	assert_non_null(strstr(spm_errormsg(), "channels"));
	for (unsigned i = 0; i < 3; i++) {
		char f[4300];
		pool_file(f, sizeof(f), path, i);
		assert_file_is(f, img.bytes[i], img.len[i]);
	}
	pool_image_free(&img);
	/* at create: refused, nothing made */
	char other[4200];
	snprintf(other, sizeof(other), "%s-new", path);
	assert_int_equal(spm_create(&p, other, POOL_SIZE,
				    "design=sca;timing=off;ctr_cache_kib=64;ctr_cache_ways=1024;"
				    "channels=2"),
			 SPM_E_OPTION);
	assert_non_null(strstr(spm_errormsg(), "channels"));
	assert_int_equal(access(other, F_OK), -1);
	/* the pool opens without the option */
	assert_int_equal(spm_open(&p, path, "timing=off;channels=2"), 0);
	check_gen(p, 2);
	assert_int_equal(spm_close(p), 0);
	remove_pool_files(path);
}

/* ------------------------------------------------------------ profile=heap */

static unsigned online_channels(void)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	return cpus < 1 ? 1 : cpus > 16 ? 16 : (unsigned)cpus;
}

/* profile=heap: no modeled time after work; a channel per online CPU (at
 * most 16) on sca, and one on lame (no error); alloc=lanes. */
static void profile_heap(void **state)
{
	(void)state;
	static const char *const designs[] = {"sca", "supermem", "plain", "lame", "ccnvm"};
	for (size_t k = 0; k < sizeof(designs) / sizeof(designs[0]); k++) {
		char path[4096], opts[64];
		pool_path(path, sizeof(path), designs[k]);
		snprintf(opts, sizeof(opts), "design=%s;profile=heap", designs[k]);
		spm_pool *p = fresh_pool(path, POOL_SIZE, opts);
		struct emu *e = p->emu;
		int one = !strcmp(designs[k], "lame") || !strcmp(designs[k], "ccnvm");
		unsigned want = one ? 1 : online_channels();
		if (want == 1) {
			assert_null(e->chan);
		} else {
			assert_non_null(e->chan);
			assert_int_equal(e->nch, want);
		}
		assert_true(e->tm.off);
		assert_int_equal(p->alloc_lanes, 1);
		for (uint64_t g = 1; g <= 4; g++)
			write_gen(p, g);
		spm_persist(p, spm_root(p, 16), 16);
		assert_int_equal(stat_of(p, "time.modeled_ns"), 0);
		assert_true(stat_of(p, "media.writes") + stat_of(p, "ctrl.writes") > 0);
		assert_int_equal(spm_close(p), 0);
		assert_int_equal(spm_open(&p, path, "profile=heap"), 0);
		check_gen(p, 4);
		assert_int_equal(stat_of(p, "time.modeled_ns"), 0);
		assert_int_equal(spm_close(p), 0);
		remove_pool_files(path);
	}
}

/* ------------------------------------------------------------ statistics */

/* run_plain -- design plain, timing off, with n channels: the same
 * transactions; the statistics named (after a close and open, none of
 * them counted twice or lost at the close's drain). */
static void run_plain(unsigned n, uint64_t *media, uint64_t *ctrl, uint64_t *media_open)
{
	char path[4096], tag[16], opts[96];
	snprintf(tag, sizeof(tag), "plain%u", n);
	pool_path(path, sizeof(path), tag);
	snprintf(opts, sizeof(opts), "design=plain;timing=off;channels=%u", n);
	spm_pool *p = fresh_pool(path, POOL_SIZE, opts);
	assert_int_equal(p->emu->nch, n > 1 ? n : 0);
	write_gen(p, 1); /* the object allocated */
	spm_stat_reset(p);
	for (uint64_t g = 2; g <= 9; g++)
		write_gen(p, g);
	*media = stat_of(p, "media.writes");
	*ctrl = stat_of(p, "ctrl.writes");
	assert_int_equal(spm_close(p), 0);
	snprintf(opts, sizeof(opts), "timing=off;channels=%u", n);
	assert_int_equal(spm_open(&p, path, opts), 0);
	spm_stat_reset(p);
	write_gen(p, 10);
	check_gen(p, 10);
	*media_open = stat_of(p, "media.writes");
	assert_int_equal(spm_close(p), 0);
	remove_pool_files(path);
}

/* Design plain (no counter cache, nothing but the data written): the same
 * transactions make the same write traffic with 1 channel and with 4. */
static void plain_traffic_same(void **state)
{
	(void)state;
	uint64_t m1, c1, o1, m4, c4, o4;
	run_plain(1, &m1, &c1, &o1);
	run_plain(4, &m4, &c4, &o4);
	print_message("media.writes %llu / %llu, ctrl.writes %llu / %llu (1 / 4 channels)\n",
		      (unsigned long long)m1, (unsigned long long)m4, (unsigned long long)c1,
		      (unsigned long long)c4);
	assert_true(m1 > 8 * DATA_BYTES / 64);
	assert_int_equal(m1, m4);
	assert_int_equal(c1, c4);
	assert_int_equal(o1, o4);
}

/* ------------------------------------------------------------ crashes */

#define CRASH_RECS 48u /* records of 4 KiB: a page each, every channel */
#define CRASH_TX 16u

struct crec {
	uint64_t w[512];
};

struct croot {
	uint64_t count; /* transactions committed */
	spm_off_t recs; /* CRASH_RECS records */
	uint64_t sum;
};

static uint64_t word_of(uint64_t tx, uint64_t rec, uint64_t j)
{
	uint64_t z = tx * 0x9e3779b97f4a7c15ull + rec * 1000003 + j;
	z = (z ^ (z >> 31)) * 0xbf58476d1ce4e5b9ull;
	return z ^ (z >> 29);
}

/* what a record holds after tx transactions: written by the last that
 * touched it (transaction t writes records t*5 .. t*5+6 mod CRASH_RECS) */
static uint64_t expect_word(uint64_t count, uint64_t rec, uint64_t j)
{
	for (uint64_t t = count; t-- > 0;)
		for (uint64_t k = 0; k < 7; k++)
			if ((t * 5 + k) % CRASH_RECS == rec)
				return word_of(t, rec, j);
	return 0;
}

static struct shared_count {
	uint64_t committed;
} *shc;

static const char *crash_opts = "design=sca;profile=heap;channels=4";

/* crash_child -- open the pool and commit transactions until CRASH_TX. */
static int crash_child(const char *path)
{
	spm_pool *p;
	if (spm_open(&p, path, crash_opts + strlen("design=sca;")))
		return 2;
	if (p->emu->nch != 4)
		return 3;
	struct croot *r = spm_root(p, sizeof(*r));
	struct crec *rec = spm_ptr(p, r->recs);
	for (uint64_t t = r->count; t < CRASH_TX; t++) {
		if (spm_tx_begin(p) || spm_tx_add(p, r, sizeof(*r)))
			return 4;
		for (uint64_t k = 0; k < 7; k++) {
			uint64_t i = (t * 5 + k) % CRASH_RECS;
			if (spm_tx_add(p, &rec[i], sizeof(rec[i])))
				return 5;
			for (unsigned j = 0; j < 512; j++)
				rec[i].w[j] = word_of(t, i, j);
		}
		r->sum += t;
		r->count = t + 1;
		if (spm_tx_commit(p))
			return 6;
		__atomic_store_n(&shc->committed, t + 1, __ATOMIC_RELEASE);
	}
	return spm_close(p) ? 7 : 0;
}

/* crash_run -- this program again ("crash-child", so that it reads
 * SPM_CRASH afresh: a process parses it once) with SPM_CRASH=crash (NULL:
 * none) on path; its stderr into err, for "count" its crash points into
 * *points; the wait status. */
static int crash_run(const char *path, int shm, const char *crash, char *err, size_t errlen,
		     long *points)
{
	int fds[2];
	assert_int_equal(pipe(fds), 0);
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char fd[16];
		snprintf(fd, sizeof(fd), "%d", shm);
		close(fds[0]);
		if (dup2(fds[1], 2) < 0)
			_exit(120);
		if (crash ? setenv("SPM_CRASH", crash, 1) : unsetenv("SPM_CRASH"))
			_exit(121);
		execl("/proc/self/exe", "test_channel", "crash-child", path, fd, (char *)NULL);
		_exit(122);
	}
	close(fds[1]);
	return child_wait(pid, fds[0], err, errlen, points);
}

/* crash_check -- the pool recovered: count at least seen, each record as
 * the first count transactions left it, the sum. */
static void crash_check(const char *path, uint64_t seen)
{
	spm_pool *p;
	if (spm_open(&p, path, crash_opts + strlen("design=sca;")))
		fail_msg("open after the crash: %s", spm_errormsg());
	struct croot *r = spm_root(p, sizeof(*r));
	assert_non_null(r);
	uint64_t c = r->count;
	if (c < seen || c > CRASH_TX)
		fail_msg("count %llu after %llu committed", (unsigned long long)c,
			 (unsigned long long)seen);
	assert_int_equal(r->sum, c * (c - 1) / 2); /* 0 + 1 + ... + c-1 */
	const struct crec *rec = spm_ptr(p, r->recs);
	for (uint64_t i = 0; i < CRASH_RECS; i++)
		for (unsigned j = 0; j < 512; j++)
			if (rec[i].w[j] != expect_word(c, i, j))
				fail_msg("record %llu word %u wrong after %llu transactions",
					 (unsigned long long)i, j, (unsigned long long)c);
	assert_int_equal(spm_close(p), 0);
}

/* A child committing transactions on a 4-channel pool (sca, profile=heap)
 * killed at a sample of its crash points (SPM_CRASH=after:K), from a copy
 * of one pool each time: every committed transaction is whole after
 * recovery, nothing of the one cut short, the run goes on to its end from
 * there, and no pad of a timeline (the copy's history, the crashed run,
 * recovery, the rest) is used twice. */
static void crash_with_channels(void **state)
{
	(void)state;
	char path[4096], audit[4200], tmpl_audit[4200], err[4096];
	pool_path(path, sizeof(path), "crash");
	snprintf(audit, sizeof(audit), "%s.audit", path);
	snprintf(tmpl_audit, sizeof(tmpl_audit), "%s.tmpl-audit", path);
	int shm = memfd_create("test_channel", 0);
	assert_true(shm >= 0);
	assert_int_equal(ftruncate(shm, sizeof(*shc)), 0);
	shc = mmap(NULL, sizeof(*shc), PROT_READ | PROT_WRITE, MAP_SHARED, shm, 0);
	assert_true(shc != MAP_FAILED);
	unlink(tmpl_audit);
	assert_int_equal(setenv("SPM_AUDIT", tmpl_audit, 1), 0);
	spm_pool *p = fresh_pool(path, POOL_SIZE, crash_opts);
	assert_int_equal(p->emu->nch, 4);
	struct croot *r = spm_root(p, sizeof(*r));
	assert_non_null(r);
	assert_int_equal(spm_tx_begin(p), 0);
	assert_int_equal(spm_tx_add(p, r, sizeof(*r)), 0);
	r->recs = spm_tx_alloc(p, CRASH_RECS * sizeof(struct crec));
	assert_true(r->recs != 0);
	assert_int_equal(spm_tx_commit(p), 0);
	assert_int_equal(spm_close(p), 0);
	struct pool_image img = {0};
	pool_save(path, &img);
	size_t tlen;
	uint8_t *tbytes = slurp(tmpl_audit, &tlen);
	assert_int_equal(setenv("SPM_AUDIT", audit, 1), 0);

	long points = -1;
	spit(audit, tbytes, tlen);
	int st = crash_run(path, shm, "count", err, sizeof(err), &points);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		fail_msg("the uncrashed run: status %d: %s", st, err);
	if (points <= 100)
		fail_msg("%ld crash points: %s", points, err);
	crash_check(path, CRASH_TX);
	unsigned records = 0, reused = audit_reused(audit, &records), kills = 0;
	for (unsigned s = 0; s < 12; s++) {
		long k = 1 + (long)(((uint64_t)s * 2654435761u) % (uint64_t)points);
		char crash[32];
		snprintf(crash, sizeof(crash), "after:%ld", k);
		pool_restore(path, &img);
		spit(audit, tbytes, tlen);
		shc->committed = 0;
		st = crash_run(path, shm, crash, err, sizeof(err), NULL);
		if (WIFEXITED(st))
			fail_msg("%s: exit %d: %s", crash, WEXITSTATUS(st), err);
		assert_true(WIFSIGNALED(st));
		kills++;
		crash_check(path, __atomic_load_n(&shc->committed, __ATOMIC_ACQUIRE));
		/* and it goes on from there to its end */
		st = crash_run(path, shm, NULL, err, sizeof(err), NULL);
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
			fail_msg("after %s: status %d: %s", crash, st, err);
		crash_check(path, CRASH_TX);
		unsigned n = 0;
		reused += audit_reused(audit, &n);
		records += n;
	}
	unsetenv("SPM_AUDIT");
	print_message("%u kills at crash points of %ld, %u reused pads of %u audited\n", kills,
		      points, reused, records);
	assert_int_equal(reused, 0);
	assert_true(records > 0);
	free(tbytes);
	pool_image_free(&img);
	remove_pool_files(path);
	unlink(audit);
	unlink(tmpl_audit);
	munmap(shc, sizeof(*shc));
	close(shm);
}

/* crash-child PATH FD: crash_child on PATH, the commit count in the
 * shared memory FD. */
static int crash_child_main(const char *path, int fd)
{
	shc = mmap(NULL, sizeof(*shc), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (shc == MAP_FAILED)
		return 8;
	return crash_child(path);
}

/* repro: a counter_cache_writeback alone in a channel, then a fence */
static void ccwb_then_fence(void **state)
{
	(void)state;
	char path[4096];
	pool_path(path, sizeof(path), "ccwb");
	spm_pool *p = fence_pool(path);
	struct emu *e = p->emu;
	const unsigned core = 4;
	uint64_t pg[8] = {0};
	pages_of(e, 1, pg, 8);
	for (unsigned i = 0; i < 8; i++)
		emu_write_lines(e, core, pg[i] * 64, 64, p->view, 0); /* counters dirty */
	emu_fence(e, core);
	uint64_t clk = e->tm.clock[core];
	assert_int_equal(e->chan[1]->tm.pending[core], 0);
	for (unsigned i = 0; i < 8; i++)
		emu_ctr_writeback(e, core, pg[i] * 64, 64); /* counter lines queued */
	uint64_t p1 = e->chan[1]->tm.pending[core];
	print_message("after the write-back: clock %llu, channel 1 pending %llu\n",
		      (unsigned long long)e->tm.clock[core], (unsigned long long)p1);
	assert_true(p1 > clk);
	emu_fence(e, core);
	print_message("after the fence: clock %llu, channel 1 pending %llu\n",
		      (unsigned long long)e->tm.clock[core],
		      (unsigned long long)e->chan[1]->tm.pending[core]);
	assert_true(e->tm.clock[core] >= p1);
	assert_int_equal(e->chan[1]->tm.pending[core], 0);
	assert_int_equal(spm_close(p), 0);
	remove_pool_files(path);
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "crash-child"))
		return crash_child_main(argv[2], atoi(argv[3]));
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ccwb_then_fence),
		cmocka_unit_test(fence_covers_channels),
		cmocka_unit_test(fence_flag_covers_channels),
		cmocka_unit_test(designs_with_channels),
		cmocka_unit_test(refusals),
		cmocka_unit_test(refusal_cache_slices),
		cmocka_unit_test(profile_heap),
		cmocka_unit_test(plain_traffic_same),
		cmocka_unit_test(crash_with_channels),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
