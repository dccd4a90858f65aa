/*
 * key.c -- the processor's secret state (doc/design.md, "Security invariants"): the key
 * file, never part of the pool files.  It holds the AES key and, for each
 * pool that uses it, the pool's generation: a number that only grows,
 * raised every time the pool is opened for use and closed, and that the
 * pool files' epoch words must reach (emu.c: epochs).  Pool files older than
 * the record are a restored copy -- a rollback, refused.
 *
 * Trust: a key file is a regular file with one name, owned by the calling
 * user, with no group or other permission bits, opened without following a
 * symbolic link; anything else is refused before any file is touched.  spm_create
 * makes a new key file with O_EXCL and adopts an existing one only when the
 * caller names it (key_file=).
 *
 * Every write of a key file is crash-safe: the new content goes to a new
 * file (O_EXCL, mode 0600) -- "<key>.new" for a raise, "<key>.new.<id>" for
 * a creation's new key (key_new_path) -- is fsynced, and is renamed over the
 * key (a new key: only where none is); the directory is fsynced.  Raises of
 * one key file by several processes are serialised by an flock on it.
 *
 * Format (little-endian), 56 bytes then nrec records of 24 bytes:
 *    0  magic "SPMKEY\0\1"
 *    8  u32 version (1)        12  u32 key bytes (16 or 32)
 *   16  key[32] (unused bytes zero)
 *   48  u32 nrec               52  u32 crc32 of the file with this word zero
 *   56  { uuid[16]; u64 generation; } x nrec
 * A file of exactly 16 or 32 bytes is a raw key, as spm wrote them before
 * generations: accepted, and rewritten in this format at the first raise.
 */
#define _GNU_SOURCE 1 /* renameat2 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <openssl/crypto.h>
#include <openssl/rand.h>

#include "spm.h"
#include "emu_internal.h"

#define KEY_MAGIC "SPMKEY\0\1"
#define KEY_VERSION 1u
#define KEY_HDR 56u
#define KEY_REC 24u
#define KEY_MAX_RECS 65536u
#define KEY_NEW_SUFFIX ".new"

/* key_path_of -- key_file, or <pool>.key. */
void key_path_of(const char *key_file, const char *pool_path, char *out, size_t n)
{
	if (key_file && *key_file)
		snprintf(out, n, "%s", key_file);
	else
		snprintf(out, n, "%s.key", pool_path);
}

/* key_free -- forget kf's key and records. */
void key_free(struct keyfile *kf)
{
	OPENSSL_cleanse(kf->key, sizeof(kf->key));
	free(kf->rec);
	memset(kf, 0, sizeof(*kf));
}

/* check_trust -- the open key file fd at path may hold the secret. */
int key_check_trust(int fd, const char *path, struct stat *st)
{
	if (fstat(fd, st) != 0)
		return emu_err(SPM_E_KEYFILE, "key file %s: %s", path, strerror(errno));
	if (!S_ISREG(st->st_mode))
		return emu_err(SPM_E_KEYFILE, "key file %s: not a regular file", path);
	if (st->st_uid != geteuid())
		return emu_err(SPM_E_KEYFILE, "key file %s: owned by uid %u, not by the calling "
			       "user (uid %u)", path, (unsigned)st->st_uid, (unsigned)geteuid());
	if (st->st_mode & 077)
		return emu_err(SPM_E_KEYFILE, "key file %s: mode %04o lets group or others in "
			       "(must be 0600 or stricter)", path, (unsigned)(st->st_mode & 07777));
	/* a second name could keep an older key file (an older record) to be
	 * put back later */
	if (st->st_nlink != 1)
		return emu_err(SPM_E_KEYFILE, "key file %s: has %lu names (hard links); a key "
			       "file must have one", path, (unsigned long)st->st_nlink);
	return 0;
}

/* open_trusted -- the key file at path opened read-only (flags added), its
 * trust checked; the descriptor or a negative error. */
