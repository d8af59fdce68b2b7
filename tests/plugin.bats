#!/usr/bin/env bats
# The Buildkite plugin: plugin.yml and its option schema, the hooks
# (environment, command, pre-exit) with buildkite-agent stood in for, the
# pipeline templates and the pre-push hook.

# shellcheck disable=SC2154,SC2030,SC2031,SC2016,SC2209,SC2086 # bats sets status, output, lines, stderr; each test is a subshell; single quotes hold code for another shell; ${P}NAME builds variable names
load lib/common
load lib/stub
load lib/ab_repo
load lib/bisect_repo

LANE=$FIXTURES/perf-lane
P=BUILDKITE_PLUGIN_PERFKITE_

setup() {
	export XDG_CACHE_HOME=$BATS_TEST_TMPDIR/xdg
	unset BUILDKITE_SOURCE PERF_RESULTS_DIR DASHBOARD_DAYS FAKE_SLOWDOWN HF_TOKEN \
		BUILDKITE_COMMAND_EXIT_STATUS BUILDKITE_STEP_KEY BUILDKITE_LABEL BUILDKITE_PARALLEL_JOB \
		PERFKITE_JOB_START
	export TMPDIR=$BATS_TEST_TMPDIR
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
		        "dashboard-days": 30, "token-env": "PERF_HF_TOKEN", "timeout": 60,
		        "changes": "gate", "rule": "zscore", "ab-base": "origin/main",
		        "ab-setup": "make -j8", "ab-pairs": "5:30", "ab-band": 2.5, "ab-only": True}
		assert not list(v.iter_errors(good)), list(v.iter_errors(good))
		for bad in ({"confgs": "a"}, {"upload-policy": "sometimes"}, {"dashboard-days": 0},
		            {"token-env": "HF TOKEN"}, {"annotate": "yes"}, {"allow-empty": "yes"},
		            {"changes": "sometimes"}, {"rule": "median"}, {"ab-base": ""},
		            {"ab-pairs": "5-30"}, {"ab-pairs": 1}, {"ab-band": -1}, {"ab-only": "yes"},
		            {"bisect": "yes"}, {"decide": "yes"}):
		    assert list(v.iter_errors(bad)), bad
		print(p["name"], len(s["properties"]))
	EOF
	assert_success
	assert_output "perfkite 27"
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
	assert_output 4
}

