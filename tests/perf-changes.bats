#!/usr/bin/env bats
# perf-changes: Otava's change points per cohort and metric. The fixture
# history is written by fixtures/tests/perf-changes/gen-history.py, which
# also checks (given Otava) that these outputs are Otava's change points.

# shellcheck disable=SC2154 # bats sets status, output, lines, stderr
load lib/common

N=perf-changes
F=$FIXTURES/perf-changes
H=$F/history.jsonl

# same_as FILE: stdout (as bats captured it) is FILE byte for byte.
same_as() {
	diff -u "$1" <(printf '%s' "$output"; [ -n "$output" ] && echo)
}

@test "finds the worse latency step and the better memory step; exit 1 for a worse one" {
	run --separate-stderr $N "$H"
	assert_failure 1
	same_as "$F/default.out.jsonl"
	[ -z "$stderr" ]
}

@test "--md: a Markdown table, worse changes first, newest first" {
	run --separate-stderr $N --md "$H"
	assert_failure 1
	same_as "$F/md.out.md"
	[ -z "$stderr" ]
}

@test "--last n reports only change points among the newest n records" {
	run --separate-stderr $N --last 25 "$H"
	assert_failure 1
	same_as "$F/last.out.jsonl"
	run --separate-stderr $N --last 5 "$H"
	assert_success
	assert_output ""
}

@test "--since reports only change points at or after the time" {
	run --separate-stderr $N --since 2026-01-02T00:00:00Z "$H"
	assert_failure 1
	same_as "$F/last.out.jsonl"
	run --separate-stderr $N --since 2026-01-01T20:00:00+00:00 --metric memory "$H"
	assert_success
	[ "$(jq -r .commit_sha <<<"$output")" = "$(sed -n 21p "$H" | jq -r .commit_sha)" ]
}

@test "only better changes: exit 0" {
	run --separate-stderr $N --metric memory "$H"
	assert_success
	[ "$(jq -r '[.metric, .direction, .index, .n_before, .n_after] | join(" ")' <<<"$output")" = "memory better 20 20 40" ]
}

@test "untrusted records are left out unless --all" {
	run --separate-stderr $N --all "$H"
	assert_failure 1
	same_as "$F/all.out.jsonl"
	not diff -q "$F/all.out.jsonl" "$F/default.out.jsonl"
}

# commit_at TIMESTAMP: the commit of the gated fixture's record at that time.
commit_at() {
	grep -m 1 "\"timestamp\":\"$1\"" "$F/gated.jsonl" | jq -r .commit_sha
}

@test "the series holds every scheduled-main measurement whatever the gate said: the change point names the first slower run, a REGRESSION" {
	G=$F/gated.jsonl
	want=$(commit_at 2026-02-01T12:00:00+00:00) prev=$(commit_at 2026-02-01T11:00:00+00:00)
	[ "$(grep -c "\"commit_sha\":\"$want\".*\"comparison_status\":\"REGRESSION\"" "$G")" -eq 1 ]
	run --separate-stderr $N --metric latency "$G"
	assert_failure 1
	[ -z "$stderr" ]
	# 12 runs before (the CALIBRATION_NEEDED first one included), 12 after
	# (the REGRESSION included); the pull-request, local, failed and
	# infrastructure-error runs left out.
	assert_equal "$(jq -r '[.commit_sha, .previous.commit_sha, .index, .n_before, .n_after] | join(" ")' <<<"$output")" \
		"$want $prev 12 12 12"
	store_of "$G" "$BATS_TEST_TMPDIR/store"
	run --separate-stderr $N -s "$BATS_TEST_TMPDIR/store" --metric latency
	assert_failure 1
	assert_equal "$(jq -r .commit_sha <<<"$output")" "$want"
	# --all keeps its meaning: every record, the outliers of the other runs too.
	run --separate-stderr $N --all --metric latency "$G"
	assert_success
	assert_output ""
}

@test "a change point with fewer than --min-points records on a side is tentative: reported, never gating; a p-value below 1e-300 is <1e-300 in Markdown" {
	cd "$BATS_TEST_TMPDIR"
	for i in 1 2 3; do
		printf '{"model_id":"m","gpu_type":"g","timestamp":"2026-01-0%sT00:00:00+00:00","commit_sha":"c%s","latency":%s}\n' \
			"$i" "$i" "$([ "$i" = 3 ] && echo 12.0 || echo 10.0)"
	done >new.jsonl
	run --separate-stderr $N new.jsonl
	assert_success
	assert_equal "$(jq -r '[.direction, .tentative, .n_before, .n_after, .pvalue] | join(" ")' <<<"$output")" "worse true 2 1 0"
	run --separate-stderr $N --md new.jsonl
	assert_success
	assert_line '| m | g | latency | worse +20.0%, tentative | 10.000 ± 0.000 | 12.000 ± 0.000 | 2 / 1 | <1e-300 | c2..c3 | 2026-01-03T00:00:00+00:00 |'
	refute_output --regexp '\| 0 \|'
	# Confirmed with fewer points asked for: it gates.
	run --separate-stderr $N --min-points 1 new.jsonl
	assert_failure 1
	assert_equal "$(jq -r .tentative <<<"$output")" false
	# The fixture's steps have 20 records and more on each side.
	run --separate-stderr $N --min-points 20 "$H"
	assert_failure 1
	run --separate-stderr $N --min-points 21 "$H"
	assert_success
	assert_equal "$(jq -r '[.metric, .tentative] | join(" ")' <<<"$output")" "latency true
throughput true
memory true"
	run --separate-stderr $N --min-points 0 "$H"
	assert_failure 2
	assert_equal "${stderr%%$'\n'*}" "$N: --min-points: not a positive integer: '0'"
}

@test "--md: one row per event, its metrics listed together; the range previous..commit with the untrusted runs between; runs before and after" {
	run --separate-stderr $N --md "$H"
	assert_failure 1
	assert_line '| wan-t2v-1.3b-2gpu | NVIDIA L40S | latency<br>throughput | worse +5.5%<br>worse -5.2% | 29.965 ± 0.258<br>1.502 ± 0.013 | 31.604 ± 0.357<br>1.424 ± 0.016 | 40 / 20<br>40 / 20 | 4.5e-28<br>6.1e-28 | cf447aa..8fd6cad | 2026-01-02T16:00:00+00:00 |'
	[ "$(grep -c '^| wan-t2v' <<<"$output")" -eq 2 ]
	run --separate-stderr $N --md "$F/gated.jsonl"
	assert_failure 1
	assert_line "| wan-t2v-1.3b | NVIDIA H100 | latency | worse +8.0% | 10.000 ± 0.018 | 10.798 ± 0.017 | 12 / 12 | 6.4e-32 | $(commit_at 2026-02-01T11:00:00+00:00 | cut -c1-7)..$(commit_at 2026-02-01T12:00:00+00:00 | cut -c1-7) (1 untrusted run between) | 2026-02-01T12:00:00+00:00 |"
	run --separate-stderr $N "$F/gated.jsonl"
	assert_equal "$(jq -r .untrusted_between <<<"$output")" 1
}

@test "--md: two cohorts of one model and GPU are told apart by what differs in their identity" {
	cd "$BATS_TEST_TMPDIR"
	sed 's/"sw-a"/"sw-b"/; s/2026-02-01/2026-02-02/' "$F/gated.jsonl" >b.jsonl
	run --separate-stderr $N --md "$F/gated.jsonl" b.jsonl
	assert_failure 1
	assert_line --regexp '^\| wan-t2v-1\.3b \(software_profile_id sw-a\) \| NVIDIA H100 \| latency \| worse \+8\.0% \|.*\| 2026-02-01T12:00:00\+00:00 \|$'
	assert_line --regexp '^\| wan-t2v-1\.3b \(software_profile_id sw-b\) \| NVIDIA H100 \| latency \| worse \+8\.0% \|.*\| 2026-02-02T12:00:00\+00:00 \|$'
	# Alone, a cohort needs no more than its model.
	run --separate-stderr $N --md b.jsonl
	refute_output --partial software_profile_id
}

