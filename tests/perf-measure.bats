#!/usr/bin/env bats
# perf-measure: the job-side wrapper: output passed through, exit status
# kept, startup and steady time, values and convergence from recorded
# vibe-qc and ORCA transcripts, the generic mode, the runtime's identity.

# shellcheck disable=SC2154,SC2016 # bats sets status, output, lines, stderr; single quotes hold code for another shell
load lib/common

M=$FIXTURES/perf-measure

setup() {
	cd "$BATS_TEST_TMPDIR" || return 1
}

# measure PROGRAM TRANSCRIPT [STARTUP STEADY STATUS]
measure() {
	local prog=$1 file=$2
	shift 2
	run --separate-stderr perf-measure --program "$prog" --runtime-digest sha-tuned \
		-- "$M/replay.sh" "$M/$file" "$@"
}

report() {
	jq -c "$1" vq-benchmark-run.json
}

@test "vibe-qc, converged: the report, the output passed through unchanged" {
	measure vibe-qc vibeqc-converged.out
	assert_success
	diff "$M/vibeqc-converged.out" <(printf '%s\n' "$output")
	assert_equal "$stderr" "a line on stderr"
	assert_equal "$(report '{schema_name, runtime_digest, converged, scf_iterations, values}')" \
		'{"schema_name":"vq.benchmark-run-report/1","runtime_digest":"sha-tuned","converged":true,"scf_iterations":10,"values":{"total_energy":-76.026765543205,"gap_ev":14.3251}}'
	jq -e '(.cpu_model | type) == "string" and .steady_seconds > 0 and .startup_seconds >= 0' vq-benchmark-run.json
	jq -e 'has("mpi_ranks") | not' vq-benchmark-run.json
}

@test "startup is the time to the first SCF iteration line, steady the rest" {
	measure vibe-qc vibeqc-converged.out 0.4 0.3
	assert_success
	jq -e '.startup_seconds >= 0.4 and .startup_seconds < 1.5 and .steady_seconds >= 0.3 and .steady_seconds < 1.5' vq-benchmark-run.json
	# no iteration line: steady throughout, no startup, not converged
	printf 'hello\nTotal energy: -1.5 Eh\n' >plain.out
	run --separate-stderr perf-measure --runtime-digest d -- "$M/replay.sh" "$PWD/plain.out" 0 0.3
	assert_success
	assert_equal "$(report '[.converged, .startup_seconds, .scf_iterations, .values.total_energy]')" '[false,null,null,-1.5]'
	jq -e '.steady_seconds >= 0.3' vq-benchmark-run.json
}

@test "vibe-qc: unconverged, fatal, optimisation converged or not, a last SCF that failed" {
	measure vibe-qc vibeqc-unconverged.out
	assert_equal "$(report '[.converged, .scf_iterations]')" '[false,4]'
	measure vibe-qc vibeqc-fatal.out
	assert_equal "$(report '[.converged, .scf_iterations]')" '[false,4]'
	measure vibe-qc vibeqc-opt.out
	assert_equal "$(report '[.converged, .scf_iterations, .values.gap_ev]')" '[true,6,14.333]'
	measure vibe-qc vibeqc-opt-failed.out
	assert_equal "$(report .converged)" false
	# earlier cycles converged: that proves nothing about the last one
	measure vibe-qc vibeqc-opt-last-scf-failed.out
	assert_equal "$(report .converged)" false
}

@test "ORCA: converged, unconverged, fatal, optimisation converged or not" {
	measure orca orca-converged.out
	assert_success
	assert_equal "$(report '[.converged, .scf_iterations, .values.total_energy]')" '[true,9,-76.026765543205]'
	measure orca orca-unconverged.out
	assert_equal "$(report '[.converged, .scf_iterations, .values]')" '[false,6,{}]'
	measure orca orca-fatal.out
	assert_equal "$(report .converged)" false
	measure orca orca-opt.out
	assert_equal "$(report '[.converged, .scf_iterations, .values.total_energy]')" '[true,9,-76.026768543205]'
	measure orca orca-opt-failed.out
	assert_equal "$(report .converged)" false
}

@test "the exit status is kept and a non-zero one is not converged" {
	measure orca orca-converged.out 0 0 3
	assert_failure 3
	assert_equal "$(report .converged)" false
	run perf-measure --runtime-digest d -- sh -c 'kill -TERM $$'
	assert_failure 143
}

