#!/usr/bin/env bats
# perf-lane: the performance lane (perf-lane(1)): the run's
# classification, which steps run, the exit status, the reports (raw
# records, worker logs as Markdown, telemetry), and a whole lane end to end
# over the fake runner: calibration, a seed, a pass, a regression.

# shellcheck disable=SC2154,SC2030,SC2031,SC2016,SC2209,SC2086 # bats sets status, output, lines, stderr; each test is a subshell; single quotes hold code for another shell; ${P}NAME builds variable names
load lib/common
load lib/stub

LANE=$FIXTURES/perf-lane

setup() {
	export XDG_CACHE_HOME=$BATS_TEST_TMPDIR/xdg
	unset BUILDKITE_SOURCE PERF_RESULTS_DIR DASHBOARD_DAYS FAKE_SLOWDOWN FAKE_EXIT HF_TOKEN
	export PERF_ALLOW_CPU=1 PERF_CUDA_LIBRARY=/nonexistent PERF_NVML_LIBRARY=/nonexistent
	stub_start
	cd "$BATS_TEST_TMPDIR" || return 1
	mkdir empty
}

# lane ARGS...: perf-lane into ./reports, ./results and ./store.
lane() {
	run --separate-stderr perf-lane -r reports -o results -s store "$@"
}

classified() {
	assert_equal "${lines[0]}" "--- perf-lane: run source $1, upload policy $2, store store, reports reports"
}

@test "classification, first match wins" {
	BUILDKITE_PULL_REQUEST=123 lane empty
	classified pr pass
	BUILDKITE_PULL_REQUEST=123 BUILDKITE_BRANCH=main TEST_SCOPE=full lane empty
	classified pr pass
	BUILDKITE_PULL_REQUEST=0 lane empty
	classified unknown never
	BUILDKITE_PULL_REQUEST=false BUILDKITE_BRANCH=main BUILDKITE_SOURCE=schedule lane empty
	classified scheduled_main always
	BUILDKITE_BRANCH=main TEST_SCOPE=full lane empty
	classified scheduled_main always
	BUILDKITE_BRANCH=main lane empty
	classified unknown never
	BUILDKITE_BRANCH=feature TEST_SCOPE=full lane empty
	classified unknown never
	BUILDKITE_BRANCH=main TEST_SCOPE=direct lane empty
	classified unknown pass
	TEST_SCOPE=direct lane empty
	classified unknown pass
	lane empty
	classified unknown never
	BUILDKITE_PULL_REQUEST=12a lane empty
	classified unknown never
}

@test "each half of the classification can be overridden: an option, then the variable" {
	BUILDKITE_PULL_REQUEST=123 lane --policy never empty
	classified pr never
	BUILDKITE_PULL_REQUEST=123 PERF_UPLOAD_POLICY=always lane empty
	classified pr always
	BUILDKITE_PULL_REQUEST=123 PERF_UPLOAD_POLICY=always lane --policy=pass empty
	classified pr pass
	BUILDKITE_BRANCH=main TEST_SCOPE=full lane --run-source local empty
	classified local always
	PERF_RUN_SOURCE=pr lane empty
	classified pr never
	lane --policy sometimes empty
	assert_failure 2
	lane --run-source nightly empty
	assert_failure 2
	lane --bogus
	assert_failure 2
	run perf-lane --help
	assert_success
	assert_line --index 0 --partial "usage: perf-lane"
}

# The store's records, as "model_id status" lines.
stored() {
	find store -name '*.json' -print0 2>/dev/null | xargs -0 -r jq -r '"\(.model_id) \(.comparison_status)"' | sort
}

@test "9.3: a PR whose benchmarks fail: no comparison, no summary, no normalized JSON" {
	BUILDKITE_PULL_REQUEST=7 FAKE_SLOWDOWN=20 lane "$LANE/configs"
	assert_failure 1
	grep -q 'Worker log tail for lane-bench' <<<"$stderr"
	assert_line "--- the rolling comparison does not run: the collection failed (status 1) and the policy is pass"
	[ ! -e reports/annotation.md ]
	[ -z "$(find reports -name 'perf_*.md' -o -name 'normalized_perf_*')" ]
	[ ! -e store ]
	# the raw record and the worker log are still reported
	[ -n "$(find reports -maxdepth 1 -name 'perf_lane-bench_*.json')" ]
	[ -n "$(find reports -maxdepth 1 -name 'worker_lane-bench_*.md')" ]
	[ -n "$(find reports -maxdepth 1 -name 'dashboard_*.html')" ]
}

