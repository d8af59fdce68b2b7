#!/usr/bin/env python3
"""The campaign analysis of perf-analyze(1) and doc/campaign-report.md in
Python's standard library only: what
`perf-analyze --json PLAN RESULTS` computes, written independently of the C
code, for `make bench` (the time of the same analysis) and for the tests
(the expected reports). Errors: exit 2 with "<code>: <detail>" on stderr."""
import hashlib
import json
import math
import sys

STATUSES = {"completed", "failed", "unconverged", "time_exceeded", "oom_killed", "killed"}


class Refusal(Exception):
    def __init__(self, code, detail):
        super().__init__(code + ": " + detail)
        self.code = code


def strict_load(path):
    def no_dups(pairs):
        d = {}
        for k, v in pairs:
            if k in d:
                raise Refusal("invalid_json", "duplicate key " + k)
            d[k] = v
        return d

    def bad_constant(c):
        raise Refusal("invalid_json", "not JSON: " + c)

    def parse_int(s):
        v = int(s)
        if not -2**63 <= v < 2**63:
            raise Refusal("invalid_json", "integer out of range")
        return v

    def parse_float(s):
        v = float(s)
        if math.isinf(v):
            raise Refusal("invalid_json", "float out of range")
        return v

    try:
        with open(path, "rb") as f:
            text = f.read().decode("utf-8")
        return json.loads(text, object_pairs_hook=no_dups, parse_constant=bad_constant,
                          parse_int=parse_int, parse_float=parse_float)
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise Refusal("invalid_json", str(e))


def canon_sha(v):
    return hashlib.sha256(json.dumps(v, sort_keys=True, separators=(",", ":"),
                                     ensure_ascii=True).encode()).hexdigest()


def is_num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def nonempty(v):
    return isinstance(v, str) and v != ""


# --- Student t: the regularized incomplete beta function ---

def _betacf(a, b, x):
    tiny, eps = 1e-300, 1e-16
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 10001):
        num = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m))
        d = 1 + num * d
        c = 1 + num / c
        d = 1 / (d if abs(d) > tiny else tiny)
        c = c if abs(c) > tiny else tiny
        h *= d * c
        num = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))
        d = 1 + num * d
        c = 1 + num / c
        d = 1 / (d if abs(d) > tiny else tiny)
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1) < eps:
            break
    return h


def _betainc(a, b, x):
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) +
                     a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1) / (a + b + 2):
        return front * _betacf(a, b, x) / a
    return 1 - front * _betacf(b, a, 1 - x) / b


def t_cdf(t, df):
    tail = 0.5 * _betainc(df / 2, 0.5, df / (df + t * t))
    return 1 - tail if t >= 0 else tail


def t_quantile(p, df):
    q = p if p >= 0.5 else 1 - p
    if q == 0.5:
        return 0.0
    lo, hi = 0.0, 1.0
    while t_cdf(hi, df) < q:
        hi *= 2
    for _ in range(300):
        mid = (lo + hi) / 2
        if t_cdf(mid, df) < q:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-15 * hi:
            break
    t = (lo + hi) / 2
    return t if p >= 0.5 else -t


# --- plan and results ---

