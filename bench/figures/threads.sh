#!/usr/bin/env bash
# threads.sh -- wall-clock scaling with real threads (--threads T): each thread runs its own
# instance of the workload on its own modeled core, in one pool (libpmemobj: a pool per
# thread).  Reports each design's total ops/s at T threads over its own rate at one thread in
# the same process, the median over PROCS processes (default 5; each runs every thread count
# in turn).  spm's designs run with SET (default profile=heap: no timing model, a channel per
# online CPU, an allocation arena per lane).  Wall-clock, so it moves between runs; needs as
# many idle CPUs as threads to mean anything.  Not part of all.sh.  Runs spm-bench-native, the
# uninstrumented build, so that the instrumentation's own cost never enters a comparison with
# libpmemobj, with --footprint 0 (libpmemobj's structures start empty).
. "$(dirname "$0")/common.sh"
BENCH_NATIVE=$(find_bench_native)
OPS=${OPS:-100000}
PROCS=${PROCS:-5}
THREADS=${THREADS:-"1 2"}
DESIGNS=${DESIGNS:-sca,supermem,pmdk}
LOADS=${LOADS:-queue,hashmap,btree}
SET=${SET:-profile=heap}
csv=$OUT/threads.csv
dat=$OUT/threads.dat

sets=()
for kv in ${SET//;/ }; do sets+=(--set "$kv"); done
rm -f "$csv"
for p in $(seq "$PROCS"); do
	for t in $THREADS; do
		bench_native --designs "$DESIGNS" --workloads "$LOADS" --ops "$OPS" --reps 1 \
			--footprint 0 --threads "$t" "${sets[@]}" --csv "$OUT/threads-one.csv" >/dev/null
		# the process's number in a last column
		if [ ! -f "$csv" ]; then head -1 "$OUT/threads-one.csv" | sed 's/$/,proc/' > "$csv"; fi
		awk -v p="$p" 'NR > 1 { print $0 "," p }' "$OUT/threads-one.csv" >> "$csv"
		rm -f "$OUT/threads-one.csv"
	done
done

# per (workload, design, threads): the median over the processes of the rate at T threads
# over the same process's rate at 1 thread; and the medians of the rates themselves
awk -v designs="$DESIGNS" -v loads="$LOADS" -v threads="$THREADS" "$AWK_COLS"'
{ r[$col["workload"], $col["design"], $col["threads"], $col["proc"]] = $col["ops"] * 1e9 / $col["wall_ns"]
  if ($col["proc"] > np) np = $col["proc"] }
function median(v, n,    i, j, t) {
	for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j] < v[j - 1]; j--) {
		t = v[j]; v[j] = v[j - 1]; v[j - 1] = t
	}
	return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
}
END {
	nd = split(designs, D, ","); nw = split(loads, W, ","); nt = split(threads, T, " ")
	printf "case"
	for (k = 2; k <= nt; k++) for (i = 1; i <= nd; i++) printf " %s-x%s", D[i], T[k]
	print ""
	for (j = 1; j <= nw; j++) {
		printf "%s", W[j]
		for (k = 2; k <= nt; k++)
			for (i = 1; i <= nd; i++) {
				for (p = 1; p <= np; p++)
					v[p] = r[W[j], D[i], T[k], p] / r[W[j], D[i], T[1], p]
				printf " %.3f", median(v, np)
			}
		print ""
	}
	print "# total ops/s at T threads over the same design at 1 thread in the same process"
	print "# (1.0: no gain), medians over " np " processes"
	for (j = 1; j <= nw; j++)
		for (i = 1; i <= nd; i++) {
			printf "# %s %s median ops/s:", W[j], D[i]
			for (k = 1; k <= nt; k++) {
				for (p = 1; p <= np; p++) v[p] = r[W[j], D[i], T[k], p]
				printf " %d@%s", median(v, np), T[k]
			}
			print ""
		}
}' "$csv" > "$dat"
grep -v "^#" "$dat" | column -t; grep "^#" "$dat" || true

ncols=$(grep -v "^#" "$dat" | head -1 | wc -w) # case, then a column per design and count
gnuplot <<GP
$GP_STYLE
set terminal $TERM_PNG size 900,480
set output "$OUT/threads.png"
set title "Real threads: total ops/s at ${THREADS##* } threads over 1 thread (medians of $PROCS processes; $OPS ops per thread; spm: $SET)"
$GP_HISTOGRAM
set ylabel "ops/s at T threads / ops/s at 1 thread"
set yrange [0:*]
set grid ytics
set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2
set arrow from graph 0, first 1.6 to graph 1, first 1.6 nohead dt 3
set key autotitle columnheader
plot for [i=2:$ncols] "$dat" using i:xtic(1)
GP
echo "wrote $OUT/threads.png" >&2
