#!/bin/sh
# modeled.sh SPM_BENCH GOLDEN WORK [--set k=v]... -- spm-bench's modeled
# results at one channel against GOLDEN (tests/golden/modeled-1ch.csv, made
# with the build before channels, commit 9f2496c, by
#   spm-bench --designs plain,sca,fca,supermem,lame,ccnvm,dewrite
#             --workloads array,queue,hashmap,btree --ops 2000 --csv F --dir D
#   awk -v mode=make -f modeled.awk F > modeled-1ch.csv
# on an instrumented RelWithDebInfo build with GCC): every modeled column
# equal, row by row.  Extra arguments go to spm-bench (a --set aes_ns=41
# shows that the comparison sees a change).
set -eu
bench=$1 golden=$2 work=$3
shift 3
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$work"
csv=$work/modeled-1ch.csv
rm -f "$csv"
if ! "$bench" --designs plain,sca,fca,supermem,lame,ccnvm,dewrite \
	--workloads array,queue,hashmap,btree --ops 2000 --set channels=1 "$@" \
	--csv "$csv" --dir "$work" >"$work/modeled-1ch.out" 2>&1; then
	cat "$work/modeled-1ch.out"
	echo "modeled.sh: spm-bench failed"
	exit 1
fi
if ! awk -v mode=compare -f "$here/modeled.awk" "$golden" "$csv"; then
	echo "modeled.sh: modeled results differ from $golden"
	exit 1
fi
echo "modeled.sh: $(($(wc -l <"$golden") - 1)) rows, every modeled column as in $golden"
