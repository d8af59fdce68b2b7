#!/usr/bin/env bats
# Decisions (perf-seed(1) accept, acknowledge, invalid, revert, decisions;
# perfkite(7) "Decisions"): recorded in the store beside its records, never
# read as one, and honoured by perf-gate-rolling and perf-changes. The
# history is fixtures/tests/perf-seed/decision-step/scenario.sh: 60
# scheduled runs with a deliberate 6% step at run 41, a reviewer deciding
# right after run 41.

# shellcheck disable=SC2154,SC2030,SC2031 # bats sets status, output, lines, stderr; each test is a subshell
load lib/common
load lib/store

SCENARIO=$FIXTURES/perf-seed/decision-step/scenario.sh
NAMED=$FIXTURES/perf-seed/named-decision

setup_file() {
	unset BUILDKITE_BUILD_CREATOR PERF_STORE_CACHE HF_TOKEN
	export XDG_CACHE_HOME=$BATS_FILE_TMPDIR/xdg
	local mode
	for mode in none accept accept-revert acknowledge; do
		mkdir -p "$BATS_FILE_TMPDIR/$mode"
		bash "$SCENARIO" "$BATS_FILE_TMPDIR/$mode" "$mode" >"$BATS_FILE_TMPDIR/$mode.log" 2>&1 ||
			{ cat "$BATS_FILE_TMPDIR/$mode.log" >&2; return 1; }
	done
	# named metrics: runs 1-8 (a 10% step of "time" at run 8), then 9-14 undecided
	bash "$NAMED/scenario.sh" "$BATS_FILE_TMPDIR/named" >"$BATS_FILE_TMPDIR/named.log" 2>&1 ||
		{ cat "$BATS_FILE_TMPDIR/named.log" >&2; return 1; }
	# shellcheck source=fixtures/tests/perf-seed/named-decision/runs.bash
	(cd "$BATS_FILE_TMPDIR/named" && source "$NAMED/runs.bash" &&
		for k in 9 10 11 12 13 14; do one_run store-none "$k"; done)
}

setup() {
	unset BUILDKITE_BUILD_CREATOR PERF_STORE_CACHE HF_TOKEN
	export XDG_CACHE_HOME=$BATS_TEST_TMPDIR/xdg
	export USER=tester
	cd "$BATS_TEST_TMPDIR" || return 1
}

teardown() {
	git_http_stop
}

# statuses MODE FROM TO: the comparison statuses of runs FROM..TO, one line.
statuses() {
	jq -r --argjson a "$2" --argjson b "$3" 'select(.run >= $a and .run <= $b) | .comparison_status' \
		"$BATS_FILE_TMPDIR/$1/verdicts.jsonl" | sort | uniq -c | tr -s ' ' | sed 's/^ //'
}

# run41 MODE: the store path of run 41's record.
run41() {
	(cd "$BATS_FILE_TMPDIR/$1/store" && find . -name '*0029.json' | sed 's|^\./||')
}

# decide ARGS...: perf-seed ARGS against ./store, staged in ./staging.
decide() {
	run --separate-stderr perf-seed "$@" -s store --staging-root staging --by tester \
		--now 2026-03-05T00:00:00Z
}

# refused TEXT: the last run was exit 2 saying TEXT; nothing staged, the store untouched.
refused() {
	assert_equal "$status" 2
	grep -qF -- "$1" <<<"$stderr" || { echo "stderr: $stderr" >&2; return 1; }
	[ -z "$(find staging -type f 2>/dev/null)" ] || { echo "something was staged" >&2; return 1; }
	assert_equal "$(cat store/.perfkite-revision)" "$revision"
	assert_equal "$(find store -name '*.decision' | LC_ALL=C sort)" "$decisions"
}

@test "a 6% step at run 41 without a decision: every run from 41 fails" {
	assert_equal "$(statuses none 1 40)" "1 CALIBRATION_NEEDED
39 PASS"
	assert_equal "$(statuses none 41 60)" "20 REGRESSION"
}

@test "accept at run 41: runs 42-60 pass, and run 47's window holds only records from 41 on" {
	local d=$BATS_FILE_TMPDIR/accept median
	assert_equal "$(statuses accept 41 41)" "1 REGRESSION"
	assert_equal "$(statuses accept 42 60)" "19 PASS"
	jq -e --arg r "$(run41 accept)" 'select(.run >= 42) | .baseline_since == $r and .baseline_eligible' \
		"$d/verdicts.jsonl" | { ! grep -q false; }
	# run 47: its last five records, 42-46, all at the new level
	median=$(jq -s '[.[].dit_time_s] | sort | .[2]' "$d"/runs/run-4[2-6].json)
	jq -e --argjson m "$median" --arg r "$(run41 accept)" '.comparison.baseline_n == 5
		and .comparison.metrics.dit_time_s.baseline == $m
		and .comparison.baseline_since.record == $r
		and .comparison.baseline_since.by == "reviewer"
		and .comparison.baseline_since.reason == "runtime upgrade: 6% slower, intended"
		and (.comparison.baseline_since.metrics | length) == 6' "$d/out-47.json"
	# run 42: the accepted record alone, a first baseline like a seed
	jq -e '.comparison.baseline_n == 1 and .baseline_status == "compared"
		and .comparison.metrics.dit_time_s.baseline == 8.692' "$d/out-42.json"
	# without the decision, run 47 is compared with records 36-40, at the old level
	jq -e '.comparison_status == "REGRESSION" and .comparison.metrics.dit_time_s.baseline == 8.2
		and (.comparison | has("baseline_since") | not)' "$BATS_FILE_TMPDIR/none/out-47.json"
	# and with it, the replay is the stored verdict, byte for byte
	run --separate-stderr perf-gate-rolling -s "$d/store-before-47" -a art2 "$d/runs/run-47.json"
	assert_success
	assert_equal "$output" "$(cat "$d/out-47.json")"
}

