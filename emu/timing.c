/*
 * timing.c -- the timing model: per-core modeled clocks and the shared
 * resources of the memory controller (banks, the channel's data bus, row
 * activations, write queue slots, the AES engine), with the PCM timings of
 * SCA Table 2 (tRCD/tCL/tCWD/tFAW/tWTR/tWR).  Times are picoseconds.
 * Deterministic: the same sequence of requests gives the same times.
 *
 * Modeled cores run one operation at a time in host order (spm-bench), so a
 * core's request may come after requests of other cores that are later in
 * modeled time.  Banks are therefore calendars (struct tm_cal): a request
 * takes the earliest free gap at or after its time, not the end of the
 * latest booking, which would drag a lagging core to the leading core's
 * clock.  tFAW is kept per core, over its last four activations in time
 * order (faw_check).  Queue entries are a ring by default (a write waits for
 * the one cap writes before it to complete); wpq_order=any lets a write take
 * any entry whose write has completed (take_slot): SCA's 1-8 core times move
 * by under 1 %, FCA's by up to 9 % (its pairs stop waiting on an unrelated
 * bank), for up to ~1.8x the instructions per run.  With core_banks (each
 * modeled core a program with its own bank, SuperMem 5.1.2) the ring would
 * make one program's write wait for another's in another bank: the SuperMem
 * multi-program figure uses any.  With inorder (the supermem profile) a
 * core's write reaches its bank no earlier than the core's write before it
 * in the queue did (the queue issues in order; see the profile in
 * design.c), or with wpq_window=N its write N before (a scheduler that
 * picks among the oldest N); otherwise as soon as its bank is free.  The AES engine is a
 * busy-until pipeline (ignoring it altogether moves results by under 1 %).
 *
 * The data bus (one channel) is a calendar too (bus_find): every line
 * crosses it in one burst (burst: line_beats beats of a DDR bus, two per
 * cycle).  A write's data crosses at the start of its bank's write, so a
 * write starts when both its bank is free for tCWD + tWR and the bus for
 * the burst; a read's data crosses after tRCD + tCL, and the read ends with
 * its burst.  A bank is booked for the whole of a read, burst included.
 *
 * The per-write path is inlined into the controller and kept short: a write
 * that follows its bank's latest booking is appended (book_write), where
 * tFAW and the bus let it start (settle, out of line, if either moves it);
 * anything else goes out of line (book_any).  The inlined copies serve FIFO
 * queues without inorder or core_banks (plain_fifo), other queues have
 * out-of-line copies.  These shortcuts give every modeled time bit for bit
 * as the general path would.
 */
#include <string.h>

#include "emu_internal.h"

static uint64_t ps(double ns)
{
	return (uint64_t)(ns * 1000.0 + 0.5);
}

static uint64_t max64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* tm_init -- the model of profile p with the given queue depths and banks
 * (bank_hash: permute banks by the higher address bits, see ctrl bank_of);
 * line_bytes: what one media line write moves (64, or 72 where the counter
 * travels with the data). */
void tm_init(struct timing *t, const struct profile *p, unsigned wpq_data,
	     unsigned wpq_ctr, unsigned banks, unsigned bank_lines, int bank_hash,
	     unsigned line_bytes)
{
	memset(t, 0, sizeof(*t));
	t->rcd = ps(p->t_rcd);
	t->cl = ps(p->t_cl);
	t->cwd = ps(p->t_cwd);
	t->faw = ps(p->t_faw);
	t->wtr = ps(p->t_wtr);
	t->wr = ps(p->t_wr);
	t->aes = ps(p->aes_ns);
	t->busy = t->cwd + t->wr;
	/* SCA Table 2: a DDR3 bus at 533 MHz moves two beats per cycle, a line
	 * in line_beats (8) beats: 4 cycles, 7.5 ns.  The bus is as wide as a
	 * line over line_beats: 64 bits, 72 for a co-located line of data and
	 * counter (SCA 3.2.1), which so takes no longer to move */
	t->burst = ps(p->line_beats / 2.0 * 1000.0 / p->bus_mhz);
	if (t->burst < 2) /* (bus_inv's division) */
		t->burst = 2;
	t->bus_bits = line_bytes * 8 / p->line_beats;
	t->bus_inv = UINT64_MAX / t->burst + 1; /* ceil(2^64 / burst) */
	t->bus_span = 2 * t->burst - 2;
	t->bus_top = UINT64_MAX - 2 * t->burst;
	const uint64_t read = t->rcd + t->cl + t->burst;
	t->min_req = read < t->busy ? read : t->busy;
	t->aes_issue = ps(p->aes_issue_ns);
	t->cc_hit = ps(p->cc_hit_ns);
	/* profiles that do not give them: HMAC 80 cycles, the dirty address
	 * queue 32 (cc-NVM 5) */
	t->mac = ps(p->mac_ns > 0 ? p->mac_ns : 80.0 / p->ghz);
	t->daq = ps(p->daq_ns > 0 ? p->daq_ns : 32.0 / p->ghz);
	t->crc = ps(p->crc_ns > 0 ? p->crc_ns : 15.0);
	t->cmp = ps(p->cmp_ns > 0 ? p->cmp_ns : 1.0 / p->ghz);
	t->issue = ps(p->issue_ns);
	t->banks = banks;
	t->bank_mask = (banks & (banks - 1)) == 0 ? banks - 1 : 0;
	t->bank_bits = t->bank_mask ? (unsigned)__builtin_ctz(banks) : 0;
	t->bank_fold = 0;
	if (bank_hash && t->bank_bits)
		for (unsigned f = t->bank_bits; f < 64; f *= 2)
			t->bank_fold = f; /* shifts fold, fold/2, ... bank_bits */
	t->bank_lines = bank_lines ? bank_lines : 1;
	t->bank_shift = (t->bank_lines & (t->bank_lines - 1)) ? -1
							   : __builtin_ctz(t->bank_lines);
	t->bank_fold3 = t->bank_shift >= 0 && t->bank_fold && t->bank_bits == 3;
	t->wpq_shared = p->wpq_shared;
	t->qdata.cap = wpq_data;
	t->qctr.cap = wpq_ctr;
	t->qdata.window = t->qctr.window = 1; /* wpq_window's default: in order */
	tm_reset(t);
}

