#!/usr/bin/env python3
"""Validates the sensitivity perf-gate-rolling reports against simulation.

For each cohort of known noise (normal or log-normal run-to-run noise at a
coefficient of variation from 0.5% to 10%), HISTORIES simulated histories
of 20 trusted scheduled-main runs, each its own comparison cohort, go to
perf-gate-rolling as --history streams, with five independent current
runs per history (compared with the same history; --far-runs unchanged
ones, 20 with --quick). Three metrics per run test both directions and
both floors: latency (10 s: the 8% floor binds), throughput (4.5/s,
higher is better) and dit_time_s (4 s: the 0.25 s absolute floor, 6.25%,
binds over 5%).

  * false-alarm rate: the mean reported false_alarm_rate against the
    share of current runs without any change whose threshold was exceeded;
  * detectable regression: the mean reported mde_percent against the
    regression that perf-gate-rolling catches in 80% of the histories,
    found by running it with every current slowed by factors of the
    reported value and interpolating where the caught share crosses 80%.

Then cohorts whose window holds a level shift (+5% from the 13th of the
20 runs) or a drift (+1% a run), at 1% noise (and 3% in the full table):
the mean reported noise.relative_spread against the true run-to-run
noise, and the share of windows whose noise.shift says so.

Passes when every false-alarm rate is within 2 percentage points and
every detectable regression within 20%, and every shifted cohort's
reported noise within 1.5x of its true noise. Prints the table; exit 1 if not
(and exit 1 with the gate's status and stderr when it could not judge a
batch). --quick: the tests' subset, one cohort (normal, 3%) and fewer
regression sizes. --dist: one noise only (the two halves of the table can
run at once). perf-gate-rolling runs without the PERF_*, BUILDKITE_* and
other variables it reads, so the caller's environment cannot change it.

usage: sensitivity.py [--histories N] [--far-runs N] [--quick] [--seed S]
                      [--dist normal|lognormal] [--bin PATH]
"""
import argparse
import json
import math
import os
import random
import signal
import subprocess
import sys
import tempfile

METRICS = (("latency", 10.0, False), ("throughput", 4.5, True), ("dit_time_s", 4.0, False))
CHUNK = 100
REPEATS = 5	# current runs per history, against the same history
FAR_REPEATS = 5	# unchanged current runs per history (--far-runs; the first REPEATS
		# of them are the regressed runs too)
QUICK_FAR_REPEATS = 20
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


# Variables perf-gate-rolling (or the store it opens) reads: a CI job or a
# shell may set them (PERF_PYTEST_RC makes every record an infra failure,
# PERF_REPORTS_DIR writes artifacts), so the gate runs without them.
SCRUB_PREFIXES = ("PERF_", "BUILDKITE_")
SCRUB = ("PERFORMANCE_TRACKING_ROOT", "TEST_SCOPE", "GITHUB_STEP_SUMMARY", "IMAGE_VERSION")


def gate_env():
    return {k: v for k, v in os.environ.items()
            if not k.startswith(SCRUB_PREFIXES) and k not in SCRUB}


def fail(gate_bin, why, rc, batch, history, stderr):
    if rc < 0:
        try:
            rc = "signal %s" % signal.Signals(-rc).name
        except ValueError:
            rc = "signal %d" % -rc
    sys.exit("sensitivity.py: %s (%s, status %s, %d records, history %s); its stderr ends:\n%s"
             % (why, gate_bin, rc, len(batch), history, stderr[-2000:] or "(nothing)"))


def gate(gate_bin, store, history, batch):
    """The comparison metrics of every record of batch, in order. Exit 1
    with the gate's status and stderr unless it judged every record (0 or
    1, one compared record out per record in)."""
    p = subprocess.run([gate_bin, "--store", store, "--history", history],
                       input="".join(json.dumps(r) + "\n" for r in batch).encode(),
                       capture_output=True, env=gate_env())
    err = p.stderr.decode("utf-8", "replace")
    if p.returncode not in (0, 1):
        fail(gate_bin, "the gate could not judge the batch", p.returncode, batch, history, err)
    out = []
    for line in p.stdout.decode("utf-8", "replace").splitlines():
        try:
            metrics = json.loads(line)["comparison"]["metrics"]
            for m, _, _ in METRICS:
                float(metrics[m]["false_alarm_rate"])
                float(metrics[m]["mde_percent"])
                bool(metrics[m]["threshold_exceeded"])
        except (ValueError, KeyError, TypeError) as e:
            fail(gate_bin, "record %d out has no sensitivity (%s: %s)" % (
                len(out) + 1, type(e).__name__, e), p.returncode, batch, history, err)
        out.append(metrics)
    if len(out) != len(batch):
        fail(gate_bin, "%d records out for %d in" % (len(out), len(batch)), p.returncode,
             batch, history, err)
    return out


