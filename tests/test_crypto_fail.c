/*
 * test_crypto_fail.c -- what spm does when OpenSSL fails.  This program
 * defines EVP_Cipher, the one call through which spm makes every pad
 * (emu/crypto.c), so libspm's calls come here first; the call can be made
 * to fail, then passes on to OpenSSL's (dlsym RTLD_NEXT).
 *
 *  - In a write-back: pads made ahead for a commit (prepads) fail quietly
 *    and the batch makes its own; if a batch's own pads fail, the process
 *    prints OpenSSL's failure and aborts (crypto_fatal), a crash like any
 *    other.  Each call of a run is failed in turn, one per run: the
 *    run either completes with no error message left behind, or dies
 *    with the message; after either the pool opens, recovers and holds
 *    exactly its committed transactions, and no pad was used twice.
 *  - At open: the view cannot be decrypted; spm_open fails with
 *    SPM_E_CRYPTO and a message and the pool opens afterwards.
 *  - In recovery: a run killed at a pad call, then an open whose
 *    recovery fails at each of its calls in turn (refused with
 *    SPM_E_CRYPTO, or aborted in a write-back), then an open without
 *    failures: it recovers exactly the killed run's commits.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <openssl/evp.h>

#include "test_files.h"
#include <spm.h>

/* ---- the failing EVP_Cipher --------------------------------------------- */

static long cipher_calls;     /* calls since count_from_now() */
static long fail_first = -1;  /* calls fail_first..fail_last fail (1-based) */
static long fail_last = -1;
static long cipher_failures;  /* calls failed */
static long kill_at = -1;     /* this call kills the process instead */

int EVP_Cipher(EVP_CIPHER_CTX *ctx, unsigned char *out, const unsigned char *in,
	       unsigned int inl)
{
	static int (*real)(EVP_CIPHER_CTX *, unsigned char *, const unsigned char *,
			   unsigned int);
	long k = __atomic_add_fetch(&cipher_calls, 1, __ATOMIC_RELAXED);
	if (k == kill_at)
		raise(SIGKILL); /* a crash with a write-back half done */
	if (k >= fail_first && k <= fail_last) {
		__atomic_add_fetch(&cipher_failures, 1, __ATOMIC_RELAXED);
		return 0; /* what OpenSSL returns for a failure */
	}
	if (!real)
		*(void **)&real = dlsym(RTLD_NEXT, "EVP_Cipher");
	if (!real)
		abort();
	return real(ctx, out, in, inl);
}

/* fail_calls -- count calls from now on; calls first..last (1-based) fail. */
static void fail_calls(long first, long last)
{
	cipher_calls = cipher_failures = 0;
	fail_first = first;
	fail_last = last;
	kill_at = -1;
}

/* ---- the workload --------------------------------------------------------- */

#define TXS 6
#define RECS 16 /* lines */

struct froot {
	uint64_t count;    /* committed transactions */
	spm_off_t recs;    /* RECS lines, every word == count */
	spm_off_t last;    /* the newest transaction's object: count */
};

static char dir[2048], pool[2200];

/* one_tx -- a transaction: every record word and count to count + 1, a new
 * object holding it in place of the last one (the allocator's bitmaps). */
static int one_tx(spm_pool *p, struct froot *r)
{
	uint64_t *w = spm_ptr(p, r->recs);
	if (spm_tx_begin(p) || spm_tx_add(p, r, sizeof(*r)) ||
	    spm_tx_add(p, w, RECS * 64))
		return -1;
	spm_off_t o = spm_tx_alloc(p, 64);
	if (!o || (r->last && spm_tx_free(p, r->last)))
		return -1;
	r->count++;
	for (unsigned i = 0; i < RECS * 8; i++)
		w[i] = r->count;
	*(uint64_t *)spm_ptr(p, o) = r->count;
	r->last = o;
	return spm_tx_commit(p);
}

/* consistent -- open the pool (recovering) without failures: its count if
 * every record and the last object agree with it, else -1. */
static long consistent(void)
{
	spm_pool *p;
	fail_calls(-1, -1);
	assert_int_equal(spm_open(&p, pool, ""), 0);
	struct froot *r = spm_root(p, sizeof(*r));
	assert_non_null(r);
	long count = (long)r->count;
	const uint64_t *w = spm_ptr(p, r->recs);
	for (unsigned i = 0; i < RECS * 8; i++)
		if (w[i] != r->count)
			count = -1;
	if (r->count && *(const uint64_t *)spm_ptr(p, r->last) != r->count)
		count = -1;
	assert_int_equal(spm_close(p), 0);
	return count;
}

/* make_pool -- a fresh sca pool with its records (count 0); the audit
 * log audit (NULL: none) removed. */
