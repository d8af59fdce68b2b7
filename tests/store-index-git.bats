#!/usr/bin/env bats
# The store index of a git store (perfkite(7) "Store index"): committed
# with the records, its coverage the directories' git trees; every answer
# read through it equals a full scan (PERF_STORE_INDEX=0) after foreign
# commits of every kind, and racing uploaders lose no record.

# shellcheck disable=SC2154 # bats sets status, output, lines, stderr
load lib/common
load lib/store
load lib/index_answers

GEN=$TESTS_DIR/lib/index_store.py

setup() {
	cd "$BATS_TEST_TMPDIR" || return 1
	unset PERF_STORE_INDEX PERF_STORE_THREADS
	export PERF_STORE_CACHE=$BATS_TEST_TMPDIR/cache
	REMOTE=git+file://$BATS_TEST_TMPDIR/remote.git
	unset HF_TOKEN HF_API_KEY HUGGINGFACE_HUB_TOKEN
}

teardown() {
	git_http_stop
}

# remote_of DIR: remote.git, a bare repository holding DIR's files as one commit.
remote_of() {
	bare_remote remote.git
	git -C "$1" init -q -b main
	git -C "$1" add -A
	git -C "$1" -c user.name=t -c user.email=t@t commit -q -m foreign
	git -C "$1" push -q "$PWD/remote.git" main
	rm -rf "$1/.git"
	# a fresh cache is a partial clone (sparse.h), its blobs fetched as needed
	git -C remote.git config uploadpack.allowFilter true
}

# cache_of CACHE: the clone under the cache directory CACHE.
cache_of() {
	find "$1" -mindepth 1 -maxdepth 1 -type d ! -name '*.tmp-*'
}

# checked_out CLONE: the record files its work tree holds.
checked_out() {
	find "$1" -path "$1/.*" -prune -o -name '*.json' -print | wc -l
}

# missing_blobs CLONE: the objects of its HEAD it does not hold (a partial clone's).
missing_blobs() {
	git -C "$1" rev-list --objects --missing=print HEAD | grep -c '^?' || true
}

# fetched CLONE REV: how many of the record blobs of REV's tree the clone
# holds (fetched), and how many it does not.
fetched() {
	git -C "$1" ls-tree -r "$2" | awk -F '\t' '$2 !~ /^\./ { split($1, f, " "); print f[3] }' |
		LC_ALL=C sort -u >blobs
	git -C "$1" rev-list --objects --missing=print "$2^{tree}" | sed -n 's/^?//p' |
		LC_ALL=C sort -u >missing
	echo "$(LC_ALL=C comm -23 blobs missing | wc -l) $(LC_ALL=C comm -12 blobs missing | wc -l)"
}

# served: srv/filtered.git (filtering allowed) and srv/plain.git (not), copies
# of remote.git served over http by lighttpd; HF_TOKEN is its password.
served() {
	lighttpd_or_skip
	mkdir -p srv
	git clone -q --bare remote.git srv/filtered.git
	git -C srv/filtered.git config uploadpack.allowFilter true
	git -C srv/filtered.git config http.receivepack true
	git clone -q --bare remote.git srv/plain.git
	git -C srv/plain.git config http.receivepack true
	export HF_TOKEN=pa5s-t0ken
	git_http_start "$PWD/srv" "$HF_TOKEN"
}

# foreign KIND SEED: a commit of another tool to the remote, one change of KIND.
foreign() {
	rm -rf foreign
	git clone -q remote.git foreign
	py "$GEN" mutate foreign "$1" "$2"
	git -C foreign add -A
	git -C foreign -c user.name=t -c user.email=t@t commit -q -m "$1" --allow-empty
	git -C foreign push -q origin main
}

# entries: every entry of the remote's index, sorted: its cohort file, its
# combination (flags and identity), instant and path.
entries() {
	local f
	for f in $(git -C remote.git ls-tree --name-only main .perfkite-index/cohorts/); do
		git -C remote.git cat-file blob "main:$f" | gzip -dc |
			awk -F '\t' -v k="${f##*/}" '$1 == "c" { c[n++] = substr($0, 3) }
				$1 == "e" { print k "\t" c[$2] "\t" $3 "\t" $5 }'
	done | LC_ALL=C sort
}

