"""gen3's TF1 Timeline writer: the capture of a job gen3sim.simulate ran (standard library only).

The layout is tensorflow/python/client/timeline.py's generate_chrome_trace_format(show_memory=True)
(https://github.com/tensorflow/tensorflow/blob/master/tensorflow/python/client/timeline.py).
"""
import json
import os

EPOCH_US = 1_650_000_000_000_000


def write_trace(spec, state, ps, ps_recv, parts, path, t0_capture):
    """A TF1 timeline.py Chrome trace (generate_chrome_trace_format(show_memory=True)): a
    `<device> Compute` process per device, `<device> Tensors` with each PS variable's snapshot,
    X ops with args name/op/inputN, RecvTensor on the receiving device; ts/dur integer us."""
    ev, pid = [], [0]

    def proc(name):
        pid[0] += 1
        ev.append({"name": "process_name", "ph": "M", "pid": pid[0], "args": {"name": name}})
        return pid[0]

    def x(p, tid, a, b, name, op, ins):
        if b < t0_capture:
            return
        args = {"name": name, "op": op}
        for i, s in enumerate(ins):
            args[f"input{i}"] = s
        ev.append({"ph": "X", "cat": "Op", "name": op, "pid": p, "tid": tid,
                   "ts": EPOCH_US + int(a), "dur": max(1, int(round(b - a))), "args": args})

    ev.append({"name": "process_name", "ph": "M", "pid": 0, "args": {"name": "Allocators"}})

    def snap(p, tensor, oid, nb):
        """timeline.py's _emit_tensor_snapshot: N then O (category Tensor, output 0 named by its
        node alone) with the TensorDescription's text, quotes removed."""
        nb = max(4, int(nb))
        desc = (f"dtype: DT_FLOAT\nshape {{\n  dim {{\n    size: {nb // 4}\n  }}\n}}\n"
                f"allocation_description {{\n  requested_bytes: {nb}\n  allocated_bytes: {nb}"
                f"\n  allocator_name: cpu\n}}\n")
        ts = EPOCH_US + int(t0_capture) + 1
        ev.append({"ph": "N", "cat": "Tensor", "name": tensor, "pid": p, "tid": 0, "ts": ts,
                   "id": oid})
        ev.append({"ph": "O", "cat": "Tensor", "name": tensor, "pid": p, "tid": 0, "ts": ts,
                   "id": oid, "args": {"snapshot": {"tensor_description": desc}}})
    for w, st in enumerate(state):
        dev = f"/job:worker/replica:0/task:{w}/device:CPU:0"
        p = proc(dev + " Compute")
        for (tid, a, b, name, op, ins) in st["ops"]:
            x(p, tid, a, b, name, op, ins)
        lanes = []
        for (a, b) in sorted(st["recv"]):
            lane = next((i for i, e in enumerate(lanes) if e <= a), None)
            if lane is None:
                lanes.append(b)
                lane = len(lanes) - 1
            lanes[lane] = b
            x(p, 1 + lane, a, b, "RecvTensor", "RecvTensor", [])
    for j, s in enumerate(ps):
        dev = f"/job:ps/replica:0/task:{j}/device:CPU:0"
        p = proc(dev + " Compute")
        mine = [pt for pt in parts if pt[3] == j]
        for (v, k, name, jj, share, pb) in mine:
            x(p, 0, t0_capture + 1, t0_capture + 2, name, "VariableV2", [])
        for (tid, a, b, name, op, ins) in s.ops:
            x(p, tid, a, b, name, op, ins)
        lanes = []
        for (a, b) in sorted(ps_recv[j]):
            lane = next((i for i, e in enumerate(lanes) if e <= a), None)
            if lane is None:
                lanes.append(b)
                lane = len(lanes) - 1
            lanes[lane] = b
            x(p, s.threads + lane, a, b, "RecvTensor", "RecvTensor", [])
        tp = proc(dev + " Tensors")
        outs = {}
        for (tid, a, b, name, op, ins) in s.ops:
            if op in ("Identity", "GatherV2") and name not in outs:
                outs[name] = op
        for n, (v, k, name, jj, share, pb) in enumerate(mine):
            for oname, nb in ((f"{name}/read", pb), (f"{name}/Gather",
                              v.get("ids_per_step", 1) * share * v.get("dim", 1) * 4)):
                if oname in outs:  # the transferred tensor's snapshot (its output 0)
                    snap(tp, oname, 500000 + 1000 * j + len(ev), nb)

            snap(tp, name, 1000 * (j + 1) + n, pb)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump({"traceEvents": ev}, f, separators=(",", ":"))
    os.replace(tmp, path)
