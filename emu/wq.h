/* wq.h -- the ADR write queues (wq.c). */
#ifndef SPM_WQ_H
#define SPM_WQ_H 1
#include "emu_internal.h"

void wq_attach(struct wq *q, struct wq_entry *slots, unsigned cap,
	       unsigned depth, struct tm_queue *tmq);
void wq_push_data(struct emu *e, struct wq *q, const uint64_t *line, const uint64_t *ctr,
		  unsigned n, const uint8_t *view, const uint8_t *pads, uint64_t flags);
void wq_push_pairs(struct emu *e, const uint64_t *line, const uint64_t *ctr, unsigned n,
		   const uint8_t *view, const uint8_t *pads);
void wq_push_ctrs(struct emu *e, const uint64_t *cl, unsigned n);
struct wq_entry *wq_reserve(struct emu *e, struct wq *q);
struct wq_entry *wq_publish(struct emu *e, struct wq *q, uint64_t addr,
			    uint64_t aux, uint64_t flags);
void wq_set_ready(struct emu *e, struct wq_entry *w);
void wq_remove(struct emu *e, struct wq_entry *w);
void wq_drain_one(struct emu *e, struct wq *q);
void wq_drain_all(struct emu *e, struct wq *q);
void wq_home_write(struct emu *e, const struct wq_entry *w, int is_ctr, int in_order);
int wq_recover(struct emu *e, struct wq_entry *data, unsigned dcap,
	       struct wq_entry *ctr, unsigned ccap, uint64_t *drained,
	       uint64_t *dropped);
void wq_dropped_done(struct emu *e);
void wq_mark_reserved(struct emu *e, struct wq_entry *w, uint64_t line, uint64_t ctr);
void wq_mark_reserved_log(struct emu *e, struct wq_entry *w, uint64_t line, uint64_t ctr);
uint64_t wq_reserved_line(const struct wq_entry *w);
#endif
