#!/usr/bin/env python3
"""make twins-live: tfdiag's predictions against real fixed twins, with real processes.

For each shape, a psload PS/worker job (samples/psload) runs as it is, writing TF1 timelines;
`tfdiag analyze -f json` reads them; the prediction of the finding whose fix the twin applies
is taken (and the report's Fix first); then the real twin (the same job with that fix applied)
runs, and its measured step is the truth. Steps are psload's own clock (each worker summary's
`step_us`: the median over every step of every worker, as tfdiag's `step_ns` is), which shares no
code with tfdiag. Each job runs twice, alternating (as-is, twin, as-is, twin): the prediction is
the mean of the two as-is runs' predictions, the twin's step the mean of its two runs, and the
difference between two runs of one job is the noise. Each PS is pinned to a CPU of its own
when there are at least as many CPUs as PS (PS of a real job run on hosts of their own, and the
replay serves each PS on its own cores; unpinned, PS that share this machine's cores make a
partitioned twin CPU-bound by the machine, not by any PS); the workers float.

Load gate: the CPU other work used during each run (the machine's busy time from /proc/stat
less this script's and its children's), in cores. A run above --max-foreign-cores, or a pair of
runs of one job more than --max-noise apart, is "too loaded, not judged" and the shape is tried
again, up to --tries times; each attempt first waits (at most --wait-quiet s) for 3 seconds
in a row in which other work stays under the gate.

Shapes (bench/README.md, "`make twins-live`"): hot and balanced placement; PS threads 1/2/4
(hot placement, 4 workers, the twin partitioned); a CPU quota on a PS (a child cgroup of our own,
seen by `tfdiag attach` run beside the job, whose bundle is analyzed with the timelines; the twin
without it); a bandwidth-limited link (one PS in a network namespace behind a veth pair shaped by
tc tbf, `tfdiag attach` beside the job; the twin without the shaping); a slow worker (the twin: every worker at the median's
compute); slow input (an hdfs server with a rate cap, it and the worker on a CPU no PS uses; the
twin prefetches one batch).

Exit status, the first that applies: 1 a prediction outside --max-error of its twin (named);
2 usage or setup error (missing binaries, or a shape that cannot run here: no root for cgroups or
namespaces); 3 a shape got no prediction (tfdiag withheld it or named no finding for the twin's
fix: the reason is printed); 4 a shape could not be judged (too loaded); 0 every shape judged and
within --max-error.
"""

import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ beside the sources for host.py
from host import Netns, QuotaCgroup, Setup, cpu_clock, foreign_cores, wait_quiet  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

# The job every shape starts from: ps:0's CPU, not the loopback RPCs, is the bottleneck when it
# holds the whole embedding (tests/replay_live_test.cc's job, samples/psload/README.md).
BASE = {
    "num_ps": 2,
    "workers": 1,
    "placement": "balanced",
    "ps_threads": 1,
    "compute_us": 100,  # an int for every worker, or a list, one per worker
    "compute_sleep_us": 0,  # compute wall time that uses no CPU here; an int or a list
    "rows_per_step": 8192,
    "ps_cpu_ns_per_row": 200,
    "hdfs_rate_mbps": None,  # None: no hdfs server; else its per-connection cap (0 = none)
    "input_bytes": 1 << 20,
    "prefetch": 0,
    # The workers and the hdfs server pinned to this CPU (an index into the CPUs we may use), a
    # CPU no PS is pinned to: the input side on a host of its own, away from the PS's cores.
    # None: they float.
    "input_cpu": None,
    "quota_ps": None,  # (PS index, CPUs): that PS runs in a cgroup with this CFS quota
    "netns_ps": None,  # PS index run in its own network namespace behind a veth pair
    "link_mbit": None,  # with netns_ps: tc tbf rate on both ends of the veth, megabits/s
    # `tfdiag attach` beside the job (its tasks' /proc and cgroup samples: CPU, threads, CFS
    # quota and throttling), its bundle analyzed with the timelines, as a user who runs attach
    # on the node while the job writes its timelines would.
    "attach": False,
}


