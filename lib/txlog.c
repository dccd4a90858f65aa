/*
 * txlog.c -- the persistent side of a transaction lane: its header slots and
 * its undo log, a ring of entries.
 *
 * Why a ring and slots.  With split counters (SuperMem §3.4.1) a line's 7-bit
 * minor counter overflows after 128 writes and the whole 4 KiB page is read
 * and re-encrypted (§3.4.4).  A log that starts at the same line in every
 * transaction, and a header written twice per transaction, would overflow
 * their page every 64 transactions: the re-encryptions, not the design under
 * test, would dominate a small transaction's cost.  So transaction g writes
 * header slot g mod LANE_SLOTS, and its log starts where the previous one
 * ended (rounded up to LANE_LOG_ALIGN); a log line is rewritten once per trip
 * around the ring, a slot once per LANE_SLOTS transactions.
 *
 * Rules that keep recovery exact:
 *   - the lane's header is the slot with the highest gen (gens only grow);
 *   - a transaction's first entry goes at the ring head if it fits before the
 *     end, else at 0; a transaction starts at most half way round, so any
 *     transaction whose entries take at most half the ring fits unwrapped;
 *   - a later entry that does not fit before the end goes at 0 (once), and
 *     must end by the transaction's start: a transaction never overwrites
 *     its own entries;
 *   - every entry records its transaction's start; an entry counts only with
 *     the right gen, start and checksum.  A gen is reused only when a crash
 *     came before the first header write of its transaction; the stale entry
 *     of that attempt has another start, or sits at the start the new first
 *     entry overwrites.
 */
#include <string.h>

#include "pool_internal.h"

static uint64_t round_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) / a * a;
}

/* txlog_room -- bytes in a lane's ring. */
uint64_t txlog_room(const spm_pool *p)
{
	return p->hdr->lane_size - LANE_LOG_OFF;
}

/* txlog_base -- the first byte of lane i's ring. */
uint8_t *txlog_base(spm_pool *p, unsigned i)
{
	return p->view + p->hdr->lane_off + (uint64_t)i * p->hdr->lane_size + LANE_LOG_OFF;
}

/* txlog_slot -- the header slot of generation gen in lane i. */
struct lane_hdr *txlog_slot(spm_pool *p, unsigned i, uint64_t gen)
{
	uint8_t *lane = p->view + p->hdr->lane_off + (uint64_t)i * p->hdr->lane_size;
	return (struct lane_hdr *)(lane + (gen % LANE_SLOTS) * SPM_LINE);
}

/* txlog_newest -- lane i's header: the slot with the highest gen. */
struct lane_hdr *txlog_newest(spm_pool *p, unsigned i)
{
	struct lane_hdr *best = txlog_slot(p, i, 0);
	for (unsigned s = 1; s < LANE_SLOTS; s++) {
		struct lane_hdr *h = txlog_slot(p, i, s);
		if (h->gen > best->gen)
			best = h;
	}
	return best;
}

/* sum_word -- txlog_entry_sum's step: hash h and the 8 bytes at w. */
static inline uint64_t sum_word(uint64_t h, const uint8_t *w)
{
	uint64_t v;
	memcpy(&v, w, 8);
	h = (h ^ v) * 0x9e3779b97f4a7c15ull;
	return h ^ h >> 29;
}

/*
 * txlog_entry_sum -- the check of a log entry: a 64-bit multiplicative hash
 * over its words (the length is always a multiple of 8).  It detects an entry
 * that is torn or stale after a crash; it is not a MAC.  About four times
 * faster than zlib's crc32 on this path, where every snapshotted byte is
 * summed.
 */
uint64_t txlog_entry_sum(const struct log_entry *e, const uint8_t *data)
{
	uint64_t h = 0x243f6a8885a308d3ull ^ e->off;
	h = (h ^ e->len) * 0x9e3779b97f4a7c15ull;
	h = (h ^ e->gen) * 0x9e3779b97f4a7c15ull;
	h = (h ^ e->start) * 0x9e3779b97f4a7c15ull;
	uint64_t i = 0, n = txlog_entry_data(e);
	for (; i + 16 <= n; i += 16) /* two words a turn: a line in four */
		h = sum_word(sum_word(h, data + i), data + i + 8);
	if (i + 8 <= n)
		h = sum_word(h, data + i);
	return h ^ (h >> 32);
}

/* txlog_entry_len -- the bytes entry e restores. */
uint64_t txlog_entry_len(const struct log_entry *e)
{
	return e->len & ~LOG_FILL;
}

