#!/usr/bin/env bats
# perf-summarize: the Markdown summary (perf-summarize(1)), the
# dashboard (in inline SVG), CSV and stability.

# shellcheck disable=SC2154 # bats sets status, output, lines, stderr
load lib/common
load lib/golden
load lib/chromium
load lib/named_metrics

N=perf-summarize
S=$FIXTURES/perf-summarize
NOW=2026-06-30T12:00:00Z

setup() {
	cd "$BATS_TEST_TMPDIR" || return 1
	# An empty store (a missing one is exit 2: perfkite(7)).
	export PERFORMANCE_TRACKING_ROOT=$BATS_TEST_TMPDIR/empty-store
	mkdir "$PERFORMANCE_TRACKING_ROOT"
	unset DASHBOARD_DAYS
}

@test "the reference's worked example, byte for byte" {
	run --separate-stderr $N "$S/cases/worked-example.in.jsonl"
	assert_success
	assert_equal "$output" "## Performance Baseline Comparison

Threshold: gated metrics fail only when both percent and absolute regression floors are exceeded.

| Model | GPU | Baseline N | Latency (curr/base) | Throughput (curr/base) | Memory (curr/base) | Text Enc (curr/base) | DiT (curr/base) | VAE Decode (curr/base) | Worst Regression | Exceeded Metrics | Failing Metrics | Status | Status Detail |
|---|---|---:|---|---|---|---|---|---|---:|---|---|---|---|
| wan-t2v-1.3b-2gpu | NVIDIA L40S | 2 | 11.000 / 10.100 | 4.500 / 4.500 | 10000.0 / 10000.0 | n/a / n/a | 8.600 / 8.100 | n/a / n/a | 8.9% | latency, dit_time_s | latency, dit_time_s | REGRESSION | wan-t2v-1.3b-2gpu latency regressed by 8.9% and 0.900 (current=11.000, baseline_median=10.100, threshold=gated, >8.0% and >0.500); wan-t2v-1.3b-2gpu dit_time_s regressed by 6.2% and 0.500 (current=8.600, baseline_median=8.100, threshold=gated, >5.0% and >0.250) |"
	[ -z "$stderr" ]
}

