#!/usr/bin/env bash
# test_examples.sh -- tests of one spm-<name> example (examples/<name>).
#
#   test_examples.sh NAME BINARY TMPDIR [unit|crash]
#
# unit  (default): on each of the 14 designs, create, two runs with different
#       seeds and value sizes, check ok; the same seeds give the same content
#       on every design; usage errors exit 2, open and create errors with
#       their own status (3 system, 25 another example's pool, 10-26 spm's codes).
#       The maps (their --help names --keys): --keys uniform is the default's
#       content, Zipfian runs check ok and give the same content on two
#       designs, bad --keys values are usage errors naming the flag.
#       --dup: runs with duplicated values (--dup 50 and 100) check ok and give
#       the same content on two designs; --dup 0 is the default's content.
# crash: SPM_CRASH kills a run at crash points spread over the run on sca, fca and
#       supermem (half of them with SPM_EVICT's early write-backs): every
#       check must pass, and a recovered pool must keep working; one real kill -9 of a running process (synchronised on its
#       progress output); on unsafe, a sweep of crash points must make check
#       fail at least once, naming a broken invariant (exit 1) -- the oracle
#       is not blind -- and check must never crash itself.  The maps: one
#       more sweep on sca and unsafe with Zipfian keys.
set -euo pipefail

