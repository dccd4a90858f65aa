/*
 * track_cost.c -- the cost of a transaction that finds its own writes
 * (tx_track=pages, lib/track.c) against the same transaction with explicit
 * spm_tx_add, side by side in one run.
 *
 * A transaction stores 8 bytes into each of L lines of an 8 MiB object
 * (L = 1, 4, 16) and commits.  Two layouts: "scattered", each line on a page
 * of its own (every line is a first write: a fault, a 4 KiB snapshot, a page
 * compared at commit), and "packed", the L lines next to each other (one
 * page).  "explicit": spm_tx_add of each line before its store, the pool
 * opened with tx_track=off; "tracked": no spm_tx_add, tx_track=pages.
 * Reported: the median over --reps repetitions of the wall-clock time per
 * transaction of a batch of --ops transactions (the two subjects measured
 * in turn, alternating which goes first, after an untimed warm-up batch),
 * and the modeled time per transaction (time.modeled_ns), which is the
 * same in both unless the logs differ.
 *
 *   spm-track-cost [--dir DIR] [--designs a,b,...] [--reps N] [--ops N]
 *                  [--csv FILE]
 *
 * Exit 0, or 1 if a pool could not be made, 2 for bad usage.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <spm.h>

#define POOL ((size_t)32 << 20)
#define OBJ ((size_t)8 << 20)
#define PAGE 4096u
#define MAX_REPS 64

struct subject {
	spm_pool *pool;
	uint8_t *obj;
	int tracked;
	char path[4096];
};

static double now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, unsigned n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* line_at -- the offset of line i of transaction t in the object. */
static size_t line_at(unsigned t, unsigned i, unsigned lines, int packed)
{
	size_t pages = OBJ / PAGE;
	if (packed) /* L consecutive lines on one page, the page moving on */
		return (size_t)(t % pages) * PAGE + (size_t)i * SPM_LINE;
	/* a page of its own for each line, spread over the object */
	size_t pg = ((size_t)t * lines + i) * 2654435761u % pages;
	return pg * PAGE + (size_t)((t + i) % (PAGE / SPM_LINE)) * SPM_LINE;
}

/* batch -- ops transactions of L lines on s; 0 or an error. */
static int batch(struct subject *s, unsigned ops, unsigned lines, int packed, unsigned *seq)
{
	for (unsigned k = 0; k < ops; k++, (*seq)++) {
		int rc = spm_tx_begin(s->pool);
		if (rc)
			return rc;
		for (unsigned i = 0; i < lines; i++) {
			uint64_t *w = (uint64_t *)(s->obj + line_at(*seq, i, lines, packed));
			if (!s->tracked && (rc = spm_tx_add(s->pool, w, sizeof(*w)))) {
				spm_tx_abort(s->pool);
				return rc;
			}
			*w = *w + 1;
		}
		if ((rc = spm_tx_commit(s->pool)))
			return rc;
	}
	return 0;
}

static int open_subject(struct subject *s, const char *dir, const char *design, int tracked)
{
	char opts[128];
	snprintf(s->path, sizeof(s->path), "%s/track-cost-%ld-%s-%d", dir, (long)getpid(),
		 design, tracked);
	snprintf(opts, sizeof(opts), "design=%s;prefault=1;tx_track=%s", design,
		 tracked ? "pages" : "off");
	s->tracked = tracked;
	int rc = spm_create(&s->pool, s->path, POOL, opts);
	if (rc) {
		fprintf(stderr, "spm-track-cost: %s: %s\n", s->path, spm_errormsg());
		return rc;
	}
	spm_off_t o = 0;
	if (spm_tx_begin(s->pool) == 0) {
		o = spm_tx_alloc(s->pool, OBJ);
		if (!o || spm_tx_commit(s->pool))
			o = 0;
	}
	if (!o) {
		fprintf(stderr, "spm-track-cost: %s: no object: %s\n", s->path, spm_errormsg());
		return -1;
	}
	s->obj = spm_ptr(s->pool, o);
	return 0;
}

