#!/usr/bin/env bash
# soak.sh -- random kill -9 soak: for each design, for SECONDS seconds, run
# spm-<example> with progress output, kill -9 it after a random number of
# progress lines (read from its pipe: no sleeps), and require check ok after
# every kill (unsafe: count failures, which must be > 0).  Bounded in time;
# registered in the "slow" label.
#
#   soak.sh BIN_DIR WORKDIR SECONDS [examples...]
set -euo pipefail
bindir=$1 work=$2 seconds=$3
shift 3
examples=${*:-btree hashmap rbtree queue array list skiplist bptree}
mkdir -p "$work"
dir=$(mktemp -d "$work/soak.XXXXXX")
trap 'rm -rf "$dir"' EXIT
unset SPM_CRASH SPM_CONF SPM_EVICT SPM_AUDIT
RANDOM=42
status=0
printf '%-8s %-13s %6s %6s %8s\n' example design kills ok failures
for ex in $examples; do
	bin="$bindir/spm-$ex"
	for design in ideal fca sca colocated colocated-cc unsafe; do
		pool="$dir/$ex-$design"
		rm -f "$pool" "$pool.meta" "$pool.key"
		"$bin" create "$pool" "design=$design" --size 16777216 >/dev/null
		kills=0 ok=0 failures=0 seed=1
		end=$((SECONDS + seconds))
		while [ $SECONDS -lt $end ]; do
			seed=$((seed + 1))
			want=$((1 + RANDOM % 20))
			rm -f "$dir/fifo"
			mkfifo "$dir/fifo"
			"$bin" run "$pool" 100000000 --seed "$seed" --progress 7 >"$dir/fifo" 2>&1 &
			pid=$!
			exec {fd}<"$dir/fifo"
			got=0
			while [ $got -lt $want ] && read -r -t 30 line <&"$fd"; do
				case $line in progress*) got=$((got + 1)) ;; esac
			done
			kill -9 "$pid" 2>/dev/null || true
			wait "$pid" 2>/dev/null || true
			exec {fd}<&-
			kills=$((kills + 1))
			if out=$("$bin" check "$pool" 2>&1) && [[ $out == ok* ]]; then
				ok=$((ok + 1))
			else
				failures=$((failures + 1))
				if [ "$design" = unsafe ]; then
					# the pool is lost: start a new one and keep going
					rm -f "$pool" "$pool.meta" "$pool.key"
					"$bin" create "$pool" "design=$design" --size 16777216 >/dev/null
				else
					echo "FAIL $ex/$design after kill $kills: $out" >&2
					status=1
					break
				fi
			fi
		done
		printf '%-8s %-13s %6d %6d %8d\n' "$ex" "$design" "$kills" "$ok" "$failures"
		if [ "$design" = unsafe ] && [ "$failures" = 0 ]; then
			echo "FAIL: unsafe survived every kill: the soak is blind" >&2
			status=1
		fi
		rm -f "$pool" "$pool.meta" "$pool.key"
	done
done
exit $status
