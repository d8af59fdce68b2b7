#!/usr/bin/env python3
"""Regenerates tests/unit/changes_vectors.h with Apache Otava's own code.

perf-changes reproduces Otava's change-point detection (otava/analysis.py
and otava/change_point_divisive/). This script runs Otava itself on series
it generates and writes what Otava found: the weak change points of the
split step and the change points of the merge step with their means,
standard deviations and p-values, plus a table of two-sided Student t
p-values from SciPy. Otava's code is not part of perfkite: give the
directory that holds its "otava" package (a checkout of apache/otava).
It needs numpy and scipy (Debian: python3-numpy python3-scipy):

    /usr/bin/python3 tests/unit/gen-changes.py OTAVA_DIR

Not run by the build or CI; the generated header is committed.
"""
import copy
import math
import os
import sys

if len(sys.argv) != 2:
    sys.exit("usage: gen-changes.py OTAVA_DIR")
sys.path.insert(0, sys.argv[1])

import numpy as np  # noqa: E402
import scipy  # noqa: E402
from scipy import special  # noqa: E402
from otava.analysis import (  # noqa: E402
    TTestSignificanceTester, compute_change_points, fill_missing, merge, split)

HERE = os.path.dirname(os.path.abspath(__file__))


def num(v):
    v = float(v)
    if math.isnan(v):
        return "NAN"
    if math.isinf(v):
        return "INFINITY" if v > 0 else "-INFINITY"
    return repr(v)


def merge_both_neighbours(cps, series, max_pvalue, min_magnitude):
    """Otava's merge, but recomputing both neighbours of a removed point."""
    tester = TTestSignificanceTester(max_pvalue)
    while cps:
        weakest = max(cps, key=lambda c: c.stats.pvalue)
        if weakest.stats.pvalue < max_pvalue:
            weakest = min(cps, key=lambda c: c.stats.change_magnitude())
            if weakest.stats.change_magnitude() > min_magnitude:
                return cps
        k = cps.index(weakest)
        del cps[k]
        intervals = tester.get_intervals(cps)
        for i in (k - 1, k):
            if 0 <= i < len(cps):
                cps[i] = tester.change_point(cps[i].to_candidate(), series, intervals)
    return cps


def series_cases():
    rng = np.random.default_rng(20240516)
    cases = []

    def add(name, values, window=50, pvalue=0.001, min_magnitude=0.0):
        cases.append((name, values, window, pvalue, min_magnitude))

    def gauss(n, mean=100.0, sd=1.0):
        return [float(v) for v in rng.normal(mean, sd, n)]

    add("one step of 3 sigma", gauss(60) + gauss(60, 103.0))
    add("two steps", gauss(40) + gauss(50, 105) + gauss(45, 98))
    add("many steps, small window", sum((gauss(15, 100 + 4 * (i % 3))
                                         for i in range(12)), []), window=10)
    add("slow drift", [100 + 0.05 * i + float(rng.normal(0, 1)) for i in range(300)])
    add("drift in 2% steps", sum((gauss(8, 100 * 1.02 ** i, 0.5) for i in range(10)), []))
    add("noise only", gauss(400))
    add("noise only, p 0.05", gauss(300), pvalue=0.05)
    add("noise only, p 0.2", gauss(200), pvalue=0.2)
    add("noise only, p 0.6", gauss(120), pvalue=0.6)
    add("log-normal noise", [float(v) for v in rng.lognormal(3, 0.3, 300)])
    add("ties: small integers", [float(v) for v in rng.integers(0, 3, 200)])
    add("ties: integer steps", [float(v) for v in rng.integers(10, 13, 80)] +
        [float(v) for v in rng.integers(12, 15, 80)])
    add("constant", [5.0] * 70)
    add("constant runs", [5.0] * 30 + [7.0] * 30 + [5.0] * 30)
    add("constant then noise", [1.0] * 40 + gauss(60, 1.0, 0.01))
    add("zeros and a step", [0.0] * 30 + [1.0] * 30)
    add("length 1", [3.0])
    add("length 2", [3.0, 4.0])
    add("length 3", [3.0, 4.0, 10.0])
    add("length 3, window 2", [3.0, 30.0, 30.5], window=2)
    add("window larger than the series", gauss(20) + gauss(20, 110), window=100)
    add("window 2", gauss(30) + gauss(30, 110), window=2)
    add("window 3", gauss(30) + gauss(30, 110), window=3)
    add("window 5", gauss(40) + gauss(40, 104), window=5)
    add("window 17", gauss(50) + gauss(50, 102), window=17)
    add("min magnitude 0.05", gauss(50) + gauss(50, 102) + gauss(50, 110),
        min_magnitude=0.05)
    add("negative values", gauss(50, -10) + gauss(50, -13))
    add("large values", gauss(60, 1e12, 1e9) + gauss(60, 1.01e12, 1e9))
    add("1 sigma step", gauss(200) + gauss(200, 101))
    add("2 sigma step", gauss(200) + gauss(200, 102))
    add("spikes", [v if i % 37 else v + 20 for i, v in enumerate(gauss(300))])
    add("long, steps every 500", sum((gauss(500, 100 + 3 * (i % 2)) for i in range(24)), []))
    # missing values: None, forward-filled, leading ones back-filled
    m = gauss(50) + gauss(50, 104)
    for i in (0, 1, 2, 17, 18, 60, 99):
        m[i] = None
    add("missing values", m)
    m = [None] * 5 + gauss(40) + [None] * 3 + gauss(40, 103) + [None] * 4
    add("missing at both ends", m)
    # A series where Otava's merge (next two points recomputed, not the
    # previous one) and a merge recomputing both neighbours disagree.
    for seed in range(2000):
        r = np.random.default_rng(seed)
        v = []
        for level in r.normal(100, 2, 8):
            v += [float(x) for x in r.normal(level, 1.5, int(r.integers(5, 30)))]
        weak = split(list(v), 50, 0.01)
        a = [c.index for c in merge(copy.copy(weak), list(v), 0.001, 0.0)]
        b = [c.index for c in merge_both_neighbours(copy.copy(weak), list(v), 0.001, 0.0)]
        if a != b:
            add("merge quirk (seed %d): the previous point keeps its statistics" % seed, v)
            break
    return cases


