#!/usr/bin/env bats
# perf-frames: the equivalent-workload frame-time comparison. Synthetic
# recordings come from fixtures/perf-frames/gen.py; reports are checked
# against an independent Python reading of the spec
# (fixtures/perf-frames/reference.py) and against figures worked by hand.

# shellcheck disable=SC2154 # bats sets status, output, lines, stderr
# shellcheck disable=SC2016 # awk and jq programs are single-quoted on purpose
load lib/common
load lib/golden

F=$FIXTURES/perf-frames

setup() {
	cd "$BATS_TEST_TMPDIR" || return 1
}

# gen DIR ARGS...: a synthetic comparison in DIR.
gen() {
	py "$F/gen.py" "$@"
}

# same_as_reference MANIFEST: perf-frames and the Python reading agree,
# byte for byte.
same_as_reference() {
	perf-frames "$1" >got.json
	py "$F/reference.py" "$1" >want.json
	py "$ROOT_DIR/tests/lib/jsoncmp.py" got.json want.json
	cmp got.json want.json
}

# csv FILE SPEC...: a recording whose frame times are COUNTxMS (whole ms),
# populations as gen.py declares them, ai_simulation_ms 1.5.
csv() {
	local f=$1
	shift
	printf '%s\n' "$@" | awk -v FS=x '
		BEGIN { print "frame_index,elapsed_ms,frame_time_ms,players,ai,vehicles,entities,ai_simulation_ms" }
		{ for (k = 0; k < $1; k++) { i++; t += $2; printf "%d,%d.0,%d.0,12,36,4,1000,1.5\n", i, t, $2 } }' >"$f"
}

# every_run CSV: g/m.json, the manifest of gen.py whose six runs each read
# a copy of CSV.
every_run() {
	for v in baseline successor; do for p in 1 2 3; do cp "$1" "d-$v-$p.csv"; done; done
	gen g
	jq '.runs |= map(.sample_file = "../d-\(.variant)-\(.repeat_id[-1:]).csv")' g/comparison.json >g/m.json
}

# expect_error CODE MANIFEST: exit 2, nothing on stdout, one line with the
# code on stderr; the Python reading finds the same code.
expect_error() {
	run --separate-stderr perf-frames "$2"
	echo "stderr: $stderr"
	assert_failure 2
	assert_output ''
	assert_equal "${#stderr_lines[@]}" 1
	[[ $stderr == "perf-frames: $1: "* ]]
	local mine=$stderr
	run --separate-stderr py "$F/reference.py" "$2"
	assert_equal "$stderr" "perf-frames: $1"
	stderr=$mine
}