def job(**kw):
    j = dict(BASE)
    for k in kw:
        if k not in j:
            raise KeyError(k)
    j.update(kw)
    return j


# name: (as-is job, twin job, (rules whose fix the twin applies, the subject it fixes), what the
# twin changes). None instead of the rules: a healthy job, for which no fix should be named (the
# twin is the job run again).
SHAPES = {
    "hot": (job(placement="hot"), job(placement="balanced"), ({"hot-ps"}, "ps:0"),
            "the embedding partitioned over the 2 PS"),
    # Healthy: the worker's compute (10 ms a step, a sleep: on a device of its own, as the
    # slow-worker shape's straggler) paces the step and each PS is busy about a fifth of it. With
    # the base job's 100 us of compute the PS's ops were most of the step (each PS ~60% busy): a
    # PS-bound job, for which tfdiag's ps-worker-ratio rightly names more PS (-38% predicted), not
    # a healthy one; and its step took two modes on this 2-core VM (3.3 and 4.3 ms).
    "balanced": (job(compute_sleep_us=10000), job(compute_sleep_us=10000), None,
                 "none (a healthy job: run again)"),
    # 4 workers beside the 2 PS on this VM's CPUs: `tfdiag attach` beside the job shows the node's
    # CPUs and each task's CPU use, as on a real node whose PS share it with workers (at the
    # partitioned twin's step the tasks fill both CPUs; without attach the timelines alone
    # cannot show it and the prediction was `high`, 12-15% off: session 26's quiet run).
    "ps-threads-1": (job(placement="hot", workers=4, ps_threads=1, attach=True),
                     job(placement="balanced", workers=4, ps_threads=1, attach=True),
                     ({"hot-ps"}, "ps:0"), "partitioned, 1 thread a PS"),
    "ps-threads-2": (job(placement="hot", workers=4, ps_threads=2, attach=True),
                     job(placement="balanced", workers=4, ps_threads=2, attach=True),
                     ({"hot-ps"}, "ps:0"), "partitioned, 2 threads a PS"),
    "ps-threads-4": (job(placement="hot", workers=4, ps_threads=4, attach=True),
                     job(placement="balanced", workers=4, ps_threads=4, attach=True),
                     ({"hot-ps"}, "ps:0"), "partitioned, 4 threads a PS"),
    # 2 PS, each pinned to a CPU of its own as on hosts of their own (with 3 PS on this 2-core
    # VM the unthrottled twin was bound by the machine: its three busy PS and the worker shared 2
    # cores). The throttling is seen by `tfdiag attach` (cgroup cpu.stat), as on a real node.
    "ps-cpu-quota": (job(quota_ps=(1, 0.15), attach=True), job(attach=True),
                     ({"ps-cpu-quota"}, "ps:1"), "ps:1 without its 0.15-CPU CFS quota"),
    # 3 PS: slow-ps-link compares a PS's op times and its voluntary context switches per op
    # (`tfdiag attach`'s /proc samples) with the other PS's median. 300 Mbit/s: at 400 the PS's ops
    # ran a lower bound of 1.5-2.2x slower than the others', at the rule's min_slowdown of 1.5
    # (tests/slow_ps_link_test.cc's kLinkMbit).
    "slow-link": (job(num_ps=3, netns_ps=1, link_mbit=300, attach=True),
                  job(num_ps=3, netns_ps=1, attach=True),
                  ({"slow-ps-link"}, "ps:1"), "ps:1's link unshaped (was 300 Mbit/s)"),
    # The straggler's extra compute is a sleep (--compute-sleep-us): as on a host of its own, it
    # takes none of this machine's CPU from the PS (spun, it slowed every task: the twin gained
    # 32% where the straggler's own steps were a third of the job's).
    "slow-worker": (job(workers=3, compute_sleep_us=[0, 0, 6000]), job(workers=3),
                    ({"straggler-worker"}, "worker:2"), "worker:2 at the median's compute"),
    # The input side on a CPU of its own: 1 PS (4096 rows a step, as each of the 2 PS of the
    # other shapes serves) pinned to one CPU, the worker (its reader thread too) and the hdfs
    # server pinned to the other, as a real job's PS, worker and DataNode run on hosts of their
    # own. With 2 PS pinned one a CPU, the prefetching reader and the server shared the PS's
    # cores and the twin's pipeline ran 50% slower than the capture's input ops (6.3 against
    # 4.2 ms a batch), a machine the replay (each task on cores of its own) does not have.
    "slow-input": (job(num_ps=1, rows_per_step=4096, input_cpu=1, hdfs_rate_mbps=2000),
                   job(num_ps=1, rows_per_step=4096, input_cpu=1, hdfs_rate_mbps=2000,
                       prefetch=1),
                   ({"input-bound"}, "worker:0"),
                   "input prefetched (one batch), same 2000 Mbit/s cap"),
}


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def free_ports(n):
    socks, ports = [], []
    for _ in range(n):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        socks.append(s)
        ports.append(s.getsockname()[1])
    for s in socks:
        s.close()
    return ports


