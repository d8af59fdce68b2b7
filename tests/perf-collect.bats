#!/usr/bin/env bats
# perf-collect: configs, the runner protocol, measurement, raw records
# (perf-collect(1)), with the test suite's stand-in GPU libraries.

# shellcheck disable=SC2154 # bats sets status, output, lines, stderr
load lib/common

N=perf-collect
F=$FIXTURES/perf-collect
: "${PERF_STUBS:=$ROOT_DIR/build/default/stubs}"

setup() {
	cd "$BATS_TEST_TMPDIR" || return 1
	unset FASTVIDEO_ATTENTION_BACKEND PERF_ATTENTION_BACKEND FASTVIDEO_FA4 PERF_FA4 \
		IMAGE_VERSION PERF_ALLOW_CPU FAKE_GPUS FAKE_NVLINK CUDA_VISIBLE_DEVICES
	no_gpus
}

no_gpus() {
	export PERF_CUDA_LIBRARY=/nonexistent/libcuda.so.1 PERF_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1
}

two_l40s() {
	export PERF_CUDA_LIBRARY=$PERF_STUBS/libfakecuda.so PERF_NVML_LIBRARY=$PERF_STUBS/libfakenvml.so
	export FAKE_GPUS="NVIDIA L40S:48:8.9,NVIDIA L40S:48:8.9"
}

@test "--check lists the configs in sorted path order with their kind" {
	run --separate-stderr $N --check "$F/v2.json" "$F/v1.json"
	assert_success
	assert_output "$F/v1.json	legacy	v1
$F/v2.json	wan-t2v-1.3b-2gpu	v2"
}

@test "--check reports every invalid config with the reference's message, exit 2" {
	run --separate-stderr $N --check "$F/invalid"
	assert_failure 2
	assert_output "$F/invalid/d-valid.json	ok	v1"
	assert_equal "$stderr" "$N: $F/invalid/a-missing-id.json: missing required benchmark config fields: benchmark_id
$N: $F/invalid/b-schema.json: unsupported benchmark config_schema_version='2'
$N: $F/invalid/c-broken.json:2: invalid JSON at column 1: expected a member name, found end of input"
}

@test "config typos: unknown keys warn with file, line and the closest key; every run warns too" {
	T=$F/typos
	run --separate-stderr $N --check "$T/warn.json"
	assert_success
	assert_output "$T/warn.json	typos	v1"
	assert_equal "$stderr" "$N: $T/warn.json:3: warning: unknown top-level key 'descriptoin' (did you mean 'description'?)
$N: $T/warn.json:8: warning: unknown key 'latancy' in regression_thresholds (did you mean 'latency'?)
$N: $T/warn.json:12: warning: unknown key 'threshold_pct' in regression_thresholds.throughput (did you mean 'threshold_percent'?)
$N: $T/warn.json:13: warning: regression_thresholds.throughput.gated is not a boolean (true or false): the default is kept
$N: $T/warn.json:16: warning: regression_thresholds.dit_time_s.threshold_absolute is a boolean, not a number: the default is kept"
	warnings=$stderr
	run --separate-stderr env RUNNER_EVENTS="$F/row1.events.jsonl" $N --cpu "$T/warn.json"
	assert_success
	assert_equal "$(jq -r .benchmark_id <<<"$output")" typos
	assert_equal "$stderr" "$warnings"
}

@test "config typos: a threshold that is not a number is an error, exit 2, nothing runs" {
	run --separate-stderr $N --check "$F/typos/string-threshold.json"
	assert_failure 2
	assert_output ""
	assert_equal "$stderr" "$N: $F/typos/string-threshold.json:8: regression_thresholds.memory.threshold_percent must be a number (a fraction: 0.05 is 5%)
$N: $F/typos/string-threshold.json:11: regression_thresholds.latency.threshold_absolute must be a number"
	cp "$F/typos/string-threshold.json" "$F/cat-runner.sh" .
	run --separate-stderr env RUNNER_COUNT="$BATS_TEST_TMPDIR/count" $N --cpu --runner ./cat-runner.sh string-threshold.json
	assert_failure 2
	[ ! -e count ]
}

@test "--strict makes config warnings errors; the reference's forms and the shipped configs stay silent" {
	run --separate-stderr $N --check --strict "$F/typos/warn.json"
	assert_failure 2
	assert_output ""
	[[ $stderr == "$N: $F/typos/warn.json:3: unknown top-level key 'descriptoin' (did you mean 'description'?)"$'\n'* ]]
	[ "$(grep -c . <<<"$stderr")" -eq 5 ]
	run --separate-stderr $N --check --strict "$F/typos/accepted.json" "$ROOT_DIR/fixtures/configs" "$F/v1.json" "$F/v2.json"
	assert_success
	assert_equal "$stderr" ""
	assert_equal "${#lines[@]}" 6
}

@test "an invalid config runs nothing, as the reference's collection error" {
	mkdir d && cp "$F/v1.json" "$F/invalid/b-schema.json" d/
	run --separate-stderr $N --cpu --runner "$F/cat-runner.sh" d
	assert_failure 2
	assert_output ""
	[ ! -e results ]
}

@test "the default config directory is .buildkite/performance-benchmarks/tests; --configs changes it" {
	mkdir -p .buildkite/performance-benchmarks/tests other
	cp "$F/v1.json" .buildkite/performance-benchmarks/tests/
	cp "$F/v2.json" other/
	run --separate-stderr $N --check
	assert_success
	assert_output ".buildkite/performance-benchmarks/tests/v1.json	legacy	v1"
	run --separate-stderr $N --check --configs other
	assert_success
	assert_output "other/v2.json	wan-t2v-1.3b-2gpu	v2"
}

