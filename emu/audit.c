/*
 * audit.c -- the test-only pad-reuse auditor (doc/design.md, "Security invariants").
 * With SPM_AUDIT=FILE every pad used for an encryption appends a line
 * "<line-index> <counter> <digest of the plaintext>" to FILE, unbuffered
 * (O_APPEND, one write per record) so that records survive a crash of the
 * process.  A reused pad is a (line, counter) recorded with two different
 * plaintexts (section 8: no seed encrypts two different plaintexts).  The
 * same seed over the same plaintext gives the same ciphertext and is no
 * reuse: a page re-encryption resumed at recovery repeats a line it had
 * encrypted when the process was killed before the line's entry was valid.
 * The digest is 64 bits of SHA-256, not a CRC: two plaintexts made to share
 * a CRC-32 (the dedup designs' dewrite_pad=crc reuses a pad exactly then)
 * must not look like one.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>

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

/* audit_pad -- record the seed (line, ctr) used for the 64 bytes plain. */
void audit_pad(struct emu *e, uint64_t line, uint64_t ctr, const uint8_t *plain)
{
	char buf[80];
	uint8_t md[32];
	uint64_t sum;
	if (!EVP_Digest(plain, EMU_LINE, md, NULL, EVP_sha256(), NULL))
		abort(); /* an auditor that loses records is blind */
	memcpy(&sum, md, sizeof(sum));
	int len = snprintf(buf, sizeof(buf), "%llu %llu %016llx\n", (unsigned long long)line,
			   (unsigned long long)ctr, (unsigned long long)sum);
	if (write(e->audit_fd, buf, (size_t)len) != (ssize_t)len)
		abort(); /* an auditor that loses records is blind */
}

void audit_close(struct emu *e)
{
	if (e->audit_fd >= 0)
		close(e->audit_fd);
	e->audit_fd = -1;
}
