#!/usr/bin/env bash
# prefault.sh -- what prefaulting the pools does to the wall-clock comparison with libpmemobj:
# PAIRS pairs of runs, --prefault 1 then --prefault 0 in each pair (spm's prefault=1 and
# libpmemobj's prefault.at_create together), each design's rate over libpmemobj's in the
# same run; medians and ranges over the pairs (prefault.dat; the runs in prefault.csv).
# Wall clock, so it moves between runs; not part of all.sh.  Runs spm-bench-native, the
# uninstrumented build (write-only model), so that the instrumentation's own cost never
# enters a comparison with libpmemobj, with --footprint 0 (libpmemobj's structures start empty).
. "$(dirname "$0")/common.sh"
BENCH_NATIVE=$(find_bench_native)
OPS=${OPS:-200000}
PAIRS=${PAIRS:-5}
csv=$OUT/prefault.csv dat=$OUT/prefault.dat
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for i in $(seq "$PAIRS"); do
	for p in 1 0; do
		bench_native --designs plain,fca,sca,pmdk --workloads queue,hashmap,btree --ops "$OPS" \
			--footprint 0 --prefault "$p" --csv "$tmp/$p-$i.csv" >/dev/null
	done
done
# one CSV: the run's pair and prefault setting first
{
	printf 'pair,prefault,'; head -n 1 "$tmp/1-1.csv"
	for i in $(seq "$PAIRS"); do
		for p in 1 0; do tail -n +2 "$tmp/$p-$i.csv" | sed "s/^/$i,$p,/"; done
	done
} > "$csv"

# rate / libpmemobj's rate in the same run; median [min-max] over the pairs (mawk: no asort)
awk "$AWK_COLS"'
{ r[$col["pair"], $col["prefault"], $col["workload"], $col["design"]] = $col["ops"] * 1e9 / $col["wall_ns"]
  if ($col["pair"] > np) np = $col["pair"] }
function med(v, n,    i, j, t) {
	for (i = 2; i <= n; i++)
		for (j = i; j > 1 && v[j - 1] > v[j]; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
	return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
}
END {
	split("queue hashmap btree", W, " "); split("plain fca sca", D, " ")
	print "# ratio to libpmemobj in the same run, median [min-max] of " np " pairs; then libpmemobj ops/s"
	print "workload prefault plain fca sca pmdk_ops_s"
	for (w = 1; w <= 3; w++)
		for (p = 1; p >= 0; p--) {
			printf "%s %d", W[w], p
			for (d = 1; d <= 3; d++) {
				for (i = 1; i <= np; i++) v[i] = r[i, p, W[w], D[d]] / r[i, p, W[w], "pmdk"]
				m = med(v, np)
				printf " %.2f[%.2f-%.2f]", m, v[1], v[np]
			}
			for (i = 1; i <= np; i++) v[i] = r[i, p, W[w], "pmdk"]
			printf " %.0f\n", med(v, np)
		}
}' "$csv" > "$dat"
column -t "$dat" | grep -v "^#"
head -n 1 "$dat"
echo "wrote $dat and $csv" >&2
