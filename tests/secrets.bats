#!/usr/bin/env bats
# Secrets: a token never appears in any output, log, error message,
# artifact or process argument list. The lane runs against a git store over
# http with basic auth (git http-backend behind lighttpd) while every
# process's command line is sampled; then everything it produced is read.

# shellcheck disable=SC2154 # bats sets status, output, lines, stderr
load lib/common
load lib/store
load lib/stub

TOKEN=hf_Zq8tokenNeverShown41
LANE=$FIXTURES/perf-lane

setup() {
	export XDG_CACHE_HOME=$BATS_TEST_TMPDIR/xdg
	unset BUILDKITE_SOURCE PERF_RESULTS_DIR HF_API_KEY
	export PERF_ALLOW_CPU=1 PERF_CUDA_LIBRARY=/nonexistent PERF_NVML_LIBRARY=/nonexistent
	stub_start
	cd "$BATS_TEST_TMPDIR" || return 1
}

teardown() {
	git_http_stop 2>/dev/null || true
}

# sample_cmdlines FILE: appends every process's argv to FILE until killed.
sample_cmdlines() {
	while :; do
		cat /proc/[0-9]*/cmdline 2>/dev/null | tr '\0' '\n'
	done >>"$1" 2>/dev/null
}

@test "the lane with a token: not in its output, logs, reports, results, cache, store or any argv" {
	lighttpd_or_skip
	mkdir srv
	bare_remote srv/perf.git
	git_http_start "$PWD/srv" "$TOKEN"
	sample_cmdlines "$PWD/argv.samples" &
	sampler=$!
	for run in 1 2; do
		HF_TOKEN=$TOKEN BUILDKITE_BRANCH=main BUILDKITE_SOURCE=schedule \
			perf-lane -r reports -o results -s "git+$GIT_HTTP_URL/perf.git" \
			--cache cache "$LANE/configs" >"lane$run.out" 2>"lane$run.err" || true
	done
	kill "$sampler"
	wait "$sampler" 2>/dev/null || true
	# the lane did its work: records went to the remote over http
	[ "$(remote_files srv/perf.git | wc -l)" -ge 2 ]
	[ "$(wc -l <argv.samples)" -gt 100 ]
	grep -qxE 'git|git-remote-https?' argv.samples	# sampled while git ran
	# nowhere: what it printed, what it wrote, what any process was started with
	run grep -rl "$TOKEN" lane1.out lane1.err lane2.out lane2.err reports results cache \
		argv.samples "$STUB_DIR"
	assert_failure 1
	assert_output ''
	# and not in the remote it pushed to
	git -C srv/perf.git log -p --all >history.txt
	not grep -q "$TOKEN" history.txt
}

@test "a token in the store URL is redacted from every message" {
	mkdir srv
	bare_remote srv/perf.git
	gen_records 1 r >one.jsonl
	run --separate-stderr perf-upload -s "git+http://user:$TOKEN@127.0.0.1:9/perf.git" \
		--cache cache -p always one.jsonl
	assert_failure 2
	not grep -q "$TOKEN" <<<"$stderr"
	grep -q 'user:\*\*\*@' <<<"$stderr"
	run grep -rl "$TOKEN" cache
	assert_failure 1
	assert_output ''
	run --separate-stderr perf-gate-rolling -s "git+http://user:$TOKEN@127.0.0.1:9/perf.git" \
		--cache cache2 one.jsonl
	assert_failure 2
	[ -n "$stderr" ]
	not grep -q "$TOKEN" <<<"$stderr$output"
}
