#!/usr/bin/env bash
# preload.sh -- what libspm-preload.so costs an unmodified libpmemobj program: spm-pmdk-bench's
# workloads (bench/pmdk/) without the shim (libpmemobj on its own, PMEM_IS_PMEM_FORCE=1) and
# under it on every design safe for unannotated programs, REPS rounds, every configuration
# once a round in turn (so that the machine's drift falls on all of them alike); ops/s
# medians over the rounds and each design's median over libpmemobj's.  Wall clock: not part
# of all.sh.  Under the shim the designs run with their timing model on (SPM_CONF as given
# here); supermem also with timing=off (spm as an encrypted heap, no research model).
#   preload.csv   every run: round, config, workload, ops_per_s
#   preload.dat   per config: the median ops/s of each workload, then each over libpmemobj's
#   preload.png   the ratios, one bar per workload and design
# Environment (besides common.sh's OUT): OPS (20000), REPS (5), WL (queue hashmap btree),
# DESIGNS, VALUE (value bytes, 64), PMDK_BENCH and PRELOAD_LIB (the binaries; default: a
# Release build's in build-rel, else build's), PLOT_ONLY=1 (redraw from preload.csv).
. "$(dirname "$0")/common.sh"
OPS=${OPS:-20000}
REPS=${REPS:-5}
WL=${WL:-queue hashmap btree}
VALUE=${VALUE:-64}
DESIGNS=${DESIGNS:-supermem wt wt-cwc wt-xbank ideal colocated colocated-cc fca srl lame clame \
sc osiris ccnvm-nods ccnvm dewrite dewrite-direct dewrite-parallel plain}

PMDK_BENCH=$(find_built bench/pmdk/spm-pmdk-bench PMDK_BENCH)
PRELOAD_LIB=$(find_built preload/libspm-preload.so PRELOAD_LIB)
csv=$OUT/preload.csv dat=$OUT/preload.dat
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
configs="libpmemobj"
for d in $DESIGNS; do configs="$configs $d"; done
configs="$configs supermem:timing=off"

# rate CONFIG WORKLOAD -- one run's ops/s
rate() {
	local c=$1 w=$2 line
	if [ "$c" = libpmemobj ]; then
		line=$(PMEM_IS_PMEM_FORCE=1 "$PMDK_BENCH" "$w" "$tmp/plain.obj" "$OPS" "$VALUE")
	else
		local conf="design=${c%%:*}"
		[ "$c" = "${c#*:}" ] || conf="$conf;${c#*:}"
		line=$(SPM_CONF=$conf SPM_PRELOAD_PATHS="$tmp/spm-*" LD_PRELOAD=$PRELOAD_LIB \
			"$PMDK_BENCH" "$w" "$tmp/spm-pool" "$OPS" "$VALUE")
	fi
	sed -E 's/.*: ([0-9]+) ops\/s.*/\1/' <<<"$line"
}

if [ "${PLOT_ONLY:-0}" != 1 ]; then
	echo "round,config,workload,ops_per_s" > "$tmp/runs.csv"
	for r in $(seq "$REPS"); do
		for w in $WL; do
			for c in $configs; do
				echo "$r,$c,$w,$(rate "$c" "$w")" >> "$tmp/runs.csv"
			done
		done
	done
	mv "$tmp/runs.csv" "$csv"
fi

# medians per config and workload, then the ratios to libpmemobj's
awk -F, -v wl="$WL" -v configs="$configs" '
NR > 1 { v[$2 "," $3] = v[$2 "," $3] " " $4 }
function median(s,   a, n, i, j, t) {
	n = split(s, a, " ")
	for (i = 2; i <= n; i++)
		for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
END {
	nw = split(wl, W, " ")
	nc = split(configs, C, " ")
	printf "# config"
	for (i = 1; i <= nw; i++) printf " %s_ops_s", W[i]
	for (i = 1; i <= nw; i++) printf " %s_ratio", W[i]
	printf "\n"
	for (i = 1; i <= nw; i++) base[i] = median(v["libpmemobj," W[i]])
	for (c = 1; c <= nc; c++) {
		printf "%s", C[c]
		for (i = 1; i <= nw; i++) printf " %.0f", median(v[C[c] "," W[i]])
		for (i = 1; i <= nw; i++) printf " %.3f", median(v[C[c] "," W[i]]) / base[i]
		printf "\n"
	}
}' "$csv" > "$dat"
cat "$dat"

nw=$(wc -w <<<"$WL")
plot="plot"
i=0
for w in $WL; do
	i=$((i + 1))
	[ $i -eq 1 ] || plot="$plot,"
	plot="$plot '$dat' using $((1 + nw + i)):xtic(1) title '$w'"
done
gnuplot <<EOF
set terminal $(terminal) size 1200,520
set output '$OUT/preload.png'
set title "libpmemobj programs under libspm-preload.so: ops/s over libpmemobj's own (medians of $REPS rounds, $OPS ops, $VALUE-byte values)"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set ylabel "ops/s / libpmemobj's"
set yrange [0:*]
set grid ytics
set key top right
set xtics rotate by -40
set bmargin 7
$plot
EOF
echo "wrote $csv $dat $OUT/preload.png"