@test "every gate-rolling fixture's summary matches the reference's transcription" {
	local f rc
	for f in "$S"/cases/*.in.jsonl; do
		rc=0
		$N "$f" >got.md 2>got.err || rc=$?
		[ "$rc" -eq 0 ] || { echo "$f: status $rc: $(cat got.err)" >&2; false; }
		# byte for byte, the final newline included; nothing on stderr
		cmp got.md "${f%.in.jsonl}.md"
		[ ! -s got.err ] || { echo "$f: $(cat got.err)" >&2; false; }
	done
}

@test "the CSV of a regression, a legacy record and hidden or invalid values, byte for byte" {
	local c
	for c in worked-example legacy-record hidden-and-invalid; do
		rm -f out.csv
		golden "perf-summarize/golden/$c.csv" then_cat out.csv $N --csv out.csv "$S/cases/$c.in.jsonl"
	done
}

@test "every cell replaces newlines and pipes, and escapes <, so that no value adds a cell or markup" {
	# The reference does this for Status and Status Detail only; a model or
	# GPU name with "|" or a newline would break its table.
	run --separate-stderr $N <<<'{"model_id":"a|b\nc","gpu_type":"<i>G|PU","comparison_status":"PA|SS","comparison_status_reason":"line one\nline|two"}'
	assert_success
	assert_line --index 4 "| a/b c | &lt;i>G/PU | n/a | n/a / n/a | n/a / n/a | n/a / n/a | n/a / n/a | n/a / n/a | n/a / n/a | n/a | none | none | PA/SS | line one line/two |"
}

@test "Worst Regression may be negative, and -0.0%" {
	run --separate-stderr $N <<'EOF'
{"model_id":"m","gpu_type":"g","comparison":{"baseline_n":1,"metrics":{"latency":{"baseline":10.0,"percent_delta":-0.022,"threshold_exceeded":false,"regressed":false}}}}
{"model_id":"m","gpu_type":"g","comparison":{"baseline_n":1,"metrics":{"latency":{"baseline":10.0,"percent_delta":-0.0001}}}}
EOF
	assert_success
	[[ ${lines[4]} == *" | -2.2% | none | none | "* ]]
	[[ ${lines[5]} == *" | -0.0% | none | none | "* ]]
}

@test "records never gated get n/a baselines and their stored status" {
	run --separate-stderr $N <<<'{"model_id":"m","gpu_type":"g","latency":10.0,"memory":5000.0,"comparison_status":"PASS","comparison_status_reason":"ok"}'
	assert_success
	assert_line --index 4 "| m | g | n/a | 10.000 / n/a | n/a / n/a | 5000.0 / n/a | n/a / n/a | n/a / n/a | n/a / n/a | n/a | none | none | PASS | ok |"
}

@test "--reports-dir writes perf_<sha7>_<local time>.md; GITHUB_STEP_SUMMARY is appended" {
	echo "earlier" >step.md
	run --separate-stderr env BUILDKITE_COMMIT=abcdef0123456 GITHUB_STEP_SUMMARY="$BATS_TEST_TMPDIR/step.md" \
		$N --reports-dir reports "$S/cases/pass.in.jsonl"
	assert_success
	f=$(ls reports/)
	[[ $f =~ ^perf_abcdef0_[0-9]{8}_[0-9]{6}\.md$ ]]
	[[ $stderr == "Performance report written to reports/$f" ]]
	diff "reports/$f" <(cat "$S/cases/pass.md"; echo)
	diff step.md <(echo earlier; cat "$S/cases/pass.md"; echo)
	run --separate-stderr env BUILDKITE_COMMIT= PERF_REPORTS_DIR="$BATS_TEST_TMPDIR/r2" $N "$S/cases/pass.in.jsonl"
	assert_success
	[[ $(ls r2) =~ ^perf_unknown_[0-9]{8}_[0-9]{6}\.md$ ]]
}

@test "--annotate-max: failing rows first, whole rows only, and where the full summary is" {
	for _ in $(seq 1 40); do cat "$S/cases/pass.in.jsonl"; done >many.jsonl
	cat "$S/cases/worked-example.in.jsonl" >>many.jsonl
	run --separate-stderr $N --annotate-max 3000 --reports-dir rep many.jsonl
	assert_success
	[ "${#output}" -le 3000 ]
	[[ ${lines[4]} == "| wan-t2v-1.3b-2gpu | NVIDIA L40S | 2 | 11.000 / 10.100 "* ]]
	[[ ${lines[-1]} =~ ^_[0-9]+\ of\ 41\ rows\ are\ not\ shown:\ the\ summary\ is\ [0-9]+\ bytes,\ over\ the\ annotation\ limit\ of\ 3000\;\ the\ full\ summary\ is\ rep/perf_unknown_[0-9_]+\.md\._$ ]]
	for l in "${lines[@]:4:${#lines[@]}-5}"; do [[ $l == "| "*" |" ]]; done
	[ "$(wc -l <rep/perf_unknown_*.md)" -eq 48 ]
	run --separate-stderr $N --annotate-max 100 many.jsonl
	assert_failure 2
}

@test "--annotate-decide: the accept commands in the annotation only, kept when shortened or said to be cut" {
	sed 's/"run_source": *"pr"/"run_source":"scheduled_main"/' "$S/cases/worked-example.in.jsonl" >reg.jsonl
	grep -q '"run_source":"scheduled_main"' reg.jsonl
	for _ in $(seq 1 40); do cat "$S/cases/pass.in.jsonl"; done >many.jsonl
	cat reg.jsonl >>many.jsonl
	# whole: the annotation ends with the section, the report is as without it
	run --separate-stderr $N --annotate-decide --reports-dir rep reg.jsonl
	assert_success
	assert_line '## Decide'
	assert_line --regexp "^\| wan-t2v-1\.3b-2gpu \| NVIDIA L40S \| REGRESSION \| \`perf-seed accept --source-result 'rep/results/normalized_perf_wan-t2v-1\.3b-2gpu_[^']*\.json' --reason 'why the change is intended'\` \|\$"
	not grep -q 'Decide' rep/perf_*.md
	local whole=$output
	rm -r rep
	run --separate-stderr $N --reports-dir rep reg.jsonl
	assert_equal "$(cat rep/perf_*.md)" "$(sed '/^$/N;/\n## Decide$/,$d' <<<"$whole")"
	# shortened: the section before the passing rows
	run --separate-stderr $N --annotate-decide --annotate-max 3000 --reports-dir rep many.jsonl
	assert_success
	[ "${#output}" -le 3000 ]
	assert_line --partial 'rows are not shown'
	assert_line '## Decide'
	assert_line --partial '| REGRESSION | `perf-seed accept --source-result '
	# when it would cost a failing row, a line says it was cut
	for _ in $(seq 1 12); do cat reg.jsonl; done >regs.jsonl
	run --separate-stderr $N --annotate-decide --annotate-max 3000 --reports-dir rep regs.jsonl
	assert_success
	[ "${#output}" -le 3000 ]
	not grep -q '## Decide' <<<"$output"
	assert_equal "${lines[-1]}" "_The Decide section (the perf-seed commands for the failing rows) was cut to fit the annotation limit; \`perf-summarize --decide\` on this run's compared records lists it._"
	# without the option, nothing of it
	run --separate-stderr $N --annotate-max 3000 --reports-dir rep many.jsonl
	not grep -q 'Decide' <<<"$output"
}

@test "--csv: one RFC 4180 row per record and metric" {
	run --separate-stderr $N --csv out.csv "$S/cases/worked-example.in.jsonl"
	assert_success
	[ "$(head -1 out.csv)" = $'model_id,gpu_type,workload_id,variant_id,benchmark_version,recipe_fingerprint,hardware_profile_id,software_profile_id,timestamp,metric,current,baseline,absolute_delta,percent_delta,threshold_exceeded,regressed,comparison_status\r' ]
	[ "$(wc -l <out.csv)" -eq 7 ]
	grep -q $'^wan-t2v-1.3b-2gpu,NVIDIA L40S,wan-t2v,1.3b-sp2,2,recipe-1,hw-l40s-2,sw-cuda,2026-06-16T00:00:00+00:00,latency,11.0,10.1,0.9000000000000004,0.08910891089108915,true,true,REGRESSION\r$' out.csv
	grep -q $',text_encoder_time_s,,,,,false,false,REGRESSION\r$' out.csv
	run --separate-stderr $N --csv q.csv <<<'{"model_id":"a,\"b\"","gpu_type":"x\ny"}'
	assert_success
	grep -q '^"a,""b""","x$' q.csv
}

@test "--stability: runs, median, min, max and spread per cohort and metric" {
	for l in 30.8 31.1 30.9 31.2 31.0; do
		printf '{"model_id":"m","gpu_type":"g","latency":%s,"memory":100.0}\n' "$l"
	done >runs.jsonl
	run --separate-stderr $N --stability runs.jsonl
	assert_success
	assert_output "## Run-to-run stability

| Cohort | Metric | Runs | Median | Min | Max | Spread | Noise | False Alarms | Detects | Advice |
|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|
| m / g | latency | 5 | 31.000 | 30.800 | 31.200 | 1.3% | 1.0% | 0.0% | 9.1% | ok |
| m / g | memory | 5 | 100.0 | 100.0 | 100.0 | 0.0% | n/a | n/a | n/a | unknown |"
	run --separate-stderr $N --stability --json runs.jsonl
	assert_success
	[ "$(jq -c '[.metric, .runs, .median, .min, .max, .advice]' <<<"${lines[0]}")" = '["latency",5,31,30.8,31.2,"ok"]' ]
}

@test "--stability: every cohort's noise, false-alarm rate, detectable regression and advice (Python's numbers)" {
	# A noisy cohort with its own floors (the last record's), a short one.
	for l in 10.0 11.3 9.1 10.6 8.8 10.9 9.5; do
		printf '{"model_id":"n","gpu_type":"g","latency":%s,"throughput":%s,"regression_thresholds":{"throughput":{"threshold_percent":0.02}}}\n' "$l" "$(awk -v l="$l" 'BEGIN { printf "%.3f", 45 / l }')"
	done >runs.jsonl
	printf '{"model_id":"s","gpu_type":"g","latency":%s}\n' 5.0 5.1 5.2 >>runs.jsonl
	run --separate-stderr $N --stability --json runs.jsonl
	assert_success
	got=$output
	want=$(python3 -c 'import json, sys; sys.path.insert(0, sys.argv[1]); import reference as R, sensitivity as S
recs = [json.loads(l) for l in open(sys.argv[2])]
for model in ("n", "s"):
    rs = [r for r in recs if r["model_id"] == model]
    pol = R.policy(rs[-1].get("regression_thresholds"))
    for k, _, higher, _, _ in R.METRICS:
        v = [r[k] for r in rs if r.get(k) is not None]
        if not v:
            continue
        n, m, spread = S.noise(v)
        adv, far, d, _, _, _ = S.assess(n, m, spread, pol[k]["threshold_percent"],
                                        pol[k]["threshold_absolute"], higher, min(n, 5), 0.8)
        print(json.dumps([k, spread, far, d, adv], separators=(",", ":")))' "$FIXTURES" runs.jsonl)
	assert_equal "$(jq -c '[.metric, .noise, .false_alarm_rate, .mde_percent, .advice]' <<<"$got")" "$want"
	grep -q '"advice":"noisy"' <<<"$got"
	run --separate-stderr $N --stability runs.jsonl
	assert_success
	assert_line --regexp '^\| n / g \| latency \| 7 \| 10\.000 \| 8\.800 \| 11\.300 \| 25\.0% \| [0-9.]+% \| [0-9.]+% \| [0-9.]+% \| noisy \|$'
	assert_line '| s / g | latency | 3 | 5.100 | 5.000 | 5.200 | 3.9% | n/a | n/a | n/a | unknown |'
}

@test "the dashboard is one self-contained page: no script, nothing fetched" {
	run --separate-stderr $N --html dash.html --store "$S/store" --now $NOW "$S/batch.jsonl"
	assert_success
	not grep -qi '<script' dash.html
	not grep -Eqi 'src="(https?:)?//' dash.html
	not grep -Eqi '<link|<img|<iframe|<object|<embed' dash.html
	# hrefs are links a person follows (cohorts, builds), nothing loaded
	grep -Eoi 'href="[^"]*"' dash.html >hrefs || :
	[ -s hrefs ]
	not grep -Ev '^href="(#c[0-9]+|https?://[^"]*)"$' hrefs
	not grep -qi '@import\|url(' dash.html
	[ "$(grep -c '<svg viewBox="0 0 360 180" role="img"' dash.html)" -eq 15 ]
	# A marker with hover text for every record and metric (30x6 + 2x3 + 9x3 + 1x3).
	[ "$(grep -o '<g><[a-z]* class="s[0-3]' dash.html | wc -l)" -eq 216 ]
	[[ $stderr == *"Loaded 42 records across 5 model(s), 2 GPU type(s), date range: 2026-06-01 03:00:00 → 2026-06-30 01:00:00"* ]]
	[[ $stderr == *"Generated 15 metric plot(s)"* ]]
}

@test "the dashboard's band shows the detectable-regression line only when the comparison carries mde_percent" {
	local sens=$FIXTURES/perf-summarize/sensitivity
	mkdir empty
	run --separate-stderr $N --html d.html --store empty --now $NOW "$sens.in.jsonl"
	assert_success
	# memory is constant: unknown noise, no detectable regression, no line.
	[ "$(grep -o '<line class="mde"' d.html | wc -l)" -eq 3 ]
	# latency: baseline 10.403 x (1 + 16.8%), lower is better; throughput below its baseline.
	grep -q '<title>detectable regression: 16.8% or more is caught 80% of the time; past 12.147 s</title></line>' d.html
	grep -q '<title>detectable regression: 8.6% or more is caught 80% of the time; past 4.109 fps</title></line>' d.html
	# Without mde_percent: no line, the page of records that never had the keys.
	jq -c '.comparison.metrics |= map_values(del(.mde_percent))' "$sens.in.jsonl" >no-mde.jsonl
	jq -c '.comparison.metrics |= map_values(del(.noise, .false_alarm_rate, .mde_percent, .sensitivity))' "$sens.in.jsonl" >no-keys.jsonl
	run --separate-stderr $N --html a.html --store empty --now $NOW no-mde.jsonl
	assert_success
	run --separate-stderr $N --html b.html --store empty --now $NOW no-keys.jsonl
	assert_success
	not grep -q 'class="mde"' a.html
	cmp a.html b.html
}

@test "dashboard cohorts: v2 merges renames; legacy and invalid v2 stay apart" {
	run --separate-stderr $N --html dash.html --store "$S/store" --now $NOW "$S/batch.jsonl"
	assert_success
	[ "$(grep -c '<section id=' dash.html)" -eq 4 ]
	grep -q '<title>wan-t2v-1.3b-2gpu | NVIDIA L40S | wan-t2v / 1.3b-sp2 / v3 | recipe ec56b019a3e3 | hw-41f86157a | sw-51a21bb70 | latency' dash.html
	grep -q '30 records</p>' dash.html
	grep -q 'legacy-benchmark | NVIDIA L40S | Legacy v1 | latency' dash.html
	grep -q 'broken-identity | NVIDIA L40S | Invalid v2: wan-t2v / missing / missing | recipe missing | missing | missing | latency' dash.html
	not grep -q 'legacy / legacy' dash.html
}

@test "dashboard hover text: record, statuses, reason; identity on the chart" {
	run --separate-stderr $N --html dash.html --store "$S/store" --now $NOW "$S/batch.jsonl"
	assert_success
	grep -q '^wan-t2v-1.3b | NVIDIA L40S$' dash.html  # a renamed record says so
	grep -q '^REGRESSION$' dash.html || grep -q '^REGRESSION (' dash.html
	grep -q 'latency regressed by 10.1% and 3.120' dash.html
	grep -q '2026-06-30 01:00 UTC (this build)' dash.html
	grep -q '^software_profile_id=sw-51a21bb706c36ab3</title>' dash.html
	grep -q '<rect class="band"' dash.html
}

@test "dashboard skipped plots: table with the reference's reasons and counts" {
	run --separate-stderr $N --html dash.html --store "$S/store" --now $NOW "$S/batch.jsonl"
	assert_success
	grep -q '<h3 class="skipped">Skipped Metric Plots</h3>' dash.html
	grep -q '<tr><td>wan-t2v-1.3b-1gpu-gb10</td><td>NVIDIA GB10</td><td>wan-t2v / 1.3b-sp1 / v3<br><code>recipe fe824b8bf011 | hw-ce06872cd | sw-51a21bb70</code></td><td>dit_time_s</td><td class="n">2</td><td class="n">0</td><td>no non-null values in loaded records</td></tr>' dash.html
	[[ $stderr == *"  - legacy-benchmark | NVIDIA L40S | Legacy v1 |  | dit_time_s: no non-null values in loaded records (0/9 non-null)"* ]]
}

@test "dashboard window: DASHBOARD_DAYS and --days; unparsable timestamps are kept" {
	run --separate-stderr env DASHBOARD_DAYS=3 $N --html dash.html --store "$S/store" --now $NOW "$S/batch.jsonl"
	assert_success
	[[ $stderr == *"Loaded 4 records"* ]]
	grep -q 'Performance Dashboard (last 3 days)' dash.html
	run --separate-stderr $N --days 1 --html dash.html --now $NOW <<<'{"model_id":"m","gpu_type":"g","timestamp":"garbage","latency":1.0}'
	assert_success
	[[ $stderr == *"Loaded 1 records"* ]]
	run --separate-stderr env DASHBOARD_DAYS=soon $N --html dash.html </dev/null
	assert_failure 2
}

@test "--dashboard writes dashboard_<sha7>_<local time>.html into the reports directory" {
	run --separate-stderr env BUILDKITE_COMMIT= $N --dashboard --reports-dir rep --now $NOW "$S/batch.jsonl"
	assert_success
	f=$(ls rep/dashboard_*)
	[[ $f =~ ^rep/dashboard__[0-9]{8}_[0-9]{6}\.html$ ]]
	[[ $stderr == *"Dashboard generated: $f"* ]]
	run --separate-stderr $N --dashboard </dev/null
	assert_failure 2
}

@test "the same inputs give the same dashboard, byte for byte" {
	$N --html a.html --store "$S/store" --now $NOW "$S/batch.jsonl" >/dev/null 2>&1
	$N --html b.html --store "$S/store" --now $NOW "$S/batch.jsonl" >/dev/null 2>&1
	cmp a.html b.html
}

@test "a model_id with markup is escaped everywhere; nothing runs" {
	run --separate-stderr $N --html x.html <<<'{"model_id":"<script>alert(1)</script>\"x","gpu_type":"<b>g</b>","latency":1.0,"comparison_status":"PASS","comparison_status_reason":"<img src=x onerror=alert(2)>"}'
	assert_success
	not grep -q '<script>alert' x.html
	not grep -q '<img src=x' x.html
	grep -q '&lt;script&gt;alert(1)&lt;/script&gt;&quot;x' x.html
}

@test "headless Chromium renders the dashboard: charts in the DOM, no console errors" {
	chromium_or_skip
	$N --html dash.html --store "$S/store" --now $NOW "$S/batch.jsonl" >/dev/null 2>&1
	chromium_run shot "file://$BATS_TEST_TMPDIR/dash.html" --window-size=1280,2400 --screenshot="$BATS_TEST_TMPDIR/dash.png"
	[ -s dash.png ]
	chromium_run dom "file://$BATS_TEST_TMPDIR/dash.html" --dump-dom
	[ "$(grep -o '<svg viewBox="0 0 360 180" role="img"' dom.out | wc -l)" -eq 15 ]
	grep -q '<polyline class="ln" points="[0-9]' dom.out
	not grep -Ei 'CONSOLE|Uncaught|Failed to load' dom.err shot.err
}

@test "headless Chromium: a <script> in a model_id does not run" {
	chromium_or_skip
	$N --html x.html <<<'{"model_id":"<script>document.title=\"pwned\"</script>","gpu_type":"g","latency":1.0}' 2>/dev/null
	chromium_run dom "file://$BATS_TEST_TMPDIR/x.html" --dump-dom
	grep -q '<title>Performance Dashboard</title>' dom.out
	not grep -q 'pwned.*</title>' dom.out
}

# label_boxes HTML: loads a copy of the dashboard with a probe that measures
# every axis label of every chart in Chromium; prints what lies outside its
# chart or overlaps its neighbour, then "checked N labels".
label_boxes() {
	{
		cat "$1"
		cat <<-'EOF'
		<script>
		const out = []; let n = 0;
		document.querySelectorAll("figure svg").forEach((s, i) => {
		  const vb = s.viewBox.baseVal;
		  for (const cls of ["xl", "yl"]) {
		    const boxes = [...s.querySelectorAll("text." + cls)].map(t => [t.getBBox(), t.textContent]);
		    for (const [b, t] of boxes) {
		      n++;
		      if (b.x < vb.x - 0.01 || b.x + b.width > vb.x + vb.width + 0.01 ||
		          b.y < vb.y - 0.01 || b.y + b.height > vb.y + vb.height + 0.01)
		        out.push(`chart ${i}: ${t} outside: x ${b.x.toFixed(1)} to ${(b.x + b.width).toFixed(1)}`);
		    }
		    boxes.sort((p, q) => cls === "xl" ? p[0].x - q[0].x : p[0].y - q[0].y);
		    for (let k = 1; k < boxes.length; k++) {
		      const p = boxes[k - 1][0], q = boxes[k][0];
		      if (cls === "xl" ? q.x < p.x + p.width : q.y < p.y + p.height)
		        out.push(`chart ${i}: ${boxes[k - 1][1]} overlaps ${boxes[k][1]}`);
		    }
		  }
		});
		const pre = document.createElement("pre");
		pre.id = "boxes";
		pre.textContent = out.concat([`checked ${n} labels`]).join("\n");
		document.body.append(pre);
		</script>
		EOF
	} >"$1.probe.html"
	chromium_run "$1.probe" "file://$PWD/$1.probe.html" --dump-dom
	sed -n '/<pre id="boxes">/,/<\/pre>/p' "$1.probe.out" | sed 's/<[^>]*>//g'
}

@test "dashboard axis labels never leave their chart nor overlap (Chromium measures them)" {
	chromium_or_skip
	$N --html dash.html --store "$S/store" --now $NOW "$S/batch.jsonl" 2>/dev/null
	run label_boxes dash.html
	assert_success
	assert_output --regexp '^checked [0-9]{3} labels$'
	# an hour of records: the last tick lies on the right edge of the plot
	printf '{"model_id":"m","gpu_type":"g","timestamp":"2026-06-30T0%d:00:00+00:00","latency":%s}\n' 0 1.0 1 1.1 >hour.jsonl
	$N --html hour.html --now $NOW hour.jsonl 2>/dev/null
	grep -q '>06-30 01:00</text>' hour.html
	run label_boxes hour.html
	assert_success
	assert_output --regexp '^checked [0-9]+ labels$'
	$N --html close.html --now $NOW "$S/dash-close.jsonl" 2>/dev/null
	run label_boxes close.html
	assert_success
	assert_output 'checked 15 labels'
}

@test "dashboard y labels have the decimals their step needs: never the same label twice" {
	$N --html close.html --now $NOW "$S/dash-close.jsonl" 2>/dev/null
	assert_equal "$(grep -o '<text class="yl"[^>]*>[^<]*' close.html | sed 's/.*>//' | tr '\n' ' ')" \
		'0.00510 0.00515 0.00520 0.00525 0.00530 0.00535 0.00540 0.00545 '
	# the hover text is as precise as the axis
	grep -q '^0.00534 s$' close.html
	# and on every chart of the fixture, labels are distinct
	$N --html dash.html --store "$S/store" --now $NOW "$S/batch.jsonl" 2>/dev/null
	sed 's|</svg>|&\n|g' dash.html | grep '<svg viewBox="0 0 360' >charts
	[ "$(wc -l <charts)" -eq 15 ]
	while read -r c; do
		grep -o '<text class="[xy]l"[^>]*>[^<]*' <<<"$c" | sed 's/<text class="\(.\)l".*>/\1 /' | sort | uniq -d >dup
		[ ! -s dup ] || { cat dup; false; }
	done <charts
}

@test "dashboard subtitle: 1 record in 1 cohort, 42 records in 4 cohorts" {
	$N --html one.html --now $NOW <<<'{"model_id":"m","gpu_type":"g","timestamp":"2026-06-30T01:00:00Z","latency":1.0}' 2>/dev/null
	grep -q '<p class="meta">1 record in 1 cohort, 2026-06-30 01:00 to 2026-06-30 01:00 UTC\.' one.html
	grep -q '&middot; 1 record</p>' one.html
	$N --html dash.html --store "$S/store" --now $NOW "$S/batch.jsonl" 2>/dev/null
	grep -q '<p class="meta">42 records in 4 cohorts, ' dash.html
}

@test "a marker links its record's build_url; the hover text says so and names the commit" {
	$N --html close.html --now $NOW "$S/dash-close.jsonl" 2>/dev/null
	[ "$(grep -c '<a href="https://buildkite.com/acme/perf/builds/10[1-6]" target="_blank"><g><circle' close.html)" -eq 6 ]
	grep -q '<a href="https://buildkite.com/acme/perf/builds/104" target="_blank"><g><circle class="s0 c" cx="[0-9.]*" cy="[0-9.]*" r="5.5"/><title>2026-06-30 10:01:00 UTC, record #4 (this build)$' close.html
	grep -q '^click to open the build</title></g></a>' close.html
	grep -q '^commit 0000000 · main$' close.html
	# a build_url that is not a web address is never a link
	not grep -q 'javascript' close.html
	grep -q '^commit abcdef0 · pr$' close.html
}

@test "records seconds apart get an index axis: every marker apart, times in the caption" {
	$N --html close.html --now $NOW "$S/dash-close.jsonl" 2>/dev/null
	assert_equal "$(grep -o '<text class="xl"[^>]*>[^<]*' close.html | sed 's/.*>//' | tr '\n' ' ')" '#1 #2 #3 #4 #5 #6 #7 '
	grep -q '<figcaption>Latency (s) <span class="xn">by record: 06-30 10:00 to 10:02 UTC</span></figcaption>' close.html
	# two records: whole record numbers, not the step's decimals
	head -n 2 "$S/dash-close.jsonl" >two.jsonl
	$N --html two.html --now $NOW two.jsonl 2>/dev/null
	assert_equal "$(grep -o '<text class="xl"[^>]*>[^<]*' two.html | sed 's/.*>//' | sort -u | tr '\n' ' ')" '#1 #2 '
	grep -q '<title>2026-06-30 10:00:20 UTC, record #2 (this build)$' close.html
	xs=$(grep -o '<circle class="s0 c" cx="[0-9.]*"' close.html | grep -o '[0-9.]*"$' | tr -d '"')
	awk 'NR > 1 && $1 - p < 40 { bad = 1 } { p = $1 } END { exit bad }' <<<"$xs"
	# records days apart keep the time axis
	$N --html dash.html --store "$S/store" --now $NOW "$S/batch.jsonl" 2>/dev/null
	grep -q '<text class="xl" x="[0-9.]*" y="172">Jun 11</text>' dash.html
	not grep -q 'class="xn"' dash.html
}

REC='{"model_id":"a","gpu_type":"g"}'

@test "empty input gives empty output" { check_empty_input $N; }
@test "reports malformed JSON, non-objects and trailing garbage by line, keeps valid rows" {
	printf '%s\n{"model_id": nope}\n%s\n[1,2]\n%s junk\n' "$REC" "$REC" "$REC" >in.jsonl
	run --separate-stderr $N in.jsonl
	assert_failure 2
	[ "$(grep -c '^| a | g |' <<<"$output")" -eq 2 ]
	[[ $stderr == *"$N: in.jsonl:2: invalid JSON at column 14: unexpected 'n'"* ]]
}
@test "a full disk on stdout is exit 2, never success" { check_full_disk $N "$S/cases/pass.in.jsonl"; }
@test "an unknown option prints usage on stderr, exit 2" { check_unknown_option $N; }
@test "-h prints usage on stdout, exit 0" { check_help $N; }
@test "--version prints the version" { check_version $N; }

@test "an empty PERFORMANCE_TRACKING_ROOT is the working directory; a remote without git+ is refused" {
	$N --html want.html --store "$S/store" --now $NOW "$S/batch.jsonl" >/dev/null 2>&1
	cp -R "$S/store" cwd
	cd cwd || return 1
	PERFORMANCE_TRACKING_ROOT='' run --separate-stderr $N --html ../got.html --now $NOW "$S/batch.jsonl"
	assert_success
	cmp ../want.html ../got.html
	PERFORMANCE_TRACKING_ROOT=git@github.com:org/perf.git run --separate-stderr $N --now $NOW "$S/batch.jsonl"
	assert_failure 2
	assert_output ""
	assert_equal "$stderr" "perf-summarize: git@github.com:org/perf.git: a git remote needs the git+ prefix to be a store; did you mean git+git@github.com:org/perf.git?"
}

@test "a dashboard of nothing: no records, an empty store, still a page" {
	: >"$BATS_TEST_TMPDIR/none.jsonl"
	mkdir "$BATS_TEST_TMPDIR/no-store"
	run --separate-stderr perf-summarize --html "$BATS_TEST_TMPDIR/d.html" \
		--store "$BATS_TEST_TMPDIR/no-store" "$BATS_TEST_TMPDIR/none.jsonl"
	assert_success
	grep -q '</html>' "$BATS_TEST_TMPDIR/d.html"
}

@test "a Sensitivity section after the reference's table lists noisy and blind gates, with the config change to make" {
	local sens=$FIXTURES/perf-summarize/sensitivity
	run --separate-stderr perf-summarize "$sens.in.jsonl"
	assert_success
	# The reference's table, byte for byte (Python's transcription), then the section.
	want=$(python3 -c 'import json, sys; sys.path.insert(0, sys.argv[1]); import reference as R
sys.stdout.write(R.summary_markdown([json.loads(l) for l in open(sys.argv[2])]))' "$FIXTURES" "$sens.in.jsonl"; cat "$sens.section.md")
	assert_equal "$output" "$want"
	[ "$(grep -c '^| wan-t2v-1.3b-2gpu | NVIDIA L40S | ' <<<"$output")" -eq 3 ]
	# The suggestion is the config change to paste, a fraction (issue 22, item 8).
	# shellcheck disable=SC2016 # the backticks are Markdown's
	assert_line '| wan-t2v-1.3b-2gpu | NVIDIA L40S | latency | noisy | 8.2% | 21.8% | 16.8% | >8.0% and >0.500 | `regression_thresholds.latency.threshold_percent: 0.2` | 29.7% |  |'
	# shellcheck disable=SC2016
	assert_line '| wan-t2v-1.3b-2gpu | NVIDIA L40S | dit_time_s | blind | 1.6% | 0.0% | 43.6% | >5.0% and >0.250 | `regression_thresholds.dit_time_s.threshold_percent: 0.036`, `regression_thresholds.dit_time_s.threshold_absolute: 0.021` | 5.2% |  |'
	# Memory is constant behind floors that fit it: unknown noise, no row.
	refute_line --partial '| memory |'
	# Gates that fit their noise (or records without the keys) add nothing.
	jq -c '.comparison.metrics |= map_values(.sensitivity.advice = "ok" | .noise.unknown_reason = null)' "$sens.in.jsonl" >"$BATS_TEST_TMPDIR/ok.jsonl"
	run --separate-stderr perf-summarize "$BATS_TEST_TMPDIR/ok.jsonl"
	assert_success
	refute_output --partial Sensitivity
}

@test "--changes: a Change points section after the reference's table, which stays as it was" {
	perf-changes "$FIXTURES/perf-changes/history.jsonl" >cps.jsonl || [ $? -eq 1 ]
	run --separate-stderr $N "$S/cases/worked-example.in.jsonl"
	table=$output
	run --separate-stderr $N --changes cps.jsonl "$S/cases/worked-example.in.jsonl"
	assert_success
	[ -z "$stderr" ]
	assert_equal "$output" "$table

$(cat "$FIXTURES/perf-changes/md.out.md")"
}

@test "--changes with no change point: the summary is byte for byte as without it" {
	: >none.jsonl
	run --separate-stderr $N "$S/cases/worked-example.in.jsonl"
	table=$output
	run --separate-stderr $N --changes none.jsonl "$S/cases/worked-example.in.jsonl"
	assert_success
	assert_equal "$output" "$table"
}

@test "--changes: a line that is not a change point is an error with its line" {
	printf '{"model_id":"m"}\n' >bad.jsonl
	run --separate-stderr $N --changes bad.jsonl "$S/cases/worked-example.in.jsonl"
	assert_failure 2
	assert_equal "$stderr" "$N: bad.jsonl:1: not a change point of perf-changes"
}

@test "--changes: the dashboard draws each change point on its chart, commit and change in its hover text" {
	H=$FIXTURES/perf-changes/history.jsonl
	perf-changes "$H" >cps.jsonl || [ $? -eq 1 ]
	mkdir "$BATS_TEST_TMPDIR/none"
	run --separate-stderr $N --html with.html -s "$BATS_TEST_TMPDIR/none" -H "$H" --now 2026-01-03T12:00:00Z --changes cps.jsonl </dev/null
	assert_success
	run --separate-stderr $N --html without.html -s "$BATS_TEST_TMPDIR/none" -H "$H" --now 2026-01-03T12:00:00Z </dev/null
	assert_success
	[ "$(grep -c 'stroke-dasharray="3 2"' with.html)" -eq 3 ]
	[ "$(grep -c 'stroke-dasharray="3 2"' without.html)" -eq 0 ]
	grep -q '<title>change point: worse +5.5%' with.html
	grep -q '^commit 8fd6cad$' with.html
	# Apart from the lines, the page is the same.
	diff <(tr -d '\n' <with.html | sed 's|<g><line x1="[^"]*" x2="[^"]*" y1="[^"]*" y2="[^"]*" stroke="[^"]*" stroke-width="1.4" stroke-dasharray="3 2"/><title>change point:[^<]*</title></g>||g') \
		<(tr -d '\n' <without.html)
}

@test "the dashboard's store: not there is exit 2, empty a warning (issue 22 item 4)" {
	run --separate-stderr $N --html x.html --store "$BATS_TEST_TMPDIR/missing" </dev/null
	assert_failure 2
	[[ $stderr == *"perf-summarize: $BATS_TEST_TMPDIR/missing: no such store"* ]]
	run --separate-stderr $N --html x.html </dev/null
	assert_success
	[[ $stderr == *"perf-summarize: $BATS_TEST_TMPDIR/empty-store: the store holds no records"* ]]
	[ -s x.html ]
	# Without --html the store is not read.
	run --separate-stderr $N --store "$BATS_TEST_TMPDIR/missing" </dev/null
	assert_success
}

@test "--changes: the dashboard draws the change line on the first slower run, the REGRESSION's red triangle" {
	G=$FIXTURES/perf-changes/gated.jsonl
	perf-changes --metric latency "$G" >cps.jsonl || [ $? -eq 1 ]
	mkdir "$BATS_TEST_TMPDIR/none"
	run --separate-stderr $N --html page.html -s "$BATS_TEST_TMPDIR/none" -H "$G" --now 2026-02-02T12:00:00Z --changes cps.jsonl </dev/null
	assert_success
	line=$(grep -o '<line x1="[0-9.]*"[^>]*stroke-dasharray="3 2"' page.html | sed 's/<line x1="\([0-9.]*\)".*/\1/')
	[ "$(wc -l <<<"$line")" -eq 1 ]
	# The red triangles after the legend's: the REGRESSION at 12:00, then the local run's.
	mapfile -t red < <(grep -o '<path class="s1" d="M[0-9.]*' page.html | sed 's/.*d="M//' | sed 1d)
	[ "${#red[@]}" -eq 2 ]
	assert_equal "$line" "${red[0]}"
	grep -q "^commit $(grep -m 1 '"timestamp":"2026-02-01T12:00:00+00:00"' "$G" | jq -r .commit_sha | cut -c1-7)\$" page.html
}