def check_plan(plan):
    if not isinstance(plan, dict):
        raise Refusal("invalid_plan", "not an object")
    if plan.get("schema_name") != "vq.benchmark-plan/1":
        raise Refusal("invalid_plan", "schema_name")
    for k in ("plan_id", "baseline"):
        if not nonempty(plan.get(k)):
            raise Refusal("invalid_plan", k)
    vs = plan.get("variants")
    if not isinstance(vs, list) or len(vs) < 2 or not all(isinstance(v, dict) for v in vs):
        raise Refusal("invalid_plan", "variants")
    for v in vs:
        if not nonempty(v.get("name")) or not nonempty(v.get("runtime_digest")) or \
                not isinstance(v.get("build_flags"), str):
            raise Refusal("invalid_plan", "variant")
    if len({v["name"] for v in vs}) != len(vs):
        raise Refusal("invalid_plan", "variant names")
    if len({v["runtime_digest"] for v in vs}) != len(vs):
        raise Refusal("duplicate_runtime_digest", "runtime digests")
    ws = plan.get("workloads")
    if not isinstance(ws, list) or not ws or not all(isinstance(w, dict) for w in ws):
        raise Refusal("invalid_plan", "workloads")
    for w in ws:
        if not w.get("checks"):
            raise Refusal("workload_without_checks", w.get("name", "?"))
    ncs = plan.get("node_classes")
    if not isinstance(ncs, list) or not ncs or not all(nonempty(c) for c in ncs) or \
            len(set(ncs)) != len(ncs):
        raise Refusal("invalid_plan", "node_classes")
    lay = plan.get("layout")
    if not isinstance(lay, dict) or not all(is_int(lay.get(k)) and lay[k] >= 1
                                            for k in ("mpi_ranks", "threads_per_rank")):
        raise Refusal("invalid_plan", "layout")
    if not is_int(plan.get("warmup")) or plan["warmup"] < 0:
        raise Refusal("invalid_plan", "warmup")
    if not is_int(plan.get("seed")) or not 0 <= plan["seed"] < 2**63:
        raise Refusal("invalid_plan", "seed")
    if not is_num(plan.get("confidence")) or not 0 < plan["confidence"] < 1:
        raise Refusal("invalid_plan", "confidence")
    if not is_num(plan.get("margin")) or not plan["margin"] >= 0:
        raise Refusal("invalid_plan", "margin")
    r = plan.get("repeats")
    if not is_int(r):
        raise Refusal("invalid_plan", "repeats")
    if r < 5:
        raise Refusal("repeats_below_minimum", str(r))
    if plan["baseline"] not in {v["name"] for v in vs}:
        raise Refusal("unknown_baseline", plan["baseline"])


def load(plan_path, results_path):
    plan = strict_load(plan_path)
    check_plan(plan)
    sha = canon_sha(plan)
    res = strict_load(results_path)
    if not isinstance(res, dict) or res.get("schema_name") != "vq.benchmark-results/1" or \
            not isinstance(res.get("plan_sha256"), str) or not isinstance(res.get("runs"), list):
        raise Refusal("invalid_results", "shape")
    if res["plan_sha256"] != sha:
        raise Refusal("plan_mismatch", res["plan_sha256"])
    ncs = plan["node_classes"]
    wls = [w["name"] for w in plan["workloads"]]
    vns = [v["name"] for v in plan["variants"]]
    seen = set()
    for run in res["runs"]:
        if not isinstance(run, dict) or run.get("status") not in STATUSES or \
                not is_int(run.get("block")):
            raise Refusal("invalid_results", "run")
        if run["node_class"] not in ncs or run["workload"] not in wls or \
                run["variant"] not in vns or \
                not 1 - plan["warmup"] <= run["block"] <= plan["repeats"]:
            raise Refusal("unplanned_run", str(run))
        key = (run["node_class"], run["workload"], run["variant"], run["block"])
        if key in seen:
            raise Refusal("duplicate_run", str(key))
        seen.add(key)
    return plan, sha, res