/* tm_off -- no memory model (timing=off): every request is served at once
 * and every latency is 0, so modeled time is only the core work charged
 * (spm_model_work); nothing waits in a queue, so nothing coalesces. */
void tm_off(struct timing *t)
{
	t->off = 1;
	t->rcd = t->cl = t->cwd = t->faw = t->wtr = t->wr = 0;
	t->aes = t->aes_issue = t->cc_hit = t->issue = t->mac = t->daq = 0;
	t->crc = t->cmp = 0;
	t->min_req = t->busy = t->burst = 0;
}

/* tm_reset -- every clock and resource back to time 0. */
void tm_reset(struct timing *t)
{
	for (unsigned b = 0; b < TM_MAX_BANKS; b++)
		t->bank[b].n = 0, t->bank[b].floor = 0;
	memset(t->bus, 0, sizeof(t->bus));
	memset(t->act, 0, sizeof(t->act)); /* 0: no activation (faw_check) */
	memset(t->act_next, 0, sizeof(t->act_next));
	memset(t->clock, 0, sizeof(t->clock));
	memset(t->pending, 0, sizeof(t->pending));
	memset(t->qdata.slot_free, 0, sizeof(t->qdata.slot_free));
	memset(t->qctr.slot_free, 0, sizeof(t->qctr.slot_free));
	memset(t->qdata.slot_start, 0, sizeof(t->qdata.slot_start));
	memset(t->qdata.issue_win, 0, sizeof(t->qdata.issue_win));
	memset(t->qctr.issue_win, 0, sizeof(t->qctr.issue_win));
	memset(t->qdata.win_pos, 0, sizeof(t->qdata.win_pos));
	memset(t->qctr.win_pos, 0, sizeof(t->qctr.win_pos));
	memset(t->qctr.slot_start, 0, sizeof(t->qctr.slot_start));
	memset(&t->aes_cal, 0, sizeof(t->aes_cal));
	t->aes_ops = t->aes_wait = 0;
	t->wlat = t->wpre = t->wn = 0;
	t->qdata.pos = t->qctr.pos = 0;
}

/* latest -- the largest of v[0..n-1] (0 if none): when n requests ready at
 * v[] are all accepted where timing is off. */
static uint64_t latest(const uint64_t *v, unsigned n)
{
	uint64_t m = 0;
	for (unsigned i = 0; i < n; i++)
		m = max64(m, v[i]);
	return m;
}


/* ---- calendars ---- */

/* cal_make_room -- a full calendar forgets its older half: before the end
 * of what it forgot the resource counts as busy from now on. */
static inline void cal_make_room(struct tm_cal *c)
{
	if (c->n < TM_CAL)
		return;
	const unsigned h = TM_CAL / 2;
	c->floor = max64(c->floor, c->end[h - 1]);
	memmove(c->start, c->start + h, (TM_CAL - h) * sizeof(c->start[0]));
	memmove(c->end, c->end + h, (TM_CAL - h) * sizeof(c->end[0]));
	memmove(c->write, c->write + h, (TM_CAL - h) * sizeof(c->write[0]));
	c->n -= h;
}

#define HOT static inline __attribute__((always_inline)) /* the per-write path */

/*
 * cal_after_latest -- a request at at (not before the floor) holding the
 * resource for len cannot end before the latest booking starts: it goes
 * after it, at *start.  wtr: the gap a read keeps after a write (0 for
 * writes).  0: a gap before the latest booking may hold it (cal_find).
 */