# opened STORE BATCH [ENV...]: how many record files the gate opened
# itself (git, refreshing its index in a fresh clone, opens some too).
opened() {
	local store=$1 batch=$2
	shift 2
	env "$@" PERF_FILE_BATCH=0 strace -f -e trace=openat,execve -o gate.trace \
		perf-gate-rolling -s "$store" "$batch" >/dev/null 2>&1 || true
	awk '/execve\(/ && !/perf-gate-rolling/ { git[$1] = 1 }
		/\.json"/ && !($1 in git) { n++ }
		END { print n + 0 }' gate.trace
}

@test "a git store: --reindex commits the index with the trees it covers; readers use it" {
	py "$GEN" make store 1500 61 batch.jsonl
	remote_of store
	run --separate-stderr perf-upload --reindex -s "$REMOTE"
	assert_success
	# one commit, the index alone, no *.json in it
	assert_equal "$(git -C remote.git rev-list --count main)" 2
	run git -C remote.git show --name-only --format= main
	[[ $output == *".perfkite-index/MANIFEST"* ]]
	[[ $output != *".json"* ]]
	# a "t" line per directory, the top's a SHA-256 of its listing
	git -C remote.git show main:.perfkite-index/MANIFEST >manifest
	assert_equal "$(grep -c '^d	' manifest)" "$(grep -c '^t	' manifest)"
	grep -Eq '^t	[0-9a-f]{64}	\.$' manifest
	sub=$(git -C remote.git rev-parse main:model-a)
	grep -q "^t	$sub	model-a\$" manifest
	# a fresh clone reads the answers of a full scan through it, opening few files
	same_answers "$REMOTE" batch.jsonl "fresh index"
	if command -v strace >/dev/null && strace -o /dev/null true 2>/dev/null; then
		with=$(opened "$REMOTE" batch.jsonl)
		without=$(opened "$REMOTE" batch.jsonl PERF_STORE_INDEX=0)
		echo "# record files opened: $with with the index, $without without" >&3
		[ "$without" -ge 1490 ]
		[ "$with" -lt $((without / 4)) ]
	fi
	# nothing changed: a second --reindex commits nothing
	perf-upload --reindex -s "$REMOTE"
	assert_equal "$(git -C remote.git rev-list --count main)" 2
}

@test "a git store: after foreign commits of every kind the answer equals a full scan" {
	py "$GEN" make store 1200 71 batch.jsonl
	remote_of store
	perf-upload --reindex -s "$REMOTE"
	local kind n=0
	for kind in add remove replace adddir renamedir nested bad rmindex \
		truncate-cohort truncate-manifest drop-cohort; do
		n=$((n + 1))
		foreign "$kind" "$n"
		same_answers "$REMOTE" batch.jsonl "$kind"
		perf-upload --reindex -s "$REMOTE"
		same_answers "$REMOTE" batch.jsonl "$kind, reindexed"
	done
	# the last --reindex put back the cohort files the last foreign commit dropped
	run git -C remote.git show --name-only --format= main
	[[ $output == *".perfkite-index/cohorts/"* ]]
	assert_equal "$(git -C remote.git log -1 --format=%s main)" "perfkite: the store index built anew"
}