@test "the pipeline templates' step commands are shellcheck-clean (the nightly site step among them)" {
	command -v shellcheck >/dev/null || skip "shellcheck is not installed"
	run py - "$ROOT_DIR"/pipeline-templates/*.yml <<-'EOF'
		import os, sys, yaml
		for f in sys.argv[1:]:
		    for i, step in enumerate(yaml.safe_load(open(f))["steps"]):
		        if isinstance(step.get("command"), str):
		            name = "%s.%d.sh" % (os.path.basename(f)[:-4], i)
		            with open(name, "w") as out:
		                out.write("#!/bin/bash\n" + step["command"].replace("$$", "$"))
		            print(name)
	EOF
	assert_success
	assert_line scheduled-main.1.sh
	shellcheck "${lines[@]}"
	# The nightly site step publishes with perf-site --publish.
	grep -q -- '--publish "git+$SITE_REMOTE#gh-pages"' scheduled-main.1.sh
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

@test "command hook with bisect: true runs perf-bisect; pre-exit annotates its table" {
	bisect_repo repo 8 5:1.05
	cd repo
	export ${P}BISECT=true ${P}CONFIGS=$ROOT_DIR/fixtures/ab/bench.json ${P}CPU=true \
		${P}REPORTS_DIR=out FAKE_AB_NOISE=0.005
	PERF_BISECT_GOOD=$(git rev-list --max-parents=0 HEAD) PERF_BISECT_BAD=$(git rev-parse HEAD)
	export PERF_BISECT_GOOD PERF_BISECT_BAD
	run --separate-stderr "$ROOT_DIR/hooks/command"
	assert_success
	assert_line --index 0 "--- perf-bisect $PERF_BISECT_GOOD..$PERF_BISECT_BAD"
	assert_equal "$(jq -r '.culprits[0].subject' out/bisect_report.json)" "commit 5"
	BUILDKITE_COMMAND_EXIT_STATUS=0 run "$ROOT_DIR/hooks/pre-exit"
	assert_success
	# the last annotation (the progress came before it, issue 27)
	grep -q '^### Bisect: [0-9a-f]*\.\.[0-9a-f]*, 8 commits, [0-9]* runs on this agent: found$' \
		"$STUB_DIR/annotation.$(grep -c '^annotate' "$STUB_DIR/buildkite-agent.calls").md"
	grep -q '^artifact upload .*out/bisect_report.json' "$STUB_DIR/buildkite-agent.calls"
	# Without the variables, the build's meta-data (as a trigger from a change point sets it).
	printf '%s' "$PERF_BISECT_GOOD" >"$STUB_DIR/meta-data.perf-bisect-good"
	printf '%s' "$PERF_BISECT_BAD" >"$STUB_DIR/meta-data.perf-bisect-bad"
	unset PERF_BISECT_GOOD PERF_BISECT_BAD
	rm -rf out
	run --separate-stderr "$ROOT_DIR/hooks/command"
	assert_success
	assert_equal "$(jq -r '.culprits[0].subject' out/bisect_report.json)" "commit 5"
	grep -q '^meta-data get perf-bisect-bad$' "$STUB_DIR/buildkite-agent.calls"
	rm "$STUB_DIR/meta-data.perf-bisect-bad"
	run --separate-stderr "$ROOT_DIR/hooks/command"
	assert_failure 2
	assert_equal "$stderr" "perfkite: plugin option 'bisect' needs PERF_BISECT_GOOD and PERF_BISECT_BAD"
	export PERF_BISECT_BAD=HEAD ${P}CONFIGS=$ROOT_DIR/fixtures/ab
	run --separate-stderr "$ROOT_DIR/hooks/command"
	assert_failure 2
	assert_equal "$stderr" \
		"perfkite: plugin option 'bisect' needs configs to be config files, not '$ROOT_DIR/fixtures/ab'"
}

@test "bisect: true triggered with a change point (PERF_BISECT_CHANGE or meta-data) bisects its metric and keeps its cohort" {
	bisect_repo repo 8 5:1.05
	cd repo
	export ${P}BISECT=true ${P}CONFIGS=$ROOT_DIR/fixtures/ab/bench.json ${P}CPU=true \
		${P}REPORTS_DIR=out FAKE_AB_NOISE=0.005
	local good bad change
	good=$(git rev-list --max-parents=0 HEAD) bad=$(git rev-parse HEAD)
	change='{"model_id":"ab-bench","gpu_type":"CPU","metric":"latency","direction":"worse","commit_sha":"'$bad'","previous":{"commit_sha":"'$good'"}}'
	unset PERF_BISECT_GOOD PERF_BISECT_BAD
	# The report kept in a git store, through the cache_dir's clone.
	git init -q --bare -b main "$BATS_TEST_TMPDIR/remote.git"
	export ${P}STORE=git+file://$BATS_TEST_TMPDIR/remote.git ${P}CACHE_DIR=$BATS_TEST_TMPDIR/cache
	PERF_BISECT_CHANGE=$change run --separate-stderr "$ROOT_DIR/hooks/command"
	assert_success
	assert_line --index 0 "--- perf-bisect $good..$bad"
	assert_equal "$(jq -r '[.culprits[0].subject, .metric, .change.model_id] | join(" ")' out/bisect_report.json)" \
		"commit 5 latency ab-bench"
	git -C "$BATS_TEST_TMPDIR/remote.git" ls-tree -r --name-only main | grep -q '^\.perfkite/bisect/.*\.json$'
	[ -n "$(ls "$BATS_TEST_TMPDIR/cache")" ]
	unset ${P}STORE ${P}CACHE_DIR
	# The build's meta-data perf-bisect-change, as a trigger may set it instead.
	rm -rf out
	printf '%s' "$change" >"$STUB_DIR/meta-data.perf-bisect-change"
	run --separate-stderr "$ROOT_DIR/hooks/command"
	assert_success
	assert_equal "$(jq -r '.change.commit_sha' out/bisect_report.json)" "$bad"
	grep -q '^meta-data get perf-bisect-change$' "$STUB_DIR/buildkite-agent.calls"
	# Its metric, unless PERF_BISECT_METRIC says otherwise.
	rm -rf out
	PERF_BISECT_METRIC=throughput run --separate-stderr "$ROOT_DIR/hooks/command"
	assert_success
	assert_equal "$(jq -r '[.culprits[0].subject, .metric] | join(" ")' out/bisect_report.json)" \
		"commit 5 throughput"
	# A line that is not a change point: exit 2, said once.
	rm "$STUB_DIR/meta-data.perf-bisect-change"
	PERF_BISECT_CHANGE='{"commit_sha": 5}' run --separate-stderr "$ROOT_DIR/hooks/command"
	assert_failure 2
	assert_equal "$stderr" "perfkite: plugin option 'bisect': the change point it was triggered with is not a perf-changes line"
}

@test "bisect: true: the job's annotation shows the progress, replaced by the final table" {
	bisect_repo repo 8 5:1.05
	cd repo
	export ${P}BISECT=true ${P}CONFIGS=$ROOT_DIR/fixtures/ab/bench.json ${P}CPU=true \
		${P}REPORTS_DIR=out FAKE_AB_NOISE=0.005 BUILDKITE_STEP_KEY=bisect
	PERF_BISECT_GOOD=$(git rev-list --max-parents=0 HEAD) PERF_BISECT_BAD=$(git rev-parse HEAD)
	export PERF_BISECT_GOOD PERF_BISECT_BAD
	run --separate-stderr "$ROOT_DIR/hooks/command"
	assert_success
	# the progress lines still reach the job's log
	grep -q '^{"event": *"probe"' <<<"$stderr"
	local n
	n=$(grep -c '^annotate' "$STUB_DIR/buildkite-agent.calls")
	[ "$n" -ge 2 ]
	# every progress annotation in the job's context, as info
	[ "$(grep -c '^annotate --context perf-summary-bisect --style info$' "$STUB_DIR/buildkite-agent.calls")" -eq "$n" ]
	grep -qx "### Bisect in progress: ${PERF_BISECT_GOOD:0:12}..${PERF_BISECT_BAD:0:12}" "$STUB_DIR/annotation.1.md"
	grep -qx 'Round [0-9]*; the change from good to bad: reproduced\.' "$STUB_DIR/annotation.$n.md"
	grep -qE '^\| `[0-9a-f]{12}` \| (good|bad)( \(weak\))? \| [0-9]+ \|$' "$STUB_DIR/annotation.$n.md"
	# then pre-exit's final table, in the same context: it replaces the progress
	BUILDKITE_COMMAND_EXIT_STATUS=0 run "$ROOT_DIR/hooks/pre-exit"
	assert_success
	[ "$(grep -c '^annotate' "$STUB_DIR/buildkite-agent.calls")" -eq $((n + 1)) ]
	[ "$(grep '^annotate' "$STUB_DIR/buildkite-agent.calls" | tail -n 1)" = \
		"annotate --context perf-summary-bisect --style success" ]
	grep -q '^### Bisect: [0-9a-f]*\.\.[0-9a-f]*, 8 commits, [0-9]* runs on this agent: found$' \
		"$STUB_DIR/annotation.$((n + 1)).md"
	# annotate: false: no progress annotation either
	rm "$STUB_DIR/buildkite-agent.calls"
	export ${P}ANNOTATE=false
	run --separate-stderr "$ROOT_DIR/hooks/command"
	assert_success
	not grep -q '^annotate' "$STUB_DIR/buildkite-agent.calls"
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
	# The checkout's compiled library, when it has a plain build, so that
	# the hook's make has the programs to link, not the whole library to
	# compile (build.bats compiles from scratch): the flags file as this
	# make writes it, then the objects, newer than it and the sources.
	if [ -f "$ROOT_DIR/build/default/libperf.a" ]; then
		env -u SANITIZE -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make -s -C plugin build/default/cflags
		cp -r "$ROOT_DIR/build/default/lib" "$ROOT_DIR/build/default/libperf.a" plugin/build/default/
	fi
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
		artifact upload perf-reports/annotation.md;perf-reports/dashboard_abc1234_20260616_000000.html;perf-reports/results/normalized_perf_m.json
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
		artifact upload perf-reports/perf_b_20260616T000000Z.json
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
		artifact upload perf-reports/annotation.md
		artifact upload perf-reports/results/normalized_perf_m.json
	EOF
	rm -rf perf-reports "$STUB_DIR/buildkite-agent.calls"
	run "$ROOT_DIR/hooks/pre-exit"
	assert_success
	[ -z "$(stub_calls buildkite-agent)" ]
}

@test "pre-exit: an annotation never passes 1 MiB; the summary is cut at a whole row" {
	reports PASS
	awk 'BEGIN { for (i = 1; i <= 30000; i++) printf "| model-%05d | PASS | %s |\n", i, "padding padding padding" }' \
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

# result COMMIT TS [SED]: the fixture's wan record as results/perf_..._TS.json,
# of commit COMMIT, edited by the sed script SED.
result() {
	mkdir -p results
	sed -e "s/\"commit\": \"a*\"/\"commit\": \"$1\"/" -e "${3:-p;d}" \
		"$ROOT_DIR"/fixtures/records/perf_wan-t2v-1.3b-2gpu_*.json >"results/perf_wan-t2v-1.3b-2gpu_$2.json"
	[ "$(jq -r .commit "results/perf_wan-t2v-1.3b-2gpu_$2.json")" = "$1" ]
}

commit() {
	git -c user.name=t -c user.email=t@t commit -q --allow-empty -m "$1"
}

@test "pre-push hook: the newest results of the commit being pushed gate the push, with a hint to skip" {
	local hook=$ROOT_DIR/pipeline-templates/pre-push
	export PERFORMANCE_TRACKING_ROOT=$ROOT_DIR/fixtures/store
	git init -q --bare -b main remote.git
	git init -q -b main work
	cp "$hook" work/.git/hooks/pre-push
	cd work
	commit one
	git remote add origin ../remote.git
	# nothing measured: the push goes through, and says so
	run git push -q origin main
	assert_success
	assert_output "perf: no results of commit $(git rev-parse --short=7 HEAD) in results/ (by their \"commit\" field); nothing to check"
	# a passing result of the commit pushed
	commit two
	result "$(git rev-parse HEAD)" 20260616T000000Z
	run git push -q origin main
	assert_success
	assert_line "perf: commit $(git rev-parse --short=7 HEAD): 1 benchmark(s) checked, all pass"
	# the next commit: its older result passes, its newest breaches a threshold: refused
	commit three
	local three
	three=$(git rev-parse HEAD)
	result "$three" 20260617T000000Z
	result "$three" 20260617T010000Z 's/"avg_generation_time_s": 31.0/"avg_generation_time_s": 99.0/'
	run git push -q origin main
	assert_failure
	assert_line "perf: commit ${three:0:7}: 1 benchmark(s) checked: fixed thresholds 1, rolling baseline 1"
	assert_output --partial "perf: push refused; skip the check with PERF_SKIP_PRE_PUSH=1 git push (or git push --no-verify)"
	[ "$(git -C ../remote.git rev-parse main)" != "$three" ]
	# a later commit: the failing results are another commit's, not checked
	commit four
	result "$(git rev-parse HEAD)" 20260618T000000Z
	run git push -q origin main
	assert_success
	assert_line "perf: commit $(git rev-parse --short=7 HEAD): 1 benchmark(s) checked, all pass"
	PERF_SKIP_PRE_PUSH=1 run git push -q origin main
	assert_success
}

@test "pre-push hook: without perfkite on PATH it says what is missing, not status 127" {
	git init -q --bare -b main remote.git
	git init -q -b main work
	cp "$ROOT_DIR/pipeline-templates/pre-push" work/.git/hooks/pre-push
	cd work
	commit one
	git remote add origin ../remote.git
	mkdir "$BATS_TEST_TMPDIR/nobin"
	for p in git bash env sed sort basename mktemp rm cat jq; do
		ln -s "$(command -v "$p")" "$BATS_TEST_TMPDIR/nobin/$p"
	done
	PATH=$BATS_TEST_TMPDIR/nobin run git push -q origin main
	assert_failure 1
	assert_output "perf: perf-gate-static is not on PATH: this hook runs perfkite's programs; install them (make install) or put perfkite's bin/ on PATH
perf: push refused; skip the check with PERF_SKIP_PRE_PUSH=1 git push (or git push --no-verify)
error: failed to push some refs to '../remote.git'"
}

@test "the README's pipeline fails when a gate fails (run as README.md shows it)" {
	awk '/^## A pipeline$/ { p = 1; next } p && /^```sh$/ { s = 1; next } s && /^```$/ { exit } s' \
		"$ROOT_DIR/README.md" >pipeline.sh
	grep -q 'perf-gate-rolling' pipeline.sh
	mkdir results
	cp -r "$ROOT_DIR/fixtures/store" store
	# within its fixed thresholds (34 s), but 30% slower than the store's baseline
	sed 's/"avg_generation_time_s": 31.0/"avg_generation_time_s": 33.5/' \
		"$ROOT_DIR"/fixtures/records/perf_wan-t2v-1.3b-2gpu_*.json >results/perf_wan-t2v-1.3b-2gpu_20260617T000000Z.json
	STORE=$PWD/store run --separate-stderr bash pipeline.sh
	assert_failure 1
	assert_output --partial "| REGRESSION |"
	# and the same records as they are pass
	cp "$ROOT_DIR"/fixtures/records/perf_wan-t2v-1.3b-2gpu_*.json results/perf_wan-t2v-1.3b-2gpu_20260617T000000Z.json
	STORE=$PWD/store run --separate-stderr bash pipeline.sh
	assert_success
	assert_output --partial "| PASS |"
}

@test "the README's table of options is plugin.yml's" {
	run py "$ROOT_DIR/tests/lib/plugin_options.py" "$ROOT_DIR/plugin.yml"
	assert_success
	local want=$output
	run awk '/^<!-- generated from plugin.yml/ { t = 1; next } /^<!-- end of the generated table -->/ { t = 0 } t' \
		"$ROOT_DIR/README.md"
	assert_equal "$output" "$want"
	assert_equal "${#lines[@]}" 29
}

@test "the plugin version pinned in the README and the pipeline templates is VERSION" {
	local v n=0 ref
	v=$(cat "$ROOT_DIR/VERSION")
	while IFS= read -r ref; do
		assert_equal "$ref" "perfkite#v$v"
		n=$((n + 1))
	done < <(grep -oh 'perfkite#[^:]*' "$ROOT_DIR/README.md" "$ROOT_DIR"/pipeline-templates/*.yml)
	assert_equal "$n" 4
	grep -q "#v$v\`, the version in \`VERSION\`" "$ROOT_DIR/README.md"
}

@test "plugin.yml's requirements: what the build and the hooks need, every library the Makefile links" {
	run py -c 'import sys, yaml; print("\n".join(yaml.safe_load(open(sys.argv[1]))["requirements"]))' "$ROOT_DIR/plugin.yml"
	assert_success
	local req=$output lib libs
	for tool in bash make cc ar awk sed git; do
		assert_line "$tool"
	done
	# each -l of the Makefile, but the C library's own (m, pthread, dl)
	read -ra libs < <(sed -n 's/^LIBS = //p' "$ROOT_DIR/Makefile")
	[ ${#libs[@]} -gt 0 ]
	for lib in "${libs[@]}"; do
		case $lib in
		-lcjson) grep -qx cjson <<<"$req" ;;
		-lz) grep -qx zlib <<<"$req" ;;
		-lcrypto) grep -qx openssl <<<"$req" ;;
		-lm | -lpthread | -ldl) ;;
		*) echo "a library plugin.yml does not require: $lib" >&2; return 1 ;;
		esac
	done
}

# lane_args: the arguments the command hook gives perf-lane, one per line.
lane_args() {
	run --separate-stderr bash -c '. "$1/hooks/lib/plugin.bash"; plugin_check && plugin_lane_args' _ "$ROOT_DIR"
}

@test "boolean options take true or false as YAML writes them; anything else is refused by the option's name" {
	export ${P}CPU=True ${P}ALLOW_EMPTY=true ${P}ANNOTATE=FALSE ${P}CONFIGS=c
	lane_args
	assert_success
	assert_equal "$output" "$(printf '%s\n' --reports perf-reports --cpu --allow-empty c)"
	export ${P}CPU=false ${P}ALLOW_EMPTY=False
	lane_args
	assert_equal "$output" "$(printf '%s\n' --reports perf-reports c)"
	export ${P}CPU=yes ${P}ANNOTATE=1
	run --separate-stderr "$ROOT_DIR/hooks/command"
	assert_failure 2
	assert_output ""
	assert_equal "$stderr" "perfkite: plugin option 'annotate': expected true or false, not '1'
perfkite: plugin option 'cpu': expected true or false, not 'yes'"
	run --separate-stderr "$ROOT_DIR/hooks/environment"
	assert_failure 2
	assert_equal "${stderr_lines[0]}" "perfkite: plugin option 'annotate': expected true or false, not '1'"
	unset ${P}CPU ${P}ANNOTATE
	export ${P}UPLOAD_POLICY=' PASS ' ${P}RUN_SOURCE=nightly ${P}DASHBOARD_DAYS=0 ${P}TIMEOUT=soon
	lane_args
	assert_failure 1
	assert_equal "$stderr" "perfkite: plugin option 'run-source': expected pr, local, scheduled_main, unknown, not 'nightly'
perfkite: plugin option 'dashboard-days': expected a whole number of days, not '0'
perfkite: plugin option 'timeout': expected a number of seconds above 0, not 'soon'"
	export ${P}RUN_SOURCE=PR ${P}DASHBOARD_DAYS=7 ${P}TIMEOUT=0.5
	lane_args
	assert_success
	assert_equal "$output" "$(printf '%s\n' --reports perf-reports --policy pass --run-source pr --days 7 --timeout 0.5 c)"
}

@test "pre-exit: each step annotates under its own context (key, label, parallel job)" {
	reports PASS
	# two jobs of a matrix: one key, the matrix values in their labels
	BUILDKITE_STEP_KEY=perf BUILDKITE_LABEL=":stopwatch: H100" "$ROOT_DIR/hooks/pre-exit" >/dev/null
	BUILDKITE_STEP_KEY=perf BUILDKITE_LABEL=":stopwatch: L40S" "$ROOT_DIR/hooks/pre-exit" >/dev/null
	BUILDKITE_LABEL=":stopwatch: Performance (L40S, 2 GPUs)" "$ROOT_DIR/hooks/pre-exit" >/dev/null
	BUILDKITE_STEP_KEY=perf BUILDKITE_PARALLEL_JOB=3 "$ROOT_DIR/hooks/pre-exit" >/dev/null
	run grep '^annotate' "$STUB_DIR/buildkite-agent.calls"
	assert_output "annotate --context perf-summary-perf-stopwatch-H100 --style warning
annotate --context perf-summary-perf-stopwatch-L40S --style warning
annotate --context perf-summary-stopwatch-Performance-L40S-2-GPUs --style warning
annotate --context perf-summary-perf-3 --style warning"
}

@test "pre-exit: reports older than the job are neither uploaded nor linked" {
	# a previous job's reports, then this job's start (the environment hook's mark)
	reports PASS
	touch -d '-1 hour' perf-reports/annotation.md perf-reports/dashboard_*.html perf-reports/results/*
	run bash -c '. "$1/hooks/lib/plugin.bash"; plugin_start_job; printf "%s\n" "$PERFKITE_JOB_START"' _ "$ROOT_DIR"
	export PERFKITE_JOB_START=$output
	[ -f "$PERFKITE_JOB_START" ]
	# this job failed before the lane wrote anything: nothing to upload, no annotation
	BUILDKITE_COMMAND_EXIT_STATUS=2 run --separate-stderr "$ROOT_DIR/hooks/pre-exit"
	assert_success
	assert_output "perfkite: no reports of this job in perf-reports"
	[ -z "$(stub_calls buildkite-agent)" ]
	[ ! -e "$PERFKITE_JOB_START" ]
	# this job wrote a raw record only: that is uploaded; the old summary and dashboard are not
	touch "$PERFKITE_JOB_START"
	sleep 0.01
	echo '{}' >perf-reports/perf_b_20260616T000000Z.json
	BUILDKITE_COMMAND_EXIT_STATUS=2 run --separate-stderr "$ROOT_DIR/hooks/pre-exit"
	assert_success
	diff <(stub_calls buildkite-agent) - <<-'EOF'
		artifact upload perf-reports/perf_b_20260616T000000Z.json
		annotate --context perf-summary --style warning
	EOF
	not grep -q 'Dashboard\|PASS' "$STUB_DIR/annotation.1.md"
	grep -q 'The lane ended with status 2 before the rolling comparison ran' "$STUB_DIR/annotation.1.md"
}

@test "a lane that measured nothing: status 2, and an annotation in warning style saying what was skipped and why" {
	export ${P}CONFIGS_0=$LANE/configs ${P}CONFIGS_1=$LANE/more ${P}STORE=store
	unset PERF_ALLOW_CPU
	run bash -c '. "$1/hooks/lib/plugin.bash"; plugin_start_job; printf "%s\n" "$PERFKITE_JOB_START"' _ "$ROOT_DIR"
	export PERFKITE_JOB_START=$output
	run --separate-stderr "$ROOT_DIR/hooks/command"
	assert_failure 2
	assert_equal "${stderr_lines[-2]}" "perf-lane: nothing was measured: 2 skipped (Need 1 GPUs, only 0 available)"
	BUILDKITE_COMMAND_EXIT_STATUS=2 "$ROOT_DIR/hooks/pre-exit" >/dev/null
	run grep '^annotate' "$STUB_DIR/buildkite-agent.calls"
	assert_output "annotate --context perf-summary --style warning"
	head -n -2 "$STUB_DIR/annotation.1.md" | diff - perf-reports/skipped.md
	grep -q '^| lane-legacy | Need 1 GPUs, only 0 available |$' "$STUB_DIR/annotation.1.md"
	grep -q '^\[Dashboard\](artifact://perf-reports/dashboard_' "$STUB_DIR/annotation.1.md"
	# allowed, the step is green, and the annotation still warns
	export ${P}ALLOW_EMPTY=true
	touch "$PERFKITE_JOB_START"
	run --separate-stderr "$ROOT_DIR/hooks/command"
	assert_success
	BUILDKITE_COMMAND_EXIT_STATUS=0 "$ROOT_DIR/hooks/pre-exit" >/dev/null
	run grep '^annotate' "$STUB_DIR/buildkite-agent.calls"
	assert_line --index 1 "annotate --context perf-summary --style warning"
	grep -q '^## Performance lane: nothing was measured$' "$STUB_DIR/annotation.2.md"
}

@test "a job that measured nothing uploads nothing an earlier job left in the results directory" {
	# an earlier job's raw records and worker logs, still in the results directory
	mkdir -p results/worker_logs
	local i
	for i in 1 2 3; do
		echo '{"benchmark_id": "lane-bench"}' >"results/perf_lane-bench_2020010${i}T000000Z.json"
		echo "old log $i" >"results/worker_logs/worker_lane-bench_2020010${i}T000000Z.log"
	done
	touch -d '-1 day' results/*.json results/worker_logs/*
	export ${P}CONFIGS_0=$LANE/configs ${P}STORE=store ${P}ALLOW_EMPTY=true
	unset PERF_ALLOW_CPU
	run bash -c '. "$1/hooks/lib/plugin.bash"; plugin_start_job; printf "%s\n" "$PERFKITE_JOB_START"' _ "$ROOT_DIR"
	export PERFKITE_JOB_START=$output
	run --separate-stderr "$ROOT_DIR/hooks/command"
	assert_success
	BUILDKITE_COMMAND_EXIT_STATUS=0 "$ROOT_DIR/hooks/pre-exit" >/dev/null
	# what was uploaded: this job's note, dashboard and telemetry, no record, no worker log
	run grep '^artifact upload' "$STUB_DIR/buildkite-agent.calls"
	assert_success
	not grep -q 'perf_lane-bench_\|worker_' <<<"$output"
	grep -q 'perf-reports/skipped.md' <<<"$output"
	[ -z "$(find perf-reports -name 'perf_*.json' -o -name 'worker_*')" ]
}

@test "pre-exit: a summary with some benchmarks skipped lists them after the table" {
	reports PASS
	printf '### Skipped benchmarks\n\n1 benchmark(s) did not run on this agent.\n' >perf-reports/skipped.md
	BUILDKITE_COMMAND_EXIT_STATUS=0 run "$ROOT_DIR/hooks/pre-exit"
	assert_success
	diff "$STUB_DIR/annotation.1.md" - <<-'EOF'
		## Performance Baseline Comparison

		| Model | Status |
		|---|---|
		| m | PASS |

		### Skipped benchmarks

		1 benchmark(s) did not run on this agent.

		[Dashboard](artifact://perf-reports/dashboard_abc1234_20260616_000000.html)
	EOF
	run grep '^annotate' "$STUB_DIR/buildkite-agent.calls"
	assert_output "annotate --context perf-summary --style success"
}

@test "pre-exit: a passing lane that reported worse change points is a warning; better ones are not" {
	reports PASS
	printf '\n## Change points\n\n| Model | GPU | Metric | Change |\n|---|---|---|---|\n| m | g | latency | better -3.0%% |\n' \
		>>perf-reports/annotation.md
	BUILDKITE_COMMAND_EXIT_STATUS=0 "$ROOT_DIR/hooks/pre-exit" >/dev/null
	printf '| m | g | latency | worse +5.5%% |\n' >>perf-reports/annotation.md
	BUILDKITE_COMMAND_EXIT_STATUS=0 "$ROOT_DIR/hooks/pre-exit" >/dev/null
	BUILDKITE_COMMAND_EXIT_STATUS=1 "$ROOT_DIR/hooks/pre-exit" >/dev/null
	run grep '^annotate' "$STUB_DIR/buildkite-agent.calls"
	assert_output "$(printf '%s\n' 'annotate --context perf-summary --style success' \
		'annotate --context perf-summary --style warning' \
		'annotate --context perf-summary --style error')"
}

@test "command hook: the changes option reaches perf-lane; an unquoted off (YAML's false) is off" {
	export ${P}CONFIGS=c ${P}CHANGES=' Gate'
	lane_args
	assert_success
	assert_equal "$output" "$(printf '%s\n' --reports perf-reports --changes gate c)"
	export ${P}CHANGES=false
	lane_args
	assert_equal "$output" "$(printf '%s\n' --reports perf-reports --changes off c)"
	export ${P}CONFIGS=$LANE/configs ${P}STORE=store ${P}CPU=true ${P}CHANGES=sometimes
	run --separate-stderr "$ROOT_DIR/hooks/command"
	assert_failure 2
	assert_equal "$stderr" "perfkite: plugin option 'changes': expected gate, report, off, not 'sometimes'"
}

@test "the rule and A/B options reach perf-lane; rule is passed only when given" {
	export ${P}CONFIGS=c ${P}RULE=' ZScore' ${P}AB_BASE=origin/main ${P}AB_SETUP='make -j8' \
		${P}AB_PAIRS=5:30 ${P}AB_BAND=2.5 ${P}AB_ONLY=True
	lane_args
	assert_success
	assert_equal "$output" "$(printf '%s\n' --reports perf-reports --rule zscore --ab-base origin/main \
		--ab-setup 'make -j8' --ab-pairs 5:30 --ab-band 2.5 --ab-only c)"
	unset ${P}RULE ${P}AB_SETUP ${P}AB_PAIRS ${P}AB_BAND
	export ${P}AB_ONLY=false
	lane_args
	assert_equal "$output" "$(printf '%s\n' --reports perf-reports --ab-base origin/main c)"
	unset ${P}AB_BASE ${P}AB_ONLY
	lane_args
	assert_equal "$output" "$(printf '%s\n' --reports perf-reports c)"
	# decide: the lane's default when true, --no-decide when false
	export ${P}DECIDE=TRUE
	lane_args
	assert_equal "$output" "$(printf '%s\n' --reports perf-reports c)"
	export ${P}DECIDE=false
	lane_args
	assert_equal "$output" "$(printf '%s\n' --reports perf-reports --no-decide c)"
	unset ${P}DECIDE
	# a false ab-only needs no ab-base
	export ${P}AB_ONLY=false
	lane_args
	assert_success
}

@test "rule and A/B option values are refused by the option's name; the A/B's need ab-base" {
	export ${P}CONFIGS=c ${P}RULE=median ${P}AB_PAIRS=1:5 ${P}AB_BAND=5% ${P}AB_ONLY=yes ${P}AB_SETUP=make
	run --separate-stderr "$ROOT_DIR/hooks/command"
	assert_failure 2
	assert_output ""
	assert_equal "$stderr" "perfkite: plugin option 'ab-only': expected true or false, not 'yes'
perfkite: plugin option 'rule': expected reference, prediction, zscore, not 'median'
perfkite: plugin option 'ab-pairs': expected min:max with 2 <= min <= max <= 1000 (or one number), not '1:5'
perfkite: plugin option 'ab-band': expected a percent of 0 or more, not '5%'
perfkite: plugin option 'ab-setup' needs ab-base
perfkite: plugin option 'ab-pairs' needs ab-base
perfkite: plugin option 'ab-band' needs ab-base
perfkite: plugin option 'ab-only' needs ab-base"
	local v
	for v in 6:5 5:1001 x 5:; do
		export ${P}AB_BASE=origin/main ${P}RULE=prediction ${P}AB_PAIRS=$v ${P}AB_BAND=0 ${P}AB_ONLY=true
		lane_args
		assert_failure 1
		assert_equal "$stderr" "perfkite: plugin option 'ab-pairs': expected min:max with 2 <= min <= max <= 1000 (or one number), not '$v'"
	done
	export ${P}AB_PAIRS=12
	lane_args
	assert_success
}

@test "a pull request with ab-base whose head is slower: the step fails, the annotation has the A/B's table above the rolling one" {
	ab_repo 1.10
	export ${P}CONFIGS=$ROOT_DIR/fixtures/ab/bench.json ${P}STORE=../store ${P}REPORTS_DIR=../reports \
		${P}RESULTS_DIR=../results ${P}CPU=true ${P}AB_BASE=HEAD~1 ${P}AB_SETUP='echo built >built' \
		${P}AB_BAND=2 BUILDKITE_PULL_REQUEST=9
	run bash -c '. "$1/hooks/lib/plugin.bash"; plugin_start_job; printf "%s\n" "$PERFKITE_JOB_START"' _ "$ROOT_DIR"
	export PERFKITE_JOB_START=$output
	run --separate-stderr "$ROOT_DIR/hooks/command"
	assert_failure 1
	assert_equal "${stderr_lines[-1]}" "perf-lane: collect 0, static 0, normalize 0, rolling 0, upload 0, summarize 0, ab 1: exit 1"
	BUILDKITE_COMMAND_EXIT_STATUS=1 "$ROOT_DIR/hooks/pre-exit" >/dev/null
	run grep '^annotate' "$STUB_DIR/buildkite-agent.calls"
	assert_output "annotate --context perf-summary --style error"
	local body=$STUB_DIR/annotation.1.md ab rolling
	sed -n 1p "$body" | grep -q '^### A/B: head against base, [0-9]* pairs interleaved on this agent$'
	grep -q '^| ab-bench | Latency | .* | slower :x: |' "$body"
	ab=$(grep -n '^### A/B: head against base' "$body" | cut -d: -f1)
	rolling=$(grep -n '^## Performance Baseline Comparison$' "$body" | cut -d: -f1)
	[ "$rolling" -gt "$ab" ]
	grep -q '^\[Dashboard\](artifact://../reports/dashboard_' "$body"
	grep -q '^artifact upload .*\.\./reports/ab_report.json' "$STUB_DIR/buildkite-agent.calls"
	assert_equal "$(git worktree list | wc -l)" 1
	# the same step on a head that is no slower passes, both tables shown
	echo 1 >ab-factor
	git commit -qam "no slower"
	export ${P}AB_BASE=HEAD~2 ${P}AB_BAND=5
	touch "$PERFKITE_JOB_START"
	run --separate-stderr "$ROOT_DIR/hooks/command"
	assert_success
	assert_equal "${stderr_lines[-1]}" "perf-lane: collect 0, static 0, normalize 0, rolling 0, upload 0, summarize 0, ab 0: exit 0"
	BUILDKITE_COMMAND_EXIT_STATUS=0 "$ROOT_DIR/hooks/pre-exit" >/dev/null
	sed -n 1p "$STUB_DIR/annotation.2.md" | grep -q '^### A/B: head against base'
	grep -q '^## Performance Baseline Comparison$' "$STUB_DIR/annotation.2.md"
}

@test "pre-exit: a passing lane whose rolling comparison regressed (ab-only let it pass) is a warning" {
	reports REGRESSION
	BUILDKITE_COMMAND_EXIT_STATUS=0 "$ROOT_DIR/hooks/pre-exit" >/dev/null
	BUILDKITE_COMMAND_EXIT_STATUS=1 "$ROOT_DIR/hooks/pre-exit" >/dev/null
	run grep '^annotate' "$STUB_DIR/buildkite-agent.calls"
	assert_output "$(printf '%s\n' 'annotate --context perf-summary --style warning' \
		'annotate --context perf-summary --style error')"
}

@test "the site option reaches perf-lane as --site-publish" {
	export ${P}CONFIGS=c ${P}SITE='git+https://github.com/o/site.git#gh-pages'
	lane_args
	assert_success
	assert_equal "$output" "$(printf '%s\n' --reports perf-reports --site-publish \
		'git+https://github.com/o/site.git#gh-pages' c)"
}

@test "the site-url option reaches perf-lane as --site-url" {
	export ${P}CONFIGS=c ${P}SITE_URL='https://o.github.io/perf'
	lane_args
	assert_success
	assert_equal "$output" "$(printf '%s\n' --reports perf-reports --site-url \
		'https://o.github.io/perf' c)"
}