static int open_trusted(const char *path, int flags, struct stat *st)
{
	/* O_NONBLOCK: a FIFO in the key's place is refused, not waited on */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | flags);
	if (fd < 0) {
		int e = errno;
		if (e == ELOOP)
			return emu_err(SPM_E_KEYFILE, "key file %s: a symbolic link (key files "
				       "are opened without following links)", path);
		if (e == ENAMETOOLONG)
			return emu_err(-e, "key file %s: name too long", path);
		return emu_err(SPM_E_KEYFILE, "key file %s: %s", path, strerror(e));
	}
	int rc = key_check_trust(fd, path, st);
	if (rc) {
		close(fd);
		return rc;
	}
	return fd;
}

/* file_crc -- crc32 of a key file image with its checksum word as zero. */
static uint32_t file_crc(const uint8_t *buf, size_t len)
{
	static const uint8_t zero[4];
	uLong c = crc32(0L, Z_NULL, 0);
	c = crc32(c, buf, 52);
	c = crc32(c, zero, 4);
	c = crc32(c, buf + KEY_HDR, (uInt)(len - KEY_HDR));
	return (uint32_t)c;
}

/* parse -- the len bytes of a key file into kf. */
static int parse(const char *path, const uint8_t *buf, size_t len, struct keyfile *kf)
{
	memset(kf, 0, sizeof(*kf));
	if (len == 16 || len == 32) { /* a raw key */
		kf->bits = (unsigned)len * 8;
		memcpy(kf->key, buf, len);
		kf->legacy = 1;
		return 0;
	}
	uint32_t ver, kb, nrec, crc;
	if (len < KEY_HDR || memcmp(buf, KEY_MAGIC, 8) != 0)
		return emu_err(SPM_E_KEYFILE, "key file %s: not an spm key (a 16- or 32-byte "
			       "raw key, or spm's key format)", path);
	memcpy(&ver, buf + 8, 4);
	memcpy(&kb, buf + 12, 4);
	memcpy(&nrec, buf + 48, 4);
	memcpy(&crc, buf + 52, 4);
	if (ver != KEY_VERSION)
		return emu_err(SPM_E_KEYFILE, "key file %s: key format version %u (this spm "
			       "reads %u)", path, ver, KEY_VERSION);
	if ((kb != 16 && kb != 32) || nrec > KEY_MAX_RECS ||
	    len != KEY_HDR + (size_t)nrec * KEY_REC || crc != file_crc(buf, len))
		return emu_err(SPM_E_KEYFILE, "key file %s: damaged (checksum or size)", path);
	kf->bits = kb * 8;
	memcpy(kf->key, buf + 16, kb);
	kf->nrec = nrec;
	if (nrec) {
		kf->rec = malloc((size_t)nrec * sizeof(*kf->rec));
		if (!kf->rec) {
			key_free(kf);
			return emu_err(-ENOMEM, "out of memory");
		}
		for (uint32_t i = 0; i < nrec; i++) {
			memcpy(kf->rec[i].uuid, buf + KEY_HDR + i * KEY_REC, 16);
			memcpy(&kf->rec[i].generation, buf + KEY_HDR + i * KEY_REC + 16, 8);
		}
	}
	return 0;
}

/* read_fd -- the key file open at fd into kf. */
static int read_fd(int fd, const char *path, const struct stat *st, struct keyfile *kf)
{
	memset(kf, 0, sizeof(*kf));
	size_t max = KEY_HDR + (size_t)KEY_MAX_RECS * KEY_REC;
	if (st->st_size < 0 || (size_t)st->st_size > max)
		return emu_err(SPM_E_KEYFILE, "key file %s: %lld bytes is not an spm key", path,
			       (long long)st->st_size);
	size_t len = (size_t)st->st_size;
	uint8_t *buf = malloc(len ? len : 1);
	if (!buf)
		return emu_err(-ENOMEM, "out of memory");
	ssize_t n = pread(fd, buf, len, 0);
	int rc = n == (ssize_t)len ? parse(path, buf, len, kf)
				   : emu_err(SPM_E_KEYFILE, "key file %s: cannot read", path);
	OPENSSL_cleanse(buf, len);
	free(buf);
	return rc;
}

