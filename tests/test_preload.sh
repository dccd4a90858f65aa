#!/usr/bin/env bash
# test_preload.sh -- libspm-preload.so under programs nobody here wrote
# (PMDK's pmempool) and the libpmemobj programs of bench/pmdk/, unmodified.
#
#   test_preload.sh LIBSPM_PRELOAD SPM_PMDK_BENCH PRELOAD_PMEM SPM_POOL SPM_BENCH PRELOAD_EDGE
#                   TMPDIR
#
#  1. pmempool creates, reports on and checks an object pool under the shim;
#     the pool is spm's (data, .meta, .key); pmempool info without the shim
#     cannot read it; its layout name (a canary) is in none of its files,
#     while the same pool made without the shim shows it (the grep can fail).
#     spm-pool reads it: info (layout preload), check, dump (PMEMOBJ at 4096).
#  2. Every workload of spm-pmdk-bench --check runs on every design safe for
#     unannotated programs with the results it has without the shim.
#  3. A run killed with kill -9 mid-transaction (after its pool holds the
#     empty structure, at a random time) recovers: spm's recovery, then
#     libpmemobj's at pmemobj_open, then the structure holds exactly the ops
#     its root counts, and pmempool check says consistent.  The same kills
#     on the unsafe design (forced) break at least one pool: the test sees it.
#  4. A libpmem program (pmem_map_file, pmem_memcpy_persist, pmem_msync,
#     pmem_unmap) writes and reads back through the shim, and pread sees the
#     plaintext; the file holds none of it.
#  5. Refusals leave files as they were: a design unsafe without annotations
#     (unless SPM_PRELOAD_FORCE=1), the wrong key, a matching file that holds
#     plaintext.  Files outside SPM_PRELOAD_PATHS pass through untouched.
#  6. unlink of a pool removes its .meta and .key.
#  7. Threads: spm-bench's libpmemobj design on 2 threads (a pool each, flushed
#     concurrently) under the shim; on sca the shim refuses its pools (so it
#     did serve them).
#  8. Edge cases (preload_edge.c): a program that exits with a pool open
#     leaves it clean; a pool descriptor closed behind the shim's back and
#     reused names the new file; O_RDONLY refuses writes; a mapping replaced
#     by MAP_FIXED is forgotten; F_DUPFD names the pool; CREATE|EXCL of an
#     existing file fails; an msync that starts before a pool persists its
#     lines (and without it they are lost); fortified read; statx (stat),
#     rm and mv of a pool; refusing a pool's design writes nothing.
# SPM_PRELOAD_KILLS sets the kills per workload in 3 (default 2).
set -euo pipefail

