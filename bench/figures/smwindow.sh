#!/usr/bin/env bash
# smwindow.sh -- SuperMem Figure 15's write reduction as the write queue's scheduling window
# grows from in-order issue to bank-free issue (wpq_window, supermem profile): at each window
# the writes supermem removes versus wt at 256 B, 1 KB and 4 KB (means over the five
# workloads), supermem's speedup over wt and its time over ideal (geometric means).
# wpq_window=N: a core's write reaches its bank no earlier than the write N before it in the
# core's queue order did; 1 is the profile's in-order queue, 32 (the queue's length) is
# bank-free issue.  The paper does not say how its queue issues; this shows which of its
# three ranges each choice meets (doc/results.md, SuperMem targets).
. "$(dirname "$0")/sm_common.sh"
OPS=${OPS:-3000}
WINDOWS=${WINDOWS:-"1 2 4 8 16 20 24 26 28 30 32"}
csv=$OUT/smwindow.csv dat=$OUT/smwindow.dat
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for w in $WINDOWS; do
	bench --profile supermem --designs ideal,wt,supermem --tx-size 256,1024,4096 \
		--ops "$OPS" --set "wpq_window=$w" --csv "$tmp/one.csv" >/dev/null
	sweep_add "$tmp/one.csv" "$tmp/all.csv" window "$w"
done
mv "$tmp/all.csv" "$csv"

awk -v workloads="$WORKLOADS" -v windows="$WINDOWS" "$AWK_COLS"'
{ k = $col["design"] SUBSEP $col["workload"] SUBSEP $col["tx_size"] SUBSEP $col["window"]
  wr[k] = $col["writes"]; t[k] = $col["modeled_ns"] }
END {
	nw = split(workloads, W, " "); nx = split(windows, X, " "); split("256 1024 4096", S, " ")
	print "window red256 red1024 red4096 speedup256 speedup1024 speedup4096 vsideal256 vsideal1024 vsideal4096"
	for (x = 1; x <= nx; x++) {
		printf "%d", X[x]
		for (s = 1; s <= 3; s++) {
			r = 0
			for (j = 1; j <= nw; j++)
				r += 1 - wr["supermem", W[j], S[s], X[x]] / wr["wt", W[j], S[s], X[x]]
			printf " %.2f", 100 * r / nw
		}
		for (s = 1; s <= 3; s++) {
			g = 0
			for (j = 1; j <= nw; j++)
				g += log(t["wt", W[j], S[s], X[x]] / t["supermem", W[j], S[s], X[x]])
			printf " %.3f", exp(g / nw)
		}
		for (s = 1; s <= 3; s++) {
			g = 0
			for (j = 1; j <= nw; j++)
				g += log(t["supermem", W[j], S[s], X[x]] / t["ideal", W[j], S[s], X[x]])
			printf " %.3f", exp(g / nw)
		}
		print ""
	}
	print "# paper: supermem removes 20-27 / 35-42 / 45-48 % of wt writes at 256 B / 1 KB / 4 KB, ~2x faster than wt, about WB (ideal)"
}' "$csv" > "$dat"
grep -v "^#" "$dat" | column -t; grep "^#" "$dat" || true

gnuplot <<GP
$SM_GP_STYLE
set terminal $TERM_PNG size 1200,450
set output "$OUT/smwindow.png"
set multiplot layout 1,2 title "SuperMem write reduction vs the write queue's scheduling window ($OPS ops, supermem profile)"
set xlabel "scheduling window (writes; 1 = in order, the queue length (32) = bank-free)"
set grid
set key below horizontal
set ylabel "writes supermem removes vs wt (%, mean of 5 workloads)"
set yrange [10:50]
set style fill transparent solid 0.15 noborder
plot 20 with filledcurves y1=27 lc rgb "#1b9e77" title "paper 256 B", \
     35 with filledcurves y1=42 lc rgb "#d95f02" title "paper 1 KB", \
     45 with filledcurves y1=48 lc rgb "#0b4fa8" title "paper 4 KB", \
     "$dat" using 1:2 with linespoints lc rgb "#1b9e77" lw 2 pt 7 title "256 B", \
     "$dat" using 1:3 with linespoints lc rgb "#d95f02" lw 2 pt 5 title "1 KB", \
     "$dat" using 1:4 with linespoints lc rgb "#0b4fa8" lw 2 pt 9 title "4 KB"
set ylabel "modeled time ratio (geometric mean)"
set yrange [0.8:2.2]
plot "$dat" using 1:5 with linespoints lc rgb "#1b9e77" lw 2 pt 7 title "wt / supermem 256 B", \
     "$dat" using 1:6 with linespoints lc rgb "#d95f02" lw 2 pt 5 title "wt / supermem 1 KB", \
     "$dat" using 1:7 with linespoints lc rgb "#0b4fa8" lw 2 pt 9 title "wt / supermem 4 KB", \
     "$dat" using 1:8 with lines lc rgb "#1b9e77" dt 2 lw 2 title "supermem / ideal 256 B", \
     "$dat" using 1:9 with lines lc rgb "#d95f02" dt 2 lw 2 title "1 KB", \
     "$dat" using 1:10 with lines lc rgb "#0b4fa8" dt 2 lw 2 title "4 KB"
unset multiplot
GP
echo "wrote $OUT/smwindow.png" >&2
