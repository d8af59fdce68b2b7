#!/usr/bin/env bats
# perf-upload: the upload policy, the stored bytes and layout, the directory
# store (atomic, never overwriting, concurrent writers), the git store (a
# bare repository over file:// and over http through git http-backend),
# the export, and faults (SIGKILL, unreachable remote, full disk).

# shellcheck disable=SC2154,SC2030,SC2031 # bats sets status, output, lines, stderr; each test is a subshell

load lib/common
load lib/golden
load lib/store

UP=$FIXTURES/perf-upload

setup() {
	export XDG_CACHE_HOME=$BATS_TEST_TMPDIR/xdg
	unset HF_TOKEN HF_API_KEY HUGGINGFACE_HUB_TOKEN PERF_STORE_CACHE
	cd "$BATS_TEST_TMPDIR" || return 1
}

teardown() {
	git_http_stop
}

@test "the default policy is never: records pass through, nothing is stored" {
	run --separate-stderr perf-upload -s store "$UP/batch.in.jsonl"
	assert_success
	diff -u "$UP/batch.in.jsonl" <(printf '%s\n' "$output")
	[ ! -e store ]
	assert_equal "${#stderr_lines[@]}" 4
	assert_equal "${stderr_lines[0]}" \
		"Tracking upload skipped for wan-t2v-1.3b-2gpu (scheduled_main, success=True)"
	assert_equal "${stderr_lines[1]}" \
		"Tracking upload skipped for wan-t2v-1.3b-2gpu (pr, success=False)"
	assert_equal "${stderr_lines[2]}" "Tracking upload skipped for wan/t2v é (local, success=True)"
}

@test "every policy, a second upload, a bad line and a git store: messages and records, byte for byte" {
	golden perf-upload/golden/never perf-upload -s store "$UP/batch.in.jsonl"
	golden perf-upload/golden/pass perf-upload -s store --policy pass "$UP/batch.in.jsonl"
	golden perf-upload/golden/always perf-upload -s store --policy always "$UP/batch.in.jsonl"
	golden perf-upload/golden/again perf-upload -s store --policy always "$UP/batch.in.jsonl"
	golden perf-upload/golden/invalid-policy env PERF_UPLOAD_POLICY=sometimes perf-upload -s store "$UP/batch.in.jsonl"
	{ head -1 "$UP/batch.in.jsonl"; echo '{"model_id": '; } >bad.jsonl
	golden perf-upload/golden/bad-line perf-upload -s other -p always bad.jsonl
	bare_remote remote.git
	golden perf-upload/golden/git perf-upload -s "git+file://$PWD/remote.git" --cache cache -p always "$UP/batch.in.jsonl"
	golden perf-upload/golden/git-again perf-upload -s "git+file://$PWD/remote.git" --cache cache -p always "$UP/batch.in.jsonl"
}

@test "policy pass stores successful records (a missing success counts), in the reference's bytes" {
	run --separate-stderr perf-upload -s store --policy pass "$UP/batch.in.jsonl"
	assert_success
	diff -r "$UP/expected-pass" store -x '.perfkite-*'
	diff -u "$UP/expected-pass.err" <(grep -v '^uploaded → ' <<<"$stderr")
	assert_equal "$(grep -c '^uploaded → store/' <<<"$stderr")" 3
	assert_equal "$(cat store/.perfkite-revision)" 1
}

@test "policy always stores failures too; PERF_UPLOAD_POLICY is read, --policy wins" {
	PERF_UPLOAD_POLICY=always run --separate-stderr perf-upload -s store "$UP/batch.in.jsonl"
	assert_success
	diff -r "$UP/expected-always" store -x '.perfkite-*'
	PERF_UPLOAD_POLICY=always run --separate-stderr perf-upload -s other -p never \
		"$UP/batch.in.jsonl"
	assert_success
	[ ! -e other ]
}

@test "an invalid PERF_UPLOAD_POLICY warns as the reference and stores nothing; a bad --policy is usage" {
	PERF_UPLOAD_POLICY=sometimes run --separate-stderr perf-upload -s store "$UP/batch.in.jsonl"
	assert_success
	assert_equal "${stderr_lines[0]}" "Invalid PERF_UPLOAD_POLICY='sometimes'; using 'never'"
	[ ! -e store ]
	run --separate-stderr perf-upload -s store --policy sometimes "$UP/batch.in.jsonl"
	assert_failure 2
	assert_equal "${stderr_lines[0]}" "perf-upload: --policy: expected never, pass or always, not 'sometimes'"
}

@test "an empty PERFORMANCE_TRACKING_ROOT is the working directory, as the reference uses it" {
	mkdir work
	cd work || return 1
	PERFORMANCE_TRACKING_ROOT='' run --separate-stderr perf-upload --policy pass "$UP/batch.in.jsonl"
	assert_success
	diff -r "$UP/expected-pass" . -x '.perfkite-*'
	assert_equal "$(grep -c '^uploaded → \./' <<<"$stderr")" 3
}

