# shellcheck shell=bash disable=SC2154
# Loaded by every bats file: the programs under test on PATH, a clean
# environment, and the fixture-case runner. (bats's run sets status,
# output, lines and stderr, hence SC2154.)

bats_require_minimum_version 1.5.0
bats_load_library bats-support
bats_load_library bats-assert

TESTS_DIR=$(cd "$(dirname "${BATS_TEST_FILENAME}")" && pwd)
ROOT_DIR=$(cd "$TESTS_DIR/.." && pwd)
FIXTURES="$ROOT_DIR/fixtures/tests"
: "${PERF_BIN:=$ROOT_DIR/bin}"
# perf-lane and the hooks are scripts in bin/ beside the built programs.
PATH="$PERF_BIN:$ROOT_DIR/bin:$PATH"
export PATH

# The variables the programs read: none may leak in from the CI job that
# runs the tests (Buildkite sets several of them).
unset PERF_RUN_SOURCE PERF_PYTEST_RC PERF_UPLOAD_POLICY PERF_REPORTS_DIR \
	PERFORMANCE_TRACKING_ROOT TEST_SCOPE GITHUB_STEP_SUMMARY \
	BUILDKITE_PULL_REQUEST BUILDKITE_BRANCH BUILDKITE_COMMIT \
	BUILDKITE_BUILD_URL BUILDKITE_BUILD_ID BUILDKITE_JOB_ID PERF_STORE_INDEX

# py ARGS...: Debian's python3 (the one with the packages tests/deps.sh
# installs), whatever else is first on PATH.
py() {
	local p=/usr/bin/python3
	[ -x "$p" ] || p=python3
	"$p" "$@"
}

# sanitized: the programs under test are a sanitizer build.
sanitized() {
	ldd "$(command -v perf-normalize)" 2>/dev/null | grep -q libasan
}

# stress PLAIN SANITIZED: how many times a stress loop repeats: PLAIN, or
# SANITIZED in a sanitizer build (several times slower, and there to find
# memory errors, which the first rounds meet as well as the last).
stress() {
	if sanitized; then echo "$2"; else echo "$1"; fi
}

# elapsed CMD...: runs CMD to its end, its output discarded; prints its
# wall time in seconds.
elapsed() {
	local t=$EPOCHREALTIME
	"$@" >/dev/null 2>&1 || true
	awk -v a="$t" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.3f\n", b - a }'
}

# spread I N T: the Ith of N delays spread evenly over T seconds and a
# fifth more (the last ones after the end): where a kill loop's Ith kill
# lands, so that N kills hit every phase of a run that takes T, rather
# than N random ones clustering.
spread() {
	awk -v i="$1" -v n="$2" -v t="$3" 'BEGIN { printf "%.3f\n", 1.2 * t * i / n }'
}

# not CMD...: succeeds when CMD fails. (A bare "! cmd" never fails a bats
# test: set -e ignores negated commands.)
not() {
	if "$@"; then
		return 1
	fi
}

# gone PID: PID has ended (or is a zombie), within 30 seconds: on a loaded
# machine a killed process may take a while to be scheduled and reaped.
gone() {
	local _
	for _ in $(seq 600); do
		[ -e "/proc/$1" ] || return 0
		grep -q '^[0-9]* ([^)]*) Z' "/proc/$1/stat" 2>/dev/null && return 0
		sleep 0.05
	done
	echo "process $1 is still running" >&2
	return 1
}

