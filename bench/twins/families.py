"""The twin suite's job families (issue 35) and the fixes a finding maps to.

Each family is a job spec for psjob.py plus the fixes that apply to it; a fix turns the spec into
its fixed twin (the same job and seed, the fix applied). Standard library only.
"""
import copy

EMB = {"name": "emb", "ps": 0, "gather_ms": 1.5, "apply_ms": 1.0, "rows_mb": 0.2,
       "table_mb": 50}


def table(**kw):
    t = dict(EMB)
    t.update(kw)
    return t


FAMILIES = {
    # hot PS (one unpartitioned table on ps:0) on 1, 2 and 4 PS threads
    "hot-1t": {"ps": 4, "ps_threads": 1, "workers": 16, "compute_ms": 20, "tables": [table()]},
    "hot-2t": {"ps": 4, "ps_threads": 2, "workers": 16, "compute_ms": 20,
               "tables": [table(gather_ms=3.0, apply_ms=2.0)]},
    "hot-4t": {"ps": 4, "ps_threads": 4, "workers": 32, "compute_ms": 20,
               "tables": [table(gather_ms=3.0, apply_ms=2.0)]},
    # hot PS beside two idle PS: partitioning spreads over all 6
    "hot-idle": {"ps": 6, "idle_ps": 2, "workers": 12, "compute_ms": 15,
                 "tables": [table(gather_ms=1.2, apply_ms=0.8)]},
    # 1 ms steps and 100 ms steps with 64 workers
    "hot-small-step": {"ps": 2, "workers": 8, "compute_ms": 1.0, "steps": 60,
                       "dense_read_ms": 0.01, "dense_apply_ms": 0.01, "dense_mb": 0.01,
                       "latency_ms": 0.02, "tables": [table(gather_ms=0.15, apply_ms=0.1,
                                                            rows_mb=0.01)]},
    "hot-big-step": {"ps": 8, "ps_threads": 2, "workers": 64, "compute_ms": 100, "steps": 16,
                     "tables": [table(gather_ms=2.5, apply_ms=1.5)]},
    # input: slow without prefetch; prefetched and healthy; slow input beside a hot PS
    "input-slow": {"ps": 2, "workers": 8, "compute_ms": 15, "input_ms": 30},
    "input-prefetched": {"ps": 2, "workers": 8, "compute_ms": 15, "input_ms": 10,
                         "prefetch": True, "healthy": True},
    "hot-plus-input": {"ps": 4, "workers": 16, "compute_ms": 15, "input_ms": 12,
                       "tables": [table(gather_ms=1.2, apply_ms=0.8)]},
    # two hot tables on two PS
    "two-hot": {"ps": 4, "workers": 16, "compute_ms": 20,
                "tables": [table(gather_ms=1.2, apply_ms=0.8),
                           table(name="emb2", ps=1, gather_ms=1.0, apply_ms=0.7)]},
    # the worker receives the whole table and gathers itself
    "gather-on-worker": {"ps": 2, "workers": 8, "compute_ms": 20,
                         "tables": [table(on_worker=True, gather_ms=2.0, table_mb=40,
                                          rows_mb=0.5, apply_ms=0.5)]},
    # every PS saturated by dense variables
    "saturated-set": {"ps": 2, "workers": 32, "compute_ms": 10, "dense_count": 8,
                      "dense_read_ms": 0.3, "dense_apply_ms": 0.5, "more_ps": 4},
    # a worker 2.5x slower, sync and async
    "straggler-sync": {"ps": 2, "workers": 8, "compute_ms": 20, "sync": True,
                       "straggler": {"worker": 3, "factor": 2.5}},
    "straggler-async": {"ps": 2, "workers": 8, "compute_ms": 20,
                        "straggler": {"worker": 3, "factor": 2.5}},
    # healthy jobs
    "healthy-small": {"ps": 2, "workers": 4, "compute_ms": 5, "healthy": True},
    "healthy-large": {"ps": 8, "ps_threads": 2, "workers": 64, "compute_ms": 50, "steps": 16,
                      "dense_count": 16, "healthy": True},
    "healthy-sync": {"ps": 2, "workers": 8, "compute_ms": 20, "sync": True, "healthy": True},
}

# The families `make test` runs (tests/replay_twin_test.cc).
FAST = ["hot-1t", "hot-2t", "hot-idle", "input-slow", "healthy-small"]


def spec(family):
    s = copy.deepcopy(FAMILIES[family])
    s.pop("healthy", None)
    s.pop("more_ps", None)
    return s


def _repartition(t):
    """Every table (not gathered on the worker) cut over all PS (fixed_size_partitioner(num_ps)),
    as idle-ps's and ps-worker-ratio's fix texts say (issue 44)."""
    for tb in t.get("tables", []):
        if not tb.get("on_worker"):
            tb["ps"] = "all"


def apply_fix(s, fix):
    """The fixed twin of spec `s`: fix is ("partition", [tables]), ("prefetch",),
    ("straggler",), ("gather-on-ps",), ("drop-idle",) or ("ps-count", n)."""
    t = copy.deepcopy(s)
    kind = fix[0]
    if kind == "partition":
        for tb in t.get("tables", []):
            if tb["name"] in fix[1]:
                tb["ps"] = "all"
    elif kind == "prefetch":
        t["prefetch"] = True
    elif kind == "straggler":
        t["straggler"] = None
    elif kind == "gather-on-ps":
        for tb in t.get("tables", []):
            tb["on_worker"] = False
    elif kind == "drop-idle":  # the fix text: fewer PS, variables partitioned over them
        t["ps"] -= t.get("idle_ps", 0)
        t["idle_ps"] = 0
        _repartition(t)
    elif kind == "ps-count":  # the fix text: partition variables over the new PS count
        t["ps"] = fix[1]
        _repartition(t)
    else:
        raise ValueError(f"unknown fix {fix}")
    return t


def fixes_of(family):
    """Every fix that changes something in the family's job (the candidates for Fix first)."""
    s = spec(family)
    out = []
    if FAMILIES[family].get("more_ps"):
        out.append(("ps-count", FAMILIES[family]["more_ps"]))
    hot = [tb["name"] for tb in s.get("tables", []) if tb["ps"] != "all" and
           not tb.get("on_worker")]
    if hot:
        out.append(("partition", tuple(hot)))
    if not s.get("prefetch") and s.get("input_ms", 0.2) > 1:
        out.append(("prefetch",))
    if s.get("straggler"):
        out.append(("straggler",))
    if any(tb.get("on_worker") for tb in s.get("tables", [])):
        out.append(("gather-on-ps",))
    if s.get("idle_ps"):
        out.append(("drop-idle",))
    return out
