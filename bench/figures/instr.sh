#!/usr/bin/env bash
# instr.sh -- instructions per operation under callgrind (deterministic, unlike wall time on
# this VM): spm-bench-native at OPS and 2*OPS operations per design and workload, the
# difference over OPS, so that creating, prefaulting and closing the pool cancel out.
# DESIGNS (default "sca supermem pmdk"; a design may carry options: sca:channels=1),
# WORKLOADS (default hashmap), SET (spm options for every spm design, default
# profile=heap).  Writes $OUT/instr.csv (design,workload,instr_per_op) and prints it.
# libpmemobj's row is the pmdk design.  spm-bench re-executes itself with
# PMEM_IS_PMEM_FORCE=1 unless it is set; under valgrind it must be set here, and
# PMEM_NO_FLUSH=1 keeps libpmemobj's flushes out of a run that does not measure them.
workloads=${WORKLOADS:-hashmap} # (common.sh sets WORKLOADS for the figures)
. "$(dirname "$0")/common.sh"
BENCH_NATIVE=$(find_bench_native)
OPS=${OPS:-20000}
DESIGNS=${DESIGNS:-sca supermem pmdk}
SET=${SET:-profile=heap}
command -v valgrind >/dev/null || { echo "instr.sh: needs valgrind" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# instr N DESIGN WORKLOAD -- the instructions callgrind counts in one run of N operations
instr() {
	local d=${2%%:*} opts=() extra
	if [ "$d" != pmdk ]; then
		for extra in ${SET//;/ } $([ "$2" != "$d" ] && echo "${2#*:}" | tr ':' ' '); do
			opts+=(--set "$extra")
		done
	fi
	PMEM_IS_PMEM_FORCE=1 PMEM_NO_FLUSH=1 SPM_CONF= valgrind --tool=callgrind \
		--callgrind-out-file="$tmp/cg.out" "$BENCH_NATIVE" --designs "$d" \
		--workloads "$3" --ops "$1" --footprint 0 --dir "$tmp" "${opts[@]}" \
		>/dev/null 2>"$tmp/err" || { cat "$tmp/err" >&2; exit 1; }
	awk '/^summary:/ { print $2 }' "$tmp/cg.out"
	rm -f "$tmp/cg.out"
}

echo "design,workload,instr_per_op" > "$tmp/instr.csv"
for w in $workloads; do
	for d in $DESIGNS; do
		a=$(instr "$OPS" "$d" "$w")
		b=$(instr $((2 * OPS)) "$d" "$w")
		echo "$d,$w,$(( (b - a) / OPS ))" >> "$tmp/instr.csv"
	done
done
mv "$tmp/instr.csv" "$OUT/instr.csv"
column -s, -t "$OUT/instr.csv"