@test "a remote without git+ is refused with the spelling meant, and nothing is created" {
	local spec want
	mkdir work
	cd work || return 1
	while IFS='|' read -r spec want; do
		run --separate-stderr perf-upload -s "$spec" --policy always "$UP/batch.in.jsonl"
		assert_failure 2
		assert_output ""
		assert_equal "$stderr" "perf-upload: $spec: a git remote needs the git+ prefix to be a store; did you mean $want?"
		PERFORMANCE_TRACKING_ROOT=$spec run --separate-stderr perf-upload --policy always "$UP/batch.in.jsonl"
		assert_failure 2
		assert_equal "$stderr" "perf-upload: $spec: a git remote needs the git+ prefix to be a store; did you mean $want?"
	done <<'EOF'
https://huggingface.co/datasets/org/perf|git+https://huggingface.co/datasets/org/perf
http://git.example/perf.git|git+http://git.example/perf.git
ssh://git@git.example/perf.git|git+ssh://git@git.example/perf.git
git://git.example/perf.git|git+git://git.example/perf.git
file:///srv/perf.git|git+file:///srv/perf.git
git@github.com:org/perf.git|git+git@github.com:org/perf.git
hf://datasets/org/perf|git+https://huggingface.co/datasets/org/perf
EOF
	# A password is never shown, not even in the hint.
	run --separate-stderr perf-upload -s https://user:s3cret@git.example/perf.git "$UP/batch.in.jsonl"
	assert_failure 2
	not grep -q s3cret <<<"$stderr"
	# Nothing was created in the working directory: no "https:" directory.
	assert_equal "$(find . -mindepth 1 | wc -l)" 0
	# A directory whose name only contains a colon or an @ is a directory.
	run --separate-stderr perf-upload -s ./a:b@c --policy pass "$UP/batch.in.jsonl"
	assert_success
	[ -d ./a:b@c/wan-t2v-1.3b-2gpu ]
}

@test "PERF_UPLOAD_POLICY and --policy are trimmed and lower-cased first, as the reference reads them" {
	PERF_UPLOAD_POLICY=PASS run --separate-stderr perf-upload -s store "$UP/batch.in.jsonl"
	assert_success
	diff -r "$UP/expected-pass" store -x '.perfkite-*'
	PERF_UPLOAD_POLICY=$' Always\t\n' run --separate-stderr perf-upload -s always "$UP/batch.in.jsonl"
	assert_success
	diff -r "$UP/expected-always" always -x '.perfkite-*'
	run --separate-stderr perf-upload -s always2 --policy ' ALWAYS ' "$UP/batch.in.jsonl"
	assert_success
	diff -r "$UP/expected-always" always2 -x '.perfkite-*'
	# The warning shows the repr() of the trimmed, lower-cased value.
	PERF_UPLOAD_POLICY=" BOGUS'S " run --separate-stderr perf-upload -s bogus "$UP/batch.in.jsonl"
	assert_success
	assert_equal "${stderr_lines[0]}" "Invalid PERF_UPLOAD_POLICY=\"bogus's\"; using 'never'"
	PERF_UPLOAD_POLICY=$'\tSome\\Times\n' run --separate-stderr perf-upload -s bogus "$UP/batch.in.jsonl"
	assert_success
	assert_equal "${stderr_lines[0]}" "Invalid PERF_UPLOAD_POLICY='some\\\\times'; using 'never'"
	PERF_UPLOAD_POLICY='' run --separate-stderr perf-upload -s bogus "$UP/batch.in.jsonl"
	assert_success
	assert_equal "${stderr_lines[0]}" "Invalid PERF_UPLOAD_POLICY=''; using 'never'"
	[ ! -e bogus ]
}

@test "uploading the same records again stores nothing new" {
	perf-upload -s store -p always "$UP/batch.in.jsonl" >/dev/null 2>&1
	run --separate-stderr perf-upload -s store -p always "$UP/batch.in.jsonl"
	assert_success
	assert_equal "$(grep -c '^already stored → store/' <<<"$stderr")" 4
	assert_equal "$(cat store/.perfkite-revision)" 1
}

@test "a different record at an existing path is never overwritten" {
	perf-upload -s store -p always "$UP/batch.in.jsonl" >/dev/null 2>&1
	sed '1s/"latency":10.0/"latency":99.0/' "$UP/batch.in.jsonl" >changed.jsonl
	run --separate-stderr perf-upload -s store -p always changed.jsonl
	assert_failure 2
	assert_equal "${stderr_lines[0]}" "perf-upload: changed.jsonl:1: store/wan-t2v-1.3b-2gpu/2026-06-16T00_00_00_00_00_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.json already holds a different record; not overwritten"
	diff -r "$UP/expected-always" store -x '.perfkite-*'
	# the records are still on stdout
	assert_equal "${#lines[@]}" 4
}

