#!/usr/bin/env bash
# make bench-named (and the end of make bench): perf-gate-rolling on a store
# whose records carry 50 named metrics each (issue 24) against the same
# store with only the six, a batch of 10 records in each case: wall and CPU
# time, best of 3 (the machine may be shared), and the ratio. Target: the
# named store within 1.5x of the six-metric time.
#
#   BENCH_RECORDS   records in each store (default 100000)
#   BENCH_NAMED     named metrics per record (default 50)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
n=${BENCH_RECORDS:-100000}
m=${BENCH_NAMED:-50}
out=bench/out
tools=build/bench
mkdir -p "$out" "$tools"
cc=${CC:-cc}
export PATH="$root/bin:$PATH"
"$cc" -O2 -Wall -o "$tools/measure" bench/measure.c
"$cc" -O2 -Wall -o "$tools/gen-store" bench/gen-store.c
# store NAME ARGS...: makes $out/NAME with gen-store ARGS unless it is
# there and newer than the generator.
store() {
	local name=$1
	shift
	if [ ! -d "$out/$name" ] || [ bench/gen-store.c -nt "$out/$name" ]; then
		rm -rf "${out:?}/$name" "${out:?}/$name.tmp"
		"$tools/gen-store" "$@" "$out/$name.tmp" >/dev/null
		mv "$out/$name.tmp" "$out/$name"
	fi
}
store "store-$n" "$n"
store "store-$n-m$m" -m "$m" "$n"
"$tools/gen-store" -b >"$out/batch.jsonl"
"$tools/gen-store" -m "$m" -b >"$out/batch-m$m.jsonl"

# best3 COMMAND: "wall cpu" of the fastest of three runs.
best3() {
	local i w c bw='' bc=''
	for i in 1 2 3; do
		read -r w _ c < <("$tools/measure" "$1")
		if [ -z "$bw" ] || awk -v a="$w" -v b="$bw" 'BEGIN { exit !(a < b) }'; then
			bw=$w bc=$c
		fi
		: "$i"
	done
	echo "$bw $bc"
}

# A batch with named metrics must be compared on them: check it once.
perf-gate-rolling --store "$out/store-$n-m$m" "$out/batch-m$m.jsonl" 2>/dev/null |
	jq -e --argjson m "$m" 'select((.comparison.named_metrics | length) != $m or
		.comparison.named_metrics["BM_Op00/time"].baseline == null)' >/dev/null &&
	{ echo "named-metrics bench: the batch was not compared on its named metrics" >&2; exit 1; }
read -r w6 c6 < <(best3 "perf-gate-rolling --store $out/store-$n $out/batch.jsonl >/dev/null 2>&1")
read -r wn cn < <(best3 "perf-gate-rolling --store $out/store-$n-m$m $out/batch-m$m.jsonl >/dev/null 2>&1")
b6=$(du -sb "$out/store-$n" | cut -f1)
bn=$(du -sb "$out/store-$n-m$m" | cut -f1)
echo
echo "perf-gate-rolling with named metrics: a batch of 10 records, $n stored records in 200 cohorts, best of 3"
printf '  %-36s %9s %9s %9s\n' store "store MB" "wall s" "CPU s"
printf '  %-36s %9.0f %9.3f %9.3f\n' "the six metrics" "$(awk -v b="$b6" 'BEGIN { print b / 1e6 }')" "$w6" "$c6"
printf '  %-36s %9.0f %9.3f %9.3f\n' "the six + $m named metrics a record" "$(awk -v b="$bn" 'BEGIN { print b / 1e6 }')" "$wn" "$cn"
awk -v a="$wn" -v b="$w6" -v c="$cn" -v d="$c6" 'BEGIN {
	printf "  ratio, named over six: wall %.2fx, CPU %.2fx (target <= 1.5x)\n", a / b, c / d }'