@test "--plan on two L40S: thresholds, recipe fingerprint, hardware id of the reference" {
	two_l40s
	run --separate-stderr $N --plan "$ROOT_DIR/fixtures/configs"
	assert_success
	run jq -c '[.benchmark_id, .action, .reason, .num_gpus, .thresholds.max_generation_time_s, .recipe_fingerprint, .hardware_profile_id]' <<<"$output"
	assert_line --index 0 '["legacy-benchmark","run",null,1,120,null,"hw-ce06872cdc31bd83"]'
	assert_line --index 1 "[\"wan-t2v-1.3b-1gpu-gb10\",\"skip\",\"wan-t2v-1.3b-1gpu-gb10 is restricted to gpu_types=['GB10'], current device is 'NVIDIA L40S'\",1,120,\"fe824b8bf011e7bcb6d6dc350fca3f17ed3e2e54fcf10cbc4762602d84738abc\",\"hw-ce06872cdc31bd83\"]"
	assert_line --index 2 '["wan-t2v-1.3b-2gpu","run",null,2,34,"ec56b019a3e37278d55085fbf6bf77286d07b19790e9a44a5478c7620da0744c","hw-41f86157a00d7e43"]'
}

@test "--plan: the requested attention backend changes the fingerprint; PERF_ wins over FASTVIDEO_" {
	two_l40s
	run --separate-stderr env FASTVIDEO_ATTENTION_BACKEND=FLASH_ATTN $N --plan "$ROOT_DIR/fixtures/configs/wan-t2v-1.3b.json"
	assert_success
	[ "$(jq -r .recipe_fingerprint <<<"$output")" = 941e1db3f5bdac1289379fcc0a04eedbb61f6a08abdf24ae2b1583c4aed91c14 ]
	run --separate-stderr env FASTVIDEO_ATTENTION_BACKEND=FLASH_ATTN PERF_ATTENTION_BACKEND=auto $N --plan "$ROOT_DIR/fixtures/configs/wan-t2v-1.3b.json"
	assert_success
	[ "$(jq -r .recipe_fingerprint <<<"$output")" = ec56b019a3e37278d55085fbf6bf77286d07b19790e9a44a5478c7620da0744c ]
}

@test "--plan on the CPU: GPU benchmarks are skipped with the reference's reason; NVLink shows" {
	run --separate-stderr $N --plan "$ROOT_DIR/fixtures/configs/wan-t2v-1.3b.json"
	assert_success
	[ "$(jq -r .reason <<<"$output")" = "Need 2 GPUs, only 0 available" ]
	[ "$(jq -c .hardware_profile <<<"$output")" = '{"device_type":"cpu","gpu_count":0,"gpus":[],"interconnect":"none"}' ]
	two_l40s
	run --separate-stderr env FAKE_NVLINK=1 $N --plan "$ROOT_DIR/fixtures/configs/wan-t2v-1.3b.json"
	assert_success
	[ "$(jq -r .hardware_profile.interconnect <<<"$output")" = full_nvlink ]
}

# The interconnect and hardware_profile_id of two L40S as FastVideo decides
# them (hw-ids.txt is written by gen-hw-ids.py), for each way NVML answers.
hw_of() {
	local plan
	plan=$(env "$@" $N --plan "$ROOT_DIR/fixtures/configs/wan-t2v-1.3b.json") || return 1
	jq -r '[.hardware_profile.interconnect, .hardware_profile_id] | join(" ")' <<<"$plan"
}

@test "interconnect as FastVideo decides it, through every NVML answer, with the profile ids" {
	two_l40s
	want() { echo "$1 $(awk -v i="$1" '$1 == 2 && $2 == i { print $3 }' "$F/hw-ids.txt")"; }
	[ "$(hw_of FAKE_NVLINK=1)" = "$(want full_nvlink)" ]
	[ "$(hw_of FAKE_NVLINK=0)" = "$(want none_or_partial)" ]
	# NVML missing, or failing to initialise: the platform without NVML says "no".
	[ "$(hw_of FAKE_NVLINK=1 PERF_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1)" = "$(want none_or_partial)" ]
	[ "$(hw_of FAKE_NVLINK=1 FAKE_NVML_FAIL=1)" = "$(want none_or_partial)" ]
	# A P2P query that fails is a "no"; a device without a handle is an error.
	[ "$(hw_of FAKE_NVLINK=1 FAKE_NVML_P2P_FAIL=1)" = "$(want none_or_partial)" ]
	[ "$(hw_of FAKE_NVLINK=1 FAKE_NVML_NO_HANDLE=1)" = "$(want unknown)" ]
	[ "$(hw_of FAKE_NVLINK=0 FAKE_NVML_NO_HANDLE=0)" = "$(want unknown)" ]
	# One GPU is single_gpu whatever NVML says.
	run --separate-stderr env FAKE_NVML_FAIL=1 FAKE_GPUS="NVIDIA L40S:48:8.9" $N --plan "$F/v1.json"
	assert_success
	[ "$(jq -r '[.hardware_profile.interconnect, .hardware_profile_id] | join(" ")' <<<"$output")" = \
		"single_gpu $(awk '$1 == 1 { print $3 }' "$F/hw-ids.txt")" ]
}

