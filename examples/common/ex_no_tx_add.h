/*
 * ex_no_tx_add.h -- the examples without their spm_tx_add calls: forced
 * into every source of the spm-<name>-notxadd builds (-include, with
 * SPM_EX_NO_TX_ADD defined; examples/CMakeLists.txt), it turns each call
 * into a success that logs nothing.  Such a program is crash consistent
 * only with tx_track=pages, where the runtime finds the transaction's
 * writes itself; the crash sweeps show both (tests/CMakeLists.txt).  The
 * default builds never see this header: their code is unchanged.
 */
#ifndef EX_NO_TX_ADD_H
#define EX_NO_TX_ADD_H 1

#ifdef SPM_EX_NO_TX_ADD
#include <stddef.h>

#include <spm.h> /* declared first, under its own name */

/* ex_no_tx_add -- spm_tx_add that declares nothing. */
static inline int ex_no_tx_add(spm_pool *pool, const void *addr, size_t len)
{
	(void)pool;
	(void)addr;
	(void)len;
	return 0;
}
#define spm_tx_add ex_no_tx_add
#endif

#endif
