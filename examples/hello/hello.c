/*
 * hello.c -- the smallest spm program: create or open a pool, keep a counter
 * and a message in the root object, update both in one transaction.
 *
 *   spm-hello POOL [OPTIONS]      e.g. spm-hello /tmp/p "design=sca"
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <spm.h>

struct root {
	uint64_t runs;
	char message[56];
};

int main(int argc, char **argv)
{
	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: %s POOL [OPTIONS]\n", argv[0]);
		return 2;
	}
	const char *options = argc == 3 ? argv[2] : NULL;
	spm_pool *pool;
	int rc = access(argv[1], F_OK) == 0
			 ? spm_open(&pool, argv[1], options)
			 : spm_create(&pool, argv[1], 8 << 20, options);
	if (rc) {
		fprintf(stderr, "spm-hello: %s (%s)\n", spm_errormsg(), spm_strerror(rc));
		return 1;
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