# mutate JQ: the manifest of d/ changed by a jq filter, in m/ (CSVs linked).
mutate() {
	rm -rf m && mkdir m
	for f in d/*.csv; do ln -s "$PWD/$f" "m/${f#d/}"; done
	jq "$1" d/comparison.json >m/comparison.json
}

@test "a synthetic comparison: the report of the Python reading, byte for byte" {
	gen d
	run --separate-stderr perf-frames d/comparison.json
	assert_success
	assert_equal "$stderr" ''
	same_as_reference d/comparison.json
	assert_equal "$(jq -r '.acceptance, .sample_origin, .variants.baseline.runs, (.runs | length), (.paired_deltas | length)' got.json | tr '\n' ' ')" \
		'not_evaluated synthetic 3 6 3 '
	assert_equal "$(jq -r '.runs[0].sample_sha256' got.json)" "$(sha256sum d/synthetic-baseline-pair-01.csv | cut -d' ' -f1)"
	assert_equal "$(jq -r .manifest_sha256 got.json)" "$(sha256sum d/comparison.json | cut -d' ' -f1)"
	# the successor's frames are 10% shorter: positive reductions
	jq -e '.delta_summary.median_frame_time_reduction_percent > 5 and .delta_summary.throughput_increase_percent > 5' got.json
}

@test "the example comparison: the report, --jsonl and an invalid manifest, byte for byte" {
	local d=$ROOT_DIR/fixtures/frames
	golden perf-frames/golden/report perf-frames "$d/comparison.json"
	golden perf-frames/golden/jsonl perf-frames --jsonl "$d/comparison.json"
	cp "$d"/*.csv .
	jq '.runs[0].workload.warmup_seconds = "30"' "$d/comparison.json" >comparison.json
	golden perf-frames/golden/invalid-manifest perf-frames comparison.json
}

@test "key order and integers: the layout of doc/frames-report.md" {
	gen d
	perf-frames d/comparison.json >r.json
	assert_equal "$(jq -c 'keys_unsorted' r.json)" \
		'["acceptance","sample_origin","manifest_sha256","capture","measurement","variants","runs","paired_deltas","delta_summary"]'
	assert_equal "$(jq -c '.runs[0] | keys_unsorted' r.json)" \
		'["repeat_id","variant","sample_file","sample_sha256","rows","included_intervals","included_seconds","measurement_coverage_fraction","excluded_boundary_intervals","metrics"]'
	assert_equal "$(jq -c '.runs[0].metrics | keys_unsorted' r.json)" \
		'["median_frame_time_ms","p95_frame_time_ms","p99_frame_time_ms","median_fps","p05_fps","p01_fps","throughput_per_second","median_ai_simulation_ms","p95_ai_simulation_ms"]'
	grep -q '"window_start_ms": 30000,' r.json
	grep -q '"minimum_coverage_fraction": 0.99' r.json
	# float durations stay floats, and so does the window
	gen f --warmup 30.0 --duration 60.5
	same_as_reference f/comparison.json
	grep -q '"window_end_ms": 90500.0,' got.json
}

@test "boundary intervals at the warm-up and at the end, worked by hand; an odd median" {
	# 149 warm-up frames of 200 ms, one of 400 crossing 30 s, 121 included
	# (one of 200 ms, 120 of 495), one of 500 crossing 90 s.
	csv a.csv 149x200 1x400 1x200 120x495 1x500
	every_run a.csv
	run perf-frames g/m.json
	assert_success
	assert_equal "$(jq -c '.runs[0] | [.rows, .included_intervals, .included_seconds, .measurement_coverage_fraction]' <<<"$output")" \
		'[272,121,59.6,0.9933333333333333]'
	assert_equal "$(jq -c '.runs[0].excluded_boundary_intervals' <<<"$output")" \
		'[{"frame_index":150,"boundary":"warmup","start_ms":29800,"end_ms":30200,"duration_ms":400,"overlap_ms":200},{"frame_index":272,"boundary":"end","start_ms":89800,"end_ms":90300,"duration_ms":500,"overlap_ms":200}]'
	grep -q '"overlap_ms": 200.0' <<<"$output"
	assert_equal "$(jq -c '.runs[0].metrics | [.median_frame_time_ms, .p95_frame_time_ms, .p99_frame_time_ms, .median_fps, .p05_fps, .p01_fps, .throughput_per_second, .median_ai_simulation_ms]' <<<"$output")" \
		'[495,495,495,2.0202020202020203,2.0202020202020203,2.0202020202020203,2.030201342281879,1.5]'
	same_as_reference g/m.json
}

@test "ties at nearest ranks and an even median, worked by hand" {
	# warm-up 60 x 500 ms; 120 included: 40 x 400, 40 x 500, 40 x 600 (60 s)
	csv t.csv 60x500 40x600 40x400 40x500
	every_run t.csv
	run perf-frames g/m.json
	assert_success
	# median (element 60 + 61) / 2; p95 element 114, p99 119: in the 600 ties;
	# rates ascending: p05 element 6 and p01 element 2 in the 1000/600 ties
	assert_equal "$(jq -c '.runs[0].metrics | [.median_frame_time_ms, .p95_frame_time_ms, .p99_frame_time_ms, .median_fps, .p05_fps, .p01_fps, .throughput_per_second]' <<<"$output")" \
		'[500,600,600,2,1.6666666666666667,1.6666666666666667,2]'
	assert_equal "$(jq -c '.runs[0] | [.included_intervals, .measurement_coverage_fraction, .excluded_boundary_intervals]' <<<"$output")" \
		'[120,1,[]]'
	assert_equal "$(jq -c '.delta_summary' <<<"$output")" \
		'{"median_frame_time_reduction_percent":0,"p99_frame_time_reduction_percent":0,"throughput_increase_percent":0}'
	same_as_reference g/m.json
	# a generated dataset full of ties agrees with the Python reading too
	gen s --ties --pairs 4
	same_as_reference s/comparison.json
}

@test "a stall across the end that drops coverage under 99% rejects the comparison" {
	gen d --stall pair-02:successor:89000:1500
	expect_error insufficient_coverage d/comparison.json
	[[ $(perf-frames d/comparison.json 2>&1) == *"synthetic-successor-pair-02.csv: "*" included intervals covering 0.98"* ]]
	# a short stall across the end stays above 99%: excluded, reported
	gen e --stall pair-02:successor:89900:300
	same_as_reference e/comparison.json
	assert_equal "$(jq -r '.runs[] | select(.repeat_id == "pair-02" and .variant == "successor") | .excluded_boundary_intervals[-1] | "\(.boundary) \(.duration_ms) \(.overlap_ms < 100 and .overlap_ms > 99)"' got.json)" 'end 300 true'
	grep -q '"duration_ms": 300.0,' got.json
}

@test "one interval across both the warm-up and the end: excluded, nothing left to measure" {
	# 29.9 s of warm-up, then one 61 s frame
	csv a.csv 299x100 1x61000
	every_run a.csv
	expect_error insufficient_coverage g/m.json
	[[ $(perf-frames g/m.json 2>&1) == "perf-frames: insufficient_coverage: g/../d-baseline-1.csv: 0 included intervals covering 0.0 of the measurement window; at least 120 intervals and 0.99 are needed" ]]
}

@test "a server-tick dataset and a headless Workbench dataset" {
	gen s --kind server_tick --env dedicated_server --rate 30
	same_as_reference s/comparison.json
	assert_equal "$(jq -c .capture got.json)" '{"kind":"server_tick","environment":"dedicated_server","tool":"synthetic-generator","version":"1"}'
	gen w --env workbench_headless --rate 90 --pairs 5
	same_as_reference w/comparison.json
	assert_equal "$(jq -r '.capture.environment, (.paired_deltas | length)' got.json | tr '\n' ' ')" 'workbench_headless 5 '
	# a dedicated server cannot record client frames
	gen x --kind client_frame --env dedicated_server
	expect_error invalid_capture x/comparison.json
}

@test "CRLF line ends and a missing final newline are accepted" {
	gen d --crlf
	same_as_reference d/comparison.json
	gen e
	f=e/synthetic-baseline-pair-01.csv
	printf '%s' "$(cat "$f")" >x && mv x "$f"
	same_as_reference e/comparison.json
}

# case CODE JQ: the manifest changed by JQ is rejected with CODE.
case_manifest() {
	mutate "$2"
	expect_error "$1" m/comparison.json
}

@test "invalid_json: duplicate keys, NaN, overflow, 64-bit integers, bad UTF-8, truncation" {
	gen d
	mkdir m && cp d/*.csv m/
	sed '0,/"schema_version": 1,/s//"schema_version": 1, "schema_version": 1,/' d/comparison.json >m/comparison.json
	expect_error invalid_json m/comparison.json
	[[ $stderr == "perf-frames: invalid_json: m/comparison.json:2:"*"duplicate"* ]]
	sed '0,/"ram_gib": 32/s//"ram_gib": NaN/' d/comparison.json >m/comparison.json
	expect_error invalid_json m/comparison.json
	sed '0,/"ram_gib": 32/s//"ram_gib": 1e999/' d/comparison.json >m/comparison.json
	expect_error invalid_json m/comparison.json
	sed '0,/"players": 12/s//"players": 9223372036854775808/' d/comparison.json >m/comparison.json
	expect_error invalid_json m/comparison.json
	sed '0,/"synthetic CPU"/s//"synthetic \xff CPU"/' d/comparison.json >m/comparison.json
	expect_error invalid_json m/comparison.json
	head -c 200 d/comparison.json >m/comparison.json
	expect_error invalid_json m/comparison.json
	: >m/comparison.json
	expect_error invalid_json m/comparison.json
	run --separate-stderr perf-frames m/missing.json
	assert_failure 2
	[[ $stderr == "perf-frames: invalid_json: m/missing.json: cannot read: "* ]]
}

@test "invalid_manifest: exact key sets and types, everywhere" {
	gen d
	while IFS= read -r f; do
		case_manifest invalid_manifest "$f"
	done <<-'EOF'
		.extra = 1
		del(.runs)
		.schema_version = true
		.schema_version = 2
		.sample_origin = "real"
		.runs = {}
		. as $d | [1, 2]
		.runs[3].notes = "x"
		del(.runs[3].sample_file)
		.runs[3] = 7
		.runs[3].variant = "other"
		.runs[3].repeat_id = ""
		.runs[3].artifact_id = 5
		.runs[3].addon_ids = "x"
		.runs[3].addon_ids = [""]
		.runs[3].engine_version = null
		.runs[3].hardware.extra = 1
		.runs[3].hardware = []
		.runs[3].hardware.ram_gib = 0
		.runs[3].hardware.ram_gib = "32"
		.runs[3].hardware.ram_gib = true
		.runs[3].hardware.driver = ""
		.runs[3].workload.settings = {}
		.runs[3].workload.settings = [1]
		del(.runs[3].workload.route)
		.runs[3].workload.warmup_seconds = "30"
		.runs[3].workload.duration_seconds = true
		del(.runs[3].capture.version)
		.runs[3].capture.kind = 5
		.runs[3].sample_file = ""
	EOF
	# jq writes 1.0 as 1: the float by hand
	mkdir -p f && cp d/*.csv f/
	sed 's/"schema_version": 1,/"schema_version": 1.0,/' d/comparison.json >f/comparison.json
	expect_error invalid_manifest f/comparison.json
	case_manifest invalid_manifest '.runs[3].notes = "x"'
	[[ $stderr == 'perf-frames: invalid_manifest: m/comparison.json: runs[3]: unexpected key "notes"' ]]
	case_manifest invalid_manifest '.runs[1].hardware.ram_gib = 0'
	[[ $stderr == 'perf-frames: invalid_manifest: m/comparison.json: runs[1].hardware.ram_gib: must be a number > 0' ]]
}

@test "invalid_population, measurement_too_short, invalid_capture" {
	gen d
	while IFS=' ' read -r code f; do
		case_manifest "$code" "$f"
	done <<-'EOF'
		invalid_population .runs[2].workload.players = 0
		invalid_population .runs[2].workload.ai = -1
		invalid_population .runs[2].workload.vehicles = 4.5
		invalid_population .runs[2].workload.players = true
		invalid_population .runs[2].workload.entities = "1000"
		invalid_population .runs[2].workload.entities = 51
		measurement_too_short .runs[2].workload.warmup_seconds = 29.9
		measurement_too_short .runs[2].workload.duration_seconds = 59
		measurement_too_short .runs[2].workload.warmup_seconds = -30
		invalid_capture .runs[2].capture.kind = "gpu_frame"
		invalid_capture .runs[2].capture.environment = "server"
		invalid_capture .runs[2].capture.environment = "dedicated_server"
	EOF
	mkdir -p f && cp d/*.csv f/
	sed 's/"vehicles": 4,/"vehicles": 4.0,/' d/comparison.json >f/comparison.json
	expect_error invalid_population f/comparison.json
	# entities may equal the sum exactly
	mutate '.runs[].workload.entities = 52'
	run perf-frames m/comparison.json
	assert_failure 2
	[[ $output == "perf-frames: population_mismatch: "* ]]
}

@test "invalid_pairing, identity_changed, unequal_conditions, reused_sample_file" {
	gen d
	while IFS=' ' read -r code f; do
		case_manifest "$code" "$f"
	done <<-'EOF'
		invalid_pairing del(.runs[5])
		invalid_pairing .runs[5].repeat_id = "pair-02"
		invalid_pairing .runs[1].variant = "baseline" | .runs[1].artifact_id = "synthetic-baseline-build-1" | .runs[1].addon_ids = ["synthetic-baseline-addon"]
		invalid_pairing del(.runs[4,5])
		identity_changed .runs[3].artifact_id = "synthetic-baseline-build-2"
		identity_changed .runs[4].addon_ids += ["another"]
		unequal_conditions .runs[3].workload.settings.vsync = true
		unequal_conditions .runs[3].hardware.ram_gib = 33
		unequal_conditions .runs[5].engine_version = "synthetic-engine-1.1"
		unequal_conditions .runs[5].capture.version = "2"
		unequal_conditions .runs[5].workload.duration_seconds = 61
		reused_sample_file .runs[5].sample_file = .runs[0].sample_file
		reused_sample_file .runs[5].sample_file = "./" + .runs[2].sample_file
	EOF
	# 32 and 32.0 differ: canonical JSON keeps the float
	mkdir -p f && cp d/*.csv f/
	awk '/"ram_gib": 32/ && ++n == 4 { sub(/32/, "32.0") } 1' d/comparison.json >f/comparison.json
	expect_error unequal_conditions f/comparison.json
	[[ $stderr == 'perf-frames: unequal_conditions: f/comparison.json: runs[3].hardware.ram_gib differs from runs[0]' ]]
	# whitespace and key order do not matter
	jq -S . d/comparison.json >d/sorted.json
	run perf-frames d/sorted.json
	assert_success
	# a link to another run's recording is the same file
	mutate '.runs[5].sample_file = "link.csv"'
	ln -s "$PWD/d/synthetic-baseline-pair-01.csv" m/link.csv
	expect_error reused_sample_file m/comparison.json
	[[ $stderr == *"runs[0] and runs[5] both read $PWD/d/synthetic-baseline-pair-01.csv" ]]
}

@test "the manifest categories: each over every run before the next one" {
	gen d
	# an invalid_manifest in the last run wins over an invalid_population in the first
	case_manifest invalid_manifest '.runs[0].workload.players = 0 | .runs[5].extra = 1'
	case_manifest invalid_population '.runs[0].workload.warmup_seconds = 1 | .runs[5].workload.players = 0'
	case_manifest measurement_too_short '.runs[0].capture.kind = "x" | .runs[5].workload.warmup_seconds = 1'
	case_manifest invalid_capture 'del(.runs[1]) | .runs[4].capture.kind = "x"'
	case_manifest invalid_pairing 'del(.runs[1]) | .runs[4].artifact_id = "x"'
	case_manifest identity_changed '.runs[0].engine_version = "x" | .runs[5].artifact_id = "x"'
	case_manifest unequal_conditions '.runs[1].sample_file = .runs[0].sample_file | .runs[5].engine_version = "x"'
	# every manifest check before any recording is read
	mutate '.runs[1].sample_file = .runs[0].sample_file'
	rm m/synthetic-baseline-pair-01.csv
	expect_error reused_sample_file m/comparison.json
}

# csv_case CODE FILE AWK: the recording FILE of a copy of d/ changed by AWK
# (the whole file, header included) is rejected with CODE.
csv_case() {
	rm -rf c && cp -r d c
	awk "$3" "d/$2" >"c/$2"
	expect_error "$1" c/comparison.json
}

@test "every recording check, in its order, with the file and line" {
	gen d
	b=synthetic-baseline-pair-02.csv
	csv_case invalid_header "$b" 'NR == 1 { sub(/ai,/, "ai ,") } 1'
	csv_case invalid_header "$b" 'NR == 1 { printf "\xef\xbb\xbf" } 1'
	csv_case invalid_header "$b" 'NR == 1 { sub(/,ai_simulation_ms/, "") } 1'
	csv_case rows_after_boundary "$b" '1; END { print "garbage" }'
	csv_case invalid_row "$b" 'NR == 50 { sub(/,12,/, ",twelve,") } 1'
	csv_case invalid_row "$b" 'NR == 50 { $0 = $0 "," } 1'
	csv_case invalid_row "$b" 'NR == 50 { $0 = "" } 1'
	csv_case frame_index_gap "$b" 'NR != 50'
	csv_case elapsed_not_increasing "$b" 'BEGIN { FS = OFS = "," } NR == 50 { $2 = p } { p = $2 } 1'
	csv_case frame_time_too_small "$b" 'BEGIN { FS = OFS = "," } NR == 50 { $3 = "0.0009" } 1'
	csv_case frame_time_mismatch "$b" 'BEGIN { FS = OFS = "," } NR == 50 { $3 = $3 + 0.5 } 1'
	csv_case cumulative_time_mismatch "$b" 'BEGIN { FS = OFS = "," } NR >= 50 && NR <= 52 { $3 = sprintf("%.3f", $3 + 0.06) } 1'
	csv_case population_mismatch "$b" 'BEGIN { FS = OFS = "," } NR == 5000 { $7 = 999 } 1'
	csv_case negative_ai_simulation "$b" 'BEGIN { FS = OFS = "," } NR == 5000 { $8 = "-0.001" } 1'
	csv_case recording_ended_early "$b" '{ l[NR] = $0 } END { for (i = 1; i < NR; i++) print l[i] }'
	# the line of the problem, in the file's own numbering (the header is line 1)
	csv_case frame_time_mismatch "$b" 'BEGIN { FS = OFS = "," } NR == 50 { $3 = $3 + 0.5 } 1'
	[[ $stderr == "perf-frames: frame_time_mismatch: c/$b:50: frame_time_ms "* ]]
	csv_case population_mismatch "$b" 'BEGIN { FS = OFS = "," } NR == 5000 { $7 = 999 } 1'
	assert_equal "$stderr" "perf-frames: population_mismatch: c/$b:5000: entities 999, declared 1000"
}

@test "the order inside a recording: rows in file order, checks in order within a row" {
	gen d
	b=synthetic-baseline-pair-02.csv
	# a mismatch on line 40 before a malformed line 60
	csv_case frame_time_mismatch "$b" 'BEGIN { FS = OFS = "," } NR == 40 { $3 = $3 + 0.5 } NR == 60 { $2 = "x" } 1'
	# within one row: the gap before the population
	csv_case frame_index_gap "$b" 'BEGIN { FS = OFS = "," } NR == 40 { $1 = 7; $4 = 99 } 1'
	# bad UTF-8 on the last line wins over a broken header
	csv_case unreadable_sample "$b" 'NR == 1 { $0 = "nope" } 1; END { print "\xff" }'
	# recordings in manifest order: run 1 has a bad header, run 4 is missing
	rm -rf c && cp -r d c
	sed -i '1s/.*/x/' c/synthetic-successor-pair-01.csv
	rm c/synthetic-baseline-pair-03.csv
	expect_error invalid_header c/comparison.json
	[[ $stderr == "perf-frames: invalid_header: c/synthetic-successor-pair-01.csv:1: "* ]]
	sed -i '1s/.*/frame_index,elapsed_ms,frame_time_ms,players,ai,vehicles,entities,ai_simulation_ms/' c/synthetic-successor-pair-01.csv
	expect_error unreadable_sample c/comparison.json
	[[ $stderr == "perf-frames: unreadable_sample: c/synthetic-baseline-pair-03.csv: cannot open: No such file or directory" ]]
	mkdir c/synthetic-baseline-pair-03.csv
	expect_error unreadable_sample c/comparison.json
}

