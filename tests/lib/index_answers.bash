# shellcheck shell=bash
# The answers a store gives, compared with its index and without it
# (store-index.bats, store-index-git.bats). A file that loads this sets
# ANSWERS_RESEED=1 to include the reseed's answer.

# store_answers STORE BATCH: the gate's records, console and status, the seed
# check's verdict, (with ANSWERS_RESEED) the reseed's baseline shift for the
# batch's first record, and perf-changes --batch.
store_answers() {
	local rc=0 gen=$TESTS_DIR/lib/index_store.py
	perf-gate-rolling -s "$1" "$2" >gate.out 2>gate.err || rc=$?
	echo "status $rc"
	cat gate.out gate.err
	rc=0
	py "$gen" seed-source "$2" >first.jsonl
	perf-seed prepare -s "$1" --staging-root "$(mktemp -d staging-XXXXXXXX)" --intent-rationale r \
		--now 2026-08-02T00:00:00Z --source-result first.jsonl >seed.out 2>seed.err || rc=$?
	echo "seed status $rc"
	grep -v 'staging-' seed.err || true
	if [ "${ANSWERS_RESEED:-0}" = 1 ]; then
		rc=0
		py "$gen" seed-source "$2" REGRESSION >second.jsonl
		perf-seed reseed -s "$1" --staging-root "$(mktemp -d staging-XXXXXXXX)" --intent-rationale r \
			--now 2026-08-02T00:00:00Z --source-result second.jsonl >reseed.out 2>reseed.err || rc=$?
		echo "reseed status $rc"
		grep -hv 'staging-' reseed.out reseed.err || true
	fi
	rc=0
	perf-changes -s "$1" --batch "$2" >changes.out 2>&1 || rc=$?
	echo "changes status $rc"
	cat changes.out
}

# same_answers STORE BATCH WHAT: with the index and without, byte for byte,
# and the gate did its job (status 0 or 1).
same_answers() {
	store_answers "$1" "$2" >with.txt
	PERF_STORE_INDEX=0 store_answers "$1" "$2" >without.txt
	if ! cmp -s with.txt without.txt; then
		echo "$3: the index changed the answer" >&2
		diff without.txt with.txt | head -20 >&2
		return 1
	fi
	grep -q '^status [01]$' with.txt
}