def gate_chunks(gate_bin, store, histories, batch, runs):
    """One run per chunk of CHUNK histories (runs records per history):
    the scan is records x queries."""
    out = []
    for i, h in enumerate(histories):
        out += gate(gate_bin, store, h, batch[i * CHUNK * runs:(i + 1) * CHUNK * runs])
    return out


def cohort(gate_bin, tmp, dist, cv, n, seed):
    rng = random.Random("%s-%s-%d" % (dist, cv, seed))
    hists = []
    for c in range(0, n, CHUNK):
        hists.append(os.path.join(tmp, "history-%d.jsonl" % c))
        with open(hists[-1], "w", encoding="utf-8") as f:
            for h in range(c, min(n, c + CHUNK)):
                for k in range(20):
                    vals = {m: value(mu, 0, hi, dist, noise(rng, dist, cv))
                            for m, mu, hi in METRICS}
                    f.write(json.dumps(record(h, "2026-01-%02dT00:00:00+00:00" % (k + 1),
                                              vals, False)) + "\n")
    # One noise draw per history and metric, kept for every regression size.
    eps = [[{m: noise(rng, dist, cv) for m, _, _ in METRICS} for _ in range(FAR_REPEATS)]
           for _ in range(n)]

    def batch(deltas, runs):
        return [record(h, "2026-02-01T00:00:00+00:00",
                       {m: value(mu, deltas[m], hi, dist, e[m]) for m, mu, hi in METRICS},
                       True) for h in range(n) for e in eps[h][:runs]]
    store = os.path.join(tmp, "empty-store")
    os.makedirs(store, exist_ok=True)
    base = gate_chunks(gate_bin, store, hists, batch({m: 0.0 for m, _, _ in METRICS},
                                                     FAR_REPEATS), FAR_REPEATS)
    rows = []
    rep = {}
    for m, _, _ in METRICS:
        far = [b[m]["false_alarm_rate"] for b in base]
        mde = [b[m]["mde_percent"] for b in base]
        emp = sum(b[m]["threshold_exceeded"] for b in base) / len(base)
        # Its standard error: the histories are independent, the runs of
        # one history share its baseline.
        per = [sum(b[m]["threshold_exceeded"]
                   for b in base[h * FAR_REPEATS:(h + 1) * FAR_REPEATS]) / FAR_REPEATS
               for h in range(n)]
        se = math.sqrt(sum((x - emp) ** 2 for x in per) / max(n - 1, 1) / n)
        rep[m] = (sum(far) / len(base), emp, sum(mde) / len(base), se)
    caught = {m: [] for m, _, _ in METRICS}
    for f in FACTORS:
        out = gate_chunks(gate_bin, store, hists,
                          batch({m: f * rep[m][2] for m, _, _ in METRICS}, REPEATS), REPEATS)
        for m, _, _ in METRICS:
            caught[m].append((f * rep[m][2], sum(o[m]["threshold_exceeded"] for o in out) / len(out)))
    for m, _, _ in METRICS:
        far_rep, far_emp, mde_rep, se = rep[m]
        pts, mde_emp = caught[m], None
        for (d0, p0), (d1, p1) in zip(pts, pts[1:]):
            if p0 < 0.8 <= p1:
                mde_emp = d0 + (0.8 - p0) * (d1 - d0) / (p1 - p0)
                break
        if mde_emp is None and pts[0][1] >= 0.8:
            mde_emp = pts[0][0]	# caught at 0.6x already: ratio flags it
        rows.append((dist, cv, m, far_rep, far_emp, se, mde_rep, mde_emp))
    return rows


SHAPES = {"step": lambda k: 1.05 if k >= 12 else 1.0, "drift": lambda k: 1 + 0.01 * k}


def shifted(gate_bin, tmp, dist, cv, n, seed, shape):
    """Rows (shape, dist, cv, metric, reported noise, shift share) of
    histories whose 20 runs are shaped by SHAPES[shape]: one unchanged
    current run per history, at the last run's level."""
    rng = random.Random("%s-%s-%s-%d" % (shape, dist, cv, seed))
    f = SHAPES[shape]
    hists = []
    for c in range(0, n, CHUNK):
        hists.append(os.path.join(tmp, "%s-%d.jsonl" % (shape, c)))
        with open(hists[-1], "w", encoding="utf-8") as out:
            for h in range(c, min(n, c + CHUNK)):
                for k in range(20):
                    vals = {m: value(mu, 0, hi, dist, noise(rng, dist, cv)) * f(k)
                            for m, mu, hi in METRICS}
                    out.write(json.dumps(record(h, "2026-01-%02dT00:00:00+00:00" % (k + 1),
                                                vals, False)) + "\n")
    batch = [record(h, "2026-02-01T00:00:00+00:00",
                    {m: value(mu, 0, hi, dist, noise(rng, dist, cv)) * f(19)
                     for m, mu, hi in METRICS}, True) for h in range(n)]
    store = os.path.join(tmp, "empty-store")
    os.makedirs(store, exist_ok=True)
    out = gate_chunks(gate_bin, store, hists, batch, 1)
    rows = []
    for m, _, _ in METRICS:
        spreads = [o[m]["noise"]["relative_spread"] for o in out]
        if any(not isinstance(x, (int, float)) for x in spreads):
            fail(gate_bin, "a %s window's %s noise is unknown" % (shape, m), 0, batch,
                 hists[0], "")
        rows.append((shape, dist, cv, m, sum(spreads) / len(spreads),
                     sum(o[m]["noise"]["shift"] is True for o in out) / len(out)))
    return rows


