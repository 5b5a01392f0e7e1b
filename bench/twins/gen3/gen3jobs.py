"""gen3's jobs: draw(seed) a PS job with 0-2 planted causes (domain.md's list; about 1 in 4
healthy), apply_fix(spec, fix) the same job with one fix applied as tfdiag's fix text says,
fix_for(finding, spec) the fix a finding's text names, candidate_fixes(spec) every fix worth
trying (for the best single fix) and with_workers(spec, n) the job at another worker count.
Written apart from tfdiag and the other generators; standard library only.

Variables are placed on the PS round-robin in creation order, each part a variable, as
tf.compat.v1.train.replica_device_setter does
(https://www.tensorflow.org/api_docs/python/tf/compat/v1/train/replica_device_setter), so
re-partitioning one variable moves the ones created after it too.
"""
import copy
import json
import random
import re

DEV_SEEDS = tuple(range(200, 220))
REPORT_SEEDS = tuple(range(700, 732))  # spent: reported in session 23
# A second held-out set, drawn once REPORT_SEEDS had been reported on: only the lead runs it, once.
REPORT2_SEEDS = tuple(range(900, 932))  # spent: reported in session 24
# A third held-out set, drawn once REPORT2_SEEDS had been reported on: only the lead runs it, once.
REPORT3_SEEDS = tuple(range(1100, 1132))  # spent: reported in session 25
# A fourth held-out set, drawn once REPORT3_SEEDS had been reported on: only the lead runs it, once.
REPORT4_SEEDS = tuple(range(1300, 1332))  # spent: reported in session 26
# A fifth held-out set, drawn once REPORT4_SEEDS had been reported on: only the lead runs it, once.
REPORT5_SEEDS = tuple(range(1500, 1532))  # spent: reported in session 27
# A sixth held-out set, drawn once REPORT5_SEEDS had been reported on: only the lead runs it, once.
REPORT6_SEEDS = tuple(range(1700, 1732))  # spent: reported in session 28
# A seventh held-out set, drawn once REPORT6_SEEDS had been reported on: only the lead runs it, once.
REPORT7_SEEDS = tuple(range(1900, 1932))  # spent: reported in session 29
# An eighth held-out set, drawn once REPORT7_SEEDS had been reported on: only the lead runs it, once.
REPORT8_SEEDS = tuple(range(2100, 2132))  # spent: reported in session 30
# A ninth held-out set, drawn once REPORT8_SEEDS had been reported on: only the lead runs it, once.
REPORT9_SEEDS = tuple(range(2300, 2332))  # spent: reported in session 31
# A tenth held-out set, drawn once REPORT9_SEEDS had been reported on: only the lead runs it, once.
REPORT10_SEEDS = tuple(range(2500, 2532))  # spent: reported in session 32
# An eleventh held-out set, drawn once REPORT10_SEEDS had been reported on: only the lead runs it, once.
REPORT11_SEEDS = tuple(range(2700, 2732))  # spent: reported in session 33
# A twelfth held-out set, drawn once REPORT11_SEEDS had been reported on: only the lead runs it, once.
REPORT12_SEEDS = tuple(range(2900, 2932))  # spent: reported in session 35
# A thirteenth held-out set, drawn once REPORT12_SEEDS had been reported on: only the lead runs it, once.
REPORT13_SEEDS = tuple(range(3100, 3132))  # spent: reported in session 36
# A fourteenth held-out set, drawn once REPORT13_SEEDS had been reported on: only the lead runs it, once.
REPORT14_SEEDS = tuple(range(3300, 3332))  # spent: reported in session 37
# A fifteenth held-out set, drawn once REPORT14_SEEDS had been reported on: only the lead runs it, once.
REPORT15_SEEDS = tuple(range(3500, 3532))  # spent: reported in session 38
# A sixteenth held-out set, drawn once REPORT15_SEEDS had been reported on (end of session 38): only
# the lead runs it, once, first thing in the next session.
REPORT16_SEEDS = tuple(range(3700, 3732))  # spent: reported in session 39
# A seventeenth held-out set, drawn once REPORT16_SEEDS had been reported on (end of session 39):
# only the lead runs it, once, first thing in the next session.
REPORT17_SEEDS = tuple(range(3900, 3932))  # spent: reported in session 40
# An eighteenth held-out set, drawn once REPORT17_SEEDS had been reported on (end of session 40):
# only the lead runs it, once, first thing in the next session.
REPORT18_SEEDS = tuple(range(4100, 4132))  # spent: reported in session 41
# A nineteenth held-out set, drawn once REPORT18_SEEDS had been reported on (end of session 41):
# only the lead runs it, once, first thing in the next session.
REPORT19_SEEDS = tuple(range(4300, 4332))  # spent: reported in session 42
# A twentieth held-out set, drawn once REPORT19_SEEDS had been reported on (end of session 42):
# only the lead runs it, once, first thing in the next session.
REPORT20_SEEDS = tuple(range(4500, 4532))  # spent: reported in session 43
# A twenty-first held-out set, drawn once REPORT20_SEEDS had been reported on (end of session 43):
# only the lead runs it, once, first thing in the next session.
REPORT21_SEEDS = tuple(range(4700, 4732))  # spent: reported in session 44
# A twenty-second held-out set, drawn once REPORT21_SEEDS had been reported on (end of session 44):
# only the lead runs it, once, first thing in the next session.
REPORT22_SEEDS = tuple(range(4900, 4932))  # spent: reported in session 45
# A twenty-third held-out set, drawn once REPORT22_SEEDS had been reported on (end of session 45):
# only the lead runs it, once, first thing in the next session.
REPORT23_SEEDS = tuple(range(5300, 5332))  # spent: reported in session 46
# A twenty-fourth held-out set, drawn once REPORT23_SEEDS had been reported on (end of session 46):
# only the lead runs it, once, first thing in the next session.
REPORT24_SEEDS = tuple(range(5500, 5532))  # spent: reported in session 47
# A twenty-fifth held-out set, drawn once REPORT24_SEEDS had been reported on (end of session 47):
# only the lead runs it, once, first thing in the next session.
REPORT25_SEEDS = tuple(range(5700, 5732))  # spent: reported in session 48
# A twenty-sixth held-out set, drawn once REPORT25_SEEDS had been reported on (session 49):
# only the lead runs it, once, first thing in the next session.
REPORT26_SEEDS = tuple(range(5900, 5932))  # spent: reported in session 49
# A twenty-seventh held-out set, drawn once REPORT26_SEEDS had been reported on (session 49):
# only the lead runs it, once, first thing in the next session.
REPORT27_SEEDS = tuple(range(6100, 6132))  # spent: reported in session 50
# A twenty-eighth held-out set, drawn once REPORT27_SEEDS had been reported on (session 50):
# only the lead runs it, once, first thing in the next session.
REPORT28_SEEDS = tuple(range(6300, 6332))  # spent: reported in session 51
# A twenty-ninth held-out set, drawn once REPORT28_SEEDS had been reported on (session 52):
# only the lead runs it, once, with session 52's final binary.
REPORT29_SEEDS = tuple(range(6500, 6532))  # spent: reported in session 52
# A thirtieth held-out set, drawn once REPORT29_SEEDS had been reported on (session 53):
# only the lead runs it, once, with session 53's final binary.
REPORT30_SEEDS = tuple(range(6700, 6732))  # spent: reported in session 53
# A thirty-first held-out set, drawn once REPORT30_SEEDS had been reported on (session 55):
# run once with session 55's starting binary and once with its final code.
REPORT31_SEEDS = tuple(range(6900, 6932))  # spent: reported in session 55
# A thirty-second held-out set, drawn once REPORT31_SEEDS had been reported on (session 56):
# run once with session 56's starting binary and once with its final code.
REPORT32_SEEDS = tuple(range(7100, 7132))  # spent: reported in session 56
# A thirty-third held-out set, drawn once REPORT32_SEEDS had been reported on (session 57):
# run once with session 57's starting binary and once with its final code.
REPORT33_SEEDS = tuple(range(7300, 7332))  # spent: reported in session 57
# A thirty-fourth held-out set, drawn once REPORT33_SEEDS had been reported on (session 58):
# run once with session 58's starting binary and once with its final code.
REPORT34_SEEDS = tuple(range(7500, 7532))  # spent: reported in session 58
# A thirty-fifth held-out set, drawn once REPORT34_SEEDS had been reported on (session 59): run
# once with session 59's starting binary and once with its final code.
REPORT35_SEEDS = tuple(range(7700, 7732))  # spent: reported in session 59
# A thirty-sixth held-out set, drawn once REPORT35_SEEDS had been reported on (session 60): run
# once with session 60's starting binary and once with its final code.
REPORT36_SEEDS = tuple(range(7900, 7932))  # spent: reported in session 60
# A thirty-seventh held-out set, drawn once REPORT36_SEEDS had been reported on (session 61): run
# once with session 61's starting binary and once with its final code.
REPORT37_SEEDS = tuple(range(8100, 8132))  # spent: reported in session 61
# A thirty-eighth held-out set, drawn once REPORT37_SEEDS had been reported on (session 62): run
# once with session 62's starting binary and once with its final code.
REPORT38_SEEDS = tuple(range(8300, 8332))  # spent: reported in session 62
# A thirty-ninth held-out set, drawn once REPORT38_SEEDS had been reported on (session 63): run
# once with session 63's starting binary and once with its final code.
REPORT39_SEEDS = tuple(range(8500, 8532))  # spent: reported in session 63
# A fortieth held-out set, drawn once REPORT39_SEEDS had been reported on (session 64): run
# once with session 64's starting binary and once with its final code.
REPORT40_SEEDS = tuple(range(8700, 8732))  # spent: reported in session 64
# A forty-first held-out set, drawn once REPORT40_SEEDS had been reported on (session 65): run
# once with session 65's starting binary and once with its final code.
REPORT41_SEEDS = tuple(range(8900, 8932))


