/*
 * rekey.c -- a deliberate restore made safe: a pool re-keyed under a new
 * identity.  A restored copy of a pool's files is refused (SPM_E_ROLLBACK,
 * emu.c "Epochs"): every write after it would re-encrypt lines under (line,
 * counter) pairs the pool has used since the copy was taken.  Re-keying
 * gives the copy a new uuid, hence a new encryption key (HKDF(key, uuid)),
 * and re-encrypts every line of its data file under it with the counters it
 * has: no pad of the new key was ever used, and the key file's record of
 * the old uuid keeps refusing every other copy.
 *
 * The new files are made as a creation's are (create.c: "<path>.new" with
 * the creation mark, "<path>.meta.new", each locked through the descriptor
 * that made it), then renamed over the pool's: the meta file, then the data
 * file -- the commit.  A process killed before the first rename leaves the
 * pool as it was (the next re-key clears the temporaries); killed between
 * the two, the meta file has the new uuid and the data file the old one,
 * and the next spm_rekey finishes the commit (spm_open says so).
 *
 * Only a pool closed cleanly (a backup of a closed pool) is re-keyed: a
 * dirty one would need a recovery, and recovery re-encrypts lines under the
 * old key.
 *
 * Under a new key (emu_rekey_key, spm_rekey_key): the same, with a new
 * random AES key as well as a new uuid, and the key file replaced.  It
 * refuses a key file that records any pool but this one (another pool may
 * use that key).  Everything is written before anything is renamed: the
 * data and meta temporaries, then the new key, a key file recording the new
 * uuid alone at generation 0, at "<key>.new.<id>" (key_new_path), all
 * fsynced.  Then three renames, each followed by a directory sync:
 *   1. "<path>.meta.new" -> "<path>.meta"   (rekey.meta_placed)
 *   2. "<path>.new" -> "<path>"             (rekey.data_placed)
 *   3. "<key>.new.<id>" -> "<key>"          (rekey.committed)
 * The old key stays until the last.  Killed before 1: the pool is as it
 * was, under the old key (the next re-key clears the temporaries, the new
 * key's too).  Killed after 1: the meta file's key check value is the
 * waiting new key's, not the key file's -- that state is recognised by
 * emu_rekey_key_finish, which every spm_open (and every re-key) calls
 * before it reads the pool: it does 2 if not done and 3, under the lock of
 * the new data file (SPM_E_BUSY while the re-key runs), and the pool opens
 * under the new key.  No rename undoes another, so every state between
 * them is one of these.
 */
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/rand.h>

#include "spm.h"
#include "emu_internal.h"


/* anchor_uuid -- the uuid of the anchor at tmp (0 if there is none). */
static int anchor_uuid(const char *tmp, uint8_t uuid[16])
{
	int fd = open(tmp, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return 0;
	int r = anchor_read(fd, uuid);
	close(fd);
	return r == 1;
}

/* interrupted -- the state a re-key killed between its two renames
 * leaves: a marked anchor at tmp_data with the meta file's uuid, the data
 * file at path with another. */
static int interrupted(const char *path, const char *meta, const char *tmp_data)
{
	uint8_t a[16], m[16], d[16];
	return anchor_uuid(tmp_data, a) && file_uuid(meta, SB_MAGIC, m) &&
	       memcmp(a, m, 16) == 0 && file_uuid(path, DH_MAGIC, d) && memcmp(d, a, 16) != 0;
}

/* rekey_finish -- a re-key killed between its two renames finished: the
 * anchor put in place.  1 if it was finished, 0 if there was none, or an
 * error. */
static int rekey_finish(const char *path, const char *meta, const char *tmp_data)
{
	if (!interrupted(path, meta, tmp_data))
		return 0;
	int fd = open(tmp_data, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) != 0) {
		if (fd >= 0)
			close(fd);
		return emu_err(SPM_E_BUSY, "%s: being re-keyed by another process", path);
	}
	/* locked: still that anchor, still that state? */
	int rc = 0;
	if (same_file(fd, tmp_data) && interrupted(path, meta, tmp_data))
		rc = rename(tmp_data, path) == 0 ? 1 : emu_err(-errno, "%s: %s", path,
							      strerror(errno));
	else
		rc = emu_err(SPM_E_BUSY, "%s: being re-keyed by another process", path);
	close(fd);
	if (rc == 1)
		(void)sync_dir(path);
	return rc;
}