@test "runs the fixture benchmarks: records on stdout and in results/, worker logs, the raw record's key order" {
	two_l40s
	run --separate-stderr $N "$ROOT_DIR/fixtures/configs"
	assert_success
	assert_equal "${#lines[@]}" 2
	out=$output
	[[ $stderr == *"wan-t2v-1.3b-1gpu-gb10: skipped: wan-t2v-1.3b-1gpu-gb10 is restricted to gpu_types=['GB10']"* ]]
	f=$(ls results/perf_wan-t2v-1.3b-2gpu_*.json)
	[[ $f =~ ^results/perf_wan-t2v-1\.3b-2gpu_[0-9]{8}T[0-9]{6}Z\.json$ ]]
	[ "$(head -c 30 "$f")" = $'{\n  "benchmark_id": "wan-t2v-1' ]
	[ "$(tail -c 1 "$f")" = "}" ]
	run jq -r 'keys_unsorted | join(" ")' "$f"
	assert_output "benchmark_id result_schema_version model_short_name device num_gpus num_warmup_runs num_measurement_runs avg_generation_time_s individual_times_s throughput_fps max_peak_memory_mb individual_peak_memories_mb thresholds worker_log_path regression_thresholds commit run_source branch pr_number test_scope build_url build_id job_id timestamp text_encoder_time_s dit_time_s vae_decode_time_s recipe recipe_fingerprint hardware_profile hardware_profile_id software_profile software_profile_id environment_metadata environment_fingerprint workload_id variant_id benchmark_version"
	run jq -r '[.device, .num_gpus, .recipe_fingerprint, .hardware_profile_id, .software_profile_id, .thresholds.max_generation_time_s] | @tsv' "$f"
	assert_output $'NVIDIA L40S\t2\tec56b019a3e37278d55085fbf6bf77286d07b19790e9a44a5478c7620da0744c\thw-41f86157a00d7e43\tsw-51a21bb706c36ab3\t34'
	log=$(jq -r .worker_log_path "$f")
	[[ $log =~ ^results/worker_logs/worker_wan-t2v-1\.3b-2gpu_[0-9]{8}T[0-9]{6}Z\.log$ ]]
	grep -q 'stage logging: 1' "$log"
	grep -q 'runner stdout goes to the worker log too' "$log"
	# The records on stdout are the files' records.
	diff <(jq -cS . "$f") <(grep wan-t2v-1.3b-2gpu <<<"$out" | jq -cS .)
}

@test "measures and aggregates as the reference" {
	two_l40s
	run --separate-stderr env RUNNER_EVENTS="$F/row1.events.jsonl" PERF_RUN_SOURCE=scheduled_main \
		BUILDKITE_COMMIT=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa BUILDKITE_PULL_REQUEST=false \
		BUILDKITE_BRANCH=main TEST_SCOPE=full BUILDKITE_BUILD_URL=build-1 BUILDKITE_BUILD_ID=build-1 \
		BUILDKITE_JOB_ID=job-1 $N "$F/v2.json"
	assert_success
	f=$(ls results/perf_*.json)
	grep -q '"avg_generation_time_s": 31.0,' "$f"
	grep -q '"throughput_fps": 1.452,' "$f"
	grep -q '"max_peak_memory_mb": 10100.0,' "$f"
	grep -q '"text_encoder_time_s": 1.1,' "$f"
	grep -q '"dit_time_s": 8.2,' "$f"
	grep -q '"vae_decode_time_s": 3.2,' "$f"
	run jq -c '[.result_schema_version, .individual_times_s, .individual_peak_memories_mb, .pr_number, .commit, .run_source, .branch, .test_scope, .build_url, .build_id, .job_id, .quality_metadata, .num_warmup_runs, .num_measurement_runs]' "$f"
	assert_output '[2,[30,31,32],[10000,10100,10050],"","aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa","scheduled_main","main","full","build-1","build-1","job-1",{"quality_status":"canonical"},1,3]'
	run jq -r '[.recipe.attention.resolved_backend, .recipe.model.resolved_revision] | @tsv' "$f"
	assert_output $'FLASH_ATTN\t'
	[[ $(jq -r .timestamp "$f") =~ ^20[0-9]{2}-[0-9]{2}-[0-9]{2}T[0-9:.]+\+00:00$ ]]
}

@test "a runner that reports no memory gives no memory: null, not 0.0; a reported 0 is 0.0" {
	sed 's/,"peak_memory_mb":[0-9.]*//' "$F/row1.events.jsonl" >ev.jsonl
	run --separate-stderr env RUNNER_EVENTS="$BATS_TEST_TMPDIR/ev.jsonl" $N --cpu "$F/v2.json"
	assert_success
	f=$(ls results/perf_*.json)
	grep -q '"max_peak_memory_mb": null,' "$f"
	grep -q '"individual_peak_memories_mb": \[$' "$f"
	[ "$(jq -c .individual_peak_memories_mb "$f")" = "[null,null,null]" ]
	rm -r results
	# One run without a peak: the others' maximum; a reported 0 stays a measured 0.0.
	sed -e 's/,"peak_memory_mb":10100.0//' -e 's/"peak_memory_mb":10050.0/"peak_memory_mb":0/' "$F/row1.events.jsonl" >ev.jsonl
	run --separate-stderr env RUNNER_EVENTS="$BATS_TEST_TMPDIR/ev.jsonl" $N --cpu "$F/v2.json"
	assert_success
	f=$(ls results/perf_*.json)
	grep -q '"max_peak_memory_mb": 10000.0,' "$f"
	[ "$(tr -d ' \n' <"$f" | grep -o '"individual_peak_memories_mb":\[[^]]*\]')" = '"individual_peak_memories_mb":[10000.0,null,0.0]' ]
}

