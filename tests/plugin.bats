#!/usr/bin/env bats
# The Buildkite plugin: plugin.yml and its option schema, the hooks
# (environment, command, pre-exit) with buildkite-agent stood in for, the
# pipeline templates and the pre-push hook.

# shellcheck disable=SC2154,SC2030,SC2031,SC2016,SC2209,SC2086 # bats sets status, output, lines, stderr; each test is a subshell; single quotes hold code for another shell; ${P}NAME builds variable names
load lib/common
load lib/stub

LANE=$FIXTURES/perf-lane
P=BUILDKITE_PLUGIN_PERFKITE_

setup() {
	export XDG_CACHE_HOME=$BATS_TEST_TMPDIR/xdg
	unset BUILDKITE_SOURCE PERF_RESULTS_DIR DASHBOARD_DAYS FAKE_SLOWDOWN HF_TOKEN \
		BUILDKITE_COMMAND_EXIT_STATUS
	export PERF_ALLOW_CPU=1 PERF_CUDA_LIBRARY=/nonexistent PERF_NVML_LIBRARY=/nonexistent
	stub_start
	cd "$BATS_TEST_TMPDIR" || return 1
}

@test "plugin.yml: valid YAML, a valid JSON schema that refuses unknown options" {
	run py - "$ROOT_DIR/plugin.yml" <<-'EOF'
		import sys, yaml, jsonschema
		p = yaml.safe_load(open(sys.argv[1]))
		s = p["configuration"]
		jsonschema.Draft7Validator.check_schema(s)
		assert s["additionalProperties"] is False
		v = jsonschema.Draft7Validator(s)
		good = {"configs": ["a", "b"], "store": "git+https://huggingface.co/datasets/o/n",
		        "upload-policy": "pass", "annotate": False, "artifacts": "r/**/*",
		        "dashboard-days": 30, "token-env": "PERF_HF_TOKEN", "timeout": 60}
		assert not list(v.iter_errors(good)), list(v.iter_errors(good))
		for bad in ({"confgs": "a"}, {"upload-policy": "sometimes"}, {"dashboard-days": 0},
		            {"token-env": "HF TOKEN"}, {"annotate": "yes"}):
		    assert list(v.iter_errors(bad)), bad
		print(p["name"], len(s["properties"]))
	EOF
	assert_success
	assert_output "perfkite 15"
}

@test "the hooks know exactly the options plugin.yml declares" {
	run py -c 'import sys, yaml; print(" ".join(sorted(k.upper().replace("-", "_") for k in yaml.safe_load(open(sys.argv[1]))["configuration"]["properties"])))' "$ROOT_DIR/plugin.yml"
	assert_success
	[ -n "$output" ]
	local declared=$output
	run bash -c '. "$1/hooks/lib/plugin.bash"; printf "%s\n" "${plugin_options[@]}" | sort | tr "\n" " "' _ "$ROOT_DIR"
	assert_equal "${output% }" "$declared"
}

