#!/usr/bin/env bash
# redo.sh -- the redo-logging paper's Figures 6-9 on srl, lame and clame (profile redo, its
# Table I, 4 cores): log entry encryption latency and transaction commit latency reduced
# against srl, write traffic, and throughput over srl, with the undo-log designs sca and fca
# beside them as the undo reference (the paper's EASY-PM is not specified in our papers).
# Workloads: the paper's RBtree, Hash, B+tree, B-tree and Skiplist, one insert or update of
# a key-value pair per transaction, Zipfian keys.
. "$(dirname "$0")/common.sh"
OPS=${OPS:-5000}
CORES=${CORES:-4}
KEYS=${KEYS:-zipf:0.99}
DESIGNS="srl lame clame sca fca"
RWL="rbtree hashmap bptree btree skiplist"
csv=$OUT/redo.csv dat=$OUT/redo.dat

bench --designs "${DESIGNS// /,}" --workloads "${RWL// /,}" --profile redo --cores "$CORES" \
	--keys "$KEYS" --mix insert --ops "$OPS" --csv "$csv" >/dev/null

# per workload (and the geometric mean): each design's log entry encryption latency (ns a
# logged line), commit latency (ns a commit), bytes written a transaction, and throughput
# (transactions a modeled second); then the paper's comparisons
awk -v designs="$DESIGNS" -v workloads="$RWL" "$AWK_COLS"'
{ k = $col["design"] SUBSEP $col["workload"]
  ops[k] = $col["ops"]
  enc[k] = $col["redo_entries"] ? $col["redo_enc_ns"] / $col["redo_entries"] : 0
  cmt[k] = $col["redo_commits"] ? $col["redo_commit_ns"] / $col["redo_commits"] : 0
  wr[k] = $col["bytes_written"] / $col["ops"]
  thr[k] = $col["ops"] / $col["modeled_ns"] * 1e9
  aq[k] = $col["aes_ops"] ? $col["aes_queue_ns"] / $col["aes_ops"] : 0 }
function gm(m, d,   s, w) { s = 0; for (w = 1; w <= nw; w++) s += log(m[d, W[w]]); return exp(s / nw) }
function gmr(m, d, b,   s, w) { s = 0; for (w = 1; w <= nw; w++) s += log(m[d, W[w]] / m[b, W[w]]); return exp(s / nw) }
END {
	nd = split(designs, D, " "); nw = split(workloads, W, " ")
	split("enc cmt wr thr", M, " ")
	split("encryption_ns_per_entry commit_ns bytes_per_tx tx_per_s", T, " ")
	for (m = 1; m <= 4; m++) {
		printf "# %s\nworkload", T[m]
		for (i = 1; i <= nd; i++) printf " %s", D[i]
		print ""
		for (j = 1; j <= nw + 1; j++) {
			printf "%s", j <= nw ? W[j] : "gmean"
			for (i = 1; i <= nd; i++) {
				if (m == 1) { v = j <= nw ? enc[D[i], W[j]] : (i <= 3 ? gm(enc, D[i]) : 0) }
				if (m == 2) { v = j <= nw ? cmt[D[i], W[j]] : (i <= 3 ? gm(cmt, D[i]) : 0) }
				if (m == 3) { v = j <= nw ? wr[D[i], W[j]] : gm(wr, D[i]) }
				if (m == 4) { v = j <= nw ? thr[D[i], W[j]] : gm(thr, D[i]) }
				printf " %.2f", v
			}
			print ""
		}
		print "\n"
	}
	printf "# Figure 6, log entry encryption latency vs srl (paper: clame -95.3 %%, lame -92.6 %%): clame %+.1f %%, lame %+.1f %%\n",
		100 * (gmr(enc, "clame", "srl") - 1), 100 * (gmr(enc, "lame", "srl") - 1)
	printf "# Figure 7, write traffic, clame vs lame (paper: -37.9 %%): %+.1f %%; lame vs srl %+.1f %%\n",
		100 * (gmr(wr, "clame", "lame") - 1), 100 * (gmr(wr, "lame", "srl") - 1)
	printf "# Figure 8, commit latency vs srl (paper: clame -84.5 %%, lame -76.9 %%): clame %+.1f %%, lame %+.1f %%\n",
		100 * (gmr(cmt, "clame", "srl") - 1), 100 * (gmr(cmt, "lame", "srl") - 1)
	printf "# Figure 9, throughput over srl (paper: clame +87.3 %%, lame +71.5 %%): clame %+.1f %%, lame %+.1f %%; clame over lame (paper +9.2 %%) %+.1f %%\n",
		100 * (gmr(thr, "clame", "srl") - 1), 100 * (gmr(thr, "lame", "srl") - 1),
		100 * (gmr(thr, "clame", "lame") - 1)
	printf "# undo reference, throughput over srl: sca %+.1f %%, fca %+.1f %%\n",
		100 * (gmr(thr, "sca", "srl") - 1), 100 * (gmr(thr, "fca", "srl") - 1)
	for (i = 1; i <= 3; i++)
		printf "# %s: AES engine wait %.2f ns a pad (gmean over workloads)\n", D[i], gm(aq, D[i]) + 0
}' "$csv" > "$dat"
cat "$dat"

gnuplot <<GP
set terminal $TERM_PNG size 1400,900
set output "$OUT/redo.png"
$GP_HISTOGRAM
set multiplot layout 2,2 title "Redo logging, Figures 6-9 (modeled, profile redo, $CORES cores, $OPS transactions a core, keys $KEYS)"
set grid ytics
set yrange [0:*]
set xtics font ",8"
set title "Figure 6: log entry encryption latency (ns an entry)"
plot for [i=2:4] "$dat" index 0 using i:xtic(1) title columnheader(i)
set title "Figure 8: commit latency (ns a commit)"
plot for [i=2:4] "$dat" index 1 using i:xtic(1) title columnheader(i)
set title "Figure 7: bytes written a transaction (log, home, counters)"
plot for [i=2:6] "$dat" index 2 using i:xtic(1) title columnheader(i)
set title "Figure 9: throughput (transactions a modeled second)"
plot for [i=2:6] "$dat" index 3 using i:xtic(1) title columnheader(i)
unset multiplot
GP
echo "wrote $csv $dat $OUT/redo.png"