if [ $# -ne 7 ]; then
	echo "usage: $0 LIBSPM_PRELOAD SPM_PMDK_BENCH PRELOAD_PMEM SPM_POOL SPM_BENCH PRELOAD_EDGE" \
	     "TMPDIR" >&2
	exit 2
fi
shim=$1 bench=$2 pmemprog=$3 spmpool=$4 spmbench=$5 edge=$6 tmp=$7
unset SPM_CRASH SPM_CONF SPM_EVICT SPM_AUDIT SPM_POWERFAIL SPM_TEST_KNOBS SPM_PRELOAD_FORCE
command -v pmempool >/dev/null || { echo "FAIL [preload]: pmempool (pmdk-tools) is not installed" >&2; exit 1; }
mkdir -p "$tmp"
dir=$(mktemp -d "$tmp/preload.XXXXXX")
trap 'rm -rf "$dir"' EXIT
mkdir "$dir/spm" "$dir/plain"
export SPM_PRELOAD_PATHS="$dir/spm/*.obj:$dir/spm/*.pmem"
kills=${SPM_PRELOAD_KILLS:-2}

fail() {
	echo "FAIL [preload]: $*" >&2
	exit 1
}

# under CMD... -- CMD with the shim preloaded
under() {
	LD_PRELOAD=$shim "$@"
}

sums() {
	local f
	for f in "$@"; do [ -e "$f" ] && sha256sum "$f"; done
	return 0
}

# 1. pmempool
canary=spm-preload-canary-7f3a9c
p=$dir/spm/p.obj
under pmempool create obj --layout=$canary --size=32M "$p" || fail "pmempool create under the shim"
[ -f "$p.meta" ] && [ -f "$p.key" ] || fail "pmempool create made no spm pool"
info=$(under pmempool info "$p") || fail "pmempool info under the shim"
grep -q "Signature *: PMEMOBJ" <<<"$info" || fail "pmempool info: no PMEMOBJ header: $info"
grep -q "Layout *: $canary" <<<"$info" || fail "pmempool info: no layout $canary"
grep -q "size *: 33554432" <<<"$info" || fail "pmempool info: the program's size is not 32 MiB"
under pmempool check "$p" >/dev/null || fail "pmempool check under the shim"
before=$(sums "$p" "$p.meta" "$p.key")
if pmempool info "$p" >/dev/null 2>&1; then fail "pmempool info read the pool without the shim"; fi
[ "$before" = "$(sums "$p" "$p.meta" "$p.key")" ] || fail "pmempool info without the shim changed the files"
if grep -q -a "$canary" "$p" "$p.meta"; then fail "the layout name is in the pool's files"; fi
"$spmpool" info "$p" | grep -q "^layout *preload" || fail "spm-pool info: not layout preload"
"$spmpool" check "$p" | grep -q "heap: none" || fail "spm-pool check of a preload pool"
"$spmpool" dump "$p" --length 16 | grep -q "^00001000: 504d 454d 4f42 4a00" ||
	fail "spm-pool dump: no PMEMOBJ header at 4096"
[ "$before" = "$(sums "$p" "$p.meta" "$p.key")" ] || fail "spm-pool changed the files"
pmempool create obj --layout=$canary --size=32M "$dir/plain/p.obj" || fail "pmempool create outside the globs"
under pmempool create obj --layout=$canary --size=32M "$dir/plain/q.obj" ||
	fail "pmempool create outside the globs, under the shim"
for f in "$dir/plain/p.obj" "$dir/plain/q.obj"; do
	grep -q -a "$canary" "$f" || fail "$f: the canary is not in a plain pool: the grep cannot fail"
	[ ! -e "$f.meta" ] || fail "$f: a file outside SPM_PRELOAD_PATHS became an spm pool"
	pmempool info "$f" >/dev/null || fail "$f: not a plain PMDK pool"
done

# 2. bench/pmdk on every safe design, against its results without the shim
designs="supermem wt wt-cwc wt-xbank ideal colocated colocated-cc fca srl lame clame sc osiris
ccnvm-nods ccnvm dewrite dewrite-direct dewrite-parallel plain"
results() { # OUTPUT -- the lines without their timings
	sed -E 's/ops in [0-9.]+ s: [0-9]+ ops\/s//'
}
want=$(PMEM_IS_PMEM_FORCE=1 "$bench" --check all "$dir/plain/b.obj" 1500 | results)
[ "$(grep -c 'check ok' <<<"$want")" = 5 ] || fail "spm-pmdk-bench without the shim: $want"
for d in $designs; do
	got=$(SPM_CONF="design=$d" under "$bench" --check all "$dir/spm/b.obj" 1500 2>&1 | results) ||
		fail "design $d: spm-pmdk-bench failed: $got"
	[ "$got" = "$want" ] || fail "design $d: results differ from libpmemobj's own:
$got
--- without the shim:
$want"
	[ ! -e "$dir/spm/b.obj.meta" ] || fail "design $d: the pool's .meta outlived its unlink"
done

# 3. kill -9 mid-transaction
# killed WORKLOAD DESIGN -- run, kill -9 at a random time after its pool is
# made; then verify (libpmemobj's recovery over spm's) and pmempool check.
# 0 if the pool recovered whole.
killed() {
	local w=$1 d=$2 k=$dir/spm/k.obj out=$dir/kill.out
	rm -f "$k" "$k.meta" "$k.key" "$k.key.tcb"
	SPM_CONF="design=$d" SPM_PRELOAD_FORCE=1 LD_PRELOAD=$shim \
		"$bench" --announce "$w" "$k" 100000 >"$out" 2>&1 &
	local pid=$!
	while ! grep -q created "$out"; do
		kill -0 $pid 2>/dev/null || fail "$w on $d ended before it was killed: $(cat "$out")"
		sleep 0.02
	done
	sleep "0.$((RANDOM % 4))$((RANDOM % 10))"
	kill -9 $pid
	wait $pid 2>/dev/null || true
	SPM_PRELOAD_FORCE=1 under "$bench" --verify "$w" "$k" >"$out" 2>&1 &&
		SPM_PRELOAD_FORCE=1 under pmempool check "$k" >>"$out" 2>&1
}
for w in btree hashmap queue; do
	for i in $(seq "$kills"); do
		killed $w supermem || fail "$w killed on supermem did not recover: $(cat "$dir/kill.out")"
	done
done
broken=0
for w in btree hashmap queue; do
	killed $w unsafe || broken=$((broken + 1))
done
[ $broken -gt 0 ] || fail "the unsafe design survived every kill: the test cannot see a broken design"

# 4. a libpmem program
m=$dir/spm/m.pmem
under "$pmemprog" write "$m" 8388608 spm-preload-libpmem-canary || fail "libpmem program: write"
[ -f "$m.meta" ] || fail "pmem_map_file made no spm pool"
under "$pmemprog" read "$m" spm-preload-libpmem-canary || fail "libpmem program: read back"
if grep -q -a spm-preload-libpmem-canary "$m" "$m.meta"; then fail "the libpmem text is in the files"; fi
if "$pmemprog" read "$m" spm-preload-libpmem-canary 2>/dev/null; then
	fail "the libpmem text read back without the shim"
fi

# 5. refusals
r=$dir/spm/r.obj
if SPM_CONF=design=sca under pmempool create obj --size=32M "$r" 2>"$dir/err"; then
	fail "design sca accepted under the shim"
fi
grep -q "SPM_PRELOAD_FORCE" "$dir/err" || fail "no message naming SPM_PRELOAD_FORCE: $(cat "$dir/err")"
[ ! -e "$r.meta" ] || fail "a refused design left a pool"
SPM_CONF=design=sca SPM_PRELOAD_FORCE=1 under pmempool create obj --size=32M "$r" ||
	fail "design sca refused with SPM_PRELOAD_FORCE=1"
if under pmempool info "$r" >/dev/null 2>"$dir/err"; then fail "an sca pool opened without the force"; fi
cp "$p.key" "$dir/p.key.saved"
under pmempool create obj --size=32M "$dir/spm/other.obj" || fail "a second pool"
cp "$dir/spm/other.obj.key" "$p.key"
before=$(sums "$p" "$p.meta" "$p.key")
if under pmempool info "$p" >/dev/null 2>"$dir/err"; then fail "the wrong key was accepted"; fi
grep -q "key" "$dir/err" || fail "no message about the key: $(cat "$dir/err")"
[ "$before" = "$(sums "$p" "$p.meta" "$p.key")" ] || fail "a refused key changed the files"
cp "$dir/p.key.saved" "$p.key"
under pmempool check "$p" >/dev/null || fail "the pool does not open under its own key again"
t=$dir/spm/text.obj
head -c 8M /dev/zero >"$t"
echo "plaintext that is not a pool" | dd of="$t" conv=notrunc status=none
before=$(sums "$t")
if under pmempool info "$t" >/dev/null 2>"$dir/err"; then fail "a plaintext file was read as a pool"; fi
if under "$pmemprog" read "$t" x 2>>"$dir/err"; then fail "a plaintext file was mapped"; fi
grep -q "does not import plaintext" "$dir/err" || fail "no message about plaintext: $(cat "$dir/err")"
[ "$before" = "$(sums "$t")" ] && [ ! -e "$t.meta" ] || fail "a refused plaintext file was changed"

# 6. unlink
under pmempool rm "$p" || fail "pmempool rm"
for f in "$p" "$p.meta" "$p.key"; do [ ! -e "$f" ] || fail "$f outlived pmempool rm"; done

# 7. threads
mkdir "$dir/spm/mt"
export SPM_PRELOAD_PATHS="$dir/spm/mt/*"
under "$spmbench" --designs pmdk --workloads hashmap,btree,queue --threads 2 --ops 3000 \
	--dir "$dir/spm/mt" >"$dir/out" 2>&1 || fail "spm-bench pmdk on 2 threads under the shim: $(cat "$dir/out")"
if SPM_CONF=design=sca under "$spmbench" --designs pmdk --workloads hashmap --threads 2 --ops 100 \
	--dir "$dir/spm/mt" >"$dir/out" 2>&1; then
	fail "spm-bench's pools were not the shim's (sca was not refused)"
fi
grep -q "spm-preload: .*design sca" "$dir/out" || fail "no refusal of sca from the shim: $(cat "$dir/out")"

# 8. edge cases
export SPM_PRELOAD_PATHS="$dir/spm/*.obj:$dir/spm/*.pmem"
e=$dir/spm/e.obj
under pmempool create obj --size=32M "$e" || fail "pmempool create for the edge cases"
SPM_CONF=design=plain under pmempool create obj --size=32M "$dir/spm/plain.obj" || fail "a plain pool"
# the plain pool first: OpenSSL's first use comes after the shim's first pool
under "$edge" exit "$dir/spm/plain.obj" "$e" || fail "exit with pools open"
for f in "$e" "$dir/spm/plain.obj"; do
	"$spmpool" info "$f" | grep -q "^state *clean" || fail "$f, open at exit, was not closed cleanly"
done
echo "not a pool" >"$dir/plain/other.txt"
under "$edge" stale "$e" "$dir/plain/other.txt" || fail "a reused descriptor"
under "$edge" rdonly "$e" || fail "O_RDONLY"
under "$edge" fixed "$e" || fail "MAP_FIXED over a pool mapping"
under "$edge" dupfd "$e" || fail "F_DUPFD"
head -c 8M /dev/zero >"$dir/spm/x.pmem"
under "$edge" excl "$dir/spm/x.pmem" || fail "CREATE|EXCL"
[ ! -e "$dir/spm/x.pmem.meta" ] || fail "CREATE|EXCL made a pool of an existing file"
s=$dir/spm/s.pmem
under "$pmemprog" write "$s" 8388608 first-text || fail "libpmem program: write"
under "$edge" span "$s" span-text || fail "msync from before a pool"
under "$edge" read "$s" span-text || fail "an msync that starts before a pool lost its lines"
under "$edge" lost "$s" lost-text || fail "a store and _exit"
under "$edge" read "$s" span-text || fail "a store never flushed survived: the span check cannot fail"
[ "$(under stat -c %s "$e")" = 33554432 ] || fail "stat (statx) of a pool: $(under stat -c %s "$e")"
under mv "$e" "$dir/spm/moved.obj" || fail "mv of a pool"
[ -f "$dir/spm/moved.obj.meta" ] && [ ! -e "$e.meta" ] || fail "mv left the pool's .meta behind"
under pmempool check "$dir/spm/moved.obj" >/dev/null || fail "the moved pool does not open"
under rm "$dir/spm/moved.obj" || fail "rm of a pool"
[ ! -e "$dir/spm/moved.obj.meta" ] && [ ! -e "$dir/spm/moved.obj.key" ] || fail "rm left the pool's .meta"
u=$dir/spm/u.obj
SPM_CONF=design=unsafe SPM_PRELOAD_FORCE=1 under pmempool create obj --size=32M "$u" ||
	fail "an unsafe pool, forced"
before=$(sums "$u" "$u.meta" "$u.key")
if under pmempool info "$u" >/dev/null 2>&1; then fail "an unsafe pool opened without the force"; fi
[ "$before" = "$(sums "$u" "$u.meta" "$u.key")" ] || fail "refusing a pool's design changed its files"
echo "preload: ok"
