#!/usr/bin/env bats
# perf-gate-rolling: the rolling-baseline gate (perf-gate-rolling(1)). The
# fixture cases are computed by a Python transcription of the reference
# comparator (fixtures/perf-gate-rolling/gen-cases.py) and compared byte for
# byte: records, console lines and exit status.

# shellcheck disable=SC2154 # bats sets status, output, lines, stderr
load lib/common

N=perf-gate-rolling
G=$FIXTURES/$N

@test "the reference's worked example: medians 10.1, 4.5, 10000.0, 8.1 and both failure strings" {
	run_case $N $N/worked-example
	run jq -c '.comparison.metrics | [.latency.baseline, .throughput.baseline, .memory.baseline, .dit_time_s.baseline]' <<<"$output"
	assert_output '[10.1,4.5,10000,8.1]'
	[[ $stderr == *"wan-t2v-1.3b-2gpu latency regressed by 8.9% and 0.900 (current=11.000, baseline_median=10.100, threshold=gated, >8.0% and >0.500)"* ]]
	[[ $stderr == *"wan-t2v-1.3b-2gpu dit_time_s regressed by 6.2% and 0.500 (current=8.600, baseline_median=8.100, threshold=gated, >5.0% and >0.250)"* ]]
}

@test "gated metrics fail only past both floors, with each record's own policy" {
	run_case $N $N/both-floors
	run jq -r .comparison_status <<<"$output"
	assert_output $'PASS\nPASS\nREGRESSION'
}

@test "throughput is higher-better; memory and component floors" {
	run_case $N $N/directions-and-floors
	[[ $stderr == *"throughput regressed by 10.0% and 1.000"* ]]
	[[ $stderr == *"memory regressed by 6.0% and 600.0"* ]]
	[[ $stderr == *"dit_time_s regressed by 7.5% and 0.600"* ]]
}

@test "a non-gated metric past its floors is informational" {
	run_case $N $N/informational
	run jq -c '.comparison.metrics.throughput | [.percent_delta * 100, .gated, .threshold_exceeded, .regressed]' <<<"$output"
	assert_output '[20,false,true,false]'
}

@test "PASS, REGRESSION and CALIBRATION_NEEDED, each with its reason" {
	run_case $N $N/pass
	run_case $N $N/regression
	[[ $stderr == *"latency regressed by 10.0%"* ]]
	run_case $N $N/calibration-needed
	[[ $stderr == *"No baseline found for exact comparable identity (workload_id=wan-t2v, variant_id=1.3b-sp2, benchmark_version=2, recipe_fingerprint=recipe-1, hardware_profile_id=hw-l40s-2, software_profile_id=sw-cuda)"* ]]
}

@test "a reviewed seed in the store is a baseline" {
	run_case $N $N/seed-then-compare
	run jq -r '[.comparison_status, .baseline_status, .baseline_eligible] | @tsv' <<<"$output"
	assert_output $'PASS\tcompared\tfalse'
}

@test "RECIPE_MISMATCH lists the trusted fingerprints of the cohort, sorted" {
	run_case $N $N/recipe-mismatch
	[[ $stderr == *"existing recipe_fingerprint values: recipe-0, recipe-1"* ]]
}

@test "the same recipe on another profile is not a mismatch" {
	run_case $N $N/same-recipe-other-profile
	[ "$(jq -r .comparison_status <<<"$output")" = CALIBRATION_NEEDED ]
}

@test "recipe mismatch beats a static failure" {
	run_case $N $N/mismatch-beats-static
	[[ $stderr != *"fixed threshold"* ]]
}

@test "PR calibration records are not trusted" {
	run_case $N $N/pr-calibration-not-trusted
	[ "$(jq -r .comparison_status <<<"$output")" = CALIBRATION_NEEDED ]
}

@test "v2 records ignore legacy history in the same model directory" {
	run_case $N $N/v2-ignores-legacy-history
}

@test "a renamed model_id and GPU with the same identity is compared" {
	run_case $N $N/renamed-model-same-identity
	[ "$(jq -r .baseline_status <<<"$output")" = compared ]
}

@test "a static failure does not contaminate the other records" {
	run_case $N $N/no-contamination
	run jq -c '[.comparison_status, .success, .baseline_eligible]' <<<"$output"
	assert_output $'["REGRESSION",false,false]\n["PASS",true,true]'
}

@test "a failed collection without static failures is INFRA_ERROR for all" {
	run_case $N $N/unattributed
}

@test "--collect-rc overrides PERF_PYTEST_RC; a non-integer PERF_PYTEST_RC is no failure" {
	run_case $N $N/collect-rc-option
	run_case $N $N/collect-rc-not-integer
	run --separate-stderr $N --collect-rc bogus </dev/null
	assert_failure 2
	[[ $stderr == *"--collect-rc: not an integer: 'bogus'"* ]]
}

@test "a partial v2 identity beats static failures" {
	run_case $N $N/partial-v2-beats-static
}

@test "static failures beat rolling ones, and the deltas still show" {
	run_case $N $N/static-beats-rolling
	run jq -c '[.comparison.baseline_n, .comparison.metrics.latency.regressed, .comparison.failures]' <<<"$output"
	assert_output '[1,true,["wan-t2v-1.3b-2gpu avg_generation_time_s exceeded fixed threshold (current=20.000, threshold=15.000)"]]'
}

@test "the window is the last five by timestamp, whatever the directory" {
	run_case $N $N/last-five-by-timestamp
	[ "$(jq -r '.comparison.metrics.latency.baseline' <<<"$output")" = 5 ]
}

@test "equal instants break by path; unparsable timestamps are the oldest" {
	run_case $N $N/ties-and-bad-timestamps
	[ "$(jq -r '.comparison.metrics.latency.baseline' <<<"$output")" = 13 ]
}

@test "ISO week-date timestamps sort where fromisoformat puts them and set the window" {
	run_case $N $N/week-date-window
	run jq -c '[.comparison.baseline_n, .comparison.metrics.latency.baseline]' <<<"$output"
	assert_output '[5,3]'
}

