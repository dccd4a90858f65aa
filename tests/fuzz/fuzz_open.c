/*
 * fuzz_open.c -- libFuzzer target: spm_open() of a pool whose meta file is
 * made of the fuzzer's bytes (bad input).  Built with clang only
 * (-DSPM_FUZZ=ON): the library's sources are compiled into this binary with
 * -fsanitize=fuzzer,address,undefined.
 *
 * Every input must be opened without a crash, a sanitizer report, a leak or a
 * hang; a refused open must return a bad-input error code with a message and
 * leave the pool's three files byte for byte as they were.  A violation
 * abort()s, so libFuzzer keeps the input.
 *
 * At the first call a valid 4 MiB sca pool with data is created in a
 * temporary directory (SPM_TEST_DIR or TMPDIR) and kept in memory as the
 * template; two pools are made of it, P (for overlays) and R (for raw meta
 * files), with the template's data and key files.  An input is
 *
 *   byte 0     flags (below)
 *   bytes 1-3  overlay offset, little endian (modulo the meta file's size)
 *   bytes 4-7  meta file length, little endian (with F_SETLEN)
 *   bytes 8-   payload
 *
 * Without F_OVERLAY the payload is R's whole meta file (an input shorter
 * than 8 bytes is taken whole as the meta file).  With it, P's meta file is
 * the template's with the payload written over it at the offset; then, in
 * this order, F_KEEPID restores the template's magic, version, uuid and key
 * check value, F_DIRTY sets the state word dirty (so recovery reads the ADR
 * region), F_FIXSUM recomputes the superblock checksum (so the geometry
 * checks and what follows them are reached), and F_SETLEN cuts or
 * zero-extends the file.  Pure random bytes rarely get past the magic, hence
 * the overlay and the seed corpus: with SPM_FUZZ_SEEDS=DIR set, the first
 * call writes seeds made from the template there (DIR is created).
 * SPM_FUZZ_VERBOSE=1 prints each open's result; SPM_FUZZ_STRICT=1 see
 * after_recovery().  At exit a line counts the inputs by outcome.
 *
 * Replay an input: fuzz_open FILE...; run: see fuzz_open_bounded in
 * tests/CMakeLists.txt (ctest -L fuzz in a build configured with
 * CC=clang -DSPM_FUZZ=ON).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/rand.h>

#include <spm.h>
#include "emu_internal.h"

enum {
	F_OVERLAY = 1,
	F_KEEPID = 2,
	F_DIRTY = 4,
	F_FIXSUM = 8,
	F_SETLEN = 16,
};
#define HDR 8
#define SB_BYTES sizeof(struct superblock) /* with the state word */
#define POOL_SIZE (4u << 20)
#define LEN_SLACK (2 * EMU_PAGE) /* F_SETLEN: up to this much longer */

struct pool {
	char path[4200], meta[4300], key[4300];
	int fd_meta, fd_data;
	const uint8_t *data; /* the data file, mapped read-only */
	const uint8_t *meta_map; /* the meta file (only read at its full size) */
};

static char dir[4096];
static struct pool P, R;
static uint8_t *t_data, *t_meta, *t_key; /* the template's files */
static size_t n_data, n_meta, n_key;
static uint8_t *expect; /* P's meta file as it must be: n_meta + LEN_SLACK */
static uint8_t *rbuf;   /* a file read back */
static unsigned long execs, n_opened, n_code[SPM_E_BASE - SPM_E_LAST + 1];
static int verbose; /* SPM_FUZZ_VERBOSE=1: each open's result on stderr */
static int strict;  /* SPM_FUZZ_STRICT=1: see after_recovery() */
static unsigned long n_after_recovery;

/*
 * The codes a refused open may return.  SPM_E_OPTION although no option is
 * given: a superblock with a valid checksum may declare fewer ADR queue
 * entries or shadow slots than the default profile needs; the open then
 * names the option that would make the pool usable (wpq_data, ctr_cache_kib).
 */
static const int allowed[] = {SPM_E_CORRUPT, SPM_E_NOTPOOL, SPM_E_VERSION,
			      SPM_E_TRUNCATED, SPM_E_MISMATCH, SPM_E_DESIGN,
			      SPM_E_KEY, SPM_E_KEYFILE, SPM_E_OPTION};

