"""gen2's capture: a TF1 Timeline JSON of a gen2sim run, as TensorFlow's timeline.py writes it
(https://github.com/tensorflow/tensorflow/blob/master/tensorflow/python/client/timeline.py):
one Compute and one Tensors process per device, X events with the op's name, type and inputs,
DataFlow s/t arrows for cross-task edges, and show_memory N/O/D snapshots of the PS answers."""
import json
import os

EPOCH_US = 1700000000000000


def _lanes(evs):
    """Timeline lanes (tid): the first lane free at each op's start."""
    ends, out = [], []
    for e in sorted(evs, key=lambda e: (e[2], e[3])):
        for i, t in enumerate(ends):
            if t <= e[2]:
                ends[i] = e[3]
                out.append((i, e))
                break
        else:
            ends.append(e[3])
            out.append((len(ends) - 1, e))
    return out


def write_timeline(sim, path):
    s = sim.s
    tasks = [f"ps:{p}" for p in range(s["ps"])] + [f"worker:{w}" for w in range(s["workers"])]
    pid, out = {}, []
    for n, t in enumerate(tasks):
        job, idx = t.split(":")
        pid[t] = 2 * n + 1
        dev = f"/job:{job}/replica:0/task:{idx}/device:CPU:0"
        out.append({"name": "process_name", "ph": "M", "pid": 2 * n + 1,
                    "args": {"name": dev + " Compute"}})
        out.append({"name": "process_name", "ph": "M", "pid": 2 * n + 2,
                    "args": {"name": dev + " Tensors"}})
    ts = lambda t: EPOCH_US + int(round(t))
    tensor_seen, tid_n = set(), 0
    for t in tasks:
        for lane, (type_, name, a, b, inputs, nb) in _lanes(sim.events.get(t, [])):
            args = {"name": name, "op": type_}
            for n, x in enumerate(inputs):
                args[f"input{n}"] = x
            out.append({"ph": "X", "cat": "Op", "name": type_, "pid": pid[t], "tid": lane,
                        "ts": ts(a), "dur": max(1, int(round(b - a))), "args": args})
            if nb and t.startswith("ps:") and (t, name) not in tensor_seen:
                tensor_seen.add((t, name))
                desc = (f"dtype: DT_FLOAT\nshape {{\n  dim {{\n    size: {nb // 4}\n  }}\n}}\n"
                        f"allocation_description {{\n  requested_bytes: {nb}\n"
                        f"  allocated_bytes: {nb}\n  allocator_name: cpu\n}}\n")
                for ph in ("N", "O", "D"):
                    e = {"ph": ph, "cat": "Tensor", "name": name, "pid": pid[t] + 1, "tid": 0,
                         "ts": ts(a) + (0 if ph != "D" else 10 ** 7), "id": tid_n}
                    if ph == "O":
                        e["args"] = {"snapshot": {"tensor_description": desc}}
                    out.append(e)
                tid_n += 1
    aid = 0
    for (src, sname, t_sent, dst, t_dst, dname) in sim.arrows:
        out.append({"ph": "s", "cat": "DataFlow", "name": sname, "pid": pid[src], "tid": 0,
                    "ts": ts(t_sent), "id": aid})
        out.append({"ph": "t", "cat": "DataFlow", "name": sname, "pid": pid[dst], "tid": 0,
                    "ts": ts(t_dst), "id": aid})
        aid += 1
    with open(path + ".tmp", "w") as f:
        json.dump({"traceEvents": out}, f, separators=(",", ":"))
    os.replace(path + ".tmp", path)
