#!/usr/bin/env python3
"""Checks that each generator's twin applies a finding's fix to the tasks it names, and to no
other (issue 44; run by tests/twin_fix_scope_test.cc, a few seconds). Before, an input-bound
finding about worker:3 was scored against a twin that prefetched every worker (indep report6's
14018: the LOW finding on the other 12 workers scored +81%).

For each generator (bench/twins/indep jobs + indepsim, gen2, gen3):
1. fix_for maps an input-bound finding naming worker:3 to a fix naming worker 3 alone, and one
   naming 12 of 13 workers (subject "worker:0-2, worker:4-12", each in its objects, as tfdiag
   writes it) to those 12.
2. The simulated twin changes worker 3 alone: on an asynchronous job whose input is as long as
   its compute, worker 3's median step falls by most of what job-wide prefetch buys it, and no
   other worker's falls by more than a third of what job-wide prefetch buys that worker.
3. gen2 and gen3: a ps-cpu-quota finding naming ps:1 lifts the quota of ps:1 alone (gen2: ps:0
   still throttled in the twin, ps:1 not); gen3: one naming ps:0 and ps:1 (subject and object)
   lifts both.
Usage: fix_scope_check.py; exit 0 when all hold, 1 with the failures listed.
"""
import copy
import os
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
for d in (HERE, os.path.join(HERE, "..", "gen2"), os.path.join(HERE, "..", "gen3")):
    sys.path.insert(0, d)
import gen2jobs  # noqa: E402
import gen2sim  # noqa: E402
import gen3jobs  # noqa: E402
import gen3sim  # noqa: E402
import indepsim  # noqa: E402
import jobs  # noqa: E402

fails = []


def check(ok, what):
    print(("ok    " if ok else "FAIL  ") + what)
    if not ok:
        fails.append(what)


def finding(rule, tasks, subject=None):
    return {"rule": rule, "severity": "high", "subject": subject or tasks[0],
            "objects": [{"subject": t} for t in tasks]}


def indep_job():
    s = jobs.draw(1000)
    s.update(workers=6, steps=12, sync=False, prefetch=False, ps=1, idle=[], tables=[],
             compute_ms=6.0, input_ms=6.0, step_sigma=0.01, op_sigma=0.01, overlap=0.0,
             worker_speed=[1.0] * 6, ps_speed=[1.0], ps_threads=4, ps_cores=4)
    for d in s["dense"]:
        d.update(mb=0.01, read_ms=0.01, apply_ms=0.01)
    return s


def gen2_job():
    s = copy.deepcopy(gen2jobs.draw(111))
    s.update(workers=6, sync=False, prefetch=False, ps_quota=None, compute_ms=6.0,
             input_ms=6.0, input_sigma=0.01, worker_sigma=0.01, pause_p=0, nic_gbps=25,
             worker_speed=[1.0] * 6, ps_threads=4, ps_cores=4.0, steps=8)
    return gen2jobs.place(s)


def gen3_job():
    s = copy.deepcopy(gen3jobs.draw(200))
    s.update(sync=False, prefetch=False, compute_ms=6.0, input_ms=6.0, input_cv=0.01)
    s["worker_speed"] = [1.0] * s["workers"]
    return s


# (name, module of jobs, simulate, a job, its per-worker median steps from the truth)
GENERATORS = [
    ("indep", jobs, indepsim.simulate, indep_job, lambda t: t["per_worker_median_ms"]),
    ("gen2", gen2jobs, gen2sim.simulate, gen2_job, lambda t: t["per_worker_step_ms"]),
    ("gen3", gen3jobs, gen3sim.simulate, gen3_job, lambda t: t["worker_median_ms"]),
]


def workers_named(fix):
    """The worker indices a prefetch fix tuple names (all of fix[1:], flattened)."""
    out = []
    for x in fix[1:]:
        out += list(x) if isinstance(x, (tuple, list)) else [x]
    return sorted(out)


