#!/usr/bin/env bash
# sm15.sh -- SuperMem Figure 15: media write requests normalized to plain (Unsec) at 256 B,
# 1 KB and 4 KB transactions, one core, supermem profile (the run of sm13.sh); then the
# reduction with core work between transactions (sm15-work.dat).
. "$(dirname "$0")/sm_common.sh"
OPS=${OPS:-5000}
csv=$(SM_RERUN=${SM_RERUN:-0} sm_sizes_csv) dat=$OUT/sm15.dat

awk -v designs="$SM_DESIGNS" -v workloads="$WORKLOADS" "$AWK_COLS"'
{ wr[$col["design"], $col["workload"], $col["tx_size"]] = $col["writes"] }
END {
	nd = split(designs, D, " "); nw = split(workloads, W, " "); split("256 1024 4096", S, " ")
	printf "case"; for (i = 2; i <= nd; i++) printf " %s", D[i]; print ""
	for (s = 1; s <= 3; s++) {
		lo[s] = 1; hi[s] = 0; wlo[s] = 9; whi[s] = 0
		for (j = 1; j <= nw; j++) {
			printf "%s-%s", W[j], S[s]
			for (i = 2; i <= nd; i++) printf " %.4f", wr[D[i], W[j], S[s]] / wr["plain", W[j], S[s]]
			print ""
			r = 1 - wr["supermem", W[j], S[s]] / wr["wt", W[j], S[s]]
			if (r < lo[s]) lo[s] = r; if (r > hi[s]) hi[s] = r
			x = wr["wt", W[j], S[s]] / wr["plain", W[j], S[s]]
			if (x < wlo[s]) wlo[s] = x; if (x > whi[s]) whi[s] = x
		}
		print ""
	}
	split("20-27 35-42 45-48", P, " ")
	for (s = 1; s <= 3; s++)
		printf "# %s B: wt writes %.2f-%.2fx plain (paper 2.0x); supermem removes %.0f-%.0f%% of wt writes (paper %s%%)\n",
			S[s], wlo[s], whi[s], 100 * lo[s], 100 * hi[s], P[s]
}' "$csv" > "$dat"
grep -v "^#" "$dat" | column -t; grep "^#" "$dat" || true

gnuplot <<GP
$SM_GP_STYLE
set terminal $TERM_PNG size 1300,480
set output "$OUT/sm15.png"
set title "SuperMem Figure 15: media write requests normalized to plain (Unsec) ($OPS ops)"
$GP_HISTOGRAM
set ylabel "media writes / plain"
set yrange [0:*]
set grid ytics
set xtics rotate by -45
set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2
plot for [i=2:6] "$dat" using i:xtic(1) lt i title columnheader(i)
GP
echo "wrote $OUT/sm15.png" >&2

# How much of the coalescing is across transactions: the same reduction with core work
# between transactions (--work-ns), which lets the queue drain before the next one
# (sm15-work.dat: geometric mean [min-max] over the workloads; doc/results.md).
wcsv=$OUT/sm15-work.csv wdat=$OUT/sm15-work.dat
cp "$csv" "$wcsv" # work 0: the run above
for w in 4000 8000 16000; do
	bench --profile supermem --designs wt,supermem --tx-size 256,1024,4096 --ops "$OPS" \
		--work-ns $w --csv "$wcsv.$w" >/dev/null
	tail -n +2 "$wcsv.$w" >> "$wcsv"
	rm -f "$wcsv.$w"
done
awk -v workloads="$WORKLOADS" "$AWK_COLS"'
{ wr[$col["design"], $col["workload"], $col["tx_size"], $col["work_ns"]] = $col["writes"] }
END {
	nw = split(workloads, W, " "); split("256 1024 4096", S, " "); split("0 4000 8000 16000", K, " ")
	print "# supermem removes this share of wt writes: geometric mean [min-max] of the workloads"
	print "work_ns 256B 1KB 4KB (paper 20-27 35-42 45-48)"
	for (k = 1; k <= 4; k++) {
		printf "%s", K[k]
		for (s = 1; s <= 3; s++) {
			p = 1; lo = 1; hi = 0
			for (j = 1; j <= nw; j++) {
				r = wr["supermem", W[j], S[s], K[k]] / wr["wt", W[j], S[s], K[k]]
				p *= r; if (1 - r < lo) lo = 1 - r; if (1 - r > hi) hi = 1 - r
			}
			printf " %.1f%%[%.1f-%.1f]", 100 * (1 - p ^ (1 / nw)), 100 * lo, 100 * hi
		}
		print ""
	}
}' "$wcsv" > "$wdat"
grep -v "^#" "$wdat" | column -t
