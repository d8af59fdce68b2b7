#!/usr/bin/env bats
# perf-plan and perf-analyze: the plan's digest and seeded order, the
# analysis against an independent Python implementation
# (bench/campaign_analyze.py, standard library only), every verdict,
# exclusion reason and error code, and the four outputs.

# shellcheck disable=SC2154 # bats sets status, output, lines, stderr
load lib/common
load lib/golden

A=$FIXTURES/perf-analyze

setup() {
	cd "$BATS_TEST_TMPDIR" || return 1
}

# same_report CASE: perf-analyze --json equals the expected report (1e-6).
same_report() {
	perf-analyze --json "$A/$1.plan.json" "$A/$1.results.json" >"$1.got.json"
	py "$ROOT_DIR/tests/lib/jsoncmp.py" "$1.got.json" "$A/$1.report.json"
}

@test "perf-plan: digest and order as Python's json and random compute them" {
	run perf-plan --json "$A/aggregate.plan.json"
	assert_success
	printf '%s\n' "$output" >order.json
	run py - "$A/aggregate.plan.json" order.json <<-'EOF'
		import hashlib, json, random, sys
		plan = json.load(open(sys.argv[1]))
		got = json.load(open(sys.argv[2]))
		sha = hashlib.sha256(json.dumps(plan, sort_keys=True, separators=(",", ":"),
		                                ensure_ascii=True).encode()).hexdigest()
		r = random.Random(plan["seed"])
		order = []
		for nc in plan["node_classes"]:
		    for b in range(1 - plan["warmup"], plan["repeats"] + 1):
		        pairs = [(w["name"], v["name"]) for w in plan["workloads"] for v in plan["variants"]]
		        r.shuffle(pairs)
		        order += [{"node_class": nc, "block": b, "warmup": b <= 0, "workload": w,
		                   "variant": v} for w, v in pairs]
		assert list(got) == ["plan_id", "plan_sha256", "order"], list(got)
		assert got["plan_sha256"] == sha
		assert got["order"] == order
		print(len(order))
	EOF
	assert_success
	assert_output 144
}

@test "perf-plan and perf-analyze: every output of every case, byte for byte" {
	local c
	golden perf-analyze/golden/plan-table perf-plan "$A/faster.plan.json"
	golden perf-analyze/golden/plan-json perf-plan --json "$A/faster.plan.json"
	golden perf-analyze/golden/plan-aggregate perf-plan "$A/aggregate.plan.json"
	for c in aggregate break-even-no-bound break-even-no-saving crosses-band equivalent exclusions \
		faster incomparable missing slower; do
		golden "perf-analyze/golden/$c.table" perf-analyze "$A/$c.plan.json" "$A/$c.results.json"
		golden "perf-analyze/golden/$c.json" perf-analyze --json "$A/$c.plan.json" "$A/$c.results.json"
		rm -f "$c.csv"
		golden "perf-analyze/golden/$c.csv" then_cat "$c.csv" \
			perf-analyze --csv "$c.csv" "$A/$c.plan.json" "$A/$c.results.json"
	done
	golden perf-analyze/golden/err-plan perf-analyze "$A/err-plan.plan.json" "$A/err-plan.results.json"
}

@test "perf-plan: the digest ignores formatting and key order; the table" {
	jq -S . "$A/faster.plan.json" >sorted.json
	jq -c . "$A/faster.plan.json" >compact.json
	a=$(perf-plan --json "$A/faster.plan.json" | jq -r .plan_sha256)
	b=$(perf-plan --json sorted.json | jq -r .plan_sha256)
	c=$(perf-plan --json compact.json | jq -r .plan_sha256)
	[[ $a =~ ^[0-9a-f]{64}$ ]]
	assert_equal "$b" "$a"
	assert_equal "$c" "$a"
	cmp <(perf-plan --json sorted.json | jq -c .order) <(perf-plan --json compact.json | jq -c .order)
	run perf-plan "$A/faster.plan.json"
	assert_success
	assert_line --index 1 "plan_sha256 $a"
	assert_line --index 3 --regexp '^ +# +node class +block +workload +variant$'
	assert_line --index 4 --regexp '^ +1  class-a +0 warm-up +h2o-ccsd +(generic|tuned)$'
	assert_equal "${#lines[@]}" 16
}

