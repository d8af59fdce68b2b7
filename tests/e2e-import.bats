#!/usr/bin/env bats
# Issue 24's end to end with the real Google Benchmark: a suite of our own
# (fixtures/tests/e2e-import/) imported by perf-collect (run_config.output)
# in a lane run six times as scheduled main builds, then once with one
# benchmark 30% slower: the lane fails on that benchmark's time alone,
# perf-changes finds the step, the dashboard charts it, and perf-ab on a
# pull request that slows it says slower. The suite sets its times with
# SetIterationTime (UseManualTime): exact, so no noise can flip a verdict.

# shellcheck disable=SC2154,SC2030,SC2031,SC2016 # bats sets status, output, lines, stderr; each test is a subshell; single quotes hold sed and jq code
load lib/common
load lib/stub
load lib/ab_repo

E2E=$FIXTURES/e2e-import
SLOW='BM_Decode/manual_time'

setup_file() {
	command -v c++ >/dev/null || skip "no C++ compiler (g++)"
	[ -f /usr/include/benchmark/benchmark.h ] || skip "Google Benchmark is not installed (libbenchmark-dev)"
	c++ -O1 -o "$BATS_FILE_TMPDIR/e2e_suite" "$E2E/e2e_suite.cc" -lbenchmark -lpthread
}

setup() {
	local v
	for v in $(compgen -e); do
		case $v in PERF_BIN | PERF_STUBS) ;; PERF_* | BUILDKITE_*) unset "$v" ;; esac
	done
	unset TEST_SCOPE E2E_FACTOR DASHBOARD_DAYS HF_TOKEN
	export XDG_CACHE_HOME=$BATS_TEST_TMPDIR/xdg E2E_SUITE=$BATS_FILE_TMPDIR/e2e_suite
	export PERF_ALLOW_CPU=1 PERF_CUDA_LIBRARY=/nonexistent PERF_NVML_LIBRARY=/nonexistent
	stub_start
	cd "$BATS_TEST_TMPDIR" || return 1
}

# main_build N [VAR=VALUE ...]: scheduled main build N (commit N) of the
# suite into ./reports, ./results and ./store.
main_build() {
	local n=$1
	shift
	rm -rf reports results
	run --separate-stderr env BUILDKITE_BRANCH=main TEST_SCOPE=full BUILDKITE_BUILD_ID="b$n" \
		BUILDKITE_COMMIT="$(printf '%040x' "$n")" "$@" \
		perf-lane -r reports -o results -s store --days 36500 "$E2E/configs"
}

# seed_block: the shell block of the annotation's "Seeding a baseline" note.
seed_block() {
	sed -n '/^### Seeding a baseline$/,$p' reports/annotation.md | sed -n '/^```sh$/,/^```$/p' | sed '1d;$d'
}

# row NAME: the lane's Markdown row of benchmark NAME.
row() {
	grep -F "| $1 |" <<<"$output"
}

@test "six scheduled main builds, then one with BM_Decode 30% slower: a REGRESSION on its time alone, a change point, charted" {
	local n
	# build 1 calibrates; its annotation's commands seed both benchmarks as written
	main_build 1
	assert_success
	[ "$(grep -c '| CALIBRATION_NEEDED |' <<<"$output")" -eq 2 ]
	run bash -e -c "$(seed_block)"
	assert_success
	for n in 2 3 4 5 6; do
		main_build "$n"
		assert_success
		row "$SLOW" | grep -q '| PASS | Comparable baseline found'
		row 'BM_Encode/manual_time' | grep -q '| PASS | Comparable baseline found'
	done
	main_build 7 E2E_FACTOR=1.3
	assert_failure 1
	# BM_Decode's time alone: its row fails on time, BM_Encode passes, cpu_time gates nothing
	row "$SLOW" | grep -q '| 1.3 ms / 1.0 ms |.*| time | REGRESSION | BM_Decode/manual_time time regressed by 30.0%'
	row 'BM_Encode/manual_time' | grep -q '| PASS |'
	assert_equal "$(grep -c "| REGRESSION | BM_" <<<"$output")" 1
	# (cpu_time, measured by the clock, is not gated: its change points, if noise makes any, only reported)
	[[ "${stderr_lines[-1]}" == "perf-lane: collect 0, static 0, normalize 0, rolling 1, upload 0, summarize 0, changes "[01]": exit 1" ]]
	# perf-changes finds the step of BM_Decode's time, and only it (the seed is a seventh record before it)
	run --separate-stderr perf-changes -s store --all -m time
	assert_equal "$(jq -c '[.model_id, .metric, .unit, .direction, .n_before, .n_after, (.forward_change_percent | round)]' <<<"$output")" \
		'["BM_Decode/manual_time","time","s","worse",7,1,30]'
	printf '%s\n' "$output" >cps.jsonl
	# the lane's dashboard charts it: BM_Decode's time in ms, its axis from 1.00 to 1.30
	local fig
	fig=$(tr -d '\n' <reports/dashboard_*.html | sed 's/<figure>/\n&/g' | grep '^<figure><figcaption>time (ms) .*<title>BM_Decode/manual_time |')
	grep -qF '>1.00</text>' <<<"$fig"
	grep -qF '>1.30</text>' <<<"$fig"
	# and with perf-changes' output, the step on that chart
	run --separate-stderr perf-summarize --html dash.html --changes cps.jsonl -s store --days 36500 \
		reports/results/normalized_perf_BM_Decode_manual_time_*.json
	assert_success
	fig=$(tr -d '\n' <dash.html | sed 's/<figure>/\n&/g' | grep '^<figure><figcaption>time (ms) .*<title>BM_Decode/manual_time |')
	grep -qF '<title>change point: worse +30.0%' <<<"$fig"
}

@test "perf-ab on a pull request whose head makes BM_Decode 30% slower: slower on its time, BM_Encode equivalent" {
	ab_repo 1.3
	BUILDKITE_PULL_REQUEST=7 run --separate-stderr perf-lane -r ../reports -o ../results -s ../store \
		--cpu --ab-base HEAD~1 --ab-band 2 "$E2E/configs"
	assert_failure 1
	assert_equal "${stderr_lines[-1]}" "perf-lane: collect 0, static 0, normalize 0, rolling 0, upload 0, summarize 0, ab 1: exit 1"
	# a verdict per benchmark of the suite, by its key <benchmark>/<name>
	run jq -r '.status, (.results[] | select(.metric | endswith("/time")) | "\(.metric) \(.verdict) \(.ratio * 1000 | round)")' \
		../reports/ab_report.json
	assert_output "$(printf 'slower\nBM_Decode/manual_time/time slower 1300\nBM_Encode/manual_time/time equivalent 1000')"
	grep -q '^| e2e-suite | BM_Decode/manual_time/time | 1.300 | .* | slower :x: |' ../reports/annotation.md
	# cpu_time, not gated by the config, never decides
	[ "$(jq '[.results[] | select(.metric | endswith("/cpu_time")) | .gated] | unique' ../reports/ab_report.json)" = "$(printf '[\n  false\n]')" ]
}