@test "fewer than 120 intervals is insufficient coverage too" {
	gen d --rate 1.9
	expect_error insufficient_coverage d/comparison.json
	[[ $stderr == *": 11"?" included intervals covering "* ]]
}

@test "-o writes the report atomically; never onto the manifest or a recording, links included" {
	gen d
	run --separate-stderr perf-frames -o r.json d/comparison.json
	assert_success
	assert_output ''
	perf-frames d/comparison.json | cmp - r.json
	cp d/comparison.json keep.json
	run --separate-stderr perf-frames -o d/comparison.json d/comparison.json
	assert_failure 2
	[[ $stderr == "perf-frames: -o: d/comparison.json is the manifest; refusing to overwrite it" ]]
	ln -s d/synthetic-successor-pair-03.csv link.csv
	run --separate-stderr perf-frames --output link.csv d/comparison.json
	assert_failure 2
	[[ $stderr == *"is the recording of runs[5]; refusing to overwrite it" ]]
	run --separate-stderr perf-frames --svg d/synthetic-baseline-pair-01.csv d/comparison.json
	assert_failure 2
	run --separate-stderr perf-frames -o x.out --svg x.out d/comparison.json
	assert_failure 2
	cmp keep.json d/comparison.json
	# an invalid comparison leaves an earlier report as it was
	cp r.json before.json
	mutate '.runs[0].workload.players = 0'
	run perf-frames -o r.json m/comparison.json
	assert_failure 2
	cmp before.json r.json
	[ -z "$(find . -name '.*tmp*')" ]
}

