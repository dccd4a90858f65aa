/*
 * crash.c -- named crash points and the SPM_CRASH fault injector
 * (doc/design.md, "Crash model").  A crash is SIGKILL of the whole process: the
 * power failure of the emulated machine.
 *
 *   SPM_CRASH=after:N           die at the Nth crash point hit (N >= 1)
 *   SPM_CRASH=point:NAME[:K]    die at the Kth hit of the point NAME (K = 1)
 *   SPM_CRASH=random:SEED:P     die at each hit with probability P
 *   SPM_CRASH=count             at exit print "spm-crash-points: N" on stderr
 *
 * With SPM_POWERFAIL set as well, the kill is a power failure of persistent
 * memory: lines written but not persisted may be lost (powerfail.c).
 *
 * NAME must be one of emu_crash_point_names below, the one list of crash
 * points: any other name is refused (a typo would never fire), and a crash
 * point missing from the list stops an armed process at its first hit.
 *
 * The test knobs are here too: ctr_recovery=none (lib/config.c), SPM_AUDIT
 * (audit.c: a checksum of every plaintext line in a file) and SPM_POWERFAIL
 * (powerfail.c: puts written lines back, at kills and with ":close" at every
 * close) harm a normal run, so each is refused unless SPM_TEST_KNOBS=1.
 * SPM_CRASH and SPM_EVICT are not: a kill is what spm survives, and early
 * write-backs are what a real cache does.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "spm.h"
#include "emu.h"
#include "emu_internal.h"

enum crash_mode { CRASH_OFF, CRASH_AFTER, CRASH_POINT, CRASH_RANDOM, CRASH_COUNT };

int emu_crash_armed;

const char *const emu_crash_point_names[] = {
	"wpq.data_enqueued", "wpq.ctr_enqueued", "wpq.ready", "wpq.data_direct",
	"wpq.payload_written", "wpq.coalesced", "drain.home_written", "drain.entry_freed",
	"ctr.evicted", "ctr.shadow_recorded", "fence", "tx.logged", "tx.mutated",
	"tx.committed", "tx.rolled_back", "recovery.entry_drained",
	"recovery.dropped_kept", "recovery.entry_freed", "reenc.begin", "reenc.line_done",
	"reenc.end", "power.persist", "epoch.raised", "epoch.recorded", "create.files_made",
	"create.key_placed", "create.meta_placed", "create.committed", "rekey.lines_done",
	"rekey.files_made", "rekey.meta_placed", "rekey.data_placed", "rekey.committed",
	"redo.reserved", "redo.header_written", "redo.block_written", "redo.logged",
	"redo.committed", "redo.ctr_applied", "redo.applied", "redo.head", "redo.recovered",
	"bmt.tcb_written",
	"bmt.drain_buffered", "bmt.drain_end", "bmt.drain_applied", "bmt.drain_committed",
	"bmt.ctr_persisted", "bmt.recovered", "dedup.hash_written", "dedup.mapped", NULL,
};

static struct {
	enum crash_mode mode;
	uint64_t n;          /* after:N, point K */
	char name[64];       /* point NAME */
	uint64_t rng;        /* random state */
	double p;            /* random probability */
	uint64_t hits;       /* crash points hit so far */
	uint64_t name_hits;  /* hits of NAME */
	int parse_error;     /* 1: bad syntax, 2: an unknown point NAME */
	char bad[128];
} crash;

static pthread_once_t crash_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t crash_lock = PTHREAD_MUTEX_INITIALIZER;

/* die -- the emulated power failure, at the hit-th crash point. */
static void die(uint64_t hit)
{
	emu_powerfail_apply(hit);
	kill(getpid(), SIGKILL);
	_exit(137); /* not reached */
}

/* report_count -- atexit handler of SPM_CRASH=count. */
static void report_count(void)
{
	fprintf(stderr, "spm-crash-points: %llu\n",
		(unsigned long long)__atomic_load_n(&crash.hits, __ATOMIC_RELAXED));
}