def analyze(plan, sha, res):
    runs = sorted(res["runs"], key=lambda r: (r["node_class"], r["workload"], r["variant"],
                                              r["block"]))
    results_sha = canon_sha(dict(res, runs=runs))
    index = {(r["node_class"], r["workload"], r["variant"], r["block"]): r for r in runs}
    base = plan["baseline"]
    variants = {v["name"]: v for v in plan["variants"]}
    lay = plan["layout"]
    cores = lay["mpi_ranks"] * lay["threads_per_rank"]
    conf, margin, repeats = plan["confidence"], plan["margin"], plan["repeats"]
    q = (1 + conf) / 2
    band_lo, band_hi = 1 / (1 + margin), 1 + margin

    def hw(run, k):
        h = run.get("hardware")
        return h.get(k) if isinstance(h, dict) else None

    def run_reasons(run, side, vname):
        st = run["status"]
        if st != "completed":
            return [side + "_status_" + st]
        out = []
        if run["runtime_digest"] != variants[vname]["runtime_digest"]:
            out.append(side + "_runtime_digest_mismatch")
        mr, tr = hw(run, "mpi_ranks"), hw(run, "threads_per_rank")
        if (mr is not None and mr != lay["mpi_ranks"]) or \
                (tr is not None and tr != lay["threads_per_rank"]):
            out.append(side + "_layout_mismatch")
        if run.get("steady_seconds") is None:
            out.append(side + "_steady_seconds_missing")
        return out

    def value(run, qn):
        vals = run.get("values")
        return vals.get(qn) if isinstance(vals, dict) else None

    def figures(run):
        return {k: run.get(k) for k in ("steady_seconds", "startup_seconds", "cpu_seconds",
                                        "peak_rss_mb", "scf_iterations")}

    node_classes, comparable = [], {}
    for nc in plan["node_classes"]:
        mine = [r for r in runs if r["node_class"] == nc]
        measured = [r for r in mine if r["block"] >= 1]
        models = sorted({hw(r, "cpu_model") for r in measured} - {None})
        comparable[nc] = len(models) <= 1
        node_classes.append({"node_class": nc, "cpu_models": models,
                             "comparable": comparable[nc], "measured_runs": len(measured),
                             "warmup_runs": len(mine) - len(measured)})

    cells, kept = [], {}
    for nc in plan["node_classes"]:
        for wl in plan["workloads"]:
            for vn in (v["name"] for v in plan["variants"]):
                if vn == base:
                    continue
                pairs, excluded, missing = [], [], []
                for b in range(1, repeats + 1):
                    rb = index.get((nc, wl["name"], base, b))
                    rv = index.get((nc, wl["name"], vn, b))
                    if rb is None or rv is None:
                        missing.append({"block": b, "runs": [s for s, r in
                                        (("baseline", rb), ("variant", rv)) if r is None]})
                        continue
                    reasons = run_reasons(rb, "baseline", base) + run_reasons(rv, "variant", vn)
                    if not reasons:
                        mb, mv = hw(rb, "cpu_model"), hw(rv, "cpu_model")
                        if mb is not None and mv is not None and mb != mv:
                            reasons.append("cpu_model_mismatch")
                        for c in wl["checks"]:
                            xb, xv = value(rb, c["quantity"]), value(rv, c["quantity"])
                            if xb is None or xv is None:
                                reasons.append("check_value_missing:" + c["quantity"])
                            elif abs(xv - xb) > c.get("abs_tolerance", 0) + \
                                    c.get("rel_tolerance", 0) * abs(xb):
                                reasons.append("check_failed:" + c["quantity"])
                    if reasons:
                        excluded.append({"block": b, "reasons": reasons})
                        continue
                    tb, tv = rb["steady_seconds"], rv["steady_seconds"]
                    pairs.append({"block": b, "ratio": tb / tv,
                                  "saving_core_seconds": (tb - tv) * cores,
                                  "baseline": figures(rb), "variant": figures(rv)})
                n = len(pairs)
                ratios = [p["ratio"] for p in pairs]
                logs = [math.log(r) for r in ratios]
                ratio = interval = None
                mean = sd = t = 0.0
                low = high = 0.0
                if n:
                    mean = sum(logs) / n
                    s = sorted(ratios)
                    med = s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2
                    sd = math.sqrt(sum((x - mean) ** 2 for x in logs) / (n - 1)) if n >= 2 else None
                    ratio = {"geometric_mean": math.exp(mean), "median": med, "min": s[0],
                             "max": s[-1], "mean_log": mean, "sd_log": sd}
                if n >= 2:
                    t = t_quantile(q, n - 1)
                    h = t * sd / math.sqrt(n)
                    low, high = math.exp(mean - h), math.exp(mean + h)
                    interval = {"low": low, "high": high, "t_quantile": t}
                if not comparable[nc]:
                    verdict, why = "incomparable", "node_class_has_several_cpu_models"
                elif n < repeats:
                    verdict, why = "inconclusive", "fewer_retained_pairs_than_repeats"
                elif low > band_hi:
                    verdict, why = "faster", "interval_above_band"
                elif high < band_lo:
                    verdict, why = "slower", "interval_below_band"
                elif low >= band_lo and high <= band_hi:
                    verdict, why = "equivalent", "interval_inside_band"
                else:
                    verdict, why = "inconclusive", "interval_crosses_band_edge"
                be = None
                if verdict == "faster":
                    v = variants[vn]
                    cost = v.get("build_cost_core_seconds", 0) + v.get("deployment_cost_core_seconds", 0)
                    sav = [p["saving_core_seconds"] for p in pairs]
                    ms = sum(sav) / n
                    ss = math.sqrt(sum((x - ms) ** 2 for x in sav) / (n - 1))
                    lb = ms - t * ss / math.sqrt(n)
                    be = {"cost_core_seconds": cost, "mean_saving_core_seconds": ms,
                          "sd_saving_core_seconds": ss, "saving_lower_bound_core_seconds": lb,
                          "runs": cost / ms if ms > 0 else None,
                          "runs_conservative": cost / lb if ms > 0 and lb > 0 else None,
                          "reason": "mean_saving_not_positive" if ms <= 0 else
                          "saving_lower_bound_not_positive" if lb <= 0 else None}
                kept[(nc, wl["name"], vn)] = (n, mean)
                cells.append({"node_class": nc, "workload": wl["name"], "variant": vn,
                              "planned_pairs": repeats, "retained_pairs": n,
                              "excluded_pairs": len(excluded), "missing_pairs": len(missing),
                              "pairs": pairs, "excluded": excluded, "missing": missing,
                              "ratio": ratio, "interval": interval, "verdict": verdict,
                              "verdict_reason": why, "break_even": be})
    aggregates = []
    for nc in plan["node_classes"]:
        for vn in (v["name"] for v in plan["variants"]):
            if vn == base:
                continue
            inc, left, logs = [], [], []
            for wl in plan["workloads"]:
                n, mean = kept[(nc, wl["name"], vn)]
                if comparable[nc] and n == repeats:
                    inc.append(wl["name"])
                    logs.append(mean)
                else:
                    left.append({"workload": wl["name"], "reason": "node_class_incomparable"
                                 if not comparable[nc] else "incomplete_pairs"})
            aggregates.append({"node_class": nc, "variant": vn, "comparable": comparable[nc],
                               "geometric_mean": math.exp(sum(logs) / len(logs)) if logs else None,
                               "workloads": inc, "left_out": left})
    return {
        "schema_name": "vq.benchmark-report/1", "plan_id": plan["plan_id"],
        "plan_sha256": sha, "results_sha256": results_sha,
        "applies_to": {"baseline": base,
                       "variants": [{"name": v["name"], "runtime_digest": v["runtime_digest"],
                                     "build_flags": v["build_flags"],
                                     "libraries": v.get("libraries", {})}
                                    for v in plan["variants"]],
                       "workloads": [{"name": w["name"], "input_digest": w["input_digest"]}
                                     for w in plan["workloads"]],
                       "node_classes": list(plan["node_classes"]),
                       "layout": {"mpi_ranks": lay["mpi_ranks"],
                                  "threads_per_rank": lay["threads_per_rank"]}},
        "settings": {"warmup": plan["warmup"], "repeats": repeats, "seed": plan["seed"],
                     "confidence": conf, "margin": margin, "cores": cores,
                     "equivalence_band": {"low": band_lo, "high": band_hi},
                     "ratio_interval": {"statistic": "mean_log_ratio", "distribution": "student_t",
                                        "sides": "two_sided", "quantile": q},
                     "break_even_interval": {"statistic": "mean_paired_saving_core_seconds",
                                             "distribution": "student_t", "sides": "lower_bound",
                                             "quantile": q}},
        "costs": [{"variant": v["name"],
                   "build_cost_core_seconds": v.get("build_cost_core_seconds", 0),
                   "deployment_cost_core_seconds": v.get("deployment_cost_core_seconds", 0),
                   "storage_bytes": v.get("storage_bytes")}
                  for v in plan["variants"] if v["name"] != base],
        "node_classes": node_classes, "cells": cells, "aggregates": aggregates}


def main():
    try:
        report = analyze(*load(sys.argv[1], sys.argv[2]))
    except Refusal as e:
        print(str(e), file=sys.stderr)
        sys.exit(2)
    json.dump(report, sys.stdout, indent=2)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
