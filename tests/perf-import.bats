#!/usr/bin/env bats
# perf-import: a benchmark tool's output to raw records (perf-import(1)).
# The formats without a Debian tool are read from files written here from
# the tools' documented structure (fixtures/tests/perf-import/); the real
# tools run in perf-import-tools.bats.

# shellcheck disable=SC2154 # bats sets status, output, lines, stderr
load lib/common

F=$FIXTURES/perf-import

# m ID METRIC FIELD: the field of a metric of the record with that id, from $output.
m() {
	jq -c --arg id "$1" --arg m "$2" --arg f "$3" 'select(.benchmark_id == $id) | .metrics[$m][$f]' <<<"$output"
}

@test "google benchmark: repetitions are the samples, their mean the value, in seconds" {
	run -1 --separate-stderr perf-import "$F/gbench-1.8.json"
	[ "$(m BM_Encode/64 time value)" = 3e-06 ]
	[ "$(m BM_Encode/64 time samples)" = '[2e-06,4e-06,3e-06]' ]
	[ "$(m BM_Encode/64 time unit)" = '"s"' ]
	[ "$(m BM_Encode/64 cpu_time value)" = 2e-06 ]
	[ "$(m BM_Encode/64 bytes_per_second value)" = 24000000 ]
	[ "$(m BM_Encode/64 bytes_per_second unit)" = '"B/s"' ]
	# A user counter by its key, its direction not guessed.
	[ "$(m BM_Encode/64 frames value)" = 4 ]
	[ "$(m BM_Encode/64 frames better)" = null ]
	[ "$(m BM_Encode/64 time better)" = null ]
}

@test "google benchmark: aggregate, BigO and RMS rows are not benchmarks" {
	run -1 --separate-stderr perf-import "$F/gbench-1.8.json"
	run jq -r .benchmark_id <<<"$output"
	assert_output "$(printf 'BM_Encode/64\nBM_Ratio\nBM_Gpu')"
}

@test "google benchmark: aggregates stand in only without repetition rows, the mean" {
	run -0 --separate-stderr perf-import "$F/gbench-aggregates-only.json"
	[ "${#lines[@]}" -eq 1 ]
	[ "$(m BM_Hash/16 time value)" = 1.2000000000000002e-07 ]
	[ "$(m BM_Hash/16 items_per_second value)" = 8000000 ]
	[ "$(m BM_Hash/16 time samples)" = null ]
}

@test "google benchmark: bare NaN and Infinity are failed metrics, named; skipped is a failed record" {
	run -1 --separate-stderr perf-import "$F/gbench-1.8.json"
	[ "$(m BM_Ratio ratio value)" = null ]
	[ "$(m BM_Ratio ratio error)" = '"sample 1 is not a finite number (NaN)"' ]
	# Samples are finite numbers: a failed metric keeps none.
	[ "$(m BM_Ratio ratio samples)" = null ]
	[ "$(m BM_Ratio time samples)" = '[0.005]' ]
	[ "$(m BM_Ratio peak error)" = '"sample 1 is not a finite number (Infinity)"' ]
	[ "$(m BM_Ratio time value)" = 0.005 ]
	run jq -c 'select(.benchmark_id == "BM_Gpu") | [.error, .metrics]' <<<"$output"
	assert_output '["no GPU on this agent",{}]'
	grep -qx 'perf-import: .*gbench-1.8.json: BM_Ratio: ratio: sample 1 is not a finite number (NaN)' <<<"$stderr"
	grep -qx 'perf-import: .*gbench-1.8.json: BM_Gpu: failed: no GPU on this agent' <<<"$stderr"
}

@test "google benchmark: the identity names the executable, the tool version and its machine facts" {
	run -1 --separate-stderr perf-import "$F/gbench-1.8.json"
	run jq -c 'select(.benchmark_id == "BM_Encode/64") | [.workload_id, .variant_id, .benchmark_version, .recipe.tool.settings, .software_profile.tool_version, .hardware_profile.tool_context.num_cpus]' <<<"$output"
	assert_output '["codec_bench","default",1,{"repetitions":3,"threads":1},"v1.8.3",16]'
}

@test "says which format it recognised; --format skips the guess" {
	run -0 --separate-stderr perf-import "$F/gbench-aggregates-only.json"
	[ "$stderr" = "perf-import: $F/gbench-aggregates-only.json: read as google-benchmark" ]
	run -0 --separate-stderr perf-import -f google-benchmark "$F/gbench-aggregates-only.json"
	[ -z "$stderr" ]
	run -0 --separate-stderr perf-import <"$F/gbench-aggregates-only.json"
	[ "$stderr" = "perf-import: <stdin>: read as google-benchmark" ]
}

