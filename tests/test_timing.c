/* test_timing.c -- the timing model (emu/timing.c) with the sca profile: queues, banks and their calendars, the data bus, tWTR, tFAW, AES pipeline, determinism. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "spm.h"
#include "emu_internal.h"

/* Requests are issued at R, not 0, so that no activation happens at time 0. */
#define R 1000u

static const struct profile *sca(void)
{
	const struct profile *p = profile_find("sca");
	assert_non_null(p);
	return p;
}

/* model -- a fresh model of the sca profile with the given queues and banks. */
static void model(struct timing *t, unsigned wpq_data, unsigned wpq_ctr, unsigned banks)
{
	tm_init(t, sca(), wpq_data, wpq_ctr, banks, 1, 0, 64);
}

/* start_of -- when the latest write into q reached its bank. */
static uint64_t start_of(const struct tm_queue *q)
{
	return q->slot_start[(q->pos + q->cap - 1) % q->cap];
}

/* write_by -- tm_write of core into the data queue that must not stall;
 * returns when it reached its bank. */
static uint64_t write_by(struct timing *t, unsigned core, unsigned bank, uint64_t ready)
{
	int stalled = -1;
	assert_int_equal(tm_write(t, core, &t->qdata, bank, 0, ready, &stalled), ready);
	assert_int_equal(stalled, 0);
	return start_of(&t->qdata);
}

/* ps_of -- the profile's nanoseconds in picoseconds. */
static uint64_t ps_of(double ns)
{
	return (uint64_t)(ns * 1000.0 + 0.5);
}

/* The model takes the profile's parameters, in picoseconds, and starts idle. */
static void test_init_from_profile(void **state)
{
	(void)state;
	const struct profile *p = sca();
	assert_null(profile_find("no-such-profile"));
	assert_non_null(profile_find("supermem"));
	struct timing t;
	memset(&t, 0xa5, sizeof(t));
	model(&t, 64, 16, 8);
	assert_int_equal(t.rcd, ps_of(p->t_rcd));
	assert_int_equal(t.cl, ps_of(p->t_cl));
	assert_int_equal(t.cwd, ps_of(p->t_cwd));
	assert_int_equal(t.faw, ps_of(p->t_faw));
	assert_int_equal(t.wtr, ps_of(p->t_wtr));
	assert_int_equal(t.wr, ps_of(p->t_wr));
	assert_int_equal(t.aes, ps_of(p->aes_ns));
	assert_int_equal(t.aes_issue, ps_of(p->aes_issue_ns));
	/* SCA Table 2: 533 MHz DDR, a line in 8 beats = 4 cycles */
	assert_int_equal(t.burst, ps_of(4 * 1000.0 / 533));
	assert_int_equal(t.bus_bits, 64);
	assert_int_equal(t.banks, 8);
	assert_int_equal(t.qdata.cap, 64);
	assert_int_equal(t.qctr.cap, 16);
	assert_int_equal(tm_makespan(&t), 0);
	for (unsigned b = 0; b < TM_MAX_BANKS; b++)
		assert_int_equal(tm_bank_free(&t, b), 0);
	assert_int_equal(t.bank_fold, 0);
	/* the profile's pipelined engine is cheaper per line than one pad */
	assert_true(t.aes_issue > 0 && t.aes_issue < t.aes);
}

/* run_sequence -- a fixed pseudo-random mix of requests; records every time. */
static unsigned run_sequence(struct timing *t, uint64_t *out, unsigned n)
{
	uint64_t x = 88172645463325252ull, now = R;
	unsigned stalls = 0;
	for (unsigned i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		unsigned bank = (unsigned)(x % t->banks);
		int stalled = -1;
		switch ((x >> 8) % 4) {
		case 0:
			out[i] = tm_write(t, 0, &t->qdata, bank, 0, now, &stalled) * 2 + (uint64_t)stalled;
			stalls += (unsigned)stalled;
			break;
		case 1:
			out[i] = tm_write(t, 0, &t->qctr, bank, 0, now, &stalled) * 2 + (uint64_t)stalled;
			stalls += (unsigned)stalled;
			break;
		case 2:
			out[i] = tm_read(t, 0, bank, now);
			break;
		default:
			out[i] = tm_aes(t, now);
			break;
		}
		now += (x >> 16) % 50000;
	}
	return stalls;
}

