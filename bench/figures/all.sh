#!/usr/bin/env bash
# all.sh -- every figure script in turn (Figures 12-17 of the counter-atomicity paper, then
# the core-work sweep (work.sh), Figures 13-17 of SuperMem: sm13-sm17, and the queue's
# scheduling window: smwindow), into doc/figures/.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
for n in 12 13 14 15 16 17 work sm13 sm15 sm14 sm16 sm17 smwindow; do
	start=$SECONDS
	echo "== Figure $n" >&2
	case $n in sm*|work) "$here/$n.sh" ;; *) "$here/fig$n.sh" ;; esac
	echo "== Figure $n: $((SECONDS - start)) s" >&2
done
