/*
 * tcb.c -- the persistent registers of the integrity designs: the on-chip
 * state cc-NVM keeps in the trusted computing base (§4.2: ROOT_old and
 * ROOT_new, §4.3: N_wb), emulated as a file beside the key file,
 * "<key file>.tcb", with the key file's trust rules (the caller's own, mode
 * 0600, one name, opened without following links).  The pool's files never
 * hold them: an attacker who can write <path> and <path>.meta -- replay a
 * line with its counter and MAC, or put back an old copy of both files --
 * cannot make the tree in them match these roots.
 *
 * One record of 320 bytes per pool (its uuid, then two slots), records
 * appended as pools first use the file.  A write goes to the older slot with
 * the next sequence number and a CRC; a reader takes the intact slot with
 * the larger number, so a kill in the middle of a write leaves the old
 * registers or the new ones.  The record is mapped shared: a store is in the
 * page cache at once, which survives the process being killed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "spm.h"
#include "emu_internal.h"

struct tcb_slot {
	uint64_t seq; /* 0: never written */
	struct tcb_regs regs;
	uint32_t crc; /* of seq and regs */
	uint8_t pad[128 - 8 - sizeof(struct tcb_regs) - 4];
};
_Static_assert(sizeof(struct tcb_slot) == 128, "tcb slot layout");
struct tcb_rec {
	uint8_t uuid[16];
	uint8_t pad[48];
	struct tcb_slot slot[2];
};
_Static_assert(sizeof(struct tcb_rec) == 320, "tcb record layout");

struct tcb {
	void *map;
	size_t map_len;
	struct tcb_rec *rec;
	char *made; /* the file's path, if this open made it */
};

/* slot_crc -- the checksum of a slot's sequence number and registers. */
static uint32_t slot_crc(const struct tcb_slot *s)
{
	uLong c = crc32(0L, Z_NULL, 0);
	c = crc32(c, (const Bytef *)&s->seq, sizeof(s->seq));
	c = crc32(c, (const Bytef *)&s->regs, sizeof(s->regs));
	return (uint32_t)c;
}

/* find_or_add -- the offset of uuid's record in fd (appended if absent). */
static int find_or_add(int fd, const char *path, const uint8_t uuid[16], off_t *off,
		       int create)
{
	struct stat st;
	if (fstat(fd, &st) != 0)
		return emu_err(-errno, "%s: %s", path, strerror(errno));
	if (st.st_size % (off_t)sizeof(struct tcb_rec))
		return emu_err(SPM_E_KEYFILE, "%s: not an spm register file (its size is not "
			       "a whole number of records)", path);
	struct tcb_rec r;
	for (off_t at = 0; at < st.st_size; at += (off_t)sizeof(r)) {
		if (pread(fd, r.uuid, 16, at) != 16)
			return emu_err(SPM_E_KEYFILE, "%s: cannot read", path);
		if (memcmp(r.uuid, uuid, 16) == 0) {
			*off = at;
			return 0;
		}
	}
	if (!create)
		return emu_err(SPM_E_TAMPERED, "%s: has no registers of this pool: its tree's root "
			       "is gone, so nothing in it can be trusted", path);
	memset(&r, 0, sizeof(r));
	memcpy(r.uuid, uuid, 16);
	if (pwrite(fd, &r, sizeof(r), st.st_size) != (ssize_t)sizeof(r) || fsync(fd) != 0)
		return emu_err(-errno, "%s: %s", path, strerror(errno));
	*off = st.st_size;
	return 0;
}

/* tcb_open -- the registers of pool uuid beside key_path; create: made if
 * absent (a new pool), else a missing file or record is SPM_E_TAMPERED and
 * nothing is written. */