@test "accept then revert: the failures come back" {
	assert_equal "$(statuses accept-revert 41 60)" "20 REGRESSION"
	# what the revert said it would change
	grep -qF "It undoes decision " "$BATS_FILE_TMPDIR/accept-revert/decide.log"
	grep -qF "The next run of wan-t2v-1.3b-2gpu on NVIDIA L40S will be compared on latency, throughput, memory, text_encoder_time_s, dit_time_s, vae_decode_time_s with 5 records from 2026-02-06 to 2026-02-10 instead of 1 record from 2026-02-11." \
		"$BATS_FILE_TMPDIR/accept-revert/decide.log"
	assert_equal "$(jq -c 'select(.run > 41) | .baseline_since' "$BATS_FILE_TMPDIR/accept-revert/verdicts.jsonl" | sort -u)" null
}

@test "acknowledge: the baseline stays, the change point shows acknowledged and no longer gates" {
	local d=$BATS_FILE_TMPDIR/acknowledge
	assert_equal "$(statuses acknowledge 41 60)" "20 REGRESSION"
	# without the decision the worse dit_time_s change point at run 41 gates
	run --separate-stderr perf-changes -s "$BATS_FILE_TMPDIR/none/store" --all -m dit_time_s
	assert_failure 1
	jq -e 'has("decision") | not' <<<"$output"
	run --separate-stderr perf-changes -s "$d/store" --all -m dit_time_s
	assert_success
	jq -e --arg r "$(run41 acknowledge)" '.path == $r and .direction == "worse" and .decision == {
		kind: "acknowledged", id: .decision.id, by: "reviewer", when: "2026-02-11T12:00:00+00:00",
		reason: "known: tracked upstream", link: "https://example.com/issues/41"}' <<<"$output"
	# latency was not acknowledged: it still gates
	run --separate-stderr perf-changes -s "$d/store" --all -m dit_time_s -m latency --md
	assert_failure 1
	# one row for the event, its metrics listed together (issue 22, item 3)
	grep -qF '| latency<br>dit_time_s | worse +6.0%<br>worse +6.0% (acknowledged) |' <<<"$output"
}

@test "accept: perf-changes shows the accepted change point of the trusted series and passes" {
	run --separate-stderr perf-changes -s "$BATS_FILE_TMPDIR/accept/store" -m dit_time_s
	assert_success
	jq -e '.direction == "worse" and .decision.kind == "accepted"' <<<"$output"
	run --separate-stderr perf-changes -s "$BATS_FILE_TMPDIR/none/store" -m dit_time_s --all
	assert_failure 1
}

@test "a decision is never a tracking record; without an accept the gate's bytes are unchanged" {
	local d=$BATS_FILE_TMPDIR/acknowledge
	# hidden directory, not *.json: the reference's loader and perfkite's skip it
	assert_equal "$(find "$d/store" -name '*.json' -path '*/.*' | wc -l)" 0
	assert_equal "$(find "$d/store/.perfkite-decisions" -type f -name '*.decision' | wc -l)" 1
	assert_equal "$(find "$d/store" -name '*.json' | wc -l)" \
		"$(find "$BATS_FILE_TMPDIR/none/store" -name '*.json' | wc -l)"
	# an acknowledge moves no baseline: run 60 again, with and without the decision
	mkdir with without
	cp -r "$d/store" with/store
	cp -r "$d/store" without/store
	rm -r without/store/.perfkite-decisions
	(cd with && perf-gate-rolling -s store -a art "$d/runs/run-60.json" >out 2>err) || true
	(cd without && perf-gate-rolling -s store -a art "$d/runs/run-60.json" >out 2>err) || true
	grep -q REGRESSION with/out
	cmp with/out without/out
	cmp with/err without/err
	cmp with/art/"$(ls with/art)" without/art/"$(ls without/art)"
	# perf-changes without any decision: no "decision" member anywhere
	run --separate-stderr perf-changes -s "$BATS_FILE_TMPDIR/none/store" --all
	assert_failure 1
	not grep -q decision <<<"$output"
}

