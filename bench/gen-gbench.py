#!/usr/bin/env python3
"""gen-gbench.py N REPS: a Google Benchmark JSON file of N benchmarks, each
with REPS repetition rows and the four aggregate rows, as the tool writes
it with --benchmark_repetitions (user counters, items and bytes per
second), on standard output. For bench/import.sh."""
import json
import random
import sys

n, reps = int(sys.argv[1]), int(sys.argv[2])
rng = random.Random(24)
rows = []
for i in range(n):
    name = "BM_Codec/%d/%d" % (i // 100, i % 100)
    base = 100.0 + i % 997
    times = [base * (1 + rng.uniform(-0.05, 0.05)) for _ in range(reps)]
    for r, t in enumerate(times):
        rows.append({"name": name, "family_index": i // 100, "per_family_instance_index": i % 100,
                     "run_name": name, "run_type": "iteration", "repetitions": reps,
                     "repetition_index": r, "threads": 1, "iterations": 100000,
                     "real_time": t, "cpu_time": t * 0.98, "time_unit": "ns",
                     "bytes_per_second": 1e9 / t * 64, "items_per_second": 1e9 / t,
                     "frames": 4.0})
    mean = sum(times) / reps
    for agg in ("mean", "median", "stddev", "cv"):
        rows.append({"name": name + "_" + agg, "family_index": i // 100,
                     "per_family_instance_index": i % 100, "run_name": name,
                     "run_type": "aggregate", "repetitions": reps, "threads": 1,
                     "aggregate_name": agg, "aggregate_unit": "percentage" if agg == "cv" else "time",
                     "iterations": reps, "real_time": mean, "cpu_time": mean * 0.98,
                     "time_unit": "ns", "bytes_per_second": 1e9 / mean * 64,
                     "items_per_second": 1e9 / mean, "frames": 4.0})
doc = {"context": {"date": "2026-06-16T00:00:00+00:00", "host_name": "bench",
                   "executable": "./codec_bench", "num_cpus": 16, "mhz_per_cpu": 3000,
                   "cpu_scaling_enabled": False,
                   "caches": [{"type": "Data", "level": 1, "size": 49152, "num_sharing": 2}],
                   "load_avg": [0.1, 0.1, 0.1], "library_build_type": "release"},
       "benchmarks": rows}
json.dump(doc, sys.stdout, indent=2)
sys.stdout.write("\n")
