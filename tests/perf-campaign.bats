#!/usr/bin/env bats
# perf-campaign: running a plan from its binding (perf-campaign(1)
# "Running a plan"), killing the runner and resuming, the limits and
# statuses, the Buildkite pipeline and collect.

# shellcheck disable=SC2154,SC2016 # bats sets status, output, lines, stderr; single quotes hold code for another shell
load lib/common

C=$FIXTURES/perf-campaign

# campaign [NODE_CLASSES_JSON [REPEATS]]: plan.json and binding.json here,
# the inputs pinned by their digests, the fake job as both variants.
campaign() {
	local ncs=${1:-'["class-a","class-b"]'} reps=${2:-5} h b sha
	cp -R "$C/inputs" inputs
	h=$(perf-plan digest inputs/h2o)
	b=$(perf-plan digest inputs/benzene)
	cat >plan.json <<-EOF
		{"schema_name": "vq.benchmark-plan/1", "plan_id": "fake-pilot", "baseline": "generic",
		 "variants": [{"name": "generic", "runtime_digest": "sha-generic", "build_flags": "-O2"},
		              {"name": "tuned", "runtime_digest": "sha-tuned", "build_flags": "-O3 -march=native",
		               "build_cost_core_seconds": 3600}],
		 "workloads": [{"name": "h2o", "input_digest": "$h", "checks": [{"quantity": "total_energy", "abs_tolerance": 1e-8}]},
		               {"name": "benzene", "input_digest": "$b", "checks": [{"quantity": "total_energy", "abs_tolerance": 1e-8}]}],
		 "node_classes": $ncs, "layout": {"mpi_ranks": 1, "threads_per_rank": 8},
		 "warmup": 1, "repeats": $reps, "seed": 7, "confidence": 0.95, "margin": 0.02}
	EOF
	sha=$(perf-plan --json plan.json | jq -r .plan_sha256)
	py - "$sha" "$ROOT_DIR/fixtures/campaign/demo/job.sh" "$ncs" <<-'EOF' >binding.json
		import json, sys
		sha, job, ncs = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
		print(json.dumps({"schema_name": "vq.benchmark-binding/1", "plan_sha256": sha,
		    "node_classes": {n: {} for n in ncs},
		    "variants": {v: {"command": [job, v]} for v in ("generic", "tuned")},
		    "workloads": {"h2o": {"sources": "inputs/h2o", "args": []},
		                  "benzene": {"sources": "inputs/benzene"}},
		    "mem_mb": 100, "wall_time_seconds": 5}))
	EOF
}

# rows FILE: the results' rows sorted by key, without what the kernel measured.
rows() {
	jq -c '[.runs[] | del(.cpu_seconds, .peak_rss_mb)] | sort_by(.node_class, .workload, .variant, .block) | .[]' "$1"
}

setup() {
	unset PERF_CAMPAIGN_HOSTS
	cd "$BATS_TEST_TMPDIR" || return 1
}

