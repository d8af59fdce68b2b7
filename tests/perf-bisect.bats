#!/usr/bin/env bats
# perf-bisect: the culprit commit of a change over a real git repository
# of 64 commits whose runner (fixtures/runners/ab-runner.sh) reads its
# speed from the tree: one culprit, two, a commit that cannot be set up,
# a change that is not there, an interruption, --step under git bisect
# run, and bad input.

# shellcheck disable=SC2154 # bats sets status, output, lines, stderr
load lib/common
load lib/bisect_repo
load lib/stub

CONF=$ROOT_DIR/fixtures/ab/bench.json

setup() {
	cd "$BATS_TEST_TMPDIR" || return 1
	mkdir -p tmp
	export TMPDIR=$BATS_TEST_TMPDIR/tmp
	unset FAKE_AB_STATE FAKE_AB_NOISE FAKE_AB_DRIFT FAKE_AB_SLEEP FAKE_AB_SECONDS
}

# sha K: the commit numbered K of ./repo.
sha() {
	git -C repo rev-list --reverse HEAD | sed -n "$(($1 + 1))p"
}

# clean: nothing is left behind, neither worktree nor scratch directory.
clean() {
	assert_equal "$(git -C repo worktree list | wc -l)" 1
	[ -z "$(ls tmp)" ]
}

@test "a 5% step at commit 37 with 2% noise is found, exit 0" {
	bisect_repo repo 64 37:1.05
	FAKE_AB_NOISE=0.02 run --separate-stderr perf-bisect --cpu -C repo --good HEAD~64 \
		--bad HEAD --seed 1 -o rep.json "$CONF"
	assert_success
	[ -z "$stderr" ]
	printf '%s\n' "$output" >out.jsonl
	assert_equal "$(jq -r '.culprits[0].commit' rep.json)" "$(sha 37)"
	assert_equal "$(jq -r '.culprits[0].parent' rep.json)" "$(sha 36)"
	assert_equal "$(jq -r '.culprits[0] | "\(.subject)|\(.author)|\(.dependency_change)"' rep.json)" \
		"commit 37|Test Author <t@example.com>|false"
	assert_equal "$(jq -r '[.status, .commits, .metric, .schema] | @tsv' rep.json)" \
		"$(printf 'found\t64\tlatency\tperfkite.bisect-report/1')"
	# The share of the change holds 1.
	jq -e '.culprits[0] | .share_low < 1 and .share_high > 0.8' rep.json
	# Progress: every round, the reproduction, every probe; then the report.
	assert_equal "$(jq -r 'select(.event == "reproduced") | .rounds' out.jsonl)" 12
	jq -se 'map(select(.event == "round" and .kind == "probe")) | all(.order | length == 3)' out.jsonl
	assert_equal "$(tail -n 1 out.jsonl | jq -r .event)" report
	assert_equal "$(tail -n 1 out.jsonl | jq -S 'del(.event)')" "$(jq -S 'del(.event)' rep.json)"
	# Runs counted: three per probe round, two per share pair.
	assert_equal "$(jq -s '[.[] | select(.event == "round") | .order | length] | add' out.jsonl)" \
		"$(jq .runs rep.json)"
	# The probes went the right way: below 37 good, from 37 bad.
	run py - rep.json <<-'PY'
		import json, subprocess, sys
		r = json.load(open(sys.argv[1]))
		shas = subprocess.check_output(["git", "-C", "repo", "rev-list", "--reverse", "HEAD"],
		    text=True).split()
		for p in r["probes"]:
		    k = shas.index(p["commit"])
		    assert p["verdict"] == ("bad" if k >= 37 else "good"), (k, p)
		print(len(r["probes"]))
	PY
	assert_success
	[ "$output" -ge 5 ]
	clean
}

@test "two steps, at commits 37 and 50, are two culprits" {
	bisect_repo repo 64 37:1.05 50:1.1025
	FAKE_AB_NOISE=0.005 run --separate-stderr perf-bisect --cpu -C repo --good HEAD~64 \
		--bad HEAD --seed 2 -o rep.json "$CONF"
	assert_success
	assert_equal "$(jq -r '[.culprits[].subject] | sort | join(",")' rep.json)" \
		"commit 37,commit 50"
	jq -e 'all(.culprits[]; .share > 0.3 and .share < 0.7)' rep.json
	jq -e 'any(.culprits[]; .partial)' rep.json
	clean
}

