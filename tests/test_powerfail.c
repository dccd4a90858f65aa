/*
 * test_powerfail.c -- the power-failure injector (SPM_POWERFAIL,
 * emu/powerfail.c) and what it shows of durability=pmem.
 *
 * A child (this program run again: SPM_CRASH and SPM_POWERFAIL are read
 * once per process, and the parent has read them already) opens a pool,
 * commits a value A, then runs a second transaction writing B, and is killed
 * at its k-th crash point, every persist being one (power.persist), with the
 * lines it wrote but did not persist lost (P=0) or half kept (P=0.5).  With
 * durability=pmem the next open must find A or B whole, and B once the child
 * saw B's commit return.  With durability=none nothing is persisted: the
 * harness must see A lost -- the proof that it can fail.  A power failure
 * just after a clean close loses nothing with durability=pmem.  A bad
 * SPM_POWERFAIL is an option error that leaves the pool's files as they were.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "test_files.h"
#include <spm.h>

#define POOL_SIZE (4u << 20) /* the minimum */
#define VALUE 512 /* bytes of the value: eight lines */

static char pool[2200];

/* fill -- the value of generation g: every byte g. */
static void fill(uint8_t *v, uint8_t g)
{
	memset(v, g, VALUE);
}

/* put -- one transaction writing generation g into the root. */
static int put(spm_pool *p, uint8_t g)
{
	uint8_t *root = spm_root(p, VALUE);
	if (!root || spm_tx_begin(p))
		return -1;
	if (spm_tx_add(p, root, VALUE)) {
		spm_tx_abort(p);
		return -1;
	}
	fill(root, g);
	return spm_tx_commit(p);
}

/* The pool's files as new_pool made them, put back before each crash. */
static struct pool_image saved;

/* new_pool -- a pool of design whose root holds generation 0, its files
 * saved for pool_restore. */
static void new_pool(const char *design)
{
	char opts[64];
	snprintf(opts, sizeof(opts), "design=%s;prefault=0", design);
	spm_pool *p = fresh_pool(pool, POOL_SIZE, opts);
	assert_int_equal(put(p, 0), 0);
	assert_int_equal(spm_close(p), 0);
	pool_save(pool, &saved);
}

struct outcome {
	int status;      /* the child's wait status */
	int committed;   /* the generations whose commit the child saw return */
	char err[512];   /* what it said */
};

/*
 * child -- (the process of this program run as "child FD OPTIONS") open the
 * pool with options, put generation 1 (A), then generation 2 (B), writing a
 * byte to fd after each commit returns.  Exit 0, 3 for a refused open (its
 * message on stderr), 4 for any other failure.
 */
static int child(int fd, const char *options)
{
	spm_pool *p = NULL;
	const char *gens = getenv("SPM_TEST_GENS"); /* "0": open and close only */
	if (spm_open(&p, pool, options)) {
		fprintf(stderr, "%s\n", spm_errormsg());
		return 3;
	}
	for (uint8_t g = 1; g <= (gens ? atoi(gens) : 2); g++) {
		if (put(p, g))
			return 4;
		if (write(fd, &g, 1) != 1)
			return 4;
	}
	return spm_close(p) ? 4 : 0;
}

/* run -- child in a new process with SPM_CRASH=crash and
 * SPM_POWERFAIL=power (NULL: unset); what became of it. */
static void run(struct outcome *o, const char *crash, const char *power, const char *options)
{
	int out[2], err[2];
	assert_int_equal(pipe(out), 0);
	assert_int_equal(pipe(err), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(out[0]);
		close(err[0]);
		dup2(err[1], 2);
		char fd[16];
		snprintf(fd, sizeof(fd), "%d", out[1]);
		if ((crash ? setenv("SPM_CRASH", crash, 1) : unsetenv("SPM_CRASH")) ||
		    (power ? setenv("SPM_POWERFAIL", power, 1) : unsetenv("SPM_POWERFAIL")) ||
		    setenv("SPM_TEST_POOL", pool, 1))
			_exit(4);
		execl("/proc/self/exe", "test_powerfail", "child", fd, options, (char *)NULL);
		_exit(5);
	}
	close(out[1]);
	close(err[1]);
	uint8_t got[8];
	ssize_t n = 0, m;
	size_t have = 0;
	while ((m = read(out[0], got, sizeof(got))) > 0)
		n += m;
	o->committed = (int)n;
	while (have < sizeof(o->err) - 1 &&
	       (m = read(err[0], o->err + have, sizeof(o->err) - 1 - have)) > 0)
		have += (size_t)m;
	o->err[have] = '\0';
	close(out[0]);
	close(err[0]);
	assert_int_equal(waitpid(pid, &o->status, 0), pid);
}

