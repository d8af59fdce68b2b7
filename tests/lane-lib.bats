#!/usr/bin/env bats
# The lane's bash library (hooks/lib/: lane.bash, python.bash, plugin.bash),
# function by function, each over a table of cases: the run's
# classification, the upload policy read as the reference reads it, the
# lane's exit status, the annotation's style and its sizing, the reports the
# lane mirrors, the checks of its options. No lane runs here: perf-lane.bats
# and plugin.bats run it whole.

# shellcheck disable=SC2154,SC2030,SC2031,SC2016 # bats sets status, output, lines, stderr; each test is a subshell; single quotes hold code for another shell, and backticks
load lib/common

# shellcheck source=hooks/lib/plugin.bash
. "$ROOT_DIR/hooks/lib/plugin.bash"

setup() {
	unset BUILDKITE_SOURCE BUILDKITE_PLUGIN_PERFKITE_ANNOTATE_STYLE
	cd "$BATS_TEST_TMPDIR" || return 1
}

# fields LINE: the |-separated fields of a table row into the array f,
# each trimmed; "-" is an empty field.
fields() {
	local -a raw
	local x
	IFS='|' read -r -a raw <<<"$1"
	f=()
	for x in "${raw[@]}"; do
		x=${x#"${x%%[![:space:]]*}"}
		x=${x%"${x##*[![:space:]]}"}
		[ "$x" != - ] || x=
		f+=("$x")
	done
}

# rows: the table on stdin less its comments and blank lines.
rows() {
	grep -v -e '^[[:space:]]*#' -e '^[[:space:]]*$'
}

@test "lane_classify: pull request, scheduled or full main, direct, else unknown; first match wins" {
	local row n=0
	local -a f
	while IFS= read -r row; do
		fields "$row"
		output=$(
			unset BUILDKITE_PULL_REQUEST BUILDKITE_BRANCH BUILDKITE_SOURCE TEST_SCOPE
			[ -z "${f[0]}" ] || export BUILDKITE_PULL_REQUEST="${f[0]}"
			[ -z "${f[1]}" ] || export BUILDKITE_BRANCH="${f[1]}"
			[ -z "${f[2]}" ] || export BUILDKITE_SOURCE="${f[2]}"
			[ -z "${f[3]}" ] || export TEST_SCOPE="${f[3]}"
			lane_classify
		)
		[ "$output" = "${f[4]}" ] || { echo "row: $row: got '$output'" >&2; return 1; }
		n=$((n + 1))
	done < <(rows <<-'EOF'
		# pull request | branch  | source   | scope  | run source, policy
		123            | -       | -        | -      | pr pass
		123            | main    | schedule | full   | pr pass
		0              | -       | -        | -      | unknown never
		false          | main    | schedule | -      | scheduled_main always
		-              | main    | -        | full   | scheduled_main always
		-              | main    | webhook  | -      | unknown never
		-              | feature | schedule | full   | unknown never
		-              | main    | -        | direct | unknown pass
		-              | -       | -        | direct | unknown pass
		-              | -       | -        | -      | unknown never
		12a            | -       | -        | -      | unknown never
		012            | -       | -        | -      | unknown never
	EOF
	)
	[ "$n" -eq 12 ]
}

@test "lane_env_policy: PERF_UPLOAD_POLICY as Python reads it: strip().lower(), an invalid one is never, shown with repr()" {
	local v want want_err
	# Each value, then what Python 3 makes of it (os.environ, surrogateescape).
	for v in PASS ' Always ' $'\t NEVER\n\xc2\xa0' $'\xe2\x80\x83pass\xe3\x80\x80' '' '   ' \
		' Bogus ' "It's"$'\x01\xe2\x80\x8b' $'always\x85' 'a"b'"'" $'\xc3\xa9t\xc3\xa9' $'x\\y'; do
		want=$(V=$v py -c '
import os, sys
p = os.environ["V"].strip().lower()
if p not in ("", "never", "pass", "always"):
    print("Invalid PERF_UPLOAD_POLICY=%r; using %r" % (p, "never"), file=sys.stderr)
    p = "never"
sys.stdout.write(p)' 2>"$BATS_TEST_TMPDIR/want.err")
		want_err=$(cat "$BATS_TEST_TMPDIR/want.err")
		run --separate-stderr lane_env_policy "$v"
		assert_success
		[ "$output" = "$want" ] && [ "$stderr" = "$want_err" ] || {
			printf 'value %q: got %q / %q, want %q / %q\n' "$v" "$output" "$stderr" "$want" "$want_err" >&2
			return 1
		}
	done
}

@test "lane_status: the collection's failure, else the comparison's, the A/B's when worse or alone; nothing measured is 2 unless allowed" {
	local row n=0
	local -a f
	while IFS= read -r row; do
		fields "$row"
		run lane_status "${f[0]}" "${f[1]}" "${f[2]:--}" "${f[3]}" "${f[4]}" "${f[5]}"
		assert_success
		[ "$output" = "${f[6]}" ] || { echo "row: $row: got '$output'" >&2; return 1; }
		n=$((n + 1))
	done < <(rows <<-'EOF'
		# collect | compare | ab (- none) | ab-only | measured | allow-empty | status
		0         | 0       | -  | -       | 1        | -           | 0
		1         | 0       | -  | -       | 1        | -           | 1
		2         | 1       | -  | -       | 1        | -           | 2
		1         | 2       | -  | -       | 1        | -           | 1
		0         | 1       | -  | -       | 1        | -           | 1
		0         | 2       | -  | -       | 1        | -           | 2
		# the A/B: the worse of the two
		0         | 0       | 1  | -       | 1        | -           | 1
		0         | 1       | 0  | -       | 1        | -           | 1
		0         | 2       | 1  | -       | 1        | -           | 2
		0         | 1       | 2  | -       | 1        | -           | 2
		# --ab-only: the A/B's alone, once the collection passed
		0         | 2       | 0  | 1       | 1        | -           | 0
		0         | 0       | 1  | 1       | 1        | -           | 1
		1         | 0       | 0  | 1       | 1        | -           | 1
		0         | 2       | -  | 1       | 1        | -           | 2
		# nothing measured
		0         | 0       | -  | -       | 0        | -           | 2
		0         | 0       | -  | -       | 0        | 1           | 0
		1         | 0       | -  | -       | 0        | 1           | 1
	EOF
	)
	[ "$n" -eq 17 ]
}

@test "lane_worst: 2 over 1 over 0" {
	run lane_worst
	assert_output 0
	run lane_worst 0 1 0
	assert_output 1
	run lane_worst 1 2 0 1
	assert_output 2
	run lane_worst 0 0
	assert_output 0
}

@test "plugin_style: the option, else from the lane's status and what its summary and note say" {
	local row n=0
	local -a f
	while IFS= read -r row; do
		fields "$row"
		rm -f summary.md skipped.md
		case ${f[1]} in
		pass) printf '| m | PASS |\n' >summary.md ;;
		calibration) printf '| m | CALIBRATION_NEEDED |\n' >summary.md ;;
		regression) printf '| m | REGRESSION |\n| n | CALIBRATION_NEEDED |\n' >summary.md ;;
		worse) printf '| m | PASS |\n\n## Change points\n\n| m | latency | worse by 12%% |\n' >summary.md ;;
		worse-elsewhere) printf '| m | latency | worse by 12%% |\n\n## Change points\n\nnone\n' >summary.md ;;
		esac
		[ -z "${f[2]}" ] || printf '### Skipped benchmarks\n' >skipped.md
		output=$(
			[ -z "${f[3]}" ] || export BUILDKITE_PLUGIN_PERFKITE_ANNOTATE_STYLE="${f[3]}"
			plugin_style "${f[0]}" "${f[1]:+summary.md}" "${f[2]:+skipped.md}"
		)
		[ "$output" = "${f[4]}" ] || { echo "row: $row: got '$output'" >&2; return 1; }
		n=$((n + 1))
	done < <(rows <<-'EOF'
		# status | summary         | skipped | option  | style
		0        | pass            | -       | -       | success
		0        | calibration     | -       | -       | info
		0        | regression      | -       | -       | warning
		0        | worse           | -       | -       | warning
		0        | worse-elsewhere | -       | -       | success
		0        | pass            | yes     | -       | success
		1        | pass            | -       | -       | error
		1        | regression      | -       | -       | error
		2        | pass            | -       | -       | warning
		-        | pass            | -       | -       | warning
		# nothing measured is never a success (nor an error)
		0        | -               | yes     | -       | warning
		1        | -               | yes     | -       | warning
		0        | -               | -       | -       | success
		2        | -               | -       | -       | warning
		# the option wins, trimmed and lower-cased
		1        | pass            | -       | info    | info
		0        | pass            | -       | ERROR   | error
		0        | -               | yes     | auto    | warning
	EOF
	)
	[ "$n" -eq 17 ]
}

