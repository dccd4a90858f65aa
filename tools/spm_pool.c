/*
 * spm_pool.c -- spm-pool, the pool tool (as pmempool is to libpmemobj):
 * info, check, dump and stat read a pool without writing to it, create makes
 * one, rekey re-encrypts one under a new key.
 *
 *   spm-pool info POOL [OPTIONS]
 *   spm-pool check POOL [OPTIONS]
 *   spm-pool dump POOL [--offset O] [--length L] [--raw] [OPTIONS]
 *   spm-pool stat POOL [OPTIONS]
 *   spm-pool create POOL SIZE [OPTIONS]
 *   spm-pool rekey POOL [OPTIONS]
 *
 * check, dump and stat (and info on a dirty pool) open a private copy of the
 * pool's files (data, .meta, its key file and <key>.tcb) in a temporary
 * directory: recovery runs on the copy, the pool's own files are only read.
 *
 * Exit status: 0 ok, 2 usage, 3 a system error (-errno), 5 check found
 * damage (tampered lines), 10 + the error's place among spm's codes
 * otherwise (as the example commands and spm-rekey).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <spm.h>

#define EXIT_USAGE 2
#define EXIT_SYSTEM 3
#define EXIT_DAMAGED 5

static void usage_to(FILE *f)
{
	fprintf(f,
		"usage: spm-pool info POOL [OPTIONS]\n"
		"       spm-pool check POOL [OPTIONS]\n"
		"       spm-pool dump POOL [--offset O] [--length L] [--raw] [OPTIONS]\n"
		"       spm-pool stat POOL [OPTIONS]\n"
		"       spm-pool create POOL SIZE [OPTIONS]\n"
		"       spm-pool rekey POOL [OPTIONS]\n"
		"       spm-pool --help\n"
		"OPTIONS is spm's \"key=value;...\" (as spm_open's: key_file=..., or\n"
		"spm_create's for create).  Numbers take suffixes k, m, g.\n"
		"  info    design, geometry, key, clean/dirty, epoch, root and heap usage,\n"
		"          the files' sizes; never writes (a dirty pool is not recovered:\n"
		"          its heap is shown as recovery would leave it, from a copy)\n"
		"  check   what recovery would do, and every tampered line, counter or\n"
		"          node (integrity designs); never writes\n"
		"  dump    the decrypted bytes of the pool's view from O (default 4096,\n"
		"          the first byte after the controller's header page) for L bytes\n"
		"          (default: to the end), as hex like xxd or raw (--raw)\n"
		"  stat    every statistic after an open (recovery's included)\n"
		"  create  a new pool of SIZE bytes\n"
		"  rekey   re-encrypt every line of a clean pool under a new random key,\n"
		"          which replaces the key in its key file (spm_rekey_key); the\n"
		"          old key file no longer opens it.  Crash-safe: killed, the pool\n"
		"          opens under the old key or the new one\n"
		"check, dump and stat (and info on a dirty pool) open a copy of the pool's\n"
		"files (data, .meta, key file, <key>.tcb) in a temporary directory\n"
		"($TMPDIR or /tmp): a dirty pool is recovered there, as any open would\n"
		"recover it, and the pool's own files are only read.  Do not run them on\n"
		"a pool another process has open.  To re-key a pool restored from a\n"
		"backup (a new identity under the same key) use spm-rekey.\n"
		"Exit status: 0 ok, 2 usage, 3 system error, 5 check found damage\n"
		"(tampered lines), 10 + the error's place among spm's codes otherwise\n"
		"(10 not a pool, 11 truncated, 12 corrupt, 13 mismatch, 15 wrong key,\n"
		"16 key file, 18 option, 24 rollback, 25 layout, 27 tampered...).\n");
}

static int usage(const char *fmt, const char *arg)
{
	fprintf(stderr, "spm-pool: ");
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	usage_to(stderr);
	return EXIT_USAGE;
}

/* exit_of -- the exit status of spm error rc. */
static int exit_of(int rc)
{
	if (rc <= SPM_E_BASE && rc >= SPM_E_LAST)
		return 10 + (SPM_E_BASE - rc);
	return EXIT_SYSTEM;
}

/* fail -- report an spm error of `what`; its exit status. */
static int fail(const char *what, int rc)
{
	const char *msg = spm_errormsg();
	fprintf(stderr, "spm-pool: %s: %s -- %s\n", what, msg[0] ? msg : "failed",
		spm_strerror(rc));
	return exit_of(rc);
}