@test "pipeline templates (and the README's pipeline) are valid YAML whose plugin options the schema accepts" {
	awk '/^```yaml$/ { y = 1; next } /^```$/ { y = 0 } y' "$ROOT_DIR/README.md" >readme.yml
	run py - "$ROOT_DIR/plugin.yml" "$ROOT_DIR"/pipeline-templates/*.yml readme.yml <<-'EOF'
		import sys, yaml, jsonschema
		schema = yaml.safe_load(open(sys.argv[1]))["configuration"]
		n = 0
		for f in sys.argv[2:]:
		    doc = yaml.safe_load(open(f))
		    assert isinstance(doc.get("steps"), list) and doc["steps"], f
		    for step in doc["steps"]:
		        for plugin in step.get("plugins", []):
		            for ref, opts in plugin.items():
		                assert "perfkite#" in ref, ref
		                jsonschema.validate(opts, schema)
		                n += 1
		print(n)
	EOF
	assert_success
	assert_output 3
}

@test "command hook: options and arrays reach perf-lane; an unknown option is refused" {
	export ${P}CONFIGS_0=$LANE/configs ${P}CONFIGS_1=$LANE/more ${P}STORE=store \
		${P}REPORTS_DIR=out ${P}RESULTS_DIR=res ${P}UPLOAD_POLICY=always ${P}RUN_SOURCE=local \
		${P}DASHBOARD_DAYS=7 ${P}TELEMETRY_INTERVAL=3 ${P}CPU=true
	run --separate-stderr "$ROOT_DIR/hooks/command"
	assert_success
	assert_line --index 0 "--- perf-lane: run source local, upload policy always, store store, reports out"
	assert_line --partial "| lane-bench |"
	assert_line --partial "| lane-legacy |"
	[ -d res/worker_logs ]
	assert_equal "$(find store -name '*.json' | wc -l)" 2
	assert_equal "$(stub_calls nvidia-smi)" \
		"--query-gpu=index,timestamp,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv -l 3"
	export ${P}CONFGS=x
	run --separate-stderr "$ROOT_DIR/hooks/command"
	assert_failure 2
	assert_equal "$stderr" "perfkite: unknown plugin option 'confgs'"
	unset ${P}CONFGS
	export ${P}ARTIFACTS_0=a ${P}ANNOTATE_STYLE=info ${P}EXTRA_2=x
	run --separate-stderr "$ROOT_DIR/hooks/environment"
	assert_failure 2
	assert_equal "$stderr" "perfkite: unknown plugin option 'extra'"
}

@test "command hook: one config as a string; the lane's status is the step's" {
	export ${P}CONFIGS=$LANE/configs ${P}STORE=store ${P}CPU=true BUILDKITE_PULL_REQUEST=5 FAKE_SLOWDOWN=20
	run --separate-stderr "$ROOT_DIR/hooks/command"
	assert_failure 1
	assert_line --index 0 "--- perf-lane: run source pr, upload policy pass, store store, reports perf-reports"
}

@test "environment hook: the programs on PATH, the token under HF_TOKEN, never printed" {
	export ${P}TOKEN_ENV=MY_TOKEN MY_TOKEN=hf_s3cret
	run --separate-stderr bash -c '. "$1/hooks/environment" && command -v perf-lane && printf "%s\n" "$HF_TOKEN"' _ "$ROOT_DIR"
	assert_success
	assert_line --index 0 "$ROOT_DIR/bin/perf-lane"
	assert_line --index 1 hf_s3cret
	not grep -q hf_s3cret <<<"$stderr"
	unset MY_TOKEN
	run --separate-stderr bash -c '. "$1/hooks/environment" && printf "[%s]\n" "${HF_TOKEN:-}"' _ "$ROOT_DIR"
	assert_success
	assert_output "[]"
	assert_equal "$stderr" "perfkite: token-env names MY_TOKEN, which is not set"
}

@test "environment hook: a checkout without the programs builds them" {
	mkdir plugin
	cp -r "$ROOT_DIR"/{Makefile,VERSION,src,hooks} plugin/
	mkdir plugin/bin
	cp "$ROOT_DIR/bin/perf-lane" plugin/bin/
	# (a sanitizer build of the tests must not make this one a sanitizer build)
	run --separate-stderr env -u SANITIZE bash -c '. plugin/hooks/environment && command -v perf-upload' _
	assert_success
	assert_line --index 0 "--- :hammer: building perfkite"
	assert_line --index 1 "$PWD/plugin/bin/perf-upload"
	[ -x plugin/bin/perf-seed ]
}

# reports STATUS-LINE...: a reports directory as the lane leaves it.
reports() {
	mkdir -p perf-reports/results
	printf '## Performance Baseline Comparison\n\n| Model | Status |\n|---|---|\n| m | %s |\n' "$1" \
		>perf-reports/annotation.md
	echo '<html></html>' >perf-reports/dashboard_abc1234_20260616_000000.html
	echo '{}' >perf-reports/results/normalized_perf_m.json
}

@test "pre-exit: uploads the reports and annotates with the summary and a dashboard link" {
	reports PASS
	BUILDKITE_COMMAND_EXIT_STATUS=0 run --separate-stderr "$ROOT_DIR/hooks/pre-exit"
	assert_success
	diff <(stub_calls buildkite-agent) - <<-'EOF'
		artifact upload perf-reports/**/*
		annotate --context perf-summary --style success
	EOF
	diff "$STUB_DIR/annotation.1.md" - <<-'EOF'
		## Performance Baseline Comparison

		| Model | Status |
		|---|---|
		| m | PASS |

		[Dashboard](artifact://perf-reports/dashboard_abc1234_20260616_000000.html)
	EOF
}

@test "pre-exit: the style follows the lane's status; calibration is info" {
	reports CALIBRATION_NEEDED
	BUILDKITE_COMMAND_EXIT_STATUS=0 "$ROOT_DIR/hooks/pre-exit" >/dev/null
	BUILDKITE_COMMAND_EXIT_STATUS=1 "$ROOT_DIR/hooks/pre-exit" >/dev/null
	BUILDKITE_COMMAND_EXIT_STATUS=2 "$ROOT_DIR/hooks/pre-exit" >/dev/null
	BUILDKITE_PLUGIN_PERFKITE_ANNOTATE_STYLE=info BUILDKITE_COMMAND_EXIT_STATUS=1 \
		"$ROOT_DIR/hooks/pre-exit" >/dev/null
	run grep '^annotate' "$STUB_DIR/buildkite-agent.calls"
	assert_output "$(printf '%s\n' 'annotate --context perf-summary --style info' \
		'annotate --context perf-summary --style error' \
		'annotate --context perf-summary --style warning' \
		'annotate --context perf-summary --style info')"
}

@test "pre-exit after a cancel: the reports are still uploaded; no summary says why" {
	mkdir -p perf-reports
	echo '{}' >perf-reports/perf_b_20260616T000000Z.json
	# a cancelled job: the agent ran no command to the end (no exit status)
	run --separate-stderr "$ROOT_DIR/hooks/pre-exit"
	assert_success
	diff <(stub_calls buildkite-agent) - <<-'EOF'
		artifact upload perf-reports/**/*
		annotate --context perf-summary --style warning
	EOF
	grep -q 'The lane ended with status unknown before the rolling comparison ran' "$STUB_DIR/annotation.1.md"
}

@test "pre-exit: custom artifact globs, annotation off, no reports at all" {
	reports PASS
	export ${P}ARTIFACTS_0='perf-reports/*.md' ${P}ARTIFACTS_1='perf-reports/results/*.json' ${P}ANNOTATE=false
	BUILDKITE_COMMAND_EXIT_STATUS=0 run "$ROOT_DIR/hooks/pre-exit"
	assert_success
	diff <(stub_calls buildkite-agent) - <<-'EOF'
		artifact upload perf-reports/*.md
		artifact upload perf-reports/results/*.json
	EOF
	rm -rf perf-reports "$STUB_DIR/buildkite-agent.calls"
	run "$ROOT_DIR/hooks/pre-exit"
	assert_success
	[ -z "$(stub_calls buildkite-agent)" ]
}

@test "pre-exit: an annotation never passes 1 MiB; the summary is cut at a whole row" {
	reports PASS
	for i in $(seq 30000); do printf '| model-%05d | PASS | %s |\n' "$i" "padding padding padding"; done \
		>>perf-reports/annotation.md
	[ "$(wc -c <perf-reports/annotation.md)" -gt 1048576 ]
	BUILDKITE_COMMAND_EXIT_STATUS=0 run "$ROOT_DIR/hooks/pre-exit"
	assert_success
	local body=$STUB_DIR/annotation.1.md
	[ "$(wc -c <"$body")" -le 1048576 ]
	grep -q 'The summary was cut to fit an annotation' "$body"
	tail -n 1 "$body" | grep -q '^\[Dashboard\](artifact://'
	# every table line is whole
	not grep -qv " |$" < <(grep "^| model-" "$body")
}

@test "pre-push hook: the newest local results gate the push, with a hint to skip" {
	local hook=$ROOT_DIR/pipeline-templates/pre-push
	git init -q --bare -b main remote.git
	git init -q -b main work
	cp "$hook" work/.git/hooks/pre-push
	cd work
	git -c user.name=t -c user.email=t@t commit -q --allow-empty -m one
	git remote add origin ../remote.git
	# nothing measured: the push goes through
	git push -q origin main
	# a passing result
	mkdir results
	cp "$ROOT_DIR"/fixtures/records/perf_wan-t2v-1.3b-2gpu_*.json results/perf_wan-t2v-1.3b-2gpu_20260616T000000Z.json
	git -c user.name=t -c user.email=t@t commit -q --allow-empty -m two
	PERFORMANCE_TRACKING_ROOT=$ROOT_DIR/fixtures/store run git push -q origin main
	assert_success
	# a newer result of the same benchmark breaches its threshold: refused
	sed 's/"avg_generation_time_s": 31.0/"avg_generation_time_s": 99.0/' \
		results/perf_wan-t2v-1.3b-2gpu_20260616T000000Z.json >results/perf_wan-t2v-1.3b-2gpu_20260617T000000Z.json
	git -c user.name=t -c user.email=t@t commit -q --allow-empty -m three
	PERFORMANCE_TRACKING_ROOT=$ROOT_DIR/fixtures/store run git push -q origin main
	assert_failure
	assert_output --partial "perf: push refused; skip the check with PERF_SKIP_PRE_PUSH=1 git push (or git push --no-verify)"
	[ "$(git -C ../remote.git rev-parse main)" != "$(git rev-parse HEAD)" ]
	PERF_SKIP_PRE_PUSH=1 run git push -q origin main
	assert_success
}
