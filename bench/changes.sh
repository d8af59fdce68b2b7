#!/usr/bin/env bash
# make bench-changes (and the end of make bench): perf-changes, Otava's
# change-point detection. False alarms on pure noise, detection delay of a
# step, the speed of one long series and of an incremental append (the
# library, bench/changes.c), a store of BENCH_RECORDS records in 200
# cohorts x 6 metrics (the program, against reading the files alone and
# against its own full JSON parser), and peak RSS as the history grows
# tenfold with the longest series fixed. Otava itself runs on the same
# series when OTAVA_DIR names a checkout of apache/otava and
# /usr/bin/python3 has numpy and scipy.
#
#   BENCH_RECORDS   records in the store (default 100000)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
n=${BENCH_RECORDS:-100000}
small=$((n / 10))
out=bench/out
tools=build/bench
mkdir -p "$out" "$tools"
cc=${CC:-cc}
export PATH="$root/bin:$PATH"
"$cc" -O2 -Wall -o "$tools/measure" bench/measure.c
"$cc" -O2 -Wall -o "$tools/gen-store" bench/gen-store.c
"$cc" -std=c11 -D_DEFAULT_SOURCE -O2 -Wall -Isrc/lib -o "$tools/changes" bench/changes.c \
	build/default/libperf.a -lcjson -lz -lcrypto -lm -lpthread -ldl
for size in "$n" "$small"; do
	if [ ! -d "$out/store-$size" ] || [ bench/gen-store.c -nt "$out/store-$size" ]; then
		rm -rf "$out/store-$size" "$out/store-$size.tmp"
		"$tools/gen-store" "$size" "$out/store-$size.tmp" | gzip -1 >"$out/history-$size.jsonl.gz"
		mv "$out/store-$size.tmp" "$out/store-$size"
	fi
done
# Streams of $small and $n records whose longest series is 50 points.
for size in "$small" "$n"; do
	f=$out/history-$size-x50.jsonl.gz
	if [ ! -s "$f" ] || [ bench/gen-store.c -nt "$f" ]; then
		"$tools/gen-store" "$size" - $((size / 50)) | gzip -1 >"$f.tmp"
		mv "$f.tmp" "$f"
	fi
done

# best3 COMMAND: "wall rss cpu" of the fastest of three runs (the machine
# may be shared), rss the largest.
best3() {
	local i w r c bw='' br=0 bc=''
	for i in 1 2 3; do
		read -r w r c < <("$tools/measure" "$1")
		if [ -z "$bw" ] || awk -v a="$w" -v b="$bw" 'BEGIN { exit !(a < b) }'; then
			bw=$w bc=$c
		fi
		[ "$r" -gt "$br" ] && br=$r
		: "$i"
	done
	echo "$bw $br $bc"
}

echo
echo "perf-changes (window 50, p = 0.001):"
printf '  false alarms per 1,000 points of pure noise (10 x 10,000 points): Gaussian %s, log-normal %s\n' \
	"$("$tools/changes" alarms gauss)" "$("$tools/changes" alarms lognormal)"
printf '  detection delay, median points after a step until reported (50 trials): 1 sigma %s, 2 sigma %s\n' \
	"$("$tools/changes" delay 1)" "$("$tools/changes" delay 2)"
{ read -r whole found; read -r append append90; } < <("$tools/changes" speed "$out/series-100k.txt")
printf '  %-66s %11s %9s\n' "" "perfkite" "Otava"
otava_whole="not run" otava_append="not run"
if [ -n "${OTAVA_DIR:-}" ] && /usr/bin/python3 -c 'import numpy, scipy' 2>/dev/null; then
	read -r ow ofound oa < <(/usr/bin/python3 bench/otava-bench.py "$OTAVA_DIR" "$out/series-100k.txt")
	otava_whole=$(printf '%.3f s' "$ow") otava_append=$(printf '%.1f ms' "$(awk -v a="$oa" 'BEGIN { print a * 1000 }')")
	[ "$ofound" = "$found" ] || otava_whole="$otava_whole (found $ofound, perfkite $found)"
fi
printf '  %-66s %9.3f s %9s\n' "100,000 points of one series, $found change points (target < 0.3 s)" "$whole" "$otava_whole"
printf '  %-66s %8.3f ms %9s\n' "one incremental append to 10,000 points, median (target < 1 ms)" \
	"$(awk -v a="$append" 'BEGIN { print a * 1000 }')" "$otava_append"
printf '  %-66s %8.3f ms\n' "  the same, 90th percentile of 1,000 appends" \
	"$(awk -v a="$append90" 'BEGIN { print a * 1000 }')"
[ -n "${OTAVA_DIR:-}" ] || echo "  (set OTAVA_DIR to a checkout of apache/otava to run Otava in the same bench)"

# The program's incremental append: a history of one 10,000-point series
# (one cohort, --metric latency), its state, then one record appended (a
# copy of the last with a later time). PERF_CHANGES_STATS reports the CPU
# time analyse() took, the reading of the records left out; median of 21 runs,
# the state put back before each.
inc=$out/incremental
mkdir -p "$inc"
if [ ! -s "$inc/append.jsonl" ] || [ bench/gen-store.c -nt "$inc/append.jsonl" ]; then
	"$tools/gen-store" 10000 - 1 >"$inc/base.jsonl"
	{ cat "$inc/base.jsonl"; tail -n 1 "$inc/base.jsonl" |
		sed 's/"timestamp":"[^"]*"/"timestamp":"2027-01-01T00:00:00+00:00"/'; } >"$inc/append.jsonl.tmp"
	mv "$inc/append.jsonl.tmp" "$inc/append.jsonl"