/*
 * RAND_bytes -- replaces OpenSSL's for the library compiled into this binary:
 * a fixed stream, so the template pool (its uuid and its key) is the same in
 * every run and a corpus or a crashing input replays anywhere.
 */
int RAND_bytes(unsigned char *buf, int num)
{
	static uint64_t s = 0x73706d2d66757a7aull;
	for (int i = 0; i < num; i++) {
		uint64_t z = (s += 0x9e3779b97f4a7c15ull);
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
		buf[i] = (uint8_t)(z ^ (z >> 31));
	}
	return 1;
}

static void die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
static void die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("fuzz_open: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	abort();
}

static uint8_t *slurp(const char *p, size_t *len)
{
	int fd = open(p, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0)
		die("%s: %s", p, strerror(errno));
	uint8_t *b = malloc((size_t)st.st_size + 1);
	if (!b || pread(fd, b, (size_t)st.st_size, 0) != st.st_size)
		die("%s: cannot read", p);
	close(fd);
	*len = (size_t)st.st_size;
	return b;
}

static void pwrite_all(int fd, const void *b, size_t n, size_t off, const char *what)
{
	if (n && pwrite(fd, b, n, (off_t)off) != (ssize_t)n)
		die("%s: write: %s", what, strerror(errno));
}

static void spit(const char *p, const void *b, size_t n)
{
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		die("%s: %s", p, strerror(errno));
	pwrite_all(fd, b, n, 0, p);
	close(fd);
}

/* same -- the file holds exactly the n bytes b. */
static int same(int fd, const uint8_t *b, size_t n)
{
	struct stat st;
	if (fstat(fd, &st) != 0 || (size_t)st.st_size != n)
		return 0;
	size_t got = 0;
	ssize_t r;
	while (got < n && (r = pread(fd, rbuf + got, n - got, (off_t)got)) > 0)
		got += (size_t)r;
	return got == n && memcmp(rbuf, b, n) == 0;
}

static void cleanup(void)
{
	fprintf(stderr, "fuzz_open: %lu inputs, %lu opened, %lu refused after recovery "
		"(files changed, known); refused:", execs, n_opened, n_after_recovery);
	for (int i = 0; i <= SPM_E_BASE - SPM_E_LAST; i++)
		if (n_code[i])
			fprintf(stderr, " %s %lu,", spm_strerror(SPM_E_BASE - i), n_code[i]);
	fputc('\n', stderr);
	const struct pool *ps[] = {&P, &R};
	for (int i = 0; i < 2; i++) {
		unlink(ps[i]->path);
		unlink(ps[i]->meta);
		unlink(ps[i]->key);
	}
	char t[4200];
	snprintf(t, sizeof(t), "%s/template", dir);
	unlink(t);
	snprintf(t, sizeof(t), "%s/template.meta", dir);
	unlink(t);
	snprintf(t, sizeof(t), "%s/template.key", dir);
	unlink(t);
	rmdir(dir);
}

static void make_pool(struct pool *p, const char *name)
{
	snprintf(p->path, sizeof(p->path), "%s/%s", dir, name);
	snprintf(p->meta, sizeof(p->meta), "%s.meta", p->path);
	snprintf(p->key, sizeof(p->key), "%s.key", p->path);
	spit(p->path, t_data, n_data);
	spit(p->meta, t_meta, n_meta);
	spit(p->key, t_key, n_key);
	p->fd_data = open(p->path, O_RDWR | O_CLOEXEC);
	p->fd_meta = open(p->meta, O_RDWR | O_CLOEXEC);
	if (p->fd_data < 0 || p->fd_meta < 0)
		die("%s: %s", p->path, strerror(errno));
	p->data = mmap(NULL, n_data, PROT_READ, MAP_SHARED, p->fd_data, 0);
	p->meta_map = mmap(NULL, n_meta, PROT_READ, MAP_SHARED, p->fd_meta, 0);
	if (p->data == MAP_FAILED || p->meta_map == MAP_FAILED)
		die("%s: mmap: %s", p->path, strerror(errno));
}

/* restore_pages -- rewrite the pages of a file (mapped at map, n bytes long)
 * that differ from the template t. */