@test "jmh: score with its mode's direction, ops/ms to 1/s, secondary metrics, string NaN" {
	run -1 --separate-stderr perf-import "$F/jmh.json"
	id='org.example.MapBench.put[mode=thrpt,size=1000]'
	[ "$(m "$id" score value)" = 1500000 ]
	[ "$(m "$id" score unit)" = '"1/s"' ]
	[ "$(m "$id" score better)" = '"higher"' ]
	[ "$(m "$id" score samples)" = '[1400000,1500000,1600000,1500000]' ]
	[ "$(m "$id" gc.alloc.rate value)" = 250000000 ]
	[ "$(m "$id" gc.alloc.rate better)" = null ]
	[ "$(m "$id" gc.alloc.rate.norm unit)" = '"B"' ]
	id='org.example.MapBench.get[mode=avgt,size=1000]'
	[ "$(m "$id" score better)" = '"lower"' ]
	[ "$(m "$id" score unit)" = '"s"' ]
	id='org.example.MapBench.broken[mode=ss]'
	[ "$(m "$id" score error)" = '"not a finite number (NaN)"' ]
	run jq -c 'select(.variant_id == "mode=thrpt,size=1000") | [.workload_id, .recipe.tool.settings.forks, .software_profile.tool_context.jdkVersion]' <<<"$output"
	assert_output '["org.example.MapBench",2,"17.0.9"]'
}

@test "benchmarkdotnet: FullName, actual workload samples per operation, TheGreaterTheBetter, no Statistics fails" {
	run -1 --separate-stderr perf-import "$F/bdn.json"
	id='Bench.Hashing.Sha256(N: 1000)'
	[ "$(m "$id" time value)" = 4.2000000000000004e-06 ]
	[ "$(m "$id" time samples)" = '[4.000000000000001e-06,4.4e-06,4.2000000000000004e-06]' ]
	[ "$(m "$id" 'Allocated Memory' value)" = 112 ]
	[ "$(m "$id" 'Allocated Memory' better)" = '"lower"' ]
	[ "$(m "$id" CacheHits better)" = '"higher"' ]
	recs=$output
	run jq -c 'select(.benchmark_id == "Bench.Hashing.Sha256(N: 1000)") | [.workload_id, .variant_id, .software_profile.tool_version]' <<<"$recs"
	assert_output '["Bench.Hashing","N=1000","0.13.12"]'
	run jq -c 'select(.benchmark_id == "Bench.Hashing.Md5(N: 1000)") | .error' <<<"$recs"
	assert_output '"no statistics: the benchmark did not run"'
}

@test "criterion: every new/ below the directory, both key styles, samples and throughput" {
	run -0 --separate-stderr perf-import "$F/criterion"
	run jq -r .benchmark_id <<<"$output"
	assert_output "$(printf 'fib/20\nparse/json')"
	run -0 --separate-stderr perf-import "$F/criterion"
	[ "$(m fib/20 time value)" = 2.425e-05 ]
	[ "$(m fib/20 time samples)" = '[2.4e-05,2.43e-05,2.43e-05,2.4200000000000002e-05]' ]
	[ "$(m parse/json time value)" = 1.024e-06 ]
	[ "$(m parse/json time samples)" = '[1.0000000000000002e-06,1.024e-06]' ]
	[ "$(m parse/json bytes_per_second unit)" = '"B/s"' ]
	run jq -c 'select(.benchmark_id == "fib/20") | .recipe.tool.settings' <<<"$output"
	assert_output '{"sample_size":4}'
	run -0 --separate-stderr perf-import "$F/criterion"
	# One benchmark's file is read beside its siblings.
	run -0 --separate-stderr perf-import -f criterion "$F/criterion/fib/20/new/estimates.json"
	[ "$(m fib/20 time value)" = 2.425e-05 ]
}

@test "catch2 v3: test case, nested sections and name joined; entities decoded; a failure" {
	run -1 --separate-stderr perf-import "$F/catch2-v3.xml"
	run jq -c '[.benchmark_id, .metrics.time.value, .error, .software_profile.tool_version, .workload_id]' <<<"$output"
	assert_line --index 0 '["Codec & friends/encode/small/encode 64 B",1.2505000000000001e-06,null,"3.5.2","codec_tests"]'
	assert_line --index 1 '["Codec & friends/decode",null,"std::runtime_error: corrupt input","3.5.2","codec_tests"]'
}

