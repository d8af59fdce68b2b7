#!/usr/bin/env bats
# perf-seed: reviewed baseline seeding (perf-seed(1)), the reference's
# own test cases, and the compare-and-swap upload to a
# directory store and to a git remote.

# shellcheck disable=SC2154,SC2030,SC2031 # bats sets status, output, lines, stderr; each test is a subshell
load lib/common
load lib/golden
load lib/store

SEED=$FIXTURES/perf-seed

setup() {
	export XDG_CACHE_HOME=$BATS_TEST_TMPDIR/xdg
	unset HF_TOKEN HF_API_KEY HUGGINGFACE_HUB_TOKEN PERF_STORE_CACHE \
		PERFORMANCE_RESEED_STAGING_ROOT
	export USER=tester
	cd "$BATS_TEST_TMPDIR" || return 1
	# A store must exist to be read (perf-seed(1)); ./store is an empty one.
	mkdir store
}

# store_empty: nothing but hidden bookkeeping was written to ./store.
store_empty() {
	[ -z "$(find store -mindepth 1 -not -name '.*')" ] ||
		{ echo "written to the store: $(find store -mindepth 1)" >&2; return 1; }
}

teardown() {
	git_http_stop
}

# variant OUT SED-SCRIPT...: the fixture source artifact with sed edits.
variant() {
	local out=$1
	shift
	local -a e=()
	local s
	for s in "$@"; do e+=(-e "$s"); done
	if [ ${#e[@]} -eq 0 ]; then cp "$SEED/source.json" "$out"; else sed "${e[@]}" "$SEED/source.json" >"$out"; fi
}

# prepare ARGS...: perf-seed prepare into ./store and ./staging.
prepare() {
	run --separate-stderr perf-seed prepare -s store --staging-root staging \
		--intent-rationale "first baseline" --now 2026-07-01T00:00:00Z "$@"
}

manifest() {
	find staging/.seed-reservations -name manifest
}

# fails_with TEXT: the last run failed (exit 2) saying TEXT, and left nothing behind.
fails_with() {
	assert_equal "$status" 2
	grep -qF -- "$1" <<<"$stderr" || { echo "stderr: $stderr" >&2; return 1; }
	store_empty
	[ -z "$(find staging -name '*.json' 2>/dev/null)" ] ||
		{ echo "a seed was left in staging" >&2; return 1; }
}

@test "prepare: one source, the reference's seed bytes, manifest and messages" {
	variant src.json
	prepare --source-result src.json --operator alice
	assert_success
	local res seed
	res=$(find staging/.seed-reservations -mindepth 1 -maxdepth 1)
	[ "$(stat -c %a "$res")" = 700 ]
	seed=$res/wan-t2v-1.3b-2gpu/2026-07-01T00_00_00_00_00_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa_seed.json
	diff <(sed "s|@SOURCE@|$PWD/src.json|" "$SEED/seed.expected.json") "$seed"
	assert_equal "${lines[0]}" "Source batch consistency (maximum regression 5.0%):"
	assert_equal "${lines[1]}" "Seeding exact comparable identity:"
	assert_equal "${lines[2]}" "  workload_id: wan-t2v"
	assert_equal "${lines[4]}" "  benchmark_version: 3"
	assert_equal "${lines[8]}" "Prepared baseline seed: $PWD/$seed"
	assert_equal "${lines[9]}" "Reserved exact identity in staging: $PWD/$res"
	assert_equal "${lines[10]}" "Prepared upload manifest: $PWD/$res/manifest"
	# the manifest
	jq -e --arg s "$PWD/src.json" --arg p "$PWD/$seed" --arg st "$PWD/staging" --arg store "$PWD/store" '
		.manifest_schema_version == 1 and
		.repository == {endpoint: "file", repo_id: $store, repo_type: "directory"} and
		.identity.benchmark_version == "3" and .identity.workload_id == "wan-t2v" and
		.recipe_cohort == {workload_id: "wan-t2v", variant_id: "1.3b-sp2", benchmark_version: "3"} and
		.staging_root == $st and
		.source_records[0].path == $s and .prepared_records[0].path == $p' "$res/manifest" >/dev/null
	assert_equal "$(jq -r '.source_records[0].sha256' "$res/manifest")" "$(sha256sum src.json | cut -c1-64)"
	assert_equal "$(jq -r '.prepared_records[0].sha256' "$res/manifest")" "$(sha256sum "$seed" | cut -c1-64)"
	# the reservation's name: SHA-256 of the canonical identity and repository
	[ "$(basename "$res")" = "$(jq -cj --sort-keys '{identity, repository}' "$res/manifest" | sha256sum | cut -c1-64)" ]
	# nothing was written to the store
	store_empty
}

@test "prepare and upload of two sources: messages, manifest and stored seeds, byte for byte" {
	variant a.json
	variant b.json 's/"job-41"/"job-2"/' 's/"timestamp": "2026-06-16T00:00:00+00:00"/"timestamp": "2026-06-17T00:00:00+00:00"/' \
		's/"latency": 10.0,/"latency": 10.2,/'
	# the reservation's name depends on the store's absolute path: a
	# rehearsal in another staging root names it
	perf-seed prepare -s store --staging-root probe --intent-rationale r \
		--source-result a.json --source-result b.json >/dev/null
	local m res
	res=$(basename "$(find probe/.seed-reservations -mindepth 1 -maxdepth 1)")
	[[ $res =~ ^[0-9a-f]{64}$ ]]
	GOLDEN_SED="s|$res|@RESERVATION@|g"
	golden perf-seed/golden/prepare perf-seed prepare -s store --staging-root staging \
		--intent-rationale "first baseline" --now 2026-07-01T00:00:00Z --operator alice \
		--source-result a.json --source-result b.json
	m=$(manifest)
	# and the seeds' digests, as they hold their source's absolute path
	local i sha
	for i in 0 1; do
		sha=$(jq -r ".prepared_records[$i].sha256" "$m")
		assert_equal "$(sha256sum "$(jq -r ".prepared_records[$i].path" "$m")" | cut -c1-64)" "$sha"
		GOLDEN_SED="$GOLDEN_SED; s|$sha|@SEED_${i}_SHA256@|g"
	done
	golden perf-seed/golden/manifest cat "$m"
	golden perf-seed/golden/upload-dry-run perf-seed upload "$m" -s store
	golden perf-seed/golden/upload perf-seed upload "$m" -s store --confirm
	golden perf-seed/golden/stored bash -c 'cd store && find . -type f ! -name .perfkite-lock | LC_ALL=C sort | xargs tail -n +1'
	golden perf-seed/golden/upload-again perf-seed upload "$m" -s store --confirm
}

@test "seed then compare: the seed is the baseline of a later run" {
	variant src.json
	prepare --source-result src.json --operator test
	assert_success
	run --separate-stderr perf-seed upload "$(manifest)" -s store --confirm
	assert_success
	local seed
	seed=$(find store -name '*_seed.json')
	jq -e '.baseline_eligible == true and .comparison_status == "PASS" and
		.baseline_seed_source_status == "CALIBRATION_NEEDED" and .baseline_seed_operator == "test"' "$seed" >/dev/null
	variant current.json 's/"latency": 10.0,/"latency": 10.1,/' 's/"run_source": "scheduled_main"/"run_source": "pr"/' \
		's/"timestamp": "2026-06-16T00:00:00+00:00"/"timestamp": "2026-07-02T00:00:00+00:00"/'
	run --separate-stderr perf-gate-rolling -s store current.json
	assert_success
	jq -e '.comparison_status == "PASS" and .baseline_status == "compared" and
		.baseline_eligible == false and .comparison.baseline_n == 1' <<<"$output" >/dev/null
}

@test "refuses a source that is not CALIBRATION_NEEDED" {
	variant src.json 's/"comparison_status": "CALIBRATION_NEEDED"/"comparison_status": "PASS"/'
	prepare --source-result src.json
	fails_with "src.json: baseline seeds require a CALIBRATION_NEEDED source artifact"
}

@test "refuses sources that are not scheduled_main" {
	variant a.json 's/"run_source": "scheduled_main"/"run_source": "pr"/' 's/"pr_number": ""/"pr_number": "123"/'
	prepare --source-result a.json
	fails_with "a.json: baseline seeds require a scheduled_main source artifact (its run_source is 'pr')"
	variant b.json 's/"run_source": "scheduled_main"/"run_source": "local"/' 's/"branch": "main"/"branch": ""/' \
		's/"test_scope": "full"/"test_scope": ""/'
	prepare --source-result b.json
	fails_with "b.json: baseline seeds require a scheduled_main source artifact (its run_source is 'local')"
	variant b2.json '/"run_source": "scheduled_main",/d'
	prepare --source-result b2.json
	fails_with "b2.json: baseline seeds require a scheduled_main source artifact (it has no run_source)"
	variant b3.json 's/"run_source": "scheduled_main"/"run_source": null/'
	prepare --source-result b3.json
	fails_with "b3.json: baseline seeds require a scheduled_main source artifact (its run_source is None)"
	variant c.json 's/"pr_number": ""/"pr_number": "123"/'
	prepare --source-result c.json
	fails_with "baseline seeds require a non-PR source artifact"
	# the reference's words, then the branch and test_scope found, and where test_scope comes from
	local why="test_scope is the TEST_SCOPE of the run that collected it, full for the full suite"
	variant d.json 's/"branch": "main"/"branch": "feature"/'
	prepare --source-result d.json
	fails_with "d.json: baseline seeds require a main-branch full-suite source artifact (its branch is 'feature', its test_scope is 'full'; $why)"
	variant e.json 's/"test_scope": "full"/"test_scope": "direct"/'
	prepare --source-result e.json
	fails_with "e.json: baseline seeds require a main-branch full-suite source artifact (its branch is 'main', its test_scope is 'direct'; $why)"
	variant e2.json 's/"test_scope": "full"/"test_scope": ""/'
	prepare --source-result e2.json
	fails_with "e2.json: baseline seeds require a main-branch full-suite source artifact (its branch is 'main', its test_scope is ''; $why)"
	variant e3.json '/"test_scope": "full",/d' 's/"branch": "main"/"branch": null/'
	prepare --source-result e3.json
	fails_with "e3.json: baseline seeds require a main-branch full-suite source artifact (its branch is None, it has no test_scope; $why)"
	# a falsy PR number in any of its spellings is not a PR
	for pr in '"false"' '"0"' '"None"' '"none"' 'null' 'false' '0'; do
		variant f.json "s/\"pr_number\": \"\"/\"pr_number\": $pr/"
		rm -rf staging
		prepare --source-result f.json
		assert_success
	done
}

@test "refuses a source that is not a normalized v2 CALIBRATION_NEEDED artifact" {
	variant a.json 's/"result_schema_version": 2,/"result_schema_version": 1,/'
	prepare --source-result a.json
	fails_with "baseline seeds require a normalized v2 source artifact"
	variant b.json 's/"baseline_eligible": false/"baseline_eligible": true/'
	prepare --source-result b.json
	fails_with "baseline seeds require a baseline_eligible=false source artifact"
	variant c.json 's/"result_schema_version": 2,/"result_schema_version": "2",/'
	prepare --source-result c.json
	fails_with "baseline seeds require a normalized v2 source artifact"
	variant d.json 's/"result_schema_version": 2,/"result_schema_version": 2.0,/'
	prepare --source-result d.json
	assert_success
	variant e.json 's/"success": true/"success": 1/'
	rm -rf staging
	prepare --source-result e.json
	fails_with "baseline seeds require a successful source artifact"
	variant f.json '/"workload_id": "wan-t2v",/d' '/"variant_id": "1.3b-sp2",/d'
	prepare --source-result f.json
	fails_with "Performance record missing required comparison identity fields: workload_id, variant_id"
}

@test "refuses a batch of mixed identities" {
	variant a.json
	variant b.json 's/"job-41"/"job-2"/' 's/"variant_id": "1.3b-sp2"/"variant_id": "1.3b-sp4"/'
	prepare --source-result a.json --source-result b.json
	fails_with "source artifact 2 does not match the first exact comparable identity"
}

@test "provenance ignores model_id and prefers job_id" {
	variant a.json
	variant b.json 's/"model_id": "wan-t2v-1.3b-2gpu"/"model_id": "renamed"/'
	prepare --source-result a.json --source-result b.json
	fails_with "source artifact 2 duplicates source provenance"
	variant c.json 's/"timestamp": "2026-06-16T00:00:00+00:00"/"timestamp": "2026-06-17T00:00:00+00:00"/' \
		's/"build-41"/"build-2"/'
	prepare --source-result a.json --source-result c.json
	fails_with "source artifact 2 duplicates source provenance"
	# without job and build ids, commit and timestamp are the provenance
	variant d.json 's/"job-41"/""/' 's/"build-41"/null/'
	variant e.json 's/"job-41"/""/' 's/"build-41"/null/' 's/"latency": 10.0,/"latency": 10.01,/'
	prepare --source-result d.json --source-result e.json
	fails_with "source artifact 2 duplicates source provenance"
	# identical content is caught before provenance
	cp a.json copy.json
	prepare --source-result a.json --source-result copy.json
	fails_with "source artifact 2 duplicates source content"
}

@test "prepare has no --upload option" {
	variant a.json
	prepare --source-result a.json --upload
	assert_failure 2
	grep -q "unrecognized option '--upload'" <<<"$stderr"
	[ ! -e staging ]
}

@test "sources are seeded in timestamp order" {
	local d i args=()
	for i in 1 2 3 4 5 6; do
		d=$((7 - i))
		variant "s$i.json" "s/\"timestamp\": \"2026-06-16T00:00:00+00:00\"/\"timestamp\": \"2026-06-0${d}T00:00:00+00:00\"/" \
			"s/\"job-41\"/\"job-$i\"/"
		args+=(--source-result "s$i.json")
	done
	prepare "${args[@]}"
	assert_success
	assert_equal "$(find staging -name manifest | wc -l)" 1
	store_empty
	local m
	m=$(manifest)
	# prepared records in batch order, their sources oldest first
	run jq -r '.prepared_records[].path' "$m"
	for i in 1 2 3 4 5 6; do
		[[ ${lines[$((i - 1))]} == *_seed_0$i.json ]]
		assert_equal "$(jq -r .baseline_seed_source_timestamp "${lines[$((i - 1))]}")" "2026-06-0${i}T00:00:00+00:00"
		assert_equal "$(jq -r .baseline_seed_batch_index "${lines[$((i - 1))]}")" "$i"
	done
	# the sources in input order
	assert_equal "$(jq -r '.source_records[0].path' "$m")" "$PWD/s1.json"
}

@test "refuses when a baseline-eligible record of the identity is already in the store" {
	mkdir -p store/x
	sed -e 's/"baseline_eligible": false/"baseline_eligible": true/' \
		-e 's/"comparison_status": "CALIBRATION_NEEDED"/"comparison_status": "PASS"/' \
		"$SEED/source.json" >store/x/eligible.json
	variant src.json
	prepare --source-result src.json
	assert_failure 2
	grep -qF "remote tracking history already has a baseline-eligible record for the exact comparable identity; the CALIBRATION_NEEDED source artifact is stale" <<<"$stderr"
	[ ! -e staging ]
}

@test "refuses when the cohort has trusted records of another recipe" {
	mkdir -p store/renamed
	sed -e 's/"recipe_fingerprint": "[^"]*"/"recipe_fingerprint": "recipe-current"/' \
		-e 's/"hardware_profile_id": "[^"]*"/"hardware_profile_id": "hw-other"/' \
		-e 's/"software_profile_id": "[^"]*"/"software_profile_id": "sw-other"/' \
		-e 's/"model_id": "wan-t2v-1.3b-2gpu"/"model_id": "renamed"/' \
		"$SEED/source.json" >store/renamed/r.json
	variant src.json 's/"recipe_fingerprint": "[^"]*"/"recipe_fingerprint": "recipe-old"/'
	prepare --source-result src.json
	assert_failure 2
	grep -qF "remote tracking history already has trusted records for another recipe in this workload, variant, and benchmark version: recipe-current" <<<"$stderr"
	[ ! -e staging ]
}

@test "a replay finds the reservation; only one of two racing prepares wins" {
	variant src.json
	prepare --source-result src.json
	assert_success
	prepare --source-result src.json
	assert_failure 2
	grep -qF "staging already has a reservation for the exact comparable identity; reuse or explicitly clean the existing preparation" <<<"$stderr"
	assert_equal "$(find staging -name '*.json' | wc -l)" 1
	rm -rf staging
	local i
	for i in 1 2 3 4; do
		perf-seed prepare -s store --staging-root staging --intent-rationale r \
			--source-result src.json >/dev/null 2>"race$i" &
	done
	wait
	assert_equal "$(find staging -name '*.json' | wc -l)" 1
	assert_equal "$(find staging -name manifest | wc -l)" 1
	assert_equal "$(cat race1 race2 race3 race4 | grep -c 'already has a reservation')" 3
}

@test "refuses a staging root nested with the tracking root" {
	variant src.json
	run --separate-stderr perf-seed prepare -s store --staging-root store/staging \
		--intent-rationale r --source-result src.json
	assert_failure 2
	grep -qF "baseline seed staging and canonical tracking roots must be separate and non-nested" <<<"$stderr"
	run --separate-stderr perf-seed prepare -s staging/store --staging-root staging \
		--intent-rationale r --source-result src.json
	assert_failure 2
	grep -qF "must be separate and non-nested" <<<"$stderr"
}

@test "empty roots are the working directory, as the reference uses them; a remote without git+ is refused" {
	variant src.json
	# The tracking root is . and the staging root inside it: nested.
	PERFORMANCE_TRACKING_ROOT='' run --separate-stderr perf-seed prepare --staging-root staging \
		--intent-rationale r --source-result src.json
	assert_failure 2
	grep -qF "baseline seed staging and canonical tracking roots must be separate and non-nested" <<<"$stderr"
	# So is an empty staging root inside the tracking root.
	mkdir -p store/sub
	cd store/sub || return 1
	PERFORMANCE_RESEED_STAGING_ROOT='' run --separate-stderr perf-seed prepare -s .. \
		--intent-rationale r --source-result ../../src.json
	assert_failure 2
	grep -qF "must be separate and non-nested" <<<"$stderr"
	cd ../.. || return 1
	PERFORMANCE_TRACKING_ROOT=hf://datasets/org/perf run --separate-stderr perf-seed prepare \
		--staging-root staging --intent-rationale r --source-result src.json
	assert_failure 2
	assert_output ""
	assert_equal "$stderr" "perf-seed: hf://datasets/org/perf: a git remote needs the git+ prefix to be a store; did you mean git+https://huggingface.co/datasets/org/perf?"
	[ ! -e hf: ]
	[ ! -e staging ]
}

@test "a source that changes while the manifest is written releases the reservation" {
	variant src.json
	sed 's/"latency": 10.0,/"latency": 10.5,/' src.json >changed.json
	mkfifo fifo
	# the first read sees the source, the second (for the manifest) another;
	# the pause keeps the second writer from joining the first read (a
	# reader still open would take both)
	{ cat src.json >fifo; sleep 1; cat changed.json >fifo; } &
	prepare --source-result fifo
	wait
	assert_failure 2
	grep -qF "source record changed during preparation: $PWD/fifo" <<<"$stderr"
	[ -z "$(find staging/.seed-reservations -mindepth 1)" ]
	prepare --source-result src.json
	assert_success
}

@test "undated sources keep their input order after the dated ones, with warnings" {
	variant a.json 's/"timestamp": "2026-06-16T00:00:00+00:00"/"timestamp": "2026-06-02T00:00:00+00:00"/' 's/"job-41"/"job-a"/'
	variant b.json '/"timestamp": /d' 's/"job-41"/"job-b"/'
	variant c.json 's/"timestamp": "2026-06-16T00:00:00+00:00"/"timestamp": "yesterday"/' 's/"job-41"/"job-c"/'
	variant d.json 's/"timestamp": "2026-06-16T00:00:00+00:00"/"timestamp": "2026-06-01T00:00:00+00:00"/' 's/"job-41"/"job-d"/'
	prepare --source-result a.json --source-result b.json --source-result c.json --source-result d.json
	assert_success
	assert_equal "${stderr_lines[0]}" "Warning: source artifact 2 has a missing or unparsable timestamp; preserving its input order after timestamped sources."
	assert_equal "${stderr_lines[1]}" "Warning: source artifact 3 has a missing or unparsable timestamp; preserving its input order after timestamped sources."
	assert_equal "${#stderr_lines[@]}" 2
	run jq -r '.prepared_records[].path' "$(manifest)"
	assert_equal "$(jq -r .job_id "${lines[0]}")" job-d
	assert_equal "$(jq -r .job_id "${lines[1]}")" job-a
	assert_equal "$(jq -r .job_id "${lines[2]}")" job-b
	assert_equal "$(jq -r .job_id "${lines[3]}")" job-c
}

@test "the whole batch is validated before anything is written" {
	variant a.json
	variant b.json 's/"run_source": "scheduled_main"/"run_source": "pr"/' 's/"job-41"/"job-2"/'
	prepare --source-result a.json --source-result b.json
	fails_with "b.json: baseline seeds require a scheduled_main source artifact"
	prepare --source-result a.json --source-result a.json
	fails_with "source artifact 2 duplicates a resolved source path"
	variant c.json '/"model_id": /d' 's/"job-41"/"job-2"/'
	prepare --source-result a.json --source-result c.json
	fails_with "c.json: baseline seed records require a non-empty string model_id"
	# a JSON error in any source aborts first, naming file and line
	printf '{\n  "a": 1,\n  oops\n}\n' >broken.json
	variant d.json 's/"run_source": "scheduled_main"/"run_source": "pr"/'
	prepare --source-result d.json --source-result broken.json
	fails_with "broken.json:3:"
}

# rows 63-82: invalid measurements, alone and as the second source
measurement_case() {
	local edit=$1 message=$2
	variant bad.json "$edit" 's/"job-41"/"job-2"/'
	prepare --source-result bad.json
	fails_with "baseline seed records require a $message measurement"
	variant good.json
	prepare --source-result good.json --source-result bad.json
	fails_with "bad.json: baseline seed records require a $message measurement"
}

@test "refuses invalid measurements, naming the metric" {
	measurement_case '/"latency": 10.0,/d' "finite positive latency"
	measurement_case 's/"latency": 10.0,/"latency": true,/' "finite latency"
	measurement_case '/"throughput": 4.5,/d' "finite positive throughput"
	measurement_case '/"memory": 10000.0,/d' "finite positive memory"
	measurement_case 's/"latency": 10.0,/"latency": NaN,/' "finite latency"
	measurement_case 's/"throughput": 4.5,/"throughput": Infinity,/' "finite throughput"
	measurement_case 's/"memory": 10000.0,/"memory": -Infinity,/' "finite memory"
	measurement_case 's/"text_encoder_time_s": 1.1,/"text_encoder_time_s": NaN,/' "finite text_encoder_time_s"
	measurement_case 's/"dit_time_s": 8.2,/"dit_time_s": Infinity,/' "finite dit_time_s"
	measurement_case 's/"vae_decode_time_s": 3.2,/"vae_decode_time_s": -1.0,/' "non-negative vae_decode_time_s"
	# numeric strings are read as numbers; zero is not positive
	measurement_case 's/"latency": 10.0,/"latency": "0",/' "positive latency"
	variant ok.json 's/"latency": 10.0,/"latency": "10.0",/' 's/"dit_time_s": 8.2,/"dit_time_s": null,/'
	prepare --source-result ok.json
	assert_success
}

@test "an inconsistent batch, with the printed table" {
	variant a.json
	variant b.json 's/"latency": 10.0,/"latency": 12.0,/' 's/"job-41"/"job-2"/'
	prepare --source-result a.json --source-result b.json
	fails_with "source batch exceeds maximum intra-batch regression: source artifact 2 latency regresses by 9.1% against the batch median"
	assert_equal "${lines[0]}" "Source batch consistency (maximum regression 5.0%):"
	assert_equal "${lines[1]}" "  latency source=1 value=10.000000 median=11.000000 regression=-9.1%"
	assert_equal "${lines[2]}" "  latency source=2 value=12.000000 median=11.000000 regression=9.1%"
	assert_equal "${lines[3]}" "  latency worst regression: 9.1% (source=2)"
	assert_equal "${lines[4]}" "  throughput source=1 value=4.500000 median=4.500000 regression=0.0%"
	variant c.json 's/"throughput": 4.5,/"throughput": 3.5,/' 's/"job-41"/"job-3"/'
	prepare --source-result a.json --source-result c.json
	fails_with "source artifact 2 throughput regresses by 12.5% against the batch median"
	# a wider limit accepts it
	prepare --source-result a.json --source-result c.json --max-intra-batch-regression 0.2
	assert_success
	assert_equal "${lines[0]}" "Source batch consistency (maximum regression 20.0%):"
}

@test "the rationale is checked after the store, as the reference does" {
	variant a.json
	run --separate-stderr perf-seed prepare -s store --staging-root staging \
		--intent-rationale "   " --source-result a.json
	fails_with "baseline seed reason must be a non-empty string"
	assert_equal "${lines[1]}" "Seeding exact comparable identity:"
	run --separate-stderr perf-seed prepare -s store --staging-root staging --source-result a.json
	assert_failure 2
	run --separate-stderr perf-seed prepare -s store --staging-root staging --intent-rationale r \
		--source-result a.json --max-intra-batch-regression -1
	assert_failure 2
}

# ---- upload ----

# prepared: a prepared batch of two sources for the store $1 (default ./store).
prepared() {
	variant a.json
	variant b.json 's/"job-41"/"job-2"/' 's/"timestamp": "2026-06-16T00:00:00+00:00"/"timestamp": "2026-06-17T00:00:00+00:00"/' \
		's/"latency": 10.0,/"latency": 10.2,/'
	run --separate-stderr perf-seed prepare -s "${1:-store}" --staging-root staging \
		--intent-rationale "first baseline" --source-result a.json --source-result b.json
	assert_success
}

@test "upload without --confirm says what it would do and writes nothing" {
	prepared
	run --separate-stderr perf-seed upload "$(manifest)" -s store
	assert_success
	assert_line --index 0 --regexp '^Would upload baseline seed: store/wan-t2v-1.3b-2gpu/.*_seed_01\.json$'
	assert_line --index 2 'Would commit "Perf: seed wan-t2v-1.3b-2gpu baseline" on revision 0'
	store_empty
	[ ! -e "$(dirname "$(manifest)")/uploaded" ]
}

@test "upload to a directory store: one revision, the reviewed bytes, the uploaded marker" {
	prepared
	local m res
	m=$(manifest)
	res=$(dirname "$m")
	perf-upload -s store -p always "$FIXTURES/perf-upload/batch.in.jsonl" 2>/dev/null >/dev/null
	run --separate-stderr perf-seed upload "$m" -s store --confirm
	assert_success
	assert_line --index 2 "Seed commit: 2 (parent 1)"
	assert_equal "$(cat store/.perfkite-revision)" 2
	diff <(cd "$res" && find wan-t2v-1.3b-2gpu -name '*_seed_*' | sort | xargs cat) \
		<(cd store && find wan-t2v-1.3b-2gpu -name '*_seed_*' | sort | xargs cat)
	diff <(printf '{\n  "commit_id": "2",\n  "parent_commit": "1"\n}') "$res/uploaded"
	# once uploaded, the same manifest is refused: the store has the baseline now
	run --separate-stderr perf-seed upload "$m" -s store --confirm
	assert_failure 2
	grep -qF "remote tracking history already has a baseline-eligible record" <<<"$stderr"
}

@test "upload refuses a manifest of another repository" {
	prepared
	run --separate-stderr perf-seed upload "$(manifest)" -s other-store --confirm
	assert_failure 2
	grep -qF "prepared-seed manifest repository does not match the configured Hub destination" <<<"$stderr"
	[ ! -e other-store ]
}

@test "upload refuses a prepared record outside the reservation" {
	prepared
	local m rec
	m=$(manifest)
	rec=$(jq -r '.prepared_records[0].path' "$m")
	mkdir -p staging/outside
	cp "$rec" staging/outside/
	sed -i "s|$rec|$PWD/staging/outside/$(basename "$rec")|" "$m"
	run --separate-stderr perf-seed upload "$m" -s store --confirm
	assert_failure 2
	grep -qF "prepared record is outside its identity reservation: $PWD/staging/outside/" <<<"$stderr"
	store_empty
}

@test "the store got a baseline after review: no commit" {
	prepared
	mkdir -p store/x
	sed -e 's/"baseline_eligible": false/"baseline_eligible": true/' "$SEED/source.json" >store/x/late.json
	run --separate-stderr perf-seed upload "$(manifest)" -s store --confirm
	assert_failure 2
	grep -qF "remote tracking history already has a baseline-eligible record" <<<"$stderr"
	[ ! -e store/.perfkite-revision ]
	[ -z "$(find store -name '*_seed*')" ]
}

@test "upload refuses a staged file changed after review" {
	prepared
	local m rec
	m=$(manifest)
	rec=$(jq -r '.prepared_records[1].path' "$m")
	echo >>"$rec"
	run --separate-stderr perf-seed upload "$m" -s store --confirm
	assert_failure 2
	grep -qF "prepared record changed after review: $rec" <<<"$stderr"
	echo >>a.json
	run --separate-stderr perf-seed upload "$m" -s store --confirm
	assert_failure 2
	grep -qF "source record changed after review: $PWD/a.json" <<<"$stderr"
	store_empty
}

@test "the manifest's own checks, in order" {
	prepared
	local m
	m=$(manifest)
	cp "$m" orig
	sed -i 's/"manifest_schema_version": 1/"manifest_schema_version": 2/' "$m"
	run --separate-stderr perf-seed upload "$m" -s store
	assert_failure 2
	grep -qF "unsupported or missing prepared-seed manifest schema" <<<"$stderr"
	cp orig "$m"
	sed -i 's|"staging_root": "[^"]*"|"staging_root": ""|' "$m"
	run --separate-stderr perf-seed upload "$m" -s store
	assert_failure 2
	grep -qF "prepared-seed manifest is missing its staging root" <<<"$stderr"
	cp orig "$m"
	sed -i "s|\"staging_root\": \"[^\"]*\"|\"staging_root\": \"$PWD/elsewhere\"|" "$m"
	run --separate-stderr perf-seed upload "$m" -s store
	assert_failure 2
	grep -qF "prepared-seed manifest is outside its identity reservation" <<<"$stderr"
	cp orig "$m"
	sed -i 's/"benchmark_version": "3"/"benchmark_version": "4"/' "$m"
	run --separate-stderr perf-seed upload "$m" -s store
	assert_failure 2
	grep -qF "prepared records no longer match the manifest identity" <<<"$stderr"
	# a seed edited consistently (digest updated) no longer matches its source
	cp orig "$m"
	local rec
	rec=$(jq -r '.prepared_records[0].path' "$m")
	sed -i 's/"latency": 10.0,/"latency": 9.0,/' "$rec"
	sed -i "s/$(jq -r '.prepared_records[0].sha256' orig)/$(sha256sum "$rec" | cut -c1-64)/" "$m"
	run --separate-stderr perf-seed upload "$m" -s store --confirm
	assert_failure 2
	grep -qF "prepared record 1 no longer matches its reviewed source" <<<"$stderr"
	store_empty
	# not JSON at all
	printf '{\n  "x": \n' >bad-manifest
	run --separate-stderr perf-seed upload bad-manifest -s store
	assert_failure 2
	grep -q "bad-manifest:3:" <<<"$stderr"
}

@test "one conditional commit on a git store, parent the reviewed head" {
	bare_remote remote.git
	perf-upload -s "git+file://$PWD/remote.git" --cache cache -p always \
		"$FIXTURES/perf-upload/batch.in.jsonl" >/dev/null 2>&1
	local head
	head=$(git -C remote.git rev-parse main)
	prepared "git+file://$PWD/remote.git"
	jq -e --arg r "$PWD/remote.git" '.repository == {endpoint: "file://", repo_id: $r, repo_type: "git"}' "$(manifest)" >/dev/null
	run --separate-stderr perf-seed upload "$(manifest)" -s "git+file://$PWD/remote.git" --cache cache --confirm
	assert_success
	assert_equal "$(git -C remote.git rev-parse main^)" "$head"
	assert_equal "$(git -C remote.git log -1 --format=%s main)" "Perf: seed wan-t2v-1.3b-2gpu baseline"
	assert_equal "$(git -C remote.git diff-tree --no-commit-id --name-only -r main | wc -l)" 2
	local res
	res=$(dirname "$(manifest)")
	jq -e --arg c "$(git -C remote.git rev-parse main)" --arg p "$head" \
		'. == {commit_id: $c, parent_commit: $p}' "$res/uploaded" >/dev/null
	# the bytes in the remote are the reviewed bytes
	local f
	for f in $(git -C remote.git diff-tree --no-commit-id --name-only -r main); do
		cmp <(git -C remote.git show "main:$f") "$res/$f"
	done
}

@test "the remote moved after the check: the push is refused, nothing retried, nothing marked" {
	bare_remote remote.git
	perf-upload -s "git+file://$PWD/remote.git" --cache cache -p always \
		"$FIXTURES/perf-upload/batch.in.jsonl" >/dev/null 2>&1
	prepared "git+file://$PWD/remote.git"
	# Another uploader pushes first, the moment the seed is pushed.
	sed -n '1s/2026-06-16T00:00:00+00:00/2026-06-20T00:00:00+00:00/p' "$FIXTURES/perf-upload/batch.in.jsonl" >other.jsonl
	racing_git "git+file://$PWD/remote.git" "$PWD/other.jsonl"
	local before
	PATH="$PWD/wrap:$PATH" run --separate-stderr perf-seed upload "$(manifest)" \
		-s "git+file://$PWD/remote.git" --cache cache --confirm
	assert_failure 2
	[ -e raced ]
	grep -qF "the store changed since it was checked" <<<"$stderr"
	before=$(git -C remote.git log -1 --format=%s main)
	[[ $before == "Perf: wan-t2v-1.3b-2gpu at aaaaaaa" ]]
	not grep -q _seed < <(git -C remote.git ls-tree -r --name-only main)
	[ ! -e "$(dirname "$(manifest)")/uploaded" ]
	[ -f "$(manifest)" ]
	# reviewed again against the new head, it goes in
	run --separate-stderr perf-seed upload "$(manifest)" -s "git+file://$PWD/remote.git" --cache cache --confirm
	assert_success
	assert_equal "$(git -C remote.git ls-tree -r --name-only main | grep -c _seed)" 2
}

@test "a Hugging Face store: the reference's repository, and a write token for the upload" {
	# prepared for a directory, then moved to the reservation of the dataset
	prepared
	local m old name hf=git+https://huggingface.co/datasets/org/perf
	m=$(manifest)
	old=$(cd "$(dirname "$m")" && pwd)
	sed -i -e 's|"endpoint": "file"|"endpoint": "https://huggingface.co"|' \
		-e "s|\"repo_id\": \"$PWD/store\"|\"repo_id\": \"org/perf\"|" \
		-e 's|"repo_type": "directory"|"repo_type": "dataset"|' "$m"
	name=$(jq -cj --sort-keys '{identity, repository}' "$m" | sha256sum | cut -c1-64)
	mv "$old" "staging/.seed-reservations/$name"
	m=staging/.seed-reservations/$name/manifest
	sed -i "s|$old|$PWD/staging/.seed-reservations/$name|g" "$m"
	run --separate-stderr perf-seed upload "$m" -s "$hf" --confirm
	assert_failure 2
	grep -qF "a Hugging Face write token is required to upload baseline seeds" <<<"$stderr"
	# with a token, the (unreachable here) hub is asked for its revision
	HF_TOKEN=hf_secret run --separate-stderr perf-seed upload "$m" -s "$hf" --cache cache --confirm
	assert_failure 2
	grep -qF "could not resolve the current performance-tracking repository revision" <<<"$stderr" ||
		grep -qF "cannot clone the store" <<<"$stderr"
	not grep -q hf_secret <<<"$stderr"
}

@test "usage" {
	run --separate-stderr perf-seed
	assert_failure 2
	run --separate-stderr perf-seed frobnicate
	assert_failure 2
	grep -q "unknown command 'frobnicate'" <<<"$stderr"
	run --separate-stderr perf-seed upload --now 2026-01-01 m
	assert_failure 2
	run perf-seed --help
	assert_success
	assert_line --index 0 --partial "usage: perf-seed prepare"
	# --metric: which metrics it takes, the six or a named one
	grep -A2 -- '^  --metric m ' <<<"$output" | tr -s ' \n' ' ' |
		grep -qF 'latency, throughput, memory, text_encoder_time_s, dit_time_s, vae_decode_time_s, or a named metric'
	run perf-seed --version
	assert_success
}

@test "prepare reads a store that must be there; an empty one is no warning (issue 22 item 4)" {
	variant src.json
	run --separate-stderr perf-seed prepare -s missing --staging-root staging \
		--intent-rationale r --source-result src.json
	assert_failure 2
	[[ $stderr == *"perf-seed: missing: no such store (a directory store must exist"* ]]
	[ ! -e missing ]
	prepare --source-result src.json
	assert_success
	[[ $stderr != *"holds no records"* ]]
}

# ---- reseed: FastVideo's reviewed baseline shift ----

STEP=$SEED/reseed-step

# cohort [STORE]: five trusted records of the source's identity (latency
# 10.0, June 1-5) with a key the sources lack, and one with a seed's
# provenance, as a store holds them.
cohort() {
	local s=${1:-store} i
	mkdir -p "$s/wan-t2v-1.3b-2gpu"
	for i in 1 2 3 4 5; do
		jq --arg ts "2026-06-0${i}T00:00:00+00:00" --arg j "job-$i" '.timestamp = $ts | .job_id = $j
			| .comparison_status = "PASS" | .baseline_eligible = true | .baseline_status = "compared"
			| .comparison_status_reason = "Comparable baseline found with no gated regressions"
			| .store_only = 1' "$SEED/source.json" >"$s/wan-t2v-1.3b-2gpu/2026-06-0${i}T00_00_00_00_00_a$i.json"
	done
	jq '.baseline_seed = true | .baseline_seed_reason = "first"' "$s/wan-t2v-1.3b-2gpu/2026-06-01T00_00_00_00_00_a1.json" >seeded &&
		mv seeded "$s/wan-t2v-1.3b-2gpu/2026-06-01T00_00_00_00_00_a1.json"
}

# shifted OUT N LATENCY [JQ]: the REGRESSION artifact of run N of the
# cohort (June 10+N), a key the store lacks, and no build_url.
shifted() {
	jq --arg ts "2026-06-$((10 + $2))T00:00:00+00:00" --arg j "job-1$2" --argjson l "$3" '
		.timestamp = $ts | .job_id = $j | .latency = $l | .comparison_status = "REGRESSION"
		| .comparison_status_reason = "latency regressed" | .baseline_status = "compared"
		| .success = false | .source_only = true | del(.build_url) | '"${4:-.}" "$SEED/source.json" >"$1"
}

# store_sum: a digest of every file of ./store ("" when there is none).
store_sum() {
	[ -d store ] || return 0
	(cd store && find . -type f | LC_ALL=C sort | xargs cat | sha256sum)
}

reseed_manifest() {
	find staging/.reseed-reservations -name manifest
}

# reseed_fails_with TEXT: exit 2 saying TEXT; the store as it was, nothing staged.
reseed_fails_with() {
	assert_equal "$status" 2
	grep -qF -- "$1" <<<"$stderr" || { echo "stderr: $stderr" >&2; return 1; }
	assert_equal "$(store_sum)" "$STORE_SUM"
	[ -z "$(find staging -type f 2>/dev/null)" ] || { echo "something was staged" >&2; return 1; }
}

@test "reseed: a 6% step reseeded with runs 41-45: runs 46-60 pass, as FastVideo's own comparator says" {
	# expected.jsonl: FastVideo's compare_baseline.py on these runs (gen-expected.sh)
	"$STEP/scenario.sh" with
	"$STEP/scenario.sh" without --no-reseed
	diff <(jq -c 'select(.scenario == "reseed") | del(.scenario)' "$STEP/expected.jsonl") \
		<(jq -c 'select(.run >= 46)' with/verdicts.jsonl)
	diff <(jq -c 'select(.scenario == "no-reseed") | del(.scenario)' "$STEP/expected.jsonl") \
		<(jq -c 'select(.run >= 46)' without/verdicts.jsonl)
	# runs 41-45 failed before the reseed; 46-60 pass after it, fail without it
	assert_equal "$(jq -r 'select(.run >= 41 and .run <= 45) | .comparison_status' with/verdicts.jsonl | sort -u)" REGRESSION
	assert_equal "$(jq -r 'select(.run >= 46) | .comparison_status' with/verdicts.jsonl | sort -u)" PASS
	assert_equal "$(jq -r 'select(.run >= 46) | .comparison_status' without/verdicts.jsonl | sort -u)" REGRESSION
	# the reseed records: one per source, named _reseed_NN, with the provenance
	local i f
	for i in 1 2 3 4 5; do
		f=$(find with/store -name "*_reseed_0$i.json")
		jq -e --argjson i "$i" --arg src "$PWD/with/artifacts/normalized-$((40 + i)).json" \
			--arg ts "$(jq -r .timestamp "with/artifacts/normalized-$((40 + i)).json")" '
			.success == true and .baseline_eligible == true and .comparison_status == "PASS" and
			.timestamp == "2026-02-15T12:00:00+00:00" and .baseline_reseed == true and
			.baseline_reseed_reason == "runtime upgrade: 6% slower DiT, accepted" and
			.baseline_reseed_source_result == $src and .baseline_reseed_source_timestamp == $ts and
			.baseline_reseed_source_success == false and .baseline_reseed_batch_size == 5 and
			.baseline_reseed_batch_index == $i and .baseline_reseed_operator == "scenario" and
			.baseline_reseed_max_intra_batch_regression == 0.05' "$f" >/dev/null
	done
	grep -qx '  dit_time_s old_median=8.200000 batch_median=8.692000 batch_spread=0.5% candidate_median=8.692000' with/reseed.log
	grep -qx 'Note: 5 reseed records reset the last-5 window.' with/reseed.log
	grep -qx 'Reseed commit: 47 (parent 46)' with/reseed.log
}

@test "reseed: the record holds the cohort's fields the source has, in the source's order, then the provenance" {
	cohort
	shifted s.json 1 11.0
	run --separate-stderr perf-seed reseed -s store --staging-root staging --operator alice \
		--now 2026-07-01T00:00:00Z --intent-rationale "new runtime" --source-result s.json
	assert_success
	local f
	f=$(find staging/.reseed-reservations -name '*_reseed_01.json')
	[[ $f == */wan-t2v-1.3b-2gpu/2026-07-01T00_00_00_00_00_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa_reseed_01.json ]]
	diff <(jq -c '[keys_unsorted[] | select(. != "source_only")] + ["baseline_reseed",
		"baseline_reseed_reason", "baseline_reseed_source_result", "baseline_reseed_source_timestamp",
		"baseline_reseed_source_success", "baseline_reseed_batch_size", "baseline_reseed_batch_index",
		"baseline_reseed_operator", "baseline_reseed_max_intra_batch_regression"]' s.json) \
		<(jq -c keys_unsorted "$f")
	jq -e --arg src "$PWD/s.json" '.timestamp == "2026-07-01T00:00:00+00:00" and .latency == 11.0 and
		.success == true and .baseline_eligible == true and .comparison_status == "PASS" and
		.comparison_status_reason == "Approved baseline reseed from REGRESSION source artifact" and
		.baseline_reseed_source_timestamp == "2026-06-11T00:00:00+00:00" and
		.baseline_reseed_source_result == $src and .baseline_reseed_operator == "alice" and
		.baseline_reseed_batch_size == 1 and .baseline_reseed_batch_index == 1' "$f" >/dev/null
	# the table: old medians (last five), the batch, the candidate after appending
	assert_line "Baseline shift at store revision 0: 5 records of the identity, 5 successful and baseline-eligible (the last 5 are the old baseline)"
	assert_line "  latency old_median=10.000000 batch_median=11.000000 batch_spread=0.0% candidate_median=10.000000"
	assert_line "Note: 1 reseed record may not move the last-5 median immediately (3 usually do; 5 reset the window)."
	jq -e '.operation == "baseline_reseed" and .store_revision == "0" and
		.max_intra_batch_regression == 0.05 and (.fields | index("store_only")) != null and
		(.fields | index("baseline_seed")) == null and (.fields | index("source_only")) == null' \
		"$(reseed_manifest)" >/dev/null
	# without an operator none is recorded; three sources move the median
	shifted s2.json 2 11.1
	shifted s3.json 3 10.9
	USER='' run --separate-stderr perf-seed reseed -s store --staging-root staging2 --intent-rationale r \
		--source-result s.json --source-result s2.json --source-result s3.json
	assert_success
	assert_line "  latency old_median=10.000000 batch_median=11.000000 batch_spread=1.8% candidate_median=10.900000"
	assert_line "Note: 3 reseed records usually move the last-5 median immediately (5 reset the window)."
	not jq -e 'has("baseline_reseed_operator")' "$(find staging2 -name '*_reseed_01.json')" >/dev/null
}

@test "reseed refusals: exit 2, nothing staged, the store untouched" {
	shifted s.json 1 11.0
	STORE_SUM=$(store_sum)
	run --separate-stderr perf-seed reseed -s store --staging-root staging --intent-rationale r --source-result s.json
	reseed_fails_with "remote tracking history has no record of the exact comparable identity; a first baseline is seeded with perf-seed prepare"
	mkdir -p store/m
	jq '.comparison_status = "CALIBRATION_NEEDED"' s.json >store/m/calibration.json
	STORE_SUM=$(store_sum)
	run --separate-stderr perf-seed reseed -s store --staging-root staging --intent-rationale r --source-result s.json
	reseed_fails_with "remote tracking history has no baseline-eligible record of the exact comparable identity"
	rm -r store
	cohort
	STORE_SUM=$(store_sum)
	shifted cal.json 2 11.0 '.comparison_status = "CALIBRATION_NEEDED"'
	run --separate-stderr perf-seed reseed -s store --staging-root staging --intent-rationale r --source-result cal.json
	reseed_fails_with "cal.json: baseline reseeds require a REGRESSION or PASS source artifact"
	shifted pr.json 2 11.0 '.run_source = "pr"'
	run --separate-stderr perf-seed reseed -s store --staging-root staging --intent-rationale r --source-result pr.json
	reseed_fails_with "pr.json: baseline reseeds require a scheduled_main source artifact"
	shifted branch.json 2 11.0 '.branch = "dev"'
	run --separate-stderr perf-seed reseed -s store --staging-root staging --intent-rationale r --source-result branch.json
	reseed_fails_with "branch.json: baseline reseeds require a main-branch full-suite source artifact"
	shifted other.json 2 11.0 '.software_profile_id = "sw-other"'
	run --separate-stderr perf-seed reseed -s store --staging-root staging --intent-rationale r \
		--source-result s.json --source-result other.json
	reseed_fails_with "source artifact 2 does not match the first exact comparable identity"
	# an inconsistent batch: the table, then the refusal
	shifted slow.json 2 12.0
	shifted s3.json 3 11.0
	run --separate-stderr perf-seed reseed -s store --staging-root staging --intent-rationale r \
		--source-result s.json --source-result slow.json --source-result s3.json
	reseed_fails_with "source batch exceeds maximum intra-batch regression: source artifact 2 latency regresses by 9.1% against the batch median"
	assert_line "  latency source=2 value=12.000000 median=11.000000 regression=9.1%"
	run --separate-stderr perf-seed reseed -s store --staging-root staging --intent-rationale r \
		--max-intra-batch-regression 0.1 --source-result s.json --source-result slow.json --source-result s3.json
	assert_success
	rm -r staging
	# the rationale: required, and not blank
	run --separate-stderr perf-seed reseed -s store --staging-root staging --source-result s.json
	reseed_fails_with "reseed needs --intent-rationale"
	run --separate-stderr perf-seed reseed -s store --staging-root staging --intent-rationale "  " --source-result s.json
	reseed_fails_with "baseline reseed reason must be a non-empty string"
	# a replay of a reviewed reseed at the same revision finds its reservation
	run --separate-stderr perf-seed reseed -s store --staging-root staging --intent-rationale r --source-result s.json
	assert_success
	run --separate-stderr perf-seed reseed -s store --staging-root staging --intent-rationale r --source-result s.json
	assert_failure 2
	grep -qF "staging already has a reservation for the exact comparable identity" <<<"$stderr"
}

@test "reseed upload: dry run, one revision, the reviewed bytes; a tampered record is refused" {
	cohort
	shifted s1.json 1 11.0
	shifted s2.json 2 11.1
	run --separate-stderr perf-seed reseed -s store --staging-root staging --intent-rationale r \
		--source-result s2.json --source-result s1.json
	assert_success
	assert_line "Note: 2 reseed records may not move the last-5 median immediately (3 usually do; 5 reset the window)."
	local m res
	m=$(reseed_manifest)
	res=$(dirname "$m")
	run --separate-stderr perf-seed upload "$m" -s store
	assert_success
	assert_line --index 0 --regexp '^Would upload baseline reseed: store/wan-t2v-1.3b-2gpu/.*_a+_reseed_01\.json$'
	assert_line --index 2 'Would commit "Perf: reseed wan-t2v-1.3b-2gpu baseline" on revision 0'
	[ -z "$(find store -name '*_reseed_*')" ]
	# sources ordered by their timestamp: s1 (June 11) is 01
	jq -e --arg s "$PWD/s1.json" '.baseline_reseed_source_result == $s' "$(find "$res" -name '*_reseed_01.json')" >/dev/null
	# a record edited consistently (digest updated) no longer matches its source
	cp "$m" orig
	local rec
	rec=$(jq -r '.prepared_records[0].path' "$m")
	cp "$rec" rec.orig
	jq '.latency = 9.0' rec.orig >"$rec"
	sed -i "s/$(jq -r '.prepared_records[0].sha256' orig)/$(sha256sum "$rec" | cut -c1-64)/" "$m"
	run --separate-stderr perf-seed upload "$m" -s store --confirm
	assert_failure 2
	grep -qF "prepared record 1 no longer matches its reviewed source" <<<"$stderr"
	cp orig "$m"
	cp rec.orig "$rec"
	run --separate-stderr perf-seed upload "$m" -s store --confirm
	assert_success
	assert_line --index 2 "Reseed commit: 1 (parent 0)"
	diff <(cd "$res" && find wan-t2v-1.3b-2gpu -name '*_reseed_*' | sort | xargs cat) \
		<(cd store && find wan-t2v-1.3b-2gpu -name '*_reseed_*' | sort | xargs cat)
	diff <(printf '{\n  "commit_id": "1",\n  "parent_commit": "0"\n}') "$res/uploaded"
	# once uploaded, the same manifest is refused: the store moved
	run --separate-stderr perf-seed upload "$m" -s store --confirm
	assert_failure 2
	grep -qF "the store moved since the reseed was reviewed at revision 0 (it is at revision 1 now); nothing was uploaded" <<<"$stderr"
	# two reseeds are in the next run's window, but, as the note said, the
	# last-5 median has not moved: 10, 10, 10, 11.0, 11.1
	shifted next.json 3 11.05 '.run_source = "pr" | del(.baseline_status, .comparison_status, .comparison_status_reason)'
	run --separate-stderr perf-gate-rolling -s store next.json
	assert_failure 1
	jq -e '.comparison_status == "REGRESSION" and .comparison.baseline_n == 5 and
		.comparison.metrics.latency.baseline == 10.0' <<<"$output" >/dev/null
}

@test "reseed upload races: a store that moved is refused with the revision the reseed saw" {
	cohort
	shifted s1.json 1 11.0
	shifted s2.json 2 11.1
	# two reviewers reseed the same cohort at revision 0; both upload at once
	run --separate-stderr perf-seed reseed -s store --staging-root one --intent-rationale r --source-result s1.json
	assert_success
	run --separate-stderr perf-seed reseed -s store --staging-root two --intent-rationale r --source-result s2.json
	assert_success
	local rc1=0 rc2=0 p1 p2
	perf-seed upload -s store --confirm "$(find one -name manifest)" >out1 2>err1 &
	p1=$!
	perf-seed upload -s store --confirm "$(find two -name manifest)" >out2 2>err2 &
	p2=$!
	wait "$p1" || rc1=$?
	wait "$p2" || rc2=$?
	assert_equal "$(printf '%s\n' "$rc1" "$rc2" | sort | tr '\n' ' ')" "0 2 "
	assert_equal "$(cat err1 err2 | grep -c 'the store moved since the reseed was reviewed at revision 0 (it is at revision 1 now)')" 1
	assert_equal "$(find store -name '*_reseed_*' | wc -l)" 1
	assert_equal "$(cat store/.perfkite-revision)" 1
	# an ordinary upload between review and upload moves the store too
	rm -r one
	run --separate-stderr perf-seed reseed -s store --staging-root one --intent-rationale r --source-result s1.json
	assert_success
	perf-upload -s store -p always "$FIXTURES/perf-upload/batch.in.jsonl" >/dev/null 2>&1
	run --separate-stderr perf-seed upload -s store --confirm "$(find one -name manifest)"
	assert_failure 2
	grep -qF "reviewed at revision 1 (it is at revision 2 now)" <<<"$stderr"
	assert_equal "$(find store -name '*_reseed_*' | wc -l)" 1
}

@test "reseed upload on a git store: one commit; a remote that moved after the check refuses it, nothing landed" {
	bare_remote remote.git
	local url=git+file://$PWD/remote.git head
	cohort seedstore
	git clone -q remote.git work 2>/dev/null
	cp -r seedstore/. work/
	git -C work add -A
	git -C work -c user.name=t -c user.email=t@t commit -qm cohort
	git -C work push -q origin HEAD:main
	head=$(git -C remote.git rev-parse main)
	shifted s1.json 1 11.0
	shifted s2.json 2 11.1
	run --separate-stderr perf-seed reseed -s "$url" --cache cache --staging-root staging --intent-rationale r \
		--source-result s1.json --source-result s2.json
	assert_success
	jq -e --arg h "$head" '.store_revision == $h' "$(reseed_manifest)" >/dev/null
	# another uploader pushes the moment the reseed is pushed
	sed -n '1s/2026-06-16T00:00:00+00:00/2026-06-20T00:00:00+00:00/p' "$FIXTURES/perf-upload/batch.in.jsonl" >other.jsonl
	racing_git "$url" "$PWD/other.jsonl"
	PATH="$PWD/wrap:$PATH" run --separate-stderr perf-seed upload "$(reseed_manifest)" -s "$url" --cache cache --confirm
	assert_failure 2
	[ -e raced ]
	grep -qF "the store changed since it was checked (its head is no longer $head)" <<<"$stderr"
	grep -qF "no reseed record landed" <<<"$stderr"
	not grep -q _reseed < <(git -C remote.git ls-tree -r --name-only main)
	[ ! -e "$(dirname "$(reseed_manifest)")/uploaded" ]
	# uploaded again, the store has moved since review: refused, with both revisions
	run --separate-stderr perf-seed upload "$(reseed_manifest)" -s "$url" --cache cache --confirm
	assert_failure 2
	grep -qF "the store moved since the reseed was reviewed at revision $head (it is at revision $(git -C remote.git rev-parse main) now)" <<<"$stderr"
	# reviewed again, it lands as one commit whose parent is the reviewed head
	rm -r staging
	run --separate-stderr perf-seed reseed -s "$url" --cache cache --staging-root staging --intent-rationale r \
		--source-result s1.json --source-result s2.json
	assert_success
	head=$(git -C remote.git rev-parse main)
	run --separate-stderr perf-seed upload "$(reseed_manifest)" -s "$url" --cache cache --confirm
	assert_success
	assert_equal "$(git -C remote.git rev-parse main^)" "$head"
	assert_equal "$(git -C remote.git log -1 --format=%s main)" "Perf: reseed wan-t2v-1.3b-2gpu baseline"
	assert_equal "$(git -C remote.git diff-tree --no-commit-id --name-only -r main | grep -c '_reseed_0[12]\.json$')" 2
}

@test "reseed and prepare: a standard output that cannot be written is exit 2" {
	cohort
	shifted s.json 1 11.0
	run --separate-stderr bash -c 'perf-seed reseed -s store --staging-root staging --intent-rationale r \
		--source-result s.json >/dev/full'
	assert_failure 2
	grep -qF "write error on standard output" <<<"$stderr"
	variant src.json
	run --separate-stderr bash -c 'perf-seed prepare -s other --staging-root staging2 --intent-rationale r \
		--source-result src.json >/dev/full'
	assert_failure 2
}

# ---- named metrics (issue 24) ----

# named OUT TIME ITEMS PAGES [JQ]: the source artifact as an imported
# benchmark's: none of the six, three named metrics.
named() {
	jq --argjson t "$2" --argjson i "$3" --argjson p "$4" '.latency = null | .throughput = null
		| .memory = null | .text_encoder_time_s = null | .dit_time_s = null | .vae_decode_time_s = null
		| .metrics = {"time": {"value": $t, "unit": "s"}, "items_per_second": {"value": $i, "unit": "items/s"},
			"pages": {"value": $p, "unit": "pages"}} | '"${5:-.}" "$SEED/source.json" >"$1"
}

@test "named metrics: prepare seeds records with named metrics only, and prints their consistency" {
	named a.json 1e-05 1e8 100
	named b.json 1.02e-05 0.99e8 300 '.job_id = "job-2"'
	prepare --source-result a.json --source-result b.json
	assert_success
	assert_line "  metrics.time source=1 value=1e-05 s median=1.01e-05 s regression=-1.0%"
	assert_line "  metrics.time source=2 value=1.02e-05 s median=1.01e-05 s regression=1.0%"
	assert_line "  metrics.time worst regression: 1.0% (source=2)"
	assert_line "  metrics.items_per_second source=2 value=9.9e+07 items/s median=9.95e+07 items/s regression=0.5%"
	assert_line "  metrics.pages source=2 value=300 pages median=200 pages regression=n/a"
	assert_line "  metrics.pages direction unknown: not checked"
	[ "$(jq -c .metrics.time "$(find staging -name '*.json' -path '*wan*' | sort | head -1)")" = '{"value":1e-05,"unit":"s"}' ]
}

@test "named metrics: an inconsistent named metric fails prepare, in its direction" {
	named a.json 1e-05 1e8 100
	named b.json 1.2e-05 1e8 100 '.job_id = "job-2"'
	prepare --source-result a.json --source-result b.json
	fails_with "source batch exceeds maximum intra-batch regression: source artifact 2 metrics.time regresses by 9.1% against the batch median"
	named c.json 1e-05 0.8e8 100 '.job_id = "job-3"'
	prepare --source-result a.json --source-result c.json
	fails_with "source artifact 2 metrics.items_per_second regresses by 11.1% against the batch median"
	# the policy block gives pages a direction; then it is judged
	named d.json 1e-05 1e8 100 '.regression_thresholds.metrics = {"*/pages": {"better": "lower"}}'
	named e.json 1e-05 1e8 300 '.job_id = "job-5" | .regression_thresholds.metrics = {"*/pages": {"better": "lower"}}'
	prepare --source-result d.json --source-result e.json
	fails_with "source artifact 2 metrics.pages regresses by 50.0% against the batch median"
}

@test "named metrics: a seed without the six needs a measured named metric, and valid ones" {
	named a.json 1e-05 1e8 100 '.metrics = {}'
	prepare --source-result a.json
	fails_with "baseline seed records require a finite positive latency measurement"
	named b.json 1e-05 1e8 100 '.metrics.time.value = "x"'
	prepare --source-result b.json
	fails_with "baseline seed records require valid named metrics: metrics.'time'.value must be a finite number or null"
}

@test "named metrics: the reseed's shift table has a row per named metric" {
	local i
	mkdir -p store/wan-t2v-1.3b-2gpu
	for i in 1 2 3 4 5; do
		named "store/wan-t2v-1.3b-2gpu/2026-06-0${i}T00_00_00_00_00_a$i.json" 1e-05 1e8 100 \
			".timestamp = \"2026-06-0${i}T00:00:00+00:00\" | .job_id = \"job-$i\" | .comparison_status = \"PASS\"
			| .baseline_eligible = true | .baseline_status = \"compared\""
	done
	named s.json 1.3e-05 1e8 100 '.timestamp = "2026-06-11T00:00:00+00:00" | .job_id = "job-11"
		| .comparison_status = "REGRESSION" | .success = false | .baseline_status = "compared"'
	run --separate-stderr perf-seed reseed -s store --staging-root staging --operator alice \
		--now 2026-07-01T00:00:00Z --intent-rationale "slower sort, accepted" --source-result s.json
	assert_success
	assert_line "  metrics.time old_median=1e-05 s batch_median=1.3e-05 s batch_spread=0.0% candidate_median=1e-05 s"
	assert_line "  metrics.items_per_second old_median=1e+08 items/s batch_median=1e+08 items/s batch_spread=0.0% candidate_median=1e+08 items/s"
	assert_line "  latency old_median=- batch_median=- batch_spread=- candidate_median=-"
	[ "$(jq -c .metrics.time "$(find staging -name '*_reseed_01.json')")" = '{"value":1.3e-05,"unit":"s"}' ]
}
