# common.sh -- what the figure scripts share: where spm-bench and the output are, gnuplot, CSV columns, sweeps.
# Sourced by figNN.sh.  Environment: SPM_BENCH (the binary), SPM_BENCH_NATIVE (the
# uninstrumented one, for the wall-clock scripts), OUT (default doc/figures), OPS
# (operations per core, each script has its own default), BENCH_ARGS (extra flags).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
OUT=${OUT:-$ROOT/doc/figures}
mkdir -p "$OUT"

# find_built REL VAR -- the file REL of a Release build (build-rel) if there is one, else of
# build; the environment variable VAR, if set, names it instead.
find_built() {
	if [ -n "${!2:-}" ]; then echo "${!2}"; return; fi
	for b in "$ROOT/build-rel/$1" "$ROOT/build/$1"; do
		if [ -e "$b" ]; then echo "$b"; return; fi
	done
	echo "$(basename "$1") not found: build it (cmake -B build-rel -DCMAKE_BUILD_TYPE=Release" \
	     "&& cmake --build build-rel) or set $2" >&2
	exit 1
}

# find_bench -- spm-bench of a Release build if there is one.
find_bench() {
	find_built bench/spm-bench SPM_BENCH
}
BENCH=$(find_bench)

# find_bench_native -- spm-bench-native (the same program uninstrumented: the write-only
# model, no core model) of a Release build if there is one.  The scripts that compare wall
# clock with libpmemobj run it, so that the instrumentation's own cost never enters them.
find_bench_native() {
	find_built bench/spm-bench-native SPM_BENCH_NATIVE
}

# bench -- spm-bench with the caller's flags and BENCH_ARGS.
bench() {
	# shellcheck disable=SC2086
	"$BENCH" "$@" ${BENCH_ARGS:-}
}

# bench_native -- spm-bench-native with the caller's flags and BENCH_ARGS (wall clock); the
# script sets BENCH_NATIVE=$(find_bench_native) first.
bench_native() {
	# shellcheck disable=SC2086
	"${BENCH_NATIVE:?set by find_bench_native}" "$@" ${BENCH_ARGS:-}
}

# sweep_add ONE ALL COLUMNS VALUES -- the rows of run ONE appended to ALL, with COLUMNS (comma
# separated names) holding VALUES; ALL's header is ONE's, made on the first call.  The sweep
# scripts collect their runs in a scratch directory and move ALL into place at the end, so a
# failed run leaves the committed CSV as it was.
sweep_add() {
	if [ ! -s "$2" ]; then head -1 "$1" | sed "s/\$/,$3/" > "$2"; fi
	awk -v v="$4" 'NR > 1 { print $0 "," v }' "$1" >> "$2"
}

# terminal -- pngcairo if this gnuplot has it, else png.
terminal() {
	if gnuplot -e 'set terminal' 2>&1 | grep -q pngcairo; then
		echo "pngcairo enhanced font 'Sans,10'"
	else
		echo "png"
	fi
}
TERM_PNG=$(terminal)

# AWK_COLS -- awk prologue: col["name"] = index, from the CSV header.
AWK_COLS='BEGIN { FS = "," } NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }'

# gmean_note -- the averages of the figures are geometric means over the workloads.
WORKLOADS="array queue hashmap btree rbtree"

# GP_HISTOGRAM -- gnuplot clustered bars with the legend below (Figures 12, 14, sm13-sm15).
GP_HISTOGRAM='set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set key below horizontal width 3'

# GP_STYLE -- gnuplot line types 1-6: plain ideal colocated colocated-cc fca sca, in every figure.
GP_STYLE='
set linetype 1 lc rgb "#000000" lw 2 pt 7
set linetype 2 lc rgb "#1b9e77" lw 2 pt 5
set linetype 3 lc rgb "#7570b3" lw 2 pt 9
set linetype 4 lc rgb "#66a6d9" lw 2 pt 11
set linetype 5 lc rgb "#d95f02" lw 2 pt 13
set linetype 6 lc rgb "#0b4fa8" lw 2 pt 7
set linetype 7 lc rgb "#e7298a" lw 2 pt 3
set linetype 8 lc rgb "#666666" lw 2 pt 2
'
