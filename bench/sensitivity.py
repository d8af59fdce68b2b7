#!/usr/bin/env python3
"""Validates the sensitivity perf-gate-rolling reports against simulation.

For each cohort of known noise (normal or log-normal run-to-run noise at a
coefficient of variation from 0.5% to 10%), HISTORIES simulated histories
of 20 trusted scheduled-main runs, each its own comparison cohort, go to
perf-gate-rolling as --history streams, with five independent current
runs per history (compared with the same history). Three metrics per run test both directions and both floors:
latency (10 s: the 8% floor binds), throughput (4.5/s, higher is better)
and dit_time_s (4 s: the 0.25 s absolute floor, 6.25%, binds over 5%).

  * false-alarm rate: the mean reported false_alarm_rate against the
    share of current runs without any change whose threshold was exceeded;
  * detectable regression: the mean reported mde_percent against the
    regression that perf-gate-rolling catches in 80% of the histories,
    found by running it with every current slowed by factors of the
    reported value and interpolating where the caught share crosses 80%.

Passes when every false-alarm rate is within 2 percentage points and
every detectable regression within 20%. Prints the table; exit 1 if not.

usage: sensitivity.py [--histories N] [--quick] [--seed S]
"""
import argparse
import json
import math
import os
import random
import subprocess
import sys
import tempfile

METRICS = (("latency", 10.0, False), ("throughput", 4.5, True), ("dit_time_s", 4.0, False))
CHUNK = 100
REPEATS = 5	# current runs per history, against the same history
FACTORS = (0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2, 1.35, 1.5, 1.8)
IDENT = {"benchmark_version": 2, "recipe_fingerprint": "sim", "hardware_profile_id": "hw",
         "software_profile_id": "sw"}


def noise(rng, dist, cv):
    """A draw of multiplicative (log-normal) or additive (normal) noise."""
    if dist == "normal":
        return rng.gauss(0, cv)
    s = math.sqrt(math.log(1 + cv * cv))
    return math.exp(rng.gauss(-s * s / 2, s))


def value(mu, delta, higher, dist, e):
    shift = 1 - delta if higher else 1 + delta
    return mu * shift + mu * e if dist == "normal" else mu * shift * e


def record(h, ts, vals, current):
    r = {"model_id": "sim-%d" % h, "timestamp": ts, "commit_sha": "c%039d" % h,
         "gpu_type": "sim", "workload_id": "sim-%d" % h, "variant_id": "v"}
    r.update(IDENT)
    r.update(vals)
    r.update({"run_source": "pr" if current else "scheduled_main", "success": True,
              "baseline_eligible": not current, "result_schema_version": 2})
    return r


def gate(gate_bin, store, history, batch):
    p = subprocess.run([gate_bin, "--store", store, "--history", history],
                       input="".join(json.dumps(r) + "\n" for r in batch),
                       capture_output=True, text=True)
    if p.returncode not in (0, 1):
        sys.exit("%s exited with status %d on %d records (history %s): %s" % (
            gate_bin, p.returncode, len(batch), history, p.stderr[-2000:]))
    return [json.loads(l)["comparison"]["metrics"] for l in p.stdout.splitlines()]


def gate_chunks(gate_bin, store, histories, batch):
    """One run per chunk of CHUNK histories: the scan is records x queries."""
    out = []
    for i, h in enumerate(histories):
        out += gate(gate_bin, store, h, batch[i * CHUNK * REPEATS:(i + 1) * CHUNK * REPEATS])
    return out


