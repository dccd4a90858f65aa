/*
 * preload_pmem.c -- a libpmem program, as one is written for persistent
 * memory (no spm in it), for the preload test: pmem_map_file, stores,
 * pmem_memcpy_persist / pmem_persist / pmem_msync, pmem_unmap.
 *
 *   preload_pmem write PATH SIZE TEXT   map (creating PATH of SIZE bytes if
 *                                       needed), put TEXT at 0 and at SIZE/2
 *   preload_pmem read PATH TEXT         map, check TEXT at both places and
 *                                       pread() it at 0, also through a dup()
 *                                       of the descriptor; exit 1 if not
 */
#include <fcntl.h>
#include <libpmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int do_write(const char *path, size_t size, const char *text)
{
	size_t len;
	int is_pmem;
	char *a = pmem_map_file(path, size, PMEM_FILE_CREATE, 0600, &len, &is_pmem);
	if (!a) {
		perror(path);
		return 1;
	}
	size_t n = strlen(text) + 1;
	if (len != size || !is_pmem || n > len / 2) {
		fprintf(stderr, "%s: mapped %zu bytes (%zu asked), is_pmem %d\n", path, len, size,
			is_pmem);
		return 1;
	}
	pmem_memcpy_persist(a, text, n);
	memcpy(a + len / 2, text, n);
	pmem_persist(a + len / 2, n);
	a[len - 1] = 'z';
	pmem_msync(a + len - 1, 1);
	return pmem_unmap(a, len) != 0;
}

static int do_read(const char *path, const char *text)
{
	size_t len, n = strlen(text) + 1;
	int is_pmem;
	char *a = pmem_map_file(path, 0, 0, 0, &len, &is_pmem);
	if (!a) {
		perror(path);
		return 1;
	}
	int bad = strcmp(a, text) != 0 || strcmp(a + len / 2, text) != 0 || a[len - 1] != 'z';
	pmem_unmap(a, len);
	char buf[256] = {0};
	int fd = open(path, O_RDONLY);
	if (fd < 0 || n > sizeof(buf) || pread(fd, buf, n, 0) != (ssize_t)n || strcmp(buf, text)) {
		fprintf(stderr, "%s: pread does not see the text\n", path);
		bad = 1;
	}
	int d = fd >= 0 ? dup(fd) : -1; /* a copy names the pool too */
	memset(buf, 0, sizeof(buf));
	if (d < 0 || pread(d, buf, n, 0) != (ssize_t)n || strcmp(buf, text)) {
		fprintf(stderr, "%s: pread of a dup'ed descriptor does not see the text\n", path);
		bad = 1;
	}
	if (d >= 0)
		close(d);
	if (fd >= 0)
		close(fd);
	if (bad)
		fprintf(stderr, "%s: the text is not where it was written\n", path);
	return bad;
}

int main(int argc, char **argv)
{
	if (argc == 5 && strcmp(argv[1], "write") == 0)
		return do_write(argv[2], strtoull(argv[3], NULL, 0), argv[4]);
	if (argc == 4 && strcmp(argv[1], "read") == 0)
		return do_read(argv[2], argv[3]);
	fprintf(stderr, "usage: preload_pmem write PATH SIZE TEXT | read PATH TEXT\n");
	return 2;
}