@test "a campaign runs every planned run once, in the seeded order per node class" {
	campaign
	run --separate-stderr perf-campaign run plan.json binding.json rd
	assert_success
	assert_equal "$(jq '.runs | length' rd/results.json)" 48
	assert_equal "$(rows rd/results.json | jq -r '[.node_class, .workload, .variant, .block] | @tsv' | sort -u | wc -l)" 48
	jq -e '.schema_name == "perfkite.campaign-journal/1" and (.campaign_id | test("^[0-9a-f]{32}$")) and ([.runs[]] | all(. == "recorded")) and (.runs | length) == 48' rd/journal.json
	# each run in its own workspace, its inputs copied in, its log kept
	assert_equal "$(find rd/jobs -name mol.xyz | wc -l)" 48
	grep -qx 'tuned done' "$(find rd/jobs -name job.log | head -1)" || grep -qx 'generic done' "$(find rd/jobs -name job.log | head -1)"
	# within a node class, the runs started in the plan's order, never overlapping
	for c in class-a class-b; do
		perf-plan --json plan.json | jq -r --arg c "$c" '.order[] | select(.node_class == $c) | "\(.block) \(.workload) \(.variant)"' >want
		for d in rd/jobs/*; do
			jq -c --slurpfile s "$d/status.json" '{started, ended: $s[0].ended, node_class, block, workload, variant}' "$d/job.json"
		done | jq -s -r --arg c "$c" 'map(select(.node_class == $c)) | sort_by(.started) |
			(. as $a | [range(1; length) | select($a[.].started < $a[. - 1].ended)] | length) as $overlaps |
			if $overlaps > 0 then error("runs overlap") else .[] | "\(.block) \(.workload) \(.variant)" end' >got
		diff want got
	done
	run perf-analyze plan.json rd/results.json
	assert_success
	assert_line --regexp '^class-a +h2o +tuned +5/5 +0 +0 +1\.100 +1\.100-1\.100 +faster'
}

@test "kill -9 of the runner at random points, then resume: every run recorded once, the same results (50 kills or more, 10 in a sanitizer build)" {
	campaign
	perf-campaign run plan.json binding.json ref >/dev/null 2>&1
	local kills=0 n=0 pid want
	want=$(stress 50 10)
	while [ "$kills" -lt "$want" ]; do
		n=$((n + 1))
		rm -rf "rd$n"
		while :; do
			perf-campaign run plan.json binding.json "rd$n" >/dev/null 2>>"err$n" &
			pid=$!
			sleep "0.0$((RANDOM % 9 + 1))$((RANDOM % 10))"
			if kill -9 "$pid" 2>/dev/null; then
				wait "$pid" 2>/dev/null || true
				kills=$((kills + 1))
			else
				# a failure says why: the resumed runs' messages
				wait "$pid" || { echo "rd$n: status $?: $(cat "err$n")" >&2; false; }
				break
			fi
		done
		# finished: complete, each run once, the same rows as uninterrupted
		assert_equal "$(jq '.runs | length' "rd$n/results.json")" 48
		diff <(rows ref/results.json) <(rows "rd$n/results.json")
		jq -e '[.runs[]] | length == 48 and all(. == "recorded")' "rd$n/journal.json"
		# no job ran twice: one workspace per run
		assert_equal "$(find "rd$n/jobs" -name job.json | wc -l)" 48
	done
	echo "# $kills kills over $n campaigns" >&3
	# a killed runner leaves no job behind that was not recorded: no job
	# or supervisor holds its lock any more (a job holds it too)
	local l
	for l in rd*/jobs/*/job.lock; do
		flock -n "$l" true || { echo "$l: still held" >&2; false; }
	done
}

@test "the whole process tree killed at random points (a container stopped), then resumed: every run recorded once (50 kills)" {
	# a pid namespace of its own: killing it kills the runner, the
	# supervisors and the jobs at once, as a container stop or reboot does
	unshare --fork --pid --mount-proc --kill-child true 2>/dev/null || skip "cannot make a pid namespace here"
	campaign '["class-a"]' 5
	perf-campaign run plan.json binding.json ref >/dev/null 2>&1
	local kills=0 n=0 pid rc total lost
	total=$(jq '.runs | length' ref/results.json)
	while [ "$kills" -lt 50 ]; do
		n=$((n + 1))
		while :; do
			# the namespace of the last kill is gone (its runner's lock free)
			mkdir -p "rd$n"
			flock -w 10 "rd$n/.lock" true
			unshare --fork --pid --mount-proc --kill-child \
				perf-campaign run plan.json binding.json "rd$n" >/dev/null 2>>"err$n" &
			pid=$!
			sleep "0.$((RANDOM % 4))$((RANDOM % 10))"
			if [ "$kills" -lt 50 ] && kill -9 "$pid" 2>/dev/null; then
				wait "$pid" 2>/dev/null || true
				kills=$((kills + 1))
			else
				rc=0
				wait "$pid" || rc=$?
				[ "$rc" -eq 0 ] || { echo "rd$n: status $rc: $(cat "err$n")" >&2; false; }
				break
			fi
		done
		# complete, each run once, the same rows as uninterrupted
		diff <(rows ref/results.json) <(rows "rd$n/results.json")
		jq -e --argjson t "$total" '[.runs[]] | length == $t and all(. == "recorded")' "rd$n/journal.json"
		assert_equal "$(find "rd$n/jobs" -name job.json | wc -l)" "$total"
		assert_equal "$(find "rd$n/jobs" -name status.json | wc -l)" "$total"
		# nothing a killed writer left (a job's own workspace aside)
		assert_equal "$(find "rd$n" -path '*/work' -prune -o -name '.*.tmp.*' -print)" ""
	done
	lost=$(cat err* | grep -c "runs again" || true)
	echo "# $kills kills over $n campaigns of $total runs; $lost jobs lost with the tree were run again" >&3
	[ "$lost" -gt 0 ]
}

