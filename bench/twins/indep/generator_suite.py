"""The harness of the independent generators' suites (issue 44: bench/twins/gen2/run_gen2.py,
bench/twins/gen3/run_gen3.py): for each job a generator draws, tfdiag's findings against fixed
twins, the best single fix over every candidate, and the scaling outlook against the same job
simulated at 2x and 4x the workers. Scored with run_indep.py's functions (finding_row,
fix_first_verdict, summarize, fmt_summary, fmt_row, step_of), so every suite is scored alike.

A generator is two modules: `jobs` (draw(seed), apply_fix(spec, fix), fix_for(finding, spec),
candidate_fixes(spec), with_workers(spec, n), the seed ranges, and optionally ps_nodes(spec): each
PS's node, which the harness gives tfdiag as a pod list beside the capture, as `kubectl get pods
-o json` would: write_pods) and `sim` (simulate(spec,
path=None) -> its truth: median_step_ms, throughput_step_ms, steps_per_s). The harness shares no
code with any simulator. Standard library only.
"""
import argparse
import json
import os
import sys
import tempfile

import run_indep

MIN_EFF = 0.60
OUTLOOK_TOL = 15.0


def bracket(sat_workers, n):
    """Where a saturation point falls against the captured n workers."""
    if not sat_workers:
        return ">4x"
    return "<=2x" if sat_workers <= 2 * n else ("2x-4x" if sat_workers <= 4 * n else ">4x")


def judge_outlook(report, s, base, memo, fixes_of, jobs, sim, max_workers=None):
    """The outlook's 2x and 4x points against simulations of the same job at those counts (none
    above `max_workers`, the generator's largest job, where it has one)."""
    o = report.get("outlook") or {}
    n = s["workers"]
    out = {"withheld": o.get("withheld", "") or ("no outlook" if not o else ""), "points": []}
    if not o or not o.get("points"):
        return out

    def rate(spec_fn, key, w):
        k = f"{key}@{w}"
        if k not in memo:
            memo[k] = sim.simulate(jobs.with_workers(spec_fn(), w))["steps_per_s"]
        return memo[k]

    ff = o.get("fix_first") or {}
    fix = fixes_of(ff.get("rule"), ff.get("subject")) if ff else None
    truth_eff = {}
    for p in o["points"]:
        w = p["workers"]
        if w not in (2 * n, 4 * n) or (max_workers is not None and w > max_workers):
            continue
        t = rate(lambda: s, "asis", w)
        truth_eff[w] = (t / base["steps_per_s"]) / (w / n)
        row = {"workers": w, "pred": p["steps_per_s"], "truth": t,
               "err_pct": 100 * (p["steps_per_s"] - t) / t}
        if fix is not None and p.get("steps_per_s_after_fix"):
            tf = rate(lambda: jobs.apply_fix(s, fix), repr(fix), w)
            row.update(pred_fix=p["steps_per_s_after_fix"], truth_fix=tf,
                       err_fix_pct=100 * (p["steps_per_s_after_fix"] - tf) / tf)
        out["points"].append(row)
    sat = (o.get("saturates_at") or {}).get("workers")
    truth_sat = next((w for w in sorted(truth_eff) if truth_eff[w] < MIN_EFF), None)
    out.update(saturates_at=sat, resource=(o.get("saturates_at") or {}).get("resource", ""),
               truth_eff={str(k): v for k, v in truth_eff.items()},
               sat_bracket=bracket(sat, n), truth_bracket=bracket(truth_sat, n),
               confidence=o.get("confidence", ""))
    out["sat_right"] = out["sat_bracket"] == out["truth_bracket"]
    return out


def write_pods(path, ps_nodes, workers):
    """A pod list (`kubectl get pods -o json`'s shape) placing the job's tasks: PS pod i on node
    f"node-{ps_nodes[i]}", each worker on a node of its own. Each pod carries its TFJob labels
    (replica type and index, which tfdiag joins to the capture's tasks) and its node, nothing more:
    no containers, as the generators model no container resources or env."""
    def pod(role, i, node):
        return {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": f"job-{role}-{i}", "namespace": "default",
                             "labels": {"training.kubeflow.org/job-name": "job",
                                        "training.kubeflow.org/replica-type": role,
                                        "training.kubeflow.org/replica-index": str(i)}},
                "spec": {"nodeName": node, "containers": []},
                "status": {"phase": "Running"}}
    items = [pod("ps", i, f"node-{n}") for i, n in enumerate(ps_nodes)]
    items += [pod("worker", w, f"node-worker-{w}") for w in range(workers)]
    with open(path, "w") as f:
        json.dump({"apiVersion": "v1", "kind": "List", "items": items}, f)