# lines_of N: N lines "line NN" (8 bytes each under 100).
lines_of() {
	[ "$1" -eq 0 ] || seq -f 'line %02g' "$1"
}

@test "plugin_annotation_body: the summary whole when it fits, else cut to whole lines with a note, room kept for the note of skipped benchmarks and the link" {
	local row n=0 note skipped
	local -a f
	note='_The summary was cut to fit an annotation; the whole of it is in the perf_*.md artifact._'
	while IFS= read -r row; do
		fields "$row"
		lines_of "${f[0]}" >summary.md
		skipped=
		if [ "${f[1]}" -gt 0 ]; then
			{ head -c "$((f[1] - 1))" /dev/zero | tr '\0' s; echo; } >skipped.md
			skipped=skipped.md
		fi
		plugin_annotation_body 0 summary.md "$skipped" "${f[2]}" "${f[3]}" >body.md
		{
			lines_of "${f[4]}"
			[ "${f[5]}" != cut ] || printf '\n%s\n' "$note"
			[ -z "$skipped" ] || { echo; cat skipped.md; }
			printf '%s\n' "${f[2]}"
		} >want.md
		diff -u want.md body.md >&2 || { echo "row: $row" >&2; return 1; }
		# what was cut fits
		[ "${f[5]}" != cut ] || [ "$(wc -c <body.md)" -le "${f[3]}" ]
		n=$((n + 1))
	done < <(rows <<-'EOF'
		# summary lines | skipped bytes | link       | max | lines kept | whole/cut
		# room = max - link - 200 (- skipped - 1): 100 bytes here
		12              | 0             | -          | 300 | 12         | whole
		13              | 0             | -          | 300 | 12         | cut
		40              | 0             | -          | 300 | 12         | cut
		# the link and the note of skipped benchmarks take their room first
		12              | 0             | 0123456789 | 306 | 12         | whole
		12              | 0             | 0123456789 | 305 | 11         | cut
		12              | 15            | -          | 312 | 12         | whole
		12              | 15            | -          | 311 | 11         | cut
		# the default, 1 MiB, takes a long summary whole
		5000            | 0             | -          | -   | 5000       | whole
	EOF
	)
	[ "$n" -eq 8 ]
}

