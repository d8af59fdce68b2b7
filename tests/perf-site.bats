#!/usr/bin/env bats
# perf-site: the history store as a static site (perf-site(1)).

# shellcheck disable=SC2154 # bats sets status, output, lines, stderr
load lib/common
load lib/chromium
load lib/store

N=perf-site
NOW=2026-06-30T00:00:00Z
CH=$FIXTURES/perf-changes

setup() {
	cd "$BATS_TEST_TMPDIR" || return 1
	export PERFORMANCE_TRACKING_ROOT=$BATS_TEST_TMPDIR/no-store
	unset DASHBOARD_DAYS PERF_STORE_THREADS HF_TOKEN HF_API_KEY HUGGINGFACE_HUB_TOKEN
}

teardown() {
	git_http_stop
}

# rec MODEL VERSION DAY COMMIT LATENCY [STATUS [SOURCE [ELIGIBLE [PERCENT]]]]:
# a v2 record of cohort wl / v / VERSION (model MODEL) in store/.
rec() {
	local model=$1 ver=$2 day=$3 commit=$4 lat=$5 st=${6:-PASS} src=${7:-scheduled_main}
	local elig=${8:-true} pct=${9:-0.08}
	mkdir -p "store/$model"
	printf '{"model_id":"%s","gpu_type":"NVIDIA L40S","timestamp":"2026-06-%02dT00:00:00+00:00","commit_sha":"%s","latency":%s,"memory":1000.0,"success":true,"run_source":"%s","baseline_eligible":%s,"build_url":"https://ci.example/builds/%s","result_schema_version":2,"workload_id":"wl","variant_id":"v","benchmark_version":%s,"recipe_fingerprint":"rf","hardware_profile_id":"hw-1","software_profile_id":"sw-1","regression_thresholds":{"latency":{"threshold_percent":%s,"threshold_absolute":0.1,"gated":true}},"comparison_status":"%s","comparison_status_reason":"reason of %s"}\n' \
		"$model" "$day" "$commit" "$lat" "$src" "$elig" "$commit" "$ver" "$pct" "$st" "$commit" \
		>"store/$model/2026-06-$(printf %02d "$day")T00_00_00_00_00_$commit.json"
}

# A store of three cohorts, versions 10, 2 and 1, six runs each.
three() {
	local v d
	for v in 10 2 1; do
		for d in 1 2 3 4 5 6; do
			rec "m$v" "$v" "$d" "c${v}d$d" "10.$d"
		done
	done
}

@test "-h prints the usage; an unknown option and a missing -o are exit 2" {
	run $N -h
	assert_success
	assert_output --partial 'usage: perf-site'
	run --separate-stderr $N --bogus -o out
	assert_failure 2
	run --separate-stderr $N -s "$BATS_TEST_TMPDIR"
	assert_failure 2
	assert_equal "$(head -1 <<<"$stderr")" "perf-site: no output directory (-o)"
}

