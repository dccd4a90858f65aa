/*
 * emu.c -- the emulated machine's life cycle: creating the media, validating
 * them at open (every bad input refused before any file is modified),
 * controller recovery after an unclean shutdown, and clean shutdown.
 */
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include "spm.h"
#include "emu_internal.h"
#include "wq.h"

#define MIN_POOL (1u << 20)
#define ADR_MIN_CAP 256u

/* emu_config_init -- every field "use the default". */
void emu_config_init(struct emu_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->durability = EMU_DUR_AUTO;
	cfg->t_rcd = cfg->t_cl = cfg->t_cwd = cfg->t_faw = cfg->t_wtr = cfg->t_wr =
		cfg->aes_ns = -1;
	cfg->access_ns = -1;
	cfg->bank_hash = -1;
	cfg->wpq_inorder = -1;
	cfg->alloc_lanes = -1;
}

static uint64_t round_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) / a * a;
}

/* sb_crc -- crc32 of the superblock without its checksum and state words. */
uint32_t sb_crc(const struct superblock *sb)
{
	const uint8_t *p = (const uint8_t *)sb;
	uLong c = crc32(0L, Z_NULL, 0);
	c = crc32(c, p, offsetof(struct superblock, checksum));
	c = crc32(c, p + offsetof(struct superblock, pad),
		  offsetof(struct superblock, state) - offsetof(struct superblock, pad));
	return (uint32_t)c;
}

static uint32_t dh_crc(const struct data_hdr *dh)
{
	const uint8_t *p = (const uint8_t *)dh;
	uLong c = crc32(0L, Z_NULL, 0);
	c = crc32(c, p, offsetof(struct data_hdr, checksum));
	c = crc32(c, p + offsetof(struct data_hdr, pad), sizeof(dh->pad));
	return (uint32_t)c;
}

/* derive_keys -- encryption key and key check value from the key file's key. */
static int derive_keys(const uint8_t *key, unsigned bits, const uint8_t uuid[16],
		       uint8_t *enc, uint8_t kcv[16])
{
	int rc = crypto_hkdf(key, bits / 8, uuid, 16, "spm enc", enc, bits / 8);
	if (!rc)
		rc = crypto_hkdf(key, bits / 8, uuid, 16, "spm kcv", kcv, 16);
	return rc;
}

/* resolve -- design, profile and the runtime parameters of cfg. */
static int resolve(struct emu *e, const struct emu_config *cfg, const char *design)
{
	e->design = design_find(design);
	if (!e->design)
		return emu_err(SPM_E_DESIGN, "unknown design \"%s\" (%s)", design,
			       design_names());
	const char *pname = cfg->profile[0] ? cfg->profile : e->design->profile;
	if (strcmp(pname, "heap") == 0) /* the design's geometry, no memory model */
		pname = e->design->profile;
	e->profile = profile_find(pname);
	if (!e->profile)
		return emu_err(SPM_E_OPTION, "profile: unknown profile \"%s\" (sca, supermem, ccnvm, "
			       "redo, dewrite, heap)", pname);
	e->layout = ctr_layout_of(e->design->layout);
	/* WQ_COLOC data entries (write_one) drain independently of the counter
	 * queue; without them a drained counter line is the newest */
	e->ctr_home_fifo = e->layout->id == LAYOUT_SPLIT ||
			   (e->design->ca != CA_COLOCATED && e->design->cc != CC_BATTERY &&
			    e->design->logging == LOG_SW); /* redo.c writes counters home too */
	e->redo_early_apply = cfg->redo_early_apply;
	if (cfg->log_kib && e->design->logging == LOG_SW)
		return emu_err(SPM_E_OPTION, "log_kib: design %s has no redo log (srl, lame, "
			       "clame have)", e->design->name);
	e->minor_bits = e->layout->id == LAYOUT_SPLIT ? SPLIT_MINOR_BITS : 0;
	if (cfg->minor_bits) {
		if (e->layout->id != LAYOUT_SPLIT)
			return emu_err(SPM_E_OPTION, "minor_bits: design %s has no split "
				       "counters", e->design->name);
		e->minor_bits = cfg->minor_bits;
	}
	e->placement = e->design->placement;
	if (cfg->ctr_placement[0]) {
		int pl = placement_find(cfg->ctr_placement);
		if (pl < 0)
			return emu_err(SPM_E_OPTION, "ctr_placement=%s: interleave, single, "
				       "same or xbank", cfg->ctr_placement);
		e->placement = (enum ctr_placement)pl;
	}
	e->no_ctr_recovery = cfg->no_ctr_recovery;
	return 0;
}

/* runtime_init -- counter cache, queues' depths, timing; validates options. */
static int runtime_init(struct emu *e, const struct emu_config *cfg)
{
	const struct profile *p = e->profile;
	struct profile q = *p;
	unsigned cores = cfg->cores ? cfg->cores : 1;
	/* SCA Table 2: "Counter cache 1MB per core (shared)" */
	unsigned kib = cfg->ctr_cache_kib ? cfg->ctr_cache_kib
		       : p->ctr_cache_kib * (p->ctr_per_core ? cores : 1);
	if (!cfg->ctr_cache_kib && kib > SHADOW_SLOTS / 1024 * EMU_LINE)
		kib = SHADOW_SLOTS / 1024 * EMU_LINE; /* the shadow table's 8 MiB (the
							* paper's 8 cores) */
	unsigned ways = cfg->ctr_cache_ways ? cfg->ctr_cache_ways : p->ctr_cache_ways;
	unsigned wd = cfg->wpq_data ? cfg->wpq_data : p->wpq_data;
	unsigned wc = cfg->wpq_ctr ? cfg->wpq_ctr : p->wpq_ctr;
	unsigned banks = cfg->banks ? cfg->banks : p->banks;
	if (wd > TM_MAX_QUEUE || wc > TM_MAX_QUEUE)
		return emu_err(SPM_E_OPTION, "wpq_data/wpq_ctr: at most %u entries",
			       TM_MAX_QUEUE);
	if (banks > TM_MAX_BANKS)
		return emu_err(SPM_E_OPTION, "banks: at most %u", TM_MAX_BANKS);
	if (cfg->bank_hash == 1 && (banks & (banks - 1)))
		return emu_err(SPM_E_OPTION, "bank_hash=1: needs a power-of-two number of "
			       "banks, not %u", banks);
	if (cfg->wpq_window > 1 && !(cfg->wpq_inorder >= 0 ? cfg->wpq_inorder : p->wpq_inorder))
		return emu_err(SPM_E_OPTION, "wpq_window=%u: needs wpq_issue=inorder (the "
			       "supermem profile's; with bankfree no write waits for an "
			       "earlier one)", cfg->wpq_window);
	if (cfg->t_rcd >= 0) q.t_rcd = cfg->t_rcd;
	if (cfg->t_cl >= 0) q.t_cl = cfg->t_cl;
	if (cfg->t_cwd >= 0) q.t_cwd = cfg->t_cwd;
	if (cfg->t_faw >= 0) q.t_faw = cfg->t_faw;
	if (cfg->t_wtr >= 0) q.t_wtr = cfg->t_wtr;
	if (cfg->t_wr >= 0) q.t_wr = cfg->t_wr;
	if (cfg->aes_ns >= 0) q.aes_ns = cfg->aes_ns;
	if (cfg->bus_mhz > 0) q.bus_mhz = cfg->bus_mhz;
	int rc = cc_init(&e->cc, kib, ways);
	if (rc)
		return rc;
	/* a co-located line moves data and counter in one 72-byte write (SCA 3.2.1) */
	tm_init(&e->tm, &q, wd, wc, banks, cfg->bank_lines ? cfg->bank_lines : p->bank_lines,
		cfg->bank_hash >= 0 ? cfg->bank_hash : p->bank_hash,
		e->design->ca == CA_COLOCATED ? EMU_LINE + 8 : EMU_LINE);
	e->tm.core_banks = cfg->core_banks;
	if (cfg->timing_off || strcmp(cfg->profile, "heap") == 0)
		tm_off(&e->tm);
	read_queue_reset(e);
	if ((rc = cache_model_new(e, cfg)))
		return rc;
	e->tm.qdata.any = e->tm.qctr.any = cfg->wpq_any;
	e->tm.qdata.inorder = e->tm.qctr.inorder =
		cfg->wpq_inorder >= 0 ? cfg->wpq_inorder : p->wpq_inorder;
	if (cfg->wpq_window)
		e->tm.qdata.window = e->tm.qctr.window = cfg->wpq_window;
	pthread_mutex_init(&e->lock, NULL);
	e->lock_ready = 1;
	return 0;
}

/* ctr_map_bytes -- size of the controller's counter array. */
static size_t ctr_map_bytes(const struct emu *e)
{
	return (size_t)round_up(e->nlines * sizeof(uint64_t), EMU_PAGE);
}

/* load_split_counters -- decode counter storage into anonymous memory
 * (pages of never-written counters stay untouched), then the RSR's page. */