@test "--md: adjacent steps in one direction are a drift, with its total change from first to last" {
	cd "$BATS_TEST_TMPDIR"
	py -c '
import hashlib, json
noise = [0.01, -0.01, 0.0, 0.02, -0.02, 0.01, 0.0, -0.01, 0.01, -0.01]
for i in range(40):
    print(json.dumps({"model_id": "m", "gpu_type": "g",
        "timestamp": "2026-03-%02dT%02d:00:00+00:00" % (1 + i // 24, i % 24),
        "commit_sha": hashlib.sha1(b"%d" % i).hexdigest(),
        "latency": round(10 + 0.5 * (i // 10) + noise[i % 10], 3)}, separators=(",", ":")))
' >drift.jsonl
	first=$(sed -n 10p drift.jsonl | jq -r .commit_sha | cut -c1-7)
	last=$(sed -n 31p drift.jsonl | jq -r .commit_sha | cut -c1-7)
	run --separate-stderr $N --md drift.jsonl
	assert_failure 1
	[ "$(grep -c '^| m | g | latency | worse' <<<"$output")" -eq 3 ]
	assert_line "- m on g, latency: worse +15.0% over 3 steps, 10.000 → 11.500, $first..$last"
	# One step is no drift.
	head -n 20 drift.jsonl >step.jsonl
	run --separate-stderr $N --md step.jsonl
	assert_failure 1
	refute_output --partial Drift
}

@test "reads the same history from a store directory and from -H" {
	store_of "$H" "$BATS_TEST_TMPDIR/store"
	run --separate-stderr $N -s "$BATS_TEST_TMPDIR/store"
	assert_failure 1
	same_as "$F/default.out.jsonl"
	run --separate-stderr $N -H "$H"
	assert_failure 1
	same_as "$F/default.out.jsonl"
	# A stream repeating the store's records adds nothing.
	run --separate-stderr $N -s "$BATS_TEST_TMPDIR/store" -H "$H"
	assert_failure 1
	same_as "$F/default.out.jsonl"
}

@test "a store with no change points: no output, exit 0" {
	run --separate-stderr $N -s "$ROOT_DIR/fixtures/store"
	assert_success
	assert_output ""
	[ -z "$stderr" ]
}

@test "--incremental gives what a full run gives, append after append" {
	st=$BATS_TEST_TMPDIR/state.jsonl
	for n in 3 10 25 41 42 43 60 61 62 80 100 105; do
		head -n "$n" "$H" >"$BATS_TEST_TMPDIR/h.jsonl"
		full=$($N "$BATS_TEST_TMPDIR/h.jsonl") || true
		inc=$($N --incremental "$st" "$BATS_TEST_TMPDIR/h.jsonl") || true
		[ "$full" = "$inc" ] || { echo "differs after $n records" >&2; return 1; }
	done
	[ "$(head -n 1 "$st" | sed 's/,"sum":"[0-9a-f]\{64\}"}$/}/')" = '{"perf_changes_state":2,"window":50,"pvalue":0.001,"all":false}' ]
	# A rewritten history (a record gone from the middle) is analysed afresh.
	sed 5d "$H" >"$BATS_TEST_TMPDIR/h.jsonl"
	run $N --incremental "$st" "$BATS_TEST_TMPDIR/h.jsonl"
	assert_failure 1
	[ "$output" = "$($N "$BATS_TEST_TMPDIR/h.jsonl")" ]
}

# steps_history N FILE: N legacy records of one cohort, a level that steps
# now and then under noise (seeded), in time order.
steps_history() {
	py -c '
import json, random, sys
rng = random.Random(7)
level = 20.0
for i in range(int(sys.argv[1])):
    if rng.random() < 0.04:
        level *= 1 + rng.choice((-1, 1)) * rng.uniform(0.02, 0.08)
    print(json.dumps({"model_id": "m", "gpu_type": "NVIDIA H100",
        "timestamp": "2026-01-%02dT%02d:%02d:00+00:00" % (1 + i // 1440, i // 60 % 24, i % 60),
        "commit_sha": "%040x" % (i + 1), "latency": round(level + rng.gauss(0, 0.2), 3),
        "memory": round(4000 + 10 * rng.random(), 1)}, separators=(",", ":")))
' "$1" >"$2"
}

# compares STDERR: "made reused" from PERF_CHANGES_STATS's line.
compares() {
	sed -n 's/.*the merges compared \([0-9]*\) segments, reused \([0-9]*\)$/\1 \2/p' <<<"$1"
}

@test "--incremental keeps the merge's comparisons: an append compares only what the tail touches, the answer and the state a full run's" {
	st=$BATS_TEST_TMPDIR/state.jsonl h=$BATS_TEST_TMPDIR/h.jsonl
	steps_history 700 "$BATS_TEST_TMPDIR/all.jsonl"
	total_made=0 total_reused=0
	for n in 400 401 402 405 430 431 480 600 601 700; do
		head -n "$n" "$BATS_TEST_TMPDIR/all.jsonl" >"$h"
		full=$($N "$h") || true
		rm -f "$BATS_TEST_TMPDIR/fresh.jsonl"
		PERF_CHANGES_STATS=1 $N --incremental "$BATS_TEST_TMPDIR/fresh.jsonl" "$h" \
		    >/dev/null 2>"$BATS_TEST_TMPDIR/fresh.err" || true
		run --separate-stderr env PERF_CHANGES_STATS=1 $N --incremental "$st" "$h"
		[ "$output" = "$full" ] || { echo "differs after $n records" >&2; return 1; }
		cmp "$st" "$BATS_TEST_TMPDIR/fresh.jsonl"
		read -r made reused < <(compares "$stderr")
		read -r fresh_made _ < <(compares "$(cat "$BATS_TEST_TMPDIR/fresh.err")")
		echo "$n records: compared $made, reused $reused; afresh $fresh_made" >&2
		[ "$n" -eq 400 ] || [ "$made" -lt "$fresh_made" ]
		total_made=$((total_made + made)) total_reused=$((total_reused + reused))
	done
	# Every comparison is kept exactly: lo, index and hi, then %a floats.
	jq -e '.merge // [] | all(test("^[0-9]+ [0-9]+ [0-9]+( -?(0x[0-9a-f.]+p[-+][0-9]+|nan|inf)){5}$"))' "$st" >/dev/null
	[ "$(jq -s '[.[].merge // [] | length] | add' "$st")" -gt 10 ]
	[ "$total_reused" -gt $((2 * total_made)) ]
}

# resum FILE: every line of the state FILE given the checksum of what it
# holds now, as perf-changes writes it.
resum() {
	local l
	while IFS= read -r l; do
		[[ $l =~ ,\"sum\":\"[0-9a-f]*\"\}$ ]] && l="${l%"${BASH_REMATCH[0]}"}}"
		printf '%s,"sum":"%s"}\n' "${l%\}}" "$(printf '%s' "$l" | sha256sum | cut -d' ' -f1)"
	done <"$1" >"$1.tmp"
	mv "$1.tmp" "$1"
}

@test "--incremental reads a state without the merge's comparisons: the same answer, all compared, the state rewritten with them" {
	st=$BATS_TEST_TMPDIR/state.jsonl h=$BATS_TEST_TMPDIR/h.jsonl
	steps_history 501 "$BATS_TEST_TMPDIR/all.jsonl"
	head -n 500 "$BATS_TEST_TMPDIR/all.jsonl" >"$h"
	$N --incremental "$st" "$h" >/dev/null || true
	jq -c 'del(.merge)' "$st" >"$BATS_TEST_TMPDIR/old.jsonl"
	resum "$BATS_TEST_TMPDIR/old.jsonl"
	if grep -q merge "$BATS_TEST_TMPDIR/old.jsonl"; then return 1; fi
	cp "$BATS_TEST_TMPDIR/old.jsonl" "$st"
	cp "$BATS_TEST_TMPDIR/all.jsonl" "$h"
	full=$($N "$h") || true
	run --separate-stderr env PERF_CHANGES_STATS=1 $N --incremental "$st" "$h"
	[ "$output" = "$full" ]
	read -r made reused < <(compares "$stderr")
	[ "$reused" -lt "$made" ]
	grep -q '"merge":\["' "$st"
	# The split still resumed: the old state's digest is the new one's.
	cp "$BATS_TEST_TMPDIR/old.jsonl" "$st"
	run --separate-stderr $N --incremental "$st" "$h"
	[ "$output" = "$full" ]
	[ -z "$stderr" ]
}

@test "--incremental: a state of the earlier format (no checksums) is stale: named, analysed afresh, rewritten with checksums" {
	st=$BATS_TEST_TMPDIR/state.jsonl h=$BATS_TEST_TMPDIR/h.jsonl
	steps_history 300 "$h"
	$N --incremental "$st" "$h" >/dev/null || true
	cp "$st" "$BATS_TEST_TMPDIR/good.jsonl"
	full=$($N "$h") || true
	sed 's/,"sum":"[0-9a-f]*"}$/}/; 1s/"perf_changes_state":2/"perf_changes_state":1/' \
		"$BATS_TEST_TMPDIR/good.jsonl" >"$st"
	run --separate-stderr env PERF_CHANGES_STATS=1 $N --incremental "$st" "$h"
	[ "$output" = "$full" ]
	assert_equal "${stderr%%$'\n'*}" "$N: $st:1: a state of an earlier format, without checksums: ignoring the incremental state"
	read -r made reused < <(compares "$stderr")
	[ "$reused" -eq 0 ]
	cmp "$st" "$BATS_TEST_TMPDIR/good.jsonl"
}

@test "--incremental: an edited state line fails its checksum; it is named, the state ignored and rewritten, the answer the full run's" {
	st=$BATS_TEST_TMPDIR/state.jsonl h=$BATS_TEST_TMPDIR/h.jsonl
	steps_history 300 "$h"
	$N --incremental "$st" "$h" >/dev/null || true
	cp "$st" "$BATS_TEST_TMPDIR/good.jsonl"
	full=$($N "$h") || true
	l=$(grep -n '"merge":\["' "$st" | head -n 1 | cut -d: -f1)
	read -r lo idx hi mb rest <<<"$(sed -n "${l}p" "$st" | jq -r '.merge[0]')"
	: "$mb"
	# Parseable edits: a mean of 8.45e+270, another resume index.
	for edit in "s/\"$lo $idx $hi [^ ]* /\"$lo $idx $hi 0x1.fb8p+899 /" 's/"resume":\([0-9]*\)/"resume":1\1/'; do
		sed "${l}$edit" "$BATS_TEST_TMPDIR/good.jsonl" >"$st"
		not cmp -s "$st" "$BATS_TEST_TMPDIR/good.jsonl"
		run --separate-stderr $N --incremental "$st" "$h"
		[ "$output" = "$full" ]
		assert_equal "$stderr" "$N: $st:$l: checksum mismatch: ignoring the incremental state"
		cmp "$st" "$BATS_TEST_TMPDIR/good.jsonl"
	done
	# A line cut short, and the header's checksum edited.
	sed "${l}s/,\"merge\".*//" "$BATS_TEST_TMPDIR/good.jsonl" >"$st"
	run --separate-stderr $N --incremental "$st" "$h"
	[ "$output" = "$full" ]
	assert_equal "$stderr" "$N: $st:$l: malformed state line, no checksum: ignoring the incremental state"
	sed '1s/"sum":"./"sum":"x/' "$BATS_TEST_TMPDIR/good.jsonl" >"$st"
	run --separate-stderr $N --incremental "$st" "$h"
	[ "$output" = "$full" ]
	assert_equal "$stderr" "$N: $st:1: checksum mismatch: ignoring the incremental state"
	cmp "$st" "$BATS_TEST_TMPDIR/good.jsonl"
}

# set_line L FILTER OUT [jq args]: OUT is good.jsonl with jq's FILTER
# applied to its line L.
set_line() {
	local l=$1 f=$2 out=$3
	shift 3
	{
		head -n "$((l - 1))" "$BATS_TEST_TMPDIR/good.jsonl"
		sed -n "${l}p" "$BATS_TEST_TMPDIR/good.jsonl" | jq -c "$@" "$f"
		tail -n "+$((l + 1))" "$BATS_TEST_TMPDIR/good.jsonl"
	} >"$out"
}

@test "--incremental ignores a state with a malformed comparison, with a warning naming its line" {
	st=$BATS_TEST_TMPDIR/state.jsonl h=$BATS_TEST_TMPDIR/h.jsonl
	steps_history 300 "$h"
	$N --incremental "$st" "$h" >/dev/null || true
	cp "$st" "$BATS_TEST_TMPDIR/good.jsonl"
	full=$($N "$h") || true
	# The first series with comparisons, on line l of the state.
	l=$(grep -n '"merge":\["' "$st" | head -n 1 | cut -d: -f1)
	entry=$(sed -n "${l}p" "$st" | jq -r '.merge[0]')
	n=$(sed -n "${l}p" "$st" | jq -r '.n')
	read -r lo idx hi rest <<<"$entry"
	for bad in "$lo $idx $hi" "$entry 0x1p+0" "$entry " " $entry" "$lo  $idx $hi $rest" \
	    "$lo $idx $((n + 1)) $rest" "$idx $idx $hi $rest" "$lo $hi $idx $rest" \
	    "-1 $idx $hi $rest" "$lo $idx $hi ${rest/ / x}" "$lo $idx $hi ${rest/ /	}" \
	    "99999999999999999999 $idx $hi $rest" 7; do
		if [ "$bad" = 7 ]; then
			set_line "$l" '.merge[0] = 7' "$st"
		else
			# shellcheck disable=SC2016 # $b is jq's
			set_line "$l" '.merge[0] = $b' "$st" --arg b "$bad"
		fi
		# Its checksum holds: what is wrong is what it says.
		resum "$st"
		run --separate-stderr $N --incremental "$st" "$h"
		[ "$output" = "$full" ] || { echo "output differs for '$bad'" >&2; return 1; }
		assert_equal "$stderr" "$N: $st:$l: malformed state line: ignoring the incremental state"
		cmp "$st" "$BATS_TEST_TMPDIR/good.jsonl"
	done
	# Not an array at all.
	set_line "$l" '.merge = "x"' "$st"
	resum "$st"
	run --separate-stderr $N --incremental "$st" "$h"
	[ "$output" = "$full" ]
	assert_equal "$stderr" "$N: $st:$l: malformed state line: ignoring the incremental state"
}

@test "--incremental ignores a state written for other options, with a warning" {
	st=$BATS_TEST_TMPDIR/state.jsonl
	$N --incremental "$st" --window 20 "$H" >/dev/null || true
	run --separate-stderr $N --incremental "$st" "$H"
	assert_failure 1
	same_as "$F/default.out.jsonl"
	assert_equal "$stderr" "$N: $st:1: ignoring the incremental state: not this program's state for these options"
	grep -q '"window":50' "$st"
}

@test "the window, p-value and magnitude change the answer" {
	run $N --window 10 --metric latency "$H"
	assert_failure 1
	run $N --min-magnitude 0.06 --metric latency "$H"
	assert_success
	assert_output ""
	run $N --pvalue 1e-30 --metric latency "$H"
	assert_success
	assert_output ""
}

@test "rejects bad option values with usage, exit 2" {
	for a in "--window 1" "--window x" "--pvalue 0" "--pvalue 2" "--min-magnitude -1" \
		"--since yesterday" "--last 0" "--since 2026-01-01 --last 3"; do
		# shellcheck disable=SC2086 # the words of $a are the arguments
		run --separate-stderr $N $a "$H"
		assert_failure 2
		assert_output ""
		[[ $stderr == *"usage: $N"* ]]
	done
}

@test "--metric: a name no metric can have is a usage error, exit 2" {
	# Any other name is a named metric's (perfkite(7) "Named metrics").
	for a in "" "$(printf 'a\tb')" "$(printf '%0129d' 0)"; do
		run --separate-stderr $N --metric "$a" "$H"
		assert_failure 2
		assert_output ""
		[[ $stderr == "$N: --metric: '"*"' is not a metric name: "*"usage: $N"* ]]
	done
}

@test "a missing metric is filled from the neighbours; a record without any is skipped" {
	run --separate-stderr $N --metric dit_time_s "$H"
	assert_success
	assert_output ""
	printf '{"model_id":"m","gpu_type":"g","timestamp":"2026-01-01T00:00:00+00:00"}\n' | $N
}

@test "a metric that is not a number is an error with its line, the rest still read" {
	printf '%s\n{"model_id":"m","latency":"fast"}\n{"model_id":"m","latency":NaN}\n' \
		"$(head -n 1 "$H")" >"$BATS_TEST_TMPDIR/in.jsonl"
	run --separate-stderr $N "$BATS_TEST_TMPDIR/in.jsonl"
	assert_failure 2
	assert_output ""
	assert_equal "$stderr" "$N: $BATS_TEST_TMPDIR/in.jsonl:2: latency must be a number
$N: $BATS_TEST_TMPDIR/in.jsonl:3: latency is not a finite number"
}

@test "a blank line is skipped" {
	{ head -n 50 "$H"; echo; tail -n +51 "$H"; } >"$BATS_TEST_TMPDIR/in.jsonl"
	run --separate-stderr $N "$BATS_TEST_TMPDIR/in.jsonl"
	assert_failure 1
	same_as "$F/default.out.jsonl"
}

@test "reads a line over 64 KiB whole" {
	pad=$(head -c 100000 /dev/zero | tr '\0' y)
	run --separate-stderr $N <<<"{\"model_id\":\"m\",\"latency\":1.0,\"pad\":\"$pad\"}"
	assert_success
	[ -z "$stderr" ]
}

REC='{"model_id":"m","latency":1.0}'

@test "empty input gives empty output" { check_empty_input $N; }
@test "reports malformed JSON, non-objects and trailing garbage by line, keeps valid lines" {
	printf '%s\n{"benchmark_id": nope}\n%s\n[1,2]\n%s junk\n' "$REC" "$REC" "$REC" >"$BATS_TEST_TMPDIR/in.jsonl"
	run --separate-stderr $N "$BATS_TEST_TMPDIR/in.jsonl"
	assert_failure 2
	assert_output ""
	assert_equal "$stderr" "$N: $BATS_TEST_TMPDIR/in.jsonl:2: invalid JSON at column 18: unexpected 'n'
$N: $BATS_TEST_TMPDIR/in.jsonl:4: not a JSON object (found an array)
$N: $BATS_TEST_TMPDIR/in.jsonl:5: unexpected text after the record"
}
@test "a full disk on stdout is exit 2, never success" { check_full_disk $N "$H"; }
@test "an unknown option prints usage on stderr, exit 2" { check_unknown_option $N; }
@test "-h prints usage on stdout, exit 0" { check_help $N; }
@test "--version prints the version" { check_version $N; }

@test "the answer does not depend on the number of threads" {
	run -1 env PERF_STORE_THREADS=1 $N "$H"
	one=$output
	run -1 env PERF_STORE_THREADS=8 $N "$H"
	assert_equal "$output" "$one"
}

@test "--batch analyses only the cohorts of the records given" {
	head -n 1 "$H" >"$BATS_TEST_TMPDIR/v2.jsonl"
	tail -n 1 "$H" >"$BATS_TEST_TMPDIR/legacy.jsonl"
	run --separate-stderr $N --batch "$BATS_TEST_TMPDIR/v2.jsonl" "$H"
	assert_failure 1
	same_as "$F/default.out.jsonl"
	run --separate-stderr $N --batch "$BATS_TEST_TMPDIR/legacy.jsonl" "$H"
	assert_success
	assert_output ""
}

@test "a store read directory by directory gives what the whole store gives, cohorts spanning directories included" {
	: >"$BATS_TEST_TMPDIR/empty.jsonl"
	# top: some records at the top of the store; own: the legacy cohort
	# in a directory of its own, the v2 one over three (read again).
	for layout in top own; do
		st=$BATS_TEST_TMPDIR/store-$layout
		py -c '
import json, os, sys
for i, line in enumerate(open(sys.argv[1])):
    legacy = "workload_id" not in json.loads(line)
    if sys.argv[3] == "top":
        d = sys.argv[2] if i % 7 == 0 else os.path.join(sys.argv[2], "d%d" % (i % 3), "sub" * (i % 2))
    else:
        d = os.path.join(sys.argv[2], "legacy" if legacy else "d%d" % (i % 3))
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "r%04d.json" % i), "w") as f:
        f.write(line)
' "$H" "$st" $layout
		# With a stream too, the store is read whole before the analysis.
		run -1 --separate-stderr $N -s "$st" -H "$BATS_TEST_TMPDIR/empty.jsonl"
		whole=$output
		[ "$(printf '%s\n' "$whole" | wc -l)" -eq 2 ] && [ -z "$stderr" ]
		for t in 1 2 4; do
			run -1 --separate-stderr env PERF_STORE_THREADS=$t $N -s "$st"
			assert_equal "$output" "$whole"
			[ -z "$stderr" ]
		done
	done
}

@test "the quick record scanner gives what the full parser gives, hostile records included" {
	st=$BATS_TEST_TMPDIR/store
	py -c '
import json, os, sys
deep = "[" * 40 + "1" + "]" * 40
for i, line in enumerate(open(sys.argv[1])):
    r = json.loads(line)
    t = json.dumps(r, indent=2) if i % 2 else json.dumps(r, separators=(",", ":"))
    k = i % 14
    if k == 2:
        t = t.replace("\"latency\"", "\"l\\u0061tency\"", 1)
    elif k == 3:
        t = "{\"latency\": 999, \"model_id\": 7," + t[1:]
    elif k == 4:
        t = t.replace("\"memory\"", "\"memory\": {\"v\": 1}, \"was_memory\"", 1)
    elif k == 5 and isinstance(r.get("latency"), float):
        t = t.replace(json.dumps(r["latency"]), "%E" % r["latency"], 1)
    elif k == 6:
        t = t.replace("\"throughput\"", "\"throughput\": NaN, \"was_throughput\"", 1)
    elif k == 7:
        t = "{\"extra\": " + deep + "," + t[1:]
    elif k == 8:
        t = "{\"note\": \"caf\u00e9 \u0141\"," + t[1:]
    elif k == 9:
        t = t[:len(t) // 2]
    elif k == 10:
        t = t + " x"
    elif k == 11:
        t = "{\"note\": \"a\\tb\\\"c\"," + t[1:]
    elif k == 12:
        t = "{\"memory\": -0, \"dit_time_s\": 1e400," + t[1:].replace("\"memory\"", "\"was_memory\"", 1)
    elif k == 13:
        t = "{\"w\\u0001\": [{\"\u00e9\": 1e-400}]," + t[1:]
    d = os.path.join(sys.argv[2], "d%d" % (i % 3))
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "r%04d.json" % i), "w", encoding="utf-8") as f:
        f.write(t)
' "$H" "$st"
	run --separate-stderr $N -s "$st"
	fast_status=$status fast_out=$output fast_err=$stderr
	[ -n "$fast_out" ]
	[[ "$fast_err" == *"skipping invalid JSON in the history"* ]]
	run --separate-stderr env PERF_STORE_SLOW_PARSE=1 $N -s "$st"
	assert_equal "$status" "$fast_status"
	assert_equal "$output" "$fast_out"
	assert_equal "$stderr" "$fast_err"
}

@test "record files read in batches (io_uring) give what files read one by one give" {
	# More files in a directory than one batch takes, some too long for a
	# batch's buffer, a link, a subdirectory between them, an invalid file.
	st=$BATS_TEST_TMPDIR/store
	py -c '
import json, os, sys
lines = open(sys.argv[1]).read().splitlines()
for i, line in enumerate(lines):
    r = json.loads(line)
    if i % 9 == 4:
        r["note"] = "x" * (16384 + i)
    d = os.path.join(sys.argv[2], "d%d" % (i % 5 == 0), "sub" if i % 11 == 5 else "")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "r%04d.json" % i), "w") as f:
        f.write(json.dumps(r, indent=2))
with open(os.path.join(sys.argv[2], "d0", "bad.json"), "w") as f:
    f.write("{\"latency\": ")
os.symlink(os.path.join("..", "d1", "r0000.json"), os.path.join(sys.argv[2], "d0", "link.json"))
' "$H" "$st"
	[ "$(find "$st/d0" -maxdepth 1 -name '*.json' | wc -l)" -gt 64 ]
	run --separate-stderr env PERF_FILE_BATCH=0 $N -s "$st"
	plain_status=$status plain_out=$output plain_err=$stderr
	[ -n "$plain_out" ]
	[[ "$plain_err" == *"d0/bad.json:1: skipping invalid JSON in the history"* ]] || { echo "$plain_err"; false; }
	for t in 1 2; do
		run --separate-stderr env PERF_STORE_THREADS=$t $N -s "$st"
		assert_equal "$status" "$plain_status"
		assert_equal "$output" "$plain_out"
		assert_equal "$stderr" "$plain_err"
	done
}

@test "a history spilled to a file gives what one held in memory gives" {
	gzip -c "$H" >"$BATS_TEST_TMPDIR/h.jsonl.gz"
	run -1 --separate-stderr $N -H "$BATS_TEST_TMPDIR/h.jsonl.gz"
	held=$output
	[ -n "$held" ] && [ -z "$stderr" ]
	# Every point spilled as soon as it is read.
	run -1 --separate-stderr env PERF_CHANGES_SPILL=1 TMPDIR="$BATS_TEST_TMPDIR" \
		$N -H "$BATS_TEST_TMPDIR/h.jsonl.gz" "$H"
	assert_equal "$output" "$held"
	[ -z "$stderr" ]
	# and the file is gone
	[ -z "$(find "$BATS_TEST_TMPDIR" -name 'perf-changes.*')" ]
}

@test "a store that is not there is exit 2; an empty one, or an empty remote, a warning (issue 22 item 4)" {
	run --separate-stderr $N -s "$BATS_TEST_TMPDIR/no/such/dir"
	assert_failure 2
	assert_equal "$stderr" "perf-changes: $BATS_TEST_TMPDIR/no/such/dir: no such store (a directory store must exist: create it, or name the store with --store)"
	assert_output ""
	mkdir "$BATS_TEST_TMPDIR/empty"
	run --separate-stderr $N -s "$BATS_TEST_TMPDIR/empty"
	assert_success
	assert_equal "$stderr" "perf-changes: $BATS_TEST_TMPDIR/empty: the store holds no records (a new store, or the wrong one?)"
	git init -q --bare "$BATS_TEST_TMPDIR/empty.git"
	run --separate-stderr $N -s "git+file://$BATS_TEST_TMPDIR/empty.git" --cache "$BATS_TEST_TMPDIR/cache"
	assert_success
	[[ $stderr == *"perf-changes: git+file://$BATS_TEST_TMPDIR/empty.git: the store holds no records"* ]]
	# A history stream with records: the empty store is no news.
	run --separate-stderr $N -s "$BATS_TEST_TMPDIR/empty" -H "$H"
	[[ $stderr != *"holds no records"* ]]
}

# The fixture's latency and throughput step: the records before and at it.
PREV=cf447aab518ed47536698f57bb8880b46c13fe3c
AT=8fd6cad9d1ca63f777b53bfb39619896663f9cea
K1=1234567890abcdef1234567890abcdef12345678
K2=abcdef01234567890abcdef01234567890abcdef

# put_report STORE NAME GOOD BAD METRIC [JQ]: a bisect report as perf-bisect
# --store keeps it (two culprits, K1 the larger), edited by the jq filter JQ.
put_report() {
	mkdir -p "$1/.perfkite/bisect"
	jq -n --arg good "$3" --arg bad "$4" --arg metric "$5" --arg k1 $K1 --arg k2 $K2 '{
		schema: "perfkite.bisect-report/1", status: "found", good: $good, bad: $bad,
		commits: 12, configs: ["bench.json"], metric: $metric,
		culprits: [{commit: $k1, parent: $good, share: 0.75, subject: "slow path",
		    author: "A <a@example.com>", dependency_change: false},
		  {commit: $k2, parent: $good, share: 0.25, subject: "bump dep",
		    author: "A <a@example.com>", dependency_change: true}],
		probes: [], skipped: [], created_at: "2026-01-03T00:00:00Z"} | '"${6:-.}" \
		>"$1/.perfkite/bisect/$2"
}

# without_culprits: stdin without the members a stored bisect adds.
without_culprits() {
	sed -E 's/,"culprit":\{[^}]*\}//; s/,"culprits":\[[^]]*\]//'
}

@test "a stored bisect of a change point's range names its culprits, on that metric only" {
	cd "$BATS_TEST_TMPDIR"
	S=$BATS_TEST_TMPDIR/store
	store_of "$H" "$S"
	put_report "$S" 20260103T000000Z_cf447aab518e_8fd6cad9d1ca.json $PREV $AT latency
	run --separate-stderr $N -s "$S"
	assert_failure 1
	[ -z "$stderr" ]
	printf '%s\n' "$output" >"$BATS_TEST_TMPDIR/out.jsonl"
	# Every line as it was, but the latency change point's.
	diff -u "$F/default.out.jsonl" <(without_culprits <"$BATS_TEST_TMPDIR/out.jsonl")
	assert_equal "$(grep -c culprit "$BATS_TEST_TMPDIR/out.jsonl")" 1
	assert_equal "$(jq -c 'select(.culprit) | [.metric, .culprit]' "$BATS_TEST_TMPDIR/out.jsonl")" \
		'["latency",{"commit":"'$K1'","short":"1234567","subject":"slow path","share":0.75,"dependency_change":false,"report":".perfkite/bisect/20260103T000000Z_cf447aab518e_8fd6cad9d1ca.json"}]'
	assert_equal "$(jq -r 'select(.culprits) | [.culprits[] | "\(.short) \(.share) \(.dependency_change)"] | join(",")' "$BATS_TEST_TMPDIR/out.jsonl")" \
		"1234567 0.75 false,abcdef0 0.25 true"
	# The Markdown row says it.
	run --separate-stderr $N -s "$S" --md
	assert_failure 1
	assert_line --index 3 "| wan-t2v-1.3b-2gpu | NVIDIA L40S | latency<br>throughput | worse +5.5%, culprit: 1234567<br>worse -5.2% | 29.965 ± 0.258<br>1.502 ± 0.013 | 31.604 ± 0.357<br>1.424 ± 0.016 | 40 / 20<br>40 / 20 | 4.5e-28<br>6.1e-28 | cf447aa..8fd6cad | 2026-01-02T16:00:00+00:00 |"
	diff -u "$F/md.out.md" <(printf '%s\n' "$output" | sed 's/, culprit: 1234567//')
}

@test "stored bisects that cover no change point leave the output byte for byte as it was" {
	S=$BATS_TEST_TMPDIR/store
	store_of "$H" "$S"
	# Did not reproduce; another range; another metric; another cohort
	# (from a change point of another cohort: --from-change).
	put_report "$S" a.json $PREV $AT latency '.status = "not_reproduced" | .culprits = []'
	put_report "$S" b.json $PREV 0123456789abcdef0123456789abcdef01234567 latency
	put_report "$S" c.json $PREV $AT peak_memory_mb
	put_report "$S" d.json $PREV $AT latency '.change = {workload_id: "other", variant_id: "1.3b-sp2",
		benchmark_version: "3", recipe_fingerprint: "ec56b019a3e37278",
		hardware_profile_id: "hw-41f86157a00d7e43", software_profile_id: "sw-51a21bb706c36ab3",
		model_id: "wan-t2v-1.3b-2gpu", gpu_type: "NVIDIA L40S"}'
	run --separate-stderr $N -s "$S"
	assert_failure 1
	same_as "$F/default.out.jsonl"
	[ -z "$stderr" ]
	run --separate-stderr $N -s "$S" --md
	assert_failure 1
	same_as "$F/md.out.md"
}

@test "a stored bisect covers its own cohort, or a change point at its culprit; the newest wins" {
	S=$BATS_TEST_TMPDIR/store
	store_of "$H" "$S"
	cohort='.change = {workload_id: "wan-t2v", variant_id: "1.3b-sp2", benchmark_version: "3",
		recipe_fingerprint: "ec56b019a3e37278", hardware_profile_id: "hw-41f86157a00d7e43",
		software_profile_id: "sw-51a21bb706c36ab3", model_id: "wan-t2v-1.3b-2gpu",
		gpu_type: "NVIDIA L40S", metric: "latency"}'
	put_report "$S" old.json $PREV $AT latency "$cohort | .culprits |= .[:1] | .created_at = \"2026-01-02T00:00:00Z\""
	put_report "$S" new.json $PREV ${AT:0:12} latency "$cohort | .culprits[0].commit = \"$K2\" | .culprits |= .[:1]"
	run --separate-stderr $N -s "$S" --metric latency
	assert_failure 1
	assert_equal "$(jq -r '.culprit | "\(.commit) \(.report)"' <<<"$output")" \
		"$K2 .perfkite/bisect/new.json"
	# A wider bisect (its good earlier) whose culprit is the change point's
	# commit: that culprit alone.
	rm "$S"/.perfkite/bisect/*
	put_report "$S" wide.json 0123456789abcdef0123456789abcdef01234567 ffffffffffffffffffffffffffffffffffffffff \
		throughput ".culprits[1].commit = \"$AT\""
	run --separate-stderr $N -s "$S" --metric throughput
	assert_failure 1
	assert_equal "$(jq -c '[.culprit.commit, .culprit.subject, has("culprits")]' <<<"$output")" \
		"[\"$AT\",\"bump dep\",false]"
}

@test "a malformed bisect report is a warning naming its file, never fatal to the gate" {
	S=$BATS_TEST_TMPDIR/store
	store_of "$H" "$S"
	put_report "$S" good.json $PREV $AT latency
	printf '{\n  "schema": "perfkite.bisect-report/1",\n  "status": \n' >"$S/.perfkite/bisect/broken.json"
	put_report "$S" schema.json $PREV $AT latency '.schema = "perfkite.bisect-report/9"'
	put_report "$S" nobad.json $PREV $AT latency 'del(.bad)'
	put_report "$S" commit.json $PREV $AT latency '.culprits[0].commit = 7'
	# A change member missing its keys is a cohort no change point has.
	put_report "$S" partial.json $PREV $AT latency '.change = {workload_id: "wan-t2v"}'
	put_report "$S" legacy.json $PREV $AT latency '.change = {metric: "latency"}'
	echo '[]' >"$S/.perfkite/bisect/array.json"
	run --separate-stderr $N -s "$S"
	assert_failure 1
	assert_equal "$(jq -r 'select(.culprit) | .culprit.report' <<<"$output")" ".perfkite/bisect/good.json"
	d="perf-changes: $S/.perfkite/bisect"
	assert_equal "$(printf '%s\n' "$stderr" | LC_ALL=C sort)" "$(LC_ALL=C sort <<-EOF
		$d/broken.json:4: unexpected end of input
		$d/schema.json: not a bisect report: its schema is not perfkite.bisect-report/1
		$d/nobad.json: a bisect report needs good, bad and metric
		$d/commit.json: a culprit of a bisect report needs its commit
		$d/array.json: not a bisect report: not a JSON object
	EOF
	)"
}

@test "a git store's bisect reports are read from its cache" {
	S=$BATS_TEST_TMPDIR/store
	store_of "$H" "$S"
	put_report "$S" r.json $PREV $AT latency
	git init -q -b main "$S"
	git -C "$S" add -A
	git -C "$S" -c user.name=t -c user.email=t@example.com commit -qm store
	git clone -q --bare "$S" "$BATS_TEST_TMPDIR/store.git"
	run --separate-stderr $N -s "git+file://$BATS_TEST_TMPDIR/store.git" \
		--cache "$BATS_TEST_TMPDIR/cache" --metric latency
	assert_failure 1
	assert_equal "$(jq -r '.culprit.short' <<<"$output")" 1234567
}

# Named metrics (issue 24): fixtures/tests/named-metrics/gen-suite.py
# writes a suite of three benchmarks run nine times as scheduled-main
# builds; BM_Sort/1024 is 30% slower from the seventh run, and BM_Hash's
# "widgets" counter (no direction) steps from 7 to 9 there.
S=$FIXTURES/named-metrics/suite.jsonl

@test "named metrics: a series per metric; the 30% step on one benchmark's time is found, worse, exit 1" {
	run --separate-stderr $N "$S"
	assert_failure 1
	[ -z "$stderr" ]
	same_as "$FIXTURES/named-metrics/changes.out.jsonl"
	# time, cpu_time and items_per_second of BM_Sort/1024, each at the
	# seventh run, worse by its direction; nothing else but the counter.
	assert_equal "$(jq -r 'select(.model_id == "BM_Sort/1024") |
		[.metric, .unit, .better, .direction, .index, .n_before, .n_after,
		(.forward_change_percent | round)] | @tsv' <<<"$output")" \
		"$(printf '%s\n' "cpu_time	s	lower	worse	6	6	3	30" \
			"items_per_second	items/s	higher	worse	6	6	3	-23" \
			"time	s	lower	worse	6	6	3	30")"
	assert_equal "$(jq -r 'select(.model_id != "BM_Sort/1024") | "\(.model_id) \(.metric)"' \
		<<<"$output")" "BM_Hash widgets"
}

@test "named metrics: a step of a metric of unknown direction is reported, never worse, exit 0" {
	grep '"BM_Hash"' "$S" >"$BATS_TEST_TMPDIR/hash.jsonl"
	run --separate-stderr $N "$BATS_TEST_TMPDIR/hash.jsonl"
	assert_success
	[ -z "$stderr" ]
	assert_equal "$(jq -r '[.metric, .unit, (.better // "null"), .direction, .mean_before, .mean_after] |
		@tsv' <<<"$output")" "$(printf 'widgets\twidgets\tnull\tunknown\t7\t9')"
	run --separate-stderr $N --md "$BATS_TEST_TMPDIR/hash.jsonl"
	assert_success
	assert_line "| BM_Hash | CPU | widgets | changed +28.6% | 7 widgets ± 0 widgets | 9 widgets ± 0 widgets | 6 / 3 | <1e-300 | 2ec0dcc..0b08e01 | 2026-03-01T06:00:00+00:00 |"
}

@test "named metrics: the config's direction applies where the record states none" {
	# widgets of BM_Hash lower is better by the policy's glob: its step is worse.
	grep '"BM_Hash"' "$S" | sed 's/"comparison_status"/"regression_thresholds":{"metrics":{"BM_*\/widgets":{"better":"lower"}}},&/' \
		>"$BATS_TEST_TMPDIR/hash.jsonl"
	run --separate-stderr $N "$BATS_TEST_TMPDIR/hash.jsonl"
	assert_failure 1
	assert_equal "$(jq -r '[.metric, .better, .direction] | @tsv' <<<"$output")" \
		"$(printf 'widgets\tlower\tworse')"
}

@test "named metrics: --md shows each value scaled to its unit" {
	run --separate-stderr $N --md "$S"
	assert_failure 1
	same_as "$FIXTURES/named-metrics/changes.out.md"
	[[ $output == *"| cpu_time<br>items_per_second<br>time | worse +30.0%<br>worse -23.1%<br>worse +30.0% | 19.6 us ± 63.4 ns<br>52.3M items/s ± 168.9k items/s<br>20.0 us ± 64.7 ns |"* ]]
}

@test "named metrics: --metric NAME analyses that named metric alone, beside any of the six" {
	run --separate-stderr $N --metric time "$S"
	assert_failure 1
	assert_equal "$(jq -r '"\(.model_id) \(.metric)"' <<<"$output")" "BM_Sort/1024 time"
	run --separate-stderr $N --metric latency --metric widgets "$S" "$H"
	assert_failure 1
	assert_equal "$(jq -r '.metric' <<<"$output" | sort -u | tr '\n' ' ')" "latency widgets "
}

@test "named metrics: a store, a stream, --incremental and --batch give the operands' answer" {
	store_of "$S" "$BATS_TEST_TMPDIR/store"
	run -1 --separate-stderr $N -s "$BATS_TEST_TMPDIR/store"
	same_as "$FIXTURES/named-metrics/changes.out.jsonl"
	run -1 --separate-stderr $N -H "$S"
	same_as "$FIXTURES/named-metrics/changes.out.jsonl"
	st=$BATS_TEST_TMPDIR/state
	run -1 --separate-stderr $N -s "$BATS_TEST_TMPDIR/store" --incremental "$st"
	same_as "$FIXTURES/named-metrics/changes.out.jsonl"
	grep -q '"series":"v2.*u001dtime"' "$st"
	run -1 --separate-stderr $N -s "$BATS_TEST_TMPDIR/store" --incremental "$st"
	same_as "$FIXTURES/named-metrics/changes.out.jsonl"
	[ -z "$stderr" ]
	# --batch: the cohorts of a record of BM_Sort/1024, with all their metrics.
	grep -m 1 '"BM_Sort/1024"' "$S" >"$BATS_TEST_TMPDIR/batch.jsonl"
	run -1 --separate-stderr $N -s "$BATS_TEST_TMPDIR/store" --batch "$BATS_TEST_TMPDIR/batch.jsonl"
	assert_equal "$(jq -r '.metric' <<<"$output" | tr '\n' ' ')" "cpu_time items_per_second time "
}

@test "named metrics beside FastVideo's history leave its change points byte for byte" {
	run -1 --separate-stderr $N "$H" "$S"
	[ -z "$stderr" ]
	# Lines pass through untouched: the FastVideo cohort's, as without the suite.
	diff -u "$F/default.out.jsonl" <(grep -v '"unit":' <<<"$output")
	[ "$(grep -c '"unit":' <<<"$output")" -eq 4 ]
}

@test "named metrics: an invalid metrics member is an error with its line, the rest still read" {
	{
		head -n 1 "$S"
		printf '{"model_id":"m","metrics":{"t":{"value":"fast","unit":"s"}}}\n'
	} >"$BATS_TEST_TMPDIR/in.jsonl"
	run --separate-stderr $N "$BATS_TEST_TMPDIR/in.jsonl"
	assert_failure 2
	assert_output ""
	[[ $stderr == "$N: $BATS_TEST_TMPDIR/in.jsonl:2: metrics."* ]]
}

@test "named metrics: the runs between the points of a named series are its cohort's, with or without the metric" {
	# A pull-request run with the metric and a failed run without any,
	# between the sixth and seventh scheduled runs of BM_Sort/1024.
	{
		cat "$S"
		grep -m 1 '"BM_Sort/1024"' "$S" | sed 's/T00:00:00/T05:20:00/; s/"scheduled_main"/"pull_request"/'
		printf '%s\n' '{"model_id":"BM_Sort/1024","gpu_type":"CPU","timestamp":"2026-03-01T05:40:00+00:00","commit_sha":"f","success":false,"run_source":"scheduled_main","result_schema_version":2,"workload_id":"bench_suite","variant_id":"BM_Sort/1024","benchmark_version":1,"recipe_fingerprint":"gb-BM_Sort/1024","hardware_profile_id":"hw-cpu","software_profile_id":"sw-gb","comparison_status":"INFRA_ERROR"}'
	} >"$BATS_TEST_TMPDIR/in.jsonl"
	run --separate-stderr $N --metric time "$BATS_TEST_TMPDIR/in.jsonl"
	assert_failure 1
	assert_equal "$(jq -r '[.metric, .index, .untrusted_between] | @tsv' <<<"$output")" "$(printf 'time\t6\t2')"
}

@test "named metrics: a stored bisect of NAME, BENCHMARK/NAME or the change point names its culprit there alone" {
	cd "$BATS_TEST_TMPDIR"
	store_of "$S" store
	run --separate-stderr $N -s store
	assert_failure 1
	printf '%s\n' "$output" >before.jsonl
	NPREV=2ec0dccd2d1674b5de0633cd0d4efba3023549ab
	NAT=0b08e01141bdaae08b95224c9f4ef2aa2f06259f
	# perf-bisect --metric BM_Sort/1024/time: that benchmark's time alone.
	put_report store a.json $NPREV $NAT BM_Sort/1024/time
	run --separate-stderr $N -s store
	assert_failure 1
	[ -z "$stderr" ]
	assert_equal "$(jq -r 'select(.culprit) | "\(.model_id) \(.metric) \(.culprit.short)"' <<<"$output")" \
		"BM_Sort/1024 time 1234567"
	diff -u before.jsonl <(without_culprits <<<"$output")
	# Another benchmark's name, or the six's key with a benchmark: nothing.
	rm store/.perfkite/bisect/a.json
	put_report store b.json $NPREV $NAT BM_Hash/time
	put_report store c.json $NPREV $NAT BM_Sort/4096/cpu_time
	run --separate-stderr $N -s store
	assert_failure 1
	same_as before.jsonl
	# perf-bisect --from-change on the widgets step (no direction): its
	# metric is the line's name, its cohort the line's.
	rm store/.perfkite/bisect/*.json
	grep '"metric":"widgets"' before.jsonl >change.jsonl
	put_report store d.json $NPREV $NAT widgets ".change = $(cat change.jsonl)"
	run --separate-stderr $N -s store
	assert_failure 1
	[ -z "$stderr" ]
	assert_equal "$(jq -r 'select(.culprit) | "\(.model_id) \(.metric) \(.culprit.short)"' <<<"$output")" \
		"BM_Hash widgets 1234567"
	diff -u before.jsonl <(without_culprits <<<"$output")
}

# --- --md-file: the table of --md written to a file by the same run ------

# md_file_same ARGS...: perf-changes ARGS --md-file FILE prints what
# perf-changes ARGS prints (stdout, stderr, status, and the --incremental
# state it leaves, when MDF_STATE names it), and FILE holds byte for byte
# what perf-changes ARGS --md prints; with --md as well, stdout and FILE
# are both that. MDF_RESET, a command, runs before each run.
md_file_same() {
	local d=$BATS_TEST_TMPDIR/mdf k rc
	local -a status=() extra
	rm -rf "$d"
	mkdir "$d"
	for k in plain md with both; do
		case $k in
		plain) extra=() ;;
		md) extra=(--md) ;;
		with) extra=(--md-file "$d/with.md") ;;
		both) extra=(--md --md-file "$d/both.md") ;;
		esac
		${MDF_RESET:-:}
		rc=0
		$N "$@" "${extra[@]}" >"$d/$k.out" 2>"$d/$k.err" || rc=$?
		status+=("$rc")
		[ -z "${MDF_STATE:-}" ] || cp "$MDF_STATE" "$d/$k.state"
	done
	# Something to compare: the table, and the run's own words.
	[ -s "$d/md.out" ]
	grep -q '^## Change points$' "$d/md.out"
	assert_equal "${status[*]}" "${status[0]} ${status[1]} ${status[0]} ${status[1]}"
	cmp "$d/plain.out" "$d/with.out"
	cmp "$d/plain.err" "$d/with.err"
	cmp "$d/md.out" "$d/with.md"
	cmp "$d/md.out" "$d/both.out"
	cmp "$d/md.err" "$d/both.err"
	cmp "$d/md.out" "$d/both.md"
	if [ -n "${MDF_STATE:-}" ]; then
		cmp "$d/plain.state" "$d/with.state"
		cmp "$d/md.state" "$d/both.state"
	fi
	# No temporary file left beside it.
	assert_equal "$(find "$d" -name '.*' -type f | wc -l)" 0
	MDF_STATUS=${status[0]}
}

@test "--md-file: the file is the --md table, stdout, stderr and status the plain run's, over the fixture history" {
	md_file_same "$H"
	assert_equal "$MDF_STATUS" 1
	cmp "$F/md.out.md" "$BATS_TEST_TMPDIR/mdf/with.md"
	cmp "$F/default.out.jsonl" "$BATS_TEST_TMPDIR/mdf/with.out"
	md_file_same --all "$H"
	md_file_same --last 5 "$H"
	md_file_same --since 2026-01-03T00:00:00Z "$H"
	md_file_same --metric memory "$H"
	assert_equal "$MDF_STATUS" 0
	md_file_same --json "$H"
	md_file_same --batch "$F/gated.jsonl" "$F/gated.jsonl" "$H"
	md_file_same -w 10 -p 0.01 --min-magnitude 0.01 --min-points 5 "$H"
	# No change point at all: "No change points." in the file.
	md_file_same --last 1 "$H"
	assert_equal "$MDF_STATUS" 0
	cmp "$BATS_TEST_TMPDIR/mdf/with.md" <(printf '## Change points\n\nNo change points.\n')
}

@test "--md-file: an invalid record is exit 2 as without it, the table of the valid ones written" {
	{ cat "$H"; printf '{"model_id":"m","latency":"fast"}\n'; } >"$BATS_TEST_TMPDIR/in.jsonl"
	md_file_same "$BATS_TEST_TMPDIR/in.jsonl"
	assert_equal "$MDF_STATUS" 2
	grep -q "in.jsonl:$(($(wc -l <"$H") + 1)): latency must be a number" "$BATS_TEST_TMPDIR/mdf/with.err"
	cmp "$F/md.out.md" "$BATS_TEST_TMPDIR/mdf/with.md"
}

@test "--md-file: named metrics, with and without --metric NAME" {
	md_file_same "$S"
	assert_equal "$MDF_STATUS" 1
	cmp "$FIXTURES/named-metrics/changes.out.md" "$BATS_TEST_TMPDIR/mdf/with.md"
	md_file_same --metric time "$S"
	md_file_same --metric time --metric latency "$S"
}

@test "--md-file: a store with a stored bisect's culprit, --batch, -H, and --incremental" {
	cd "$BATS_TEST_TMPDIR"
	store_of "$H" store
	put_report store 20260103T000000Z_cf447aab518e_8fd6cad9d1ca.json $PREV $AT latency
	md_file_same -s store
	assert_equal "$MDF_STATUS" 1
	grep -q ', culprit: 1234567' mdf/with.md
	grep -q '"culprit":' mdf/with.out
	md_file_same -s store --last 10
	head -n 1 "$H" >v2.jsonl
	md_file_same -s store --batch v2.jsonl --last 10
	mkdir empty-store
	md_file_same -s empty-store -H "$H"
	# --incremental: each run from the same state, the state it leaves the same.
	head -n 80 "$H" >h80.jsonl
	$N --incremental base.state h80.jsonl >/dev/null || true
	[ -s base.state ]
	MDF_RESET="cp base.state run.state" MDF_STATE=run.state md_file_same --incremental run.state "$H"
	assert_equal "$MDF_STATUS" 1
	cmp "$F/md.out.md" mdf/with.md
	MDF_RESET="cp base.state run.state" MDF_STATE=run.state md_file_same -s store \
		--incremental run.state --batch v2.jsonl
	# Named metrics from a store, with a stored bisect of one.
	rm -rf store
	store_of "$S" store
	put_report store a.json 2ec0dccd2d1674b5de0633cd0d4efba3023549ab \
		0b08e01141bdaae08b95224c9f4ef2aa2f06259f BM_Sort/1024/time
	md_file_same -s store
	grep -q ', culprit: 1234567' mdf/with.md
}

@test "--md-file: a file that cannot be written is exit 2 with one line naming it; nothing half-written" {
	cd "$BATS_TEST_TMPDIR"
	$N "$H" >plain.out 2>/dev/null || true
	# No such directory.
	run --separate-stderr $N --md-file nodir/t.md "$H"
	assert_failure 2
	assert_equal "$stderr" "$N: nodir/t.md: cannot write the Markdown table: No such file or directory"
	cmp plain.out <(printf '%s\n' "$output")
	[ ! -e nodir ]
	# A directory: refused, left as it was.
	mkdir dir
	echo kept >dir/f
	run --separate-stderr $N --md-file dir "$H"
	assert_failure 2
	assert_equal "$stderr" "$N: dir: cannot write the Markdown table: Is a directory"
	assert_equal "$(ls -A dir)" f
	assert_equal "$(cat dir/f)" kept
	# A write that fails midway (no room for a byte: RLIMIT_FSIZE, the
	# signal ignored, so write(2) says EFBIG): the old table stays whole,
	# no temporary file is left.
	mkdir out
	printf 'the old table\n' >out/t.md
	run --separate-stderr bash -c 'trap "" XFSZ; ulimit -f 0; exec "$@" 2>&1' - \
		$N --md-file out/t.md "$H"
	assert_failure 2
	assert_equal "$(grep "^$N:" <<<"$output")" "$N: out/t.md: cannot write the Markdown table: File too large"
	cmp plain.out <(grep -v "^$N:" <<<"$output")
	assert_equal "$(cat out/t.md)" "the old table"
	assert_equal "$(ls -A out)" t.md
}

@test "--md-file: never a file the run reads or writes otherwise; an empty name: usage, exit 2" {
	cd "$BATS_TEST_TMPDIR"
	cp "$H" h.jsonl
	head -n 1 "$H" >b.jsonl
	$N --incremental st h.jsonl >/dev/null || true
	cp st st.orig
	for args in "--md-file h.jsonl h.jsonl" "--md-file ./h.jsonl -H h.jsonl" \
		"--md-file b.jsonl --batch b.jsonl h.jsonl" "--md-file st --incremental st h.jsonl"; do
		# shellcheck disable=SC2086 # the words of args
		run --separate-stderr $N $args
		assert_failure 2
		assert_output ""
		[[ ${stderr_lines[0]} == "$N: --md-file "*": is "*"; refusing to overwrite it" ]]
		[[ ${stderr_lines[1]} == "usage: perf-changes "* ]]
	done
	cmp h.jsonl "$H"
	cmp b.jsonl <(head -n 1 "$H")
	cmp st st.orig
	run --separate-stderr $N --md-file '' h.jsonl
	assert_failure 2
	assert_equal "${stderr_lines[0]}" "$N: --md-file: an empty file name"
}