/* key_read -- the trusted key file at path into kf. */
int key_read(const char *path, struct keyfile *kf)
{
	struct stat st;
	memset(kf, 0, sizeof(*kf));
	int fd = open_trusted(path, 0, &st);
	if (fd < 0)
		return fd;
	int rc = read_fd(fd, path, &st, kf);
	close(fd);
	return rc;
}

/* find_record -- kf's record of the pool uuid, or NULL. */
static struct keyfile_rec *find_record(const struct keyfile *kf, const uint8_t uuid[16])
{
	for (uint32_t i = 0; i < kf->nrec; i++)
		if (memcmp(kf->rec[i].uuid, uuid, 16) == 0)
			return &kf->rec[i];
	return NULL;
}

/* key_generation -- the generation kf records for the pool uuid (0: none). */
uint64_t key_generation(const struct keyfile *kf, const uint8_t uuid[16])
{
	const struct keyfile_rec *r = find_record(kf, uuid);
	return r ? r->generation : 0;
}

/* serialize -- kf in the key format, malloc'd; its length in *len. */
static uint8_t *serialize(const struct keyfile *kf, size_t *len)
{
	*len = KEY_HDR + (size_t)kf->nrec * KEY_REC;
	uint8_t *buf = calloc(1, *len);
	if (!buf)
		return NULL;
	uint32_t ver = KEY_VERSION, kb = kf->bits / 8;
	memcpy(buf, KEY_MAGIC, 8);
	memcpy(buf + 8, &ver, 4);
	memcpy(buf + 12, &kb, 4);
	memcpy(buf + 16, kf->key, kb);
	memcpy(buf + 48, &kf->nrec, 4);
	for (uint32_t i = 0; i < kf->nrec; i++) {
		memcpy(buf + KEY_HDR + i * KEY_REC, kf->rec[i].uuid, 16);
		memcpy(buf + KEY_HDR + i * KEY_REC + 16, &kf->rec[i].generation, 8);
	}
	uint32_t crc = file_crc(buf, *len);
	memcpy(buf + 52, &crc, 4);
	return buf;
}

/* sync_dir -- fsync the directory holding path (a rename in it is durable);
 * 0 or -errno. */
int sync_dir(const char *path)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == path)
		snprintf(dir, sizeof(dir), "/");
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int rc = fsync(fd) == 0 || errno == EINVAL ? 0 : -errno;
	close(fd);
	return rc;
}

/* key_temp_path -- "<path>.new", where a key file's next content is written. */
static void key_temp_path(const char *path, char *out, size_t n)
{
	snprintf(out, n, "%s%s", path, KEY_NEW_SUFFIX);
}

/* write_file -- kf into a new 0600 file tmp (O_EXCL: never through another
 * file or link), fsynced; the key's path for messages. */
static int write_file(const char *path, const char *tmp, const struct keyfile *kf)
{
	size_t len;
	uint8_t *buf = serialize(kf, &len);
	if (!buf)
		return emu_err(-ENOMEM, "out of memory");
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	int e = errno, ok = 0;
	if (fd >= 0) {
		ok = write(fd, buf, len) == (ssize_t)len && fsync(fd) == 0;
		e = errno;
		close(fd);
		if (!ok)
			unlink(tmp); /* made by this call: ours */
	}
	OPENSSL_cleanse(buf, len);
	free(buf);
	if (ok)
		return 0;
	int sys = e == ENOENT || e == ENOTDIR || e == EACCES || e == EROFS ||
		  e == ENAMETOOLONG || e == ENOSPC;
	return emu_err(sys ? -e : SPM_E_KEYFILE, "key file %s: cannot write %s: %s", path, tmp,
		       strerror(e));
}

/* write_temp -- kf into tmp, "<path>.new", where a raise writes the key
 * file's next content.  Only under the key file's flock (key_raise): a
 * "<path>.new" there is what a raise killed before its rename left, and is
 * replaced. */
