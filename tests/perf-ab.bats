#!/usr/bin/env bats
# perf-ab: the paired A/B over the fake A/B runner (fixtures/runners/
# ab-runner.sh): stops, verdicts, the seeded balanced order, agreement
# with perf-analyze, the outputs, --base-ref on a real git repository
# (removed afterwards, also when interrupted), and bad input.

# shellcheck disable=SC2154 # bats sets status, output, lines, stderr
load lib/common
load lib/ab_repo

CONF=$ROOT_DIR/fixtures/ab/bench.json

setup() {
	cd "$BATS_TEST_TMPDIR" || return 1
	mkdir -p base head tmp
	export TMPDIR=$BATS_TEST_TMPDIR/tmp
	unset FAKE_AB_STATE FAKE_AB_NOISE FAKE_AB_DRIFT FAKE_AB_SLEEP
}

@test "an A/A job stops early for equivalence, exit 0" {
	run --separate-stderr perf-ab --cpu --base base --head head --band 5 "$CONF"
	assert_success
	[ -z "$stderr" ]
	printf '%s\n' "$output" >rep.json
	n=$(jq -r '.pairs' rep.json)
	[ "$n" -ge 5 ] && [ "$n" -lt 30 ]
	assert_equal "$(jq -r '.results[0] | [.metric, .verdict, .decided_at] | @tsv' rep.json)" \
		"$(printf 'latency\tequivalent\t%s' "$n")"
	assert_equal "$(jq -r '.status' rep.json)" pass
	assert_equal "$(jq '.runs | length' rep.json)" $((2 * n))
	# The scratch directory is gone.
	[ -z "$(ls tmp)" ]
}