@test "a record without memory goes through the gates as the reference's null: no comparison, n/a, not seedable" {
	export PERF_RUN_SOURCE=scheduled_main BUILDKITE_BRANCH=main TEST_SCOPE=full \
		BUILDKITE_COMMIT=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa
	# A stored baseline of the same cohort, with memory.
	RUNNER_EVENTS="$F/row1.events.jsonl" $N --cpu --results base "$F/v2.json" |
		perf-gate-static | perf-normalize >base.jsonl
	mkdir -p store/wan-t2v-1.3b-2gpu
	python3 -c 'import json, sys
r = json.loads(open(sys.argv[1]).readline())
r.update(timestamp="2026-01-01T00:00:00+00:00", baseline_eligible=True, comparison_status="PASS")
r.pop("static_failures")
json.dump(r, open(sys.argv[2], "w"), indent=2)' base.jsonl store/wan-t2v-1.3b-2gpu/base.json
	sed 's/,"peak_memory_mb":[0-9.]*//' "$F/row1.events.jsonl" >ev.jsonl
	RUNNER_EVENTS="$BATS_TEST_TMPDIR/ev.jsonl" $N --cpu "$F/v2.json" >raw.jsonl
	run --separate-stderr bash -c "perf-gate-static <raw.jsonl | perf-normalize | perf-gate-rolling --store store >cmp.jsonl"
	assert_success
	run jq -c '[.memory, .comparison_status, .comparison.metrics.memory.current, .comparison.metrics.memory.baseline, .comparison.metrics.memory.absolute_delta, .comparison.metrics.latency.baseline]' cmp.jsonl
	assert_output '[null,"PASS",null,10100,null,31]'
	run --separate-stderr perf-summarize cmp.jsonl
	assert_success
	[[ $output == *"| 31.000 / 31.000 | 1.452 / 1.452 | n/a / 10100.0 | 1.100 / 1.100 |"* ]]
	perf-normalize <raw.jsonl >norm.json
	run --separate-stderr perf-seed prepare --store store --staging-root staging --intent-rationale test --source-result norm.json
	assert_failure 2
	assert_equal "$stderr" "perf-seed: norm.json: baseline seed records require a finite positive memory measurement"
}

@test "the page documents every key of the runner protocol, and only those" {
	# The keys perf-collect reads: those of a runtime event with every key,
	# of a run event with every key, and of its stages.
	keys=$( { jq -r 'keys[]' "$F/runtime-all-keys.jsonl"
		jq -r 'select(.event == "run" and .stages) | keys[], (.stages[] | keys[])' "$F/row1.events.jsonl"
		echo component_metric; } | sort -u)
	documented=$(sed -n '/^\.Ss Runner protocol/,/^\.Ss Record/s/^\.It Cm \([a-z_]*\)$/\1/p' "$ROOT_DIR/man/perf-collect.1" | sort -u)
	assert_equal "$documented" "$keys"
}