@test "a commit whose setup fails is skipped and the culprit still found" {
	bisect_repo repo 64 37:1.05 broken:32
	FAKE_AB_NOISE=0.005 run --separate-stderr perf-bisect --cpu -C repo --good HEAD~64 \
		--bad HEAD --setup 'test ! -e broken' -o rep.json "$CONF"
	assert_success
	printf '%s\n' "$output" >out.jsonl
	assert_equal "$(jq -r 'select(.event == "skip") | .commit' out.jsonl)" "$(sha 32)"
	assert_equal "$(jq -r '.skipped | join(",")' rep.json)" "$(sha 32)"
	assert_equal "$(jq -r '.culprits[0].subject' rep.json)" "commit 37"
	# The failed setup is said on stderr, with its log.
	[[ $stderr == *"--setup at $(sha 32 | cut -c1-12): /bin/sh exited with status 1"* ]]
	clean
}

@test "good and bad at the same speed: did not reproduce, exit 3" {
	bisect_repo repo 64
	FAKE_AB_NOISE=0.02 run --separate-stderr perf-bisect --cpu -C repo --good HEAD~64 \
		--bad HEAD --alpha 0.01 --seed 1 -o rep.json "$CONF"
	assert_failure 3
	assert_equal "$(jq -r '[.status, .rounds, .runs, (.culprits | length)] | @tsv' rep.json)" \
		"$(printf 'not_reproduced\t12\t36\t0')"
	printf '%s\n' "$output" >out.jsonl
	assert_equal "$(jq -r 'select(.event == "not_reproduced") | .rounds' out.jsonl)" 12
	clean
}

@test "undecided within --max-runs: exit 1" {
	bisect_repo repo 8 5:1.05
	FAKE_AB_NOISE=0.02 run --separate-stderr perf-bisect --cpu -C repo --good HEAD~8 \
		--bad HEAD --max-runs 9 -o rep.json "$CONF"
	assert_failure 1
	assert_equal "$(jq -r '[.status, .runs] | @tsv' rep.json)" "$(printf 'undecided\t9')"
	clean
}

