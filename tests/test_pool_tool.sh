#!/usr/bin/env bash
# test_pool_tool.sh -- spm-pool's commands.
#
#   test_pool_tool.sh SPM_POOL EXAMPLES_BINDIR TMPDIR
#
# create makes a pool; info, check, dump and stat on a clean pool and on a
# dirty one (an example killed by SPM_CRASH=after:N) leave the three files
# (and <key>.tcb) byte for byte as they were, and their temporary copies
# are removed; check of a dirty pool says what recovery would do; dump
# --offset/--length/--raw shows what spm-hello wrote; a ccnvm pool with one
# byte of its data file flipped is reported by check (exit 5, the line
# named) and refused by info (exit 27); the wrong key exits 15, a file that
# is not a pool 10, a truncated one 11, usage errors 2, --help 0; rekey
# re-encrypts a pool under a new key (the old key file then exits 15) and
# refuses a dirty one (20).
set -euo pipefail

if [ $# -ne 3 ]; then
	echo "usage: $0 SPM_POOL EXAMPLES_BINDIR TMPDIR" >&2
	exit 2
fi
tool=$1 bindir=$2 tmp=$3
unset SPM_CRASH SPM_CONF SPM_EVICT SPM_AUDIT SPM_POWERFAIL SPM_TEST_KNOBS
mkdir -p "$tmp"
dir=$(mktemp -d "$tmp/pool-tool.XXXXXX")
trap 'rm -rf "$dir"' EXIT
# the commands' private copies go here: none may be left behind
export TMPDIR=$dir/copies
mkdir "$TMPDIR"
hello=$bindir/spm-hello btree=$bindir/spm-btree

fail() {
	echo "FAIL [pool tool]: $*" >&2
	exit 1
}

# sums P -- a digest of the pool's files (and its .tcb if any).
sums() {
	local f
	for f in "$1" "$1.meta" "$1.key" "$1.key.tcb"; do
		if [ -e "$f" ]; then md5sum <"$f"; fi
	done
}

# expect_rc WANT WHAT CMD... -- CMD exits WANT; its stdout+stderr in $out.
expect_rc() {
	local want=$1 what=$2 rc=0
	shift 2
	out=$("$@" 2>&1) || rc=$?
	[ "$rc" = "$want" ] || fail "$what: exit $rc, want $want: $out"
}

# read_only WHAT POOL CMD... -- CMD exits 0 and changes no file of POOL.
read_only() {
	local what=$1 pool=$2 before
	shift 2
	before=$(sums "$pool")
	expect_rc 0 "$what" "$@"
	[ "$(sums "$pool")" = "$before" ] || fail "$what changed the pool's files"
	[ -z "$(ls -A "$TMPDIR")" ] || fail "$what left its copy: $(ls -A "$TMPDIR")"
}

# ---- usage ------------------------------------------------------------------
expect_rc 0 "--help" "$tool" --help
grep -q "spm-rekey" <<<"$out" || fail "--help does not point at spm-rekey"
grep -q "spm-pool rekey POOL" <<<"$out" || fail "--help lacks rekey"
grep -q "Exit status" <<<"$out" || fail "--help lists no exit status"
expect_rc 2 "no arguments" "$tool"
expect_rc 2 "unknown command" "$tool" frobnicate "$dir/x"
grep -q "unknown command frobnicate" <<<"$out" || fail "unknown command not named: $out"
expect_rc 2 "unknown flag" "$tool" info "$dir/x" --bogus
grep -q -- "--bogus" <<<"$out" || fail "unknown flag not named: $out"
expect_rc 2 "dump bad offset" "$tool" dump "$dir/x" --offset zz
expect_rc 2 "dump without offset value" "$tool" dump "$dir/x" --offset
expect_rc 2 "create bad size" "$tool" create "$dir/x" 12q
expect_rc 2 "create no size" "$tool" create "$dir/x"
expect_rc 2 "too many arguments" "$tool" info "$dir/x" a b
expect_rc 2 "rekey too many arguments" "$tool" rekey "$dir/x" a b
expect_rc 3 "rekey missing pool" "$tool" rekey "$dir/nothing"
expect_rc 3 "missing pool" "$tool" info "$dir/nothing"
[ ! -e "$dir/x" ] || fail "a usage error made a file"

# ---- create, info, check, stat, dump on a clean pool ------------------------
p=$dir/clean
expect_rc 0 "create" "$tool" create "$p" 8m "design=sca;layout=spm-hello"
[ "$(stat -c %s "$p")" = 8388608 ] || fail "create: size $(stat -c %s "$p")"
expect_rc 18 "create bad option" "$tool" create "$dir/y" 8m "no_such=1"
[ ! -e "$dir/y" ] || fail "a refused create left a file"
expect_rc 0 "hello" "$hello" "$p"
expect_rc 0 "hello again" "$hello" "$p"
read_only "info clean" "$p" "$tool" info "$p"
for want in "design  *sca" "state  *clean" "pool size  *8388608" "lines  *131072" \
	"key bits  *128" "root size  *64" "heap allocated  *64 in 1 objects" "epoch  *[1-9]" \
	"queue capacity" "counters  *mono" "data file bytes  *8388608" "meta file bytes" \
	"key file bytes" "metadata overhead" "heap free" "layout  *spm-hello"; do
	grep -q "$want" <<<"$out" || fail "info clean lacks \"$want\": $out"
done
read_only "check clean" "$p" "$tool" check "$p"
grep -q "recovery: none needed" <<<"$out" || fail "check clean: $out"
grep -q "ok$" <<<"$out" || fail "check clean not ok: $out"
read_only "stat clean" "$p" "$tool" stat "$p"
[ "$(wc -l <<<"$out")" -ge 60 ] || fail "stat: too few statistics: $out"
grep -q "^tx.committed 0$" <<<"$out" || fail "stat lacks tx.committed: $out"
grep -q "^recovery.drained 0$" <<<"$out" || fail "stat lacks recovery.drained: $out"
# dump: the root's offset is in the heap header (4096 + 72), the root holds
# spm-hello's run count and message
read_only "dump header" "$p" bash -o pipefail -c '"$0" "$@" | od -An -tx1' "$tool" dump \
	"$p" --offset 4168 --length 16 --raw
root=$("$tool" dump "$p" --offset 4168 --length 8 --raw | od -An -t u8 | tr -d ' ')
size=$("$tool" dump "$p" --offset 4176 --length 8 --raw | od -An -t u8 | tr -d ' ')
[ "$size" = 64 ] || fail "root size in the header: $size"
runs=$("$tool" dump "$p" --offset "$root" --length 8 --raw | od -An -t u8 | tr -d ' ')
[ "$runs" = 2 ] || fail "dump: runs $runs, want 2"
msg=$("$tool" dump "$p" --offset $((root + 8)) --length 16 --raw)
[ "$msg" = "hello from run 2" ] || fail "dump --raw: \"$msg\""
read_only "dump hex" "$p" "$tool" dump "$p" --offset $((root + 8)) --length 18
want=$(printf '%08x: 6865 6c6c 6f20 6672 6f6d 2072 756e 2032  hello from run 2' $((root + 8)))
[ "$(head -1 <<<"$out")" = "$want" ] || fail "dump hex: $(head -1 <<<"$out"), want $want"
[ "$(wc -l <<<"$out")" = 2 ] || fail "dump hex: $(wc -l <<<"$out") lines for 18 bytes"
n=$("$tool" dump "$p" --raw | wc -c)
[ "$n" = $((8388608 - 4096)) ] || fail "dump --raw of the view: $n bytes"
expect_rc 2 "dump below the view" "$tool" dump "$p" --offset 0 --length 8
expect_rc 2 "dump past the end" "$tool" dump "$p" --offset 8388600 --length 64
[ -z "$(ls -A "$TMPDIR")" ] || fail "a refused dump left its copy"

# ---- a dirty pool -------------------------------------------------------------
d=$dir/dirty
expect_rc 0 "btree create" "$btree" create "$d" "design=sca"
rc=0
SPM_CRASH=after:3000 "$btree" run "$d" 500 >/dev/null 2>&1 || rc=$?
[ "$rc" = 137 ] || fail "SPM_CRASH=after:3000 run: exit $rc, want 137 (killed)"
read_only "info dirty" "$d" "$tool" info "$d"
grep -q "state  *dirty" <<<"$out" || fail "info dirty: $out"
grep -q "heap allocated.*after recovery, on a copy" <<<"$out" || fail "info dirty heap: $out"
read_only "check dirty" "$d" "$tool" check "$d"
grep -q "recovery would: drained [0-9]* dropped [0-9]* rolled_back [0-9]* reencrypted" \
	<<<"$out" || fail "check dirty: no recovery line: $out"
grep -q "ok$" <<<"$out" || fail "check dirty not ok: $out"
read_only "stat dirty" "$d" "$tool" stat "$d"
grep -q "^recovery.drained [0-9]" <<<"$out" || fail "stat dirty: $out"
read_only "dump dirty" "$d" "$tool" dump "$d" --offset 4096 --length 64
grep -q "SPMHEAP" <<<"$out" || fail "dump dirty: no heap header: $out"
read_only "info dirty again" "$d" "$tool" info "$d"
grep -q "state  *dirty" <<<"$out" || fail "a read-only command recovered the pool"
# the example's own check agrees that it is recoverable
expect_rc 0 "btree check" "$btree" check "$d"

# ---- bad input ----------------------------------------------------------------
o=$dir/other
expect_rc 0 "create other" "$tool" create "$o" 4m
for cmd in info check stat dump; do
	before=$(sums "$p")
	expect_rc 15 "$cmd wrong key" "$tool" "$cmd" "$p" "key_file=$o.key"
	grep -q "wrong key" <<<"$out" || fail "$cmd wrong key: $out"
	[ "$(sums "$p")" = "$before" ] || fail "$cmd wrong key changed the files"
done
expect_rc 25 "info layout" "$tool" info "$p" "layout=other"
expect_rc 18 "check bad option" "$tool" check "$p" "no_such=1"
head -c 1048576 /dev/urandom >"$dir/junk"
expect_rc 10 "info not a pool" "$tool" info "$dir/junk"
expect_rc 10 "check not a pool" "$tool" check "$dir/junk"
cp "$o" "$dir/trunc" && cp "$o.meta" "$dir/trunc.meta" && cp -p "$o.key" "$dir/trunc.key"
truncate -s 2m "$dir/trunc"
expect_rc 11 "info truncated" "$tool" info "$dir/trunc"
expect_rc 11 "check truncated" "$tool" check "$dir/trunc"
[ "$(stat -c %s "$dir/trunc")" = 2097152 ] || fail "a truncated pool was changed"
[ -z "$(ls -A "$TMPDIR")" ] || fail "a refusal left its copy"

# ---- rekey: a new key ---------------------------------------------------------
cp -p "$p.key" "$dir/saved.key"
key_before=$(od -An -tx1 -j16 -N32 "$p.key")
expect_rc 0 "rekey" "$tool" rekey "$p"
grep -q "re-encrypted under a new key" <<<"$out" || fail "rekey: $out"
[ "$(od -An -tx1 -j16 -N32 "$p.key")" != "$key_before" ] || fail "rekey kept the key"
root=$("$tool" dump "$p" --offset 4168 --length 8 --raw | od -An -t u8 | tr -d ' ')
msg=$("$tool" dump "$p" --offset $((root + 8)) --length 16 --raw)
[ "$msg" = "hello from run 2" ] || fail "after rekey: \"$msg\""
expect_rc 15 "the old key after rekey" "$tool" info "$p" "key_file=$dir/saved.key"
expect_rc 0 "hello after rekey" "$hello" "$p"
ls "$dir" | grep -q "clean\.new\|clean\.meta\.new\|clean\.key\.new" &&
	fail "rekey left a temporary: $(ls "$dir")"
d2=$dir/dirty2
expect_rc 0 "btree create 2" "$btree" create "$d2" "design=sca"
rc=0
SPM_CRASH=after:3000 "$btree" run "$d2" 500 >/dev/null 2>&1 || rc=$?
[ "$rc" = 137 ] || fail "SPM_CRASH=after:3000 run 2: exit $rc, want 137 (killed)"
before=$(sums "$d2")
expect_rc 20 "rekey dirty" "$tool" rekey "$d2"
grep -q "not closed cleanly" <<<"$out" || fail "rekey dirty: $out"
[ "$(sums "$d2")" = "$before" ] || fail "a refused rekey changed the dirty pool"

# ---- a tampered integrity pool -----------------------------------------------
t=$dir/tamper
expect_rc 0 "hello ccnvm" "$hello" "$t" "design=ccnvm"
read_only "check ccnvm clean" "$t" "$tool" check "$t"
grep -q "integrity: every line" <<<"$out" || fail "check ccnvm: $out"
root=$("$tool" dump "$t" --offset 4168 --length 8 --raw | od -An -t u8 | tr -d ' ')
# one byte of the root's line in the data file flipped
b=$(od -An -t u1 -j $((root + 3)) -N 1 "$t" | tr -d ' ')
printf "$(printf '\\%03o' $(((b ^ 1) & 255)))" |
	dd of="$t" bs=1 seek=$((root + 3)) conv=notrunc status=none
before=$(sums "$t")
expect_rc 5 "check tampered" "$tool" check "$t"
grep -q "tampered: [1-9]" <<<"$out" || fail "check tampered: $out"
grep -q "data line or its MAC at offset $root" <<<"$out" || fail "check tampered line: $out"
expect_rc 27 "info tampered" "$tool" info "$t"
expect_rc 27 "dump tampered" "$tool" dump "$t" --length 64
[ "$(sums "$t")" = "$before" ] || fail "a command changed the tampered pool"
[ -z "$(ls -A "$TMPDIR")" ] || fail "a tampered pool's copy was left"
echo "pool tool: ok"