@test "perfkite JSON: metrics as given, units converted, direction only where stated" {
	run -1 --separate-stderr perf-import "$F/perfkite.json"
	id='decode[batch=8,model=tiny]'
	[ "$(m "$id" tokens_per_s better)" = '"higher"' ]
	[ "$(m "$id" tokens_per_s samples)" = '[800,825]' ]
	[ "$(m "$id" latency value)" = 0.0125 ]
	[ "$(m "$id" latency unit)" = '"s"' ]
	[ "$(m "$id" cache_ratio better)" = null ]
	run jq -c '[.benchmark_id, .workload_id, .variant_id, .params, .error]' <<<"$output"
	assert_line --index 0 '["decode[batch=8,model=tiny]","llm-serving","batch=8,model=tiny",{"batch":8,"model":"tiny"},null]'
	assert_line --index 1 '["prefill","llm-serving","default",null,"out of memory"]'
}

@test "github-action-benchmark arrays: direction only from customBiggerIsBetter or customSmallerIsBetter" {
	run -0 --separate-stderr perf-import "$F/gab.json"
	run jq -c '.metrics.value | [.value, .unit, .better]' <<<"$output"
	assert_line --index 0 '[70,"req/s",null]'
	run -0 --separate-stderr perf-import -f customBiggerIsBetter "$F/gab.json"
	run jq -c '.metrics.value.better' <<<"$output"
	assert_line --index 0 '"higher"'
	run -0 --separate-stderr perf-import -f customSmallerIsBetter "$F/gab.json"
	run jq -c '.metrics.value.better' <<<"$output"
	assert_line --index 0 '"lower"'
}

@test "a raw record: perf-collect's keys in its order, a complete v2 identity, provenance from the environment" {
	run -0 --separate-stderr env BUILDKITE_COMMIT=abc BUILDKITE_BRANCH=main TEST_SCOPE=full \
		BUILDKITE_BUILD_ID=b1 perf-import "$F/gbench-aggregates-only.json"
	run jq -r 'keys_unsorted | join(" ")' <<<"$output"
	assert_output "benchmark_id result_schema_version device thresholds worker_log_path regression_thresholds commit run_source branch pr_number test_scope build_url build_id job_id timestamp metrics recipe recipe_fingerprint hardware_profile hardware_profile_id software_profile software_profile_id workload_id variant_id benchmark_version"
	run jq -c '[.commit, .branch, .run_source, .build_id, .result_schema_version]' <<<"$(perf-import "$F/gbench-aggregates-only.json" 2>/dev/null)"
	assert_output '["","","local","",2]'
}

@test "provenance and the run source come from the same variables as perf-collect's" {
	export BUILDKITE_COMMIT=abc BUILDKITE_BRANCH=main TEST_SCOPE=full BUILDKITE_BUILD_ID=b1
	run -0 --separate-stderr perf-import "$F/gbench-aggregates-only.json"
	run jq -c '[.commit, .branch, .run_source, .build_id, .test_scope]' <<<"$output"
	assert_output '["abc","main","scheduled_main","b1","full"]'
}

@test "the fingerprints are stable across runs and change with a setting that changes the measurement" {
	a=$(perf-import "$F/gbench-1.8.json" 2>/dev/null | jq -r 'select(.benchmark_id == "BM_Encode/64") | .recipe_fingerprint + .hardware_profile_id + .software_profile_id' || true)
	b=$(perf-import "$F/gbench-1.8.json" 2>/dev/null | jq -r 'select(.benchmark_id == "BM_Encode/64") | .recipe_fingerprint + .hardware_profile_id + .software_profile_id' || true)
	[ -n "$a" ] && [ "$a" = "$b" ]
	sed 's/"repetitions": 3/"repetitions": 4/' "$F/gbench-1.8.json" >"$BATS_TEST_TMPDIR/reps.json"
	c=$(perf-import "$BATS_TEST_TMPDIR/reps.json" 2>/dev/null | jq -r 'select(.benchmark_id == "BM_Encode/64") | .recipe_fingerprint' || true)
	[ -n "$c" ] && [ "$c" != "${a:0:64}" ]
}