@test "SIGINT or SIGTERM mid-bisect: exit 2, no worktree left" {
	local sig num
	bisect_repo repo 64 37:1.05
	for sig in INT:2 TERM:15; do
		num=${sig#*:} sig=${sig%:*}
		FAKE_AB_SLEEP=0.3 perf-bisect --cpu -C repo --good HEAD~64 --bad HEAD "$CONF" \
			>out 2>err &
		pid=$!
		for _ in $(seq 100); do
			[ "$(git -C repo worktree list | wc -l)" -ge 3 ] && break
			sleep 0.1
		done
		[ "$(git -C repo worktree list | wc -l)" -ge 3 ]
		sleep 0.3
		kill "-$sig" "$pid"
		st=0
		wait "$pid" || st=$?
		assert_equal "$st" 2
		grep -q "^perf-bisect: stopped by signal $num$" err
		clean
	done
}

@test "--step as a git bisect run script finds the culprit with git's own state" {
	bisect_repo repo 16 11:1.05
	good=$(sha 0) bad=$(sha 16) first=$(sha 11)
	git -C repo bisect start "$bad" "$good" >/dev/null
	FAKE_AB_NOISE=0.005 run git -C repo bisect run perf-bisect --step --cpu --good "$good" \
		--bad "$bad" "$CONF"
	assert_success
	assert_output --partial "$first is the first bad commit"
	git -C repo bisect reset >/dev/null
	clean
}

@test "--step: exit 125 when the setup fails at HEAD, 128 when the change is not there" {
	bisect_repo repo 8 5:1.05 broken:3
	c0=$(sha 0) c1=$(sha 1) c2=$(sha 2) c3=$(sha 3) c8=$(sha 8)
	git -C repo checkout -q "$c3"
	FAKE_AB_NOISE=0.005 run --separate-stderr perf-bisect --step --cpu -C repo \
		--good "$c0" --bad "$c8" --setup 'test ! -e broken' "$CONF"
	assert_failure 125
	git -C repo checkout -q "$c1"
	FAKE_AB_NOISE=0.005 run --separate-stderr perf-bisect --step --cpu -C repo --seed 1 \
		--good "$c0" --bad "$c2" "$CONF"
	assert_failure 128
	[[ $stderr == *'"event":"not_reproduced"'* ]]
	clean
}

@test "--md writes the annotation table" {
	bisect_repo repo 16 11:1.05
	FAKE_AB_NOISE=0.005 run --separate-stderr perf-bisect --cpu -C repo --good HEAD~16 \
		--bad HEAD --md "$CONF"
	assert_success
	assert_line --index 0 --regexp "^### Bisect: [0-9a-f]{12}\.\.[0-9a-f]{12}, 16 commits, [0-9]+ runs on this agent: found$"
	assert_line --index 1 '| Culprit | Subject | Author | Share of the change | Notes |'
	assert_line --index 3 --regexp "^\| $(sha 11 | cut -c1-12) \| commit 11 \| Test Author <t@example.com> \| [0-9]+% \([0-9]+%-[0-9]+%\) \|  \|$"
	# Progress went to stderr.
	[[ $stderr == *'"event":"reproduced"'* ]]
}

@test "a culprit that only changes a lock file is a dependency change" {
	bisect_repo repo 8
	echo 'pkg 2.0' >repo/uv.lock
	git -C repo add uv.lock
	git -C repo commit -qm "bump pkg"
	# The setup installs what the lock file names: pkg 2.0 is 5% slower.
	FAKE_AB_NOISE=0.005 run --separate-stderr perf-bisect --cpu -C repo --good HEAD~9 \
		--bad HEAD --setup 'if grep -qs "pkg 2.0" uv.lock; then echo 1.05 >ab-factor; fi' \
		-o rep.json "$CONF"
	assert_success
	assert_equal "$(jq -r '.culprits[0] | "\(.subject) \(.dependency_change)"' rep.json)" \
		"bump pkg true"
	clean
}

@test "a culprit that only moves a git submodule is a dependency change" {
	bisect_repo repo 8
	git init -q dep
	echo 'dep 1.0' >dep/VERSION
	git -C dep add VERSION
	git -C dep -c user.name=t -c user.email=t@example.com commit -qm "dep 1.0"
	git -C repo -c protocol.file.allow=always submodule add -q "$PWD/dep" dep
	git -C repo commit -qm "add dep"
	echo 'dep 2.0' >dep/VERSION
	git -C dep -c user.name=t -c user.email=t@example.com commit -qam "dep 2.0"
	v2=$(git -C dep rev-parse HEAD)
	git -C repo/dep -c protocol.file.allow=always fetch -q origin
	git -C repo/dep checkout -q "$v2"
	git -C repo add dep
	git -C repo commit -qm "bump dep"
	echo after >repo/after.txt
	git -C repo add after.txt
	git -C repo commit -qm "after"
	# The only change of "bump dep" is the submodule's commit.
	assert_equal "$(git -C repo diff-tree -r --no-commit-id --raw HEAD~2 HEAD~1 | cut -c1-15)" ":160000 160000 "
	# The setup builds what the submodule pins: dep 2.0 is 5% slower.
	FAKE_AB_NOISE=0.005 run --separate-stderr perf-bisect --cpu -C repo --good HEAD~3 \
		--bad HEAD --setup "if [ \"\$(git rev-parse HEAD:dep)\" = $v2 ]; then echo 1.05 >ab-factor; fi" \
		-o rep.json "$CONF"
	assert_success
	assert_equal "$(jq -r '.culprits[] | "\(.subject) \(.dependency_change)"' rep.json)" \
		"bump dep true"
	assert_equal "$(jq -r '.culprits[0].commit' rep.json)" "$(git -C repo rev-parse HEAD~1)"
	clean
}

@test "--confirm: perf-ab between the culprit's parent and the culprit finds it slower" {
	bisect_repo repo 16 11:1.05
	FAKE_AB_NOISE=0.005 run --separate-stderr perf-bisect --cpu -C repo --good HEAD~16 \
		--bad HEAD --confirm -o rep.json "$CONF"
	assert_success
	assert_equal "$(jq -r '.culprits[0] | [.subject, .confirmation[0].benchmark_id,
		.confirmation[0].verdict] | @tsv' rep.json)" "$(printf 'commit 11\tab-bench\tslower')"
	jq -e '.culprits[0].confirmation[0] | .ratio > 1.03 and .ratio < 1.07 and .pairs >= 5' rep.json
	clean
}

@test "several configs: each run is the geometric mean of their records" {
	bisect_repo repo 16 11:1.05
	mkdir cfg
	ln -s "$ROOT_DIR/fixtures/runners" runners
	jq '.benchmark_id = "ab-bench-2"' "$CONF" >cfg/two.json
	# The second benchmark takes 40 s a run, the first 10 s.
	jq --arg r "$ROOT_DIR/fixtures/runners/ab-runner.sh" '.benchmark_id = "ab-bench-3" |
		.run_config.command = ["env", "FAKE_AB_SECONDS=40.0", $r]' "$CONF" >cfg/three.json
	FAKE_AB_NOISE=0.005 run --separate-stderr perf-bisect --cpu -C repo --good HEAD~16 \
		--bad HEAD -o rep.json cfg/two.json cfg/three.json
	assert_success
	assert_equal "$(jq -r '.culprits[0].subject' rep.json)" "commit 11"
	assert_equal "$(jq -r '.configs | map(sub(".*/"; "")) | join(",")' rep.json)" "two.json,three.json"
	printf '%s\n' "$output" >out.jsonl
	# Two records per run, one value: their geometric mean, about 20 s.
	jq -se '[.[] | select(.event == "round") | .values[]] | all(. > 19 and . < 22)' out.jsonl
	clean
}

