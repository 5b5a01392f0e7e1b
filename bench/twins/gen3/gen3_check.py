#!/usr/bin/env python3
"""Checks of gen3 (bench/twins/gen3), a few seconds to a minute: fails (exit 1) on a generator
error. Usage: gen3_check.py [TFDIAG WORKDIR] [--draws N]
1. N draws (default 2000) and every candidate fix of each apply without error and keep the
   spec's invariants (placement within the PS count, per-PS lists of the PS count, workers 2-256).
2. Small jobs simulate to finite positive steps; a planted cause moves the truth the expected way:
   a straggler's fix, prefetch on slow input, partitioning a hot table, a lazy optimizer and
   async training each shorten the step (or, for an asynchronous straggler, raise steps/s).
3. With TFDIAG and WORKDIR: two DEV seeds' captures read by `tfdiag analyze -f json` with every
   task seen and no unresolved input, its median worker step within 5% of the generator's truth;
   and run_indep's scorer (as run_gen3.py uses it) flags a wrong prediction and a wrong Fix first.
4. The twin a finding names: idle-ps of a range of PS ("ps:2-15") drops every one of them.
Standard library only.
"""
import json
import math
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "indep"))
import gen3jobs  # noqa: E402
import gen3sim  # noqa: E402
import run_indep  # noqa: E402

FAILS = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        FAILS.append(what)


def invariants(s):
    n = s["ps"]
    assert 1 <= n <= 64 and 1 <= s["workers"] <= gen3jobs.MAX_WORKERS, (n, s["workers"])
    for key in ("ps_quota", "ps_speed", "ps_steal", "ps_host", "ps_gbps"):
        assert len(s[key]) == n, key
    assert len(s["worker_speed"]) == s["workers"]
    for v in s["vars"]:
        assert len(v["placement"]) == v["parts"] and all(0 <= p < n for p in v["placement"])
    assert 1 <= s["replicas_to_aggregate"] <= s["workers"]


def draws(n):
    bad = 0
    for seed in range(10000, 10000 + n):
        try:
            s = gen3jobs.draw(seed)
            invariants(s)
            for fx in gen3jobs.candidate_fixes(s):
                invariants(gen3jobs.apply_fix(s, fx))
            invariants(gen3jobs.with_workers(s, min(gen3jobs.MAX_WORKERS, 2 * s["workers"])))
        except Exception as e:  # noqa: BLE001  (a generator error of any kind is the finding)
            bad += 1
            print(f"  draw {seed}: {type(e).__name__}: {e}")
    check(bad == 0, f"{n} draws, their candidate fixes and 2x sweeps keep the invariants")


def small(planted, **over):
    """A small job of one planted cause (a seed that draws it, cut to 8 workers at most)."""
    for seed in range(20000, 40000):
        s = gen3jobs.draw(seed)
        if s["planted"] == [planted] and s["workers"] <= 16:
            s.update(over)
            return s
    raise RuntimeError(f"no small draw plants {planted}")


def directions():
    for cause, fix_of, by in (
            ("straggler", lambda s: ("straggler", min(range(s["workers"]),
                                                      key=lambda w: s["worker_speed"][w])), None),
            ("hdfs", lambda s: ("prefetch",), "median_step_ms"),
            ("hot_emb", lambda s: ("partition", next(v["name"] for v in s["vars"]
                                                     if v["parts"] == 1 and v["kind"] == "emb")),
             "median_step_ms"),
            ("dense_adam", lambda s: ("lazy", next(v["name"] for v in s["vars"]
                                                   if v.get("optimizer") == "dense_adam")),
             "median_step_ms"),
            ("sync", lambda s: ("async",), "median_step_ms")):
        s = small(cause)
        base = gen3sim.simulate(s)
        fixed = gen3sim.simulate(gen3jobs.apply_fix(s, fix_of(s)))
        ok = all(math.isfinite(x) and x > 0 for x in (base["median_step_ms"],
                                                       base["steps_per_s"]))
        if by is None:  # a straggler: steps/s rises (async) or the step shortens (sync)
            better = (fixed["steps_per_s"] > base["steps_per_s"] * 1.02 if not s["sync"] else
                      fixed["median_step_ms"] < base["median_step_ms"] * 0.98)
        else:
            better = fixed[by] < base[by] * 0.98
        check(ok and better, f"{cause} (seed {s['seed']}): fixing it moves the truth as expected "
              f"({base['median_step_ms']:.1f} -> {fixed['median_step_ms']:.1f} ms, "
              f"{base['steps_per_s']:.0f} -> {fixed['steps_per_s']:.0f} steps/s)")