@test "--identity overrides identity and provenance keys; the last value wins" {
	run -0 --separate-stderr perf-import -i workload_id=codec -i benchmark_version=3 \
		--identity commit=c0ffee -i variant_id=v -i variant_id=w -i hardware_profile_id=hw-x \
		"$F/gbench-aggregates-only.json"
	run jq -c '[.workload_id, .benchmark_version, .commit, .variant_id, .recipe.benchmark.benchmark_version, .hardware_profile_id]' <<<"$output"
	assert_output '["codec",3,"c0ffee","w",3,"hw-x"]'
	run -2 --separate-stderr perf-import -i color=blue "$F/gbench-aggregates-only.json"
	[[ "$stderr" == *"--identity color: not a key it sets"* ]]
	run -2 --separate-stderr perf-import -i benchmark_version=x "$F/gbench-aggregates-only.json"
	run -2 --separate-stderr perf-import -i workload_id "$F/gbench-aggregates-only.json"
}

@test "the records go through perf-gate-static and perf-normalize" {
	perf-import "$F/gbench-aggregates-only.json" 2>/dev/null >"$BATS_TEST_TMPDIR/raw.jsonl"
	run -0 --separate-stderr bash -c "perf-gate-static <'$BATS_TEST_TMPDIR/raw.jsonl' | perf-normalize"
	run jq -c '[.model_id, .workload_id, .recipe_fingerprint == $fp]' --arg fp "$(jq -r .recipe_fingerprint "$BATS_TEST_TMPDIR/raw.jsonl")" <<<"$output"
	assert_output '["BM_Hash/16","agg",true]'
}

@test "an unrecognised input is exit 2 naming what was looked for" {
	printf 'hello\n' >"$BATS_TEST_TMPDIR/x.txt"
	run -2 --separate-stderr perf-import "$BATS_TEST_TMPDIR/x.txt"
	[ -z "$output" ]
	[[ "$stderr" == "perf-import: $BATS_TEST_TMPDIR/x.txt: unrecognised input: looked for a Google Benchmark, pytest-benchmark, hyperfine, JMH, BenchmarkDotNet, Criterion or perfkite JSON document, go test -bench text, Catch2 XML, or a Criterion directory" ]]
	run -2 --separate-stderr perf-import </dev/null
	[[ "$stderr" == *"<stdin>: unrecognised input"* ]]
}

@test "malformed JSON is exit 2 with FILE:LINE, and no record of any file is written" {
	printf '{\n  "context": {},\n  "benchmarks": [\n    {"name": "x",}\n  ]\n}\n' >"$BATS_TEST_TMPDIR/bad.json"
	run -2 --separate-stderr perf-import -f google-benchmark "$F/gbench-aggregates-only.json" "$BATS_TEST_TMPDIR/bad.json"
	[ -z "$output" ]
	[[ "$stderr" == "perf-import: $BATS_TEST_TMPDIR/bad.json:4: "* ]]
}

@test "a malformed go result line is exit 2 with its line" {
	printf 'goos: linux\npkg: example.com/x\nBenchmarkA-2   100   12.5 ns/op   64\nPASS\n' >"$BATS_TEST_TMPDIR/go.txt"
	run -2 --separate-stderr perf-import "$BATS_TEST_TMPDIR/go.txt"
	[ -z "$output" ]
	[[ "$stderr" == *"go.txt:3: an odd result line: want NAME ITERATIONS and VALUE UNIT pairs" ]]
}

@test "malformed Catch2 XML is exit 2 with its line" {
	printf '<?xml version="1.0"?>\n<Catch name="t">\n  <Group name="t">\n    <TestCase name="a">\n  </Group>\n</Catch>\n' >"$BATS_TEST_TMPDIR/c.xml"
	run -2 --separate-stderr perf-import "$BATS_TEST_TMPDIR/c.xml"
	[ -z "$output" ]
	[ "${stderr##*$'\n'}" = "perf-import: $BATS_TEST_TMPDIR/c.xml:5: </Group> closes TestCase" ]
}

@test "a missing field names the element" {
	printf '{"machine_info": {}, "benchmarks": [{"fullname": "t.py::a", "stats": {}}]}' >"$BATS_TEST_TMPDIR/p.json"
	run -2 --separate-stderr perf-import "$BATS_TEST_TMPDIR/p.json"
	[[ "$stderr" == *"p.json: benchmarks[0]: stats.mean: not a number" ]]
}

@test "a file that cannot be read is exit 2" {
	run -2 --separate-stderr perf-import -f go "$BATS_TEST_TMPDIR/none.txt"
	[[ "$stderr" == *"none.txt: cannot read: No such file or directory" ]]
}

@test "go text from a file with a line over 64 KiB is read whole" {
	{ printf 'pkg: p\n'; printf 'x%.0s' $(seq 70000); printf '\nBenchmarkA-4   10   5 ns/op\n'; } >"$BATS_TEST_TMPDIR/long.txt"
	run -0 --separate-stderr perf-import -f go "$BATS_TEST_TMPDIR/long.txt"
	run jq -c '[.benchmark_id, .metrics.time.value, .recipe.tool.settings]' <<<"$output"
	assert_output '["BenchmarkA[procs=4]",5e-09,{"count":1}]'
}

