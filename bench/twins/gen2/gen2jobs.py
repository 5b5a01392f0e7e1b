"""Random PS jobs for gen2sim (issue 44: held-out jobs from a generator tfdiag has never seen),
their fixes as each rule's fix text says, and the map from a finding to its fix.

draw(seed) -> spec; apply_fix(spec, fix) -> the fixed twin's spec (the same job and seed);
candidate_fixes(spec) -> every fix that changes the job (for the best single fix);
fix_for(finding, spec) -> the fix a finding of `tfdiag analyze -f json` names, or None.
Seeds: DEV_SEEDS may be looked at (with tfdiag's output) to make the harness work; REPORT_SEEDS are
run with tfdiag once, by the lead, after the merges. Standard library only.
"""
import copy
import math
import random
import re

DEV_SEEDS = range(100, 120)
REPORT_SEEDS = range(500, 532)
# A second held-out set, drawn once REPORT_SEEDS had been reported on (session 22) and tuned on
# (session 23): run once with tfdiag, by the lead, after session 23's merges.
REPORT2_SEEDS = range(600, 632)
# A third held-out set, drawn once REPORT2_SEEDS had been reported on (session 23): only the lead
# runs it, once, after the merges.
REPORT3_SEEDS = range(800, 832)
# A fourth held-out set, drawn once REPORT3_SEEDS had been reported on (session 24): only the lead
# runs it, once, after session 25's merges.
REPORT4_SEEDS = range(1000, 1032)
# A fifth held-out set, drawn once REPORT4_SEEDS had been reported on (session 25): only the lead
# runs it, once, after session 26's merges.
REPORT5_SEEDS = range(1200, 1232)  # spent: reported in session 26
# A sixth held-out set, drawn once REPORT5_SEEDS had been reported on (session 26): only the lead
# runs it, once, after session 27's merges.
REPORT6_SEEDS = range(1400, 1432)  # spent: reported in session 27
# A seventh held-out set, drawn once REPORT6_SEEDS had been reported on (session 27): only the lead
# runs it, once, after session 28's merges.
REPORT7_SEEDS = range(1600, 1632)  # spent: reported in session 28
# An eighth held-out set, drawn once REPORT7_SEEDS had been reported on (session 28): only the lead
# runs it, once, after session 29's merges.
REPORT8_SEEDS = range(1800, 1832)  # spent: reported in session 29
# A ninth held-out set, drawn once REPORT8_SEEDS had been reported on (session 29): only the lead
# runs it, once, after session 30's merges.
REPORT9_SEEDS = range(2000, 2032)  # spent: reported in session 30
# A tenth held-out set, drawn once REPORT9_SEEDS had been reported on (session 30): only the lead
# runs it, once, after session 31's merges.
REPORT10_SEEDS = range(2200, 2232)  # spent: reported in session 31
# An eleventh held-out set, drawn once REPORT10_SEEDS had been reported on (session 31): only the lead
# runs it, once, after session 32's merges.
REPORT11_SEEDS = range(2400, 2432)  # spent: reported in session 32
# A twelfth held-out set, drawn once REPORT11_SEEDS had been reported on (session 32): only the lead
# runs it, once, after session 33's merges.
REPORT12_SEEDS = range(2600, 2632)  # spent: reported in session 33
# A thirteenth held-out set, drawn once REPORT12_SEEDS had been reported on (session 33): only the lead
# runs it, once, after session 34's merges.
REPORT13_SEEDS = range(2800, 2832)  # spent: reported in session 35
# A fourteenth held-out set, drawn once REPORT13_SEEDS had been reported on (session 35): only the lead
# runs it, once, after session 36's merges.
REPORT14_SEEDS = range(3000, 3032)  # spent: reported in session 36
# A fifteenth held-out set, drawn once REPORT14_SEEDS had been reported on (session 36): only the lead
# runs it, once, after session 37's merges.
REPORT15_SEEDS = range(3200, 3232)  # spent: reported in session 37
# A sixteenth held-out set, drawn once REPORT15_SEEDS had been reported on (end of session 37): only
# the lead runs it, once, first thing in the next session.
REPORT16_SEEDS = range(3400, 3432)  # spent: reported in session 38
# A seventeenth held-out set, drawn once REPORT16_SEEDS had been reported on (end of session 38):
# only the lead runs it, once, first thing in the next session.
REPORT17_SEEDS = range(3600, 3632)  # spent: reported in session 39
# An eighteenth held-out set, drawn once REPORT17_SEEDS had been reported on (end of session 39):
# only the lead runs it, once, first thing in the next session.
REPORT18_SEEDS = range(3800, 3832)  # spent: reported in session 40
# A nineteenth held-out set, drawn once REPORT18_SEEDS had been reported on (end of session 40):
# only the lead runs it, once, first thing in the next session.
REPORT19_SEEDS = range(4000, 4032)  # spent: reported in session 41
# A twentieth held-out set, drawn once REPORT19_SEEDS had been reported on (end of session 41):
# only the lead runs it, once, first thing in the next session.
REPORT20_SEEDS = range(4200, 4232)  # spent: reported in session 42
# A twenty-first held-out set, drawn once REPORT20_SEEDS had been reported on (end of session 42):
# only the lead runs it, once, first thing in the next session.
REPORT21_SEEDS = range(4400, 4432)  # spent: reported in session 43
# A twenty-second held-out set, drawn once REPORT21_SEEDS had been reported on (end of session 43):
# only the lead runs it, once, first thing in the next session.
REPORT22_SEEDS = range(4600, 4632)  # spent: reported in session 44
# A twenty-third held-out set, drawn once REPORT22_SEEDS had been reported on (end of session 44):
# only the lead runs it, once, first thing in the next session.
REPORT23_SEEDS = range(4800, 4832)  # spent: reported in session 45
# A twenty-fourth held-out set, drawn once REPORT23_SEEDS had been reported on (end of session 45):
# only the lead runs it, once, first thing in the next session.
REPORT24_SEEDS = range(5200, 5232)  # spent: reported in session 46
# A twenty-fifth held-out set, drawn once REPORT24_SEEDS had been reported on (end of session 46):
# only the lead runs it, once, first thing in the next session.
REPORT25_SEEDS = range(5400, 5432)  # spent: reported in session 47
# A twenty-sixth held-out set, drawn once REPORT25_SEEDS had been reported on (end of session 47):
# only the lead runs it, once, first thing in the next session.
REPORT26_SEEDS = range(5600, 5632)  # spent: reported in session 48
# A twenty-seventh held-out set, drawn once REPORT26_SEEDS had been reported on (session 49):
# only the lead runs it, once, first thing in the next session.
REPORT27_SEEDS = range(5800, 5832)  # spent: reported in session 49
# A twenty-eighth held-out set, drawn once REPORT27_SEEDS had been reported on (session 49):
# only the lead runs it, once, first thing in the next session.
REPORT28_SEEDS = range(6000, 6032)  # spent: reported in session 50
# A twenty-ninth held-out set, drawn once REPORT28_SEEDS had been reported on (session 50):
# only the lead runs it, once, first thing in the next session.
REPORT29_SEEDS = range(6200, 6232)  # spent: reported in session 51
# A thirtieth held-out set, drawn once REPORT29_SEEDS had been reported on (session 52):
# only the lead runs it, once, with session 52's final binary.
REPORT30_SEEDS = range(6400, 6432)  # spent: reported in session 52
# A thirty-first held-out set, drawn once REPORT30_SEEDS had been reported on (session 53):
# only the lead runs it, once, with session 53's final binary.
REPORT31_SEEDS = range(6600, 6632)  # spent: reported in session 53
# A thirty-second held-out set, drawn once REPORT31_SEEDS had been reported on (session 55):
# run once with session 55's starting binary and once with its final code.
REPORT32_SEEDS = range(6800, 6832)  # spent: reported in session 55
# A thirty-third held-out set, drawn once REPORT32_SEEDS had been reported on (session 56):
# run once with session 56's starting binary and once with its final code.
REPORT33_SEEDS = range(7000, 7032)  # spent: reported in session 56
# A thirty-fourth held-out set, drawn once REPORT33_SEEDS had been reported on (session 57):
# run once with session 57's starting binary and once with its final code.
REPORT34_SEEDS = range(7200, 7232)  # spent: reported in session 57
# A thirty-fifth held-out set, drawn once REPORT34_SEEDS had been reported on (session 58):
# run once with session 58's starting binary and once with its final code.
REPORT35_SEEDS = range(7400, 7432)  # spent: reported in session 58
# A thirty-sixth held-out set, drawn once REPORT35_SEEDS had been reported on (session 59):
# run once with session 59's starting binary and once with its final code.
REPORT36_SEEDS = range(7600, 7632)  # spent: reported in session 59
# A thirty-seventh held-out set, drawn once REPORT36_SEEDS had been reported on (session 60):
# run once with session 60's starting binary and once with its final code.
REPORT37_SEEDS = range(7800, 7832)  # spent: reported in session 60
# A thirty-eighth held-out set, drawn once REPORT37_SEEDS had been reported on (session 61):
# run once with session 61's starting binary and once with its final code.
REPORT38_SEEDS = range(8000, 8032)  # spent: reported in session 61
# A thirty-ninth held-out set, drawn once REPORT38_SEEDS had been reported on (session 62):
# run once with session 62's starting binary and once with its final code.
REPORT39_SEEDS = range(8200, 8232)  # spent: reported in session 62
# A fortieth held-out set, drawn once REPORT39_SEEDS had been reported on (session 63): run once
# with session 63's starting binary and once with its final code.
REPORT40_SEEDS = range(8400, 8432)  # spent: reported in session 63
# A forty-first held-out set, drawn once REPORT40_SEEDS had been reported on (session 64): run once
# with session 64's starting binary and once with its final code.
REPORT41_SEEDS = range(8600, 8632)  # spent: reported in session 64
# A forty-second held-out set, drawn once REPORT41_SEEDS had been reported on (session 65): run
# once with session 65's starting binary and once with its final code.
REPORT42_SEEDS = range(8800, 8832)