@test "a runner reporting every documented runtime key gets the reference's software profile and environment fingerprint" {
	two_l40s
	export FASTVIDEO_ATTENTION_BACKEND=FLASH_ATTN FASTVIDEO_FA4=1 FASTVIDEO_PERFORMANCE_PROFILE_VERSION=7 \
		IMAGE_VERSION=v42 UV_TORCH_BACKEND=cu130 FASTVIDEO_CONTAINER_IMAGE_REF=registry/img@sha256:ab
	grep -v '"runtime"' "$F/row1.events.jsonl" | cat "$F/runtime-all-keys.jsonl" - >ev.jsonl
	run --separate-stderr env RUNNER_EVENTS="$BATS_TEST_TMPDIR/ev.jsonl" $N "$F/v2.json"
	assert_success
	f=$(ls results/perf_*.json)
	got=$(python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
print(r["software_profile_id"], r["environment_fingerprint"],
      json.dumps(r["environment_metadata"], sort_keys=True, separators=(",", ":")))' "$f")
	want=$(python3 "$F/identity.py" "$F/runtime-all-keys.jsonl" 2 "NVIDIA L40S" 48 8.9 none_or_partial)
	assert_equal "$got" "$want"
	# Each runtime key reaches the record: none is left null.
	run jq -c '[.environment_metadata.python.implementation, .environment_metadata.torch.cudnn, .recipe.model.resolved_revision, .recipe.attention.resolved_backend]' "$f"
	assert_output '["CPython",91002,"0123456789abcdef0123456789abcdef01234567","FLASH_ATTN"]'
}

@test "gives the runner its protocol: arguments, PERF_* variables, stage logging" {
	two_l40s
	run --separate-stderr env RUNNER_EVENTS="$F/row1.events.jsonl" $N "$F/v2.json"
	assert_success
	log=$(jq -r .worker_log_path <<<"$output")
	grep -qx "args: --extra $F/v2.json" "$log"
	grep -qx "PERF_CONFIG=$F/v2.json" "$log"
	grep -qx "PERF_WORKER_LOG=$log" "$log"
	grep -qx "PERF_NUM_WARMUP_RUNS=1" "$log"
	grep -qx "PERF_NUM_MEASUREMENT_RUNS=3" "$log"
	grep -qx "PERF_NUM_GPUS=2" "$log"
	grep -qx "PERF_STAGE_LOGGING=1" "$log"
	grep -qx "FASTVIDEO_STAGE_LOGGING=1" "$log"
	grep -q "^PERF_EVENTS=" "$log"
}

@test "a v1 config: no schema version, no identity, worker_log_path kept" {
	run --separate-stderr env RUNNER_EVENTS="$F/row1.events.jsonl" $N --cpu "$F/v1.json"
	assert_success
	run jq -c '[has("result_schema_version"), has("recipe"), has("workload_id"), (.worker_log_path | type), .device == "" , .model_short_name]' <<<"$output"
	assert_output '[false,false,false,"string",false,""]'
}

@test "a runner that reports no runs is timed by perf-collect, warm-ups dropped" {
	run --separate-stderr env RUNNER_COUNT="$BATS_TEST_TMPDIR/count" $N --cpu "$F/v1.json" "$F/v2.json"
	assert_success
	[ "$(wc -l <count)" -eq $((2 + 4)) ]
	run jq -c '[.benchmark_id, (.individual_times_s | length), (.max_peak_memory_mb > 0), .text_encoder_time_s]' <<<"$output"
	assert_line --index 0 '["legacy",2,true,null]'
	assert_line --index 1 '["wan-t2v-1.3b-2gpu",3,true,null]'
}

@test "samples GPU memory while a self-timed runner runs" {
	two_l40s
	echo 1024 >gpu_mb
	run --separate-stderr env FAKE_GPU_USED_MB_FILE="$BATS_TEST_TMPDIR/gpu_mb" RUNNER_USE_GPU_MB=5120 \
		$N --sample-interval 0.02 "$F/v2.json"
	assert_success
	[ "$(jq -c .individual_peak_memories_mb <<<"$output")" = "[4096.0,4096.0,4096.0]" ] ||
		grep -q '"individual_peak_memories_mb":\[4096.0,4096.0,4096.0\]' <<<"$output"
}

@test "fewer valid measured runs than configured fails the benchmark, naming it and its config, exit 1" {
	grep -v '"generation_time_s":32.0' "$F/row1.events.jsonl" >ev.jsonl
	run --separate-stderr env RUNNER_EVENTS="$BATS_TEST_TMPDIR/ev.jsonl" $N --cpu "$F/v2.json"
	assert_failure 1
	assert_output ""
	assert_equal "$stderr" "$N: wan-t2v-1.3b-2gpu: $F/v2.json: the runner reported 2 valid measured runs, 3 configured"
	[ -z "$(ls results/*.json 2>/dev/null)" ]
	grep -v '"measure"' "$F/row1.events.jsonl" >ev.jsonl
	run --separate-stderr env RUNNER_EVENTS="$BATS_TEST_TMPDIR/ev.jsonl" $N --cpu "$F/v2.json"
	assert_failure 1
	assert_equal "$stderr" "$N: wan-t2v-1.3b-2gpu: $F/v2.json: the runner reported 0 valid measured runs, 3 configured"
}

@test "a failed runner: no record, the reason and its worker log, the others still run, exit 1" {
	mkdir c && cp "$F/v1.json" "$F/v2.json" c/ && cp "$F/cat-runner.sh" c/
	sed -i 's/"legacy"/"broken"/' c/v1.json
	run --separate-stderr env RUNNER_EXIT=3 RUNNER_EVENTS="$F/row1.events.jsonl" $N --cpu c/v1.json
	assert_failure 1
	[[ $stderr == *"broken: the runner exited with status 3"* ]]
	[[ $stderr == *"Worker log tail for broken (results/worker_logs/worker_broken_"*"args: "* ]]
	run --separate-stderr env RUNNER_EVENTS="$F/row1.events.jsonl" $N --cpu --runner "sh -c 'exit 7' --" c
	assert_failure 1
	assert_output ""
	# shellcheck disable=SC2016 # the $ is for the runner script
	sed -i 's/exit "${RUNNER_EXIT:-0}"/[ "$PERF_NUM_GPUS" = 1 ] \&\& exit 9; exit 0/' c/cat-runner.sh
	run --separate-stderr env RUNNER_EVENTS="$F/row1.events.jsonl" $N --cpu c
	assert_failure 1
	assert_equal "${#lines[@]}" 1
	[ "$(jq -r .benchmark_id <<<"$output")" = wan-t2v-1.3b-2gpu ]
	[[ $stderr == *"broken: the runner exited with status 9"* ]]
}

@test "--written lists this run's worker logs and records by name, a failed run's log too, never an earlier run's files" {
	mkdir c && cp "$F/v1.json" "$F/v2.json" c/ && cp "$F/cat-runner.sh" c/
	mkdir -p results/worker_logs
	echo '{}' >results/perf_old_20200101T000000Z.json
	echo old >results/worker_logs/worker_old_20200101T000000Z.log
	# shellcheck disable=SC2016 # the $ is for the runner script
	sed -i 's/exit "${RUNNER_EXIT:-0}"/[ "$PERF_NUM_GPUS" = 1 ] \&\& exit 9; exit 0/' c/cat-runner.sh
	run --separate-stderr env RUNNER_EVENTS="$F/row1.events.jsonl" $N --cpu --written list c
	assert_failure 1
	local log rec
	log=$(jq -r .worker_log_path <<<"$output")
	rec=$(find results -maxdepth 1 -name 'perf_wan-t2v-1.3b-2gpu_*.json')
	[ -n "$rec" ] && [ -f "$log" ]
	# the failed legacy benchmark's log, then the other's log and record
	assert_equal "$(sed -n 1p list)" "$(find results/worker_logs -name 'worker_legacy_*.log')"
	assert_equal "$(sed -n '2,$p' list)" "$(printf '%s\n%s' "$log" "$rec")"
	# a list that cannot be written: exit 2 before anything runs
	run --separate-stderr env RUNNER_COUNT="$BATS_TEST_TMPDIR/count" $N --cpu --written nodir/list "$F/v1.json"
	assert_failure 2
	assert_equal "$stderr" "$N: nodir/list: cannot write: No such file or directory"
	[ ! -e count ]
}

@test "--timeout kills a hanging runner and its process group" {
	cat >hang.sh <<'EOF'
#!/bin/sh
sleep 60 &
echo $! >"$HANG_PID"
wait
EOF
	chmod +x hang.sh
	start=$SECONDS
	run --separate-stderr env HANG_PID="$BATS_TEST_TMPDIR/pid" $N --cpu --timeout 0.5 --runner ./hang.sh "$F/v1.json"
	assert_failure 1
	[ $((SECONDS - start)) -lt 10 ]
	[[ $stderr == *"legacy: the runner timed out after"* ]]
	gone "$(cat pid)"
}

@test "an invalid event line fails the benchmark, with its id and the line's number, never self-timed" {
	{ head -1 "$F/row1.events.jsonl"; echo '{"event":"run","generation_time_s":'; tail -3 "$F/row1.events.jsonl"; echo '{"event":"ran"}'; } >ev.jsonl
	run --separate-stderr env RUNNER_EVENTS="$BATS_TEST_TMPDIR/ev.jsonl" RUNNER_COUNT="$BATS_TEST_TMPDIR/count" $N --cpu "$F/v2.json"
	assert_failure 1
	assert_output ""
	assert_equal "$stderr" "$N: wan-t2v-1.3b-2gpu: PERF_EVENTS:2: invalid JSON at column 36: unexpected end of input
$N: wan-t2v-1.3b-2gpu: PERF_EVENTS:6: unknown event (expected \"run\", \"runtime\" or \"metric\")
$N: wan-t2v-1.3b-2gpu: $F/v2.json: the runner wrote 2 invalid event lines"
	[ "$(wc -l <count)" -eq 1 ]
	[ -z "$(ls results/*.json 2>/dev/null)" ]
}

@test "only a runner that writes no event at all is timed by perf-collect" {
	# An invalid line alone, or a runtime event alone: the runner is not re-run.
	echo '{"event":"run","phase":"measure","generation_time_s":-1}' >ev.jsonl
	run --separate-stderr env RUNNER_EVENTS="$BATS_TEST_TMPDIR/ev.jsonl" RUNNER_COUNT="$BATS_TEST_TMPDIR/count" $N --cpu "$F/v1.json"
	assert_failure 1
	assert_equal "$stderr" "$N: legacy: PERF_EVENTS:1: run event: generation_time_s must be a non-negative number
$N: legacy: $F/v1.json: the runner wrote 1 invalid event line"
	[ "$(wc -l <count)" -eq 1 ]
	head -1 "$F/row1.events.jsonl" >ev.jsonl
	run --separate-stderr env RUNNER_EVENTS="$BATS_TEST_TMPDIR/ev.jsonl" RUNNER_COUNT="$BATS_TEST_TMPDIR/count" $N --cpu "$F/v1.json"
	assert_failure 1
	assert_equal "$stderr" "$N: legacy: $F/v1.json: the runner reported 0 valid measured runs, 2 configured"
	[ "$(wc -l <count)" -eq 2 ]
	# Blank lines are not events.
	printf '\n\n' >ev.jsonl
	run --separate-stderr env RUNNER_EVENTS="$BATS_TEST_TMPDIR/ev.jsonl" RUNNER_COUNT="$BATS_TEST_TMPDIR/count" $N --cpu "$F/v1.json"
	assert_success
	[ "$(wc -l <count)" -eq 4 ]
}

@test "the worker log rotates at 10 MiB, keeping one .log.1" {
	run --separate-stderr env RUNNER_SPAM_MB=12 RUNNER_EVENTS="$F/row1.events.jsonl" $N --cpu "$F/v1.json"
	assert_success
	log=$(jq -r .worker_log_path <<<"$output")
	[ -s "$log.1" ]
	[ "$(stat -c %s "$log.1")" -le $((10 * 1024 * 1024)) ]
	[ "$(stat -c %s "$log")" -le $((10 * 1024 * 1024)) ]
}

@test "a results directory that cannot be written is exit 2 before anything runs" {
	touch notadir
	run --separate-stderr env RUNNER_COUNT="$BATS_TEST_TMPDIR/count" $N --cpu --results notadir/results "$F/v1.json"
	assert_failure 2
	[[ $stderr == *"notadir/results/worker_logs: cannot create: Not a directory"* ]]
	[ ! -e count ]
}

@test "--cpu (or PERF_ALLOW_CPU=1) runs GPU benchmarks on the CPU of a machine without one" {
	run --separate-stderr env RUNNER_EVENTS="$F/row1.events.jsonl" $N "$F/v2.json"
	assert_success
	assert_output ""
	[[ $stderr == *"wan-t2v-1.3b-2gpu: skipped: Need 2 GPUs, only 0 available"* ]]
	run --separate-stderr env RUNNER_EVENTS="$F/row1.events.jsonl" PERF_ALLOW_CPU=1 $N "$F/v2.json"
	assert_success
	run jq -c '[.device == "", .hardware_profile, .num_gpus]' <<<"$output"
	assert_output '[false,{"device_type":"cpu","gpu_count":0,"gpus":[],"interconnect":"none"},2]'
}

@test "--telemetry samples the GPUs into an nvidia-smi style CSV until stopped" {
	two_l40s
	$N --telemetry tele.csv --interval 0.05 &
	pid=$!
	# four samples or more (the heading aside), however loaded the machine
	for _ in $(seq 600); do [ "$(grep -c '^[01], ' tele.csv 2>/dev/null)" -ge 4 ] && break; sleep 0.05; done
	kill -TERM $pid
	wait $pid
	head -1 tele.csv | grep -qx 'index, timestamp, clocks.current.sm \[MHz\], clocks.max.sm \[MHz\], power.draw \[W\], power.limit \[W\], temperature.gpu'
	[ "$(grep -c '^[01], .*, 2040 MHz, 2520 MHz, 251.34 W, 350.00 W, 61$' tele.csv)" -ge 4 ]
	no_gpus
	run --separate-stderr $N --telemetry tele2.csv
	assert_failure 2
	[[ $stderr == *"NVML is not available"* ]]
}

@test "no configs at all is exit 2" {
	mkdir empty
	run --separate-stderr $N --check empty
	assert_failure 2
	[[ $stderr == *"no benchmark configs (*.json) found"* ]]
}

@test "a full disk on stdout is exit 2, never success" {
	run --separate-stderr bash -c "$N --plan '$F/v1.json' >/dev/full"
	assert_failure 2
	[[ $stderr == *"$N: write error on standard output: No space left on device" ]]
}
@test "usage and the page's SYNOPSIS list the same options, each one accepted" {
	usage=$($N -h | sed '/^$/,$d' | grep -oE -- '(\[| )--?[a-z][-a-z]*' | tr -d '[ ' | sort -u)
	synopsis=$(sed -n '/^\.Sh SYNOPSIS/,/^\.Sh DESCRIPTION/p' "$ROOT_DIR/man/perf-collect.1" |
		grep -o 'Fl [-a-z]*' | sed 's/^Fl /-/' | sort -u)
	assert_equal "$usage" "$synopsis"
	for o in $usage; do
		run --separate-stderr $N "$o"
		[ "$status" -le 2 ] || { echo "$o: status $status: $stderr" >&2; false; }
		[[ $stderr != *"unrecognized option"* && $stderr != *"invalid option"* ]]
	done
}

@test "an unknown option prints usage on stderr, exit 2" { check_unknown_option $N; }
@test "-h prints usage on stdout, exit 0" { check_help $N; }
@test "--version prints the version" { check_version $N; }

@test "the Python runner reports a workload with its stages (where python3 is installed)" {
	command -v python3 >/dev/null || skip "python3 is not installed"
	run --separate-stderr $N --cpu --runner "python3 $ROOT_DIR/fixtures/runners/torch_runner.py" \
		"$ROOT_DIR/fixtures/configs/wan-t2v-1.3b.json"
	assert_success
	run jq -c '[(.individual_times_s | length), (.dit_time_s > 0), (.max_peak_memory_mb > 0), (.software_profile.python | test("^3\\.[0-9]+$"))]' <<<"$output"
	assert_output '[3,true,true,true]'
}

@test "config: a regression_thresholds.metrics block (issue 24) is checked, not a typo" {
	jq '.regression_thresholds = {"latency": {"gated": false}, "metrics": {"BM_Sort/*": {"threshold_percent": 0.1, "better": "lower"}, "*/cpu_time": {"gated": false}}}' \
		"$F/v1.json" >"$BATS_TEST_TMPDIR/ok.json"
	run --separate-stderr $N --check --strict "$BATS_TEST_TMPDIR/ok.json"
	assert_success
	assert_equal "$stderr" ""
	jq '.regression_thresholds = {"metrics": {"BM_Sort/*": {"treshold_percent": 0.1}}}' "$F/v1.json" >"$BATS_TEST_TMPDIR/bad.json"
	run --separate-stderr $N --check "$BATS_TEST_TMPDIR/bad.json"
	assert_failure 2
	assert_equal "$stderr" "$N: $BATS_TEST_TMPDIR/bad.json:15: regression_thresholds.metrics.'BM_Sort/*'.treshold_percent is not a policy field (threshold_percent, threshold_absolute, gated, better)"
}

@test "metric events (issue 24): named metrics of the record, the mean of the measured runs in the canonical unit" {
	{
		cat "$F/row1.events.jsonl"
		printf '%s\n' '{"event":"metric","phase":"warmup","name":"tokens_per_s","value":1.0,"unit":"1/s","better":"higher"}'
		for v in 800 812.5 825; do
			printf '{"event":"metric","name":"tokens_per_s","value":%s,"unit":"1/s","better":"higher"}\n' "$v"
		done
		for v in 1.5 2.5 2; do
			printf '{"event":"metric","name":"step time","value":%s,"unit":"ms"}\n' "$v"
			printf '{"event":"metric","name":"rss","value":%s}\n' "$v"
		done
	} >ev.jsonl
	run --separate-stderr env RUNNER_EVENTS="$BATS_TEST_TMPDIR/ev.jsonl" RUNNER_COUNT="$BATS_TEST_TMPDIR/count" $N --cpu "$F/v2.json"
	assert_success
	[ -z "$stderr" ]
	# (jq would rewrite 800.0 as 800: the record's own text is checked.)
	[[ $output == *',"vae_decode_time_s":3.2,"metrics":{"tokens_per_s":{"value":812.5,"unit":"1/s","better":"higher","samples":[800.0,812.5,825.0]},"step time":{"value":0.002,"unit":"s","samples":[0.0015,0.0025,0.002]},"rss":{"value":2.0,"unit":"","samples":[1.5,2.5,2.0]}},'* ]]
	with=$output
	# Without metric events there is no metrics key, and the rest is as with them.
	run --separate-stderr env RUNNER_EVENTS="$F/row1.events.jsonl" RUNNER_COUNT="$BATS_TEST_TMPDIR/count" $N --cpu "$F/v2.json"
	assert_success
	assert_equal "$(jq 'has("metrics")' <<<"$output")" false
	assert_equal "$(jq -c 'del(.metrics, .timestamp, .worker_log_path)' <<<"$with")" \
		"$(jq -c 'del(.timestamp, .worker_log_path)' <<<"$output")"
}

@test "metric events: a bad one is an invalid event line naming what is wrong" {
	{
		cat "$F/row1.events.jsonl"
		printf '%s\n' '{"event":"metric","name":"","value":1}' '{"event":"metric","name":"t","value":"1"}' \
			'{"event":"metric","name":"t","value":1,"better":"up"}' \
			'{"event":"metric","name":"t","value":1,"unit":"s"}' '{"event":"metric","name":"t","value":1,"unit":"B"}'
	} >ev.jsonl
	run --separate-stderr env RUNNER_EVENTS="$BATS_TEST_TMPDIR/ev.jsonl" RUNNER_COUNT="$BATS_TEST_TMPDIR/count" $N --cpu "$F/v2.json"
	assert_failure 1
	assert_output ""
	[[ ${stderr_lines[0]} == "$N: wan-t2v-1.3b-2gpu: PERF_EVENTS:6: metric event: name must be a metric name: "* ]]
	assert_equal "${stderr_lines[1]}" "$N: wan-t2v-1.3b-2gpu: PERF_EVENTS:7: metric event: value must be a finite number"
	assert_equal "${stderr_lines[2]}" "$N: wan-t2v-1.3b-2gpu: PERF_EVENTS:8: metric event: better must be \"lower\" or \"higher\""
	assert_equal "${stderr_lines[3]}" "$N: wan-t2v-1.3b-2gpu: PERF_EVENTS:10: metric event: t was reported in s before, now in B"
	assert_equal "${stderr_lines[4]}" "$N: wan-t2v-1.3b-2gpu: $F/v2.json: the runner wrote 4 invalid event lines"
}

# Issue 24: a tool's suite (run_config.output).

@test "run_config.output with a file: the tool runs once, each benchmark is a record with the config's identity" {
	I=$F/import
	run --separate-stderr env TOOL_FILE="$FIXTURES/perf-import/gbench-1.8.json" $N "$I/gbench-file.json"
	assert_failure 1	# BM_Gpu skipped itself: a failed benchmark
	run jq -r .benchmark_id <<<"$output"
	assert_output "$(printf 'BM_Encode/64\nBM_Ratio\nBM_Gpu')"
	[[ "$stderr" == *"$N: codec-suite: BM_Gpu: failed: no GPU on this agent"* ]]
	rec=$(ls results/perf_BM_Encode_64_*.json)
	run jq -c '[.workload_id, .benchmark_version, .variant_id, .metrics.time.value, .metrics.time.samples, .device == "", .hardware_profile.gpu_count, .recipe.tool.format]' "$rec"
	assert_output '["codec",2,"default",3e-06,[2e-06,4e-06,3e-06],false,0,"google-benchmark"]'
	# The tool got the file's path for {output} and in PERF_OUTPUT, not the config's path.
	log=$(jq -r .worker_log_path "$rec")
	grep -qx "tool.sh: PERF_OUTPUT=$PWD/results/tool-output/gb.json" "$log"
	[ -f results/tool-output/gb.json ]
	[ "$(find results -maxdepth 1 -name 'perf_*.json' | wc -l)" -eq 3 ]
}

@test "run_config.output without a file: the tool's standard output is imported, and logged" {
	run --separate-stderr env TOOL_FILE="$F/import/go.txt" $N "$F/import/go-stdout.json"
	assert_success
	run jq -c '[.benchmark_id, .workload_id, .variant_id, .metrics.time.samples, .metrics["B/op"].value, .metrics["allocs/op"].value]' <<<"$output"
	assert_output '["BenchmarkEncode[procs=4]","example.com/codec","procs=4",[2.5000000000000004e-07,2.7e-07],64,2]'
	grep -q '^BenchmarkEncode-4' results/worker_logs/worker_go-suite_*.log
	grep -qx 'tool.sh: PERF_OUTPUT=' results/worker_logs/worker_go-suite_*.log
}

@test "run_config.output: a stale file is never imported; a bad format is a failed benchmark" {
	mkdir -p results/tool-output
	cp "$FIXTURES/perf-import/gbench-aggregates-only.json" results/tool-output/gb.json
	run --separate-stderr $N "$F/import/silent.json"
	assert_failure 1
	assert_output ""
	[[ "$stderr" == *"silent: the command wrote no $PWD/results/tool-output/gb.json"* ]]
	run --separate-stderr $N "$F/import/bad-format.json"
	assert_failure 1
	[[ "$stderr" == *"bad-format: run_config.output.format must be one of google-benchmark,"* ]]
	printf 'not a benchmark\n' >"$BATS_TEST_TMPDIR/junk.txt"
	run --separate-stderr env TOOL_FILE="$BATS_TEST_TMPDIR/junk.txt" $N "$F/import/go-stdout.json"
	assert_failure 1
	assert_output ""
	[[ "$stderr" == *"go-suite: standard output: no benchmark in it (read as go)"* ]]
}

@test "fixtures/import: a real tool's suite through perf-collect (hyperfine)" {
	command -v hyperfine >/dev/null || skip "hyperfine is not installed"
	run --separate-stderr $N "$ROOT_DIR/fixtures/import/hyperfine.json"
	assert_success
	run jq -r '[.benchmark_id, .workload_id, (.metrics.time.samples | length), .metrics.time.unit] | join(" ")' <<<"$output"
	assert_line --index 0 'sleep 1ms[ms=1] sleep 3 s'
	assert_line --index 1 'sleep 2ms[ms=2] sleep 3 s'
}
