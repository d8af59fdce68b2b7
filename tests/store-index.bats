#!/usr/bin/env bats
# The store index (perfkite(7) "Store index"): every answer read through it
# equals a full scan (PERF_STORE_INDEX=0), on random stores and after every
# kind of foreign change; kills leave it current or detectably stale; a
# FastVideo-layout store reads the same before and after --reindex.

# shellcheck disable=SC2154 # bats sets status, output, lines, stderr
load lib/common
load lib/store
load lib/index_answers

GEN=$TESTS_DIR/lib/index_store.py
# shellcheck disable=SC2034 # read by lib/index_answers.bash
ANSWERS_RESEED=1

setup() {
	cd "$BATS_TEST_TMPDIR" || return 1
	unset PERF_STORE_INDEX PERF_STORE_THREADS PERF_STORE_CACHE
}

# same_gate STORE BATCH WHAT: the gate's answer with the index and without.
same_gate() {
	local a=0 b=0
	perf-gate-rolling -s "$1" "$2" >with.txt 2>&1 || a=$?
	PERF_STORE_INDEX=0 perf-gate-rolling -s "$1" "$2" >without.txt 2>&1 || b=$?
	if [ "$a" != "$b" ] || ! cmp -s with.txt without.txt; then
		echo "$3: the index changed the answer (status $a, without $b)" >&2
		diff without.txt with.txt | head -20 >&2
		return 1
	fi
}