/* rekey_clear -- the temporaries of a re-key of the pool of uuid that was
 * killed before its renames: a marked anchor nobody holds locked naming
 * another uuid, and the meta temporary of the anchor's uuid (or empty).
 * Only those: the pool's own files are never touched.  0, or an error (a
 * file there that is not such a temporary: -EEXIST). */
static int rekey_clear(const char *path, const char *key_path, const uint8_t uuid[16])
{
	char tmp_data[PATH_MAX + 16], tmp_meta[PATH_MAX + 16];
	create_temp_paths(path, tmp_data, tmp_meta, sizeof(tmp_data));
	uint8_t a[16], m[16];
	struct stat st;
	if (lstat(tmp_data, &st) != 0)
		return lstat(tmp_meta, &st) == 0 ? emu_err(-EEXIST, "%s exists (spm needs that "
							   "name to re-key %s)", tmp_meta, path)
						 : 0;
	if (!anchor_uuid(tmp_data, a) || memcmp(a, uuid, 16) == 0)
		return emu_err(-EEXIST, "%s exists and is not a re-key's (spm needs that name to "
			       "re-key %s)", tmp_data, path);
	int fd = open(tmp_data, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) != 0 || !same_file(fd, tmp_data)) {
		if (fd >= 0)
			close(fd);
		return emu_err(SPM_E_BUSY, "%s: being re-keyed by another process", path);
	}
	int rc = 0;
	char tmp_key[PATH_MAX + 32]; /* a re-key under a new key wrote it after the anchor */
	key_new_path(key_path, a, tmp_key, sizeof(tmp_key));
	if (lstat(tmp_key, &st) == 0) {
		/* that re-key's key, or one it was killed writing (shorter than
		 * a key file of one record) */
		if (key_is_leftover(tmp_key, a) || (S_ISREG(st.st_mode) && st.st_size < 80))
			rc = unlink(tmp_key) == 0 ? 0 : emu_err(-errno, "%s: %s", tmp_key,
								strerror(errno));
		else
			rc = emu_err(-EEXIST, "%s exists and is not a re-key's", tmp_key);
	}
	if (!rc && lstat(tmp_meta, &st) == 0) {
		if (st.st_size == 0 || (file_uuid(tmp_meta, SB_MAGIC, m) && !memcmp(m, a, 16)))
			rc = unlink(tmp_meta) == 0 ? 0 : emu_err(-errno, "%s: %s", tmp_meta,
								 strerror(errno));
		else
			rc = emu_err(-EEXIST, "%s exists and is not a re-key's", tmp_meta);
	}
	if (!rc && unlink(tmp_data) != 0)
		rc = emu_err(-errno, "%s: %s", tmp_data, strerror(errno));
	close(fd);
	return rc;
}

/* check_clean -- the pool of sb can be re-keyed: encrypted, closed cleanly,
 * no queue entry in its ADR region. */
static int check_clean(const char *path, const struct superblock *sb, const uint8_t *meta)
{
	if (sb->state != SB_STATE_CLEAN)
		return emu_err(SPM_E_INVAL, "%s was not closed cleanly (a copy taken while it was "
			       "open): its recovery would encrypt under the old key, so it is not "
			       "re-keyed", path);
	const struct wq_entry *w = (const struct wq_entry *)(meta + sb->adr_off + ADR_HDR_SIZE);
	for (uint64_t i = 0; i < (uint64_t)sb->adr_data_cap + sb->adr_ctr_cap; i++)
		if (w[i].state & WQ_VALID)
			return emu_err(SPM_E_CORRUPT, "%s.meta: a clean pool with a queued write",
				       path);
	return 0;
}

/* line_counters -- the counters of the 64 lines from line first (a page)
 * in the counter storage of meta. */
