/*
 * preload_edge.c -- the preload shim's edge cases, each a subcommand that
 * exits 0 when the shim behaves as a file would (run under the shim by
 * tests/test_preload.sh; built with _FORTIFY_SOURCE, so that read and pread
 * go through glibc's checked entry points).
 *
 *   preload_edge exit POOL...     pread, then exit with the pools open (the
 *                                 shim closes them cleanly at exit)
 *   preload_edge stale POOL OTHER a pool descriptor closed behind the shim's
 *                                 back (fdopen, fclose), its number reused by
 *                                 OTHER: reads and fstat are OTHER's
 *   preload_edge rdonly POOL      O_RDONLY: pwrite, write and a shared
 *                                 writable mapping refused
 *   preload_edge fixed POOL       a pool mapping replaced by an anonymous
 *                                 MAP_FIXED one is no longer pmem
 *   preload_edge dupfd POOL       fcntl(F_DUPFD) names the pool too
 *   preload_edge excl FILE        pmem_map_file(CREATE|EXCL) of an existing
 *                                 file: EEXIST
 *   preload_edge span POOL TEXT   TEXT stored at the pool's start, made
 *                                 durable by an msync of a range that starts
 *                                 in anonymous memory before it, then _exit
 *                                 (no clean close: only what was flushed stays)
 *   preload_edge lost POOL TEXT   the same without the msync: TEXT is lost
 *   preload_edge read POOL TEXT   TEXT at the pool's start (read, fortified)
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <libpmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define PAGE 4096u

static int fail(const char *what)
{
	fprintf(stderr, "preload_edge: %s (errno %d: %s)\n", what, errno, strerror(errno));
	return 1;
}

static int do_exit(char **pools, int n)
{
	for (int i = 0; i < n; i++) {
		int fd = open(pools[i], O_RDONLY);
		char buf[8];
		if (fd < 0 || pread(fd, buf, sizeof(buf), 0) != (ssize_t)sizeof(buf))
			return fail("open and pread");
	}
	return 0; /* descriptors and pools still open */
}

static int do_stale(const char *pool, const char *other)
{
	int fd = open(pool, O_RDWR);
	if (fd < 0)
		return fail("open pool");
	FILE *f = fdopen(fd, "r+");
	if (!f)
		return fail("fdopen");
	fclose(f); /* closes fd inside libc, behind the shim */
	int o = open(other, O_RDONLY);
	if (o != fd) {
		fprintf(stderr, "preload_edge: OTHER got descriptor %d, not %d\n", o, fd);
		return 1;
	}
	char buf[16] = {0}, want[16] = {0};
	struct stat st, real;
	if (read(o, buf, sizeof(buf) - 1) < 0 || fstat(o, &st) != 0)
		return fail("read or fstat of OTHER");
	FILE *g = fopen(other, "r");
	if (!g || fread(want, 1, sizeof(want) - 1, g) == 0 || stat(other, &real) != 0)
		return fail("OTHER by stdio");
	fclose(g);
	if (strcmp(buf, want) != 0 || st.st_size != real.st_size) {
		fprintf(stderr, "preload_edge: the reused descriptor reads \"%s\" (%lld bytes), "
			"OTHER holds \"%s\" (%lld)\n", buf, (long long)st.st_size, want,
			(long long)real.st_size);
		return 1;
	}
	return 0;
}

static int do_rdonly(const char *pool)
{
	int fd = open(pool, O_RDONLY);
	if (fd < 0)
		return fail("open");
	errno = 0;
	if (pwrite(fd, "x", 1, 0) != -1 || errno != EBADF)
		return fail("pwrite on an O_RDONLY descriptor was not EBADF");
	errno = 0;
	if (write(fd, "x", 1) != -1 || errno != EBADF)
		return fail("write on an O_RDONLY descriptor was not EBADF");
	errno = 0;
	if (mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) != MAP_FAILED ||
	    errno != EACCES)
		return fail("a shared writable mapping of an O_RDONLY descriptor was not EACCES");
	void *r = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, fd, 0);
	if (r == MAP_FAILED || memcmp(r, "PMEMOBJ", 7) != 0)
		return fail("a read-only mapping does not show the pool");
	return 0;
}

