/*
 * create.c -- pool creation as one atomic step.  spm_create makes the pool's
 * files under temporary names, "<path>.new" (the data file, flocked for the
 * whole creation: the anchor) and "<path>.meta.new", and a new key as
 * "<key>.new"; it writes them completely, then puts them in place -- the
 * key, the meta file, and last the data file, each by a rename that never
 * replaces a file.  The data file's rename is the commit: before it there
 * is no pool at <path>, after it the pool opens complete.
 *
 * A creation killed before its commit leaves temporaries (and perhaps the
 * key and meta file already in place).  The next spm_create of the path
 * clears them: an anchor nobody holds the lock of, with an spm data header
 * (or none yet), names the uuid of the creation that made it; the meta
 * file and key file of that uuid, and the temporaries, are removed.
 * Nothing else is: a file at one of these names that is not such a
 * leftover makes spm_create fail with -EEXIST, as before.
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
 * <path> with the longest suffix spm adds (".meta.new"), and the key file
 * with ".new".  -ENAMETOOLONG otherwise, naming the limit.
 */
int check_names(const char *path, const char *key_path)
{
	const size_t suffix = strlen(".meta.new"), key_suffix = strlen(".new");
	if (base_len(path) + suffix > NAME_MAX || strlen(path) + suffix >= PATH_MAX)
		return emu_err(-ENAMETOOLONG, "%s: file name too long: a pool's name may have at "
			       "most %zu bytes (%u less the \".meta.new\" spm adds)", path,
			       (size_t)NAME_MAX - suffix, (unsigned)NAME_MAX);
	if (key_path && (base_len(key_path) + key_suffix > NAME_MAX ||
			 strlen(key_path) + key_suffix >= PATH_MAX))
		return emu_err(-ENAMETOOLONG, "key file %s: file name too long (at most %zu "
			       "bytes: spm writes it as \"<name>.new\" first)", key_path,
			       (size_t)NAME_MAX - key_suffix);
	return 0;
}

/* create_temp_paths -- the temporary names of a creation of path. */
void create_temp_paths(const char *path, char *data, char *meta, size_t n)
{
	snprintf(data, n, "%s.new", path);
	snprintf(meta, n, "%s.meta.new", path);
}

/* dh_is_zero -- n zero bytes? */
static int all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return 0;
	return 1;
}

/* meta_uuid_is -- the file at path is a meta file of the pool uuid. */
static int meta_uuid_is(const char *path, const uint8_t uuid[16])
{
	struct superblock sb;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return 0;
	ssize_t n = pread(fd, &sb, sizeof(sb), 0);
	close(fd);
	return n == (ssize_t)sizeof(sb) && memcmp(sb.magic, SB_MAGIC, 8) == 0 &&
	       memcmp(sb.uuid, uuid, 16) == 0;
}

/* unlink_if -- remove path if it exists; 0 or an error naming it. */
static int unlink_if(const char *path)
{
	if (unlink(path) == 0 || errno == ENOENT)
		return 0;
	return emu_err(-errno, "%s: cannot remove a leftover of an interrupted creation: %s",
		       path, strerror(errno));
}

/* read_anchor -- the uuid in the anchor open at fd (*known = 0: it has no
 * header yet); -EEXIST if it is not an anchor spm made. */
static int read_anchor(int fd, const char *tmp_data, uint8_t uuid[16], int *known)
{
	struct data_hdr dh;
	struct stat st;
	*known = 0;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
		return emu_err(-EEXIST, "%s exists and is not a pool being created", tmp_data);
	ssize_t n = pread(fd, &dh, sizeof(dh), 0);
	if (n < 0)
		return emu_err(-errno, "%s: %s", tmp_data, strerror(errno));
	if (all_zero((const uint8_t *)&dh, (size_t)n))
		return 0; /* made, its header not yet written */
	if (n != (ssize_t)sizeof(dh) || memcmp(dh.magic, DH_MAGIC, 8) != 0)
		return emu_err(-EEXIST, "%s exists and is not a pool being created", tmp_data);
	memcpy(uuid, dh.uuid, 16);
	*known = 1;
	return 0;
}

/*
 * create_clear_leftover -- remove what an interrupted creation of path left
 * (see the top of this file); key_path is the key file this creation would
 * make (NULL: it adopts an existing key, which is never removed).  0 if
 * nothing is left; SPM_E_BUSY if another process is creating the pool now.
 */
int create_clear_leftover(const char *path, const char *key_path)
{
	char tmp_data[PATH_MAX + 16], tmp_meta[PATH_MAX + 16], meta[PATH_MAX + 16];
	create_temp_paths(path, tmp_data, tmp_meta, sizeof(tmp_data));
	snprintf(meta, sizeof(meta), "%s.meta", path);
	int fd = open(tmp_data, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0) {
		if (errno == ENOENT)
			return 0;
		return emu_err(errno == ELOOP ? -EEXIST : -errno, "%s exists and is not a pool "
			       "being created", tmp_data);
	}
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		int e = errno;
		close(fd);
		if (e == EWOULDBLOCK)
			return emu_err(SPM_E_BUSY, "%s: being created by another process", path);
		return emu_err(-e, "%s: flock: %s", tmp_data, strerror(e));
	}
	uint8_t uuid[16];
	int known, rc = read_anchor(fd, tmp_data, uuid, &known);
	struct stat st;
	if (!rc && known && stat(path, &st) != 0 && meta_uuid_is(meta, uuid))
		rc = unlink_if(meta);
	if (!rc && known && key_path && key_is_leftover(key_path, uuid))
		rc = unlink_if(key_path);
	if (!rc)
		rc = unlink_if(tmp_meta);
	if (!rc)
		rc = unlink_if(tmp_data);
	close(fd); /* unlocks */
	return rc;
}

/* sync_parent -- fsync the directory holding path. */
static void sync_parent(const char *path)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else
		snprintf(dir, sizeof(dir), "%.*s", slash == path ? 1 : (int)(slash - path), path);
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		(void)fsync(fd);
		close(fd);
	}
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
	if (e->made_key && (rc = key_commit_new(e->made_key)))
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
	sync_parent(e->final_data);
	/* the files have their names: from here on they are the pool's */
	char *d = e->media.data_path, *m = e->media.meta_path;
	e->media.data_path = e->final_data;
	e->media.meta_path = e->final_meta;
	e->final_data = d;
	e->final_meta = m;
	free(e->made_key);
	e->made_key = NULL; /* now the pool's: never removed by spm */
	e->creating = 0;
	emu_crash_point("create.committed");
	return 0;
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