def main():
    out = ["/* Generated by tests/unit/gen-changes.py with Apache Otava's code, numpy %s,"
           " scipy %s. Do not edit. */" % (np.__version__, scipy.__version__)]
    table = []
    for i, (name, values, window, pvalue, min_mag) in enumerate(series_cases()):
        filled = list(values)
        fill_missing(filled)
        cps, weak = compute_change_points(list(filled), window_len=window,
                                          max_pvalue=pvalue, min_magnitude=min_mag)
        out.append("static const double cv_x%d[] = { %s };" % (
            i, ", ".join(num(v) if v is not None else "0" for v in values)))
        out.append("static const unsigned char cv_has%d[] = { %s };" % (
            i, ", ".join("0" if v is None else "1" for v in values)))
        out.append("static const size_t cv_weak%d[] = { %s };" % (
            i, ", ".join(str(c.index) for c in weak) or "0"))
        out.append("static const struct cv_point cv_cp%d[] = { %s };" % (i, ", ".join(
            "{ %d, %s, %s, %s, %s, %s }" % (c.index, num(c.stats.mean_1), num(c.stats.mean_2),
                                            num(c.stats.std_1), num(c.stats.std_2),
                                            num(c.stats.pvalue)) for c in cps)
            or "{ 0, 0, 0, 0, 0, 0 }"))
        table.append('\t{ "%s", %d, %d, %r, %r, cv_x%d, cv_has%d, %d, cv_weak%d, %d, cv_cp%d },' % (
            name, len(values), window, pvalue, min_mag, i, i, len(weak), i, len(cps), i))
    out.append("static const struct cv_case cv_cases[] = {")
    out += table
    out.append("};")
    # SciPy's two-sided t p-values, as ttest_ind_from_stats computes them.
    rng = np.random.default_rng(7)
    rows = []
    for df in (1, 2, 3, 4, 5, 7, 10, 17, 30, 48, 98, 333, 1000, 9999, 50000, 99998, 199998):
        ts = list(rng.uniform(0, 1, 6)) + list(rng.uniform(1, 5, 6)) + \
            list(np.exp(rng.uniform(-25, 6, 12)))
        for t in ts:
            p = float(special.stdtr(float(df), -abs(t)) * 2)
            if p > 1e-290:
                rows.append("\t{ %r, %d, %r }," % (float(t), df, p))
    out.append("static const struct { double t, df, p; } cv_t[] = {")
    out += rows
    out.append("};")
    with open(os.path.join(HERE, "changes_vectors.h"), "w") as f:
        f.write("\n".join(out) + "\n")


main()