# --- one job run -------------------------------------------------------------------------------


class Run:
    def __init__(self):
        self.timelines, self.steps_us = [], []
        self.bundle = None  # tfdiag attach's bundle of the run (job "attach")
        self.step_ms = None
        self.foreign = 0.0
        self.why = ""
        self.throttled = None
        self.analysis = None


def per_worker(v, i):
    return v[i] if isinstance(v, list) else v


def ps_preexec(i, num_ps, quota):
    """The preexec_fn of PS i: pinned to CPU i when every PS can have a CPU of its own (as PS on
    hosts of their own have: the replay serves each PS on its own cores), and moved into the
    quota's cgroup if it has one."""
    cpus = sorted(os.sched_getaffinity(0))

    def pre():
        if num_ps <= len(cpus):
            os.sched_setaffinity(0, {cpus[i]})
        if quota is not None:
            quota.enter()
    return pre


def pin_preexec(j):
    """The preexec_fn of a worker or the hdfs server: pinned to the job's input CPU, if any."""
    if j["input_cpu"] is None:
        return None
    cpus = sorted(os.sched_getaffinity(0))
    if j["input_cpu"] >= len(cpus) or j["input_cpu"] < min(j["num_ps"], len(cpus)):
        raise Setup("input_cpu %d: not a CPU of its own here (%d CPUs, %d PS pinned)" %
                    (j["input_cpu"], len(cpus), j["num_ps"]))
    cpu = cpus[j["input_cpu"]]
    return lambda: os.sched_setaffinity(0, {cpu})