@test "--changes: a change point with the culprit of a stored bisect says it in its hover text and row" {
	H=$FIXTURES/perf-changes/history.jsonl
	k='"culprit":{"commit":"1234567890abcdef1234567890abcdef12345678","short":"1234567","subject":"slow <path>","share":0.9,"dependency_change":false,"report":".perfkite/bisect/r.json"}'
	sed "1s|}\$|,$k}|" "$FIXTURES/perf-changes/default.out.jsonl" >cps.jsonl
	mkdir "$BATS_TEST_TMPDIR/none"
	run --separate-stderr $N --html with.html -s "$BATS_TEST_TMPDIR/none" -H "$H" --now 2026-01-03T12:00:00Z --changes cps.jsonl </dev/null
	assert_success
	run --separate-stderr $N --html without.html -s "$BATS_TEST_TMPDIR/none" -H "$H" --now 2026-01-03T12:00:00Z --changes "$FIXTURES/perf-changes/default.out.jsonl" </dev/null
	assert_success
	grep -q '^culprit: 1234567 slow &lt;path&gt;</title></g>' with.html
	# Only the latency change point's hover text has it.
	[ "$(grep -c 'culprit:' with.html)" -eq 1 ]
	diff <(sed 's|^culprit: 1234567 slow &lt;path&gt;</title></g>|</title></g>|' with.html | tr -d '\n') \
		<(tr -d '\n' <without.html)
	# The Markdown of the change points: in the change's cell.
	run --separate-stderr $N --changes cps.jsonl "$S/cases/worked-example.in.jsonl"
	assert_success
	[[ $output == *"| worse +5.5%, culprit: 1234567<br>worse -5.2% |"* ]]
}