/* The same sequence of requests gives the same times: twice, and after tm_reset. */
static void test_deterministic(void **state)
{
	(void)state;
	enum { N = 2000 };
	static uint64_t a[N], b[N], c[N];
	struct timing t1, t2;
	model(&t1, 8, 4, 8);
	model(&t2, 8, 4, 8);
	unsigned stalls = run_sequence(&t1, a, N);
	assert_int_equal(run_sequence(&t2, b, N), stalls);
	assert_memory_equal(a, b, sizeof(a));
	for (unsigned bk = 0; bk < TM_MAX_BANKS; bk++)
		assert_int_equal(tm_bank_free(&t1, bk), tm_bank_free(&t2, bk));
	assert_int_equal(t1.aes_ops, t2.aes_ops);
	assert_int_equal(t1.aes_wait, t2.aes_wait);
	/* the sequence did fill the queues, or it proves little */
	assert_true(stalls > 0);
	tm_reset(&t1);
	assert_int_equal(t1.aes_cal.n, 0);
	assert_int_equal(t1.aes_ops, 0);
	for (unsigned bk = 0; bk < TM_MAX_BANKS; bk++)
		assert_int_equal(tm_bank_free(&t1, bk), 0);
	assert_int_equal(run_sequence(&t1, c, N), stalls);
	assert_memory_equal(a, c, sizeof(a));
}

/* A full queue stalls: acceptance waits for the oldest slot to free. */
static void test_full_queue_stalls(void **state)
{
	(void)state;
	struct timing t;
	model(&t, 2, 16, 8);
	const uint64_t wt = t.cwd + t.wr;
	write_by(&t, 0, 0, R);
	write_by(&t, 0, 0, R);
	/* both slots are taken until the writes complete at R+wt and R+2wt */
	int stalled = -1;
	uint64_t acc = tm_write(&t, 0, &t.qdata, 1, 0, R, &stalled);
	assert_int_equal(stalled, 1);
	assert_int_equal(acc, R + wt);
	assert_true(acc > R);
	stalled = -1;
	acc = tm_write(&t, 0, &t.qdata, 2, 0, R + 10, &stalled);
	assert_int_equal(stalled, 1);
	assert_int_equal(acc, R + 2 * wt);
	/* the counter queue is separate: not full */
	stalled = -1;
	acc = tm_write(&t, 0, &t.qctr, 3, 0, R, &stalled);
	assert_int_equal(stalled, 0);
	assert_int_equal(acc, R);
	/* a write ready after its slot freed is accepted at once */
	uint64_t later = t.qdata.slot_free[t.qdata.pos] + 1;
	write_by(&t, 0, 4, later);
}

/* Writes to different banks overlap (but for their bursts on the one bus);
 * writes to one bank are tCWD+tWR apart. */
static void test_bank_parallelism(void **state)
{
	(void)state;
	struct timing t;
	model(&t, 64, 16, 8);
	const uint64_t wt = t.cwd + t.wr, bu = t.burst;
	assert_int_equal(wt, ps_of(sca()->t_cwd) + ps_of(sca()->t_wr));
	/* banks 0 and 1 in parallel, bank 1's burst after bank 0's */
	assert_int_equal(write_by(&t, 0, 0, R), R);
	assert_int_equal(write_by(&t, 0, 1, R), R + bu);
	assert_int_equal(tm_bank_free(&t, 0), R + wt);
	assert_int_equal(tm_bank_free(&t, 1), R + bu + wt);
	/* bank 2 twice: serialized */
	write_by(&t, 0, 2, R);
	assert_int_equal(tm_bank_free(&t, 2), R + 2 * bu + wt);
	write_by(&t, 0, 2, R);
	assert_int_equal(tm_bank_free(&t, 2), R + 2 * bu + 2 * wt);
	/* each write holds its slot until it completes */
	assert_int_equal(t.qdata.slot_free[2], R + 2 * bu + wt);
	assert_int_equal(t.qdata.slot_free[3], R + 2 * bu + 2 * wt);
	/* banks untouched stay idle */
	for (unsigned b = 3; b < 8; b++)
		assert_int_equal(tm_bank_free(&t, b), 0);
}

