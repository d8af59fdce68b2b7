#!/usr/bin/env bats
# perf-ab: the paired A/B over the fake A/B runner (fixtures/runners/
# ab-runner.sh): stops, verdicts, the seeded balanced order, agreement
# with perf-analyze, the outputs, --base-ref on a real git repository
# (removed afterwards, also when interrupted), and bad input.

# shellcheck disable=SC2154,SC2030,SC2031,SC2016 # bats sets status, output, lines, stderr; each test is a subshell; single quotes hold code for another shell
load lib/common
load lib/ab_repo

CONF=$ROOT_DIR/fixtures/ab/bench.json

setup() {
	cd "$BATS_TEST_TMPDIR" || return 1
	mkdir -p base head tmp
	export TMPDIR=$BATS_TEST_TMPDIR/tmp
	unset FAKE_AB_STATE FAKE_AB_NOISE FAKE_AB_DRIFT FAKE_AB_SLEEP FAKE_AB_NAMED
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

@test "the interval and band verdict are perf-analyze's on the same pairs" {
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
		# perf-ab's verdict splits perf-analyze's "equivalent" by where the
		# interval lies against 1; band_verdict is the band's alone.
		assert cell["verdict"] == lat["band_verdict"], (cell["verdict"], lat["band_verdict"])
		print(lat["band_verdict"])
	EOF
	assert_success
}

@test "--md prints the annotation table, --svg a figure" {
	echo 1.05 >head/ab-factor
	run --separate-stderr perf-ab --cpu --base base --head head --band 1 --md \
		--svg fig.svg "$CONF"
	assert_failure 1
	assert_line --index 0 --regexp '^### A/B: head against base, [0-9]+ pairs interleaved on this agent$'
	assert_line --index 1 --regexp '^Base /.*/base (\(not a git checkout\)|at [0-9a-f]{12}) against head '
	assert_line --index 2 '| Benchmark | Metric | Head/Base | Interval | Confidence | Band | Verdict | Pairs | Detectable | Final look |'
	assert_line --regexp '^\| ab-bench \| Latency \| 1\.0[0-9]+ \| 1\.[0-9]+-1\.[0-9]+ \| 9[0-9]\.[0-9]+% \| \+-1\.0% \| slower :x: \| [0-9]+ \| [0-9.]+% \| 1\.0[0-9]+ \(1\.[0-9]+-1\.[0-9]+\) slower at [0-9]+ \|$'
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

# runner_repo DIR: a git repository whose config ab.json (a v2 config,
# benchmark_version 3) names the runner bench/run.sh relative to itself;
# the runner runs the fake A/B runner from its own directory at factor 1.
# The head commit makes the runner 10% slower and the config version 4.
runner_repo() {
	git init -q "$1"
	git -C "$1" config user.email t@example.com
	git -C "$1" config user.name t
	mkdir "$1/bench"
	jq '.run_config = {"num_warmup_runs": 0, "num_measurement_runs": 1,
		"command": ["bench/run.sh"]} | .init_kwargs.num_gpus = 1 | .init_kwargs.sp_size = 1 | del(.thresholds.L40S)' \
		"$ROOT_DIR/fixtures/configs/wan-t2v-1.3b.json" >"$1/ab.json"
	printf '#!/bin/sh\n# the benchmark of this tree, run from its own directory\ncd "$(dirname "$0")" && echo %s >ab-factor && exec sh "$AB_RUNNER" "$@"\n' \
		1 >"$1/bench/run.sh"
	chmod +x "$1/bench/run.sh"
	git -C "$1" add ab.json bench/run.sh
	git -C "$1" commit -qm base
	sed -i 's/echo 1 >/echo 1.10 >/' "$1/bench/run.sh"
	jq '.benchmark_version = 4' "$1/ab.json" >"$1/ab.json.new"
	mv "$1/ab.json.new" "$1/ab.json"
	git -C "$1" commit -qam head
}

@test "--base-ref: each side runs the config and the relative runner of its own tree; an identity change is named" {
	runner_repo repo
	export AB_RUNNER=$ROOT_DIR/fixtures/runners/ab-runner.sh FAKE_AB_NOISE=0.005
	run --separate-stderr perf-ab --cpu --head repo --base-ref HEAD~1 --band 2 -o rep.json \
		repo/ab.json
	# Before, both sides ran the head's runner: "equivalent", exit 0.
	assert_failure 1
	assert_equal "$(jq -r '.results[] | select(.metric == "latency") | .verdict' rep.json)" slower
	run jq -r '.results[] | select(.metric == "latency") | .ratio > 1.08' rep.json
	assert_output true
	# The base ran its own copy of the config, in its worktree.
	run jq -r '.inputs.configs[0] | .base_config | endswith("/base/ab.json")' rep.json
	assert_output true
	# (the recipe's fingerprint holds the version)
	assert_equal "$(jq -c '.inputs.configs[0].identity_differences | map(.key)' rep.json)" \
		'["benchmark_version","recipe_fingerprint"]'
	assert_equal "$(jq -c '.inputs.configs[0].identity_differences[0]' rep.json)" \
		'{"key":"benchmark_version","base":"3","head":"4"}'
	[[ $stderr == *"perf-ab: wan-t2v-1.3b-2gpu: the sides ran different benchmarks: benchmark_version (base 3, head 4)"* ]]
	assert_equal "$(git -C repo worktree list | wc -l)" 1
	[ -z "$(ls tmp)" ]
}

@test "--base-ref: a config the base lacks runs the base's own runner, said" {
	runner_repo repo
	cp repo/ab.json repo/new.json
	git -C repo add new.json
	git -C repo commit -qm "a new benchmark"
	export AB_RUNNER=$ROOT_DIR/fixtures/runners/ab-runner.sh FAKE_AB_NOISE=0.005
	run --separate-stderr perf-ab --cpu --head repo --base-ref HEAD~2 --band 2 -o rep.json \
		repo/new.json
	assert_failure 1
	[[ $stderr == *"perf-ab: new.json: not in HEAD~2: the base runs the head's copy in its own tree"* ]]
	assert_equal "$(jq -r '.results[] | select(.metric == "latency") | .verdict' rep.json)" slower
	assert_equal "$(git -C repo worktree list | wc -l)" 1
}

@test "a head surely slower by less than the band is 'slower, within band', exit 0" {
	echo 1.05 >head/ab-factor
	export FAKE_AB_NOISE=0.002
	# The default band is the metric's floor (8% for latency).
	run --separate-stderr perf-ab --cpu --base base --head head \
		-o rep.json --md "$CONF"
	# The band stays the gate.
	assert_success
	run jq -r '.results[] | select(.metric == "latency" or .metric == "throughput") |
		[.metric, .verdict, .verdict_reason, .band_verdict, .final.verdict] | @tsv' rep.json
	assert_output "$(printf '%s\n' \
		"latency	slower_within_band	interval_inside_band_above_1	equivalent	slower_within_band" \
		"throughput	slower_within_band	interval_inside_band_below_1	equivalent	slower_within_band")"
	assert_equal "$(jq -r '.status' rep.json)" pass
	# An interval that contains 1 alone is equivalent.
	assert_equal "$(jq -r '.results[] | select(.metric == "memory") | .verdict' rep.json)" equivalent
	# The table says it, without the gate's mark.
	run perf-ab --cpu --base base --head head --md "$CONF"
	assert_line --regexp '^\| ab-bench \| Latency \| 1\.0[0-9]+ \| [0-9.-]+ \| [0-9.]+% \| \+-8\.0% \| slower, within band \| [0-9]+ \| .* \|$'
}

@test "the table shows the base ref, both commits, the confidence used and every metric's final look" {
	ab_git_repo repo 1.10
	run --separate-stderr perf-ab --cpu --head repo --base-ref HEAD~1 --band 2 --md -o rep.json "$CONF"
	assert_failure 1
	base=$(git -C repo rev-parse HEAD~1) head=$(git -C repo rev-parse HEAD)
	assert_line --index 1 "Base HEAD~1 at ${base:0:12} against head at ${head:0:12}."
	assert_equal "$(jq -r '[.inputs.base_sha, .inputs.head_sha] | @tsv' rep.json)" "$base	$head"
	n=$(jq -r .pairs rep.json)
	# Every metric, memory included (decided at the first look), has the last look's result.
	for m in Latency Throughput Memory; do
		c=$(jq -r --arg m "${m,,}" '.results[] | select(.metric == $m) |
			"\(.confidence * 10000 | round / 100)"' rep.json)
		assert_line --regexp "^\| ab-bench \| $m \| [0-9.]+ \| [0-9.-]+ \| ${c//./\\.}[0-9]*% \| .* \| [0-9.]+ \([0-9.]+-[0-9.]+\) [a-z, ]+ at $n \|$"
	done
	assert_equal "$(jq -r '[.results[] | select(.verdict != "not_measured") | .final.pairs] | unique | @tsv' rep.json)" "$n"
	assert_equal "$(jq -r '.results[] | select(.metric == "memory") | .decided_at' rep.json)" 5
}

@test "verdict reasons are told in head/base space, as the report shows the ratio" {
	echo 1.10 >head/ab-factor
	FAKE_AB_NOISE=0.002 run perf-ab --cpu --base base --head head --band 2 -o rep.json "$CONF"
	assert_failure 1
	# A slower latency has its head/base interval above the band, a slower throughput below.
	run jq -r '.results[] | select(.metric == "latency" or .metric == "throughput") |
		[.metric, .verdict, .verdict_reason, (.interval.low > 1.02)] | @tsv' rep.json
	assert_output "$(printf '%s\n' "latency	slower	interval_above_band	true" \
		"throughput	slower	interval_below_band	false")"
	echo 0.90 >head/ab-factor
	FAKE_AB_NOISE=0.002 run perf-ab --cpu --base base --head head --band 2 -o rep.json "$CONF"
	assert_success
	run jq -r '.results[] | select(.metric == "latency" or .metric == "throughput") | [.metric, .verdict, .verdict_reason] | @tsv' rep.json
	assert_output "$(printf '%s\n' "latency	faster	interval_below_band" "throughput	faster	interval_above_band")"
}

@test "an output that cannot be written is exit 2 before the first run" {
	mkdir state out
	export FAKE_AB_STATE=$PWD/state
	cp "$CONF" conf.json
	local -a bad=("-o out" "--svg /nonexistent/x.svg" "-o nope/rep.json" "-o conf.json"
		"-o same --svg same")
	local -a why=("perf-ab: -o out: is a directory"
		"perf-ab: --svg /nonexistent/x.svg: cannot write in /nonexistent: No such file or directory"
		"perf-ab: -o nope/rep.json: cannot write in $PWD/nope: No such file or directory"
		"perf-ab: -o conf.json: is a config; refusing to overwrite it"
		"perf-ab: -o and --svg name one file: same")
	local k
	for k in "${!bad[@]}"; do
		# shellcheck disable=SC2086 # word splitting wanted
		run --separate-stderr perf-ab --cpu --base base --head head ${bad[k]} conf.json
		assert_failure 2
		assert_output ""
		assert_equal "$stderr" "${why[k]}"
	done
	# Nothing ran: no run was counted, no worktree made, no setup run.
	[ ! -e state/ab-count ]
	ab_git_repo repo 1.10
	run --separate-stderr perf-ab --cpu --head repo --base-ref HEAD~1 --setup 'touch "$FAKE_AB_STATE/setup"' \
		--svg /nonexistent/x.svg "$CONF"
	assert_failure 2
	[ -z "$(ls state)" ]
	assert_equal "$(git -C repo worktree list | wc -l)" 1
	cmp conf.json "$CONF"
}

@test "a failed --setup's log is kept with -o, else its tail is shown, never a removed path" {
	ab_git_repo repo 1.10
	run --separate-stderr perf-ab --cpu --head repo --base-ref HEAD~1 \
		--setup 'echo building the base; exit 3' "$CONF"
	assert_failure 2
	[[ $stderr == *"building the base"* ]]
	[[ $stderr != *"$TMPDIR"* ]]
	[[ $stderr == *"Worker log tail for --setup (not kept: it goes with the scratch directory; -o keeps it)"* ]]
	run --separate-stderr perf-ab --cpu --head repo --base-ref HEAD~1 -o rep.json \
		--setup 'echo building the base; exit 3' "$CONF"
	assert_failure 2
	[[ $stderr == *"Worker log tail for --setup (rep.setup.log)"* ]]
	[[ $stderr != *"$TMPDIR"* ]]
	assert_equal "$(cat rep.setup.log)" "building the base"
	[ ! -e rep.json ]
	# A failing run's log too (perf-collect's own lines in it still name
	# its worker log in the scratch directory, and show its tail).
	run --separate-stderr perf-ab --cpu --base base --head head -r false -o rep.json "$CONF"
	assert_failure 2
	[[ $stderr == *"Worker log tail for ab-bench: pair 1: "*" (rep.run-001-0-"*".log)"* ]]
	grep -q "the runner exited with status 1" rep.run-001-0-*.log
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

# Named metrics (issue 24): with FAKE_AB_NAMED=1 the fake runner also
# reports time (ms, lower), items_per_second (items/s) and widgets (no
# direction) through metric events, which perf-collect records.

@test "named metrics: a 30% slower head is slower on the runner's time, a verdict per named metric with its unit, exit 1" {
	echo 1.3 >head/ab-factor
	run --separate-stderr env FAKE_AB_NAMED=1 perf-ab --cpu --base base --head head --band 5 -o rep.json "$CONF"
	assert_failure 1
	[ -z "$stderr" ]
	assert_equal "$(jq -r '.status' rep.json)" slower
	assert_equal "$(jq -r '.results[] | select(.unit != null) |
		[.metric, .unit, .gated, (if .higher_is_better == null then "null" else .higher_is_better end),
		.verdict] | @tsv' rep.json)" \
		"$(printf '%s\n' "time	s	true	false	slower" "items_per_second	items/s	true	true	slower" \
			"widgets		false	null	equivalent")"
	# The time ratio is the runs' own (ms made seconds), as latency's.
	jq -e '(.results[] | select(.metric == "time") | .ratio) as $t |
		(.results[] | select(.metric == "latency") | .ratio) as $l |
		($t > 1.2 and $t < 1.4 and ($t - $l | fabs) < 0.01)' rep.json >/dev/null
	jq -e '.runs[0].named_metrics | keys == ["items_per_second", "time", "widgets"]' rep.json >/dev/null
	run --separate-stderr env FAKE_AB_NAMED=1 perf-ab --cpu --base base --head head --band 5 --md "$CONF"
	assert_failure 1
	assert_line --regexp '^\| ab-bench \| time \| 1\.[23][0-9]{2} \| .* \| slower :x: \|'
	assert_line --regexp '^\| ab-bench \| widgets \(not gated\) \| 1\.000 \|'
}

@test "named metrics: a change of a metric of unknown direction is higher or lower, never slower, exit 0" {
	echo 1.5 >head/ab-widgets
	run --separate-stderr env FAKE_AB_NAMED=1 perf-ab --cpu --base base --head head --band 5 -o rep.json "$CONF"
	assert_success
	assert_equal "$(jq -r '.status' rep.json)" pass
	assert_equal "$(jq -r '.results[] | select(.metric == "widgets") | [.gated, .verdict, .band_verdict, .ratio] | @tsv' rep.json)" \
		"$(printf 'false\thigher\thigher\t1.5')"
	# The config's policy block gives it a direction: then it is slower, and gates.
	jq --arg runner "$ROOT_DIR/fixtures/runners/ab-runner.sh" \
		'.regression_thresholds = {"metrics": {"*/widgets": {"better": "lower"}}} |
		.run_config.command = [$runner]' "$CONF" >bench.json
	run --separate-stderr env FAKE_AB_NAMED=1 perf-ab --cpu --base base --head head --band 5 -o rep.json bench.json
	assert_failure 1
	assert_equal "$(jq -r '.results[] | select(.metric == "widgets") | [.gated, .higher_is_better, .verdict] | @tsv' rep.json)" \
		"$(printf 'true\tfalse\tslower')"
}

@test "named metrics: a runner without them gives the report it always gave" {
	run --separate-stderr perf-ab --cpu --base base --head head --band 5 --seed 3 -o rep.json "$CONF"
	assert_success
	jq -e '[.results[].metric] == ["latency", "throughput", "memory", "text_encoder_time_s", "dit_time_s", "vae_decode_time_s"]' rep.json >/dev/null
	jq -e '[.results[] | has("unit")] | any | not' rep.json >/dev/null
	jq -e '[.runs[] | has("named_metrics")] | any | not' rep.json >/dev/null
}

@test "issue 24 end to end: a benchmark 30% slower is a change point of its time, charted, and the A/B says slower" {
	# Nine scheduled-main lane runs of the runner, an hour apart; from the
	# seventh on, it is 30% slower.
	mkdir store lane
	for i in 0 1 2 3 4 5 6 7 8; do
		if [ "$i" -ge 6 ]; then echo 1.3 >lane/ab-factor; else echo 1 >lane/ab-factor; fi
		(
			cd lane || exit 1
			FAKE_AB_NAMED=1 FAKE_AB_STATE=$BATS_TEST_TMPDIR/lane PERF_RUN_SOURCE=scheduled_main \
				BUILDKITE_COMMIT=$(printf '%040d' "$i") perf-collect --cpu -o "results-$i" "$CONF" >raw.jsonl
			py -c '
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    r["timestamp"] = "2026-03-01T%02d:00:00+00:00" % int(sys.argv[2])
    print(json.dumps(r, separators=(",", ":")))' raw.jsonl "$i" >timed.jsonl
			perf-gate-static timed.jsonl | perf-normalize --run-source scheduled_main |
				perf-gate-rolling --store ../store 2>/dev/null |
				perf-upload --store ../store --policy always >/dev/null 2>&1 || true
		)
	done
	[ "$(find store -name '*.json' | wc -l)" -eq 9 ]
	# perf-changes finds the step on the benchmark's time, at the seventh run.
	run --separate-stderr perf-changes -s store --metric time
	assert_failure 1
	assert_equal "$(jq -r '[.model_id, .metric, .unit, .direction, .index, .commit_sha[-1:]] | @tsv' <<<"$output")" \
		"$(printf 'ab-bench\ttime\ts\tworse\t6\t6')"
	printf '%s\n' "$output" >cps.jsonl
	# The dashboard charts it, the change line on its time chart.
	run --separate-stderr perf-summarize --html d.html -s store --changes cps.jsonl --now 2026-03-02T00:00:00Z </dev/null
	assert_success
	py - d.html <<-'PY'
		import re, sys
		page = open(sys.argv[1]).read()
		charts = re.findall(r'<figure><figcaption>(.*?)</figcaption>(.*?)</figure>', page, re.S)
		time = [c for cap, c in charts if cap.startswith("time (s)")]
		assert len(time) == 1, [cap for cap, c in charts]
		assert "change point: worse +" in time[0], time[0]
	PY
	# The A/B of a pull request that slows it says slower for that metric.
	echo 1.3 >head/ab-factor
	run --separate-stderr env FAKE_AB_NAMED=1 perf-ab --cpu --base base --head head --band 5 -o rep.json "$CONF"
	assert_failure 1
	assert_equal "$(jq -r '.results[] | select(.metric == "time") | .verdict' rep.json)" slower
}
