#!/usr/bin/env bash
# The GPU check of perf-collect, for a session that is lent a GPU machine
# (the device tool; CI never runs this). Two steps:
#
#   bash bench/gpu-check.sh prepare   here: build, and gather the programs and
#                                     the shared libraries they need in .device/
#   bash bench/gpu-check.sh run       there (device run, carry [".device"]):
#                                     --plan, telemetry, and a real CUDA run of
#                                     the Python runner; results in $OUT
#
# Record in the issue note: device name, memory, compute capability, the
# hardware id and the measured peak memory (all in $OUT/summary.txt).
set -euo pipefail
cd "$(dirname "$0")/.."

case ${1:-} in
prepare)
	make -s all
	rm -rf .device && mkdir -p .device/bin .device/lib
	cp bin/perf-* .device/bin/
	for lib in $(ldd bin/perf-collect | awk '/libcjson/ { print $3 }'); do
		cp -L "$lib" .device/lib/
	done
	grep -qx '/.device/' .git/info/exclude || echo '/.device/' >>.git/info/exclude
	echo "prepared .device/: carry it to the device run"
	;;
run)
	: "${OUT:?run this on the device machine, where OUT is set}"
	export LD_LIBRARY_PATH=$PWD/.device/lib PATH=$PWD/.device/bin:$PATH
	nvidia-smi --query-gpu=name,memory.total,compute_cap --format=csv >"$OUT/nvidia-smi.csv" || true
	perf-collect --plan fixtures/configs >"$OUT/plan.jsonl"
	perf-collect --telemetry "$OUT/telemetry.csv" --interval 1 &
	tele=$!
	perf-collect --results "$OUT/results" --timeout 300 \
		--runner "python3 fixtures/runners/torch_runner.py" \
		fixtures/configs/legacy-benchmark.json >"$OUT/record.jsonl" || true
	# The same workload timed by perf-collect itself (GPU memory from NVML).
	perf-collect --results "$OUT/results" --timeout 300 \
		--runner "env PERF_EVENTS=/dev/null python3 fixtures/runners/torch_runner.py" \
		fixtures/configs/legacy-benchmark.json >"$OUT/record-self-timed.jsonl" || true
	kill $tele
	{
		echo "plan:"
		jq -r '[.benchmark_id, .action, .device, .hardware_profile_id] | @tsv' "$OUT/plan.jsonl"
		echo "runner-reported record:"
		jq -r '[.device, .avg_generation_time_s, .max_peak_memory_mb, .dit_time_s] | @tsv' "$OUT/record.jsonl"
		echo "self-timed record (NVML memory):"
		jq -r '[.device, .avg_generation_time_s, .max_peak_memory_mb] | @tsv' "$OUT/record-self-timed.jsonl"
		jq -c .hardware_profile "$OUT/plan.jsonl" | sort -u
	} | tee "$OUT/summary.txt"
	;;
*)
	echo "usage: bench/gpu-check.sh prepare|run" >&2
	exit 2
	;;
esac