static void make_pool(const char *audit)
{
	remove_pool_files(pool);
	if (audit)
		unlink(audit);
	spm_pool *p;
	assert_int_equal(spm_create(&p, pool, 4 << 20, "design=sca"), 0);
	struct froot *r = spm_root(p, sizeof(*r));
	assert_non_null(r);
	assert_int_equal(spm_tx_begin(p), 0);
	assert_int_equal(spm_tx_add(p, r, sizeof(*r)), 0);
	r->recs = spm_tx_alloc(p, RECS * 64);
	assert_int_not_equal(r->recs, 0);
	assert_int_equal(spm_tx_commit(p), 0);
	assert_int_equal(spm_close(p), 0);
}

/* Child exit statuses. */
enum { CHILD_CLEAN = 0, CHILD_SURVIVED = 10, CHILD_STALE = 11, CHILD_ERROR = 12 };

/* What a child tells its parent, in a shared mapping: it may die anywhere. */
struct report {
	long committed; /* transactions whose spm_tx_commit returned 0 */
	long calls;     /* EVP_Cipher calls of the run (when it closed) */
};
static struct report *rep;

/*
 * run -- in a child: open, then with call k of the run failing
 * (k <= 0: none), TXS transactions and close.  CHILD_CLEAN: no call failed;
 * CHILD_SURVIVED: one failed and everything still succeeded with no error
 * message left; else CHILD_STALE / CHILD_ERROR.
 */
static int run(long k, long kill)
{
	spm_pool *p;
	if (spm_open(&p, pool, ""))
		return CHILD_ERROR;
	struct froot *r = spm_root(p, sizeof(*r));
	if (!r)
		return CHILD_ERROR;
	fail_calls(k > 0 ? k : -1, k > 0 ? k : -1);
	kill_at = kill > 0 ? kill : -1;
	for (unsigned t = 0; t < TXS; t++) {
		if (one_tx(p, r))
			return CHILD_ERROR;
		__atomic_store_n(&rep->committed, (long)t + 1, __ATOMIC_SEQ_CST);
	}
	if (spm_close(p))
		return CHILD_ERROR;
	rep->calls = cipher_calls;
	if (!cipher_failures)
		return CHILD_CLEAN;
	return spm_errormsg()[0] ? CHILD_STALE : CHILD_SURVIVED;
}

/* Statuses of a recovering child (recover). */
enum { RECOVERED = 20, REFUSED = 21, RECOVER_BAD = 22 };

/* recover -- in a child: open the pool with its call k failing (from the
 * start of the open, recovery included); RECOVERED if it opened and
 * closed (rep->calls: the calls made), REFUSED if it was refused with
 * SPM_E_CRYPTO and OpenSSL's failure in the message. */
static int recover(long k)
{
	spm_pool *p;
	fail_calls(k, k);
	int rc = spm_open(&p, pool, "");
	if (rc)
		fprintf(stderr, "recover: %d: %s\n", rc, spm_errormsg());
	if (rc)
		return rc == SPM_E_CRYPTO && strstr(spm_errormsg(), "OpenSSL") ? REFUSED
									 : RECOVER_BAD;
	rep->calls = cipher_calls;
	return spm_close(p) ? RECOVER_BAD : RECOVERED;
}

/* Which function a child runs (run_child). */
enum child_kind { RUN, KILLED_RUN, RECOVERY };

/* run_child -- in a child with SPM_AUDIT=audit (NULL: none) and stderr to
 * errfile: run(k, 0), run(0, k) or recover(k) by kind; its wait
 * status (rep: what it reported). */
static int run_child_as(enum child_kind kind, long k, const char *audit, const char *errfile)
{
	*rep = (struct report){0, -1};
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int e = open(errfile, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (e < 0 || dup2(e, 2) < 0)
			_exit(CHILD_ERROR);
		if (audit)
			setenv("SPM_AUDIT", audit, 1);
		else
			unsetenv("SPM_AUDIT");
		_exit(kind == RECOVERY ? recover(k) : kind == RUN ? run(k, 0) : run(0, k));
	}
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	return st;
}

static int run_child(long k, const char *audit, const char *errfile)
{
	return run_child_as(RUN, k, audit, errfile);
}

/* said -- does the file at path contain text? */
static int said(const char *path, const char *text)
{
	size_t len;
	uint8_t *buf = slurp(path, &len);
	buf[len] = 0;
	int found = strstr((const char *)buf, text) != NULL;
	free(buf);
	return found;
}

/*
 * every_call -- fail each EVP_Cipher call of a run in turn (runs of
 * TXS transactions on one pool, with the pad auditor where audit is set):
 * every run survives quietly or aborts saying why, the pool is
 * consistent after each, and no pad was used twice.
 */