/* tWTR: a read after a write on the same bank waits tWTR after the write. */
static void test_wtr(void **state)
{
	(void)state;
	struct timing t;
	model(&t, 64, 16, 8);
	const uint64_t wt = t.cwd + t.wr, rd = t.rcd + t.cl + t.burst;
	write_by(&t, 0, 0, R);
	/* bank 0: after the write completes, plus tWTR */
	assert_int_equal(tm_read(&t, 0, 0, R), R + wt + t.wtr + rd);
	/* bank 1 (no write): at once */
	assert_int_equal(tm_read(&t, 0, 1, R), R + rd);
	/* read after read on bank 0: no tWTR */
	uint64_t free0 = tm_bank_free(&t, 0);
	assert_int_equal(tm_read(&t, 0, 0, R), free0 + rd);

	/* a read issued after the write's end but within tWTR is still delayed */
	struct timing u;
	model(&u, 64, 16, 8);
	write_by(&u, 0, 5, R);
	uint64_t end = R + wt;
	assert_true(u.wtr > 1);
	assert_int_equal(tm_read(&u, 0, 5, end + 1), end + u.wtr + rd);
	/* and one issued after end + tWTR is not */
	struct timing v;
	model(&v, 64, 16, 8);
	write_by(&v, 0, 5, R);
	assert_int_equal(tm_read(&v, 0, 5, end + v.wtr + 7), end + v.wtr + 7 + rd);
}

/* The data bus: two writes at once to two idle banks -- the second's data
 * crosses the bus after the first's, one burst later; a write whose bank is
 * free waits for the bus, and one in a gap of the bus's bookings goes
 * there. */
static void test_bus_writes(void **state)
{
	(void)state;
	struct timing t;
	model(&t, 64, 16, 8);
	const uint64_t wt = t.cwd + t.wr, bu = t.burst, at = R + 10 * bu;
	assert_true(bu > 0);
	assert_int_equal(write_by(&t, 0, 3, at), at);
	assert_int_equal(write_by(&t, 0, 6, at), at + bu);
	assert_int_equal(tm_bank_free(&t, 6), at + bu + wt);
	/* the bus is free again from at + 2 bu: a write ready then goes at once */
	assert_int_equal(write_by(&t, 0, 1, at + 2 * bu), at + 2 * bu);
	/* another core's write earlier in modeled time (host order is not
	 * modeled order) takes the bus's gap before them */
	assert_int_equal(write_by(&t, 1, 2, at - bu), at - bu);
	/* and one that would overlap a burst goes after the bursts it meets */
	assert_int_equal(write_by(&t, 1, 4, at - bu / 2), at + 3 * bu);
}

/* A read from an idle bank ends tRCD + tCL + burst after it starts; one
 * whose burst would meet another's waits until its burst fits. */
static void test_bus_reads(void **state)
{
	(void)state;
	struct timing t;
	model(&t, 64, 16, 8);
	const uint64_t xfer = t.rcd + t.cl, bu = t.burst;
	assert_int_equal(tm_read(&t, 0, 2, R), R + xfer + bu);
	/* bank 2 holds the row through the burst */
	assert_int_equal(tm_bank_free(&t, 2), R + xfer + bu);
	/* a read of another bank at R: its burst would meet the first's */
	assert_int_equal(tm_read(&t, 0, 5, R), R + xfer + 2 * bu);
	/* a write whose burst at R + xfer + 2 bu would meet a read's */
	struct timing u;
	model(&u, 64, 16, 8);
	assert_int_equal(tm_read(&u, 0, 0, R), R + xfer + bu);
	assert_int_equal(write_by(&u, 0, 1, R + xfer), R + xfer + bu);
	/* a read whose bank is free but whose burst meets a write's moves
	 * until the burst fits: start at R + bu, data after the write's */
	struct timing v;
	model(&v, 64, 16, 8);
	write_by(&v, 0, 0, R + xfer);
	assert_int_equal(tm_read(&v, 0, 1, R), R + bu + xfer + bu);
}

/* The co-located designs' 72-byte line (64 B data + 8 B counter) on their
 * 72-bit bus takes as many beats, so as long, as a 64-byte line on the
 * others' 64-bit bus (SCA 3.2.1, Table 2); with timing=off the bus costs
 * nothing. */
