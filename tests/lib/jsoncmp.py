#!/usr/bin/env python3
"""jsoncmp.py GOT WANT: the two JSON documents are the same by
doc/campaign-report.md's rule: floats within 1e-6 relative (exactly 0
absolutely), integers stay integers, everything else exact, key order
included. Prints the first difference and exits 1."""
import json
import sys


def same(a, b, path):
    if isinstance(b, bool) or b is None or isinstance(b, str):
        if a is not b and a != b or type(a) is not type(b):
            return path + ": %r != %r" % (a, b)
        return None
    if isinstance(b, int):
        if type(a) is not int or a != b:
            return path + ": %r != %r (integer)" % (a, b)
        return None
    if isinstance(b, float):
        if not isinstance(a, float):
            return path + ": %r != %r (float)" % (a, b)
        if b == 0:
            return None if a == 0 else path + ": %r != 0" % a
        return None if abs(a - b) <= 1e-6 * abs(b) else path + ": %r != %r" % (a, b)
    if isinstance(b, list):
        if not isinstance(a, list) or len(a) != len(b):
            return path + ": lists differ in length"
        for i, (x, y) in enumerate(zip(a, b)):
            d = same(x, y, "%s[%d]" % (path, i))
            if d:
                return d
        return None
    if not isinstance(a, dict) or list(a) != list(b):
        return path + ": keys %r != %r" % (list(a) if isinstance(a, dict) else a, list(b))
    for k in b:
        d = same(a[k], b[k], path + "." + k)
        if d:
            return d
    return None


with open(sys.argv[1]) as f:
    got = json.load(f)
with open(sys.argv[2]) as f:
    want = json.load(f)
diff = same(got, want, "$")
if diff:
    print(diff)
    sys.exit(1)