int tcb_open(struct tcb **out, const char *key_path, const uint8_t uuid[16], int create)
{
	char path[4096 + 8];
	if ((size_t)snprintf(path, sizeof(path), "%s.tcb", key_path) >= sizeof(path))
		return emu_err(-ENAMETOOLONG, "%s.tcb: name too long", key_path);
	int made = create;
	int fd = create ? open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600)
			: -1;
	if (!create || (fd < 0 && errno == EEXIST)) {
		made = 0;
		fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0 && errno == ENOENT && !create)
			return emu_err(SPM_E_TAMPERED, "%s: missing: the pool's integrity registers "
				       "(its tree's root) are gone, so nothing in it can be trusted",
				       path);
	}
	if (fd < 0)
		return emu_err(errno == ELOOP ? SPM_E_KEYFILE : -errno, "%s: %s", path,
			       errno == ELOOP ? "a symbolic link" : strerror(errno));
	struct stat st;
	off_t off = 0;
	int rc = key_check_trust(fd, path, &st);
	if (!rc && flock(fd, LOCK_EX) != 0)
		rc = emu_err(-errno, "%s: %s", path, strerror(errno));
	if (!rc)
		rc = find_or_add(fd, path, uuid, &off, create);
	struct tcb *t = rc ? NULL : calloc(1, sizeof(*t));
	if (!rc && !t)
		rc = emu_err(-ENOMEM, "out of memory");
	if (!rc) {
		long pg = sysconf(_SC_PAGESIZE);
		off_t base = off / pg * pg;
		t->map_len = (size_t)(off - base) + sizeof(struct tcb_rec);
		t->map = mmap(NULL, t->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, base);
		if (t->map == MAP_FAILED)
			rc = emu_err(-errno, "%s: cannot map: %s", path, strerror(errno));
		else
			t->rec = (struct tcb_rec *)((uint8_t *)t->map + (off - base));
	}
	close(fd); /* the lock goes with it; the mapping stays */
	if (!rc && made && !(t->made = strdup(path)))
		rc = emu_err(-ENOMEM, "out of memory");
	if (rc && made)
		unlink(path);
	if (rc) {
		if (t && t->map && t->map != MAP_FAILED)
			munmap(t->map, t->map_len);
		if (t)
			free(t->made);
		free(t);
		return rc;
	}
	*out = t;
	return 0;
}

int tcb_has_record(const char *key_path, const uint8_t uuid[16])
{
	char path[4096 + 8];
	if ((size_t)snprintf(path, sizeof(path), "%s.tcb", key_path) >= sizeof(path))
		return 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return 0;
	struct stat st;
	int has = 0;
	if (fstat(fd, &st) == 0)
		for (off_t at = 0; at + (off_t)sizeof(struct tcb_rec) <= st.st_size && !has;
		     at += (off_t)sizeof(struct tcb_rec)) {
			uint8_t u[16];
			has = pread(fd, u, 16, at) == 16 && memcmp(u, uuid, 16) == 0;
		}
	close(fd);
	return has;
}

/* tcb_close -- unmap (the registers stay in the file). */
void tcb_close(struct tcb *t)
{
	if (!t)
		return;
	msync(t->map, t->map_len, MS_SYNC);
	munmap(t->map, t->map_len);
	free(t->made);
	free(t);
}

/* tcb_discard -- a creation refused: the file this open made is removed. */
void tcb_discard(struct tcb *t)
{
	if (t && t->made)
		unlink(t->made);
}

/* newest -- the intact slot with the larger sequence number, or -1. */
static int newest(const struct tcb *t)
{
	int best = -1;
	for (int i = 0; i < 2; i++) {
		const struct tcb_slot *s = &t->rec->slot[i];
		if (s->seq && s->crc == slot_crc(s) &&
		    (best < 0 || s->seq > t->rec->slot[best].seq))
			best = i;
	}
	return best;
}

int tcb_read(const struct tcb *t, struct tcb_regs *out)
{
	int i = newest(t);
	if (i < 0) {
		memset(out, 0, sizeof(*out));
		return -1;
	}
	*out = t->rec->slot[i].regs;
	return 0;
}

void tcb_write(struct tcb *t, const struct tcb_regs *regs)
{
	int cur = newest(t);
	uint64_t seq = cur < 0 ? 1 : t->rec->slot[cur].seq + 1;
	struct tcb_slot *s = &t->rec->slot[cur == 0 ? 1 : 0];
	struct tcb_slot next;
	memset(&next, 0, sizeof(next));
	next.seq = seq;
	next.regs = *regs;
	next.crc = slot_crc(&next);
	memcpy(s, &next, sizeof(next));
	emu_crash_point("bmt.tcb_written");
}
