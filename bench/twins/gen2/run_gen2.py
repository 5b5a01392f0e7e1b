#!/usr/bin/env python3
"""tfdiag's predictions on held-out jobs of a second independent generator (issue 44, "held-out
jobs from a generator tfdiag has never seen"): jobs drawn by gen2jobs.draw, simulated by gen2sim
(written apart from tfdiag and the other twin generators), each finding against its fixed twin,
and the scaling outlook against the same job simulated at 2x and 4x the workers.

Usage: run_gen2.py TFDIAG [--set dev|report|report2] [--seeds A,B,..] [--json OUT] [--cache DIR]
                          [--outlook-max-workers N] [--no-outlook]
  --set dev (default) runs DEV_SEEDS, used to make the generator and harness work; --set report
  runs REPORT_SEEDS (spent: reported in session 22, tuned on since), --set report2 REPORT2_SEEDS,
  which only the lead runs, once, after the merges (nobody tunes on them).
  --cache DIR keeps each job's capture and its twins' figures (gen2sim is deterministic).
  The outlook is checked on jobs of at most --outlook-max-workers captured workers (default 32:
  their 4x is simulated).
Prints each job's row and the summary, scored exactly as bench/twins/indep/run_indep.py scores the
independent suite (its finding_row, fix_first_verdict, summarize and fmt_summary), then the
outlook's figures: its steps/s at 2x and 4x (as is, and after Fix first) within 15% of the
simulated sweep, and whether the saturation point (scaling efficiency under 60%) falls in the same
bracket (up to 2x, 2x-4x, beyond 4x) as the simulated one. Standard library only; exit 0.
"""
import argparse
import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "indep"))
import gen2jobs  # noqa: E402
import gen2sim  # noqa: E402
import run_indep  # noqa: E402  (the scoring only: its simulator is not used here)

MIN_EFF = 0.60
OUTLOOK_TOL = 15.0


def figure(truth, fix, base, spec):
    """A twin's step (ms): its median step; a straggler fix of an asynchronous job is judged by
    throughput (the base median step x base throughput step / twin's): a slow worker there slows
    only itself."""
    if fix[0] == "straggler" and not spec["sync"]:
        return base["median_step_ms"] * truth["throughput_step_ms"] / base["throughput_step_ms"]
    return truth["median_step_ms"]


def bracket(sat_workers, n):
    """Where a saturation point falls against the captured n workers."""
    if not sat_workers:
        return ">4x"
    return "<=2x" if sat_workers <= 2 * n else ("2x-4x" if sat_workers <= 4 * n else ">4x")


def judge_outlook(report, s, base, memo, fixes_of):
    """The outlook's 2x and 4x points against simulations of the same job at those counts."""
    o = report.get("outlook") or {}
    n = s["workers"]
    out = {"withheld": o.get("withheld", "") or ("no outlook" if not o else ""), "points": []}
    if not o or not o.get("points"):
        return out

    def rate(spec_fn, key, w):
        k = f"{key}@{w}"
        if k not in memo:
            memo[k] = gen2sim.simulate(gen2jobs.with_workers(spec_fn(), w))["steps_per_s"]
        return memo[k]

    ff = o.get("fix_first") or {}
    fix = fixes_of(ff.get("rule"), ff.get("subject")) if ff else None
    truth_eff = {}
    for p in o["points"]:
        w = p["workers"]
        if w not in (2 * n, 4 * n):
            continue
        t = rate(lambda: s, "asis", w)
        truth_eff[w] = (t / base["steps_per_s"]) / (w / n)
        row = {"workers": w, "pred": p["steps_per_s"], "truth": t,
               "err_pct": 100 * (p["steps_per_s"] - t) / t}
        if fix is not None and p.get("steps_per_s_after_fix"):
            tf = rate(lambda: gen2jobs.apply_fix(s, fix), repr(fix), w)
            row.update(pred_fix=p["steps_per_s_after_fix"], truth_fix=tf,
                       err_fix_pct=100 * (p["steps_per_s_after_fix"] - tf) / tf)
        out["points"].append(row)
    sat = (o.get("saturates_at") or {}).get("workers")
    truth_sat = None
    for w in sorted(truth_eff):
        if truth_eff[w] < MIN_EFF:
            truth_sat = w
            break
    out.update(saturates_at=sat, resource=(o.get("saturates_at") or {}).get("resource", ""),
               truth_eff={str(k): v for k, v in truth_eff.items()},
               sat_bracket=bracket(sat, n), truth_bracket=bracket(truth_sat, n),
               confidence=o.get("confidence", ""))
    out["sat_right"] = out["sat_bracket"] == out["truth_bracket"]
    return out


