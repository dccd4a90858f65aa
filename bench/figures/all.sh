#!/usr/bin/env bash
# all.sh -- every figure script in turn (Figures 12-17 of the counter-atomicity paper), into doc/figures/.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
for n in 12 13 14 15 16 17; do
	start=$SECONDS
	echo "== Figure $n" >&2
	"$here/fig$n.sh"
	echo "== Figure $n: $((SECONDS - start)) s" >&2
done