@test "two records of one batch at one path with different bytes: an error, the rest stored" {
	{ head -1 "$UP/batch.in.jsonl"; sed -n '1s/"latency":10.0/"latency":11.0/p' "$UP/batch.in.jsonl"; } >twice.jsonl
	run --separate-stderr perf-upload -s store -p always twice.jsonl
	assert_failure 2
	assert_equal "${stderr_lines[0]}" "perf-upload: twice.jsonl:2: another record of the batch (line 1) has the same store path wan-t2v-1.3b-2gpu/2026-06-16T00_00_00_00_00_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.json"
	cmp store/wan-t2v-1.3b-2gpu/2026-06-16T00_00_00_00_00_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.json \
		"$UP/expected-always/wan-t2v-1.3b-2gpu/2026-06-16T00_00_00_00_00_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.json"
}

@test "a record that cannot be stored is named by file and line; the others are stored" {
	{ sed -n 1p "$UP/batch.in.jsonl"; echo '{"model_id":null,"timestamp":"2026-06-16","success":true}'; } >bad.jsonl
	run --separate-stderr perf-upload -s store -p always bad.jsonl
	assert_failure 2
	assert_equal "${stderr_lines[0]}" "perf-upload: bad.jsonl:2: cannot store the record: model_id and timestamp must be strings"
	[ -f store/wan-t2v-1.3b-2gpu/2026-06-16T00_00_00_00_00_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.json ]
	assert_equal "${#lines[@]}" 2
}

@test "a store path that is not a directory is exit 2, naming it" {
	: >afile
	run --separate-stderr perf-upload -s afile -p always "$UP/batch.in.jsonl"
	assert_failure 2
	assert_equal "${stderr_lines[0]}" "perf-upload: afile: cannot create the store: Not a directory"
	assert_equal "${#lines[@]}" 4
}

@test "concurrent uploaders to one directory lose nothing" {
	local i
	for i in 1 2 3 4 5 6 7 8; do
		gen_records 40 "w$i" >"batch$i.jsonl"
	done
	for i in 1 2 3 4 5 6 7 8; do
		perf-upload -s store -p always "batch$i.jsonl" >/dev/null 2>"err$i" &
	done
	wait
	assert_equal "$(find store -name '*.json' | wc -l)" 320
	assert_equal "$(cat store/.perfkite-revision)" 8
	store_reads_clean store
	# every stored file holds its record's bytes
	perf-upload --export -s store -o all.jsonl.gz
	assert_equal "$(gzip -dc all.jsonl.gz | wc -l)" 320
}

@test "SIGKILL at 30 points spread over a batch's writing (10 in a sanitizer build): the store always reads back cleanly" {
	local i n pid t mid=0
	n=$(stress 30 10)
	gen_records 40 kill >big.jsonl
	# the time a batch takes here, to its end: the kills are spread over it
	gen_records 40 timing >batch.jsonl
	t=$(elapsed perf-upload -s timing -p always batch.jsonl)
	for i in $(seq "$n"); do
		gen_records 40 "k$i" >batch.jsonl
		perf-upload -s store -p always batch.jsonl >/dev/null 2>"log$i" &
		pid=$!
		sleep "$(spread "$i" "$n" "$t")"
		kill -9 "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
		store_reads_clean store
		# every acknowledged record is there, whole
		acknowledged "log$i" | sed 's|^|store/|' | xargs -r jq -e -n '[inputs | .model_id] | all' >/dev/null
		case $(find store -name "*_k$i-*.json" | wc -l) in 0 | 40) ;; *) mid=$((mid + 1)) ;; esac
	done
	echo "# $mid of $n kills landed in the middle of the batch (a ${t} s one)" >&3
	# a clean run afterwards completes every batch
	run --separate-stderr perf-upload -s store -p always big.jsonl
	assert_success
	store_reads_clean store
	perf-upload --export -s store -o all.gz
	[ "$(gzip -dc all.gz | grep -c '"commit_sha":"kill-')" -eq 40 ]
}

@test "a full disk is exit 2 and leaves no partial record" {
	# a file size limit makes every write past it fail, as a full disk does
	gen_records 3 full >batch.jsonl
	run --separate-stderr bash -c 'trap "" XFSZ; ulimit -f 1; perf-upload -s store -p always batch.jsonl'
	assert_failure 2
	assert_equal "${#lines[@]}" 3
	grep -q 'cannot write: File too large' <<<"$stderr"
	store_reads_clean store
	[ -z "$(find store -name '*.json')" ]
}

@test "a really full file system (tmpfs) is exit 2 and leaves no partial record" {
	mkdir full
	mount -t tmpfs -o size=12k tmpfs full 2>/dev/null || skip "cannot mount a tmpfs here"
	gen_records 20 full >batch.jsonl
	run --separate-stderr perf-upload -s full/store -p always batch.jsonl
	local s=$status
	store_reads_clean full/store || { umount full; return 1; }
	umount full
	[ "$s" -eq 2 ]
	grep -q 'No space left on device' <<<"$stderr"
}

