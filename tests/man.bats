#!/usr/bin/env bats
# The man pages: they lint clean, and every example in EXAMPLES runs.
# shellcheck disable=SC2154 # bats sets stderr

load lib/common

# Prints the literal blocks of the EXAMPLES section of page $1, separated
# by NUL bytes, with mdoc's \e as the backslash it stands for.
examples() {
	awk '
		/^\.Sh / { inex = ($2 == "EXAMPLES") }
		inex && /^\.Bd -literal/ { lit = 1; block = ""; next }
		inex && /^\.Ed/ && lit { lit = 0; printf "%s%c", block, 0; next }
		lit { line = $0; gsub(/\\e/, "\\\\", line); block = block line "\n" }
	' "$1"
}

run_examples() {
	local page=$ROOT_DIR/man/$1 n=0 ex
	while IFS= read -r -d '' ex; do
		# A script shown whole ("#!...") is an example to copy, not a command.
		[[ $ex == '#!'* ]] && continue
		n=$((n + 1))
		run --separate-stderr bash -c "cd '$ROOT_DIR' && $ex"
		# Console lines may go to stderr; the pipeline must succeed and print.
		if [ "$status" -ne 0 ] || [ -z "$output" ]; then
			echo "example $n of $1 failed (status $status):" >&2
			echo "$ex" >&2
			echo "stderr: $stderr" >&2
			return 1
		fi
	done < <(examples "$page")
	[ "$n" -gt 0 ] || { echo "$1 has no examples" >&2; return 1; }
}

@test "every man page lints clean" {
	run mandoc -Tlint -W warning "$ROOT_DIR"/man/*.[17]
	assert_success
	assert_output ""
}

@test "every program has a man page whose synopsis names it" {
	for src in "$ROOT_DIR"/src/perf-*.c; do
		prog=$(basename "$src" .c)
		grep -q "^\.Nm $prog$" "$ROOT_DIR/man/$prog.1"
	done
}

@test "perf-normalize(1) examples run" { run_examples perf-normalize.1; }
@test "perf-gate-static(1) examples run" { run_examples perf-gate-static.1; }
@test "perf-gate-rolling(1) examples run" { run_examples perf-gate-rolling.1; }
@test "perf-summarize(1) examples run" { run_examples perf-summarize.1; }
@test "perf-upload(1) examples run" { run_examples perf-upload.1; }
@test "perf-seed(1) examples run" { run_examples perf-seed.1; }
@test "perf-lane(1) examples run" { run_examples perf-lane.1; }
@test "perf-plan(1) examples run" { run_examples perf-plan.1; }
@test "perf-analyze(1) examples run" { run_examples perf-analyze.1; }
@test "perf-measure(1) examples run" { run_examples perf-measure.1; }
@test "perf-campaign(1) examples run" { run_examples perf-campaign.1; }
@test "perf-frames(1) examples run" { run_examples perf-frames.1; }
@test "perf-changes(1) examples run" { run_examples perf-changes.1; }
@test "perf-collect(1) examples run" {
	export PERF_CUDA_LIBRARY=/nonexistent PERF_NVML_LIBRARY=/nonexistent
	run_examples perf-collect.1
}
