#!/usr/bin/env bats
# perf-normalize: raw records to tracking records (perf-normalize(1)).

# shellcheck disable=SC2154 # bats sets status, output, lines, stderr
load lib/common

N=perf-normalize

@test "explicit PERF_RUN_SOURCE wins over a PR" {
	run_case $N $N/explicit-run-source
}

@test "infers pr from BUILDKITE_PULL_REQUEST" {
	run_case $N $N/infer-pr
}

@test "infers scheduled_main from branch main and scope full" {
	run_case $N $N/infer-scheduled-main
}

@test "takes provenance from the environment, pr_number from the record" {
	run_case $N $N/source-metadata
}

@test "writes the effective policy of all six metrics" {
	run_case $N $N/effective-thresholds
}

@test "a threshold container that is not an object gives the defaults" {
	run_case $N $N/invalid-threshold-container
}

@test "ignores boolean threshold values and reads gated strings" {
	run_case $N $N/boolean-threshold-values
}

@test "copies identity metadata verbatim" {
	run_case $N $N/identity-metadata
}

@test "raw provenance wins over the environment, pr_number false becomes empty" {
	run_case $N $N/raw-provenance-wins
}

@test "a v1 record gets no result_schema_version" {
	run_case $N $N/v1-no-schema-version
	run jq -c 'has("result_schema_version")' "$FIXTURES/$N/v1-no-schema-version.out.jsonl"
	assert_output false
}

@test "fills identity from recipe.benchmark after the identity keys" {
	run_case $N $N/identity-from-recipe
	run jq -r 'keys_unsorted[-4:] | join(" ")' <<<"$output"
	assert_output "variant_metadata workload_id variant_id benchmark_version"
}

@test "keeps the six identity values with their types, drops null ones" {
	run_case $N $N/v2-identity
	run jq -c '[.workload_id, .variant_id, .benchmark_version, .recipe_fingerprint, .hardware_profile_id, .software_profile_id]' <<<"$output"
	assert_line --index 0 '["wan-t2v","1.3b-sp2",2,"recipe-1","hw-l40s-2","sw-cuda"]'
	assert_line --index 1 '["wan-t2v","1.3b-sp2",0,"recipe-1","hw-l40s-2","sw-cuda"]'
	assert_line --index 2 '[null,"1.3b-sp2",2,"recipe-1","hw-l40s-2",null]'
}

@test "coerces metric values to floats as the reference (integers, booleans, numeric strings)" {
	run_case $N $N/numeric-coercion
	# jq would print 10.0 as 10: check the text itself.
	assert_output --partial '"latency":10.0,"throughput":4.5,"memory":1.0,"text_encoder_time_s":null,"dit_time_s":10.5,'
}

@test "missing fields take the reference's defaults" {
	run_case $N $N/missing-fields
}

@test "passes static_failures through" {
	run_case $N $N/static-failures-pass-through
}

@test "warns about an invalid PERF_RUN_SOURCE once per record" {
	run_case $N $N/invalid-run-source-warns
}

@test "keeps an integer pr_number, falls through on false, drops 0" {
	run_case $N $N/pr-number-types
}

@test "normalizes the producer's records, byte for byte with the reference" {
	run_case $N $N/producer-records
}

@test "reads the producer's pretty-printed files directly" {
	run --separate-stderr $N "$ROOT_DIR"/fixtures/records/perf_wan-t2v-1.3b-2gpu_20260616T000000Z.json \
		"$ROOT_DIR"/fixtures/records/perf_wan-t2v-1.3b-1gpu_20260616T000100Z.json \
		"$ROOT_DIR"/fixtures/records/perf_legacy-benchmark_20260616T000200Z.json
	assert_success
	[ -z "$stderr" ]
	diff <(echo "$output") "$FIXTURES/$N/producer-records.out.jsonl"
}

@test "reads gzip input" {
	gzip -c "$FIXTURES/$N/producer-records.in.jsonl" >"$BATS_TEST_TMPDIR/in.jsonl.gz"
	run --separate-stderr $N "$BATS_TEST_TMPDIR/in.jsonl.gz"
	assert_success
	diff <(echo "$output") "$FIXTURES/$N/producer-records.out.jsonl"
}

@test "reads stdin, and - among files" {
	run --separate-stderr $N <"$FIXTURES/$N/infer-pr.in.jsonl"
	assert_success
	[ "$(jq -r .model_id <<<"$output")" = wan-t2v-1.3b-2gpu ]
	cp "$FIXTURES/$N/v1-no-schema-version.in.jsonl" "$BATS_TEST_TMPDIR/stdin.jsonl"
	run --separate-stderr $N "$FIXTURES/$N/v1-no-schema-version.in.jsonl" - <"$BATS_TEST_TMPDIR/stdin.jsonl"
	assert_success
	[ "${#lines[@]}" -eq 2 ]
}

@test "a missing timestamp becomes the current UTC time in isoformat" {
	run --separate-stderr $N <<<'{"benchmark_id":"b","timestamp":""}'
	assert_success
	run jq -r .timestamp <<<"$output"
	assert_output --regexp '^20[0-9]{2}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{6})?\+00:00$'
}