@test "a disk that fills part-way through a batch: the stored records are reported, the error names the first that was not" {
	mkdir full
	mount -t tmpfs -o size=64k tmpfs full 2>/dev/null || skip "cannot mount a tmpfs here"
	gen_records 40 part part-model >batch.jsonl
	run --separate-stderr perf-upload -s full/store -p always batch.jsonl
	local s=$status
	find full/store -name '*.json' | sed 's|^full/store/||' | LC_ALL=C sort >stored
	umount full
	[ "$s" -eq 2 ]
	# every record stored got its line, and only those
	printf '%s\n' "$stderr" | sed -n 's|^uploaded → full/store/||p' | LC_ALL=C sort >acked
	[ -s stored ]
	[ "$(wc -l <stored)" -lt 40 ]
	diff stored acked
	# the first record not stored, by its line, and how many after it
	local n first
	n=$(wc -l <stored)
	first=$(sed -n "$((n + 1))p" batch.jsonl | perf-upload -s "$BATS_TEST_TMPDIR/dry" -p never 2>/dev/null |
		jq -r '.model_id + "/" + (.timestamp | gsub("[^A-Za-z0-9._-]"; "_")) + "_" + .commit_sha + ".json"')
	grep -qx "perf-upload: batch.jsonl:$((n + 1)): not stored: full/store/$first; the $((39 - n)) records after it not tried" <<<"$stderr"
	grep -q "No space left on device" <<<"$stderr"
}

@test "temporary files of killed writers are swept by the next writer: old, unlocked, our names only" {
	gen_records 1 first sweep-model >one.jsonl
	perf-upload -s store -p always one.jsonl 2>/dev/null >/dev/null
	local d=store/sweep-model holder
	for f in "$d/.a.json.tmp.Ab12Cd" store/.perfkite-revision.tmp.x1Y2z3 "$d/.young.json.tmp.Qw3Er4" \
		"$d/.held.json.tmp.Zx9Cv8" "$d/.other.tmp.keep" "$d/.notes.json.tmp.toolong1"; do
		echo partial >"$f"
	done
	touch -d '11 minutes ago' "$d/.a.json.tmp.Ab12Cd" store/.perfkite-revision.tmp.x1Y2z3 "$d/.held.json.tmp.Zx9Cv8" \
		"$d/.other.tmp.keep" "$d/.notes.json.tmp.toolong1"
	touch -d '9 minutes ago' "$d/.young.json.tmp.Qw3Er4"
	# a writer that still holds its temporary file
	flock "$d/.held.json.tmp.Zx9Cv8" sleep 30 &
	holder=$!
	for _ in $(seq 600); do not flock -n "$d/.held.json.tmp.Zx9Cv8" true && break; sleep 0.05; done
	not flock -n "$d/.held.json.tmp.Zx9Cv8" true
	gen_records 1 second sweep-model >two.jsonl
	run --separate-stderr perf-upload -s store -p always two.jsonl
	kill "$holder"
	wait "$holder" || true
	assert_success
	[ ! -e "$d/.a.json.tmp.Ab12Cd" ]
	[ ! -e store/.perfkite-revision.tmp.x1Y2z3 ]
	# younger than 10 minutes, locked, or not a name of ours: kept
	[ -e "$d/.young.json.tmp.Qw3Er4" ]
	[ -e "$d/.held.json.tmp.Zx9Cv8" ]
	[ -e "$d/.other.tmp.keep" ]
	[ -e "$d/.notes.json.tmp.toolong1" ]
	assert_equal "$(find store -name '*.json' | wc -l)" 2
}

