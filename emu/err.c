/*
 * err.c -- the per-thread error message and code behind spm_errormsg() and
 * spm_errcode().
 *
 * Each thread's message and code live in a buffer of its own, made at its first
 * error and freed when it exits (a pthread key), not in a __thread array:
 * the library's thread-local block then holds only the hot per-thread state
 * (lib/persist.c), small enough to be initial-exec and still fit the static
 * TLS that glibc keeps for libraries loaded with dlopen().
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "emu.h"

enum { ERRMSG_LEN = 1024 };

/* a thread's last error: what emu_err recorded */
struct errbuf {
	int code;
	char msg[ERRMSG_LEN];
};

static pthread_key_t errmsg_key;
static pthread_once_t errmsg_once = PTHREAD_ONCE_INIT;
static int errmsg_key_ok;

static void errmsg_key_make(void)
{
	errmsg_key_ok = pthread_key_create(&errmsg_key, free) == 0;
}

/* errmsg_buf -- this thread's buffer; made if make, else NULL until then
 * (and NULL if it cannot be made: the message and spm_errcode's copy of the
 * code are lost, the code returned is not). */
static struct errbuf *errmsg_buf(int make)
{
	pthread_once(&errmsg_once, errmsg_key_make);
	if (!errmsg_key_ok)
		return NULL;
	struct errbuf *buf = pthread_getspecific(errmsg_key);
	if (!buf && make) {
		buf = calloc(1, sizeof(*buf));
		if (buf && pthread_setspecific(errmsg_key, buf) != 0) {
			free(buf);
			buf = NULL;
		}
	}
	return buf;
}

/* emu_err -- record a message and code for this thread and return code. */
int emu_err(int code, const char *fmt, ...)
{
	struct errbuf *buf = errmsg_buf(1);
	if (buf) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(buf->msg, ERRMSG_LEN, fmt, ap);
		va_end(ap);
		buf->code = code;
	}
	return code;
}

/* emu_errmsg -- this thread's last message ("" if none). */
const char *emu_errmsg(void)
{
	const struct errbuf *buf = errmsg_buf(0);
	return buf ? buf->msg : "";
}

/* emu_errcode -- this thread's last error code (0 if none). */
int emu_errcode(void)
{
	const struct errbuf *buf = errmsg_buf(0);
	return buf ? buf->code : 0;
}

/* emu_err_clear -- forget the last message and code. */
void emu_err_clear(void)
{
	struct errbuf *buf = errmsg_buf(0);
	if (buf) {
		buf->msg[0] = '\0';
		buf->code = 0;
	}
}
