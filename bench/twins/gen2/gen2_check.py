#!/usr/bin/env python3
"""Checks of gen2 that can fail (run by tests/gen2_test.cc, a few seconds):

1. tfdiag reads gen2's captures: on two small dev jobs (DEV_SEEDS 103 and 111), the median over
   the workers of `tfdiag analyze -f json`'s per-worker median step (tasks[].step_median_ns) is
   within 5% of the generator's own (each worker's median step, its first step left out), and it
   finds every worker and PS task.
2. gen2's mechanisms act: a CFS quota of half a core on a PS that needs more throttles it and
   lengthens the step; the same job without the quota is not throttled.
3. The scorer (run_indep.py's finding_row, fix_first_verdict and summarize, which run_gen2.py
   uses) flags a wrong prediction: a `high` prediction 50% off its twin is counted outside 10%,
   and `Fix first` on a fix buying under 80% of the best single fix is counted wrong.
4. The draws are consistent: over 2000 seeds and every candidate fix of each, a table's shard
   weights are one per PS (with "idle" drawn after "uneven", or a PS dropped, they were not: 9
   of 3000 draws and their fixes, an IndexError in the simulator where the list was short).
Usage: gen2_check.py TFDIAG WORKDIR; exit 0 when all hold, 1 with the failures listed.
"""
import copy
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "indep"))
import gen2jobs  # noqa: E402
import gen2sim  # noqa: E402
import run_indep  # noqa: E402

fails = []


def check(ok, what):
    print(("ok    " if ok else "FAIL  ") + what)
    if not ok:
        fails.append(what)


def capture_matches(tfdiag, work, seed):
    s = gen2jobs.draw(seed)
    path = os.path.join(work, f"gen2_{seed}.json")
    truth = gen2sim.simulate(s, path)
    r = subprocess.run([tfdiag, "analyze", "-f", "json", path], capture_output=True, text=True)
    check(r.returncode in (0, 1), f"seed {seed}: tfdiag analyze exits 0/1 (got {r.returncode}: "
          f"{r.stderr[-300:]})")
    if r.returncode not in (0, 1):
        return
    rep = json.loads(r.stdout)
    tasks = {t["task"]: t for t in rep["tasks"]}
    want = {f"ps:{p}" for p in range(s["ps"])} | {f"worker:{w}" for w in range(s["workers"])}
    check(want <= set(tasks), f"seed {seed}: every task found ({len(want)} expected, "
          f"missing {sorted(want - set(tasks))[:5]})")
    meds = sorted(tasks[f"worker:{w}"]["step_median_ns"] / 1e6 for w in range(s["workers"])
                  if f"worker:{w}" in tasks)
    if not meds:
        check(False, f"seed {seed}: no worker steps read")
        return
    got, want_ms = meds[len(meds) // 2], truth["worker_median_step_ms"]
    err = 100 * (got - want_ms) / want_ms
    check(abs(err) <= 5, f"seed {seed}: tfdiag's median worker step {got:.2f} ms against the "
          f"generator's {want_ms:.2f} ms ({err:+.1f}%, within 5%)")


def quota_acts():
    s = gen2jobs.draw(111)
    s = copy.deepcopy(s)
    s["ps_quota"], s["ps_threads"], s["ps_cores"] = None, 4, 4.0
    s["tables"][0]["ids"] *= 100  # a PS that needs more than half a core
    s["nic_gbps"] = 25
    gen2jobs.place(s)
    free = gen2sim.simulate(s)
    q = copy.deepcopy(s)
    q["ps_quota"] = 0.5
    capped = gen2sim.simulate(q)
    check(max(free["ps_throttled_ms"]) == 0, "no quota: no PS throttled")
    check(max(capped["ps_throttled_ms"]) > 0 and
          capped["median_step_ms"] > 1.2 * free["median_step_ms"],
          f"a 0.5-core quota throttles a PS ({max(capped['ps_throttled_ms']):.0f} ms) and "
          f"lengthens the step {free['median_step_ms']:.1f} -> {capped['median_step_ms']:.1f} ms")


def scorer_flags_wrong():
    twins = {("prefetch",): 60.0, ("partition", ("t",)): 90.0}
    now = 100.0

    def finding(rule, after_ms, conf):
        return {"rule": rule, "severity": "high",
                "impact": {"method": "replay", "step_ns_after_fix": after_ms * 1e6,
                           "saving_pct": 100 * (now - after_ms) / now, "confidence": conf,
                           "low_ns": after_ms * 0.95e6, "high_ns": after_ms * 1.05e6}}
    # right: prefetch predicted 62 ms (twin 60); wrong: partition predicted 45 ms (twin 90)
    rows = [run_indep.finding_row(finding("input-bound", 62.0, "high"), ("prefetch",),
                                  twins.get, now),
            run_indep.finding_row(finding("hot-ps", 45.0, "high"), ("partition", ("t",)),
                                  twins.get, now)]
    check(abs(rows[1]["err_pct"] - (-50.0)) < 1e-9, "the scorer's error of a 45 ms prediction "
          "against a 90 ms twin is -50%")
    top, right = run_indep.fix_first_verdict(rows, best_saving=40.0)
    check(top["rule"] == "hot-ps" and not right,
          "Fix first on the fix predicted to buy most (hot-ps, 55%) that buys 10% of a best 40% "
          "is counted wrong")
    summ = run_indep.summarize([{"rows": rows, "best_saving_pct": 40.0, "healthy": False,
                                 "fix_first_right": right, "severe_findings": []}])
    check(summ["labels"]["high"]["n"] == 2 and summ["labels"]["high"]["within"] == 1,
          "of two `high` predictions, the one 50% off is counted outside 10%")
    check(summ["range_covered"] == 1 and summ["max"] == 50.0,
          "the wrong prediction's range misses its twin and sets the max |error|")
    _, right2 = run_indep.fix_first_verdict(rows[:1], best_saving=40.0)
    check(right2, "Fix first on prefetch (40% of a best 40%) is counted right")
    # A `low` prediction is scored but never named Fix first (tfdiag prints it "not predicted").
    low = [rows[0], run_indep.finding_row(finding("hot-ps", 45.0, "low"), ("partition", ("t",)),
                                          twins.get, now)]
    top3, right3 = run_indep.fix_first_verdict(low, best_saving=40.0)
    check(top3["rule"] == "input-bound" and right3 and "err_pct" in low[1],
          "a `low` prediction (hot-ps, 55%) is scored but Fix first stays on prefetch")


def draws_consistent():
    bad = []
    for seed in range(2000):
        s = gen2jobs.draw(seed)
        for spec in [s] + [gen2jobs.apply_fix(s, fx) for fx in gen2jobs.candidate_fixes(s)]:
            for t in spec["tables"]:
                if t.get("shard_weights") and len(t["shard_weights"]) != spec["ps"]:
                    bad.append(seed)
    check(not bad, f"shard weights one per PS over 2000 draws and their fixes (bad: {bad[:5]})")


def main(argv):
    if len(argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    tfdiag, work = argv[1], argv[2]
    os.makedirs(work, exist_ok=True)
    for seed in (103, 111):
        capture_matches(tfdiag, work, seed)
    quota_acts()
    scorer_flags_wrong()
    draws_consistent()
    print(f"{len(fails)} failed" if fails else "all checks hold")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
