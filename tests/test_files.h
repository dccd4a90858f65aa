/*
 * test_files.h -- file helpers the tests share: read a whole file (slurp),
 * write one (spit), check one's bytes (assert_file_is), remove a pool's
 * three files (remove_pool_files), create a pool where none was
 * (fresh_pool), keep a pool's files and put them back (pool_save,
 * pool_restore, pool_restore_files), count an SPM_AUDIT log's reused pads (audit_reused),
 * run a step in a child killed at a crash point (run_in_child).
 * Include after <cmocka.h>: failures are cmocka assertions.
 */
#ifndef SPM_TEST_FILES_H
#define SPM_TEST_FILES_H 1

#include <fcntl.h>
#include <stdint.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <spm.h>

/* slurp -- the whole file at p, malloc'd; its size in *len. */
static inline uint8_t *slurp(const char *p, size_t *len)
{
	FILE *f = fopen(p, "rb");
	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	long n = ftell(f);
	assert_true(n >= 0);
	rewind(f);
	uint8_t *buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return buf;
}

/* spit -- replace the file at p by len bytes of buf, mode 0600 (a key file
 * must be the user's alone). */
static inline void spit(const char *p, const void *buf, size_t len)
{
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(fchmod(fd, 0600), 0);
	FILE *f = fdopen(fd, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

/* assert_file_is -- the file at p holds exactly the len bytes of buf. */
static inline void assert_file_is(const char *p, const uint8_t *buf, size_t len)
{
	size_t now;
	uint8_t *b = slurp(p, &now);
	assert_int_equal(now, len);
	assert_memory_equal(b, buf, len);
	free(b);
}

/* remove_pool_files -- unlink <path>, <path>.meta and <path>.key. */
static inline void remove_pool_files(const char *path)
{
	static const char *const suffix[] = {".meta", ".key"};
	char buf[4300];
	unlink(path);
	for (unsigned i = 0; i < 2; i++) {
		if (snprintf(buf, sizeof(buf), "%s%s", path, suffix[i]) >= (int)sizeof(buf))
			abort();
		unlink(buf);
	}
}

/* fresh_pool -- a new pool at path (its old files removed) of size bytes
 * with options opts; the test fails if spm_create does. */
static inline spm_pool *fresh_pool(const char *path, size_t size, const char *opts)
{
	remove_pool_files(path);
	spm_pool *p = NULL;
	int rc = spm_create(&p, path, size, opts);
	if (rc != 0)
		fail_msg("spm_create %s (%s): %d %s", path, opts ? opts : "", rc, spm_errormsg());
	return p;
}

/* A pool's three files in memory (pool_save), to put back (pool_restore). */
struct pool_image {
	uint8_t *bytes[3];
	size_t len[3];
};

/* pool_file -- buf = path's file i: <path>, <path>.meta, <path>.key. */
static inline void pool_file(char *buf, size_t size, const char *path, unsigned i)
{
	static const char *const suffix[3] = {"", ".meta", ".key"};
	if (snprintf(buf, size, "%s%s", path, suffix[i]) >= (int)size)
		abort();
}

/* pool_save -- img = the files of the pool at path (img's old bytes freed). */
static inline void pool_save(const char *path, struct pool_image *img)
{
	char f[4300];
	for (unsigned i = 0; i < 3; i++) {
		pool_file(f, sizeof(f), path, i);
		free(img->bytes[i]);
		img->bytes[i] = slurp(f, &img->len[i]);
	}
}

/* pool_restore -- the files of the pool at path as pool_save saw them. */
static inline void pool_restore(const char *path, const struct pool_image *img)
{
	char f[4300];
	for (unsigned i = 0; i < 3; i++) {
		pool_file(f, sizeof(f), path, i);
		spit(f, img->bytes[i], img->len[i]);
	}
}

/* pool_restore_files -- the pool's data and meta files as pool_save saw
 * them, its key file as it is now: a copy of the pool files put back. */
static inline void pool_restore_files(const char *path, const struct pool_image *img)
{
	char f[4300];
	for (unsigned i = 0; i < 2; i++) {
		pool_file(f, sizeof(f), path, i);
		spit(f, img->bytes[i], img->len[i]);
	}
}

/* pool_image_free -- the bytes of img. */
static inline void pool_image_free(struct pool_image *img)
{
	for (unsigned i = 0; i < 3; i++) {
		free(img->bytes[i]);
		img->bytes[i] = NULL;
	}
}

/* audit_lines -- the number of lines the shell pipeline cmd prints. */
static inline unsigned audit_lines(const char *cmd)
{
	char line[4600], out[64] = "";
	snprintf(line, sizeof(line), "%s | wc -l", cmd);
	FILE *f = popen(line, "r");
	assert_non_null(f);
	assert_non_null(fgets(out, sizeof(out), f));
	pclose(f);
	return (unsigned)strtoul(out, NULL, 10);
}

/*
 * audit_reused -- the seeds of the SPM_AUDIT log at audit ("line counter
 * digest-of-plaintext" records, emu/audit.c) recorded with more than one
 * plaintext: after identical records are merged, a (line, counter) that
 * repeats.  The first few are printed; the log's records go to *records
 * (if not NULL).
 */
static inline unsigned audit_reused(const char *audit, unsigned *records)
{
	char cmd[4400];
	snprintf(cmd, sizeof(cmd), "sort -u '%s' | cut -d' ' -f1,2 | uniq -d", audit);
	char show[4500];
	snprintf(show, sizeof(show), "%s | head -3 | sed 's/^/  reused: /'", cmd);
	if (system(show) != 0)
		fail_msg("cannot read %s", audit);
	if (records) {
		char all[4400];
		snprintf(all, sizeof(all), "cat '%s'", audit);
		*records = audit_lines(all);
	}
	return audit_lines(cmd);
}

/*
 * child_wait -- the child pid's stderr from the pipe end fd (closed) into
 * err (errlen bytes, NUL-terminated), then its wait status; for crash
 * "count", its crash points into *points (-1 if it printed none).
 */
static inline int child_wait(pid_t pid, int fd, char *err, size_t errlen, long *points)
{
	size_t len = 0;
	ssize_t n;
	while (len < errlen - 1 && (n = read(fd, err + len, errlen - 1 - len)) > 0)
		len += (size_t)n;
	err[len] = '\0';
	close(fd);
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (points) {
		const char *c = strstr(err, "spm-crash-points: ");
		*points = c ? strtol(c + strlen("spm-crash-points: "), NULL, 10) : -1;
	}
	return status;
}

/*
 * run_in_child -- fn(arg) in a forked child with SPM_CRASH=crash (NULL:
 * none), its return value the child's exit code; the child's stderr into
 * err (errlen bytes, NUL-terminated) and, for crash "count", its crash
 * points into *points (-1 if it printed none).  Returns the wait status.
 */
static inline int run_in_child(int (*fn)(const void *), const void *arg, const char *crash,
			      char *err, size_t errlen, long *points)
{
	int fds[2];
	assert_int_equal(pipe(fds), 0);
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(fds[0]);
		if (dup2(fds[1], 2) < 0)
			_exit(120);
		if (crash)
			setenv("SPM_CRASH", crash, 1);
		else
			unsetenv("SPM_CRASH");
		exit(fn(arg));
	}
	close(fds[1]);
	return child_wait(pid, fds[0], err, errlen, points);
}

#endif