@test "perf-plan lists every problem of a plan, each with its code" {
	jq '.repeats = 3 | .baseline = "nope" | .variants[1].runtime_digest = "sha-generic" |
		.workloads[0].checks = [] | .confidence = 2' "$A/faster.plan.json" >bad.json
	run --separate-stderr perf-plan bad.json
	assert_failure 2
	[ -z "$output" ]
	grep -q '^perf-plan: repeats_below_minimum: ' <<<"$stderr"
	grep -q '^perf-plan: unknown_baseline: ' <<<"$stderr"
	grep -q '^perf-plan: duplicate_runtime_digest: ' <<<"$stderr"
	grep -q '^perf-plan: workload_without_checks: ' <<<"$stderr"
	grep -q '^perf-plan: invalid_plan: confidence' <<<"$stderr"
	assert_equal "${#stderr_lines[@]}" 5
}

@test "perf-plan digest: a directory's input digest; links and special files refused" {
	mkdir -p in/sub
	printf 'hello\n' >in/x.txt
	: >in/sub/empty
	run perf-plan digest in
	assert_success
	run py - in <<-'EOF'
		import hashlib, json, os, sys
		root = sys.argv[1]; ents = []
		for dp, dns, fns in os.walk(root):
		    for n in dns + fns:
		        full = os.path.join(dp, n); rel = os.path.relpath(full, root)
		        if os.path.isdir(full):
		            ents.append({"path": rel, "type": "directory", "size": 0, "sha256": None})
		        else:
		            b = open(full, "rb").read()
		            ents.append({"path": rel, "type": "file", "size": len(b),
		                         "sha256": hashlib.sha256(b).hexdigest()})
		ents.sort(key=lambda e: e["path"])
		print(hashlib.sha256(json.dumps(ents, sort_keys=True, separators=(",", ":")).encode()).hexdigest())
	EOF
	assert_success
	local want=$output
	run perf-plan digest in
	assert_success
	assert_output "$want"
	ln -s x.txt in/link
	run --separate-stderr perf-plan digest in
	assert_failure 2
	assert_equal "$stderr" "perf-plan: in/link: a symbolic link is refused"
}

@test "every verdict and break-even form agrees with the Python analysis" {
	for c in faster slower equivalent crosses-band missing incomparable exclusions \
		break-even-no-bound break-even-no-saving aggregate; do
		same_report "$c"
	done
	jq -e '.cells[0] | .verdict == "faster" and .break_even.runs_conservative != null' faster.got.json
	jq -e '.cells[0].verdict == "slower"' slower.got.json
	jq -e '.cells[0].verdict == "equivalent"' equivalent.got.json
	jq -e '.cells[0].verdict_reason == "interval_crosses_band_edge"' crosses-band.got.json
	jq -e '.cells[0].verdict_reason == "fewer_retained_pairs_than_repeats"' missing.got.json
	jq -e '.cells[0].verdict == "incomparable" and .node_classes[0].comparable == false' incomparable.got.json
	jq -e '.cells[0].break_even | .runs != null and .runs_conservative == null and .reason == "saving_lower_bound_not_positive"' break-even-no-bound.got.json
	jq -e '.cells[0].break_even | .runs == null and .reason == "mean_saving_not_positive"' break-even-no-saving.got.json
}

@test "every exclusion reason, in order, and a single pair without an interval" {
	same_report exclusions
	run jq -c '.cells[0] | [.excluded[] | [.block, .reasons]], .retained_pairs, .interval' exclusions.got.json
	assert_line --index 0 '[[1,["variant_status_failed"]],[2,["baseline_status_oom_killed","variant_status_time_exceeded"]],[3,["variant_runtime_digest_mismatch","variant_layout_mismatch"]],[4,["baseline_steady_seconds_missing"]],[5,["check_failed:total_energy"]],[6,["check_value_missing:gap_ev"]],[7,["check_value_missing:total_energy","check_value_missing:gap_ev"]],[8,["variant_status_unconverged"]],[9,["baseline_status_killed"]]]'
	assert_line --index 1 1
	assert_line --index 2 null
}

