# modeled.awk -- spm-bench's CSV reduced to its modeled columns (tests/golden).
#
#   awk -v mode=make -f modeled.awk BENCH.csv
#       every column but the wall-clock ones (wall_ns, any *wall*), the
#       rates (*per_s*, *ops_s*) and options: a golden file
#   awk -v mode=compare -f modeled.awk GOLDEN.csv BENCH.csv
#       BENCH.csv's values of GOLDEN.csv's columns, row by row; every
#       difference printed (row's design and workload, column, both
#       values); exit 1 if any, or if a column or a row is missing
#
# mawk has no FPAT: split_csv takes a line apart itself (a quoted field may
# hold commas; "" is a quote).
function split_csv(line, out,    n, i, c, f, q) {
	n = 0; f = ""; q = 0
	for (i = 1; i <= length(line); i++) {
		c = substr(line, i, 1)
		if (q) {
			if (c == "\"") {
				if (substr(line, i + 1, 1) == "\"") { f = f "\""; i++ }
				else q = 0
			} else f = f c
		} else if (c == "\"") q = 1
		else if (c == ",") { out[++n] = f; f = "" }
		else f = f c
	}
	out[++n] = f
	return n
}
function dropped(name) {
	return name == "options" || name ~ /wall/ || name ~ /per_s/ || name ~ /ops_s/
}
BEGIN { bad = 0 }
{ sub(/\r$/, "") }
mode == "make" && FNR == 1 {
	nc = split_csv($0, h)
	for (i = 1; i <= nc; i++)
		if (!dropped(h[i])) keep[++nk] = i
}
mode == "make" {
	split_csv($0, v)
	s = ""
	for (i = 1; i <= nk; i++) s = s (i > 1 ? "," : "") v[keep[i]]
	print s
	next
}
mode == "compare" && NR == FNR {
	if (FNR == 1) gn = split_csv($0, gh)
	else { rows++; grow[rows] = $0 }
	next
}
mode == "compare" && FNR == 1 {
	bn = split_csv($0, bh)
	for (i = 1; i <= bn; i++) col[bh[i]] = i
	for (i = 1; i <= gn; i++)
		if (!(gh[i] in col)) { printf "column %s missing from the run's CSV\n", gh[i]; bad = 1 }
	next
}
mode == "compare" {
	r = FNR - 1
	if (r > rows) { printf "row %d: not in the golden file: %s\n", r, $0; bad = 1; next }
	split_csv($0, bv)
	split_csv(grow[r], gv)
	for (i = 1; i <= gn; i++)
		if ((gh[i] in col) && bv[col[gh[i]]] != gv[i]) {
			printf "%s/%s: %s: golden %s, now %s\n", gv[1], gv[2], gh[i], gv[i],
				bv[col[gh[i]]]
			bad = 1
		}
	seen = r
}
END {
	if (mode == "compare" && seen < rows) {
		printf "%d rows in the golden file, %d in the run's CSV\n", rows, seen
		bad = 1
	}
	if (mode != "make" && mode != "compare") { print "modeled.awk: mode=make or mode=compare"; bad = 2 }
	exit bad
}