@test "--from-change takes good, bad and the metric from a perf-changes line" {
	bisect_repo repo 16 11:1.05
	jq -cn --arg bad "$(sha 16)" --arg good "$(sha 0)" '{model_id: "m", metric: "latency",
		direction: "worse", commit_sha: $bad, previous: {commit_sha: $good}}' >change.jsonl
	FAKE_AB_NOISE=0.005 run --separate-stderr perf-bisect --cpu -C repo --from-change \
		-o rep.json "$CONF" <change.jsonl
	assert_success
	assert_equal "$(jq -r '[.good, .bad, .metric, .culprits[0].subject] | @tsv' rep.json)" \
		"$(printf '%s\t%s\tlatency\tcommit 11' "$(sha 0)" "$(sha 16)")"
	assert_equal "$(jq -c '.change | {model_id, direction}' rep.json)" \
		'{"model_id":"m","direction":"worse"}'
	# A line without the commits is bad input, with its line number.
	echo '{"metric":"latency"}' >bad.jsonl
	run --separate-stderr perf-bisect --cpu -C repo --from-change "$CONF" <bad.jsonl
	assert_failure 2
	assert_equal "$stderr" \
		"perf-bisect: <stdin>:1: a change point needs commit_sha and previous.commit_sha"
	echo '{"commit_sha": ' >bad.jsonl
	run --separate-stderr perf-bisect --cpu -C repo --from-change "$CONF" <bad.jsonl
	assert_failure 2
	[[ $stderr == "perf-bisect: <stdin>:1: "* ]]
	run --separate-stderr perf-bisect --cpu -C repo --from-change "$CONF" </dev/null
	assert_failure 2
	assert_equal "$stderr" "perf-bisect: --from-change: no change point on standard input"
	clean
}

@test "--store keeps the report as a record of its own kind, which no tracking reader loads" {
	bisect_repo repo 16 11:1.05
	mkdir store
	FAKE_AB_NOISE=0.005 run --separate-stderr perf-bisect --cpu -C repo --good HEAD~16 \
		--bad HEAD --store "$PWD/store" -o rep.json "$CONF"
	assert_success
	run find store -name '*.json'
	assert_success
	[ "${#lines[@]}" -eq 1 ]
	[[ ${lines[0]} =~ ^store/\.perfkite/bisect/[0-9]{8}T[0-9]{6}Z_[0-9a-f]{12}_[0-9a-f]{12}\.json$ ]]
	f=${lines[0]}
	assert_equal "$(jq -r '[.schema, .status, .culprits[0].subject, has("event"), (.created_at | test("^20"))] | @tsv' "$f")" \
		"$(printf 'perfkite.bisect-report/1\tfound\tcommit 11\tfalse\ttrue')"
	# The tracking readers do not see it: the store reads as empty (and
	# says so, issue 22 item 4).
	run --separate-stderr perf-changes --store "$PWD/store" --all
	assert_success
	assert_output ""
	assert_equal "$stderr" "perf-changes: $PWD/store: the store holds no records (a new store, or the wrong one?)"
	clean
}

@test "--store of a git remote: the report is one commit pushed to its main branch" {
	bisect_repo repo 16 11:1.05
	git init -q --bare -b main remote.git
	FAKE_AB_NOISE=0.005 run --separate-stderr perf-bisect --cpu -C repo --good HEAD~16 \
		--bad HEAD --store "git+file://$PWD/remote.git" --cache "$PWD/cache" -o rep.json "$CONF"
	assert_success
	run git -C remote.git ls-tree -r --name-only main
	assert_success
	[ "${#lines[@]}" -eq 1 ]
	[[ ${lines[0]} =~ ^\.perfkite/bisect/[0-9]{8}T[0-9]{6}Z_[0-9a-f]{12}_[0-9a-f]{12}\.json$ ]]
	assert_equal "$(git -C remote.git log -1 --format=%s main)" \
		"Bisect: $(sha 0 | cut -c1-7)..$(sha 16 | cut -c1-7) found"
	assert_equal "$(git -C remote.git show "main:${lines[0]}" | jq -r '.culprits[0].subject')" "commit 11"
	clean
}