static void every_call(const char *audit)
{
	char errfile[2300];
	snprintf(errfile, sizeof(errfile), "%s/crypto-fail.err", dir);
	make_pool(audit);
	assert_int_equal(run_child(0, audit, errfile), 0);
	const long calls = rep->calls;
	long count = consistent();
	assert_int_equal(count, TXS);
	assert_true(calls > TXS); /* a pad call per batch at least */
	unsigned survived = 0, aborted = 0;
	for (long k = 1; k <= calls; k++) {
		int st = run_child(k, audit, errfile);
		long now = consistent(), committed = rep->committed;
		assert_true(now >= 0); /* every record and the object agree with count */
		if (WIFSIGNALED(st)) {
			assert_int_equal(WTERMSIG(st), SIGABRT);
			assert_true(said(errfile, "spm: OpenSSL: AES encryption failed: aborting"));
			/* what committed, and the transaction it died in only if its
			 * commit was durable before spm_tx_commit returned */
			assert_true(now == count + committed || now == count + committed + 1);
			aborted++;
		} else {
			assert_true(WIFEXITED(st));
			if (WEXITSTATUS(st) != CHILD_SURVIVED)
				fail_msg("call %ld of %ld failed: child exit %d", k, calls,
					 WEXITSTATUS(st));
			assert_int_equal(committed, TXS);
			assert_int_equal(now, count + TXS);
			survived++;
		}
		count = now;
	}
	unsigned reused = audit ? audit_reused(audit, NULL) : 0;
	print_message("%s: each of %ld calls failed in turn: %u runs survived (pads "
		      "made ahead), %u aborted; %u reused pads\n",
		      audit ? "audited" : "unaudited", calls, survived, aborted, reused);
	/* both paths taken: quiet prepads and the fatal batch */
	assert_true(survived > 0);
	assert_true(aborted > 0);
	assert_int_equal(reused, 0);
	if (audit)
		unlink(audit);
	unlink(errfile);
}

static void write_back_failures(void **state)
{
	(void)state;
	every_call(NULL);
}

static void write_back_failures_audited(void **state)
{
	(void)state;
	char audit[2300];
	snprintf(audit, sizeof(audit), "%s/crypto-fail.audit", dir);
	every_call(audit);
}

/* open_failure -- the view's decryption fails at open: SPM_E_CRYPTO with
 * a message, the files as they were, and the next open succeeds. */
static void open_failure(void **state)
{
	(void)state;
	make_pool(NULL);
	char errfile[2300], meta[2300];
	snprintf(errfile, sizeof(errfile), "%s/crypto-fail.err", dir);
	snprintf(meta, sizeof(meta), "%s.meta", pool);
	assert_int_equal(run_child(0, NULL, errfile), 0);
	unlink(errfile);
	size_t dlen, mlen;
	uint8_t *data = slurp(pool, &dlen), *metab = slurp(meta, &mlen);
	spm_pool *p = NULL;
	fail_calls(1, 1L << 40);
	assert_int_equal(spm_open(&p, pool, ""), SPM_E_CRYPTO);
	assert_null(p);
	assert_non_null(strstr(spm_errormsg(), "OpenSSL"));
	assert_true(cipher_failures > 0);
	assert_file_is(pool, data, dlen);
	assert_file_is(meta, metab, mlen);
	free(data);
	free(metab);
	assert_int_equal(consistent(), TXS);
	remove_pool_files(pool);
}


/* A copy of the pool's data and meta files. */
/* A pool's three files: restored together, as a state of the machine (the
 * key file records the pool's generation: restoring only the two pool files
 * would be a rollback). */
struct files {
	uint8_t *data, *meta, *key;
	size_t dlen, mlen, klen;
};

static void save_files(struct files *f)
{
	char meta[2300], key[2300];
	snprintf(meta, sizeof(meta), "%s.meta", pool);
	snprintf(key, sizeof(key), "%s.key", pool);
	f->data = slurp(pool, &f->dlen);
	f->meta = slurp(meta, &f->mlen);
	f->key = slurp(key, &f->klen);
}

static void restore_files(const struct files *f)
{
	char meta[2300], key[2300];
	snprintf(meta, sizeof(meta), "%s.meta", pool);
	snprintf(key, sizeof(key), "%s.key", pool);
	spit(pool, f->data, f->dlen);
	spit(meta, f->meta, f->mlen);
	spit(key, f->key, f->klen);
}

/* copy_file -- the file at to becomes a copy of the one at from. */
static void copy_file(const char *from, const char *to)
{
	size_t len;
	uint8_t *buf = slurp(from, &len);
	spit(to, buf, len);
	free(buf);
}

/* consistent_audited -- consistent() with the pad auditor logging to audit. */
static long consistent_audited(const char *audit)
{
	setenv("SPM_AUDIT", audit, 1);
	long count = consistent();
	unsetenv("SPM_AUDIT");
	return count;
}

