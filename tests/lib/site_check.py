"""Checks of a site of perf-site for tests/perf-site.bats.

  site_check.py html SITE            every page parses as HTML5 with html5lib in
                                     strict mode (a parse error fails) and no id
                                     repeats on a page; prints "valid N pages"
  site_check.py links SITE           every href and src of every page (and of
                                     feed.xml) that is not a web address names
                                     a file of the site, and its #fragment an
                                     id of that page; prints "resolved N links"
  site_check.py values DOM LABEL STORE_FILE...
                                     DOM, a page as Chromium leaves it (its
                                     --dump-dom), holds the values of cohort
                                     LABEL as the store files (JSON lines) hold
                                     them: on a cohort page, each chart's line
                                     passes through every value (to half a
                                     pixel); on the index, the cohort's row
                                     holds each metric's sparkline of its last
                                     16 values, exactly; prints what it checked

Exit 1 with one line per problem.
"""
import datetime
import json
import math
import os
import re
import sys
import urllib.parse

import html5lib

METRICS = ["latency", "throughput", "memory", "text_encoder_time_s", "dit_time_s",
           "vae_decode_time_s"]
# The chart's frame (site.c): x from PL to PL + PW.
PL, PW = 56.0, 652.0
SVG = "{http://www.w3.org/2000/svg}"
problems = []


def parse(path, strict):
    parser = html5lib.HTMLParser(strict=strict, namespaceHTMLElements=False)
    with open(path, "rb") as f:
        return parser.parse(f)


def local(tag):
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


def pages(site):
    for d, _, files in os.walk(site):
        for f in sorted(files):
            if f.endswith(".html"):
                yield os.path.join(d, f)


def check_html(site):
    n = 0
    for p in pages(site):
        try:
            tree = parse(p, True)
        except Exception as e:  # html5lib raises ParseError in strict mode
            problems.append(f"{p}: not valid HTML5: {e}")
            continue
        ids = [e.get("id") for e in tree.iter() if e.get("id") is not None]
        for i in sorted({i for i in ids if ids.count(i) > 1}):
            problems.append(f"{p}: id {i} repeats")
        n += 1
    return f"valid {n} pages"


def ids_of(path, cache={}):
    if path not in cache:
        cache[path] = {e.get("id") for e in parse(path, False).iter() if e.get("id")}
    return cache[path]


def check_links(site):
    n = 0
    targets = []
    for p in pages(site):
        for e in parse(p, False).iter():
            for attr in ("href", "src"):
                if e.get(attr) is not None:
                    targets.append((p, e.get(attr)))
    feed = os.path.join(site, "feed.xml")
    for m in re.finditer(r'<link href="([^"]*)"', open(feed, encoding="utf-8").read()):
        targets.append((feed, m.group(1).replace("&amp;", "&")))
    for page, href in targets:
        if re.match(r"^[a-z][a-z0-9+.-]*:", href):
            if not href.startswith(("https://", "http://")):
                problems.append(f"{page}: {href}: not a web address")
            continue
        file, _, frag = href.partition("#")
        file = os.path.normpath(os.path.join(os.path.dirname(page), urllib.parse.unquote(file))) \
            if file else page
        if not os.path.isfile(file):
            problems.append(f"{page}: {href}: no such file")
        elif frag and urllib.parse.unquote(frag) not in ids_of(file):
            problems.append(f"{page}: {href}: no such anchor")
        n += 1
    return f"resolved {n} links"


def label_of(r):
    if r.get("workload_id") is not None:
        return f"{r['workload_id']} / {r['variant_id']} / v{r['benchmark_version']}"
    return f"Legacy v1: {r['model_id']} | {r['gpu_type']}"


def instant(ts):
    return datetime.datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp()


def cohort(label, files):
    recs = []
    for f in files:
        with open(f, encoding="utf-8") as fp:
            for line in fp:
                if line.strip():
                    recs.append(json.loads(line))
    recs = [r for r in recs if label_of(r) == label]
    recs.sort(key=lambda r: instant(r["timestamp"]))  # stable: store order at a tie
    return recs


def series(recs, m):
    return [r[m] for r in recs if isinstance(r.get(m), (int, float))]


def lround(x):
    return int(math.floor(x + 0.5)) if x >= 0 else -int(math.floor(-x + 0.5))


