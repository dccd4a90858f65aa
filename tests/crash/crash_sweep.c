/*
 * crash_sweep.c -- the crash and fault-injection harness, in the
 * manner of SQLite's crash loops: for each example and design it counts the
 * crash points N of a short workload (SPM_CRASH=count), then crashes a fresh
 * copy of the pool at points 1..N (exhaustive up to --max-points, else a
 * seeded sample), and for each crash:
 *
 *   1. spm-<ex> check            -- recovery, crashed itself at its k-th crash
 *                                   point on every --recovery-every-th point,
 *                                   then recovered again
 *   2. spm-<ex> check            -- must print "ok" (the oracle: invariants and
 *                                   the content after exactly k operations)
 *   3. spm-<ex> run (continue)   -- writes after recovery: where a lost counter
 *                                   would reuse a pad
 *   4. spm-<ex> check            -- still ok
 *
 * with SPM_AUDIT recording every pad of that timeline (the template's own
 * history included); a repeated (line, counter) is a reused pad.  With
 * --evict the eviction injector (SPM_EVICT) runs in every process.
 *
 * --power P makes every crash a power failure of persistent memory
 * (SPM_POWERFAIL, emu/powerfail.c): the pools run with durability=pmem, and
 * at each kill a line written since its last persist survives with
 * probability P, or is lost.  A design given durability=none
 * ("sca:durability=none") persists nothing and is the negative control of
 * such a sweep: it must fail.
 *
 * --value-size V gives every run values of V bytes (--elements E: an
 * array of E elements; --dup PCT: PCT% of the values duplicates, the
 * examples' --dup).  --stats-bin PATH names the example commands built
 * to print the core model's statistics at close (sweep_stats.c): each
 * design's workload is run once more with it, and a design whose workload
 * made no natural eviction (llc.writebacks: a dirty line leaving the
 * last-level cache before the program flushed it, written back through the
 * design's write path) fails the sweep -- the check of a sweep on tiny
 * caches ("sca:l1_kib=1;llc_kib=4") that must take that path.
 *
 * The unsafe design is the negative control: its sweep must report failures
 * (so is a redo design with redo_early_apply=1, which applies a
 * transaction's records in place before its commit record, and a dedup
 * design with dedup_early_map=1, which maps a line to its new unit before
 * the unit's data is in the write queue, and an example built without its
 * spm_tx_add calls, --example NAME-notxadd, on a design without
 * tx_track=pages: its template is made with tx_track=pages, its crashed
 * runs go without; for such an example a run that ended normally must
 * also leave its ops durable, or a program that makes nothing durable
 * would pass)
 * (or reused pads), or the oracle is blind and the harness fails.  Exit 0
 * when every other design has 0 failures and 0 reused pads, each
 * negative control has failures or reused pads, and (--stats-bin) every
 * design's workload made natural evictions.
 *
 *   crash_sweep --bin-dir DIR --work DIR --example NAME [--designs a,b,...]
 *               [--ops N] [--max-points M] [--seed S] [--evict] [--power P]
 *               [--value-size V] [--elements E] [--dup PCT] [--stats-bin PATH]
 *               [--points K,K,...] [--report FILE]
 *
 * --points K,K,... visits those crash points of each design instead of a
 * sample (a failing point again, or points chosen by hand).
 * SPM_CRASH_SWEEP=full in the environment makes every sweep exhaustive.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CHILD_TIMEOUT_S 60

struct opts {
	const char *bin_dir, *work, *example, *report;
	char designs[1024];
	unsigned ops, max_points, recovery_every;
	uint64_t seed;
	int evict, full;
	const char *power; /* --power P, or NULL */
	const char *value_size; /* --value-size V of every run, or NULL */
	const char *elements;	/* --elements E of every run (array), or NULL */
	const char *dup;	/* --dup PCT of every run, or NULL */
	const char *stats_bin;	/* --stats-bin PATH (sweep_stats), or NULL */
	const char *points;	/* --points K,K,...: the crash points to visit, or NULL */
};