HOT int cal_after_latest(const struct tm_cal *c, uint64_t at, uint64_t len, uint64_t wtr,
			 uint64_t *start)
{
	const unsigned n = c->n;
	if (n > 0 && at + len <= c->start[n - 1])
		return 0;
	*start = n ? max64(at, c->end[n - 1] + (c->write[n - 1] ? wtr : 0)) : at;
	return 1;
}

/*
 * cal_find -- the earliest start at or after at of a request that holds the
 * resource for len; *pos is where it goes in the calendar.  wtr: as
 * cal_after_latest.  A request that cannot end before the latest booking
 * starts goes after it at once; others search.
 */
HOT uint64_t cal_find(const struct tm_cal *c, uint64_t at, uint64_t len, uint64_t wtr,
		      unsigned *pos)
{
	at = max64(at, c->floor);
	const unsigned n = c->n;
	uint64_t after;
	if (cal_after_latest(c, at, len, wtr, &after)) {
		*pos = n;
		return after;
	}
	unsigned k = n - 1; /* back to the first interval that ends after at */
	while (k > 0 && c->end[k - 1] > at)
		k--;
	if (k > 0 && wtr && c->write[k - 1])
		at = max64(at, c->end[k - 1] + wtr);
	for (; k < n; k++) {
		if (at + len <= c->start[k])
			break;
		at = max64(at, c->end[k] + (c->write[k] ? wtr : 0));
	}
	*pos = k;
	return at;
}

/*
 * cal_insert -- book [start, end) at position pos (from cal_find).  A gap
 * shorter than the shortest request (min) can hold nothing: the booking
 * joins the interval before and after it across such gaps (the joined
 * interval is a write, for tWTR, if its last part is).
 */
HOT void cal_insert(struct tm_cal *c, unsigned pos, uint64_t start, uint64_t end, int write,
		    uint64_t min)
{
	if (pos < c->n && c->start[pos] - end < min) { /* join the next */
		end = c->end[pos];
		if (pos > 0 && start - c->end[pos - 1] < min) { /* and the one before */
			c->end[pos - 1] = end;
			c->write[pos - 1] = c->write[pos];
			const unsigned tail = c->n - pos - 1;
			memmove(c->start + pos, c->start + pos + 1, tail * sizeof(uint64_t));
			memmove(c->end + pos, c->end + pos + 1, tail * sizeof(uint64_t));
			memmove(c->write + pos, c->write + pos + 1, tail * sizeof(c->write[0]));
			c->n--;
			return;
		}
		c->start[pos] = start;
		return;
	}
	if (pos > 0 && start - c->end[pos - 1] < min) { /* join the one before */
		c->end[pos - 1] = end;
		c->write[pos - 1] = write != 0;
		return;
	}
	if (pos < c->n) {
		const unsigned tail = c->n - pos;
		memmove(c->start + pos + 1, c->start + pos, tail * sizeof(uint64_t));
		memmove(c->end + pos + 1, c->end + pos, tail * sizeof(uint64_t));
		memmove(c->write + pos + 1, c->write + pos, tail * sizeof(c->write[0]));
	}
	c->write[pos] = write != 0;
	c->start[pos] = start;
	c->end[pos] = end;
	c->n++;
}

/* cal_append -- book [start, end) after every booking (cal_insert at pos n;
 * n < TM_CAL: cal_make_room has run). */
HOT void cal_append(struct tm_cal *c, uint64_t start, uint64_t end, int write, uint64_t min)
{
	const unsigned n = c->n;
	if (n > 0 && start - c->end[n - 1] < min) { /* join the latest */
		c->end[n - 1] = end;
		c->write[n - 1] = write != 0;
		return;
	}
	c->write[n] = write != 0;
	c->start[n] = start;
	c->end[n] = end;
	c->n = n + 1;
}

/* ---- the AES engine ---- */

/*
 * tm_aes -- the engine is pipelined: latency aes, a line enters every
 * aes_issue.  Its entry slots are a calendar, as a bank's: a pad requested
 * at ready takes the earliest free slot at or after it.  (A busy-until
 * time, as it was, served pads in the order they were booked, not the
 * order they were requested: the cores run one operation at a time in host
 * order, so a core behind in modeled time waited for the pads of a core
 * ahead of it -- hundreds of ns a pad at 4 cores -- and a background
 * update booked at a block's arrival held back earlier commits.)
 */
uint64_t tm_aes(struct timing *t, uint64_t ready)
{
	if (t->off)
		return ready;
	struct tm_cal *c = &t->aes_cal;
	cal_make_room(c);
	unsigned pos;
	const uint64_t start = cal_find(c, ready, t->aes_issue, 0, &pos);
	cal_insert(c, pos, start, start + t->aes_issue, 0, t->aes_issue);
	t->aes_ops++;
	t->aes_wait += start - ready; /* queueing for the engine (aes.queue_ns) */
	return start + t->aes;
}

/* ---- the data bus ---- */

