#!/usr/bin/env python3
"""The randomized independent twin suite (issue 44 item 4): tfdiag's predictions on jobs drawn by
jobs.draw and simulated by indepsim.py, each against its fixed twin.

Usage: run_indep.py TFDIAG [--set SET] [--seeds A,B,..]
                      [--spec SPEC.json] [--json OUT] [--work DIR] [--cache DIR] [--no-outlook]
SET: a seed set of jobs.py (jobs.SETS, its *_SEEDS: a wrong name lists them).
--no-outlook is accepted for the command line run_gen2.py and run_gen3.py share: this suite runs
no outlook (bench/outlook/outlook_sweep.py does). Any other argument is an error (exit 2).
--cache DIR keeps each job's trace and its twins' figures in DIR (indepsim is deterministic for a
spec), so a re-run after a change to tfdiag only re-analyzes; never share a cache between
changes to indepsim.py or jobs.py.
Prints the per-job rows and the summary (on the chosen seed set only):
  - |error| median / p90 / max of the predictions made, `low` ones included (predicted step vs
    the fixed twin's);
  - each confidence label's calibration: high within 10%, medium within 25% of the twin;
  - range coverage: the twin inside the printed range;
  - `Fix first` right: the fix of the largest trusted predicted saving (> 5%; trusted(): not
    `low`, as tfdiag names it) buys >= 80% of the best single fix's saving (twins), or, where no
    fix buys 5%, nothing is named over 10%;
  - the share of jobs with a >= 10% fix that get a trusted prediction of a fix buying >= 10%;
  - findings of severity medium or above on healthy jobs (no fix buys 5%).
Standard library only; exit 0 (the caller judges), 2 on a bad argument.
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import indepsim  # noqa: E402
import jobs  # noqa: E402

SEVERE = {"medium", "high", "critical"}


def analyze(tfdiag, path, *more):
    """`tfdiag analyze -f json` of the capture `path` and any more inputs beside it (a pod list)."""
    r = subprocess.run([tfdiag, "analyze", "-f", "json", path, *more], capture_output=True,
                       text=True)
    if r.returncode not in (0, 1):
        raise RuntimeError(f"tfdiag analyze {path}: exit {r.returncode}: {r.stderr[-500:]}")
    return json.loads(r.stdout)


def step_of(truth, fix, base_truth, spec):
    """The twin's figure for `fix`: its median step; for a straggler of an asynchronous job the
    job's step at its throughput (base median step x base throughput step / twin's)."""
    if fix[0] == "straggler" and not spec["sync"]:
        return base_truth["median_step_ms"] * truth["throughput_step_ms"] / \
            base_truth["throughput_step_ms"]
    return truth["median_step_ms"]


def finding_row(f, fix, twin, now):
    """One finding of `analyze -f json` scored against its fixed twin: `fix` is the twin fix its
    text names (None: none), twin(fix) the twin's step (ms), now the job's step (ms)."""
    im = f.get("impact") or {}
    row = {"rule": f["rule"], "severity": f.get("severity", ""),
           "fix": list(fix) if fix else None, "method": im.get("method", ""),
           "confidence": im.get("confidence", ""),
           "withheld": im.get("withheld", "") or "", "why": im.get("why", "")}
    t = twin(fix) if fix is not None else None
    if fix is not None and t is None:
        row["twin_failed"] = True  # the generator could not simulate it: the row is not scored
    if t is not None:
        row["twin_ms"] = t
        row["twin_saving_pct"] = 100 * (now - row["twin_ms"]) / now
    if im.get("method") == "replay" and t is not None:
        pred = im["step_ns_after_fix"] / 1e6
        row["pred_ms"] = pred
        row["saving_pct"] = im.get("saving_pct", 0)
        row["err_pct"] = 100 * (pred - row["twin_ms"]) / row["twin_ms"]
        lo, hi = im.get("low_ns"), im.get("high_ns")
        if lo is not None and hi is not None and lo > 0:
            row["in_range"] = lo / 1e6 <= row["twin_ms"] <= hi / 1e6
    return row


def trusted(row):
    """Whether a scored row's prediction is one tfdiag names `Fix first` from and prints as a
    prediction: a replay whose confidence is not `low` (analyzers/finding.h Impact::trusted; a
    low one is printed "not predicted (confidence low)"). Its error is scored either way."""
    return "pred_ms" in row and not row.get("confidence", "").startswith("low")


def fix_first_verdict(rows, best_saving):
    """(the row `Fix first` names or None, right?): the trusted prediction (trusted()) of the
    largest saving (> 5%) must buy >= 80% of the best single fix's saving; with no fix buying 5%,
    nothing over 10% may be named."""
    predicted = [r for r in rows if trusted(r)]
    top = max(predicted, key=lambda r: r["saving_pct"], default=None)
    if top is not None and top["saving_pct"] <= 5:
        top = None
    if best_saving < 5:
        right = top is None or top["saving_pct"] < 10
    elif top is None:
        right = False
    else:
        right = top["twin_saving_pct"] >= 0.8 * best_saving
    return top, right


def captured(spec, name, work, cache, simulate):
    """The job's capture and its memo of twin figures: (path of the capture, path of the memo or
    None, memo, the base truth). With a cache DIR, a capture and memo of the same spec are reused;
    otherwise simulate(spec, path) writes the capture (under cache or work) and gives the truth."""
    path = os.path.join(cache or work, f"{name}.json")
    memo_path = os.path.join(cache, f"{name}.twins.json") if cache else None
    memo = {}
    if memo_path and os.path.exists(memo_path) and os.path.exists(path):
        with open(memo_path) as f:
            memo = json.load(f)
    if "base" in memo and memo.get("spec") == spec:
        return path, memo_path, memo, memo["base"]
    memo = {"spec": spec}
    memo["base"] = simulate(spec, path)
    return path, memo_path, memo, memo["base"]


def run_job(tfdiag, seed, work, spec=None, cache=None):
    s = spec if spec is not None else jobs.draw(seed)
    path, memo_path, memo, base = captured(s, f"job{seed}", work, cache, indepsim.simulate)
    report = analyze(tfdiag, path)
    if not cache:
        os.remove(path)
    twins = {}

    def twin(fix):
        if fix not in twins:
            key = repr(fix)
            if key not in memo:
                memo[key] = step_of(indepsim.simulate(jobs.apply_fix(s, fix)), fix, base, s)
            twins[fix] = memo[key]
        return twins[fix]

    now = base["median_step_ms"]
    rows = [finding_row(f, jobs.fix_for(f, s), twin, now) for f in report.get("findings", [])]
    best, best_saving = None, 0.0
    for fx in jobs.candidate_fixes(s) + [tuple(r["fix"]) for r in rows if r["fix"]]:
        fx = tuple(x if not isinstance(x, list) else tuple(x) for x in fx)
        sv = 100 * (now - twin(fx)) / now
        if sv > best_saving:
            best, best_saving = fx, sv
    top, right = fix_first_verdict(rows, best_saving)
    out = {"seed": seed, "ps": s["ps"], "workers": s["workers"], "threads": s["ps_threads"],
            "cores": s["ps_cores"], "sync": s["sync"], "planted": s["planted"],
            "now_ms": now, "rows": rows, "best_fix": list(best) if best else None,
            "best_saving_pct": best_saving, "fix_first": top["rule"] if top else None,
            "fix_first_right": right,
            "healthy": best_saving < 5,
            "severe_findings": [r["rule"] for r in rows if r["severity"] in SEVERE]}
    if memo_path:
        with open(memo_path, "w") as f:
            json.dump(memo, f)
    return out


def pct(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(q * len(v)))] if v else float("nan")


def summarize(results):
    errs, lab, cover = [], {}, []
    for r in results:
        for row in r["rows"]:
            if "err_pct" in row:
                e = abs(row["err_pct"])
                errs.append(e)
                lab.setdefault(row["confidence"], []).append(e)
                if "in_range" in row:
                    cover.append(row["in_range"])
    need = [r for r in results if r["best_saving_pct"] >= 10]
    got = [r for r in need
           if any(trusted(x) and x["saving_pct"] >= 10 for x in r["rows"])]
    healthy = [r for r in results if r["healthy"]]
    bad_healthy = [r for r in healthy if r["severe_findings"]]
    limit = {"high": 10, "medium": 25}
    unscored = sum(1 for r in results for row in r["rows"] if row.get("twin_failed"))
    out = {"jobs": len(results), "predictions": len(errs), "unscored": unscored,
           "median": pct(errs, 0.5), "p90": pct(errs, 0.9), "max": max(errs, default=float("nan")),
           "labels": {k: {"n": len(v), "within": sum(x <= limit.get(k, 1e9) for x in v),
                          "max": max(v)} for k, v in lab.items()},
           "range_covered": sum(cover), "ranges": len(cover),
           "fix_first_right": sum(r["fix_first_right"] for r in results),
           "jobs_with_10pct_fix": len(need), "of_them_predicted": len(got),
           "healthy": len(healthy), "healthy_with_medium_finding": len(bad_healthy)}
    return out


def fmt_summary(o):
    labs = "; ".join(f"{k}: {v['within']}/{v['n']} within {'10' if k == 'high' else '25'}% "
                     f"(max {v['max']:.0f}%)" if k in ("high", "medium") else
                     f"{k}: {v['n']} (max {v['max']:.0f}%)" for k, v in sorted(o["labels"].items()))
    unscored = (f" ({o['unscored']} findings unscored: twin not simulated)"
                if o.get("unscored") else "")
    return (f"{o['jobs']} jobs, {o['predictions']} predictions{unscored}: |error| median "
            f"{o['median']:.1f}%, p90 {o['p90']:.1f}%, max {o['max']:.1f}%\n"
            f"confidence: {labs}\n"
            f"range covers the twin: {o['range_covered']}/{o['ranges']}\n"
            f"Fix first right: {o['fix_first_right']}/{o['jobs']}\n"
            f"jobs with a >= 10% fix that get a >= 10% prediction: {o['of_them_predicted']}/"
            f"{o['jobs_with_10pct_fix']}\n"
            f"healthy jobs (no fix buys 5%) with a finding >= medium: "
            f"{o['healthy_with_medium_finding']}/{o['healthy']}")


def fmt_row(r):
    """One job's line: its shape, step, best fix, `Fix first` and each finding against its twin."""
    cells = [f"{x['rule']}" + (f" {x['pred_ms']:.1f}->{x['twin_ms']:.1f} "
                               f"({x['err_pct']:+.0f}%, {x['confidence']})"
                               if "pred_ms" in x else
                               (f" withheld (twin {x['twin_saving_pct']:+.0f}%)"
                                if "twin_ms" in x else
                                " (twin not simulated)" if x.get("twin_failed") else ""))
             for x in r["rows"]]
    return (f"{r['seed']} ps={r['ps']} w={r['workers']} t={r['threads']}/c={r['cores']} "
            f"{'sync ' if r['sync'] else ''}{','.join(r['planted']) or 'plain'}: "
            f"{r['now_ms']:.1f} ms; best {r['best_fix']} {r['best_saving_pct']:.0f}%; "
            f"first {r['fix_first']} {'ok' if r['fix_first_right'] else 'WRONG'}; "
            + "; ".join(cells))


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        sys.stderr.write(__doc__)
        return 0 if len(argv) >= 2 else 2
    tfdiag = argv[1]
    if not (os.path.isfile(tfdiag) and os.access(tfdiag, os.X_OK)):
        sys.stderr.write(f"run_indep.py: {tfdiag}: not an executable tfdiag binary "
                         "(usage: run_indep.py build/tfdiag [--set " + "|".join(jobs.SETS) + "] ...)\n")
        return 2
    seeds, out_json, work, spec, cache = list(jobs.REPORT_SEEDS), None, None, None, None
    i = 2
    while i < len(argv):
        if argv[i] == "--set":
            sets = jobs.SETS
            if argv[i + 1] not in sets:
                sys.stderr.write(f"--set: expected one of {', '.join(sets)}, got {argv[i + 1]}\n")
                return 2
            seeds = list(sets[argv[i + 1]])
        elif argv[i] == "--seeds":
            seeds = [int(x) for x in argv[i + 1].split(",")]
        elif argv[i] == "--json":
            out_json = argv[i + 1]
        elif argv[i] == "--spec":  # one job from a spec file (jobs.draw's keys) instead
            with open(argv[i + 1]) as f:
                spec = json.load(f)
        elif argv[i] == "--work":
            work = argv[i + 1]
        elif argv[i] == "--cache":
            cache = argv[i + 1]
            os.makedirs(cache, exist_ok=True)
        elif argv[i] == "--no-outlook":  # nothing to turn off here
            i += 1
            continue
        else:
            sys.stderr.write(f"run_indep.py: unknown argument {argv[i]!r}\n")
            return 2
        i += 2
    tmp = tempfile.TemporaryDirectory() if work is None else None
    work = work or tmp.name
    os.makedirs(work, exist_ok=True)
    results = []
    for seed in ([spec["seed"]] if spec else seeds):
        r = run_job(tfdiag, seed, work, spec, cache)
        results.append(r)
        print(fmt_row(r), flush=True)
    o = summarize(results)
    print(fmt_summary(o))
    if out_json:  # strict JSON: a figure of no predictions (NaN) is null
        strict = {k: (None if isinstance(v, float) and v != v else v) for k, v in o.items()}
        with open(out_json, "w") as f:
            json.dump({"jobs": results, "summary": strict}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