@test "end to end: a change point bisected with --from-change --store names its culprit in perf-changes" {
	bisect_repo repo 16 11:1.05
	good=$(sha 0) bad=$(sha 16)
	# The fixture history of perf-changes, its latency and throughput step
	# between the records of commits 0 and 16 of ./repo, as a store.
	sed "s/cf447aab518ed47536698f57bb8880b46c13fe3c/$good/g; s/8fd6cad9d1ca63f777b53bfb39619896663f9cea/$bad/g" \
		"$FIXTURES/perf-changes/history.jsonl" >history.jsonl
	store_of history.jsonl store
	run --separate-stderr perf-changes -s "$PWD/store"
	assert_failure 1
	printf '%s\n' "$output" >before.jsonl
	run ! grep -q culprit before.jsonl
	grep '"metric":"latency"' before.jsonl >change.jsonl
	assert_equal "$(jq -r '"\(.previous.commit_sha) \(.commit_sha)"' change.jsonl)" "$good $bad"
	FAKE_AB_NOISE=0.005 run --separate-stderr perf-bisect --cpu -C repo --from-change \
		--store "$PWD/store" -o rep.json "$CONF" <change.jsonl
	assert_success
	run --separate-stderr perf-changes -s "$PWD/store"
	assert_failure 1
	[ -z "$stderr" ]
	printf '%s\n' "$output" >after.jsonl
	f=$(cd store && find .perfkite/bisect -name '*.json')
	assert_equal "$(jq -c 'select(.culprit) | [.metric, .culprit.commit, .culprit.short, .culprit.subject, .culprit.dependency_change, .culprit.report]' after.jsonl)" \
		"$(jq -cn --arg k "$(sha 11)" --arg f "$f" '["latency", $k, $k[:7], "commit 11", false, $f]')"
	# The throughput step of the same range was not bisected: as it was.
	diff <(grep -v '"metric":"latency"' before.jsonl) <(grep -v '"metric":"latency"' after.jsonl)
	run --separate-stderr perf-changes -s "$PWD/store" --md
	assert_failure 1
	[[ $output == *"| worse +5.5%, culprit: $(sha 11 | cut -c1-7)<br>worse -5.2% |"* ]]
	clean
}

# Named metrics (issue 27): a Google Benchmark suite of two benchmarks
# (fixtures/runners/gbench-fake.sh, imported by perf-collect through
# run_config.output), BM_Sort/1024 alone slower from commit 37.
SUITE=$ROOT_DIR/fixtures/ab/gbench-suite.json

# The suite's history (fixtures/tests/named-metrics/suite.jsonl) steps
# between the records of these two commits: they become GOOD and BAD.
SUITE_PREV=2ec0dccd2d1674b5de0633cd0d4efba3023549ab
SUITE_AT=0b08e01141bdaae08b95224c9f4ef2aa2f06259f

# suite_store GOOD BAD DIR: the suite's history as a store, its step
# between the records of commits GOOD and BAD.
suite_store() {
	sed "s/$SUITE_PREV/$1/g; s/$SUITE_AT/$2/g" "$FIXTURES/named-metrics/suite.jsonl" >history.jsonl
	store_of history.jsonl "$3"
}

@test "named metrics: --metric BENCHMARK/NAME bisects one benchmark of a suite to commit 37" {
	bisect_repo repo 64 37:1.05
	FAKE_AB_NOISE=0.02 run --separate-stderr perf-bisect --cpu -C repo --good HEAD~64 \
		--bad HEAD --seed 1 --metric BM_Sort/1024/time -o rep.json "$SUITE"
	assert_success
	[ -z "$stderr" ]
	printf '%s\n' "$output" >out.jsonl
	assert_equal "$(jq -r '.culprits[0].commit' rep.json)" "$(sha 37)"
	assert_equal "$(jq -c '[.status, .metric, .benchmarks]' rep.json)" \
		'["found","BM_Sort/1024/time",["BM_Sort/1024"]]'
	# The first progress line says what each run's value is made of.
	assert_equal "$(head -n 1 out.jsonl)" \
		'{"event":"measured","metric":"BM_Sort/1024/time","benchmarks":["BM_Sort/1024"]}'
	# Each run's value is that benchmark's time, about 2 ms, or 2.1 from 37.
	jq -se '[.[] | select(.event == "round") | .values[]] | all(. > 0.0019 and . < 0.0023)' out.jsonl
	clean
}

@test "named metrics: --metric NAME is the geometric mean over every benchmark that carries it" {
	bisect_repo repo 16 11:1.05
	FAKE_AB_NOISE=0.005 run --separate-stderr perf-bisect --cpu -C repo --good HEAD~16 \
		--bad HEAD --metric time --md -o rep.json "$SUITE"
	assert_success
	assert_equal "$(jq -c '[.metric, .benchmarks, .culprits[0].subject]' rep.json)" \
		'["time",["BM_Hash","BM_Sort/1024"],"commit 11"]'
	# 1 ms and 2 ms: about 1.41 ms a run, 2.5% slower from commit 11.
	printf '%s\n' "$stderr" | grep '^{' >out.jsonl
	jq -se '[.[] | select(.event == "round") | .values[]] | all(. > 0.00139 and . < 0.00147)' out.jsonl
	# The annotation names the metric and what it covers.
	assert_line --index 0 --regexp "^### Bisect: [0-9a-f]{12}\.\.[0-9a-f]{12}, 16 commits, [0-9]+ runs on this agent: found$"
	assert_line --index 1 "Metric time, the geometric mean over 2 benchmarks: BM_Hash, BM_Sort/1024."
	assert_line --index 2 '| Culprit | Subject | Author | Share of the change | Notes |'
	assert_line --index 4 --regexp "^\| $(sha 11 | cut -c1-12) \| commit 11 \| "
	clean
}