/* parse_num -- a whole number with an optional binary suffix; -1 if bad. */
static int parse_num(const char *s, uint64_t *out)
{
	char *end;
	if (!s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 0);
	if (errno)
		return -1;
	unsigned shift = 0;
	if (*end == 'k' || *end == 'K')
		shift = 10;
	else if (*end == 'm' || *end == 'M')
		shift = 20;
	else if (*end == 'g' || *end == 'G')
		shift = 30;
	if (shift)
		end++;
	if (*end || (shift && v > (UINT64_MAX >> shift)))
		return -1;
	*out = (uint64_t)v << shift;
	return 0;
}

/* ---- the pool's files, and a private copy of them ----------------------- */

/* key_path -- the key file the options name (the last key_file=), else
 * <path>.key. */
static void key_path(const char *path, const char *opts, char *out, size_t n)
{
	snprintf(out, n, "%s.key", path);
	for (const char *p = opts; p && *p;) {
		const char *end = strchr(p, ';');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		while (len && (*p == ' ' || *p == '\t'))
			p++, len--;
		if (len > 9 && !strncmp(p, "key_file=", 9))
			snprintf(out, n, "%.*s", (int)(len - 9), p + 9);
		p = end ? end + 1 : p + len;
	}
}

static long long file_size(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 ? (long long)st.st_size : -1;
}

/* copy_file -- from to to (made with mode), 0 or -errno; -ENOENT if from is
 * missing and optional. */
static int copy_file(const char *from, const char *to, mode_t mode)
{
	int in = open(from, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return -errno;
	int out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
	if (out < 0) {
		int e = -errno;
		close(in);
		return e;
	}
	static char buf[1 << 20];
	int rc = 0;
	for (;;) {
		ssize_t got = read(in, buf, sizeof(buf));
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			rc = got < 0 ? -errno : 0;
			break;
		}
		for (ssize_t done = 0; done < got;) {
			ssize_t w = write(out, buf + done, (size_t)(got - done));
			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0) {
				rc = -errno;
				break;
			}
			done += w;
		}
		if (rc)
			break;
	}
	close(in);
	if (close(out) && !rc)
		rc = -errno;
	return rc;
}

struct copy {
	char dir[4096];
	char path[4200], meta[4200], key[4200], tcb[4200];
	char opts[8192]; /* the options with key_file= the copied key */
	int has_key;
};

static void copy_remove(struct copy *c)
{
	unlink(c->path);
	unlink(c->meta);
	unlink(c->key);
	unlink(c->tcb);
	char tmp[4300]; /* what an open of the copy may have left beside it */
	snprintf(tmp, sizeof(tmp), "%s.new", c->key);
	unlink(tmp);
	rmdir(c->dir);
}

/* copy_make -- the pool's files copied into a new private directory; 0 or
 * an exit status (reported). */
static int copy_make(struct copy *c, const char *path, const char *opts)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(c->dir, sizeof(c->dir), "%s/spm-pool.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(c->dir)) {
		fprintf(stderr, "spm-pool: cannot make a temporary directory %s: %s\n", c->dir,
			strerror(errno));
		return EXIT_SYSTEM;
	}
	snprintf(c->path, sizeof(c->path), "%s/pool", c->dir);
	snprintf(c->meta, sizeof(c->meta), "%s/pool.meta", c->dir);
	snprintf(c->key, sizeof(c->key), "%s/pool.key", c->dir);
	snprintf(c->tcb, sizeof(c->tcb), "%s/pool.key.tcb", c->dir);
	char src[4200], kp[4096];
	int rc = copy_file(path, c->path, 0600);
	const char *which = path;
	if (!rc) {
		snprintf(src, sizeof(src), "%s.meta", path);
		which = src;
		rc = copy_file(src, c->meta, 0600);
	}
	key_path(path, opts, kp, sizeof(kp));
	if (!rc) {
		which = kp;
		rc = copy_file(kp, c->key, 0600);
		c->has_key = rc == 0;
		if (rc == -ENOENT) /* a plain pool has none; others: spm_open says */
			rc = 0;
	}
	if (!rc && c->has_key) {
		snprintf(src, sizeof(src), "%s.tcb", kp);
		which = src;
		rc = copy_file(src, c->tcb, 0600);
		if (rc == -ENOENT)
			rc = 0;
	}
	if (rc) {
		if (rc == -ENOENT && which == path)
			fprintf(stderr, "spm-pool: %s: %s\n", path, strerror(-rc));
		else
			fprintf(stderr, "spm-pool: cannot copy %s into %s: %s\n", which, c->dir,
				strerror(-rc));
		copy_remove(c);
		return EXIT_SYSTEM;
	}
	if (c->has_key)
		snprintf(c->opts, sizeof(c->opts), "%s%skey_file=%s", opts ? opts : "",
			 opts && *opts ? ";" : "", c->key);
	else
		snprintf(c->opts, sizeof(c->opts), "%s", opts ? opts : "");
	return 0;
}