/*
 * Every booking of the bus lasts one burst, so the bus keeps no intervals
 * but the end of each burst, in the slot of the bucket of time it ends in.
 * A bucket is bus_bucket's, burst - 1 or burst ps long: two bursts never
 * end in one bucket, and a burst that meets [at, at + burst) ends in
 * [at + 1, at + 2 burst - 1], at most three buckets.  Slots are a ring of
 * TM_BUS_SLOTS buckets (61 us at 533 MHz), its first two repeated after
 * its last (so three slots are read without wrapping): a burst a ring
 * before the one that takes its slot is forgotten, as a full calendar
 * forgets its older half, and one a ring behind the slot's is not kept.
 * Times within two bursts of 2^64 ps find the bus free and book nothing.
 * The bus as a calendar of intervals (struct tm_cal) gave the same modeled
 * times for three times the added instructions per run (doc/tried.md).
 */

/* bus_bucket -- the bucket of time x: x * bus_inv / 2^64, one multiply
 * (bus_inv = ceil(2^64 / burst): buckets burst - 1 or burst ps long). */
static inline unsigned bus_bucket(const struct timing *t, uint64_t x)
{
	return (unsigned)(((unsigned __int128)x * t->bus_inv) >> 64) & (TM_BUS_SLOTS - 1);
}

/* bus_clash -- the end of the latest booked burst that meets [at, at +
 * burst); 0 if the bus is free for it. */
HOT uint64_t bus_clash(const struct timing *t, uint64_t at)
{
	if (__builtin_expect(at > t->bus_top, 0))
		return 0;
	/* an end e meets it if e - lo <= 2 burst - 2 (unsigned: 0, none, does not) */
	const uint64_t lo = at + 1, span = t->bus_span, *s = t->bus + bus_bucket(t, lo);
	uint64_t clash = 0; /* in time order: the last is the latest */
	clash = s[0] - lo <= span ? s[0] : clash;
	clash = s[1] - lo <= span ? s[1] : clash;
	clash = s[2] - lo <= span ? s[2] : clash;
	return clash;
}

/* bus_find -- the earliest start at or after at of a burst that meets no
 * booked burst. */
static inline uint64_t bus_find(const struct timing *t, uint64_t at)
{
	for (uint64_t end; (end = bus_clash(t, at)) != 0;)
		at = end;
	return at;
}

/* bus_book -- book the burst at at (bus_find's): the slot of its end's
 * bucket, unless the slot holds a later burst (a ring apart). */
HOT void bus_book(struct timing *t, uint64_t at)
{
	if (__builtin_expect(at > t->bus_top, 0))
		return;
	const uint64_t end = at + t->burst;
	const unsigned k = bus_bucket(t, end);
	if (t->bus[k] < end) {
		t->bus[k] = end;
		if (k < 2) /* its copy after the ring */
			t->bus[TM_BUS_SLOTS + k] = end;
	}
}

/* ---- row activations (tFAW) ---- */

/*
 * faw_check -- the earliest activation of core's at or after at such that
 * it and that core's last four activations (act, in any order; 0: none
 * yet) do not all fall within one tFAW: if they would, at waits until tFAW
 * after the earliest of the four.  The four are taken in time order, so a request
 * whose bank was idle while others had backlogs is not held behind later
 * activations; one earlier than all four is checked against them only
 * (with the profiles' tFAW this is within a point of an exact check of
 * every activation, which cost 18-23 % more instructions per run; with a
 * tFAW of microseconds it lets such requests through).  Each core's own
 * activations are counted: one record of all cores in host order held a
 * lagging core's requests behind a leading core's later ones.  Across
 * cores tFAW is not enforced (eight banks at tCWD + tWR = 313 ns allow at
 * most 1.3 activations per tFAW on average).
 */
static inline uint64_t faw_check(const struct timing *t, unsigned core, uint64_t at)
{
	const uint64_t *a = t->act[core];
	uint64_t lo = a[0] < a[1] ? a[0] : a[1], hi = a[0] ^ a[1] ^ lo;
	uint64_t lo2 = a[2] < a[3] ? a[2] : a[3], hi2 = a[2] ^ a[3] ^ lo2;
	lo = lo < lo2 ? lo : lo2;
	hi = hi > hi2 ? hi : hi2;
	/* fewer than four so far (a slot still empty): it passes.  A
	 * sentinel of UINT64_MAX instead would let the span test below pass
	 * too, but not for at within tFAW of 2^64 ps (spm_model_work can take
	 * a core there), where lo + tFAW wraps */
	if (__builtin_expect(!lo, 0))
		return at;
	/* any span passes where tFAW is 0 */
	uint64_t first = lo < at ? lo : at, last = hi > at ? hi : at;
	return last - first >= t->faw ? at : lo + t->faw;
}

