#!/usr/bin/env bats
# perf-import against the real tools (issue 24 "Tests with the real
# tools"): small suites of our own (fixtures/tests/perf-import-tools/) are
# built and run with each tool Debian ships, and every imported value is
# checked against the tool's own file. Each run is kept short (tiny
# minimum times, few rounds). A test skips, saying so, only when its tool
# is not installed (tests/deps.sh test installs them all).

# shellcheck disable=SC2154 # bats sets status, output, lines, stderr
load lib/common

S=$FIXTURES/perf-import-tools
# The suites themselves are fixtures/import's, which its configs run too.
SUITES=$ROOT_DIR/fixtures/import

cxx() {
	command -v c++ >/dev/null || skip "no C++ compiler (g++)"
}

@test "google benchmark: args, ranges, units, counters, threads, repetitions and an error, value for value" {
	cxx
	[ -f /usr/include/benchmark/benchmark.h ] || skip "Google Benchmark is not installed (libbenchmark-dev)"
	cd "$BATS_TEST_TMPDIR"
	c++ -O1 -o suite "$SUITES/gbench_suite.cc" -lbenchmark -lpthread
	./suite --benchmark_out=gb.json --benchmark_out_format=json --benchmark_repetitions=3 \
		--benchmark_min_time=0.001 >/dev/null 2>&1
	run -1 --separate-stderr perf-import gb.json
	printf '%s\n' "$output" >records.jsonl
	[ "${stderr%%$'\n'*}" = "perf-import: gb.json: read as google-benchmark" ]
	[[ "$stderr" == *"gb.json: BM_NoDevice: failed: no device on this agent"* ]]
	run jq -n --slurpfile t gb.json --slurpfile r records.jsonl -f "$S/check-gbench.jq"
	assert_success
	assert_output ""
	# The identity: the executable, the tool's settings, its machine facts.
	run jq -c 'select(.benchmark_id == "BM_Threads/threads:2") | [.workload_id, .recipe.tool.settings, (.hardware_profile.tool_context.num_cpus | type)]' records.jsonl
	assert_output '["suite",{"repetitions":3,"threads":2},"number"]'
	run jq -c 'select(.benchmark_id == "BM_Sum/16/1") | .metrics.time.samples | length' records.jsonl
	assert_output 3
}

@test "google benchmark: --benchmark_report_aggregates_only gives the mean, value for value" {
	cxx
	[ -f /usr/include/benchmark/benchmark.h ] || skip "Google Benchmark is not installed (libbenchmark-dev)"
	cd "$BATS_TEST_TMPDIR"
	c++ -O1 -o suite "$SUITES/gbench_suite.cc" -lbenchmark -lpthread
	./suite --benchmark_out=gb.json --benchmark_out_format=json --benchmark_repetitions=3 \
		--benchmark_report_aggregates_only=true --benchmark_min_time=0.001 \
		--benchmark_filter='BM_Sort|BM_Sum' >/dev/null 2>&1
	run -0 --separate-stderr perf-import -f google-benchmark gb.json
	printf '%s\n' "$output" >records.jsonl
	run jq -n --slurpfile t gb.json --slurpfile r records.jsonl -f "$S/check-gbench.jq"
	assert_success
	assert_output ""
	run jq -r .benchmark_id records.jsonl
	assert_output "$(printf 'BM_Sort/8\nBM_Sort/64\nBM_Sum/16/1\nBM_Sum/32/2')"
}