static void restore_pages(int fd, const uint8_t *map, const uint8_t *t, size_t n,
			  const char *what)
{
	for (size_t at = 0; at < n; at += EMU_PAGE) {
		size_t k = n - at < EMU_PAGE ? n - at : EMU_PAGE;
		if (memcmp(map + at, t + at, k) != 0)
			pwrite_all(fd, t + at, k, at, what);
	}
}

static void seed(const char *sdir, const char *name, uint8_t flags, uint32_t off,
		 uint32_t len, const void *payload, size_t n)
{
	char p[4300];
	snprintf(p, sizeof(p), "%s/seed-%s", sdir, name);
	uint8_t *b = malloc(HDR + n);
	if (!b)
		die("out of memory");
	b[0] = flags;
	for (int i = 0; i < 3; i++)
		b[1 + i] = (uint8_t)(off >> (8 * i));
	for (int i = 0; i < 4; i++)
		b[4 + i] = (uint8_t)(len >> (8 * i));
	if (n)
		memcpy(b + HDR, payload, n);
	spit(p, b, HDR + n);
	free(b);
}

/* write_seeds -- inputs that open, or nearly, to start the fuzzer from. */
static void write_seeds(const char *sdir)
{
	if (mkdir(sdir, 0700) != 0 && errno != EEXIST)
		die("%s: %s", sdir, strerror(errno));
	const struct superblock *sb = (const struct superblock *)t_meta;
	size_t head = n_meta < 8192 ? n_meta : 8192;
	seed(sdir, "intact", F_OVERLAY, 0, 0, NULL, 0);
	seed(sdir, "dirty", F_OVERLAY | F_DIRTY, 0, 0, NULL, 0);
	/* the superblock, every field fuzzable, the checksum kept right */
	seed(sdir, "sb", F_OVERLAY | F_KEEPID | F_FIXSUM, 0, 0, t_meta, SB_BYTES);
	seed(sdir, "sb-dirty", F_OVERLAY | F_KEEPID | F_FIXSUM | F_DIRTY, 0, 0, t_meta,
	     SB_BYTES);
	/* the real meta file's first 8 KiB: superblock and ADR header */
	seed(sdir, "head", F_OVERLAY, 0, 0, t_meta, head);
	seed(sdir, "raw-head", 0, 0, 0, t_meta, head);
	seed(sdir, "raw-sb", 0, 0, 0, t_meta, SB_BYTES);
	seed(sdir, "short", F_OVERLAY | F_SETLEN, 0, (uint32_t)(n_meta - 1), NULL, 0);
	seed(sdir, "long", F_OVERLAY | F_SETLEN, 0, (uint32_t)(n_meta + EMU_LINE), NULL, 0);
	/* ADR entries to recover: a ready data entry, a ready counter entry, an
	 * unready counter-atomic pair */
	struct wq_entry w[2];
	memset(w, 0, sizeof(w));
	uint64_t line = EMU_DATA_HDR_SIZE / EMU_LINE + 64;
	w[0] = (struct wq_entry){.seq = 7, .addr = line, .state = WQ_VALID | WQ_READY};
	memset(w[0].payload, 0xa5, sizeof(w[0].payload));
	w[1] = (struct wq_entry){.seq = 8, .addr = line + 1,
				 .state = WQ_VALID | WQ_PAIRED, .aux = 9};
	uint32_t dq = (uint32_t)(sb->adr_off + ADR_HDR_SIZE);
	uint32_t cq = dq + sb->adr_data_cap * (uint32_t)sizeof(struct wq_entry);
	seed(sdir, "adr-data", F_OVERLAY | F_DIRTY, dq, 0, w, sizeof(w));
	w[0] = (struct wq_entry){.seq = 9, .addr = line / 8, .state = WQ_VALID | WQ_READY};
	memcpy(w[0].payload, t_meta + sb->ctr_off + (line / 8) * 64, 64);
	w[0].payload[0]++;
	seed(sdir, "adr-ctr", F_OVERLAY | F_DIRTY, cq, 0, w, sizeof(w[0]));
	/* counters and the shadow table */
	seed(sdir, "ctr", F_OVERLAY, (uint32_t)(sb->ctr_off + line * 8), 0,
	     t_meta + sb->ctr_off + line * 8, 64);
	uint64_t sh[2] = {line / 8 + 1, 1};
	seed(sdir, "shadow", F_OVERLAY | F_DIRTY, (uint32_t)sb->shadow_off, 0, sh,
	     sizeof(sh));
	/* what the fuzzer found (fixed in validate()), replayed every run: a
	 * dirty pool's ADR entry addressing a line far outside the pool (wild
	 * write in recovery) */
	w[0] = (struct wq_entry){.seq = 1, .addr = 1ull << 40, .state = WQ_VALID | WQ_READY};
	seed(sdir, "bug-adr-addr", F_OVERLAY | F_DIRTY, dq, 0, w, sizeof(w[0]));
	/* an ADR region 64 bytes longer, the file too: counters not page
	 * aligned (the open failed with -ENOMEM after marking the pool dirty) */
	struct superblock s = *sb;
	s.adr_size += 64, s.ctr_off += 64, s.ca_off += 64, s.shadow_off += 64;
	s.meta_size += 64;
	seed(sdir, "bug-unaligned", F_OVERLAY | F_FIXSUM | F_SETLEN, 0,
	     (uint32_t)(n_meta + 64), &s, SB_BYTES);
	/* adr_size, ctr_off and ctr_size 2^63 larger: the sums wrap around to
	 * the real layout, the counters are looked for 2^63 bytes away */
	s = *sb;
	s.adr_size += 1ull << 63, s.ctr_off += 1ull << 63, s.ctr_size += 1ull << 63;
	seed(sdir, "bug-wrap", F_OVERLAY | F_FIXSUM, 0, 0, &s, SB_BYTES);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	unsetenv("SPM_CONF");
	unsetenv("SPM_CRASH");
	unsetenv("SPM_AUDIT");
	const char *base = getenv("SPM_TEST_DIR");
	if (!base || !*base)
		base = getenv("TMPDIR");
	if (!base || !*base)
		base = "/tmp";
	snprintf(dir, sizeof(dir), "%s/spm-fuzz-XXXXXX", base);
	if (!mkdtemp(dir))
		die("mkdtemp %s: %s", dir, strerror(errno));
	atexit(cleanup);
	char t[4200], tm[4300], tk[4300];
	snprintf(t, sizeof(t), "%s/template", dir);
	snprintf(tm, sizeof(tm), "%s.meta", t);
	snprintf(tk, sizeof(tk), "%s.key", t);
	spm_pool *p = NULL;
	if (spm_create(&p, t, POOL_SIZE, "design=sca"))
		die("spm_create %s: %s", t, spm_errormsg());
	char *root = spm_root(p, 256);
	if (!root || spm_tx_begin(p) || spm_tx_add(p, root, 256))
		die("root: %s", spm_errormsg());
	strcpy(root, "the fuzzer's template pool");
	if (spm_tx_commit(p) || spm_tx_begin(p) || !spm_tx_alloc(p, 1000) ||
	    spm_tx_commit(p) || spm_close(p))
		die("template: %s", spm_errormsg());
	t_data = slurp(t, &n_data);
	t_meta = slurp(tm, &n_meta);
	t_key = slurp(tk, &n_key);
	if (n_meta < SB_BYTES || n_meta > (1u << 24) || n_data != POOL_SIZE)
		die("unexpected template geometry");
	expect = calloc(1, n_meta + LEN_SLACK);
	rbuf = malloc(n_data > n_meta + LEN_SLACK ? n_data : n_meta + LEN_SLACK);
	if (!expect || !rbuf)
		die("out of memory");
	memcpy(expect, t_meta, n_meta);
	make_pool(&P, "p");
	make_pool(&R, "r");
	const char *v = getenv("SPM_FUZZ_VERBOSE");
	verbose = v && *v && *v != '0';
	v = getenv("SPM_FUZZ_STRICT");
	strict = v && *v && *v != '0';
	const char *sdir = getenv("SPM_FUZZ_SEEDS");
	if (sdir && *sdir)
		write_seeds(sdir);
	return 0;
}