/*
 * faw_record -- core activated a row at time at: it replaces the oldest of
 * the four (times are at least 1, as 0 marks none).  A ring, one 8-byte
 * store: shifting the four down made each record load 16 bytes that two
 * earlier 8-byte stores had written, which the CPU cannot forward from its
 * store buffer; the load then waited for every older store to drain, the
 * write path's non-temporal stores included, and that wait took a quarter
 * of write_lines_locked's time in some builds (doc/tried.md).
 */
static inline void faw_record(struct timing *t, unsigned core, uint64_t at)
{
	const unsigned i = t->act_next[core];
	t->act[core][i] = at ? at : 1;
	t->act_next[core] = (uint8_t)((i + 1) & 3);
}

/*
 * book_any -- bank b for len from the earliest time at or after at when
 * the bank is free, core may activate a row (tFAW) and the bus is free for
 * the request's burst, xfer after its start; returns the start.  Each of
 * the three may move the start later, so they are asked in turn until all
 * agree.  wtr: as cal_find.  Any case: an empty or full calendar, a gap
 * before the latest booking, a request tFAW or the bus moves.
 */
static __attribute__((noinline)) uint64_t book_any(struct timing *t, unsigned core, unsigned b,
						   uint64_t at, uint64_t len, uint64_t wtr,
						   uint64_t xfer, int write)
{
	struct tm_cal *c = &t->bank[b];
	cal_make_room(c);
	unsigned pos;
	for (;;) {
		const uint64_t found = cal_find(c, at, len, wtr, &pos);
		at = faw_check(t, core, found);
		if (at != found)
			continue;
		const uint64_t data = bus_find(t, found + xfer);
		if (data == found + xfer)
			break;
		at = data - xfer;
	}
	cal_insert(c, pos, at, at + len, write, t->min_req);
	bus_book(t, at + xfer);
	faw_record(t, core, at);
	return at;
}

/*
 * settle -- the earliest time at or after at when core may activate a row
 * (tFAW) and the bus is free for a burst, as book_any's loop finds it for
 * a request whose bank is free from at on.
 */
static __attribute__((noinline)) uint64_t settle(const struct timing *t, unsigned core,
						 uint64_t at)
{
	for (;;) { /* faw_check gives the earliest time it passes: it passes there */
		at = faw_check(t, core, at);
		const uint64_t end = bus_clash(t, at);
		if (!end)
			return at;
		at = end;
	}
}

/*
 * book_write -- book_any for a write (its burst at its start), inlined for
 * the common case: the calendar neither empty nor full and the write after
 * its bank's latest booking (cal_after_latest), where any later start is
 * free too; tFAW or the bus may move it (settle, out of line).  Otherwise
 * book_any.
 */
HOT uint64_t book_write(struct timing *t, unsigned core, unsigned b, uint64_t at, uint64_t len)
{
	struct tm_cal *c = &t->bank[b];
	const unsigned n = c->n;
	uint64_t start;
	if (__builtin_expect(n - 1 < TM_CAL - 1, 1) &&
	    cal_after_latest(c, max64(at, c->floor), len, 0, &start)) {
		if (__builtin_expect(faw_check(t, core, start) != start || bus_clash(t, start), 0))
			start = settle(t, core, start);
		cal_append(c, start, start + len, 1, t->min_req);
		bus_book(t, start);
		faw_record(t, core, start);
		return start;
	}
	return book_any(t, core, b, at, len, 0, 0, 1);
}

/*
 * core_bank -- the bank core's request for bank b goes to.  With core_banks
 * each modeled core is a program with its own memory: core i's bank b is
 * bank (b + i) mod banks, counters included (SuperMem 5.1.2: "each program
 * ... the memory footprint size that is equal to the size of a memory bank";
 * with 8 programs all 8 banks are in use, XBank's worst case).
 */
static inline unsigned core_bank(const struct timing *t, unsigned core, unsigned b)
{
	return t->core_banks ? (b + core) % t->banks : b;
}

/*
 * take_slot -- with wpq_order=any, the entry of queue q a write ready at
 * ready takes: an entry frees when its write completes, in whatever order
 * the banks complete them.  Of the entries free by ready, the one freed
 * last (best fit: the earlier ones stay for a lagging core's requests, as
 * the bank calendars do); if none is free, the one that frees first.  A
 * scan of every entry: up to ~1.8x the instructions of a FIFO run.
 */
static __attribute__((noinline)) unsigned take_slot(const struct tm_queue *q, uint64_t ready)
{
	unsigned fit = q->cap, first = 0;
	uint64_t fit_free = 0, first_free = UINT64_MAX;
	for (unsigned i = 0; i < q->cap; i++) {
		const uint64_t f = q->slot_free[i];
		if (f <= ready && (fit == q->cap || f > fit_free))
			fit = i, fit_free = f;
		if (f < first_free)
			first = i, first_free = f;
	}
	return fit < q->cap ? fit : first;
}

