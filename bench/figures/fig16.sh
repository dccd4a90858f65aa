#!/usr/bin/env bash
# fig16.sh -- SCA Figure 16: SCA's modeled runtime normalized to ideal for transaction sizes 64 B - 4 KB.
. "$(dirname "$0")/common.sh"
OPS=${OPS:-10000}
SIZES="64 128 256 512 1024 2048 4096"
csv=$OUT/fig16.csv dat=$OUT/fig16.dat

sizes_list=${SIZES// /,}
bench --designs ideal,sca --tx-size "$sizes_list" --ops "$OPS" --csv "$csv" >/dev/null

# per size (in cache lines of the value): sca / ideal per workload, then the geometric mean
awk -v sizes="$SIZES" -v workloads="$WORKLOADS" "$AWK_COLS"'
{ t[$col["design"], $col["workload"], $col["tx_size"]] = $col["modeled_ns"] }
END {
	ns = split(sizes, S, " "); nw = split(workloads, W, " ")
	printf "lines"; for (j = 1; j <= nw; j++) printf " %s", W[j]; print " gmean"
	for (i = 1; i <= ns; i++) {
		printf "%d", S[i] / 64; g = 0
		for (j = 1; j <= nw; j++) {
			v = t["sca", W[j], S[i]] / t["ideal", W[j], S[i]]; g += log(v)
			printf " %.4f", v
		}
		printf " %.4f\n", exp(g / nw)
	}
}' "$csv" > "$dat"
column -t "$dat"

gnuplot <<GP
$GP_STYLE
set terminal $TERM_PNG size 900,520
set output "$OUT/fig16.png"
set title "Figure 16: SCA runtime normalized to ideal vs transaction size (modeled, $OPS ops)"
set logscale x 2
set xtics ("1\n64 B" 1, "2" 2, "4" 4, "8" 8, "16" 16, "32" 32, "64\n4 KB" 64)
set xrange [0.8:80]
set xlabel "cache lines written per transaction (value size)"
set ylabel "runtime(sca) / runtime(ideal)"
set grid ytics
set key top right
set yrange [0.9:*]
set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2
plot for [i=2:7] "$dat" using 1:i with linespoints lt (i + 1) title columnheader(i)
GP
echo "wrote $csv $dat $OUT/fig16.png"