static int do_fixed(const char *pool)
{
	size_t len;
	int is_pmem;
	char *a = pmem_map_file(pool, 0, 0, 0, &len, &is_pmem);
	if (!a || !pmem_is_pmem(a, 64))
		return fail("map the pool");
	if (mmap(a, PAGE, PROT_READ | PROT_WRITE, MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) !=
	    a)
		return fail("MAP_FIXED");
	if (pmem_is_pmem(a, 64)) {
		fprintf(stderr, "preload_edge: anonymous memory mapped over a pool is pmem\n");
		return 1;
	}
	if (!pmem_is_pmem(a + PAGE, 64)) {
		fprintf(stderr, "preload_edge: the rest of the pool mapping is no longer pmem\n");
		return 1;
	}
	return pmem_unmap(a, len) ? fail("unmap") : 0;
}

static int do_dupfd(const char *pool)
{
	int fd = open(pool, O_RDWR);
	int d = fd < 0 ? -1 : fcntl(fd, F_DUPFD_CLOEXEC, 100);
	char a[8];
	struct stat s1, s2;
	if (d < 0 || close(fd) != 0) /* the copy keeps the pool */
		return fail("F_DUPFD_CLOEXEC");
	if (pread(d, a, 8, 0) != 8 || memcmp(a, "PMEMOBJ", 7) != 0)
		return fail("the copy does not read the pool's plaintext");
	if (stat(pool, &s1) || fstat(d, &s2) || s1.st_size != s2.st_size)
		return fail("the copy's size is not the pool's");
	return close(d) ? fail("close") : 0;
}

static int do_excl(const char *file)
{
	size_t len;
	int is_pmem;
	errno = 0;
	void *a = pmem_map_file(file, 8u << 20, PMEM_FILE_CREATE | PMEM_FILE_EXCL, 0600, &len,
				&is_pmem);
	if (a || errno != EEXIST)
		return fail("CREATE|EXCL of an existing file did not fail with EEXIST");
	return 0;
}

static int do_span(const char *pool, const char *text, int sync)
{
	int fd = open(pool, O_RDWR);
	struct stat st;
	if (fd < 0 || fstat(fd, &st))
		return fail("open");
	/* an anonymous page, then the pool right after it */
	char *area = mmap(NULL, PAGE + (size_t)st.st_size, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (area == MAP_FAILED ||
	    mmap(area + PAGE, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
		 fd, 0) != area + PAGE)
		return fail("map");
	size_t n = strlen(text) + 1;
	memcpy(area + PAGE, text, n);
	if (sync && msync(area, PAGE + PAGE, MS_SYNC)) /* starts before the pool */
		return fail("msync");
	_exit(0); /* no clean close */
}

static int do_read(const char *pool, const char *text)
{
	int fd = open(pool, O_RDONLY);
	size_t n = strlen(text) + 1;
	char buf[256];
	if (fd < 0 || n > sizeof(buf))
		return fail("open");
	volatile size_t m = n; /* not a constant: read goes through __read_chk */
	if (read(fd, buf, m) != (ssize_t)n || strcmp(buf, text) != 0) {
		fprintf(stderr, "preload_edge: the pool does not start with \"%s\"\n", text);
		return 1;
	}
	return close(fd) ? fail("close") : 0;
}

int main(int argc, char **argv)
{
	const char *c = argc > 2 ? argv[1] : "";
	if (!strcmp(c, "exit"))
		return do_exit(argv + 2, argc - 2);
	if (!strcmp(c, "stale") && argc == 4)
		return do_stale(argv[2], argv[3]);
	if (!strcmp(c, "rdonly") && argc == 3)
		return do_rdonly(argv[2]);
	if (!strcmp(c, "fixed") && argc == 3)
		return do_fixed(argv[2]);
	if (!strcmp(c, "dupfd") && argc == 3)
		return do_dupfd(argv[2]);
	if (!strcmp(c, "excl") && argc == 3)
		return do_excl(argv[2]);
	if (!strcmp(c, "span") && argc == 4)
		return do_span(argv[2], argv[3], 1);
	if (!strcmp(c, "lost") && argc == 4)
		return do_span(argv[2], argv[3], 0);
	if (!strcmp(c, "read") && argc == 4)
		return do_read(argv[2], argv[3]);
	fprintf(stderr, "usage: preload_edge exit|stale|rdonly|fixed|dupfd|excl|span|lost|read ...\n");
	return 2;
}
