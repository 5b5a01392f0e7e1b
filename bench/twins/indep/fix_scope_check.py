#!/usr/bin/env python3
"""Checks that each generator's twin applies a finding's fix as its text says (issue 44; run by
tests/twin_fix_scope_test.cc, a few seconds):
1. A fix on tasks applies to the tasks the finding names and to no other: a straggler-worker
   finding naming worker:3 speeds worker 3 alone (each generator), one naming 4 of 13 workers
   (subject "worker:0-2, worker:4", each in its objects, as tfdiag writes it) those 4; a
   ps-cpu-quota finding naming ps:1 lifts ps:1's quota alone (gen2: ps:0 still throttled in the
   simulated twin, ps:1 not; gen3: one naming ps:0 and ps:1 lifts both); an indep slow-ps-host
   finding moves the PS it names, not every slow one.
2. input-bound's fix is a change to the input pipeline's code (prefetch, parallel reads), which
   every worker of the job runs: its twin prefetches every worker whichever workers the finding
   names (session 24 review: a twin prefetching the named workers alone agreed with a prediction
   that did the same, not with the fix text), and on an asynchronous job whose input is as long
   as its compute every worker's median step falls.
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


def changed_workers(s, twin):
    """The workers whose speed the twin changed (every generator spells it worker_speed)."""
    return [w for w, (a, b) in enumerate(zip(s["worker_speed"], twin["worker_speed"])) if a != b]


def straggler_scope(name, mod, simulate, make, per_worker):
    s = make()
    s["worker_speed"] = [1.0] * s["workers"]
    s["worker_speed"][3] = 0.5
    fix = mod.fix_for(finding("straggler-worker", ["worker:3"]), s)
    twin = mod.apply_fix(s, fix) if fix is not None else s
    changed = changed_workers(s, twin)
    check(changed == [3], f"{name}: straggler-worker on worker:3 -> {fix}, speeds changed {changed}")
    big = copy.deepcopy(s)
    big["workers"] = 13
    big["worker_speed"] = [1.0] * 13
    for w in (0, 1, 2, 4):
        big["worker_speed"][w] = 0.5
    four = ["worker:0", "worker:1", "worker:2", "worker:4"]
    fix4 = mod.fix_for(finding("straggler-worker", four, "worker:0-2, worker:4"), big)
    twin4 = mod.apply_fix(big, fix4) if fix4 is not None else big
    changed = changed_workers(big, twin4)
    check(changed == [0, 1, 2, 4],
          f"{name}: straggler-worker on worker:0-2, worker:4 of 13 -> those 4 (changed {changed})")


def prefetch_job_wide(name, mod, simulate, make, per_worker):
    s = make()
    fix = mod.fix_for(finding("input-bound", ["worker:3"]), s)
    check(fix is not None and fix[0] == "prefetch" and mod.apply_fix(s, fix)["prefetch"],
          f"{name}: input-bound on worker:3 -> {fix}: the job's pipeline prefetches")
    if fix is None:
        return
    base = per_worker(simulate(s))
    twin = per_worker(simulate(mod.apply_fix(s, fix)))
    slower = [w for w in range(s["workers"]) if base[w] - twin[w] < 0.05 * base[w]]
    check(not slower, f"{name}: every worker's input leaves its step (worker 0: {base[0]:.2f} -> "
          f"{twin[0]:.2f} ms, worker 3: {base[3]:.2f} -> {twin[3]:.2f} ms)"
          + (f"; not: {slower}" if slower else ""))


def slow_host_scope():
    s = indep_job()
    s["ps"], s["ps_speed"] = 3, [1.0, 0.4, 1.0]
    right = jobs.apply_fix(s, jobs.fix_for(finding("slow-ps-host", ["ps:1"]), s))["ps_speed"]
    wrong = jobs.apply_fix(s, jobs.fix_for(finding("slow-ps-host", ["ps:2"]), s))["ps_speed"]
    check(right == [1.0, 1.0, 1.0] and wrong == [1.0, 0.4, 1.0],
          f"indep: slow-ps-host moves the PS it names alone (ps:1 -> {right}, ps:2 -> {wrong})")


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
        straggler_scope(*g)
        prefetch_job_wide(*g)
    slow_host_scope()
    quota_scope()
    if fails:
        print(f"{len(fails)} check(s) failed")
        return 1
    print("all checks hold")
    return 0


if __name__ == "__main__":
    sys.exit(main())