static void test_bus_width(void **state)
{
	(void)state;
	struct timing narrow, wide;
	tm_init(&narrow, sca(), 64, 16, 8, 1, 0, 64);
	tm_init(&wide, sca(), 64, 16, 8, 1, 0, 72);
	assert_int_equal(narrow.bus_bits, 64);
	assert_int_equal(wide.bus_bits, 72);
	assert_int_equal(wide.burst, narrow.burst);
	assert_int_equal(narrow.burst, ps_of(sca()->line_beats / 2.0 * 1000.0 / sca()->bus_mhz));
	assert_int_equal(write_by(&wide, 0, 0, R), R);
	assert_int_equal(write_by(&wide, 0, 1, R), R + narrow.burst);
	/* the supermem profile's bus is SCA's */
	struct timing sm;
	tm_init(&sm, profile_find("supermem"), 32, 32, 8, 1, 0, 64);
	assert_int_equal(sm.burst, narrow.burst);
	/* timing off */
	struct timing off;
	model(&off, 64, 16, 8);
	tm_off(&off);
	assert_int_equal(off.burst, 0);
	assert_int_equal(write_by(&off, 0, 0, R), 0); /* nothing booked */
	assert_int_equal(tm_read(&off, 0, 1, R), R);
}

/* tFAW: a fifth activation waits until tFAW after the first of the last four. */
static void test_faw(void **state)
{
	(void)state;
	struct timing t;
	model(&t, 64, 16, 8);
	const uint64_t wt = t.cwd + t.wr, bu = t.burst;
	/* (the bus spaces them a burst apart, 4 bursts within tFAW) */
	assert_true(4 * bu < t.faw);
	for (unsigned b = 0; b < 4; b++) {
		write_by(&t, 0, b, R);
		assert_int_equal(tm_bank_free(&t, b), R + b * bu + wt);
	}
	/* the fifth, on an idle bank, is accepted at once but starts at R + tFAW */
	write_by(&t, 0, 4, R);
	assert_int_equal(tm_bank_free(&t, 4), R + t.faw + wt);
	/* a read is an activation too */
	struct timing r;
	model(&r, 64, 16, 8);
	for (unsigned b = 0; b < 4; b++)
		write_by(&r, 0, b, R);
	assert_int_equal(tm_read(&r, 0, 5, R), R + r.faw + r.rcd + r.cl + bu);

	/* control: four activations in a window do not wait, and a fifth at
	 * the window's end does not either; nor a sixth at the end of the
	 * window that starts with the second */
	struct timing u;
	model(&u, 64, 16, 8);
	for (unsigned b = 0; b < 4; b++)
		write_by(&u, 0, b, R);
	write_by(&u, 0, 4, R + u.faw);
	assert_int_equal(tm_bank_free(&u, 4), R + u.faw + wt);
	assert_int_equal(tm_read(&u, 0, 5, R + bu + u.faw), R + bu + u.faw + u.rcd + u.cl + bu);
}

/*
 * Queue entries free when their writes complete.  With three entries: A and
 * B to bank 0 and C to bank 1, all at R, so B completes after C (at
 * R + burst + wt: its burst follows A's); D at R + wt takes A's entry.  A
 * write when C completes then waits for B's entry in FIFO order (the
 * default); with wpq_order=any it takes C's.
 */
static void queue_order_run(struct timing *t, int any)
{
	model(t, 3, 16, 8);
	t->qdata.any = t->qctr.any = any;
	const uint64_t wt = t->cwd + t->wr;
	write_by(t, 0, 0, R);
	write_by(t, 0, 0, R);
	write_by(t, 0, 1, R);
	write_by(t, 0, 2, R + wt);
}