static void line_counters(const struct superblock *sb, const uint8_t *meta, uint64_t first,
			  uint64_t ctr[64])
{
	const struct ctr_layout *lay = ctr_layout_of(sb->ctr_layout);
	const uint8_t *home = meta + sb->ctr_off;
	for (unsigned k = 0; k < 64; k += lay->lines_per_ctr_line)
		lay->decode(home + (first + k) / lay->lines_per_ctr_line * EMU_LINE,
			    sb->minor_bits, ctr + k);
}

/* reencrypt -- every line of the data file from page 1 on, from under
 * (old key, counter) to (new key, counter); a line at counter 0 holds zeros
 * and becomes the new key's ciphertext of zeros. */
static int reencrypt(struct crypto *old, struct crypto *neu, const struct superblock *sb,
		     const uint8_t *meta, const uint8_t *src, uint8_t *dst)
{
	uint64_t lines[64], ctr[64];
	uint8_t pad_old[64 * EMU_LINE], pad_new[64 * EMU_LINE];
	for (uint64_t page = EMU_DATA_HDR_SIZE / EMU_LINE; page < sb->nlines; page += 64) {
		line_counters(sb, meta, page, ctr);
		for (unsigned k = 0; k < 64; k++)
			lines[k] = page + k;
		if (crypto_line_pads(old, lines, ctr, 64, pad_old) ||
		    crypto_line_pads(neu, lines, ctr, 64, pad_new)) {
			OPENSSL_cleanse(pad_old, sizeof(pad_old));
			OPENSSL_cleanse(pad_new, sizeof(pad_new));
			return SPM_E_CRYPTO;
		}
		if ((page / 64) % 256 == 128)
			emu_crash_point("rekey.lines_done"); /* a kill in the middle */
		for (unsigned k = 0; k < 64; k++) {
			/* both pads combined first: no plaintext in the new file */
			uint8_t *d = dst + (page + k) * EMU_LINE;
			const uint8_t *s = src + (page + k) * EMU_LINE;
			if (ctr[k]) {
				line_xor(pad_old + k * EMU_LINE, pad_old + k * EMU_LINE,
					 pad_new + k * EMU_LINE);
				line_xor(d, s, pad_old + k * EMU_LINE);
			} else {
				memcpy(d, pad_new + k * EMU_LINE, EMU_LINE);
			}
		}
	}
	OPENSSL_cleanse(pad_old, sizeof(pad_old));
	OPENSSL_cleanse(pad_new, sizeof(pad_new));
	return 0;
}

/* new_page0s -- the first pages of the new files (data header page, meta
 * superblock page) from the pool's: the new uuid and key check value, their
 * checksums, epoch words 0 (a pool never opened: the key file has no record
 * of the new uuid), the creation mark in the data file's. */
static void new_page0s(const uint8_t *data, const uint8_t *meta, const uint8_t uuid[16],
		       const uint8_t kcv[16], uint8_t dpage[EMU_PAGE], uint8_t mpage[EMU_PAGE])
{
	memcpy(dpage, data, EMU_PAGE);
	memcpy(mpage, meta, EMU_PAGE);
	struct superblock *sb = (struct superblock *)mpage;
	memcpy(sb->uuid, uuid, 16);
	memcpy(sb->kcv, kcv, 16);
	sb->checksum = sb_crc(sb);
	memset(mpage + SB_EPOCH_OFF, 0, 8);
	memset(mpage + SB_NEXT_OFF, 0, 8);
	struct data_hdr *dh = (struct data_hdr *)dpage;
	memcpy(dh->uuid, uuid, 16);
	dh->checksum = data_hdr_crc(dh);
	memset(dpage + DH_EPOCH_OFF, 0, 8);
	memcpy(dpage + CREATE_MARK_OFF, CREATE_MARK, sizeof(CREATE_MARK));
}

/* make_copies -- the new files at the temporary names, locked, with the
 * re-keyed content; m holds them.  They name the new uuid from their first
 * bytes on (a re-key killed at any point leaves temporaries that a later
 * one can tell from the pool's own files). */
