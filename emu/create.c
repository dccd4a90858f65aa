/*
 * create.c -- pool creation as one atomic step.  spm_create makes the pool's
 * files under temporary names, "<path>.new" (the data file: the creation's
 * anchor) and "<path>.meta.new", and a new key as "<key>.new.<id>" (id: the
 * first bytes of the new pool's uuid in hex); it writes them completely,
 * then puts them in place -- the key, the meta file, and last the data
 * file, each by a rename that never replaces a file.  The data file's
 * rename is the commit: before it there is no pool at <path>, after it the
 * pool opens complete.
 *
 * Each temporary file is made with O_EXCL and flocked through the
 * descriptor that made it, before anything else, and its first bytes name
 * the creation: the anchor's header page carries the pool's data header
 * and the mark CREATE_MARK (cleared once the pool stands at its name, and
 * by any later open), the meta file's first bytes its superblock with the
 * same uuid.
 *
 * A creation killed before its commit leaves temporaries (and perhaps the
 * key and meta file already in place).  The next spm_create of the path,
 * where no file is at <path>, clears them: an anchor nobody holds the lock
 * of, that carries the mark (or is empty: killed as it was made), names the
 * uuid of the creation that made it; the temporaries of that uuid, and a
 * meta file or key file in place that is that uuid's alone, are removed.
 * Nothing else is: a file at one of these names that is not such a
 * leftover makes spm_create fail with -EEXIST (or SPM_E_BUSY where another
 * process holds the anchor's lock: a creation under way).
 *
 * Also here: the data file's first content (create_fill_ciphertext) and the
 * limits on the names of a pool's files (check_names).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "spm.h"
#include "emu_internal.h"

/* base_len -- the length of path's last component. */
static size_t base_len(const char *path)
{
	const char *slash = strrchr(path, '/');
	return strlen(slash ? slash + 1 : path);
}

/*
 * check_names -- the names of a pool's files fit the file system's limits:
 * <path> with the longest suffix spm adds (".key.new.XXXXXXXX", a new
 * key's temporary name), and a named key file with ".new.XXXXXXXX".
 * -ENAMETOOLONG otherwise, naming the limit.
 */
int check_names(const char *path, const char *key_path)
{
	const size_t suffix = strlen(".key.new.XXXXXXXX"), key_suffix = strlen(".new.XXXXXXXX");
	if (base_len(path) + suffix > NAME_MAX || strlen(path) + suffix >= PATH_MAX)
		return emu_err(-ENAMETOOLONG, "%s: file name too long: a pool's name may have at "
			       "most %zu bytes (%u less the \".key.new.XXXXXXXX\" spm adds)", path,
			       (size_t)NAME_MAX - suffix, (unsigned)NAME_MAX);
	if (key_path && (base_len(key_path) + key_suffix > NAME_MAX ||
			 strlen(key_path) + key_suffix >= PATH_MAX))
		return emu_err(-ENAMETOOLONG, "key file %s: file name too long (at most %zu "
			       "bytes: spm writes it as \"<name>.new.XXXXXXXX\" first)", key_path,
			       (size_t)NAME_MAX - key_suffix);
	return 0;
}

/* create_temp_paths -- the temporary names of a creation of path. */
void create_temp_paths(const char *path, char *data, char *meta, size_t n)
{
	snprintf(data, n, "%s.new", path);
	snprintf(meta, n, "%s.meta.new", path);
}

/* file_uuid -- the uuid at offset 16 of the regular file at path (the data
 * header's and the superblock's alike) if it starts with magic; 0 if not. */
int file_uuid(const char *path, const char *magic, uint8_t uuid[16])
{
	uint8_t head[32];
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return 0;
	struct stat st;
	ssize_t n = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? pread(fd, head, sizeof(head), 0)
							       : -1;
	close(fd);
	if (n != (ssize_t)sizeof(head) || memcmp(head, magic, 8) != 0)
		return 0;
	memcpy(uuid, head + 16, 16);
	return 1;
}

/* anchor_read -- what the file open at fd is: 1 an anchor (a data header
 * and the creation mark; its uuid in uuid), 0 an empty file (an anchor made
 * and killed before its first write), -1 anything else. */