@test "a write error is exit 2" {
	run -2 --separate-stderr bash -c "perf-import '$F/gbench-aggregates-only.json' >/dev/full"
	[[ "$stderr" == *"write error"* ]]
}

@test "an unknown option or format prints usage and exits 2; -h prints it and exits 0" {
	run -2 --separate-stderr perf-import --bogus
	[[ "$stderr" == *"usage: perf-import"* ]]
	run -2 --separate-stderr perf-import -f yaml
	[[ "$stderr" == *"unknown format 'yaml'"* ]]
	run -0 perf-import -h
	[[ "$output" == *"--identity key=value"* ]]
}

@test "go: --- FAIL: and --- SKIP: make failed records with the log lines after or before them" {
	printf 'pkg: p\nBenchmarkA-4   10   5 ns/op\n--- FAIL: BenchmarkB\n    b_test.go:3: boom\n    b_test.go:4: again\nBenchmarkC\n    c_test.go:9: no GPU\n--- SKIP: BenchmarkC\nBenchmarkD   10  6 ns/op\n' >"$BATS_TEST_TMPDIR/go.txt"
	run -1 --separate-stderr perf-import "$BATS_TEST_TMPDIR/go.txt"
	run jq -c '[.benchmark_id, .error, .workload_id]' <<<"$output"
	assert_output "$(printf '%s\n' '["BenchmarkA[procs=4]",null,"p"]' \
		'["BenchmarkB[procs=1]","failed; b_test.go:3: boom; b_test.go:4: again","p"]' \
		'["BenchmarkC[procs=1]","skipped; c_test.go:9: no GPU","p"]' '["BenchmarkD[procs=1]",null,"p"]')"
}

@test "an input with no benchmark in it is exit 2" {
	printf '{"context": {"executable": "./x"}, "benchmarks": []}\n' >"$BATS_TEST_TMPDIR/empty.json"
	run -2 --separate-stderr perf-import "$BATS_TEST_TMPDIR/empty.json"
	[ -z "$output" ]
	[[ "$stderr" == *"empty.json: no benchmark in it (read as google-benchmark)" ]]
}

@test "gzip input is read as it is elsewhere; a broken one is exit 2" {
	gzip -c "$F/jmh.json" >"$BATS_TEST_TMPDIR/jmh.json.gz"
	run -1 --separate-stderr perf-import "$BATS_TEST_TMPDIR/jmh.json.gz"
	[ "${#lines[@]}" -eq 3 ]
	head -c 200 "$BATS_TEST_TMPDIR/jmh.json.gz" >"$BATS_TEST_TMPDIR/cut.gz"
	run -2 --separate-stderr perf-import "$BATS_TEST_TMPDIR/cut.gz"
	[ -z "$output" ]
	[[ "$stderr" == *"cut.gz: cannot read: not valid gzip data" ]]
}

@test "a metric name keeps at most 128 bytes, cut between characters, control characters as spaces" {
	long=x$(printf 'é%.0s' $(seq 100))
	printf '{"context": {}, "benchmarks": [{"name": "a", "run_name": "a", "run_type": "iteration", "real_time": 1, "time_unit": "ns", "tab\\tkey": 2, "%s": 5}, {"name": "a", "run_name": "a", "run_type": "iteration", "real_time": 3, "time_unit": "ns", "tab\\tkey": 4, "%s": 7}]}\n' "$long" "$long" >"$BATS_TEST_TMPDIR/names.json"
	run -0 --separate-stderr perf-import "$BATS_TEST_TMPDIR/names.json"
	run jq -c '.metrics | to_entries | map([(.key | utf8bytelength), .value.samples])' <<<"$output"
	assert_output '[[4,[1e-09,3.0000000000000004e-09]],[7,[2,4]],[127,[5,7]]]'
	run jq -r '.metrics | keys_unsorted[1]' <<<"$(perf-import "$BATS_TEST_TMPDIR/names.json" 2>/dev/null)"
	assert_output 'tab key'
}

@test "catch2: a non-finite setting (samples=\"nan\") is exit 2 naming the benchmark and the setting, never a crash" {
	run --separate-stderr perf-import "$F/catch2-nan-samples.xml"
	assert_failure 2
	assert_equal "$output" ""
	[[ $stderr == *"encode 64 B: cannot write recipe.tool.settings.samples: not a finite number"* ]]
}
