/*
 * instrument.c -- libspm-instrument.a, linked into a program built with
 * spm_instrument() (README, "The core model"): the entry points of the
 * compiler's instrumentation of every load and store.  The program is
 * compiled with -fsanitize=thread but not linked with the ThreadSanitizer
 * runtime: GCC and clang both then call __tsan_read<N> / __tsan_write<N>
 * (and the range, unaligned, atomic and vptr variants) before each access,
 * and these are spm's.  Function entry and exit hooks are turned off by
 * the flags (they are empty here in case they are not).  memcpy, memmove
 * and memset are wrapped at link time (--wrap): the compiler does not
 * instrument the calls.  This file itself is never instrumented.
 *
 * An access inside the window of modeled pool views goes to libspm
 * (spm_access, access.c); any other is one more count of core work, kept
 * per thread and reported with the next access inside or collected by
 * the library at its next call (one()).
 */
#include <stddef.h>
#include <stdint.h>

#include "access.h"

/* The calling thread's counts not yet reported, and the line of its last
 * access inside the window (+ 1; 0: none), dirty if it stored there since. */
static __thread struct {
	struct spm_access_pending pending;
	uintptr_t line;
	unsigned dirty;
} self;

/* remembered -- an address in the thread's last line (NULL: none). */
static inline const void *remembered(void)
{
	return self.line ? (const void *)((self.line - 1) << 6) : NULL;
}

/* collect -- the calling thread's pending counts, moved into *p; its last
 * line is forgotten (the runtime call that collects may clean it). */
static void collect(struct spm_access_pending *p)
{
	*p = self.pending;
	p->line = remembered();
	self.pending = (struct spm_access_pending){0, 0, 0, NULL};
	self.line = 0;
}

/* inside -- is a within the window?  (A range that starts before the
 * window and reaches into it is counted outside.) */
static inline int inside(const void *a)
{
	uintptr_t x = (uintptr_t)a;
	return __builtin_expect(x - __atomic_load_n(&spm_access_window.lo, __ATOMIC_RELAXED) <
					__atomic_load_n(&spm_access_window.span,
							__ATOMIC_RELAXED),
				0);
}

/* report -- an access the model must see, with the pending counts; 0 if
 * it fell between the views (core work: the counts stay pending). */
static inline int report(const void *a, uint64_t len, unsigned store, uint64_t issued)
{
	struct spm_access_pending p = self.pending;
	p.line = remembered();
	self.pending = (struct spm_access_pending){0, 0, 0, NULL};
	if (spm_access(a, len, store, &p, issued))
		return 1;
	self.pending = p;
	self.pending.line = NULL;
	self.pending.outside += issued;
	return 0;
}

/*
 * one -- an access of len bytes at a by a single instruction.  Another
 * load of the line of the thread's last access inside the window, or
 * another store once it stored there, is counted here and reported with
 * the next access the model must see (or the next runtime call), where the
 * model checks it still hits L1 (no access of the thread's came between,
 * and a runtime call forgets the line, collect).
 */
static inline void one(const void *a, uint64_t len, unsigned store)
{
	if (!inside(a)) {
		self.pending.outside++;
		return;
	}
	uintptr_t x = (uintptr_t)a, line = (x >> 6) + 1;
	if (line == self.line && (x & 63) + len <= 64 && (!store || self.dirty)) {
		if (store)
			self.pending.stores++;
		else
			self.pending.loads++;
		return;
	}
	if (!report(a, len, store, 1))
		return;
	self.dirty = (line == self.line && self.dirty) || store;
	self.line = (x & 63) + len <= 64 ? line : 0;
}

/* range -- len bytes at a copied or set: len / 8 accesses (at least one). */
static inline void range(const void *a, uint64_t len, unsigned store)
{
	uint64_t issued = len / 8 ? len / 8 : 1;
	if (!len)
		return;
	if (inside(a)) {
		if (report(a, len, store, issued))
			self.line = 0;
	} else {
		self.pending.outside += issued;
	}
}

#define API __attribute__((visibility("default")))

void API __tsan_init(void)
{
	spm_access_enable(collect);
}

#define RW(n)                                                                     \
	void API __tsan_read##n(void *a) { one(a, n, 0); }                        \
	void API __tsan_write##n(void *a) { one(a, n, 1); }                       \
	void API __tsan_unaligned_read##n(void *a) { one(a, n, 0); }              \
	void API __tsan_unaligned_write##n(void *a) { one(a, n, 1); }             \
	void API __tsan_volatile_read##n(void *a) { one(a, n, 0); }               \
	void API __tsan_volatile_write##n(void *a) { one(a, n, 1); }              \
	void API __tsan_read##n##_pc(void *a, void *pc) { (void)pc; one(a, n, 0); } \
	void API __tsan_write##n##_pc(void *a, void *pc) { (void)pc; one(a, n, 1); }
RW(1)
RW(2)
RW(4)
RW(8)
RW(16)
#undef RW

void API __tsan_read_range(void *a, unsigned long len)
{
	range(a, len, 0);
}

void API __tsan_write_range(void *a, unsigned long len)
{
	range(a, len, 1);
}