struct result {
	char design[128];
	unsigned points_total, explored, ok, failures, recovery_crashes;
	unsigned long reused, audited;
	long writebacks; /* llc.writebacks of the workload (--stats-bin), or -1 */
	unsigned first_failure;
	double seconds;
};

/* ------------------------------------------------------------ processes */

struct run_out {
	int status;     /* wait status */
	char out[4096]; /* stdout + stderr, truncated */
};

/* the alarm of every child: CHILD_TIMEOUT_S, or shorter where a hang is
 * expected (an untracked -notxadd run, whose programs may loop on the
 * structures it leaves) */
static unsigned child_timeout = CHILD_TIMEOUT_S;

/* run -- fork/exec argv with extra environment entries; capture output. */
static int run(char *const argv[], const char *const env[], struct run_out *o)
{
	int pipefd[2];
	if (pipe(pipefd) != 0)
		return -1;
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		dup2(pipefd[1], 1);
		dup2(pipefd[1], 2);
		close(pipefd[0]);
		close(pipefd[1]);
		unsetenv("SPM_CRASH");
		unsetenv("SPM_EVICT");
		unsetenv("SPM_AUDIT");
		unsetenv("SPM_CONF");
		unsetenv("SPM_POWERFAIL");
		setenv("SPM_TEST_KNOBS", "1", 1); /* SPM_AUDIT, SPM_POWERFAIL, ctr_recovery=none */
		for (unsigned i = 0; env && env[i]; i++) {
			char kv[4200];
			snprintf(kv, sizeof(kv), "%s", env[i]);
			char *eq = strchr(kv, '=');
			if (eq) {
				*eq = '\0';
				setenv(kv, eq + 1, 1);
			}
		}
		alarm(child_timeout); /* a hung recovery is a failure, not a hang */
		execv(argv[0], argv);
		_exit(127);
	}
	close(pipefd[1]);
	size_t n = 0;
	ssize_t r;
	char sink[4096];
	while ((r = read(pipefd[0], n < sizeof(o->out) - 1 ? o->out + n : sink,
			 n < sizeof(o->out) - 1 ? sizeof(o->out) - 1 - n : sizeof(sink))) > 0)
		if (n < sizeof(o->out) - 1)
			n += (size_t)r;
	o->out[n] = '\0';
	close(pipefd[0]);
	if (waitpid(pid, &o->status, 0) != pid)
		return -1;
	return 0;
}

static int killed_by_crash(int st)
{
	return WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL;
}

