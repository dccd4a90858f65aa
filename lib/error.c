/* error.c -- spm_strerror(), spm_errormsg() and spm_errcode(). */
#include <string.h>

#include "spm.h"
#include "../emu/emu.h"

static const char *const messages[] = {
	"not an spm pool",
	"pool file truncated",
	"pool header corrupt",
	"pool files belong to different pools (or to different states of one)",
	"pool format version not supported (too new, or an older pre-1.0 heap)",
	"wrong key",
	"bad or missing key file",
	"unknown design",
	"bad option",
	"no space left in the pool",
	"invalid argument",
	"pool busy",
	"invalid transaction state",
	"crypto library failure",
	"pool files are older than the key's record of the pool (rollback)",
	"pool created with another layout",
	"pool created with another design",
	"pool tampered with (integrity check failed)",
};
_Static_assert(sizeof(messages) / sizeof(messages[0]) == SPM_E_BASE - SPM_E_LAST + 1,
	       "a message for every spm error code");

/* spm_strerror -- a static description of err. */
SPM_API const char *spm_strerror(int err)
{
	if (err == 0)
		return "success";
	if (err <= SPM_E_BASE && err >= SPM_E_LAST)
		return messages[SPM_E_BASE - err];
	if (err < 0 && err > -4096)
		return strerror(-err);
	return "unknown error";
}

/* spm_errormsg -- this thread's last error message. */
SPM_API const char *spm_errormsg(void)
{
	return emu_errmsg();
}

/* spm_errcode -- this thread's last error code. */
SPM_API int spm_errcode(void)
{
	return emu_errcode();
}