static void close_subject(struct subject *s)
{
	char b[4200];
	spm_close(s->pool);
	unlink(s->path);
	snprintf(b, sizeof(b), "%s.meta", s->path);
	unlink(b);
	snprintf(b, sizeof(b), "%s.key", s->path);
	unlink(b);
	snprintf(b, sizeof(b), "%s.key.tcb", s->path);
	unlink(b);
}

int main(int argc, char **argv)
{
	const char *dir = getenv("TMPDIR"), *csv = NULL;
	char designs[256] = "sca,supermem,lame,ccnvm";
	unsigned reps = 9, ops = 2000;
	if (!dir || !*dir)
		dir = "/tmp";
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!v)
			goto usage;
		if (!strcmp(a, "--dir"))
			dir = v;
		else if (!strcmp(a, "--designs"))
			snprintf(designs, sizeof(designs), "%s", v);
		else if (!strcmp(a, "--reps"))
			reps = (unsigned)strtoul(v, NULL, 10);
		else if (!strcmp(a, "--ops"))
			ops = (unsigned)strtoul(v, NULL, 10);
		else if (!strcmp(a, "--csv"))
			csv = v;
		else
			goto usage;
		i++;
	}
	if (reps < 1 || reps > MAX_REPS || ops < 1)
		goto usage;
	FILE *out = csv ? fopen(csv, "w") : NULL;
	if (out)
		fprintf(out, "design,layout,lines,explicit_ns,tracked_ns,ratio,explicit_modeled_ns,"
			     "tracked_modeled_ns\n");
	printf("%-9s %-9s %5s %12s %12s %7s %14s %14s\n", "design", "layout", "lines",
	       "explicit ns", "tracked ns", "ratio", "explicit mod.", "tracked mod.");
	static const unsigned line_counts[] = {1, 4, 16};
	char *save = NULL;
	for (char *d = strtok_r(designs, ",", &save); d; d = strtok_r(NULL, ",", &save)) {
		struct subject s[2];
		memset(s, 0, sizeof(s));
		if (open_subject(&s[0], dir, d, 0) || open_subject(&s[1], dir, d, 1))
			return 1;
		for (int packed = 0; packed < 2; packed++)
			for (unsigned c = 0; c < 3; c++) {
				unsigned lines = line_counts[c], seq[2] = {0, 0};
				double t[2][MAX_REPS], m[2] = {0, 0};
				for (int j = 0; j < 2; j++) /* warm-up */
					if (batch(&s[j], ops, lines, packed, &seq[j]))
						goto fail;
				for (unsigned r = 0; r < reps; r++)
					for (int q = 0; q < 2; q++) {
						int j = (int)(r + (unsigned)q) % 2;
						uint64_t m0 = 0, m1 = 0;
						spm_stat(s[j].pool, "time.modeled_ns", &m0);
						double t0 = now_ns();
						if (batch(&s[j], ops, lines, packed, &seq[j]))
							goto fail;
						t[j][r] = (now_ns() - t0) / ops;
						spm_stat(s[j].pool, "time.modeled_ns", &m1);
						m[j] += (double)(m1 - m0) / ops / reps;
					}
				double e = median(t[0], reps), k = median(t[1], reps);
				const char *lay = packed ? "packed" : "scattered";
				printf("%-9s %-9s %5u %12.0f %12.0f %7.2f %14.0f %14.0f\n", d, lay, lines,
				       e, k, k / e, m[0], m[1]);
				if (out)
					fprintf(out, "%s,%s,%u,%.0f,%.0f,%.3f,%.0f,%.0f\n", d, lay, lines,
						e, k, k / e, m[0], m[1]);
				fflush(stdout);
			}
		close_subject(&s[0]);
		close_subject(&s[1]);
		continue;
fail:
		fprintf(stderr, "spm-track-cost: %s: %s\n", d, spm_errormsg());
		return 1;
	}
	if (out)
		fclose(out);
	return 0;
usage:
	fprintf(stderr, "usage: spm-track-cost [--dir DIR] [--designs a,b,...] [--reps N] "
			"[--ops N] [--csv FILE]\n");
	return 2;
}
