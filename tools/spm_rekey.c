/*
 * spm_rekey.c -- spm-rekey, the command for a deliberate restore: a pool
 * restored from a backup (refused by spm_open as a rollback) re-keyed under
 * a new identity, so that writing to it reuses no pad (spm_rekey in spm.h).
 *
 *   spm-rekey PATH [OPTIONS]     OPTIONS as for spm_open (key_file=...)
 *
 * Exit status: 0 re-keyed, 2 usage, 3 a system error (-errno), 10 + the
 * error's place among spm's codes otherwise (as the example commands).
 */
#include <stdio.h>
#include <string.h>

#include <spm.h>

static int usage(FILE *f, int code)
{
	fprintf(f, "usage: spm-rekey PATH [OPTIONS]\n"
		   "  re-key the pool at PATH (closed cleanly, e.g. restored from a backup):\n"
		   "  a new identity and every line re-encrypted, so that it can be opened\n"
		   "  and written without reusing an encryption pad.  OPTIONS: key_file=...\n");
	return code;
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
			return usage(stdout, 0);
	if (argc < 2 || argc > 3 || argv[1][0] == '-') {
		if (argc >= 2 && argv[1][0] == '-')
			fprintf(stderr, "spm-rekey: unknown flag %s\n", argv[1]);
		return usage(stderr, 2);
	}
	int rc = spm_rekey(argv[1], argc == 3 ? argv[2] : NULL);
	if (rc == 0) {
		printf("%s: re-keyed\n", argv[1]);
		return 0;
	}
	fprintf(stderr, "spm-rekey: %s -- %s\n", spm_errormsg(), spm_strerror(rc));
	if (rc <= SPM_E_BASE && rc >= SPM_E_LAST)
		return 10 + (SPM_E_BASE - rc);
	return 3;
}