@test "legacy records are never compared: PASS, or REGRESSION on a static failure" {
	run_case $N $N/legacy-record
	run jq -c '[.baseline_status, .comparison_status, .success, .baseline_eligible]' <<<"$output"
	assert_output $'["skipped_missing_identity","PASS",true,false]\n["skipped_missing_identity","REGRESSION",false,false]'
}

@test "history filters: failed, ineligible, str() identity, the legacy eligibility rule" {
	run_case $N $N/history-filters
	[ "$(jq -r '.comparison.baseline_n' <<<"$output")" = 4 ]
}

@test "hidden files are never read and invalid JSON is skipped with a warning" {
	run_case $N $N/hidden-and-invalid
}

@test "a history file that is not an object or not UTF-8 is an infra error for v2 lookups" {
	run_case $N $N/history-not-object
	run_case $N $N/history-not-utf8
}

@test "only a scheduled-main PASS becomes baseline eligible" {
	run_case $N $N/eligibility
	run jq -c .baseline_eligible <<<"$output"
	assert_output $'true\nfalse\nfalse'
}

@test "writes the normalized artifacts: reference name, 2-space JSON, no transient keys" {
	run --separate-stderr $N --store "$G/worked-example.store" --artifacts "$BATS_TEST_TMPDIR/a" \
		"$G/worked-example.in.jsonl" "$G/legacy-record.in.jsonl"
	assert_failure 1
	f=$BATS_TEST_TMPDIR/a/normalized_perf_wan-t2v-1.3b-2gpu_2026-06-16T00_00_00_00_00_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.json
	[ -f "$f" ]
	[[ $stderr == *"Normalized performance result written to $f"* ]]
	[ "$(tail -c 1 "$f")" = "}" ]
	[ "$(head -2 "$f")" = $'{\n  "model_id": "wan-t2v-1.3b-2gpu",' ]
	run jq -r 'keys_unsorted | join(" ")' "$f"
	assert_output --partial "software_profile_id baseline_status comparison_status comparison_status_reason"
	refute_output --partial comparison_status_reason\ comparison
	refute_output --partial static_failures
	[ "$(find "$BATS_TEST_TMPDIR/a" -type f | wc -l)" -eq 3 ]
}

@test "PERF_REPORTS_DIR sets the artifacts directory to its results/" {
	run --separate-stderr env PERF_REPORTS_DIR="$BATS_TEST_TMPDIR/r" $N --store "$G/pass.store" "$G/pass.in.jsonl"
	assert_success
	[ -f "$BATS_TEST_TMPDIR/r/results/normalized_perf_wan-t2v-1.3b-2gpu_2026-06-16T00_00_00_00_00_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.json" ]
}

@test "an artifact that cannot be written is reported and exits 2; records still flow" {
	touch "$BATS_TEST_TMPDIR/file"
	run --separate-stderr $N --store "$G/pass.store" --artifacts "$BATS_TEST_TMPDIR/file/sub" "$G/pass.in.jsonl"
	assert_failure 2
	[ "${#lines[@]}" -eq 1 ]
	[[ $stderr == *"Failed to write normalized performance result artifact: "* ]]
}

@test "--history reads the same records as a JSON-lines stream, gzip too" {
	run_case $N $N/worked-example
	want=$output
	find "$G/worked-example.store" -name '*.json' -exec jq -c . {} + >"$BATS_TEST_TMPDIR/h.jsonl"
	gzip -k "$BATS_TEST_TMPDIR/h.jsonl"
	mkdir "$BATS_TEST_TMPDIR/none"
	for h in "$BATS_TEST_TMPDIR/h.jsonl" "$BATS_TEST_TMPDIR/h.jsonl.gz"; do
		run --separate-stderr $N --store "$BATS_TEST_TMPDIR/none" --history "$h" "$G/worked-example.in.jsonl"
		assert_failure 1
		assert_equal "$output" "$want"
		# The history is not empty: no warning of an empty store.
		assert_equal "$stderr" "$(cat "$G/worked-example.err")"
	done
	# Given beside the store, a record is not counted twice.
	run --separate-stderr $N --store "$G/worked-example.store" --history "$BATS_TEST_TMPDIR/h.jsonl" "$G/worked-example.in.jsonl"
	assert_failure 1
	[ "$(jq -r .comparison.baseline_n <<<"$output")" = 2 ]
}

@test "PERFORMANCE_TRACKING_ROOT is the default store; a missing store is exit 2, an empty one a warning" {
	run --separate-stderr env PERFORMANCE_TRACKING_ROOT="$G/pass.store" $N "$G/pass.in.jsonl"
	assert_success
	[ "$(jq -r .comparison_status <<<"$output")" = PASS ]
	# A typo never reads as an empty history (issue 22 item 4).
	run --separate-stderr $N --store "$BATS_TEST_TMPDIR/missing" "$G/pass.in.jsonl"
	assert_failure 2
	assert_equal "$stderr" "perf-gate-rolling: $BATS_TEST_TMPDIR/missing: no such store (a directory store must exist: create it, or name the store with --store)"
	run --separate-stderr env PERFORMANCE_TRACKING_ROOT="$BATS_TEST_TMPDIR/missing" $N "$G/pass.in.jsonl"
	assert_failure 2
	[[ $stderr == *"$BATS_TEST_TMPDIR/missing: no such store"* ]]
	mkdir "$BATS_TEST_TMPDIR/empty"
	run --separate-stderr $N --store "$BATS_TEST_TMPDIR/empty" "$G/pass.in.jsonl"
	assert_success
	[ "$(jq -r .comparison_status <<<"$output")" = CALIBRATION_NEEDED ]
	[[ $stderr == "perf-gate-rolling: $BATS_TEST_TMPDIR/empty: the store holds no records (a new store, or the wrong one?)"$'\n'* ]]
	# An empty git remote likewise.
	git init -q --bare "$BATS_TEST_TMPDIR/empty.git"
	run --separate-stderr $N --store "git+file://$BATS_TEST_TMPDIR/empty.git" --cache "$BATS_TEST_TMPDIR/cache" "$G/pass.in.jsonl"
	assert_success
	[ "$(jq -r .comparison_status <<<"$output")" = CALIBRATION_NEEDED ]
	[[ $stderr == *"git+file://$BATS_TEST_TMPDIR/empty.git: the store holds no records"* ]]
}

