#!/usr/bin/env bash
# ccnvm.sh -- the cc-NVM paper's (DAC 2019) Figures 5 and 6 on spm's integrity designs.
# Figure 5: (a) performance (operations a modeled second) and (b) media writes of sc,
# osiris, ccnvm-nods and ccnvm, normalized to bmt-nocc (the paper's w/o CC), on array queue
# hashmap btree rbtree and stream (the SPEC-like workload: no transactions, write-backs are
# LLC evictions).  Figure 6: ccnvm's sensitivity to N (bmt_n, the update limit, at bmt_m=64)
# and to M (bmt_m, the dirty address queue's entries, at bmt_n=16) on stream and hashmap,
# normalized to bmt-nocc.  One core, profile ccnvm.
# Environment (besides common.sh's): DESIGNS (comma or space separated: the base first,
# Figure 6's design last), PROFILE, WL5 and WL6 (the figures' workloads), NKEY and NS, MKEY
# and MS (Figure 6's options and values), N_FOR_M and M_FOR_N (each sweep's other option),
# FOOTPRINT (--footprint for every workload; unset: spm-bench's defaults, 8 MiB a map and
# 64 MiB for stream).
. "$(dirname "$0")/common.sh"
OPS=${OPS:-20000}
PROFILE=${PROFILE:-ccnvm}
DESIGNS=${DESIGNS:-bmt-nocc,sc,osiris,ccnvm-nods,ccnvm}
DESIGNS=${DESIGNS//,/ }
WL5=${WL5:-array queue hashmap btree rbtree stream}
WL6=${WL6:-stream hashmap}
NKEY=${NKEY:-bmt_n} NS=${NS:-4 8 16 32 64} M_FOR_N=${M_FOR_N:-64}
MKEY=${MKEY:-bmt_m} MS=${MS:-16 32 48 64} N_FOR_M=${N_FOR_M:-16}
read -r -a D <<< "$DESIGNS"
BASE=${D[0]} SENS=${D[${#D[@]} - 1]}
for w in $WL6; do
	case " $WL5 " in *" $w "*) ;; *) echo "ccnvm.sh: $w is in WL6, not WL5 (Figure 6's base rows" \
		"are Figure 5's)" >&2; exit 2 ;; esac
done
fp=(${FOOTPRINT:+--footprint "$FOOTPRINT"})
csv5=$OUT/ccnvm5.csv dat5=$OUT/ccnvm5.dat csv6=$OUT/ccnvm6.csv dat6=$OUT/ccnvm6.dat
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# run -- one spm-bench run of the figures' settings into CSV $1, the other flags after it.
run() {
	local out=$1
	shift
	bench --profile "$PROFILE" --ops "$OPS" "${fp[@]}" --csv "$out" "$@" >/dev/null
}

# Figure 5: every design on every workload
run "$tmp/fig5.csv" --designs "${DESIGNS// /,}" --workloads "${WL5// /,}"
# Figure 6: the last design, one option changed at a time (the base's rows are Figure 5's)
for n in $NS; do
	run "$tmp/one.csv" --designs "$SENS" --workloads "${WL6// /,}" \
		--set "$NKEY=$n" --set "$MKEY=$M_FOR_N"
	sweep_add "$tmp/one.csv" "$tmp/fig6.csv" "sweep,value" "n,$n"
done
for m in $MS; do
	run "$tmp/one.csv" --designs "$SENS" --workloads "${WL6// /,}" \
		--set "$NKEY=$N_FOR_M" --set "$MKEY=$m"
	sweep_add "$tmp/one.csv" "$tmp/fig6.csv" "sweep,value" "m,$m"
done
mv "$tmp/fig5.csv" "$csv5"
mv "$tmp/fig6.csv" "$csv6"

# Figure 5: per workload and the geometric mean, each design's throughput (ops / modeled
# time) and media writes over the base's, the base left out; then the paper's comparisons
awk -v designs="$DESIGNS" -v workloads="$WL5" "$AWK_COLS"'
{ k = $col["design"] SUBSEP $col["workload"]
  thr[k] = $col["ops"] / $col["modeled_ns"] * 1e9; wr[k] = $col["writes"] }
function rel(m, d, w) { return m[d, w] / m[D[1], w] }
function gm(m, d,   s, w) { s = 0; for (w = 1; w <= nw; w++) s += log(rel(m, d, W[w])); return exp(s / nw) }
function pct(x) { return 100 * (x - 1) }
END {
	nd = split(designs, D, " "); nw = split(workloads, W, " ")
	for (m = 1; m <= 2; m++) {
		printf "# %s\nworkload", m == 1 ? "throughput over " D[1] : "media writes over " D[1]
		for (i = 2; i <= nd; i++) printf " %s", D[i]
		print ""
		for (j = 1; j <= nw + 1; j++) {
			printf "%s", j <= nw ? W[j] : "gmean"
			for (i = 2; i <= nd; i++) {
				if (m == 1) v = j <= nw ? rel(thr, D[i], W[j]) : gm(thr, D[i])
				else v = j <= nw ? rel(wr, D[i], W[j]) : gm(wr, D[i])
				printf " %.4f", v
			}
			print ""
		}
		print "\n"
	}
	if (nd < 5) exit
	printf "# %s over %s (paper, cc-NVM over w/o CC: IPC -18.7 %%, writes +39 %%): throughput %+.1f %%, writes %+.1f %%\n",
		D[5], D[1], pct(gm(thr, D[5])), pct(gm(wr, D[5]))
	printf "# %s over %s (paper, cc-NVM w/o DS: writes +39 %%, IPC a little under cc-NVM): throughput %+.1f %%, writes %+.1f %%\n",
		D[4], D[1], pct(gm(thr, D[4])), pct(gm(wr, D[4]))
	printf "# %s over %s (paper, cc-NVM over Osiris Plus: IPC +20.4 %%, writes +29.6 %%): throughput %+.1f %%, writes %+.1f %%\n",
		D[5], D[3], pct(gm(thr, D[5]) / gm(thr, D[3])), pct(gm(wr, D[5]) / gm(wr, D[3]))
	printf "# %s (paper, SC: the most writes, 12 tree levels a write-back): throughput %+.1f %%, writes %+.1f %% over %s\n",
		D[2], pct(gm(thr, D[2])), pct(gm(wr, D[2])), D[1]
}' "$csv5" > "$dat5"
grep -v "^#" "$dat5" | column -t; grep "^# .*paper" "$dat5" || true

# Figure 6: per sweep (index 0: N, index 1: M) and value, throughput and media writes of
# each workload over the base's (Figure 5's rows)
awk -v base="$BASE" -v workloads="$WL6" -v ns="$NS" -v ms="$MS" -v nkey="$NKEY" -v mkey="$MKEY" \
	-v m_for_n="$M_FOR_N" -v n_for_m="$N_FOR_M" '
BEGIN { FS = "," }
FNR == 1 { file++; delete col; for (i = 1; i <= NF; i++) col[$i] = i; next }
file == 1 && $col["design"] == base { bt[$col["workload"]] = $col["modeled_ns"] / $col["ops"]; bw[$col["workload"]] = $col["writes"] / $col["ops"] }
file == 2 { k = $col["sweep"] SUBSEP $col["value"] SUBSEP $col["workload"]
  t[k] = $col["modeled_ns"] / $col["ops"]; w[k] = $col["writes"] / $col["ops"] }
END {
	nw = split(workloads, W, " ")
	for (s = 1; s <= 2; s++) {
		nv = split(s == 1 ? ns : ms, V, " ")
		printf "# %s, %s=%s\n%s", s == 1 ? "N" : "M", s == 1 ? mkey : nkey, s == 1 ? m_for_n : n_for_m, s == 1 ? "n" : "m"
		for (j = 1; j <= nw; j++) printf " %s-perf", W[j]
		for (j = 1; j <= nw; j++) printf " %s-writes", W[j]
		print ""
		for (v = 1; v <= nv; v++) {
			printf "%s", V[v]
			for (j = 1; j <= nw; j++) printf " %.4f", bt[W[j]] / t[s == 1 ? "n" : "m", V[v], W[j]]
			for (j = 1; j <= nw; j++) printf " %.4f", w[s == 1 ? "n" : "m", V[v], W[j]] / bw[W[j]]
			print ""
		}
		print "\n"
	}
}' "$csv5" "$csv6" > "$dat6"
grep -v "^#" "$dat6" | column -t

nd=${#D[@]} nw6=$(wc -w <<< "$WL6")
gnuplot <<GP
$GP_STYLE
set terminal $TERM_PNG size 1200,480
set output "$OUT/ccnvm5.png"
set multiplot layout 1,2 title "cc-NVM Figure 5: normalized to $BASE (profile $PROFILE, 1 core, $OPS ops)"
$GP_HISTOGRAM
set grid ytics
set yrange [0:*]
set offsets 0, 0, graph 0.08, 0
set xtics font ",8"
set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2
set title "(a) performance: ops a modeled second / $BASE's"
plot for [i=2:$nd] "$dat5" index 0 using i:xtic(1) lt i title columnheader(i)
set title "(b) media writes / $BASE's"
plot for [i=2:$nd] "$dat5" index 1 using i:xtic(1) lt i title columnheader(i)
unset multiplot
GP
gnuplot <<GP
$GP_STYLE
set terminal $TERM_PNG size 1200,480
set output "$OUT/ccnvm6.png"
set multiplot layout 1,2 title "cc-NVM Figure 6: $SENS normalized to $BASE (profile $PROFILE, 1 core, $OPS ops; solid: performance, dashed: media writes)"
set logscale x 2
set grid
set key below horizontal font ",8"
set ylabel "over $BASE"
set title "(a) N ($NKEY; $MKEY=$M_FOR_N)" noenhanced
set xlabel "N"
plot for [i=2:$((nw6 + 1))] "$dat6" index 0 using 1:i with linespoints lt i title columnheader(i), \
     for [i=$((nw6 + 2)):$((2 * nw6 + 1))] "$dat6" index 0 using 1:i with linespoints lt (i - $nw6) dt 2 title columnheader(i)
unset logscale x
set title "(b) M ($MKEY; $NKEY=$N_FOR_M)" noenhanced
set xlabel "M"
plot for [i=2:$((nw6 + 1))] "$dat6" index 1 using 1:i with linespoints lt i title columnheader(i), \
     for [i=$((nw6 + 2)):$((2 * nw6 + 1))] "$dat6" index 1 using 1:i with linespoints lt (i - $nw6) dt 2 title columnheader(i)
unset multiplot
GP
echo "wrote $csv5 $dat5 $OUT/ccnvm5.png $csv6 $dat6 $OUT/ccnvm6.png"