fi
rm -f "$inc/state.jsonl"
perf-changes --incremental "$inc/state.jsonl" -m latency "$inc/base.jsonl" >/dev/null || true
cp "$inc/state.jsonl" "$inc/kept.jsonl"
# The same state without the merge's comparisons, each line given the
# checksum of what it holds (perf-changes(1): "sum").
jq -c 'del(.merge, .sum)' "$inc/kept.jsonl" | while IFS= read -r l; do
	printf '%s,"sum":"%s"}\n' "${l%\}}" "$(printf '%s' "$l" | sha256sum | cut -d' ' -f1)"
done >"$inc/earlier.jsonl"
# incremental STATE [options]: "median-ms made reused" over 21 runs.
incremental() {
	local state=$1 i
	shift
	for i in $(seq 21); do
		[ -z "$state" ] || cp "$state" "$inc/state.jsonl"
		PERF_CHANGES_STATS=1 perf-changes "$@" -m latency "$inc/append.jsonl" 2>&1 >/dev/null |
			sed -n 's/.*analysis \([0-9.]*\) ms CPU; the merges compared \([0-9]*\) segments, reused \([0-9]*\)$/\1 \2 \3/p'
		: "$i"
	done | sort -n | awk '{ a[NR] = $0 } END { print a[int((NR + 1) / 2)] }'
}
read -r kept_ms kept_made kept_reused < <(incremental "$inc/kept.jsonl" --incremental "$inc/state.jsonl")
read -r earlier_ms earlier_made _ < <(incremental "$inc/earlier.jsonl" --incremental "$inc/state.jsonl")
read -r full_ms _ < <(incremental "")
cp "$inc/kept.jsonl" "$inc/state.jsonl"
read -r whole _ < <(best3 "perf-changes --incremental $inc/state.jsonl -m latency $inc/append.jsonl >/dev/null; [ \$? -le 1 ]")
echo "  perf-changes --incremental, one record appended to a 10,000-point series"
echo "  (the program's analysis, CPU time, reading left out; median of 21 runs):"
printf '  %-66s %8.3f ms\n' "  the state keeps the merge's comparisons ($kept_made compared, $kept_reused reused)" "$kept_ms"
printf '  %-66s %8.3f ms\n' "  a state without them ($earlier_made compared)" "$earlier_ms"
printf '  %-66s %8.3f ms\n' "  no state: the full analysis" "$full_ms"
printf '  %-66s %9.3f s\n' "  the whole run, reading the 10,001 records included (best of 3)" "$whole"

echo
echo "perf-changes over a store of $n records in 200 cohorts x 6 metrics (target < 1 s wall), best of 3:"
printf '  %-58s %8s %8s %10s %8s\n' "" "wall s" "CPU s" "peak MiB" "vs cat"
read -r rw rr rc < <("$tools/measure" "find $out/store-$n -name '*.json' -exec cat {} + >/dev/null")
changes_row() {
	local label=$1 w r c
	read -r w r c < <(best3 "$2 >/dev/null; [ \$? -le 1 ]")
	awk -v l="$label" -v w="$w" -v c="$c" -v r="$r" -v ref="$rw" 'BEGIN {
		printf "  %-58s %8.3f %8.2f %10.1f %7.1fx\n", l, w, c, r / 1024, ref / w }'
}
awk -v w="$rw" -v c="$rc" -v r="$rr" 'BEGIN {
	printf "  %-58s %8.3f %8.2f %10.1f %8s\n", "find | cat (reading the files, nothing else)", w, c, r / 1024, "1.0x" }'
changes_row "perf-changes --store (directory)" "perf-changes --store $out/store-$n"
changes_row "  the same, one reader thread" "PERF_STORE_THREADS=1 perf-changes --store $out/store-$n"
changes_row "  the same, every record through the full JSON parser" \
	"PERF_STORE_SLOW_PARSE=1 perf-changes --store $out/store-$n"
changes_row "perf-changes --history (the same records, one gzip stream)" \
	"perf-changes --history $out/history-$n.jsonl.gz"

echo
echo "perf-changes peak RSS as the history grows tenfold:"
read -r _ a _ < <("$tools/measure" "perf-changes --store $out/store-$small >/dev/null; [ \$? -le 1 ]")
read -r _ b _ < <("$tools/measure" "perf-changes --store $out/store-$n >/dev/null; [ \$? -le 1 ]")
read -r _ c _ < <("$tools/measure" "perf-changes --history $out/history-$small-x50.jsonl.gz >/dev/null; [ \$? -le 1 ]")
read -r _ d _ < <("$tools/measure" "perf-changes --history $out/history-$n-x50.jsonl.gz >/dev/null; [ \$? -le 1 ]")
awk -v s="$small" -v n="$n" -v a="$a" -v b="$b" -v c="$c" -v d="$d" 'BEGIN {
	printf "  directory store, 200 cohorts (read directory by directory): %7d records %5.1f MiB, %7d records %5.1f MiB\n", s, a / 1024, n, b / 1024
	printf "  gzip stream, series of 50 points (%d and %d cohorts):  %7d records %5.1f MiB, %7d records %5.1f MiB\n", s / 50, n / 50, s, c / 1024, n, d / 1024 }'
