"""Random PS jobs for the independent twin suite (issue 44 item 4) and the fixes tfdiag names.

draw(seed) gives a job spec for indepsim.py from a wide distribution; apply_fix(spec, fix) gives
its fixed twin (the same job and seed, the fix applied as tfdiag's fix text says; slow-ps-host:
the task on a host at the others' speed); fix_for maps a finding of `tfdiag analyze -f json` to
the fix it names. Seeds are split: TUNE_SEEDS, TUNE2_SEEDS and TUNE3_SEEDS may be used to set
tfdiag's constants; REPORT_SEEDS and REPORT2_SEEDS to REPORT28_SEEDS only to report.
Standard library only.
"""
import copy
import math
import random

TUNE_SEEDS = range(1000, 1020)
REPORT_SEEDS = range(5000, 5024)
# A second held-out set, drawn after REPORT_SEEDS had been reported on once (issue 44): run once,
# after all tuning on TUNE_SEEDS.
REPORT2_SEEDS = range(7000, 7024)
# A second, larger tune set (issue 44, branch c51): REPORT_SEEDS and REPORT2_SEEDS had been
# reported on several times, so tuning moved here and to TUNE_SEEDS only.
TUNE2_SEEDS = range(3000, 3040)
# A third held-out set, drawn with TUNE2_SEEDS and looked at by nobody before: run once, after all
# tuning on TUNE_SEEDS and TUNE2_SEEDS.
REPORT3_SEEDS = range(9000, 9024)
# A third tune set (issue 44, branch c52): drawn to check the changes tuned on TUNE_SEEDS and
# TUNE2_SEEDS on jobs they were not set on; tuning may use it from then on.
TUNE3_SEEDS = range(4000, 4040)
# A fourth held-out set, drawn once REPORT3_SEEDS had been reported on twice (issue 44): looked at
# by nobody before the session's merged main, then run once (the lead, 2026-11-29).
REPORT4_SEEDS = range(12000, 12024)
# A fifth held-out set, drawn once REPORT4_SEEDS had been reported on (issue 44): looked at by
# nobody before session 22's merged main, then run once (the lead).
REPORT5_SEEDS = range(13000, 13024)
# A sixth held-out set, drawn once REPORT5_SEEDS had been reported on (issue 44): looked at by
# nobody before session 23's merged main, then run once (the lead).
REPORT6_SEEDS = range(14000, 14024)
# A seventh held-out set, drawn once REPORT6_SEEDS had been reported on (issue 44, session 24):
# looked at by nobody before its one run, after the merges.
REPORT7_SEEDS = range(15000, 15024)
# An eighth held-out set, drawn once REPORT7_SEEDS had been reported on (issue 44, session 25):
# looked at by nobody before its one run, after the merges.
REPORT8_SEEDS = range(16000, 16024)
# A ninth held-out set, drawn once REPORT8_SEEDS had been reported on (issue 44, session 26):
# looked at by nobody before its one run, after the merges.
REPORT9_SEEDS = range(17000, 17024)  # spent: reported in session 26
# A tenth held-out set, drawn once REPORT9_SEEDS had been reported on (issue 44, session 27):
# looked at by nobody before its one run, after the merges.
REPORT10_SEEDS = range(18000, 18024)  # spent: reported in session 27
# An eleventh held-out set, drawn once REPORT10_SEEDS had been reported on (issue 44, session 28):
# looked at by nobody before its one run, after the merges.
REPORT11_SEEDS = range(19000, 19024)  # spent: reported in session 28
# A twelfth held-out set, drawn once REPORT11_SEEDS had been reported on (issue 44, session 29):
# looked at by nobody before its one run, after the merges.
REPORT12_SEEDS = range(20000, 20024)  # spent: reported in session 29
# A thirteenth held-out set, drawn once REPORT12_SEEDS had been reported on (issue 44, session 30):
# looked at by nobody before its one run, after the merges.
REPORT13_SEEDS = range(21000, 21024)  # spent: reported in session 30
# A fourteenth held-out set, drawn once REPORT13_SEEDS had been reported on (issue 44, session 31):
# looked at by nobody before its one run, after the merges.
REPORT14_SEEDS = range(22000, 22024)  # spent: reported in session 31
# A fifteenth held-out set, drawn once REPORT14_SEEDS had been reported on (issue 44, session 32):
# looked at by nobody before its one run, after the merges.
REPORT15_SEEDS = range(23000, 23024)  # spent: reported in session 32
# A sixteenth held-out set, drawn once REPORT15_SEEDS had been reported on (issue 44, session 33):
# looked at by nobody before its one run, after the merges.
REPORT16_SEEDS = range(24000, 24024)  # spent: reported in session 33
# A seventeenth held-out set, drawn once REPORT16_SEEDS had been reported on (issue 44, session 34):
# looked at by nobody before its one run, after the merges.
REPORT17_SEEDS = range(25000, 25024)  # spent: reported in session 35
# An eighteenth held-out set, drawn once REPORT17_SEEDS had been reported on (issue 44, session 36):
# looked at by nobody before its one run, after the merges.
REPORT18_SEEDS = range(26000, 26024)  # spent: reported in session 36
# A nineteenth held-out set, drawn once REPORT18_SEEDS had been reported on (issue 44, session 37):
# looked at by nobody before its one run, after the merges.
REPORT19_SEEDS = range(27000, 27024)  # spent: reported in session 37
# A twentieth held-out set, drawn once REPORT19_SEEDS had been reported on (issue 44, end of session
# 37): looked at by nobody before its one run in the next session, first, before any change.
REPORT20_SEEDS = range(28000, 28024)  # spent: reported in session 38
# A twenty-first held-out set, drawn once REPORT20_SEEDS had been reported on (end of session 38):
# looked at by nobody before its one run in the next session, first, before any change.
REPORT21_SEEDS = range(29000, 29024)  # spent: reported in session 39
# A twenty-second held-out set, drawn once REPORT21_SEEDS had been reported on (end of session 39):
# looked at by nobody before its one run in the next session, first, before any change.
REPORT22_SEEDS = range(30000, 30024)  # spent: reported in session 40
# A twenty-third held-out set, drawn once REPORT22_SEEDS had been reported on (end of session 40):
# looked at by nobody before its one run in the next session, first, before any change.
REPORT23_SEEDS = range(31000, 31024)  # spent: reported in session 41
# A twenty-fourth held-out set, drawn once REPORT23_SEEDS had been reported on (end of session 41):
# looked at by nobody before its one run in the next session, first, before any change.
REPORT24_SEEDS = range(32000, 32024)  # spent: reported in session 42
# A twenty-fifth held-out set, drawn once REPORT24_SEEDS had been reported on (end of session 42):
# looked at by nobody before its one run in the next session, first, before any change.
REPORT25_SEEDS = range(33000, 33024)  # spent: reported in session 43
# A twenty-sixth held-out set, drawn once REPORT25_SEEDS had been reported on (end of session 43):
# looked at by nobody before its one run in the next session, first, before any change.
REPORT26_SEEDS = range(34000, 34024)  # spent: reported in session 44
# A twenty-seventh held-out set, drawn once REPORT26_SEEDS had been reported on (end of session 44):
# looked at by nobody before its one run in the next session, first, before any change.
REPORT27_SEEDS = range(35000, 35024)  # spent: reported in session 45
# A twenty-eighth held-out set, drawn once REPORT27_SEEDS had been reported on (end of session 45):
# looked at by nobody before its one run in the next session, first, before any change.
REPORT28_SEEDS = range(36000, 36024)  # spent: reported in session 46
# A twenty-ninth held-out set, drawn once REPORT28_SEEDS had been reported on (end of session 46):
# looked at by nobody before its one run in the next session, first, before any change.
REPORT29_SEEDS = range(37000, 37024)  # spent: reported in session 47
# A thirtieth held-out set, drawn once REPORT29_SEEDS had been reported on (end of session 47):
# looked at by nobody before its one run in the next session, first, before any change.
REPORT30_SEEDS = range(38000, 38024)  # spent: reported in session 48
# A thirty-first held-out set, drawn once REPORT30_SEEDS had been reported on (session 49):
# looked at by nobody before its one run in the next session, first, before any change.
REPORT31_SEEDS = range(39000, 39024)  # spent: reported in session 49
# A thirty-second held-out set, drawn once REPORT31_SEEDS had been reported on (session 49):
# looked at by nobody before its one run in the next session, first, before any change.
REPORT32_SEEDS = range(40000, 40024)  # spent: reported in session 50
# A thirty-third held-out set, drawn once REPORT32_SEEDS had been reported on (session 50):
# looked at by nobody before its one run in the next session, first, before any change.
REPORT33_SEEDS = range(41000, 41024)  # spent: reported in session 51
# A thirty-fourth held-out set, drawn once REPORT33_SEEDS had been reported on (session 52):
# looked at by nobody before its one run with session 52's final binary.
REPORT34_SEEDS = range(42000, 42024)  # spent: reported in session 52
# A thirty-fifth held-out set, drawn once REPORT34_SEEDS had been reported on (session 53):
# looked at by nobody before its one run with session 53's final binary.
REPORT35_SEEDS = range(43000, 43024)  # spent: reported in session 53
# A thirty-sixth held-out set, drawn once REPORT35_SEEDS had been reported on (session 55):
# run once with session 55's starting binary and once with its final code.
REPORT36_SEEDS = range(44000, 44024)  # spent: reported in session 55
# A thirty-seventh held-out set, drawn once REPORT36_SEEDS had been reported on (session 56):
# run once with session 56's starting binary and once with its final code.
REPORT37_SEEDS = range(45000, 45024)  # spent: reported in session 56
# A thirty-eighth held-out set, drawn once REPORT37_SEEDS had been reported on (session 57):
# run once with session 57's starting binary and once with its final code.
REPORT38_SEEDS = range(46000, 46024)  # spent: reported in session 57
# A thirty-ninth held-out set, drawn once REPORT38_SEEDS had been reported on (session 58):
# run once with session 58's starting binary and once with its final code.
REPORT39_SEEDS = range(47000, 47024)  # spent: reported in session 58
# A fortieth held-out set, drawn once REPORT39_SEEDS had been reported on (session 59): run once
# with session 59's starting binary and once with its final code.
REPORT40_SEEDS = range(48000, 48024)  # spent: reported in session 59
# A forty-first held-out set, drawn once REPORT40_SEEDS had been reported on (session 60): run
# once with session 60's starting binary and once with its final code.
REPORT41_SEEDS = range(49000, 49024)  # spent: reported in session 60
# A forty-second held-out set, drawn once REPORT41_SEEDS had been reported on (session 61): run
# once with session 61's starting binary and once with its final code.
REPORT42_SEEDS = range(50000, 50024)  # spent: reported in session 61
# A forty-third held-out set, drawn once REPORT42_SEEDS had been reported on (session 62): run
# once with session 62's starting binary and once with its final code.
REPORT43_SEEDS = range(51000, 51024)  # spent: reported in session 62
# A forty-fourth held-out set, drawn once REPORT43_SEEDS had been reported on (session 63): run
# once with session 63's starting binary and once with its final code.
REPORT44_SEEDS = range(52000, 52024)  # spent: reported in session 63
# A forty-fifth held-out set, drawn once REPORT44_SEEDS had been reported on (session 64): run
# once with session 64's starting binary and once with its final code.
REPORT45_SEEDS = range(53000, 53024)  # spent: reported in session 64
# A forty-sixth held-out set, drawn once REPORT45_SEEDS had been reported on (session 65): run
# once with session 65's starting binary and once with its final code.
REPORT46_SEEDS = range(54000, 54024)