/*
 * write_slot -- a write enters queue q when an entry is free (acceptance,
 * the point of durability under ADR) and drains to its bank: the bank is busy
 * tCWD + tWR (busy) from the first gap after acceptance (book_write).  The entry
 * frees when the write completes.  By default entries are taken in FIFO
 * order (a write waits for the one cap writes before it to complete): *pos
 * is q's next (q->pos, held by the caller); with any (q->any), take_slot.
 * any and plain (neither q->inorder nor t->core_banks: the sca profile's
 * defaults) are constants where this is inlined: each caller has a plain
 * FIFO copy without the scan or the tests, the others out of line (one copy
 * with the scan costs the FIFO path ~4 % more instructions per run).
 */
HOT uint64_t write_slot(struct timing *t, unsigned core, struct tm_queue *q, unsigned *pos,
			uint64_t busy, unsigned bank, uint64_t addr, uint64_t ready, int *stalled,
			const int any, const int plain)
{
	const unsigned s = any ? take_slot(q, ready) : *pos;
	uint64_t slot = q->slot_free[s];
	uint64_t accept = max64(ready, slot);
	*stalled = slot > ready;
	/* inorder: no earlier than the start of the core's write window before
	 * (the ring entry this write's start replaces) */
	const unsigned w = plain ? 0 : q->win_pos[core];
	const uint64_t at = !plain && q->inorder ? max64(accept, q->issue_win[core][w]) : accept;
	uint64_t start = book_write(t, core, plain ? bank : core_bank(t, core, bank), at, busy);
	if (!plain) { /* used only where q->inorder (set before any write) */
		q->issue_win[core][w] = start;
		q->win_pos[core] = w + 1 == q->window ? 0 : w + 1;
	}
	q->slot_free[s] = start + busy;
	if (q == &t->qdata && !(addr & TM_CTR_ADDR)) { /* mem.write_ns: queue and bank */
		t->wlat += start + busy - ready;
		t->wn++;
	}
	q->slot_start[s] = start;
	q->slot_addr[s] = addr;
	if (!any && ++*pos == q->cap)
		*pos = 0;
	return accept;
}

/* plain_fifo -- neither any, inorder nor core_banks: write_slot's inlined copy serves q. */
static inline int plain_fifo(const struct timing *t, const struct tm_queue *q)
{
	return !(q->any | q->inorder | t->core_banks);
}

/* write_one_other -- tm_write where q is not plain_fifo (any, inorder or
 * core_banks), out of line: the plain path stays small enough to inline. */
static __attribute__((noinline)) uint64_t write_one_other(struct timing *t, unsigned core,
							struct tm_queue *q, unsigned bank,
							uint64_t addr, uint64_t ready, int *stalled)
{
	unsigned pos = q->pos;
	uint64_t accept;
	if (q->any)
		accept = write_slot(t, core, q, &pos, t->busy, bank, addr, ready, stalled,
				    1, 0);
	else
		accept = write_slot(t, core, q, &pos, t->busy, bank, addr, ready, stalled,
				    0, 0);
	q->pos = pos;
	return accept;
}

/* tm_write -- one write into queue q (write_slot); returns its acceptance.
 * Inlined into the controller's two callers (link-time): a call per counter
 * line write cost ~0.7 % of the instructions per run. */
inline __attribute__((always_inline)) uint64_t
tm_write(struct timing *t, unsigned core, struct tm_queue *q, unsigned bank, uint64_t addr,
	 uint64_t ready, int *stalled)
{
	if (t->off) {
		*stalled = 0;
		return ready;
	}
	if (__builtin_expect(!plain_fifo(t, q), 0))
		return write_one_other(t, core, q, bank, addr, ready, stalled);
	unsigned pos = q->pos;
	uint64_t accept = write_slot(t, core, q, &pos, t->busy, bank, addr, ready, stalled,
				     0, 1);
	q->pos = pos;
	return accept;
}

/* write_n -- tm_write_n, any and plain as in write_slot. */
HOT uint64_t write_n(struct timing *t, unsigned core, struct tm_queue *q, const uint16_t *bank,
		     const uint64_t *addr, const uint64_t *ready, unsigned n, uint64_t *stalls,
		     const int any, const int plain)
{
	uint64_t last = 0, waited = 0;
	const uint64_t busy = t->busy;
	unsigned pos = q->pos;
	for (unsigned i = 0; i < n; i++) {
		int stalled;
		last = max64(last, write_slot(t, core, q, &pos, busy, bank[i], addr[i],
					      ready[i], &stalled, any, plain));
		waited += (uint64_t)stalled;
	}
	q->pos = pos;
	*stalls += waited;
	return last;
}

/* write_n_fifo -- tm_write_n of a FIFO queue that is not plain_fifo, out of line. */
static __attribute__((noinline)) uint64_t write_n_fifo(struct timing *t, unsigned core,
						       struct tm_queue *q, const uint16_t *bank,
						       const uint64_t *addr, const uint64_t *ready,
						       unsigned n, uint64_t *stalls)
{
	return write_n(t, core, q, bank, addr, ready, n, stalls, 0, 0);
}