@test "an empty PERFORMANCE_TRACKING_ROOT is the working directory; a remote without git+ is refused" {
	cp -R "$G/pass.store" "$BATS_TEST_TMPDIR/cwd"
	cd "$BATS_TEST_TMPDIR/cwd" || return 1
	PERFORMANCE_TRACKING_ROOT='' run --separate-stderr $N "$G/pass.in.jsonl"
	assert_success
	[ "$(jq -r .comparison_status <<<"$output")" = PASS ]
	PERFORMANCE_TRACKING_ROOT=https://huggingface.co/datasets/org/perf run --separate-stderr $N "$G/pass.in.jsonl"
	assert_failure 2
	assert_output ""
	assert_equal "$stderr" "perf-gate-rolling: https://huggingface.co/datasets/org/perf: a git remote needs the git+ prefix to be a store; did you mean git+https://huggingface.co/datasets/org/perf?"
	[ ! -e https: ]
}

@test "a store that is not a directory is exit 2" {
	touch "$BATS_TEST_TMPDIR/file"
	run --separate-stderr $N --store "$BATS_TEST_TMPDIR/file" "$G/pass.in.jsonl"
	assert_failure 2
	assert_output ""
	assert_equal "$stderr" "perf-gate-rolling: $BATS_TEST_TMPDIR/file: the store is not a directory"
}

@test "a baseline whose keys are spelled with \\u escapes is found (issue 22 item 19)" {
	# Valid JSON that some writers emit: the reader's raw-text prefilter
	# must parse what it cannot read plainly, never skip it.
	cp -R "$G/pass.store" "$BATS_TEST_TMPDIR/st"
	find "$BATS_TEST_TMPDIR/st" -name '*.json' -exec sed -i \
		-e 's/"workload_id"/"workload_\\u0069d"/' -e 's/"variant_id": "\([^"]*\)"/"\\u0076ariant_id": "\1"/' {} +
	grep -q 'workload_\\u0069d' "$BATS_TEST_TMPDIR"/st/*/*.json
	grep -q '"\\u0076ariant_id"' "$BATS_TEST_TMPDIR"/st/*/*.json
	run --separate-stderr $N --store "$BATS_TEST_TMPDIR/st" "$G/pass.in.jsonl"
	assert_success
	assert_equal "$output" "$(cat "$G/pass.out.jsonl")"
	[ "$(jq -r .comparison_status <<<"$output")" = PASS ]
	# And however many reader threads read it.
	PERF_STORE_THREADS=1 run --separate-stderr $N --store "$BATS_TEST_TMPDIR/st" "$G/pass.in.jsonl"
	assert_equal "$output" "$(cat "$G/pass.out.jsonl")"
}

@test "a history file that cannot be read is skipped with a warning" {
	mkdir -p "$BATS_TEST_TMPDIR/s/wan"
	cp "$G/pass.store/wan/2026-06-10.json" "$BATS_TEST_TMPDIR/s/wan/"
	ln -s "$BATS_TEST_TMPDIR/nowhere" "$BATS_TEST_TMPDIR/s/wan/dangling.json"
	run --separate-stderr $N --store "$BATS_TEST_TMPDIR/s" "$G/pass.in.jsonl"
	assert_success
	[ "$(jq -r .comparison_status <<<"$output")" = PASS ]
}

@test "rejects wrong types and non-finite values in the batch, compares the rest" {
	run --separate-stderr $N --store "$G/pass.store" <<'EOF'
{"model_id":"a","latency":"slow"}
{"model_id":"a","latency":NaN}
{"model_id":"a","regression_thresholds":{"latency":{"threshold_absolute":"inf"}}}
{"model_id":"a","static_failures":[1]}
{"model_id":"ok","gpu_type":"g","latency":1.0}
EOF
	assert_failure 2
	[ "${#lines[@]}" -eq 1 ]
	[[ $stderr == *"perf-gate-rolling: <stdin>:1: latency must be a number"* ]]
	[[ $stderr == *"perf-gate-rolling: <stdin>:2: latency is not a finite number"* ]]
	[[ $stderr == *"perf-gate-rolling: <stdin>:3: regression_thresholds.latency.threshold_absolute is not a finite number"* ]]
	[[ $stderr == *"perf-gate-rolling: <stdin>:4: static_failures must be an array of strings"* ]]
	[[ $stderr == *"ok comparison status: PASS - No legacy baseline for ok on g"* ]]
}

@test "reads a line over 64 KiB whole" {
	pad=$(head -c 100000 /dev/zero | tr '\0' z)
	jq -c --arg p "$pad" '.recipe = {pad: $p}' "$G/pass.in.jsonl" >"$BATS_TEST_TMPDIR/in.jsonl"
	run --separate-stderr $N --store "$G/pass.store" "$BATS_TEST_TMPDIR/in.jsonl"
	assert_success
	[ "$(jq -r '.recipe.pad | length' <<<"$output")" -eq 100000 ]
}

REC='{"model_id":"a","gpu_type":"g"}'

@test "empty input gives empty output" { check_empty_input $N; }
@test "reports malformed JSON, non-objects and trailing garbage by line, keeps valid lines" {
	export PERFORMANCE_TRACKING_ROOT=$BATS_TEST_TMPDIR/none
	printf '%s\n{"model_id": nope}\n%s\n[1,2]\n%s junk\n' "$REC" "$REC" "$REC" >"$BATS_TEST_TMPDIR/in.jsonl"
	run --separate-stderr $N "$BATS_TEST_TMPDIR/in.jsonl"
	assert_failure 2
	assert_equal "${#lines[@]}" 2
	[[ $stderr == *"$N: $BATS_TEST_TMPDIR/in.jsonl:2: invalid JSON at column 14: unexpected 'n'"* ]]
	[[ $stderr == *"$N: $BATS_TEST_TMPDIR/in.jsonl:4: not a JSON object (found an array)"* ]]
	[[ $stderr == *"$N: $BATS_TEST_TMPDIR/in.jsonl:5: unexpected text after the record"* ]]
}
@test "a full disk on stdout is exit 2, never success" {
	run --separate-stderr bash -c "$N --store '$G/pass.store' '$G/pass.in.jsonl' >/dev/full"
	assert_failure 2
	[[ $stderr == *"$N: write error on standard output: No space left on device" ]]
}
@test "an unknown option prints usage on stderr, exit 2" { check_unknown_option $N; }
@test "-h prints usage on stdout, exit 0" { check_help $N; }
@test "--version prints the version" { check_version $N; }