# Every seed set by its --set name ("REPORT20_SEEDS" is "report20", "DEV_SEEDS" "dev"), in the
# order defined: what the runners and their usage strings read, so a new set is one *_SEEDS line.
SETS = {k[:-len("_SEEDS")].lower(): v for k, v in list(globals().items()) if k.endswith("_SEEDS")}


def _logu(r, lo, hi):
    return math.exp(r.uniform(math.log(lo), math.log(hi)))


def draw(seed):
    r = random.Random(seed)
    ps = r.choice([1, 1, 2, 2, 2, 3, 4, 4, 6, 8, 12, 16])
    workers = min(int(round(_logu(r, 2, 64))), max(2, 256 // ps))  # bounded run time
    threads = r.choice([1, 1, 2, 2, 4, 8])
    cores = r.choice([1, 2, 4, 8])
    compute = _logu(r, 3, 80)
    s = {"seed": seed, "ps": ps, "workers": workers, "ps_threads": threads, "ps_cores": cores,
         "compute_ms": compute, "overlap": r.uniform(0, 0.25),
         "op_sigma": r.uniform(0.01, 0.1), "step_sigma": r.uniform(0.01, 0.15),
         "latency_ms": _logu(r, 0.02, 0.3), "mb_per_ms": r.choice([1, 10, 25]) * 0.125,
         "part_ms": 0.015, "sync": r.random() < 0.25, "prefetch": r.random() < 0.4,
         "input_ms": _logu(r, 0.05, 1.0), "idle": [], "planted": []}
    steps = 800 // (workers * ps)
    s["steps"] = max(8, min(20, steps))
    # hosts: uneven workers, sometimes a straggler; PS hosts sometimes one slow one
    spread = r.uniform(0, 0.15)
    s["worker_speed"] = [math.exp(r.gauss(0, spread)) for _ in range(workers)]
    if r.random() < 0.2:
        s["worker_speed"][r.randrange(workers)] /= r.uniform(1.6, 3.0)
        s["planted"].append("straggler")
    s["ps_speed"] = [1.0] * ps
    if ps >= 2 and r.random() < 0.15:
        s["ps_speed"][r.randrange(ps)] = r.uniform(0.3, 0.6)
        s["planted"].append("slow-ps-host")
    if ps >= 3 and r.random() < 0.15:
        s["idle"] = list(range(ps - r.choice([1, 2]), ps))
        s["planted"].append("idle-ps")
    if r.random() < 0.25:
        s["input_ms"] = compute * r.uniform(0.3, 1.5)
        s["planted"].append("slow-input")
    holders = ps - len(s["idle"])
    # PS load: the busiest PS's utilisation drawn, op costs derived from it
    util = _logu(r, 0.05, 1.6)
    work = util * compute * min(threads, cores) * holders / workers  # PS ms per worker step
    nic_util = _logu(r, 0.01, 1.3)
    mb = nic_util * compute * s["mb_per_ms"] * holders / workers  # MB per worker step
    n_dense = r.randint(2, 20)
    n_tab = r.choice([0, 0, 1, 1, 2, 3])
    dense_share = r.uniform(0.1, 0.9) if n_tab else 1.0
    wd = [r.lognormvariate(0, 0.8) for _ in range(n_dense)]
    tot = sum(wd)
    s["dense"] = [{"name": f"layer_{i}/kernel", "mb": mb * dense_share * x / tot,
                   "read_ms": 0.3 * work * dense_share * x / tot,
                   "apply_ms": 0.7 * work * dense_share * x / tot} for i, x in enumerate(wd)]
    s["tables"] = []
    wt = [r.lognormvariate(0, 0.6) for _ in range(n_tab)]
    for i, x in enumerate(wt):
        f = (1 - dense_share) * x / sum(wt)
        t = {"name": f"emb_{i}", "gather_ms": 0.55 * work * f, "apply_ms": 0.45 * work * f,
             "rows_mb": mb * f, "ps": "all"}
        u = r.random()
        if u < 0.5 and holders >= 1:
            t["ps"] = r.randrange(holders)
            s["planted"].append("hot-table")
        elif u < 0.65 and holders >= 2:
            t["shard_weights"] = [r.lognormvariate(0, 1.0) for _ in range(holders)]
            s["planted"].append("uneven-shards")
        s["tables"].append(t)
    if s["sync"]:
        s["planted"].append("sync")
    return s


def _drop_ps(s, drop):
    """The job without the PS in `drop`: every table re-partitioned evenly over the rest."""
    keep = [k for k in range(s["ps"]) if k not in drop]
    s["ps_speed"] = [s["ps_speed"][k] for k in keep]
    s["ps"] = len(keep)
    s["idle"] = []
    for t in s["tables"]:
        t["ps"] = "all"
        t.pop("shard_weights", None)


def apply_fix(spec, fix):
    s = copy.deepcopy(spec)
    kind = fix[0]
    if kind == "partition":  # each named variable cut evenly over all PS (fixed_size_partitioner)
        for t in s["tables"]:
            if t["name"] in fix[1]:
                t["ps"] = "all"
                t.pop("shard_weights", None)
        for d in s["dense"]:
            if len(fix) > 2 and d["name"] in fix[2]:
                d["parts"] = "all"
    elif kind == "prefetch":  # the input pipeline's code, which every worker runs
        s["prefetch"] = True
    elif kind == "straggler":  # the slow workers (those named, else all) at the median's speed
        med = sorted(s["worker_speed"])[len(s["worker_speed"]) // 2]
        named = set(fix[1]) if len(fix) > 1 else set(range(len(s["worker_speed"])))
        s["worker_speed"] = [max(x, med) if i in named else x
                             for i, x in enumerate(s["worker_speed"])]
    elif kind == "drop-ps":
        _drop_ps(s, set(fix[1]))
    elif kind == "ps-count":  # re-partition over the new count (the fix text)
        n = fix[1]
        speeds = [x for k, x in enumerate(s["ps_speed"]) if k not in s["idle"]]
        s["ps_speed"] = (speeds + [1.0] * n)[:n]
        s["ps"] = n
        s["idle"] = []
        s["partition_dense"] = True  # "partition variables over the new PS count"
        for t in s["tables"]:
            t["ps"] = "all"
            t.pop("shard_weights", None)
    elif kind == "async":
        s["sync"] = False
    elif kind == "slow-host":  # the PS named (fix[1]; else every PS) moved to a normal host
        named = set(fix[1]) if len(fix) > 1 else set(range(s["ps"]))
        s["ps_speed"] = [1.0 if p in named else x for p, x in enumerate(s["ps_speed"])]
    else:
        raise ValueError(f"unknown fix {fix}")
    return s


def candidate_fixes(s):
    """Every fix that changes something in job `s` (candidates for the best single fix)."""
    out = []
    hot = tuple(t["name"] for t in s["tables"] if t["ps"] != "all" or t.get("shard_weights"))
    if hot:
        out.append(("partition", hot))
    if not s["prefetch"] and s["input_ms"] > 0.05 * s["compute_ms"]:
        out.append(("prefetch",))
    if min(s["worker_speed"]) < 0.8 * sorted(s["worker_speed"])[s["workers"] // 2]:
        out.append(("straggler",))
    if s["idle"]:
        out.append(("drop-ps", tuple(s["idle"])))
    if s["sync"]:
        out.append(("async",))
    if min(s["ps_speed"]) < 1:
        out.append(("slow-host",))
    holders = s["ps"] - len(s["idle"])
    for n in sorted({holders * 2} - {s["ps"]}):
        if n <= 16:
            out.append(("ps-count", n))
    return out


def _dense_ps(s, i):
    """The PS of dense variable i (indepsim's replica_device_setter round robin); None when the
    job partitions every dense variable."""
    holders = [k for k in range(s["ps"]) if k not in s.get("idle", [])]
    if s.get("partition_dense") or s["dense"][i].get("parts") == "all":
        return None
    return holders[i % len(holders)]


def _task_index(subject, job):
    if subject.startswith(job + ":"):
        try:
            return int(subject[len(job) + 1:])
        except ValueError:
            return None
    return None


def _ps_index(subject):
    return _task_index(subject, "ps")


def fix_for(finding, s):
    """The fix a finding's text names, as a twin fix; None when this suite cannot build it."""
    rule = finding["rule"]
    subjects = [finding.get("subject", "")] + [o.get("subject", "")
                                               for o in finding.get("objects", [])]
    if rule == "hot-ps":
        named = {_ps_index(x) for x in subjects} - {None}
        tabs = []
        # The tables on the PS it names: its fix text partitions those, and no other (a table
        # partitioned unevenly on other PS stays as it is; until session 47 the twin evened those
        # out too, a fix no finding named: indep report29 37014's twin partitioned emb_1 beside
        # the named emb_0 and bought 75% where emb_0 alone buys less).
        for t in s["tables"]:
            if t["ps"] in named:
                tabs.append(t["name"])
        # An unevenly loaded part (hot-ps's cause, branch c53): its fix text evens out the
        # partitioned table's parts, nothing else.
        if finding.get("cause") == "an unevenly loaded partitioned variable":
            uneven = tuple(t["name"] for t in s["tables"]
                           if t["ps"] == "all" and t.get("shard_weights"))
            return ("partition", uneven) if uneven else None
        # A hot PS holding no table: its hottest (dense) variable partitioned, as the fix text
        # says ("Partition the variable across all PS") and tfdiag's fix model replays.
        dense = []
        for k in sorted(named):
            if any(t["ps"] == k for t in s["tables"]):
                continue
            on_k = [d for i, d in enumerate(s["dense"]) if _dense_ps(s, i) == k]
            if on_k:
                dense.append(max(on_k, key=lambda d: d["read_ms"] + d["apply_ms"])["name"])
        return ("partition", tuple(tabs), tuple(dense)) if dense else ("partition", tuple(tabs))
    workers = tuple(sorted({_task_index(x, "worker") for x in subjects} - {None}))
    if rule == "input-bound":  # its fix changes the input pipeline's code: every worker's
        return ("prefetch",)
    if rule == "straggler-worker":  # the workers it names (its fix: the straggler's node)
        return ("straggler", workers) if workers else ("straggler",)
    if rule == "idle-ps":
        named = {_ps_index(x) for x in subjects} - {None}
        return ("drop-ps", tuple(sorted(named))) if named else None
    if rule == "ps-worker-ratio":
        for e in finding.get("evidence", []):
            if e.get("label") == "suggested PS count":
                return ("ps-count", int(e["value"]))
        return None
    if rule == "sync-replicas":
        return ("async",)
    if rule == "slow-ps-host":  # the PS it names, each on a host at the others' speed
        named = tuple(sorted({_ps_index(x) for x in subjects} - {None}))
        return ("slow-host", named) if named else ("slow-host",)
    return None