int anchor_read(int fd, uint8_t uuid[16])
{
	uint8_t head[CREATE_HEAD];
	struct data_hdr dh;
	struct stat st;
	ssize_t n = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? pread(fd, head, sizeof(head), 0)
							       : -1;
	if (n == 0)
		return 0;
	memcpy(&dh, head, sizeof(dh));
	if (n != (ssize_t)sizeof(head) || memcmp(dh.magic, DH_MAGIC, 8) != 0 ||
	    memcmp(head + CREATE_MARK_OFF, CREATE_MARK, sizeof(CREATE_MARK)) != 0)
		return -1;
	memcpy(uuid, dh.uuid, 16);
	return 1;
}

/* is_empty -- path is an empty regular file. */
static int is_empty(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0;
}

/* meta_is_leftover -- the file at path is a meta file of pool uuid, or
 * empty (made, killed before its first write). */
static int meta_is_leftover(const char *path, const uint8_t uuid[16])
{
	uint8_t u[16];
	return is_empty(path) || (file_uuid(path, SB_MAGIC, u) && memcmp(u, uuid, 16) == 0);
}

/* unlink_if -- remove path if it exists; 0 or an error naming it. */
static int unlink_if(const char *path)
{
	if (unlink(path) == 0 || errno == ENOENT)
		return 0;
	return emu_err(-errno, "%s: cannot remove a leftover of an interrupted creation: %s",
		       path, strerror(errno));
}

/* clear_keys -- a creation of uuid's new key: its temporary, and the key
 * file in place if it records that pool alone, at the default key path and
 * at the one this creation names. */
static int clear_keys(const char *path, const char *named_key, const uint8_t uuid[16])
{
	char key[PATH_MAX + 16], tmp[PATH_MAX + 32];
	const char *paths[2] = {key, named_key};
	snprintf(key, sizeof(key), "%s.key", path);
	int rc = 0;
	for (unsigned i = 0; i < 2 && !rc; i++) {
		if (!paths[i])
			continue;
		key_new_path(paths[i], uuid, tmp, sizeof(tmp));
		rc = unlink_if(tmp);
		if (!rc && key_is_leftover(paths[i], uuid))
			rc = unlink_if(paths[i]);
	}
	return rc;
}

/*
 * create_clear_leftover -- remove what an interrupted creation of path left
 * (see the top of this file); called where no file is at path.  named_key:
 * the key file this creation names (key_file=), or NULL.  0 if nothing of
 * an interrupted creation is left.
 */
int create_clear_leftover(const char *path, const char *named_key)
{
	char tmp_data[PATH_MAX + 16], tmp_meta[PATH_MAX + 16], meta[PATH_MAX + 16];
	create_temp_paths(path, tmp_data, tmp_meta, sizeof(tmp_data));
	snprintf(meta, sizeof(meta), "%s.meta", path);
	int fd = open(tmp_data, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0) {
		if (errno == ENOENT)
			return 0;
		return emu_err(errno == ELOOP ? -EEXIST : -errno, "%s exists and is not a pool "
			       "being created (spm needs that name to create %s)", tmp_data, path);
	}
	uint8_t uuid[16];
	int known = anchor_read(fd, uuid), rc = 0;
	if (known < 0)
		rc = emu_err(-EEXIST, "%s exists and is not a pool being created (spm needs that "
			     "name to create %s)", tmp_data, path);
	if (!rc && flock(fd, LOCK_EX | LOCK_NB) != 0)
		rc = errno == EWOULDBLOCK ? emu_err(SPM_E_BUSY, "%s: being created by another "
						    "process", path)
					  : emu_err(-errno, "%s: flock: %s", tmp_data,
						    strerror(errno));
	/* locked: still the file at that name (not removed and made anew by a
	 * creation that cleared it before this one locked it)? */
	if (!rc && !same_file(fd, tmp_data))
		rc = emu_err(SPM_E_BUSY, "%s: being created by another process", path);
	if (!rc && known && meta_is_leftover(meta, uuid))
		rc = unlink_if(meta);
	if (!rc && known)
		rc = clear_keys(path, named_key, uuid);
	/* the meta temporary: of that uuid; an anchor killed before its first
	 * write made none, so then only an empty one is removed */
	if (!rc && (known ? meta_is_leftover(tmp_meta, uuid) : is_empty(tmp_meta)))
		rc = unlink_if(tmp_meta);
	if (!rc)
		rc = unlink_if(tmp_data);
	close(fd); /* unlocks */
	return rc;
}