static int make_copies(struct media *m, const struct media *cur, const char *tmp_data,
		       const char *tmp_meta, const uint8_t uuid[16], const uint8_t kcv[16],
		       struct crypto *old, struct crypto *neu, const char *key_path,
		       const struct keyfile *kn, int *key_made)
{
	const struct superblock *sb = (const struct superblock *)cur->meta;
	uint8_t dpage[EMU_PAGE], mpage[EMU_PAGE];
	new_page0s(cur->data, cur->meta, uuid, kcv, dpage, mpage);
	int rc = media_create(m, tmp_data, tmp_meta, cur->data_len, cur->meta_len, EMU_DUR_NONE,
			      dpage, CREATE_HEAD, mpage, sizeof(struct superblock));
	if (rc)
		return rc;
	memcpy(m->meta + EMU_PAGE, cur->meta + EMU_PAGE, cur->meta_len - EMU_PAGE);
	memcpy(m->meta, mpage, EMU_PAGE);
	memset(m->meta + sb->adr_off + ADR_HDR_SIZE, 0, /* the freed queue slots */
	       ((size_t)sb->adr_data_cap + sb->adr_ctr_cap) * sizeof(struct wq_entry));
	memcpy(m->data, dpage, EMU_PAGE);
	if ((rc = reencrypt(old, neu, sb, cur->meta, cur->data, m->data)))
		return emu_err(rc, "OpenSSL: re-encryption failed");
	if (key_path) { /* a new key: written and fsynced beside the key file */
		if ((rc = key_write_new(key_path, uuid, kn)))
			return rc;
		*key_made = 1;
	}
	emu_crash_point("rekey.files_made");
	/* on the disk before they replace the pool's */
	if (msync(m->data, m->data_len, MS_SYNC) || msync(m->meta, m->meta_len, MS_SYNC))
		return emu_err(-errno, "%s: msync: %s", tmp_data, strerror(errno));
	return 0;
}

/* place -- the re-keyed files over the pool's: meta, then data (commit). */
static int place(struct media *m, const char *path, const char *meta)
{
	if (rename(m->meta_path, meta) != 0)
		return emu_err(-errno, "%s: %s", meta, strerror(errno));
	emu_crash_point("rekey.meta_placed");
	if (rename(m->data_path, path) != 0)
		return emu_err(-errno, "%s: %s (run spm_rekey again to finish)", path,
			       strerror(errno));
	(void)sync_dir(path);
	emu_crash_point("rekey.committed");
	memset(m->data + CREATE_MARK_OFF, 0, sizeof(CREATE_MARK));
	(void)msync(m->data, EMU_PAGE, MS_SYNC);
	return 0;
}

/* place_key -- the files re-keyed under a new key over the pool's: meta,
 * data, then the key (see the top of this file). */
static int place_key(struct media *m, const char *path, const char *meta, const char *key_path,
		     const uint8_t uuid[16])
{
	/* the temporaries' names on the disk before the first rename */
	(void)sync_dir(path);
	(void)sync_dir(key_path);
	if (rename(m->meta_path, meta) != 0)
		return emu_err(-errno, "%s: %s", meta, strerror(errno));
	(void)sync_dir(path);
	emu_crash_point("rekey.meta_placed");
	if (rename(m->data_path, path) != 0)
		return emu_err(-errno, "%s: %s (the next spm_open or spm_rekey_key finishes the "
			       "re-key)", path, strerror(errno));
	(void)sync_dir(path);
	emu_crash_point("rekey.data_placed");
	int rc = key_commit_replace(key_path, uuid);
	if (rc)
		return rc;
	emu_crash_point("rekey.committed");
	memset(m->data + CREATE_MARK_OFF, 0, sizeof(CREATE_MARK));
	(void)msync(m->data, EMU_PAGE, MS_SYNC);
	return 0;
}

/* new_key_identity -- a random uuid and a random key of bits in kn (a key
 * file recording that uuid alone, at generation 0), the key check value
 * and cipher of the key under the uuid. */