def sparkline(v):
    v = v[-16:]
    lo, hi = min(v), max(v)
    n, d, px, py = len(v), "", 0, 0
    for k, x in enumerate(v):
        nx = 24 if n < 2 else lround(k * 47 / (n - 1))
        ny = 1 + lround((hi - x) / (hi - lo) * 12) if hi > lo else 7
        if k == 0:
            d = f"M{nx} {ny}"
        else:
            d += ("l" if k == 1 else " ") + str(nx - px) + ("" if ny - py < 0 else " ") + str(ny - py)
        px, py = nx, ny
    return d + ("h1" if n == 1 else "")


def path_points(d):
    """The vertices of a path of M, l, h and v commands (relative but M)."""
    pts, cmd, x, y = [], None, 0, 0
    toks = re.findall(r"[MlhvLHV]|-?[0-9.]+", d)
    i = 0
    while i < len(toks):
        if toks[i].isalpha():
            cmd = toks[i]
            i += 1
            continue
        if cmd == "M":
            x, y = float(toks[i]), float(toks[i + 1])
            i += 2
            pts.append(None)  # a gap: a new subpath
        elif cmd == "l":
            x, y = x + float(toks[i]), y + float(toks[i + 1])
            i += 2
        elif cmd == "h":
            x += float(toks[i])
            i += 1
        elif cmd == "v":
            y += float(toks[i])
            i += 1
        else:
            raise ValueError(f"command {cmd} in {d}")
        pts.append((x, y))
    return [p for p in pts if p is not None]


def y_at(pts, x):
    for (x0, y0), (x1, y1) in zip(pts, pts[1:]):
        if x0 <= x <= x1:
            return y0 if x1 == x0 else y0 + (y1 - y0) * (x - x0) / (x1 - x0)
    return pts[0][1] if len(pts) == 1 and pts[0][0] == x else None


def check_chart(fig, m, vals):
    ticks, line = [], None
    for e in fig.iter():
        if local(e.tag) == "text" and e.get("class") == "yl":
            ticks.append((float(e.text), float(e.get("y")) - 3.5))
        if local(e.tag) == "path" and e.get("class") == "ln":
            line = e.get("d")
    if line is None or len(ticks) < 2:
        problems.append(f"chart {m}: no line or no axis")
        return 0
    (v0, y0), (v1, y1) = ticks[0], ticks[-1]
    pts = path_points(line)
    n = len(vals)
    for k, v in enumerate(vals):
        x = lround(PL + PW / 2) if n < 2 else lround(PL + k / (n - 1) * PW)
        want = y0 + (v - v0) * (y1 - y0) / (v1 - v0)
        got = y_at(pts, x)
        if got is None or abs(got - want) > 0.6:
            problems.append(f"chart {m}: record {k} ({v}) drawn at y {got}, not {want:.2f}")
    return n


def check_values(dom, label, files):
    recs = cohort(label, files)
    if not recs:
        problems.append(f"{label}: no record of the store")
        return ""
    tree = parse(dom, False)
    figs = {e.get("id")[2:]: e for e in tree.iter()
            if local(e.tag) == "figure" and (e.get("id") or "").startswith("m-")}
    if figs:
        n = 0
        for m in METRICS:
            vals = series(recs, m)
            if vals and m not in figs:
                problems.append(f"{label}: no chart of {m}")
            elif vals:
                n += check_chart(figs[m], m, vals)
            elif m in figs:
                problems.append(f"{label}: a chart of {m}, which it has no value of")
        return f"{n} values in {len(figs)} charts"
    for tr in tree.iter("tr"):
        tds = tr.findall("td")
        a = tds[0].find("a") if tds else None
        if a is None or a.text != label or not (a.get("href") or "").startswith("c/"):
            continue
        got = [p.get("d") for p in tr.iter() if local(p.tag) == "path"]
        want = [sparkline(series(recs, m)) for m in METRICS if series(recs, m)]
        if got != want:
            problems.append(f"{label}: sparklines {got}, not {want}")
        return f"{len(got)} sparklines"
    problems.append(f"{label}: no row on the index")
    return ""


def main():
    what, args = sys.argv[1], sys.argv[2:]
    if what == "html":
        out = check_html(args[0])
    elif what == "links":
        out = check_links(args[0])
    elif what == "values":
        out = check_values(args[0], args[1], args[2:])
    else:
        sys.exit(f"site_check.py: {what}: unknown check")
    for p in problems:
        print(p)
    if problems:
        sys.exit(1)
    print(out)


main()
