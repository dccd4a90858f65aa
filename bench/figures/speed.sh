#!/usr/bin/env bash
# speed.sh -- wall-clock speed against libpmemobj (issue #5's targets): operations per second
# of plain, fca and sca over libpmemobj's (the pmdk design) in the same run, medians of REPS
# repetitions, once with the timing model (speed.csv) and once without it (timing=off,
# speed-timing-off.csv).  Wall-clock, so it moves between runs; not part of all.sh.
. "$(dirname "$0")/common.sh"
OPS=${OPS:-200000}
REPS=${REPS:-5}
dat=$OUT/speed.dat

bench --designs plain,fca,sca,pmdk --ops "$OPS" --reps "$REPS" --csv "$OUT/speed.csv" >/dev/null
bench --designs plain,fca,sca,pmdk --ops "$OPS" --reps "$REPS" --set timing=off \
	--csv "$OUT/speed-timing-off.csv" >/dev/null

# rate / libpmemobj's rate, per workload: the three designs with the model, then without
awk -v workloads="$WORKLOADS" "$AWK_COLS"'
FNR == 1 { next } # the second file'"'"'s header
{ r[FILENAME, $col["workload"], $col["design"]] = $col["ops"] * 1e9 / $col["wall_ns"] }
END {
	nw = split(workloads, W, " "); split("plain fca sca", D, " ")
	print "workload plain fca sca plain-off fca-off sca-off"
	for (j = 1; j <= nw; j++) {
		printf "%s", W[j]
		for (f = 1; f <= 2; f++)
			for (i = 1; i <= 3; i++)
				printf " %.3f", r[ARGV[f], W[j], D[i]] / r[ARGV[f], W[j], "pmdk"]
		print ""
	}
	print "# targets (queue, hashmap, btree): plain >= 1.5, fca and sca >= 1.0 the rate of libpmemobj"
}' "$OUT/speed.csv" "$OUT/speed-timing-off.csv" > "$dat"
grep -v "^#" "$dat" | column -t; grep "^#" "$dat" || true

gnuplot <<GP
$GP_STYLE
set terminal $TERM_PNG size 1000,480
set output "$OUT/speed.png"
set title "Wall-clock rate over libpmemobj's, same run (medians of $REPS; $OPS ops, 64 B)"
$GP_HISTOGRAM
set ylabel "ops/s / libpmemobj's ops/s"
set yrange [0:*]
set grid ytics
set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2
set arrow from graph 0, first 1.5 to graph 1, first 1.5 nohead dt 3
set key autotitle columnheader # the first row names the columns
set linetype 11 lc rgb "#8c8c8c" lw 2
set linetype 12 lc rgb "#f4a460" lw 2
set linetype 13 lc rgb "#7fa7d9" lw 2
plot "$dat" using 2:xtic(1) lt 1 title "plain", \
     "" using 3 lt 5 title "fca", \
     "" using 4 lt 6 title "sca", \
     "" using 5 lt 11 title "plain, timing=off", \
     "" using 6 lt 12 title "fca, timing=off", \
     "" using 7 lt 13 title "sca, timing=off"
GP
echo "wrote $OUT/speed.png" >&2