@test "--reindex writes the index where the reference's loader never looks, and no *.json" {
	py "$GEN" make store 300 1 batch.jsonl
	run --separate-stderr perf-upload --reindex -s store
	assert_success
	[ -s store/.perfkite-index/MANIFEST ]
	[ -n "$(ls store/.perfkite-index/cohorts)" ]
	[ -z "$(find store/.perfkite-index -name '*.json')" ]
	head -n 1 store/.perfkite-index/MANIFEST | grep -qx 'perfkite-index 1 1'
	# one entry per indexed record file, in the cohort files
	entries=$(for f in store/.perfkite-index/cohorts/*; do gzip -dc "$f"; done | grep -c '^e	')
	always=$(grep -c '^a	' store/.perfkite-index/MANIFEST || true)
	assert_equal "$((entries + always))" "$(find store -path '*/.*' -prune -o -name '*.json' -print | wc -l)"
}

@test "--reindex refuses records, and a store that is not there; PERF_STORE_INDEX=0 refuses it" {
	run --separate-stderr perf-upload --reindex -s nowhere/store x.jsonl
	assert_failure 2
	mkdir store
	run --separate-stderr env PERF_STORE_INDEX=0 perf-upload --reindex -s store
	assert_failure 2
	[[ $stderr == *"turned off"* ]]
	[ ! -e store/.perfkite-index ]
}

@test "the gate reads a few files through the index, all of them without" {
	command -v strace >/dev/null || skip "strace is not installed"
	strace -o /dev/null true 2>/dev/null || skip "cannot trace here"
	py "$GEN" make store 2000 2 batch.jsonl
	perf-upload --reindex -s store
	PERF_FILE_BATCH=0 strace -f -e trace=openat -o with.trace perf-gate-rolling -s store batch.jsonl >/dev/null 2>&1 || true
	PERF_STORE_INDEX=0 PERF_FILE_BATCH=0 strace -f -e trace=openat -o without.trace \
		perf-gate-rolling -s store batch.jsonl >/dev/null 2>&1 || true
	with=$(grep -c '\.json"' with.trace || true)
	without=$(grep -c '\.json"' without.trace || true)
	echo "# record files opened: $with with the index, $without without" >&3
	[ "$without" -ge 1990 ]
	[ "$with" -lt $((without / 4)) ]
	# an upload left the index current: no directory is read whole after it
	sed 's/"commit_sha": "/&up/' batch.jsonl >up.jsonl
	perf-upload -s store -p always up.jsonl >/dev/null 2>&1
	PERF_FILE_BATCH=0 strace -f -e trace=openat -o after.trace \
		perf-gate-rolling -s store batch.jsonl >/dev/null 2>&1 || true
	after=$(grep -c '\.json"' after.trace || true)
	echo "# after an upload: $after" >&3
	[ "$after" -lt $((without / 4)) ]
}

@test "random stores: the gate, the seed checks and change points equal a full scan" {
	for seed in 11 12; do
		rm -rf store
		py "$GEN" make store 4000 "$seed" batch.jsonl
		same_answers store batch.jsonl "no index, seed $seed"
		perf-upload --reindex -s store
		same_answers store batch.jsonl "fresh index, seed $seed"
	done
}

@test "after every kind of foreign change the answer still equals a full scan" {
	py "$GEN" make base 1500 21 batch.jsonl
	perf-upload --reindex -s base
	local kind n=0
	for kind in add remove replace adddir renamedir nested bad rmindex \
		truncate-cohort truncate-manifest drop-cohort; do
		rm -rf store && cp -a base store
		n=$((n + 1))
		py "$GEN" mutate store "$kind" "$n"
		same_answers store batch.jsonl "$kind"
		# and a writer's update makes the index current again
		perf-upload --reindex -s store
		same_answers store batch.jsonl "$kind, reindexed"
	done
}

@test "several foreign changes after an upload kept the index: still a full scan's answer" {
	py "$GEN" make store 2000 31 batch.jsonl
	perf-upload --reindex -s store
	local kind n=0
	for kind in add replace nested remove adddir; do
		n=$((n + 1))
		py "$GEN" mutate store "$kind" "$n"
		# an upload updates the index (reading again only what changed)
		sed "s/\"commit_sha\": \"/&$n/" batch.jsonl >"b$n.jsonl"
		perf-upload -s store -p always "b$n.jsonl" >/dev/null 2>&1
		same_answers store batch.jsonl "upload after $kind"
	done
	# the uploads kept it: its generation moved on
	head -n 1 store/.perfkite-index/MANIFEST | grep -qv 'perfkite-index 1 1$'
}

@test "an upload keeps an existing index current; a store without one gets none" {
	py "$GEN" make store 500 41 batch.jsonl
	cp -a store plain
	perf-upload --reindex -s store
	perf-upload -s store -p always batch.jsonl >/dev/null 2>&1
	perf-upload -s plain -p always batch.jsonl >/dev/null 2>&1
	[ ! -e plain/.perfkite-index ]
	# the index names the uploaded records: no directory had to be read again
	for f in store/.perfkite-index/cohorts/*; do gzip -dc "$f"; done >entries
	n=$(jq -r '.model_id' batch.jsonl | sort -u | wc -l)
	[ "$n" -ge 1 ]
	run grep -c '2026-08-01T00_00_' entries
	[ "$output" -ge 12 ]
	cp -a store fresh
	rm -rf fresh/.perfkite-index
	perf-upload --reindex -s fresh
	same_answers store batch.jsonl "after the upload"
	# the index the upload kept equals one built from nothing, entry for entry
	for f in fresh/.perfkite-index/cohorts/*; do gzip -dc "$f"; done >fresh-entries
	assert_equal "$(grep '^e' entries | cut -f 3,5 | sort)" "$(grep '^e' fresh-entries | cut -f 3,5 | sort)"
}

@test "killed at every Nth file system call of an upload: the index is current or detectably stale" {
	command -v strace >/dev/null || skip "strace is not installed"
	strace -o /dev/null true 2>/dev/null || skip "cannot trace here"
	py "$GEN" make base 150 51 batch.jsonl
	perf-upload --reindex -s base
	local sc n rc kills=0
	for sc in openat write rename unlink; do
		for n in $(seq 1 300); do
			rm -rf store && cp -a base store
			rc=0
			ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
				strace -o /dev/null -f -e trace="$sc" -e inject="$sc:signal=KILL:when=$n" \
				perf-upload -s store -p always batch.jsonl >/dev/null 2>&1 || rc=$?
			[ "$rc" -eq 0 ] && break
			[ "$rc" -eq 137 ] || { echo "$sc #$n: status $rc" >&2; false; }
			kills=$((kills + 1))
			same_gate store batch.jsonl "$sc #$n"
			# and the next upload leaves it current
			perf-upload -s store -p always batch.jsonl >/dev/null 2>&1 || true
			same_gate store batch.jsonl "$sc #$n, uploaded again"
		done
	done
	echo "# $kills kills" >&3
	[ "$kills" -gt 40 ]
}

@test "a FastVideo-layout store: byte-identical answers and the reference's loading before and after --reindex" {
	cp -a "$ROOT_DIR/fixtures/store" store
	perf-normalize "$ROOT_DIR/fixtures/records/perf_wan-t2v-1.3b-2gpu_20260616T000000Z.json" \
		>batch.jsonl 2>/dev/null
	store_answers store batch.jsonl >before.txt
	(cd "$FIXTURES" && py -c '
import json, sys, reference
recs, warn = reference.load(sys.argv[1])
batch = [json.loads(l) for l in open(sys.argv[2])]
print(json.dumps([p for p, _ in recs]), warn)
print(json.dumps(reference.compare_case(sys.argv[1], batch, None)))' \
		"$BATS_TEST_TMPDIR/store" "$BATS_TEST_TMPDIR/batch.jsonl") >ref-before.txt
	perf-upload --reindex -s store
	[ -d store/.perfkite-index ]
	store_answers store batch.jsonl >after.txt
	(cd "$FIXTURES" && py -c '
import json, sys, reference
recs, warn = reference.load(sys.argv[1])
batch = [json.loads(l) for l in open(sys.argv[2])]
print(json.dumps([p for p, _ in recs]), warn)
print(json.dumps(reference.compare_case(sys.argv[1], batch, None)))' \
		"$BATS_TEST_TMPDIR/store" "$BATS_TEST_TMPDIR/batch.jsonl") >ref-after.txt
	cmp before.txt after.txt
	cmp ref-before.txt ref-after.txt
	grep -q PASS gate.out
	# the reference's glob (Python's, hidden paths skipped) sees no index file
	run py -c 'import glob, sys; print("\n".join(sorted(glob.glob(sys.argv[1] + "/**/*", recursive=True))))' store
	[[ $output != *perfkite-index* ]]
}