static int new_key_identity(struct keyfile *kn, unsigned bits, uint8_t uuid[16],
			    uint8_t kcv[16], struct crypto **neu)
{
	uint8_t enc[32];
	memset(kn, 0, sizeof(*kn));
	kn->bits = bits;
	if (RAND_bytes(uuid, 16) != 1 || RAND_bytes(kn->key, (int)(bits / 8)) != 1)
		return emu_err(SPM_E_CRYPTO, "OpenSSL: no random bytes for a key");
	if (!(kn->rec = calloc(1, sizeof(*kn->rec))))
		return emu_err(-ENOMEM, "out of memory");
	kn->nrec = 1;
	memcpy(kn->rec[0].uuid, uuid, 16);
	int rc = emu_derive_keys(kn->key, bits, uuid, enc, kcv);
	if (!rc)
		rc = crypto_new(neu, enc, bits);
	OPENSSL_cleanse(enc, sizeof(enc));
	return rc;
}

/* read_sb -- the superblock at the head of the meta file at path, if its
 * magic and checksum are right. */
static int read_sb(const char *path, struct superblock *sb)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return 0;
	struct stat st;
	ssize_t n = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? pread(fd, sb, sizeof(*sb), 0)
							       : -1;
	close(fd);
	return n == (ssize_t)sizeof(*sb) && memcmp(sb->magic, SB_MAGIC, 8) == 0 &&
	       sb->checksum == sb_crc(sb);
}

/* key_opens -- the key file at key_path holds the key of sb (its check
 * value under sb's uuid). */
static int key_opens(const char *key_path, const struct superblock *sb)
{
	struct keyfile kf;
	uint8_t enc[32], kcv[16];
	int ok = key_read(key_path, &kf) == 0 && kf.bits == sb->aes_bits &&
		 emu_derive_keys(kf.key, kf.bits, sb->uuid, enc, kcv) == 0 &&
		 CRYPTO_memcmp(kcv, sb->kcv, 16) == 0;
	OPENSSL_cleanse(enc, sizeof(enc));
	key_free(&kf);
	return ok;
}

/* key_pending -- the meta file at meta is one a re-key under a new key has
 * put in place and not yet followed by its key: the key file waiting at
 * key_new_path(key_path, its uuid) opens it, the one at key_path does not;
 * its uuid in uuid. */
static int key_pending(const char *meta, const char *key_path, uint8_t uuid[16])
{
	struct superblock sb;
	char tmp_key[PATH_MAX + 32];
	struct stat st;
	if (!read_sb(meta, &sb) || !sb.aes_bits)
		return 0;
	key_new_path(key_path, sb.uuid, tmp_key, sizeof(tmp_key));
	if (lstat(tmp_key, &st) != 0)
		return 0;
	int r = key_opens(tmp_key, &sb) && !key_opens(key_path, &sb);
	emu_err_clear(); /* the reads' errors are not the caller's */
	memcpy(uuid, sb.uuid, 16);
	return r;
}

/* emu_rekey_key_finish -- a re-key under a new key killed after its first
 * rename finished (see the top of this file): its data file, then its key
 * put in place, under the lock of the new data file.  1 if one was
 * finished, 0 if there was none, or an error. */
int emu_rekey_key_finish(const char *path, const char *key_path)
{
	char meta[PATH_MAX + 16], tmp_data[PATH_MAX + 16], tmp_meta[PATH_MAX + 16];
	uint8_t uuid[16], again[16], d[16], a[16];
	if (strlen(path) + 16 >= PATH_MAX || strlen(key_path) + 16 >= PATH_MAX)
		return 0; /* too long for a pool's names (check_names says so) */
	snprintf(meta, sizeof(meta), "%s.meta", path);
	create_temp_paths(path, tmp_data, tmp_meta, sizeof(tmp_data));
	if (!key_pending(meta, key_path, uuid))
		return 0;
	int placed = file_uuid(path, DH_MAGIC, d) && memcmp(d, uuid, 16) == 0;
	const char *lock = placed ? path : tmp_data;
	int fd = open(lock, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return emu_err(SPM_E_CORRUPT, "%s: its meta file is from a re-key under a new key "
			       "and its data file is missing (%s: %s)", path, lock,
			       strerror(errno));
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		close(fd);
		return emu_err(SPM_E_BUSY, "%s: being re-keyed by another process", path);
	}
	/* locked: still that file, still that state? */
	int rc = 0;
	if (!same_file(fd, lock) || !key_pending(meta, key_path, again) ||
	    memcmp(again, uuid, 16) != 0)
		rc = emu_err(SPM_E_BUSY, "%s: being re-keyed by another process", path);
	if (!rc && !placed) {
		if (anchor_read(fd, a) != 1 || memcmp(a, uuid, 16) != 0 ||
		    (file_uuid(path, DH_MAGIC, d) && memcmp(d, uuid, 16) == 0))
			rc = emu_err(SPM_E_CORRUPT, "%s: its meta file is from a re-key under a "
				     "new key, %s is not that re-key's data file", path, tmp_data);
		else if (rename(tmp_data, path) != 0)
			rc = emu_err(-errno, "%s: %s", path, strerror(errno));
		else
			(void)sync_dir(path);
	}
	if (!rc)
		rc = key_commit_replace(key_path, uuid);
	close(fd);
	return rc ? rc : 1;
}