if [ $# -lt 3 ]; then
	echo "usage: $0 NAME BINARY TMPDIR [unit|crash]" >&2
	exit 2
fi
name=$1 bin=$2 tmp=$3 mode=${4:-unit}
unset SPM_CRASH SPM_CONF
mkdir -p "$tmp"
dir=$(mktemp -d "$tmp/examples-$name-$mode.XXXXXX")
trap 'rm -rf "$dir"' EXIT

designs="plain ideal unsafe colocated colocated-cc fca sca wt wt-cwc wt-xbank supermem srl lame clame"
keys="" # crash sweeps: empty, or the maps' --keys and its value
fail() {
	echo "FAIL [$name $mode]: $*" >&2
	exit 1
}

# rmpool P -- remove a pool's files.
rmpool() { rm -f "$1" "$1.meta" "$1.key"; }

# cppool A B -- copy pool A to B.
cppool() {
	rmpool "$2"
	cp "$1" "$2" && cp "$1.meta" "$2.meta" && cp "$1.key" "$2.key"
}

# check_ok P [WHAT] -- check P must print "ok ops=... items=..." and exit 0,
# then at most the line of what recovery did; the ok line is left in $checked.
check_ok() {
	local rc=0 out
	out=$("$bin" check "$1" 2>&1) || rc=$?
	[ "$rc" = 0 ] || fail "${2:-check}: exit $rc: $out"
	checked=${out%%$'\n'*}
	[[ "$checked" =~ ^ok\ ops=[0-9]+\ items=[0-9]+$ ]] || fail "${2:-check}: output '$out'"
	[ "$out" = "$checked" ] || [[ "${out#*$'\n'}" =~ ^recovered:\ [^$'\n']+$ ]] ||
		fail "${2:-check}: output '$out'"
}

# ops_of LINE -- the k of an "ok ops=k items=n" line.
ops_of() { sed -n 's/^ok ops=\([0-9]*\) .*/\1/p' <<<"$1"; }

# crash_run P POINT ARGS... -- a run killed at crash point POINT (it may also
# finish first if POINT is past its last point).  With $evict set, the run
# also writes dirty transaction lines back early (SPM_EVICT=SEED:P), as a
# real cache may.
crash_run() {
	local p=$1 pt=$2 rc=0
	shift 2
	# (the braces keep bash's "Killed" notice out of the log)
	{ SPM_EVICT=${evict:-} SPM_CRASH=after:$pt "$bin" run "$p" "$@" >/dev/null 2>&1; } \
		2>/dev/null || rc=$?
	[ "$rc" = 0 ] || [ "$rc" = 137 ] || fail "run with SPM_CRASH=after:$pt: exit $rc"
}

# crash_points P ARGS... -- the number of crash points of a run (not done).
crash_points() {
	local p=$1 n
	shift
	cppool "$p" "$dir/count"
	n=$(SPM_CRASH=count "$bin" run "$dir/count" "$@" 2>&1 >/dev/null |
		sed -n 's/^spm-crash-points: //p')
	rmpool "$dir/count"
	[ -n "$n" ] && [ "$n" -gt 0 ] || fail "no crash points counted"
	echo "$n"
}

unit_tests() {
	local reference="" d p out rc
	# usage errors: exit 2
	rc=0; "$bin" >/dev/null 2>&1 || rc=$?
	[ "$rc" = 2 ] || fail "no arguments: exit $rc, expected 2"
	rc=0; "$bin" frobnicate "$dir/x" >/dev/null 2>&1 || rc=$?
	[ "$rc" = 2 ] || fail "bad command: exit $rc, expected 2"
	rc=0; "$bin" run "$dir/x" notanumber >/dev/null 2>&1 || rc=$?
	[ "$rc" = 2 ] || fail "bad N: exit $rc, expected 2"
	# open and create errors: a status of their own, and the files untouched
	rc=0; out=$("$bin" check "$dir/missing" 2>&1) || rc=$?
	[ "$rc" = 3 ] || fail "check of a missing pool: exit $rc, expected 3"
	[ -n "$out" ] || fail "check of a missing pool says nothing"
	rc=0; "$bin" create "$dir/x" "design=nosuch" --size 8m >/dev/null 2>&1 || rc=$?
	[ "$rc" = 17 ] || fail "create with a bad design: exit $rc, expected 17"
	rc=0; "$bin" create "$dir/x" "nosuch=1" --size 8m >/dev/null 2>&1 || rc=$?
	[ "$rc" = 18 ] || fail "create with a bad option: exit $rc, expected 18"
	[ ! -e "$dir/x" ] && [ ! -e "$dir/x.meta" ] || fail "a refused create left files"
	head -c 65536 /dev/zero | tr '\0' 'x' > "$dir/junk"
	rc=0; "$bin" check "$dir/junk" >/dev/null 2>&1 || rc=$?
	[ "$rc" = 10 ] || fail "check of a file that is no pool: exit $rc, expected 10"
	"$bin" create "$dir/k" "design=sca" --size 8m >/dev/null || fail "create for the key test"
	cp "$dir/k.key" "$dir/k.key.right"
	printf 'xxxxxxxxxxxxxxxx' > "$dir/k.key" # another 16-byte key
	local sums; sums=$(cat "$dir/k" "$dir/k.meta" | md5sum)
	rc=0; "$bin" check "$dir/k" >/dev/null 2>&1 || rc=$?
	[ "$rc" = 15 ] || fail "check with the wrong key: exit $rc, expected 15"
	[ "$(cat "$dir/k" "$dir/k.meta" | md5sum)" = "$sums" ] || fail "a wrong key changed the pool"
	mv "$dir/k.key.right" "$dir/k.key"
	truncate -s 4096 "$dir/k"
	rc=0; "$bin" check "$dir/k" >/dev/null 2>&1 || rc=$?
	[ "$rc" = 11 ] || fail "check of a truncated pool: exit $rc, expected 11"
	rmpool "$dir/x"; rmpool "$dir/k"; rm -f "$dir/junk"

	for d in $designs; do
		p=$dir/$d
		"$bin" create "$p" "design=$d" --size 8388608 >/dev/null ||
			fail "$d: create"
		check_ok "$p" "$d: check of an empty pool"
		[ "$checked" = "ok ops=0 items=0" ] || fail "$d: empty pool: $checked"
		"$bin" run "$p" 300 --seed 11 >/dev/null 2>&1 || fail "$d: first run"
		check_ok "$p" "$d: check after one run"
		[ "$(ops_of "$checked")" = 300 ] || fail "$d: after one run: $checked"
		out=$("$bin" run "$p" 400 --seed 12 --value-size 200 2>&1) || fail "$d: second run"
		[[ "$out" == *" ops/s "* ]] || fail "$d: the run prints no ops/s: $out"
		[[ "$out" == *"media.writes"* ]] || fail "$d: the run prints no statistics"
		check_ok "$p" "$d: check after two runs"
		[ "$(ops_of "$checked")" = 700 ] || fail "$d: after two runs: $checked"
		# the content depends on the seeds only, never on the design
		[ -z "$reference" ] && reference=$checked
		[ "$checked" = "$reference" ] || fail "$d: '$checked', plain gave '$reference'"
		rmpool "$p"
	done
	echo "$name: round trips on all designs: $reference"
	dup_tests
	if is_map; then
		keys_tests
	fi
}

# dup_runs P -- on pool P: runs with duplicated values (--dup), a last one
# without; check ok, the ok line in $checked.
dup_runs() {
	local p=$1 out
	out=$("$bin" run "$p" 300 --seed 11 --dup 50 --value-size 256 2>&1) || fail "dup: run: $out"
	[[ "$out" == *", dup 50%,"* ]] || fail "the run with --dup 50 does not say so: $out"
	"$bin" run "$p" 200 --seed 12 --dup 100 >/dev/null 2>&1 || fail "dup: --dup 100 run"
	check_ok "$p" "dup: check after --dup 100"
	"$bin" run "$p" 100 --seed 13 >/dev/null 2>&1 || fail "dup: run after them"
	check_ok "$p" "dup: check after runs with --dup"
}

# dup_tests -- duplicated values (--dup, examples/common/ex_main.h "Values").
dup_tests() {
	local p=$dir/dup first
	"$bin" create "$p" "design=plain" --size 8388608 >/dev/null || fail "dup: create"
	"$bin" run "$p" 300 --seed 11 --dup 0 >/dev/null 2>&1 || fail "dup: --dup 0 run"
	"$bin" run "$p" 400 --seed 12 --value-size 200 >/dev/null 2>&1 || fail "dup: second run"
	check_ok "$p" "dup: check after --dup 0"
	[ "$checked" = "$reference" ] || fail "--dup 0: '$checked', the default gave '$reference'"
	rmpool "$p"
	"$bin" create "$p" "design=sca" --size 8388608 >/dev/null || fail "dup: create"
	dup_runs "$p"
	first=$checked
	rmpool "$p"
	"$bin" create "$p" "design=plain" --size 8388608 >/dev/null || fail "dup: create"
	dup_runs "$p"
	[ "$checked" = "$first" ] || fail "--dup: sca gave '$first', plain '$checked'"
	rmpool "$p"
	echo "$name: --dup 50 and 100 on sca and plain: $checked"
}

# is_map -- does the example take --keys (the map workload)?
is_map() { "$bin" --help | grep -q -- '--keys'; }

# keys_runs P -- on pool P: uniform runs as in the design loop (the first with
# --keys uniform), then two Zipfian runs; check ok, the ok line in $checked.
keys_runs() {
	local p=$1 out
	"$bin" run "$p" 300 --seed 11 --keys uniform >/dev/null 2>&1 || fail "keys: uniform run"
	"$bin" run "$p" 400 --seed 12 --value-size 200 >/dev/null 2>&1 || fail "keys: second run"
	check_ok "$p" "keys: check after --keys uniform"
	[ "$checked" = "$reference" ] || fail "--keys uniform: '$checked', the default gave '$reference'"
	out=$("$bin" run "$p" 600 --seed 13 --keys zipf:0.99 2>&1) || fail "keys: zipf run: $out"
	[[ "$out" == *"keys zipf:0.99"* ]] || fail "the Zipfian run does not say its keys: $out"
	"$bin" run "$p" 300 --seed 14 --mix insert --keys zipf:0.5 >/dev/null 2>&1 ||
		fail "keys: second zipf run"
	check_ok "$p" "keys: check after Zipfian runs"
}

# keys_tests -- the maps' --keys (examples/common/ex_keys.h).
keys_tests() {
	local p=$dir/keys v rc out first
	for v in zipf:0 zipf:abc zipf:-1 zipf:1 zipf: zipf gauss; do
		rc=0; out=$("$bin" run "$p" 10 --keys "$v" 2>&1) || rc=$?
		[ "$rc" = 2 ] || fail "--keys $v: exit $rc, expected 2"
		[[ "$out" == *"--keys $v: bad value"* ]] || fail "--keys $v: the message does not name the flag: $out"
	done
	rc=0; "$bin" run "$p" 10 --keys >/dev/null 2>&1 || rc=$?
	[ "$rc" = 2 ] || fail "--keys without a value: exit $rc, expected 2"
	"$bin" create "$p" "design=sca" --size 8388608 >/dev/null || fail "keys: create"
	keys_runs "$p"
	first=$checked
	rmpool "$p"
	"$bin" create "$p" "design=plain" --size 8388608 >/dev/null || fail "keys: create"
	keys_runs "$p"
	[ "$checked" = "$first" ] || fail "Zipfian keys: sca gave '$first', plain '$checked'"
	rmpool "$p"
	echo "$name: --keys: uniform as the default, Zipfian on sca and plain: $checked"
}

# sweep D POINTS -- crash a run at POINTS points spread over it on design D;
# sets $passed and $broken (exit 1 of check), fails on anything else.
sweep() {
	local d=$1 npoints=$2 base=$dir/base-$1 w=$dir/w-$1 total i pt rc out
	rmpool "$base"
	"$bin" create "$base" "design=$d" --size 8388608 >/dev/null
	"$bin" run "$base" 150 --seed 1 >/dev/null 2>&1
	# shellcheck disable=SC2086 # $keys: empty, or --keys and its value
	total=$(crash_points "$base" 150 --seed 2 --value-size 100 ${keys:-})
	passed=0 broken=0
	for i in $(seq 1 "$npoints"); do
		# spread evenly, shifted so that different point kinds are hit
		pt=$(( total * i / (npoints + 1) + (i * 7919) % 97 ))
		cppool "$base" "$w"
		evict=""
		[ $((i % 2)) = 1 ] && evict="$i:0.3"
		# shellcheck disable=SC2086
		crash_run "$w" "$pt" 150 --seed 2 --value-size 100 ${keys:-}
		evict=""
		rc=0
		out=$("$bin" check "$w" 2>&1) || rc=$?
		case $rc in
		0) passed=$((passed + 1)) ;;
		1) broken=$((broken + 1))
		   [[ "$out" == broken\ * ]] || fail "$d after:$pt: check exit 1 without naming an invariant: $out" ;;
		*) fail "$d after:$pt: check exit $rc (it must not crash on a damaged pool): $out" ;;
		esac
		if [ "$d" != unsafe ]; then
			[ "$rc" = 0 ] || fail "$d: crash at point $pt of $total: $out"
			if [ $((i % 3)) = 0 ]; then
				# the recovered pool keeps working, and is crash safe again
				local k
				k=$(ops_of "$out")
				"$bin" run "$w" 60 --seed 3 >/dev/null 2>&1 || fail "$d after:$pt: run after recovery"
				check_ok "$w" "$d after:$pt: check after a run after recovery"
				[ "$(ops_of "$checked")" = $((k + 60)) ] || fail "$d after:$pt: rerun: $checked"
				crash_run "$w" $((pt % 3000 + 1)) 60 --seed 4
				check_ok "$w" "$d after:$pt: second crash"
			fi
		fi
		rmpool "$w"
	done
	rmpool "$base"
	echo "$name $d${keys:+ ($keys)}: $npoints crash points of $total: $passed checks ok, $broken broken"
}

