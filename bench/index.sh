#!/usr/bin/env bash
# make bench-index (and the end of make bench): the store index. A batch of
# 10 records gated against directory stores of 100,000 and 1,000,000
# records (200 cohorts, the reference's layout) with the index and without
# it (PERF_STORE_INDEX=0), the outputs compared byte for byte; the index's
# size against the store's; perf-upload --reindex of the 100,000 records.
# Each time is the best of BENCH_INDEX_RUNS (default 5): the machine may be
# shared. Targets (issue 28): under 20 ms at 100,000 and under 30 ms at
# 1,000,000 with the index, at least 15x faster than without; the index
# under 2% of the store; --reindex of 100,000 under 1 s.
#
#   BENCH_RECORDS        records in the smaller store (default 100000)
#   BENCH_INDEX_LARGE    records in the larger store (default 1000000; 0: none)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
n=${BENCH_RECORDS:-100000}
large=${BENCH_INDEX_LARGE:-1000000}
runs=${BENCH_INDEX_RUNS:-5}
out=bench/out
tools=build/bench
mkdir -p "$out" "$tools"
cc=${CC:-cc}
export PATH="$root/bin:$PATH"
unset PERF_STORE_INDEX PERF_STORE_THREADS
"$cc" -O2 -Wall -o "$tools/measure" bench/measure.c
"$cc" -O2 -Wall -o "$tools/gen-store" bench/gen-store.c

# store SIZE: a generated store of its own (the other benchmarks read theirs
# without an index), made again when the generator changed.
store() {
	local d=$out/index-store-$1
	if [ ! -d "$d" ] || [ bench/gen-store.c -nt "$d" ]; then
		rm -rf "$d" "$d.tmp"
		"$tools/gen-store" "$1" "$d.tmp" >/dev/null
		mv "$d.tmp" "$d"
	fi
	echo "$d"
}

# best CMD: the best wall time of $runs runs, in seconds.
best() {
	local i t b=
	for ((i = 0; i < runs; i++)); do
		read -r t _ < <("$tools/measure" "$1")
		b=$(awk -v t="$t" -v b="$b" 'BEGIN { print (b == "" || t < b) ? t : b }')
	done
	echo "$b"
}

"$tools/gen-store" -b >"$out/batch.jsonl"
sizes=$n
[ "$large" -gt 0 ] && sizes="$n $large"
echo
echo "the store index: perf-gate-rolling, a batch of 10 records, best of $runs"
printf '%-10s %12s %12s %9s %10s %11s %10s %8s\n' records "no index ms" "index ms" ratio identical "index KiB" "store MiB" "share"
for size in $sizes; do
	st=$(store "$size")
	[ -d "$st/.perfkite-index" ] || perf-upload --reindex -s "$st"
	gate="perf-gate-rolling --store $st $out/batch.jsonl"
	PERF_STORE_INDEX=0 $gate >"$out/index-without.out" 2>&1 || true
	$gate >"$out/index-with.out" 2>&1 || true
	same=no
	cmp -s "$out/index-without.out" "$out/index-with.out" && same=yes
	without=$(best "PERF_STORE_INDEX=0 $gate >/dev/null 2>&1")
	with=$(best "$gate >/dev/null 2>&1")
	isz=$(du -sk --apparent-size "$st/.perfkite-index" | cut -f1)
	ssz=$(du -sk --apparent-size --exclude=.perfkite-index "$st" | cut -f1)
	awk -v s="$size" -v a="$without" -v b="$with" -v same="$same" -v i="$isz" -v t="$ssz" 'BEGIN {
		printf "%-10d %12.1f %12.1f %8.0fx %10s %11d %10.1f %7.2f%%\n",
		    s, a * 1000, b * 1000, a / b, same, i, t / 1024, 100 * i / t }'
done
st=$(store "$n")
reindex=$(best "rm -rf $st/.perfkite-index && perf-upload --reindex -s $st")
awk -v s="$n" -v t="$reindex" 'BEGIN {
	printf "perf-upload --reindex of %d records: %.3f s (%.0f records/s)\n", s, t, s / t }'