@test "decisions: newest first; a revert marks what it undoes" {
	local d=$BATS_FILE_TMPDIR/accept-revert
	run --separate-stderr perf-seed decisions -s "$d/store" --json
	assert_success
	assert_equal "${#lines[@]}" 2
	jq -e '.kind == "revert" and .in_force and .reason == "not intended after all"' <<<"${lines[0]}"
	jq -e --arg id "$(jq -r .reverts <<<"${lines[0]}")" '.kind == "accept" and .id == $id and
		(.in_force | not) and .by == "reviewer" and .when == "2026-02-11T12:00:00+00:00"' <<<"${lines[1]}"
	run --separate-stderr perf-seed decisions -s "$d/store"
	assert_success
	assert_equal "${#lines[@]}" 3
	[[ ${lines[0]} == "2026-02-11T13:00:00+00:00 "*" revert "* ]]
	assert_equal "${lines[2]}" "  (reverted)"
	run --separate-stderr perf-seed decisions -s "$BATS_FILE_TMPDIR/none/store"
	assert_success
	assert_equal "$output" "No decisions."
}

@test "accept: what will change is said before anything is staged; the manifest is bound to the revision" {
	# right after run 41, as in the scenario
	grep -qF "will be compared on latency, throughput, memory, text_encoder_time_s, dit_time_s, vae_decode_time_s with 1 record from 2026-02-11 instead of 5 records from 2026-02-06 to 2026-02-10." \
		"$BATS_FILE_TMPDIR/accept/decide.log"
	# later, with runs 42-60 stored as regressions
	cp -r "$BATS_FILE_TMPDIR/none/store" store
	decide accept --source-result "$BATS_FILE_TMPDIR/none/out-41.json" --reason intended
	assert_success
	grep -qF "The next run of wan-t2v-1.3b-2gpu on NVIDIA L40S will be compared on latency, throughput, memory, text_encoder_time_s, dit_time_s, vae_decode_time_s with 5 records from 2026-02-26 to 2026-03-02 instead of 5 records from 2026-02-06 to 2026-02-10." <<<"$output"
	local m
	m=$(find staging/.decision-reservations -name manifest)
	assert_equal "$(jq -r '.operation, .store_revision' "$m")" "decision
$(cat store/.perfkite-revision)"
	jq -e --arg s "$(sha256sum "$(jq -r .decision.path "$m")" | cut -d' ' -f1)" '.decision.sha256 == $s' "$m"
	# without --confirm nothing is written
	run --separate-stderr perf-seed upload -s store "$m"
	assert_success
	grep -qF "Nothing was uploaded" <<<"$output"
	[ ! -e store/.perfkite-decisions ]
	run --separate-stderr perf-seed upload -s store --confirm "$m"
	assert_success
	[ -e "$(dirname "$m")/uploaded" ]
	cmp "$(jq -r .decision.path "$m")" store/.perfkite-decisions/"$(basename "$(jq -r .decision.path "$m")")"
	# uploaded twice: the store moved since
	run --separate-stderr perf-seed upload -s store --confirm "$m"
	assert_failure 2
	grep -qF "the store moved since the decision was reviewed" <<<"$stderr"
}

@test "a staged decision changed after review is refused" {
	cp -r "$BATS_FILE_TMPDIR/none/store" store
	decide acknowledge --source-result "$BATS_FILE_TMPDIR/none/out-41.json" --reason known
	assert_success
	local m f
	m=$(find staging/.decision-reservations -name manifest)
	f=$(jq -r .decision.path "$m")
	chmod u+w "$f"
	sed -i 's/"known"/"tampered"/' "$f"
	run --separate-stderr perf-seed upload -s store --confirm "$m"
	assert_failure 2
	grep -qF "prepared decision changed after review" <<<"$stderr"
	[ ! -e store/.perfkite-decisions ]
}

@test "bad input: exit 2 with the reason, nothing staged, the store untouched" {
	local d=$BATS_FILE_TMPDIR/accept revision decisions
	cp -r "$d/store" store
	revision=$(cat store/.perfkite-revision)
	decisions=$(find store -name '*.decision' | LC_ALL=C sort)
	decide accept --source-result "$d/out-41.json"
	refused "accept needs --reason"
	decide accept --source-result "$d/out-41.json" --reason "   "
	refused "a decision needs a reason (--reason)"
	jq 'del(.workload_id)' "$d/out-42.json" >v1.json
	decide accept --source-result v1.json --reason r
	refused "v1.json: unknown cohort"
	jq '.timestamp = "2027-01-01T00:00:00+00:00"' "$d/out-42.json" >absent.json
	decide accept --source-result absent.json --reason r
	refused "is not in the store"
	decide accept --source-result "$d/out-42.json" --metric nosuch --reason r
	refused "--metric: unknown metric 'nosuch'"
	# contradicting decisions
	decide accept --source-result "$d/out-41.json" --reason again
	refused "accept of latency at $(run41 accept) is decided already: decision"
	decide accept --source-result "$d/out-30.json" --reason earlier
	refused "it contradicts the later accept"
	run --separate-stderr perf-seed acknowledge --source-result "$d/out-41.json" --reason r \
		-s store --staging-root staging --now 2026-02-01T00:00:00Z
	refused "it contradicts the later decision"
	decide revert --decision 0123456789abcdef --reason r
	refused "no decision 0123456789abcdef in the store"
	decide accept --change - --source-result "$d/out-41.json" --reason r </dev/null
	refused "unknown option for accept"
	# a metric the record lacks
	jq '.memory = null' "store/$(run41 accept)" >lacks.json
	chmod u+w "store/$(run41 accept)"
	cp lacks.json "store/$(run41 accept)"
	decide acknowledge --source-result "$d/out-41.json" --metric memory --reason r
	refused "has no memory"
}