@test "named metrics: --from-change on a suite's change point finds 37; stored, perf-changes names it" {
	bisect_repo repo 64 37:1.05
	suite_store "$(sha 0)" "$(sha 64)" store
	run --separate-stderr perf-changes -s "$PWD/store"
	assert_failure 1
	printf '%s\n' "$output" >before.jsonl
	run ! grep -q culprit before.jsonl
	jq -c 'select(.model_id == "BM_Sort/1024" and .metric == "time")' before.jsonl >change.jsonl
	assert_equal "$(jq -r '[.previous.commit_sha, .commit_sha, .better] | @tsv' change.jsonl)" \
		"$(printf '%s\t%s\tlower' "$(sha 0)" "$(sha 64)")"
	FAKE_AB_NOISE=0.02 run --separate-stderr perf-bisect --cpu -C repo --from-change --seed 1 \
		--store "$PWD/store" --confirm -o rep.json "$SUITE" <change.jsonl
	assert_success
	[ -z "$stderr" ]
	# Only BM_Sort/1024's records count: its time, not BM_Hash's.
	assert_equal "$(jq -c '[.metric, .benchmarks, .change.model_id, .culprits[0].subject]' rep.json)" \
		'["time",["BM_Sort/1024"],"BM_Sort/1024","commit 37"]'
	# --confirm: perf-ab's verdict on that benchmark's time alone.
	assert_equal "$(jq -r '.culprits[0].confirmation | map("\(.benchmark_id) \(.verdict)") | join(",")' rep.json)" \
		"codec-suite slower"
	# perf-changes names the culprit on that change point, and on no other.
	run --separate-stderr perf-changes -s "$PWD/store"
	assert_failure 1
	[ -z "$stderr" ]
	printf '%s\n' "$output" >after.jsonl
	assert_equal "$(jq -r 'select(.culprit) | "\(.model_id) \(.metric) \(.culprit.commit) \(.culprit.subject)"' after.jsonl)" \
		"BM_Sort/1024 time $(sha 37) commit 37"
	# Every line as it was but for that member.
	diff before.jsonl <(sed -E 's/,"culprit":\{[^}]*\}//' after.jsonl)
	clean
}

@test "named metrics: --from-change with a change of unknown direction, and a bare BENCHMARK/NAME report covers its change point" {
	bisect_repo repo 16 11:1.05
	suite_store "$(sha 0)" "$(sha 16)" store
	# A "better": null line (a metric of unknown direction) is bisected all the same.
	perf-changes -s "$PWD/store" 2>/dev/null | jq -c 'select(.model_id == "BM_Sort/1024" and
		.metric == "time") | .better = null | .direction = "unknown"' >change.jsonl || true
	assert_equal "$(jq -r '[.metric, (.better // "null")] | @tsv' change.jsonl)" "$(printf 'time\tnull')"
	FAKE_AB_NOISE=0.005 run --separate-stderr perf-bisect --cpu -C repo --from-change \
		-o rep.json "$SUITE" <change.jsonl
	assert_success
	assert_equal "$(jq -c '[.metric, .benchmarks, .culprits[0].subject]' rep.json)" \
		'["time",["BM_Sort/1024"],"commit 11"]'
	# A bisect of --metric BM_Sort/1024/time (no change point) kept in the
	# store covers the time change point of BM_Sort/1024, and no other.
	FAKE_AB_NOISE=0.005 run --separate-stderr perf-bisect --cpu -C repo --good HEAD~16 \
		--bad HEAD --metric BM_Sort/1024/time --store "$PWD/store" "$SUITE"
	assert_success
	run --separate-stderr perf-changes -s "$PWD/store"
	assert_failure 1
	assert_equal "$(jq -r 'select(.culprit) | "\(.model_id) \(.metric) \(.culprit.subject)"' <<<"$output")" \
		"BM_Sort/1024 time commit 11"
	clean
}

