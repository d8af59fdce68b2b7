#!/usr/bin/env bats
# perf-gate-static: fixed per-GPU thresholds (perf-gate-static(1)) and
# the worker-log tail.

# shellcheck disable=SC2154 # bats sets status, output, lines, stderr
load lib/common

N=perf-gate-static
D=$(printf '=%.0s' {1..78})
V2RAW='{"benchmark_id":"wan-t2v-1.3b-2gpu","device":"NVIDIA L40S","avg_generation_time_s":18.252,"max_peak_memory_mb":10000.0,"thresholds":{"max_generation_time_s":10.0,"max_peak_memory_mb":30000.0}'

@test "prints the reference's attribution string and exits 1 (the reference's example)" {
	run_case $N $N/reference-example
	assert_output --partial '"static_failures":["wan-t2v-1.3b-2gpu avg_generation_time_s exceeded fixed threshold (current=18.252, threshold=10.000)"]'
}

@test "checks every pair in order; passing records get an empty list" {
	run_case $N $N/mixed-batch
	run jq -c .static_failures <<<"$output"
	assert_line --index 0 '[]'
	assert_line --index 1 '[]'
	assert_line --index 2 '["comp avg_generation_time_s exceeded fixed threshold (current=12.000, threshold=10.000)","comp max_peak_memory_mb exceeded fixed threshold (current=31000.500, threshold=30000.000)","comp dit_time_s exceeded fixed threshold (current=11.000, threshold=10.000)"]'
}

@test "compares the rounded record values, so equal at the boundary passes" {
	run_case $N $N/rounded-boundary
	run jq -c '.static_failures | length' <<<"$output"
	assert_output $'0\n1'
}

@test "no thresholds object: nothing to check; an absent id prints unknown" {
	run_case $N $N/no-thresholds
}

@test "coerces numeric strings and booleans as the reference" {
	run_case $N $N/coerced-values
}

@test "keeps every key of the producer's records, in order" {
	run_case $N $N/producer-records
}

@test "reads the producer's pretty-printed files directly" {
	run --separate-stderr $N "$ROOT_DIR"/fixtures/records/perf_wan-t2v-1.3b-2gpu_20260616T000000Z.json \
		"$ROOT_DIR"/fixtures/records/perf_wan-t2v-1.3b-1gpu_20260616T000100Z.json \
		"$ROOT_DIR"/fixtures/records/perf_legacy-benchmark_20260616T000200Z.json
	assert_failure 1
	diff <(echo "$output") "$FIXTURES/$N/producer-records.out.jsonl"
}

@test "replaces an existing static_failures key in place" {
	run_case $N $N/rerun-replaces
	run jq -r 'keys_unsorted[-2:] | join(" ")' <<<"$output"
	assert_output "static_failures zz_last"
}

@test "--tail prints the worker log after a breach" {
	printf 'loading model\nattention backend fell back to slow path\n' >"$BATS_TEST_TMPDIR/w.log"
	run --separate-stderr $N --tail <<<"$V2RAW,\"worker_log_path\":\"$BATS_TEST_TMPDIR/w.log\"}"
	assert_failure 1
	assert_output --partial "exceeded fixed threshold"
	assert_equal "$stderr" "$D
Worker log tail for wan-t2v-1.3b-2gpu ($BATS_TEST_TMPDIR/w.log)
$D
loading model
attention backend fell back to slow path
$D"
}

@test "--tail without a recorded log prints the unavailable block" {
	run --separate-stderr $N -t <<<"$V2RAW}"
	assert_failure 1
	assert_equal "$stderr" "$D
Worker log tail for wan-t2v-1.3b-2gpu (no log file recorded)
$D
<worker log unavailable: file missing or unreadable>
$D"
}

@test "--tail with a missing log file names it and says unavailable" {
	run --separate-stderr $N -t <<<"$V2RAW,\"worker_log_path\":\"$BATS_TEST_TMPDIR/gone.log\"}"
	assert_failure 1
	assert_equal "$stderr" "$D
Worker log tail for wan-t2v-1.3b-2gpu ($BATS_TEST_TMPDIR/gone.log)
$D
<worker log unavailable: file missing or unreadable>
$D"
}