@test "reader threads change nothing: same records, same warnings in path order" {
	mkdir -p "$BATS_TEST_TMPDIR/s"
	for d in a b c d e f g h; do
		mkdir -p "$BATS_TEST_TMPDIR/s/$d"
		cp "$G/last-five-by-timestamp.store/zzz-original/d1.json" "$BATS_TEST_TMPDIR/s/$d/x.json"
		printf '{"workload_id": "wan-t2v", "variant_id": "1.3b-sp2", "broken": ' >"$BATS_TEST_TMPDIR/s/$d/bad.json"
	done
	run --separate-stderr env PERF_STORE_THREADS=1 $N --store "$BATS_TEST_TMPDIR/s" "$G/pass.in.jsonl"
	assert_failure 1
	one_out=$output one_err=$stderr
	run --separate-stderr env PERF_STORE_THREADS=4 $N --store "$BATS_TEST_TMPDIR/s" "$G/pass.in.jsonl"
	assert_failure 1
	assert_equal "$output" "$one_out"
	assert_equal "$stderr" "$one_err"
	[ "$(jq -r .comparison.baseline_n <<<"$output")" -eq 5 ]
	[ "$(grep -c 'skipping invalid JSON' <<<"$stderr")" -eq 8 ]
	grep 'skipping invalid JSON' <<<"$stderr" | sort -c
}

@test "every metric carries its noise, false-alarm rate, detectable regression and advice (Python's numbers)" {
	run_case $N $N/sensitivity
	# memory is constant: no measured spread is unknown noise (issue 22: it was "ok").
	run jq -c '.comparison.metrics | [.latency.sensitivity.advice, .throughput.sensitivity.advice, .memory.sensitivity.advice, .text_encoder_time_s.sensitivity.advice, .dit_time_s.sensitivity.advice, .latency.noise.n, .text_encoder_time_s.noise, .memory.noise.unknown_reason]' <<<"$output"
	assert_output '["noisy","ok","unknown","unknown","blind",20,{"relative_spread":null,"n":0,"level_spread":null,"shift":null,"unknown_reason":"few_runs"},"no_spread"]'
}

@test "the sensitivity never reaches the stored artifact, and the status is the reference's" {
	run --separate-stderr $N --store "$G/sensitivity.store" --artifacts "$BATS_TEST_TMPDIR/a" "$G/sensitivity.in.jsonl"
	assert_success
	[ "$(jq -r .comparison_status <<<"$output")" = PASS ]
	run grep -rl -e noise -e false_alarm -e mde_percent -e sensitivity "$BATS_TEST_TMPDIR/a"
	assert_failure 1
}

# 20 trusted runs of the sensitivity store's cohort, oldest first: latency 10
# with 1% run-to-run noise (fixed normal draws, sd 0.98%) shaped by $1 (flat,
# step: +5% from the 13th run, drift: +1% a run), DiT tied at 0.600 s.
shaped_history() {
	python3 - "$1" "$G/sensitivity.store/wan/00.json" <<'PY'
import json, sys
z = [1.29, 1.45, 0.07, -0.76, -1.09, 0.03, -1.02, -1.44, 0.2, 0.13, 0.55, -0.91, 0.01,
     -0.06, -1.51, 0.54, 0.32, 2.39, 0.2, -0.14]
kind, base = sys.argv[1], json.load(open(sys.argv[2]))
for i, e in enumerate(z):
    shape = {"flat": 1, "step": 1.05 if i >= 12 else 1, "drift": 1 + 0.01 * i}[kind]
    r = dict(base, timestamp="2026-05-%02dT00:00:00+00:00" % (i + 1), dit_time_s=0.6,
             latency=round(10 * (1 + 0.01 * e) * shape, 3))
    print(json.dumps(r))
PY
}

@test "a step or a drift inside the noise window is not noise, and the Sensitivity table says it is there (issue 22)" {
	mkdir -p "$BATS_TEST_TMPDIR/empty"
	cd "$BATS_TEST_TMPDIR"
	for kind in flat step drift; do
		shaped_history $kind >"$BATS_TEST_TMPDIR/$kind.jsonl"
		jq -c --slurp '.[-1] | .run_source = "pr" | .timestamp = "2026-06-01T00:00:00+00:00"' \
			"$BATS_TEST_TMPDIR/$kind.jsonl" >"$BATS_TEST_TMPDIR/$kind.cur.jsonl"
		run --separate-stderr $N --store "$BATS_TEST_TMPDIR/empty" -H "$BATS_TEST_TMPDIR/$kind.jsonl" \
			"$BATS_TEST_TMPDIR/$kind.cur.jsonl"
		assert_success
		echo "$kind: $(jq -c .comparison.metrics.latency <<<"$output")"
		# The run-to-run noise is 1%: reported within 1.5x of it, never "noisy",
		# no wider floor suggested; the values' own spread says the shift.
		run jq -c --arg kind "$kind" '.comparison.metrics.latency |
			[.noise.relative_spread > 0.01 / 1.5 and .noise.relative_spread < 0.015,
			 .noise.shift == ($kind != "flat"), .false_alarm_rate < 0.01,
			 .sensitivity.advice, .sensitivity.suggested_threshold_percent]' <<<"$output"
		assert_output '[true,true,true,"ok",null]'
	done
	# MAD / median of the drifted values (7.2%) is what the noise used to be.
	run jq -r '.comparison.metrics.latency.noise.level_spread > 0.06' <<<"$(perf-gate-rolling --store "$BATS_TEST_TMPDIR/empty" -H "$BATS_TEST_TMPDIR/drift.jsonl" "$BATS_TEST_TMPDIR/drift.cur.jsonl" 2>/dev/null)"
	assert_output true
	$N --store "$BATS_TEST_TMPDIR/empty" -H "$BATS_TEST_TMPDIR/drift.jsonl" "$BATS_TEST_TMPDIR/drift.cur.jsonl" 2>/dev/null >drift.out.jsonl
	run --separate-stderr perf-summarize drift.out.jsonl
	assert_success
	assert_line --regexp '^\| wan-t2v-1\.3b-2gpu \| NVIDIA L40S \| latency \| ok \| 0\.[0-9]% \| 0\.0% \| [0-9.]+% \| >8\.0% and >0\.500 \| none \| n/a \| a step or trend lies inside the noise window: the last 20 values spread 7\.[0-9]%, run to run 0\.[0-9]%; the noise is the run-to-run one \|$'
	$N --store "$BATS_TEST_TMPDIR/empty" -H "$BATS_TEST_TMPDIR/flat.jsonl" "$BATS_TEST_TMPDIR/flat.cur.jsonl" 2>/dev/null >flat.out.jsonl
	run --separate-stderr perf-summarize flat.out.jsonl
	refute_line --partial '| latency |'
}

