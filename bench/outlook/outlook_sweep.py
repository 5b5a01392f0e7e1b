#!/usr/bin/env python3
"""The scaling outlook (issue 44 item 3) against simulated sweeps of the same jobs.

For each job: one capture at its worker count is analysed by `tfdiag analyze -f json`; its
`outlook` predicts steps/s (worker steps per second over all workers) at 2x and 4x the workers,
as the job is and after Fix first, and the worker count where scaling efficiency falls under
60%. The truth is the same job simulated at those counts by a generator that shares no code with
the prediction:
  - psjob: bench/twins/psjob.py (event-driven, Python; its fixed twins by bench/twins/families.py)
  - samples: `tfdiag simulate SCENARIO --workers N,2N,4N` (samples/, C++), measured here from the
    trace itself (each worker's _SOURCE starts), not by tfdiag.
  - indep: bench/twins/indep/indepsim.py, a job drawn by jobs.draw(SEED) (the independent suite's
    generator: each NIC shared, ops slowed when threads exceed cores, service out of arrival
    order, per-host speed, noise), simulated at each worker count; the added workers take the
    captured workers' host speeds in turn (the same machine mix, more of it).
The truth's saturation point is found by bisection on the truth itself (to ~5% of the count).

Usage: outlook_sweep.py TFDIAG [--jobs a,b,...] [--seeds 1,2] [--json OUT.json] [--work DIR]
  a job is psjob:FAMILY, samples:INDEX (into SAMPLES) or indep:SEED (--seeds does not apply to
  it: the seed is the job); --indep-spec FILE runs one indepsim job spec (jobs.draw's keys; with
  no --jobs, only it); --indep-set SET (a seed set of bench/twins/indep/jobs.py, jobs.SETS) adds
  that set's jobs with at most --indep-max-workers captured workers (default 16; their 4x is simulated).
  --cache DIR keeps the indep jobs' captures and simulated rates in DIR (indepsim is
  deterministic for a spec), so a re-run after a change to tfdiag only re-analyzes.
Prints a markdown table and the overall figures; exit 0 (the caller judges).
"""
import gzip
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "twins"))
import families as fam  # noqa: E402
import run_twins as rt  # noqa: E402

sys.path.insert(0, os.path.join(HERE, "..", "twins", "indep"))
import indepsim  # noqa: E402
import jobs as indep_jobs  # noqa: E402

MIN_EFF = 0.60
MAX_TRUTH_WORKERS = 128  # the truth sweep stops here (psjob: ~10 s a run at 128 on a loaded 2-core VM)

# psjob families used (bench/twins/families.py) and samples scenarios (tfdiag simulate).
PSJOB = ["hot-1t", "hot-2t", "hot-4t", "hot-idle", "hot-plus-input", "two-hot", "input-slow",
         "healthy-small", "healthy-sync", "straggler-sync", "straggler-async", "saturated-set",
         "gather-on-worker"]
# (scenario, workers, extra simulate flags)
SAMPLES = [("balanced", 4, ""), ("hot-ps", 4, "--embedding-dim 256"), ("hot-ps", 8, ""),
           ("balanced", 8, "--ps 2")]


def psjob_rate(spec, workers, seed, work):
    s = dict(spec)
    s["workers"] = workers
    s["seed"] = seed
    path = os.path.join(work, f"t{os.getpid()}.json")
    truth = rt.generate(s, path)
    os.remove(path)
    return rt.rate(truth)


def samples_trace_rate(path):
    """Worker steps per second over all workers from the trace itself: per worker, the median
    time between its step starts (_SOURCE ops on its Compute lane), rate = sum of 1 / median."""
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "rt") as f:
        d = json.load(f)
    names = {}
    for e in d["traceEvents"]:
        if e.get("ph") == "M" and e.get("name") == "process_name":
            names[e["pid"]] = e["args"]["name"]
    starts = {}
    for e in d["traceEvents"]:
        if e.get("ph") != "X":
            continue
        n = names.get(e.get("pid"), "")
        if "/job:worker/" not in n or not n.endswith("Compute"):
            continue
        if e.get("args", {}).get("name") == "_SOURCE":
            starts.setdefault(n, []).append(float(e["ts"]))
    rate = 0.0
    for n, s in starts.items():
        s.sort()
        gaps = [b - a for a, b in zip(s[1:], s[2:])]  # the first step left out (warm-up)
        if gaps:
            rate += 1e6 / statistics.median(gaps)
    return rate