@test "a runner sweeps the temporary files a killed runner left in its run directory" {
	campaign
	perf-campaign run plan.json binding.json rd --once >/dev/null 2>&1
	echo '{"runs": [' >rd/.results.json.tmp.AbC123
	echo '{' >rd/.journal.json.tmp.XyZ789
	run --separate-stderr perf-campaign run plan.json binding.json rd --once
	assert_success
	[ ! -e rd/.results.json.tmp.AbC123 ]
	[ ! -e rd/.journal.json.tmp.XyZ789 ]
}

@test "every binding problem is listed before anything runs" {
	campaign
	jq 'del(.variants.tuned) | .variants.extra = {"command": ["true"]} |
		.node_classes["class-b"] = {"host": "gpu-cluster"} | .workloads.ghost = {"sources": "x"}' \
		binding.json >bad.json
	echo changed >>inputs/benzene/mol.xyz
	run --separate-stderr perf-campaign run plan.json bad.json rd
	assert_failure 2
	[ ! -e rd ]
	grep -q '^perf-campaign: unbound_variant: variant .tuned. is not bound$' <<<"$stderr"
	grep -q '^perf-campaign: extra_variant: variant .extra. is not in the plan$' <<<"$stderr"
	grep -q "^perf-campaign: unknown_host: node class 'class-b': host 'gpu-cluster' is neither this machine nor configured" <<<"$stderr"
	grep -q '^perf-campaign: extra_workload: workload .ghost. is not in the plan$' <<<"$stderr"
	grep -q '^perf-campaign: input_digest_mismatch: workload .benzene.' <<<"$stderr"
	assert_equal "${#stderr_lines[@]}" 5
}

@test "statuses: failed, time_exceeded, oom_killed, killed, unconverged, and a missing report" {
	campaign '["class-a"]'
	local mode
	for mode in fail hang grow signal unconverged noreport; do
		# the wall time ends only the hanging job: a job under a loaded
		# machine's scheduler may take seconds, never 60 (the growing job
		# holds its memory until the watchdog stops it)
		jq --arg m "$mode" --arg j "$ROOT_DIR/fixtures/campaign/demo/job.sh" '.variants.tuned.command = [$j, "tuned", $m] | .wall_time_seconds = (if $m == "hang" then 0.4 else 60 end)' \
			binding.json >"b-$mode.json"
		run --separate-stderr perf-campaign run plan.json "b-$mode.json" "rd-$mode"
		# recorded with their status: exit 0; a report left missing: 1
		if [ "$mode" = noreport ]; then assert_failure 1; else assert_success; fi
	done
	want() {
		assert_equal "$(jq -r '[.runs[] | select(.variant == "tuned") | .status] | unique | join(",")' "rd-$1/results.json")" "$2"
	}
	want fail failed
	want hang time_exceeded
	want grow oom_killed
	want signal killed
	want unconverged unconverged
	# a completed job without a report: left missing, never a made-up timing
	assert_equal "$(jq '[.runs[] | select(.variant == "tuned")] | length' rd-noreport/results.json)" 0
	jq -e '[.runs | to_entries[] | select(.value == "missing")] | length == 12' rd-noreport/journal.json
	run perf-analyze plan.json rd-noreport/results.json
	assert_line --partial "block 1 missing: variant"
	# failed runs carry the planned digest and the kernel's figures
	jq -e '.runs[] | select(.variant == "tuned") | .runtime_digest == "sha-tuned" and (.peak_rss_mb | type) == "number"' rd-fail/results.json
}

@test "the journal and results of a run directory are checked before anything runs" {
	campaign '["class-a"]'
	perf-campaign run plan.json binding.json rd >/dev/null 2>&1
	# a recorded row lost: the runner stops
	jq '.runs |= .[1:]' rd/results.json >r && mv r rd/results.json
	run --separate-stderr perf-campaign run plan.json binding.json rd
	assert_failure 2
	grep -q 'has no row for it; restore this campaign' <<<"$stderr"
	# results of another plan
	jq '.plan_sha256 = "0000"' rd/results.json >r && mv r rd/results.json
	run --separate-stderr perf-campaign run plan.json binding.json rd
	assert_failure 2
	grep -q 'plan_mismatch' <<<"$stderr"
}