/* new_identity -- a random uuid, and the key check value and cipher of the
 * key under it. */
static int new_identity(const struct keyfile *kf, uint8_t uuid[16], uint8_t kcv[16],
			struct crypto **neu)
{
	uint8_t enc[32];
	if (RAND_bytes(uuid, 16) != 1)
		return emu_err(SPM_E_CRYPTO, "OpenSSL: no random bytes for a UUID");
	int rc = emu_derive_keys(kf->key, kf->bits, uuid, enc, kcv);
	if (!rc)
		rc = crypto_new(neu, enc, kf->bits);
	OPENSSL_cleanse(enc, sizeof(enc));
	return rc;
}

/* old_cipher -- the cipher of the pool's key under its uuid, the key
 * checked against the superblock's check value. */
static int old_cipher(const char *path, const struct keyfile *kf, const struct superblock *sb,
		      struct crypto **old)
{
	uint8_t enc[32], kcv[16];
	if (kf->bits != sb->aes_bits)
		return emu_err(SPM_E_KEYFILE, "key file: not a %u-bit key (the pool's)",
			       sb->aes_bits);
	int rc = emu_derive_keys(kf->key, kf->bits, sb->uuid, enc, kcv);
	if (!rc && CRYPTO_memcmp(kcv, sb->kcv, 16) != 0)
		rc = emu_err(SPM_E_KEY, "wrong key for %s (key check value differs)", path);
	if (!rc)
		rc = crypto_new(old, enc, kf->bits);
	OPENSSL_cleanse(enc, sizeof(enc));
	return rc;
}

/* only_pool -- the key file kf records no pool but uuid (its key can be
 * replaced without locking another pool out). */
static int only_pool(const char *key_path, const struct keyfile *kf, const uint8_t uuid[16])
{
	for (uint32_t i = 0; i < kf->nrec; i++)
		if (memcmp(kf->rec[i].uuid, uuid, 16) != 0)
			return emu_err(SPM_E_INVAL, "key file %s records another pool as well (a key "
				       "shared by pools, or one kept by an earlier re-key): its key "
				       "is not replaced", key_path);
	return 0;
}

/* rekey -- re-key the clean pool at path (see the top of this file), under
 * a new key if new_key. */
