#!/usr/bin/env bash
# sm13.sh -- SuperMem Figure 13: transaction latency (modeled time per operation) at 256 B,
# 1 KB and 4 KB transactions, normalized to plain (Unsec), one core, supermem profile.
. "$(dirname "$0")/sm_common.sh"
OPS=${OPS:-5000}
csv=$(sm_sizes_csv) dat=$OUT/sm13.dat

awk -v designs="$SM_DESIGNS" -v workloads="$WORKLOADS" "$AWK_COLS"'
{ t[$col["design"], $col["workload"], $col["tx_size"]] = $col["modeled_ns"] / $col["ops"] }
END {
	nd = split(designs, D, " "); nw = split(workloads, W, " "); split("256 1024 4096", S, " ")
	printf "case"; for (i = 2; i <= nd; i++) printf " %s", D[i]; print ""
	for (s = 1; s <= 3; s++) {
		for (j = 1; j <= nw + 1; j++) {
			printf "%s-%s", j <= nw ? W[j] : "gmean", S[s]
			for (i = 2; i <= nd; i++) {
				if (j <= nw) v = t[D[i], W[j], S[s]] / t["plain", W[j], S[s]]
				else { g = 0; for (w = 1; w <= nw; w++) g += log(t[D[i], W[w], S[s]] / t["plain", W[w], S[s]]); v = exp(g / nw) }
				printf " %.4f", v; n[i, s] = v
			}
			print ""
		}
		print ""
	}
	for (s = 1; s <= 3; s++)
		printf "# %s B (gmean): wt %.2fx plain (paper 1.7-2x); wt-cwc %+.0f%% vs wt (paper -17..-24/-30..-35/-40..-48%%); wt-xbank %+.0f%% vs wt (paper up to -45%%); supermem %.2fx faster than wt (paper ~2x), %+.1f%% vs ideal (paper: about equal)\n",
			S[s], n[3, s], 100 * (n[4, s] / n[3, s] - 1), 100 * (n[5, s] / n[3, s] - 1), n[3, s] / n[6, s], 100 * (n[6, s] / n[2, s] - 1)
}' "$csv" > "$dat"
grep -v "^#" "$dat" | column -t; grep "^#" "$dat" || true

gnuplot <<GP
$SM_GP_STYLE
set terminal $TERM_PNG size 1300,480
set output "$OUT/sm13.png"
set title "SuperMem Figure 13: transaction latency normalized to plain (Unsec), 256 B / 1 KB / 4 KB ($OPS ops)"
$GP_HISTOGRAM
set ylabel "modeled time per op / plain"
set yrange [0:*]
set grid ytics
set xtics rotate by -45
set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2
plot for [i=2:6] "$dat" using i:xtic(1) lt i title columnheader(i)
GP
echo "wrote $OUT/sm13.png" >&2