@test "pytest-benchmark: parametrized and grouped benchmarks, samples and extra_info, value for value" {
	/usr/bin/python3 -c 'import pytest_benchmark' 2>/dev/null ||
		skip "pytest-benchmark is not installed (python3-pytest-benchmark)"
	cd "$BATS_TEST_TMPDIR"
	cp "$SUITES/test_suite.py" .
	/usr/bin/python3 -m pytest -q -p no:cacheprovider --benchmark-json=pb.json \
		--benchmark-min-rounds=3 --benchmark-max-time=0.001 --benchmark-warmup=off \
		--benchmark-save-data test_suite.py >/dev/null
	run -0 --separate-stderr perf-import pb.json
	printf '%s\n' "$output" >records.jsonl
	[ "$stderr" = "perf-import: pb.json: read as pytest-benchmark" ]
	run jq -n --slurpfile t pb.json --slurpfile r records.jsonl '
		def near(a; b): a == b or ((a - b) | fabs) <= 1e-12 * ((a | fabs) + (b | fabs));
		($t[0].benchmarks | map(.fullname) | sort) as $ids
		| (if ($r | map(.benchmark_id) | sort) != $ids then "records != \($ids)" else empty end),
		  ($t[0].benchmarks[] as $b | ($r[] | select(.benchmark_id == $b.fullname)) as $rec
		  | if (near($rec.metrics.time.value; $b.stats.mean) | not) then "\($b.fullname): time \($rec.metrics.time.value) != \($b.stats.mean)"
		    elif $rec.metrics.time.samples != $b.stats.data then "\($b.fullname): samples differ"
		    elif ($rec.metrics | del(.time) | map_values(.value)) != ($b.extra_info | with_entries(select(.value | type == "number"))) then "\($b.fullname): extra_info differs"
		    elif $rec.variant_id != ((($b.params // {}) + (if $b.group then {group: $b.group} else {} end)) | to_entries | map("\(.key)=\(.value)") | join(",") | if . == "" then "default" else . end) then "\($b.fullname): variant \($rec.variant_id)"
		    elif $rec.workload_id != "test_suite.py" then "\($b.fullname): workload \($rec.workload_id)"
		    elif $rec.recipe.tool.settings.min_rounds != 3 then "\($b.fullname): settings \($rec.recipe.tool.settings)"
		    else empty end)'
	assert_success
	assert_output ""
	run jq -r '[.benchmark_id, .variant_id] | join(" ")' records.jsonl
	assert_line 'test_suite.py::test_sum[10] n=10'
	assert_line 'test_suite.py::test_sorted group=sorting'
}

@test "hyperfine: parameters, names, times, user and system time, value for value" {
	command -v hyperfine >/dev/null || skip "hyperfine is not installed"
	cd "$BATS_TEST_TMPDIR"
	hyperfine -N --runs 3 --style none -P ms 1 2 -n 'nap {ms}' 'sleep 0.00{ms}' \
		--export-json hf.json >/dev/null 2>&1
	hyperfine -N --runs 2 --style none -n quick 'true' --export-json hf2.json >/dev/null 2>&1
	run -0 --separate-stderr perf-import hf.json hf2.json
	printf '%s\n' "$output" >records.jsonl
	run jq -n --slurpfile a hf.json --slurpfile b hf2.json --slurpfile r records.jsonl '
		($a[0].results + $b[0].results) as $t
		| if ($r | length) != ($t | length) then "\($r | length) records" else
		  range(0; $t | length) as $i | $t[$i] as $x | $r[$i] as $rec
		  | ($x.command + (if $x.parameters then "[" + ($x.parameters | to_entries | map("\(.key)=\(.value)") | join(",")) + "]" else "" end)) as $id
		  | if $rec.benchmark_id != $id then "\($rec.benchmark_id) != \($id)"
		    elif $rec.metrics.time.value != $x.mean or $rec.metrics.time.samples != $x.times then "\($id): time"
		    elif $rec.metrics.user_time.value != $x.user or $rec.metrics.system_time.value != $x.system then "\($id): user/system"
		    elif ($rec.metrics | keys) != (["system_time", "time", "user_time"] + (if $x.memory_usage_byte then ["peak_memory"] else [] end) | sort) then "\($id): metrics \($rec.metrics | keys)"
		    else empty end end'
	assert_success
	assert_output ""
	run jq -r '[.benchmark_id, .variant_id] | join(" ")' records.jsonl
	assert_output "$(printf 'nap 1[ms=1] ms=1\nnap 2[ms=2] ms=2\nquick default')"
}

@test "go test -bench: -benchmem -count -cpu, MB/s and a ReportMetric unit, value for value" {
	command -v go >/dev/null || skip "Go is not installed (golang-go)"
	cd "$BATS_TEST_TMPDIR"
	mkdir suite
	cp "$SUITES/go/bench_test.go" "$SUITES/go/go.mod" suite/
	export GOCACHE=$BATS_TEST_TMPDIR/gocache GOPATH=$BATS_TEST_TMPDIR/gopath HOME=$BATS_TEST_TMPDIR \
		GOFLAGS=-mod=mod GOPROXY=off GOTOOLCHAIN=local GOTELEMETRY=off
	(cd suite && go test -run '^$' -bench . -benchmem -count 2 -cpu 1,2 -benchtime 50x -v .) >go.txt
	run -1 --separate-stderr perf-import go.txt
	printf '%s\n' "$output" >records.jsonl
	[ "${stderr%%$'\n'*}" = "perf-import: go.txt: read as go" ]
	[[ "$stderr" == *"go.txt: BenchmarkSkipped: failed: skipped; bench_test.go:"*": not on this agent"* ]]
	grep -v '^--- SKIP\|Skipped' go.txt >go-ran.txt
	run jq -Rn --slurpfile r <(jq -c 'select(.error == null)' records.jsonl) -f "$S/check-go.jq" <go-ran.txt
	assert_success
	assert_output ""
	run jq -c 'select(.benchmark_id == "BenchmarkAlloc/n=64[procs=2]") | [.workload_id, .variant_id, .params, .metrics["MB/s"].unit, .metrics["B/op"].unit, .metrics["widgets/op"].value, (.metrics.time.samples | length), .recipe.tool.settings]' records.jsonl
	assert_output '["example.com/suite","procs=2",{"procs":2},"B/s","B",3.5,2,{"count":2}]'
}

@test "catch2: test cases, nested sections and benchmarks, value for value" {
	cxx
	[ -f /usr/include/catch2/catch.hpp ] || skip "Catch2 is not installed (catch2)"
	cd "$BATS_TEST_TMPDIR"
	c++ -O0 -o suite "$SUITES/catch2_suite.cc"
	./suite -r xml --benchmark-samples 5 --benchmark-resamples 10 --benchmark-warmup-time 1 >c2.xml
	run -0 --separate-stderr perf-import c2.xml
	printf '%s\n' "$output" >records.jsonl
	[ "$stderr" = "perf-import: c2.xml: read as catch2" ]
	run py "$S/check-catch2.py" c2.xml records.jsonl
	assert_success
	assert_output ""
	run jq -r .benchmark_id records.jsonl
	assert_output "$(printf 'Vectors/read/sum/accumulate 100\nVectors/write/fill 64\nPlain/noop')"
}