def prefetch_scope(name, mod, simulate, make, per_worker):
    s = make()
    nw = s["workers"]
    fix = mod.fix_for(finding("input-bound", ["worker:3"]), s)
    check(fix is not None and fix[0] == "prefetch" and workers_named(fix) == [3],
          f"{name}: input-bound on worker:3 -> {fix} (prefetch on worker 3 alone)")
    big = copy.deepcopy(s)
    if big["workers"] < 13:
        big["workers"] = 13
        big["worker_speed"] = [1.0] * 13
    twelve = [f"worker:{w}" for w in range(13) if w != 3]
    fix12 = mod.fix_for(finding("input-bound", twelve, "worker:0-2, worker:4-12"), big)
    check(fix12 is not None and workers_named(fix12) == [w for w in range(13) if w != 3],
          f"{name}: input-bound on 12 of 13 workers -> prefetch on those 12")
    if fix is None:
        return
    base = per_worker(simulate(s))
    one = per_worker(simulate(mod.apply_fix(s, fix)))
    every = per_worker(simulate(mod.apply_fix(s, ("prefetch",))))
    gain = [b - e for b, e in zip(base, every)]
    check(gain[3] > 0.15 * base[3] and base[3] - one[3] > 0.6 * gain[3],
          f"{name}: worker 3 prefetched: {base[3]:.2f} -> {one[3]:.2f} ms (job-wide prefetch: "
          f"{every[3]:.2f} ms)")
    others = [w for w in range(nw) if w != 3]
    bad = [w for w in others if base[w] - one[w] > max(0.34 * gain[w], 0.05 * base[w])]
    check(not bad, f"{name}: the other {len(others)} workers keep their input in the step "
          f"(worker 0: {base[0]:.2f} -> {one[0]:.2f} ms; job-wide {every[0]:.2f} ms)"
          + (f"; changed: {bad}" if bad else ""))


def quota_scope():
    s = gen2_job()
    s["ps"] = 2
    s["ps_speed"], s["ps_node"] = [1.0, 1.0], [0, 1]
    s["tables"][0]["ids"] = s["tables"][0]["ids"] * 100 if s["tables"] else 0
    s["ps_quota"] = 0.3
    gen2jobs.place(s)
    fix = gen2jobs.fix_for(finding("ps-cpu-quota", ["ps:1"]), s)
    check(fix == ("quota", (1,)), f"gen2: ps-cpu-quota on ps:1 -> {fix}")
    both = gen2jobs.fix_for(finding("ps-cpu-quota", ["ps:0", "ps:1"]), s)
    check(gen2jobs.apply_fix(s, both)["ps_quota"] is None,
          "gen2: ps-cpu-quota on every PS -> the job's quota removed")
    base = gen2sim.simulate(s)["ps_throttled_ms"]
    twin = gen2sim.simulate(gen2jobs.apply_fix(s, fix))["ps_throttled_ms"]
    check(base[0] > 0 and base[1] > 0 and twin[1] == 0 and twin[0] > 0,
          f"gen2: the twin lifts ps:1's quota alone (throttled ms {base} -> {twin})")
    g = gen3jobs.draw(200)
    g = copy.deepcopy(g)
    if g["ps"] >= 2:
        g["ps_quota"] = [0.5] * g["ps"]
        fx = gen3jobs.fix_for(finding("ps-cpu-quota", ["ps:0", "ps:1"]), g)
        t = gen3jobs.apply_fix(g, fx)
        check(fx == ("quota", 0, 1) and t["ps_quota"][:2] == [0, 0] and
              all(q == 0.5 for q in t["ps_quota"][2:]),
              f"gen3: ps-cpu-quota on ps:0 and ps:1 -> {fx}, quotas {t['ps_quota']}")
    else:
        check(False, "gen3: draw(200) has 2 PS or more (the check needs them)")


def main():
    for g in GENERATORS:
        prefetch_scope(*g)
    quota_scope()
    if fails:
        print(f"{len(fails)} check(s) failed")
        return 1
    print("all checks hold")
    return 0


if __name__ == "__main__":
    sys.exit(main())
