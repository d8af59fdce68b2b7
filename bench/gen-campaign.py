#!/usr/bin/env python3
"""gen-campaign.py DIR [WORKLOADS VARIANTS NODE_CLASSES REPEATS]: a campaign
plan and complete results (default 20 x 5 x 3 x 30, warm-up 1) with
realistic noise, for make bench."""
import hashlib
import json
import os
import random
import sys

d = sys.argv[1]
nw, nv, nc, reps = (int(x) for x in (sys.argv[2:6] or (20, 5, 3, 30)))
rng = random.Random(5)
plan = {
    "schema_name": "vq.benchmark-plan/1", "plan_id": "bench", "baseline": "v0",
    "variants": [{"name": "v%d" % i, "runtime_digest": "sha-%d" % i, "build_flags": "-O2",
                  "build_cost_core_seconds": 3600 * i} for i in range(nv)],
    "workloads": [{"name": "w%02d" % i, "input_digest": "in-%d" % i,
                   "checks": [{"quantity": "total_energy", "abs_tolerance": 1e-8}]}
                  for i in range(nw)],
    "node_classes": ["class-%d" % i for i in range(nc)],
    "layout": {"mpi_ranks": 1, "threads_per_rank": 8},
    "warmup": 1, "repeats": reps, "seed": 42, "confidence": 0.95, "margin": 0.02}
sha = hashlib.sha256(json.dumps(plan, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
runs = []
for c in plan["node_classes"]:
    for w in range(nw):
        base = rng.uniform(10, 500)
        for v in range(nv):
            speed = 1 + 0.03 * v
            for b in range(0, reps + 1):
                runs.append({"workload": "w%02d" % w, "variant": "v%d" % v, "node_class": c,
                             "block": b, "status": "completed", "runtime_digest": "sha-%d" % v,
                             "hardware": {"cpu_model": "CPU " + c, "mpi_ranks": 1,
                                          "threads_per_rank": 8},
                             "steady_seconds": round(base / speed * rng.uniform(0.97, 1.03), 4),
                             "startup_seconds": 1.5, "cpu_seconds": 100.0, "peak_rss_mb": 900.0,
                             "scf_iterations": 12, "values": {"total_energy": -76.5}})
rng.shuffle(runs)
os.makedirs(d, exist_ok=True)
json.dump(plan, open(os.path.join(d, "plan.json"), "w"), indent=1)
json.dump({"schema_name": "vq.benchmark-results/1", "plan_sha256": sha, "runs": runs},
          open(os.path.join(d, "results.json"), "w"))
