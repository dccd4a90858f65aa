#!/usr/bin/env bash
# fig17.sh -- SCA Figure 17: SCA vs co-located as NVM (a) read and (b) write latency go from 10x slower to 4x faster.
. "$(dirname "$0")/common.sh"
OPS=${OPS:-20000}
FACTORS="10 4 2 1 0.5 0.25"   # latency multipliers of the PCM timings of SCA Table 2
csv=$OUT/fig17.csv dat=$OUT/fig17.dat tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT

mul() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%g", a * b }'; }

: > "$csv"
for sweep in read write; do
	for f in $FACTORS; do
		if [ $sweep = read ]; then
			set -- --set t_rcd="$(mul 48 "$f")" --set t_cl="$(mul 15 "$f")"
		else
			set -- --set t_wr="$(mul 300 "$f")" --set t_cwd="$(mul 13 "$f")"
		fi
		bench --designs colocated,sca --ops "$OPS" "$@" --csv "$tmp" >/dev/null
		# the sweep and factor as two more columns
		awk -v s=$sweep -v f="$f" 'NR == 1 { print $0 ",sweep,factor"; next }
		                          { print $0 "," s "," f }' "$tmp" |
			if [ -s "$csv" ]; then tail -n +2 >> "$csv"; else cat > "$csv"; fi
	done
done

# per sweep and factor: SCA's speedup over co-located, time(colocated) / time(sca), per
# workload and the geometric mean; factor = latency / PCM latency.  Paper: 1.293-1.756
# (read), 1.389-1.74 (write)
awk -v factors="$FACTORS" -v workloads="$WORKLOADS" "$AWK_COLS"'
{ t[$col["sweep"], $col["factor"], $col["design"], $col["workload"]] = $col["modeled_ns"] }
END {
	nf = split(factors, F, " "); nw = split(workloads, W, " ")
	for (s = 1; s <= 2; s++) {
		sw = s == 1 ? "read" : "write"
		printf "# %s latency\nfactor", sw
		for (j = 1; j <= nw; j++) printf " %s", W[j]
		print " gmean"
		for (i = 1; i <= nf; i++) {
			printf "%s", F[i]; g = 0
			for (j = 1; j <= nw; j++) {
				v = t[sw, F[i], "colocated", W[j]] / t[sw, F[i], "sca", W[j]]
				g += log(v); printf " %.4f", v
			}
			printf " %.4f\n", exp(g / nw)
		}
		print "\n"
	}
}' "$csv" > "$dat"
cat "$dat"

gnuplot <<GP
$GP_STYLE
set terminal $TERM_PNG size 1200,480
set output "$OUT/fig17.png"
set multiplot layout 1,2 title "Figure 17: SCA's speedup over co-located vs NVM latency (modeled, $OPS ops, 64 B)"
set logscale x 2
set xtics ("10x\nslower" 10, "4x" 4, "2x" 2, "PCM" 1, "2x" 0.5, "4x\nfaster" 0.25)
set xrange [12:0.2]
set grid ytics
set key top left font ",8"
set offsets 0, 0, graph 0.25, 0
set ylabel "speedup of sca: time(colocated) / time(sca)"
set yrange [0:*]
set title "(a) read latency (tRCD, tCL)"
set xlabel "read latency"
plot for [i=2:7] "$dat" index 0 using 1:i with linespoints lt (i + 1) title columnheader(i), \
     1 with lines dt 2 lc rgb "black" notitle
set title "(b) write latency (tWR, tCWD)"
set xlabel "write latency"
plot for [i=2:7] "$dat" index 1 using 1:i with linespoints lt (i + 1) title columnheader(i), \
     1 with lines dt 2 lc rgb "black" notitle
unset multiplot
GP
echo "wrote $csv $dat $OUT/fig17.png"