/* check_refused -- rc is a bad-input error with a message. */
static void check_refused(int rc, const char *what)
{
	const char *msg = spm_errormsg();
	if (verbose)
		fprintf(stderr, "fuzz_open: %s: %d %s\n", what, rc, msg);
	int ok = 0;
	for (size_t i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++)
		ok |= rc == allowed[i];
	if (!ok)
		die("%s: spm_open = %d (%s), not a bad-input code: %s", what, rc,
		    spm_strerror(rc), msg);
	if (!msg || !msg[0])
		die("%s: spm_open = %d with no message", what, rc);
	n_code[SPM_E_BASE - rc]++;
}

static void check_data(const struct pool *p, const char *what)
{
	if (memcmp(p->data, t_data, n_data) != 0)
		die("%s: the failed open (%s) modified %s", what, spm_errormsg(), p->path);
	int fd = open(p->key, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || !same(fd, t_key, n_key))
		die("%s: the failed open modified %s", what, p->key);
	close(fd);
}

/* opened -- exercise an opened pool a little and close it. */
static void opened(spm_pool *p)
{
	if (verbose)
		fprintf(stderr, "fuzz_open: opened\n");
	n_opened++;
	volatile char sink = 0;
	const char *root = spm_root(p, 16);
	if (root)
		for (int i = 0; i < 16; i++)
			sink ^= root[i];
	(void)sink;
	spm_close(p);
}