def run_job(tfdiag, seed, work, cache=None, outlook=True, outlook_max=32):
    s = gen2jobs.draw(seed)
    path, memo_path, memo, base = run_indep.captured(s, f"gen2_{seed}", work, cache,
                                                     gen2sim.simulate)
    report = run_indep.analyze(tfdiag, path)
    if not cache:
        os.remove(path)

    def twin(fix):
        key = repr(tuple(fix))
        if key not in memo:
            memo[key] = figure(gen2sim.simulate(gen2jobs.apply_fix(s, tuple(fix))), fix, base, s)
        return memo[key]

    now = base["median_step_ms"]
    rows = [run_indep.finding_row(f, gen2jobs.fix_for(f, s), twin, now)
            for f in report.get("findings", [])]
    best, best_saving = None, 0.0
    for fx in gen2jobs.candidate_fixes(s) + [tuple(r["fix"]) for r in rows if r["fix"]]:
        fx = tuple(tuple(x) if isinstance(x, list) else x for x in fx)
        sv = 100 * (now - twin(fx)) / now
        if sv > best_saving:
            best, best_saving = fx, sv
    top, right = run_indep.fix_first_verdict(rows, best_saving)
    out = {"seed": seed, "ps": s["ps"], "workers": s["workers"], "threads": s["ps_threads"],
           "cores": s["ps_cores"], "sync": s["sync"], "planted": s["planted"],
           "now_ms": now, "truth": base, "rows": rows,
           "best_fix": list(best) if best else None, "best_saving_pct": best_saving,
           "fix_first": top["rule"] if top else None, "fix_first_right": right,
           "healthy": best_saving < 5,
           "severe_findings": [r["rule"] for r in rows if r["severity"] in run_indep.SEVERE]}
    if outlook and s["workers"] <= outlook_max:
        by = {}
        for f in report.get("findings", []):
            by.setdefault(f["rule"], []).append(f)

        def fixes_of(rule, subject):
            for f in by.get(rule, []):
                if not subject or f.get("subject") == subject:
                    fx = gen2jobs.fix_for(f, s)
                    if fx is not None:
                        return fx
            return None
        out["outlook"] = judge_outlook(report, s, base, memo, fixes_of)
    if memo_path:
        with open(memo_path, "w") as f:
            json.dump(memo, f)
    return out


def pct(v, q):
    return run_indep.pct(v, q)


def summarize_outlook(results):
    pts = [p for r in results for p in (r.get("outlook") or {}).get("points", [])]
    errs = [abs(p["err_pct"]) for p in pts]
    ferrs = [abs(p["err_fix_pct"]) for p in pts if "err_fix_pct" in p]
    judged = [r["outlook"] for r in results if r.get("outlook") and r["outlook"]["points"]]
    return {"jobs_checked": len([r for r in results if "outlook" in r]),
            "withheld": sum(1 for r in results if r.get("outlook") and not r["outlook"]["points"]),
            "points": len(errs), "within": sum(e <= OUTLOOK_TOL for e in errs),
            "median": pct(errs, 0.5), "max": max(errs, default=float("nan")),
            "fix_points": len(ferrs), "fix_within": sum(e <= OUTLOOK_TOL for e in ferrs),
            "saturation_right": sum(o["sat_right"] for o in judged),
            "saturation_judged": len(judged)}


def fmt_outlook(o):
    return (f"outlook: {o['jobs_checked']} jobs checked ({o['withheld']} withheld); 2x/4x points "
            f"within {OUTLOOK_TOL:.0f}%: {o['within']}/{o['points']} (|error| median "
            f"{o['median']:.1f}%, max {o['max']:.1f}%); after Fix first: {o['fix_within']}/"
            f"{o['fix_points']}; saturation in the simulated bracket: {o['saturation_right']}/"
            f"{o['saturation_judged']}")


def main(argv):
    ap = argparse.ArgumentParser(description="tfdiag against gen2's held-out jobs (issue 44)",
                                 usage=__doc__.split("Usage: ")[1].split("\n  --set")[0])
    ap.add_argument("tfdiag")
    ap.add_argument("--set", choices=("dev", "report", "report2"), default="dev")
    ap.add_argument("--seeds", help="A,B,..: these seeds instead of the set's")
    ap.add_argument("--json")
    ap.add_argument("--cache")
    ap.add_argument("--outlook-max-workers", type=int, default=32)
    ap.add_argument("--no-outlook", action="store_true")
    a = ap.parse_args(argv[1:])
    if not (os.path.isfile(a.tfdiag) and os.access(a.tfdiag, os.X_OK)):
        sys.stderr.write(f"run_gen2.py: {a.tfdiag}: not an executable tfdiag binary\n")
        return 2
    seeds = list({"dev": gen2jobs.DEV_SEEDS, "report": gen2jobs.REPORT_SEEDS,
                  "report2": gen2jobs.REPORT2_SEEDS}[a.set])
    if a.seeds:
        seeds = [int(x) for x in a.seeds.split(",")]
    if a.cache:
        os.makedirs(a.cache, exist_ok=True)
    tfdiag, cache, outlook, omax, out_json = (a.tfdiag, a.cache, not a.no_outlook,
                                              a.outlook_max_workers, a.json)
    with tempfile.TemporaryDirectory() as work:
        results = []
        for seed in seeds:
            r = run_job(tfdiag, seed, work, cache, outlook, omax)
            results.append(r)
            line = run_indep.fmt_row(r)
            o = r.get("outlook")
            if o:
                line += " | outlook " + (o["withheld"] or ", ".join(
                    f"{p['workers']}w {p['err_pct']:+.0f}%" +
                    (f" (fix {p['err_fix_pct']:+.0f}%)" if "err_fix_pct" in p else "")
                    for p in o["points"]) + f"; sat {o['sat_bracket']} vs {o['truth_bracket']}")
            print(line, flush=True)
    summ = run_indep.summarize(results)
    osumm = summarize_outlook(results)
    print(run_indep.fmt_summary(summ))
    print(fmt_outlook(osumm))
    if out_json:
        strict = lambda d: {k: (None if isinstance(v, float) and v != v else v)
                            for k, v in d.items()}
        with open(out_json, "w") as f:
            json.dump({"jobs": results, "summary": strict(summ), "outlook": strict(osumm)}, f,
                      indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
