#!/usr/bin/env bash
# fig14.sh -- SCA Figure 14: write traffic to the NVMM (media writes) normalized to plain, one core.
. "$(dirname "$0")/common.sh"
OPS=${OPS:-100000}
DESIGNS="ideal colocated colocated-cc fca sca"
csv=$OUT/fig14.csv dat=$OUT/fig14.dat

bench --designs plain,${DESIGNS// /,} --ops "$OPS" --csv "$csv" >/dev/null

# media write requests normalized to plain (a co-located write is one 72-byte request),
# then the same in bytes; workloads, then geometric means
awk -v designs="$DESIGNS" -v workloads="$WORKLOADS" "$AWK_COLS"'
{ k = $col["design"] SUBSEP $col["workload"]
  wr[k] = $col["writes"]; by[k] = $col["bytes_written"]; ct[k] = $col["writes_counter"] }
END {
	nd = split(designs, D, " "); nw = split(workloads, W, " ")
	printf "workload"; for (i = 1; i <= nd; i++) printf " %s", D[i]
	for (i = 1; i <= nd; i++) printf " %s-bytes", D[i]
	print ""
	for (j = 1; j <= nw + 1; j++) {
		printf "%s", j <= nw ? W[j] : "gmean"
		for (m = 0; m < 2; m++)
			for (i = 1; i <= nd; i++) {
				if (j <= nw) {
					v = m ? by[D[i], W[j]] / by["plain", W[j]] : wr[D[i], W[j]] / wr["plain", W[j]]
				} else {
					s = 0
					for (w = 1; w <= nw; w++)
						s += log(m ? by[D[i], W[w]] / by["plain", W[w]] : wr[D[i], W[w]] / wr["plain", W[w]])
					v = exp(s / nw)
				}
				printf " %.4f", v
			}
		print ""
	}
	s = 0; t = 0
	for (w = 1; w <= nw; w++) {
		s += log(wr["sca", W[w]] / wr["fca", W[w]])
		t += log(wr["sca", W[w]] / wr["colocated", W[w]])
	}
	printf "# sca vs fca writes %+.1f %% (paper -8.1 %%), sca vs colocated %+.1f %% (paper -6.6 %%)\n",
		100 * (exp(s / nw) - 1), 100 * (exp(t / nw) - 1)
}' "$csv" > "$dat"
grep -v "^#" "$dat" | column -t; grep "^#" "$dat" || true

gnuplot <<GP
$GP_STYLE
set terminal $TERM_PNG size 1000,480
set output "$OUT/fig14.png"
set title "Figure 14: write traffic (media write requests) normalized to plain ($OPS ops, 64 B)"
$GP_HISTOGRAM
set ylabel "media writes / plain"
set yrange [0:*]
set offsets 0, 0, graph 0.08, 0
set grid ytics
set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2
plot for [i=2:6] "$dat" using i:xtic(1) lt i title columnheader(i)
GP
echo "wrote $csv $dat $OUT/fig14.png"