@test "options override the environment" {
	run --separate-stderr env PERF_RUN_SOURCE=pr BUILDKITE_BRANCH=env BUILDKITE_COMMIT=env \
		$N --run-source local --branch opt --commit optsha --pr-number 9 --test-scope scope \
		--build-url u --build-id b --job-id j <<<'{"benchmark_id":"b","timestamp":"t"}'
	assert_success
	run jq -c '[.run_source, .branch, .commit_sha, .pr_number, .test_scope, .build_url, .build_id, .job_id]' <<<"$output"
	assert_output '["local","opt","optsha","9","scope","u","b","j"]'
}

@test "--run-source replaces the record's run source; PERF_RUN_SOURCE only fills a missing one, as the reference" {
	local rec='{"benchmark_id":"b","timestamp":"t","run_source":"pr"}'
	run --separate-stderr $N --run-source ' Scheduled_Main ' <<<"$rec"
	assert_success
	assert_equal "$(jq -r .run_source <<<"$output")" scheduled_main
	assert_equal "$stderr" ""
	run --separate-stderr env PERF_RUN_SOURCE=scheduled_main $N <<<"$rec"
	assert_success
	assert_equal "$(jq -r .run_source <<<"$output")" pr
	run --separate-stderr env PERF_RUN_SOURCE=scheduled_main $N <<<'{"benchmark_id":"b","timestamp":"t","run_source":"bogus"}'
	assert_success
	assert_equal "$(jq -r .run_source <<<"$output")" scheduled_main
}

@test "rejects an invalid --run-source with usage" {
	run --separate-stderr $N --run-source bogus </dev/null
	assert_failure 2
	[[ $stderr == *"invalid run source 'bogus'"* ]]
	[[ $stderr == *usage:* ]]
}

@test "skips blank lines and keeps line numbers" {
	printf '\n\n{"benchmark_id":"a","timestamp":"t"}\n   \n{"benchmark_id":\n' >"$BATS_TEST_TMPDIR/in.jsonl"
	run --separate-stderr $N "$BATS_TEST_TMPDIR/in.jsonl"
	assert_failure 2
	[ "${#lines[@]}" -eq 1 ]
	[ "$stderr" = "perf-normalize: $BATS_TEST_TMPDIR/in.jsonl:5: invalid JSON at column 17: unexpected end of input" ]
}

@test "rejects wrong types at the keys it reads" {
	run --separate-stderr $N <<'EOF'
{"benchmark_id":7}
{"device":["x"]}
{"timestamp":17}
{"commit":true}
{"avg_generation_time_s":"fast"}
{"throughput_fps":{"v":1}}
{"static_failures":"x"}
EOF
	assert_failure 2
	assert_output ""
	assert_equal "$stderr" "perf-normalize: <stdin>:1: benchmark_id must be a string
perf-normalize: <stdin>:2: device must be a string
perf-normalize: <stdin>:3: timestamp must be a string
perf-normalize: <stdin>:4: commit must be a string
perf-normalize: <stdin>:5: avg_generation_time_s must be a number
perf-normalize: <stdin>:6: throughput_fps must be a number
perf-normalize: <stdin>:7: static_failures must be an array of strings"
}

@test "rejects non-finite numbers instead of writing NaN" {
	run --separate-stderr $N <<'EOF'
{"benchmark_id":"a","avg_generation_time_s":NaN}
{"benchmark_id":"a","throughput_fps":"inf"}
{"benchmark_id":"a","max_peak_memory_mb":1e999}
{"benchmark_id":"a","regression_thresholds":{"memory":{"threshold_percent":"nan"}}}
{"benchmark_id":"a","recipe":{"x":Infinity}}
{"benchmark_id":"ok","timestamp":"t"}
EOF
	assert_failure 2
	assert_equal "${#lines[@]}" 1
	assert_equal "$stderr" "perf-normalize: <stdin>:1: avg_generation_time_s is not a finite number
perf-normalize: <stdin>:2: throughput_fps is not a finite number
perf-normalize: <stdin>:3: max_peak_memory_mb is not a finite number
perf-normalize: <stdin>:4: regression_thresholds.memory.threshold_percent is not a finite number
perf-normalize: <stdin>:5: cannot write recipe.x: not a finite number"
}

@test "reads a line over 64 KiB whole" {
	pad=$(head -c 200000 /dev/zero | tr '\0' x)
	printf '{"benchmark_id":"long","timestamp":"t","recipe":{"pad":"%s"}}\n' "$pad" >"$BATS_TEST_TMPDIR/in.jsonl"
	run --separate-stderr $N "$BATS_TEST_TMPDIR/in.jsonl"
	assert_success
	[ "$(jq -r '.recipe.pad | length' <<<"$output")" -eq 200000 ]
}

