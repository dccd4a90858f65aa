/* err.c -- the per-thread error message behind spm_errormsg(). */
#include <stdarg.h>
#include <stdio.h>

#include "emu.h"

static __thread char errmsg[1024];

/* emu_err -- record a message for this thread and return code. */
int emu_err(int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(errmsg, sizeof(errmsg), fmt, ap);
	va_end(ap);
	return code;
}

/* emu_errmsg -- this thread's last message. */
const char *emu_errmsg(void)
{
	return errmsg;
}

/* emu_err_clear -- forget the last message. */
void emu_err_clear(void)
{
	errmsg[0] = '\0';
}