@test "a git store: an upload commits its records and the index in one commit, and keeps it current" {
	py "$GEN" make store 1000 81 batch.jsonl
	remote_of store
	perf-upload --reindex -s "$REMOTE"
	local kind n=0
	# each upload after a foreign commit of one kind: the directories it
	# moved are listed from HEAD and only their new or replaced files read
	for kind in add replace remove renamedir adddir nested bad top; do
		n=$((n + 1))
		foreign "$kind" "$n"
		sed "s/\"commit_sha\": \"/&$n/" batch.jsonl >"b$n.jsonl"
		perf-upload -s "$REMOTE" -p always "b$n.jsonl" >/dev/null 2>&1
		run git -C remote.git show --name-only --format= main
		[[ $output == *".perfkite-index/MANIFEST"* ]]
		[ "$(grep -c "_${n}[0-9a-f]*\.json\$" <<<"$output")" -ge 12 ]
		same_answers "$REMOTE" batch.jsonl "upload $n, after $kind"
	done
	# the MANIFEST's trees are those of the commit it is in
	git -C remote.git show main:.perfkite-index/MANIFEST >manifest
	local dir
	dir=$(git -C remote.git ls-tree -d --name-only main | grep -v '^\.' | head -1)
	sub=$(git -C remote.git rev-parse "main:$dir")
	grep -q "^t	$sub	$dir\$" manifest
	# another clone reads it without reading any directory whole
	if command -v strace >/dev/null && strace -o /dev/null true 2>/dev/null; then
		rm -rf "$PERF_STORE_CACHE"
		perf-gate-rolling -s "$REMOTE" batch.jsonl >/dev/null 2>&1 || true
		with=$(opened "$REMOTE" batch.jsonl)
		without=$(opened "$REMOTE" batch.jsonl PERF_STORE_INDEX=0)
		echo "# record files opened after the uploads: $with with the index, $without without" >&3
		[ "$with" -lt $((without / 2)) ]
	fi
	# the index the uploads kept equals one built from nothing, entry for entry
	entries >kept
	perf-upload --reindex -s "$REMOTE"
	entries >fresh
	[ "$(wc -l <kept)" -ge 1000 ]
	assert_equal "$(cat kept)" "$(cat fresh)"
	# a store without an index gets none from an upload
	rm -rf remote.git "$PERF_STORE_CACHE" plain
	py "$GEN" make plain 50 82 batch2.jsonl
	remote_of plain
	perf-upload -s "$REMOTE" -p always batch2.jsonl >/dev/null 2>&1
	run git -C remote.git ls-tree --name-only main
	[[ $output != *".perfkite-index"* ]]
}

@test "a git store: an upload that loses a push race takes the remote's index; no record lost, answers equal" {
	py "$GEN" make store 800 91 batch.jsonl
	remote_of store
	perf-upload --reindex -s "$REMOTE"
	perf-gate-rolling -s "$REMOTE" batch.jsonl >/dev/null 2>&1 || true
	sed 's/"commit_sha": "/&other/' batch.jsonl >other.jsonl
	sed 's/"commit_sha": "/&mine/' batch.jsonl >mine.jsonl
	racing_git "$REMOTE" "$PWD/other.jsonl"
	run --separate-stderr env PATH="$PWD/wrap:$PATH" perf-upload -s "$REMOTE" -p always mine.jsonl
	assert_success
	[ -e raced ]
	# both batches are there, each record once
	mine=$(remote_files remote.git | grep -c '_mine')
	[ "$mine" -ge 12 ]
	assert_equal "$(remote_files remote.git | grep -c '_other')" "$mine"
	assert_equal "$(remote_files remote.git | grep '_mine' | sort -u | wc -l)" "$mine"
	git -C remote.git fsck --no-dangling >/dev/null
	# the index is the racer's, stale for this upload's records: never wrong
	same_answers "$REMOTE" batch.jsonl "after the race"
	same_answers "$REMOTE" mine.jsonl "after the race, this upload's cohorts"
	perf-upload --reindex -s "$REMOTE"
	same_answers "$REMOTE" mine.jsonl "after the race, reindexed"
}

@test "a git store: perf-seed's compare-and-swap commit carries the index too" {
	py "$GEN" make store 600 5 batch.jsonl
	remote_of store
	perf-upload --reindex -s "$REMOTE"
	py "$GEN" seed-source batch.jsonl | jq -c '.workload_id = "fresh-wl"' >fresh.jsonl
	perf-seed prepare -s "$REMOTE" --staging-root staging --intent-rationale r \
		--now 2026-08-02T00:00:00Z --source-result fresh.jsonl >/dev/null 2>&1
	run --separate-stderr perf-seed upload "$(find staging/.seed-reservations -name manifest)" \
		-s "$REMOTE" --confirm
	assert_success
	# the seed and the index in the seed's one commit, the trees those of that commit
	run git -C remote.git show --name-only --format= main
	[[ $output == *"_seed.json"* ]]
	[[ $output == *".perfkite-index/MANIFEST"* ]]
	git -C remote.git show main:.perfkite-index/MANIFEST >manifest
	dir=$(git -C remote.git show --name-only --format= main | grep '_seed.json$' | xargs dirname)
	grep -q "^t	$(git -C remote.git rev-parse "main:$dir")	$dir\$" manifest
	# the index names the seed: its cohort is read through it
	for f in $(git -C remote.git ls-tree --name-only main .perfkite-index/cohorts/); do
		git -C remote.git cat-file blob "main:$f" | gzip -dc
	done | grep -q '_seed\.json$'
	jq -c '.workload_id = "fresh-wl"' batch.jsonl >fresh-batch.jsonl
	same_answers "$REMOTE" fresh-batch.jsonl "after the seed"
}

