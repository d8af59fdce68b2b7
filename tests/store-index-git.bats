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
}

# remote_of DIR: remote.git, a bare repository holding DIR's files as one commit.
remote_of() {
	bare_remote remote.git
	git -C "$1" init -q -b main
	git -C "$1" add -A
	git -C "$1" -c user.name=t -c user.email=t@t commit -q -m foreign
	git -C "$1" push -q "$PWD/remote.git" main
	rm -rf "$1/.git"
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

# entries: the (instant, path) of every entry of the remote's index, sorted.
entries() {
	local f
	for f in $(git -C remote.git ls-tree --name-only main .perfkite-index/cohorts/); do
		git -C remote.git cat-file blob "main:$f" | gzip -dc
	done | grep '^e' | cut -f 3,5 | LC_ALL=C sort
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
	local n
	for n in 1 2 3; do
		foreign add "$n"
		sed "s/\"commit_sha\": \"/&$n/" batch.jsonl >"b$n.jsonl"
		perf-upload -s "$REMOTE" -p always "b$n.jsonl" >/dev/null 2>&1
		run git -C remote.git show --name-only --format= main
		[[ $output == *".perfkite-index/MANIFEST"* ]]
		[ "$(grep -c "_${n}[0-9a-f]*\.json\$" <<<"$output")" -ge 12 ]
		same_answers "$REMOTE" batch.jsonl "upload $n"
	done
	# the MANIFEST's trees are those of the commit it is in
	git -C remote.git show main:.perfkite-index/MANIFEST >manifest
	sub=$(git -C remote.git rev-parse main:model-a)
	grep -q "^t	$sub	model-a\$" manifest
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