@test "--site-url: the annotation links each failing cohort's page on the site, once; the report file stays the reference's" {
	W=$S/cases/worked-example.in.jsonl
	run --separate-stderr $N -r plain "$W"
	assert_success
	printf '%s\n' "$output" >plain.md
	run --separate-stderr $N -r linked --site-url https://perf.example/site/ "$W"
	assert_success
	printf '%s\n' "$output" >linked.md
	# The id is the page perf-site writes for that cohort.
	perf-site -H "$W" -o site --now 2026-06-30T00:00:00Z
	id=$(cd site/c && ls)
	diff <(cat plain.md; printf '\n**History of the failing cohorts:**\n\n- [wan-t2v-1.3b-2gpu (NVIDIA L40S)](https://perf.example/site/c/%s)\n' "$id") linked.md
	# Only the annotation: the report file is the reference's.
	cmp plain/perf_*.md linked/perf_*.md
	# Two failing rows of one cohort: one link.
	run --separate-stderr $N --site-url https://perf.example/site "$W" "$W"
	assert_equal "$(grep -c '^- \[' <<<"$output")" 1
	# No failing row: nothing added.
	jq -c '.comparison_status = "PASS" | .comparison_failures = []' "$W" >pass.jsonl
	run --separate-stderr $N pass.jsonl
	want=$output
	run --separate-stderr $N --site-url https://perf.example/site pass.jsonl
	assert_equal "$output" "$want"
}