/* restore_data -- after a successful open: the data file as the template's. */
static void restore_data(struct pool *p)
{
	if (ftruncate(p->fd_data, (off_t)n_data) != 0)
		die("%s: ftruncate: %s", p->path, strerror(errno));
	restore_pages(p->fd_data, p->data, t_data, n_data, p->path);
	/* an open that got as far as raising the pool's generation wrote the
	 * key file too (a new file renamed over it): back to the template's */
	int fd = open(p->key, O_RDONLY | O_CLOEXEC);
	int kept = fd >= 0 && same(fd, t_key, n_key);
	if (fd >= 0)
		close(fd);
	if (!kept)
		spit(p->key, t_key, n_key);
}

static int after_recovery(int rc, const struct superblock *sb);

static void run_raw(const uint8_t *b, size_t n)
{
	if (ftruncate(R.fd_meta, 0) != 0)
		die("%s: ftruncate: %s", R.meta, strerror(errno));
	pwrite_all(R.fd_meta, b, n, 0, R.meta);
	spm_pool *p = NULL;
	int rc = spm_open(&p, R.path, NULL);
	if (rc == 0) {
		opened(p);
		restore_data(&R);
		return;
	}
	check_refused(rc, "raw meta file");
	if (p)
		die("raw meta file: *pool set by a failed open");
	struct superblock sb;
	memset(&sb, 0, sizeof(sb));
	memcpy(&sb, b, n < sizeof(sb) ? n : sizeof(sb));
	if (after_recovery(rc, &sb)) { /* known: the meta file is rewritten next time */
		n_after_recovery++;
		restore_data(&R);
		return;
	}
	if (!same(R.fd_meta, b, n))
		die("raw meta file: the failed open (%s) modified %s", spm_errormsg(), R.meta);
	check_data(&R, "raw meta file");
}

/*
 * after_recovery -- the open of a dirty pool failed after the controller's
 * recovery had begun: at the heap header decrypted from the recovered media,
 * or at a dropped pair or reserved slot naming a counter no
 * write could have used, or more dropped pairs than the ADR header holds.
 * ADR entries, counters and ciphertext have no integrity check, so garbage
 * there is found only then, and the recovery (the epochs raised, entries
 * drained home, stale lines re-encrypted) has been written.  A known limit
 * of "refused before any file is modified" (doc/reliability.md);
 * SPM_FUZZ_STRICT=1 makes it a failure like any other change.
 */
static int after_recovery(int rc, const struct superblock *sb)
{
	const char *m = spm_errormsg();
	return !strict && sb->state == SB_STATE_DIRTY &&
	       (rc == SPM_E_CORRUPT || rc == SPM_E_VERSION) &&
	       (strstr(m, ": heap ") || strstr(m, "far beyond") || strstr(m, "dropped pairs"));
}

