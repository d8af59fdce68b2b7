#!/usr/bin/env bats
# perf-lane: the performance lane (perf-lane(1)): the run's
# classification, which steps run, the exit status, the reports (raw
# records, worker logs as Markdown, telemetry), and a whole lane end to end
# over the fake runner: calibration, a seed, a pass, a regression.

# shellcheck disable=SC2154,SC2030,SC2031,SC2016,SC2209,SC2086 # bats sets status, output, lines, stderr; each test is a subshell; single quotes hold code for another shell; ${P}NAME builds variable names
load lib/common
load lib/stub
load lib/ab_repo
load lib/store

LANE=$FIXTURES/perf-lane

setup() {
	export XDG_CACHE_HOME=$BATS_TEST_TMPDIR/xdg
	unset BUILDKITE_SOURCE PERF_RESULTS_DIR DASHBOARD_DAYS FAKE_SLOWDOWN FAKE_EXIT HF_TOKEN
	export PERF_ALLOW_CPU=1 PERF_CUDA_LIBRARY=/nonexistent PERF_NVML_LIBRARY=/nonexistent
	stub_start
	cd "$BATS_TEST_TMPDIR" || return 1
	mkdir empty
}

teardown() {
	git_http_stop
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

@test "every option is checked before anything runs: an empty value is refused, never the next argument taken" {
	local o
	for o in -c --configs -o --results -r --reports -s --store --cache -p --policy --run-source --days \
		--telemetry-interval -t --timeout --runner --annotate-max --changes --rule --ab-base --ab-setup \
		--ab-pairs --ab-band; do
		lane "$o" '' --bogus "$LANE/configs"
		assert_failure 2
		assert_output ""
		assert_equal "${stderr_lines[0]}" "perf-lane: $o needs a value, not an empty one"
		[[ $o == --* ]] || continue
		lane "$o=" --bogus "$LANE/configs"
		assert_failure 2
		assert_output ""
		assert_equal "${stderr_lines[0]}" "perf-lane: $o needs a value, not an empty one"
	done
	for o in --cpu --allow-empty --changes-gate --ab-only; do
		lane "$o=1" "$LANE/configs"
		assert_failure 2
		assert_equal "${stderr_lines[0]}" "perf-lane: $o takes no value"
	done
	[ ! -e reports ] && [ ! -e results ]
}

@test "--days 0 and DASHBOARD_DAYS=0 are errors, not a lane without a dashboard; --days wins over the variable" {
	local -a bad=("--days 0" "--days=0" "--days 7.5" "--telemetry-interval 0" "--timeout 0.0" "--annotate-max 100")
	local -a why=("--days: expected a whole number of days from 1 to 36500, not '0'"
		"--days: expected a whole number of days from 1 to 36500, not '0'"
		"--days: expected a whole number of days from 1 to 36500, not '7.5'"
		"--telemetry-interval: expected a number of seconds above 0, not '0'"
		"--timeout: expected a number of seconds above 0, not '0.0'"
		"--annotate-max: expected a whole number of bytes from 1024 to 1099511627776, not '100'")
	local k
	for k in "${!bad[@]}"; do
		lane ${bad[k]} "$LANE/configs"
		assert_failure 2
		assert_output ""
		assert_equal "${stderr_lines[0]}" "perf-lane: ${why[k]}"
	done
	DASHBOARD_DAYS=0 lane "$LANE/configs"
	assert_failure 2
	assert_equal "${stderr_lines[0]}" "perf-lane: DASHBOARD_DAYS: expected a whole number of days from 1 to 36500, not '0'"
	DASHBOARD_DAYS='' lane "$LANE/configs"
	assert_failure 2
	assert_equal "${stderr_lines[0]}" "perf-lane: DASHBOARD_DAYS: expected a whole number of days from 1 to 36500, not ''"
	[ ! -e reports ]
	# the option wins, and the dashboard is made (perf-summarize is given the lane's days)
	DASHBOARD_DAYS=0 lane --days 7 "$LANE/configs"
	assert_success
	[ -n "$(find reports -maxdepth 1 -name 'dashboard_*.html')" ]
	not grep -q 'dashboard failed' <<<"$stderr"
	# a telemetry interval under a second: nvidia-smi samples every second
	lane --telemetry-interval 0.5 empty
	assert_equal "$(stub_calls nvidia-smi | tail -n 1)" \
		"--query-gpu=index,timestamp,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv -l 1"
}

# The store's records, as "model_id status" lines.
stored() {
	find store -name '*.json' -print0 2>/dev/null | xargs -0 -r jq -r '"\(.model_id) \(.comparison_status)"' | sort
}

@test "a PR whose benchmarks fail: no comparison, no summary, no normalized JSON" {
	BUILDKITE_PULL_REQUEST=7 FAKE_SLOWDOWN=20 lane "$LANE/configs"
	assert_failure 1
	grep -q 'Worker log tail for lane-bench' <<<"$stderr"
	assert_line "--- the rolling comparison does not run: the collection failed (status 1) and the policy is pass"
	[ ! -e reports/annotation.md ]
	[ -z "$(find reports -name 'perf_*.md' -o -name 'normalized_perf_*')" ]
	[ -z "$(find store -name '*.json' 2>/dev/null)" ]	# nothing stored
	# The store did not exist: the lane made it, and said so (issue 22 item 4).
	[ -d store ]
	assert_equal "$(grep -c '^perf-lane: store: a new store (it did not exist)$' <<<"$stderr")" 1
	# the raw record and the worker log are still reported
	[ -n "$(find reports -maxdepth 1 -name 'perf_lane-bench_*.json')" ]
	[ -n "$(find reports -maxdepth 1 -name 'worker_lane-bench_*.md')" ]
	[ -n "$(find reports -maxdepth 1 -name 'dashboard_*.html')" ]
}

@test "a PR that passes is compared, and stores its passing record" {
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

@test "scheduled main compares even after a failure, and stores every record" {
	BUILDKITE_BRANCH=main BUILDKITE_SOURCE=schedule FAKE_SLOWDOWN=20 lane "$LANE/configs" "$LANE/more"
	assert_failure 1
	grep -q 'Performance pytest failure attributed to per-record static thresholds: PERF_PYTEST_RC=1' <<<"$stderr"
	assert_line --partial "| REGRESSION | lane-bench avg_generation_time_s exceeded fixed threshold (current=1.000, threshold=0.500) |"
	assert_equal "$(stored)" "$(printf 'lane-bench REGRESSION\nlane-legacy REGRESSION')"
	jq -e '.success == false and .run_source == "scheduled_main"' store/lane-bench/*.json >/dev/null
}

@test "scheduled main that passes stores every record; direct stores the passing; others none" {
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
	[ -z "$(find store -name '*.json' 2>/dev/null)" ]	# nothing stored
	grep -q 'Tracking upload skipped for lane-bench (unknown, success=True)' <<<"$stderr"
}

@test "the lane's status: the collection's when it failed, else the comparison's" {
	# the runner fails: perf-collect 1 wins over the comparison
	BUILDKITE_BRANCH=main TEST_SCOPE=full FAKE_EXIT=3 lane "$LANE/configs" "$LANE/more"
	assert_failure 1
	assert_equal "${stderr_lines[-1]}" "perf-lane: collect 1, static 0, normalize 0, rolling 0, upload 0, summarize 0, changes 0: exit 1"
	# the collection passes, a store that cannot be read: the comparison's 2
	: >afile
	BUILDKITE_BRANCH=main TEST_SCOPE=full run --separate-stderr perf-lane -r reports -o results -s afile "$LANE/configs"
	assert_failure 2
	assert_equal "${stderr_lines[-1]}" "perf-lane: collect 0, static 0, normalize 0, rolling 2, upload 0, summarize 0, changes 2: exit 2"
	# invalid configs: perf-collect's 2, nothing compared on a PR
	echo '{"no_benchmark_id": 1}' >empty/bad.json
	BUILDKITE_PULL_REQUEST=1 lane empty
	assert_failure 2
	assert_equal "${stderr_lines[-1]}" "perf-lane: collect 2, static 0, normalize -, rolling -, upload -, summarize -: exit 2"
}

# stale_results: what an earlier job left in ./results: a raw record and a
# worker log with its rotated part.
stale_results() {
	mkdir -p results/worker_logs
	echo '{"benchmark_id": "b"}' >results/perf_b_20200101T000000Z.json
	printf 'old line 1\n' >results/worker_logs/worker_b_20200101T000000Z.log.1
	printf 'old line 2\n' >results/worker_logs/worker_b_20200101T000000Z.log
}

@test "worker logs are mirrored as Markdown: fences escaped, no .log in the reports, only this job's" {
	stale_results
	# a runner whose log holds fences, appended before the fake runner's
	# first line (its stdout is relayed by perf-collect and could land
	# after the fake runner's own appends)
	cat >fence-runner.sh <<-'EOF'
		#!/bin/sh
		printf 'new line\n```\nsneaky ```` fence\n' >>"$PERF_WORKER_LOG"
	EOF
	printf 'exec %q "$@"\n' "$ROOT_DIR/fixtures/runners/fake-runner.sh" >>fence-runner.sh
	chmod +x fence-runner.sh
	lane --runner "$PWD/fence-runner.sh" "$LANE/configs"
	assert_success
	local md name
	md=$(find reports -maxdepth 1 -name 'worker_lane-bench_*.md')
	name=$(basename "$md" .md)
	[ -f "results/worker_logs/$name.log" ]
	assert_equal "$(head -n 1 "$md")" "# Worker log $name"
	diff - <(sed -n 2,6p "$md") <<-'EOF'

		```
		new line
		\`\`\`
		sneaky \`\`\`\` fence
	EOF
	assert_equal "$(grep -c '^```$' "$md")" 2
	[ -z "$(find reports -name '*.log*')" ]
	# this job's record is copied; the earlier job's record and log are not
	[ -n "$(find reports -maxdepth 1 -name 'perf_lane-bench_*.json')" ]
	[ -z "$(find reports -name '*_b_20200101T000000Z*')" ]
}

@test "a job that measured nothing mirrors nothing an earlier job left in the results directory" {
	stale_results
	unset PERF_ALLOW_CPU
	lane "$LANE/configs"
	assert_failure 2
	[ -s reports/skipped.md ]
	[ -z "$(find reports -name 'perf_*.json' -o -name 'worker_*')" ]
	# and a job whose runner failed mirrors its own log only
	FAKE_EXIT=3 lane --cpu "$LANE/configs"
	assert_failure 1
	run find reports -name 'worker_*.md'
	assert_output --regexp '^reports/worker_lane-bench_[0-9]{8}T[0-9]{6}Z\.md$'
	[ -z "$(find reports -name 'perf_*.json')" ]
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
	# a sampler slower to start than this lane takes: its first sample is
	# waited for, and shown
	mv "$STUB_DIR/nvidia-smi" "$STUB_DIR/nvidia-smi.now"
	printf '#!/usr/bin/env bash\nsleep 0.5\nexec "%s" "$@"\n' "$STUB_DIR/nvidia-smi.now" >"$STUB_DIR/nvidia-smi"
	chmod +x "$STUB_DIR/nvidia-smi"
	rm -rf reports
	lane --telemetry-interval 5 empty
	assert_line "0, 2026/06/16 00:00:00.000, 1980 MHz, 1980 MHz, 210.50 W, 350.00 W, 54"
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
	assert_equal "${stderr_lines[-1]}" "perf-lane: collect 0, static 0, normalize 0, rolling 1, upload 0, summarize 0, changes 0: exit 1"
}

# seed_block: the shell block of the annotation's "Seeding a baseline" note.
seed_block() {
	sed -n '/^### Seeding a baseline$/,$p' reports/annotation.md | sed -n '/^```sh$/,/^```$/p' | sed '1d;$d'
}

@test "calibration needed: the annotation gives the perf-seed commands for this run's artifact, which seed it as written" {
	export BUILDKITE_BRANCH=main TEST_SCOPE=full BUILDKITE_BUILD_ID=b1
	lane "$LANE/configs" "$LANE/more"
	assert_success
	local art
	art=$(find reports/results -name 'normalized_perf_lane-bench_*.json')
	[ -n "$art" ]
	grep -qx '### Seeding a baseline' reports/annotation.md
	grep -qx '1 benchmark(s) of this run have no baseline (CALIBRATION_NEEDED) and stay so until a reviewed' \
		reports/annotation.md
	seed_block >seed.sh
	diff - seed.sh <<-EOF
		buildkite-agent artifact download $art . --build b1
		perf-seed prepare --source-result $art --intent-rationale 'first baseline, reviewed' --store store --staging-root perf-seed-staging/1
		perf-seed upload --store store --confirm perf-seed-staging/1/.seed-reservations/*/manifest
	EOF
	run --separate-stderr bash -e seed.sh
	assert_success
	assert_line "Seed commit: 2 (parent 1)"
	assert_equal "$(stub_calls buildkite-agent)" "artifact download $art . --build b1"
	# the next run compares with the seed, and says nothing of seeding
	rm -rf reports
	BUILDKITE_BUILD_ID=b2 lane "$LANE/configs"
	assert_success
	assert_line --regexp '^\| lane-bench \| .* \| 1 \| 0\.050 / 0\.050 \|.*\| PASS \| '
	not grep -q 'Seeding a baseline' reports/annotation.md
}

@test "calibration needed on a run that cannot seed: the annotation says which run can, and gives no command" {
	BUILDKITE_BRANCH=main BUILDKITE_SOURCE=schedule lane "$LANE/configs"
	assert_success
	grep -qx '### Seeding a baseline' reports/annotation.md
	grep -q 'The artifacts of this run cannot seed one: perf-seed takes only those of a scheduled run$' reports/annotation.md
	grep -qx "TEST_SCOPE unset). The annotation of such a run says how to seed from its artifacts." reports/annotation.md
	[ -z "$(seed_block)" ]
	not grep -q 'perf-seed prepare' reports/annotation.md
	rm -rf reports
	BUILDKITE_PULL_REQUEST=7 BUILDKITE_BRANCH=feature TEST_SCOPE=full lane "$LANE/configs"
	assert_success
	grep -qx "on main with \`TEST_SCOPE=full\` and no pull request (this run: run source 'pr', branch 'feature'," \
		reports/annotation.md
	grep -qx "TEST_SCOPE 'full', pull request 7). The annotation of such a run says how to seed from its artifacts." \
		reports/annotation.md
}

@test "a failing scheduled run's annotation ends with the accept command, which makes the next run pass" {
	export BUILDKITE_BRANCH=main TEST_SCOPE=full BUILDKITE_BUILD_ID=b1
	lane "$LANE/configs"
	assert_success
	# calibration: how to seed is said once, in the seeding note, not in a Decide section
	grep -qx '### Seeding a baseline' reports/annotation.md
	not grep -q '## Decide' reports/annotation.md
	seed_block >seed.sh
	run --separate-stderr bash -e seed.sh
	assert_success
	rm -rf reports
	BUILDKITE_BUILD_ID=b2 FAKE_SLOWDOWN=3 lane "$LANE/configs"
	assert_failure 1
	grep -qx '## Decide' reports/annotation.md
	not grep -q 'Seeding a baseline' reports/annotation.md
	# the report file stays the reference's: no Decide section there
	local report cmd
	report=$(find reports -maxdepth 1 -name 'perf_*.md')
	[ -n "$report" ]
	grep -q '| REGRESSION |' "$report"
	not grep -q 'Decide\|perf-seed' "$report"
	# shellcheck disable=SC2016 # the backquotes are Markdown's
	cmd=$(sed -n 's/^| lane-bench | .* | REGRESSION | `\(.*\)` |$/\1/p' reports/annotation.md)
	[[ $cmd == "perf-seed accept --source-result 'reports/results/normalized_perf_lane-bench_"*"' --reason 'why the change is intended'" ]]
	# the command as shown, then its upload: the next run at the new level passes
	eval "$cmd -s store --staging-root staging" >/dev/null
	run --separate-stderr perf-seed upload staging/.decision-reservations/*/manifest -s store --confirm
	assert_success
	rm -rf reports
	BUILDKITE_BUILD_ID=b3 FAKE_SLOWDOWN=3 lane "$LANE/configs"
	assert_success
	assert_line --partial '| PASS |'
	not grep -q '## Decide' reports/annotation.md
	# --no-decide leaves the section out; --decide is the default
	rm -rf reports
	BUILDKITE_BUILD_ID=b4 FAKE_SLOWDOWN=9 lane --no-decide "$LANE/configs"
	assert_failure 1
	not grep -q '## Decide' reports/annotation.md
	rm -rf reports
	BUILDKITE_BUILD_ID=b5 FAKE_SLOWDOWN=9 lane --decide "$LANE/configs"
	assert_failure 1
	grep -qx '## Decide' reports/annotation.md
}

@test "--site-publish to a git remote over http: the store's transport and token, one commit, a refusal reported" {
	lighttpd_or_skip
	history_with_step
	mkdir srv
	bare_remote srv/pages.git
	git_http_start "$PWD/srv" pag3s-t0ken
	for _ in 1 2; do
		rm -rf reports
		HF_TOKEN=pag3s-t0ken BUILDKITE_BRANCH=main TEST_SCOPE=full \
			lane --site-publish "git+$GIT_HTTP_URL/pages.git#gh-pages" "$LANE/configs"
		assert_success
		assert_line "site published to git+$GIT_HTTP_URL/pages.git#gh-pages"
		not grep -q pag3s-t0ken <<<"$output$stderr"
	done
	assert_equal "$(git -C srv/pages.git rev-list --count gh-pages)" 1
	git -C srv/pages.git show gh-pages:index.html | grep -q 'worse change point'
	# A wrong token: reported, never shown; the lane's status is its gates'.
	HF_TOKEN=wr0ng-t0ken BUILDKITE_BRANCH=main TEST_SCOPE=full \
		lane --site-publish "git+$GIT_HTTP_URL/pages.git#gh-pages" "$LANE/configs"
	assert_success
	grep -q "^perf-lane: the site could not be pushed to $GIT_HTTP_URL/pages.git (gh-pages)$" <<<"$stderr"
	not grep -q wr0ng-t0ken <<<"$output$stderr"
	assert_equal "$(git -C srv/pages.git rev-list --count gh-pages)" 1
}

@test "--site-url or PERF_SITE_URL: a failing run's annotation links its cohort's page on the site; without, as before" {
	export BUILDKITE_BRANCH=main TEST_SCOPE=full BUILDKITE_BUILD_ID=b1
	unset PERF_SITE_URL
	lane "$LANE/configs"
	assert_success
	seed_block >seed.sh
	run --separate-stderr bash -e seed.sh
	assert_success
	perf-site -s store -o site --now 2026-06-30T00:00:00Z
	local n
	for n in plain option env; do
		rm -rf reports
		case $n in
		plain) FAKE_SLOWDOWN=3 lane --policy never --no-decide "$LANE/configs" ;;
		option) FAKE_SLOWDOWN=3 lane --policy never --no-decide --site-url https://perf.example/site/ "$LANE/configs" ;;
		env) PERF_SITE_URL=https://perf.example/site FAKE_SLOWDOWN=3 lane --policy never --no-decide "$LANE/configs" ;;
		esac
		assert_failure 1
		cp reports/annotation.md "$n.md"
	done
	not grep -q 'perf.example' plain.md
	cmp option.md env.md
	# The links come last, after what was there.
	local link
	link=$(sed -n 's|^- \[lane-bench (.*)\](https://perf.example/site/c/\(.*\.html\))$|\1|p' option.md)
	[ -n "$link" ]
	[ -s "site/c/$link" ]
	diff <(printf '%s\n\n**History of the failing cohorts:**\n\n%s\n' "$(cat plain.md)" "$(grep '^- \[lane-bench' option.md)") option.md
}

@test "the demo (make demo): calibration, the reviewed seed, then a compared pass, in seconds" {
	PERF_DEMO_DIR=$BATS_TEST_TMPDIR/demo run --separate-stderr bash "$ROOT_DIR/fixtures/demo.sh"
	assert_success
	assert_line --regexp '^    wan-t2v-1\.3b-2gpu \| 0 \| .* \| CALIBRATION_NEEDED \| '
	assert_line --partial "Seed commit: 2 (parent 1)"
	assert_line --regexp '^    wan-t2v-1\.3b-2gpu \| 1 \| 0\.050 / 0\.050 \| PASS \| Comparable baseline found'
	[ -n "$(find "$BATS_TEST_TMPDIR/demo/run2" -name 'dashboard_*.html')" ]
	# Issue 24: an imported suite beside the fixtures, or why not.
	if command -v hyperfine >/dev/null; then
		assert_line --regexp '^   sleep 1ms\[ms=1\] \(sleep, ms=1\): time [0-9.e-]+ s, user_time '
		assert_line --regexp '^   sleep 2ms\[ms=2\]: recipe [0-9a-f]{12}, hw-[0-9a-f]{16}, sw-[0-9a-f]{16}$'
	else
		assert_line --partial "(skipped: hyperfine is not installed"
	fi
}

@test "PERF_UPLOAD_POLICY is trimmed and lower-cased; an invalid one is never, shown as Python's repr" {
	PERF_UPLOAD_POLICY=PASS lane empty
	classified unknown pass
	PERF_UPLOAD_POLICY=' Always ' lane empty
	classified unknown always
	PERF_UPLOAD_POLICY=$'\t NEVER\n\xc2\xa0' BUILDKITE_PULL_REQUEST=3 lane empty
	classified pr never
	not grep -q Invalid <<<"$stderr"
	PERF_UPLOAD_POLICY=' Bogus ' BUILDKITE_PULL_REQUEST=3 lane empty
	classified pr never
	assert_equal "${stderr_lines[0]}" "Invalid PERF_UPLOAD_POLICY='bogus'; using 'never'"
	PERF_UPLOAD_POLICY="It's"$'\x01\xe2\x80\x8b' lane empty
	assert_equal "${stderr_lines[0]}" "Invalid PERF_UPLOAD_POLICY=\"it's\\x01\\u200b\"; using 'never'"
	# the option stays exact; empty means the classification's
	lane --policy PASS empty
	assert_failure 2
	PERF_UPLOAD_POLICY='' BUILDKITE_PULL_REQUEST=3 lane empty
	classified pr pass
	# and the records are stored by the policy it names
	PERF_UPLOAD_POLICY=' PASS ' lane "$LANE/configs"
	assert_success
	assert_equal "$(stored)" "lane-bench CALIBRATION_NEEDED"
}

@test "a lane whose benchmarks were all skipped measured nothing: exit 2, unless --allow-empty" {
	unset PERF_ALLOW_CPU
	BUILDKITE_BRANCH=main TEST_SCOPE=full lane "$LANE/configs" "$LANE/more"
	assert_failure 2
	assert_equal "${stderr_lines[-2]}" "perf-lane: nothing was measured: 2 skipped (Need 1 GPUs, only 0 available)"
	assert_equal "${stderr_lines[-1]}" "perf-lane: collect 0, static 0, normalize -, rolling -, upload -, summarize -, changes -: exit 2"
	assert_line -- "--- the rolling comparison does not run: nothing was measured"
	[ -z "$(find store -name '*.json' 2>/dev/null)" ]	# nothing stored
	[ ! -e reports/annotation.md ]
	diff - reports/skipped.md <<-'EOF'
		## Performance lane: nothing was measured

		Every benchmark was skipped (2); no result was compared or stored.

		| Benchmark | Why it was skipped |
		|---|---|
		| lane-bench | Need 1 GPUs, only 0 available |
		| lane-legacy | Need 1 GPUs, only 0 available |
	EOF
	# allowed: the same lane is green, and says the same
	lane --allow-empty "$LANE/configs" "$LANE/more"
	assert_success
	assert_equal "${stderr_lines[-2]}" "perf-lane: nothing was measured: 2 skipped (Need 1 GPUs, only 0 available)"
	assert_equal "${stderr_lines[-1]}" "perf-lane: collect 0, static 0, normalize -, rolling -, upload -, summarize -: exit 0"
	[ -s reports/skipped.md ]
	# --cpu measures: green, and no note
	lane --cpu "$LANE/configs"
	assert_success
	[ ! -e reports/skipped.md ]
	not grep -q 'nothing was measured' <<<"$stderr"
}

@test "some benchmarks skipped, others measured: green, and the skipped ones are listed with why" {
	lane "$LANE/configs" "$LANE/elsewhere"
	assert_success
	assert_line --partial "| lane-bench |"
	not grep -q 'nothing was measured' <<<"$stderr"
	assert_equal "$(sed -n 1,3p reports/skipped.md)" "$(printf '### Skipped benchmarks\n\n1 benchmark(s) did not run on this agent.')"
	run grep '^| lane-h100 |' reports/skipped.md
	assert_output --regexp "^\| lane-h100 \| lane-h100 is restricted to gpu_types=\['H100'\], current device is '.*' \|$"
}

@test "one Markdown report per run: the dashboard step writes no second one, nor a second step summary" {
	# a perf-summarize that takes over a second, so that a second report would get another name
	mkdir slow
	printf '#!/bin/sh\nsleep 1.1\nexec %q "$@"\n' "$(command -v perf-summarize)" >slow/perf-summarize
	chmod +x slow/perf-summarize
	: >step-summary.md
	PATH=$PWD/slow:$PATH GITHUB_STEP_SUMMARY=$PWD/step-summary.md BUILDKITE_COMMIT=abcdef0123 lane "$LANE/configs"
	assert_success
	run find reports -maxdepth 1 -name 'perf_abcdef0_*.md'
	assert_equal "${#lines[@]}" 1
	assert_equal "$(grep -c '^## Performance Baseline Comparison' step-summary.md)" 1
	[ -n "$(find reports -maxdepth 1 -name 'dashboard_abcdef0_*.html')" ]
}

@test "--version: perfkite's VERSION, whatever perf-* programs PATH finds, and once installed" {
	mkdir other
	printf '#!/bin/sh\necho "perf-collect (perfkite) 9.9.9"\n' >other/perf-collect
	chmod +x other/perf-collect
	PATH=$PWD/other:$PATH run perf-lane --version
	assert_success
	assert_output "perf-lane (perfkite) $(cat "$ROOT_DIR/VERSION")"
	# installed from the programs under test, as built (-o all: make builds
	# nothing, so the checkout's build, in use beside this file, is left
	# alone; build.bats builds and installs from scratch)
	run env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make -s -C "$ROOT_DIR" -o all install \
		OUTBIN="$PERF_BIN" PREFIX=/pk DESTDIR="$PWD/root"
	assert_success
	# the installed copy, with no source tree beside it and only other programs on PATH
	PATH=$PWD/other:/usr/bin:/bin run "$PWD/root/pk/bin/perf-lane" --version
	assert_success
	assert_output "perf-lane (perfkite) $(cat "$ROOT_DIR/VERSION")"
	# a copy outside both knows it does not know
	cp "$ROOT_DIR/bin/perf-lane" other/
	run other/perf-lane --version
	assert_output "perf-lane (perfkite) unknown"
}

# history_with_step: 30 trusted lane-bench records in store/ before the
# lane's own, latency 20% lower before the last five (a worse step up).
history_with_step() {
	BUILDKITE_BRANCH=main TEST_SCOPE=full lane "$LANE/configs"
	assert_success
	py - <<-'PY'
		import glob, json, os, random
		rec = json.load(open(glob.glob("store/lane-bench/*.json")[0]))
		r = random.Random(5)
		for i in range(30):
		    x = dict(rec, comparison_status="PASS", success=True, baseline_eligible=True)
		    x["timestamp"] = "2026-06-%02dT%02d:00:00+00:00" % (1 + i // 24, i % 24)
		    x["commit_sha"] = "%040x" % (0xabc000 + i)
		    x["latency"] = round((0.04 if i < 25 else 0.05) * (1 + r.gauss(0, 0.005)), 5)
		    name = "%s_%s.json" % (x["timestamp"].replace(":", "_").replace("+", "_"), x["commit_sha"])
		    with open(os.path.join("store/lane-bench", name), "w") as f:
		        json.dump(x, f, indent=2)
	PY
	rm -rf reports
}

# count_changes: perf-changes first on PATH is a wrapper that logs each
# call's arguments to ./changes-calls, keeps a copy of its --batch file as
# ./batch.jsonl, and runs the real one.
count_changes() {
	mkdir counting
	{
		printf '#!/bin/bash\n'
		printf 'printf "%%s\\n" "$*" >>%q\n' "$PWD/changes-calls"
		printf 'a=("$@"); while [ $# -gt 1 ]; do [ "$1" != --batch ] || cp "$2" %q; shift; done\n' \
			"$PWD/batch.jsonl"
		printf 'exec %q "${a[@]}"\n' "$(command -v perf-changes)"
	} >counting/perf-changes
	chmod +x counting/perf-changes
	PATH=$PWD/counting:$PATH
}

@test "scheduled main: a worse change point of the batch's cohorts is listed, the lane passes (report)" {
	history_with_step
	count_changes
	BUILDKITE_BRANCH=main TEST_SCOPE=full lane "$LANE/configs"
	assert_success
	assert_line "--- perf-changes"
	sed -n '/^## Change points$/,$p' reports/annotation.md | grep -q '^| lane-bench | .* | latency | worse +'
	grep -q 'perf-lane: worse change points among the last 10 records (see the annotation)' <<<"$stderr"
	# One run of perf-changes gave the lines and the table (--md-file) ...
	assert_equal "$(wc -l <changes-calls)" 1
	grep -q -- ' --batch .* --last 10 --md-file ' changes-calls
	# ... the annotation's table is what a second run with --md printed
	# (its words on stderr said once), and the bisect's change line one of
	# the JSON lines of a run without it.
	local rc=0 at
	perf-changes --store store --batch batch.jsonl --last 10 >two.jsonl 2>/dev/null || rc=$?
	assert_equal "$rc" 1
	rc=0
	perf-changes --store store --batch batch.jsonl --last 10 --md >two.md 2>/dev/null || rc=$?
	assert_equal "$rc" 1
	{ printf '\n'; cat two.md; } >expected.md
	assert_equal "$(grep -c '^## Change points$' reports/annotation.md)" 1
	at=$(grep -n '^## Change points$' reports/annotation.md | cut -d: -f1)
	diff -u expected.md <(tail -n +"$((at - 1))" reports/annotation.md | head -n "$(wc -l <expected.md)")
	# The ready-made trigger of a bisect of it: valid YAML, the commits of the step.
	awk '/^<details><summary>Find the culprit/ { d = 1 } d && /^```$/ { exit } d && y { print }
		d && /^```sh$/ { y = 1 }' reports/annotation.md | sed '1d;$d' >trigger.yml
	run py -c 'import json, sys, yaml; s = yaml.safe_load(open(sys.argv[1]))["steps"][0]
e = s["build"]["env"]
c = json.loads(e["PERF_BISECT_CHANGE"].replace("$$", "$"))
print(s["trigger"], e["PERF_BISECT_GOOD"], e["PERF_BISECT_BAD"], s["build"]["commit"] == e["PERF_BISECT_BAD"],
    c["model_id"], c["metric"], c["commit_sha"] == e["PERF_BISECT_BAD"],
    any(json.loads(l) == c for l in open(sys.argv[2])))' trigger.yml two.jsonl
	assert_success
	assert_output "performance-bisect $(printf '%040x %040x' $((0xabc000 + 24)) $((0xabc000 + 25))) True lane-bench latency True True"
}

@test "--changes-gate (plugin changes: gate) fails the lane on a worse change point; off skips the step" {
	history_with_step
	BUILDKITE_BRANCH=main TEST_SCOPE=full lane --changes-gate "$LANE/configs"
	assert_failure 1
	grep -q '^## Change points$' reports/annotation.md
	rm -rf reports
	BUILDKITE_BRANCH=main TEST_SCOPE=full lane --changes off "$LANE/configs"
	assert_success
	refute_line "--- perf-changes"
	not grep -q '^## Change points$' reports/annotation.md
	lane --changes sometimes empty
	assert_failure 2
	grep -q "perf-lane: --changes: expected gate, report or off, not 'sometimes'" <<<"$stderr"
}

@test "the status line names the change-point step; with gate, the annotation says the build failed because of it" {
	history_with_step
	BUILDKITE_BRANCH=main TEST_SCOPE=full lane --changes gate "$LANE/configs"
	assert_failure 1
	assert_equal "${stderr_lines[-1]}" \
		"perf-lane: collect 0, static 0, normalize 0, rolling 0, upload 0, summarize 0, changes 1: exit 1"
	grep -qx '\*\*The lane failed because of the worse change points above\*\* (`--changes gate`, the plugin option `changes: gate`).' \
		reports/annotation.md
	# reported, not gated: the step's status is shown, the lane passes and says no such thing
	rm -rf reports
	BUILDKITE_BRANCH=main TEST_SCOPE=full lane "$LANE/configs"
	assert_success
	assert_equal "${stderr_lines[-1]}" \
		"perf-lane: collect 0, static 0, normalize 0, rolling 0, upload 0, summarize 0, changes 1: exit 0"
	not grep -q 'The lane failed' reports/annotation.md
	# a store perf-changes cannot read, with gate: said in the annotation too
	rm -rf reports
	mkdir fail
	printf '#!/bin/sh\nexit 2\n' >fail/perf-changes
	chmod +x fail/perf-changes
	PATH=$PWD/fail:$PATH BUILDKITE_BRANCH=main TEST_SCOPE=full lane --changes gate "$LANE/configs"
	assert_failure 2
	assert_equal "${stderr_lines[-1]}" \
		"perf-lane: collect 0, static 0, normalize 0, rolling 0, upload 0, summarize 0, changes 2: exit 2"
	grep -q '^\*\*The lane failed because perf-changes could not look for change points\*\* (status 2, ' reports/annotation.md
	# the step does not run: off, or not a scheduled run; it is not named
	BUILDKITE_BRANCH=main TEST_SCOPE=full lane --changes off "$LANE/configs"
	assert_equal "${stderr_lines[-1]}" \
		"perf-lane: collect 0, static 0, normalize 0, rolling 0, upload 0, summarize 0: exit 0"
}

@test "the dashboard draws the change points the lane found, those the annotation lists" {
	history_with_step
	# (a window that holds the history whatever today is)
	BUILDKITE_BRANCH=main TEST_SCOPE=full lane --days 36500 "$LANE/configs"
	assert_success
	sed -n '/^## Change points$/,$p' reports/annotation.md | grep -q '^| lane-bench | .* | latency | worse +'
	local dashboard
	dashboard=$(find reports -maxdepth 1 -name 'dashboard_*.html')
	grep -q '<title>change point: worse +' "$dashboard"
	grep -q 'stroke-dasharray="3 2"' "$dashboard"
	# without the step, no change line
	rm -rf reports
	BUILDKITE_BRANCH=main TEST_SCOPE=full lane --days 36500 --changes off "$LANE/configs"
	assert_success
	not grep -q '<title>change point:' reports/dashboard_*.html
}

@test "change points are looked for on scheduled main runs only" {
	history_with_step
	BUILDKITE_PULL_REQUEST=7 lane "$LANE/configs"
	refute_line "--- perf-changes"
	not grep -q '^## Change points$' reports/annotation.md
}

# --- the A/B (perf-ab) on pull requests, and the rolling gate's rule --------

AB_CONF=$ROOT_DIR/fixtures/ab/bench.json

# ab_lane ARGS...: perf-lane on a pull request, from the repository, into
# ../reports, ../results and ../store, measuring the A/B fixture on the CPU.
ab_lane() {
	BUILDKITE_PULL_REQUEST=7 run --separate-stderr perf-lane -r ../reports -o ../results -s ../store \
		--cpu "$@"
}

# record PROG: PROG first on PATH, a wrapper writing its arguments (one a
# line) to ../PROG.args before running the real one; a --rule the real one
# does not take yet is dropped (only that the lane passes it is checked).
record() {
	local real
	real=$(command -v "$1")
	mkdir -p "$BATS_TEST_TMPDIR/rec"
	cat >"$BATS_TEST_TMPDIR/rec/$1" <<-EOF
		#!/usr/bin/env bash
		printf '%s\n' "\$@" >>"$BATS_TEST_TMPDIR/$1.args"
		args=()
		while [ \$# -gt 0 ]; do
			if [ "\$1" = --rule ] && ! "$real" --help 2>&1 | grep -q -- --rule; then
				shift 2
				continue
			fi
			args+=("\$1")
			shift
		done
		exec "$real" "\${args[@]}"
	EOF
	chmod +x "$BATS_TEST_TMPDIR/rec/$1"
	PATH=$BATS_TEST_TMPDIR/rec:$PATH
}

@test "--ab-base on a PR: a head commit that makes the runner slower fails the lane, its A/B table above the rolling one" {
	ab_repo 1.10
	ab_lane --ab-base HEAD~1 --ab-setup 'echo built >built' --ab-band 2 "$AB_CONF"
	assert_failure 1
	assert_line -- "--- perf-ab against HEAD~1"
	assert_equal "${stderr_lines[-1]}" "perf-lane: collect 0, static 0, normalize 0, rolling 0, upload 0, summarize 0, ab 1: exit 1"
	# the annotation: the A/B's table, then the rolling comparison's
	assert_equal "$(head -n 1 ../reports/annotation.md)" "### A/B: head against base, $(jq -r .pairs ../reports/ab_report.json) pairs interleaved on this agent"
	grep -q '^| ab-bench | Latency | .* | slower :x: |' ../reports/annotation.md
	local ab rolling
	ab=$(grep -n '^### A/B: head against base' ../reports/annotation.md | cut -d: -f1)
	rolling=$(grep -n '^## Performance Baseline Comparison$' ../reports/annotation.md | cut -d: -f1)
	[ "$ab" -eq 1 ] && [ "$rolling" -gt "$ab" ]
	grep -q '^| ab-bench | .* | PASS |' ../reports/annotation.md
	# the report, among the reports; the base worktree and perf-ab's scratch are gone
	assert_equal "$(jq -r '[.status, .inputs.base_ref, .inputs.setup, .inputs.cpu] | @tsv' ../reports/ab_report.json)" \
		"$(printf 'slower\tHEAD~1\techo built >built\ttrue')"
	assert_equal "$(git worktree list | wc -l)" 1
	[ -z "$(ls ../tmp)" ]
}

@test "--ab-base on a PR: no slowdown, the lane passes with both tables" {
	ab_repo 1
	ab_lane --ab-base HEAD~1 --ab-band 5 "$AB_CONF"
	assert_success
	assert_equal "${stderr_lines[-1]}" "perf-lane: collect 0, static 0, normalize 0, rolling 0, upload 0, summarize 0, ab 0: exit 0"
	assert_equal "$(jq -r '.results[] | select(.metric == "latency") | .verdict' ../reports/ab_report.json)" equivalent
	sed -n 1p ../reports/annotation.md | grep -q '^### A/B: head against base'
	grep -q '^## Performance Baseline Comparison$' ../reports/annotation.md
}

@test "--ab-only: the A/B alone decides the comparison's status" {
	# a store that cannot be written: the rolling comparison's 2 ...
	ab_repo 1
	: >../afile
	BUILDKITE_PULL_REQUEST=7 run --separate-stderr perf-lane -r ../reports -o ../results -s ../afile \
		--cpu --ab-base HEAD~1 --ab-band 5 "$AB_CONF"
	assert_failure 2
	assert_equal "${stderr_lines[-1]}" "perf-lane: collect 0, static 0, normalize 0, rolling 0, upload 2, summarize 0, ab 0: exit 2"
	# ... does not count with --ab-only, where the A/B passes
	BUILDKITE_PULL_REQUEST=7 run --separate-stderr perf-lane -r ../reports -o ../results -s ../afile \
		--cpu --ab-base HEAD~1 --ab-band 5 --ab-only "$AB_CONF"
	assert_success
	assert_equal "${stderr_lines[-1]}" "perf-lane: collect 0, static 0, normalize 0, rolling 0, upload 2, summarize 0, ab 0: exit 0"
	sed -n 1p ../reports/annotation.md | grep -q '^### A/B: head against base'
	# and a slower head still fails it
	echo 1.10 >ab-factor
	git commit -qam slower
	ab_lane --ab-base HEAD~2 --ab-band 2 --ab-only "$AB_CONF"
	assert_failure 1
	assert_equal "${stderr_lines[-1]}" "perf-lane: collect 0, static 0, normalize 0, rolling 0, upload 0, summarize 0, ab 1: exit 1"
}

@test "--ab-base: only on pull requests; a base perf-ab cannot make is status 2, said in the annotation" {
	ab_repo 1.10
	run --separate-stderr perf-lane -r ../reports -o ../results -s ../store --cpu --ab-base HEAD~1 "$AB_CONF"
	assert_success
	assert_line -- "--- the A/B does not run: the run source is unknown, not pr"
	assert_equal "${stderr_lines[-1]}" "perf-lane: collect 0, static 0, normalize 0, rolling 0, upload 0, summarize 0, ab -: exit 0"
	[ ! -e ../reports/ab_report.json ]
	ab_lane --ab-base no-such-ref "$AB_CONF"
	assert_failure 2
	grep -q '^perf-ab: --base-ref no-such-ref: ' <<<"$stderr"
	assert_equal "${stderr_lines[-1]}" "perf-lane: collect 0, static 0, normalize 0, rolling 0, upload 0, summarize 0, ab 2: exit 2"
	diff - <(sed -n 1,4p ../reports/annotation.md) <<-'EOF'
		### A/B: head against base

		perf-ab could not compare head with no-such-ref (status 2); see the job log.

	EOF
	# a PR whose benchmarks fail runs no A/B
	ab_lane --ab-base HEAD~1 --runner false "$AB_CONF"
	assert_failure 1
	assert_line -- "--- the A/B does not run: the collection failed (status 1) or measured nothing"
	refute_line -- "--- perf-ab against HEAD~1"
}

@test "--ab-base: the run options pass through to perf-ab, over the configs measured here" {
	ab_repo 1
	record perf-ab
	ab_lane --ab-base HEAD~1 --ab-setup 'true' --ab-pairs 4:6 --ab-band 5 --timeout 60 \
		--runner "$ROOT_DIR/fixtures/runners/ab-runner.sh" "$AB_CONF" "$LANE/elsewhere"
	assert_success
	diff - "$BATS_TEST_TMPDIR/perf-ab.args" <<-EOF
		--base-ref
		HEAD~1
		--head
		.
		-o
		../reports/ab_report.json
		--md
		--setup
		true
		--pairs
		4:6
		--band
		5
		--cpu
		--timeout
		60
		--runner
		$ROOT_DIR/fixtures/runners/ab-runner.sh
		--
		$AB_CONF
	EOF
}

@test "--rule reaches perf-gate-rolling; without it none is passed" {
	record perf-gate-rolling
	lane --rule zscore "$LANE/configs"
	assert_success
	assert_equal "$(grep -A1 -x -- --rule "$BATS_TEST_TMPDIR/perf-gate-rolling.args")" "$(printf -- '--rule\nzscore')"
	rm "$BATS_TEST_TMPDIR/perf-gate-rolling.args"
	lane "$LANE/configs"
	assert_success
	not grep -qx -- --rule "$BATS_TEST_TMPDIR/perf-gate-rolling.args"
}

@test "the A/B and rule options are checked before anything runs" {
	local -a bad=("--ab-only" "--ab-setup make" "--ab-base x --ab-pairs 1:5" "--ab-base x --ab-pairs 6:5"
		"--ab-base x --ab-pairs 5:x" "--ab-base x --ab-pairs 5:1001" "--ab-base x --ab-band -1"
		"--ab-base x --ab-band 5%" "--rule median")
	local -a why=("--ab-only needs --ab-base" "--ab-setup needs --ab-base"
		"--ab-pairs: expected min:max with 2 <= min <= max <= 1000 (or one number), not '1:5'"
		"--ab-pairs: expected min:max with 2 <= min <= max <= 1000 (or one number), not '6:5'"
		"--ab-pairs: expected min:max with 2 <= min <= max <= 1000 (or one number), not '5:x'"
		"--ab-pairs: expected min:max with 2 <= min <= max <= 1000 (or one number), not '5:1001'"
		"--ab-band: expected a percent of 0 or more, not '-1'"
		"--ab-band: expected a percent of 0 or more, not '5%'"
		"--rule: expected reference, prediction or zscore, not 'median'")
	local k
	for k in "${!bad[@]}"; do
		lane ${bad[k]} "$LANE/configs"
		assert_failure 2
		assert_output ""
		assert_equal "${stderr_lines[0]}" "perf-lane: ${why[k]}"
	done
	[ ! -e reports ]
	lane --ab-base x --ab-pairs 8 --ab-band 2.5 "$LANE/configs"
	assert_success
}

@test "scheduled main with --site-publish: the site goes to a directory, or as one commit to a git branch" {
	history_with_step
	BUILDKITE_BRANCH=main TEST_SCOPE=full lane --site-publish pub "$LANE/configs"
	assert_success
	assert_line "--- perf-site"
	assert_line "site published to pub"
	grep -q 'worse change point' pub/index.html
	ls pub/c/*.html >/dev/null
	git init -q --bare -b gh-pages pages.git
	for _ in 1 2; do
		rm -rf reports
		BUILDKITE_BRANCH=main TEST_SCOPE=full lane --site-publish "git+file://$PWD/pages.git#gh-pages" "$LANE/configs"
		assert_success
	done
	assert_equal "$(git -C pages.git rev-list --count gh-pages)" 1
	git -C pages.git ls-tree -r --name-only gh-pages | grep -qx index.html
	# an unreachable remote is reported; the lane's status is its gates'
	BUILDKITE_BRANCH=main TEST_SCOPE=full lane --site-publish "git+file://$PWD/nowhere.git" "$LANE/configs"
	assert_success
	grep -q 'perf-lane: the site could not be pushed to file://.*/nowhere.git (gh-pages)' <<<"$stderr"
	# not on pull requests
	rm -rf pub2
	BUILDKITE_PULL_REQUEST=7 lane --site-publish pub2 "$LANE/configs"
	refute_line "--- perf-site"
	[ ! -e pub2 ]
}

@test "the steps hand on what they find in lane_result alone: no step's status is a global" {
	# a scheduled run on main: every step but the A/B runs
	BUILDKITE_BRANCH=main BUILDKITE_SOURCE=schedule run --separate-stderr bash -c '. "$1"
		lane_defaults
		reports=reports results=results store=store operands=("$2" "$3")
		lane_main >/dev/null 2>&1
		echo "status $?"
		for v in collect_rc static_rc pytest_rc normalize_rc rolling_rc upload_rc \
			summarize_rc compare_rc changes_rc ab_rc measured nskipped telemetry changes_last; do
			[ -z "${!v+set}" ] || echo "global $v"
		done
		declare -p lane_result | grep -o "\[[a-z]*\]=\"[^\"]*\"" | sort' \
		_ "$ROOT_DIR/bin/perf-lane" "$LANE/configs" "$LANE/more"
	assert_success
	assert_output 'status 0
[ab]="-"
[changes]="0"
[collect]="0"
[compare]="0"
[measured]="1"
[normalize]="0"
[nskipped]="0"
[pytest]="0"
[rolling]="0"
[static]="0"
[summarize]="0"
[upload]="0"'
}