# Named metrics (issue 24): the suite of tests/lib/named_metrics.bash.
NM=$FIXTURES/named-metrics

@test "named metrics: records with only them get a Benchmarks table, values scaled to their unit, no reference table" {
	named_compared cmp.jsonl
	run --separate-stderr $N cmp.jsonl
	assert_success
	[ -z "$stderr" ]
	diff -u "$NM/summary.md" <(printf '%s\n' "$output")
	assert_line "| BM_Sort/4096 | CPU | 5 | 95.4 us / 94.8 us | 93.5 us / 92.9 us | 43.8M items/s / 44.1M items/s | 7 widgets / 7 widgets | 0.6% | none | PASS | Comparable baseline found with no gated regressions |"
	refute_line --partial "Performance Baseline Comparison"
	# The metric of unknown direction is named with the config key that would fix it.
	# shellcheck disable=SC2016 # the backquotes are Markdown's
	assert_line 'No known direction, so shown and never gated: `widgets` (3 rows; its config key: `regression_thresholds.metrics."*/widgets".better`).'
}

@test "named metrics beside FastVideo's records: the reference's table byte for byte, the Benchmarks table after it" {
	named_compared cmp.jsonl
	$N "$S/cases/worked-example.in.jsonl" >fastvideo.md
	run --separate-stderr $N "$S/cases/worked-example.in.jsonl" cmp.jsonl
	assert_success
	diff -u <(cat fastvideo.md; echo; cat "$NM/summary.md") <(printf '%s\n' "$output")
	# Records in the other order: the same tables.
	run --separate-stderr $N cmp.jsonl "$S/cases/worked-example.in.jsonl"
	diff -u <(cat fastvideo.md; echo; cat "$NM/summary.md") <(printf '%s\n' "$output")
}