@test "--jsonl: one line per run for jq; with -o the report is written too" {
	gen d
	run --separate-stderr perf-frames --jsonl -o r.json d/comparison.json
	assert_success
	assert_equal "${#lines[@]}" 6
	assert_equal "$(jq -c 'keys_unsorted' <<<"${lines[0]}")" '["repeat_id","variant","metrics"]'
	assert_equal "$(perf-frames --jsonl d/comparison.json | jq -s -c 'map(.metrics.p99_frame_time_ms)')" \
		"$(jq -c '[.runs[].metrics.p99_frame_time_ms]' r.json)"
	assert_equal "$(perf-frames --jsonl d/comparison.json | jq -r 'select(.variant == "successor") | .repeat_id' | tr '\n' ' ')" \
		'pair-01 pair-02 pair-03 '
}

@test "--svg: both variants' distributions and each run's coverage, valid XML, no script" {
	gen d --stall pair-02:baseline:89500:800
	perf-frames --svg fig.svg d/comparison.json >/dev/null
	py - fig.svg <<-'EOF'
		import sys, xml.etree.ElementTree as ET
		root = ET.parse(sys.argv[1]).getroot()
		ns = "{http://www.w3.org/2000/svg}"
		lines = root.findall(".//" + ns + "polyline")
		assert len(lines) == 6, len(lines)
		assert sum("baseline" in l.get("class") for l in lines) == 3
		text = "".join(root.itertext())
		assert "SYNTHETIC SAMPLES" in text
		assert "pair-02, baseline: 99.1" in text, text
		assert "in parentheses: the frames in the window" in text, text
		low = [t for t in root.iter(ns + "text") if t.get("class") == "low"]
		assert len(low) == 1 and low[0].text.startswith("pair-02, baseline"), low
		assert not list(root.iter(ns + "script"))
		for l in lines:
		    pts = [tuple(map(float, p.split(","))) for p in l.get("points").split()]
		    assert len(pts) >= 100
		    assert all(b[0] >= a[0] and b[1] <= a[1] + 1e-9 for a, b in zip(pts, pts[1:]))
	EOF
	# a name with markup is text, not markup
	mutate '.runs[0].repeat_id = "<script>alert(1)</script>" | .runs[1].repeat_id = .runs[0].repeat_id'
	perf-frames --svg m.svg m/comparison.json >/dev/null
	not grep -q '<script>' m.svg
	grep -q '&lt;script&gt;alert(1)&lt;/script&gt;' m.svg
}

