#!/usr/bin/env bash
# sm17.sh -- SuperMem Figure 17: counter cache of 1 KB-4 MB, 1 KB transactions, supermem:
# (a) counter cache hit rate, (b) modeled time normalized to the 1 KB cache.
. "$(dirname "$0")/sm_common.sh"
OPS=${OPS:-3000}
# each structure first filled to FOOTPRINT bytes (the paper: 1 GB), so that
# counters of random pages miss a small counter cache
FOOTPRINT=${FOOTPRINT:-67108864}
csv=$OUT/sm17.csv dat=$OUT/sm17.dat
SIZES="1 4 16 64 256 1024 4096"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for k in $SIZES; do
	bench --profile supermem --designs supermem --tx-size 1024 --ops "$OPS" \
		--footprint "$FOOTPRINT" --set "ctr_cache_kib=$k" --csv "$tmp/one.csv" >/dev/null
	sweep_add "$tmp/one.csv" "$tmp/all.csv" cache_kib "$k"
done
mv "$tmp/all.csv" "$csv"

awk -v workloads="$WORKLOADS" -v sizes="$SIZES" "$AWK_COLS"'
{ k = $col["workload"] SUBSEP $col["cache_kib"]
  h[k] = $col["ctr_hits"] / ($col["ctr_hits"] + $col["ctr_misses"]); t[k] = $col["modeled_ns"] }
END {
	nw = split(workloads, W, " "); ns = split(sizes, S, " ")
	printf "cache_kib"; for (j = 1; j <= nw; j++) printf " %s-hit", W[j]
	for (j = 1; j <= nw; j++) printf " %s-time", W[j]; print ""
	for (s = 1; s <= ns; s++) {
		printf "%d", S[s]
		for (j = 1; j <= nw; j++) printf " %.4f", h[W[j], S[s]]
		for (j = 1; j <= nw; j++) printf " %.4f", t[W[j], S[s]] / t[W[j], S[1]]
		print ""
	}
	printf "# 1 KB -> 4 MB: hit rate"
	for (j = 1; j <= nw; j++) printf " %s %+.0f pts", W[j], 100 * (h[W[j], S[ns]] - h[W[j], S[1]])
	printf " (paper: array +12, hash +14, rbtree +3, queue/btree ~0); time"
	for (j = 1; j <= nw; j++) printf " %s %+.1f%%", W[j], 100 * (t[W[j], S[ns]] / t[W[j], S[1]] - 1)
	printf " (paper: array -4, hash -5, rbtree -1, queue/btree ~0)\n"
}' "$csv" > "$dat"
grep -v "^#" "$dat" | column -t; grep "^#" "$dat" || true

gnuplot <<GP
$SM_GP_STYLE
set terminal $TERM_PNG size 1200,450
set output "$OUT/sm17.png"
set multiplot layout 1,2 title "SuperMem Figure 17: counter cache size, supermem, 1 KB transactions ($OPS ops, footprint $FOOTPRINT B)"
set logscale x 2
set xlabel "counter cache (KB)"
set grid
set key below horizontal
set ylabel "counter cache hit rate"
set yrange [0:1]
plot for [i=2:6] "$dat" using 1:i with linespoints lt i title columnheader(i)
set ylabel "modeled time / 1 KB cache"
set yrange [*:*]
plot for [i=7:11] "$dat" using 1:i with linespoints lt (i-5) title columnheader(i)
unset multiplot
GP
echo "wrote $OUT/sm17.png" >&2