@test "--export writes the store as one gzip JSON-lines stream the readers take as history" {
	perf-upload --export -s "$ROOT_DIR/fixtures/store" -o hist.gz
	[ "$(head -c2 hist.gz | od -An -tx1 | tr -d ' ')" = 1f8b ]
	assert_equal "$(gzip -dc hist.gz | wc -l)" "$(find "$ROOT_DIR/fixtures/store" -name '*.json' | wc -l)"
	local in=$ROOT_DIR/fixtures/records
	# a gate may find a regression (exit 1), never fail its job (2)
	perf-gate-static "$in"/*.json >static.jsonl 2>/dev/null || [ "$?" -eq 1 ]
	perf-normalize static.jsonl >norm.jsonl
	perf-gate-rolling -s "$ROOT_DIR/fixtures/store" norm.jsonl >from-store.jsonl 2>/dev/null || [ "$?" -eq 1 ]
	mkdir "$BATS_TEST_TMPDIR/none"
	perf-gate-rolling -s "$BATS_TEST_TMPDIR/none" -H hist.gz norm.jsonl >from-export.jsonl 2>/dev/null || [ "$?" -eq 1 ]
	assert_equal "$(wc -l <from-store.jsonl)" 3
	diff from-store.jsonl from-export.jsonl
	grep -q '"baseline_n":5' from-export.jsonl
	# on standard output too
	perf-upload --export -s "$ROOT_DIR/fixtures/store" | gzip -dc | cmp - <(gzip -dc hist.gz)
}

@test "--export of a store with a file that is not an object fails as the readers do" {
	mkdir -p store/m
	echo '[1]' >store/m/x.json
	run --separate-stderr perf-upload --export -s store -o out.gz
	assert_failure 2
	[ ! -e out.gz ]
}

# ---- git store ----

@test "git store over file://: one commit per batch, the reference's messages, nothing pushed twice" {
	bare_remote remote.git
	run --separate-stderr perf-upload -s "git+file://$PWD/remote.git" --cache cache -p always "$UP/batch.in.jsonl"
	assert_success
	assert_equal "$(git -C remote.git rev-list --count main)" 1
	assert_equal "$(git -C remote.git log -1 --format=%s main)" "Perf: 4 records"
	# the remote holds exactly the reference's files
	git clone -q remote.git check
	diff -r "$UP/expected-always" check -x .git
	assert_equal "$(grep -c "^uploaded → file://$PWD/remote.git/" <<<"$stderr")" 4
	# one record: "Perf: <model_id> at <sha7>"
	gen_records 1 abcdef1234 >one.jsonl
	perf-upload -s "git+file://$PWD/remote.git" --cache cache -p always one.jsonl >/dev/null 2>&1
	assert_equal "$(git -C remote.git log -1 --format=%s main)" "Perf: wan-t2v-1.3b-2gpu at abcdef1"
	# the same again: no commit
	run --separate-stderr perf-upload -s "git+file://$PWD/remote.git" --cache cache -p always one.jsonl
	assert_success
	assert_equal "$(git -C remote.git rev-list --count main)" 2
	assert_line --partial 'wan-t2v-1.3b-2gpu' <<<"$stderr"
	grep -q '^already stored → ' <<<"$stderr"
}

@test "the readers read a git store through the same cache and agree with the directory" {
	bare_remote remote.git
	git clone -q remote.git work 2>/dev/null
	cp -r "$ROOT_DIR/fixtures/store/." work/
	git -C work add -A
	git -C work -c user.name=t -c user.email=t@t commit -qm history
	git -C work push -q origin HEAD:main
	local in=$ROOT_DIR/fixtures/records
	perf-gate-static "$in"/*.json >static.jsonl 2>/dev/null || [ "$?" -eq 1 ]
	perf-normalize static.jsonl >norm.jsonl
	perf-gate-rolling -s "$ROOT_DIR/fixtures/store" norm.jsonl >dir.jsonl 2>/dev/null || [ "$?" -eq 1 ]
	perf-gate-rolling -s "git+file://$PWD/remote.git" --cache cache norm.jsonl >git.jsonl 2>/dev/null || [ "$?" -eq 1 ]
	assert_equal "$(wc -l <dir.jsonl)" 3
	grep -q '"baseline_n":5' git.jsonl
	diff dir.jsonl git.jsonl
	perf-summarize -s "git+file://$PWD/remote.git" --cache cache --now 2026-06-20T00:00:00Z \
		--html git.html git.jsonl >/dev/null
	perf-summarize -s "$ROOT_DIR/fixtures/store" --now 2026-06-20T00:00:00Z \
		--html dir.html dir.jsonl >/dev/null
	cmp dir.html git.html
	# the default cache is under XDG_CACHE_HOME
	perf-gate-rolling -s "git+file://$PWD/remote.git" norm.jsonl >/dev/null 2>&1 || [ "$?" -eq 1 ]
	[ -d "$XDG_CACHE_HOME/perfkite" ]
	# a reader needs the remote: an unreachable one is exit 2
	mv remote.git gone.git
	run --separate-stderr perf-gate-rolling -s "git+file://$PWD/remote.git" --cache cache norm.jsonl
	assert_failure 2
	grep -q 'cannot fetch the store' <<<"$stderr"
}

@test "an unreachable remote: exit 2 with its error, records on stdout, the commit waits in the cache and the next run pushes it" {
	bare_remote remote.git
	gen_records 2 first >first.jsonl
	perf-upload -s "git+file://$PWD/remote.git" --cache cache -p always first.jsonl >/dev/null 2>&1
	mv remote.git away.git
	gen_records 3 second >second.jsonl
	run --separate-stderr perf-upload -s "git+file://$PWD/remote.git" --cache cache -p always second.jsonl
	assert_failure 2
	assert_equal "${#lines[@]}" 3
	grep -q "does not appear to be a git repository" <<<"$stderr"
	grep -q 'not pushed; the records wait in the cache' <<<"$stderr"
	not grep -q '^uploaded' <<<"$stderr"
	mv away.git remote.git
	assert_equal "$(git -C remote.git rev-list --count main)" 1
	# the next run pushes what waited, with nothing new of its own
	run --separate-stderr perf-upload -s "git+file://$PWD/remote.git" --cache cache -p always first.jsonl
	assert_success
	assert_equal "$(git -C remote.git rev-list --count main)" 2
	assert_equal "$(remote_files remote.git | wc -l)" 5
}

@test "a push that loses a race is rebased and retried" {
	bare_remote remote.git
	gen_records 1 seed >seed.jsonl
	perf-upload -s "git+file://$PWD/remote.git" --cache a -p always seed.jsonl >/dev/null 2>&1
	# Another uploader pushes first, the moment ours pushes.
	racing_git "git+file://$PWD/remote.git" "$PWD/other.jsonl"
	gen_records 2 ours >ours.jsonl
	gen_records 2 other >other.jsonl
	PATH="$PWD/wrap:$PATH" run --separate-stderr perf-upload -s "git+file://$PWD/remote.git" --cache a -p always ours.jsonl
	assert_success
	[ -e raced ]
	assert_equal "$(remote_files remote.git | wc -l)" 5
	# linear history: seed, other, ours
	assert_equal "$(git -C remote.git rev-list --count main)" 3
	assert_equal "$(git -C remote.git rev-list --merges --count main)" 0
}

@test "a waiting commit that clashes with what the remote got meanwhile is an error, not an overwrite" {
	bare_remote remote.git
	gen_records 1 base >base.jsonl
	perf-upload -s "git+file://$PWD/remote.git" --cache a -p always base.jsonl >/dev/null 2>&1
	gen_records 1 x >x.jsonl
	mv remote.git away.git
	# the remote gone: exit 2, the commit kept in the cache for the next run
	run --separate-stderr perf-upload -s "git+file://$PWD/remote.git" --cache a -p always x.jsonl
	assert_failure 2
	mv away.git remote.git
	sed 's/"latency":31.0/"latency":32.0/' x.jsonl >x2.jsonl
	perf-upload -s "git+file://$PWD/remote.git" --cache b -p always x2.jsonl >/dev/null 2>&1
	run --separate-stderr perf-upload -s "git+file://$PWD/remote.git" --cache a -p always base.jsonl
	assert_failure 2
	grep -q 'conflicts with the remote: wan-t2v-1.3b-2gpu/2026-07-01T00_00_00_00_00_x-0.json' <<<"$stderr"
	git -C remote.git show main:wan-t2v-1.3b-2gpu/2026-07-01T00_00_00_00_00_x-0.json | grep -q '"latency": 32.0'
}

@test "git run from a git hook (GIT_DIR set) works on the store, not on the hook's repository" {
	bare_remote remote.git
	git init -q user
	GIT_DIR=$PWD/user/.git GIT_WORK_TREE=$PWD/user run --separate-stderr \
		perf-upload -s "git+file://$PWD/remote.git" --cache cache -p always "$UP/batch.in.jsonl"
	assert_success
	assert_equal "$(remote_files remote.git | wc -l)" 4
	not git -C user rev-parse -q --verify HEAD
}

@test "SIGKILL at 30 points spread over a git upload (10 in a sanitizer build): the remote always reads back cleanly and the next run recovers" {
	# Over http, so that killing perf-upload and its git children (the
	# process group, as a CI agent does) cannot kill the server's side.
	lighttpd_or_skip
	local i n pid t acked=0
	n=$(stress 30 10)
	mkdir srv
	bare_remote srv/perf.git
	bare_remote srv/timing.git
	git_http_start "$PWD/srv" tok
	export HF_TOKEN=tok
	# the time an upload takes here, to its end, once its cache is cloned
	# (the first of the loop's, killed early, clones): the kills are
	# spread over it
	gen_records 3 clone >batch.jsonl
	perf-upload -s "git+$GIT_HTTP_URL/timing.git" --cache timing-cache -p always batch.jsonl >/dev/null 2>&1
	gen_records 3 timing >batch.jsonl
	t=$(elapsed perf-upload -s "git+$GIT_HTTP_URL/timing.git" --cache timing-cache -p always batch.jsonl)
	for i in $(seq "$n"); do
		gen_records 3 "g$i" >batch.jsonl
		setsid perf-upload -s "git+$GIT_HTTP_URL/perf.git" --cache cache -p always batch.jsonl \
			>/dev/null 2>"log$i" &
		pid=$!
		sleep "$(spread "$i" "$n" "$t")"
		kill -9 -- "-$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
		# what the remote's branch holds is whole (the server may still be
		# storing a killed push's objects: only the branch is read), and
		# every acknowledged record is in it
		remote_whole srv/perf.git
		acknowledged "log$i" >ack
		[ ! -s ack ] || acked=$((acked + 1))
		while IFS= read -r p; do
			git -C srv/perf.git cat-file -e "main:$p"
		done <ack
	done
	echo "# $acked of $n runs finished before the kill (a ${t} s one)" >&3
	# the next run recovers the cache and pushes whatever was committed
	gen_records 3 final >final.jsonl
	run --separate-stderr perf-upload -s "git+$GIT_HTTP_URL/perf.git" --cache cache -p always final.jsonl
	assert_success
	git clone -q srv/perf.git check
	store_reads_clean check
	assert_equal "$(git -C srv/perf.git rev-list --merges --count main)" 0
	git -C srv/perf.git cat-file -e main:wan-t2v-1.3b-2gpu/2026-07-01T00_00_02_00_00_final-2.json
	# nothing waits in the cache any more
	local clone
	clone=$(find cache -mindepth 1 -maxdepth 1 -type d)
	assert_equal "$(git -C "$clone" rev-list --count origin/main..HEAD)" 0
}

# ---- over http ----

@test "a stale lock in a git remote (a killed push's main.lock or HEAD.lock): exit 2 within seconds, git's words and the file to remove" {
	bare_remote remote.git
	local url="git+file://$PWD/remote.git" n=1 lock
	gen_records 1 first >first.jsonl
	perf-upload -s "$url" --cache cache -p always first.jsonl >/dev/null 2>&1
	for lock in refs/heads/main.lock HEAD.lock; do
		n=$((n + 1))
		gen_records 1 "next$n" >next.jsonl
		touch "remote.git/$lock"
		SECONDS=0
		run --separate-stderr perf-upload -s "$url" --cache cache -p always next.jsonl
		assert_failure 2
		[ "$SECONDS" -lt 10 ] || { echo "$lock: $SECONDS s" >&2; false; }
		# git's own words, which lock, and how to make sure it is stale
		grep -qF "remote: error: cannot lock ref '" <<<"$stderr"
		grep -qF "': File exists." <<<"$stderr"
		grep -qF "no git-receive-pack process on the machine that holds it), then remove $PWD/remote.git/$lock" <<<"$stderr"
		not grep -q "kept moving" <<<"$stderr"
		assert_equal "$(git -C remote.git rev-list --count main)" $((n - 1))
		# removed as it says: the waiting commit goes through
		rm "remote.git/$lock"
		run --separate-stderr perf-upload -s "$url" --cache cache -p always next.jsonl
		assert_success
		assert_equal "$(git -C remote.git rev-list --count main)" "$n"
	done
}

@test "a failed push reports every error line git wrote (a full remote disk)" {
	mkdir m
	mount -t tmpfs -o size=256k tmpfs m 2>/dev/null || skip "cannot mount a tmpfs here"
	bare_remote m/remote.git
	head -c 10M /dev/zero >m/filler 2>/dev/null || true
	gen_records 3 full >batch.jsonl
	run --separate-stderr perf-upload -s "git+file://$PWD/m/remote.git" --cache cache -p always batch.jsonl
	umount m
	assert_failure 2
	grep -q "cannot push: .*No space left on device.*; error: failed to push some refs" <<<"$stderr"
}

# ls_locks: the lock files in remote.git, relative to it.
ls_locks() {
	(cd remote.git && find . -name '*.lock' | sed 's|^\./||')
}

@test "SIGKILL of a git upload's whole process group (file://, the remote's side too) at 30 points spread over it (10 in a sanitizer build): a stale lock is named at once, the next run recovers" {
	bare_remote remote.git
	bare_remote timing.git
	local url="git+file://$PWD/remote.git" i n t pid locks=0 acked=0 harmless=0 rc lock
	n=$(stress 30 10)
	# the time an upload takes here, to its end, once its cache is cloned
	# (the first of the loop's, killed early, clones): the kills are
	# spread over it
	gen_records 3 clone >batch.jsonl
	perf-upload -s "git+file://$PWD/timing.git" --cache timing-cache -p always batch.jsonl >/dev/null 2>&1
	gen_records 3 timing >batch.jsonl
	t=$(elapsed perf-upload -s "git+file://$PWD/timing.git" --cache timing-cache -p always batch.jsonl)
	for i in $(seq "$n"); do
		gen_records 3 "pg$i" >batch.jsonl
		setsid perf-upload -s "$url" --cache cache -p always batch.jsonl >/dev/null 2>"log$i" &
		pid=$!
		sleep "$(spread "$i" "$n" "$t")"
		kill -9 -- "-$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
		remote_whole remote.git
		acknowledged "log$i" >ack
		[ ! -s ack ] || acked=$((acked + 1))
		while IFS= read -r p; do
			git -C remote.git cat-file -e "main:$p"
		done <ack
		# a lock the kill left: the next push names it and stops
		ls_locks >locks
		if [ -s locks ]; then
			locks=$((locks + 1))
			gen_records 1 "after$i" >after.jsonl
			while [ -s locks ]; do
				SECONDS=0
				rc=0
				perf-upload -s "$url" --cache cache -p always after.jsonl >/dev/null 2>err || rc=$?
				if [ "$rc" -eq 0 ]; then
					# a lock no push takes (git's own stale files elsewhere)
					harmless=$((harmless + 1))
					break
				fi
				[ "$rc" -eq 2 ] || { echo "run $i: status $rc with $(cat locks) left: $(cat err)" >&2; false; }
				[ "$SECONDS" -lt 10 ]
				lock=$(sed -n "s|.*then remove $PWD/remote.git/||p" err)
				grep -qxF "$lock" locks || { echo "run $i: $(cat locks): $(cat err)" >&2; false; }
				rm "remote.git/$lock"
				ls_locks >locks
			done
		fi
	done
	echo "# $acked of $n runs finished before the kill (a ${t} s one); $locks left a lock in the remote ($harmless stopped no push)" >&3
	gen_records 3 final >final.jsonl
	run --separate-stderr perf-upload -s "$url" --cache cache -p always final.jsonl
	assert_success
	git clone -q remote.git check
	store_reads_clean check
	git -C remote.git fsck --no-dangling >/dev/null
	local clone
	clone=$(find cache -mindepth 1 -maxdepth 1 -type d)
	assert_equal "$(git -C "$clone" rev-list --count origin/main..HEAD)" 0
}

@test "git store over http (git http-backend, basic auth): the token goes through GIT_ASKPASS only" {
	lighttpd_or_skip
	mkdir srv
	bare_remote srv/perf.git
	git_http_start "$PWD/srv" "s3cret-token-value"
	# a git that logs its command lines
	mkdir wrap
	printf '#!/bin/bash\nprintf "%%s\\n" "$*" >>"%s/argv.log"\nexec %s "$@"\n' "$PWD" "$(command -v git)" >wrap/git
	chmod +x wrap/git
	HF_TOKEN=s3cret-token-value PATH="$PWD/wrap:$PATH" run --separate-stderr \
		perf-upload -s "git+$GIT_HTTP_URL/perf.git" --cache cache -p always "$UP/batch.in.jsonl"
	assert_success
	assert_equal "$(remote_files srv/perf.git | wc -l)" 4
	not grep -r s3cret argv.log
	not grep -q s3cret <<<"$stderr"
	not grep -rq s3cret cache
	# HF_API_KEY comes first, as in the reference
	gen_records 1 key >one.jsonl
	HF_API_KEY=s3cret-token-value HF_TOKEN=wrong run --separate-stderr \
		perf-upload -s "git+$GIT_HTTP_URL/perf.git" --cache cache -p always one.jsonl
	assert_success
	# a wrong token: exit 2, the remote's error, the token never shown
	gen_records 1 wrong >two.jsonl
	HF_TOKEN=not-the-token run --separate-stderr \
		perf-upload -s "git+$GIT_HTTP_URL/perf.git" --cache cache -p always two.jsonl
	assert_failure 2
	grep -q 'Authentication failed' <<<"$stderr"
	not grep -q not-the-token <<<"$stderr"
	# a password in the URL is redacted in messages
	run --separate-stderr perf-upload -s "git+http://hf_user:pw-in-url@${GIT_HTTP_URL#http://}/perf.git" \
		--cache cache2 -p always two.jsonl
	assert_failure 2
	not grep -q pw-in-url <<<"$stderr"
	grep -q 'hf_user:\*\*\*@' <<<"$stderr"
	# no token at all: git may not prompt
	run --separate-stderr perf-upload -s "git+$GIT_HTTP_URL/perf.git" --cache cache3 -p always two.jsonl
	assert_failure 2
	grep -q 'terminal prompts disabled' <<<"$stderr"
}

@test "two uploaders racing over http: every record ends up in the remote exactly once" {
	lighttpd_or_skip
	mkdir srv
	bare_remote srv/perf.git
	git_http_start "$PWD/srv" tok
	local who b pids=()
	export HF_TOKEN=tok
	for who in a b; do
		(
			for b in 1 2 3 4 5 6; do
				gen_records 5 "$who$b" "model-$who" >"$who$b.jsonl"
				perf-upload -s "git+$GIT_HTTP_URL/perf.git" --cache "cache-$who" -p always \
					"$who$b.jsonl" >/dev/null 2>>"err-$who" || exit 1
			done
		) &
		pids+=($!)
	done
	wait "${pids[0]}"
	wait "${pids[1]}"
	assert_equal "$(remote_files srv/perf.git | wc -l)" 60
	assert_equal "$(remote_files srv/perf.git | uniq -d | wc -l)" 0
	assert_equal "$(git -C srv/perf.git rev-list --count main)" 12
	assert_equal "$(git -C srv/perf.git rev-list --merges --count main)" 0
	assert_equal "$(cat err-a err-b | grep -c '^uploaded → ')" 60
}

@test "--export of a store that is not there is exit 2; of an empty one a warning (issue 22 item 4)" {
	run --separate-stderr perf-upload --export -s missing -o all.gz
	assert_failure 2
	[[ $stderr == *"perf-upload: missing: no such store"* ]]
	mkdir empty
	run --separate-stderr perf-upload --export -s empty -o all.gz
	assert_success
	[[ $stderr == *"perf-upload: empty: the store holds no records"* ]]
	# Uploading is writing: the writer creates its store.
	run --separate-stderr perf-upload -s new -p always "$UP/batch.in.jsonl"
	assert_success
	[ -n "$(find new -name '*.json')" ]
}