@test "--svg reads at a glance: 1-2-5 ticks, budgets, legend pair by pair, paired deltas" {
	gen d
	perf-frames -o r.json --svg fig.svg d/comparison.json
	# a range under a decade: every 1-2-5 value and finer steps, all labelled
	assert_equal "$(grep -o 'class="ytick">[^<]*' fig.svg | sed 's/.*>//' | tr '\n' ' ')" '9 10 15 20 30 '
	# frames 40 a second and one of 800 ms: every 1-2-5 step from 20 to 1000
	gen w --rate 40 --stall pair-01:baseline:60000:800
	perf-frames -o w.json --svg w.svg w/comparison.json
	assert_equal "$(grep -o 'class="ytick">[^<]*' w.svg | sed 's/.*>//' | tr '\n' ' ')" '20 50 100 200 500 1000 '
	py - fig.svg r.json w.svg <<-'EOF'
		import json, sys, xml.etree.ElementTree as ET
		ns = "{http://www.w3.org/2000/svg}"
		def texts(root, cls=None):
		    return [t.text for t in root.iter(ns + "text") if cls is None or t.get("class") == cls]
		root, rep = ET.parse(sys.argv[1]).getroot(), json.load(open(sys.argv[2]))
		# the budgets in range: 16.7 ms here, both with the long frame
		budget = root.findall(".//" + ns + "line[@class='budget']")
		assert len(budget) == 1, budget
		assert texts(root, "budgetl") == ["16.7 ms budget, 60 frames/s"], texts(root, "budgetl")
		wide = ET.parse(sys.argv[3]).getroot()
		assert texts(wide, "budgetl") == ["16.7 ms budget, 60 frames/s", "33.3 ms budget, 30 frames/s"]
		# the budget line sits at 1000/60 ms on the axis the ticks label
		ticks = {float(t.text): float(t.get("y")) - 4 for t in root.iter(ns + "text") if t.get("class") == "ytick"}
		import math
		(a, ya), (b, yb) = (10.0, ticks[10.0]), (20.0, ticks[20.0])
		want = ya + (math.log10(1000 / 60) - math.log10(a)) / (math.log10(b) - math.log10(a)) * (yb - ya)
		assert abs(float(budget[0].get("y1")) - want) < 0.02, (budget[0].get("y1"), want)
		# the legend, pair by pair, baseline first, frames in the window
		runs = {(r["repeat_id"], r["variant"]): r for r in rep["runs"]}
		rows = [t for t in texts(root) if t and t.startswith("pair-") and "%" in t and "(" in t]
		want = ["%s, %s: %.2f%% (%d frames)" % (p, v, 100 * runs[p, v]["measurement_coverage_fraction"], runs[p, v]["included_intervals"])
		        for p in ("pair-01", "pair-02", "pair-03") for v in ("baseline", "successor")]
		assert rows == want, (rows, want)
		# the paired median deltas, as the report has them
		deltas = texts(root, "delta")
		want = ["%s: %.2f \u2192 %.2f ms, %.1f%% lower" % (d["repeat_id"], runs[d["repeat_id"], "baseline"]["metrics"]["median_frame_time_ms"],
		        runs[d["repeat_id"], "successor"]["metrics"]["median_frame_time_ms"], d["median_frame_time_reduction_percent"])
		        for d in rep["paired_deltas"]]
		assert deltas == want, (deltas, want)
		assert "median of the pairs: %.1f%% lower" % rep["delta_summary"]["median_frame_time_reduction_percent"] in texts(root, "axis")
	EOF
	# a slower successor reads "higher"
	gen s --speedup 1.1
	perf-frames --svg s.svg s/comparison.json >/dev/null
	grep -q '<text x="[0-9]*" y="[0-9]*" class="delta">pair-01: [0-9.]* → [0-9.]* ms, [0-9.]*% higher</text>' s.svg
}