@test "a warm reader of a git store runs no git reset, clean or rebase; a killed writer's leftovers are still cleared" {
	py "$GEN" make store 300 7 batch.jsonl
	remote_of store
	perf-upload --reindex -s "$REMOTE"
	perf-gate-rolling -s "$REMOTE" batch.jsonl >first.out 2>&1 || true
	mkdir -p wrap
	cat >wrap/git <<-WRAP
		#!/bin/bash
		echo "\$*" >>"$PWD/git.log"
		exec "$(command -v git)" "\$@"
	WRAP
	chmod +x wrap/git
	PATH="$PWD/wrap:$PATH" perf-gate-rolling -s "$REMOTE" batch.jsonl >warm.out 2>&1 || true
	cmp first.out warm.out
	grep -q '^fetch ' git.log
	not grep -Eq '^(-c core.editor=true )?(reset|clean|rebase) ' git.log
	# a writer killed after writing in the cache (it took the clean mark
	# when it opened): the next reader clears what it left
	cache=$(find "$PERF_STORE_CACHE" -mindepth 1 -maxdepth 1 -type d)
	[ -e "$cache/.git/perfkite-clean" ]
	rm "$cache/.git/perfkite-clean"
	echo '{"workload_id": "stray"}' >"$cache/model-a/stray.json"
	: >git.log
	PATH="$PWD/wrap:$PATH" perf-gate-rolling -s "$REMOTE" batch.jsonl >after.out 2>&1 || true
	grep -q '^reset ' git.log
	[ ! -e "$cache/model-a/stray.json" ]
	cmp first.out after.out
}

@test "4 uploaders at once, 5 rounds, to an indexed git remote: every record once, answers equal a full scan" {
	py "$GEN" make store 400 8 batch.jsonl
	remote_of store
	perf-upload --reindex -s "$REMOTE"
	local p r
	for p in 1 2 3 4; do
		gen_records 5 "p$p" "model-a" >"racer$p.jsonl"
	done
	for p in 1 2 3 4; do
		(
			trap - DEBUG
			for r in 1 2 3 4 5; do
				sed -n "${r}p" "racer$p.jsonl" >"one$p.jsonl"
				perf-upload -s "$REMOTE" --cache "$PWD/cache$p" -p always "one$p.jsonl" \
					>/dev/null 2>>"race$p.err" || echo "round $r: $?" >>"race$p.failed"
			done
		) &
	done
	wait
	# an upload that lost every retry keeps its commit for the next run: flush
	for p in 1 2 3 4; do
		perf-upload -s "$REMOTE" --cache "$PWD/cache$p" -p always /dev/null >/dev/null 2>&1
	done
	assert_equal "$(remote_files remote.git | grep -c '_p[1-4]-')" 20
	assert_equal "$(remote_files remote.git | grep '_p[1-4]-' | sort -u | wc -l)" 20
	git -C remote.git fsck --no-dangling >/dev/null
	same_answers "$REMOTE" batch.jsonl "after the race"
	gen_records 1 p1 model-a >one.jsonl
	same_answers "$REMOTE" one.jsonl "after the race, the racers' cohort"
}