def run_job(tfdiag, seed, work, jobs, sim, name, cache=None, outlook=True, outlook_max=32,
            max_workers=None):
    """One job of seed `seed`: its capture (f"{name}_{seed}", cached under `cache`), tfdiag's
    findings each against its fixed twin, the best single fix, and the outlook where the job has
    at most `outlook_max` captured workers."""
    s = jobs.draw(seed)
    path, memo_path, memo, base = run_indep.captured(s, f"{name}_{seed}", work, cache,
                                                     sim.simulate)
    more = []
    if hasattr(jobs, "ps_nodes"):
        more = [os.path.join(cache or work, f"{name}_{seed}.pods.json")]
        write_pods(more[0], jobs.ps_nodes(s), s["workers"])
    report = run_indep.analyze(tfdiag, path, *more)
    if not cache:
        for p in [path] + more:
            os.remove(p)

    def twin(fix):
        """The fixed twin's step (ms), or None where the generator raises RuntimeError for it
        (gen2sim's event limit on a twin too large to run here is the case seen), which leaves
        that row unscored, said in its row and counted in the summary's `unscored`."""
        key = repr(tuple(fix))
        if key not in memo:
            try:
                memo[key] = run_indep.step_of(sim.simulate(jobs.apply_fix(s, tuple(fix))), fix,
                                              base, s)
            except RuntimeError as e:
                print(f"{name} {seed}: twin {tuple(fix)} not simulated: {e}", file=sys.stderr)
                memo[key] = None
        return memo[key]

    now = base["median_step_ms"]
    rows = [run_indep.finding_row(f, jobs.fix_for(f, s), twin, now)
            for f in report.get("findings", [])]
    best, best_saving = None, 0.0
    for fx in jobs.candidate_fixes(s) + [tuple(r["fix"]) for r in rows if r["fix"]]:
        fx = tuple(tuple(x) if isinstance(x, list) else x for x in fx)
        t = twin(fx)
        if t is None:
            continue
        sv = 100 * (now - t) / now
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
                    fx = jobs.fix_for(f, s)
                    if fx is not None:
                        return fx
            return None
        out["outlook"] = judge_outlook(report, s, base, memo, fixes_of, jobs, sim, max_workers)
    if memo_path:
        with open(memo_path, "w") as f:
            json.dump(memo, f)
    return out


def summarize_outlook(results):
    pts = [p for r in results for p in (r.get("outlook") or {}).get("points", [])]
    errs = [abs(p["err_pct"]) for p in pts]
    ferrs = [abs(p["err_fix_pct"]) for p in pts if "err_fix_pct" in p]
    judged = [r["outlook"] for r in results if r.get("outlook") and r["outlook"]["points"]]
    return {"jobs_checked": sum(1 for r in results if "outlook" in r),
            "withheld": sum(1 for r in results if r.get("outlook") and not r["outlook"]["points"]),
            "points": len(errs), "within": sum(e <= OUTLOOK_TOL for e in errs),
            "median": run_indep.pct(errs, 0.5), "max": max(errs, default=float("nan")),
            "fix_points": len(ferrs), "fix_within": sum(e <= OUTLOOK_TOL for e in ferrs),
            "saturation_right": sum(o["sat_right"] for o in judged),
            "saturation_judged": len(judged)}


def fmt_outlook(o):
    return (f"outlook: {o['jobs_checked']} jobs checked ({o['withheld']} withheld); 2x/4x points "
            f"within {OUTLOOK_TOL:.0f}%: {o['within']}/{o['points']} (|error| median "
            f"{o['median']:.1f}%, max {o['max']:.1f}%); after Fix first: {o['fix_within']}/"
            f"{o['fix_points']}; saturation in the simulated bracket: {o['saturation_right']}/"
            f"{o['saturation_judged']}")


def main(argv, doc, name, jobs, sim, sets, outlook_max=32, max_workers=None):
    """The command line of a generator's suite: `doc` its module docstring (the usage after
    "Usage: "), `name` its short name (gen2), `sets` {set name: seeds} ("dev" the default)."""
    ap = argparse.ArgumentParser(description=f"tfdiag against {name}'s held-out jobs (issue 44)",
                                 usage=doc.split("Usage: ")[1].split("\n  --set")[0])
    ap.add_argument("tfdiag")
    ap.add_argument("--set", choices=tuple(sets), default="dev")
    ap.add_argument("--seeds", help="A,B,..: these seeds instead of the set's")
    ap.add_argument("--json")
    ap.add_argument("--cache")
    ap.add_argument("--outlook-max-workers", type=int, default=outlook_max)
    ap.add_argument("--no-outlook", action="store_true")
    a = ap.parse_args(argv[1:])
    if not (os.path.isfile(a.tfdiag) and os.access(a.tfdiag, os.X_OK)):
        sys.stderr.write(f"run_{name}.py: {a.tfdiag}: not an executable tfdiag binary\n")
        return 2
    seeds = list(sets[a.set])
    if a.seeds:
        seeds = [int(x) for x in a.seeds.split(",")]
    if a.cache:
        os.makedirs(a.cache, exist_ok=True)
    results = []
    with tempfile.TemporaryDirectory() as work:
        for seed in seeds:
            r = run_job(a.tfdiag, seed, work, jobs, sim, name, a.cache, not a.no_outlook,
                        a.outlook_max_workers, max_workers)
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
    if a.json:
        def strict(d):
            return {k: (None if isinstance(v, float) and v != v else v) for k, v in d.items()}
        with open(a.json, "w") as f:
            json.dump({"jobs": results, "summary": strict(summ), "outlook": strict(osumm)}, f,
                      indent=1)
    return 0
