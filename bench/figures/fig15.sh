#!/usr/bin/env bash
# fig15.sh -- SCA Figure 15: SCA with a 128 KB - 8 MB counter cache: (a) speedup over 128 KB, (b) miss rate.
. "$(dirname "$0")/common.sh"
OPS=${OPS:-5000}
FOOTPRINT=${FOOTPRINT:-64m}   # every workload: filled to about this before the measured phase
SIZES="128 256 512 1024 2048 4096 8192"
csv=$OUT/fig15.csv dat=$OUT/fig15.dat tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT

: > "$csv"
for kib in $SIZES; do
	bench --designs sca --workloads "${WORKLOADS// /,}" --ops "$OPS" \
	      --footprint "$FOOTPRINT" --set ctr_cache_kib="$kib" --csv "$tmp" >/dev/null
	if [ -s "$csv" ]; then tail -n +2 "$tmp" >> "$csv"; else cat "$tmp" > "$csv"; fi
done

# per cache size: speedup over 128 KB (modeled time at 128 KB / at this size) and the
# counter cache miss rate, per workload, then the geometric mean (speedup) and mean (miss rate)
awk -v sizes="$SIZES" -v workloads="$WORKLOADS" "$AWK_COLS"'
{ o = $col["options"]; sub(/.*ctr_cache_kib=/, "", o); kib = o + 0
  k = $col["workload"] SUBSEP kib
  t[k] = $col["modeled_ns"]; h = $col["ctr_hits"]; m = $col["ctr_misses"]
  mr[k] = h + m ? m / (h + m) : 0 }
END {
	ns = split(sizes, S, " "); nw = split(workloads, W, " ")
	printf "kib"
	for (j = 1; j <= nw; j++) printf " %s", W[j]
	printf " gmean"
	for (j = 1; j <= nw; j++) printf " %s-miss", W[j]
	print " mean-miss"
	for (i = 1; i <= ns; i++) {
		printf "%d", S[i]; g = 0
		for (j = 1; j <= nw; j++) {
			v = t[W[j], S[1]] / t[W[j], S[i]]; g += log(v); printf " %.4f", v
		}
		printf " %.4f", exp(g / nw); a = 0
		for (j = 1; j <= nw; j++) { printf " %.4f", mr[W[j], S[i]]; a += mr[W[j], S[i]] }
		printf " %.4f\n", a / nw
	}
}' "$csv" > "$dat"
column -t "$dat"

gnuplot <<GP
$GP_STYLE
set terminal $TERM_PNG size 1200,480
set output "$OUT/fig15.png"
set multiplot layout 1,2 title "Figure 15: SCA with a 128 KB - 8 MB counter cache (every structure but the queue filled to $FOOTPRINT, $OPS ops)"
set logscale x 2
set xtics ("128K" 128, "256K" 256, "512K" 512, "1M" 1024, "2M" 2048, "4M" 4096, "8M" 8192)
set xrange [100:10000]
set grid ytics
set key top left font ",8"
set xlabel "counter cache size"
set title "(a) speedup over a 128 KB counter cache"
set ylabel "modeled time(128 KB) / time"
plot for [i=2:7] "$dat" using 1:i with linespoints lt (i + 1) title columnheader(i)
set title "(b) counter cache miss rate"
set key top right
set ylabel "misses / accesses"
set yrange [0:*]
plot for [i=8:13] "$dat" using 1:i with linespoints lt (i - 5) title columnheader(i)
unset multiplot
GP
echo "wrote $csv $dat $OUT/fig15.png"