@test "a 5% slower head is found slower, exit 1; order balanced and as Python shuffles it" {
	echo 1.05 >head/ab-factor
	run --separate-stderr perf-ab --cpu --base base --head head --band 1 --seed 42 \
		-o rep.json "$CONF"
	assert_failure 1
	[ -z "$stderr" ]
	assert_equal "$(jq -r '.status' rep.json)" slower
	assert_equal "$(jq -r '.results[] | select(.metric == "latency") | .verdict' rep.json)" slower
	assert_equal "$(jq -r '.results[] | select(.metric == "throughput") | .verdict' rep.json)" slower
	assert_equal "$(jq -r '.results[] | select(.metric == "memory") | .verdict' rep.json)" equivalent
	# stdout is the same report as -o.
	assert_equal "$(jq -cS . <<<"$output")" "$(jq -cS . rep.json)"
	run py - rep.json <<-'EOF'
		import json, random, sys
		r = json.load(open(sys.argv[1]))
		n = r["pairs"]
		rng = random.Random(42)
		want = []
		for k in range((n + 1) // 2):
		    b = ["base", "head"]
		    rng.shuffle(b)
		    want += b
		got = [o["first"] for o in r["order"]]
		assert got == want[:n], (got, want)
		runs = r["runs"]
		assert [x["position"] for x in runs] == list(range(1, 2 * n + 1))
		for p in range(n):
		    assert runs[2 * p]["side"] == got[p] and runs[2 * p]["pair"] == p + 1
		lat = [x for x in r["results"] if x["metric"] == "latency"][0]
		b = [x["metrics"]["latency"] for x in runs if x["side"] == "base"]
		h = [x["metrics"]["latency"] for x in runs if x["side"] == "head"]
		assert all(abs(q - hh / bb) < 1e-12 for q, hh, bb in zip(lat["ratios"], h, b))
		assert 1.02 < lat["ratio"] < 1.08, lat["ratio"]
		print("ok")
	EOF
	assert_success
	assert_output ok
}

@test "the interval and verdict are perf-analyze's on the same pairs" {
	echo 1.03 >head/ab-factor
	run perf-ab --cpu --base base --head head --band 1 --pairs 6:6 -o rep.json "$CONF"
	[ "$status" -le 1 ]
	py - rep.json <<-'EOF'
		import hashlib, json, sys
		r = json.load(open(sys.argv[1]))
		lat = [x for x in r["results"] if x["metric"] == "latency"][0]
		plan = {"schema_name": "vq.benchmark-plan/1", "plan_id": "ab", "baseline": "base",
		    "variants": [{"name": "base", "runtime_digest": "b", "build_flags": ""},
		                 {"name": "head", "runtime_digest": "h", "build_flags": ""}],
		    "workloads": [{"name": "w", "input_digest": "w",
		        "checks": [{"quantity": "e", "abs_tolerance": 1}]}], "node_classes": ["n"],
		    "layout": {"mpi_ranks": 1, "threads_per_rank": 1}, "warmup": 0,
		    "repeats": r["pairs"], "seed": 1, "confidence": lat["confidence"],
		    "margin": lat["band"]}
		sha = hashlib.sha256(json.dumps(plan, sort_keys=True, separators=(",", ":"))
		    .encode()).hexdigest()
		runs = []
		for x in r["runs"]:
		    runs.append({"workload": "w", "variant": x["side"], "node_class": "n",
		        "block": x["pair"], "status": "completed", "runtime_digest": x["side"][0],
		        "hardware": {"cpu_model": "c"}, "steady_seconds": x["metrics"]["latency"],
		        "values": {"e": 0}})
		json.dump(plan, open("plan.json", "w"))
		json.dump({"schema_name": "vq.benchmark-results/1", "plan_sha256": sha,
		    "runs": runs}, open("results.json", "w"))
		json.dump(lat, open("lat.json", "w"))
	EOF
	perf-analyze --json plan.json results.json >an.json
	run py - an.json lat.json <<-'EOF'
		import json, sys
		cell = json.load(open(sys.argv[1]))["cells"][0]
		lat = json.load(open(sys.argv[2]))
		lo, hi = cell["interval"]["low"], cell["interval"]["high"]
		assert abs(1 / hi - lat["interval"]["low"]) < 1e-12, (lo, hi, lat)
		assert abs(1 / lo - lat["interval"]["high"]) < 1e-12, (lo, hi, lat)
		assert abs(1 / cell["ratio"]["geometric_mean"] - lat["ratio"]) < 1e-12
		assert cell["verdict"] == lat["verdict"], (cell["verdict"], lat["verdict"])
		print(lat["verdict"])
	EOF
	assert_success
}

@test "--md prints the annotation table, --svg a figure" {
	echo 1.05 >head/ab-factor
	run --separate-stderr perf-ab --cpu --base base --head head --band 1 --md \
		--svg fig.svg "$CONF"
	assert_failure 1
	assert_line --index 0 --regexp '^### A/B: head against base, [0-9]+ pairs interleaved on this agent$'
	assert_line --index 1 '| Benchmark | Metric | Head/Base | Interval | Band | Verdict | Pairs | Detectable |'
	assert_line --regexp '^\| ab-bench \| Latency \| 1\.0[0-9]+ \| 1\.[0-9]+-1\.[0-9]+ \| \+-1\.0% \| slower :x: \| [0-9]+ \| [0-9.]+% \|$'
	run py -c 'import sys, xml.dom.minidom as m; d = m.parse(sys.argv[1]); print(len(d.getElementsByTagName("circle")))' fig.svg
	assert_success
	[ "$output" -gt 10 ]
}

@test "a drift over the job cancels when interleaved" {
	mkdir state
	FAKE_AB_STATE=$PWD/state FAKE_AB_DRIFT=0.10 FAKE_AB_NOISE=0.002 FAKE_AB_RUNS=20 \
		run --separate-stderr perf-ab --cpu --base base --head head --band 2 --pairs 10:10 "$CONF"
	assert_success
	printf '%s\n' "$output" >rep.json
	# Base then head, the head would be about 5% slower.
	run jq -r '.results[0] | "\(.verdict) \((.ratio - 1) * 100 | fabs < 0.5)"' rep.json
	assert_output "equivalent true"
}

@test "a failing runner is exit 2 with the log tail, nothing left behind" {
	run --separate-stderr perf-ab --cpu --base base --head head -r false "$CONF"
	assert_failure 2
	assert_output ""
	[[ $stderr == "perf-ab: ab-bench: pair 1: "*": "*"perf-collect exited with status 1"* ]]
	[ -z "$(ls tmp)" ]
}

@test "--base-ref on a real repository: the slower head commit is caught, the worktree removed" {
	ab_git_repo repo 1.10
	run --separate-stderr perf-ab --cpu --head repo --base-ref HEAD~1 \
		--setup 'echo built >built' --band 2 -o rep.json "$CONF"
	assert_failure 1
	[ -z "$stderr" ]
	assert_equal "$(jq -r '.results[0].verdict' rep.json)" slower
	assert_equal "$(jq -r '.inputs.base_ref' rep.json)" "HEAD~1"
	assert_equal "$(git -C repo worktree list | wc -l)" 1
	[ -z "$(ls tmp)" ]
}

@test "--base-ref: interrupted by SIGTERM, exit 2, the worktree is removed" {
	ab_git_repo repo 1.10
	FAKE_AB_SLEEP=0.5 perf-ab --cpu --head repo --base-ref HEAD~1 "$CONF" >out 2>err &
	pid=$!
	for _ in $(seq 100); do
		[ "$(git -C repo worktree list | wc -l)" -eq 2 ] && break
		sleep 0.1
	done
	assert_equal "$(git -C repo worktree list | wc -l)" 2
	sleep 0.3
	kill -TERM "$pid"
	st=0
	wait "$pid" || st=$?
	assert_equal "$st" 2
	grep -q "^perf-ab: stopped by signal 15$" err
	assert_equal "$(git -C repo worktree list | wc -l)" 1
	[ -z "$(ls tmp)" ]
}

@test "--base-ref: an unknown ref or a failing setup is exit 2" {
	ab_git_repo repo 1.10
	run --separate-stderr perf-ab --cpu --head repo --base-ref nope "$CONF"
	assert_failure 2
	[[ $stderr == "perf-ab: --base-ref nope: "* ]]
	run --separate-stderr perf-ab --cpu --head repo --base-ref HEAD~1 --setup 'exit 3' "$CONF"
	assert_failure 2
	[[ $stderr == "perf-ab: --setup: /bin/sh exited with status 3"* ]]
	assert_equal "$(git -C repo worktree list | wc -l)" 1
	[ -z "$(ls tmp)" ]
}

@test "bad usage is exit 2 with the reason and the usage" {
	local -a bad=("--base base --base-ref x" "--head head" "--base base --setup x"
		"--base base --pairs 1:5" "--base base --pairs 6:5" "--base base --pairs 5:x"
		"--base base --band -1" "--base base --band 5%" "--base base --alpha 0"
		"--base base --alpha nan" "--base base --seed -1" "--base base --timeout 0")
	for a in "${bad[@]}"; do
		# shellcheck disable=SC2086 # word splitting wanted
		run --separate-stderr perf-ab $a "$CONF"
		assert_failure 2
		assert_output ""
		[[ $stderr == "perf-ab: "*"usage: perf-ab "* ]] || { echo "$a: $stderr"; return 1; }
	done
	run --separate-stderr perf-ab --base base
	assert_failure 2
	[[ $stderr == "perf-ab: no benchmark config given"* ]]
}

@test "a missing directory or an invalid config is exit 2" {
	run --separate-stderr perf-ab --base nope --head head "$CONF"
	assert_failure 2
	assert_equal "$stderr" "perf-ab: --base nope: not a directory"
	echo '{"benchmark_id": nope}' >bad.json
	run --separate-stderr perf-ab --cpu --base base --head head bad.json
	assert_failure 2
	assert_output ""
	[[ $stderr == *"bad.json:1: invalid JSON"* ]]
}

@test "a full disk is exit 2" {
	run --separate-stderr bash -c "perf-ab --cpu --base base --head head --band 5 '$CONF' >/dev/full"
	assert_failure 2
	assert_equal "$stderr" "perf-ab: write error on standard output: No space left on device"
}

@test "-h, --version and an unknown option" {
	check_help perf-ab
	check_version perf-ab
	check_unknown_option perf-ab
}