@test "values tied at the precision recorded: noise unknown, no floor suggested, and the table says why (issue 22)" {
	mkdir -p "$BATS_TEST_TMPDIR/empty"
	cd "$BATS_TEST_TMPDIR"
	shaped_history flat >hist.jsonl
	jq -c --slurp '.[-1] | .run_source = "pr" | .timestamp = "2026-06-01T00:00:00+00:00"' hist.jsonl >cur.jsonl
	run --separate-stderr $N --store "$BATS_TEST_TMPDIR/empty" -H hist.jsonl cur.jsonl
	assert_success
	# DiT is 0.600 s twenty times behind a 0.25 s floor: it was "blind" with a
	# suggested floor of 0.0%, which fails every build.
	run jq -c '.comparison.metrics.dit_time_s | [.noise, .false_alarm_rate, .mde_percent, .sensitivity.advice,
		.sensitivity.suggested_threshold_percent, .sensitivity.suggested_threshold_absolute]' <<<"$output"
	assert_output '[{"relative_spread":null,"n":20,"level_spread":null,"shift":null,"unknown_reason":"no_spread"},null,null,"unknown",null,null]'
	$N --store "$BATS_TEST_TMPDIR/empty" -H hist.jsonl cur.jsonl 2>/dev/null >out.jsonl
	run --separate-stderr perf-summarize out.jsonl
	assert_success
	assert_line '| wan-t2v-1.3b-2gpu | NVIDIA L40S | dit_time_s | unknown | unknown | n/a | n/a | >5.0% and >0.250 | none | n/a | no run-to-run spread in the last 20 values (equal, or tied at the precision recorded): the noise is unknown, so no floor is suggested; the absolute floor alone is over twice the percent floor |'
	# Memory and throughput are tied too, behind floors that fit them: no row.
	refute_line --partial '| memory |'
	refute_line --partial '| throughput |'
	refute_output --partial '>0.0%'
	refute_output --partial 'threshold_percent: 0`'
}

@test "under --rule, every metric a rule judged carries its bound, passing or not, and the Sensitivity table shows it (issue 22)" {
	cd "$BATS_TEST_TMPDIR"
	run --separate-stderr $N --store "$G/rule-prediction.store" --rule prediction "$G/rule-prediction.in.jsonl"
	assert_failure 1
	# The first record passes: its metrics still say the bound the rule used;
	# memory (no spread) was the reference floors', without a bound.
	run jq -c 'select(.comparison_status == "PASS") | .comparison.metrics |
		[.latency.rule, .latency.threshold_exceeded, .latency.bound, .memory.rule, .memory.bound]' <<<"$output"
	assert_output '["prediction",false,10.391534925939625,"reference",null]'
	$N --store "$G/rule-prediction.store" --rule prediction "$G/rule-prediction.in.jsonl" 2>/dev/null | head -1 >pass.jsonl
	run --separate-stderr perf-summarize pass.jsonl
	assert_success
	assert_line 'A noise-aware rule (perf-gate-rolling --rule) decided the metrics Decided By names, against the bound shown; False Alarms and Detects describe the floors.'
	assert_line --regexp '^\| wan-t2v-1\.3b-2gpu \| NVIDIA L40S \| latency \| ok \| 2\.2% \| .* \| prediction, bound 10\.392 \|  \|$'
	refute_line --partial '| memory |'
	run --separate-stderr $N --store "$G/rule-prediction.store" --rule zscore --z 3 "$G/rule-prediction.in.jsonl"
	run jq -c 'select(.comparison_status == "PASS") | .comparison.metrics.latency |
		[.rule, .threshold_exceeded, (.bound | type), (.z | type), .z < 3]' <<<"$output"
	assert_output '["zscore",false,"number","number",true]'
	# The default rule adds neither key.
	run --separate-stderr $N --store "$G/rule-prediction.store" "$G/rule-prediction.in.jsonl"
	run jq -c '[.comparison.metrics[] | has("bound") or has("z") or has("rule")] | any' <<<"$output"
	assert_output $'false\nfalse\nfalse'
}

@test "--noise-window and --power change the window and the power, nothing else" {
	run --separate-stderr $N --store "$G/sensitivity.store" "$G/sensitivity.in.jsonl"
	assert_success
	base=$output
	run --separate-stderr $N --store "$G/sensitivity.store" --power 0.9 "$G/sensitivity.in.jsonl"
	assert_success
	run jq -c --argjson b "$base" '[.comparison.metrics.latency.noise, .comparison.metrics.latency.sensitivity.power,
		(.comparison.metrics.latency.mde_percent > $b.comparison.metrics.latency.mde_percent),
		(.comparison.metrics.latency.false_alarm_rate == $b.comparison.metrics.latency.false_alarm_rate),
		(del(.comparison) == ($b | del(.comparison)))] == [$b.comparison.metrics.latency.noise, 0.9, true, true, true]' <<<"$output"
	assert_output true
	run --separate-stderr $N --store "$G/sensitivity.store" --noise-window 5 "$G/sensitivity.in.jsonl"
	assert_success
	run jq -c --argjson b "$base" '[.comparison.metrics.latency.noise.n, (del(.comparison) == ($b | del(.comparison)))]' <<<"$output"
	assert_output '[5,true]'
	for bad in "--noise-window 4" "--noise-window x" "--power 1" "--power 0.4" "--power nan"; do
		# shellcheck disable=SC2086 # the option and its value
		run --separate-stderr $N $bad </dev/null
		assert_failure 2
		[[ $stderr == *"perf-gate-rolling: ${bad%% *}: not a number from "* ]]
	done
}

