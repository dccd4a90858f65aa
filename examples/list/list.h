/*
 * list.h -- a persistent singly linked list, newest node first, whose
 * insertion needs no transaction: the counter-atomicity paper's Figure 4.
 *
 * The head pointer sits alone in a line declared CounterAtomic (SCA section
 * 4.3).  Inserting is two steps:
 *
 *   list_reserve   a node is written where nothing points to it yet;
 *   list_publish   the node's lines are written back, and so are their
 *                  counters (spm_counter_cache_writeback), then a barrier;
 *                  only then is the head pointed at it and persisted -- one
 *                  counter-atomic write.
 *
 * A crash before the head write leaves the list as it was (the half-written
 * node is unreachable); after it, the node is complete and decryptable.  On
 * a design without counter-atomicity ("unsafe") the head's counter may be
 * lost in a crash and the list becomes garbage: the paper's Figure 4(c).
 *
 * Nodes are carved from slabs (64 KiB or more) that a short transaction
 * allocates now and then, so an insertion allocates nothing; the next free
 * place is just past the head node, so a crash leaks nothing either.
 * One writer at a time per list.
 */
#ifndef EX_LIST_H
#define EX_LIST_H 1

#include <stddef.h>
#include <stdint.h>

#include <spm.h>

/* The list's handle: two lines to embed (line aligned) in a persistent
 * object; zero is an empty list. */
struct list {
	_Alignas(SPM_LINE) spm_off_t head; /* CounterAtomic, alone in its line */
	_Alignas(SPM_LINE) spm_off_t slab; /* the newest slab */
};

/* list_init -- declare the head CounterAtomic (once, when the list is made). */
int list_init(spm_pool *pool, struct list *l);

/*
 * list_reserve -- a node for a value of len bytes, not in the list yet;
 * *val is the value to fill.  Must not be called inside a transaction (it
 * may run one to get a new slab).  0 or an error code.
 */
int list_reserve(spm_pool *pool, struct list *l, size_t len, void **val);

/* list_publish -- make the reserved node whose value is val the new head
 * (Figure 4). */
void list_publish(spm_pool *pool, struct list *l, void *val);

/* list_front -- the newest value (its size in *len), NULL if the list is
 * empty; -1 if the head pointer is damaged, else 0. */
int list_front(spm_pool *pool, const struct list *l, const void **val, size_t *len);

/*
 * list_check -- verify the invariants (the slabs, every node inside a slab,
 * the chain ends) while calling visit on each value from the newest; safe on
 * a damaged list.  0, or -1 with the broken invariant in why, or visit's
 * non-zero result.
 */
typedef int (*list_visit_fn)(void *arg, const void *val, size_t len);
int list_check(spm_pool *pool, const struct list *l, list_visit_fn visit, void *arg,
	       char *why, size_t whylen);

#endif