/* generation -- the generation the pool's root holds whole (-1: mixed or
 * the pool cannot be opened). */
static int generation(void)
{
	spm_pool *p = NULL;
	if (spm_open(&p, pool, NULL))
		return -1;
	const uint8_t *root = spm_root(p, VALUE);
	int g = root ? root[0] : -1;
	for (unsigned i = 0; root && i < VALUE; i++)
		if (root[i] != root[0])
			g = -1;
	assert_int_equal(spm_close(p), 0);
	return g;
}

/* points -- the crash points of child's run with power failure armed. */
static unsigned points(const char *power, const char *options)
{
	unsigned n = 0;
	struct outcome o;
	run(&o, "count", power, options);
	assert_true(WIFEXITED(o.status) && WEXITSTATUS(o.status) == 0);
	const char *s = strstr(o.err, "spm-crash-points: ");
	assert_non_null(s);
	n = (unsigned)strtoul(s + strlen("spm-crash-points: "), NULL, 10);
	return n;
}

/* sweep -- every crash point of the child on design with power failure at
 * probability p.  Returns at how many points the next open found an older
 * generation than the child saw committed, a mixed one or no pool. */
static unsigned sweep(const char *design, const char *durability, const char *p,
		      unsigned *total)
{
	char options[64], power[64];
	snprintf(options, sizeof(options), "durability=%s;prefault=0", durability);
	new_pool(design);
	snprintf(power, sizeof(power), "7:%s", p);
	unsigned n = points(power, options), bad = 0;
	assert_true(n > 10);
	for (unsigned k = 1; k <= n; k++) {
		char crash[32];
		struct outcome o;
		pool_restore(pool, &saved);
		snprintf(crash, sizeof(crash), "after:%u", k);
		snprintf(power, sizeof(power), "%u:%s", 1000 + k, p);
		run(&o, crash, power, options);
		if (!(WIFSIGNALED(o.status) && WTERMSIG(o.status) == SIGKILL))
			fail_msg("%s after:%u: the child was not killed: %s", design, k, o.err);
		/* a generation whose commit returned is there, or a later one */
		int g = generation();
		if (g < o.committed)
			bad++;
	}
	*total = n;
	print_message("%s, durability=%s, P=%s: %u of %u power failures lost a commit\n",
		      design, durability, p, bad, n);
	return bad;
}

/* pmem_keeps_commits -- durability=pmem survives a power failure at every
 * crash point and persist, whatever part of the unpersisted lines is lost:
 * a random half on four designs, none on two (P=1 on these, and P=0 on the
 * other two, pass as well, in twice the time). */
static void pmem_keeps_commits(void **state)
{
	(void)state;
	static const struct {
		const char *design, *p;
	} runs[] = {{"sca", "0.5"}, {"fca", "0.5"}, {"supermem", "0.5"}, {"colocated-cc", "0.5"},
		    {"sca", "0"}, {"supermem", "0"}};
	for (unsigned i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		unsigned total, bad = sweep(runs[i].design, "pmem", runs[i].p, &total);
		if (bad)
			fail_msg("%s, durability=pmem, P=%s: %u of %u power failures lost a "
				 "commit", runs[i].design, runs[i].p, bad, total);
	}
}

/* none_loses_commits -- the negative control: without persists, a power
 * failure that loses every unpersisted line takes the commits with it. */
static void none_loses_commits(void **state)
{
	(void)state;
	unsigned total, bad = sweep("sca", "none", "0", &total);
	assert_true(bad > total / 2);
}

/* clean_close -- a power failure right after spm_close (":close") loses
 * nothing with durability=pmem: close persists what the next open needs.
 * Without persists it loses both commits. */