@test "--rule prediction: the one-sided Student t bound of the noise window decides, in log space (Python's bytes)" {
	run_case $N $N/rule-prediction
	[[ $stderr == *"latency regressed by 7.7% and 0.776 (current=10.900, baseline_median=10.124, threshold=gated, rule=prediction, past the 99.0% prediction bound 10.392 of the last 20 runs)"* ]]
	[[ $stderr == *"memory regressed by 10.0% and 1000.0 (current=11000.0, baseline_median=10000.0, threshold=gated, >5.0% and >256.0)"* ]]
	run jq -c '[.comparison_status, ([.comparison.metrics[] | .rule] | join(",")),
		.comparison.metrics.latency.threshold_exceeded, .comparison.metrics.memory.threshold_exceeded]' <<<"$output"
	# A +0.5% latency passes; +7.7% fails past the bound (the floors say 8%);
	# memory (no spread) is the floors'.
	r=prediction,prediction,reference,reference,prediction,reference
	assert_output "[\"PASS\",\"$r\",false,false]"$'\n'"[\"REGRESSION\",\"$r\",true,true]"$'\n'"[\"REGRESSION\",\"$r\",false,true]"
}

@test "--rule zscore: the z against the window's mean and deviation, over --z (Python's bytes)" {
	run_case $N $N/rule-zscore
	[[ $stderr == *"throughput regressed by 5.5% and 0.244 (current=4.200, baseline_median=4.444, threshold=gated, rule=zscore, z=4.54 over 3.00 against the last 20 runs)"* ]]
}

@test "each rule's bound: 1e-9 inside passes, 1e-9 past fails, in both directions" {
	run_case $N $N/rule-boundaries
	run jq -c '[.comparison.metrics.latency.threshold_exceeded, .comparison.metrics.throughput.threshold_exceeded]' <<<"$output"
	assert_output $'[false,false]\n[true,true]'
	run_case $N $N/rule-zscore-boundaries
	run jq -c '[.comparison.metrics.latency.threshold_exceeded, .comparison.metrics.throughput.threshold_exceeded]' <<<"$output"
	assert_output $'[false,false]\n[true,true]'
}

@test "fewer than five values in the noise window: the reference's floors decide, and say so" {
	run_case $N $N/rule-fallback
	run jq -r '.comparison.metrics.latency.rule' <<<"$output"
	assert_output reference
}

@test "--rule reference is the default, byte for byte; --confidence and --z alone change nothing" {
	run --separate-stderr $N --store "$G/sensitivity.store" "$G/sensitivity.in.jsonl"
	base=$output
	run --separate-stderr $N --store "$G/sensitivity.store" --rule reference --confidence 0.9 --z 2 "$G/sensitivity.in.jsonl"
	assert_success
	[ "$output" = "$base" ]
}

@test "bad --rule, --confidence and --z values are exit 2 with usage" {
	for bad in "--rule median" "--rule ''" "--confidence 0.4" "--confidence 1" "--confidence x" "--z 0" "--z -3" "--z inf" "--z 101"; do
		eval "set -- $bad"
		run --separate-stderr $N "$@" </dev/null
		assert_failure 2
		[[ $stderr == "perf-gate-rolling: $1: not "* ]]
		[[ $stderr == *"usage: perf-gate-rolling"* ]]
		[ -z "$output" ]
	done
}

@test "the reported false-alarm rate and detectable regression agree with simulation (bench/sensitivity.py, fast subset)" {
	run --separate-stderr python3 "$BATS_TEST_DIRNAME/../bench/sensitivity.py" --quick --histories 200 --bin "$(command -v $N)"
	echo "$output"
	echo "stderr: $stderr"
	assert_success
	assert_line --partial "all within 2 points and 20%"
	[ "$(grep -c '^normal  *3\.0% .* ok$' <<<"$output")" -eq 3 ]
	[ -z "$stderr" ]
}

@test "bench/sensitivity.py: the caller's environment cannot change the gate; a gate that judged nothing is said, with its status" {
	local sim=$BATS_TEST_DIRNAME/../bench/sensitivity.py
	# PERF_REPORTS_DIR would have the gate write every simulated record there.
	run --separate-stderr env PERF_REPORTS_DIR="$BATS_TEST_TMPDIR/reports" PERF_PYTEST_RC=1 \
		PERFORMANCE_TRACKING_ROOT="$BATS_TEST_TMPDIR/nowhere" python3 "$sim" --quick --histories 1 --bin "$(command -v $N)"
	[ -z "$stderr" ]
	[ "$(grep -c '^normal  *3\.0% ' <<<"$output")" -eq 3 ]
	[ ! -e "$BATS_TEST_TMPDIR/reports" ]
	# Exit 1 with nothing out, or killed: exit 1 and why, never a traceback.
	run --separate-stderr python3 "$sim" --quick --histories 1 --bin "$(command -v false)"
	assert_failure 1
	[[ $stderr == "sensitivity.py: 0 records out for 20 in ($(command -v false), status 1, 20 records, history "*"); its stderr ends:"*"(nothing)" ]]
	[ "${#lines[@]}" -eq 2 ]
	printf '#!/bin/sh\necho "perf-gate-rolling: out of luck" >&2\nkill -SEGV $$\n' >"$BATS_TEST_TMPDIR/crash"
	chmod +x "$BATS_TEST_TMPDIR/crash"
	run --separate-stderr python3 "$sim" --quick --histories 1 --bin "$BATS_TEST_TMPDIR/crash"
	assert_failure 1
	[[ $stderr == "sensitivity.py: the gate could not judge the batch ($BATS_TEST_TMPDIR/crash, status signal SIGSEGV, 20 records, history "*"); its stderr ends:"*"perf-gate-rolling: out of luck"* ]]
	not grep -q Traceback <<<"$stderr"
}