@test "named metrics: a table per set of metrics, in the order of their first record" {
	named_compared cmp.jsonl
	printf '%s\n' '{"model_id":"tests/test_io.py::test_read","gpu_type":"cpu","metrics":{"time":{"value":0.0123,"unit":"s","better":"lower"}},"comparison_status":"CALIBRATION_NEEDED"}' >pytest.jsonl
	run --separate-stderr $N pytest.jsonl cmp.jsonl
	assert_success
	assert_equal "$(grep -c '^| Benchmark | Device |' <<<"$output")" 2
	assert_line --index 1 "| Benchmark | Device | Baseline N | time (curr/base) | Worst Regression | Failing Metrics | Status | Status Detail |"
	assert_line --index 3 "| tests/test_io.py::test_read | cpu | n/a | 12.3 ms / n/a | n/a | none | CALIBRATION_NEEDED |  |"
	assert_line --index 4 --partial "| Benchmark | Device | Baseline N | time (curr/base) | cpu_time (curr/base) |"
}

@test "named metrics: --csv has a row per named metric after the six's (none for a record with only named ones)" {
	named_compared cmp.jsonl
	run --separate-stderr $N --csv out.csv cmp.jsonl
	assert_success
	diff -u "$NM/summary.csv" out.csv
	grep -q $'^BM_Sort/1024,CPU,bench_suite,BM_Sort/1024,1,gb-BM_Sort/1024,hw-cpu,sw-gb,2026-03-01T06:00:00+00:00,time,2.6104e-05,1.996e-05,6.144000000000001e-06,0.3078156312625251,true,true,REGRESSION\r$' out.csv
	[ "$(grep -c ',latency,' out.csv)" -eq 0 ]
	# A FastVideo record with named metrics too: its six rows, then its named ones.
	printf '%s\n' '{"model_id":"m","gpu_type":"g","latency":1.5,"metrics":{"tokens_per_s":{"value":812.5,"unit":"1/s","better":"higher"}}}' >both.jsonl
	run --separate-stderr $N --csv both.csv both.jsonl
	assert_equal "$(cut -d, -f10,11 both.csv | tr -d '\r' | tr '\n' ' ')" \
		"metric,current latency,1.5 throughput, memory, text_encoder_time_s, dit_time_s, vae_decode_time_s, tokens_per_s,812.5 "
}

