/*
 * mac_speed.c -- what a line's data MAC costs with each nonce-free MAC of
 * libcrypto (the choice behind emu/mac.c; doc/tried.md, "Choosing the MAC"),
 * one thread, in ns per line.  Each candidate's keyed context is re-used
 * three ways per message: re-initialized with the same key (EVP_MAC_init
 * without a key: "reinit"), a keyed template duplicated and freed
 * (EVP_MAC_CTX_dup: "dup"), keyed again ("rekey").  Then the engine itself:
 * mac_line one line at a time and mac_lines over all of them.  GMAC and
 * Poly1305 are not candidates: both need a fresh nonce or key per message.
 *
 *   spm-mac-speed [--lines N] [--reps R] [--len BYTES] [--quick]
 *
 * Each round times every candidate and way in turn over the same --lines
 * messages of --len bytes (default 81, a line's MAC message); a row is the
 * median of --reps rounds, and "ok" if every way gave the MACs of a fresh
 * context.  Exit 0, or 1 if a candidate failed or gave another MAC, 2 for
 * bad usage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#include "mac.h"

struct candidate {
	const char *name;
	const char *alg;    /* EVP_MAC name */
	const char *param;  /* a string parameter's name, or NULL */
	const char *value;  /* and its value */
	size_t size;        /* tag size to ask for (0: the MAC's own) */
};

static const struct candidate candidates[] = {
	{ "CMAC-AES-128", "CMAC", OSSL_MAC_PARAM_CIPHER, "AES-128-CBC", 0 },
	{ "HMAC-SHA-256/128", "HMAC", OSSL_MAC_PARAM_DIGEST, "SHA256", 0 },
	{ "BLAKE2s-128", "BLAKE2SMAC", NULL, NULL, MAC_SIZE },
	{ "BLAKE2b-128", "BLAKE2BMAC", NULL, NULL, MAC_SIZE },
	{ "KMAC128", "KMAC128", NULL, NULL, MAC_SIZE },
	{ "SipHash-2-4-128", "SIPHASH", NULL, NULL, MAC_SIZE },
};
#define NCAND (sizeof(candidates) / sizeof(candidates[0]))

enum way { REINIT, DUP, REKEY, NWAYS };
static const char *const way_names[NWAYS] = { "reinit", "dup", "rekey" };
#define CHECKED 64 /* messages whose MACs are checked against a fresh context */

static const uint8_t key[16] = { 0x2b, 0x7e, 0x15, 0x16, 0x28, 0xae, 0xd2, 0xa6,
				 0xab, 0xf7, 0x15, 0x88, 0x09, 0xcf, 0x4f, 0x3c };

static double now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, unsigned n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* keyed -- a context of c keyed with key, or NULL. */
static EVP_MAC_CTX *keyed(const struct candidate *c)
{
	EVP_MAC *alg = EVP_MAC_fetch(NULL, c->alg, NULL);
	EVP_MAC_CTX *ctx = alg ? EVP_MAC_CTX_new(alg) : NULL;
	EVP_MAC_free(alg);
	OSSL_PARAM params[3];
	size_t size = c->size, n = 0;
	if (c->param)
		params[n++] = OSSL_PARAM_construct_utf8_string(c->param, (char *)c->value, 0);
	if (size)
		params[n++] = OSSL_PARAM_construct_size_t(OSSL_MAC_PARAM_SIZE, &size);
	params[n] = OSSL_PARAM_construct_end();
	if (ctx && EVP_MAC_init(ctx, key, sizeof(key), params) == 1)
		return ctx;
	EVP_MAC_CTX_free(ctx);
	return NULL;
}

/* finish -- update and final; the tag's first MAC_SIZE bytes to out; 0 or -1. */
static int finish(EVP_MAC_CTX *ctx, const uint8_t *msg, size_t len, uint8_t *out)
{
	uint8_t tag[EVP_MAX_MD_SIZE];
	size_t got = 0;
	if (EVP_MAC_update(ctx, msg, len) != 1 || EVP_MAC_final(ctx, tag, &got, sizeof(tag)) != 1 ||
	    got < MAC_SIZE)
		return -1;
	memcpy(out, tag, MAC_SIZE);
	return 0;
}

/* run -- n messages of len bytes one way: through ctx, or copies of tmpl (a
 * keyed context that never takes a message); MACs to out; 0 or -1. */
static int run(EVP_MAC_CTX *ctx, const EVP_MAC_CTX *tmpl, enum way w, const uint8_t *msgs,
	       size_t len, size_t n, uint8_t *out)
{
	for (size_t i = 0; i < n; i++) {
		const uint8_t *msg = msgs + i * len;
		uint8_t *tag = out + i * MAC_SIZE;
		int rc;
		if (w == DUP) {
			EVP_MAC_CTX *copy = EVP_MAC_CTX_dup(tmpl);
			rc = copy ? finish(copy, msg, len, tag) : -1;
			EVP_MAC_CTX_free(copy);
		} else {
			int ok = w == REINIT ? EVP_MAC_init(ctx, NULL, 0, NULL)
					     : EVP_MAC_init(ctx, key, sizeof(key), NULL);
			rc = ok == 1 ? finish(ctx, msg, len, tag) : -1;
		}
		if (rc)
			return -1;
	}
	return 0;
}