@test "a run directory is locked; a new directory is a new campaign, a moved one keeps its identity" {
	campaign '["class-a"]'
	jq --arg j "$ROOT_DIR/fixtures/campaign/demo/job.sh" '.variants.tuned.command = [$j, "tuned", "hang"] | .wall_time_seconds = 0.4' binding.json >slow.json
	perf-campaign run plan.json slow.json rd >/dev/null 2>&1 &
	runner=$!
	# the runner holds the lock once its first job has started
	for _ in $(seq 1200); do
		[ -n "$(find rd/jobs -name job.json 2>/dev/null)" ] && break
		sleep 0.05
	done
	run --separate-stderr perf-campaign run plan.json slow.json rd
	echo "stderr: $stderr"
	assert_failure 2
	# the message names the process that holds the directory
	grep -qF "another perf-campaign runs this campaign (held by process $runner)" <<<"$stderr"
	wait || true
	perf-campaign run plan.json binding.json one >/dev/null 2>&1
	perf-campaign run plan.json binding.json two >/dev/null 2>&1
	[ "$(jq -r .campaign_id one/journal.json)" != "$(jq -r .campaign_id two/journal.json)" ]
	id=$(jq -r .campaign_id one/journal.json)
	mv one moved
	run perf-campaign run plan.json binding.json moved
	assert_success
	assert_equal "$(jq -r .campaign_id moved/journal.json)" "$id"
	assert_equal "$(find moved/jobs -name job.json | wc -l)" 24
}

@test "--once: one run per node class, then exit 0 while runs remain" {
	campaign
	run perf-campaign run plan.json binding.json rd --once
	assert_success
	assert_equal "$(jq '.runs | length' rd/results.json)" 2
	run perf-campaign run plan.json binding.json rd --once
	assert_success
	assert_equal "$(jq '.runs | length' rd/results.json)" 4
	run perf-campaign run plan.json binding.json rd
	assert_success
	assert_equal "$(jq '.runs | length' rd/results.json)" 48
}

@test "pipeline: one step per run in the seeded order, a concurrency group per node class, then collect" {
	campaign
	export PERF_CAMPAIGN_HOSTS="gpu-a gpu-b"
	jq '.node_classes = {"class-a": {"host": "gpu-a"}, "class-b": {"host": "gpu-b"}}' binding.json >hosted.json
	run --separate-stderr perf-campaign pipeline plan.json hosted.json
	assert_success
	printf '%s\n' "$output" >pipeline.yml
	py - pipeline.yml plan.json <<-'EOF'
		import json, subprocess, sys, yaml
		doc = yaml.safe_load(open(sys.argv[1]))
		order = json.loads(subprocess.check_output(["perf-plan", "--json", sys.argv[2]]))["order"]
		steps = doc["steps"]
		runs = steps[:-2]
		assert len(runs) == len(order) == 48, len(runs)
		for s, o in zip(runs, order):
		    assert s["label"].startswith("%s %s %s block %d" % (o["node_class"], o["workload"], o["variant"], o["block"])), s["label"]
		    assert s["agents"] == {"queue": {"class-a": "gpu-a", "class-b": "gpu-b"}[o["node_class"]]}
		    assert s["concurrency"] == 1 and s["concurrency_group"].endswith("/" + o["node_class"])
		    assert "buildkite-agent artifact upload" in s["command"]
		    assert "campaign/%s/%d/%s/%s" % (o["node_class"], o["block"], o["workload"], o["variant"]) in s["command"]
		assert "wait" in steps[-2]
		assert "perf-campaign collect" in steps[-1]["command"]
	EOF
	# run each step's command here, as an agent would, then collect
	mkdir -p agent/bin
	printf '#!/bin/sh\nexit 0\n' >agent/bin/buildkite-agent
	chmod +x agent/bin/buildkite-agent
	cp -R inputs agent/
	py -c 'import sys, yaml; [print(s["command"]) for s in yaml.safe_load(open(sys.argv[1]))["steps"][:-2]]' pipeline.yml >commands
	(cd agent && PATH="$PWD/bin:$PATH" && while IFS= read -r cmd; do sh -c "$cmd" >/dev/null; done <../commands)
	run --separate-stderr perf-campaign collect plan.json agent -o collected.json
	assert_success
	assert_equal "$stderr" "perf-campaign: 48 of 48 planned runs reported"
	perf-campaign run plan.json binding.json local >/dev/null 2>&1
	diff <(rows local/results.json | jq -c 'del(.hardware)') <(rows collected.json | jq -c 'del(.hardware)')
	perf-analyze plan.json collected.json >/dev/null
}