# Named metrics (issue 24). nmrec MODEL TS METRICS [RT]: a tracking record
# of a complete identity with named metrics METRICS (a JSON object) and
# regression_thresholds RT (default {}).
nmrec() {
	printf '{"model_id":"%s","timestamp":"%s","commit_sha":"c","gpu_type":"cpu","latency":null,"throughput":null,"memory":null,"text_encoder_time_s":null,"dit_time_s":null,"vae_decode_time_s":null,"metrics":%s,"regression_thresholds":%s,"success":true,"run_source":"scheduled_main","baseline_eligible":true,"result_schema_version":2,"workload_id":"suite","variant_id":"%s","benchmark_version":1,"recipe_fingerprint":"r","hardware_profile_id":"hw","software_profile_id":"sw"}\n' \
		"$1" "$2" "$3" "${4:-{\}}" "$1"
}

# nmstore DIR MODEL VALUES...: one stored record per time value, with
# cpu_time, items_per_second and a custom-unit metric beside it.
nmstore() {
	local dir=$1 model=$2 v day=10
	shift 2
	mkdir -p "$dir/x"
	for v in "$@"; do
		nmrec "$model" "2026-06-${day}T00:00:00+00:00" "{\"time\":{\"value\":$v,\"unit\":\"s\",\"samples\":[$v]},\"cpu_time\":{\"value\":$v,\"unit\":\"s\"},\"items_per_second\":{\"value\":1e8,\"unit\":\"items/s\"},\"pages\":{\"value\":100,\"unit\":\"pages\"}}" >"$dir/x/$day.json"
		day=$((day + 1))
	done
}

@test "named metrics: a benchmark 30% slower on time alone is a REGRESSION naming benchmark and metric" {
	nmstore "$BATS_TEST_TMPDIR/s" BM_Sort/1024 1e-05 1.01e-05 0.99e-05 1e-05 1e-05 1.02e-05
	run --separate-stderr $N --store "$BATS_TEST_TMPDIR/s" <<<"$(nmrec BM_Sort/1024 2026-06-20T00:00:00+00:00 '{"time":{"value":1.3e-05,"unit":"s"},"cpu_time":{"value":1.01e-05,"unit":"s"},"items_per_second":{"value":1.01e8,"unit":"items/s"},"pages":{"value":100,"unit":"pages"}}')"
	assert_failure 1
	assert_equal "$(jq -r .comparison_status_reason <<<"$output")" "BM_Sort/1024 time regressed by 30.0% and 3.0 us (current=13.0 us, baseline_median=10.0 us, threshold=gated, >5.0% and >0.0 s)"
	assert_equal "$(jq -c '.comparison | [.baseline_n, (.named_metrics | keys_unsorted), .failures]' <<<"$output")" '[5,["time","cpu_time","items_per_second","pages"],["BM_Sort/1024 time regressed by 30.0% and 3.0 us (current=13.0 us, baseline_median=10.0 us, threshold=gated, >5.0% and >0.0 s)"]]'
	assert_equal "$(jq -c '.comparison.named_metrics.time | [.unit, .better, .better_from, .current, .baseline, .threshold_percent, .threshold_absolute, .gated, .threshold_exceeded, .regressed, .sensitivity.advice]' <<<"$output")" '["s","lower","unit",1.3e-05,1e-05,0.05,0,true,true,true,"ok"]'
	assert_equal "$(jq -c '.comparison.named_metrics.cpu_time | [.percent_delta < 0.05, .regressed]' <<<"$output")" '[true,false]'
	# The six are there as before, without a baseline value.
	assert_equal "$(jq -c '.comparison.metrics | [keys_unsorted[], .latency.current]' <<<"$output")" '["latency","throughput","memory","text_encoder_time_s","dit_time_s","vae_decode_time_s",null]'
	[[ $stderr == *"Performance regression check failed:"*"  - BM_Sort/1024 time regressed by 30.0%"* ]]
}

@test "named metrics: per second is higher-better by the unit rule; a record's better wins" {
	nmstore "$BATS_TEST_TMPDIR/s" B 1e-05 1e-05 1e-05 1e-05 1e-05
	run --separate-stderr $N --store "$BATS_TEST_TMPDIR/s" <<EOF
$(nmrec B 2026-06-20T00:00:00+00:00 '{"items_per_second":{"value":0.8e8,"unit":"items/s"}}')
$(nmrec B 2026-06-20T00:00:01+00:00 '{"items_per_second":{"value":1.3e8,"unit":"items/s"}}')
$(nmrec B 2026-06-20T00:00:02+00:00 '{"items_per_second":{"value":1.3e8,"unit":"items/s","better":"lower"}}')
EOF
	assert_failure 1
	run jq -r '[.comparison_status, .comparison.named_metrics.items_per_second.better_from, .comparison.named_metrics.items_per_second.percent_delta] | @tsv' <<<"$output"
	assert_output $'REGRESSION\tunit\t0.2\nPASS\tunit\t-0.3\nREGRESSION\trecord\t0.3'
}

@test "named metrics: an unknown direction is recorded, never gated, and the warning names the config key" {
	nmstore "$BATS_TEST_TMPDIR/s" B 1e-05 1e-05 1e-05 1e-05 1e-05
	run --separate-stderr $N --store "$BATS_TEST_TMPDIR/s" <<<"$(nmrec B 2026-06-20T00:00:00+00:00 '{"pages":{"value":900,"unit":"pages"}}')"
	assert_success
	assert_equal "$(jq -c '.comparison.named_metrics.pages | [.better, .better_from, .current, .baseline, .absolute_delta, .percent_delta, .gated, .threshold_exceeded, .regressed]' <<<"$output")" '["unknown","none",900,100,800,8,false,false,false]'
	assert_equal "$(jq -r .comparison_status <<<"$output")" PASS
	[[ $stderr == *'perf-gate-rolling: metric "B/pages" (unit "pages") has no known direction: recorded, not gated; set regression_thresholds.metrics."B/pages".better to "lower" or "higher"'* ]]
}