/* copy_open -- copy the pool and open the copy (recovering it); 0 or an exit
 * status (reported; the copy removed). */
static int copy_open(struct copy *c, const char *path, const char *opts, spm_pool **pool,
		     int *err)
{
	int code = copy_make(c, path, opts);
	if (code)
		return code;
	int rc = spm_open(pool, c->path, c->opts);
	if (err)
		*err = rc;
	if (rc) {
		code = fail(path, rc);
		copy_remove(c);
		return code;
	}
	return 0;
}

/* ---- commands ------------------------------------------------------------ */

static void print_size(const char *name, long long v)
{
	if (v < 0)
		printf("%-22s (none)\n", name);
	else
		printf("%-22s %lld\n", name, v);
}

static int cmd_info(const char *path, const char *opts)
{
	struct spm_info in;
	int rc = spm_info(path, opts, &in);
	if (rc)
		return fail(path, rc);
	struct spm_info after;
	int recovered = 0;
	if (in.dirty) { /* the heap as recovery will leave it: from a copy */
		struct copy c;
		spm_pool *pool;
		int code = copy_open(&c, path, opts, &pool, NULL);
		if (code)
			return code;
		rc = spm_close(pool);
		if (!rc)
			rc = spm_info(c.path, c.opts, &after);
		copy_remove(&c);
		if (rc)
			return fail(path, rc);
		recovered = 1;
	}
	char kp[4096], tcb[4200], meta[4200];
	key_path(path, opts, kp, sizeof(kp));
	snprintf(tcb, sizeof(tcb), "%s.tcb", kp);
	snprintf(meta, sizeof(meta), "%s.meta", path);
	printf("%-22s %s\n", "pool", path);
	printf("%-22s %s\n", "design", in.design);
	printf("%-22s %s\n", "layout", in.layout[0] ? in.layout : "(none)");
	printf("%-22s ", "uuid");
	for (int i = 0; i < 16; i++)
		printf("%02x%s", in.uuid[i], i == 3 || i == 5 || i == 7 || i == 9 ? "-" : "");
	printf("\n%-22s %s\n", "state", in.dirty ? "dirty (not closed cleanly; recovery pending)"
					       : "clean");
	printf("%-22s %" PRIu64 "\n", "epoch", in.epoch);
	printf("%-22s %" PRIu64 "\n", "pool size", in.pool_size);
	printf("%-22s %" PRIu64 "\n", "lines", in.lines);
	if (in.split_counters)
		printf("%-22s split (a 64-bit major per 4 KiB page, %u-bit minors)\n", "counters",
		       in.minor_bits);
	else
		printf("%-22s mono (a 64-bit counter per line)\n", "counters");
	printf("%-22s data %u, counter %u\n", "queue capacity", in.wpq_data_cap, in.wpq_ctr_cap);
	if (in.aes_bits)
		printf("%-22s %u\n", "key bits", in.aes_bits);
	else
		printf("%-22s none (plaintext)\n", "key bits");
	if (in.log_bytes)
		printf("%-22s %" PRIu64 "\n", "redo log bytes", in.log_bytes);
	if (in.mac_bytes)
		printf("%-22s %" PRIu64 " MAC bytes, %" PRIu64 " tree bytes, N %u, M %u\n",
		       "integrity", in.mac_bytes, in.tree_bytes, in.bmt_n, in.bmt_m);
	if (in.dedup_bytes)
		printf("%-22s %" PRIu64 "\n", "dedup table bytes", in.dedup_bytes);
	const struct spm_info *h = recovered ? &after : &in;
	const char *note = recovered ? " (after recovery, on a copy)" : "";
	if (h->heap_known) {
		printf("%-22s %" PRIu64 "%s\n", "root size", h->root_size, note);
		printf("%-22s %" PRIu64 "\n", "heap bytes", h->heap_bytes);
		printf("%-22s %" PRIu64 " in %" PRIu64 " objects%s\n", "heap allocated",
		       h->heap_used, h->heap_objects, note);
		printf("%-22s %" PRIu64 "%s\n", "heap free", h->heap_bytes - h->heap_used, note);
	}
	print_size("data file bytes", file_size(path));
	print_size("meta file bytes", file_size(meta));
	print_size("key file bytes", in.aes_bits ? file_size(kp) : -1);
	if (in.mac_bytes)
		print_size("tcb file bytes", file_size(tcb));
	printf("%-22s %.2f %% of the pool size (meta file)\n", "metadata overhead",
	       in.pool_size ? 100.0 * (double)in.meta_size / (double)in.pool_size : 0.0);
	return 0;
}

