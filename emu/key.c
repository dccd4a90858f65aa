/*
 * key.c -- the processor's secret: the AES key file, never part of the pool
 * files.  Created with mode 0600 from OpenSSL's random source when a pool is
 * created and no key file exists; read at open.  Raw key bytes (16 or 32).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/rand.h>

#include "spm.h"
#include "emu_internal.h"

/* read_key -- exactly bits/8 bytes from path. */
static int read_key(const char *path, unsigned bits, uint8_t *key)
{
	/* O_NONBLOCK: a FIFO in the key's place is refused, not waited on */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return emu_err(SPM_E_KEYFILE, "key file %s: %s", path, strerror(errno));
	struct stat st;
	ssize_t n = -1;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == (off_t)(bits / 8))
		n = read(fd, key, bits / 8);
	close(fd);
	if (n != (ssize_t)(bits / 8))
		return emu_err(SPM_E_KEYFILE,
			       "key file %s: not a %u-bit key (must hold exactly %u bytes)",
			       path, bits, bits / 8);
	return 0;
}

/* write_new_key -- a fresh random key in a new 0600 file. */
static int write_new_key(const char *path, unsigned bits, uint8_t *key)
{
	if (RAND_bytes(key, (int)(bits / 8)) != 1)
		return emu_err(SPM_E_CRYPTO, "OpenSSL: no random bytes for a key");
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		/* where the pool's own files could not be made either (no such
		 * directory, no permission, read-only), the same code as for them */
		int e = errno, dir = e == ENOENT || e == ENOTDIR || e == EACCES || e == EROFS;
		return emu_err(dir ? -e : SPM_E_KEYFILE, "key file %s: cannot create: %s",
			       path, strerror(e));
	}
	ssize_t n = write(fd, key, bits / 8);
	int ok = n == (ssize_t)(bits / 8) && fsync(fd) == 0;
	close(fd);
	if (!ok) {
		unlink(path);
		return emu_err(SPM_E_KEYFILE, "key file %s: cannot write", path);
	}
	return 0;
}

/* key_path_of -- key_file, or <pool>.key. */
void key_path_of(const char *key_file, const char *pool_path, char *out, size_t n)
{
	if (key_file && *key_file)
		snprintf(out, n, "%s", key_file);
	else
		snprintf(out, n, "%s.key", pool_path);
}

/* key_load_or_create -- the key of a pool; *created says a new file was made. */
int key_load_or_create(const char *key_file, const char *pool_path, int create,
		       unsigned bits, uint8_t *key, int *created)
{
	char path[4200];
	key_path_of(key_file, pool_path, path, sizeof(path));
	if (created)
		*created = 0;
	if (create && access(path, F_OK) != 0) {
		int rc = write_new_key(path, bits, key);
		if (!rc && created)
			*created = 1;
		return rc;
	}
	return read_key(path, bits, key);
}