@test "named metrics: the policy block's globs set direction, floors and gating per metric" {
	nmstore "$BATS_TEST_TMPDIR/s" BM_Sort/8 1e-05 1e-05 1e-05 1e-05 1e-05
	rt='{"metrics":{"BM_Sort/*":{"threshold_percent":0.5},"*/cpu_time":{"gated":false,"threshold_percent":0.01},"*/pages":{"better":"lower"}}}'
	run --separate-stderr $N --store "$BATS_TEST_TMPDIR/s" <<<"$(nmrec BM_Sort/8 2026-06-20T00:00:00+00:00 '{"time":{"value":1.3e-05,"unit":"s"},"cpu_time":{"value":2e-05,"unit":"s"},"pages":{"value":200,"unit":"pages"}}' "$rt")"
	assert_failure 1
	assert_equal "$(jq -r .comparison_status_reason <<<"$output")" "BM_Sort/8 pages regressed by 100.0% and 100 pages (current=200 pages, baseline_median=100 pages, threshold=gated, >50.0% and >0 pages)"
	assert_equal "$(jq -c '.comparison.named_metrics | [.time.regressed, .time.threshold_percent, .cpu_time.threshold_exceeded, .cpu_time.gated, .cpu_time.regressed, .pages.better_from]' <<<"$output")" '[false,0.5,true,false,false,"config"]'
	[[ $stderr != *"no known direction"* ]]
}

@test "named metrics: history in another unit, null or missing is no baseline value" {
	mkdir -p "$BATS_TEST_TMPDIR/s/x"
	nmrec B 2026-06-10T00:00:00+00:00 '{"t":{"value":5.0,"unit":"ms"}}' >"$BATS_TEST_TMPDIR/s/x/1.json"
	nmrec B 2026-06-11T00:00:00+00:00 '{"t":{"value":null,"unit":"s"}}' >"$BATS_TEST_TMPDIR/s/x/2.json"
	nmrec B 2026-06-12T00:00:00+00:00 '{"u":{"value":1.0,"unit":"s"}}' >"$BATS_TEST_TMPDIR/s/x/3.json"
	nmrec B 2026-06-13T00:00:00+00:00 '{"t":{"value":1.0,"unit":"s"}}' >"$BATS_TEST_TMPDIR/s/x/4.json"
	run --separate-stderr $N --store "$BATS_TEST_TMPDIR/s" <<<"$(nmrec B 2026-06-20T00:00:00+00:00 '{"t":{"value":1.2,"unit":"s"}}')"
	assert_failure 1
	assert_equal "$(jq -c '[.comparison.baseline_n, .comparison.named_metrics.t.baseline, .comparison.named_metrics.t.sensitivity.advice, .comparison.named_metrics.t.noise.n]' <<<"$output")" '[4,1,"unknown",1]'
}

@test "named metrics: byte for byte as before for records with only the six, whatever the store holds" {
	# The reference's own cases, which carry no named metric, keep their bytes.
	run_case $N $N/worked-example
	[ "$(jq -c '.comparison | has("named_metrics")' <<<"$output")" = false ]
	# A store whose records also carry named metrics changes nothing for them.
	cp -r "$G/worked-example.store" "$BATS_TEST_TMPDIR/s"
	for f in "$BATS_TEST_TMPDIR"/s/wan/*.json; do
		sed -i 's/^  "success": true,/  "metrics": {"time": {"value": 1.0, "unit": "s"}},\n  "success": true,/' "$f"
	done
	grep -q '"metrics"' "$BATS_TEST_TMPDIR/s/wan/a.json"
	run --separate-stderr $N --store "$BATS_TEST_TMPDIR/s" "$G/worked-example.in.jsonl"
	assert_failure 1
	diff -u "$G/worked-example.out.jsonl" <(echo "$output")
	diff -u "$G/worked-example.err" <(echo "$stderr")
}

@test "named metrics: an invalid metric or policy block in the batch is exit 2 with its line" {
	run --separate-stderr $N --store "$BATS_TEST_TMPDIR" <<EOF
$(nmrec B 2026-06-20T00:00:00+00:00 '{"t":{"value":"1"}}')
$(nmrec B 2026-06-20T00:00:00+00:00 '{"t":{"value":1}}' '{"metrics":{"*":{"gated":"no"}}}')
EOF
	assert_failure 2
	assert_output ""
	assert_equal "$stderr" "perf-gate-rolling: <stdin>:1: metrics.'t'.value must be a finite number or null
perf-gate-rolling: <stdin>:2: regression_thresholds.metrics.'*'.gated must be true or false"
}

@test "named metrics: a --history stream is read as the store, and --rule judges named metrics too" {
	local d
	mkdir -p "$BATS_TEST_TMPDIR/empty"
	for d in 10 11 12 13 14 15; do
		nmrec B "2026-06-${d}T00:00:00+00:00" "{\"time\":{\"value\":1.0${d}e-05,\"unit\":\"s\"}}"
	done >"$BATS_TEST_TMPDIR/h.jsonl"
	run --separate-stderr $N --store "$BATS_TEST_TMPDIR/empty" --history "$BATS_TEST_TMPDIR/h.jsonl" \
		--rule prediction <<<"$(nmrec B 2026-06-20T00:00:00+00:00 '{"time":{"value":1.3e-05,"unit":"s"}}')"
	assert_failure 1
	assert_equal "$(jq -c '.comparison.named_metrics.time | [.baseline, .rule, .regressed, .noise.n]' <<<"$output")" '[1.013e-05,"prediction",true,6]'
	[[ $(jq -r .comparison_status_reason <<<"$output") == "B time regressed by 28.3% and 2.9 us (current=13.0 us, baseline_median=10.1 us, threshold=gated, rule=prediction, past the 99.0% prediction bound 10."*" us of the last 6 runs)" ]]
}