@test "revert: of a reverted decision, or of a revert, is refused" {
	local d=$BATS_FILE_TMPDIR/accept-revert revision decisions ids
	cp -r "$d/store" store
	revision=$(cat store/.perfkite-revision)
	decisions=$(find store -name '*.decision' | LC_ALL=C sort)
	mapfile -t ids < <(perf-seed decisions -s store --json | jq -r .id)
	decide revert --decision "${ids[1]}" --reason r
	refused "decision ${ids[1]} was reverted already"
	decide revert --decision "${ids[0]}" --reason r
	refused "decision ${ids[0]} is a revert: decide again instead"
}

@test "acknowledge and invalid take a perf-changes line on standard input" {
	local d=$BATS_FILE_TMPDIR/none
	cp -r "$d/store" store
	perf-changes -s store --all -m dit_time_s >cp.jsonl || true
	assert_equal "$(wc -l <cp.jsonl)" 1
	run --separate-stderr perf-seed invalid --change - -s store --staging-root staging --by tester \
		--link https://example.com/infra/7 --reason "a noisy host" <cp.jsonl
	assert_success
	grep -qF "will show as invalid https://example.com/infra/7 and no longer gate perf-changes" <<<"$output"
	run --separate-stderr perf-seed upload -s store --confirm "$(find staging -name manifest)"
	assert_success
	run --separate-stderr perf-changes -s store --all -m dit_time_s
	assert_success
	jq -e '.decision.kind == "invalid" and .decision.by == "tester" and .decision.link == "https://example.com/infra/7"' <<<"$output"
	# two change points on standard input: one decision is on one
	cat cp.jsonl cp.jsonl >two.jsonl
	run --separate-stderr perf-seed acknowledge --change - -s store --staging-root staging2 --reason r <two.jsonl
	assert_failure 2
	grep -qF "a decision is on one change point" <<<"$stderr"
}

@test "--by defaults to BUILDKITE_BUILD_CREATOR, then git's user.name" {
	cp -r "$BATS_FILE_TMPDIR/none/store" store
	BUILDKITE_BUILD_CREATOR="Build Creator" run --separate-stderr perf-seed acknowledge -s store \
		--staging-root s1 --reason r --source-result "$BATS_FILE_TMPDIR/none/out-41.json"
	assert_success
	jq -e '.by == "Build Creator"' "$(find s1 -name '*.decision')"
	git init -q repo
	git -C repo config user.name "Git User"
	cd repo
	run --separate-stderr perf-seed acknowledge -s ../store --staging-root ../s2 --reason r \
		--source-result "$BATS_FILE_TMPDIR/none/out-41.json"
	assert_success
	jq -e '.by == "Git User"' "$(find ../s2 -name '*.decision')"
}

@test "racing reviewers: one decision lands, the other is refused with the revision it saw" {
	local d=$BATS_FILE_TMPDIR/none rc1=0 rc2=0 p1 p2 rev
	cp -r "$d/store" store
	rev=$(cat store/.perfkite-revision)
	run --separate-stderr perf-seed accept -s store --staging-root one --by a --reason r \
		--source-result "$d/out-41.json"
	assert_success
	run --separate-stderr perf-seed acknowledge -s store --staging-root two --by b --reason r \
		--source-result "$d/out-41.json"
	assert_success
	perf-seed upload -s store --confirm "$(find one -name manifest)" >out1 2>err1 &
	p1=$!
	perf-seed upload -s store --confirm "$(find two -name manifest)" >out2 2>err2 &
	p2=$!
	wait "$p1" || rc1=$?
	wait "$p2" || rc2=$?
	assert_equal "$(printf '%s\n' "$rc1" "$rc2" | sort | tr '\n' ' ')" "0 2 "
	assert_equal "$(cat err1 err2 | grep -c "the store moved since the decision was reviewed at revision $rev (it is at revision $((rev + 1)) now)")" 1
	assert_equal "$(find store/.perfkite-decisions -name '*.decision' | wc -l)" 1
	assert_equal "$(cat store/.perfkite-revision)" "$((rev + 1))"
}

