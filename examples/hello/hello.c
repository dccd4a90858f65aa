/*
 * hello.c -- the smallest spm program: create or open a pool, keep a counter
 * and a message in the root object, update both in one transaction.
 *
 *   spm-hello POOL [OPTIONS]      e.g. spm-hello /tmp/p "design=sca"
 *
 * Its pools have the layout "spm-hello": another program's pool is refused
 * (exit 25) and left as it was.  Exit statuses as the other examples': 0 ok,
 * 1 a failure after the open, 2 usage, 3 a system error, 10 + the place of
 * spm's error code for the rest.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <spm.h>

#define LAYOUT "layout=spm-hello"

struct root {
	uint64_t runs;
	char message[56];
};

/* usage -- to stdout for --help (exit 0), else to stderr (exit 2). */
static int usage(const char *prog, int help)
{
	fprintf(help ? stdout : stderr, "usage: %s POOL [OPTIONS]\n", prog);
	return help ? 0 : 2;
}

/* exit_of -- 10 + the place of an spm error code, 3 for -errno. */
static int exit_of(int rc)
{
	return rc <= SPM_E_BASE && rc >= SPM_E_LAST ? 10 + (SPM_E_BASE - rc) : 3;
}

/* open_or_create -- the pool at path, of this program's layout. */
static int open_or_create(spm_pool **pool, const char *path, const char *options)
{
	size_t n = (options ? strlen(options) : 0) + sizeof(";" LAYOUT);
	char *opts = malloc(n);
	if (!opts)
		return -ENOMEM;
	snprintf(opts, n, "%s;" LAYOUT, options ? options : "");
	int rc = access(path, F_OK) == 0 ? spm_open(pool, path, opts)
					 : spm_create(pool, path, 8 << 20, opts);
	free(opts);
	return rc;
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
			return usage(argv[0], 1);
		if (argv[i][0] == '-') {
			fprintf(stderr, "%s: unknown flag %s\n", argv[0], argv[i]);
			return usage(argv[0], 0);
		}
	}
	if (argc < 2 || argc > 3)
		return usage(argv[0], 0);
	spm_pool *pool;
	int rc = open_or_create(&pool, argv[1], argc == 3 ? argv[2] : NULL);
	if (rc) {
		fprintf(stderr, "spm-hello: %s (%s)\n", spm_errormsg(), spm_strerror(rc));
		return exit_of(rc);
	}
	struct root *r = spm_root(pool, sizeof(*r));
	if (!r || spm_tx_begin(pool) != 0 || spm_tx_add(pool, r, sizeof(*r)) != 0) {
		fprintf(stderr, "spm-hello: %s\n", spm_errormsg());
		spm_close(pool);
		return 1;
	}
	r->runs++;
	snprintf(r->message, sizeof(r->message), "hello from run %llu",
		 (unsigned long long)r->runs);
	if (spm_tx_commit(pool) != 0) {
		fprintf(stderr, "spm-hello: %s\n", spm_errormsg());
		spm_close(pool);
		return 1;
	}
	uint64_t writes = 0, ns = 0;
	spm_stat(pool, "media.writes", &writes);
	spm_stat(pool, "time.modeled_ns", &ns);
	printf("%s (design %s; %llu media writes, %llu ns modeled)\n", r->message,
	       spm_design(pool), (unsigned long long)writes, (unsigned long long)ns);
	return spm_close(pool) ? 1 : 0;
}