/*
 * recovery_failures -- from one state of the pool, a run killed at pad
 * call k (k over the run's calls), then a recovery whose call j fails
 * (j over the recovery's calls), then a recovery without failures: the
 * failing one is refused (SPM_E_CRYPTO) or aborts saying why, and the pool
 * then holds exactly the killed run's commits.  Each such history is
 * audited on its own (the pool's creation, the killed run, the two
 * recoveries): no pad used twice in it.  (One log over all of them would
 * mix histories that each start from the same restored files.)
 */
static void recovery_failures(void **state)
{
	(void)state;
	char errfile[2300], base[2300], killed_log[2300], audit[2300];
	snprintf(errfile, sizeof(errfile), "%s/crypto-fail.err", dir);
	snprintf(base, sizeof(base), "%s/crypto-fail.base", dir);
	snprintf(killed_log, sizeof(killed_log), "%s/crypto-fail.killed", dir);
	snprintf(audit, sizeof(audit), "%s/crypto-fail.audit", dir);
	setenv("SPM_AUDIT", base, 1); /* the pool's creation */
	make_pool(base);
	unsetenv("SPM_AUDIT");
	struct files before;
	save_files(&before);
	assert_int_equal(run_child(0, NULL, errfile), 0);
	const long calls = rep->calls;
	assert_int_equal(consistent(), TXS);
	unsigned killed = 0, refused = 0, aborted = 0, recovered = 0, histories = 0;
	unsigned reused = 0;
	const long step = calls / 12 > 1 ? calls / 12 : 1;
	for (long k = 1; k <= calls; k += step) {
		/* the run killed at call k */
		restore_files(&before);
		copy_file(base, killed_log);
		int st = run_child_as(KILLED_RUN, k, killed_log, errfile);
		assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
		killed++;
		const long committed = rep->committed;
		struct files crashed;
		save_files(&crashed);
		/* how many calls its recovery makes (not audited: another history) */
		assert_int_equal(WEXITSTATUS(run_child_as(RECOVERY, 0, NULL, errfile)), RECOVERED);
		const long rcalls = rep->calls;
		const long rstep = rcalls / 16 > 1 ? rcalls / 16 : 1;
		for (long j = 1; j <= rcalls; j = j < rcalls && j + rstep > rcalls ? rcalls : j + rstep) {
			restore_files(&crashed);
			copy_file(killed_log, audit);
			st = run_child_as(RECOVERY, j, audit, errfile);
			if (WIFSIGNALED(st)) {
				assert_int_equal(WTERMSIG(st), SIGABRT);
				assert_true(said(errfile, "spm: OpenSSL: AES encryption failed: "
							  "aborting"));
				aborted++;
			} else if (WEXITSTATUS(st) == REFUSED) {
				refused++;
			} else {
				if (WEXITSTATUS(st) != RECOVERED)
					fail_msg("kill at %ld, recovery call %ld failed: exit %d", k,
						 j, WEXITSTATUS(st));
				recovered++; /* a quiet failure (pads made ahead) */
			}
			long now = consistent_audited(audit);
			if (now != committed && now != committed + 1)
				fail_msg("kill at %ld, recovery call %ld failed: %ld transactions "
					 "after %ld committed", k, j, now, committed);
			unsigned r = audit_reused(audit, NULL);
			if (r)
				print_message("kill at call %ld, recovery call %ld of %ld failed: "
					      "%u reused pads\n", k, j, rcalls, r);
			reused += r;
			histories++;
		}
		free(crashed.data);
		free(crashed.meta);
		free(crashed.key);
	}
	free(before.data);
	free(before.meta);
	free(before.key);
	print_message("%u runs killed at a pad call; %u recoveries with a failing call: "
		      "%u refused, %u aborted, %u recovered; %u reused pads\n", killed,
		      histories, refused, aborted, recovered, reused);
	assert_true(killed > 0);
	assert_true(refused > 0);
	assert_int_equal(reused, 0);
	unlink(base);
	unlink(killed_log);
	unlink(audit);
	unlink(errfile);
}

int main(void)
{
	const char *base = getenv("SPM_TEST_DIR");
	snprintf(dir, sizeof(dir), "%s", base && *base ? base : "/tmp");
	snprintf(pool, sizeof(pool), "%s/crypto-fail-%d", dir, (int)getpid());
	rep = mmap(NULL, sizeof(*rep), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (rep == MAP_FAILED)
		return 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(write_back_failures),
		cmocka_unit_test(write_back_failures_audited),
		cmocka_unit_test(open_failure),
		cmocka_unit_test(recovery_failures),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	remove_pool_files(pool);
	munmap(rep, sizeof(*rep));
	return rc;
}