@test "--tail keeps the last 200 of 250 lines" {
	for i in $(seq 0 249); do echo "line $i"; done >"$BATS_TEST_TMPDIR/w.log"
	run --separate-stderr $N -t <<<"$V2RAW,\"worker_log_path\":\"$BATS_TEST_TMPDIR/w.log\"}"
	assert_failure 1
	[[ $stderr == *$'\n... truncated, showing last 200 of 250 lines ...\nline 50\n'* ]]
	[[ $stderr == *$'\nline 249\n'"$D" ]]
	[[ $stderr != *$'\nline 49\n'* ]]
	[ "$(grep -c '^line ' <<<"$stderr")" -eq 200 ]
}

@test "--tail reads the rotated log before the live one" {
	echo "older rotated line" >"$BATS_TEST_TMPDIR/w.log.1"
	echo "newer live line" >"$BATS_TEST_TMPDIR/w.log"
	run --separate-stderr $N -t <<<"$V2RAW,\"worker_log_path\":\"$BATS_TEST_TMPDIR/w.log\"}"
	assert_failure 1
	[[ $stderr == *$'\n'"$D"$'\nolder rotated line\nnewer live line\n'"$D" ]]
}

@test "--tail prints one block per breaching record only, in order" {
	{
		echo "$V2RAW}"
		echo '{"benchmark_id":"fine","avg_generation_time_s":1.0,"thresholds":{"max_generation_time_s":10.0}}'
		echo '{"benchmark_id":"second","avg_generation_time_s":11.0,"thresholds":{"max_generation_time_s":10.0}}'
	} >"$BATS_TEST_TMPDIR/in.jsonl"
	run --separate-stderr $N -t "$BATS_TEST_TMPDIR/in.jsonl"
	assert_failure 1
	run grep '^Worker log tail for' <<<"$stderr"
	assert_output $'Worker log tail for wan-t2v-1.3b-2gpu (no log file recorded)\nWorker log tail for second (no log file recorded)'
}

@test "without --tail nothing goes to stderr" {
	run --separate-stderr $N <<<"$V2RAW}"
	assert_failure 1
	[ -z "$stderr" ]
}

@test "rejects wrong types and non-finite values at the keys it reads" {
	run --separate-stderr $N <<'EOF'
{"benchmark_id":["x"]}
{"benchmark_id":"a","avg_generation_time_s":"slow","thresholds":{"max_generation_time_s":1.0}}
{"benchmark_id":"a","avg_generation_time_s":1.0,"thresholds":{"max_generation_time_s":{}}}
{"benchmark_id":"a","avg_generation_time_s":NaN,"thresholds":{"max_generation_time_s":1.0}}
{"benchmark_id":"a","avg_generation_time_s":1.0,"thresholds":{"max_peak_memory_mb":"nan"},"max_peak_memory_mb":1.0}
{"benchmark_id":"a","worker_log_path":7}
{"benchmark_id":"ok","avg_generation_time_s":1.0,"thresholds":{"max_generation_time_s":2.0}}
EOF
	assert_failure 2
	assert_equal "${#lines[@]}" 1
	assert_equal "$stderr" "perf-gate-static: <stdin>:1: benchmark_id must be a string
perf-gate-static: <stdin>:2: avg_generation_time_s must be a number
perf-gate-static: <stdin>:3: thresholds.max_generation_time_s must be a number
perf-gate-static: <stdin>:4: avg_generation_time_s is not a finite number
perf-gate-static: <stdin>:5: thresholds.max_peak_memory_mb is not a finite number
perf-gate-static: <stdin>:6: worker_log_path must be a string or null"
}

@test "a missing metric or threshold skips that check" {
	run --separate-stderr $N <<<'{"benchmark_id":"a","thresholds":{"max_generation_time_s":1.0,"max_dit_time_s":null},"dit_time_s":5.0,"max_peak_memory_mb":null}'
	assert_success
	assert_output --partial '"static_failures":[]'
}

@test "reads gzip input" {
	gzip -c "$FIXTURES/$N/mixed-batch.in.jsonl" >"$BATS_TEST_TMPDIR/in.gz"
	run --separate-stderr $N "$BATS_TEST_TMPDIR/in.gz"
	assert_failure 1
	diff <(echo "$output") "$FIXTURES/$N/mixed-batch.out.jsonl"
}

