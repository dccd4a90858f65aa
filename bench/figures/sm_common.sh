# sm_common.sh -- what the SuperMem figure scripts (sm13-sm17.sh) add to common.sh.
. "$(dirname "$0")/common.sh"
SM_DESIGNS="plain ideal wt wt-cwc wt-xbank supermem"
# the paper's names for the legends: Unsec, WB, WT, WT+CWC, WT+XBank, SuperMem
SM_GP_STYLE="$GP_STYLE"'
set linetype 3 lc rgb "#d95f02" lw 2 pt 9
set linetype 4 lc rgb "#e6ab02" lw 2 pt 11
set linetype 5 lc rgb "#7570b3" lw 2 pt 13
set linetype 6 lc rgb "#0b4fa8" lw 2 pt 7
'
# sm_sizes_csv -- the run of Figures 13 and 15 (shared): 3 transaction sizes, one core.
sm_sizes_csv() {
	local csv=$OUT/sm13-15.csv
	if [ ! -s "$csv" ] || [ "${SM_RERUN:-1}" = 1 ]; then
		bench --profile supermem --designs "${SM_DESIGNS// /,}" --tx-size 256,1024,4096 \
			--ops "$OPS" --csv "$csv" >/dev/null
	fi
	echo "$csv"
}