static void test_queue_order(void **state)
{
	(void)state;
	struct timing t;
	int stalled = -1;
	queue_order_run(&t, 0);
	const uint64_t wt = t.cwd + t.wr, bu = t.burst, c_done = R + bu + wt;
	assert_int_equal(tm_write(&t, 0, &t.qdata, 3, 0, c_done, &stalled), R + 2 * wt);
	assert_int_equal(stalled, 1);
	queue_order_run(&t, 1);
	stalled = -1;
	assert_int_equal(tm_write(&t, 0, &t.qdata, 3, 0, c_done, &stalled), c_done);
	assert_int_equal(stalled, 0);
	/* its burst after D's, which follows B's from R + wt */
	assert_int_equal(tm_bank_free(&t, 3), R + 2 * bu + 2 * wt);
	/* the batched functions choose the same way */
	const uint16_t cb = 4, db = 5;
	const uint64_t ca = 7 | TM_CTR_ADDR, da = 8, ready = c_done;
	uint64_t stalls = 0;
	queue_order_run(&t, 1);
	assert_int_equal(tm_write_pairs_any(&t, 0, &t.qctr, &t.qdata, &cb, &ca, &ready, &db, &da,
					    &ready, 1, &stalls),
			 c_done);
	assert_int_equal(stalls, 0);
	queue_order_run(&t, 1);
	assert_int_equal(tm_write_n_any(&t, 0, &t.qdata, &db, &da, &ready, 1, &stalls), c_done);
	assert_int_equal(stalls, 0);
	queue_order_run(&t, 0);
	assert_int_equal(tm_write_n(&t, 0, &t.qdata, &db, &da, &ready, 1, &stalls), R + 2 * wt);
	assert_int_equal(stalls, 1);
}

/*
 * wpq_issue: a write to an idle bank goes at once where writes go as soon
 * as their bank is free, but waits for the core's write before it to reach
 * its bank where the queue issues in order; another core's does not wait.
 */
static void test_inorder_issue(void **state)
{
	(void)state;
	for (int inorder = 0; inorder <= 1; inorder++) {
		struct timing t;
		model(&t, 64, 16, 8);
		t.qdata.inorder = inorder;
		const uint64_t wt = t.cwd + t.wr, bu = t.burst;
		write_by(&t, 0, 0, R);
		write_by(&t, 0, 0, R); /* reaches bank 0 at R + wt */
		write_by(&t, 0, 1, R); /* bank 1 is idle: the bus is free after R + bu */
		assert_int_equal(start_of(&t.qdata), inorder ? R + wt + bu : R + bu);
		write_by(&t, 1, 2, R); /* core 1's first: the first burst free from R */
		assert_int_equal(start_of(&t.qdata), inorder ? R + bu : R + 2 * bu);
	}
	/* wpq_window=2: a write waits for the core's write two before it, not
	 * for the one just before */
	struct timing t;
	model(&t, 64, 16, 8);
	t.qdata.inorder = 1;
	t.qdata.window = 2;
	const uint64_t wt = t.cwd + t.wr, bu = t.burst;
	write_by(&t, 0, 0, R);
	write_by(&t, 0, 0, R); /* reaches bank 0 at R + wt */
	write_by(&t, 0, 1, R); /* bank 1 is idle; the write two before started at R */
	assert_int_equal(start_of(&t.qdata), R + bu);
	write_by(&t, 0, 2, R); /* two before is the one at R + wt (its burst first) */
	assert_int_equal(start_of(&t.qdata), R + wt + bu);
	write_by(&t, 1, 3, R); /* each core has its own window: core 1's */
	assert_int_equal(start_of(&t.qdata), R + 2 * bu);
	write_by(&t, 1, 4, R); /* (shared, this one would wait for core 0's at R + wt) */
	assert_int_equal(start_of(&t.qdata), R + 3 * bu);
}

/* core_banks: core i's bank b is bank (b + i) mod banks, reads included. */
static void test_core_banks(void **state)
{
	(void)state;
	struct timing t;
	model(&t, 64, 16, 8);
	t.core_banks = 1;
	const uint64_t wt = t.cwd + t.wr;
	write_by(&t, 3, 6, R);
	assert_int_equal(tm_bank_free(&t, 1), R + wt);
	assert_int_equal(tm_bank_free(&t, 6), 0);
	/* core 2's bank 7 is bank 1 too: the read waits for the write, + tWTR */
	assert_int_equal(tm_read(&t, 2, 7, R), R + wt + t.wtr + t.rcd + t.cl + t.burst);
	assert_int_equal(tm_bank_free(&t, 7), 0);
}

/* A request earlier in modeled time than bookings already made (a lagging
 * core's, run later in host order) takes the gap before them, not the end
 * of the latest booking; one that does not fit the gap goes after them. */
