#!/usr/bin/env python3
"""The layering of src/, checked: `make check-layout`.

  src/lib/core/       includes only core/
  src/lib/lane/       core/ and lane/ (lane/store/ and lane/import/ are part of the lane)
  src/lib/campaign/   core/ and campaign/
  src/lib/frames/     core/ and frames/
  src/perf-*.c        any library header

Every project include names its directory ("core/json.h"), names a header
that exists, and is used: some function, type, enumerator or macro the
header declares appears in the including file. With --sorted (as make
check-layout runs it), the project includes of each block (consecutive
#include "..." lines) are also sorted by path. A violation is one line,
FILE:LINE: what is wrong, and exit 1.

usage: check_layout.py [--sorted] [ROOT]   (default: the repository above this file)
"""
import os
import re
import sys

SYSTEMS = ("core", "lane", "campaign", "frames")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
IDENT = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]*\b")
COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
STRING = re.compile(r'"(?:\\.|[^"\\\n])*"')


def allowed(path):
    """The library directories a file may include from, or None for any."""
    parts = path.split(os.sep)
    if parts[:2] != ["src", "lib"]:
        return None
    system = parts[2]
    return {"core"} if system == "core" else {"core", system}


def declared(text):
    """Names a header declares: functions, types, struct/enum tags,
    enumerators and macros (a generous set: a false 'used' is cheap)."""
    body = COMMENT.sub(" ", text)
    names = set()
    names.update(re.findall(r"#\s*define\s+([A-Za-z_][A-Za-z0-9_]*)", body))
    body = re.sub(r"#[^\n]*", " ", body)
    names.update(re.findall(r"\b([A-Za-z_][A-Za-z0-9_]*)\s*\(", body))
    names.update(re.findall(r"\b(?:struct|enum|union)\s+([A-Za-z_][A-Za-z0-9_]*)", body))
    names.update(re.findall(r"\}\s*([A-Za-z_][A-Za-z0-9_]*)\s*;", body))
    names.update(re.findall(r"typedef\b[^;]*?\b([A-Za-z_][A-Za-z0-9_]*)\s*;", body))
    for block in re.findall(r"enum\s*[A-Za-z_0-9]*\s*\{([^}]*)\}", body):
        names.update(re.findall(r"([A-Za-z_][A-Za-z0-9_]*)\s*(?:=[^,]*)?(?:,|$)", block))
    names.update(re.findall(r"\bextern\b[^;(]*?\b([A-Za-z_][A-Za-z0-9_]*)\s*(?:\[[^]]*\])?\s*;", body))
    keywords = {"if", "while", "for", "return", "sizeof", "switch", "void", "int",
                "char", "const", "static", "unsigned", "long", "double", "bool",
                "size_t", "struct", "enum", "union", "typedef"}
    return names - keywords


def main():
    args = sys.argv[1:]
    sorted_blocks = "--sorted" in args
    args = [a for a in args if a != "--sorted"]
    root = args[0] if args else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..")
    os.chdir(root)
    files = []
    for d, _, names in os.walk("src"):
        files += [os.path.join(d, n) for n in names if n.endswith((".c", ".h"))]
    files.sort()
    bad = 0
    decl_cache = {}
    for f in files:
        if f.startswith(os.path.join("src", "lib")) and f.split(os.sep)[2] not in SYSTEMS:
            print("%s: a library file outside core/, lane/, campaign/ and frames/" % f)
            bad += 1
            continue
        with open(f, encoding="utf-8") as fh:
            text = fh.read()
        own = os.path.splitext(f)[0]
        code = STRING.sub('""', COMMENT.sub(" ", text))
        code = "\n".join(l for l in code.split("\n") if not INCLUDE.match(l))
        used = set(IDENT.findall(code))
        ok_dirs = allowed(f)
        last = None
        for n, line in enumerate(text.split("\n"), 1):
            m = INCLUDE.match(line)
            if not m:
                last = None
                continue
            if sorted_blocks and last is not None and m.group(1) < last:
                print('%s:%d: #include "%s": after "%s"; a block\'s includes are sorted by path'
                      % (f, n, m.group(1), last))
                bad += 1
            last = m.group(1)
            inc = m.group(1)
            where = "%s:%d" % (f, n)
            top = inc.split("/")[0]
            if "/" not in inc or top not in SYSTEMS:
                print('%s: #include "%s": name the header by its directory (core/, lane/, campaign/, frames/)'
                      % (where, inc))
                bad += 1
                continue
            path = os.path.join("src", "lib", inc)
            if not os.path.isfile(path):
                print('%s: #include "%s": no such header' % (where, inc))
                bad += 1
                continue
            if ok_dirs is not None and top not in ok_dirs:
                print('%s: #include "%s": %s may include only from %s' % (
                    where, inc, "/".join(f.split(os.sep)[:3]) + "/", " and ".join(
                        d + "/" for d in sorted(ok_dirs))))
                bad += 1
                continue
            if os.path.splitext(path)[0] == own:
                continue
            if path not in decl_cache:
                with open(path, encoding="utf-8") as fh:
                    decl_cache[path] = declared(fh.read())
            if not (decl_cache[path] & used):
                print('%s: #include "%s": nothing it declares is used here' % (where, inc))
                bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