@test "the SVG renders in headless Chromium" {
	load lib/chromium
	chromium_or_skip
	gen d
	perf-frames --svg fig.svg d/comparison.json >/dev/null
	chromium_run shot "file://$PWD/fig.svg" --window-size=980,560 --screenshot="$PWD/fig.png"
	[ -s fig.png ]
	not grep -Ei 'CONSOLE|Uncaught|Failed to load|XML' shot.err
	chromium_run dom "file://$PWD/fig.svg" --dump-dom
	[ "$(grep -c '<polyline' dom.out)" -eq 6 ]
	# every text lies inside the figure, and no two overlap
	{
		sed 's|</svg>||' fig.svg
		cat <<-'EOF'
		<script><![CDATA[
		const vb = document.documentElement.viewBox.baseVal, out = [];
		const boxes = [...document.querySelectorAll("text")].map(t => [t.getBoundingClientRect(), t.textContent]);
		for (const [b, t] of boxes)
		  if (b.x < 0 || b.y < 0 || b.x + b.width > vb.width || b.y + b.height > vb.height)
		    out.push("outside: " + t);
		for (let i = 0; i < boxes.length; i++)
		  for (let j = i + 1; j < boxes.length; j++) {
		    const [p, s] = boxes[i], [q, u] = boxes[j];
		    if (p.x < q.x + q.width && q.x < p.x + p.width && p.y < q.y + q.height && q.y < p.y + p.height)
		      out.push("overlap: " + s + " / " + u);
		  }
		const r = document.createElementNS("http://www.w3.org/2000/svg", "text");
		r.id = "boxes";
		r.textContent = out.concat(["checked " + boxes.length]).join("; ");
		document.documentElement.append(r);
		]]></script></svg>
		EOF
	} >probe.svg
	chromium_run probe "file://$PWD/probe.svg" --dump-dom
	grep -o '<text id="boxes">[^<]*' probe.out >boxes
	grep -Eq '^<text id="boxes">checked [0-9]+$' boxes || { cat boxes; false; }
}

@test "usage, -h, an unknown option, and a full disk" {
	run --separate-stderr perf-frames -h
	assert_success
	[[ $output == "usage: perf-frames "* ]]
	run --separate-stderr perf-frames --bogus x.json
	assert_failure 2
	[[ $stderr == *"usage: perf-frames "* ]]
	run --separate-stderr perf-frames
	assert_failure 2
	run --separate-stderr perf-frames a.json b.json
	assert_failure 2
	gen d
	run --separate-stderr bash -c 'perf-frames d/comparison.json >/dev/full'
	assert_failure 2
	[[ $stderr == *"write error on standard output"* ]]
	run --separate-stderr perf-frames -o /dev/full/r.json d/comparison.json
	assert_failure 2
	[[ $stderr == "perf-frames: /dev/full/r.json: cannot write the report: "* ]]
}