@test "evidence is tracked over the whole stream, not a tail" {
	{ cat "$M/vibeqc-converged.out"; seq 200000 | sed 's/^/post-processing line /'; } >long.out
	run --separate-stderr perf-measure --runtime-digest d -- "$M/replay.sh" "$PWD/long.out"
	assert_success
	assert_equal "$(report .converged)" true
	{ head -3 "$M/vibeqc-converged.out"; echo "FATAL: lost a rank"; seq 200000 | sed 's/^/noise /'; \
		tail -n +4 "$M/vibeqc-converged.out"; } >fatal.out
	rm vq-benchmark-run.json
	run --separate-stderr perf-measure --runtime-digest d -- "$M/replay.sh" "$PWD/fatal.out"
	assert_success
	assert_equal "$(report .converged)" false
	# a new SCF header after the completion clears it
	{ cat "$M/vibeqc-converged.out"; echo "SCF (UHF, DIIS)"; echo "  iter    1  -75.9  -7.5e+01  1.0e-01"; } >again.out
	rm vq-benchmark-run.json
	run --separate-stderr perf-measure --runtime-digest d -- "$M/replay.sh" "$PWD/again.out"
	assert_success
	assert_equal "$(report '[.converged, .scf_iterations]')" '[false,1]'
}

@test "generic mode: the patterns are options" {
	printf 'cycle 1 e=-1.25\ncycle 2 e=-1.5\nDONE energy -1.5\n' >g.out
	run --separate-stderr perf-measure --program generic --runtime-digest d \
		--iteration '^cycle ([0-9]+)' --complete '^DONE energy (-?[0-9.]+)' -- cat g.out
	assert_success
	assert_equal "$(report '[.converged, .scf_iterations, .values.total_energy]')" '[true,2,-1.5]'
	run --separate-stderr perf-measure --program generic --runtime-digest d -- cat g.out
	assert_failure 2
	run --separate-stderr perf-measure --program generic --runtime-digest d --iteration '(' --complete x -- cat g.out
	assert_failure 2
	[[ $stderr == "perf-measure: --iteration: (:"* ]]
}

@test "--runtime-root: the tree's digest, {runtime} expanded, a change during the run refused" {
	mkdir -p rt/bin
	printf '#!/bin/sh\ncat "%s"\n' "$M/vibeqc-converged.out" >rt/bin/python
	chmod +x rt/bin/python
	want=$(perf-plan digest rt)
	run --separate-stderr perf-measure --runtime-root rt -- '{runtime}/bin/python' run.py
	assert_success
	assert_equal "$(report .runtime_digest)" "\"$want\""
	assert_equal "$(report .converged)" true
	rm vq-benchmark-run.json
	run --separate-stderr perf-measure --runtime-root rt -- sh -c 'cat "$1" && echo x >rt/new' _ "$M/vibeqc-converged.out"
	echo "stderr: $stderr"
	assert_failure 2
	[ ! -e vq-benchmark-run.json ]
	grep -q 'the runtime changed during the run; no report written' <<<"$stderr"
}

@test "usage: one runtime identity, a command, a known program" {
	run --separate-stderr perf-measure -- true
	assert_failure 2
	run --separate-stderr perf-measure --runtime-digest a --runtime-root . -- true
	assert_failure 2
	run --separate-stderr perf-measure --runtime-digest a
	assert_failure 2
	run --separate-stderr perf-measure --program gaussian --runtime-digest a -- true
	assert_failure 2
	run -127 --separate-stderr perf-measure --runtime-digest a -- /nonexistent/program
}

@test "the command: our stdin and process group, the default SIGPIPE, not waited for past its exit" {
	# stdin passed on; the command in perf-measure's own process group
	run --separate-stderr perf-measure --program generic --iteration '^it' --complete '^done' \
		--runtime-digest d -- sh -c 'cat; ps -o pgid= -p $$ | tr -d " "; echo "done"' \
		<<<"from stdin"
	assert_success
	assert_equal "${lines[0]}" "from stdin"
	assert_equal "${lines[1]}" "$(ps -o pgid= -p $$ | tr -d ' ')"
	# a pipe whose reader went away ends its writer quietly, as in a shell
	run --separate-stderr perf-measure --program generic --iteration '^it' --complete '^done' \
		--runtime-digest d -- sh -c 'yes | head -1'
	assert_success
	assert_equal "$output" "y"
	assert_equal "$stderr" ""
	# a process left behind holding the output does not hold perf-measure
	SECONDS=0
	run --separate-stderr perf-measure --program generic --iteration '^it' --complete '^done' \
		--runtime-digest d -- sh -c 'sleep 20 & echo started'
	assert_success
	assert_equal "$output" "started"
	[ "$SECONDS" -lt 10 ]
}
