#!/usr/bin/env bash
# sm14.sh -- SuperMem Figure 14: transaction latency at 1/2/4/8 modeled cores, 1 KB
# transactions, normalized to plain at the same core count, supermem profile.  As in the
# paper (5.1.2), each core is a program with its own bank: core_banks=1 puts core i's data
# and counters in bank (b + i) mod 8, and the shared 32-entry queue frees an entry when its
# write completes (wpq_order=any), not in FIFO order, which would make one program's write
# wait for another program's in another bank.  SM14_SET="" runs the profile as it is (all
# cores' data in one bank).
. "$(dirname "$0")/sm_common.sh"
OPS=${OPS:-2000}
SM14_SET=${SM14_SET-"core_banks=1 wpq_order=any"}
csv=$OUT/sm14.csv dat=$OUT/sm14.dat
set_args=()
for kv in $SM14_SET; do set_args+=(--set "$kv"); done
bench --profile supermem --designs "${SM_DESIGNS// /,}" --cores 1,2,4,8 --tx-size 1024 \
	--ops "$OPS" "${set_args[@]}" --csv "$csv" >/dev/null

awk -v designs="$SM_DESIGNS" -v workloads="$WORKLOADS" "$AWK_COLS"'
{ t[$col["design"], $col["workload"], $col["cores"]] = $col["modeled_ns"] }
END {
	nd = split(designs, D, " "); nw = split(workloads, W, " ")
	printf "case"; for (i = 2; i <= nd; i++) printf " %s", D[i]; print ""
	for (c = 1; c <= 8; c *= 2) {
		for (j = 1; j <= nw + 1; j++) {
			printf "%s-%dc", j <= nw ? W[j] : "gmean", c
			for (i = 2; i <= nd; i++) {
				if (j <= nw) v = t[D[i], W[j], c] / t["plain", W[j], c]
				else { g = 0; for (w = 1; w <= nw; w++) g += log(t[D[i], W[w], c] / t["plain", W[w], c]); v = exp(g / nw) }
				printf " %.4f", v; n[i, c] = v
			}
			print ""
		}
		print ""
	}
	for (c = 1; c <= 8; c *= 2)
		printf "# %d cores (gmean): wt %.2fx plain (paper 1.8-2.4x), wt-cwc %.2fx, wt-xbank %.2fx, supermem %.2fx, ideal %.2fx (paper: supermem about ideal; cwc beats xbank at 4-8 cores)\n",
			c, n[3, c], n[4, c], n[5, c], n[6, c], n[2, c]
}' "$csv" > "$dat"
grep -v "^#" "$dat" | column -t; grep "^#" "$dat" || true

gnuplot <<GP
$SM_GP_STYLE
set terminal $TERM_PNG size 1400,480
set output "$OUT/sm14.png"
set title "SuperMem Figure 14: transaction latency at 1-8 cores (a bank each), 1 KB, normalized to plain ($OPS ops per core)"
$GP_HISTOGRAM
set ylabel "modeled time / plain (same cores)"
set yrange [0:*]
set grid ytics
set xtics rotate by -45
set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2
plot for [i=2:6] "$dat" using i:xtic(1) lt i title columnheader(i)
GP
echo "wrote $OUT/sm14.png" >&2