@test "named metrics: a metric no record carries, or none above 0, stops the first run; other benchmarks than its stop a later one; exit 2" {
	bisect_repo repo 16 11:1.05
	run --separate-stderr perf-bisect --cpu -C repo --good HEAD~16 --bad HEAD \
		--metric tmie -o rep.json "$SUITE"
	assert_failure 2
	assert_output ""
	assert_equal "$stderr" "perf-bisect: run 1 at $(sha 16 | cut -c1-12): no record carries metric 'tmie'; they carry 'time', 'cpu_time'"
	[ ! -e rep.json ]
	# A change point of a benchmark the suite does not have.
	jq -cn --arg bad "$(sha 16)" --arg good "$(sha 0)" '{model_id: "BM_Gone", metric: "time",
		unit: "s", better: "lower", commit_sha: $bad, previous: {commit_sha: $good}}' >change.jsonl
	run --separate-stderr perf-bisect --cpu -C repo --from-change "$SUITE" <change.jsonl
	assert_failure 2
	assert_equal "$stderr" "perf-bisect: run 1 at $(sha 16 | cut -c1-12): no record of benchmark 'BM_Gone' carries metric 'time'"
	# A value of 0: ab-runner.sh's widgets counter, 7 times ./ab-widgets.
	jq --arg r "$ROOT_DIR/fixtures/runners/ab-runner.sh" '.run_config.command =
		["sh", "-c", "echo 0 >ab-widgets && FAKE_AB_NAMED=1 exec \"$0\"", $r]' "$CONF" >zero.json
	run --separate-stderr perf-bisect --cpu -C repo --good HEAD~16 --bad HEAD \
		--metric widgets zero.json
	assert_failure 2
	assert_equal "$stderr" "perf-bisect: run 1 at $(sha 16 | cut -c1-12): ab-bench: the record has no positive value of metric 'widgets'"
	# A run that measures other benchmarks than the first: commit 8 (the
	# first probe, run third) leaves BM_Hash out.
	jq --arg r "$ROOT_DIR/fixtures/runners/gbench-fake.sh" '.run_config.command =
		["sh", "-c", "[ \"$(cat n.txt)\" = 8 ] && echo BM_Hash >gbench-skip; exec \"$0\" \"$1\"",
		 $r, "{output}"]' "$SUITE" >skip.json
	run --separate-stderr perf-bisect --cpu -C repo --good HEAD~16 --bad HEAD --metric time skip.json
	assert_failure 2
	assert_equal "$stderr" "perf-bisect: run 3 at $(sha 8 | cut -c1-12): metric 'time' measured on BM_Sort/1024, not on the first run's BM_Hash, BM_Sort/1024"
	# A line whose named metric has no model_id, or is no metric name.
	jq -c 'del(.model_id)' change.jsonl >nomodel.jsonl
	run --separate-stderr perf-bisect --cpu -C repo --from-change "$SUITE" <nomodel.jsonl
	assert_failure 2
	assert_equal "$stderr" "perf-bisect: <stdin>:1: the change point of metric 'time' needs its model_id"
	jq -c '.metric = ""' change.jsonl >noname.jsonl
	run --separate-stderr perf-bisect --cpu -C repo --from-change "$SUITE" <noname.jsonl
	assert_failure 2
	assert_equal "$stderr" "perf-bisect: <stdin>:1: metric '' is not a metric name: is empty"
	clean
}

@test "pipeline-templates/bisect.yml: its command bisects, annotates and keeps the report" {
	: "${PERF_STUBS:=$ROOT_DIR/build/default/stubs}"
	bisect_repo repo 16 11:1.05
	stub_start
	py -c 'import sys, yaml; s = yaml.safe_load(open(sys.argv[1]))["steps"][0]
print(s["command"].replace("$$", "$"))' "$ROOT_DIR/pipeline-templates/bisect.yml" >step.sh
	mkdir store
	good=$(sha 0) bad=$(sha 16)
	# A GPU agent, as the stand-in libraries of the tests make one.
	(cd repo && env PERF_CUDA_LIBRARY="$PERF_STUBS/libfakecuda.so" \
		PERF_NVML_LIBRARY="$PERF_STUBS/libfakenvml.so" FAKE_GPUS="NVIDIA L40S:48:8.9" \
		FAKE_AB_NOISE=0.005 PERF_BISECT_GOOD="$good" PERF_BISECT_BAD="$bad" \
		PERF_BISECT_SETUP=true PERF_BISECT_CONFIG="$CONF" PERF_STORE="$BATS_TEST_TMPDIR/store" \
		bash -eu ../step.sh)
	assert_equal "$(jq -r '.culprits[0].subject' repo/bisect-report.json)" "commit 11"
	assert_equal "$(stub_calls buildkite-agent)" "annotate --context perf-bisect --style info"
	grep -q "^| $(sha 11 | cut -c1-12) | commit 11 |" "$STUB_DIR/annotation.1.md"
	[ "$(find store/.perfkite/bisect -name '*.json' | wc -l)" -eq 1 ]
	# Triggered with a change point (perf-lane's ready-made trigger): its
	# metric, and its cohort in the stored report.
	change='{"model_id":"ab-bench","gpu_type":"L40S","metric":"throughput","direction":"worse","commit_sha":"'$bad'","previous":{"commit_sha":"'$good'"}}'
	(cd repo && env PERF_CUDA_LIBRARY="$PERF_STUBS/libfakecuda.so" \
		PERF_NVML_LIBRARY="$PERF_STUBS/libfakenvml.so" FAKE_GPUS="NVIDIA L40S:48:8.9" \
		FAKE_AB_NOISE=0.005 PERF_BISECT_GOOD="$good" PERF_BISECT_BAD="$bad" \
		PERF_BISECT_CHANGE="$change" \
		PERF_BISECT_SETUP=true PERF_BISECT_CONFIG="$CONF" PERF_STORE="$BATS_TEST_TMPDIR/store" \
		bash -eu ../step.sh)
	assert_equal "$(jq -r '[.culprits[0].subject, .metric, .change.model_id] | join(" ")' repo/bisect-report.json)" \
		"commit 11 throughput ab-bench"
	[ "$(find store/.perfkite/bisect -name '*.json' | wc -l)" -eq 2 ]
	clean
}