@test "named metrics: the dashboard charts each one in its display unit, with the change point on the slower benchmark's time" {
	named_store store
	perf-changes -s store >cps.jsonl || [ $? -eq 1 ]
	run --separate-stderr $N --html d.html -s store --changes cps.jsonl --now 2026-03-02T00:00:00Z </dev/null
	assert_success
	[[ $stderr == *"Generated 12 metric plot(s)"* ]]
	[[ $stderr != *"Skipped metric plots"* ]]
	# Three cohorts, four charts each, named and in their unit.
	[ "$(grep -c '<figcaption>time (us)' d.html)" -eq 2 ]
	[ "$(grep -c '<figcaption>time (ns)' d.html)" -eq 1 ]
	[ "$(grep -c '<figcaption>items_per_second (M items/s)' d.html)" -eq 3 ]
	[ "$(grep -c '<figcaption>widgets (widgets) <span class="xn">no known direction: not gated</span>' d.html)" -eq 3 ]
	run grep -c 'Skipped Metric Plots' d.html
	assert_output 0
	# The time chart of BM_Sort/1024 has the change line (red: worse), and
	# its hover text shows the slower run in its unit.
	py - d.html <<-'PY'
		import re, sys
		page = open(sys.argv[1]).read()
		charts = re.findall(r'<figure><figcaption>(.*?)</figcaption>(.*?)</figure>', page, re.S)
		def of(bench, metric):
		    return [c for cap, c in charts if c.startswith("<svg") and
		            ("<title>%s | CPU |" % bench) in c and ("| %s\n" % metric) in c]
		assert [cap.split(" ")[0] for cap, c in charts] == ["time", "cpu_time", "items_per_second", "widgets"] * 3
		time = of("BM_Sort/1024", "time")
		assert len(time) == 1, [cap for cap, c in charts]
		assert 'stroke="#c62828" stroke-width="1.4" stroke-dasharray="3 2"/><title>change point: worse +30.0%' in time[0]
		assert "\n26.1 us\ncommit 0b08e01" in time[0], time[0]
		assert "<title>baseline median 20.0 us; regression past 21.0 us</title>" in time[0], time[0]
		widgets = of("BM_Hash", "widgets")
		assert "change point: changed +28.6%" in widgets[0]
		assert "baseline median" not in widgets[0]
	PY
}