static int load_split_counters(struct emu *e)
{
	e->cur_ctr = mmap(NULL, ctr_map_bytes(e), PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (e->cur_ctr == MAP_FAILED) {
		e->cur_ctr = NULL;
		return emu_err(-ENOMEM, "cannot map %llu counters",
			       (unsigned long long)e->nlines);
	}
	const uint8_t *home = (const uint8_t *)e->ctr_home;
	for (uint64_t cl = 0; cl < e->nlines / 64; cl++) {
		static const uint8_t zero[EMU_LINE];
		if (memcmp(home + cl * EMU_LINE, zero, EMU_LINE) != 0)
			e->layout->decode(home + cl * EMU_LINE, e->minor_bits,
					  e->cur_ctr + cl * 64);
	}
	reenc_interpret(e);
	return 0;
}

/* check_cache_fits -- the counter cache has at most slots lines (the
 * shadow table records one slot per way). */
static int check_cache_fits(const struct emu *e, uint64_t slots)
{
	if ((uint64_t)e->cc.sets * e->cc.ways > slots)
		return emu_err(SPM_E_OPTION, "ctr_cache_kib: at most %llu KiB for this pool",
			       (unsigned long long)(slots * 64 / 1024));
	return 0;
}

/* attach -- point at the meta file's regions; volatile counters from storage. */
static int attach(struct emu *e)
{
	int rc;
	struct superblock *sb = e->sb;
	uint8_t *adr = e->media.meta + sb->adr_off;
	struct wq_entry *d = (struct wq_entry *)(adr + ADR_HDR_SIZE);
	struct wq_entry *c = d + sb->adr_data_cap;
	e->nlines = sb->nlines;
	e->ctr_home = (uint64_t *)(e->media.meta + sb->ctr_off);
	e->rsr = (struct rsr *)adr;
	e->adr_dropped = (struct adr_dropped *)(adr + ADR_DROPPED_OFF);
	e->ca_bits = e->media.meta + sb->ca_off;
	e->shadow = (uint64_t *)(e->media.meta + sb->shadow_off);
	e->shadow_slots = sb->shadow_slots;
	e->stop_loss = sb->stop_loss;
	e->tracks_stale = e->design->enc == ENC_CTR && e->design->cc == CC_WB &&
			  e->design->ca != CA_FULL && e->design->ca != CA_COLOCATED &&
			  !e->no_ctr_recovery &&
			  !e->design->integrity; /* bmt.c recovers counters by MAC trial */
	if ((rc = check_cache_fits(e, e->shadow_slots)))
		return rc;
	wq_attach(&e->qdata, d, sb->adr_data_cap, e->tm.qdata.cap, &e->tm.qdata);
	wq_attach(&e->qctr, c, sb->adr_ctr_cap, e->tm.qctr.cap, &e->tm.qctr);
	e->next_seq = 1;
	if (e->design->enc == ENC_CTR && e->layout->id == LAYOUT_SPLIT)
		return load_split_counters(e);
	if (e->design->enc == ENC_CTR) {
		/*
		 * The controller's newest counters start as a private
		 * (copy-on-write) mapping of counter storage: no copy at open.
		 * Storage changes only for lines whose counter changed here
		 * first, so a page not yet copied always equals storage.
		 */
		int fd = open(e->media.meta_path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return emu_err(-errno, "%s: %s", e->media.meta_path, strerror(errno));
		e->cur_ctr = mmap(NULL, ctr_map_bytes(e), PROT_READ | PROT_WRITE,
				  MAP_PRIVATE, fd, (off_t)sb->ctr_off);
		close(fd);
		if (e->cur_ctr == MAP_FAILED) {
			e->cur_ctr = NULL;
			return emu_err(-ENOMEM, "cannot map %llu counters",
				       (unsigned long long)e->nlines);
		}
	}
	return 0;
}

/* emu_alloc -- a zeroed controller, on the cache-line boundary its striped
 * statistics need. */
static struct emu *emu_alloc(void)
{
	struct emu *e = aligned_alloc(64, (sizeof(*e) + 63) & ~(size_t)63);
	if (e)
		memset(e, 0, sizeof(*e));
	return e;
}

/* emu_free -- release everything without touching the media's state. */
static void emu_free(struct emu *e)
{
	if (!e)
		return;
	if (e->cur_ctr)
		munmap(e->cur_ctr, ctr_map_bytes(e));
	audit_close(e);
	free(e->made_key);
	free(e->made_key_tmp);
	free(e->key_path);
	free(e->final_data);
	free(e->final_meta);
	OPENSSL_cleanse(e->key_raw, sizeof(e->key_raw));
	OPENSSL_cleanse(e->epoch_key, sizeof(e->epoch_key));
	free(e->dropped);
	chan_free(e);
	redo_free(e);
	bmt_free(e);
	dedup_free(e);
	if (e->lock_ready)
		pthread_mutex_destroy(&e->lock);
	crypto_free(e->crypto);
	cc_fini(&e->cc);
	cache_model_free(e);
	if (e->media.data || e->media.data_path)
		media_close(&e->media);
	free(e);
}

/*
 * Epochs: which state of the pool a file is from.  The data file's header
 * page and the superblock's page each hold an epoch word, raised together
 * when a pool is opened for use and when it is closed (emu_mark_dirty for a
 * clean pool; emu_open before recovery writes a dirty one; emu_close).  The
 * words are checked once the pool is locked and mapped, before anything is
 * written.  An older copy of one of the two files beside a newer copy of
 * the other -- one file restored from a backup, a meta file copied in from
 * another time -- carries another epoch and is refused (SPM_E_MISMATCH)
 * before its stale counters could reuse a pad.  A raise is four 8-byte
 * stores: the superblock's next epoch, the data file's epoch, the
 * superblock's epoch, next cleared; after a crash between any two, the data
 * file's epoch is the superblock's or its next (a raise cut short is
 * finished by the next one before it starts).
 *
 * Rollback: after every raise the key file records the epoch the files now
 * have as the pool's generation (key.c: files first, then the record, so
 * the files' epoch is never below the record).  Files whose epoch is below
 * the record are a copy older than the pool's last open or close -- both
 * files restored from a backup -- and are refused (SPM_E_ROLLBACK): every
 * write after them would reuse pads of writes made since the copy.
 *
 * A word holds a 32-bit epoch and a 32-bit tag: in an encrypting pool the
 * first four bytes of HMAC-SHA256 over (uuid, epoch) under a key derived
 * from the pool's key, so nobody without the key can make the word of an
 * epoch the pool has not had (to make a copy look newer); in a plain pool,
 * which has no key and no pads to reuse, an unkeyed check.  A word whose
 * tag does not match is damaged (SPM_E_CORRUPT); the all-zero word is epoch
 * 0, that of a pool never opened since its creation.
 * Not detected: the current epoch words copied into an older copy of both
 * files (a replay of lines together with their counters: the integrity
 * designs' business), or a copy made while the pool was open and put back
 * after that run crashed.
 */
#define EPOCH_MASK 0xffffffffull
_Static_assert(SB_EPOCH_OFF >= sizeof(struct superblock), "epoch after the superblock");
_Static_assert(DH_EPOCH_OFF >= sizeof(struct data_hdr), "epoch after the data header");
_Static_assert(CREATE_MARK_OFF >= DH_EPOCH_OFF + 8 &&
	       CREATE_MARK_OFF + sizeof(CREATE_MARK) <= CREATE_HEAD &&
	       CREATE_HEAD <= EMU_DATA_HDR_SIZE, "the creation mark in the header page");

/* epoch_tag -- the 32-bit tag of epoch in pool e (keyed where it has a key). */
static uint64_t epoch_tag(const struct emu *e, uint64_t epoch)
{
	if (!e->has_epoch_key)
		return (epoch * 0x9e3779b97f4a7c15ull) >> 32;
	uint8_t msg[24], mac[EVP_MAX_MD_SIZE];
	unsigned maclen = 0;
	memcpy(msg, e->sb_uuid, 16);
	memcpy(msg + 16, &epoch, 8);
	if (!HMAC(EVP_sha256(), e->epoch_key, sizeof(e->epoch_key), msg, sizeof(msg), mac,
		  &maclen) || maclen < 4)
		return ~0ull; /* no tag: no word matches (refused as damaged) */
	uint32_t t;
	memcpy(&t, mac, 4);
	return t;
}

/* epoch_word -- epoch (32 bits) with its tag in the top 32 bits; 0 for 0. */
static uint64_t epoch_word(const struct emu *e, uint64_t epoch)
{
	epoch &= EPOCH_MASK;
	return epoch ? epoch | epoch_tag(e, epoch) << 32 : 0;
}

/* epoch_of -- the epoch of word into *epoch; 0 if the word is damaged. */
static int epoch_of(const struct emu *e, uint64_t word, uint64_t *epoch)
{
	*epoch = word & EPOCH_MASK;
	return word == epoch_word(e, *epoch);
}

/* epochs_agree -- the words of the data file (dw) and the meta file (sw,
 * nw) are of one state of the pool; *epoch: the newest epoch they name. */
static int epochs_agree(const struct emu *e, uint64_t dw, uint64_t sw, uint64_t nw,
			uint64_t *epoch)
{
	const char *path = e->media.data_path, *meta_path = e->media.meta_path;
	uint64_t d, s, n;
	if (!epoch_of(e, dw, &d))
		return emu_err(SPM_E_CORRUPT, "%s: epoch word damaged or forged", path);
	if (!epoch_of(e, sw, &s) || !epoch_of(e, nw, &n))
		return emu_err(SPM_E_CORRUPT, "%s: epoch word damaged or forged", meta_path);
	if (d != s && !(n && d == n))
		return emu_err(SPM_E_MISMATCH, "%s (epoch %llu) and %s (epoch %llu) are from "
			       "different states of the pool: one of them is an older copy",
			       path, (unsigned long long)d, meta_path, (unsigned long long)s);
	*epoch = d > s ? d : s;
	*epoch = n > *epoch ? n : *epoch;
	return 0;
}

/* check_epochs_mapped -- epochs_agree of the words as mapped, once the pool
 * is locked (no other process can raise them then) and before anything is
 * written; and not below the generation the key file records (rollback). */
static int check_epochs_mapped(struct emu *e, uint64_t generation)
{
	const uint64_t *dw = (const uint64_t *)(e->media.data + DH_EPOCH_OFF);
	const uint64_t *sw = (const uint64_t *)(e->media.meta + SB_EPOCH_OFF);
	const uint64_t *nw = (const uint64_t *)(e->media.meta + SB_NEXT_OFF);
	int rc = epochs_agree(e, *dw, *sw, *nw, &e->epoch);
	if (!rc && e->epoch < generation)
		rc = emu_err(SPM_E_ROLLBACK, "%s: pool files are older than the key's record "
			     "(files at generation %llu, %s records %llu): a rollback -- a "
			     "restored copy, refused because writing to it would reuse "
			     "encryption pads.  To use such a copy on purpose, re-key it: "
			     "spm-rekey %s (spm_rekey; doc/design.md, \"Restoring a "
			     "backup\")", e->media.data_path, (unsigned long long)e->epoch,
			     e->key_path, (unsigned long long)generation, e->media.data_path);
	return rc;
}

/* store_word -- one durable 8-byte store into a media file. */
static void store_word(struct emu *e, uint8_t *base, uint64_t off, uint64_t v)
{
	uint64_t *w = (uint64_t *)(base + off);
	__atomic_store_n(w, v, __ATOMIC_RELEASE);
	media_persist(&e->media, w, sizeof(*w));
	e->stat[ST_MEDIA_WRITES_META]++;
}

/* epoch_raise -- both files to the next epoch (the order above), then the
 * key file's record of the pool to that epoch.  A raise cut short after
 * the data file's store (data = next = E+1, superblock E) is finished
 * first: raised from there, next would name E+2 while the data file still
 * says E+1, and a second crash would leave the pool refused as a mix of
 * two states (found by the power-failure sweeps). */
static int epoch_raise(struct emu *e)
{
	const uint64_t *dw = (const uint64_t *)(e->media.data + DH_EPOCH_OFF);
	const uint64_t *sw = (const uint64_t *)(e->media.meta + SB_EPOCH_OFF);
	if (*dw != *sw)
		store_word(e, e->media.meta, SB_EPOCH_OFF, *dw);
	if (e->epoch >= EPOCH_MASK)
		return emu_err(SPM_E_CORRUPT, "%s: epoch %llu, the last there is", e->media.data_path,
			       (unsigned long long)e->epoch);
	uint64_t w = epoch_word(e, ++e->epoch);
	store_word(e, e->media.meta, SB_NEXT_OFF, w);
	store_word(e, e->media.data, DH_EPOCH_OFF, w);
	store_word(e, e->media.meta, SB_EPOCH_OFF, w);
	store_word(e, e->media.meta, SB_NEXT_OFF, 0);
	emu_crash_point("epoch.raised");
	if (!e->key_path) /* a plain pool: no key file */
		return 0;
	/* the words on the disk before the record: where media writes are
	 * plain stores (durability none, or auto on a file that is not pmem)
	 * they would otherwise reach it whenever the kernel writes the pages
	 * back, and an operating system crash could leave the record durable
	 * and the files below it -- refused for good as a rollback */
	if (!e->media.persist_on) {
		long page = sysconf(_SC_PAGESIZE);
		size_t pg = page > 0 ? (size_t)page : EMU_PAGE;
		(void)msync(e->media.data, pg, MS_SYNC);
		(void)msync(e->media.meta, pg, MS_SYNC);
	}
	int rc = key_raise(e->key_path, e->sb_uuid, e->epoch, e->key_raw, e->key_bits);
	if (!rc)
		emu_crash_point("epoch.recorded");
	return rc;
}

/* set_state -- the superblock's clean/dirty word: one 8-byte store. */
static void set_state(struct emu *e, uint64_t state)
{
	__atomic_store_n(&e->sb->state, state, __ATOMIC_RELEASE);
	media_persist(&e->media, &e->sb->state, sizeof(e->sb->state));
	e->stat[ST_MEDIA_WRITES_META]++;
}

/* key_for_create -- where a new pool's key comes from: an existing key
 * file named by key_file= (adopted, read into *kf), or a new one at
 * key_path (*make = 1), checked before any file is touched. */
static int key_for_create(const struct emu_config *cfg, const char *key_path,
			  struct keyfile *kf, int *make)
{
	struct stat st;
	*make = 0;
	if (lstat(key_path, &st) != 0) {
		if (errno != ENOENT)
			return emu_err(-errno, "key file %s: %s", key_path, strerror(errno));
		*make = 1;
		return 0;
	}
	if (!cfg->key_file[0])
		return emu_err(SPM_E_KEYFILE, "key file %s exists: spm_create makes a new key, "
			       "and uses an existing key file only when key_file= names it",
			       key_path);
	return key_read(key_path, kf);
}

/* set_keys -- the pool's keys from kf: cipher, key check value into sb,
 * the epoch MAC key; the key kept to check it is still the file's. */
static int set_keys(struct emu *e, const struct keyfile *kf, const uint8_t uuid[16],
		    uint8_t kcv[16])
{
	uint8_t enc[32];
	unsigned bits = kf->bits;
	int rc = derive_keys(kf->key, bits, uuid, enc, kcv);
	if (!rc)
		rc = crypto_hkdf(kf->key, bits / 8, uuid, 16, "spm epoch", e->epoch_key,
				 sizeof(e->epoch_key));
	if (!rc && !e->crypto)
		rc = crypto_new(&e->crypto, enc, bits);
	OPENSSL_cleanse(enc, sizeof(enc));
	if (rc)
		return rc;
	memcpy(e->key_raw, kf->key, sizeof(e->key_raw));
	e->key_bits = bits;
	e->has_epoch_key = 1;
	return 0;
}

/* make_dh -- the data header of the pool of superblock sb. */
static void make_dh(const struct superblock *sb, struct data_hdr *dh)
{
	memset(dh, 0, sizeof(*dh));
	memcpy(dh->magic, DH_MAGIC, 8);
	dh->version = SPM_FORMAT_VERSION;
	dh->hdr_size = sizeof(*dh);
	memcpy(dh->uuid, sb->uuid, 16);
	dh->pool_size = sb->pool_size;
	dh->checksum = dh_crc(dh);
}

/* data_head -- the first CREATE_HEAD bytes of a new data file: its header
 * and the creation's mark (create.c). */
static void data_head(const struct superblock *sb, uint8_t head[CREATE_HEAD])
{
	struct data_hdr dh;
	make_dh(sb, &dh);
	memset(head, 0, CREATE_HEAD);
	memcpy(head, &dh, sizeof(dh));
	memcpy(head + CREATE_MARK_OFF, CREATE_MARK, sizeof(CREATE_MARK));
}

/* write_headers -- the data header and superblock of a new pool. */
static void write_headers(struct emu *e, const struct superblock *sb)
{
	struct data_hdr dh;
	make_dh(sb, &dh);
	memcpy(e->media.data, &dh, sizeof(dh));
	media_persist(&e->media, e->media.data, sizeof(dh));
	memcpy(e->media.meta, sb, sizeof(*sb));
	media_persist(&e->media, e->media.meta, sizeof(*sb));
	e->sb = (struct superblock *)e->media.meta;
}

/*
 * emu_create -- new media for a pool of size bytes, under temporary names
 * (create.c) until emu_commit_create puts them in place.
 */
int emu_create(struct emu **out, const char *path, uint64_t size,
	       const struct emu_config *cfg)
{
	int rc = emu_crash_init_checked();
	if (rc)
		return rc;
	char meta[PATH_MAX + 16], key_path[PATH_MAX + 16], tmp_data[PATH_MAX + 16],
		tmp_meta[PATH_MAX + 16];
	int make_key = 0;
	struct keyfile kf;
	memset(&kf, 0, sizeof(kf));
	unsigned nch = 1;
	struct emu *e = emu_alloc();
	if (e)
		e->seq_step = 1;
	if (!e)
		return emu_err(-ENOMEM, "out of memory");
	e->media.lock_fd = e->media.meta_lock_fd = -1;
	e->audit_fd = -1;
	const char *design = cfg->design[0] ? cfg->design : "sca";
	e->data_unlocked = cfg->lock_data_off;
	unsigned bits = cfg->aes_bits ? cfg->aes_bits : 128;
	if ((rc = resolve(e, cfg, design)) || (rc = runtime_init(e, cfg)) ||
	    (rc = chan_count(e, cfg, SHADOW_SLOTS, &nch)) ||
	    (rc = check_cache_fits(e, SHADOW_SLOTS)) ||
	    (rc = audit_open(e)))
		goto fail;
	if (bits != 128 && bits != 256) {
		rc = emu_err(SPM_E_OPTION, "aes_bits: must be 128 or 256, not %u", bits);
		goto fail;
	}
	key_path_of(cfg->key_file, path, key_path, sizeof(key_path));
	int enc = e->design->enc == ENC_CTR;
	if ((rc = check_names(path, enc ? key_path : NULL)))
		goto fail;
	snprintf(meta, sizeof(meta), "%s.meta", path);
	create_temp_paths(path, tmp_data, tmp_meta, sizeof(tmp_data));
	/* a pool at path is never touched; where none is, what an interrupted
	 * creation left is cleared, then: is the path free? */
	struct stat st;
	if (lstat(path, &st) == 0) {
		rc = emu_err(-EEXIST, "%s: file exists", path);
		goto fail;
	}
	if ((rc = create_clear_leftover(path, enc && cfg->key_file[0] ? key_path : NULL)))
		goto fail;
	if (lstat(meta, &st) == 0) {
		rc = emu_err(-EEXIST, "%s: file exists", meta);
		goto fail;
	}
	if (enc) {
		if ((rc = key_for_create(cfg, key_path, &kf, &make_key)))
			goto fail;
		if (!make_key && cfg->aes_bits && kf.bits != bits) {
			rc = emu_err(SPM_E_KEYFILE, "key file %s: a %u-bit key, aes_bits=%u asked",
				     key_path, kf.bits, bits);
			goto fail;
		}
		if (!make_key)
			bits = kf.bits;
	}
	size = round_up(size < MIN_POOL ? MIN_POOL : size, EMU_PAGE);
	uint64_t nlines = size / EMU_LINE;
	unsigned dcap = e->tm.qdata.cap > ADR_MIN_CAP ? e->tm.qdata.cap : ADR_MIN_CAP;
	unsigned ccap = e->tm.qctr.cap > ADR_MIN_CAP ? e->tm.qctr.cap : ADR_MIN_CAP;
	struct superblock sb;
	memset(&sb, 0, sizeof(sb));
	memcpy(sb.magic, SB_MAGIC, 8);
	sb.version = SPM_FORMAT_VERSION;
	sb.sb_size = sizeof(sb);
	if (RAND_bytes(sb.uuid, sizeof(sb.uuid)) != 1) {
		rc = emu_err(SPM_E_CRYPTO, "OpenSSL: no random bytes for a UUID");
		goto fail;
	}
	sb.pool_size = size;
	sb.nlines = nlines;
	snprintf(sb.design, sizeof(sb.design), "%s", design);
	snprintf(sb.layout, sizeof(sb.layout), "%s", cfg->layout);
	snprintf(e->layout_name, sizeof(e->layout_name), "%s", cfg->layout);
	sb.aes_bits = e->design->enc == ENC_CTR ? bits : 0;
	sb.adr_data_cap = dcap;
	sb.adr_ctr_cap = ccap;
	sb.adr_off = EMU_PAGE;
	sb.adr_size = round_up(ADR_HDR_SIZE + (uint64_t)(dcap + ccap) * sizeof(struct wq_entry),
			       EMU_PAGE);
	sb.ctr_off = sb.adr_off + sb.adr_size;
	sb.ctr_size = round_up(ctr_storage_bytes(e->layout, nlines), EMU_PAGE);
	sb.ctr_layout = e->layout->id;
	sb.minor_bits = e->minor_bits;
	sb.ca_off = sb.ctr_off + sb.ctr_size;
	sb.ca_size = round_up((nlines + 7) / 8, EMU_PAGE);
	sb.shadow_off = sb.ca_off + sb.ca_size;
	sb.shadow_slots = SHADOW_SLOTS;
	sb.stop_loss = STOP_LOSS_DEFAULT;
	sb.meta_size = sb.shadow_off + round_up(SHADOW_SLOTS * sizeof(uint64_t), EMU_PAGE);
	/* the redo designs' log area (redo.c) */
	sb.log_lines = cfg->log_kib ? (uint64_t)cfg->log_kib * 1024 / EMU_LINE
				    : redo_log_lines_default(e->design);
	if (e->design->logging == LOG_SW)
		sb.log_lines = 0;
	if ((rc = redo_check_log_size(e->design, sb.log_lines)))
		goto fail;
	if (sb.log_lines) {
		sb.log_off = sb.meta_size;
		sb.meta_size += round_up(sb.log_lines * EMU_LINE, EMU_PAGE);
	}
	/* the integrity designs' MACs, tree and drain buffer (bmt.c) */
	bmt_layout(e->design, nlines, &sb.mac_size, &sb.tree_size, &sb.drain_size);
	if (sb.mac_size) {
		sb.mac_off = sb.meta_size;
		sb.tree_off = sb.mac_off + sb.mac_size;
		sb.drain_off = sb.tree_off + sb.tree_size;
		sb.meta_size = sb.drain_off + sb.drain_size;
		sb.bmt_n = cfg->bmt_n ? cfg->bmt_n : 16;
		sb.bmt_m = cfg->bmt_m ? cfg->bmt_m : 64;
		if (sb.bmt_m < bmt_min_m(nlines)) {
			rc = emu_err(SPM_E_OPTION, "bmt_m=%u: a write-back of this pool dirties "
				     "%u metadata lines (its counter line and tree path); bmt_m "
				     "must hold them", sb.bmt_m, bmt_min_m(nlines));
			goto fail;
		}
	} else if (cfg->bmt_n || cfg->bmt_m) {
		rc = emu_err(SPM_E_OPTION, "bmt_n/bmt_m: design %s has no integrity tree "
			     "(bmt-nocc, sc, osiris, ccnvm-nods, ccnvm have)", e->design->name);
		goto fail;
	}
	/* the dedup designs' tables (dedup.c), last */
	if (e->design->dedup != DEDUP_NONE) {
		sb.dd_unit = (cfg->dedup_line ? cfg->dedup_line : 256) / EMU_LINE;
		if (nlines / sb.dd_unit >= UINT32_MAX) { /* the tables hold unit + 1 in 32 bits */
			rc = emu_err(SPM_E_OPTION, "dedup_line=%u: a pool of at most %llu GiB",
				     sb.dd_unit * EMU_LINE,
				     (unsigned long long)((UINT32_MAX - 1ull) * sb.dd_unit *
							  EMU_LINE >> 30));
			goto fail;
		}
		sb.dd_pad = cfg->dewrite_pad == 1 ? DD_PAD_CRC : DD_PAD_VERSION;
		sb.dd_size = dedup_area_size(e->design, nlines, sb.dd_unit);
		sb.dd_off = sb.meta_size;
		sb.meta_size += sb.dd_size;
	} else if (cfg->dedup_line || cfg->dewrite_pad || cfg->dedup_window) {
		rc = emu_err(SPM_E_OPTION, "dedup_line/dewrite_pad/dedup_window: design %s does "
			     "not deduplicate (dewrite, dewrite-direct, dewrite-parallel do)",
			     e->design->name);
		goto fail;
	}

	sb.state = SB_STATE_DIRTY;
	if (enc && !make_key && !key_has_room(&kf, sb.uuid)) {
		rc = emu_err(SPM_E_KEYFILE, "key file %s: it records as many pools as it can "
			     "hold; use another key file", key_path);
		goto fail;
	}
	/* the files, under their temporary names, each made and locked with
	 * its first bytes; the data file first: it is the creation's anchor,
	 * and its header page names the creation (create.c) */
	uint8_t head[CREATE_HEAD];
	data_head(&sb, head);
	if ((rc = media_create(&e->media, tmp_data, tmp_meta, size, sb.meta_size,
			       cfg->durability, head, sizeof(head), &sb, sizeof(sb))))
		goto fail;
	e->creating = 1;
	e->final_data = strdup(path);
	e->final_meta = strdup(meta);
	memcpy(e->sb_uuid, sb.uuid, 16);
	write_headers(e, &sb); /* the anchor names its uuid before a key is made */
	emu_crash_point("create.files_made");
	if (enc && make_key) {
		if ((rc = key_new(key_path, bits, sb.uuid, &kf)))
			goto fail;
		char tmp_key[PATH_MAX + 32];
		key_new_path(key_path, sb.uuid, tmp_key, sizeof(tmp_key));
		e->made_key = strdup(key_path);
		e->made_key_tmp = strdup(tmp_key);
	}
	if (enc && (rc = set_keys(e, &kf, sb.uuid, sb.kcv)))
		goto fail;
	if (enc && !(e->key_path = strdup(key_path))) {
		rc = emu_err(-ENOMEM, "out of memory");
		goto fail;
	}
	sb.checksum = sb_crc(&sb);
	write_headers(e, &sb);
	if (!e->final_data || !e->final_meta || (make_key && !e->made_key)) {
		rc = emu_err(-ENOMEM, "out of memory");
		goto fail;
	}
	if (sb.mac_size)
		e->mac_home = e->media.meta + sb.mac_off;
	if ((rc = attach(e)) || (rc = redo_attach(e)) || (rc = bmt_attach(e, cfg)) ||
	    (rc = dedup_attach(e, cfg)))
		goto fail;
	if (enc && create_fill_ciphertext(e)) {
		rc = SPM_E_CRYPTO;
		goto fail;
	}
	if ((rc = bmt_create(e)) || (rc = dedup_create(e)) || (rc = chan_attach(e, nch)))
		goto fail;
	key_free(&kf);
	*out = e;
	return 0;
fail:
	key_free(&kf);
	emu_discard(e); /* a refused creation leaves nothing behind */
	return rc;
}

/* emu_commit_create -- the new pool's files in place (create.c): from here
 * on a crash leaves a pool that opens. */
int emu_commit_create(struct emu *e)
{
	int rc = create_commit(e);
	if (!rc && e->data_unlocked)
		media_unlock_data(&e->media);
	return rc;
}

/* emu_discard -- a pool refused before its creation was committed (by
 * emu_create or the runtime above): remove the temporary files it made
 * while it still holds their lock, then free it. */
void emu_discard(struct emu *e)
{
	if (!e)
		return;
	if (e->made_key_tmp)
		unlink(e->made_key_tmp); /* a name of this creation's alone */
	if (e->creating)
		bmt_discard(e); /* its register file, if it made one */
	if (e->creating)
		media_unlink_own(&e->media); /* the meta file, then the anchor */
	emu_free(e);
}

/* read_head -- pread n bytes at 0 of a regular file; returns bytes read,
 * -errno, or 0 for anything else (no magic: not a pool).  O_NONBLOCK: a
 * FIFO in the pool's place is refused, not waited on. */
static ssize_t read_head(const char *path, void *buf, size_t n, off_t *size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	struct stat st;
	if (fstat(fd, &st) != 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	if (S_ISDIR(st.st_mode)) {
		close(fd);
		return -EISDIR;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		*size = 0;
		return 0;
	}
	*size = st.st_size;
	ssize_t r = pread(fd, buf, n, 0);
	close(fd);
	return r < 0 ? -errno : r;
}

/* check_magic -- NOTPOOL, TRUNCATED or 0 for a header of got bytes. */
static int check_magic(const char *path, const char *magic, const void *hdr,
		       ssize_t got, size_t need, const char *what)
{
	size_t cmp = got < 8 ? (size_t)got : 8;
	if (got <= 0 || memcmp(hdr, magic, cmp) != 0)
		return emu_err(SPM_E_NOTPOOL, "%s is not an spm %s (bad magic)", path, what);
	if ((size_t)got < need)
		return emu_err(SPM_E_TRUNCATED, "%s: truncated %s (%zd bytes)", path, what, got);
	return 0;
}

/*
 * home_ctr -- line l's counter in the counter storage of the meta file at
 * fd (l < nlines: inside the storage validate checked); 0 if unreadable.
 */
static uint64_t home_ctr(int fd, const struct superblock *sb, const struct ctr_layout *lay,
			 uint64_t l)
{
	uint8_t line[64];
	uint64_t c[64];
	off_t at = (off_t)(sb->ctr_off + l / lay->lines_per_ctr_line * 64);
	if (pread(fd, line, sizeof(line), at) != (ssize_t)sizeof(line))
		return 0;
	lay->decode(line, sb->minor_bits, c);
	return c[l % lay->lines_per_ctr_line];
}

/* A dropped pair recovery will advance: its line and counter. */
struct pending_drop {
	uint64_t line, ctr;
};

/*
 * check_drops -- the dropped pairs that reserved data slots, unready pairs
 * and the ADR header's table name (n of them in d) fit the table, and none
 * names a counter further ahead of its line's stored one than a write can
 * run (recovery's own checks, ctrl_advance_stale and keep_dropped, made here
 * too, before recovery writes anything: a review found those
 * refusals came after the epochs were raised and the queues drained).
 * Queued counter entries only raise a stored counter, so a lead past the
 * bound here is one there.
 */
static int check_drops(int fd, const char *meta_path, const struct superblock *sb,
		       const struct ctr_layout *lay, const struct pending_drop *d, size_t n)
{
	size_t lines = 0;
	for (size_t i = 0; i < n; i++) {
		size_t j = 0;
		while (j < i && d[j].line != d[i].line)
			j++;
		lines += j == i; /* the table keeps one entry per line */
		if (d[i].line >= sb->nlines)
			continue; /* recovery passes it by */
		uint64_t home = home_ctr(fd, sb, lay, d[i].line);
		if (d[i].ctr > home && d[i].ctr - home > sb->stop_loss + (1ull << 32))
			return emu_err(SPM_E_CORRUPT, "%s: the ADR region names a counter far "
				       "beyond its line's (damaged)", meta_path);
	}
	if (lines > ADR_DROPPED_MAX)
		return emu_err(SPM_E_CORRUPT, "%s: more than %u dropped pairs to recover",
			       meta_path, (unsigned)ADR_DROPPED_MAX);
	return 0;
}

/*
 * check_adr -- the valid entries of a dirty pool's ADR queues address lines
 * of the pool: recovery writes each one home at its address; and the pairs
 * it will drop pass check_drops.
 */
/* unready_pair_ctr -- the counter an unready pair's data entry w was
 * encrypted under, as recovery finds it (note_dropped): its partner counter
 * entry's payload decoded; 0 with no partner. */
static int unready_pair_ctr(const struct wq_entry *w, const struct wq_entry *ctr, unsigned cap,
			    const struct superblock *sb, const struct ctr_layout *lay,
			    uint64_t *out)
{
	for (unsigned i = 0; i < cap; i++)
		if ((ctr[i].state & WQ_VALID) && ctr[i].seq == w->aux) {
			if (ctr[i].state & WQ_READY)
				return 0; /* a ready pair: drained, not dropped */
			uint64_t c[64];
			lay->decode(ctr[i].payload, sb->minor_bits, c);
			*out = c[w->addr % lay->lines_per_ctr_line];
			return 1;
		}
	return 0;
}

/* check_redo_clean -- a clean pool's redo registers (redo_check; no queue). */
static int check_redo_clean(const char *meta_path, const struct superblock *sb)
{
	if (!sb->log_lines)
		return 0;
	int fd = open(meta_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return emu_err(-errno, "%s: %s", meta_path, strerror(errno));
	int rc = redo_check(fd, meta_path, sb, NULL, 0);
	close(fd);
	return rc;
}

static int check_adr(const char *meta_path, const struct superblock *sb)
{
	int fd = open(meta_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return emu_err(-errno, "%s: %s", meta_path, strerror(errno));
	const struct ctr_layout *lay = ctr_layout_of(sb->ctr_layout);
	uint64_t lines[2] = {sb->nlines, (sb->nlines + lay->lines_per_ctr_line - 1) /
					 lay->lines_per_ctr_line};
	const unsigned dcap = sb->adr_data_cap, total = dcap + sb->adr_ctr_cap;
	struct wq_entry *w = malloc((size_t)total * sizeof(*w));
	/* at most one dropped pair per data slot, and the table's */
	struct pending_drop *drop = malloc((dcap + ADR_DROPPED_MAX) * sizeof(*drop));
	size_t ndrop = 0, len = (size_t)total * sizeof(*w);
	int rc = w && drop ? 0 : emu_err(-ENOMEM, "out of memory");
	if (!rc && pread(fd, w, len, (off_t)(sb->adr_off + ADR_HDR_SIZE)) != (ssize_t)len)
		rc = emu_err(SPM_E_TRUNCATED, "%s: cannot read the ADR region", meta_path);
	for (unsigned i = 0; i < total && !rc; i++) {
		int is_ctr = i >= dcap;
		uint64_t limit = !is_ctr && (w[i].state & WQ_LOG) ? sb->log_lines : lines[is_ctr];
		if ((w[i].state & WQ_VALID) && w[i].addr >= limit)
			rc = emu_err(SPM_E_CORRUPT, "%s: ADR %s queue entry %u addresses line "
				     "%llu beyond the pool", meta_path, is_ctr ? "counter" : "data",
				     is_ctr ? i - dcap : i, (unsigned long long)w[i].addr);
	}
	/* the pairs recovery will drop, as wq_recover finds them: reserved
	 * slots (their counter in pad) and unready pairs' data entries */
	for (unsigned i = 0; i < dcap && !rc; i++) {
		uint64_t state = w[i].state, c;
		if ((state & (WQ_VALID | WQ_RESERVED)) == WQ_RESERVED) {
			memcpy(&c, w[i].pad, sizeof(c));
			drop[ndrop++] = (struct pending_drop){wq_reserved_line(&w[i]), c};
		} else if ((state & WQ_VALID) && !(state & (WQ_READY | WQ_RSR)) &&
			   (state & WQ_PAIRED) &&
			   unready_pair_ctr(&w[i], w + dcap, total - dcap, sb, lay, &c)) {
			drop[ndrop++] = (struct pending_drop){w[i].addr, c};
		}
	}
	struct adr_dropped table;
	if (!rc && pread(fd, &table, sizeof(table), (off_t)(sb->adr_off + ADR_DROPPED_OFF)) !=
			   (ssize_t)sizeof(table))
		rc = emu_err(SPM_E_TRUNCATED, "%s: cannot read the ADR region", meta_path);
	for (uint64_t k = 0; !rc && k < table.n; k++) /* n: checked by check_rsr */
		drop[ndrop++] = (struct pending_drop){table.e[k].line, table.e[k].ctr};
	if (!rc)
		rc = check_drops(fd, meta_path, sb, lay, drop, ndrop);
	if (!rc)
		rc = redo_check(fd, meta_path, sb, w, dcap);
	if (!rc)
		rc = bmt_check_adr(fd, meta_path, sb, w, dcap);
	if (!rc)
		rc = dedup_check_adr(meta_path, sb, w, dcap, total, table.n);
	free(w);
	free(drop);
	close(fd);
	return rc;
}

/*
 * check_rsr -- the re-encryption status register names a page of the pool
 * under a major that can grow, and only in a dirty pool with split counters
 * (a clean shutdown never leaves a page half re-encrypted); the dropped-pairs
 * table fits and is empty in a clean pool.
 */
static int check_rsr(const char *meta_path, const struct superblock *sb)
{
	int fd = open(meta_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return emu_err(-errno, "%s: %s", meta_path, strerror(errno));
	struct rsr rsr;
	uint64_t ndropped = 0;
	ssize_t got = pread(fd, &rsr, sizeof(rsr), (off_t)sb->adr_off);
	if (got == (ssize_t)sizeof(rsr) &&
	    pread(fd, &ndropped, sizeof(ndropped), (off_t)(sb->adr_off + ADR_DROPPED_OFF)) !=
		    (ssize_t)sizeof(ndropped))
		got = -1;
	close(fd);
	if (got != (ssize_t)sizeof(rsr))
		return emu_err(SPM_E_TRUNCATED, "%s: cannot read the ADR region", meta_path);
	if (ndropped > ADR_DROPPED_MAX || (ndropped && sb->state != SB_STATE_DIRTY))
		return emu_err(SPM_E_CORRUPT, "%s: bad dropped-pairs table", meta_path);
	if (rsr.active && (sb->state != SB_STATE_DIRTY || sb->ctr_layout != LAYOUT_SPLIT ||
			   rsr.active > sb->nlines / 64 ||
			   rsr.old_major >= (1ull << (64 - sb->minor_bits)) - 1))
		return emu_err(SPM_E_CORRUPT, "%s: bad re-encryption status register",
			       meta_path);
	return 0;
}

/* validate -- read and check both headers; nothing is written. */
static int validate(const char *path, const char *meta_path, struct data_hdr *dh,
		    struct superblock *sb)
{
	off_t dsize, msize;
	ssize_t got = read_head(path, dh, sizeof(*dh), &dsize);
	if (got < 0)
		return emu_err((int)got, "%s: %s", path, strerror((int)-got));
	int rc = check_magic(path, DH_MAGIC, dh, got, sizeof(*dh), "pool file");
	if (rc)
		return rc;
	if (dh->version != SPM_FORMAT_VERSION)
		return emu_err(SPM_E_VERSION, "%s: format version %u (this spm reads version %u%s)",
			       path, dh->version, SPM_FORMAT_VERSION,
			       dh->version && dh->version < SPM_FORMAT_VERSION
				       ? "; no upgrade from the older format" : "");
	if (dh->checksum != dh_crc(dh) || dh->hdr_size != sizeof(*dh))
		return emu_err(SPM_E_CORRUPT, "%s: data header checksum mismatch", path);
	if ((uint64_t)dsize != dh->pool_size)
		return emu_err(SPM_E_TRUNCATED, "%s: size %lld, header says %llu", path,
			       (long long)dsize, (unsigned long long)dh->pool_size);
	got = read_head(meta_path, sb, sizeof(*sb), &msize);
	if (got < 0)
		return emu_err((int)got, "%s: %s", meta_path, strerror((int)-got));
	if ((rc = check_magic(meta_path, SB_MAGIC, sb, got, sizeof(*sb), "meta file")))
		return rc;
	if (sb->version != SPM_FORMAT_VERSION)
		return emu_err(SPM_E_VERSION, "%s: format version %u (this spm reads version %u%s)",
			       meta_path, sb->version, SPM_FORMAT_VERSION,
			       sb->version && sb->version < SPM_FORMAT_VERSION
				       ? "; no upgrade from the older format" : "");
	if (sb->checksum != sb_crc(sb) || sb->sb_size != sizeof(*sb))
		return emu_err(SPM_E_CORRUPT, "%s: superblock checksum mismatch", meta_path);
	if (sb->features != 0)
		return emu_err(SPM_E_VERSION, "%s: unknown feature flags 0x%llx (a newer spm?)",
			       meta_path, (unsigned long long)sb->features);
	if (sb->state != SB_STATE_CLEAN && sb->state != SB_STATE_DIRTY)
		return emu_err(SPM_E_CORRUPT, "%s: bad clean/dirty state word", meta_path);
	if (memcmp(sb->uuid, dh->uuid, 16) != 0)
		return emu_err(SPM_E_MISMATCH, "%s belongs to another pool than %s",
			       meta_path, path);
	uint64_t nl = sb->pool_size / EMU_LINE;
	int geometry_ok = sb->pool_size == dh->pool_size && sb->nlines == nl &&
		sb->adr_off == EMU_PAGE && sb->adr_data_cap <= 65536 &&
		sb->adr_ctr_cap <= 65536 && sb->adr_data_cap && sb->adr_ctr_cap &&
		sb->adr_size >= ADR_HDR_SIZE + (uint64_t)(sb->adr_data_cap + sb->adr_ctr_cap) *
					sizeof(struct wq_entry) &&
		sb->ctr_off == sb->adr_off + sb->adr_size &&
		ctr_layout_of(sb->ctr_layout) &&
		sb->ctr_size >= ctr_storage_bytes(ctr_layout_of(sb->ctr_layout), nl) &&
		(sb->ctr_layout == LAYOUT_SPLIT ? sb->minor_bits >= 1 && sb->minor_bits <= 7
						: sb->minor_bits == 0) &&
		sb->ca_off == sb->ctr_off + sb->ctr_size && sb->ca_size >= (nl + 7) / 8 &&
		sb->shadow_off == sb->ca_off + sb->ca_size && sb->shadow_slots >= 1 &&
		sb->shadow_slots <= (1u << 24) && sb->stop_loss >= 1 &&
		sb->stop_loss <= (1ull << 32) &&
		sb->log_lines <= (1ull << 32) &&
		sb->log_off == (sb->log_lines ? sb->shadow_off +
						   round_up(sb->shadow_slots * sizeof(uint64_t),
							    EMU_PAGE) : 0) &&
		sb->meta_size == sb->shadow_off + round_up(sb->shadow_slots * sizeof(uint64_t),
							   EMU_PAGE) +
				 round_up(sb->log_lines * EMU_LINE, EMU_PAGE) + sb->mac_size +
				 sb->tree_size + sb->drain_size + sb->dd_size &&
		/* the integrity areas (bmt.c) last, in this order */
		(!sb->mac_size ||
		 (sb->mac_off == sb->meta_size - sb->dd_size - sb->drain_size - sb->tree_size -
				 sb->mac_size &&
		  sb->tree_off == sb->mac_off + sb->mac_size &&
		  sb->drain_off == sb->tree_off + sb->tree_size));
	/* a redo design has a log of one record at least; no other has one */
	const struct design *sd = design_find(sb->design);
	geometry_ok = geometry_ok && sd && ((sd->logging == LOG_SW) == (sb->log_lines == 0)) &&
		      (!sb->log_lines ||
		       (sb->log_lines >= (sd->logging == LOG_CLAME ? 9u : 17u) &&
			(sd->logging != LOG_CLAME || sb->log_lines / 9 * 8 <= (1u << 16))));
	/* every region inside meta_size (so none of the sums above wrapped
	 * around) and page aligned (the counters are mapped at ctr_off) */
#define REGION_OK(off, size) ((off) % EMU_PAGE == 0 && (off) <= sb->meta_size && \
			      (size) <= sb->meta_size - (off))
	geometry_ok = geometry_ok && REGION_OK(sb->adr_off, sb->adr_size) &&
		      REGION_OK(sb->ctr_off, sb->ctr_size) &&
		      REGION_OK(sb->ca_off, sb->ca_size) &&
		      REGION_OK(sb->shadow_off, sb->shadow_slots * sizeof(uint64_t));
#undef REGION_OK
	if (!geometry_ok)
		return emu_err(SPM_E_CORRUPT, "%s: inconsistent geometry", meta_path);
	if ((uint64_t)msize != sb->meta_size)
		return emu_err(SPM_E_TRUNCATED, "%s: size %lld, superblock says %llu",
			       meta_path, (long long)msize, (unsigned long long)sb->meta_size);
	if ((rc = check_rsr(meta_path, sb)) || (rc = bmt_check_sb(meta_path, sb)) ||
	    (rc = dedup_check_sb(meta_path, sb)) || (rc = dedup_check_tables(meta_path, sb)))
		return rc;
	if (sb->state == SB_STATE_DIRTY)
		return check_adr(meta_path, sb);
	return check_redo_clean(meta_path, sb);
}

/* ctrl_recover -- the controller's part of recovery (ADR drain). */
int ctrl_recover(struct emu *e)
{
	uint64_t drained, dropped;
	int rc = wq_recover(e, e->qdata.slot, e->qdata.cap, e->qctr.slot, e->qctr.cap,
			    &drained, &dropped);
	if (rc == -2)
		return emu_err(SPM_E_CORRUPT, "%s: more than %u dropped pairs to recover",
			       e->media.meta_path, ADR_DROPPED_MAX);
	if (rc)
		return emu_err(-ENOMEM, "out of memory in recovery");
	e->stat[ST_REC_DRAINED] += drained;
	e->stat[ST_REC_DROPPED] += dropped;
	return 0;
}

/* rekey_interrupted -- a re-key's data file is waiting at <path>.new. */
static int rekey_interrupted(const char *path)
{
	char tmp[PATH_MAX + 16];
	struct stat st;
	snprintf(tmp, sizeof(tmp), "%s.new", path);
	return lstat(tmp, &st) == 0 && S_ISREG(st.st_mode);
}

/* emu_open -- validate, map, recover. */
int emu_open(struct emu **out, const char *path, const struct emu_config *cfg)
{
	int rc = emu_crash_init_checked();
	if (rc)
		return rc;
	/* a re-key under a new key killed after its meta file was placed is
	 * finished first (rekey.c): its new key opens the pool */
	char rekey_key[PATH_MAX + 16];
	key_path_of(cfg->key_file, path, rekey_key, sizeof(rekey_key));
	if ((rc = emu_rekey_key_finish(path, rekey_key)) < 0)
		return rc;
	unsigned nch = 1;
	struct emu *e = emu_alloc();
	if (e)
		e->seq_step = 1;
	if (!e)
		return emu_err(-ENOMEM, "out of memory");
	e->media.lock_fd = -1;
	e->audit_fd = -1;
	char *meta_path = malloc(strlen(path) + 6);
	if (!meta_path) {
		free(e);
		return emu_err(-ENOMEM, "out of memory");
	}
	sprintf(meta_path, "%s.meta", path);
	struct data_hdr dh;
	struct superblock sb;
	rc = validate(path, meta_path, &dh, &sb);
	free(meta_path);
	if (rc == SPM_E_MISMATCH && rekey_interrupted(path))
		rc = emu_err(SPM_E_MISMATCH, "%s: its meta file is from a re-key that was "
			     "interrupted before it put the data file in place: run spm_rekey "
			     "again to finish it", path);
	if (rc)
		goto fail;
	char design[sizeof(sb.design) + 1];
	memcpy(design, sb.design, sizeof(sb.design));
	design[sizeof(sb.design)] = '\0';
	if (cfg->design[0] && !design_find(cfg->design)) {
		rc = emu_err(SPM_E_DESIGN, "unknown design \"%s\" (%s)", cfg->design,
			     design_names());
		goto fail;
	}
	if (cfg->design[0] && strcmp(cfg->design, design) != 0) {
		rc = emu_err(SPM_E_WRONGDESIGN, "design=%s: %s was created with design %s",
			     cfg->design, path, design);
		goto fail;
	}
	/* another program's pool is refused before anything is written */
	char layout[sizeof(sb.layout) + 1];
	memcpy(layout, sb.layout, sizeof(sb.layout));
	layout[sizeof(sb.layout)] = '\0';
	if (cfg->layout[0] && strcmp(cfg->layout, layout) != 0) {
		rc = emu_err(SPM_E_LAYOUT, "layout=%s: %s was created with %s%s", cfg->layout,
			     path, layout[0] ? "layout=" : "no layout", layout);
		goto fail;
	}
	memcpy(e->layout_name, layout, sizeof(e->layout_name));
	if (cfg->aes_bits && sb.aes_bits && cfg->aes_bits != sb.aes_bits) {
		rc = emu_err(SPM_E_OPTION, "aes_bits=%u: the pool uses %u", cfg->aes_bits,
			     sb.aes_bits);
		goto fail;
	}
	if ((rc = resolve(e, cfg, design)))
		goto fail;
	if (cfg->log_kib && (uint64_t)cfg->log_kib * 1024 / EMU_LINE != sb.log_lines) {
		rc = emu_err(SPM_E_OPTION, "log_kib=%u: %s was created with log_kib=%llu",
			     cfg->log_kib, path,
			     (unsigned long long)(sb.log_lines * EMU_LINE / 1024));
		goto fail;
	}
	if (!sb.mac_size && (cfg->bmt_n || cfg->bmt_m)) {
		rc = emu_err(SPM_E_OPTION, "bmt_n/bmt_m: design %s has no integrity tree", design);
		goto fail;
	}
	if ((cfg->bmt_n && cfg->bmt_n != sb.bmt_n) || (cfg->bmt_m && cfg->bmt_m != sb.bmt_m)) {
		rc = emu_err(SPM_E_OPTION, "bmt_n=%u, bmt_m=%u: %s was created with bmt_n=%u, "
			     "bmt_m=%u", cfg->bmt_n ? cfg->bmt_n : sb.bmt_n,
			     cfg->bmt_m ? cfg->bmt_m : sb.bmt_m, path, sb.bmt_n, sb.bmt_m);
		goto fail;
	}
	if (!sb.dd_size && (cfg->dedup_line || cfg->dewrite_pad || cfg->dedup_window)) {
		rc = emu_err(SPM_E_OPTION, "dedup_line/dewrite_pad/dedup_window: design %s does "
			     "not deduplicate", design);
		goto fail;
	}
	if ((cfg->dedup_line && cfg->dedup_line / EMU_LINE != sb.dd_unit) ||
	    (cfg->dewrite_pad && (cfg->dewrite_pad == 1) != (sb.dd_pad == DD_PAD_CRC))) {
		rc = emu_err(SPM_E_OPTION, "dedup_line/dewrite_pad: %s was created with "
			     "dedup_line=%u, dewrite_pad=%s", path, sb.dd_unit * EMU_LINE,
			     sb.dd_pad == DD_PAD_CRC ? "crc" : "version");
		goto fail;
	}
	if (sb.ctr_layout != e->layout->id) {
		rc = emu_err(SPM_E_CORRUPT, "%s.meta: counter layout %u does not fit design %s",
			     path, sb.ctr_layout, design);
		goto fail;
	}
	if (cfg->minor_bits && cfg->minor_bits != sb.minor_bits) {
		rc = emu_err(SPM_E_OPTION, "minor_bits=%u: %s was created with %u",
			     cfg->minor_bits, path, sb.minor_bits);
		goto fail;
	}
	e->minor_bits = sb.minor_bits;
	uint64_t generation = 0; /* the key file's record of the pool */
	if (e->design->enc == ENC_CTR) {
		char key_path[PATH_MAX + 16];
		uint8_t kcv[16];
		struct keyfile kf;
		key_path_of(cfg->key_file, path, key_path, sizeof(key_path));
		if (sb.aes_bits != 128 && sb.aes_bits != 256) {
			rc = emu_err(SPM_E_CORRUPT, "%s.meta: bad key size", path);
			goto fail;
		}
		if ((rc = check_names(path, key_path)) || (rc = key_read(key_path, &kf)))
			goto fail;
		if (kf.bits != sb.aes_bits)
			rc = emu_err(SPM_E_KEYFILE, "key file %s: not a %u-bit key (the pool's)",
				     key_path, sb.aes_bits);
		if (!rc)
			rc = set_keys(e, &kf, sb.uuid, kcv);
		generation = key_generation(&kf, sb.uuid);
		key_free(&kf);
		if (!rc && CRYPTO_memcmp(kcv, sb.kcv, 16) != 0)
			rc = emu_err(SPM_E_KEY, "wrong key for %s (key check value differs)",
				     path);
		if (!rc && !e->design->integrity)
			rc = bmt_check_no_registers(key_path, sb.uuid, path, design);
		if (!rc && !(e->key_path = strdup(key_path)))
			rc = emu_err(-ENOMEM, "out of memory");
		if (rc)
			goto fail;
	} else if ((rc = check_names(path, NULL))) {
		goto fail;
	}
	memcpy(e->sb_uuid, sb.uuid, 16);
	if ((rc = runtime_init(e, cfg)) ||
	    (rc = chan_count(e, cfg, sb.shadow_slots, &nch)))
		goto fail;
	if ((rc = check_cache_fits(e, sb.shadow_slots)) || (rc = audit_open(e)))
		goto fail;
	if (e->tm.qdata.cap > sb.adr_data_cap || e->tm.qctr.cap > sb.adr_ctr_cap) {
		rc = emu_err(SPM_E_OPTION, "wpq_data/wpq_ctr: this pool's ADR region "
			     "holds %u/%u entries", sb.adr_data_cap, sb.adr_ctr_cap);
		goto fail;
	}
	/* everything is checked: from here on the files may change */
	e->data_unlocked = cfg->lock_data_off;
	if ((rc = media_open(&e->media, path, cfg->durability, !cfg->lock_data_off)))
		goto fail;
	if (e->media.data_len != dh.pool_size || e->media.meta_len != sb.meta_size) {
		rc = emu_err(SPM_E_TRUNCATED, "%s: changed size while opening", path);
		goto fail;
	}
	/* locked: still the headers validated above (not files renamed in since
	 * by a re-key or a restore) */
	if (memcmp(e->media.data, &dh, sizeof(dh)) != 0 ||
	    memcmp(e->media.meta, &sb, offsetof(struct superblock, state)) != 0) {
		rc = emu_err(SPM_E_BUSY, "%s: its files changed while it was being opened; try "
			     "again", path);
		goto fail;
	}
	e->sb = (struct superblock *)e->media.meta;
	e->nlines = sb.nlines;
	e->ctr_home = (uint64_t *)(e->media.meta + sb.ctr_off);
	if (sb.mac_size) /* data entries carry their MAC home (recovery's drain too) */
		e->mac_home = e->media.meta + sb.mac_off;
	struct wq_entry *d = (struct wq_entry *)(e->media.meta + sb.adr_off + ADR_HDR_SIZE);
	wq_attach(&e->qdata, d, sb.adr_data_cap, sb.adr_data_cap, &e->tm.qdata);
	wq_attach(&e->qctr, d + sb.adr_data_cap, sb.adr_ctr_cap, sb.adr_ctr_cap,
		  &e->tm.qctr);
	e->rsr = (struct rsr *)(e->media.meta + sb.adr_off);
	e->adr_dropped = (struct adr_dropped *)(e->media.meta + sb.adr_off + ADR_DROPPED_OFF);
	if ((rc = check_epochs_mapped(e, generation)))
		goto fail;
	e->was_dirty = e->sb->state == SB_STATE_DIRTY;
	/* a dirty pool: recovery below writes both files, so their epoch is
	 * raised first (a copy of either made before this open is older) */
	if (e->was_dirty)
		create_mark_clear(e);
	if (e->was_dirty && (rc = epoch_raise(e)))
		goto fail;
	if (e->was_dirty && (rc = ctrl_recover(e)))
		goto fail;
	/* a clean pool stays clean until emu_mark_dirty: the runtime reads
	 * and checks it first, and a pool it refuses is left as it was */
	if ((rc = attach(e)) || (rc = redo_attach(e)) || (rc = bmt_attach(e, cfg)) ||
	    (rc = dedup_attach(e, cfg)))
		goto fail;
	/* committed redo records applied, interrupted ones' lines noted */
	if (e->was_dirty && (rc = redo_recover(e)))
		goto fail;
	/* integrity: verified (clean), or recovered and verified (dirty) */
	if ((rc = bmt_open(e)))
		goto fail;
	/* dedup: the tables rebuilt (dirty) or checked (clean) */
	if ((rc = dedup_open(e)))
		goto fail;
	/* (a dedup pool has no stale counters: its pads' input is written first) */
	int stale = e->was_dirty && e->design->enc == ENC_CTR && !e->dedup
			    ? ctrl_advance_stale(e) : 0;
	if (stale == -2) {
		rc = emu_err(SPM_E_CORRUPT, "%s.meta: the ADR region names a counter far "
			     "beyond its line's (damaged)", path);
		goto fail;
	}
	if (stale) { /* the crypto library's message says why */
		char why[256];
		snprintf(why, sizeof(why), "%s", emu_errmsg());
		rc = emu_err(SPM_E_CRYPTO, "%s: re-encrypting stale counters failed: %s", path,
			     why);
		goto fail;
	}
	if (e->was_dirty && (rc = redo_recover_finish(e)))
		goto fail;
	if ((rc = chan_attach(e, nch)))
		goto fail;
	*out = e;
	return 0;
fail:
	emu_free(e);
	return rc;
}

/* sync_counters -- nothing of a counter may stay only in the controller. */
static void sync_counters(struct emu *e)
{
	if (e->layout->id == LAYOUT_MONO) {
		for (uint64_t l = 0; l < e->nlines; l++)
			if (e->ctr_home[l] < e->cur_ctr[l])
				e->ctr_home[l] = e->cur_ctr[l];
		media_persist(&e->media, e->ctr_home, e->nlines * sizeof(uint64_t));
		return;
	}
	uint8_t *home = (uint8_t *)e->ctr_home;
	for (uint64_t cl = 0; cl < e->nlines / 64; cl++) {
		uint8_t line[EMU_LINE];
		e->layout->encode(e->cur_ctr + cl * 64, e->minor_bits, line);
		ctr_merge_home(e->layout, e->minor_bits, home + cl * EMU_LINE, line);
	}
	media_persist(&e->media, home, e->nlines);
}

/* emu_close -- clean shutdown: counters and queues to media, state clean. */
int emu_close(struct emu *e)
{
	if (!e)
		return 0;
	chan_close(e); /* every channel's counters and queues, first */
	pthread_mutex_lock(&e->lock);
	redo_apply_all(e); /* the redo log's committed records in place */
	ctrl_drain_all(e);
	if (e->bmt)
		bmt_close(e); /* counters with their tree */
	else if (e->dedup)
		dedup_close(e); /* the tables (the hash words are home) */
	else if (e->design->enc == ENC_CTR)
		sync_counters(e);
	/* a copy of either file made while open is now older, and refused
	 * once the key records the raise */
	int rc = epoch_raise(e);
	set_state(e, SB_STATE_CLEAN);
	pthread_mutex_unlock(&e->lock);
	emu_free(e);
	return rc;
}

/* emu_mark_dirty -- before the first write after emu_open: the pool is in
 * use (a crash from now on is recovered at the next open).  Its epoch and
 * the key's record are raised first: a copy of the files made before this
 * open is older from now on. */
int emu_mark_dirty(struct emu *e)
{
	if (e->was_dirty)
		return 0; /* marked and raised at open, before recovery */
	create_mark_clear(e);
	int rc = epoch_raise(e);
	if (!rc) {
		set_state(e, SB_STATE_DIRTY);
		bmt_mark_dirty(e); /* after the state word: a crash between is dirty */
	}
	return rc;
}

/* emu_prefault_media -- the prefault option: both files' pages mapped
 * (called at create, and at open once the pool is marked dirty: a refused
 * open must not touch the files). */
void emu_prefault_media(struct emu *e)
{
	media_prefault(&e->media);
}

/* emu_abandon -- give up an open pool without a clean shutdown: nothing is
 * drained or marked clean (a pool refused after recovery stays dirty). */
void emu_abandon(struct emu *e)
{
	if (!e)
		return;
	emu_free(e);
}

bool emu_has_integrity(const struct emu *e)
{
	return e->design->integrity != INTEG_NONE;
}

bool emu_was_dirty(const struct emu *e)
{
	return e->was_dirty;
}

uint64_t emu_size(const struct emu *e)
{
	return e->sb->pool_size;
}

const char *emu_design_name(const struct emu *e)
{
	return e->design->name;
}

/* emu_layout -- the layout name the pool was created with ("" = none). */
const char *emu_layout(const struct emu *e)
{
	return e->layout_name;
}

/* ---- for rekey.c: the checks and derivations above, from outside ---- */

/* emu_validate -- validate(): both headers read and checked, nothing written. */
int emu_validate(const char *path, const char *meta_path, struct data_hdr *dh,
		 struct superblock *sb)
{
	return validate(path, meta_path, dh, sb);
}

/* emu_info -- validate() and the superblock's fields, the state and the
 * data file's epoch word into *out; nothing written. */
int emu_info(const char *path, struct spm_info *out)
{
	char *meta_path = malloc(strlen(path) + 6);
	if (!meta_path)
		return emu_err(-ENOMEM, "out of memory");
	sprintf(meta_path, "%s.meta", path);
	struct data_hdr dh;
	struct superblock sb;
	int rc = validate(path, meta_path, &dh, &sb);
	uint64_t word = 0;
	if (!rc) {
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		ssize_t n = fd < 0 ? -1 : pread(fd, &word, sizeof(word), DH_EPOCH_OFF);
		if (n != (ssize_t)sizeof(word))
			rc = emu_err(n < 0 ? -errno : -EIO, "%s: cannot read its epoch word",
				     path);
		if (fd >= 0)
			close(fd);
	}
	free(meta_path);
	if (rc)
		return rc;
	memset(out, 0, sizeof(*out));
	memcpy(out->design, sb.design, sizeof(sb.design));
	memcpy(out->layout, sb.layout, sizeof(sb.layout));
	memcpy(out->uuid, sb.uuid, 16);
	out->pool_size = sb.pool_size;
	out->lines = sb.nlines;
	out->meta_size = sb.meta_size;
	out->aes_bits = sb.aes_bits;
	out->split_counters = sb.ctr_layout == LAYOUT_SPLIT;
	out->minor_bits = sb.minor_bits;
	out->wpq_data_cap = sb.adr_data_cap;
	out->wpq_ctr_cap = sb.adr_ctr_cap;
	out->log_bytes = sb.log_lines * EMU_LINE;
	out->mac_bytes = sb.mac_size;
	out->tree_bytes = sb.tree_size;
	out->dedup_bytes = sb.dd_size;
	out->bmt_n = sb.mac_size ? sb.bmt_n : 0;
	out->bmt_m = sb.mac_size ? sb.bmt_m : 0;
	out->dirty = sb.state == SB_STATE_DIRTY;
	out->epoch = word & EPOCH_MASK;
	return 0;
}

/* emu_derive_keys -- derive_keys(): the encryption key and check value. */
int emu_derive_keys(const uint8_t *key, unsigned bits, const uint8_t uuid[16], uint8_t *enc,
		    uint8_t kcv[16])
{
	return derive_keys(key, bits, uuid, enc, kcv);
}

/* data_hdr_crc -- dh_crc(): the data header's checksum. */
uint32_t data_hdr_crc(const struct data_hdr *dh)
{
	return dh_crc(dh);
}

/* emu_check_epochs -- the mapped files of m (a pool of uuid under the key
 * of kf) carry epoch words of one state of the pool, under a valid tag. */
int emu_check_epochs(const struct media *m, const struct keyfile *kf, const uint8_t uuid[16])
{
	struct emu *e = emu_alloc();
	if (e)
		e->seq_step = 1;
	if (!e)
		return emu_err(-ENOMEM, "out of memory");
	e->media = *m; /* borrowed: not closed here */
	memcpy(e->sb_uuid, uuid, 16);
	int rc = crypto_hkdf(kf->key, kf->bits / 8, uuid, 16, "spm epoch", e->epoch_key,
			     sizeof(e->epoch_key));
	e->has_epoch_key = 1;
	if (!rc)
		rc = check_epochs_mapped(e, 0);
	OPENSSL_cleanse(e->epoch_key, sizeof(e->epoch_key));
	free(e);
	return rc;
}
