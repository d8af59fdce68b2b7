# shellcheck shell=bash
# The named-metrics suite (fixtures/tests/named-metrics/gen-suite.py):
# three benchmarks run nine times as scheduled-main builds, BM_Sort/1024
# 30% slower from the seventh run (index 6).

NAMED_SUITE=$FIXTURES/named-metrics/suite.jsonl

# named_store DIR [FIRST_RUNS]: a directory store holding the suite's
# records (only those of runs 0 .. FIRST_RUNS-1 when given).
named_store() {
	py - "$NAMED_SUITE" "$1" "${2:-99}" <<-'PY'
		import json, os, re, sys
		def s(v):
		    return re.sub(r"[^A-Za-z0-9._-]+", "_", str(v))
		for line in open(sys.argv[1]):
		    r = json.loads(line)
		    if int(r["timestamp"][11:13]) >= int(sys.argv[3]):
		        continue
		    d = os.path.join(sys.argv[2], s(r["model_id"]))
		    os.makedirs(d, exist_ok=True)
		    with open(os.path.join(d, "%s_%s.json" % (s(r["timestamp"]), s(r["commit_sha"]))), "w") as f:
		        f.write(line)
	PY
}

# named_compared OUT: the seventh run (the slower one) compared by
# perf-gate-rolling against a store of the six before it, into OUT.
named_compared() {
	named_store "$BATS_TEST_TMPDIR/named-store6" 6
	grep 'T06:00:00' "$NAMED_SUITE" |
		perf-gate-rolling --store "$BATS_TEST_TMPDIR/named-store6" >"$1" 2>/dev/null || [ $? -eq 1 ]
}