static int write_temp(const char *path, const char *tmp, const struct keyfile *kf)
{
	if (unlink(tmp) != 0 && errno != ENOENT)
		return emu_err(SPM_E_KEYFILE, "key file %s: cannot remove %s: %s", path, tmp,
			       strerror(errno));
	return write_file(path, tmp, kf);
}

/* move_temp -- tmp renamed to path (over it, or only where path does not
 * exist: noreplace), the directory synced; tmp removed if that fails. */
static int move_temp(const char *path, const char *tmp, int noreplace)
{
	int rc = noreplace ? rename_noreplace(tmp, path) : (rename(tmp, path) ? -errno : 0);
	if (rc) {
		unlink(tmp);
		return emu_err(rc == -EEXIST ? -EEXIST : SPM_E_KEYFILE, "key file %s: cannot "
			       "put it in place: %s", path, strerror(-rc));
	}
	if ((rc = sync_dir(path)))
		return emu_err(SPM_E_KEYFILE, "key file %s: cannot sync its directory: %s", path,
			       strerror(-rc));
	return 0;
}

/* key_new_path -- where a creation of pool uuid writes its new key before
 * its commit: "<path>.new.<the uuid's first 4 bytes in hex>", a name of
 * that creation alone (two creations naming one new key file each write
 * their own, and the second commit finds the first's key in place). */
void key_new_path(const char *path, const uint8_t uuid[16], char *out, size_t n)
{
	snprintf(out, n, "%s%s.%02x%02x%02x%02x", path, KEY_NEW_SUFFIX, uuid[0], uuid[1], uuid[2],
		 uuid[3]);
}

/* key_new -- a fresh random key of bits with one record, the pool uuid at
 * generation 0, written to key_new_path (key_commit_new puts it in place). */
int key_new(const char *path, unsigned bits, const uint8_t uuid[16], struct keyfile *kf)
{
	memset(kf, 0, sizeof(*kf));
	kf->bits = bits;
	if (RAND_bytes(kf->key, (int)(bits / 8)) != 1)
		return emu_err(SPM_E_CRYPTO, "OpenSSL: no random bytes for a key");
	kf->rec = calloc(1, sizeof(*kf->rec));
	if (!kf->rec)
		return emu_err(-ENOMEM, "out of memory");
	kf->nrec = 1;
	memcpy(kf->rec[0].uuid, uuid, 16);
	char tmp[PATH_MAX + 16];
	key_new_path(path, uuid, tmp, sizeof(tmp));
	return write_file(path, tmp, kf);
}

/* key_commit_new -- the key written by key_new, put at path where no file
 * is (-EEXIST if one is: another creation's key came first). */
int key_commit_new(const char *path, const uint8_t uuid[16])
{
	char tmp[PATH_MAX + 16];
	key_new_path(path, uuid, tmp, sizeof(tmp));
	return move_temp(path, tmp, 1);
}

/* key_write_new -- kf, a re-key's new key (rekey.c), written to
 * key_new_path(path, uuid) beside the key file it is to replace. */
int key_write_new(const char *path, const uint8_t uuid[16], const struct keyfile *kf)
{
	char tmp[PATH_MAX + 16];
	key_new_path(path, uuid, tmp, sizeof(tmp));
	return write_file(path, tmp, kf);
}

/* key_commit_replace -- the key written by key_write_new renamed over the
 * key file at path, the directory synced.  Unlike move_temp, a failed
 * rename keeps the temporary: the pool's files may already need that key. */
int key_commit_replace(const char *path, const uint8_t uuid[16])
{
	char tmp[PATH_MAX + 16];
	key_new_path(path, uuid, tmp, sizeof(tmp));
	if (rename(tmp, path) != 0)
		return emu_err(SPM_E_KEYFILE, "key file %s: cannot put the new key %s in place: %s",
			       path, tmp, strerror(errno));
	int rc = sync_dir(path);
	if (rc)
		return emu_err(SPM_E_KEYFILE, "key file %s: cannot sync its directory: %s", path,
			       strerror(-rc));
	return 0;
}