def cohort(gate_bin, tmp, dist, cv, n, seed):
    rng = random.Random("%s-%s-%d" % (dist, cv, seed))
    hists = []
    for c in range(0, n, CHUNK):
        hists.append(os.path.join(tmp, "history-%d.jsonl" % c))
        with open(hists[-1], "w") as f:
            for h in range(c, min(n, c + CHUNK)):
                for k in range(20):
                    vals = {m: value(mu, 0, hi, dist, noise(rng, dist, cv))
                            for m, mu, hi in METRICS}
                    f.write(json.dumps(record(h, "2026-01-%02dT00:00:00+00:00" % (k + 1),
                                              vals, False)) + "\n")
    # One noise draw per history and metric, kept for every regression size.
    eps = [[{m: noise(rng, dist, cv) for m, _, _ in METRICS} for _ in range(REPEATS)]
           for _ in range(n)]

    def batch(deltas):
        return [record(h, "2026-02-01T00:00:00+00:00",
                       {m: value(mu, deltas[m], hi, dist, e[m]) for m, mu, hi in METRICS},
                       True) for h in range(n) for e in eps[h]]
    store = os.path.join(tmp, "empty-store")
    os.makedirs(store, exist_ok=True)
    base = gate_chunks(gate_bin, store, hists, batch({m: 0.0 for m, _, _ in METRICS}))
    rows = []
    rep = {}
    for m, _, _ in METRICS:
        far = [b[m]["false_alarm_rate"] for b in base]
        mde = [b[m]["mde_percent"] for b in base]
        emp = sum(b[m]["threshold_exceeded"] for b in base) / len(base)
        rep[m] = (sum(far) / len(base), emp, sum(mde) / len(base))
    caught = {m: [] for m, _, _ in METRICS}
    for f in FACTORS:
        out = gate_chunks(gate_bin, store, hists, batch({m: f * rep[m][2] for m, _, _ in METRICS}))
        for m, _, _ in METRICS:
            caught[m].append((f * rep[m][2], sum(o[m]["threshold_exceeded"] for o in out) / len(out)))
    for m, _, _ in METRICS:
        far_rep, far_emp, mde_rep = rep[m]
        pts, mde_emp = caught[m], None
        for (d0, p0), (d1, p1) in zip(pts, pts[1:]):
            if p0 < 0.8 <= p1:
                mde_emp = d0 + (0.8 - p0) * (d1 - d0) / (p1 - p0)
                break
        if mde_emp is None and pts[0][1] >= 0.8:
            mde_emp = pts[0][0]	# caught at 0.6x already: ratio flags it
        rows.append((dist, cv, m, far_rep, far_emp, mde_rep, mde_emp))
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--histories", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--quick", action="store_true", help="one cohort, fewer sizes (the tests)")
    ap.add_argument("--bin", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                  "..", "bin", "perf-gate-rolling"))
    a = ap.parse_args()
    global FACTORS
    if a.quick:
        FACTORS = (0.8, 0.9, 1.0, 1.1, 1.25, 1.5)
    cohorts = ([("normal", 0.05)] if a.quick else
               [(d, cv) for d in ("normal", "lognormal") for cv in (0.005, 0.01, 0.02, 0.05, 0.1)])
    print("%d histories of 20 runs per cohort, %d current runs each; reported = mean over "
          "the comparisons" % (a.histories, REPEATS))
    print("%-9s %5s %-11s %9s %9s %6s %9s %9s %6s %s" % (
        "noise", "cv", "metric", "FAR rep", "FAR emp", "diff", "MDE rep", "MDE emp", "ratio", ""))
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        for dist, cv in cohorts:
            for dist_, cv_, m, fr, fe, mr, me in cohort(a.bin, tmp, dist, cv, a.histories, a.seed):
                ok = abs(fr - fe) <= 0.02 and me is not None and abs(mr / me - 1) <= 0.2
                bad += not ok
                print("%-9s %4.1f%% %-11s %8.2f%% %8.2f%% %+5.1fpp %8.2f%% %8s %6s %s" % (
                    dist_, cv_ * 100, m, fr * 100, fe * 100, (fr - fe) * 100, mr * 100,
                    "%.2f%%" % (me * 100) if me is not None else "n/a",
                    "%.3f" % (mr / me) if me else "n/a", "ok" if ok else "FAIL"))
    print("all within 2 points and 20%" if not bad else "%d rows out of bounds" % bad)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