@test "bad input is exit 2 with one line" {
	bisect_repo repo 4
	run --separate-stderr perf-bisect --cpu -C repo --good HEAD~4 "$CONF"
	assert_failure 2
	[[ ${stderr} == "perf-bisect: give --good and --bad"* ]]
	run --separate-stderr perf-bisect --cpu -C repo --good nope --bad HEAD "$CONF"
	assert_failure 2
	[[ ${stderr} == "perf-bisect: --good: nope: not a commit"* ]]
	run --separate-stderr perf-bisect --cpu -C repo --good HEAD --bad HEAD~4 "$CONF"
	assert_failure 2
	[[ ${stderr} == "perf-bisect: --bad HEAD~4: no commit after --good HEAD"* ]]
	# Any other name is a named metric's, read at the first run; an invalid
	# name is refused at once.
	run --separate-stderr perf-bisect --cpu -C repo --good HEAD~4 --bad HEAD --metric '' "$CONF"
	assert_failure 2
	[[ ${stderr} == "perf-bisect: --metric: '' is not a metric name: is empty"$'\n'* ]]
	run --separate-stderr perf-bisect --cpu -C repo --good HEAD~4 --bad HEAD \
		--metric $'BM_X/a\tb' "$CONF"
	assert_failure 2
	[[ ${stderr} == "perf-bisect: --metric: 'BM_X/a?b' is not a metric name: holds a control character"$'\n'* ]]
	run --separate-stderr perf-bisect --cpu -C repo --good HEAD~4 --bad HEAD \
		--metric "$(printf 'x%.0s' {1..129})" "$CONF"
	assert_failure 2
	[[ ${stderr} == "perf-bisect: --metric: 'xxx"*"' is not a metric name: is longer than 128 bytes"$'\n'* ]]
	run --separate-stderr perf-bisect --cpu -C repo --good HEAD~4 --bad HEAD --probe-rounds 5:2 "$CONF"
	assert_failure 2
	run --separate-stderr perf-bisect --cpu -C repo --good HEAD~4 --bad HEAD missing.json
	assert_failure 2
	[[ ${stderr} == "perf-bisect: missing.json: No such file or directory" ]]
	run --separate-stderr perf-bisect --cpu -C repo --good HEAD~4 --bad HEAD \
		--setup false "$CONF"
	assert_failure 2
	[[ ${stderr} == *"perf-bisect: --setup failed at --"[a-z]*" $(sha 0)"* ||
		${stderr} == *"perf-bisect: --setup failed at --bad $(sha 4)"* ]]
	# A commit of a merged side branch is not on the first-parent history.
	git -C repo checkout -q -b side HEAD~2
	git -C repo commit -q --allow-empty -m side
	git -C repo checkout -q -
	git -C repo merge -q --no-ff -m merge side
	run --separate-stderr perf-bisect --cpu -C repo --good side --bad HEAD "$CONF"
	assert_failure 2
	assert_equal "$stderr" "perf-bisect: --good side: not on the first-parent history of --bad HEAD"
	clean
}

@test "a full disk is exit 2" {
	[ -w /dev/full ] || skip "no /dev/full"
	bisect_repo repo 4 2:1.05
	st=0
	FAKE_AB_NOISE=0.005 perf-bisect --cpu -C repo --good HEAD~4 --bad HEAD -o rep.json \
		"$CONF" >/dev/full 2>err || st=$?
	assert_equal "$st" 2
	grep -q "^perf-bisect: write error on standard output: No space left on device$" err
	# The report file is whole all the same.
	assert_equal "$(jq -r .status rep.json)" found
	clean
}

@test "-h, --version and an unknown option" {
	run perf-bisect -h
	assert_success
	assert_line --index 0 --partial 'usage: perf-bisect --good ref --bad ref'
	run perf-bisect --version
	assert_success
	assert_output --regexp '^perf-bisect \(perfkite\) '
	run --separate-stderr perf-bisect --nope
	assert_failure 2
	[[ $stderr == *"usage: perf-bisect"* ]]
}