void API __tsan_vptr_read(void **p)
{
	one(p, sizeof(*p), 0);
}

void API __tsan_vptr_update(void **p, void *v)
{
	(void)v;
	one(p, sizeof(*p), 1);
}

void API __tsan_func_entry(void *pc)
{
	(void)pc;
}

void API __tsan_func_exit(void)
{
}

void API __tsan_ignore_thread_begin(void)
{
}

void API __tsan_ignore_thread_end(void)
{
}

/* Atomics: the operation itself (sequentially consistent, which every
 * requested order allows), counted as one load or store (read-modify-write:
 * a store, which also reads). */
#define SC __ATOMIC_SEQ_CST
#define ATOMICS(bits, T)                                                                  \
	T API __tsan_atomic##bits##_load(const volatile T *a, int mo)                     \
	{                                                                                 \
		(void)mo;                                                                 \
		one((const void *)a, sizeof(T), 0);                                       \
		return __atomic_load_n(a, SC);                                            \
	}                                                                                 \
	void API __tsan_atomic##bits##_store(volatile T *a, T v, int mo)                  \
	{                                                                                 \
		(void)mo;                                                                 \
		one((const void *)a, sizeof(T), 1);                                       \
		__atomic_store_n(a, v, SC);                                               \
	}                                                                                 \
	RMW(bits, T, exchange, __atomic_exchange_n)                                       \
	RMW(bits, T, fetch_add, __atomic_fetch_add)                                       \
	RMW(bits, T, fetch_sub, __atomic_fetch_sub)                                       \
	RMW(bits, T, fetch_and, __atomic_fetch_and)                                       \
	RMW(bits, T, fetch_or, __atomic_fetch_or)                                         \
	RMW(bits, T, fetch_xor, __atomic_fetch_xor)                                       \
	RMW(bits, T, fetch_nand, __atomic_fetch_nand)                                     \
	int API __tsan_atomic##bits##_compare_exchange_strong(volatile T *a, T *c, T v,   \
							     int mo, int fmo)             \
	{                                                                                 \
		(void)mo, (void)fmo;                                                      \
		one((const void *)a, sizeof(T), 1);                                       \
		return __atomic_compare_exchange_n(a, c, v, 0, SC, SC);                   \
	}                                                                                 \
	int API __tsan_atomic##bits##_compare_exchange_weak(volatile T *a, T *c, T v,     \
							   int mo, int fmo)               \
	{                                                                                 \
		(void)mo, (void)fmo;                                                      \
		one((const void *)a, sizeof(T), 1);                                       \
		return __atomic_compare_exchange_n(a, c, v, 1, SC, SC);                   \
	}                                                                                 \
	T API __tsan_atomic##bits##_compare_exchange_val(volatile T *a, T c, T v, int mo, \
							 int fmo)                         \
	{                                                                                 \
		(void)mo, (void)fmo;                                                      \
		one((const void *)a, sizeof(T), 1);                                       \
		__atomic_compare_exchange_n(a, &c, v, 0, SC, SC);                         \
		return c;                                                                 \
	}
#define RMW(bits, T, name, op)                                          \
	T API __tsan_atomic##bits##_##name(volatile T *a, T v, int mo)  \
	{                                                               \
		(void)mo;                                               \
		one((const void *)a, sizeof(T), 1);                     \
		return op(a, v, SC);                                    \
	}
ATOMICS(8, uint8_t)
ATOMICS(16, uint16_t)
ATOMICS(32, uint32_t)
ATOMICS(64, uint64_t)
#ifdef __SIZEOF_INT128__
ATOMICS(128, unsigned __int128) /* 16-byte atomics: libatomic where no cmpxchg16b */
#endif
#undef RMW
#undef ATOMICS

void API __tsan_atomic_thread_fence(int mo)
{
	(void)mo;
	__atomic_thread_fence(SC);
}

void API __tsan_atomic_signal_fence(int mo)
{
	(void)mo;
	__atomic_signal_fence(SC);
}

/* memcpy, memmove, memset of the program (its objects linked with
 * --wrap=memcpy,--wrap=memmove,--wrap=memset) and clang's own names for them. */
void *__real_memcpy(void *d, const void *s, size_t n);
void *__real_memmove(void *d, const void *s, size_t n);
void *__real_memset(void *d, int c, size_t n);

API void *__wrap_memcpy(void *d, const void *s, size_t n)
{
	range(s, n, 0);
	range(d, n, 1);
	return __real_memcpy(d, s, n);
}

API void *__wrap_memmove(void *d, const void *s, size_t n)
{
	range(s, n, 0);
	range(d, n, 1);
	return __real_memmove(d, s, n);
}

API void *__wrap_memset(void *d, int c, size_t n)
{
	range(d, n, 1);
	return __real_memset(d, c, n);
}

API void *__tsan_memcpy(void *d, const void *s, size_t n)
{
	return __wrap_memcpy(d, s, n);
}

API void *__tsan_memmove(void *d, const void *s, size_t n)
{
	return __wrap_memmove(d, s, n);
}

API void *__tsan_memset(void *d, int c, size_t n)
{
	return __wrap_memset(d, c, n);
}