# kill9 D -- kill -9 a running process once it has done 200+ operations.
kill9() {
	local d=$1 p=$dir/k-$1 fifo=$dir/fifo-$1 pid line done_ops=0 rc=0
	rmpool "$p"
	"$bin" create "$p" "design=$d" --size 16777216 >/dev/null
	"$bin" run "$p" 100 --seed 1 >/dev/null 2>&1
	rm -f "$fifo"
	mkfifo "$fifo"
	"$bin" run "$p" 100000000 --seed 2 --progress 50 >"$fifo" 2>/dev/null &
	pid=$!
	exec 3<"$fifo"
	# wait for its progress (bounded: a read times out after 60 s)
	while read -r -t 60 -u 3 line; do
		case $line in
		"progress ops="*) done_ops=${line#progress ops=} ;;
		esac
		[ "$done_ops" -ge 300 ] && break
	done
	kill -9 "$pid" 2>/dev/null || true
	{ wait "$pid"; } 2>/dev/null || rc=$?
	exec 3<&-
	rm -f "$fifo"
	[ "$done_ops" -ge 300 ] || fail "$d: kill -9: the run made no progress"
	[ "$rc" = 137 ] || fail "$d: kill -9: the run ended with $rc, not by the signal"
	check_ok "$p" "$d: check after kill -9"
	local k
	k=$(ops_of "$checked")
	[ "$k" -ge "$done_ops" ] || fail "$d: kill -9 after op $done_ops, check says $checked"
	"$bin" run "$p" 50 --seed 5 >/dev/null 2>&1 || fail "$d: run after kill -9"
	check_ok "$p" "$d: check after kill -9 and a run"
	echo "$name $d: kill -9 after $done_ops+ ops: $checked"
	rmpool "$p"
}

crash_tests() {
	local d
	for d in sca fca supermem; do
		sweep "$d" 10
		kill9 "$d"
	done
	# the negative control: unsafe must lose something the oracle sees
	sweep unsafe 10
	[ "$broken" -gt 0 ] || fail "unsafe: no crash broke the check: the oracle is blind"
	sweep ideal 10
	kill9 ideal
	if is_map; then
		keys="--keys zipf:0.99"
		sweep sca 6
		sweep unsafe 6
		[ "$broken" -gt 0 ] || fail "unsafe, Zipfian keys: no crash broke the check"
		keys=""
	fi
}

case $mode in
unit) unit_tests ;;
crash) crash_tests ;;
*) fail "unknown mode $mode" ;;
esac
echo "PASS [$name $mode]"