@test "writes an index, a page and a data file per cohort, the changes and the feed" {
	three
	run --separate-stderr $N -s store -o site --now $NOW
	assert_success
	[ -z "$stderr" ]
	[ -s site/index.html ] && [ -s site/changes.html ] && [ -s site/feed.xml ]
	[ "$(find site/c -name '*.html' | wc -l)" -eq 3 ]
	[ "$(find site/data -name '*.json' | wc -l)" -eq 3 ]
	grep -q '<p class="meta">18 records in 3 cohorts; 0 change points.</p>' site/index.html
	# each cohort's data holds its six runs, values as stored
	f=$(grep -l '"benchmark_version":"2"' site/data/*.json)
	assert_equal "$(jq -r '.records.metrics.latency | join(" ")' "$f")" \
		"10.1 10.2 10.3 10.4 10.5 10.6"
	assert_equal "$(jq -r '.records.commit_sha[5]' "$f")" c2d6
}

@test "a history stream that repeats the store's records adds each once" {
	three
	cat store/*/*.json >hist.jsonl
	rec m2 2 7 c2d7 10.7
	tail -n 1 store/m2/*c2d7.json | sed 's/c2d7/c2d8/g; s/2026-06-07/2026-06-08/' >>hist.jsonl
	$N -s store -H hist.jsonl -o site --now $NOW
	grep -q '<p class="meta">20 records in 3 cohorts; 0 change points.</p>' site/index.html
	# a stream alone: every line is a record
	$N -H hist.jsonl -H hist.jsonl -o site2 --now $NOW
	grep -q '<p class="meta">38 records in 3 cohorts' site2/index.html
}

@test "the index sorts cohorts naturally: v2 before v10" {
	three
	$N -s store -o site --now $NOW
	run grep -o '>wl / v / v[0-9]*<' <(sed -n '/id="cohorts"/,$p' site/index.html)
	assert_output $'>wl / v / v1<\n>wl / v / v2<\n>wl / v / v10<'
}

@test "cohort ids are stable and the site is the same bytes when regenerated" {
	three
	$N -s store -o a --now $NOW
	rec m2 2 7 c2d7 10.7
	$N -s store -o b --now $NOW
	assert_equal "$(ls a/c)" "$(ls b/c)"
	compgen -G 'a/c/wl-v-v2-[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f].html' >/dev/null
	rm store/m2/*c2d7.json
	$N -s store -o c --now $NOW
	diff -r a c
}

@test "every page links its commits: each anchor and internal link resolves" {
	three
	rec m2 2 7 c2d6 10.7
	$N -s store -o site --now $NOW --changes <(printf '{"workload_id":"wl","variant_id":"v","benchmark_version":"2","recipe_fingerprint":"rf","hardware_profile_id":"hw-1","software_profile_id":"sw-1","model_id":"m2","gpu_type":"NVIDIA L40S","metric":"latency","direction":"worse","timestamp":"2026-06-04T00:00:00+00:00","commit_sha":"c2d4","previous":{"commit_sha":"c2d3"},"forward_change_percent":3.0,"pvalue":0.0001}\n')
	p=$(ls site/c/wl-v-v2-*.html)
	# ids are unique on every page (a commit run twice anchors its first row)
	for page in site/*.html site/c/*.html; do
		[ -z "$(grep -o ' id="[^"]*"' "$page" | sort | uniq -d)" ]
	done
	for d in 1 2 3 4 5 6; do
		grep -q "<tr id=\"c2d$d\"" "$p"
		grep -q "href=\"https://ci.example/builds/c2d$d\"" "$p"
	done
	# every relative link names a file of the site, and its anchor an id there
	local n=0 page href file frag
	for page in site/*.html site/c/*.html; do
		while read -r href; do
			file=${href%%#*} frag=
			[[ $href == *'#'* ]] && frag=${href#*#}
			[ -n "$file" ] && file=$(dirname "$page")/$file || file=$page
			[ -f "$file" ] || { echo "$page: $href: no such file" >&2; return 1; }
			[ -z "$frag" ] || grep -q "id=\"$frag\"" "$file" ||
				{ echo "$page: $href: no such anchor" >&2; return 1; }
			n=$((n + 1))
		done < <(grep -o 'href="[^"]*"' "$page" | sed 's/^href="//; s/"$//' | grep -v '^https\?:')
	done
	# (36 with the noise of successive differences: a steady drift is no
	# noise, so no noisy-gate rows link the cohorts from Needs attention)
	[ "$n" -gt 30 ]
}

@test "the stored status is shown beside the status today's thresholds give" {
	# stored PASS under a 50% floor; today's floor (the latest record's) is 5%
	for d in 1 2 3 4 5; do rec m 1 "$d" "c$d" 10.0 PASS scheduled_main true 0.5; done
	rec m 1 6 c6 12.0 PASS scheduled_main true 0.5
	rec m 1 7 c7 10.0 PASS scheduled_main true 0.05
	$N -s store -o site --now $NOW
	p=$(ls site/c/*.html)
	run grep '<tr id="c6"' "$p"
	assert_output --partial '<b class="st PASS">PASS</b> today <b class="st REGRESSION">REGRESSION</b>'
	run grep '<tr id="c7"' "$p"
	refute_output --partial 'today'
}

@test "a raw threshold crossing of an ungated metric is shown apart from a regression" {
	for d in 1 2 3 4 5; do rec m 1 "$d" "c$d" 10.0; done
	rec m 1 6 c6 12.0
	sed -i 's/"gated":true/"gated":false/' store/m/*c6.json
	$N -s store -o site --now $NOW
	run grep '<tr id="c6"' site/c/*.html
	assert_output --partial '<b class="st PASS">PASS</b> <span class="x">exceeds, not gated: latency</span>'
}

@test "Needs attention: worse change points, a failing scheduled run, stale cohorts" {
	three
	rec m1 1 7 c1d7 30.0 REGRESSION
	for d in 7 8 9 10 11 12 13 14 15 16; do rec m10 10 "$d" "c10d$d" "10.$d"; done
	$N -s store -o site --now $NOW --changes "$CH/default.out.jsonl" -H "$CH/history.jsonl"
	att=$(sed -n '/id="attention"/,/<\/table>/p' site/index.html)
	grep -q 'scheduled run failed.*wl / v / v1.*REGRESSION.*reason of c1d7' <<<"$att"
	grep -q 'worse change point.*wan-t2v / 1.3b-sp2 / v3.*latency.*worse +5.5%' <<<"$att"
	grep -q 'stale</td><td><a href="c/wl-v-v2-[0-9a-f]*.html">wl / v / v2</a></td><td>no run since 2026-06-06' <<<"$att"
	# worst first: the change points, then the failure, then the stale cohorts
	run grep -o 'worse change point\|scheduled run failed\|>stale<' <<<"$att"
	assert_output --regexp '^(worse change point.)+scheduled run failed.(>stale<.?)+$'
	# and the cohort's row marks its latest change point
	grep -q 'latency <span class="w">worse +5.5%</span> <a href="c/wan-t2v-1.3b-sp2-v3-[0-9a-f]*.html#8fd6cad' site/index.html
}

@test "changes.html: every change point newest first with its commits, size, p-value and state; the feed" {
	$N -H "$CH/history.jsonl" --changes "$CH/default.out.jsonl" -o site --now $NOW
	run grep -o '<td>\(latency\|throughput\|memory\)</td>' site/changes.html
	assert_output $'<td>latency</td>\n<td>throughput</td>\n<td>memory</td>'
	grep -q '4.452851942095787e-28' site/changes.html
	grep -q '>cf447aa</a>..<a href="c/wan-t2v-1.3b-sp2-v3-[0-9a-f]*.html#8fd6cad9d1ca63f777b53bfb39619896663f9cea">8fd6cad</a>' site/changes.html
	grep -q '<td>undecided</td>' site/changes.html
	# the feed: the worse ones, as Atom
	py - site/feed.xml <<-'EOF'
	import sys, xml.etree.ElementTree as ET
	a = "{http://www.w3.org/2005/Atom}"
	f = ET.parse(sys.argv[1]).getroot()
	titles = [e.find(a + "title").text for e in f.findall(a + "entry")]
	assert titles == ["wan-t2v / 1.3b-sp2 / v3: latency worse +5.5%",
	    "wan-t2v / 1.3b-sp2 / v3: throughput worse -5.2%"], titles
	assert f.find(a + "updated").text == "2026-01-02T16:00:00Z"
	EOF
	# the cohort's charts draw them
	[ "$(grep -o '<line class="cw"' site/c/wan-t2v-*.html | wc -l)" -eq 2 ]
	[ "$(grep -o '<line class="cb"' site/c/wan-t2v-*.html | wc -l)" -eq 1 ]
}

@test "rows carry what the filters read: model, GPU, run source and eligibility" {
	three
	rec m2 2 7 c2d7 10.7 PASS pr false
	$N -s store -o site --now $NOW
	grep -q '<tr data-s="|scheduled_main|pr|" data-e="|yes|"><td><a href="c/wl-v-v2-[0-9a-f]*.html">wl / v / v2</a><td>m2<td>NVIDIA L40S<td>' site/index.html
	grep -q '<th data-k data-f="m">Model</th><th data-k data-f="g">GPU</th>' site/index.html
	grep -q '<select name="s"><option value="">all</option><option>pr</option><option>scheduled_main</option></select>' site/index.html
	grep -q '<tr id="c2d7"><td>2026-06-07 00:00<td><a href="https://ci.example/builds/c2d7">c2d7</a><td>pr<td>no<td>' site/c/wl-v-v2-*.html
	grep -q '<th data-k data-f="s">Run source</th><th data-k data-f="e">Eligible</th>' site/c/wl-v-v2-*.html
	# a cohort page offers its own run sources
	grep -q '<select name="s"><option value="">all</option><option>scheduled_main</option></select>' site/c/wl-v-v1-*.html
}

@test "--days keeps the last days; --title names the site; --ab results reach their cohort" {
	three
	cat >ab.json <<-'EOF'
	{"schema":"perfkite.ab-report/1","results":[{"benchmark_id":"m2","metric":"latency","pairs":6,"ratio":1.0321,"interval":{"low":1.01,"high":1.05},"verdict":"slower"}],"status":"slower"}
	EOF
	$N -s store -o site --now 2026-06-07T00:00:00Z --days 3 --title 'Nightly <perf>' --ab ab.json
	grep -q '<p class="meta">9 records in 3 cohorts' site/index.html
	grep -q '<title>Nightly &lt;perf&gt;</title>' site/index.html
	grep -q '<td>ab.json</td><td>latency</td><td class="n">6</td><td class="n">1.0321</td><td class="n">1.0100 to 1.0500</td><td>slower</td>' site/c/wl-v-v2-*.html
	not grep -q 'A/B results' site/c/wl-v-v1-*.html
	run --separate-stderr $N -s store -o site2 --ab <(echo '{"schema":"other"}')
	assert_failure 2
	assert_output ''
	[[ $stderr == *':1: not an A/B report of perf-ab' ]]
	[ ! -e site2 ]
}

@test "an existing DIR is replaced whole; nothing is left beside it" {
	three
	mkdir site && echo old >site/stale.html
	$N -s store -o site --now $NOW
	[ ! -e site/stale.html ] && [ -s site/index.html ]
	assert_equal "$(ls -A)" $'site\nstore'
}

@test "a failure leaves the previous site whole: a bad history line is exit 2 naming its line" {
	three
	$N -s store -o site --now $NOW
	cp -r site before
	printf '{"model_id":"m","timestamp":"2026-06-09T00:00:00+00:00"}\n{not json\n' >bad.jsonl
	run --separate-stderr $N -s store -H bad.jsonl -o site --now $NOW
	assert_failure 2
	[[ $stderr == *'bad.jsonl:2: '* ]]
	diff -r before site
	rm -f separate-stderr-*
	assert_equal "$(ls -A)" $'bad.jsonl\nbefore\nsite\nstore'
	# so does a bad change point
	run --separate-stderr $N -s store --changes <(echo '{"metric":"nope"}') -o site
	assert_failure 2
	[[ $stderr == *':1: not a change point of perf-changes' ]]
	diff -r before site
}

@test "a missing store is exit 2; an unwritable destination is exit 2 before any work" {
	run --separate-stderr $N -s nowhere -o site
	assert_failure 2
	assert_equal "$stderr" "perf-site: nowhere: cannot read the store: No such file or directory"
	[ ! -e site ]
	three
	touch file
	run --separate-stderr $N -s store -o file/site
	assert_failure 2
	assert_equal "$stderr" "perf-site: file/site: cannot write the site: Not a directory"
}

@test "an empty store writes a site that says so" {
	mkdir store
	run --separate-stderr $N -s store -o site --now $NOW
	assert_success
	grep -q 'The store holds no records: nothing to show.' site/index.html
	grep -q 'No change points' site/changes.html
	grep -q '<feed xmlns="http://www.w3.org/2005/Atom">' site/feed.xml
}

@test "values from records are text, never markup" {
	rec '<script>x</script>' 1 1 c1 1.0
	mv store/'<script>x<'* store/m 2>/dev/null || true
	$N -s store -o site --now $NOW
	not grep -q '<script>x' site/index.html site/c/*.html
	grep -q '&lt;script&gt;x&lt;/script&gt;' site/index.html
}

@test "a cohort page draws each line as one relative path, markers grouped by status; style and script are shared files" {
	local d
	for d in 1 2 3 4 5 6 7 8; do rec m 1 "$d" "c$d" "1$d.0"; done
	rec m 1 9 c9 19.0 REGRESSION
	$N -s store -o site --now $NOW
	p=$(ls site/c/*.html)
	# latency 11 to 19 over x 56 to 708: one step of 81.5 (82 or 81) and 1 s each
	fig=$(grep '<figure id="m-latency">' "$p")
	[[ $fig =~ \<path\ class=\"ln\"\ d=\"M56\ [0-9]+l82-[0-9]+\ 81-[0-9]+ ]]
	[[ $fig != *'<polyline'* ]]
	# the rolling median from the second record on, where it is constant a "h"
	[[ $fig =~ \<path\ class=\"md\"\ d=\"M138\ [0-9]+l ]]
	[ "$(grep -o '<g class="p[0-3]">' <<<"$fig" | wc -l)" -eq 2 ]
	[[ $fig == *'<g class="p1"><a href="https://ci.example/builds/c9"><circle cx="708" '* ]]
	# each record from c2 on is a REGRESSION today (a step of 8% or more): a
	# marker each; c1, without a baseline, is none
	[ "$(grep -o '<circle cx="[0-9]*" cy="[0-9]*" r="3"><title>' <<<"$fig" | wc -l)" -eq 8 ]
	# no page carries the style or the script; each links the site's files
	[ -s site/site.css ] && [ -s site/site.js ]
	grep -q '^body{' site/site.css
	for page in site/index.html site/changes.html "$p"; do
		not grep -q '<style>\|<script>' "$page"
	done
	grep -q '<link rel="stylesheet" href="../site.css">' "$p"
	grep -q '<script src="../site.js"></script>' "$p"
	grep -q '<script src="site.js"></script>' site/index.html
}

@test "a cohort page marks the latest record and the failing ones; a flat run is one step; a plain PASS is text" {
	local d
	for d in $(seq 1 30); do rec m 1 "$d" "c$d" 10.0; done
	sed -i 's/"comparison_status":"PASS"/"comparison_status":"REGRESSION"/' store/m/*_c10.json
	sed -i 's/"latency":10.0/"latency":20.0/' store/m/*_c20.json
	$N -s store -o site --now $NOW
	p=$(ls site/c/*.html)
	fig=$(grep '<figure id="m-latency">' "$p")
	# c10 (stored REGRESSION), c20 (a REGRESSION today) and the latest
	run sort < <(grep -o '<title>2026-06-[0-9]* 00:00 c[0-9]* ' <<<"$fig")
	assert_output $'<title>2026-06-10 00:00 c10 \n<title>2026-06-20 00:00 c20 \n<title>2026-06-30 00:00 c30 '
	[[ $fig == *'<g class="p1"><a href="https://ci.example/builds/c10"><circle '* ]]
	# 30 equal values: one horizontal step across the chart
	fig=$(grep '<figure id="m-memory">' "$p")
	[[ $fig =~ \<path\ class=\"ln\"\ d=\"M56\ [0-9]+h652\"/\> ]]
	# a plain PASS is text, a failure a badge and its reason
	run grep '<tr id="c21"' "$p"
	assert_output --regexp '<td>yes<td>10<td>1000<td>PASS$'
	run grep '<tr id="c10"' "$p"
	assert_output --regexp '<b class="st REGRESSION">REGRESSION</b> today <b class="st PASS">PASS</b><td>reason of c10$'
}

@test "data/<id>.json: the series by column, its times in seconds since the epoch, exact" {
	rec m 1 1 c1 10.0
	rec m 1 2 c2 10.25
	sed -i 's/2026-06-02T00:00:00+00:00/2026-06-02T01:00:00.125+01:00/' store/m/*_c2.json
	$N -s store -o site --now $NOW
	f=$(ls site/data/*.json)
	assert_equal "$(jq -c '.records | keys_unsorted' "$f")" '["time","commit_sha","metrics"]'
	grep -q '"records":{"time":\[1780272000,1780358400.125\],"commit_sha":\["c1","c2"\],"metrics":{"latency":\[10.0,10.25\],"memory":\[1000.0,1000.0\]}}}$' "$f"
	assert_equal "$(jq -r '.records.time[1] | todate' "$f")" 2026-06-02T00:00:00Z
}

@test "a cohort of 500 runs: a page under 150 KB and data under 50 KB, every run anchored and linked" {
	# as bench/gen-store writes them: 40-digit commits, build links, five metrics
	awk 'BEGIN { srand(1); for (i = 1; i <= 500; i++) {
		lat = 31 + rand(); printf "{\"model_id\":\"model-1\",\"gpu_type\":\"NVIDIA L40S\",\"timestamp\":\"2026-06-%02dT%02d:%02d:00+00:00\",\"commit_sha\":\"%08x%032d\",\"latency\":%.3f,\"throughput\":%.3f,\"memory\":%.1f,\"text_encoder_time_s\":%.3f,\"dit_time_s\":%.3f,\"success\":true,\"run_source\":\"scheduled_main\",\"baseline_eligible\":true,\"build_url\":\"https://buildkite.com/org/perf/builds/%d\",\"result_schema_version\":2,\"workload_id\":\"workload-1\",\"variant_id\":\"v1\",\"benchmark_version\":3,\"recipe_fingerprint\":\"rf\",\"hardware_profile_id\":\"hw\",\"software_profile_id\":\"sw\",\"comparison_status\":\"PASS\",\"comparison_status_reason\":\"Comparable baseline found with no gated regressions\"}\n",
		    1 + int(i / 20), int(i / 60) % 24, i % 60, (i * 2654435761) % 4294967296, i, lat, 45 / lat,
		    10100 + 50 * rand(), 1 + rand() / 10, lat * 0.8, 5800 * i + 10 } }' >runs.jsonl
	$N -H runs.jsonl -o site --now $NOW
	p=$(ls site/c/*.html)
	[ "$(wc -c <"$p")" -lt 150000 ]
	[ "$(wc -c <site/data/*.json)" -lt 50000 ]
	[ "$(grep -c '^<tr id="[0-9a-f]\{40\}"><td>2026-06-[0-9 :]*<td><a href="https://buildkite.com/org/perf/builds/[0-9]*">' "$p")" -eq 500 ]
	assert_equal "$(jq '.records.commit_sha | length' site/data/*.json)" 500
}

@test "a 200-cohort store: the index stays small and names every cohort" {
	local c d
	for c in $(seq 1 200); do
		mkdir -p "store/m$c"
		for d in 1 2 3 4 5 6 7 8 9 10; do
			printf '{"model_id":"m%d","gpu_type":"G","timestamp":"2026-06-%02dT00:00:00+00:00","commit_sha":"c%dd%d","latency":%d.%d,"memory":100.0,"throughput":1.5,"result_schema_version":2,"workload_id":"w%d","variant_id":"v","benchmark_version":1,"recipe_fingerprint":"r","hardware_profile_id":"h","software_profile_id":"s","run_source":"scheduled_main","baseline_eligible":true,"comparison_status":"PASS"}\n' \
				"$c" "$d" "$c" "$d" "$c" "$d" "$c" >"store/m$c/2026-06-0${d}_c$c.json"
		done
	done
	$N -s store -o site --now $NOW
	sed -n '/id="cohorts"/,$p' site/index.html >all
	[ "$(grep -c '^<tr data-s=' all)" -eq 200 ]
	[ "$(wc -c <site/index.html)" -lt 400000 ]
	run grep -o '>w[0-9]* / v / v1<' all
	assert_equal "${lines[0]}" '>w1 / v / v1<'
	assert_equal "${lines[1]}" '>w2 / v / v1<'
	assert_equal "${lines[199]}" '>w200 / v / v1<'
}

# The pages of a site the sample tests below read: three cohorts of the
# store (a commit of v1 is markup), and the fixture history's two (one
# with change points).
sample_site() {
	three
	rec m2 2 7 c2d7 10.9 REGRESSION
	rec m1 1 7 'c1<i>d7' 10.7
	$N -s store -o site --now $NOW --changes "$CH/default.out.jsonl" -H "$CH/history.jsonl" \
		--ab <(printf '%s\n' '{"schema":"perfkite.ab-report/1","results":[{"benchmark_id":"m2","metric":"latency","pairs":6,"ratio":1.03,"interval":{"low":1.01,"high":1.05},"verdict":"slower"}],"status":"slower"}')
}

@test "every page of a site is valid HTML5 (html5lib, strict) with unique ids, and every link resolves" {
	py -c 'import html5lib' 2>/dev/null ||
		skip "python3-html5lib is not installed (sh tests/deps.sh test installs it)"
	sample_site
	run py "$TESTS_DIR/lib/site_check.py" html site
	assert_success
	assert_output 'valid 7 pages'
	run py "$TESTS_DIR/lib/site_check.py" links site
	assert_success
	assert_output --regexp '^resolved [0-9]{3,} links$'
	# and the checks fail where they should: a stray end tag, a lost anchor
	sed -i 's|</h1>|</h1></div>|' site/changes.html
	sed -i 's|#c2d4"|#c2d4x"|' site/index.html site/changes.html site/c/*.html
	run py "$TESTS_DIR/lib/site_check.py" html site
	assert_failure 1
	assert_output --partial 'site/changes.html: not valid HTML5: '
	sed -i 's|#8fd6cad9d1ca63f777b53bfb39619896663f9cea|#8fd6cad|' site/index.html
	run py "$TESTS_DIR/lib/site_check.py" links site
	assert_failure 1
	assert_output --partial 'site/index.html: c/wan-t2v-1.3b-sp2-v3-53686e274439.html#8fd6cad: no such anchor'
}

@test "headless Chromium: a sample of pages loads without errors; its sparklines and charts hold the store's values" {
	chromium_or_skip
	py -c 'import html5lib' 2>/dev/null ||
		skip "python3-html5lib is not installed (sh tests/deps.sh test installs it)"
	sample_site
	local label p
	chromium_run idx "file://$BATS_TEST_TMPDIR/site/index.html" --dump-dom
	not grep -Ei 'CONSOLE|Uncaught|Failed to load' idx.err
	grep -q '<form id="f">' idx.out	# the script ran: the filter form is shown
	# the sample: the index's first and last cohorts, the one with change
	# points, and one more; each row's sparklines and each page's charts
	# are read back from the DOM and compared with the store's records
	for label in 'Legacy v1: legacy-model | NVIDIA H100' 'wan-t2v / 1.3b-sp2 / v3' \
		'wl / v / v2' 'wl / v / v10'; do
		run py "$TESTS_DIR/lib/site_check.py" values idx.out "$label" store/*/*.json "$CH/history.jsonl"
		assert_success
		assert_output --regexp '^[0-9] sparklines$'
		p=$(grep -o "<a href=\"c/[^\"]*\">$label</a>" site/index.html | head -1 | sed 's/^<a href="//; s/".*//')
		chromium_run page "file://$BATS_TEST_TMPDIR/site/$p" --dump-dom
		not grep -Ei 'CONSOLE|Uncaught|Failed to load' page.err
		grep -q '<form id="f">' page.out
		run py "$TESTS_DIR/lib/site_check.py" values page.out "$label" store/*/*.json "$CH/history.jsonl"
		assert_success
		assert_output --regexp '^[0-9]+ values in [1-6] charts$'
		run label_boxes "site/$p"
		assert_success
		assert_output --regexp '^checked [0-9]{2,} texts$'
	done
	# v2's latency sparkline: 10.1 to 10.6, then 10.9, on 48 x 14 from y 13 (lowest) to 1
	grep -q '>wl / v / v2</a></td><td>m2</td><td>NVIDIA L40S</td><td>.*<td>+[0-9.]*%<svg><path d="M0 13l8-1 8-2 8-2 7-1 8-1 8-5"></path></svg></td>' idx.out
	# a sparkline that changes is read as changed
	sed 's/"latency":10.3,/"latency":10.35,/' store/m2/*_c2d3.json >other.json
	run py "$TESTS_DIR/lib/site_check.py" values idx.out 'wl / v / v2' other.json \
		store/m2/*_c2d[124567].json
	assert_failure 1
	assert_output --partial 'wl / v / v2: sparklines'
}

@test "headless Chromium: the script filters rows and a click on a chart goes to its record" {
	chromium_or_skip
	three
	$N -s store -o site --now $NOW --changes "$CH/default.out.jsonl" -H "$CH/history.jsonl"
	p=$(ls site/c/wl-v-v2-*.html)
	# rows shown for run source pr, then scheduled_main; a click at the
	# chart's first and last points
	{
		cat "$p"
		echo '<script>var s=document.querySelector("select[name=s]"),n=[];'
		echo 'var o=document.createElement("option");o.text="pr";s.add(o);'
		echo '["pr","scheduled_main"].forEach(function(v){s.value=v;'
		echo 's.dispatchEvent(new Event("change",{bubbles:true}));'
		echo 'n.push(document.querySelectorAll("table.f tbody tr:not([hidden])").length)});'
		echo 'var g=document.querySelector("#m-latency svg"),b=g.getBoundingClientRect();'
		echo '[56,708].forEach(function(x){g.dispatchEvent(new MouseEvent("click",{bubbles:true,'
		echo 'clientX:b.left+b.width*x/720,clientY:b.top+b.height/2}));n.push(location.hash)});'
		echo 'document.title=n.join(" ");</script>'
	} >site/c/probe.html
	chromium_run probe "file://$BATS_TEST_TMPDIR/site/c/probe.html" --dump-dom
	not grep -Ei 'Uncaught' probe.err
	grep -q '<title>0 6 #c2d1 #c2d6</title>' probe.out
	# on the index, by model: one cohort's row (and its rows of Needs attention)
	{
		cat site/index.html
		echo '<script>var s=document.querySelector("select[name=m]");s.value="m2";'
		echo 's.dispatchEvent(new Event("change",{bubbles:true}));'
		echo 'document.title=document.querySelectorAll("#cohorts + table tbody tr:not([hidden])").length;</script>'
	} >site/probe.html
	chromium_run iprobe "file://$BATS_TEST_TMPDIR/site/probe.html" --dump-dom
	grep -q '<title>1</title>' iprobe.out
	# a click on Latency sorts by the percent each cell shows: -0.0% (wan-t2v),
	# +0.5% (the legacy cohort), +2.9% (wl); again, the other way
	{
		cat site/index.html
		echo '<script>var h=document.querySelector("#cohorts + table th[title]"),n=[];'
		echo '[1,2].forEach(function(){h.click();var r=document.querySelector("#cohorts + table tbody").rows;'
		echo 'n.push(r[0].cells[0].textContent.slice(0,6),r[r.length-1].cells[0].textContent.slice(0,6))});'
		echo 'document.title=n.join("|");</script>'
	} >site/sort.html
	chromium_run sort "file://$BATS_TEST_TMPDIR/site/sort.html" --dump-dom
	grep -q '<title>wan-t2|wl / v|wl / v|wan-t2</title>' sort.out
}

@test "the site of the fixture history is the expected tree, byte for byte (UPDATE_FIXTURES=1 rewrites it)" {
	local want=$FIXTURES/perf-site/expected
	$N -H "$CH/history.jsonl" --changes "$CH/default.out.jsonl" --title 'Fixture history' \
		--now 2026-01-04T00:00:00Z -o site
	if [ -n "${UPDATE_FIXTURES:-}" ]; then
		rm -rf "$want"
		mkdir -p "${want%/*}"
		cp -r site "$want"
	fi
	diff -r "$want" site
}

# label_boxes PAGE: loads a copy of PAGE with a probe that measures every
# text of every chart in Chromium; prints what lies outside its chart,
# then "checked N texts".
label_boxes() {
	{
		cat "$1"
		cat <<-'EOF2'
		<script>
		const out = []; let n = 0;
		document.querySelectorAll("figure svg").forEach((s, i) => {
		  const vb = s.viewBox.baseVal;
		  for (const t of s.querySelectorAll("text")) {
		    const b = t.getBBox(); n++;
		    if (b.x < vb.x - 0.01 || b.x + b.width > vb.x + vb.width + 0.01 ||
		        b.y < vb.y - 0.01 || b.y + b.height > vb.y + vb.height + 0.01)
		      out.push(`chart ${i}: ${t.textContent} outside`);
		  }
		});
		out.push(`checked ${n} texts`);
		const pre = document.createElement("pre"); pre.id = "boxes";
		pre.textContent = out.join("\n"); document.body.appendChild(pre);
		</script>
		EOF2
	} >"$1.probe.html"
	chromium_run "$1.probe" "file://$PWD/$1.probe.html" --dump-dom
	sed -n '/<pre id="boxes">/,/<\/pre>/p' "$1.probe.out" | sed 's/<[^>]*>//g'
}

@test "headless Chromium: every text of every chart stays inside it" {
	chromium_or_skip
	$N -H "$CH/history.jsonl" --changes "$CH/default.out.jsonl" -o site --now $NOW
	for p in site/c/*.html; do
		run label_boxes "$p"
		assert_success
		assert_output --regexp '^checked [0-9]{2,} texts$'
	done
}

@test "the scheduled-main template's site step publishes one commit on gh-pages" {
	local cmd
	cmd=$(py -c '
import sys, yaml
steps = yaml.safe_load(open(sys.argv[1]))["steps"]
print([s for s in steps if s.get("key") == "performance-site"][0]["command"].replace("$$", "$"))
' "$ROOT_DIR/pipeline-templates/scheduled-main.yml")
	git init -q --bare -b gh-pages pages.git
	export SITE_STORE=$ROOT_DIR/fixtures/store SITE_REMOTE=file://$BATS_TEST_TMPDIR/pages.git
	for _ in 1 2; do
		bash -c "$cmd" >/dev/null 2>&1
	done
	# twice published, one commit: the branch does not grow
	assert_equal "$(git -C pages.git rev-list --count gh-pages)" 1
	run git -C pages.git ls-tree -r --name-only gh-pages
	assert_line index.html
	assert_line feed.xml
	assert_line --regexp '^c/wan-t2v-1\.3b-sp2-v3-[0-9a-f]{12}\.html$'
}

@test "a change point with the culprit of a stored bisect shows it on changes.html and its cohort's page" {
	k='"culprit":{"commit":"1234567890abcdef1234567890abcdef12345678","short":"1234567","subject":"slow <path>","share":0.9,"dependency_change":false,"report":".perfkite/bisect/r.json"}'
	sed "1s|}\$|,$k}|" "$CH/default.out.jsonl" >cps.jsonl
	$N -H "$CH/history.jsonl" --changes cps.jsonl -o site --now $NOW
	$N -H "$CH/history.jsonl" --changes "$CH/default.out.jsonl" -o plain --now $NOW
	grep -q '<td>undecided, culprit: 1234567 (slow &lt;path&gt;)</td>' site/changes.html
	p=$(ls site/c/wan-t2v-1.3b-sp2-v3-*.html)
	grep -q '<li>2026-01-02 16:00 latency <span class="w">worse +5.5%</span> at <a [^>]*>8fd6cad</a>, undecided, culprit: 1234567 (slow &lt;path&gt;)</li>' "$p"
	grep -q '<title>change point: latency worse +5.5%, commit 8fd6cad, undecided, culprit: 1234567 (slow &lt;path&gt;)</title>' "$p"
	# Nothing else differs.
	[ "$(grep -c 'culprit: 1234567' site/changes.html)" -eq 1 ]
	[ "$(grep -o 'culprit: 1234567' "$p" | wc -l)" -eq 2 ]
	diff -r <(cd plain && find . -type f | sort | xargs cat) \
		<(cd site && find . -type f | sort | xargs sed 's/, culprit: 1234567 (slow &lt;path&gt;)//g')
}

@test "--publish: one force-pushed commit to a branch of a git remote over http, with the store's token" {
	lighttpd_or_skip
	three
	mkdir srv
	bare_remote srv/pages.git
	git_http_start "$PWD/srv" s3cr3t-t0ken
	for now in 2026-06-30T00:00:00Z 2026-07-01T00:00:00Z; do
		HF_TOKEN=s3cr3t-t0ken run --separate-stderr $N -s store -o site --now $now \
			--publish "git+$GIT_HTTP_URL/pages.git#gh-pages"
		assert_success
		[ -z "$stderr" ]
	done
	# One commit, the latest site, exactly what -o holds.
	assert_equal "$(git -C srv/pages.git rev-list --count gh-pages)" 1
	assert_equal "$(git -C srv/pages.git log -1 --format=%s gh-pages)" "perf-site of 2026-07-01T00:00:00+00:00"
	assert_equal "$(git -C srv/pages.git ls-tree -r --name-only gh-pages)" "$(cd site && find . -type f | sed 's|^\./||' | LC_ALL=C sort)"
	git -C srv/pages.git show gh-pages:index.html | cmp - site/index.html
	# The store's default branch is left alone; the site holds no git files.
	run ! git -C srv/pages.git rev-parse -q --verify main
	[ ! -e site/.git ]
	# A wrong token: exit 2, the remote's refusal said, the token never shown.
	HF_TOKEN=wrong-t0ken run --separate-stderr $N -s store -o site --now $NOW \
		--publish "git+$GIT_HTTP_URL/pages.git"
	assert_failure 2
	[[ $stderr == "perf-site: $GIT_HTTP_URL/pages.git: cannot publish: "* ]]
	not grep -q wrong-t0ken <<<"$stderr"
	assert_equal "$(git -C srv/pages.git rev-list --count gh-pages)" 1
	# A password in the URL is never shown either.
	run --separate-stderr $N -s store -o site --now $NOW \
		--publish "git+http://hf_user:pa55word@127.0.0.1:9/pages.git#x"
	assert_failure 2
	not grep -q pa55word <<<"$stderr"
	[[ $stderr == *"hf_user:***@127.0.0.1:9/pages.git: cannot publish"* ]]
	# Not a git remote: usage, before any work.
	run --separate-stderr $N -s store -o site2 --publish "$PWD/pages"
	assert_failure 2
	assert_equal "${stderr_lines[0]}" "perf-site: --publish: '$PWD/pages' is not a git remote (git+URL[#branch])"
	[ ! -e site2 ]
}

@test "named metrics: a chart per named metric in its display unit, a column per named metric on the index; their change points" {
	local d v
	mkdir -p store/bm
	for d in 1 2 3 4 5 6; do
		v=0.00200$d
		[ "$d" -lt 4 ] || v=0.00220$d
		printf '{"model_id":"bm","gpu_type":"cpu","timestamp":"2026-06-%02dT00:00:00+00:00","commit_sha":"c%s","success":true,"run_source":"scheduled_main","baseline_eligible":true,"result_schema_version":2,"workload_id":"wl","variant_id":"v","benchmark_version":1,"recipe_fingerprint":"rf","hardware_profile_id":"hw-1","software_profile_id":"sw-1","comparison_status":"PASS","metrics":{"BM_<Sort>/time":{"value":%s,"unit":"s","better":"lower"},"rate":{"value":1.5e9,"unit":"B/s"},"failed":{"value":null,"unit":"s"}}}\n' \
			"$d" "$d" "$v" >"store/bm/2026-06-0${d}T00_00_00_00_00_c$d.json"
	done
	printf '%s\n' '{"workload_id":"wl","variant_id":"v","benchmark_version":"1","recipe_fingerprint":"rf","hardware_profile_id":"hw-1","software_profile_id":"sw-1","model_id":"bm","gpu_type":"cpu","metric":"BM_<Sort>/time","unit":"s","better":"lower","direction":"worse","index":3,"timestamp":"2026-06-04T00:00:00+00:00","commit_sha":"c4","path":"bm/2026-06-04T00_00_00_00_00_c4.json","forward_change_percent":10.0}' >cps.jsonl
	run --separate-stderr $N -s store --changes cps.jsonl --now "$NOW" -o site
	assert_success
	local page
	page=$(ls site/c/*.html)
	# one chart each, captioned with its name (escaped) and unit; a failed metric has none
	grep -qF '<figure id="n-0"><figcaption>BM_&lt;Sort&gt;/time (s)</figcaption>' "$page"
	grep -qF '<figure id="n-1"><figcaption>rate (B/s)</figcaption>' "$page"
	not grep -qF '>failed (' "$page"
	# values and axis labels in the display unit
	grep -qF ' c4 2.2 ms</title></circle>' "$page"
	grep -qF ' c1 2.0 ms</title></circle>' "$page"
	grep -qF '>1.5 GB/s</text>' "$page"
	# the change point: a line on its chart, a line in the page's list, the index and changes.html
	grep -qF '<title>change point: worse, commit c4, undecided</title></line>' "$page"
	grep -qF 'BM_&lt;Sort&gt;/time <span class="w">worse +10.0%</span>' "$page"
	grep -qF '<td>BM_&lt;Sort&gt;/time <span class="w">worse +10.0%</span>' site/index.html
	grep -qF '<td>BM_&lt;Sort&gt;/time</td>' site/changes.html
	grep -qF "<title>wl / v / v1: BM_&lt;Sort&gt;/time worse +10.0%</title>" site/feed.xml
	# the index: a column per named metric, the latest run against the five before it
	grep -qF '<th data-k title="latest against the median of the five eligible runs before it">BM_&lt;Sort&gt;/time</th><th data-k title="latest against the median of the five eligible runs before it">rate</th><th data-k>Latest change point</th>' site/index.html
	grep -qF '<td data-v="10.13"><span class="w">+10.1%</span><td data-v="0.00">+0.0%<td>BM_&lt;Sort&gt;/time <span class="w">worse +10.0%</span>' site/index.html
}
