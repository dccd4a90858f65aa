/*
 * test_txlog_fill.c -- fill entries of the undo log (lib/txlog.c, heap
 * version 5) are accepted only where the runtime makes them: whole lines of
 * the allocator's bitmaps.  A fill entry forged into an open transaction's
 * ring with the right generation, start and checksum, but aimed at the
 * heap, must not be applied by recovery's rollback (the one that scans the
 * ring: an abort restores only the entries its lane recorded);
 * the same entry aimed at bitmap lines is (the check is the bounds, not
 * something else).  Internal: it writes the ring through the runtime's own
 * structures and runs recovery's rollback (tx_recover) on the open
 * transaction's lane, as the next open would after a crash.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "pool_internal.h"
#include "test_files.h"

#define POOL_SIZE (8u << 20)
#define OBJ_SIZE (16u << 10)

static void pool_path(char *buf, size_t n, const char *tag)
{
	const char *dir = getenv("SPM_TEST_DIR");
	snprintf(buf, n, "%s/txfill-%ld-%s", dir && *dir ? dir : "/tmp", (long)getpid(), tag);
}

/* open_lane -- the lane of the one open transaction. */
static struct lane *open_lane(spm_pool *p, unsigned *index)
{
	for (unsigned i = 0; i < POOL_NLANES; i++)
		if (p->lanes[i].owner) {
			*index = i;
			return &p->lanes[i];
		}
	fail_msg("no open transaction");
	return NULL;
}

/*
 * forge_and_abort -- in a transaction that snapshots the object's first
 * line, write a fill entry for [target, target + len) with pattern right
 * after that entry (where rollback looks next); recovery's rollback of the
 * lane, then the abort that ends the transaction.
 */
static void forge_and_abort(spm_pool *p, uint8_t *obj, uint64_t target, uint64_t len,
			    const uint64_t pattern[2])
{
	assert_int_equal(spm_tx_begin(p), 0);
	assert_int_equal(spm_tx_add(p, obj, 64), 0);
	unsigned li = 0;
	struct lane *l = open_lane(p, &li);
	struct log_entry *e = (struct log_entry *)(txlog_base(p, li) + l->log_pos);
	e->off = target;
	e->len = len | LOG_FILL;
	e->gen = l->gen;
	e->start = l->log_start;
	memcpy(e + 1, pattern, LOG_FILL_BYTES);
	e->sum = txlog_entry_sum(e, (const uint8_t *)(e + 1));
	memset(obj, 0x5a, 64); /* the snapshotted line, to be restored */
	assert_int_equal(tx_recover(p), 0);
	assert_int_equal(obj[0], 0xab); /* the real entry was restored */
	spm_tx_abort(p);
}

static void forged_fill(void **state)
{
	(void)state;
	char path[256];
	pool_path(path, sizeof(path), "forge");
	spm_pool *p = fresh_pool(path, POOL_SIZE, "design=sca");
	spm_off_t *root = spm_root(p, sizeof(spm_off_t));
	assert_non_null(root);
	assert_int_equal(spm_tx_begin(p), 0);
	assert_int_equal(spm_tx_add(p, root, sizeof(*root)), 0);
	*root = spm_tx_alloc(p, OBJ_SIZE);
	assert_true(*root != 0);
	assert_int_equal(spm_tx_commit(p), 0);
	uint8_t *obj = spm_ptr(p, *root);
	memset(obj, 0xab, OBJ_SIZE);
	spm_persist(p, obj, OBJ_SIZE);
	const uint64_t pattern[2] = {0x1111111111111111ull, 0x2222222222222222ull};

	/* aimed at the heap: refused, the scan ends there; the real entry is
	 * still rolled back */
	forge_and_abort(p, obj, *root + 4096, 4096, pattern);
	for (unsigned i = 0; i < OBJ_SIZE; i++)
		if (obj[i] != 0xab)
			fail_msg("heap byte %u is %#x after the abort: the forged fill entry "
				 "was applied", i, obj[i]);

	/* the same entry aimed at a line of the bitmaps is applied: the bounds
	 * are what refused the first (the words are put back afterwards) */
	uint64_t bm_line = p->hdr->bm_off + 4 * SPM_LINE;
	uint8_t saved[SPM_LINE];
	memcpy(saved, p->view + bm_line, SPM_LINE);
	forge_and_abort(p, obj, bm_line, SPM_LINE, pattern);
	assert_memory_equal(p->view + bm_line, pattern, LOG_FILL_BYTES);
	assert_memory_equal(p->view + bm_line + 48, pattern, LOG_FILL_BYTES);
	memcpy(p->view + bm_line, saved, SPM_LINE);
	spm_persist(p, p->view + bm_line, SPM_LINE);
	assert_int_equal(obj[0], 0xab);

	/* unaligned, or running past the bitmaps: refused */
	forge_and_abort(p, obj, bm_line + 16, SPM_LINE, pattern);
	assert_memory_equal(p->view + bm_line, saved, SPM_LINE);
	uint64_t bm_end = p->hdr->bm_off + 16 * p->hdr->bm_words;
	uint64_t last = (bm_end - 1) / SPM_LINE * SPM_LINE;
	uint8_t tail[2 * SPM_LINE];
	memcpy(tail, p->view + last, sizeof(tail));
	forge_and_abort(p, obj, last, 2 * SPM_LINE, pattern);
	assert_memory_equal(p->view + last, tail, sizeof(tail));
	assert_int_equal(spm_close(p), 0);
	remove_pool_files(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(forged_fill),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
