#!/usr/bin/env bash
# test_examples_cli.sh -- the examples' command lines against misuse.
#
#   test_examples_cli.sh BINDIR TMPDIR
#
# Layouts: spm-hello on a B-tree pool, and one example on another's pool,
# exit 25 and leave the three files byte for byte as they were (a dirty pool
# too: its recovery must not run); each still opens its own.  check after a
# kill -9 prints, after its ok line, the line of what recovery did; a clean
# check prints none.  Usage errors exit 2 naming the bad flag or argument (--dup
# above 100, negative or no number among them); --help exits 0 with the usage on
# stdout and nothing on stderr.  The test knobs: SPM_CONF=ctr_recovery=none and
# SPM_CRASH=point:<typo> exit 18 (the typo's message names the points); with
# SPM_TEST_KNOBS=1 the knob is taken.
set -euo pipefail

if [ $# -ne 2 ]; then
	echo "usage: $0 BINDIR TMPDIR" >&2
	exit 2
fi
bindir=$1 tmp=$2
unset SPM_CRASH SPM_CONF SPM_EVICT SPM_AUDIT SPM_POWERFAIL SPM_TEST_KNOBS
mkdir -p "$tmp"
dir=$(mktemp -d "$tmp/examples-cli.XXXXXX")
trap 'rm -rf "$dir"' EXIT
btree=$bindir/spm-btree queue=$bindir/spm-queue hello=$bindir/spm-hello

fail() {
	echo "FAIL [examples cli]: $*" >&2
	exit 1
}

# sums P -- a digest of the pool's three files.
sums() { cat "$1" "$1.meta" "$1.key" | md5sum; }

# expect_rc WANT WHAT CMD... -- CMD exits WANT; its stdout+stderr in $out.
expect_rc() {
	local want=$1 what=$2 rc=0
	shift 2
	out=$("$@" 2>&1) || rc=$?
	[ "$rc" = "$want" ] || fail "$what: exit $rc, expected $want: $out"
}

# --- layouts ----------------------------------------------------------------
p=$dir/bt
"$btree" create "$p" "design=sca" --size 8m >/dev/null || fail "create a B-tree pool"
"$btree" run "$p" 200 --seed 1 >/dev/null || fail "run on the B-tree pool"
before=$(sums "$p")
expect_rc 25 "spm-hello on a B-tree pool" "$hello" "$p"
[[ "$out" == *"layout=spm-btree"* && "$out" == *"layout=spm-hello"* ]] ||
	fail "spm-hello's refusal does not name both layouts: $out"
[ "$(sums "$p")" = "$before" ] || fail "spm-hello changed a B-tree pool"
expect_rc 25 "spm-queue check of a B-tree pool" "$queue" check "$p"
expect_rc 25 "spm-queue run on a B-tree pool" "$queue" run "$p" 10
[ "$(sums "$p")" = "$before" ] || fail "spm-queue changed a B-tree pool"
expect_rc 0 "spm-btree check of its own pool" "$btree" check "$p"
[[ "$out" =~ ^ok\ ops=200\ items=[0-9]+$ ]] ||
	fail "a clean check prints more than its ok line: $out"
h=$dir/hello
expect_rc 0 "spm-hello creates its pool" "$hello" "$h"
expect_rc 0 "spm-hello opens its pool" "$hello" "$h"
[[ "$out" == "hello from run 2 "* ]] || fail "spm-hello's second run: $out"
before=$(sums "$h")
expect_rc 25 "spm-btree check of a hello pool" "$btree" check "$h"
[ "$(sums "$h")" = "$before" ] || fail "spm-btree changed a hello pool"

# --- a dirty pool: refused before recovery; check prints what recovery did --
k=$dir/kill
"$btree" create "$k" "design=sca" --size 16m >/dev/null
fifo=$dir/fifo
mkfifo "$fifo"
"$btree" run "$k" 100000000 --seed 2 --progress 50 >"$fifo" 2>/dev/null &
pid=$!
exec 3<"$fifo"
done_ops=0
while read -r -t 60 -u 3 line; do
	case $line in "progress ops="*) done_ops=${line#progress ops=} ;; esac
	[ "$done_ops" -ge 300 ] && break
done
kill -9 "$pid" 2>/dev/null || true
rc=0
{ wait "$pid"; } 2>/dev/null || rc=$?
exec 3<&-
[ "$rc" = 137 ] || fail "kill -9: the run ended with $rc"
before=$(sums "$k")
expect_rc 25 "spm-hello on a dirty B-tree pool" "$hello" "$k"
expect_rc 25 "spm-queue check of a dirty B-tree pool" "$queue" check "$k"
[ "$(sums "$k")" = "$before" ] || fail "a refused open of a dirty pool changed it"
expect_rc 0 "check after kill -9" "$btree" check "$k"
[[ "$out" =~ ^ok\ ops=[0-9]+\ items=[0-9]+$'\n'recovered:\ [0-9]+\ queue\ entries\ drained,\ [0-9]+\ dropped\;\ [0-9]+\ transactions\ rolled\ back\;\ [0-9]+\ lines\ re-encrypted$ ]] ||
	fail "check after kill -9 prints no recovery line: $out"
expect_rc 0 "check after that check" "$btree" check "$k"
[[ "$out" != *recovered* ]] || fail "a clean check prints a recovery line: $out"

# --- usage errors name the flag; --help -------------------------------------
expect_rc 2 "run with --frob" "$btree" run "$p" 10 --frob
[[ "$out" == *"--frob"* ]] || fail "the usage error does not name --frob: $out"
expect_rc 2 "run with --seed x" "$btree" run "$p" 10 --seed x
[[ "$out" == *"--seed x"* ]] || fail "the usage error does not name --seed x: $out"
for bin in "$btree" "$queue"; do
	for v in 101 -1 x 1k; do # --dup: a decimal percentage, 0..100
		expect_rc 2 "$(basename "$bin") run with --dup $v" "$bin" run "$p" 10 --dup "$v"
		[[ "$out" == *"--dup $v: bad value"* ]] ||
			fail "the usage error does not name --dup $v: $out"
	done
	expect_rc 2 "$(basename "$bin") run with --dup and no value" "$bin" run "$p" 10 --dup
	[[ "$out" == *"--dup"* ]] || fail "the usage error does not name --dup: $out"
done
expect_rc 2 "run with N notanumber" "$btree" run "$p" notanumber
[[ "$out" == *notanumber* ]] || fail "the usage error does not name N: $out"
expect_rc 2 "create with --size 12q" "$btree" create "$dir/n" --size 12q
[[ "$out" == *"--size 12q"* ]] || fail "the usage error does not name --size: $out"
expect_rc 2 "an unknown command" "$btree" frobnicate "$p"
[[ "$out" == *frobnicate* ]] || fail "the usage error does not name the command: $out"
expect_rc 2 "check with --frob" "$btree" check "$p" --frob
[[ "$out" == *"--frob"* ]] || fail "check's usage error does not name --frob: $out"
expect_rc 2 "spm-hello with --frob" "$hello" --frob
[[ "$out" == *"--frob"* ]] || fail "spm-hello's usage error does not name --frob: $out"
[ ! -e "$dir/n" ] || fail "a usage error created a pool"
for bin in "$btree" "$queue" "$hello"; do
	for args in "--help" "run --help" "-h"; do
		rc=0
		# shellcheck disable=SC2086
		usage=$("$bin" $args 2>"$dir/err") || rc=$?
		[ "$rc" = 0 ] || fail "$(basename "$bin") $args: exit $rc"
		[[ "$usage" == usage:* ]] || fail "$(basename "$bin") $args: stdout '$usage'"
		[ ! -s "$dir/err" ] || fail "$(basename "$bin") $args: stderr $(cat "$dir/err")"
	done
done

# --- the test switch --------------------------------------------------------
expect_rc 18 "SPM_CONF=ctr_recovery=none" env SPM_CONF=ctr_recovery=none "$btree" check "$p"
[[ "$out" == *SPM_TEST_KNOBS=1* ]] || fail "the refusal does not name the switch: $out"
expect_rc 0 "SPM_CONF=ctr_recovery=none with the switch" \
	env SPM_CONF=ctr_recovery=none SPM_TEST_KNOBS=1 "$btree" check "$p"
expect_rc 18 "SPM_CRASH=point:wpq.redy" env SPM_CRASH=point:wpq.redy "$btree" check "$p"
[[ "$out" == *"unknown crash point"* && "$out" == *wpq.ready* && "$out" == *tx.committed* ]] ||
	fail "a misspelt crash point does not name the points: $out"
expect_rc 18 "SPM_CRASH=point:wpq.redy at create" \
	env SPM_CRASH=point:wpq.redy "$btree" create "$dir/n" --size 8m
[ ! -e "$dir/n" ] || fail "a refused create left a pool"
expect_rc 0 "SPM_CRASH=point:wpq.ready:1000000000" \
	env SPM_CRASH=point:wpq.ready:1000000000 "$btree" check "$p"
echo "PASS [examples cli]"