@test "a fresh agent over http: a partial clone of what the gate reads; a server that cannot filter gives a full one; both answer as a full scan" {
	py "$GEN" make store 1500 83 batch.jsonl
	remote_of store
	perf-upload --reindex -s "$REMOTE"
	served
	local name url dir
	for name in filtered plain; do
		url=git+$GIT_HTTP_URL/$name.git
		PERF_STORE_CACHE=$PWD/c-$name store_answers "$url" batch.jsonl >with.txt
		PERF_STORE_CACHE=$PWD/full-$name PERF_STORE_INDEX=0 store_answers "$url" batch.jsonl >without.txt
		diff without.txt with.txt
		grep -q '^status [01]$' with.txt
		dir=$(cache_of "c-$name")
		# the work tree holds the index and the records read, not the store
		[ -e "$dir/.git/perfkite-sparse" ]
		[ -s "$dir/.perfkite-index/MANIFEST" ]
		echo "# $name: $(checked_out "$dir") record files checked out, $(missing_blobs "$dir") blobs not fetched" >&3
		[ "$(checked_out "$dir")" -lt 400 ]
		[ "$(checked_out "$(cache_of "full-$name")")" -ge 1490 ]
		if [ "$name" = filtered ]; then
			[ "$(missing_blobs "$dir")" -ge 1000 ]
		else
			assert_equal "$(missing_blobs "$dir")" 0
		fi
	done
}

@test "a partial clone's cache keeps what it fetched; a later run that needs more checks out more" {
	py "$GEN" make store 1500 84 batch.jsonl
	remote_of store
	perf-upload --reindex -s "$REMOTE"
	served
	local url=git+$GIT_HTTP_URL/filtered.git dir first missing
	head -2 batch.jsonl >two.jsonl
	PERF_STORE_CACHE=$PWD/c store_answers "$url" two.jsonl >with.txt
	PERF_STORE_CACHE=$PWD/full PERF_STORE_INDEX=0 store_answers "$url" two.jsonl >without.txt
	diff without.txt with.txt
	dir=$(cache_of c)
	first=$(checked_out "$dir")
	missing=$(missing_blobs "$dir")
	# the whole batch: more cohorts, their records fetched on top
	PERF_STORE_CACHE=$PWD/c store_answers "$url" batch.jsonl >with.txt
	PERF_STORE_CACHE=$PWD/full PERF_STORE_INDEX=0 store_answers "$url" batch.jsonl >without.txt
	diff without.txt with.txt
	echo "# checked out: $first, then $(checked_out "$dir"); blobs missing: $missing, then $(missing_blobs "$dir")" >&3
	[ "$(checked_out "$dir")" -gt "$first" ]
	[ "$(missing_blobs "$dir")" -lt "$missing" ]
	[ "$(missing_blobs "$dir")" -ge 1000 ]
	# the same batch again: nothing more fetched
	missing=$(missing_blobs "$dir")
	PERF_STORE_CACHE=$PWD/c store_answers "$url" batch.jsonl >again.txt
	diff with.txt again.txt
	assert_equal "$(missing_blobs "$dir")" "$missing"
	# a reader of everything (PERF_STORE_INDEX=0) checks the whole tree out
	PERF_STORE_CACHE=$PWD/c PERF_STORE_INDEX=0 store_answers "$url" batch.jsonl >all.txt
	diff without.txt all.txt
	[ "$(checked_out "$dir")" -ge 1490 ]
	[ ! -e "$dir/.git/perfkite-sparse" ]
}

@test "a partial clone: records a foreign commit removed are gone, a record added at the top or anywhere is read" {
	py "$GEN" make store 1200 85 batch.jsonl
	remote_of store
	# (--reindex reads every record: a cache of its own)
	perf-upload --reindex -s "$REMOTE" --cache "$PWD/re"
	store_answers "$REMOTE" batch.jsonl >/dev/null
	dir=$(cache_of "$PERF_STORE_CACHE")
	[ -e "$dir/.git/perfkite-sparse" ]
	# another tool removes every record this cache checked out
	rm -rf foreign
	git clone -q remote.git foreign
	(cd "$dir" && find . -path './.*' -prune -o -name '*.json' -print) >read.txt
	[ "$(wc -l <read.txt)" -ge 10 ]
	(cd foreign && xargs -d '\n' git rm -q -- <../read.txt)
	git -C foreign -c user.name=t -c user.email=t@t commit -q -m remove
	git -C foreign push -q origin main
	same_answers "$REMOTE" batch.jsonl "records removed"
	while IFS= read -r f; do [ ! -e "$dir/$f" ]; done <read.txt
	# a record at the top of the store, and one in a model's directory
	foreign top 1
	same_answers "$REMOTE" batch.jsonl "a record at the top"
	[ -e "$dir/top_1.json" ]
	foreign add 2
	same_answers "$REMOTE" batch.jsonl "a record added"
	# the top's coverage names its directories: a change below one leaves it
	perf-upload --reindex -s "$REMOTE" --cache "$PWD/re"
	top=$(git -C remote.git show main:.perfkite-index/MANIFEST | grep '^t	[0-9a-f]*	\.$')
	foreign add 3
	perf-upload --reindex -s "$REMOTE" --cache "$PWD/re"
	assert_equal "$(git -C remote.git show main:.perfkite-index/MANIFEST | grep '^t	[0-9a-f]*	\.$')" "$top"
	foreign top 4
	perf-upload --reindex -s "$REMOTE" --cache "$PWD/re"
	[ "$(git -C remote.git show main:.perfkite-index/MANIFEST | grep '^t	[0-9a-f]*	\.$')" != "$top" ]
	same_answers "$REMOTE" batch.jsonl "after the reindex"
}