/* parse_u64 -- a whole decimal number, or -1. */
static int parse_u64(const char *s, uint64_t *out)
{
	char *end;
	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

/* point_known -- is name in emu_crash_point_names? */
static int point_known(const char *name)
{
	for (const char *const *n = emu_crash_point_names; *n; n++)
		if (strcmp(*n, name) == 0)
			return 1;
	return 0;
}

/* point_list -- the names, comma-separated, into buf. */
static const char *point_list(char *buf, size_t size)
{
	size_t used = 0;
	buf[0] = '\0';
	for (const char *const *n = emu_crash_point_names; *n && used < size; n++) {
		int k = snprintf(buf + used, size - used, "%s%s", used ? ", " : "", *n);
		if (k < 0)
			break;
		used += (size_t)k;
	}
	return buf;
}

/* refuse_point -- an unknown point:NAME, said on stderr at once (a test
 * driver may not print spm_errormsg) as well as at every create and open. */
static void refuse_point(void)
{
	char list[1536];
	crash.parse_error = 2;
	fprintf(stderr, "spm-crash: SPM_CRASH=%s: unknown crash point (points: %s)\n",
		crash.bad, point_list(list, sizeof(list)));
}

/* parse -- read SPM_CRASH once per process. */
static void parse(void)
{
	const char *v = getenv("SPM_CRASH");
	if (!v || !*v)
		return;
	snprintf(crash.bad, sizeof(crash.bad), "%s", v);
	char buf[256];
	snprintf(buf, sizeof(buf), "%s", v);
	if (strcmp(buf, "count") == 0) {
		crash.mode = CRASH_COUNT;
		atexit(report_count);
	} else if (strncmp(buf, "after:", 6) == 0) {
		if (parse_u64(buf + 6, &crash.n) || crash.n == 0)
			goto bad;
		crash.mode = CRASH_AFTER;
	} else if (strncmp(buf, "point:", 6) == 0) {
		char *name = buf + 6, *k = strchr(name, ':');
		crash.n = 1;
		if (k) {
			*k++ = '\0';
			if (parse_u64(k, &crash.n) || crash.n == 0)
				goto bad;
		}
		if (!*name || strlen(name) >= sizeof(crash.name))
			goto bad;
		strcpy(crash.name, name);
		if (!point_known(name)) {
			refuse_point();
			return;
		}
		crash.mode = CRASH_POINT;
	} else if (strncmp(buf, "random:", 7) == 0) {
		char *seed = buf + 7, *p = strchr(seed, ':'), *end;
		if (!p)
			goto bad;
		*p++ = '\0';
		if (parse_u64(seed, &crash.rng))
			goto bad;
		crash.rng = crash.rng * 0x9e3779b97f4a7c15ull + 1;
		crash.p = strtod(p, &end);
		if (*end || end == p || !(crash.p >= 0.0 && crash.p <= 1.0))
			goto bad;
		crash.mode = CRASH_RANDOM;
	} else {
		goto bad;
	}
	emu_crash_armed = 1;
	return;
bad:
	crash.parse_error = 1;
}

/* emu_test_knobs -- may test knobs be used: SPM_TEST_KNOBS=1?  Read at
 * each call (tests set and unset it between pools). */
int emu_test_knobs(void)
{
	const char *v = getenv(EMU_TEST_KNOBS_ENV);
	return v && strcmp(v, "1") == 0;
}

/* gate_injector -- the test injector in environment variable var, set and
 * non-empty, refused without the test switch (why: what it does). */
static int gate_injector(const char *var, const char *why)
{
	const char *v = getenv(var);
	if (!v || !*v || emu_test_knobs())
		return 0;
	return emu_err(SPM_E_OPTION, "%s is a test injector (%s): refused unless %s=1", var,
		       why, EMU_TEST_KNOBS_ENV);
}

/* emu_crash_init_checked -- parse SPM_CRASH (an invalid value or an unknown
 * point is an option error), refuse the test injectors without the test
 * switch, parse SPM_POWERFAIL. */
int emu_crash_init_checked(void)
{
	char list[1536];
	pthread_once(&crash_once, parse);
	if (crash.parse_error == 2)
		return emu_err(SPM_E_OPTION, "SPM_CRASH=%s: unknown crash point (points: %s)",
			       crash.bad, point_list(list, sizeof(list)));
	if (crash.parse_error)
		return emu_err(SPM_E_OPTION,
			       "SPM_CRASH: bad value \"%s\" (after:N, point:NAME[:K], "
			       "random:SEED:P or count)", crash.bad);
	int rc = gate_injector("SPM_AUDIT", "it writes a checksum of every plaintext line "
			       "to a file");
	if (!rc)
		rc = gate_injector("SPM_POWERFAIL", "it puts written lines back, losing them");
	return rc ? rc : emu_powerfail_init();
}

/* emu_crash_init -- parse SPM_CRASH (errors are reported by the checked
 * variant). */
void emu_crash_init(void)
{
	pthread_once(&crash_once, parse);
}

/* next_random -- xorshift64* in [0,1). */
static double next_random(void)
{
	uint64_t x = crash.rng;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	crash.rng = x;
	return (double)((x * 0x2545F4914F6CDD1Dull) >> 11) / 9007199254740992.0;
}

/* unlisted -- a crash point missing from emu_crash_point_names: stop, so
 * that the list is completed (point:NAME would refuse it). */
static void unlisted(const char *name)
{
	fprintf(stderr, "spm-crash: crash point \"%s\" is not in emu_crash_point_names "
		"(emu/crash.c)\n", name);
	abort();
}

/* emu_crash_hit -- a crash point was reached while the injector is armed. */
void emu_crash_hit(const char *name)
{
	if (!point_known(name))
		unlisted(name);
	pthread_mutex_lock(&crash_lock);
	uint64_t hit = ++crash.hits;
	int kill_now = 0;
	switch (crash.mode) {
	case CRASH_AFTER:
		kill_now = hit == crash.n;
		break;
	case CRASH_POINT:
		if (strcmp(name, crash.name) == 0)
			kill_now = ++crash.name_hits == crash.n;
		break;
	case CRASH_RANDOM:
		kill_now = next_random() < crash.p;
		break;
	default:
		break;
	}
	if (kill_now) {
		/* say where, for whoever reproduces a failing crash point */
		char msg[160];
		int n = snprintf(msg, sizeof(msg), "spm-crash: killed at crash point %llu (%s)\n",
				 (unsigned long long)hit, name);
		if (n > 0 && write(2, msg, (size_t)n) < 0)
			n = 0;
		die(hit);
	}
	pthread_mutex_unlock(&crash_lock);
}