def run_job(args, j, out, tag, quota=None, netns=None):
    """Runs job `j` to the workers' end; returns a Run (why set when a task failed)."""
    r = Run()
    nps, nw = j["num_ps"], j["workers"]
    ports = free_ports(nps + nw + 1)
    ps_hosts = ["127.0.0.1:%d" % p for p in ports[:nps]]
    if j["netns_ps"] is not None:
        ps_hosts[j["netns_ps"]] = "%s:%d" % (netns.ip, ports[j["netns_ps"]])
    worker_hosts = ["127.0.0.1:%d" % p for p in ports[nps:nps + nw]]
    hdfs = "127.0.0.1:%d" % ports[-1]
    common = ["--ps_hosts=" + ",".join(ps_hosts), "--worker_hosts=" + ",".join(worker_hosts),
              "--placement=" + j["placement"], "--ps-threads=%d" % j["ps_threads"],
              "--rows-per-step=%d" % j["rows_per_step"],
              "--ps-cpu-ns-per-row=%d" % j["ps_cpu_ns_per_row"], "--show-memory=true"]
    servers, workers, logs = [], [], []

    def spawn(cmd, name, preexec=None):
        f = open(os.path.join(out, "%s-%s.log" % (tag, name)), "w")
        logs.append(f)
        return subprocess.Popen(cmd, stdout=f, stderr=f, preexec_fn=preexec)

    before = cpu_clock()
    if quota is not None:
        throttled0 = quota.throttled()
    try:
        if j["hdfs_rate_mbps"] is not None:
            servers.append(spawn([args.psload, "--job_name=hdfs", "--listen=" + hdfs,
                                  "--hdfs-rate-mbps=%g" % j["hdfs_rate_mbps"]], "hdfs",
                                 pin_preexec(j)))
        for i in range(nps):
            tl = os.path.join(out, "%s-ps%d.timeline.json" % (tag, i))
            r.timelines.append(tl)
            cmd = [args.psload, "--job_name=ps", "--task_index=%d" % i, "--timeline=" + tl] + common
            pre = ps_preexec(i, nps, quota if j["quota_ps"] and j["quota_ps"][0] == i else None)
            if j["netns_ps"] == i:
                cmd = ["ip", "netns", "exec", netns.ns] + cmd
            servers.append(spawn(cmd, "ps%d" % i, pre))
        compute = j["compute_us"]
        summaries = []
        for i in range(nw):
            tl = os.path.join(out, "%s-worker%d.timeline.json" % (tag, i))
            summary = os.path.join(out, "%s-worker%d.summary.json" % (tag, i))
            r.timelines.append(tl)
            summaries.append(summary)
            cmd = [args.psload, "--job_name=worker", "--task_index=%d" % i, "--timeline=" + tl,
                   "--summary=" + summary, "--duration=%g" % args.duration,
                   "--parallel-rpcs=true",
                   "--compute-us=%d" % per_worker(compute, i),
                   "--compute-sleep-us=%d" % per_worker(j["compute_sleep_us"], i)]
            if j["hdfs_rate_mbps"] is not None:
                cmd += ["--hdfs=" + hdfs, "--input-bytes-per-step=%d" % j["input_bytes"],
                        "--prefetch=%d" % j["prefetch"]]
            workers.append(spawn(cmd + common, "worker%d" % i, pin_preexec(j)))
        attach = None
        if j["attach"]:
            r.bundle = os.path.join(out, "%s.tfdiag" % tag)
            cmd = [args.tfdiag, "attach", "--no-bpf", "-d", "%gs" % (0.75 * args.duration),
                   "--interval", "250ms", "-o", r.bundle]
            for p in servers[1 if j["hdfs_rate_mbps"] is not None else 0:] + workers:
                cmd += ["--pid", str(p.pid)]
            attach = spawn(cmd, "attach")
        failed = []
        for i, p in enumerate(workers):
            try:
                rc = p.wait(timeout=args.duration + 30)
            except subprocess.TimeoutExpired:
                p.kill()
                rc = p.wait()
            if rc != 0:
                failed.append("worker:%d exit %s" % (i, rc))
        if attach is not None and attach.wait(timeout=args.duration + 30) != 0:
            failed.append("tfdiag attach exit %s" % attach.returncode)
    finally:
        extra = [attach] if attach is not None else []
        for p in workers + servers + extra:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in workers + servers + extra:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        for f in logs:
            f.close()
    r.foreign = foreign_cores(before, cpu_clock())
    if quota is not None:
        t1 = quota.throttled()
        r.throttled = (t1[0] - throttled0[0], t1[1] - throttled0[1])
    if failed:
        r.why = "%s run: %s (logs in %s)" % (tag, ", ".join(failed), out)
        return r
    for s in summaries:
        with open(s) as f:
            r.steps_us += json.load(f)["step_us"]
    if not r.steps_us:
        r.why = "%s run: no worker steps" % tag
        return r
    r.step_ms = statistics.median(r.steps_us) / 1000
    return r


def analyze(args, run):
    """tfdiag analyze -f json on the run's timelines (and its attach bundle)."""
    p = subprocess.run([args.tfdiag, "analyze", "-f", "json"] + run.timelines +
                       ([run.bundle] if run.bundle else []),
                       capture_output=True, text=True)
    if p.returncode != 0:
        raise Setup("tfdiag analyze failed (%d): %s" % (p.returncode, p.stderr.strip()[:500]))
    run.analysis = json.loads(p.stdout)


