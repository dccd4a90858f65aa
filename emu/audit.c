/*
 * audit.c -- the test-only pad-reuse auditor (ARCHITECTURE.md section 8).
 * With SPM_AUDIT=FILE every pad generated for an encryption appends a line
 * "<line-index> <counter>" to FILE, unbuffered (O_APPEND, one write per batch)
 * so that records survive a crash of the process; a repeated line in FILE is
 * a reused pad.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "spm.h"
#include "emu_internal.h"

/* audit_open -- start auditing if SPM_AUDIT names a file. */
int audit_open(struct emu *e)
{
	const char *path = getenv("SPM_AUDIT");
	e->audit_fd = -1;
	if (!path || !*path || e->design->enc != ENC_CTR)
		return 0;
	/* O_NONBLOCK: a FIFO without a reader is refused, not waited on */
	e->audit_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NONBLOCK, 0600);
	if (e->audit_fd < 0)
		return emu_err(SPM_E_OPTION, "SPM_AUDIT=%s: %s", path, strerror(errno));
	/* its records are then written whole, as to a file */
	(void)fcntl(e->audit_fd, F_SETFL, O_APPEND);
	return 0;
}

/* audit_pads -- record n (line, counter) seeds, in one write. */
void audit_pads(struct emu *e, const uint64_t *line, const uint64_t *ctr, unsigned n)
{
	char buf[64 * 42];
	size_t len = 0;
	for (unsigned i = 0; i < n; i++) {
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%llu %llu\n",
					(unsigned long long)line[i],
					(unsigned long long)ctr[i]);
		if (len > sizeof(buf) - 48 || i + 1 == n) {
			if (write(e->audit_fd, buf, len) != (ssize_t)len)
				abort(); /* an auditor that loses records is blind */
			len = 0;
		}
	}
}

void audit_close(struct emu *e)
{
	if (e->audit_fd >= 0)
		close(e->audit_fd);
	e->audit_fd = -1;
}