def with_tfdiag(tfdiag, work):
    for seed in (200, 203):
        s = gen3jobs.draw(seed)
        path = os.path.join(work, f"gen3_{seed}.json")
        truth = gen3sim.simulate(s, path)
        r = subprocess.run([tfdiag, "analyze", "-f", "json", path], capture_output=True,
                           text=True)
        if r.returncode not in (0, 1):
            check(False, f"seed {seed}: tfdiag analyze exit {r.returncode}: {r.stderr[-300:]}")
            continue
        rep = json.loads(r.stdout)
        tasks = {t["task"] for t in rep.get("tasks", [])}
        want = {f"ps:{j}" for j in range(s["ps"])} | {f"worker:{w}" for w in range(s["workers"])}
        check(want <= tasks, f"seed {seed}: all {len(want)} tasks seen")
        unres = (rep.get("import") or {}).get("unresolved_inputs", -1)
        check(unres == 0, f"seed {seed}: no unresolved inputs ({unres})")
        med = [t["step_median_ns"] / 1e6 for t in rep["tasks"]
               if t["task"].startswith("worker:") and t.get("step_median_ns")]
        m = sorted(med)[len(med) // 2] if med else float("nan")
        err = 100 * (m - truth["median_of_worker_medians_ms"]) / \
            truth["median_of_worker_medians_ms"]
        check(abs(err) <= 5, f"seed {seed}: tfdiag's median worker step {m:.2f} ms within 5% of "
              f"the generator's {truth['median_of_worker_medians_ms']:.2f} ms ({err:+.1f}%)")
    # The scorer: a prediction 30% off its twin is scored 30% off; Fix first naming a fix that
    # buys nothing against a best fix of 40% is wrong.
    f = {"rule": "hot-ps", "severity": "high",
         "impact": {"method": "replay", "confidence": "high", "step_ns_after_fix": 65e6,
                    "saving_pct": 35, "low_ns": 60e6, "high_ns": 70e6}}
    row = run_indep.finding_row(f, ("partition", "x"), lambda fx: 50.0, 100.0)
    check(abs(row["err_pct"] - 30) < 1e-9 and not row["in_range"],
          "the scorer flags a prediction 30% off its twin (and its range missing the twin)")
    g = {"rule": "input-bound", "severity": "medium",
         "impact": {"method": "replay", "confidence": "high", "step_ns_after_fix": 80e6,
                    "saving_pct": 20}}
    rows = [run_indep.finding_row(g, ("prefetch",), lambda fx: 100.0, 100.0)]
    top, right = run_indep.fix_first_verdict(rows, 40.0)
    check(top is not None and not right, "the scorer flags a Fix first that buys 0% of a 40% fix")


def fix_texts():
    """The twin a finding's text names: idle-ps over many PS names them as a range in its subject
    ("ps:2-15") and one by one in its objects; the twin drops every one of them."""
    s = gen3jobs.draw(200)
    s["ps"] = 16
    f = {"rule": "idle-ps", "subject": "ps:2-15",
         "objects": [{"subject": f"ps:{j}"} for j in range(2, 16)]}
    fix = gen3jobs.fix_for(f, s)
    check(fix == ("ps_count", 2) + tuple(range(2, 16)),
          f"the idle-ps twin drops every PS the finding names (ps:2-15: {fix})")


def main(argv):
    n = 2000
    if "--draws" in argv:
        n = int(argv[argv.index("--draws") + 1])
        del argv[argv.index("--draws"):argv.index("--draws") + 2]
    draws(n)
    directions()
    fix_texts()
    if len(argv) >= 3:
        with_tfdiag(argv[1], argv[2])
    if FAILS:
        print(f"{len(FAILS)} check(s) failed")
        return 1
    print("all checks hold")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