@test "named metrics: over --annotate-max the Benchmarks tables are left out and counted, no empty reference table" {
	named_compared cmp.jsonl
	for i in $(seq 1 40); do sed "s/\"model_id\":\"BM_/\"model_id\":\"BM_$i/" cmp.jsonl; done >big.jsonl
	run --separate-stderr $N --annotate-max 2000 big.jsonl
	assert_success
	refute_line --partial "| Model | GPU |"
	assert_line --regexp '^_120 of 120 rows are not shown: the summary is [0-9]+ bytes, over the annotation limit of 2000;'
}

@test "named metrics: a noisy named gate is in the Sensitivity section, with its key in the config's policy block" {
	py - <<-'PY'
		import json, os
		noise = [0.09, -0.08, 0.07, -0.1, 0.08, -0.07, 0.1, -0.09, 0.06, -0.08, 0.09, -0.07]
		os.makedirs("store/BM_Noisy")
		for i, n in enumerate(noise):
		    r = {"model_id": "BM_Noisy", "gpu_type": "CPU",
		         "timestamp": "2026-03-01T%02d:00:00+00:00" % i, "commit_sha": "%040d" % i,
		         "success": True, "run_source": "scheduled_main", "baseline_eligible": True,
		         "result_schema_version": 2, "workload_id": "w", "variant_id": "BM_Noisy",
		         "benchmark_version": 1, "recipe_fingerprint": "r", "hardware_profile_id": "h",
		         "software_profile_id": "s",
		         "metrics": {"time": {"value": 2e-5 * (1 + n), "unit": "s", "better": "lower"}}}
		    with open("store/BM_Noisy/%02d.json" % i if i < 11 else "batch.jsonl", "w") as f:
		        f.write(json.dumps(r) + "\n")
	PY
	perf-gate-rolling --store store batch.jsonl >cmp.jsonl 2>/dev/null
	run --separate-stderr $N cmp.jsonl
	assert_success
	# shellcheck disable=SC2016 # the backquotes are Markdown's
	assert_line '| BM_Noisy | CPU | time | noisy | 16.7% | 41.9% | 23.2% | >5.0% and >0.0 s | `regression_thresholds.metrics."BM_Noisy/time".threshold_percent: 0.35` | 58.4% |  |'
	# The dashboard draws its detectable-regression line, in its unit.
	run --separate-stderr $N --html d.html -s store --now 2026-03-02T00:00:00Z cmp.jsonl
	assert_success
	grep -q '<title>detectable regression: 23.2% or more is caught 80% of the time; past [0-9.]* us</title>' d.html
}

@test "named metrics of a FastVideo record: its reference row, and on the dashboard a chart beside the six" {
	printf '%s\n' '{"model_id":"m","gpu_type":"g","timestamp":"2026-06-30T10:00:00+00:00","latency":1.5,"metrics":{"tokens_per_s":{"value":812.5,"unit":"1/s","better":"higher"}}}' >both.jsonl
	run --separate-stderr $N both.jsonl
	assert_success
	assert_line --partial "| m | g | n/a | 1.500 / n/a |"
	refute_line "## Benchmarks"
	run --separate-stderr $N --html d.html --now "$NOW" both.jsonl
	assert_success
	grep -q '<figcaption>Latency (s)' d.html
	grep -q '<figcaption>tokens_per_s (/s)' d.html
	grep -q '^812.5/s$' d.html
}

@test "named metrics: --stability has a row per named metric after the six, in its unit" {
	run --separate-stderr $N --stability "$NM/suite.jsonl"
	assert_success
	assert_line "| bench_suite / BM_Hash / v1 (BM_Hash / CPU) | time | 9 | 320.0 ns | 318.1 ns | 321.6 ns | 1.1% | 0.8% | 0.0% | 5.8% | ok |"
	assert_line "| bench_suite / BM_Sort/1024 / v1 (BM_Sort/1024 / CPU) | items_per_second | 9 | 52.1M items/s | 40.0M items/s | 52.5M items/s | 23.9% | 0.7% | 0.0% | 5.6% | ok |"
	# No direction: its noise is shown, no gate is assessed.
	assert_line "| bench_suite / BM_Hash / v1 (BM_Hash / CPU) | widgets | 9 | 7 widgets | 7 widgets | 9 widgets | 28.6% | n/a | n/a | n/a | unknown |"
	run --separate-stderr $N --stability --json "$NM/suite.jsonl"
	assert_equal "$(jq -r 'select(.model_id == "BM_Hash") | "\(.metric) \(.unit)"' <<<"$output" | tr '\n' ' ')" \
		"time s cpu_time s items_per_second items/s widgets widgets "
}

@test "the dashboard counts the batch's own record once: not again from the store, nor twice in the batch" {
	local rec='{"model_id":"m","gpu_type":"g","timestamp":"2026-06-30T01:00:00Z","commit_sha":"abc","latency":1.0}'
	mkdir -p store/m store/n
	# The batch's record as the store holds it after the upload, and one other.
	printf '%s\n' "$rec" >store/m/2026-06-30T01_00_00Z_abc.json
	printf '%s\n' "${rec/\"m\"/\"n\"}" >store/n/2026-06-30T01_00_00Z_abc.json
	printf '%s\n%s\n' "$rec" "$rec" >batch.jsonl
	run --separate-stderr $N --html d.html --store store --now $NOW batch.jsonl
	assert_success
	[[ $stderr == *"Loaded 2 records across 2 model(s), 1 GPU type(s), "* ]]
	grep -q '<p class="meta">2 records in 2 cohorts, ' d.html
}

@test "--decide: a REGRESSION on a named metric names each regressed metric with --metric, shell-quoted" {
	sed 's/"run_source": *"pr"/"run_source":"scheduled_main"/' "$S/cases/worked-example.in.jsonl" |
		jq -c '.metrics = {"it'"'"'s time": {"value": 0.0022, "unit": "s", "better": "lower"},
				"rss": {"value": 1000000, "unit": "B"}}
			| .comparison.named_metrics = {
				"it'"'"'s time": {"unit": "s", "better": "lower", "better_from": "record",
					"current": 0.0022, "baseline": 0.002, "regressed": true},
				"rss": {"unit": "B", "better": "lower", "better_from": "unit",
					"current": 1000000, "baseline": 1000000, "regressed": false}}' >named.jsonl
	run --separate-stderr $N --decide --reports-dir rep named.jsonl
	assert_success
	assert_line --regexp "^\| wan-t2v-1\.3b-2gpu \| NVIDIA L40S \| REGRESSION \| \`perf-seed accept --source-result 'rep/results/normalized_perf_wan-t2v-1\.3b-2gpu_[^']*\.json' --metric latency --metric dit_time_s --metric 'it'\\\\''s time' --reason 'why the change is intended'\` \|\$"
	# the command is a shell word list: the name comes back whole
	local cmd
	# shellcheck disable=SC2016 # the backquotes are Markdown's
	cmd=$(sed -n 's/^| .* | REGRESSION | `\(perf-seed accept .*\)` |$/\1/p' <<<"$output")
	eval "set -- $cmd"
	assert_equal "${10}" "it's time"
}