/* fresh_ok -- 1 if the first MACs in out are those of a fresh context each. */
static int fresh_ok(const struct candidate *c, const uint8_t *msgs, size_t len, size_t n,
		    const uint8_t *out)
{
	for (size_t i = 0; i < n && i < CHECKED; i++) {
		EVP_MAC_CTX *ctx = keyed(c);
		uint8_t tag[MAC_SIZE];
		int rc = ctx ? finish(ctx, msgs + i * len, len, tag) : -1;
		EVP_MAC_CTX_free(ctx);
		if (rc || memcmp(tag, out + i * MAC_SIZE, MAC_SIZE))
			return 0;
	}
	return 1;
}

/* engine -- the engine's ns per line, one line at a time (times[0]) and in
 * one mac_lines call (times[1]); 0 or -1. */
static int engine(struct mac *m, const uint8_t *ct, const uint64_t *ctr, const uint64_t *line,
		  size_t n, uint8_t *out, double times[2])
{
	double t0 = now_ns();
	for (size_t i = 0; i < n; i++)
		if (mac_line(m, ct + 64 * i, ctr[i], line[i], out + MAC_SIZE * i))
			return -1;
	double t1 = now_ns();
	if (mac_lines(m, ct, ctr, line, n, out))
		return -1;
	double t2 = now_ns();
	times[0] = (t1 - t0) / (double)n;
	times[1] = (t2 - t1) / (double)n;
	return 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: spm-mac-speed [--lines N] [--reps R] [--len BYTES] [--quick]\n");
	return 2;
}

int main(int argc, char **argv)
{
	size_t n = 100000, len = 1 + 64 + 8 + 8;
	unsigned reps = 7;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--lines") && i + 1 < argc)
			n = strtoul(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
			reps = (unsigned)strtoul(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--len") && i + 1 < argc)
			len = strtoul(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--quick"))
			n = 2000, reps = 3;
		else
			return usage();
	}
	if (!n || !reps || reps > 1000 || !len || len > 4096)
		return usage();

	uint8_t *msgs = malloc(n * len), *ct = malloc(n * 64), *out = malloc(n * MAC_SIZE);
	uint64_t *ctr = malloc(n * sizeof(*ctr)), *line = malloc(n * sizeof(*line));
	double *t = malloc(sizeof(*t) * reps * (NCAND * NWAYS + 2));
	EVP_MAC_CTX *ctx[NCAND] = { 0 }, *tmpl[NCAND] = { 0 };
	struct mac *m = NULL;
	int status = 1, ok[NCAND];
	if (!msgs || !ct || !out || !ctr || !line || !t || mac_new(&m, key)) {
		fprintf(stderr, "spm-mac-speed: cannot set up\n");
		goto done;
	}
	srand(1);
	for (size_t i = 0; i < n * len; i++)
		msgs[i] = (uint8_t)rand();
	for (size_t i = 0; i < n * 64; i++)
		ct[i] = (uint8_t)rand();
	for (size_t i = 0; i < n; i++)
		ctr[i] = (uint64_t)rand() << 20 | i, line[i] = 64 + 3 * i;
	for (unsigned c = 0; c < NCAND; c++) {
		ok[c] = 1;
		ctx[c] = keyed(&candidates[c]);
		tmpl[c] = keyed(&candidates[c]);
		if (!ctx[c] || !tmpl[c]) {
			fprintf(stderr, "spm-mac-speed: no %s in this libcrypto\n",
				candidates[c].name);
			goto done;
		}
	}

	/* rounds: every candidate and way in turn, so drift hits all alike */
	for (unsigned r = 0; r < reps; r++) {
		for (unsigned c = 0; c < NCAND; c++)
			for (unsigned w = 0; w < NWAYS; w++) {
				double t0 = now_ns();
				if (run(ctx[c], tmpl[c], w, msgs, len, n, out)) {
					fprintf(stderr, "spm-mac-speed: %s (%s) failed\n",
						candidates[c].name, way_names[w]);
					goto done;
				}
				t[(c * NWAYS + w) * reps + r] = (now_ns() - t0) / (double)n;
				ok[c] &= fresh_ok(&candidates[c], msgs, len, n, out);
			}
		double e[2];
		if (engine(m, ct, ctr, line, n, out, e)) {
			fprintf(stderr, "spm-mac-speed: the engine failed\n");
			goto done;
		}
		t[NCAND * NWAYS * reps + r] = e[0];
		t[(NCAND * NWAYS + 1) * reps + r] = e[1];
	}

	status = 0;
	printf("# %zu-byte messages, %zu lines x %u rounds, median ns per line\n", len, n, reps);
	printf("%-18s %8s %8s %8s  check\n", "candidate", way_names[0], way_names[1],
	       way_names[2]);
	for (unsigned c = 0; c < NCAND; c++) {
		printf("%-18s", candidates[c].name);
		for (unsigned w = 0; w < NWAYS; w++)
			printf(" %8.1f", median(t + (c * NWAYS + w) * reps, reps));
		printf("  %s\n", ok[c] ? "ok" : "WRONG");
		if (!ok[c])
			status = 1;
	}
	printf("engine (%s, 81-byte line messages): mac_line %.1f, mac_lines %.1f\n", MAC_NAME,
	       median(t + NCAND * NWAYS * reps, reps), median(t + (NCAND * NWAYS + 1) * reps, reps));
done:
	for (unsigned c = 0; c < NCAND; c++) {
		EVP_MAC_CTX_free(ctx[c]);
		EVP_MAC_CTX_free(tmpl[c]);
	}
	mac_free(m);
	free(msgs);
	free(ct);
	free(out);
	free(ctr);
	free(line);
	free(t);
	return status;
}