@test "a decision on a git store: one commit on the reviewed head; a remote that moved refuses it" {
	local d=$BATS_FILE_TMPDIR/none url head
	bare_remote remote.git
	url=git+file://$PWD/remote.git
	git clone -q remote.git work 2>/dev/null
	cp -r "$d/store/." work/
	rm -f work/.perfkite-revision work/.perfkite-lock
	git -C work add -A
	git -C work -c user.name=t -c user.email=t@t commit -qm history
	git -C work push -q origin HEAD:main
	head=$(git -C remote.git rev-parse main)
	run --separate-stderr perf-seed accept -s "$url" --cache cache --staging-root staging --by t \
		--reason intended --source-result "$d/out-41.json"
	assert_success
	jq -e --arg h "$head" '.store_revision == $h' "$(find staging -name manifest)"
	run --separate-stderr perf-seed upload -s "$url" --cache cache --confirm "$(find staging -name manifest)"
	assert_success
	assert_equal "$(git -C remote.git rev-parse main^)" "$head"
	assert_equal "$(git -C remote.git diff-tree --no-commit-id --name-only -r main)" \
		".perfkite-decisions/$(basename "$(find staging -name '*.decision')")"
	[[ $(git -C remote.git log -1 --format=%s main) == "Perf: accept decision "* ]]
	# the gate reads it through the git store: run 42 passes
	run --separate-stderr perf-gate-rolling -s "$url" --cache cache -a art "$d/runs/run-42.json"
	assert_success
	jq -e '.comparison.baseline_since.record != null' <<<"$output"
	# a second reviewer staged at the old head is refused with it
	run --separate-stderr perf-seed acknowledge -s "$url" --cache cache2 --staging-root staging2 \
		--by u --reason r --source-result "$d/out-41.json"
	assert_success
	git -C work pull -q origin main
	: >work/other
	git -C work add other
	git -C work -c user.name=t -c user.email=t@t commit -qm other
	git -C work push -q origin HEAD:main
	run --separate-stderr perf-seed upload -s "$url" --cache cache2 --confirm "$(find staging2 -name manifest)"
	assert_failure 2
	grep -qF "the store moved since the decision was reviewed at revision" <<<"$stderr"
}

@test "perf-summarize --decide: after the reference's table, the command that accepts or seeds each row" {
	local d=$BATS_FILE_TMPDIR/none cmd
	mkdir -p r
	cp -r "$d/artifacts" r/results
	cat "$d/out-40.json" "$d/out-41.json" >batch.jsonl
	perf-summarize batch.jsonl >plain.md
	run --separate-stderr perf-summarize --decide -r r batch.jsonl
	assert_success
	# the reference's table first, byte for byte, then the new section
	assert_equal "$(head -c "$(wc -c <plain.md)" <<<"$output")" "$(cat plain.md)"
	grep -qF '## Decide' <<<"$output"
	assert_equal "$(grep -c '^| wan-t2v-1.3b-2gpu | NVIDIA L40S | REGRESSION | `perf-seed accept --source-result ' <<<"$output")" 1
	not grep -q '| PASS | `perf-seed' <<<"$output"
	# the command, as printed, stages the accept
	# shellcheck disable=SC2016 # the backquotes are Markdown's
	cmd=$(sed -n 's/^| wan-t2v-1.3b-2gpu | NVIDIA L40S | REGRESSION | `\(.*\)` |$/\1/p' <<<"$output")
	cp -r "$d/store" store
	eval "$cmd -s store --staging-root staging"
	[ -n "$(find staging/.decision-reservations -name manifest)" ]
	# a first run, CALIBRATION_NEEDED: the seeding command
	run --separate-stderr perf-summarize --decide -r r "$d/out-1.json"
	assert_success
	grep -qF '| CALIBRATION_NEEDED | `perf-seed prepare --source-result '"'$PWD/r/results/" <<<"$output" ||
		grep -qF '| CALIBRATION_NEEDED | `perf-seed prepare --source-result '"'r/results/" <<<"$output"
	grep -qF -- "--intent-rationale 'why this is the baseline'\` |" <<<"$output"
}

