#!/usr/bin/env bash
# fig13.sh -- SCA Figure 13: throughput (ops / modeled time) at 1, 2, 4, 8 cores, normalized to plain at 1 core.
. "$(dirname "$0")/common.sh"
OPS=${OPS:-20000}
DESIGNS="plain ideal colocated colocated-cc fca sca"
csv=$OUT/fig13.csv dat=$OUT/fig13.dat

bench --designs "${DESIGNS// /,}" --cores 1,2,4,8 --ops "$OPS" --csv "$csv" >/dev/null

# one block per workload and one for the geometric mean: cores, then each design's
# throughput normalized to plain's at one core; then the SCA-over-FCA gain per core count
awk -v designs="$DESIGNS" -v workloads="$WORKLOADS" "$AWK_COLS"'
{ k = $col["design"] SUBSEP $col["workload"] SUBSEP $col["cores"]
  thr[k] = $col["ops"] / $col["modeled_ns"] }
END {
	nd = split(designs, D, " "); nw = split(workloads, W, " ")
	for (j = 1; j <= nw + 1; j++) {
		printf "# %s\ncores", j <= nw ? W[j] : "gmean"
		for (i = 1; i <= nd; i++) printf " %s", D[i]
		print ""
		for (c = 1; c <= 8; c *= 2) {
			printf "%d", c
			for (i = 1; i <= nd; i++) {
				if (j <= nw) {
					v = thr[D[i], W[j], c] / thr["plain", W[j], 1]
				} else {
					s = 0
					for (w = 1; w <= nw; w++)
						s += log(thr[D[i], W[w], c] / thr["plain", W[w], 1])
					v = exp(s / nw)
				}
				printf " %.4f", v
			}
			print ""
		}
		print "\n"
	}
	printf "# SCA throughput gain over FCA (geometric mean over workloads); paper: 6.3 11.5 21.8 40.3 %%\n"
	for (c = 1; c <= 8; c *= 2) {
		s = 0; t = 0
		for (w = 1; w <= nw; w++) {
			s += log(thr["sca", W[w], c] / thr["fca", W[w], c])
			t += log(thr["ideal", W[w], c] / thr["sca", W[w], c])
		}
		printf "# cores %d: sca over fca %+.1f %%, ideal over sca %+.1f %%\n", c,
			100 * (exp(s / nw) - 1), 100 * (exp(t / nw) - 1)
	}
}' "$csv" > "$dat"
cat "$dat"

gnuplot <<GP
$GP_STYLE
set terminal $TERM_PNG size 1200,720
set output "$OUT/fig13.png"
set multiplot layout 2,3 title "Figure 13: throughput normalized to plain at 1 core (modeled, $OPS ops per core, 64 B)"
set logscale x 2
set xtics (1, 2, 4, 8)
set xrange [0.8:10]
set yrange [0:*]
set grid ytics
set key top center horizontal maxrows 2 font ",8"
set offsets 0, 0, graph 0.3, 0
set xlabel "cores"
names = "$WORKLOADS gmean"
do for [b=0:5] {
	set title word(names, b + 1)
	plot for [i=2:7] "$dat" index b using 1:i with linespoints lt (i - 1) title columnheader(i)
}
unset multiplot
GP
echo "wrote $csv $dat $OUT/fig13.png"