static void run_overlay(uint8_t flags, size_t off, size_t len, const uint8_t *b,
			size_t n)
{
	struct superblock *sb = (struct superblock *)expect;
	const struct superblock *tsb = (const struct superblock *)t_meta;
	off %= n_meta;
	if (n > n_meta - off)
		n = n_meta - off;
	memcpy(expect + off, b, n);
	if (flags & F_KEEPID) {
		memcpy(sb->magic, tsb->magic, sizeof(sb->magic));
		sb->version = tsb->version;
		memcpy(sb->uuid, tsb->uuid, sizeof(sb->uuid));
		memcpy(sb->kcv, tsb->kcv, sizeof(sb->kcv));
	}
	if (flags & F_DIRTY)
		sb->state = SB_STATE_DIRTY;
	if (flags & F_FIXSUM)
		sb->checksum = sb_crc(sb);
	len = flags & F_SETLEN ? len % (n_meta + LEN_SLACK) : n_meta;
	if (len > n_meta)
		memset(expect + n_meta, 0, len - n_meta);
	pwrite_all(P.fd_meta, expect, SB_BYTES, 0, P.meta);
	pwrite_all(P.fd_meta, expect + off, n, off, P.meta);
	if (ftruncate(P.fd_meta, (off_t)len) != 0)
		die("%s: ftruncate: %s", P.meta, strerror(errno));

	spm_pool *p = NULL;
	int rc = spm_open(&p, P.path, NULL);
	if (rc == 0) {
		opened(p);
		/* the open may have changed anything: back to the template */
		if (ftruncate(P.fd_meta, (off_t)n_meta) != 0)
			die("%s: ftruncate: %s", P.meta, strerror(errno));
		if (len < n_meta)
			pwrite_all(P.fd_meta, t_meta + len, n_meta - len, len, P.meta);
		restore_pages(P.fd_meta, P.meta_map, t_meta, n_meta, P.meta);
		restore_data(&P);
	} else {
		check_refused(rc, "overlay");
		if (p)
			die("overlay: *pool set by a failed open");
		if (after_recovery(rc, sb)) {
			/* known (see after_recovery): back to the template, all of it */
			n_after_recovery++;
			if (ftruncate(P.fd_meta, (off_t)n_meta) != 0)
				die("%s: ftruncate: %s", P.meta, strerror(errno));
			restore_pages(P.fd_meta, P.meta_map, t_meta, n_meta, P.meta);
			restore_data(&P);
		} else {
			if (!same(P.fd_meta, expect, len))
				die("overlay (flags %#x, offset %zu, %zu bytes, length %zu): the "
				    "failed open (%d: %s) modified %s", flags, off, n, len, rc,
				    spm_errormsg(), P.meta);
			check_data(&P, "overlay");
			/* back to the template: what was written, what was cut */
			if (ftruncate(P.fd_meta, (off_t)n_meta) != 0)
				die("%s: ftruncate: %s", P.meta, strerror(errno));
			if (len < n_meta)
				pwrite_all(P.fd_meta, t_meta + len, n_meta - len, len, P.meta);
			pwrite_all(P.fd_meta, t_meta, SB_BYTES, 0, P.meta);
			pwrite_all(P.fd_meta, t_meta + off, n, off, P.meta);
		}
	}
	memcpy(expect, t_meta, SB_BYTES);
	memcpy(expect + off, t_meta + off, n);
	if (len > n_meta)
		memset(expect + n_meta, 0, len - n_meta);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < HDR || !(data[0] & F_OVERLAY)) {
		run_raw(size < HDR ? data : data + HDR, size < HDR ? size : size - HDR);
	} else {
		size_t off = data[1] | (size_t)data[2] << 8 | (size_t)data[3] << 16;
		size_t len = data[4] | (size_t)data[5] << 8 | (size_t)data[6] << 16 |
			     (size_t)data[7] << 24;
		run_overlay(data[0], off, len, data + HDR, size - HDR);
	}
	/* now and then, make sure the restores are complete */
	if (++execs % 4096 == 0) {
		if (!same(P.fd_meta, t_meta, n_meta) ||
		    memcmp(P.data, t_data, n_data) != 0 || memcmp(R.data, t_data, n_data) != 0)
			die("the harness did not restore the template");
	}
	return 0;
}