static void test_calendar_backfill(void **state)
{
	(void)state;
	struct timing t;
	model(&t, 64, 16, 8);
	const uint64_t wt = t.cwd + t.wr, later = R + 100 * wt;
	assert_int_equal(write_by(&t, 1, 0, later), later); /* the leading core */
	assert_int_equal(write_by(&t, 0, 0, R), R); /* the lagging core: the bank is idle then */
	assert_int_equal(write_by(&t, 0, 0, R), R + wt); /* right after it */
	/* a write that would overlap the leading core's goes after it */
	assert_int_equal(write_by(&t, 0, 0, later - wt / 2), later + wt);
	assert_int_equal(tm_bank_free(&t, 0), later + 2 * wt);
	/* a read in the gap, tWTR after the write before it */
	assert_int_equal(tm_read(&t, 0, 0, R + 10), R + 2 * wt + t.wtr + t.rcd + t.cl + t.burst);
	/* the same requests in time order book the same bank time */
	struct timing u;
	model(&u, 64, 16, 8);
	write_by(&u, 0, 0, R);
	write_by(&u, 0, 0, R);
	assert_int_equal(tm_read(&u, 0, 0, R + 10), R + 2 * wt + u.wtr + u.rcd + u.cl + u.burst);
}

/* tFAW counts each core's own last four activations: another core's do not
 * hold back a request, a core's own fifth within tFAW of them waits tFAW
 * after the earliest, one earlier than all four does not wait, and
 * t_faw = 0 imposes nothing. */
static void test_faw_per_core(void **state)
{
	(void)state;
	struct timing t;
	model(&t, 64, 16, 8);
	const uint64_t later = R + 100 * t.faw, bu = t.burst;
	for (unsigned b = 0; b < 4; b++) /* a burst apart on the bus */
		assert_int_equal(write_by(&t, 1, b, later), later + b * bu);
	assert_int_equal(write_by(&t, 0, 4, R), R);
	assert_int_equal(write_by(&t, 1, 5, later), later + t.faw);
	/* the four are taken in time order: a core's request earlier than its
	 * own four (its bank idle while theirs had backlogs) is not held back */
	struct timing v;
	model(&v, 64, 16, 8);
	for (unsigned b = 0; b < 4; b++)
		assert_int_equal(write_by(&v, 0, b, later + b * 2 * t.faw), later + b * 2 * t.faw);
	assert_int_equal(write_by(&v, 0, 4, R), R);
	/* ... but one among them is: the four latest with it within tFAW */
	struct timing w;
	model(&w, 64, 16, 8);
	for (unsigned b = 0; b < 4; b++)
		write_by(&w, 0, b, later + b);
	assert_int_equal(write_by(&w, 0, 4, later + 1), later + w.faw);

	struct timing u;
	model(&u, 64, 16, 8);
	u.faw = 0;
	for (unsigned b = 0; b < 4; b++)
		assert_int_equal(write_by(&u, 0, b, later), later + b * bu);
	/* (a check of "at < fourth-last + tFAW" held it at the fourth-last) */
	assert_int_equal(write_by(&u, 0, 4, R), R);
	for (unsigned b = 5; b < 8; b++)
		assert_int_equal(write_by(&u, 0, b, later), later + (b - 1) * bu);
}

/* A core's first activations pass tFAW even at a modeled time close to
 * 2^64 ps (spm_model_work takes a core there): a sentinel of UINT64_MAX for
 * "none yet" sent such a write to tFAW after it, wrapped round to ~30 ns. */
static void test_faw_near_saturation(void **state)
{
	(void)state;
	struct timing t;
	model(&t, 64, 16, 8);
	const uint64_t late = UINT64_MAX - 615;
	assert_int_equal(write_by(&t, 5, 0, late), late);
	assert_int_equal(write_by(&t, 5, 1, late), late);
	/* a core that starts at 0 is not held behind them */
	assert_int_equal(write_by(&t, 0, 2, R), R);
}

/* A calendar that forgets its oldest intervals keeps the bank busy until
 * the end of what it forgot, and never books two writes at once. */