static const char *const recovery_stats[] = {
	"recovery.drained", "recovery.dropped", "recovery.rolled_back",
	"recovery.reencrypted", "recovery.mac_retries",
};

static const char *tamper_kind(int k)
{
	switch (k) {
	case SPM_TAMPER_DATA: return "data line or its MAC";
	case SPM_TAMPER_COUNTER: return "counter line";
	case SPM_TAMPER_NODE: return "tree node (offset in .meta)";
	case SPM_TAMPER_ROOT: return "tree root (files rolled back or registers replaced)";
	case SPM_TAMPER_REPLAY: return "replay after a crash (not located)";
	}
	return "unknown";
}

/* verify_copy -- spm_verify on a fresh copy; prints what it found.  0 clean,
 * EXIT_DAMAGED, or an exit status. */
static int verify_copy(const char *path, const char *opts)
{
	struct copy c;
	int code = copy_make(&c, path, opts);
	if (code)
		return code;
	enum { MAX = 64 };
	struct spm_tamper t[MAX];
	size_t found = 0;
	int rc = spm_verify(c.path, c.opts, t, MAX, &found);
	copy_remove(&c);
	if (rc == SPM_E_TAMPERED || found) {
		printf("tampered: %zu item%s\n", found, found == 1 ? "" : "s");
		for (size_t i = 0; i < found && i < MAX; i++)
			printf("  %s at offset %" PRIu64 "\n", tamper_kind(t[i].kind), t[i].offset);
		if (found > MAX)
			printf("  ... %zu more\n", found - MAX);
		return EXIT_DAMAGED;
	}
	if (rc)
		return fail(path, rc);
	printf("integrity: every line, counter and node verified\n");
	return 0;
}

static int cmd_check(const char *path, const char *opts)
{
	struct spm_info in;
	int rc = spm_info(path, opts, &in);
	/* a refusal of a clean pool's content (tampered) is check's business */
	if (rc && rc != SPM_E_TAMPERED)
		return fail(path, rc);
	if (!rc)
		printf("%s: design %s, %s\n", path, in.design, in.dirty ? "dirty" : "clean");
	struct copy c;
	spm_pool *pool;
	int err = 0;
	int code = copy_open(&c, path, opts, &pool, &err);
	if (code) {
		if (err == SPM_E_TAMPERED) {
			int v = verify_copy(path, opts);
			return v ? v : EXIT_DAMAGED;
		}
		return code;
	}
	int integrity = in.mac_bytes != 0;
	if (rc == 0 && in.dirty) {
		printf("recovery would:");
		for (size_t i = 0; i < sizeof(recovery_stats) / sizeof(*recovery_stats); i++) {
			uint64_t v = 0;
			if (!integrity && i == 4)
				continue;
			spm_stat(pool, recovery_stats[i], &v);
			printf(" %s %" PRIu64, recovery_stats[i] + 9, v);
		}
		printf("\n");
	} else {
		printf("recovery: none needed (closed cleanly)\n");
	}
	rc = spm_close(pool);
	copy_remove(&c);
	if (rc)
		return fail(path, rc);
	if (rc == 0 && strcmp(in.layout, "preload") == 0)
		printf("heap: none (a pool of libspm-preload.so: its program's own format)\n");
	else
		printf("heap: header and allocator consistent\n");
	if (integrity) {
		code = verify_copy(path, opts);
		if (code)
			return code;
	}
	printf("%s: ok\n", path);
	return 0;
}