def samples_rate(tfdiag, scenario, extra, workers, seed, work, steps=24):
    path = os.path.join(work, f"s{os.getpid()}.json")
    subprocess.run(f"{tfdiag} simulate {scenario} --workers {workers} --steps {steps} "
                   f"--seed {seed} {extra} -o {path}", shell=True, check=True,
                   capture_output=True)
    r = samples_trace_rate(path)
    os.remove(path)
    return r


def truth_saturation(rate_at, n, base, hi_limit):
    """Smallest worker count (to ~5%) with efficiency under MIN_EFF, or 0 up to hi_limit."""
    eff = lambda w: rate_at(w) / base / (w / n)
    lo, hi, w = n, 0, n
    while w < hi_limit:
        w = min(hi_limit, w * 2)
        if eff(w) < MIN_EFF:
            hi = w
            break
        lo = w
    if hi == 0:
        return 0
    while hi - lo > max(1, lo // 20):
        mid = (lo + hi) // 2
        if eff(mid) < MIN_EFF:
            hi = mid
        else:
            lo = mid
    return hi


def judge(name, outlook, rate_at, fixed_rate_at, n):
    row = {"job": name, "workers": n, "confidence": outlook.get("confidence"),
           "withheld": outlook.get("withheld", ""), "points": []}
    if not outlook.get("points"):
        return row
    base = rate_at(n)
    row["truth_1x"] = base
    for p in outlook["points"]:
        w = p["workers"]
        if w == n and fixed_rate_at is not None and p.get("steps_per_s_after_fix") is not None:
            # The captured count after Fix first: tells an after-fix miss of the fix's own
            # prediction from one of the scaling (not scored).
            row["fix_1x"] = {"pred": p["steps_per_s_after_fix"], "truth": fixed_rate_at(w)}
        if w not in (2 * n, 4 * n):
            continue
        t = rate_at(w)
        pt = {"workers": w, "pred": p["steps_per_s"], "truth": t,
              "err_pct": 100 * (p["steps_per_s"] - t) / t}
        if p.get("steps_per_s_after_fix") is not None and fixed_rate_at is not None:
            tf = fixed_rate_at(w)
            pt.update({"pred_fix": p["steps_per_s_after_fix"], "truth_fix": tf,
                       "err_fix_pct": 100 * (p["steps_per_s_after_fix"] - tf) / tf})
        row["points"].append(pt)
    sat = outlook.get("saturates_at")
    row["pred_sat"] = sat["workers"] if sat else 0
    row["pred_resource"] = sat["resource"] if sat else ""
    limit = max(8 * n, 2 * row["pred_sat"])
    row["truth_sat"] = truth_saturation(rate_at, n, base, min(limit, MAX_TRUTH_WORKERS))
    row["truth_sat_limit"] = min(limit, MAX_TRUTH_WORKERS)
    return row


def judge_report(name, report, s, n, rate_of, fix_for, apply_fix):
    """judge() for a job of spec `s` with `n` workers whose analysis is `report`: the truth at w
    workers is rate_of(spec, w) (cached), after Fix first that of apply_fix(s, fix_for(...))."""
    outlook = report.get("outlook") or {}
    cache = {}

    def rate_at(w, spec=s, key="asis"):
        if (key, w) not in cache:
            cache[(key, w)] = rate_of(spec, w)
        return cache[(key, w)]

    fixed = None
    ff = outlook.get("fix_first")
    if ff:
        finding = next((f for f in report["findings"] if f["rule"] == ff["rule"] and
                        f.get("subject") == ff["subject"]), None)
        fx = fix_for(finding, s) if finding else None
        if fx is not None:
            t = apply_fix(s, fx)
            fixed = lambda w: rate_at(w, t, "fix")
    return judge(name, outlook, rate_at, fixed, n)


def analyze_outlook(tfdiag, path):
    return rt.analyze(tfdiag, path).get("outlook") or {}


def run_psjob(tfdiag, family, seed, work):
    s = fam.spec(family)
    s["seed"] = seed
    n = s["workers"]
    path = os.path.join(work, f"{family}.{seed}.json")
    rt.generate(s, path)
    report = rt.analyze(tfdiag, path)
    os.remove(path)
    return judge_report(f"psjob {family} seed {seed}", report, s, n,
                        lambda spec, w: psjob_rate(spec, w, seed, work), rt.fix_for,
                        fam.apply_fix)


def run_samples(tfdiag, scenario, n, extra, seed, work):
    path = os.path.join(work, f"{scenario}.{seed}.json")
    subprocess.run(f"{tfdiag} simulate {scenario} --workers {n} --steps 24 --seed {seed} "
                   f"{extra} -o {path}", shell=True, check=True, capture_output=True)
    outlook = analyze_outlook(tfdiag, path)
    os.remove(path)
    cache = {}

    def rate_at(w):
        if w not in cache:
            cache[w] = samples_rate(tfdiag, scenario, extra, w, seed, work)
        return cache[w]

    return judge(f"simulate {scenario} {extra} n={n} seed {seed}".replace("  ", " "), outlook,
                 rate_at, None, n)


def indep_spec_at(s, workers):
    """The indep job `s` at `workers` workers: the captured workers' host speeds in turn."""
    t = json.loads(json.dumps(s))
    n = s["workers"]
    t["workers"] = workers
    t["worker_speed"] = [s["worker_speed"][i % n] for i in range(workers)]
    return t


INDEP_CACHE = None  # --cache DIR: indepsim is deterministic for a spec, so its figures are kept


def _cache_key(spec):
    """The cache key of `spec`: its own text and indepsim.py's source, so a change to the
    simulator never serves a figure of the old one."""
    h = hashlib.sha1(json.dumps(spec, sort_keys=True).encode())
    with open(indepsim.__file__, "rb") as f:
        h.update(f.read())
    return h.hexdigest()


def _cached(kind, spec, fn):
    """fn() for `spec`, kept under INDEP_CACHE keyed by _cache_key (no cache: fn())."""
    if INDEP_CACHE is None:
        return fn()
    key = _cache_key(spec)
    path = os.path.join(INDEP_CACHE, f"{kind}.{key}.json")
    if os.path.exists(path):
        with open(path) as f:
            return json.load(f)
    v = fn()
    with open(path + ".tmp", "w") as f:
        json.dump(v, f)
    os.replace(path + ".tmp", path)
    return v


def indep_rate(spec):
    """Worker steps per second over all workers of an indepsim run (sum of 1 / each worker's
    median step), from the simulator's own truth."""
    truth = _cached("truth", spec, lambda: indepsim.simulate(spec))
    per = [x for x in truth["per_worker_median_ms"] if x > 0]
    return sum(1000.0 / x for x in per)


def run_indep(tfdiag, seed, work, spec=None):
    s = spec if spec is not None else indep_jobs.draw(seed)
    n = s["workers"]
    if INDEP_CACHE is not None:
        path = os.path.join(INDEP_CACHE, f"capture.{_cache_key(s)}.json")
        if not os.path.exists(path):
            indepsim.simulate(s, path + ".tmp.json")
            os.replace(path + ".tmp.json", path)
        report = rt.analyze(tfdiag, path)
    else:
        path = os.path.join(work, f"indep{seed}.json")
        indepsim.simulate(s, path)
        report = rt.analyze(tfdiag, path)
        os.remove(path)
    name = (f"indep {seed} ({s['ps']} PS, {s['ps_threads']} thr/{s['ps_cores']} cores"
            f"{', sync' if s['sync'] else ''})")
    return judge_report(name, report, s, n, lambda spec, w: indep_rate(indep_spec_at(spec, w)),
                        indep_jobs.fix_for, indep_jobs.apply_fix)


def summarize(rows):
    withheld = sum(1 for r in rows if not r["points"])
    lines = ["| job | conf. | 2x: pred / truth (err) | 4x: pred / truth (err) | after Fix first "
             "2x, 4x (err) | saturates at: pred (resource) / truth |", "|---|---|---|---|---|---|"]
    errs, fix_errs, sat_ok, sat_n = [], [], 0, 0
    for r in rows:
        if not r["points"]:
            lines.append(f"| {r['job']} | withheld | {r['withheld'][:80]} | | | |")
            continue
        cells = []
        fixc = []
        for p in r["points"]:
            errs.append(abs(p["err_pct"]))
            cells.append(f"{p['pred']:.0f} / {p['truth']:.0f} ({p['err_pct']:+.0f}%)")
            if "err_fix_pct" in p:
                fix_errs.append(abs(p["err_fix_pct"]))
                fixc.append(f"{p['pred_fix']:.0f} / {p['truth_fix']:.0f} "
                            f"({p['err_fix_pct']:+.0f}%)")
        while len(cells) < 2:
            cells.append("-")
        ps, ts = r["pred_sat"], r["truth_sat"]
        # Named right: both none within the truth's range, or within 25% of each other.
        if ps == 0 and ts == 0:
            ok = True
        elif ps == 0:
            ok = False
        elif ts == 0:
            ok = ps > r["truth_sat_limit"]
        else:
            ok = abs(ps - ts) <= 0.25 * ts
        sat_n += 1
        sat_ok += ok
        tsat = str(ts) if ts else f"none to {r['truth_sat_limit']}"
        psat = f"{ps} ({r['pred_resource']})" if ps else "none"
        lines.append(f"| {r['job']} | {r['confidence']} | {cells[0]} | {cells[1]} | "
                     f"{'; '.join(fixc) or '-'} | {psat} / {tsat} {'ok' if ok else 'MISS'} |")
    pct = lambda v, q: sorted(v)[min(len(v) - 1, int(q * len(v)))] if v else None
    overall = {"points": len(errs), "median": pct(errs, 0.5), "p90": pct(errs, 0.9),
               "max": max(errs) if errs else None, "within_15": sum(e <= 15 for e in errs),
               "fix_points": len(fix_errs), "fix_median": pct(fix_errs, 0.5),
               "fix_max": max(fix_errs) if fix_errs else None,
               "fix_within_15": sum(e <= 15 for e in fix_errs),
               "saturation_named": sat_ok, "saturation_jobs": sat_n}
    lines.append("")
    f1 = lambda v: "-" if v is None or v != v else f"{v:.1f}"  # None or NaN: no points
    lines.append(f"As is: {len(errs)} points (2x, 4x), |error| median {f1(overall['median'])}%, "
                 f"p90 {f1(overall['p90'])}%, max {f1(overall['max'])}%, within 15%: "
                 f"{overall['within_15']}/{len(errs)}. After Fix first: {len(fix_errs)} points, "
                 f"within 15%: {overall['fix_within_15']}/{len(fix_errs)}"
                 + (f", max {f1(overall['fix_max'])}%" if fix_errs else "") +
                 f". Saturation named (within 25%, or none on both): {sat_ok}/{sat_n}. "
                 f"Outlooks withheld: {withheld}/{len(rows)}.")
    return "\n".join(lines), overall


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        sys.stderr.write(__doc__)
        return 0 if len(argv) >= 2 else 2
    if not (os.path.isfile(argv[1]) and os.access(argv[1], os.X_OK)):
        sys.stderr.write(f"outlook_sweep.py: {argv[1]}: not an executable tfdiag binary "
                         "(usage: outlook_sweep.py build/tfdiag [--jobs ...] [--indep-set ...])\n")
        return 2
    tfdiag = os.path.abspath(argv[1])
    jobs = ["psjob:" + f for f in PSJOB] + [f"samples:{i}" for i in range(len(SAMPLES))]
    seeds, out_json, work = [2, 3], None, None
    indep_set, indep_max, indep_specs = None, 16, []
    i = 2
    while i < len(argv):
        if argv[i] == "--jobs":
            jobs = [j for j in argv[i + 1].split(",") if j]
        elif argv[i] == "--seeds":
            seeds = [int(x) for x in argv[i + 1].split(",")]
        elif argv[i] == "--json":
            out_json = argv[i + 1]
        elif argv[i] == "--work":
            work = argv[i + 1]
        elif argv[i] == "--indep-set":
            indep_set = argv[i + 1]
        elif argv[i] == "--indep-max-workers":
            indep_max = int(argv[i + 1])
        elif argv[i] == "--cache":
            global INDEP_CACHE
            INDEP_CACHE = argv[i + 1]
            os.makedirs(INDEP_CACHE, exist_ok=True)
        elif argv[i] == "--indep-spec":
            with open(argv[i + 1]) as f:
                indep_specs.append(json.load(f))
        i += 2
    if indep_set:
        sets = indep_jobs.SETS
        if indep_set not in sets:
            sys.stderr.write(f"--indep-set: expected one of {', '.join(sets)}, got {indep_set}\n")
            return 2
        jobs += [f"indep:{k}" for k in sets[indep_set]
                 if indep_jobs.draw(k)["workers"] <= indep_max]
    tmp = None
    if work is None:
        tmp = tempfile.TemporaryDirectory()
        work = tmp.name
    rows = []
    for spec in indep_specs:
        rows.append(run_indep(tfdiag, spec["seed"], work, spec))
        print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    if indep_specs and "--jobs" not in argv and not indep_set:
        jobs = []
    done_indep = set()
    for seed in seeds:
        for j in jobs:
            kind, name = j.split(":", 1)
            if kind == "indep":
                if name in done_indep:
                    continue
                done_indep.add(name)
                rows.append(run_indep(tfdiag, int(name), work))
            elif kind == "psjob":
                rows.append(run_psjob(tfdiag, name, seed, work))
            else:
                sc, n, extra = SAMPLES[int(name)]
                rows.append(run_samples(tfdiag, sc, n, extra, seed, work))
            print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    table, overall = summarize(rows)
    print(table)
    if out_json:
        with open(out_json, "w") as f:
            json.dump({"rows": rows, "overall": overall}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