@test "uploads from a partial clone over http: one commit with the records and the index, every object on the remote" {
	py "$GEN" make store 1000 86 batch.jsonl
	remote_of store
	perf-upload --reindex -s "$REMOTE"
	served
	local url=git+$GIT_HTTP_URL/filtered.git n dir got
	for n in 1 2; do
		rm -rf "c$n"
		sed "s/\"commit_sha\": \"/&$n/" batch.jsonl >"b$n.jsonl"
		# (the second's model-a records go to a directory the store lacks)
		if [ "$n" = 2 ]; then
			sed -i 's/"model-a"/"model-new"/' b2.jsonl
			grep -q model-new b2.jsonl
		fi
		run --separate-stderr perf-upload -s "$url" --cache "$PWD/c$n" -p always "b$n.jsonl"
		assert_success
		dir=$(cache_of "c$n")
		# the index is updated from itself, HEAD's trees and the records
		# written: of the ~1000 record files the store held before (HEAD^)
		# the fresh partial clone fetched none (the index's files it has)
		got=$(fetched "$dir" HEAD^)
		echo "# upload $n of $(wc -l <"b$n.jsonl") records: record blobs fetched, not: $got" >&3
		[ "${got#* }" -ge 900 ]
		[ "${got% *}" -le 3 ]
		[ -e "$dir/.git/perfkite-sparse" ]
		assert_equal "$(git -C srv/filtered.git rev-list --count main)" $((2 + n))
		run git -C srv/filtered.git show --name-only --format= main
		[[ $output == *".perfkite-index/MANIFEST"* ]]
		[ "$(grep -c "_${n}[0-9a-f]*\.json\$" <<<"$output")" -ge 12 ]
		remote_whole srv/filtered.git
	done
	# the index the uploads kept equals one built from nothing
	rm -rf remote.git
	git clone -q --bare srv/filtered.git remote.git
	entries >kept
	perf-upload --reindex -s "$REMOTE" --cache "$PWD/re"
	entries >fresh
	assert_equal "$(cat kept)" "$(cat fresh)"
	PERF_STORE_CACHE=$PWD/pc store_answers "git+$GIT_HTTP_URL/filtered.git" b2.jsonl >with.txt
	PERF_STORE_CACHE=$PWD/fc PERF_STORE_INDEX=0 store_answers "$REMOTE" b2.jsonl >without.txt
	diff without.txt with.txt
	# racing uploaders, each a fresh partial clone: every record once
	local p pids=()
	for p in 1 2 3; do
		gen_records 3 "q$p" model-a >"racer$p.jsonl"
		(
			trap - DEBUG
			perf-upload -s "$url" --cache "$PWD/race$p" -p always "racer$p.jsonl" \
				>/dev/null 2>"race$p.err" || echo "$?" >"race$p.failed"
		) &
		pids+=($!)
	done
	# (the uploaders, not the http server)
	wait "${pids[@]}"
	for p in 1 2 3; do
		perf-upload -s "$url" --cache "$PWD/race$p" -p always /dev/null >/dev/null 2>&1
	done
	assert_equal "$(remote_files srv/filtered.git | grep -c '_q[1-3]-')" 9
	remote_whole srv/filtered.git
	git -C srv/filtered.git fsck --no-dangling >/dev/null
}