@test "reports a malformed line over 64 KiB with its line number" {
	pad=$(head -c 100000 /dev/zero | tr '\0' x)
	printf '{"benchmark_id":"a","timestamp":"t"}\n{"benchmark_id":"%s",}\n{"benchmark_id":"c","timestamp":"t"}\n' "$pad" >"$BATS_TEST_TMPDIR/in.jsonl"
	run --separate-stderr $N "$BATS_TEST_TMPDIR/in.jsonl"
	assert_failure 2
	[ "${#lines[@]}" -eq 2 ]
	[ "$stderr" = "perf-normalize: $BATS_TEST_TMPDIR/in.jsonl:2: invalid JSON at column 100020: expected a member name, found '}'" ]
}

REC='{"benchmark_id":"a","timestamp":"t"}'

@test "empty input gives empty output" { check_empty_input $N; }
@test "reports malformed JSON, non-objects and trailing garbage by line, keeps valid lines" { check_malformed_lines $N "$REC"; }
@test "reports an unreadable file or a directory and goes on" { check_unreadable_and_directory $N "$FIXTURES/$N/infer-pr.in.jsonl"; }
@test "a full disk on stdout is exit 2, never success" { check_full_disk $N "$FIXTURES/$N/producer-records.in.jsonl"; }
@test "an unknown option prints usage on stderr, exit 2" { check_unknown_option $N; }
@test "-h prints usage on stdout, exit 0" { check_help $N; }
@test "--version prints the version" { check_version $N; }

# Named metrics (issue 24).
NMRAW='{"benchmark_id":"BM_Sort/8","device":"cpu","timestamp":"2026-01-01T00:00:00+00:00","avg_generation_time_s":null,"metrics":{"time":{"value":2.5e-05,"unit":"s","better":"lower","samples":[2.4e-05,2.6e-05]},"rss":{"value":7,"unit":"pages"}},"regression_thresholds":{"dit_time_s":{"gated":false},"metrics":{"BM_*":{"threshold_percent":0.1},"*/rss":{"gated":false}}}}'

@test "named metrics: carries metrics after the six and their policy block after the six's" {
	run --separate-stderr $N -r pr <<<"$NMRAW"
	assert_success
	assert_output '{"model_id":"BM_Sort/8","timestamp":"2026-01-01T00:00:00+00:00","commit_sha":"","gpu_type":"cpu","latency":null,"throughput":null,"memory":null,"text_encoder_time_s":null,"dit_time_s":null,"vae_decode_time_s":null,"metrics":{"time":{"value":2.5e-05,"unit":"s","better":"lower","samples":[2.4e-05,2.6e-05]},"rss":{"value":7,"unit":"pages"}},"regression_thresholds":{"latency":{"threshold_percent":0.08,"threshold_absolute":0.5,"gated":true},"throughput":{"threshold_percent":0.08,"threshold_absolute":0.05,"gated":true},"memory":{"threshold_percent":0.05,"threshold_absolute":256.0,"gated":true},"text_encoder_time_s":{"threshold_percent":0.05,"threshold_absolute":0.25,"gated":true},"dit_time_s":{"threshold_percent":0.05,"threshold_absolute":0.25,"gated":false},"vae_decode_time_s":{"threshold_percent":0.05,"threshold_absolute":0.25,"gated":true},"metrics":{"BM_*":{"threshold_percent":0.1},"*/rss":{"gated":false}}},"success":true,"run_source":"pr","baseline_eligible":false,"branch":"","pr_number":"","test_scope":"","build_url":"","build_id":"","job_id":""}'
}

@test "named metrics: a record with only the six gets no metrics key anywhere" {
	run --separate-stderr $N -r pr <<<'{"benchmark_id":"a","timestamp":"t","avg_generation_time_s":1.0}'
	assert_success
	assert_equal "$(jq -c '[has("metrics"), (.regression_thresholds | has("metrics"))]' <<<"$output")" '[false,false]'
}

@test "named metrics: an invalid metric or policy block is exit 2 with its line" {
	run --separate-stderr $N <<'EOF'
{"benchmark_id":"a","metrics":{"t":{"value":NaN}}}
{"benchmark_id":"a","metrics":[]}
{"benchmark_id":"a","metrics":{"t":{"value":1,"better":"less"}}}
{"benchmark_id":"a","regression_thresholds":{"metrics":{"a/*":{"threshold_percent":"5%"}}}}
{"benchmark_id":"a","regression_thresholds":{"metrics":{"a/*":{"gate":false}}}}
{"benchmark_id":"a","regression_thresholds":{"metrics":7}}
{"benchmark_id":"ok","timestamp":"t","metrics":{"t":{"value":1}}}
EOF
	assert_failure 2
	assert_equal "${#lines[@]}" 1
	assert_equal "$stderr" "perf-normalize: <stdin>:1: metrics.'t'.value must be a finite number or null
perf-normalize: <stdin>:2: metrics must be an object
perf-normalize: <stdin>:3: metrics.'t'.better must be \"lower\" or \"higher\"
perf-normalize: <stdin>:4: regression_thresholds.metrics.'a/*'.threshold_percent must be a finite number
perf-normalize: <stdin>:5: regression_thresholds.metrics.'a/*'.gate is not a policy field (threshold_percent, threshold_absolute, gated, better)
perf-normalize: <stdin>:6: regression_thresholds.metrics must be an object"
}
