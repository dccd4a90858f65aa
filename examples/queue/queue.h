/*
 * queue.h -- a persistent FIFO queue of byte-string values, on spm's public
 * API: a singly linked list of nodes from the oldest (head) to the newest
 * (tail), each carrying its value inline.
 *
 * Transactions: queue_push and queue_pop must be called inside a
 * transaction of the calling thread.  A push writes the new node, the old
 * tail's next pointer and the handle; a pop writes the handle and frees the
 * node.  On error the caller must abort the transaction.  One writer at a
 * time per queue.
 */
#ifndef EX_QUEUE_H
#define EX_QUEUE_H 1

#include <stddef.h>
#include <stdint.h>

#include <spm.h>

/* The queue's handle: 24 bytes to embed in a persistent object. */
struct queue {
	spm_off_t head; /* oldest node, 0 if empty */
	spm_off_t tail; /* newest node, 0 if empty */
	uint64_t count;
};

/* queue_push -- in a transaction: append a value of len bytes and return it
 * in *val, to be filled by the caller before commit.  0 or an error code. */
int queue_push(spm_pool *pool, struct queue *q, size_t len, void **val);

/* queue_front -- the oldest value (its size in *len), or NULL if empty. */
void *queue_front(spm_pool *pool, const struct queue *q, size_t *len);

/* queue_pop -- in a transaction: remove the oldest value.  1 removed, 0 the
 * queue is empty, < 0 error. */
int queue_pop(spm_pool *pool, struct queue *q);

/*
 * queue_check -- verify the invariants (pointers, the chain from head ends
 * at tail, the count) while calling visit on each value from the oldest;
 * safe on a damaged queue.  0, or -1 with the broken invariant in why, or
 * visit's non-zero result.
 */
typedef int (*queue_visit_fn)(void *arg, const void *val, size_t len);
int queue_check(spm_pool *pool, const struct queue *q, queue_visit_fn visit, void *arg,
		char *why, size_t whylen);

#endif
