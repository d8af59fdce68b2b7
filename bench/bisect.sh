#!/usr/bin/env bash
# perf-bisect (issue 27): its decisions simulated in process with the
# library's own code (bench/bisect-sim.c: src/lib/campaign/bisect.c on
# simulated runs), beside git bisect run with one run per commit and a
# bisect with ten runs per commit (both given the true threshold, which a
# user would not have), in the same run. BISECT_JOBS (default 1,000)
# seeded bisects of 64 commits per case, the step at a random commit.
# Targets: 5% step, 2% noise: the right commit in at least 95%, under 120
# runs on average; 3.5% step or 3% noise: at least 90%. Not part of make
# test (tests/unit/test_bisect.c runs a fast seeded subset); make bench
# runs it, and make bench-bisect alone.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
tools=build/bench
mkdir -p "$tools"
"${CC:-cc}" -O2 -Wall -Isrc/lib -o "$tools/bisect-sim" bench/bisect-sim.c \
	build/default/libperf.a -lcjson -lz -lcrypto -lm -lpthread -ldl
echo
echo "perf-bisect: ${BISECT_JOBS:-1000} simulated bisects of 64 commits per case, alpha 0.05"
printf '  %-20s %-26s %7s %9s\n' case method right "mean runs"
for c in "0.05 0.02" "0.035 0.02" "0.05 0.03"; do
	read -r step noise <<<"$c"
	"$tools/bisect-sim" "${BISECT_JOBS:-1000}" 64 "$step" "$noise" 1 |
		awk -v s="$step" -v n="$noise" '{
			m = $0; sub(/ +[0-9.]+% +[0-9.]+$/, "", m)
			printf "  %-20s %-26s %7s %9s\n", sprintf("%.1f%% step, %.0f%% noise", s * 100, n * 100), m, $(NF - 1), $NF }'
done