# Every seed set by its --set name ("REPORT20_SEEDS" is "report20", "DEV_SEEDS" "dev"), in the
# order defined: what the runners and their usage strings read, so a new set is one *_SEEDS line.
SETS = {k[:-len("_SEEDS")].lower(): v for k, v in list(globals().items()) if k.endswith("_SEEDS")}

CAUSES = ("hot_emb", "uneven", "oversub", "cpushare", "few_ps", "many_ps", "packed",
          "dense_adam", "gather_worker", "overshard", "sync", "hdfs", "straggler", "slow_host",
          "netbound")

MAX_WORKERS = 256


def steps_for(workers):
    """Captured steps per worker: fewer for big jobs (run time; at least 4, straggler-worker's 3)."""
    return max(4, min(10, 1600 // max(1, workers)))


def place(spec):
    k = 0
    for v in spec["vars"]:
        v["placement"] = [(k + i) % spec["ps"] for i in range(v["parts"])]
        k += v["parts"]
    return spec


def _ps_lists(spec, n, r=None):
    """Per-PS lists of length n (new PS on their own hosts at the job's usual speed)."""
    base = sorted(spec["ps_speed"])[len(spec["ps_speed"]) // 2]
    for key, default in (("ps_quota", spec["ps_quota"][0]), ("ps_speed", base),
                         ("ps_steal", spec["ps_steal"][0]), ("ps_gbps", max(spec["ps_gbps"]))):
        lst = spec[key][:n]
        lst += [default] * (n - len(lst))
        spec[key] = lst
    hosts = spec["ps_host"][:n]
    nxt = max(hosts, default=-1) + 1
    while len(hosts) < n:
        hosts.append(nxt)
        nxt += 1
    spec["ps_host"] = hosts


def draw(seed):
    r = random.Random(f"gen3:{seed}")
    healthy = r.random() < 0.25
    planted = [] if healthy else r.sample(CAUSES, 1 if r.random() < 0.7 else 2)
    if "few_ps" in planted and "many_ps" in planted:
        planted.remove("many_ps")
    workers = r.choice((2, 4, 6, 8, 12, 16, 24, 32, 48, 64)) if r.random() < 0.88 else \
        r.choice((96, 128, 192, 256))
    sparse = r.random() < 0.7 or any(c in planted for c in (
        "hot_emb", "uneven", "dense_adam", "gather_worker"))
    if sparse:  # healthy jobs nearer the band's generous end (their PS not saturated)
        ps = max(1, min(16, round(workers / (r.uniform(1.5, 3) if healthy else r.uniform(3, 5)))))
    else:
        ps = max(1, min(16, round(workers / r.uniform(0.7, 1.5))))
    if "few_ps" in planted:
        ps = max(1, min(ps, workers // 12))
        if workers < 12:
            workers = r.choice((16, 24, 32))
    if "many_ps" in planted:
        ps = min(16, max(ps * 3, workers * (1 if sparse else 3)))
    if any(c in planted for c in ("uneven", "slow_host", "packed")) and ps < 3:
        ps = 3
        workers = max(workers, 8)
    threads = r.choice((1, 2, 4, 4, 8))
    cores = r.choice([c for c in (1, 2, 4, 8) if c >= threads / 2] or [threads])
    if healthy:
        threads = cores = r.choice((2, 4, 8))
    if "oversub" in planted:
        cores, threads = r.choice((1, 2)), r.choice((8, 12, 16))
    spec = {
        "seed": seed, "planted": planted, "ps": ps, "workers": workers,
        "ps_threads": threads, "ps_cores": cores,
        "ps_quota": [0] * ps, "ps_speed": [r.uniform(0.9, 1.1) for _ in range(ps)],
        "ps_steal": [0.0] * ps, "ps_host": list(range(ps)),
        "ps_gbps": [r.choice((10, 10, 25, 25, 40))] * ps,
        "rtt_us": r.uniform(60, 400), "msg_us": r.uniform(15, 45),
        "channel_k": r.choice((2, 4, 8, 100)),
        "steps": steps_for(workers), "warmup": 2,
        "worker_speed": [r.uniform(0.85, 1.15) for _ in range(workers)],
        "compute_ms": r.uniform(6, 60), "compute_cv": r.uniform(0.02, 0.12),
        "input_ms": r.uniform(0.3, 2.0), "input_cv": r.uniform(0.05, 0.3),
        "prefetch": r.random() < 0.6, "sync": False, "replicas_to_aggregate": workers,
        "vars": [],
    }
    if "oversub" in planted:
        spec["ps_quota"] = [cores] * ps
    if sparse:
        for t in range(r.choice((1, 2, 3))):
            rows = int(10 ** r.uniform(5, 6.7))
            dim = r.choice((16, 32, 64))
            spec["vars"].append({
                "name": f"emb{t}/embedding_weights", "kind": "emb", "rows": rows, "dim": dim,
                "bytes": rows * dim * 4, "parts": ps, "strategy": "mod",
                "zipf_s": r.uniform(1.05, 1.3), "optimizer": "sparse",
                "ids_per_step": int(r.uniform(500, 6000)),
                "gather_on_worker": False})
    for d in range(r.choice((1, 2, 3))):
        mb = 10 ** (r.uniform(-1, 0.5) if sparse else r.uniform(0, 1.5))
        if "netbound" in planted:
            mb = r.uniform(20, 60)
        parts = ps if mb > 4 else 1
        spec["vars"].append({"name": f"dense{d}/kernel", "kind": "dense",
                             "bytes": int(mb * 2 ** 20), "parts": parts, "rows": 1024})
    embs = [v for v in spec["vars"] if v["kind"] == "emb"]
    if "hot_emb" in planted:
        v = embs[0]
        v["parts"], v["ids_per_step"] = 1, int(v["ids_per_step"] * r.uniform(2, 4))
    if "uneven" in planted:
        v = embs[0]
        v["strategy"], v["zipf_s"] = "div", r.uniform(1.1, 1.4)
        v["ids_per_step"] = int(v["ids_per_step"] * r.uniform(2, 4))
    if "dense_adam" in planted:
        v = embs[-1]
        v["optimizer"] = "dense_adam"
        v["rows"] = int(r.uniform(1e5, 4e5))
        v["bytes"] = v["rows"] * v["dim"] * 4
    if "gather_worker" in planted:
        v = embs[-1]
        v["gather_on_worker"], v["parts"] = True, 1
        v["rows"] = int(r.uniform(2e4, 2e5))
        v["bytes"] = v["rows"] * v["dim"] * 4
    if "overshard" in planted:
        spec["vars"].append({"name": "dense_wide/kernel", "kind": "dense",
                             "bytes": int(r.uniform(1, 6) * 2 ** 20),
                             "parts": r.choice((16, 24, 32)), "rows": 1024})
    if "cpushare" in planted:
        spec["ps_steal"] = [r.uniform(0.15, 0.35)] * ps
    if "packed" in planted:
        spec["ps_host"] = [0] * ps
        spec["ps_gbps"] = [r.choice((2, 5, 10))] * ps
    if "netbound" in planted:
        spec["ps_gbps"] = [r.choice((1, 2, 5))] * ps
    if "sync" in planted:
        spec["sync"] = True
        spec["replicas_to_aggregate"] = workers - (r.choice((0, 0, 1, 2)) if workers > 4 else 0)
    if "hdfs" in planted:
        spec["prefetch"] = False
        spec["input_ms"] = spec["compute_ms"] * r.uniform(0.4, 1.2)
    if "straggler" in planted:
        for w in r.sample(range(workers), 1 if workers < 16 else 2):
            spec["worker_speed"][w] = r.uniform(0.35, 0.55)
    if "slow_host" in planted:
        spec["ps_speed"][r.randrange(ps)] = r.uniform(0.35, 0.55)
    return place(spec)


def with_workers(spec, n):
    s = copy.deepcopy(spec)
    sp = spec["worker_speed"]
    s["worker_speed"] = [sp[i % len(sp)] for i in range(n)]
    s["replicas_to_aggregate"] = max(1, n - (spec["workers"] - spec["replicas_to_aggregate"]))
    s["workers"], s["steps"] = n, steps_for(n)
    return s


def _median(x):
    return sorted(x)[len(x) // 2]


def apply_fix(spec, fix):
    """The same job (seed and all) with one fix applied as tfdiag's fix text says."""
    s = copy.deepcopy(spec)
    kind, args = fix[0], fix[1:]
    byname = {v["name"]: v for v in s["vars"]}
    if kind == "partition":  # fixed_size_partitioner(num_ps), embedding_lookup's default mod
        for n in args:
            byname[n]["parts"], byname[n]["strategy"] = s["ps"], "mod"
    elif kind == "prefetch":  # the input pipeline's code, which every worker runs
        s["prefetch"] = True
    elif kind == "straggler":  # each named worker at the median's speed
        med = _median(s["worker_speed"])
        for w in args:
            s["worker_speed"][w] = med
    elif kind == "lazy":
        byname[args[0]]["optimizer"] = "sparse"
    elif kind == "lookup":
        byname[args[0]]["gather_on_worker"] = False
    elif kind == "shards":
        byname[args[0]]["parts"] = min(byname[args[0]]["parts"], s["ps"])
    elif kind == "ps_count":
        n = int(args[0])
        keep = [j for j in range(s["ps"]) if j not in args[1:]] if len(args) > 1 else None
        if keep is not None:
            for key in ("ps_quota", "ps_speed", "ps_steal", "ps_host", "ps_gbps"):
                s[key] = [s[key][j] for j in keep]
        _ps_lists(s, n)
        s["ps"] = n
        for v in s["vars"]:  # partitioned over the new count, as the fix text says
            v["parts"], v["strategy"] = n, "mod"
    elif kind == "async":
        s["sync"] = False
    elif kind == "move":  # each named PS on a host of its own at the other PS's speed
        others = [x for i, x in enumerate(s["ps_speed"]) if i not in args] or [1.0]
        for j in args:
            s["ps_speed"][j] = _median(others)
            s["ps_host"][j] = max(s["ps_host"]) + 1
    elif kind == "link":
        others = [x for i, x in enumerate(s["ps_gbps"]) if i not in args] or s["ps_gbps"]
        fast = max(others)  # the fix text: the other PS's bandwidth
        for j in args:
            s["ps_gbps"][j] = fast
    elif kind == "spread":
        s["ps_host"] = list(range(s["ps"]))
        s["ps_gbps"] = [max(10, max(s["ps_gbps"]))] * s["ps"]
    elif kind == "threads":
        s["ps_threads"] = max(1, int(min(s["ps_cores"], min(q or 1e9 for q in s["ps_quota"]))))
    elif kind == "cpuset":
        s["ps_steal"] = [0.0] * s["ps"]
    elif kind == "quota":
        for j in args:
            s["ps_quota"][j] = 0
    else:
        raise ValueError(f"unknown fix {fix!r}")
    return place(s)


def _task(subject, job):
    m = re.search(job + r":(\d+)", subject or "")
    return int(m.group(1)) if m else None


def _named_vars(f, spec):
    """Base names of the spec's variables that the finding's text names, in spec order."""
    text = json.dumps(f)
    return [v["name"] for v in spec["vars"] if v["name"] in text]


def band_count(spec, sparse):
    lo, hi = (3, 5) if sparse else (0.5, 2)
    mid = (lo + hi) / 2
    return max(1, min(64, round(spec["workers"] / mid)))


def _tasks(f, job):
    """The task indices of `job` that a finding names: its subject's and its objects', sorted."""
    subjects = [f.get("subject", "")] + [o.get("subject", "") for o in f.get("objects", [])]
    return tuple(sorted({_task(x, job) for x in subjects} - {None}))


def fix_for(f, spec):
    """The fix a finding's text names, as a gen3 fix tuple (None: no simulated fix). A fix on
    tasks applies to every task the finding names (its subject and objects), as its prediction
    does, and to no other; input-bound's prefetch is a change to the pipeline's code, which every
    worker runs."""
    rule, subj = f["rule"], f.get("subject", "")
    named = _named_vars(f, spec)
    j = _task(subj, "ps")
    workers, ps = _tasks(f, "worker"), _tasks(f, "ps")
    if rule == "hot-ps":
        # The variables its fix text names ("For this job: partition <var> (on ps:N)" a hot PS),
        # every one and no other: its summary lists the PS's other hot variables beside them,
        # which the fix leaves whole (session 43; the prediction spreads what the fix names).
        fix = f.get("fix", "")
        named = [v["name"] for v in spec["vars"]
                 if re.search(re.escape(v["name"]) + r"(?!\w)", fix)] or named
        if not named and j is not None:
            mine = [v for v in spec["vars"] if j in v["placement"]]
            named = [max(mine, key=lambda v: v["bytes"])["name"]] if mine else []
        return ("partition",) + tuple(named) if named else None
    if rule == "input-bound":  # a change to the pipeline's code: every worker runs it
        return ("prefetch",)
    if rule == "straggler-worker":
        return ("straggler",) + workers if workers else None
    if rule == "dense-optimizer-on-embedding" and named:
        return ("lazy", named[0])
    if rule == "gather-on-worker" and named:
        return ("lookup", named[0])
    if rule == "oversharding" and named:
        return ("shards", named[0])
    if rule == "idle-ps":
        # Every PS it names, its objects included: a subject of many idle PS reads as a range
        # ("ps:2-15"), which a pattern of listed PS read as ps:2 alone (gen3 report12 2929: the
        # twin dropped 1 PS where the finding and its prediction drop 14).
        idle = list(ps)
        if not idle or len(idle) >= spec["ps"]:
            return None
        return ("ps_count", spec["ps"] - len(idle)) + tuple(idle)
    if rule == "ps-worker-ratio":
        text = json.dumps(f.get("fix", "")) + json.dumps(f.get("evidence", "")) + \
            json.dumps(f.get("title", ""))
        m = re.search(r"(\d+) PS", text)
        n = int(m.group(1)) if m else band_count(spec, any(
            v["kind"] == "emb" for v in spec["vars"]))
        return ("ps_count", n) if n != spec["ps"] and n >= 1 else None
    if rule == "sync-replicas":
        return ("async",)
    if rule == "slow-ps-host" and ps:
        return ("move",) + ps
    if rule == "slow-ps-link" and ps:
        return ("link",) + ps
    if rule == "ps-colocation":
        return ("spread",)
    if rule in ("thread-oversubscription", "thread-config"):
        return ("threads",)
    if rule in ("cpu-pinning", "cpu-qos"):
        return ("cpuset",)
    if rule == "ps-cpu-quota" and ps:
        return ("quota",) + ps
    return None


def candidate_fixes(spec):
    """Every fix worth trying on the job, for the best single fix."""
    out = []
    for v in spec["vars"]:
        if v["kind"] == "emb" and (v["parts"] < spec["ps"] or v.get("strategy") == "div"):
            out.append(("partition", v["name"]))
        if v.get("optimizer") == "dense_adam":
            out.append(("lazy", v["name"]))
        if v.get("gather_on_worker"):
            out.append(("lookup", v["name"]))
        if v["kind"] == "dense" and v["parts"] > spec["ps"]:
            out.append(("shards", v["name"]))
    if not spec["prefetch"]:
        out.append(("prefetch",))
    med = _median(spec["worker_speed"])
    out += [("straggler", w) for w, x in enumerate(spec["worker_speed"]) if x < 0.7 * med]
    if spec["sync"]:
        out.append(("async",))
    meds = _median(spec["ps_speed"])
    out += [("move", j) for j, x in enumerate(spec["ps_speed"]) if x < 0.7 * meds]
    if len(set(spec["ps_host"])) < spec["ps"]:
        out.append(("spread",))
    if spec["ps_threads"] > min(spec["ps_cores"], min(q or 1e9 for q in spec["ps_quota"])):
        out.append(("threads",))
    if any(spec["ps_steal"]):
        out.append(("cpuset",))
    sparse = any(v["kind"] == "emb" for v in spec["vars"])
    for n in {band_count(spec, sparse), min(64, spec["ps"] * 2)}:
        if n != spec["ps"]:
            out.append(("ps_count", n))
    return out


def ps_nodes(spec):
    """Each PS's node (spec["ps_host"]), for the pod list the harness gives tfdiag beside the
    capture (generator_suite.write_pods)."""
    return list(spec["ps_host"])