# run_case PROG DIR/NAME: runs PROG on NAME.in.jsonl with the arguments of
# NAME.args and the variables of NAME.env (one VAR=value per line), and
# compares stdout with NAME.out.jsonl, stderr with NAME.err (empty when
# absent) byte for byte, and the exit status with NAME.status (0). In
# NAME.args and NAME.err, @FIXTURES@ stands for the fixtures directory.
run_case() {
	local prog=$1 base=$FIXTURES/$2 want_status=0 line
	local -a args=() envs=()
	[ -f "$base.status" ] && want_status=$(cat "$base.status")
	if [ -f "$base.args" ]; then
		while IFS= read -r line; do args+=("${line//@FIXTURES@/$FIXTURES}"); done <"$base.args"
	fi
	if [ -f "$base.env" ]; then
		while IFS= read -r line; do envs+=("$line"); done <"$base.env"
	fi
	run --separate-stderr env "${envs[@]}" "$prog" "${args[@]}" "$base.in.jsonl"
	if [ "$status" -ne "$want_status" ]; then
		echo "exit status $status, expected $want_status" >&2
		echo "stderr: $stderr" >&2
		return 1
	fi
	diff -u "$base.out.jsonl" <(printf '%s' "$output"; [ -n "$output" ] && echo) >&2 ||
		return 1
	if [ -f "$base.err" ]; then
		diff -u <(sed "s|@FIXTURES@|$FIXTURES|g" "$base.err") \
			<(printf '%s' "$stderr"; [ -n "$stderr" ] && echo) >&2 || return 1
	else
		[ -z "$stderr" ] || { echo "unexpected stderr: $stderr" >&2; return 1; }
	fi
}


# Behaviour every filter shares (perfkite(7) "Conventions"). Each
# takes the program and, where needed, a file of valid input records.

check_empty_input() {
	run --separate-stderr "$1" </dev/null
	assert_success
	assert_output ""
	[ -z "$stderr" ]
}

check_unknown_option() {
	run --separate-stderr "$1" --bogus
	assert_failure 2
	assert_output ""
	[[ $stderr == *"unrecognized option"* ]]
	[[ $stderr == *"usage: $1"* ]]
}

check_help() {
	run --separate-stderr "$1" -h
	assert_success
	assert_output --partial "usage: $1"
	[ -z "$stderr" ]
}

check_version() {
	run "$1" --version
	assert_success
	assert_output "$1 (perfkite) $(cat "$ROOT_DIR/VERSION")"
}

check_full_disk() {
	run --separate-stderr bash -c "$1 '$2' >/dev/full"
	assert_failure 2
	assert_equal "$stderr" "$1: write error on standard output: No space left on device"
}

check_unreadable_and_directory() {
	run --separate-stderr "$1" "$BATS_TEST_TMPDIR/nope.jsonl" "$2"
	assert_failure 2
	[ "${#lines[@]}" -ge 1 ]
	assert_equal "$stderr" "$1: $BATS_TEST_TMPDIR/nope.jsonl: cannot open: No such file or directory"
	run --separate-stderr "$1" "$BATS_TEST_TMPDIR"
	assert_failure 2
	assert_equal "$stderr" "$1: $BATS_TEST_TMPDIR: is a directory"
}

check_malformed_lines() {
	printf '%s\n{"benchmark_id": nope}\n%s\n[1,2]\n%s junk\n' "$2" "$2" "$2" >"$BATS_TEST_TMPDIR/in.jsonl"
	run --separate-stderr "$1" "$BATS_TEST_TMPDIR/in.jsonl"
	assert_failure 2
	assert_equal "${#lines[@]}" 2
	assert_equal "$stderr" "$1: $BATS_TEST_TMPDIR/in.jsonl:2: invalid JSON at column 18: unexpected 'n'
$1: $BATS_TEST_TMPDIR/in.jsonl:4: not a JSON object (found an array)
$1: $BATS_TEST_TMPDIR/in.jsonl:5: unexpected text after the record"
}

# store_of JSONL DIR: a store directory holding the records of JSONL, each in
# <model_id>/<timestamp>_<commit_sha>.json with the characters a file name
# cannot hold made "_".
store_of() {
	py -c '
import json, os, re, sys
def s(v):
    return re.sub(r"[^A-Za-z0-9._-]+", "_", str(v))
for line in open(sys.argv[1]):
    r = json.loads(line)
    d = os.path.join(sys.argv[2], s(r["model_id"]))
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "%s_%s.json" % (s(r["timestamp"]), s(r["commit_sha"]))), "w") as f:
        f.write(line)
' "$1" "$2"
}