@test "plugin_annotation_body: without a summary, the note of skipped benchmarks, else a line saying the lane ended early" {
	printf '## Performance lane: nothing was measured\n' >skipped.md
	run plugin_annotation_body 2 "" skipped.md $'\n[Dashboard](artifact://r/d.html)\n'
	assert_output "## Performance lane: nothing was measured

[Dashboard](artifact://r/d.html)"
	run plugin_annotation_body 1 "" "" ""
	assert_output "## Performance lane

The lane ended with status 1 before the rolling comparison ran; see the job log and the worker logs among the artifacts."
	run plugin_annotation_body "" "" "" ""
	assert_line --index 1 --partial "The lane ended with status unknown before"
}

@test "write_skipped: a note when a benchmark was skipped or nothing was measured, its cells escaped; else none" {
	local row n=0
	local -a f
	while IFS= read -r row; do
		fields "$row"
		printf '%b' "${f[0]}" >list
		echo stale >skipped.md
		run write_skipped list "${f[1]}" skipped.md
		assert_success
		if [ -z "${f[2]}" ]; then
			[ ! -e skipped.md ] || { echo "row: $row: a note" >&2; return 1; }
		else
			diff -u <(printf '%b' "${f[2]}") skipped.md >&2 || { echo "row: $row" >&2; return 1; }
		fi
		[ ! -e skipped.md.tmp ]
		n=$((n + 1))
	done < <(rows <<-'EOF'
		# list ("id<TAB>reason" lines) | measured | the note
		-                              | 1        | -
		a\tno GPU\n                    | 1        | ### Skipped benchmarks\n\n1 benchmark(s) did not run on this agent.\n\n\x7c Benchmark \x7c Why it was skipped \x7c\n\x7c---\x7c---\x7c\n\x7c a \x7c no GPU \x7c\n
		-                              | 0        | ## Performance lane: nothing was measured\n\nEvery benchmark was skipped (0); no result was compared or stored.\n
		a\x7cb\tx\\y\nc\tz\n             | 0        | ## Performance lane: nothing was measured\n\nEvery benchmark was skipped (2); no result was compared or stored.\n\n\x7c Benchmark \x7c Why it was skipped \x7c\n\x7c---\x7c---\x7c\n\x7c a\\\x7cb \x7c x\\\\y \x7c\n\x7c c \x7c z \x7c\n
	EOF
	)
	[ "$n" -eq 4 ]
}

@test "mirror_log: a heading and one fenced block, the rotated log first, runs of backticks escaped" {
	mkdir logs out
	printf 'old 1\n' >logs/worker_b_1.log.1
	printf '%s\n' 'new ``` fence' '````' '`` two' 'a```b```c' >logs/worker_b_1.log
	run mirror_log logs/worker_b_1.log out
	assert_success
	diff -u - out/worker_b_1.md <<-'EOF'
		# Worker log worker_b_1

		```
		old 1
		new \`\`\` fence
		\`\`\`\`
		`` two
		a\`\`\`b\`\`\`c
		```
	EOF
	# only the rotated one; then neither (an empty block)
	rm logs/worker_b_1.log
	mirror_log logs/worker_b_1.log out
	assert_equal "$(sed -n 4p out/worker_b_1.md)" "old 1"
	rm logs/worker_b_1.log.1
	mirror_log logs/worker_b_1.log out
	assert_equal "$(cat out/worker_b_1.md)" "$(printf '# Worker log worker_b_1\n\n```\n```')"
	[ -z "$(find out -name '*.tmp')" ]
}

# checked ASSIGNMENTS: the defaults, then ASSIGNMENTS, checked; "checked".
checked() {
	lane_defaults
	eval "$1"
	lane_check_options
	echo checked
}

@test "lane_check_options: each bad value is usage and exit 2, named as the option" {
	local row n=0
	local -a f
	while IFS= read -r row; do
		fields "$row"
		run --separate-stderr checked "${f[0]}"
		if [ -z "${f[1]}" ]; then
			[ "$status" -eq 0 ] && [ "$output" = checked ] && [ -z "$stderr" ] ||
				{ echo "row: $row: status $status: $stderr" >&2; return 1; }
		else
			[ "$status" -eq 2 ] && [ -z "$output" ] && [ "${stderr_lines[0]}" = "perf-lane: ${f[1]}" ] &&
				[[ ${stderr_lines[1]} == "usage: perf-lane "* ]] ||
				{ echo "row: $row: status $status: $stderr" >&2; return 1; }
		fi
		n=$((n + 1))
	done < <(rows <<-'EOF'
		# assignments                               | the complaint
		:                                           | -
		policy=always changes=gate rule=zscore days=7 timeout=60 | -
		days=36500 interval=0.5 timeout=0.001 annotate_max=1024 | -
		ab_base=x ab_pairs=0012:1000 ab_band=0       | -
		policy=Always                               | --policy: expected never, pass or always, not 'Always'
		changes=sometimes                           | --changes: expected gate, report or off, not 'sometimes'
		run_source=nightly                          | --run-source: expected pr, local, scheduled_main or unknown, not 'nightly'
		days=-1                                     | --days: expected a whole number of days from 1 to 36500, not '-1'
		days=0                                      | --days: expected a whole number of days from 1 to 36500, not '0'
		days=7.5                                    | --days: expected a whole number of days from 1 to 36500, not '7.5'
		days=36501                                  | --days: expected a whole number of days from 1 to 36500, not '36501'
		days=0 days_from=DASHBOARD_DAYS             | DASHBOARD_DAYS: expected a whole number of days from 1 to 36500, not '0'
		interval=1e3                                | --telemetry-interval: expected a number of seconds above 0, not '1e3'
		interval=0.0                                | --telemetry-interval: expected a number of seconds above 0, not '0.0'
		annotate_max=                               | --annotate-max: expected a whole number of bytes from 1024 to 1099511627776, not ''
		annotate_max=1023                           | --annotate-max: expected a whole number of bytes from 1024 to 1099511627776, not '1023'
		timeout=.5                                  | --timeout: expected a number of seconds above 0, not '.5'
		timeout=0                                   | --timeout: expected a number of seconds above 0, not '0'
		rule=median                                 | --rule: expected reference, prediction or zscore, not 'median'
		ab_given=' --ab-band --ab-only'             | --ab-band needs --ab-base
		ab_base=x ab_pairs=1:5                      | --ab-pairs: expected min:max with 2 <= min <= max <= 1000 (or one number), not '1:5'
		ab_base=x ab_pairs=2:10000                  | --ab-pairs: expected min:max with 2 <= min <= max <= 1000 (or one number), not '2:10000'
		ab_base=x ab_band=5%                        | --ab-band: expected a percent of 0 or more, not '5%'
	EOF
	)
	[ "$n" -eq 23 ]
}

@test "perf-lane sourced (as the pre-push hook does) defines the lane's functions and runs nothing" {
	mkdir here
	cd here
	run --separate-stderr bash -c '. "$1" --version; lane_defaults; declare -F lane_main lane_static lane_rolling; echo "$results $store"' \
		_ "$ROOT_DIR/bin/perf-lane"
	assert_success
	[ -z "$stderr" ]
	assert_output "lane_main
lane_static
lane_rolling
results /tmp/perf-tracking"
	[ -z "$(ls)" ]
}

@test "lane_bisect_trigger: the last worse change point no bisect named a culprit of, whole and quoted for pipeline upload" {
	local a b c
	work=$BATS_TEST_TMPDIR/work
	mkdir -p "$work"
	a='{"model_id":"it'"'"'s $HOME","metric":"latency","direction":"worse","index":3,"commit_sha":"'$(printf '%040x' 2)'","previous":{"commit_sha":"'$(printf '%040x' 1)'"},"tentative":false}'
	b='{"model_id":"m","metric":"latency","direction":"worse","index":4,"commit_sha":"'$(printf '%040x' 4)'","previous":{"commit_sha":"'$(printf '%040x' 3)'"},"tentative":false,"culprit":{"commit":"'$(printf '%040x' 4)'","short":"0000000"}}'
	c='{"model_id":"m","metric":"memory","direction":"worse","index":5,"commit_sha":"'$(printf '%040x' 6)'","previous":{"commit_sha":"'$(printf '%040x' 5)'"},"tentative":true}'
	printf '%s\n' "$a" "$b" "$c" >"$work/changes.jsonl"
	run --separate-stderr lane_bisect_trigger
	assert_success
	awk '/^```sh$/ { y = 1; next } /^```$/ { y = 0 } y' <<<"$output" | sed '1d;$d' >trigger.yml
	# pipeline upload turns $$ back into $.
	run py -c 'import sys, yaml; s = yaml.safe_load(open(sys.argv[1]))["steps"][0]
e = s["build"]["env"]
print(e["PERF_BISECT_GOOD"], e["PERF_BISECT_BAD"], s["build"]["commit"] == e["PERF_BISECT_BAD"])
print(e["PERF_BISECT_CHANGE"].replace("$$", "$"))' trigger.yml
	assert_success
	assert_equal "${lines[0]}" "$(printf '%040x %040x' 1 2) True"
	assert_equal "${lines[1]}" "$a"
	# Every worse one bisected already, or tentative: no trigger.
	printf '%s\n' "$b" "$c" >"$work/changes.jsonl"
	run --separate-stderr lane_bisect_trigger
	assert_success
	assert_output ''
}