@test "9.3: a PR that passes is compared, and stores its passing record" {
	BUILDKITE_PULL_REQUEST=7 lane "$LANE/configs" "$LANE/more"
	assert_success
	assert_line --partial "| lane-bench |"
	assert_line --partial "| CALIBRATION_NEEDED |"
	[ -s reports/annotation.md ]
	[ -n "$(find reports -name 'perf_*.md')" ]
	[ -n "$(find reports/results -name 'normalized_perf_lane-bench_*.json')" ]
	assert_equal "$(stored)" "$(printf 'lane-bench CALIBRATION_NEEDED\nlane-legacy PASS')"
	jq -e '.run_source == "pr" and .pr_number == "7"' store/lane-bench/*.json >/dev/null
}

@test "9.3: scheduled main compares even after a failure, and stores every record" {
	BUILDKITE_BRANCH=main BUILDKITE_SOURCE=schedule FAKE_SLOWDOWN=20 lane "$LANE/configs" "$LANE/more"
	assert_failure 1
	grep -q 'Performance pytest failure attributed to per-record static thresholds: PERF_PYTEST_RC=1' <<<"$stderr"
	assert_line --partial "| REGRESSION | lane-bench avg_generation_time_s exceeded fixed threshold (current=1.000, threshold=0.500) |"
	assert_equal "$(stored)" "$(printf 'lane-bench REGRESSION\nlane-legacy REGRESSION')"
	jq -e '.success == false and .run_source == "scheduled_main"' store/lane-bench/*.json >/dev/null
}

@test "9.3: scheduled main that passes stores every record; direct stores the passing; others none" {
	BUILDKITE_BRANCH=main TEST_SCOPE=full lane "$LANE/configs"
	assert_success
	assert_equal "$(stored)" "lane-bench CALIBRATION_NEEDED"
	rm -rf store
	TEST_SCOPE=direct lane "$LANE/configs"
	assert_success
	assert_equal "$(stored)" "lane-bench CALIBRATION_NEEDED"
	rm -rf store
	lane "$LANE/configs"
	assert_success
	assert_line --partial "| lane-bench |"
	[ ! -e store ]
	grep -q 'Tracking upload skipped for lane-bench (unknown, success=True)' <<<"$stderr"
}

@test "the lane's status: the collection's when it failed, else the comparison's" {
	# the runner fails: perf-collect 1 wins over the comparison
	BUILDKITE_BRANCH=main TEST_SCOPE=full FAKE_EXIT=3 lane "$LANE/configs" "$LANE/more"
	assert_failure 1
	assert_equal "${stderr_lines[-1]}" "perf-lane: collect 1, static 0, normalize 0, rolling 0, upload 0, summarize 0: exit 1"
	# the collection passes, a store that cannot be read: the comparison's 2
	: >afile
	BUILDKITE_BRANCH=main TEST_SCOPE=full run --separate-stderr perf-lane -r reports -o results -s afile "$LANE/configs"
	assert_failure 2
	assert_equal "${stderr_lines[-1]}" "perf-lane: collect 0, static 0, normalize 0, rolling 2, upload 0, summarize 0: exit 2"
	# invalid configs: perf-collect's 2, nothing compared on a PR
	echo '{"no_benchmark_id": 1}' >empty/bad.json
	BUILDKITE_PULL_REQUEST=1 lane empty
	assert_failure 2
	assert_equal "${stderr_lines[-1]}" "perf-lane: collect 2, static 0, normalize -, rolling -, upload -, summarize -: exit 2"
}

@test "worker logs are mirrored as Markdown: rotated part first, fences escaped, no .log in the reports" {
	mkdir -p results/worker_logs
	printf 'old line 1\nold line 2\n' >results/worker_logs/worker_b_20260616T000000Z.log.1
	printf 'new line\n```\nsneaky ```` fence\n' >results/worker_logs/worker_b_20260616T000000Z.log
	printf 'only live\n' >results/worker_logs/worker_c_20260616T000000Z.log
	lane empty
	diff - reports/worker_b_20260616T000000Z.md <<-'EOF'
		# Worker log worker_b_20260616T000000Z

		```
		old line 1
		old line 2
		new line
		\`\`\`
		sneaky \`\`\`\` fence
		```
	EOF
	grep -qx 'only live' reports/worker_c_20260616T000000Z.md
	assert_equal "$(grep -c '^```$' reports/worker_b_20260616T000000Z.md)" 2
	[ -z "$(find reports -name '*.log*')" ]
}

@test "GPU telemetry: nvidia-smi's query in the background, stopped at the end, printed with its heading" {
	lane --telemetry-interval 5 empty
	assert_equal "$(stub_calls nvidia-smi)" \
		"--query-gpu=index,timestamp,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv -l 5"
	assert_line "--- GPU telemetry (clocks.sm vs clocks.max.sm reveals capped hosts) ---"
	assert_line "0, 2026/06/16 00:00:00.000, 1980 MHz, 1980 MHz, 210.50 W, 350.00 W, 54"
	[ -f reports/gpu_telemetry.csv ]
	# the repeating query is stopped (not left to whoever adopts it)
	[ -s "$STUB_DIR/nvidia-smi.pids" ]
	local pid
	while read -r pid; do gone "$pid"; done <"$STUB_DIR/nvidia-smi.pids"
	# without nvidia-smi, perf-collect samples NVML (here there is none: an empty file)
	rm "$STUB_DIR/nvidia-smi"
	lane empty
	[ -f reports/gpu_telemetry.csv ]
}

@test "end to end: calibration, a reviewed seed, a pass, then a slower runner is a regression" {
	export BUILDKITE_BRANCH=main TEST_SCOPE=full BUILDKITE_BUILD_ID=b1
	lane "$LANE/configs"
	assert_success
	assert_line --partial "| CALIBRATION_NEEDED |"
	local src
	src=$(find reports/results -name 'normalized_perf_lane-bench_*.json')
	run --separate-stderr perf-seed prepare --source-result "$src" --intent-rationale "first baseline" \
		-s store --staging-root staging
	assert_success
	run --separate-stderr perf-seed upload staging/.seed-reservations/*/manifest -s store --confirm
	assert_success
	rm -rf reports
	BUILDKITE_BUILD_ID=b2 lane "$LANE/configs"
	assert_success
	assert_line --regexp '^\| lane-bench \| .* \| 1 \| 0\.050 / 0\.050 \|.*\| PASS \| Comparable baseline found'
	rm -rf reports
	BUILDKITE_BUILD_ID=b3 FAKE_SLOWDOWN=3 lane "$LANE/configs"
	assert_failure 1
	assert_line --partial "| REGRESSION | lane-bench throughput regressed by 66.7%"
	assert_equal "${stderr_lines[-1]}" "perf-lane: collect 0, static 0, normalize 0, rolling 1, upload 0, summarize 0: exit 1"
}

@test "the demo (make demo): calibration, the reviewed seed, then a compared pass, in seconds" {
	PERF_DEMO_DIR=$BATS_TEST_TMPDIR/demo run --separate-stderr bash "$ROOT_DIR/fixtures/demo.sh"
	assert_success
	assert_line --regexp '^    wan-t2v-1\.3b-2gpu \| 0 \| .* \| CALIBRATION_NEEDED \| '
	assert_line --partial "Seed commit: 2 (parent 1)"
	assert_line --regexp '^    wan-t2v-1\.3b-2gpu \| 1 \| 0\.050 / 0\.050 \| PASS \| Comparable baseline found'
	[ -n "$(find "$BATS_TEST_TMPDIR/demo/run2" -name 'dashboard_*.html')" ]
}