@test "aggregates: left-out workloads and their reasons; warm-ups counted, never analysed" {
	same_report aggregate
	jq -e '.aggregates[0] | .workloads == ["h2o-ccsd", "benzene-mp2"] and .left_out == [{"workload": "c60-hf", "reason": "incomplete_pairs"}]' aggregate.got.json
	jq -e '.aggregates[2] | .geometric_mean == null and (.left_out | map(.reason) | unique) == ["node_class_incomparable"]' aggregate.got.json
	jq -e '.node_classes[0] | .warmup_runs == 18 and .measured_runs == 49' aggregate.got.json
	jq -e '.costs == [{"variant": "avx2", "build_cost_core_seconds": 0, "deployment_cost_core_seconds": 0, "storage_bytes": null}, {"variant": "avx512", "build_cost_core_seconds": 7200.5, "deployment_cost_core_seconds": 0, "storage_bytes": 12345}]' aggregate.got.json
}

@test "every error code: exit 2, nothing on stdout, one line with the code" {
	for f in "$A"/err-*.error; do
		c=$(basename "$f" .error)
		run --separate-stderr perf-analyze --json "$A/$c.plan.json" "$A/$c.results.json"
		assert_failure 2
		[ -z "$output" ]
		assert_equal "${#stderr_lines[@]}" 1
		[[ ${stderr_lines[0]} == "perf-analyze: $(cat "$f"): "* ]]
	done
	# not UTF-8
	printf '{"schema_name": "\xff"}' >latin.json
	run --separate-stderr perf-analyze latin.json "$A/faster.results.json"
	assert_failure 2
	[[ $stderr == "perf-analyze: invalid_json: "* ]]
}

@test "the same report, CSV and SVG bytes whatever order the runs were recorded in" {
	# (python, not jq: jq 1.6 would rewrite 80.0 as 80 and so the results' digest)
	py -c 'import json, sys; d = json.load(open(sys.argv[1])); d["runs"].reverse(); json.dump(d, open(sys.argv[2], "w"))' \
		"$A/aggregate.results.json" reversed.json
	perf-analyze --json --csv a.csv --svg a.svg "$A/aggregate.plan.json" "$A/aggregate.results.json" >a.json
	perf-analyze --json --csv b.csv --svg b.svg "$A/aggregate.plan.json" reversed.json >b.json
	cmp a.json b.json
	cmp a.csv b.csv
	cmp a.svg b.svg
	perf-analyze "$A/aggregate.plan.json" "$A/aggregate.results.json" >a.txt
	perf-analyze "$A/aggregate.plan.json" reversed.json >b.txt
	cmp a.txt b.txt
}

@test "the text table: break-even as 237 (244) and 237 (-) with the reason in the notes" {
	run perf-analyze "$A/faster.plan.json" "$A/faster.results.json"
	assert_success
	assert_line --regexp '^class-a +h2o-ccsd +tuned +5/5 +0 +0 +1\.0[0-9]{2} +1\.[0-9]{3}-1\.[0-9]{3} +faster +783 \(835\)$'
	run perf-analyze "$A/break-even-no-bound.plan.json" "$A/break-even-no-bound.results.json"
	assert_success
	assert_line --regexp ' faster +717 \(-\)$'
	assert_line "  class-a h2o-ccsd tuned: break-even conservative count unavailable: saving_lower_bound_not_positive"
	run perf-analyze "$A/break-even-no-saving.plan.json" "$A/break-even-no-saving.results.json"
	assert_success
	assert_line --regexp ' faster +-$'
	assert_line "  class-a h2o-ccsd tuned: break-even unavailable: mean_saving_not_positive"
}