@test "broken files as --source-result or --change: exit 2 naming the file, nothing staged, never a crash" {
	local f
	cp -r "$BATS_FILE_TMPDIR/none/store" store
	for f in "$TESTS_DIR"/bad-inputs/*; do
		run --separate-stderr perf-seed accept -s store --staging-root staging --reason r --source-result "$f"
		[ "$status" -eq 2 ] || { echo "accept $f: status $status" >&2; false; }
		grep -qF "$f" <<<"$stderr" || { echo "accept $f: $stderr" >&2; false; }
		run --separate-stderr perf-seed invalid -s store --staging-root staging --reason r --change "$f"
		[ "$status" -eq 2 ] || { echo "invalid $f: status $status" >&2; false; }
		grep -qF "$f" <<<"$stderr" || { echo "invalid $f: $stderr" >&2; false; }
	done
	[ ! -e staging ]
	[ ! -e store/.perfkite-decisions ]
}

@test "the dashboard draws an acknowledged change point grey, its decision in the hover text" {
	local d=$BATS_FILE_TMPDIR/acknowledge
	perf-changes -s "$d/store" --all -m dit_time_s -m latency >cps.jsonl || true
	run --separate-stderr perf-summarize --html dash.html --changes cps.jsonl -s "$d/store" \
		--now 2026-03-05T00:00:00Z "$d/out-60.json"
	assert_success
	grep -qF 'stroke="#757575" stroke-width="1.4" stroke-dasharray="3 2"/><title>change point: worse +6.0%' dash.html
	grep -qF 'acknowledged by reviewer: known: tracked upstream' dash.html
	grep -qF 'https://example.com/issues/41</title>' dash.html
	# latency was not decided: red, as before
	assert_equal "$(grep -o 'stroke="#c62828" stroke-width="1.4" stroke-dasharray="3 2"' dash.html | wc -l)" 1
}

@test "perf-site shows a change point's decision (accepted, acknowledged), the undecided still need attention" {
	local d=$BATS_FILE_TMPDIR/acknowledge
	perf-changes -s "$d/store" --all -m dit_time_s -m latency >cps.jsonl || true
	run --separate-stderr perf-site -s "$d/store" --changes cps.jsonl --now 2026-03-05T00:00:00Z -o site
	assert_success
	run grep -o '<td>dit_time_s</td>.*</tr>' site/changes.html
	assert_output --partial '<td>acknowledged</td>'
	run grep -o '<td>latency</td>.*</tr>' site/changes.html
	assert_output --partial '<td>undecided</td>'
	# the acknowledged one no longer needs attention; latency does
	att=$(sed -n '/id="attention"/,/<\/table>/p' site/index.html)
	grep -q 'worse change point.*latency' <<<"$att"
	not grep -q 'worse change point.*dit_time_s' <<<"$att"
	grep -q 'dit_time_s .*acknowledged' site/c/*.html
	# an accepted one
	perf-changes -s "$BATS_FILE_TMPDIR/accept/store" -m dit_time_s >acc.jsonl
	run --separate-stderr perf-site -s "$BATS_FILE_TMPDIR/accept/store" --changes acc.jsonl \
		--now 2026-03-05T00:00:00Z -o site2
	assert_success
	run grep -o '<td>dit_time_s</td>.*</tr>' site2/changes.html
	assert_output --partial '<td>accepted</td>'
	not grep -q '<td>undecided</td>' site2/changes.html
}

# named_copy: the named scenario after run 8 in ., its store as store.
named_copy() {
	cp -r "$BATS_FILE_TMPDIR/named/." .
	rm -f out-store-none-*.json
	revision=$(cat store/.perfkite-revision)
	decisions=
}

# decide_cmd: the accept command that run 8's summary (--decide) prints.
decide_cmd() {
	# shellcheck disable=SC2016 # the backquotes are Markdown's
	sed -n 's/^| wan-t2v-1.3b-2gpu | NVIDIA L40S | REGRESSION | `\(perf-seed accept .*\)` |$/\1/p' decide.md
}

# named_accept: the printed accept, staged and uploaded into store.
named_accept() {
	eval "$(decide_cmd) -s store --staging-root staging --by tester --now 2026-01-09T12:00:00Z" >decide.log
	perf-seed upload -s store --confirm "$(find staging/.decision-reservations -name manifest)" >>decide.log
	rm -rf staging
}

@test "named metric: --decide prints the accept of the failing metric alone; after it the next gate passes" {
	named_copy
	jq -e '.comparison_status == "REGRESSION" and .comparison.named_metrics.time.regressed
		and (.comparison.named_metrics.rss.regressed | not)' out-store-8.json
	assert_equal "$(decide_cmd)" "perf-seed accept --source-result 'reports/results/normalized_perf_wan-t2v-1.3b-2gpu_2026-01-09T00_00_00_00_00_0000000000000000000000000000000000000008.json' --metric 'time' --reason 'why the change is intended'"
	# the lane's annotation says the same, through --annotate-decide
	run --separate-stderr perf-summarize --annotate-decide --reports-dir reports out-store-8.json
	assert_success
	grep -qF "\`$(decide_cmd)\`" <<<"$output"
	run --separate-stderr eval "$(decide_cmd) -s store --staging-root staging --by tester --now 2026-01-09T12:00:00Z"
	assert_success
	grep -qF "Decision " <<<"$output"
	grep -qF ": accept of time at wan-t2v-1.3b-2gpu/2026-01-09T00_00_00_00_00_0000000000000000000000000000000000000008.json" <<<"$output"
	grep -qF "The next run of wan-t2v-1.3b-2gpu on NVIDIA L40S will be compared on time with 1 record from 2026-01-09 instead of 5 records from 2026-01-04 to 2026-01-08." <<<"$output"
	run --separate-stderr perf-seed upload -s store --confirm "$(find staging/.decision-reservations -name manifest)"
	assert_success
	# run 9: passes with the decision, fails without
	# shellcheck source=fixtures/tests/perf-seed/named-decision/runs.bash
	source "$NAMED/runs.bash"
	one_run store 9
	jq -e '.comparison_status == "PASS" and .baseline_eligible' out-store-9.json
	jq -e '.comparison_status == "REGRESSION"' "$BATS_FILE_TMPDIR/named/out-store-none-9.json"
}

@test "named metric: an accept moves only that metric's window; the six and the other named metric keep theirs" {
	named_copy
	named_accept
	# shellcheck source=fixtures/tests/perf-seed/named-decision/runs.bash
	source "$NAMED/runs.bash"
	one_run store 9
	# time: the accepted run 8 alone, like a seed
	jq -e '.comparison.named_metrics.time.baseline == 0.002199
		and (.comparison.named_metrics.time.regressed | not)
		and .comparison.baseline_since.metrics == []
		and .comparison.baseline_since.named_metrics == ["time"]
		and .comparison.baseline_since.record == "wan-t2v-1.3b-2gpu/2026-01-09T00_00_00_00_00_0000000000000000000000000000000000000008.json"
		and .comparison.baseline_since.by == "tester"' out-store-9.json
	# without the decision: time against runs 3-7; everything else identical
	local none=$BATS_FILE_TMPDIR/named/out-store-none-9.json
	jq -e '.comparison.named_metrics.time.baseline == 0.002' "$none"
	assert_equal "$(jq -cS '.comparison | del(.named_metrics.time, .baseline_since, .failures)' out-store-9.json)" \
		"$(jq -cS '.comparison | del(.named_metrics.time, .failures)' "$none")"
	assert_equal "$(jq -c '.comparison.named_metrics.rss.baseline, .comparison.metrics.latency.baseline' out-store-9.json)" "1000000
10"
}

@test "named metric: an unknown --metric is exit 2 naming it; the key <benchmark>/<name> is the same metric" {
	named_copy
	decide accept --source-result out-store-8.json --metric nope --reason intended
	refused "unknown metric 'nope'"
	decide accept --source-result out-store-8.json --metric dit_time_s --metric 'wan-t2v-1.3b-2gpu/nope' --reason intended
	refused "unknown metric 'wan-t2v-1.3b-2gpu/nope'"
	decide accept --source-result out-store-8.json --metric wan-t2v-1.3b-2gpu/time --reason intended
	assert_success
	local by_key
	by_key=$(basename "$(find staging/.decision-reservations -name '*.decision')")
	jq -e '.metrics == [] and .named_metrics == ["time"]' staging/.decision-reservations/*/"$by_key"
	rm -rf staging
	decide accept --source-result out-store-8.json --metric time --reason intended
	assert_success
	assert_equal "$(basename "$(find staging/.decision-reservations -name '*.decision')")" "$by_key"
	# a metric the stored record did not measure is refused at the store
	rm -rf staging
	jq -c '.metrics.gone = {"value": 1.0, "unit": "s"}' out-store-8.json >edited.json
	decide accept --source-result edited.json --metric gone --reason intended
	refused "has no metric 'gone'"
}