/* key_has_room -- kf can record the pool uuid (it has it, or room for it). */
int key_has_room(const struct keyfile *kf, const uint8_t uuid[16])
{
	return find_record(kf, uuid) || kf->nrec < KEY_MAX_RECS;
}

/* set_record -- kf's record of uuid raised to gen (added if missing). */
static int set_record(struct keyfile *kf, const uint8_t uuid[16], uint64_t gen)
{
	struct keyfile_rec *r = find_record(kf, uuid);
	if (r) {
		if (r->generation < gen)
			r->generation = gen;
		return 0;
	}
	if (kf->nrec >= KEY_MAX_RECS)
		return emu_err(SPM_E_KEYFILE, "key file: records of %u pools, no room for "
			       "another", KEY_MAX_RECS);
	void *more = realloc(kf->rec, (kf->nrec + 1) * sizeof(*kf->rec));
	if (!more)
		return emu_err(-ENOMEM, "out of memory");
	kf->rec = more;
	memcpy(kf->rec[kf->nrec].uuid, uuid, 16);
	kf->rec[kf->nrec++].generation = gen;
	return 0;
}

/* lock_current -- the key file at path opened and flocked, and still the
 * file at path once locked (a raise by another process renames a new file
 * in: its waiters lock the old one and must look again). */
static int lock_current(const char *path, struct stat *st)
{
	for (int tries = 0; tries < 100; tries++) {
		int fd = open_trusted(path, 0, st);
		if (fd < 0)
			return fd;
		if (flock(fd, LOCK_EX) != 0) {
			int e = errno;
			close(fd);
			return emu_err(SPM_E_KEYFILE, "key file %s: flock: %s", path, strerror(e));
		}
		if (same_file(fd, path))
			return fd;
		close(fd);
	}
	return emu_err(SPM_E_KEYFILE, "key file %s: keeps being replaced", path);
}

/* key_raise -- the record of pool uuid in the key file at path raised to
 * gen, crash-safely; the key there must still be key (bits), the pool's. */
int key_raise(const char *path, const uint8_t uuid[16], uint64_t gen, const uint8_t *key,
	      unsigned bits)
{
	struct stat st;
	int fd = lock_current(path, &st);
	if (fd < 0)
		return fd;
	struct keyfile kf;
	int rc = read_fd(fd, path, &st, &kf);
	if (!rc && (kf.bits != bits || CRYPTO_memcmp(kf.key, key, bits / 8) != 0))
		rc = emu_err(SPM_E_KEYFILE, "key file %s: replaced by another key while the pool "
			     "was open", path);
	if (!rc && key_generation(&kf, uuid) >= gen && !kf.legacy)
		goto out; /* already recorded */
	if (!rc)
		rc = set_record(&kf, uuid, gen);
	char tmp[PATH_MAX + 8];
	key_temp_path(path, tmp, sizeof(tmp));
	if (!rc)
		rc = write_temp(path, tmp, &kf);
	if (!rc)
		rc = move_temp(path, tmp, 0);
out:
	key_free(&kf);
	close(fd); /* unlocks */
	return rc;
}

/* key_is_leftover -- the key file at path is one an interrupted creation of
 * pool uuid made: trusted, and recording that pool alone. */
int key_is_leftover(const char *path, const uint8_t uuid[16])
{
	struct keyfile kf;
	int ours = key_read(path, &kf) == 0 && kf.nrec == 1 &&
		   memcmp(kf.rec[0].uuid, uuid, 16) == 0 && kf.rec[0].generation == 0;
	key_free(&kf);
	emu_err_clear(); /* not a key of this creation's: no error of the caller's */
	return ours;
}

/* rename_noreplace -- rename from to to where no file is at to; 0 or -errno
 * (-EEXIST if there is one).  renameat2(RENAME_NOREPLACE) where the file
 * system has it, else link and unlink. */
int rename_noreplace(const char *from, const char *to)
{
#ifdef RENAME_NOREPLACE
	if (renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EINVAL && errno != ENOSYS)
		return -errno;
#endif
	if (link(from, to) != 0)
		return -errno;
	return unlink(from) == 0 ? 0 : -errno;
}