/* place -- rename from to to where no file is; 0 or an error naming to. */
static int place(const char *from, const char *to)
{
	int rc = rename_noreplace(from, to);
	if (rc)
		return emu_err(rc, "%s: %s", to, rc == -EEXIST ? "file exists (made while the pool "
			       "was being created)" : strerror(-rc));
	return 0;
}

/*
 * create_commit -- put a creation's files in place: its new key (if it
 * made one), the meta file, then the data file, the commit.  On failure
 * what was placed is removed again and the temporaries are left for the
 * caller's emu_discard.
 */
int create_commit(struct emu *e)
{
	int rc = 0;
	if (e->made_key && (rc = key_commit_new(e->made_key, e->sb_uuid)))
		return rc;
	emu_crash_point("create.key_placed");
	if ((rc = place(e->media.meta_path, e->final_meta))) {
		if (e->made_key)
			unlink(e->made_key);
		return rc;
	}
	emu_crash_point("create.meta_placed");
	if ((rc = place(e->media.data_path, e->final_data))) {
		if (rename(e->final_meta, e->media.meta_path) != 0)
			unlink(e->final_meta);
		if (e->made_key)
			unlink(e->made_key);
		return rc;
	}
	(void)sync_dir(e->final_data);
	/* the files have their names: from here on they are the pool's */
	char *d = e->media.data_path, *m = e->media.meta_path;
	e->media.data_path = e->final_data;
	e->media.meta_path = e->final_meta;
	e->final_data = d;
	e->final_meta = m;
	free(e->made_key);
	e->made_key = NULL; /* now the pool's: never removed by spm */
	free(e->made_key_tmp);
	e->made_key_tmp = NULL;
	e->creating = 0;
	emu_crash_point("create.committed");
	create_mark_clear(e);
	return 0;
}

/* create_mark_clear -- the data file's creation mark cleared: it stands at
 * its name (after the commit, and at every later open, in case the commit
 * was the last thing a killed creation did). */
void create_mark_clear(struct emu *e)
{
	static const uint8_t zero[sizeof(CREATE_MARK)];
	uint8_t *mark = e->media.data + CREATE_MARK_OFF;
	if (memcmp(mark, zero, sizeof(zero)) == 0)
		return;
	memset(mark, 0, sizeof(zero));
	media_persist(&e->media, mark, sizeof(zero));
}

/*
 * create_fill_ciphertext -- every line of the heap area of a new data file
 * holds ciphertext from creation on: the encryption of the line's content,
 * zeros, under counter 0, its counter before any write (every read treats
 * counter 0 as the zero line, and every write takes a larger counter, so
 * these pads encrypt zeros and nothing else).  Without it the lines never
 * written would be zeros, and the file would show which lines the program
 * has used.  Page 0 (the plaintext data header) is left as it is.
 */
int create_fill_ciphertext(struct emu *e)
{
	enum { BATCH = 1024 };
	uint64_t lines[BATCH], ctrs[BATCH] = {0};
	const uint64_t first = EMU_DATA_HDR_SIZE / EMU_LINE;
	for (uint64_t l = first; l < e->nlines; l += BATCH) {
		unsigned n = e->nlines - l < BATCH ? (unsigned)(e->nlines - l) : BATCH;
		for (unsigned i = 0; i < n; i++)
			lines[i] = l + i;
		uint8_t *dst = e->media.data + l * EMU_LINE;
		if (crypto_line_pads(e->crypto, lines, ctrs, n, dst))
			return -1;
	}
	media_persist(&e->media, e->media.data + EMU_DATA_HDR_SIZE,
		      (e->nlines - first) * EMU_LINE);
	return 0;
}