static int exited_ok(int st)
{
	return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

/* ------------------------------------------------------------ files */

static int copy_file(const char *from, const char *to)
{
	int in = open(from, O_RDONLY), out = -1, rc = -1;
	if (in < 0)
		return errno == ENOENT ? 0 : -1; /* plain pools have no key */
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (out >= 0) {
		char buf[1 << 16];
		ssize_t r;
		rc = 0;
		while ((r = read(in, buf, sizeof(buf))) > 0)
			if (write(out, buf, (size_t)r) != r) {
				rc = -1;
				break;
			}
		if (r < 0)
			rc = -1;
		close(out);
	}
	close(in);
	return rc;
}

/* copy_pool -- the files of a pool (the integrity designs' registers with
 * the key: the processor's state) and the audit log to a new name. */
static int copy_pool(const char *from, const char *to)
{
	static const char *const suffix[] = {"", ".meta", ".key", ".key.tcb", ".audit"};
	for (unsigned i = 0; i < 5; i++) {
		char a[4200], b[4200];
		snprintf(a, sizeof(a), "%s%s", from, suffix[i]);
		snprintf(b, sizeof(b), "%s%s", to, suffix[i]);
		unlink(b);
		if (copy_file(a, b))
			return -1;
	}
	return 0;
}

static void remove_pool(const char *p)
{
	static const char *const suffix[] = {"", ".meta", ".key", ".key.tcb", ".audit"};
	for (unsigned i = 0; i < 5; i++) {
		char a[4200];
		snprintf(a, sizeof(a), "%s%s", p, suffix[i]);
		unlink(a);
	}
}

/* One audit record: a seed and the crc32 of the plaintext it encrypted. */
struct seed_use {
	uint64_t line, ctr;
	unsigned long sum;
};

static int by_use(const void *a, const void *b)
{
	const struct seed_use *x = a, *y = b;
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	if (x->ctr != y->ctr)
		return x->ctr < y->ctr ? -1 : 1;
	return x->sum < y->sum ? -1 : x->sum > y->sum;
}

/* audit_reused -- seeds of an audit log used for more than one plaintext:
 * each further plaintext of a (line, counter) counts once. */
static unsigned long audit_reused(const char *path, unsigned long *total)
{
	FILE *f = fopen(path, "r");
	*total = 0;
	if (!f)
		return 0;
	size_t cap = 1 << 16, n = 0;
	struct seed_use *v = malloc(cap * sizeof(*v));
	unsigned long long l, c;
	unsigned long sum;
	while (v && fscanf(f, "%llu %llu %lx", &l, &c, &sum) == 3) {
		if (n == cap) {
			struct seed_use *w = realloc(v, 2 * cap * sizeof(*v));
			if (!w)
				break;
			v = w;
			cap *= 2;
		}
		v[n++] = (struct seed_use){l, c, sum};
	}
	fclose(f);
	unsigned long dup = 0;
	if (v) {
		qsort(v, n, sizeof(*v), by_use);
		for (size_t i = 1; i < n; i++)
			dup += v[i - 1].line == v[i].line && v[i - 1].ctr == v[i].ctr &&
			       v[i - 1].sum != v[i].sum;
	}
	free(v);
	*total = n;
	return dup;
}

/* ------------------------------------------------------------ one design */

struct ctx {
	const struct opts *o;
	char bin[4200];
	char tmpl[4200], pool[4200], scratch[4200], audit_env[4300], evict_env[64];
	char conf_env[600]; /* SPM_CONF: the design's options (and durability) */
	char power_env[96]; /* --power: SPM_POWERFAIL=SEED:P of the next crash */
};

/* exv -- run argv (a NULL-terminated list) with the given SPM_CRASH, the
 * design's options and the audit log. */
static int exv(struct ctx *c, const char *crash, struct run_out *out, char *const argv[])
{
	char crash_env[128];
	const char *env[6];
	unsigned n = 0;
	if (crash) {
		snprintf(crash_env, sizeof(crash_env), "SPM_CRASH=%s", crash);
		env[n++] = crash_env;
	}
	env[n++] = c->audit_env;
	env[n++] = c->conf_env;
	if (c->o->evict)
		env[n++] = c->evict_env;
	if (c->o->power)
		env[n++] = c->power_env;
	env[n] = NULL;
	return run(argv, env, out);
}

/* ex -- run spm-<example> with args (up to six, the last ones NULL). */
static int ex(struct ctx *c, const char *crash, struct run_out *out, const char *a1,
	      const char *a2, const char *a3, const char *a4, const char *a5,
	      const char *a6)
{
	char *argv[] = {c->bin, (char *)a1, (char *)a2, (char *)a3, (char *)a4, (char *)a5,
			(char *)a6, NULL};
	return exv(c, crash, out, argv);
}

/* ex_run -- `spm-<example> run POOL OPS --seed SEED` (and --value-size V,
 * --elements E, --dup PCT); with stats set, the same run by the --stats-bin
 * build, which names the example first. */
static int ex_run(struct ctx *c, const char *crash, struct run_out *out, const char *pool,
		  const char *ops, const char *seed, int stats)
{
	char *argv[14];
	unsigned n = 0;
	if (stats) {
		argv[n++] = (char *)c->o->stats_bin;
		argv[n++] = (char *)c->o->example;
	} else {
		argv[n++] = c->bin;
	}
	argv[n++] = "run";
	argv[n++] = (char *)pool;
	argv[n++] = (char *)ops;
	argv[n++] = "--seed";
	argv[n++] = (char *)seed;
	if (c->o->value_size) {
		argv[n++] = "--value-size";
		argv[n++] = (char *)c->o->value_size;
	}
	if (c->o->elements) {
		argv[n++] = "--elements";
		argv[n++] = (char *)c->o->elements;
	}
	if (c->o->dup) {
		argv[n++] = "--dup";
		argv[n++] = (char *)c->o->dup;
	}
	argv[n] = NULL;
	return exv(c, crash, out, argv);
}

/* crash_points -- how many crash points the workload passes. */
static long count_points(struct ctx *c, const char *ops, const char *seed)
{
	struct run_out out;
	if (copy_pool(c->tmpl, c->pool) ||
	    ex_run(c, "count", &out, c->pool, ops, seed, 0) ||
	    !exited_ok(out.status))
		return -1;
	const char *s = strstr(out.out, "spm-crash-points: ");
	return s ? atol(s + strlen("spm-crash-points: ")) : -1;
}

/* natural_evictions -- llc.writebacks of the workload: the crashed run,
 * done to its end on a copy of the template by the --stats-bin build; -1 if
 * that fails. */
static long natural_evictions(struct ctx *c, const char *ops, const char *seed)
{
	struct run_out out;
	char audit[sizeof(c->audit_env)]; /* the copy's pads are not the pool's */
	memcpy(audit, c->audit_env, sizeof(audit));
	snprintf(c->audit_env, sizeof(c->audit_env), "SPM_AUDIT=%s.audit", c->scratch);
	int rc = copy_pool(c->tmpl, c->scratch) ||
		 ex_run(c, NULL, &out, c->scratch, ops, seed, 1) || !exited_ok(out.status);
	memcpy(c->audit_env, audit, sizeof(audit));
	remove_pool(c->scratch);
	const char *s = strstr(out.out, "sweep-stat llc.writebacks ");
	if (rc || !s) {
		fprintf(stderr, "crash_sweep: %s: %s run: no llc.writebacks:\n%s\n",
			c->o->example, c->o->stats_bin, out.out);
		return -1;
	}
	return atol(s + strlen("sweep-stat llc.writebacks "));
}

/* recovery_points -- how many crash points the next check of c's pool (its
 * recovery first) passes, counted on a copy. */
static long recovery_points(struct ctx *c)
{
	struct run_out out;
	char audit[sizeof(c->audit_env)]; /* the copy's pads are not the pool's */
	memcpy(audit, c->audit_env, sizeof(audit));
	snprintf(c->audit_env, sizeof(c->audit_env), "SPM_AUDIT=%s.audit", c->scratch);
	int rc = copy_pool(c->pool, c->scratch) ||
		 ex(c, "count", &out, "check", c->scratch, NULL, NULL, NULL, NULL);
	memcpy(c->audit_env, audit, sizeof(audit));
	remove_pool(c->scratch);
	if (rc)
		return -1;
	const char *s = strstr(out.out, "spm-crash-points: ");
	return s ? atol(s + strlen("spm-crash-points: ")) : -1;
}

/* sample -- the crash points to visit: all, or max distinct ones, seeded. */
static unsigned *sample(long n, unsigned max, uint64_t seed, unsigned *count)
{
	unsigned m = (unsigned)n <= max ? (unsigned)n : max;
	unsigned *k = malloc((size_t)m * sizeof(*k));
	if (!k)
		return NULL;
	if (m == (unsigned)n) {
		for (unsigned i = 0; i < m; i++)
			k[i] = i + 1;
	} else { /* stratified: one point in each of m equal strata */
		uint64_t x = seed * 0x9e3779b97f4a7c15ull + 7;
		for (unsigned i = 0; i < m; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			uint64_t lo = (uint64_t)n * i / m, hi = (uint64_t)n * (i + 1) / m;
			k[i] = (unsigned)(lo + 1 + x % (hi - lo));
		}
	}
	*count = m;
	return k;
}

/* listed -- the crash points of a --points list, those up to n. */
static unsigned *listed(const char *list, long n, unsigned *count)
{
	unsigned cap = 1, m = 0;
	for (const char *p = list; *p; p++)
		cap += *p == ',';
	unsigned *k = malloc((size_t)cap * sizeof(*k));
	if (!k)
		return NULL;
	for (const char *p = list; *p;) {
		char *end;
		unsigned long v = strtoul(p, &end, 10);
		if (end == p)
			break;
		if (v >= 1 && v <= (unsigned long)n)
			k[m++] = (unsigned)v;
		p = *end == ',' ? end + 1 : end;
	}
	*count = m;
	return k;
}

static int is_ok(const struct run_out *o)
{
	return exited_ok(o->status) && strncmp(o->out, "ok ", 3) == 0;
}

/* ops_of -- the ops=K of a check's "ok ops=K ..." line (0 if none). */
static unsigned long long ops_of(const struct run_out *o)
{
	const char *k = strstr(o->out, "ok ops=");
	return k ? strtoull(k + 7, NULL, 10) : 0;
}

/* notxadd -- an example built without its spm_tx_add calls? */
static int notxadd(const char *example)
{
	size_t n = strlen(example);
	return n > 8 && !strcmp(example + n - 8, "-notxadd");
}

/* untracked -- a run of an example built without its spm_tx_add calls
 * (spm-<name>-notxadd) without tx_track=pages: its transactions log
 * nothing, the negative control of the tracked sweeps. */
static int untracked(const char *example, const char *design)
{
	return notxadd(example) && !strstr(design, "tx_track=pages");
}

/* sweep_design -- the whole sweep of one design. */
static int sweep_design(const struct opts *o, const char *design, struct result *res)
{
	struct ctx c = {.o = o};
	struct run_out out;
	char opts[512], name[128], ops[32], seed1[32], seed2[32], seed3[32], kbuf[32];
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	memset(res, 0, sizeof(*res));
	snprintf(res->design, sizeof(res->design), "%s", design);
	snprintf(c.bin, sizeof(c.bin), "%s/spm-%s", o->bin_dir, o->example);
	/* a design may carry create options: "supermem:minor_bits=2" */
	snprintf(name, sizeof(name), "%s", design);
	for (char *p = name; *p; p++)
		if (*p == ':' || *p == '=' || *p == ';')
			*p = '-';
	snprintf(c.tmpl, sizeof(c.tmpl), "%s/sweep-%s-%s-tmpl", o->work, o->example, name);
	snprintf(c.pool, sizeof(c.pool), "%s/sweep-%s-%s", o->work, o->example, name);
	snprintf(c.evict_env, sizeof(c.evict_env), "SPM_EVICT=%llu:0.2",
		 (unsigned long long)o->seed);
	snprintf(c.scratch, sizeof(c.scratch), "%.4100s-count", c.pool);
	const char *colon = strchr(design, ':');
	if (colon)
		snprintf(opts, sizeof(opts), "design=%.*s;%s", (int)(colon - design), design,
			 colon + 1);
	else
		snprintf(opts, sizeof(opts), "design=%s", design);
	/* every process opens with the design's options, not only create (the
	 * open-time ones -- queue and cache sizes, timing -- would be lost),
	 * and under --power with durability=pmem unless the design says */
	int pmem = o->power && !strstr(design, "durability=");
	if (snprintf(c.conf_env, sizeof(c.conf_env), "SPM_CONF=%s%s", opts,
		     pmem ? ";durability=pmem" : "") >= (int)sizeof(c.conf_env)) {
		fprintf(stderr, "crash_sweep: design \"%s\": options too long\n", design);
		return -1;
	}
	if (o->power)
		snprintf(c.power_env, sizeof(c.power_env), "SPM_POWERFAIL=%llu:%s",
			 (unsigned long long)o->seed, o->power);
	snprintf(ops, sizeof(ops), "%u", o->ops);
	snprintf(seed1, sizeof(seed1), "%llu", (unsigned long long)o->seed);
	snprintf(seed2, sizeof(seed2), "%llu", (unsigned long long)o->seed + 1);
	snprintf(seed3, sizeof(seed3), "%llu", (unsigned long long)o->seed + 2);
	remove_pool(c.tmpl);
	child_timeout = untracked(o->example, design) ? 10 : CHILD_TIMEOUT_S;
	/* untracked: the template is made with tx_track=pages (without it, no
	 * transaction of the program would write its lines at all, and there
	 * would be no pool to crash); the crashed runs go without */
	char conf_plain[sizeof(c.conf_env)];
	memcpy(conf_plain, c.conf_env, sizeof(conf_plain));
	if (untracked(o->example, design) &&
	    snprintf(c.conf_env, sizeof(c.conf_env), "%s;tx_track=pages", conf_plain) >=
		    (int)sizeof(c.conf_env)) {
		fprintf(stderr, "crash_sweep: design \"%s\": options too long\n", design);
		return -1;
	}
	/* the template: created, then a first run so the structure is not empty */
	snprintf(c.audit_env, sizeof(c.audit_env), "SPM_AUDIT=%s.audit", c.tmpl);
	if (ex(&c, NULL, &out, "create", c.tmpl, opts, "--size", "8388608", NULL) ||
	    !exited_ok(out.status) ||
	    ex_run(&c, NULL, &out, c.tmpl, ops, seed1, 0) ||
	    !exited_ok(out.status)) {
		fprintf(stderr, "crash_sweep: %s/%s: template failed:\n%s\n", o->example,
			design, out.out);
		return -1;
	}
	memcpy(c.conf_env, conf_plain, sizeof(conf_plain));
	snprintf(c.audit_env, sizeof(c.audit_env), "SPM_AUDIT=%s.audit", c.pool);
	long n = count_points(&c, ops, seed2);
	if (n <= 0) {
		fprintf(stderr, "crash_sweep: %s/%s: cannot count crash points\n", o->example,
			design);
		return -1;
	}
	res->points_total = (unsigned)n;
	res->writebacks = -1;
	if (o->stats_bin && (res->writebacks = natural_evictions(&c, ops, seed2)) < 0)
		return -1;
	unsigned m, *ks = o->points ? listed(o->points, n, &m)
				    : sample(n, o->full ? UINT32_MAX : o->max_points, o->seed, &m);
	if (!ks)
		return -1;
	for (unsigned i = 0; i < m; i++) {
		unsigned k = ks[i];
		int failed = 0;
		snprintf(kbuf, sizeof(kbuf), "after:%u", k);
		if (o->power) /* another subset of lost lines at each point */
			snprintf(c.power_env, sizeof(c.power_env), "SPM_POWERFAIL=%llu:%s",
				 (unsigned long long)(o->seed * 1000003 + k), o->power);
		if (copy_pool(c.tmpl, c.pool) ||
		    ex_run(&c, kbuf, &out, c.pool, ops, seed2, 0)) {
			free(ks);
			return -1;
		}
		res->explored++;
		/* a crash during recovery itself, then recovery again: at one of
		 * its first 40 points, or (every other time) anywhere in it */
		if (o->recovery_every && i % o->recovery_every == 0) {
			long r = 40;
			if ((i / o->recovery_every) % 2 &&
			    (r = recovery_points(&c)) < 0) {
				free(ks);
				return -1;
			}
			snprintf(kbuf, sizeof(kbuf), "after:%u",
				 1 + (unsigned)((k * 2654435761ull) % (unsigned long)(r ? r : 1)));
			if (ex(&c, kbuf, &out, "check", c.pool, NULL, NULL, NULL, NULL)) {
				free(ks);
				return -1;
			}
			res->recovery_crashes += killed_by_crash(out.status);
		}
		if (ex(&c, NULL, &out, "check", c.pool, NULL, NULL, NULL, NULL) || !is_ok(&out))
			failed = 1;
		unsigned long long ops1 = ops_of(&out);
		/* writes after recovery, then the oracle again */
		if (!failed &&
		    (ex_run(&c, NULL, &out, c.pool, "20", seed3, 0) ||
		     !exited_ok(out.status) ||
		     ex(&c, NULL, &out, "check", c.pool, NULL, NULL, NULL, NULL) || !is_ok(&out)))
			failed = 1;
		/* a -notxadd example: the 20 ops of a run that ended normally are
		 * durable (whose transactions log nothing may look consistent
		 * at every crash, having made nothing durable) */
		if (!failed && notxadd(o->example) && ops_of(&out) != ops1 + 20)
			failed = 1;
		if (failed) {
			if (!res->failures) {
				res->first_failure = k;
				/* what the example said, for the first failure */
				fprintf(stderr, "crash_sweep: %s/%s: after:%u (visit %u) failed:\n%s\n",
					o->example, design, k, i, out.out);
			}
			res->failures++;
		} else {
			res->ok++;
		}
		unsigned long total;
		char audit[4300];
		snprintf(audit, sizeof(audit), "%s.audit", c.pool);
		res->reused += audit_reused(audit, &total);
		res->audited += total;
		/* an untracked -notxadd run has shown what it had to: its programs
		 * may loop on the structures it leaves (a timeout a point) */
		if (res->failures && untracked(o->example, design))
			break;
	}
	free(ks);
	remove_pool(c.pool);
	remove_pool(c.tmpl);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	res->seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	return 0;
}

/* ------------------------------------------------------------ main */

static int usage(void)
{
	fprintf(stderr, "usage: crash_sweep --bin-dir DIR --work DIR --example NAME "
			"[--designs a,b] [--ops N] [--max-points M] [--recovery-every R] "
			"[--seed S] [--evict] [--power P] [--value-size V] [--elements E] [--dup PCT] "
			"[--stats-bin PATH] [--points K,K,...] [--report FILE]\n");
	return 2;
}

int main(int argc, char **argv)
{
	struct opts o = {.ops = 40, .max_points = 60, .recovery_every = 3, .seed = 1};
	/* SuperMem's designs with tiny minor counters re-encrypt pages often */
	snprintf(o.designs, sizeof(o.designs), "ideal,fca,sca,colocated,colocated-cc,"
		 "wt:minor_bits=2,wt-cwc:minor_bits=3,wt-xbank,supermem:minor_bits=2,srl,lame,"
		 "clame,unsafe");
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--evict")) {
			o.evict = 1;
			continue;
		}
		if (!v)
			return usage();
		i++;
		if (!strcmp(a, "--bin-dir"))
			o.bin_dir = v;
		else if (!strcmp(a, "--work"))
			o.work = v;
		else if (!strcmp(a, "--example"))
			o.example = v;
		else if (!strcmp(a, "--designs")) {
			if (snprintf(o.designs, sizeof(o.designs), "%s", v) >= (int)sizeof(o.designs))
				return usage();
		}
		else if (!strcmp(a, "--ops"))
			o.ops = (unsigned)atoi(v);
		else if (!strcmp(a, "--max-points"))
			o.max_points = (unsigned)atoi(v);
		else if (!strcmp(a, "--recovery-every"))
			o.recovery_every = (unsigned)atoi(v);
		else if (!strcmp(a, "--seed"))
			o.seed = strtoull(v, NULL, 10);
		else if (!strcmp(a, "--report"))
			o.report = v;
		else if (!strcmp(a, "--power"))
			o.power = v;
		else if (!strcmp(a, "--value-size"))
			o.value_size = v;
		else if (!strcmp(a, "--elements"))
			o.elements = v;
		else if (!strcmp(a, "--dup"))
			o.dup = v;
		else if (!strcmp(a, "--points"))
			o.points = v;
		else if (!strcmp(a, "--stats-bin"))
			o.stats_bin = v;
		else
			return usage();
	}
	if (!o.bin_dir || !o.work || !o.example || !o.ops)
		return usage();
	const char *full = getenv("SPM_CRASH_SWEEP");
	o.full = full && !strcmp(full, "full");
	mkdir(o.work, 0700);
	int bad = 0, saw_unsafe = 0;
	FILE *rep = o.report ? fopen(o.report, "a") : NULL;
	printf("%-8s %-24s %7s %8s %8s %9s %9s %7s %9s %7s\n", "example", "design", "points",
	       "explored", "ok", "failures", "rec.crash", "reused", "pads", "seconds");
	char *save = NULL;
	for (char *d = strtok_r(o.designs, ",", &save); d; d = strtok_r(NULL, ",", &save)) {
		struct result r;
		if (sweep_design(&o, d, &r)) {
			bad = 1;
			continue;
		}
		/* bmt-nocc: integrity without crash consistency (cc-NVM's base) */
		int negative = (!strncmp(d, "unsafe", 6) && (!d[6] || d[6] == ':')) ||
			       (!strncmp(d, "bmt-nocc", 8) && (!d[8] || d[8] == ':')) ||
			       (o.power && strstr(d, "durability=none")) ||
			       strstr(d, "redo_early_apply=1") || strstr(d, "dedup_early_map=1") ||
			       untracked(o.example, d);
		printf("%-8s %-24s %7u %8u %8u %9u %9u %7lu %9lu %7.1f%s\n", o.example, d,
		       r.points_total, r.explored, r.ok, r.failures, r.recovery_crashes,
		       r.reused, r.audited, r.seconds,
		       negative ? (r.failures || r.reused ? "  (negative control: failures seen)"
							  : "  NEGATIVE CONTROL BLIND")
				: (r.failures || r.reused ? "  FAILED" : ""));
		if (r.failures && !negative)
			printf("         first failing crash point: after:%u\n", r.first_failure);
		/* a sweep meant for the eviction path that never took it */
		int no_evictions = o.stats_bin && r.writebacks == 0;
		if (o.stats_bin)
			printf("         natural evictions (llc.writebacks) in the workload: %ld%s\n",
			       r.writebacks, no_evictions ? "  NONE: EVICTION PATH UNTESTED" : "");
		char wb[48] = "";
		if (o.stats_bin)
			snprintf(wb, sizeof(wb), " +llc.writebacks %ld", r.writebacks);
		if (rep)
			fprintf(rep, "| %s | %s%s%s%s%s%s%s | %u | %u | %u | %u | %u | %lu | %lu |\n",
				o.example, d, o.evict ? " +evict" : "",
				o.power ? " +power " : "", o.power ? o.power : "",
				o.value_size ? " +value " : "", o.value_size ? o.value_size : "",
				wb, r.points_total,
				r.explored, r.ok, r.failures, r.recovery_crashes, r.reused,
				r.audited);
		bad |= no_evictions;
		if (negative) {
			saw_unsafe = 1;
			bad |= r.failures == 0 && r.reused == 0; /* either shows it sees */
		} else {
			bad |= r.failures != 0 || r.reused != 0;
		}
	}
	(void)saw_unsafe;
	if (rep)
		fclose(rep);
	fflush(stdout);
	return bad ? 1 : 0;
}