static void test_calendar_overflow(void **state)
{
	(void)state;
	struct timing t;
	model(&t, 256, 16, 8);
	const uint64_t wt = t.cwd + t.wr;
	/* 3 * TM_CAL writes with gaps between them (no merging), in time order */
	for (unsigned i = 0; i < 3 * TM_CAL; i++) {
		int st;
		tm_write(&t, 0, &t.qdata, 0, 0, R + (uint64_t)i * 2 * wt, &st);
		assert_int_equal(start_of(&t.qdata), R + (uint64_t)i * 2 * wt);
	}
	assert_true(t.bank[0].n <= TM_CAL);
	assert_true(t.bank[0].floor > R);
	/* a request before what is remembered goes no earlier than the floor */
	int st;
	tm_write(&t, 0, &t.qdata, 0, 0, R, &st);
	uint64_t s = start_of(&t.qdata);
	assert_true(s >= t.bank[0].floor);
	/* and where it goes, it overlaps no other booking: one interval holds
	 * it (its own, or one it extends), the rest are disjoint from it */
	unsigned holding = 0;
	for (unsigned k = 0; k < t.bank[0].n; k++) {
		const uint64_t b = t.bank[0].start[k], e = t.bank[0].end[k];
		if (b <= s && s + wt <= e)
			holding++;
		else
			assert_true(s + wt <= b || s >= e);
	}
	assert_int_equal(holding, 1);
}

/* The AES engine is pipelined: pads issued together finish aes_issue apart. */
static void test_aes_pipeline(void **state)
{
	(void)state;
	struct timing t;
	model(&t, 64, 16, 8);
	uint64_t a = tm_aes(&t, R), b = tm_aes(&t, R), c = tm_aes(&t, R);
	assert_int_equal(a, R + t.aes);
	assert_int_equal(b - a, t.aes_issue);
	assert_int_equal(c - b, t.aes_issue);
	/* overlapped: the second finishes before a serial engine would */
	assert_true(b < a + t.aes);
	/* a pad after the engine is free again waits only its latency */
	uint64_t late = R + 10 * t.aes;
	assert_int_equal(tm_aes(&t, late), late + t.aes);
	/* a pad requested before a later booking takes a free slot before it:
	 * the engine serves requests by their time, not their booking order */
	uint64_t early = R + 5 * t.aes;
	assert_int_equal(tm_aes(&t, early), early + t.aes);
	/* but not one that overlaps a booked slot: it goes after it */
	assert_int_equal(tm_aes(&t, late + t.aes_issue / 2), late + t.aes_issue + t.aes);
	assert_int_equal(t.aes_ops, 6);
	assert_int_equal(t.aes_wait, (t.aes_issue - t.aes_issue / 2) + 3 * t.aes_issue);
}

/* tm_makespan is the latest core clock; tm_reset zeroes the clocks. */
static void test_makespan(void **state)
{
	(void)state;
	struct timing t;
	model(&t, 64, 16, 8);
	assert_int_equal(tm_makespan(&t), 0);
	t.clock[3] = 500;
	assert_int_equal(tm_makespan(&t), 500);
	t.clock[EMU_MAX_CORES - 1] = 7000;
	t.clock[0] = 6999;
	assert_int_equal(tm_makespan(&t), 7000);
	tm_reset(&t);
	assert_int_equal(tm_makespan(&t), 0);
	/* tm_reset keeps the parameters */
	assert_int_equal(t.cwd, ps_of(sca()->t_cwd));
	assert_int_equal(t.qdata.cap, 64);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_init_from_profile),
		cmocka_unit_test(test_deterministic),
		cmocka_unit_test(test_full_queue_stalls),
		cmocka_unit_test(test_bank_parallelism),
		cmocka_unit_test(test_wtr),
		cmocka_unit_test(test_bus_writes),
		cmocka_unit_test(test_bus_reads),
		cmocka_unit_test(test_bus_width),
		cmocka_unit_test(test_faw),
		cmocka_unit_test(test_queue_order),
		cmocka_unit_test(test_core_banks),
		cmocka_unit_test(test_inorder_issue),
		cmocka_unit_test(test_calendar_backfill),
		cmocka_unit_test(test_faw_per_core),
		cmocka_unit_test(test_faw_near_saturation),
		cmocka_unit_test(test_calendar_overflow),
		cmocka_unit_test(test_aes_pipeline),
		cmocka_unit_test(test_makespan),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
