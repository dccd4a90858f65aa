#!/usr/bin/env bash
# speed.sh -- wall-clock speed against libpmemobj (the targets of doc/results.md): operations per second
# of plain, fca and sca over libpmemobj's (the pmdk design) in the same process, once with
# the timing model (speed.csv) and once without it (timing=off, speed-timing-off.csv); and of
# sca and supermem with profile=heap (spm as an encrypted heap: no model, a channel per
# online CPU, an allocation arena per lane; speed-heap.csv).
# PROCS processes (default 5) run every design in turn; the medians are over processes.
# Separate processes because repetitions inside one process are not independent: this VM
# has slow spells of several seconds, and one can cover all of a process's repetitions
# (doc/tried.md, "Measuring on this VM").  Wall-clock, so it moves between runs; not part of all.sh.
# Runs spm-bench-native, the uninstrumented build (the write-only model: write-backs and
# fences; no core model), so that the instrumentation's own cost never enters a comparison
# with libpmemobj; and --footprint 0, since libpmemobj's structures start empty (its array
# has 1024 elements) whatever --footprint says.
. "$(dirname "$0")/common.sh"
BENCH_NATIVE=$(find_bench_native)
OPS=${OPS:-200000}
PROCS=${PROCS:-5}
dat=$OUT/speed.dat

# one CSV per configuration, a block of rows per process (one header)
for csv in speed speed-timing-off speed-heap; do rm -f "$OUT/$csv.csv"; done
for p in $(seq "$PROCS"); do
	for cfg in speed speed-timing-off speed-heap; do
		set=(); designs=plain,fca,sca,pmdk
		[ "$cfg" = speed-timing-off ] && set=(--set timing=off)
		[ "$cfg" = speed-heap ] && set=(--set profile=heap) && designs=sca,supermem,pmdk
		bench_native --designs "$designs" --ops "$OPS" --reps 1 --footprint 0 \
			"${set[@]}" --csv "$OUT/$cfg.one.csv" >/dev/null
		if [ -f "$OUT/$cfg.csv" ]; then tail -n +2 "$OUT/$cfg.one.csv" >> "$OUT/$cfg.csv"
		else cp "$OUT/$cfg.one.csv" "$OUT/$cfg.csv"; fi
		rm -f "$OUT/$cfg.one.csv"
	done
done

# rate / libpmemobj's rate in the same process, median over the processes, per workload:
# the three designs with the model, then without, then sca and supermem with profile=heap
awk -v workloads="$WORKLOADS" "$AWK_COLS"'
FNR == 1 { next } # the later files'"'"' headers
{
	k = FILENAME SUBSEP $col["workload"] SUBSEP $col["design"]
	r[k, ++seen[k]] = $col["ops"] * 1e9 / $col["wall_ns"] # the seen[k]-th process
}
function median(f, w, d,    n, i, j, v, t) {
	n = seen[f, w, d]
	for (i = 1; i <= n; i++) v[i] = r[f, w, d, i] / r[f, w, "pmdk", i]
	for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j] < v[j - 1]; j--) {
		t = v[j]; v[j] = v[j - 1]; v[j - 1] = t
	}
	return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
}
END {
	nw = split(workloads, W, " "); split("plain fca sca", D, " ")
	print "workload plain fca sca plain-off fca-off sca-off sca-heap supermem-heap"
	for (j = 1; j <= nw; j++) {
		printf "%s", W[j]
		for (f = 1; f <= 2; f++)
			for (i = 1; i <= 3; i++)
				printf " %.3f", median(ARGV[f], W[j], D[i])
		printf " %.3f %.3f", median(ARGV[3], W[j], "sca"), median(ARGV[3], W[j], "supermem")
		print ""
	}
	print "# medians over " seen[ARGV[1], W[1], "pmdk"] " processes of the rate over libpmemobj'"'"'s in the same process"
	print "# targets (queue, hashmap, btree): plain >= 1.5, fca and sca >= 1.0 the rate of libpmemobj;"
	print "# sca and supermem with profile=heap >= 1.1"
}' "$OUT/speed.csv" "$OUT/speed-timing-off.csv" "$OUT/speed-heap.csv" > "$dat"
grep -v "^#" "$dat" | column -t; grep "^#" "$dat" || true

gnuplot <<GP
$GP_STYLE
set terminal $TERM_PNG size 1000,480
set output "$OUT/speed.png"
set title "Wall-clock rate over libpmemobj's in the same process (medians of $PROCS processes; $OPS ops, 64 B)"
$GP_HISTOGRAM
set ylabel "ops/s / libpmemobj's ops/s"
set yrange [0:*]
set grid ytics
set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2
set arrow from graph 0, first 1.5 to graph 1, first 1.5 nohead dt 3
set arrow from graph 0, first 1.1 to graph 1, first 1.1 nohead dt 4
set key autotitle columnheader # the first row names the columns
set linetype 11 lc rgb "#8c8c8c" lw 2
set linetype 12 lc rgb "#f4a460" lw 2
set linetype 13 lc rgb "#7fa7d9" lw 2
plot "$dat" using 2:xtic(1) lt 1 title "plain", \
     "" using 3 lt 5 title "fca", \
     "" using 4 lt 6 title "sca", \
     "" using 5 lt 11 title "plain, timing=off", \
     "" using 6 lt 12 title "fca, timing=off", \
     "" using 7 lt 13 title "sca, timing=off", \
     "" using 8 lt 7 title "sca, profile=heap", \
     "" using 9 lt 8 title "supermem, profile=heap"
GP
echo "wrote $OUT/speed.png" >&2
