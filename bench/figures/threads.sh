#!/usr/bin/env bash
# threads.sh -- wall-clock scaling with real threads (--threads T): each thread runs its own
# instance of the workload on its own modeled core, in one pool (libpmemobj: a pool per
# thread).  Reports each design's total ops/s at T threads over its own rate at one thread,
# medians of REPS repetitions, all in one run.  Wall-clock, so it moves between runs; needs
# as many idle CPUs as threads to mean anything.  Not part of all.sh.  Runs spm-bench-native,
# the uninstrumented build (write-only model), so that the instrumentation's own cost never
# enters a comparison with libpmemobj, with --footprint 0 (libpmemobj's structures start empty).
. "$(dirname "$0")/common.sh"
BENCH_NATIVE=$(find_bench_native)
OPS=${OPS:-100000}
REPS=${REPS:-3}
THREADS=${THREADS:-"1 2"}
DESIGNS=${DESIGNS:-plain,fca,sca,pmdk}
LOADS=${LOADS:-queue,hashmap,btree}
csv=$OUT/threads.csv
dat=$OUT/threads.dat

rm -f "$csv"
for t in $THREADS; do
	bench_native --designs "$DESIGNS" --workloads "$LOADS" --ops "$OPS" --reps "$REPS" \
		--footprint 0 --threads "$t" --csv "$OUT/threads-$t.csv" >/dev/null
	if [ -f "$csv" ]; then tail -n +2 "$OUT/threads-$t.csv" >> "$csv"
	else cp "$OUT/threads-$t.csv" "$csv"; fi
	rm -f "$OUT/threads-$t.csv"
done

# total ops/s per (workload, design, threads), and over the design's rate at 1 thread
awk -v designs="$DESIGNS" -v loads="$LOADS" -v threads="$THREADS" "$AWK_COLS"'
{ r[$col["workload"], $col["design"], $col["threads"]] = $col["ops"] * 1e9 / $col["wall_ns"] }
END {
	nd = split(designs, D, ","); nw = split(loads, W, ","); nt = split(threads, T, " ")
	printf "case"
	for (k = 2; k <= nt; k++) for (i = 1; i <= nd; i++) printf " %s-x%s", D[i], T[k]
	print ""
	for (j = 1; j <= nw; j++) {
		printf "%s", W[j]
		for (k = 2; k <= nt; k++)
			for (i = 1; i <= nd; i++)
				printf " %.3f", r[W[j], D[i], T[k]] / r[W[j], D[i], T[1]]
		print ""
	}
	print "# total ops/s at T threads over the same design at 1 thread (1.0: no gain)"
	for (j = 1; j <= nw; j++)
		for (i = 1; i <= nd; i++) {
			printf "# %s %s ops/s:", W[j], D[i]
			for (k = 1; k <= nt; k++) printf " %d@%s", r[W[j], D[i], T[k]], T[k]
			print ""
		}
}' "$csv" > "$dat"
grep -v "^#" "$dat" | column -t; grep "^#" "$dat" || true

ncols=$(grep -v "^#" "$dat" | head -1 | wc -w) # case, then a column per design and count
gnuplot <<GP
$GP_STYLE
set terminal $TERM_PNG size 900,480
set output "$OUT/threads.png"
set title "Real threads: total ops/s at ${THREADS##* } threads over 1 thread (medians of $REPS; $OPS ops per thread)"
$GP_HISTOGRAM
set ylabel "ops/s at T threads / ops/s at 1 thread"
set yrange [0:*]
set grid ytics
set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2
set key autotitle columnheader
plot for [i=2:$ncols] "$dat" using i:xtic(1)
GP
echo "wrote $OUT/threads.png" >&2