@test "named metric: decisions lists it; without --metric an accept covers the record's named metrics too" {
	named_copy
	named_accept
	run --separate-stderr perf-seed decisions -s store
	assert_success
	[[ $output == "2026-01-09T12:00:00+00:00 "*" accept      wan-t2v/1.3b-sp2 on hw-"*": time at wan-t2v-1.3b-2gpu/2026-01-09T00_00_00_00_00_0000000000000000000000000000000000000008.json by tester: why the change is intended" ]]
	run --separate-stderr perf-seed decisions -s store --json
	assert_success
	jq -e '.kind == "accept" and .metrics == [] and .named_metrics == ["time"] and .in_force' <<<"$output"
	decide acknowledge --source-result out-store-8.json --reason "all of it"
	assert_success
	jq -e '.metrics == ["latency", "throughput", "memory", "text_encoder_time_s", "dit_time_s",
		"vae_decode_time_s"] and .named_metrics == ["rss", "time"]' staging/.decision-reservations/*/*.decision
}

@test "named metric: perf-changes shows the accepted change point, which no longer gates; --md and the dashboard say so" {
	named_copy
	named_accept
	# shellcheck source=fixtures/tests/perf-seed/named-decision/runs.bash
	source "$NAMED/runs.bash"
	for k in 9 10 11 12 13 14; do one_run store "$k"; done
	run --separate-stderr perf-changes -s "$BATS_FILE_TMPDIR/named/store-none" --all -m time
	assert_failure 1
	jq -e '.metric == "time" and .direction == "worse" and (has("decision") | not)' <<<"$output"
	run --separate-stderr perf-changes -s store --all -m time
	assert_success
	jq -e '.metric == "time" and .direction == "worse" and .decision.kind == "accepted"
		and .decision.by == "tester" and .path == "wan-t2v-1.3b-2gpu/2026-01-09T00_00_00_00_00_0000000000000000000000000000000000000008.json"' <<<"$output"
	printf '%s\n' "$output" >cps.jsonl
	run --separate-stderr perf-changes -s store --all -m time --md
	assert_success
	grep -qF '| time | worse +10.0% (accepted) |' <<<"$output"
	run --separate-stderr perf-summarize --html dash.html --changes cps.jsonl -s store --days 400 \
		--now 2026-01-20T00:00:00Z
	assert_success
	grep -qF 'stroke="#757575" stroke-width="1.4" stroke-dasharray="3 2"/><title>change point: worse +10.0%' dash.html
	grep -qF 'accepted by tester: why the change is intended' dash.html
}