def fix_first(analysis):
    """The report's Fix first (report/text_findings.cc): the finding with a trusted prediction
    that saves the most; None when no trusted prediction saves anything."""
    best = None
    for f in analysis["findings"]:
        im = f.get("impact") or {}
        if not im.get("trusted") or im.get("saving_pct", 0) <= 0:
            continue
        if best is None or im["saving_pct"] > best["impact"]["saving_pct"]:
            best = f
    return best


def describe_fix_first(f):
    if f is None:
        return "none"
    return "%s %s (-%.0f%%)" % (f["rule"], f["subject"], f["impact"]["saving_pct"])


def twin_prediction(analysis, rules, subject):
    """(finding, predicted step ms or None, why not): the first finding of `rules` on `subject`
    with a replayed prediction, else the reason none was made."""
    found = [f for f in analysis["findings"] if f["rule"] in rules and f["subject"] == subject]
    for f in found:
        im = f.get("impact") or {}
        if im.get("method") == "replay" and not im.get("withheld"):
            return f, im["step_ns_after_fix"] / 1e6, ""
    if found:
        f = found[0]
        im = f.get("impact") or {}
        return f, None, "%s on %s: withheld: %s" % (f["rule"], f["subject"],
                                                    im.get("withheld") or im.get("why", "no impact"))
    names = ", ".join("%s %s" % (f["rule"], f["subject"]) for f in analysis["findings"]) or "none"
    return None, None, "no %s finding on %s (findings: %s)" % ("/".join(sorted(rules)), subject,
                                                               names)


# --- one shape ---------------------------------------------------------------------------------


