#!/usr/bin/env python3
"""Times Apache Otava on the series bench/changes wrote, for make bench.

usage: otava-bench.py OTAVA_DIR SERIES_FILE
Prints: seconds for the whole series, its number of change points, and
seconds for one append to the first 10,000 points with Otava's own
incremental mode (compute_change_points with new_data and old_weak_cp).
Needs numpy and scipy (Debian's python3-numpy, python3-scipy).
"""
import sys
import time

sys.path.insert(0, sys.argv[1])
from otava.analysis import compute_change_points  # noqa: E402

x = [float(line) for line in open(sys.argv[2])]
t = time.perf_counter()
cps, _ = compute_change_points(list(x), window_len=50, max_pvalue=0.001)
whole = time.perf_counter() - t
m, reps = 10000, 5
_, weak = compute_change_points(list(x[:m - reps]), window_len=50, max_pvalue=0.001)
t = time.perf_counter()
for n in range(m - reps + 1, m + 1):
    _, weak = compute_change_points(list(x[:n]), window_len=50, max_pvalue=0.001,
                                    new_data=1, old_weak_cp=weak)
append = (time.perf_counter() - t) / reps
print("%.4f %d %.6f" % (whole, len(cps), append))
