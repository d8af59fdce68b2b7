"""Random history stores for the store index tests (tests/store-index.bats).

  index_store.py make DIR N SEED BATCH   a store of N records in DIR, and a
                                         batch of current records in BATCH
  index_store.py mutate DIR KIND SEED    one foreign change of the store
  index_store.py seed-source BATCH [STATUS]  its first record as a seed's source

Records are the fixture store's record with random identities (few
workloads, variants, versions, recipes and profiles, so that cohorts share
files), statuses (success, baseline_eligible, run_source in every form the
loader judges), timestamps (some equal, some unparsable or missing) and
metrics; a few files are not valid JSON, a few sit one directory deeper.
"""
import glob
import json
import os
import random
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURE = glob.glob(os.path.join(ROOT, "fixtures/store/*/*.json"))[0]
BASE = json.load(open(FIXTURE))

WORKLOADS = ["wan-t2v", "ltx", "hunyuan"]
VARIANTS = ["1.3b-sp2", "14b"]
VERSIONS = [3, "3", 4]
RECIPES = ["rfp-a", "rfp-b", "rfp-c"]
HW = ["hw-1", "hw-2"]
SW = ["sw-1", "sw-2"]
MODELS = ["model-a", "model-b", "model-c", "model-d"]


def identity(rng):
    return {"workload_id": rng.choice(WORKLOADS), "variant_id": rng.choice(VARIANTS),
            "benchmark_version": rng.choice(VERSIONS), "recipe_fingerprint": rng.choice(RECIPES),
            "hardware_profile_id": rng.choice(HW), "software_profile_id": rng.choice(SW)}


def timestamp(rng, i):
    r = rng.random()
    if r < 0.02:
        return "not a time"
    if r < 0.03:
        return None
    # few distinct seconds: equal timestamps are common
    s = rng.randrange(0, 4000)
    return "2026-07-%02dT%02d:%02d:%02d+00:00" % (1 + s // 1000, s // 100 % 24, s % 60, 0)


def record(rng, i, ident=None):
    rec = dict(BASE)
    rec.update(ident or identity(rng))
    rec["model_id"] = rng.choice(MODELS)
    ts = timestamp(rng, i)
    if ts is None:
        del rec["timestamp"]
    else:
        rec["timestamp"] = ts
    rec["commit_sha"] = "%040x" % (i * 2654435761 % (1 << 64))
    for key, choices in (("success", [True, True, True, False, 0, "false", None, "absent"]),
                         ("baseline_eligible", [True, True, False, "absent"]),
                         ("run_source", ["scheduled_main", "pr", "absent"])):
        v = rng.choice(choices)
        if v == "absent":
            rec.pop(key, None)
        else:
            rec[key] = v
    rec["latency"] = round(30 + rng.random() * 3, 3)
    rec["memory"] = round(10000 + rng.random() * 300, 1)
    return rec


def path_of(rec, i, rng):
    model = rec["model_id"]
    ts = str(rec.get("timestamp", "unknown")).replace(":", "_").replace("+", "_")
    sub = "nested" if rng.random() < 0.03 else ""
    return os.path.join(model, sub, "%s_%s_%d.json" % (ts, rec["commit_sha"][:12], i))


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def make(d, n, seed, batch):
    rng = random.Random(seed)
    for i in range(n):
        rec = record(rng, i)
        p = os.path.join(d, path_of(rec, i, rng))
        if rng.random() < 0.005:
            write(p, "{ not json")
        else:
            write(p, json.dumps(rec, indent=2))
    with open(batch, "w") as f:
        for i in range(12):
            rec = record(rng, n + i)
            rec["timestamp"] = "2026-08-01T00:00:%02d+00:00" % i
            rec["latency"] = round(30 + rng.random() * 8, 3)
            rec.pop("static_failures", None)
            f.write(json.dumps(rec) + "\n")
        rec = record(rng, n + 99)
        rec["workload_id"] = ""
        f.write(json.dumps(rec) + "\n")


def seed_source(batch, status):
    """The batch's first record as a seed's (CALIBRATION_NEEDED) or a
    reseed's (REGRESSION) source."""
    rec = json.loads(open(batch).readline())
    rec.update(comparison_status=status, baseline_eligible=False,
               success=True, run_source="scheduled_main")
    print(json.dumps(rec))


def files(d):
    out = []
    for dirpath, dirs, names in os.walk(d):
        dirs[:] = sorted(x for x in dirs if not x.startswith("."))
        out += [os.path.join(dirpath, x) for x in sorted(names)
                if x.endswith(".json") and not x.startswith(".")]
    return out


def newest_like(rng, d):
    """A new record in a batch cohort, newer than all, eligible."""
    batch_ident = identity(rng)
    rec = record(rng, 10 ** 6 + rng.randrange(10 ** 6), batch_ident)
    rec["timestamp"] = "2026-07-30T00:00:00+00:00"
    rec["success"] = True
    rec["baseline_eligible"] = True
    rec["latency"] = 90.0
    return rec


def mutate(d, kind, seed):
    rng = random.Random(seed)
    fs = files(d)
    idx = os.path.join(d, ".perfkite-index")
    if kind == "add":
        rec = newest_like(rng, d)
        write(os.path.join(d, rec["model_id"], "added_%d.json" % seed), json.dumps(rec, indent=2))
    elif kind == "remove":
        for p in rng.sample(fs, max(1, len(fs) // 20)):
            os.unlink(p)
    elif kind == "replace":
        for p in rng.sample(fs, max(1, len(fs) // 20)):
            rec = newest_like(rng, d)
            write(p + ".tmp", json.dumps(rec, indent=2))
            os.rename(p + ".tmp", p)
    elif kind == "top":
        rec = newest_like(rng, d)
        write(os.path.join(d, "top_%d.json" % seed), json.dumps(rec, indent=2))
    elif kind == "adddir":
        for i in range(20):
            rec = newest_like(rng, d)
            write(os.path.join(d, "model-new-%d" % seed, "deeper", "r%d.json" % i),
                  json.dumps(rec, indent=2))
    elif kind == "renamedir":
        dirs = sorted(x for x in os.listdir(d) if not x.startswith("."))
        a = rng.choice(dirs)
        os.rename(os.path.join(d, a), os.path.join(d, a + "-renamed"))
    elif kind == "nested":
        rec = newest_like(rng, d)
        write(os.path.join(d, MODELS[0], "nested", "n_%d.json" % seed), json.dumps(rec, indent=2))
    elif kind == "bad":
        write(os.path.join(d, rng.choice(MODELS), "bad_%d.json" % seed), "[1, 2]")
    elif kind == "rmindex":
        for dirpath, _, names in os.walk(idx, topdown=False):
            for x in names:
                os.unlink(os.path.join(dirpath, x))
            os.rmdir(dirpath)
    elif kind == "truncate-cohort":
        cs = sorted(glob.glob(os.path.join(idx, "cohorts", "*")))
        for p in cs:
            os.truncate(p, os.path.getsize(p) // 2)
    elif kind == "truncate-manifest":
        p = os.path.join(idx, "MANIFEST")
        os.truncate(p, os.path.getsize(p) // 2)
    elif kind == "drop-cohort":
        cs = sorted(glob.glob(os.path.join(idx, "cohorts", "*")))
        for p in cs[::2]:
            os.unlink(p)
    else:
        sys.exit("unknown change " + kind)


if __name__ == "__main__":
    if sys.argv[1] == "seed-source":
        seed_source(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else "CALIBRATION_NEEDED")
    elif sys.argv[1] == "make":
        make(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5])
    else:
        mutate(sys.argv[2], sys.argv[3], int(sys.argv[4]))