@test "reads a line over 64 KiB whole" {
	pad=$(head -c 100000 /dev/zero | tr '\0' y)
	run --separate-stderr $N <<<"{\"benchmark_id\":\"b\",\"pad\":\"$pad\"}"
	assert_success
	[ "$(jq -r '.pad | length' <<<"$output")" -eq 100000 ]
}

REC='{"benchmark_id":"a"}'

@test "empty input gives empty output" { check_empty_input $N; }
@test "reports malformed JSON, non-objects and trailing garbage by line, keeps valid lines" { check_malformed_lines $N "$REC"; }
@test "reports an unreadable file or a directory and goes on" { check_unreadable_and_directory $N "$FIXTURES/$N/mixed-batch.in.jsonl"; }
@test "a full disk on stdout is exit 2, never success" { check_full_disk $N "$FIXTURES/$N/producer-records.in.jsonl"; }
@test "an unknown option prints usage on stderr, exit 2" { check_unknown_option $N; }
@test "-h prints usage on stdout, exit 0" { check_help $N; }
@test "--version prints the version" { check_version $N; }

# Named metrics (issue 24): "max" and "min" bounds by "<benchmark>/<name>" glob.
NM='{"benchmark_id":"BM_Sort/1024","metrics":{"time":{"value":2.5e-05,"unit":"s","better":"lower"},"items_per_second":{"value":900.0,"unit":"items/s"},"failed":{"value":null,"unit":"s"}}'

@test "named metrics: a max on any metric, by its benchmark/name key" {
	run --separate-stderr $N <<<"$NM,\"thresholds\":{\"max_generation_time_s\":10.0,\"max\":{\"BM_Sort/1024/time\":2e-05}}}"
	assert_failure 1
	assert_equal "$(jq -c .static_failures <<<"$output")" '["BM_Sort/1024 time exceeded fixed threshold (current=2.5e-05 s, threshold=2e-05 s)"]'
}

@test "named metrics: a min, and globs where the most specific wins" {
	run --separate-stderr $N <<<"$NM,\"thresholds\":{\"min\":{\"BM_Sort/*\":1000.0,\"BM_Sort/1024/time\":1.0},\"max\":{\"*/time\":1.0,\"BM_Sort/*/time\":1e-05}}}"
	assert_failure 1
	assert_equal "$(jq -c .static_failures <<<"$output")" '["BM_Sort/1024 time exceeded fixed threshold (current=2.5e-05 s, threshold=1e-05 s)","BM_Sort/1024 time fell below fixed minimum (current=2.5e-05 s, minimum=1.0 s)","BM_Sort/1024 items_per_second fell below fixed minimum (current=900.0 items/s, minimum=1000.0 items/s)"]'
}

@test "named metrics within their bounds pass; a null value is never checked" {
	run --separate-stderr $N <<<"$NM,\"thresholds\":{\"max\":{\"BM_Sort/1024/time\":3e-05,\"*/failed\":0.0},\"min\":{\"*/items_per_second\":100}}}"
	assert_success
	assert_output --partial '"static_failures":[]'
	assert_output --partial '"metrics":{"time":{"value":2.5e-05,"unit":"s","better":"lower"}'
}

@test "named metrics: a bad metrics object or bound is exit 2 with its line" {
	run --separate-stderr $N <<'EOF2'
{"benchmark_id":"a","metrics":{"t":{"value":"fast"}}}
{"benchmark_id":"a","metrics":{"t":{"value":1.0}},"thresholds":{"max":{"a/t":"1"}}}
{"benchmark_id":"a","metrics":{"t":{"value":1.0}},"thresholds":{"min":[1]}}
{"benchmark_id":"a","metrics":{"t\u0007":{"value":1.0}}}
{"benchmark_id":"ok","metrics":{"t":{"value":1.0}},"thresholds":{"max":{"ok/t":2}}}
EOF2
	assert_failure 2
	assert_equal "${#lines[@]}" 1
	assert_equal "$stderr" "perf-gate-static: <stdin>:1: metrics.'t'.value must be a finite number or null
perf-gate-static: <stdin>:2: thresholds.max.'a/t' must be a finite number
perf-gate-static: <stdin>:3: thresholds.min must be an object
perf-gate-static: <stdin>:4: metrics.'t\\x07' name holds a control character"
}