static void clean_close(void **state)
{
	(void)state;
	static const char *const designs[] = {"sca", "fca", "supermem", "colocated-cc"};
	static const char *const probs[] = {"0", "0.5"};
	for (unsigned d = 0; d < 4; d++)
		for (unsigned i = 0; i < 2; i++) {
			char power[32];
			struct outcome o;
			new_pool(designs[d]);
			snprintf(power, sizeof(power), "%u:%s:close", 11 + d, probs[i]);
			run(&o, NULL, power, "durability=pmem;prefault=0");
			if (!(WIFEXITED(o.status) && WEXITSTATUS(o.status) == 0))
				fail_msg("%s: the child failed: %s", designs[d], o.err);
			int g = generation();
			if (g != 2)
				fail_msg("%s, P=%s: power failed after a clean close: generation "
					 "%d, want 2", designs[d], probs[i], g);
		}
	new_pool("sca");
	struct outcome o;
	run(&o, NULL, "11:0:close", "durability=none;prefault=0");
	assert_true(WIFEXITED(o.status) && WEXITSTATUS(o.status) == 0);
	/* both commits lost -- and with them the epoch raises, so the files
	 * are now older than the key's record of the pool: refused as a
	 * rollback (-1) rather than opened with counters gone back */
	int g = generation();
	if (g != 0 && g != -1)
		fail_msg("durability=none: power failed after a clean close: generation %d, "
			 "want 0 or refused", g);
}

/*
 * two_crashes -- a crash in the last points of a run (its close raises
 * the epochs), then one at each point of the next open and close: the
 * pool must still open, with its commits.  An epoch raise cut short
 * between the data file's word and the superblock's, then raised again from
 * there, left the two files naming different states, and the pool was
 * refused for good.  P=1: what a killed process leaves, too.
 */
static void two_crashes(void **state)
{
	(void)state;
	const char *opts = "durability=pmem;prefault=0";
	static const char *const designs[] = {"supermem"}; /* sca: 15564 crashes, 5 min */
	for (unsigned d = 0; d < 1; d++) {
		new_pool(designs[d]);
		unsigned n = points("1:1", opts), checked = 0;
		for (unsigned k1 = n > 12 ? n - 12 : 1; k1 <= n; k1++) {
			char crash[32];
			struct outcome o;
			pool_restore(pool, &saved);
			snprintf(crash, sizeof(crash), "after:%u", k1);
			run(&o, crash, "1:1", opts);
			int committed = o.committed;
			struct pool_image first = {0};
			pool_save(pool, &first);
			assert_int_equal(setenv("SPM_TEST_GENS", "0", 1), 0);
			unsigned m = points("1:1", opts);
			for (unsigned k2 = 1; k2 <= m; k2++) {
				pool_restore(pool, &first);
				snprintf(crash, sizeof(crash), "after:%u", k2);
				run(&o, crash, "1:1", opts);
				int g = generation();
				if (g < committed)
					fail_msg("%s: crashes at points %u, then %u of the next "
						 "open: generation %d, want %d or more (-1: the pool "
						 "was refused)", designs[d], k1, k2, g, committed);
				checked++;
			}
			assert_int_equal(unsetenv("SPM_TEST_GENS"), 0);
			pool_image_free(&first);
		}
		print_message("%s: %u second crashes after the last 13 points, all opened\n",
			      designs[d], checked);
	}
}

/* bad_value -- a bad SPM_POWERFAIL refuses the open, files unchanged. */
static void bad_value(void **state)
{
	(void)state;
	static const char *const bad[] = {"x", "1", "1:", "1:2", "1:-0.5", "1:0.5x", "-1:0.5",
					  ":0.5", "1:0.5:", "1:0.5:closed"};
	new_pool("sca");
	char meta[2300];
	snprintf(meta, sizeof(meta), "%s.meta", pool);
	size_t dlen, mlen;
	uint8_t *data = slurp(pool, &dlen), *mbytes = slurp(meta, &mlen);
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct outcome o;
		run(&o, NULL, bad[i], "durability=pmem");
		if (!(WIFEXITED(o.status) && WEXITSTATUS(o.status) == 3) ||
		    !strstr(o.err, "SPM_POWERFAIL"))
			fail_msg("SPM_POWERFAIL=%s: want a refused open naming it, got "
				 "status %d: %s", bad[i], o.status, o.err);
		assert_file_is(pool, data, dlen);
		assert_file_is(meta, mbytes, mlen);
	}
	free(data);
	free(mbytes);
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "child")) {
		snprintf(pool, sizeof(pool), "%s", getenv("SPM_TEST_POOL"));
		return child(atoi(argv[2]), argv[3]);
	}
	const char *dir = getenv("SPM_TEST_DIR");
	snprintf(pool, sizeof(pool), "%s/powerfail-%ld", dir ? dir : "/tmp", (long)getpid());
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(bad_value),
		cmocka_unit_test(none_loses_commits),
		cmocka_unit_test(clean_close),
		cmocka_unit_test(two_crashes),
		cmocka_unit_test(pmem_keeps_commits),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	remove_pool_files(pool);
	pool_image_free(&saved);
	return rc;
}