static int rekey(const char *path, const struct emu_config *cfg, int new_key)
{
	int rc = emu_crash_init_checked();
	if (rc)
		return rc;
	char meta[PATH_MAX + 16], key_path[PATH_MAX + 16], tmp_data[PATH_MAX + 16],
		tmp_meta[PATH_MAX + 16];
	key_path_of(cfg->key_file, path, key_path, sizeof(key_path));
	if ((rc = check_names(path, key_path)))
		return rc;
	snprintf(meta, sizeof(meta), "%s.meta", path);
	create_temp_paths(path, tmp_data, tmp_meta, sizeof(tmp_data));
	/* an interrupted re-key under a new key: finished, and that is one */
	if ((rc = emu_rekey_key_finish(path, key_path)))
		return rc < 0 ? rc : 0;
	if ((rc = rekey_finish(path, meta, tmp_data)) < 0 || (rc && !new_key))
		return rc < 0 ? rc : 0;
	struct data_hdr dh;
	struct superblock sb;
	struct keyfile kf, kn;
	struct crypto *old = NULL, *neu = NULL;
	struct media cur, m;
	int key_made = 0;
	char tmp_key[PATH_MAX + 32];
	memset(&kf, 0, sizeof(kf));
	memset(&kn, 0, sizeof(kn));
	memset(&cur, 0, sizeof(cur));
	memset(&m, 0, sizeof(m));
	cur.lock_fd = cur.meta_lock_fd = m.lock_fd = m.meta_lock_fd = -1;
	uint8_t uuid[16], kcv[16];
	if ((rc = emu_validate(path, meta, &dh, &sb)))
		goto out;
	if (!sb.aes_bits) {
		rc = emu_err(SPM_E_INVAL, "%s: a plain pool has no key to change", path);
		goto out;
	}
	if (sb.mac_size) { /* its MACs, tree and registers would need the new key too */
		rc = emu_err(SPM_E_INVAL, "%s: a pool of an integrity design (design %.32s) "
			     "cannot be re-keyed", path, sb.design);
		goto out;
	}
	if (sb.dd_size) { /* its spare lines and free units are outside the mapped view */
		rc = emu_err(SPM_E_INVAL, "%s: a pool of a deduplicating design (design %.32s) "
			     "cannot be re-keyed", path, sb.design);
		goto out;
	}
	if ((rc = key_read(key_path, &kf)) || (rc = old_cipher(path, &kf, &sb, &old)) ||
	    (rc = media_open(&cur, path, EMU_DUR_NONE, 1)))
		goto out;
	/* locked: the headers are the ones checked (not files renamed in since),
	 * of one state of the pool (not an older meta file beside a newer data
	 * file: its counters would not decrypt the lines); what a re-key killed
	 * before its renames left is cleared */
	if (memcmp(cur.data, &dh, sizeof(dh)) != 0 ||
	    memcmp(cur.meta, &sb, offsetof(struct superblock, state)) != 0) {
		rc = emu_err(SPM_E_BUSY, "%s: changed while it was being re-keyed", path);
		goto out;
	}
	if ((rc = emu_check_epochs(&cur, &kf, sb.uuid)) ||
	    (new_key && (rc = only_pool(key_path, &kf, sb.uuid))) ||
	    (rc = rekey_clear(path, key_path, sb.uuid)) || (rc = check_clean(path, &sb, cur.meta)))
		goto out;
	if ((rc = new_key ? new_key_identity(&kn, sb.aes_bits, uuid, kcv, &neu)
			  : new_identity(&kf, uuid, kcv, &neu)))
		goto out;
	if (!new_key && !key_has_room(&kf, uuid)) {
		rc = emu_err(SPM_E_KEYFILE, "key file %s: it records as many pools as it can "
			     "hold; use another key file", key_path);
		goto out;
	}
	if ((rc = make_copies(&m, &cur, tmp_data, tmp_meta, uuid, kcv, old, neu,
			      new_key ? key_path : NULL, &kn, &key_made)))
		goto out;
	rc = new_key ? place_key(&m, path, meta, key_path, uuid) : place(&m, path, meta);
out:
	if (rc && m.data_path && !same_file(m.meta_lock_fd, meta)) {
		media_unlink_own(&m); /* nothing placed yet: the temporaries go */
		if (key_made) {
			key_new_path(key_path, uuid, tmp_key, sizeof(tmp_key));
			unlink(tmp_key);
		}
	}
	if (m.data_path)
		media_close(&m);
	if (cur.data_path)
		media_close(&cur);
	crypto_free(old);
	crypto_free(neu);
	key_free(&kf);
	key_free(&kn);
	return rc;
}

/* emu_rekey -- re-key the clean pool at path under a new uuid. */
int emu_rekey(const char *path, const struct emu_config *cfg)
{
	return rekey(path, cfg, 0);
}

/* emu_rekey_key -- re-key it under a new uuid and a new key. */
int emu_rekey_key(const char *path, const struct emu_config *cfg)
{
	return rekey(path, cfg, 1);
}