@test "the CSV: one row per node class, workload and variant; empty fields when unavailable" {
	perf-analyze --csv cells.csv "$A/break-even-no-bound.plan.json" "$A/break-even-no-bound.results.json" >/dev/null
	run cat cells.csv
	assert_line --index 0 "node_class,workload,variant,planned_pairs,retained_pairs,excluded_pairs,missing_pairs,geometric_mean,median,min,max,interval_low,interval_high,verdict,verdict_reason,break_even_runs,break_even_runs_conservative,break_even_reason"$'\r'
	[[ ${lines[1]} == class-a,h2o-ccsd,tuned,5,5,0,0,*,faster,interval_above_band,716.228*,,saving_lower_bound_not_positive$'\r' ]]
	perf-analyze --csv agg.csv "$A/aggregate.plan.json" "$A/aggregate.results.json" >/dev/null
	assert_equal "$(wc -l <agg.csv)" 13
	grep -q '^class-b,h2o-ccsd,avx2,6,6,0,0,.*,incomparable,node_class_has_several_cpu_models,,,$' <(tr -d '\r' <agg.csv)
}

@test "exports never overwrite an input or each other, links included" {
	cp "$A/faster.plan.json" plan.json
	cp "$A/faster.results.json" results.json
	ln -s results.json alias.json
	ln plan.json hard.json
	run --separate-stderr perf-analyze --csv alias.json plan.json results.json
	assert_failure 2
	run --separate-stderr perf-analyze --svg hard.json plan.json results.json
	assert_failure 2
	run --separate-stderr perf-analyze --csv out.x --svg ./out.x plan.json results.json
	assert_failure 2
	[ ! -e out.x ]
	cmp plan.json "$A/faster.plan.json"
	cmp results.json "$A/faster.results.json"
}

@test "the SVG: rows, verdict marks, band, unavailable cells, tooltips, the embedded report, digests" {
	perf-analyze --json --svg fig.svg "$A/aggregate.plan.json" "$A/aggregate.results.json" >rep.json
	py - fig.svg rep.json <<-'EOF'
		import json, sys, xml.etree.ElementTree as ET
		ns = {"s": "http://www.w3.org/2000/svg"}
		root = ET.parse(sys.argv[1]).getroot()
		rep = json.load(open(sys.argv[2]))
		meta = root.find("s:metadata", ns)
		assert json.loads(meta.text) == rep, "the embedded report"
		texts = ["".join(t.itertext()) for t in root.iter("{http://www.w3.org/2000/svg}text")]
		assert "plan_sha256 " + rep["plan_sha256"] in texts
		assert "results_sha256 " + rep["results_sha256"] in texts
		rows = [g for g in root.iter("{http://www.w3.org/2000/svg}g") if g.get("class") == "row"]
		assert len(rows) == 12 + 4, len(rows)   # cells + aggregates
		assert sum(t == "Unavailable" for t in texts) == 8   # 6 incomparable cells, 2 empty aggregates
		circles = [c for c in root.iter("{http://www.w3.org/2000/svg}circle") if "pt" in c.get("class", "")]
		assert sum("inconclusive" in c.get("class") for c in circles) == 2   # one hollow point + the legend
		assert any("1/6 pairs" in t for t in texts)
		titles = ["".join(t.itertext()) for g in rows for t in g.findall("s:title", ns)]
		assert any("block 2 missing: variant" in t for t in titles)
		assert root.find("s:rect[@class='band']", ns) is not None
		assert root.find("s:line[@class='one']", ns) is not None
		assert not list(root.iter("{http://www.w3.org/2000/svg}script"))
	EOF
}

@test "the SVG renders in headless Chromium" {
	load lib/chromium
	chromium_or_skip
	perf-analyze --svg fig.svg "$A/exclusions.plan.json" "$A/exclusions.results.json" >/dev/null
	chromium_run shot "file://$PWD/fig.svg" --window-size=980,600 --screenshot="$PWD/fig.png"
	[ -s fig.png ]
	not grep -Ei 'CONSOLE|Uncaught|Failed to load|XML' shot.err
	chromium_run dom "file://$PWD/fig.svg" --dump-dom
	grep -q 'class="row"' dom.out
}
