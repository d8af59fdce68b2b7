#!/usr/bin/env bats
# Hostile and broken input, for every program (tests/bad-inputs/): one
# diagnostic naming the file (and the line, where there is one), exit 2, no
# crash, no sanitizer report (CI runs this file under ASan and UBSan too,
# where a leak is a failure), nothing half-written. Values in records that
# reach paths, Markdown and HTML stay inside and inert.

# shellcheck disable=SC2154 # bats sets status, output, lines, stderr
# shellcheck disable=SC2016 # jq programs are single-quoted on purpose
load lib/common

B=$TESTS_DIR/bad-inputs

setup_file() {
	local d=$BATS_FILE_TMPDIR/bad
	mkdir -p "$d"
	cp "$TESTS_DIR"/bad-inputs/*.jsonl* "$d/"
	py -c 'print("[" * 100000 + "]" * 100000)' >"$d/deep-nesting.jsonl"
	py -c 'print("{\"model_id\": \"" + "x" * 10000000 + "\"}")' >"$d/line-10mb.jsonl"
	# 300 MiB of one line, no newline: past the reader's 256 MiB record limit
	head -c 314572800 /dev/zero | tr '\0' 'x' | gzip -1 >"$d/gzip-bomb.jsonl.gz"
	mkdir "$d/directory.jsonl"
}

setup() {
	cd "$BATS_TEST_TMPDIR" || return 1
	D=$BATS_FILE_TMPDIR/bad
}

# The files that can never be read as records.
broken=(truncated.jsonl invalid-utf8.jsonl nul-byte.jsonl gzip-ends-early.jsonl.gz
	deep-nesting.jsonl gzip-bomb.jsonl.gz directory.jsonl)

# no_crash: nothing from a sanitizer, no signal.
no_crash() {
	[ "$status" -lt 128 ]
	not grep -qE 'Sanitizer|runtime error|Segmentation|Aborted|core dumped' <<<"$stderr"
}

# names_file PROG FILE: every diagnostic line names FILE (with a line when
# the file has lines), and there is at least one.
names_file() {
	local prog=$1 file=$2 n=0 l
	while IFS= read -r l; do
		[[ $l == "$prog: "* ]] || continue
		[[ $l == "$prog: $file"* ]] || { echo "does not name $file: $l" >&2; return 1; }
		n=$((n + 1))
	done <<<"$stderr"
	[ "$n" -ge 1 ]
}

# filter PROG ARGS...: the JSON-lines filters as each is run in the lane.
filter() {
	local prog=$1
	shift
	case $prog in
	perf-gate-rolling) perf-gate-rolling -s "$BATS_TEST_TMPDIR/store" "$@" ;;
	perf-upload) perf-upload -s "$BATS_TEST_TMPDIR/store" -p always "$@" ;;
	perf-summarize) perf-summarize -r "$BATS_TEST_TMPDIR/reports" "$@" ;;
	*) "$prog" "$@" ;;
	esac
}

FILTERS=(perf-gate-static perf-normalize perf-gate-rolling perf-upload perf-summarize perf-changes)

@test "the JSON-lines filters: every broken file is exit 2 with a diagnostic naming it" {
	mkdir store
	for prog in "${FILTERS[@]}"; do
		for f in "${broken[@]}"; do
			run --separate-stderr filter "$prog" "$D/$f"
			no_crash
			[ "$status" -eq 2 ] || { echo "$prog $f: status $status" >&2; false; }
			names_file "$prog" "$D/$f"
		done
	done
	# the line, where the file has lines
	run --separate-stderr perf-normalize "$D/truncated.jsonl"
	assert_failure 2
	assert_equal "$stderr" "perf-normalize: $D/truncated.jsonl:1: invalid JSON at column 33: expected ',' or '}' in object, found end of input"
	run --separate-stderr perf-gate-static "$D/gzip-bomb.jsonl.gz"
	assert_failure 2
	assert_equal "$stderr" "perf-gate-static: $D/gzip-bomb.jsonl.gz:1: record longer than 256 MiB"
	run --separate-stderr perf-gate-static "$D/deep-nesting.jsonl"
	assert_failure 2
	[[ $stderr == *":1: invalid JSON at column 513: nesting deeper than 512 levels" ]]
	run --separate-stderr perf-gate-static "$D/directory.jsonl"
	assert_failure 2
	assert_equal "$stderr" "perf-gate-static: $D/directory.jsonl: is a directory"
}

@test "a gzip bomb is read in bounded memory" {
	local limit='ulimit -v 1500000;'
	# a sanitizer reserves terabytes of address space for its shadow
	if sanitized; then limit=; fi
	run --separate-stderr bash -c "$limit"' perf-normalize "$1" >/dev/null' _ "$D/gzip-bomb.jsonl.gz"
	no_crash
	assert_equal "$status" 2
	[[ $stderr == *"record longer than 256 MiB" ]]
}

@test "numbers, duplicate keys, a 10 MB line, blank lines, an empty file: handled as the reference does, never a crash" {
	mkdir store
	for prog in "${FILTERS[@]}"; do
		for f in number-overflow.jsonl number-negative-zero.jsonl number-beyond-2-53.jsonl \
			duplicate-keys.jsonl line-10mb.jsonl blank-lines.jsonl empty.jsonl; do
			run --separate-stderr filter "$prog" "$D/$f"
			no_crash
			[ "$status" -le 2 ]
			if [ "$status" -eq 2 ]; then names_file "$prog" "$D/$f"; fi
		done
		run --separate-stderr filter "$prog" "$D/empty.jsonl"
		assert_success
	done
	# the reference reads 1e999 as inf: a metric that is not a finite number
	run --separate-stderr perf-gate-static "$D/number-overflow.jsonl"
	assert_failure 2
	[[ $stderr == "perf-gate-static: $D/number-overflow.jsonl:1: "*"not a finite number" ]]
}

@test "the JSON documents (plans, results, manifests, configs, bindings): every bad file is exit 2, one line" {
	local plan=$ROOT_DIR/fixtures/campaign/plan.json results=$ROOT_DIR/fixtures/campaign/results.json
	mkdir cfg
	for f in "${broken[@]}" number-overflow.jsonl duplicate-keys.jsonl empty.jsonl blank-lines.jsonl; do
		for cmd in "perf-plan X" "perf-analyze X $results" "perf-analyze $plan X" "perf-frames X" \
			"perf-campaign run X X rd" "perf-campaign collect $plan X"; do
			# an empty directory of run reports is a campaign not run yet
			[[ $cmd == "perf-campaign collect"* && $f == directory.jsonl ]] && continue
			# shellcheck disable=SC2086 # the command line is split on purpose
			run --separate-stderr ${cmd//X/$D/$f}
			no_crash
			[ "$status" -eq 2 ] || { echo "$cmd $f: status $status" >&2; false; }
			[ "${#stderr_lines[@]}" -eq 1 ] || { echo "$cmd $f: $stderr" >&2; false; }
			[ -z "$output" ]
		done
		rm -rf cfg/* && cp -r "$D/$f" cfg/x.json
		run --separate-stderr perf-collect --check -c cfg
		no_crash
		assert_equal "$status" 2
	done
}

@test "perf-seed and perf-measure: broken files and output, never a crash" {
	mkdir store
	for f in "${broken[@]}" number-overflow.jsonl duplicate-keys.jsonl empty.jsonl; do
		run --separate-stderr perf-seed prepare -s store --staging-root staging \
			--intent-rationale r --now 2026-07-01T00:00:00+00:00 --source-result "$D/$f"
		no_crash
		[ "$status" -eq 2 ] || { echo "perf-seed $f: status $status" >&2; false; }
		names_file perf-seed "$D/$f"
		[ ! -e staging ] || [ -z "$(find staging -type f)" ]
		[ -d "$D/$f" ] && continue
		# a job whose output is the file: a report of an unconverged run
		run --separate-stderr perf-measure --runtime-digest d -- cat "$D/$f"
		no_crash
		assert_success
		jq -e '.converged == false' vq-benchmark-run.json >/dev/null
		rm vq-benchmark-run.json
	done
}

@test "perf-campaign collect: a run report that cannot be read is named, and nothing is written" {
	local plan=$ROOT_DIR/fixtures/campaign/plan.json
	mkdir -p jobs/campaign/class-a/1/h2o-ccsd/generic jobs/campaign/class-a/2/h2o-ccsd/generic
	cp "$B/truncated.jsonl" jobs/campaign/class-a/1/h2o-ccsd/generic/vq-benchmark-run.json
	echo '{"converged": true}' >jobs/campaign/class-a/2/h2o-ccsd/generic/vq-benchmark-run.json
	run --separate-stderr perf-campaign collect -o results.json "$plan" jobs
	assert_failure 2
	[ ! -e results.json ]
	[[ $stderr == *"perf-campaign: jobs/campaign/class-a/1/h2o-ccsd/generic/vq-benchmark-run.json:1: not a run report: "* ]]
	[[ $stderr == *"perf-campaign: jobs/campaign/class-a/2/h2o-ccsd/generic/vq-benchmark-run.json: not a run report: "* ]]
	[[ $stderr == *"2 run reports could not be read; nothing written"* ]]
	run --separate-stderr perf-campaign collect "$plan" "$B/empty.jsonl"
	assert_failure 2
	[[ $stderr == *"empty.jsonl: Not a directory" ]]
}

@test "wrong types at every key the filters read: no crash, every diagnostic names the file and line" {
	# every key (to depth 2) of real records (raw, normalized, compared):
	# for each, a record that has it, with its value replaced by every JSON
	# type in turn, one record per line
	for src in "$ROOT_DIR"/fixtures/records/*.json "$FIXTURES"/perf-gate-rolling/*.in.jsonl \
		"$FIXTURES"/perf-summarize/cases/*.in.jsonl; do
		jq -c '.' "$src"
	done | jq -s -c '[.[] as $r | [$r | paths(scalars, objects, arrays)] | map(select(length <= 2))[] |
		{p: ., r: $r}] | unique_by(.p) | .[] | .r as $r | .p as $p |
		(null, true, "x", -1.5, [], {}, 1e308) as $v | $r | setpath($p; $v)' >typed.jsonl
	[ "$(wc -l <typed.jsonl)" -ge 600 ]
	mkdir store
	for prog in "${FILTERS[@]}"; do
		run --separate-stderr filter "$prog" typed.jsonl
		no_crash
		[ "$status" -le 2 ]
		# each of its lines (hundreds: awk, not a bash loop under bats's
		# trace) names typed.jsonl and a line, or the store
		awk -v p="$prog: " 'index($0, p) == 1 {
			rest = substr($0, length(p) + 1)
			if (rest !~ /^typed\.jsonl:[0-9]/ && index(rest, "store") == 0) { print; bad = 1 }
		} END { exit bad }' <<<"$stderr" >&2
	done
}

@test "bad input never half-writes the store: it is byte for byte as before" {
	mkdir store
	perf-upload -s store -p always "$ROOT_DIR"/fixtures/records/perf_wan-t2v-1.3b-1gpu_*.json >/dev/null 2>&1 || true
	before=$(find store -type f -exec sha256sum {} + | sort)
	for f in "${broken[@]}"; do
		run --separate-stderr perf-upload -s store -p always "$D/$f"
		assert_equal "$status" 2
	done
	assert_equal "$(find store -type f -exec sha256sum {} + | sort)" "$before"
	[ -z "$(find store -name '.*tmp*')" ]
}

# hostile_records: records whose names are paths, line breaks, table cells
# and markup, with a timestamp that has slashes.
hostile_records() {
	local m
	for m in '../../etc/x' '/abs' 'a/../../b' $'new\nline|pipe' '<script>document.title="pwned"</script>' \
		'<img src=x onerror="document.title=1">'; do
		jq -c --arg m "$m" '.model_id = $m | .timestamp = "2026/06/16T00:00:00+00:00" | .benchmark_id = $m' \
			"$FIXTURES/perf-upload/template.jsonl"
	done
}

@test "hostile names: nothing written outside the store and the reports, Markdown cells intact" {
	mkdir w && cd w
	hostile_records >in.jsonl
	touch ../marker
	mkdir store	# a store must exist to be read (perfkite(7))
	perf-gate-rolling -s store in.jsonl 2>/dev/null | perf-upload -s store -p always >up.jsonl 2>/dev/null
	perf-summarize -r reports -s store --html reports/dashboard.html up.jsonl >summary.md 2>/dev/null
	# every new file is in store/ or reports/, or one the test wrote
	run find "$BATS_TEST_TMPDIR" -type f -newer ../marker
	for f in "${lines[@]}"; do
		case ${f#"$BATS_TEST_TMPDIR"/w/} in
		store/* | reports/* | in.jsonl | up.jsonl | summary.md) ;;
		*) echo "outside: $f" >&2; false ;;
		esac
	done
	assert_equal "$(find store -name '*.json' | wc -l)" 6
	[ -z "$(find store -mindepth 2 -type d)" ]
	# each row of the table has the header's cells
	hdr=$(grep -m1 '^| Model' summary.md | tr -cd '|' | wc -c)
	while IFS= read -r l; do
		assert_equal "$(tr -cd '|' <<<"$l" | wc -c)" "$hdr"
	done < <(grep '^| ' summary.md)
	assert_equal "$(grep -c '^| ' summary.md)" 7	# the header and six rows
	not grep -q '<script>' summary.md
}

@test "a hostile benchmark_id: perf-collect writes its results and worker log inside the results directory" {
	export PERF_CUDA_LIBRARY=/nonexistent PERF_NVML_LIBRARY=/nonexistent
	mkdir w && cd w
	cp "$FIXTURES/perf-collect/cat-runner.sh" .
	for id in '../../etc/x' '/abs' $'a\nb|c'; do
		jq --arg id "$id" '.benchmark_id = $id' "$FIXTURES/perf-collect/v1.json" >cfg.json
		touch ../marker
		run --separate-stderr env RUNNER_EVENTS="$FIXTURES/perf-collect/row1.events.jsonl" \
			perf-collect --cpu -o results cfg.json
		no_crash
		assert_success
		assert_equal "$(jq -r .benchmark_id <<<"$output")" "$id"
		run find "$BATS_TEST_TMPDIR" -newer ../marker -type f
		for f in "${lines[@]}"; do
			[[ $f == "$BATS_TEST_TMPDIR/w/results/"* ]] || [[ $f == */cfg.json ]] ||
				[[ $f == */separate-stderr-* ]] || { echo "outside: $f" >&2; false; }
		done
		[ "${#lines[@]}" -ge 2 ]
		rm -rf results
	done
}

@test "hostile names in the dashboard are text: no script runs in headless Chromium" {
	load lib/chromium
	chromium_or_skip
	mkdir store	# a store must exist to be read (perfkite(7))
	hostile_records | perf-gate-rolling -s store 2>/dev/null | perf-upload -s store -p always 2>/dev/null |
		perf-summarize -r reports -s store --html "$PWD/d.html" >/dev/null 2>&1
	not grep -q '<script' d.html
	not grep -q '<img' d.html
	chromium_run dom "file://$PWD/d.html" --dump-dom
	[ -s dom.out ]
	not grep -q '<title>pwned</title>' dom.out
	not grep -q '<title>1</title>' dom.out
	not grep -q '<script' dom.out
	grep -q '&lt;script&gt;document.title="pwned"&lt;/script&gt;' dom.out
}

@test "no shell ever sees a value: no system() or popen() anywhere" {
	not grep -rnE '\b(system|popen)\s*\(' "$ROOT_DIR"/src
}