@test "named metric: acknowledge --change on a named change point; it stops gating, the baseline stays" {
	cp -r "$BATS_FILE_TMPDIR/named/store-none" store
	revision=$(cat store/.perfkite-revision)
	decisions=
	perf-changes -s store --all -m time >cp.jsonl || true
	decide acknowledge --change cp.jsonl --metric rss --reason known
	refused "the change point is of time, not rss"
	decide acknowledge --change cp.jsonl --metric wan-t2v-1.3b-2gpu/time --reason known
	assert_success
	jq -e '.metrics == [] and .named_metrics == ["time"]' staging/.decision-reservations/*/*.decision
	run --separate-stderr perf-seed upload -s store --confirm "$(find staging/.decision-reservations -name manifest)"
	assert_success
	run --separate-stderr perf-changes -s store --all -m time
	assert_success
	jq -e '.decision.kind == "acknowledged" and .decision.reason == "known"' <<<"$output"
	run --separate-stderr perf-gate-rolling -s store -a art "$BATS_FILE_TMPDIR/named/runs/run-14.json"
	assert_failure 1
	jq -e '.comparison_status == "REGRESSION" and (.comparison | has("baseline_since") | not)' <<<"$output"
}

@test "a decision in a partially cloned git store over http takes effect as with a full clone" {
	lighttpd_or_skip
	local d=$BATS_FILE_TMPDIR/none url dir
	mkdir srv
	bare_remote srv/store.git
	git -C srv/store.git config uploadpack.allowFilter true
	git clone -q srv/store.git work 2>/dev/null
	cp -r "$d/store/." work/
	rm -f work/.perfkite-revision work/.perfkite-lock
	git -C work add -A
	git -C work -c user.name=t -c user.email=t@t commit -qm history
	git -C work push -q origin HEAD:main
	# indexed: a fresh agent's clone is a partial one, checked out sparsely
	perf-upload --reindex -s "git+file://$PWD/srv/store.git" --cache "$PWD/re"
	export HF_TOKEN=dec1s10n-t0ken
	git_http_start "$PWD/srv" "$HF_TOKEN"
	url=git+$GIT_HTTP_URL/store.git
	run --separate-stderr perf-seed accept -s "$url" --cache c1 --staging-root staging --by t \
		--reason intended --source-result "$d/out-41.json"
	assert_success
	run --separate-stderr perf-seed upload -s "$url" --cache c1 --confirm "$(find staging -name manifest)"
	assert_success
	# a fresh agent: the gate honours it (run 42 compared with the accepted record)
	run --separate-stderr perf-gate-rolling -s "$url" --cache c2 -a art "$d/runs/run-42.json"
	assert_success
	jq -e '.comparison.baseline_since.record != null' <<<"$output"
	printf '%s\n' "$output" >partial.out
	dir=$(find c2 -mindepth 1 -maxdepth 1 -type d ! -name '*.tmp-*')
	[ -e "$dir/.git/perfkite-sparse" ]
	[ -n "$(find "$dir/.perfkite-decisions" -name '*.decision')" ]
	[ "$(git -C "$dir" rev-list --objects --missing=print HEAD | grep -c '^?')" -gt 0 ]
	# as a full clone read whole has it, byte for byte; perf-changes too
	PERF_STORE_INDEX=0 perf-gate-rolling -s "$url" --cache c3 -a art3 "$d/runs/run-42.json" >full.out
	cmp partial.out full.out
	run --separate-stderr perf-changes -s "$url" --cache c4 -m dit_time_s --batch "$d/runs/run-42.json"
	printf '%s\n%s\n' "$status" "$output" >partial.changes
	jq -e 'select(.decision != null) | .decision.kind == "accepted"' <<<"$output"
	run --separate-stderr env PERF_STORE_INDEX=0 perf-changes -s "$url" --cache c5 -m dit_time_s \
		--batch "$d/runs/run-42.json"
	printf '%s\n%s\n' "$status" "$output" >full.changes
	cmp partial.changes full.changes
	dir=$(find c4 -mindepth 1 -maxdepth 1 -type d ! -name '*.tmp-*')
	[ -e "$dir/.git/perfkite-sparse" ]
}
