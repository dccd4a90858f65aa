/* consumer.c -- a program built outside the tree against the installed spm. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <spm.h>

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	char meta[4096], key[4096];
	snprintf(meta, sizeof(meta), "%s.meta", argv[1]);
	snprintf(key, sizeof(key), "%s.key", argv[1]);
	unlink(argv[1]);
	unlink(meta);
	unlink(key);
	spm_pool *p;
	if (spm_create(&p, argv[1], 4 << 20, "design=sca") != 0) {
		fprintf(stderr, "consumer: %s\n", spm_errormsg());
		return 1;
	}
	char *r = spm_root(p, 64);
	strcpy(r, "found by find_package");
	spm_persist(p, r, 64);
	/* built with spm_instrument() (or pkg-config's spm-instrument), the
	 * program's own stores reached the core model; built plainly, none did */
	uint64_t accesses = 1;
	spm_stat(p, "core.accesses", &accesses);
#ifdef CONSUMER_INSTRUMENTED
	if (accesses == 0) {
		fprintf(stderr, "consumer: instrumented, but no access reached the model\n");
		return 1;
	}
#else
	if (accesses != 0) {
		fprintf(stderr, "consumer: not instrumented, yet core.accesses is %llu\n",
			(unsigned long long)accesses);
		return 1;
	}
#endif
	spm_counter_cache_writeback(p, r, 64);
	spm_drain(p);
	spm_close(p);
	if (spm_open(&p, argv[1], NULL) != 0)
		return 1;
	int ok = strcmp(spm_root(p, 64), "found by find_package") == 0;
	spm_close(p);
	unlink(argv[1]);
	unlink(meta);
	unlink(key);
	puts(ok ? "consumer: ok" : "consumer: FAILED");
	return ok ? 0 : 1;
}