def run_shape(args, name, out):
    asis, twin, rules, change = SHAPES[name]
    res = {"shape": name, "twin_change": change, "verdict": "", "attempts": []}
    quota = netns = None
    try:
        if asis["quota_ps"] is not None:
            quota = QuotaCgroup(asis["quota_ps"][1])
        if asis["netns_ps"] is not None:
            netns = Netns()
        for attempt in range(1, args.tries + 1):
            wait_quiet(args)
            runs = []
            for k, (kind, j) in enumerate([("asis", asis), ("twin", twin)] * 2):
                if netns is not None:
                    netns.shape(j["link_mbit"])
                tag = "%s-%d-%s%d" % (name, attempt, kind, k // 2 + 1)
                r = run_job(args, j, out, tag, quota if j["quota_ps"] else None, netns)
                if r.why:
                    raise Setup(r.why)
                runs.append(r)
            a1, t1, a2, t2 = runs
            foreign = max(r.foreign for r in runs)
            noise = max(abs(a1.step_ms - a2.step_ms) / a1.step_ms,
                        abs(t1.step_ms - t2.step_ms) / t1.step_ms)
            res["attempts"].append({"foreign_cores": round(foreign, 2),
                                    "noise_pct": round(100 * noise, 1)})
            if foreign > args.max_foreign_cores:
                res["skip"] = ("too loaded, not judged: other work used %.2f cores during a run "
                               "(at most %.2f)" % (foreign, args.max_foreign_cores))
            elif noise > args.max_noise:
                res["skip"] = ("too loaded (noisy), not judged: two runs of one job differ by "
                               "%.0f%% (at most %.0f%%)" % (100 * noise, 100 * args.max_noise))
            else:
                res.pop("skip", None)
                break
            log("  %s: attempt %d of %d %s" % (name, attempt, args.tries, res["skip"]))
        for r in (a1, a2):
            analyze(args, r)
    finally:
        if netns is not None:
            netns.close()
        if quota is not None:
            quota.close()
    res.update({
        "asis_ms": (a1.step_ms + a2.step_ms) / 2, "asis_runs_ms": [a1.step_ms, a2.step_ms],
        "twin_ms": (t1.step_ms + t2.step_ms) / 2, "twin_runs_ms": [t1.step_ms, t2.step_ms],
        "noise_pct": 100 * noise, "foreign_cores": foreign,
        "fix_first": [describe_fix_first(fix_first(r.analysis)) for r in (a1, a2)],
    })
    if a1.throttled:
        res["throttled_periods"] = a1.throttled
    if rules is None:  # healthy: nothing should be promised; the twin is the job again
        ff = [fix_first(r.analysis) for r in (a1, a2)]
        promised = [f for f in ff if f is not None and f["impact"]["saving_pct"] >= 10]
        res["fix"] = "none"
        res["predicted_ms"] = res["asis_ms"]
        res["confidence"] = "-"
        res["error_pct"] = 100 * (res["predicted_ms"] - res["twin_ms"]) / res["twin_ms"]
        if promised:
            res["verdict"] = "FAIL"
            res["why"] = "Fix first on a healthy job: %s" % describe_fix_first(promised[0])
        else:
            res["verdict"] = "pass" if abs(res["error_pct"]) <= 100 * args.max_error else "FAIL"
    else:
        preds, whys, conf, fix = [], [], [], ""
        for r in (a1, a2):
            f, pred, why = twin_prediction(r.analysis, rules[0], rules[1])
            if f is not None:
                fix = "%s %s" % (f["rule"], f["subject"])
                im = f.get("impact") or {}
                lo, hi = im.get("low_ns"), im.get("high_ns")
                if isinstance(lo, (int, float)) and isinstance(hi, (int, float)):
                    res.setdefault("range_ms", []).append([lo / 1e6, hi / 1e6])
                res.setdefault("impact_why", []).append(im.get("why", ""))
            if pred is not None:
                preds.append(pred)
                conf.append(f["impact"]["confidence"])
            else:
                whys.append(why)
        res["fix"] = fix or "-"
        res["confidence"] = "/".join(conf) if conf else "withheld"
        if preds:
            res["predicted_ms"] = sum(preds) / len(preds)
            res["error_pct"] = 100 * (res["predicted_ms"] - res["twin_ms"]) / res["twin_ms"]
            res["verdict"] = "pass" if abs(res["error_pct"]) <= 100 * args.max_error else "FAIL"
            if whys:
                res["why"] = "one as-is run only: " + whys[0]
        else:
            res["verdict"] = "not predicted"
            res["why"] = whys[0]
        if "range_ms" in res:  # does the printed range hold the twin? (each as-is run's)
            res["in_range"] = ["yes" if lo <= res["twin_ms"] <= hi else "no"
                               for lo, hi in res["range_ms"]]
        elsewhere = sorted({"%s %s" % (f["rule"], f["subject"])
                            for f in (fix_first(r.analysis) for r in (a1, a2))
                            if f is not None and not (f["rule"] in rules[0] and
                                                      f["subject"] == rules[1])})
        if elsewhere:
            note = "Fix first names %s, not the fix this twin applies" % ", ".join(elsewhere)
            res["why"] = res["why"] + "; " + note if res.get("why") else note
    if "skip" in res:
        res["why"] = res["skip"] + ("; " + res["why"] if res.get("why") else "")
        res["verdict"] = "not judged (%s)" % res["verdict"]
    return res


def table(results):
    head = ["shape", "as-is step", "fix", "predicted", "twin step", "error", "in range",
            "confidence", "Fix first", "verdict"]
    rows = []
    for r in results:
        if "asis_ms" not in r:
            rows.append([r["shape"], "-", "-", "-", "-", "-", "-", "-", "-", r["verdict"]])
            continue
        pred = "%.2f ms" % r["predicted_ms"] if "predicted_ms" in r else "-"
        err = "%+.1f%%" % r["error_pct"] if "error_pct" in r else "-"
        ff = r["fix_first"][0] if r["fix_first"][0] == r["fix_first"][1] else " / ".join(
            r["fix_first"])
        rows.append([r["shape"], "%.2f ms" % r["asis_ms"], r["fix"], pred,
                     "%.2f ms" % r["twin_ms"], err, "/".join(r.get("in_range", ["-"])),
                     r["confidence"], ff, r["verdict"]])
    widths = [max(len(str(x[i])) for x in [head] + rows) for i in range(len(head))]
    lines = ["  ".join(str(c).ljust(w) for c, w in zip(x, widths)).rstrip() for x in [head] + rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--shapes", default=",".join(SHAPES),
                    help="comma-separated, of: " + ", ".join(SHAPES))
    ap.add_argument("--duration", type=float, default=2.0, help="each run's worker time, s")
    ap.add_argument("--tries", type=int, default=3, help="attempts per shape when too loaded")
    ap.add_argument("--max-error", type=float, default=0.20, help="allowed |error|, fraction")
    ap.add_argument("--max-foreign-cores", type=float, default=0.3,
                    help="other work's CPU during a run above which it is not judged, cores")
    ap.add_argument("--max-noise", type=float, default=0.15,
                    help="two runs of one job further apart than this: not judged, fraction")
    ap.add_argument("--wait-quiet", type=float, default=20,
                    help="before each attempt, wait at most this long (s) for 3 quiet seconds")
    ap.add_argument("--out", help="where timelines, logs and results.json go "
                    "(default BUILD/twins-live)")
    args = ap.parse_args()
    args.psload = os.path.join(args.build, "psload")
    args.tfdiag = os.path.join(args.build, "tfdiag")
    for b in (args.psload, args.tfdiag):
        if not os.access(b, os.X_OK):
            log("run_twins_live: no %s (make twins-live builds it)" % b)
            return 2
    shapes = [s for s in args.shapes.split(",") if s]
    for s in shapes:
        if s not in SHAPES:
            log("run_twins_live: unknown shape %r (shapes: %s)" % (s, ", ".join(SHAPES)))
            return 2
    out = args.out or os.path.join(args.build, "twins-live")
    os.makedirs(out, exist_ok=True)
    for f in os.listdir(out):
        if f.endswith((".json", ".log")):
            os.remove(os.path.join(out, f))

    def stop(signum, frame):  # Ctrl-C or SIGTERM: unwind, so namespaces and cgroups go
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)  # also where the shell started us with SIGINT ignored

    started = time.monotonic()
    load0 = os.getloadavg()
    results = []
    try:
        for s in shapes:
            log("== %s" % s)
            try:
                res = run_shape(args, s, out)
            except Setup as e:
                res = {"shape": s, "verdict": "not run", "why": str(e)}
            results.append(res)
            log("   %s%s" % (res["verdict"], ": " + res["why"] if res.get("why") else ""))
    except KeyboardInterrupt:
        log("run_twins_live: interrupted; namespaces and cgroups removed")
        return 130
    took = time.monotonic() - started
    load1 = os.getloadavg()
    print(table(results))
    print()
    for r in results:
        if r.get("why"):
            print("%s: %s" % (r["shape"], r["why"]))
    print("\n%d shape(s) in %.0f s on %s (%d CPUs), load average %.2f at the start, %.2f at "
          "the end; timelines and results.json in %s" %
          (len(results), took, socket.gethostname(), os.cpu_count(), load0[0], load1[0], out))
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump({"host": socket.gethostname(), "cpus": os.cpu_count(), "seconds": took,
                   "load_average": [load0[0], load1[0]], "max_error": args.max_error,
                   "shapes": results}, f, indent=1)
    failed = [r["shape"] for r in results if r["verdict"] == "FAIL"]
    not_run = [r["shape"] for r in results if r["verdict"] == "not run"]
    unpredicted = [r["shape"] for r in results if r["verdict"] == "not predicted"]
    unjudged = [r["shape"] for r in results if r["verdict"].startswith("not judged")]
    if failed:
        print("twins-live: prediction outside %.0f%% of the real twin: %s" %
              (100 * args.max_error, ", ".join(failed)))
        return 1
    if not_run:
        print("twins-live: could not run here: %s" % ", ".join(not_run))
        return 2
    if unpredicted:
        print("twins-live: no prediction for: %s" % ", ".join(unpredicted))
        return 3
    if unjudged:
        print("twins-live: too loaded to judge: %s" % ", ".join(unjudged))
        return 4
    print("twins-live: every shape within %.0f%% of its real twin" % (100 * args.max_error))
    return 0


if __name__ == "__main__":
    sys.exit(main())