# Every seed set by its --set name ("REPORT20_SEEDS" is "report20", "DEV_SEEDS" "dev"), in the
# order defined: what the runners and their usage strings read, so a new set is one *_SEEDS line.
SETS = {k[:-len("_SEEDS")].lower(): v for k, v in list(globals().items()) if k.endswith("_SEEDS")}


def _logu(r, lo, hi):
    return math.exp(r.uniform(math.log(lo), math.log(hi)))


def place(s):
    """Variables over the PS as replica_device_setter's round robin does, in creation order
    (tables, then each layer's kernel and bias); a partitioned variable's parts take the next P."""
    P, rr = s["ps"], 0
    for t in s["tables"]:
        if t["whole"]:
            t["ps"] = rr % P
            rr += 1
        else:
            t["ps"] = "all"
            rr += P
    for d in s["dense"]:
        d["ps"] = rr % P
        rr += 1
    return s


def draw(seed):
    r = random.Random(seed * 104729 + 3)
    healthy = r.random() < 0.25
    P = int(round(_logu(r, 1, 16.4)))
    W = int(round(_logu(r, 2, 256)))
    threads = r.randint(1, 8)
    cores = r.choice([1, 2, 4, 8, 16])
    s = {"seed": seed, "ps": P, "workers": W, "ps_threads": threads, "ps_cores": float(cores),
         "ps_quota": None, "ps_speed": [1.0] * P, "ps_node": list(range(P)),
         "nic_gbps": r.choice([1, 10, 10, 25]), "worker_nic": [1.0],
         "lat_us": _logu(r, 30, 300), "rpc_us": _logu(r, 8, 60),
         "intra_threads": r.randint(1, 4), "optimizer": r.choice(["sgd", "adagrad", "adam"]),
         "compute_ms": _logu(r, 3, 150), "worker_sigma": r.uniform(0.03, 0.25),
         "ps_sigma": r.uniform(0.05, 0.5), "pause_p": r.choice([0, 0, 0.02, 0.08]),
         "pause_ms": _logu(r, 5, 80), "input_sigma": r.uniform(0.1, 0.6),
         "prefetch": r.random() < 0.4, "sync": r.random() < 0.3, "planted": []}
    s["worker_speed"] = [r.uniform(0.92, 1.08) for _ in range(W)]
    s["input_ms"] = s["compute_ms"] * r.choice([0, 0.03, 0.1, 0.3, 0.6])
    ntab = r.choice([0, 1, 1, 2, 3])
    s["tables"] = [{"name": f"emb{i}/embedding_weights", "dim": r.choice([8, 16, 32, 64]),
                    "ids": int(_logu(r, 200, 20000)), "whole": P > 1 and r.random() < 0.2}
                   for i in range(ntab)]
    layers = r.randint(1, 4)
    s["dense"] = []
    for l in range(layers):
        s["dense"].append({"name": f"dense_{l + 1}/kernel", "bytes": int(_logu(r, 16e3, 4e6))})
        s["dense"].append({"name": f"dense_{l + 1}/bias", "bytes": r.choice([256, 1024, 4096])})
    if not healthy:
        kinds = r.sample(["hot", "uneven", "straggler", "quota", "slow-host", "packed", "input",
                          "oversub", "idle"], r.choice([1, 1, 2]))
        # "idle" first: it changes the PS count, which the per-PS draws of the others (shard
        # weights, a slow host, packed nodes) must then follow (drawn after them, it left a
        # table's shard weights one per old PS, past the end of the new list's use).
        kinds.sort(key=lambda k: k != "idle")
        for kind in kinds:
            if kind == "hot" and P > 1:
                s["tables"].append({"name": f"emb{ntab}/embedding_weights", "whole": True,
                                    "dim": r.choice([16, 32, 64]),
                                    "ids": int(_logu(r, 5000, 50000))})
            elif kind == "uneven" and P > 1 and s["tables"]:
                t = s["tables"][0]
                t["whole"] = False
                t["shard_weights"] = [1.0] * P
                t["shard_weights"][r.randrange(P)] = r.uniform(3, 6)
            elif kind == "straggler":
                for w in r.sample(range(W), max(1, W // 16)):
                    s["worker_speed"][w] = r.uniform(0.35, 0.7)
            elif kind == "quota":
                s["ps_quota"] = round(r.uniform(0.3, 0.8) * min(threads, cores), 2)
            elif kind == "slow-host" and P > 2:
                s["ps_speed"][r.randrange(P)] = r.uniform(0.3, 0.6)
            elif kind == "packed" and P > 1:
                per = r.choice([2, 4])
                s["ps_node"] = [p // per for p in range(P)]
            elif kind == "input":
                s["input_ms"] = s["compute_ms"] * r.uniform(0.3, 1.0)
                s["prefetch"] = False
            elif kind == "oversub":
                s["ps_threads"], s["ps_cores"] = 8, float(r.choice([1, 2]))
            elif kind == "idle":
                s["ps"] = P = min(16, max(P, 4) * 2)
                s["ps_speed"], s["ps_node"] = [1.0] * P, list(range(P))
            else:
                continue
            s["planted"].append(kind)
    else:  # healthy: as a well-set job would be deployed (no draws here: the rest is as drawn)
        s["input_ms"] = s["compute_ms"] * r.choice([0, 0.02])
        s["nic_gbps"] = 25
        s["sync"] = False
        s["ps_threads"] = min(threads, cores)
        P = s["ps"] = min(16, max(P, -(-W // 8)))  # 1 PS per 8 workers at least
        s["ps_speed"], s["ps_node"] = [1.0] * P, list(range(P))
        for t in s["tables"]:
            t["whole"] = False
        for d in s["dense"]:
            if d["bytes"] >= 256 * 1024:
                d["parts"] = "all"  # big kernels partitioned
    if s["ps_quota"] is not None and s["ps_quota"] < 0.2:
        s["ps_quota"] = 0.2
    # run time: at most about 1500 PS requests a worker step in all (a cap, drawn last, so the
    # rest of the job is as drawn)
    cap = max(4, 1500 // (len(s["tables"]) * s["ps"] + len(s["dense"])))
    if s["workers"] > cap:
        s["workers"] = cap
        s["worker_speed"] = s["worker_speed"][:cap]
    s["steps"] = steps_for(s)
    return place(s)


def steps_for(s):
    """Steps per worker: 8, fewer for big jobs (run time), never under 4."""
    ops = s["workers"] * (len(s["tables"]) * s["ps"] + len(s["dense"]))
    return max(4, min(8, int(6000 / max(1, ops))))


def with_workers(s, n):
    """The same job with n workers: the added workers take the captured ones' speeds in turn."""
    t = copy.deepcopy(s)
    t["worker_speed"] = [s["worker_speed"][i % s["workers"]] for i in range(n)]
    t["workers"] = n
    t["steps"] = max(4, min(s["steps"], steps_for(t)))
    return t


def _reset_ps(s, speeds, nodes):
    s["ps"] = len(speeds)
    s["ps_speed"], s["ps_node"] = speeds, nodes


def apply_fix(spec, fix):
    s = copy.deepcopy(spec)
    kind = fix[0]
    if kind == "partition":  # hot-ps: the named variables cut evenly over all PS
        for t in s["tables"]:
            if t["name"] in fix[1]:
                t["whole"] = False
                t.pop("shard_weights", None)
        for d in s["dense"]:
            if len(fix) > 2 and d["name"] in fix[2]:
                d["parts"] = "all"
    elif kind == "prefetch":  # input-bound: a prefetched pipeline (the job's code: every worker)
        s["prefetch"] = True
    elif kind == "straggler":  # the named workers' nodes fixed: at the median worker's speed
        med = sorted(s["worker_speed"])[len(s["worker_speed"]) // 2]
        named = set(fix[1]) if len(fix) > 1 else set(range(s["workers"]))
        s["worker_speed"] = [max(x, med) if i in named else x
                             for i, x in enumerate(s["worker_speed"])]
    elif kind == "drop-ps":  # idle-ps: the PS count lowered, the program placing over the rest
        keep = [p for p in range(s["ps"]) if p not in set(fix[1])]
        _reset_ps(s, [s["ps_speed"][p] for p in keep], [s["ps_node"][p] for p in keep])
        for t in s["tables"]:  # an uneven table's parts: those of the PS kept
            if t.get("shard_weights"):
                t["shard_weights"] = [t["shard_weights"][p] for p in keep]
    elif kind == "ps-count":  # ps-worker-ratio: n PS, variables partitioned over the new count
        n = fix[1]
        speeds = (s["ps_speed"] + [1.0] * n)[:n]
        nodes = (s["ps_node"] + list(range(max(s["ps_node"]) + 1, max(s["ps_node"]) + 1 + n)))[:n]
        _reset_ps(s, speeds, nodes)
        for t in s["tables"]:
            t["whole"] = False
            t.pop("shard_weights", None)
        # Every variable, as the fix text says ("re-partition every variable over them
        # (fixed_size_partitioner(n))"); until session 58 only kernels of 256 kB and more were
        # cut, which is not the text (gen2 report34 7220: 3 -> 6 PS, a 116 kB kernel left whole
        # on its PS's link, 36.3 ms; cut as the text says, 9.1 ms).
        for d in s["dense"]:
            d["parts"] = "all"
    elif kind == "async":  # sync-replicas: asynchronous training
        s["sync"] = False
    elif kind == "slow-host":  # slow-ps-host: the named PS on a node at the others' speed
        named = set(fix[1]) if len(fix) > 1 else set(range(s["ps"]))
        s["ps_speed"] = [1.0 if p in named else x for p, x in enumerate(s["ps_speed"])]
    elif kind == "quota":  # ps-cpu-quota: the CFS quota removed on the PS it names
        named = set(fix[1]) if len(fix) > 1 else set(range(s["ps"]))
        if named >= set(range(s["ps"])):
            s["ps_quota"] = None
        else:
            s["ps_quota_off"] = sorted(named)
    elif kind == "spread-ps":  # ps-colocation: podAntiAffinity, one PS a node
        s["ps_node"] = list(range(s["ps"]))
    elif kind == "threads":  # thread-oversubscription: threads = the CPU limit
        s["ps_threads"] = max(1, int(s["ps_cores"]))
    else:
        raise ValueError(f"unknown fix {fix}")
    return place(s)


def candidate_fixes(s):
    out = []
    uneven = tuple(t["name"] for t in s["tables"] if t["whole"] or t.get("shard_weights"))
    if uneven and s["ps"] > 1:
        out.append(("partition", uneven))
    if not s["prefetch"] and s["input_ms"] > 0:
        out.append(("prefetch",))
    med = sorted(s["worker_speed"])[s["workers"] // 2]
    if min(s["worker_speed"]) < 0.8 * med:
        out.append(("straggler",))
    if s["sync"]:
        out.append(("async",))
    if min(s["ps_speed"]) < 1:
        out.append(("slow-host",))
    if s["ps_quota"] is not None:
        out.append(("quota",))
    if len(set(s["ps_node"])) < s["ps"]:
        out.append(("spread-ps",))
    if s["ps_threads"] > s["ps_cores"]:
        out.append(("threads",))
    for n in sorted({max(1, s["ps"] // 2), s["ps"] * 2} - {s["ps"]}):
        if n <= 16:
            out.append(("ps-count", n))
    return out


def _index(subject, job):
    """The task index of a subject such as "ps:3" of `job`, else None."""
    m = re.fullmatch(job + r":(\d+)", subject)
    return int(m.group(1)) if m else None


def _says(text, name):
    """Whether `text` names the variable `name` itself, not one whose name it begins
    ("dense_1/kernel" in "dense_1/kernel_2" is not; its parts "dense_1/kernel/part_0" are)."""
    return re.search(re.escape(name) + r"(?!\w)", text) is not None


def fix_for(finding, s):
    """The fix a finding's fix text names, applied to this job; None when it names none here."""
    rule = finding["rule"]
    subjects = [finding.get("subject", "")] + [o.get("subject", "")
                                               for o in finding.get("objects", [])]
    ps = sorted({_index(x, "ps") for x in subjects} - {None})
    workers = sorted({_index(x, "worker") for x in subjects} - {None})
    if rule == "hot-ps":
        if finding.get("cause") == "an unevenly loaded partitioned variable":
            tabs = tuple(t["name"] for t in s["tables"] if t.get("shard_weights"))
            return ("partition", tabs) if tabs else None
        on = [t for t in s["tables"] if t["ps"] in ps]
        dense = [d for d in s["dense"] if d["ps"] in ps and d.get("parts") != "all"]
        # Every table and dense kernel on its PS that its fix text names ("For this job:
        # partition <variable> (on ps:N)" a hot PS), as its prediction spreads them, and no other:
        # not those its summary lists beside them (session 43: gen2 report21 4427, two hot PS of
        # a kernel each, the twin cut only the larger; report15 3207, a whole table on ps:0 and
        # two kernels on ps:1 and ps:5, the twin cut the table alone).
        fix = finding.get("fix", "")
        tabs = tuple(t["name"] for t in on if _says(fix, t["name"]))
        kernels = tuple(d["name"] for d in dense if _says(fix, d["name"]))
        if tabs or kernels:
            return ("partition", tabs) + ((kernels,) if kernels else ())
        # A fix text that names none of them: the tables on its PS, else its largest kernel.
        if on:
            return ("partition", tuple(t["name"] for t in on))
        if dense:
            return ("partition", (), (max(dense, key=lambda d: d["bytes"])["name"],))
        return None
    # A fix on tasks applies to the tasks the finding names (its subject and objects), as its
    # prediction does (issue 44: a twin changing every task scored a finding about one of them).
    # input-bound's fix is a change to the input pipeline's code, which every worker runs.
    if rule == "input-bound":
        return ("prefetch",)
    if rule == "straggler-worker":
        return ("straggler", tuple(workers)) if workers else ("straggler",)
    if rule == "idle-ps":
        return ("drop-ps", tuple(ps)) if ps and len(ps) < s["ps"] else None
    if rule == "ps-worker-ratio":
        for e in finding.get("evidence", []):
            if e.get("label") == "suggested PS count":
                n = int(e["value"])
                return ("ps-count", n) if n != s["ps"] and n >= 1 else None
        return None
    if rule == "sync-replicas":
        return ("async",) if s["sync"] else None
    if rule == "slow-ps-host":
        return ("slow-host", tuple(ps)) if ps else ("slow-host",)
    if rule == "ps-cpu-quota":
        return ("quota", tuple(ps)) if ps else ("quota",)
    if rule == "ps-colocation":
        return ("spread-ps",)
    if rule in ("thread-oversubscription", "thread-config"):
        return ("threads",)
    return None


def ps_nodes(spec):
    """Each PS's node (spec["ps_node"]), for the pod list the harness gives tfdiag beside the
    capture (generator_suite.write_pods)."""
    return list(spec["ps_node"])