/*
 * tm_write_n -- n writes into queue q one after the other, exactly as n
 * tm_write calls (write i: bank[i], addr[i], ready at ready[i]); returns the
 * latest acceptance and adds the writes that waited for an entry to *stalls.
 */
uint64_t tm_write_n(struct timing *t, unsigned core, struct tm_queue *q, const uint16_t *bank,
		    const uint64_t *addr, const uint64_t *ready, unsigned n,
		    uint64_t *stalls)
{
	if (t->off)
		return latest(ready, n);
	if (__builtin_expect(!plain_fifo(t, q), 0))
		return write_n_fifo(t, core, q, bank, addr, ready, n, stalls);
	return write_n(t, core, q, bank, addr, ready, n, stalls, 0, 1);
}

/* tm_write_n_any -- tm_write_n where q->any (the caller chooses: one
 * function with both copies is not inlined into the controller, ~4 % more
 * instructions per run on the FIFO path). */
uint64_t tm_write_n_any(struct timing *t, unsigned core, struct tm_queue *q,
			const uint16_t *bank, const uint64_t *addr, const uint64_t *ready,
			unsigned n, uint64_t *stalls)
{
	if (t->off)
		return latest(ready, n);
	return write_n(t, core, q, bank, addr, ready, n, stalls, 1, 0);
}

/* write_pairs -- tm_write_pairs, any and plain as in write_slot. */
HOT uint64_t write_pairs(struct timing *t, unsigned core, struct tm_queue *qc,
			 struct tm_queue *qd, const uint16_t *cbank, const uint64_t *caddr,
			 const uint64_t *cready, const uint16_t *dbank, const uint64_t *daddr,
			 const uint64_t *dready, unsigned n, uint64_t *stalls, const int any,
			 const int plain)
{
	uint64_t last = 0, waited = 0;
	const uint64_t busy = t->busy;
	unsigned pd = qd->pos, pc = qc->pos;
	/* a shared queue has one position (never plain: see tm_write_pairs) */
	unsigned *pcp = !plain && qc == qd ? &pd : &pc;
	for (unsigned i = 0; i < n; i++) {
		int sc, sd;
		uint64_t cacc = write_slot(t, core, qc, pcp, busy, cbank[i], caddr[i], cready[i],
					   &sc, any, plain);
		uint64_t dacc = write_slot(t, core, qd, &pd, busy, dbank[i], daddr[i],
					   max64(dready[i], cacc), &sd, any, plain);
		t->wpre += max64(dready[i], cacc) - dready[i]; /* its wait for the partner */
		last = max64(last, dacc); /* dacc >= cacc: it was ready no earlier */
		waited += (uint64_t)sc + (uint64_t)sd;
	}
	qc->pos = pc;
	qd->pos = pd;
	*stalls += waited;
	return last;
}

/* write_pairs_fifo -- tm_write_pairs of FIFO queues not both plain_fifo, or
 * one shared queue, out of line. */
static __attribute__((noinline)) uint64_t
write_pairs_fifo(struct timing *t, unsigned core, struct tm_queue *qc, struct tm_queue *qd,
		 const uint16_t *cbank, const uint64_t *caddr, const uint64_t *cready,
		 const uint16_t *dbank, const uint64_t *daddr, const uint64_t *dready, unsigned n,
		 uint64_t *stalls)
{
	return write_pairs(t, core, qc, qd, cbank, caddr, cready, dbank, daddr, dready, n,
			   stalls, 0, 0);
}

/*
 * tm_write_pairs -- n counter-atomic pairs, exactly as n pairs of tm_write
 * calls: pair i's counter line write (bank cbank[i], address caddr[i], ready
 * at cready[i]) into qc, then its data write (dbank[i], daddr[i]) into qd,
 * ready when both its pad (dready[i]) and its partner's acceptance are (SCA
 * 5.2.2: the data entry waits for its counter entry).  qc may be qd (a
 * shared queue; both queues have the same order).  Returns the latest
 * acceptance; adds the writes that waited for an entry to *stalls.
 */
uint64_t tm_write_pairs(struct timing *t, unsigned core, struct tm_queue *qc, struct tm_queue *qd,
			const uint16_t *cbank, const uint64_t *caddr,
			const uint64_t *cready, const uint16_t *dbank,
			const uint64_t *daddr, const uint64_t *dready, unsigned n,
			uint64_t *stalls)
{
	if (t->off)
		return max64(latest(cready, n), latest(dready, n));
	if (__builtin_expect(!plain_fifo(t, qc) || !plain_fifo(t, qd) || qc == qd, 0))
		return write_pairs_fifo(t, core, qc, qd, cbank, caddr, cready, dbank, daddr,
					dready, n, stalls);
	return write_pairs(t, core, qc, qd, cbank, caddr, cready, dbank, daddr, dready, n,
			   stalls, 0, 1);
}