/* txlog_entry_data -- the bytes of data after entry e's header. */
uint64_t txlog_entry_data(const struct log_entry *e)
{
	return e->len & LOG_FILL ? LOG_FILL_BYTES : e->len;
}

/* txlog_need -- ring bytes of an entry holding len bytes: whole lines. */
uint64_t txlog_need(uint64_t len)
{
	return round_up(sizeof(struct log_entry) + len, SPM_LINE);
}

/*
 * txlog_place -- where the next entry of lane l's open transaction goes, for
 * need bytes: *pos, and l's start and wrap state updated.  SPM_E_NOSPACE
 * (with the message) if the ring has no room for it.
 */
int txlog_place(spm_pool *p, struct lane *l, uint64_t need, uint64_t *pos)
{
	uint64_t room = txlog_room(p);
	if (!l->hdr_written) { /* the first entry fixes the start */
		l->log_start = l->log_head + need <= room ? l->log_head : 0;
		l->log_pos = l->log_start;
		l->wrapped = 0;
	}
	uint64_t end = l->wrapped ? l->log_start : room;
	if (l->log_pos + need > end && !l->wrapped && need <= l->log_start) {
		l->wrapped = 1;
		l->log_pos = 0;
		end = l->log_start;
		emu_stat_rt_add(p->emu, EMU_RT_LOG_WRAPS, 1);
	}
	if (need > room || l->log_pos + need > end)
		return emu_err(SPM_E_NOSPACE, "spm_tx_add: transaction log full: an entry of "
			       "%llu bytes does not fit after %llu bytes of entries (at least "
			       "%llu fit in every transaction)", (unsigned long long)need,
			       (unsigned long long)(l->wrapped
						    ? room - l->log_start + l->log_pos
						    : l->log_pos - l->log_start),
			       (unsigned long long)(room / 2));
	*pos = l->log_pos;
	return 0;
}

/* txlog_advance -- after the transaction of l ends: the next one starts
 * after its entries, on LANE_LOG_ALIGN, and no later than half way. */
void txlog_advance(spm_pool *p, struct lane *l)
{
	if (!l->hdr_written)
		return;
	uint64_t head = round_up(l->log_pos, LANE_LOG_ALIGN);
	l->log_head = head > txlog_room(p) / 2 ? 0 : head;
}

/* entry_ok -- is the entry at ring offset pos, with end bound end, one of
 * generation gen started at start? */
static int entry_ok(spm_pool *p, const struct log_entry *e, uint64_t pos, uint64_t end,
		    uint64_t gen, uint64_t start)
{
	if (pos + sizeof(*e) > end || e->gen != gen || e->start != start)
		return 0;
	uint64_t len = txlog_entry_len(e), data = txlog_entry_data(e);
	if (len == 0 || data > end || txlog_need(data) > end - pos ||
	    ((e->len & LOG_FILL) && len % LOG_FILL_BYTES))
		return 0;
	if (e->off < POOL_HDR_OFF || e->off > p->size || len > p->size - e->off)
		return 0;
	/* fill entries are made for whole lines of the allocator's bitmaps only:
	 * a forged or colliding one cannot restore anything else */
	uint64_t bm_end = p->hdr->bm_off + 16 * p->hdr->bm_words;
	if ((e->len & LOG_FILL) && (e->off < p->hdr->bm_off || e->off > bm_end ||
				    e->off % SPM_LINE || len % SPM_LINE ||
				    len > bm_end - e->off))
		return 0;
	return e->sum == txlog_entry_sum(e, (const uint8_t *)(e + 1));
}

/*
 * txlog_scan -- the entries of generation gen that started at start in lane
 * i, oldest first: their ring offsets (off) and lengths appended to found.
 */
int txlog_scan(spm_pool *p, unsigned i, uint64_t gen, uint64_t start, struct vec *found)
{
	uint8_t *base = txlog_base(p, i);
	uint64_t room = txlog_room(p), pos = start, end = room;
	int wrapped = 0, rc = 0;
	if (start >= room)
		return 0; /* no transaction starts there */
	while (!rc) {
		struct log_entry *e = (struct log_entry *)(base + pos);
		if (!entry_ok(p, e, pos, end, gen, start)) {
			if (wrapped || start == 0)
				break;
			wrapped = 1; /* txlog_place went on at 0 */
			pos = 0;
			end = start;
			continue;
		}
		rc = vec_push(found, pos, txlog_entry_len(e));
		pos += txlog_need(txlog_entry_data(e));
	}
	return rc;
}
