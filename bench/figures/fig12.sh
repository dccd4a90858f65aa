#!/usr/bin/env bash
# fig12.sh -- SCA Figure 12: modeled runtime of each design normalized to no-encryption (plain), one core.
. "$(dirname "$0")/common.sh"
OPS=${OPS:-100000}
DESIGNS="ideal colocated colocated-cc fca sca"
csv=$OUT/fig12.csv dat=$OUT/fig12.dat

bench --designs plain,${DESIGNS// /,} --ops "$OPS" --csv "$csv" >/dev/null

# rows: workloads then the geometric mean; then the paper's averages (section 6.3.1:
# sca 1.117, fca = 1.117 x 1.063, colocated-cc 1.109, colocated = 1.117 x 1.811, ideal
# ~ 1.117 / 1.047 from "within 4.7-5% of ideal")
awk -v designs="$DESIGNS" -v workloads="$WORKLOADS" "$AWK_COLS"'
{ t[$col["design"], $col["workload"]] = $col["modeled_ns"] }
END {
	nd = split(designs, D, " "); nw = split(workloads, W, " ")
	printf "workload"; for (i = 1; i <= nd; i++) printf " %s", D[i]; print ""
	for (i = 1; i <= nd; i++) lg[i] = 0
	for (j = 1; j <= nw; j++) {
		printf "%s", W[j]
		for (i = 1; i <= nd; i++) {
			r = t[D[i], W[j]] / t["plain", W[j]]; lg[i] += log(r)
			printf " %.4f", r
		}
		print ""
	}
	printf "gmean"; for (i = 1; i <= nd; i++) printf " %.4f", exp(lg[i] / nw); print ""
	print "paper-avg 1.067 2.023 1.109 1.187 1.117"
}' "$csv" > "$dat"
column -t "$dat"

gnuplot <<GP
$GP_STYLE
set terminal $TERM_PNG size 1000,480
set output "$OUT/fig12.png"
set title "Figure 12: runtime normalized to no-encryption (modeled, 1 core, $OPS ops, 64 B)"
$GP_HISTOGRAM
set ylabel "runtime / plain"
set yrange [0:*]
set grid ytics
set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2
plot for [i=2:6] "$dat" using i:xtic(1) lt i title columnheader(i)
GP
echo "wrote $csv $dat $OUT/fig12.png"