/* tm_write_pairs_any -- tm_write_pairs where the queues are any (as
 * tm_write_n_any). */
uint64_t tm_write_pairs_any(struct timing *t, unsigned core, struct tm_queue *qc,
			    struct tm_queue *qd, const uint16_t *cbank, const uint64_t *caddr,
			    const uint64_t *cready, const uint16_t *dbank, const uint64_t *daddr,
			    const uint64_t *dready, unsigned n, uint64_t *stalls)
{
	if (t->off)
		return max64(latest(cready, n), latest(dready, n));
	return write_pairs(t, core, qc, qd, cbank, caddr, cready, dbank, daddr, dready, n,
			   stalls, 1, 0);
}

/*
 * tm_queued -- a write of addr entered q and has not reached its bank by
 * time at: it still waits in the queue, where a newer write of the same
 * counter line may replace it (SuperMem 3.4.3).
 */
int tm_queued(const struct timing *t, const struct tm_queue *q, uint64_t addr,
	      uint64_t at)
{
	(void)t;
	for (unsigned i = 0; i < q->cap; i++)
		if (q->slot_addr[i] == addr && q->slot_start[i] > at)
			return 1;
	return 0;
}

/* tm_read -- a read of bank at time at: tRCD + tCL, then its burst on the
 * bus; tWTR after a write.  Returns when the burst ends. */
uint64_t tm_read(struct timing *t, unsigned core, unsigned bank, uint64_t at)
{
	const uint64_t xfer = t->rcd + t->cl, len = xfer + t->burst;
	if (t->off)
		return at;
	return book_any(t, core, core_bank(t, core, bank), at, len, t->wtr, xfer, 0) + len;
}

/*
 * tm_aes_unbooked -- when a read's pad, begun at at, is ready (read.c): the engine's latency.
 * The pad does not book the engine (tm_aes): the engine is a busy-until
 * pipeline served in the order requests arrive, and a read's pad begins
 * when its counter or its data arrives, in the future of the core's clock,
 * where it would hold back the pads of the core's next write-backs,
 * requested at earlier modeled times (a store miss does not stall the
 * core).  Pipelined, the engine takes a line every aes_issue: its
 * occupancy moves results by under 1 % (timing.c), its ordering by much
 * more (doc/tried.md, "The core model").
 */
uint64_t tm_aes_unbooked(const struct timing *t, uint64_t at)
{
	return t->off ? at : at + t->aes;
}

/*
 * tm_read_first -- a read of bank (core's bank, with core_banks) arriving at
 * at: when its data is out.  Reads go before queued writes that have not
 * started (read priority, as FR-FCFS memory controllers schedule): the read
 * waits only for the request its bank is serving at at (and tWTR after a
 * write), then takes tRCD + tCL and its burst on the bus (not booked on the
 * bus either).  A calendar joins back-to-back bookings
 * into one interval, so the request in progress is taken to be a write
 * (tCWD + tWR) in a row of writes from the interval's start.  It is not
 * booked on the bank's calendar, so writes already scheduled keep their times; a read therefore delays no
 * write, and two reads of one bank do not wait for each other (with
 * blocking cores, a core has at most one load miss in flight).
 */
uint64_t tm_read_first(const struct timing *t, unsigned core, unsigned bank, uint64_t at)
{
	if (t->off)
		return at;
	const struct tm_cal *c = &t->bank[core_bank(t, core, bank)];
	const uint64_t busy = t->busy ? t->busy : 1;
	uint64_t start = at;
	if (at < c->floor) /* in what the calendar forgot: as if one write serves */
		start = c->floor < at + busy ? c->floor : at + busy;
	unsigned k = c->n; /* back to the first booking that ends after start */
	while (k > 0 && c->end[k - 1] > start)
		k--;
	for (; k < c->n && c->start[k] <= start; k++)
		if (start < c->end[k]) {
			/* a booking joins back-to-back requests: the one in
			 * progress at start ends at the next multiple of a
			 * write's time from the booking's start */
			uint64_t done = c->start[k] + ((start - c->start[k]) / busy + 1) * busy;
			start = (done < c->end[k] ? done : c->end[k]) + (c->write[k] ? t->wtr : 0);
		}
	return start + t->rcd + t->cl + t->burst; /* the data crosses the bus */
}

/* tm_makespan -- the modeled time of the run: the latest core clock. */
uint64_t tm_makespan(const struct timing *t)
{
	uint64_t m = 0;
	for (unsigned i = 0; i < EMU_MAX_CORES; i++)
		m = max64(m, t->clock[i]);
	return m;
}

/* tm_bank_free -- when bank b's latest booked request ends. */
uint64_t tm_bank_free(const struct timing *t, unsigned b)
{
	const struct tm_cal *c = &t->bank[b];
	return c->n ? c->end[c->n - 1] : c->floor;
}
