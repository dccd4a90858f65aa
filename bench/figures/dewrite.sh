#!/usr/bin/env bash
# dewrite.sh -- the DeWrite paper's evaluation (Zuo et al., write deduplication and hash mode
# encryption for secure NVMM) on spm's dedup designs dewrite, dewrite-direct and
# dewrite-parallel, against ideal (counter mode, battery-backed counter cache), profile
# dewrite, one core, values of --tx-size 256 bytes (the paper's line), the values' duplicates
# made by --dup at 0 10 30 50 70 90 %, on array queue hashmap btree, and once on records
# (duplicates of its own: zeroed, copied and repeated records; --dup does not apply).  Every
# dedup design runs at both unit sizes, dedup_line=256 (the paper's) and 64 (spm's line).
#   dewrite1: write reduction: (a) the paper's metric, unit writes cancelled / unit writes
#             (dedup_cancelled / dedup_writes), (b) media writes (data + log + metadata
#             lines) over ideal's at the same --dup; the arithmetic mean of (a), the
#             geometric mean of (b) over the workloads.
#   dewrite2: speed-ups over ideal: write latency (mem_write_ns / mem_writes), read latency
#             (mem_read_ns / mem_reads) and modeled time, ideal's over the design's.
#   dewrite3: the paper's Figure 2: modeled time of dewrite, dewrite-direct and
#             dewrite-parallel over ideal's, and their AES pads (aes_ops) over ideal's,
#             geometric means over the workloads.
#   dewrite4: the history window's prediction accuracy, right / (right + wrong), of dewrite
#             at dedup_window 1 3 5 9, --dup 50, beside that of always guessing "unique"
#             (1 - the cancelled fraction).
#   dewrite5: --dup 0, what deduplication costs: media writes and modeled time over ideal's
#             per workload, and the media writes an operation by class (data, log, meta).
#   dewrite6: the line-level duplicate ratio the controller saw (dedup_cancelled /
#             dedup_writes at dedup_line=64), split into data and undo-log lines, and the
#             tables' storage overhead (dedup_overhead_ppm).
# CSV: dewrite.csv, with three columns added: sweep (dup: the --dup sweep and records;
# window: the window sweep), line (the dedup unit, 0 for ideal) and window (dedup_window, 0
# for ideal).
# Environment (besides common.sh's; OPS defaults to 20000): PROFILE, TX (--tx-size), DUPS,
# WL (the --dup workloads), REC (the workload run once without --dup; empty: none), UNITS
# (dedup_line values, the paper's first), WINDOW (dedup_window of the sweep), WINDOWS and
# WDUP (the window sweep's values and --dup), FOOTPRINT (--footprint for every workload;
# unset: spm-bench's default, 8 MiB).
. "$(dirname "$0")/common.sh"
OPS=${OPS:-20000}
PROFILE=${PROFILE:-dewrite}
TX=${TX:-256}
DUPS=${DUPS:-0 10 30 50 70 90}
WL=${WL:-array queue hashmap btree}
REC=${REC-records}
UNITS=${UNITS:-256 64}
WINDOW=${WINDOW:-3}
WINDOWS=${WINDOWS:-1 3 5 9}
WDUP=${WDUP:-50}
BASE=ideal
DD="dewrite dewrite-direct dewrite-parallel"
read -r -a U <<< "$UNITS"
U1=${U[0]} U2=${U[${#U[@]} - 1]}
fp=(${FOOTPRINT:+--footprint "$FOOTPRINT"})
csv=$OUT/dewrite.csv
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
start=$SECONDS

# run -- one spm-bench run of the figures' settings into CSV $1, the other flags after it.
run() {
	local out=$1
	shift
	bench --profile "$PROFILE" --ops "$OPS" --tx-size "$TX" "${fp[@]}" --csv "$out" "$@" >/dev/null
}

# the --dup sweep: ideal, then the dedup designs at each unit
for dup in $DUPS; do
	run "$tmp/one.csv" --designs "$BASE" --workloads "${WL// /,}" --dup "$dup"
	sweep_add "$tmp/one.csv" "$tmp/all.csv" "sweep,line,window" "dup,0,0"
	for u in $UNITS; do
		run "$tmp/one.csv" --designs "${DD// /,}" --workloads "${WL// /,}" --dup "$dup" \
			--set dedup_line="$u" --set dedup_window="$WINDOW"
		sweep_add "$tmp/one.csv" "$tmp/all.csv" "sweep,line,window" "dup,$u,$WINDOW"
	done
done
# records, once (its dup column is empty)
if [ -n "$REC" ]; then
	run "$tmp/one.csv" --designs "$BASE" --workloads "$REC"
	sweep_add "$tmp/one.csv" "$tmp/all.csv" "sweep,line,window" "dup,0,0"
	for u in $UNITS; do
		run "$tmp/one.csv" --designs "${DD// /,}" --workloads "$REC" \
			--set dedup_line="$u" --set dedup_window="$WINDOW"
		sweep_add "$tmp/one.csv" "$tmp/all.csv" "sweep,line,window" "dup,$u,$WINDOW"
	done
fi
# the history window: dewrite at each window and unit, --dup WDUP
WLR="$WL${REC:+ $REC}"
for u in $UNITS; do
	for win in $WINDOWS; do
		run "$tmp/one.csv" --designs dewrite --workloads "${WLR// /,}" --dup "$WDUP" \
			--set dedup_line="$u" --set dedup_window="$win"
		sweep_add "$tmp/one.csv" "$tmp/all.csv" "sweep,line,window" "window,$u,$win"
	done
done
mv "$tmp/all.csv" "$csv"
runtime=$((SECONDS - start))

# The rows by design, unit, workload and --dup ("rec" for records; ideal's unit is 0), and
# the window sweep's by unit, window and workload; rel(): a design's number over ideal's in
# the same workload and --dup, sp(): ideal's over the design's; mean() (arithmetic), gmrel()
# and gmsp() (geometric): over the --dup workloads.
LOAD="$AWK_COLS"'
$col["sweep"] == "dup" { x = $col["dup"] == "" ? "rec" : $col["dup"]
  k = $col["design"] SUBSEP $col["line"] SUBSEP $col["workload"] SUBSEP x
  dw = $col["dedup_writes"]
  can[k] = dw ? $col["dedup_cancelled"] / dw : 0
  wr[k] = $col["writes"]; wd[k] = $col["writes_data"]; wl[k] = $col["writes_log"]
  wm[k] = $col["writes_meta"]; ops[k] = $col["ops"]
  wlat[k] = $col["mem_write_ns"] / $col["mem_writes"]
  rlat[k] = $col["mem_reads"] ? $col["mem_read_ns"] / $col["mem_reads"] : 0
  t[k] = $col["modeled_ns"]; aes[k] = $col["aes_ops"]; ppm[k] = $col["dedup_overhead_ppm"]
  aq[k] = $col["aes_ops"] ? $col["aes_queue_ns"] / $col["aes_ops"] : 0 }
$col["sweep"] == "window" { pr = $col["dedup_predict_right"] + $col["dedup_predict_wrong"]
  wacc[$col["line"], $col["window"], $col["workload"]] = pr ? $col["dedup_predict_right"] / pr : 0
  wcan[$col["line"], $col["workload"]] = $col["dedup_cancelled"] / $col["dedup_writes"] }
function rel(m, d, u, w, x) { return m[d, u, w, x] / m[base, 0, w, x] }
function sp(m, d, u, w, x) { return m[base, 0, w, x] / m[d, u, w, x] }
function mean(m, d, u, x,   s, j) { s = 0; for (j = 1; j <= nw; j++) s += m[d, u, W[j], x]; return s / nw }
function gmrel(m, d, u, x,   s, j) { s = 0; for (j = 1; j <= nw; j++) s += log(rel(m, d, u, W[j], x)); return exp(s / nw) }
function gmsp(m, d, u, x) { return 1 / gmrel(m, d, u, x) }
function init() { nw = split(workloads, W, " "); nx = split(dups, X, " "); nu = split(units, UU, " ") }'
AWKV=(-v base="$BASE" -v workloads="$WL" -v dups="$DUPS" -v units="$UNITS" -v rec="$REC")

# dewrite1: per unit, the cancelled fraction, then media writes over ideal's, against --dup
awk "${AWKV[@]}" "$LOAD"'
function block(title, what, u,   i, j) {
	printf "# %s, dedup_line=%s\ndup", title, u
	for (j = 1; j <= nw; j++) printf " %s", W[j]
	printf " %s%s\n", what == "can" ? "mean" : "gmean", rec != "" ? " " rec : ""
	for (i = 1; i <= nx; i++) {
		printf "%s", X[i]
		for (j = 1; j <= nw; j++)
			printf " %.4f", what == "can" ? can["dewrite", u, W[j], X[i]] : rel(wr, "dewrite", u, W[j], X[i])
		printf " %.4f", what == "can" ? mean(can, "dewrite", u, X[i]) : gmrel(wr, "dewrite", u, X[i])
		if (rec != "") printf " %.4f", what == "can" ? can["dewrite", u, rec, "rec"] : rel(wr, "dewrite", u, rec, "rec")
		print ""
	}
	print "\n"
}
END { init()
	for (v = 1; v <= nu; v++) block("unit writes cancelled / unit writes (dedup_cancelled / dedup_writes)", "can", UU[v])
	for (v = 1; v <= nu; v++) block("media writes (data + log + meta lines) / ideal", "wr", UU[v])
}' "$csv" > "$OUT/dewrite1.dat"

# dewrite2: per unit, the write, read and modeled-time speed-ups over ideal against --dup
awk "${AWKV[@]}" "$LOAD"'
function block(title, m, u,   i, j) {
	printf "# %s speed-up (ideal / dewrite), dedup_line=%s\ndup", title, u
	for (j = 1; j <= nw; j++) printf " %s", W[j]
	printf " gmean%s\n", rec != "" ? " " rec : ""
	for (i = 1; i <= nx; i++) {
		printf "%s", X[i]
		for (j = 1; j <= nw; j++) printf " %.4f", sp(m, "dewrite", u, W[j], X[i])
		printf " %.4f", gmsp(m, "dewrite", u, X[i])
		if (rec != "") printf " %.4f", sp(m, "dewrite", u, rec, "rec")
		print ""
	}
	print "\n"
}
END { init()
	for (v = 1; v <= nu; v++) block("write latency", wlat, UU[v])
	for (v = 1; v <= nu; v++) block("read latency", rlat, UU[v])
	for (v = 1; v <= nu; v++) block("modeled time", t, UU[v])
}' "$csv" > "$OUT/dewrite2.dat"

# dewrite3: Figure 2, each dedup design at each unit over ideal (geometric means)
awk "${AWKV[@]}" -v dd="$DD" "$LOAD"'
END { init(); nd = split(dd, D, " ")
	for (b = 1; b <= 2; b++) {
		printf "# %s over ideal (geometric mean over %s)\ndup", b == 1 ? "modeled time" : "AES pads (aes_ops)", workloads
		for (v = 1; v <= nu; v++) for (i = 1; i <= nd; i++) printf " %s/%s", D[i], UU[v]
		print ""
		for (x = 1; x <= nx; x++) {
			printf "%s", X[x]
			for (v = 1; v <= nu; v++) for (i = 1; i <= nd; i++)
				if (b == 1) printf " %.4f", gmrel(t, D[i], UU[v], X[x])
				else printf " %.4f", gmrel(aes, D[i], UU[v], X[x])
			print ""
		}
		print "\n"
	}
}' "$csv" > "$OUT/dewrite3.dat"

# dewrite4: prediction accuracy per workload and window, one block per unit
awk "${AWKV[@]}" -v windows="$WINDOWS" "$LOAD"'
END { init(); nn = split(windows, N, " "); n = split(workloads (rec != "" ? " " rec : ""), A, " ")
	for (v = 1; v <= nu; v++) {
		printf "# prediction accuracy, dedup_line=%s\nworkload", UU[v]
		for (i = 1; i <= nn; i++) printf " window-%s", N[i]
		print " always-unique"
		for (j = 1; j <= n + 1; j++) {
			printf "%s", j <= n ? A[j] : "mean"
			for (i = 1; i <= nn; i++) {
				if (j <= n) a = wacc[UU[v], N[i], A[j]]
				else { a = 0; for (l = 1; l <= n; l++) a += wacc[UU[v], N[i], A[l]] / n }
				printf " %.4f", a
			}
			if (j <= n) a = 1 - wcan[UU[v], A[j]]
			else { a = 0; for (l = 1; l <= n; l++) a += (1 - wcan[UU[v], A[l]]) / n }
			printf " %.4f\n", a
		}
		print "\n"
	}
}' "$csv" > "$OUT/dewrite4.dat"

# dewrite5: --dup 0 (the sweep's first), media writes and modeled time over ideal per
# workload; then the media writes an operation by class, ideal and dewrite at each unit
awk "${AWKV[@]}" "$LOAD"'
END { init(); x = X[1]
	printf "# --dup %s: over ideal\nworkload", x
	for (v = 1; v <= nu; v++) printf " writes/%s", UU[v]
	for (v = 1; v <= nu; v++) printf " time/%s", UU[v]
	print ""
	for (j = 1; j <= nw + 1; j++) {
		printf "%s", j <= nw ? W[j] : "gmean"
		for (v = 1; v <= nu; v++) printf " %.4f", j <= nw ? rel(wr, "dewrite", UU[v], W[j], x) : gmrel(wr, "dewrite", UU[v], x)
		for (v = 1; v <= nu; v++) printf " %.4f", j <= nw ? rel(t, "dewrite", UU[v], W[j], x) : gmrel(t, "dewrite", UU[v], x)
		print ""
	}
	printf "\n\n# --dup %s: media writes an operation by class\nrun data log meta\n", x
	for (j = 1; j <= nw; j++)
		for (v = 0; v <= nu; v++) {
			d = v ? "dewrite" : base; u = v ? UU[v] : 0; k = d SUBSEP u SUBSEP W[j] SUBSEP x
			printf "%s/%s %.3f %.3f %.3f\n", W[j], v ? u : "ideal", wd[k] / ops[k], wl[k] / ops[k], wm[k] / ops[k]
		}
	print "\n"
}' "$csv" > "$OUT/dewrite5.dat"

# dewrite6: the duplicate ratio the controller saw (unit cancellations at the smallest
# unit), by class (data and log lines: 1 - dewrite's written lines / ideal's); the tables'
# storage overhead in % at each unit
awk "${AWKV[@]}" -v small="$U2" "$LOAD"'
END { init()
	printf "# line-level duplicate ratio (dedup_line=%s)\ndup", small
	for (j = 1; j <= nw; j++) printf " %s", W[j]
	printf " mean%s data-mean log-mean log-share\n", rec != "" ? " " rec : ""
	for (i = 1; i <= nx; i++) {
		x = X[i]; printf "%s", x
		for (j = 1; j <= nw; j++) printf " %.4f", can["dewrite", small, W[j], x]
		printf " %.4f", mean(can, "dewrite", small, x)
		if (rec != "") printf " %.4f", can["dewrite", small, rec, "rec"]
		sd = sl = sh = 0
		for (j = 1; j <= nw; j++) {
			sd += 1 - rel(wd, "dewrite", small, W[j], x)
			sl += 1 - rel(wl, "dewrite", small, W[j], x)
			k = base SUBSEP 0 SUBSEP W[j] SUBSEP x
			sh += wl[k] / (wd[k] + wl[k])
		}
		printf " %.4f %.4f %.4f\n", sd / nw, sl / nw, sh / nw
	}
	printf "\n\n# storage overhead (dedup_overhead_ppm / 10^4, %%)\ndup"
	for (v = 1; v <= nu; v++) for (j = 1; j <= nw; j++) printf " %s/%s", W[j], UU[v]
	print ""
	for (i = 1; i <= nx; i++) {
		printf "%s", X[i]
		for (v = 1; v <= nu; v++) for (j = 1; j <= nw; j++) printf " %.3f", ppm["dewrite", UU[v], W[j], X[i]] / 1e4
		print ""
	}
	print "\n"
}' "$csv" > "$OUT/dewrite6.dat"

# the table and the paper's comparisons
awk "${AWKV[@]}" -v windows="$WINDOWS" -v wdup="$WDUP" -v dd="$DD" "$LOAD"'
function pct(v) { return 100 * v }
END { init(); nn = split(windows, N, " "); nd = split(dd, D, " ")
	printf "dup"
	for (v = 1; v <= nu; v++) printf " cancel/%s writes/%s wr-sp/%s rd-sp/%s time-sp/%s", UU[v], UU[v], UU[v], UU[v], UU[v]
	print ""
	for (i = 1; i <= nx + (rec != ""); i++) {
		x = i <= nx ? X[i] : "rec"
		printf "%s", i <= nx ? x : rec
		for (v = 1; v <= nu; v++) {
			u = UU[v]
			if (i <= nx) printf " %.1f%% %.3f %.3f %.3f %.3f", pct(mean(can, "dewrite", u, x)),
				gmrel(wr, "dewrite", u, x), gmsp(wlat, "dewrite", u, x), gmsp(rlat, "dewrite", u, x), gmsp(t, "dewrite", u, x)
			else printf " %.1f%% %.3f %.3f %.3f %.3f", pct(can["dewrite", u, rec, x]), rel(wr, "dewrite", u, rec, x),
				sp(wlat, "dewrite", u, rec, x), sp(rlat, "dewrite", u, rec, x), sp(t, "dewrite", u, rec, x)
		}
		print ""
	}
	print "#"
	for (v = 1; v <= nu; v++) {
		u = UU[v]; hi = X[nx]; c = s = r = tt = 0
		for (i = 1; i <= nx; i++) { c += mean(can, "dewrite", u, X[i]) / nx
			s += log(gmsp(wlat, "dewrite", u, X[i])) / nx; r += log(gmsp(rlat, "dewrite", u, X[i])) / nx
			tt += log(gmsp(t, "dewrite", u, X[i])) / nx }
		printf "# dedup_line=%s, write reduction (paper: 54 %% on average, over 80 %% for the most duplicated): %.1f %% averaged over --dup, %.1f %% at --dup %s",
			u, pct(c), pct(mean(can, "dewrite", u, hi)), hi
		if (rec != "") printf ", %s %.1f %%", rec, pct(can["dewrite", u, rec, "rec"])
		print ""
		printf "# dedup_line=%s, media writes over ideal: %.3f at --dup %s, %.3f at --dup %s\n",
			u, gmrel(wr, "dewrite", u, X[1]), X[1], gmrel(wr, "dewrite", u, hi), hi
		printf "# dedup_line=%s, speed-ups, geometric mean over --dup (paper: writes 4.2x, reads 3.1x, IPC +82 %%): writes %.2fx, reads %.2fx, performance (1 / modeled time) %+.1f %%\n",
			u, exp(s), exp(r), 100 * (exp(tt) - 1)
		printf "# dedup_line=%s, --dup %s: media writes %+.1f %%, modeled time %+.1f %% over ideal\n",
			u, X[1], 100 * (gmrel(wr, "dewrite", u, X[1]) - 1), 100 * (gmrel(t, "dewrite", u, X[1]) - 1)
		printf "# dedup_line=%s, prediction accuracy at --dup %s (paper: about 92 %% with one write, it uses three):", u, wdup
		n = split(workloads (rec != "" ? " " rec : ""), A, " ")
		for (i = 1; i <= nn; i++) { a = 0; for (l = 1; l <= n; l++) a += wacc[u, N[i], A[l]] / n; printf " window %s %.1f %%", N[i], pct(a) }
		a = 0; for (l = 1; l <= n; l++) a += (1 - wcan[u, A[l]]) / n
		printf "; always unique %.1f %%\n", pct(a)
		printf "# dedup_line=%s, Figure 2, modeled time over ideal at --dup %s and %s (paper: prediction beats both):", u, X[1], hi
		for (i = 1; i <= nd; i++) printf " %s %.3f %.3f", D[i], gmrel(t, D[i], u, X[1]), gmrel(t, D[i], u, hi)
		printf "; AES pads over ideal at --dup %s:", hi
		for (i = 1; i <= nd; i++) printf " %s %.3f", D[i], gmrel(aes, D[i], u, hi)
		printf "; a pad waits for the engine %.1f ns (ideal %.1f)\n", mean(aq, "dewrite-parallel", u, hi), mean(aq, base, 0, hi)
		printf "# dedup_line=%s, storage overhead (paper: about 6.25 %% at 256 B): %.2f %% at --dup %s, %.2f %% at --dup %s\n",
			u, mean(ppm, "dewrite", u, X[1]) / 1e4, X[1], mean(ppm, "dewrite", u, hi) / 1e4, hi
	}
}' "$csv" > "$tmp/table"
grep -v "^#" "$tmp/table" | column -t; grep "^# " "$tmp/table" || true

# the figures
nw=$(wc -w <<< "$WL") nu=${#U[@]} nwin=$(wc -w <<< "$WINDOWS")
nrec=$([ -n "$REC" ] && echo 1 || echo 0)
gm=$((nw + 2)) rc=$((nw + 3)) dcol=$((nw + 3 + nrec))
recplot() { [ -n "$REC" ] && echo ", \"$1\" index $2 using 1:$rc with lines lt 7 dt 2 title \"$REC (own duplicates, no --dup)\"" || true; }
sub="profile $PROFILE, 1 core, $OPS ops, --tx-size $TX"
gnuplot <<GP
$GP_STYLE
set terminal $TERM_PNG size 1200,900
set output "$OUT/dewrite1.png"
set multiplot layout 2,2 title "DeWrite write reduction: dewrite against --dup ($sub)"
set grid
set key below horizontal font ",8" noenhanced
set xlabel "--dup (% of written values that repeat)"
set xrange [0:*]
set yrange [0:1]
set ylabel "cancelled / unit writes"
set title "(a) unit writes cancelled, dedup_line=$U1 (dotted: paper's mean, 54 %)" noenhanced
plot 0.54 with lines lt 8 dt 3 notitle, for [i=2:$((nw + 1))] "$OUT/dewrite1.dat" index 0 using 1:i with linespoints lt i title columnheader(i), \
     "$OUT/dewrite1.dat" index 0 using 1:$gm with linespoints lt 1 title "mean" $(recplot "$OUT/dewrite1.dat" 0)
set title "(a) unit writes cancelled, dedup_line=$U2" noenhanced
plot 0.54 with lines lt 8 dt 3 notitle, for [i=2:$((nw + 1))] "$OUT/dewrite1.dat" index $((nu - 1)) using 1:i with linespoints lt i title columnheader(i), \
     "$OUT/dewrite1.dat" index $((nu - 1)) using 1:$gm with linespoints lt 1 title "mean" $(recplot "$OUT/dewrite1.dat" $((nu - 1)))
set yrange [0:*]
set ylabel "media writes / ideal's"
set title "(b) media writes (data + log + meta) / ideal's, dedup_line=$U1" noenhanced
plot 1 with lines lt 8 dt 3 notitle, for [i=2:$((nw + 1))] "$OUT/dewrite1.dat" index $nu using 1:i with linespoints lt i title columnheader(i), \
     "$OUT/dewrite1.dat" index $nu using 1:$gm with linespoints lt 1 title "gmean" $(recplot "$OUT/dewrite1.dat" $nu)
set title "(b) media writes (data + log + meta) / ideal's, dedup_line=$U2" noenhanced
plot 1 with lines lt 8 dt 3 notitle, for [i=2:$((nw + 1))] "$OUT/dewrite1.dat" index $((2 * nu - 1)) using 1:i with linespoints lt i title columnheader(i), \
     "$OUT/dewrite1.dat" index $((2 * nu - 1)) using 1:$gm with linespoints lt 1 title "gmean" $(recplot "$OUT/dewrite1.dat" $((2 * nu - 1)))
unset multiplot
GP
gnuplot <<GP
$GP_STYLE
set terminal $TERM_PNG size 1200,1200
set output "$OUT/dewrite2.png"
set multiplot layout 3,2 title "DeWrite speed-ups over ideal: dewrite against --dup ($sub; dotted: 1, no change)"
set grid
set key below horizontal font ",8" noenhanced
set xlabel "--dup (%)"
set xrange [0:*]
set yrange [0:*]
set ylabel "ideal / dewrite"
array T[3] = ["write latency (mem_write_ns / mem_writes)", "read latency (mem_read_ns / mem_reads)", "performance: modeled time, ideal's / dewrite's"]
array UN[2] = ["$U1", "$U2"]
do for [m=0:2] {
	do for [v=0:1] {
		b = m * $nu + v * ($nu - 1)
		set title sprintf("%s, dedup_line=%s", T[m + 1], UN[v + 1]) noenhanced
		plot 1 with lines lt 8 dt 3 notitle, \
		     for [i=2:$((nw + 1))] "$OUT/dewrite2.dat" index b using 1:i with linespoints lt i title columnheader(i), \
		     "$OUT/dewrite2.dat" index b using 1:$gm with linespoints lt 1 title "gmean" $(recplot "$OUT/dewrite2.dat" b)
	}
}
unset multiplot
GP
nd=$(wc -w <<< "$DD")
gnuplot <<GP
$GP_STYLE
set terminal $TERM_PNG size 1200,480
set output "$OUT/dewrite3.png"
set multiplot layout 1,2 title "DeWrite Figure 2: detect, then encrypt (direct); both at once (parallel); predicted (dewrite)\n(geometric means over $WL; $sub)"
set grid
set key below horizontal font ",8" noenhanced
set xlabel "--dup (%)"
set xrange [0:*]
set yrange [0:*]
set title "(a) modeled time / ideal's (solid: dedup_line=$U1, dashed: $U2)" noenhanced
plot for [i=2:$((nd + 1))] "$OUT/dewrite3.dat" index 0 using 1:i with linespoints lt (i + 3) title columnheader(i), \
     for [i=$((nd + 2)):$((nu * nd + 1))] "$OUT/dewrite3.dat" index 0 using 1:i with linespoints lt (i + 3 - $nd) dt 2 title columnheader(i)
set title "(b) AES pads (aes_ops) / ideal's (solid: dedup_line=$U1, dashed: $U2)" noenhanced
plot for [i=2:$((nd + 1))] "$OUT/dewrite3.dat" index 1 using 1:i with linespoints lt (i + 3) title columnheader(i), \
     for [i=$((nd + 2)):$((nu * nd + 1))] "$OUT/dewrite3.dat" index 1 using 1:i with linespoints lt (i + 3 - $nd) dt 2 title columnheader(i)
unset multiplot
GP
gnuplot <<GP
$GP_STYLE
set terminal $TERM_PNG size 1200,480
set output "$OUT/dewrite4.png"
set multiplot layout 1,2 title "DeWrite's history window: prediction accuracy of dewrite at --dup $WDUP, and of always guessing unique\n($sub; dotted: the paper's 92 %)"
$GP_HISTOGRAM
set grid ytics
set yrange [0:1]
set ylabel "right / (right + wrong)"
set arrow from graph 0, first 0.92 to graph 1, first 0.92 nohead dt 3
set title "(a) dedup_line=$U1" noenhanced
plot for [i=2:$((nwin + 2))] "$OUT/dewrite4.dat" index 0 using i:xtic(1) lt (i == $((nwin + 2)) ? 8 : i) title columnheader(i)
set title "(b) dedup_line=$U2" noenhanced
plot for [i=2:$((nwin + 2))] "$OUT/dewrite4.dat" index $((nu - 1)) using i:xtic(1) lt (i == $((nwin + 2)) ? 8 : i) title columnheader(i)
unset multiplot
GP
gnuplot <<GP
$GP_STYLE
set terminal $TERM_PNG size 1500,480
set output "$OUT/dewrite5.png"
set multiplot layout 1,3 title "DeWrite's cost without duplicates: --dup ${DUPS%% *} ($sub)"
$GP_HISTOGRAM
set grid ytics
set yrange [0:*]
set arrow 1 from graph 0, first 1 to graph 1, first 1 nohead dt 2
set title "(a) media writes / ideal's" noenhanced
set ylabel "over ideal"
plot for [i=2:$((nu + 1))] "$OUT/dewrite5.dat" index 0 using i:xtic(1) lt i title columnheader(i)
set title "(b) modeled time / ideal's" noenhanced
plot for [i=$((nu + 2)):$((2 * nu + 1))] "$OUT/dewrite5.dat" index 0 using i:xtic(1) lt (i - $nu) title columnheader(i)
unset arrow 1
set style histogram rowstacked
set boxwidth 0.7
set xtics rotate by -45 font ",8" noenhanced
set ylabel "media line writes an operation"
set title "(c) media writes an operation by class: ideal, dedup_line=$U1, $U2" noenhanced
plot for [i=2:4] "$OUT/dewrite5.dat" index 1 using i:xtic(1) lt (i + 4) title columnheader(i)
unset multiplot
GP
gnuplot <<GP
$GP_STYLE
set terminal $TERM_PNG size 1200,480
set output "$OUT/dewrite6.png"
set multiplot layout 1,2 title "DeWrite: the duplicates the controller saw, and the tables' storage ($sub)"
set grid
set key below horizontal font ",8" noenhanced
set xlabel "--dup (%)"
set xrange [0:*]
set yrange [0:1]
set ylabel "duplicate lines / lines written"
set title "(a) line-level duplicate ratio (dedup_line=$U2; dotted: --dup itself)" noenhanced
plot x / 100 with lines lt 8 dt 3 notitle, \
     for [i=2:$((nw + 1))] "$OUT/dewrite6.dat" index 0 using 1:i with linespoints lt i title columnheader(i), \
     "$OUT/dewrite6.dat" index 0 using 1:$gm with linespoints lt 1 title "mean" $(recplot "$OUT/dewrite6.dat" 0), \
     "$OUT/dewrite6.dat" index 0 using 1:$dcol with lines lt 6 dt 4 title "data lines (mean)", \
     "$OUT/dewrite6.dat" index 0 using 1:$((dcol + 1)) with lines lt 5 dt 4 title "undo-log lines (mean)", \
     "$OUT/dewrite6.dat" index 0 using 1:$((dcol + 2)) with lines lt 8 dt 5 title "log share of line writes"
set yrange [0:*]
set ylabel "tables / capacity (%)"
set title "(b) storage overhead, dedup_overhead_ppm (dotted: paper, 6.25 %)" noenhanced
plot 6.25 with lines lt 8 dt 3 notitle, \
     for [i=2:$((nw + 1))] "$OUT/dewrite6.dat" index 1 using 1:i with linespoints lt i title columnheader(i), \
     for [i=$((nw + 2)):$((nu * nw + 1))] "$OUT/dewrite6.dat" index 1 using 1:i with linespoints lt (i - $nw) dt 2 title columnheader(i)
unset multiplot
GP
echo "ran in $runtime s; wrote $csv $OUT/dewrite{1..6}.{dat,png}"