def positive(text):
    n = int(text)
    if n < 1:
        raise argparse.ArgumentTypeError("not a positive number: %s" % text)
    return n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--histories", type=positive, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--quick", action="store_true", help="one cohort, fewer sizes (the tests)")
    ap.add_argument("--far-runs", type=positive, default=None,
                    help="unchanged current runs per history (default %d, %d with --quick)"
                    % (REPEATS, QUICK_FAR_REPEATS))
    ap.add_argument("--dist", choices=("normal", "lognormal"),
                    help="only this noise (the full table runs in two halves at once)")
    ap.add_argument("--bin", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                  "..", "bin", "perf-gate-rolling"))
    a = ap.parse_args()
    if a.far_runs is None:
        a.far_runs = QUICK_FAR_REPEATS if a.quick else REPEATS
    if a.far_runs < REPEATS:
        ap.error("--far-runs: at least %d" % REPEATS)
    global FACTORS, FAR_REPEATS
    FAR_REPEATS = a.far_runs
    if a.quick:
        FACTORS = (0.8, 0.9, 1.0, 1.1, 1.25, 1.5)
    # The tests' cohort: 3% noise puts the rates between 1% and 5%, where
    # 200 histories measure them to about half a point (at 5%, 10% and
    # more, to a point or more: a row could sit at the bound by chance).
    cohorts = ([("normal", 0.03)] if a.quick else
               [(d, cv) for d in ("normal", "lognormal") for cv in (0.005, 0.01, 0.02, 0.05, 0.1)])
    cohorts = [(d, cv) for d, cv in cohorts if a.dist in (None, d)]
    print("%d histories of 20 runs per cohort, %d current runs each (%d unchanged); reported = "
          "mean over the comparisons; se: standard error of the observed rate"
          % (a.histories, REPEATS, FAR_REPEATS))
    print("%-9s %5s %-11s %9s %9s %6s %6s %9s %9s %6s %s" % (
        "noise", "cv", "metric", "FAR rep", "FAR emp", "se", "diff", "MDE rep", "MDE emp",
        "ratio", ""))
    sys.stdout.flush()
    bad = 0
    with tempfile.TemporaryDirectory(prefix="perfkite-sensitivity-") as tmp:
        for dist, cv in cohorts:
            for dist_, cv_, m, fr, fe, se, mr, me in cohort(a.bin, tmp, dist, cv, a.histories,
                                                            a.seed):
                ok = abs(fr - fe) <= 0.02 and me is not None and abs(mr / me - 1) <= 0.2
                bad += not ok
                print("%-9s %4.1f%% %-11s %8.2f%% %8.2f%% %5.2f%% %+5.1fpp %8.2f%% %8s %6s %s" % (
                    dist_, cv_ * 100, m, fr * 100, fe * 100, se * 100, (fr - fe) * 100, mr * 100,
                    "%.2f%%" % (me * 100) if me is not None else "n/a",
                    "%.3f" % (mr / me) if me else "n/a", "ok" if ok else "FAIL"))
                sys.stdout.flush()
        shifts = ([("normal", 0.01)] if a.quick else
                  [(d, cv) for d in ("normal", "lognormal") for cv in (0.01, 0.03)])
        shifts = [(d, cv) for d, cv in shifts if a.dist in (None, d)]
        print("\nshifted windows: %d histories of 20 runs per cohort; noise rep = mean reported "
              "relative_spread, ratio = rep / true noise, shift = share said to hold one"
              % a.histories)
        print("%-6s %-9s %5s %-11s %9s %6s %6s %s" % (
            "shape", "noise", "cv", "metric", "noise rep", "ratio", "shift", ""))
        for dist, cv in shifts:
            for shape in SHAPES:
                for shape_, dist_, cv_, m, rep, share in shifted(a.bin, tmp, dist, cv,
                                                                 a.histories, a.seed, shape):
                    ok = 1 / 1.5 <= rep / cv_ <= 1.5
                    bad += not ok
                    print("%-6s %-9s %4.1f%% %-11s %8.2f%% %6.3f %5.0f%% %s" % (
                        shape_, dist_, cv_ * 100, m, rep * 100, rep / cv_, share * 100,
                        "ok" if ok else "FAIL"))
                    sys.stdout.flush()
    print("all within 2 points and 20%, and 1.5x across shifts" if not bad else
          "%d rows out of bounds" % bad)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
