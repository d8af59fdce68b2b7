#!/usr/bin/env bash
# perf-import's speed (issue 24): a Google Benchmark file of 10,000
# benchmarks x 3 repetitions (and their four aggregate rows, as
# --benchmark_repetitions writes them; bench/gen-gbench.py), imported by
# perf-import, against jq doing the same projection (one object per
# benchmark: its repetitions' times, cpu times, rates and counter in
# seconds, their means) in the same run. The target: perf-import under
# 0.2 s. Each figure is the best of BENCH_IMPORT_RUNS (default 3): the
# machine may be shared. Not part of make test; make bench runs it, and
# make bench-import alone.
#
#   BENCH_IMPORT_N   benchmarks (default 10000)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
n=${BENCH_IMPORT_N:-10000}
runs=${BENCH_IMPORT_RUNS:-3}
out=bench/out
tools=build/bench
mkdir -p "$out" "$tools"
"${CC:-cc}" -O2 -Wall -o "$tools/measure" bench/measure.c
export PATH="$root/bin:$PATH"
in=$out/gbench-$n.json
[ -f "$in" ] || { python3 bench/gen-gbench.py "$n" 3 >"$in.tmp" && mv "$in.tmp" "$in"; }

# best COMMAND: "WALL CPU RSS_KIB" of the fastest of $runs runs.
best() {
	local i w r c bw='' br='' bc=''
	for ((i = 0; i < runs; i++)); do
		read -r w r c < <("$tools/measure" "$1")
		if [ -z "$bw" ] || awk -v a="$w" -v b="$bw" 'BEGIN { exit !(a < b) }'; then
			bw=$w br=$r bc=$c
		fi
	done
	echo "$bw $bc $br"
}

# shellcheck disable=SC2016 # a jq program, not shell
jq_prog='.benchmarks | map(select(.run_type == "iteration")) | group_by(.run_name) | .[]
	| (.[0].time_unit | {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1}[.]) as $f
	| {benchmark_id: .[0].run_name, metrics: {
		time: {value: (map(.real_time * $f) | add / length), unit: "s", samples: map(.real_time * $f)},
		cpu_time: {value: (map(.cpu_time * $f) | add / length), unit: "s", samples: map(.cpu_time * $f)},
		items_per_second: {value: (map(.items_per_second) | add / length), unit: "items/s", samples: map(.items_per_second)},
		bytes_per_second: {value: (map(.bytes_per_second) | add / length), unit: "B/s", samples: map(.bytes_per_second)},
		frames: {value: (map(.frames) | add / length), unit: "", samples: map(.frames)}}}'

read -r pw pc pr < <(best "perf-import -f google-benchmark $in >$out/import.jsonl 2>/dev/null")
read -r jw jc jr < <(best "jq -c '$jq_prog' $in >$out/import-jq.jsonl")
[ "$(wc -l <"$out/import.jsonl")" -eq "$n" ] || { echo "perf-import wrote $(wc -l <"$out/import.jsonl") records, not $n" >&2; exit 1; }
echo
echo "perf-import: a Google Benchmark file, $n benchmarks x 3 repetitions ($(($(wc -c <"$in") / 1048576)) MB), best of $runs:"
printf '  %-28s %8s %8s %10s\n' program "wall s" "CPU s" "RSS MiB"
printf '  %-28s %8.3f %8.3f %10.1f\n' "perf-import (full records)" "$pw" "$pc" "$(awk -v r="$pr" 'BEGIN { print r / 1024 }')"
printf '  %-28s %8.3f %8.3f %10.1f\n' "jq (the projection only)" "$jw" "$jc" "$(awk -v r="$jr" 'BEGIN { print r / 1024 }')"
awk -v p="$pw" -v j="$jw" -v c="$pc" 'BEGIN {
	printf "  ratio jq / perf-import: %.1fx (wall); target: perf-import under 0.2 s: %s (CPU %.3f s)\n",
	    j / p, (p < 0.2 ? "met" : "NOT met on this machine"), c }'