static int cmd_dump(const char *path, const char *opts, uint64_t off, int has_len,
		    uint64_t len, int raw)
{
	struct copy c;
	spm_pool *pool;
	int code = copy_open(&c, path, opts, &pool, NULL);
	if (code)
		return code;
	uint64_t size = spm_size(pool);
	if (off < 4096 || off > size || (has_len && len > size - off)) {
		spm_close(pool);
		copy_remove(&c);
		fprintf(stderr, "spm-pool: dump: offset %" PRIu64 " length %" PRIu64
			" not inside the view [4096, %" PRIu64 ")\n", off, len, size);
		return EXIT_USAGE;
	}
	if (!has_len)
		len = size - off;
	const uint8_t *base = (const uint8_t *)spm_ptr(pool, 4096) - 4096;
	int rc = 0;
	if (raw) {
		if (len && fwrite(base + off, 1, len, stdout) != len)
			rc = -1;
	} else {
		for (uint64_t i = 0; i < len; i += 16) {
			uint64_t n = len - i < 16 ? len - i : 16;
			const uint8_t *p = base + off + i;
			printf("%08" PRIx64 ":", off + i);
			for (uint64_t j = 0; j < 16; j++) {
				if (j % 2 == 0)
					putchar(' ');
				if (j < n)
					printf("%02x", p[j]);
				else
					printf("  ");
			}
			printf("  ");
			for (uint64_t j = 0; j < n; j++)
				putchar(p[j] >= 0x20 && p[j] < 0x7f ? p[j] : '.');
			putchar('\n');
		}
	}
	if (fflush(stdout))
		rc = -1;
	spm_close(pool);
	copy_remove(&c);
	if (rc) {
		fprintf(stderr, "spm-pool: dump: write: %s\n", strerror(errno));
		return EXIT_SYSTEM;
	}
	return 0;
}

static int cmd_stat(const char *path, const char *opts)
{
	struct copy c;
	spm_pool *pool;
	int code = copy_open(&c, path, opts, &pool, NULL);
	if (code)
		return code;
	for (const char *const *n = spm_stat_names(); *n; n++) {
		uint64_t v = 0;
		if (spm_stat(pool, *n, &v) == 0)
			printf("%s %" PRIu64 "\n", *n, v);
	}
	int rc = spm_close(pool);
	copy_remove(&c);
	return rc ? fail(path, rc) : 0;
}

static int cmd_create(const char *path, const char *size_s, const char *opts)
{
	uint64_t size;
	if (parse_num(size_s, &size) || size > SIZE_MAX)
		return usage("create: bad SIZE %s", size_s);
	spm_pool *pool;
	int rc = spm_create(&pool, path, (size_t)size, opts);
	if (rc)
		return fail(path, rc);
	printf("%s: created, design %s, %zu bytes\n", path, spm_design(pool), spm_size(pool));
	rc = spm_close(pool);
	return rc ? fail(path, rc) : 0;
}

static int cmd_rekey(const char *path, const char *opts)
{
	int rc = spm_rekey_key(path, opts);
	if (rc)
		return fail(path, rc);
	printf("%s: re-encrypted under a new key\n", path);
	return 0;
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage_to(stdout);
			return 0;
		}
	if (argc < 3)
		return usage("%s", argc < 2 ? "a command is missing" : "POOL is missing");
	const char *cmd = argv[1], *path = argv[2];
	if (path[0] == '-')
		return usage("unknown flag %s", path);
	const char *pos[2] = {NULL, NULL};
	int npos = 0, raw = 0, has_len = 0;
	uint64_t off = 4096, len = 0;
	int is_dump = !strcmp(cmd, "dump");
	for (int i = 3; i < argc; i++) {
		const char *a = argv[i];
		if (is_dump && !strcmp(a, "--raw")) {
			raw = 1;
		} else if (is_dump && (!strcmp(a, "--offset") || !strcmp(a, "--length"))) {
			uint64_t v;
			if (i + 1 >= argc || parse_num(argv[i + 1], &v))
				return usage("%s: its value is missing or bad", a);
			if (a[2] == 'o')
				off = v;
			else
				len = v, has_len = 1;
			i++;
		} else if (a[0] == '-') {
			return usage("unknown flag %s", a);
		} else if (npos < 2) {
			pos[npos++] = a;
		} else {
			return usage("too many arguments: %s", a);
		}
	}
	if (!strcmp(cmd, "create")) {
		if (npos < 1)
			return usage("%s", "create: SIZE is missing");
		return cmd_create(path, pos[0], pos[1]);
	}
	if (npos > 1)
		return usage("too many arguments: %s", pos[1]);
	const char *opts = pos[0];
	if (!strcmp(cmd, "info"))
		return cmd_info(path, opts);
	if (!strcmp(cmd, "check"))
		return cmd_check(path, opts);
	if (is_dump)
		return cmd_dump(path, opts, off, has_len, len, raw);
	if (!strcmp(cmd, "stat"))
		return cmd_stat(path, opts);
	if (!strcmp(cmd, "rekey"))
		return cmd_rekey(path, opts);
	return usage("unknown command %s", cmd);
}
