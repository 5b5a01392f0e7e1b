#!/usr/bin/env python3
"""An event-driven PS/worker job, written as a TF1 timeline (issue 35's twin suite).

Written apart from tfdiag's replay (analyzers/replay.cc) and simulator (samples/): it shares
neither their model nor their step plan, so a prediction checked against it is checked against
something else. Standard library only.

The job, per worker step:
  _SOURCE; IteratorGetNext (the input: the producer's time per batch, or with prefetch the wait
  for a batch a background producer made, buffer of one); one pull request to every PS that holds
  a variable (the PS runs a read/gather op per variable on a pool of `ps_threads` threads, ops
  served in arrival order); the answers cross the network (latency + bytes / bandwidth, shown as
  RecvTensor on the worker); compute (MatMul ops consuming what arrived); one push per PS (the
  gradients cross the network, the PS runs an apply op per variable); the step ends with the
  train_op NoOp once every apply is done; under sync, a token dequeue waits for every worker's
  step (a barrier). Every op time carries a lognormal jitter.

Usage: psjob.py SPEC.json OUT.json [--truth TRUTH.json]; SPEC is a JSON object of the job's knobs
(see DEFAULTS). TRUTH gets the measured steps (median worker step, per worker, throughput).
"""
import heapq
import json
import math
import random
import statistics
import sys

DEFAULTS = {
    "ps": 2,                # PS tasks
    "ps_threads": 1,        # inter-op threads per PS
    "workers": 4,
    "steps": 30,
    "seed": 1,
    "jitter": 0.03,         # lognormal sigma of every op time
    "compute_ms": 20.0,     # worker compute per step
    "input_ms": 0.2,        # the input producer's time per batch
    "prefetch": False,
    "sync": False,
    "straggler": None,      # {"worker": i, "factor": f}: that worker's compute and input x f
    "latency_ms": 0.05,
    "mb_per_ms": 1.0,       # network bandwidth (1 GB/s)
    # Dense variables: [name, ps, read_ms, apply_ms, mb]; ps -1: spread round-robin.
    "dense": [],
    "dense_count": 6, "dense_read_ms": 0.05, "dense_apply_ms": 0.1, "dense_mb": 0.5,
    # Embedding tables: {"name", "ps" (index or "all": one part per PS of the cluster),
    # "gather_ms", "apply_ms" (the whole table's, per worker step), "rows_mb", "table_mb",
    # "on_worker" (the worker receives the table and gathers itself, gather_ms on its compute)}
    "tables": [],
    "idle_ps": 0,           # the last `idle_ps` PS hold nothing
    "part_overhead_ms": 0.015,  # per part op (TF executor dispatch, ~10-20 us)
}

T0_US = 1_600_000_000_000_000


class Job:
    def __init__(self, spec):
        self.p = dict(DEFAULTS)
        self.p.update(spec)
        p = self.p
        self.rng = random.Random(p["seed"])
        self.events = []  # chrome trace events
        self.ev_heap = []
        self.seq = 0
        self.flow_id = 0
        self.n_ps, self.n_w = p["ps"], p["workers"]
        self.place()

    # --- placement: per PS, the variables it holds (name, kind, read_ms, apply_ms, mb) ---
    def place(self):
        p = self.p
        holders = self.n_ps - p["idle_ps"]
        self.ps_vars = [[] for _ in range(self.n_ps)]
        dense = list(p["dense"])
        if not dense:
            for i in range(p["dense_count"]):
                dense.append([f"dense_{i}/kernel", -1, p["dense_read_ms"], p["dense_apply_ms"],
                              p["dense_mb"]])
        for i, (name, ps, read, apply, mb) in enumerate(dense):
            where = ps if ps >= 0 else i % holders
            self.ps_vars[where].append({"name": name, "kind": "dense", "read": read,
                                        "apply": apply, "mb": mb})
        self.worker_gathers = []  # (table var, gather_ms) run on the worker
        for t in p["tables"]:
            var = t["name"] + "/embedding_weights"
            if t.get("on_worker"):
                # tf.gather's gradient is IndexedSlices: the push carries the rows only
                self.ps_vars[t["ps"]].append({"name": var, "kind": "dense", "read": 0.05,
                                              "apply": t["apply_ms"], "mb": t["table_mb"],
                                              "push_mb": t["rows_mb"]})
                self.worker_gathers.append((var, t["gather_ms"], t["name"]))
            elif t["ps"] == "all":
                for k in range(self.n_ps):
                    self.ps_vars[k].append({
                        "name": f"{var}/part_{k}", "kind": "table", "table": t["name"],
                        "read": t["gather_ms"] / self.n_ps + p["part_overhead_ms"],
                        "apply": t["apply_ms"] / self.n_ps + p["part_overhead_ms"],
                        "mb": t["rows_mb"] / self.n_ps})
            else:
                self.ps_vars[t["ps"]].append({"name": var, "kind": "table", "table": t["name"],
                                              "read": t["gather_ms"], "apply": t["apply_ms"],
                                              "mb": t["rows_mb"]})

    def noise(self, ms):
        j = self.p["jitter"]
        return ms * math.exp(self.rng.gauss(0, j)) if j > 0 else ms

    # --- trace output ---
    def op(self, pid, tid, start, end, name, op, inputs=()):
        ts = T0_US + round(start * 1000)
        dur = max(1, T0_US + round(end * 1000) - ts)
        args = {"name": name, "op": op}
        for i, x in enumerate(inputs):
            args[f"input{i}"] = x
        self.events.append({"ph": "X", "cat": "Op", "name": op, "pid": pid, "tid": tid,
                            "ts": ts, "dur": dur, "args": args})

    def flow(self, name, src_pid, src_tid, sent, dst_pid, dst_tid, needed):
        self.flow_id += 1
        self.events.append({"ph": "s", "cat": "DataFlow", "name": name, "pid": src_pid,
                            "tid": src_tid, "ts": T0_US + round(sent * 1000), "id": self.flow_id})
        self.events.append({"ph": "t", "cat": "DataFlow", "name": name, "pid": dst_pid,
                            "tid": dst_tid, "ts": T0_US + round(needed * 1000),
                            "id": self.flow_id})

    def memory(self, pid, tensor, t, mb):
        b = int(mb * 1048576)
        desc = (f"dtype: DT_FLOAT\nshape {{\n  dim {{\n    size: {b // 4}\n  }}\n}}\n"
                f"allocation_description {{\n  requested_bytes: {b}\n  allocated_bytes: {b}\n"
                f"  allocator_name: cpu\n}}\n")
        self.flow_id += 1
        ts = T0_US + round(t * 1000)
        for ph in ("N", "O", "D"):
            e = {"ph": ph, "cat": "Tensor", "name": tensor, "pid": pid, "tid": 0, "ts": ts,
                 "id": self.flow_id}
            if ph == "O":
                e["args"] = {"snapshot": {"tensor_description": desc}}
            self.events.append(e)

    # --- the discrete-event core ---
    def at(self, t, fn, *args):
        self.seq += 1
        heapq.heappush(self.ev_heap, (t, self.seq, fn, args))

    def run(self):
        p = self.p
        # pids: PS p -> 1 + 2p (Compute), 2 + 2p (Tensors); workers after.
        self.ps_pid = [1 + 2 * k for k in range(self.n_ps)]
        self.w_pid = [1 + 2 * (self.n_ps + w) for w in range(self.n_w)]
        self.ps_free = [[0.0] * p["ps_threads"] for _ in range(self.n_ps)]
        self.ps_busy = [[False] * p["ps_threads"] for _ in range(self.n_ps)]
        self.ps_queue = [[] for _ in range(self.n_ps)]  # FIFO of pending ops
        self.step_start = [[] for _ in range(self.n_w)]
        self.step_end = [[] for _ in range(self.n_w)]
        self.barrier = {}  # step -> [arrived, latest end, waiting workers]
        self.ready = [0.0] * self.n_w  # prefetch: when the next batch is ready
        self.holders = [k for k in range(self.n_ps) if self.ps_vars[k]]
        for w in range(self.n_w):
            self.at(self.rng.uniform(0, 0.2), self.begin_step, w, 0)
        if p["prefetch"]:
            for w in range(self.n_w):
                self.ready[w] = self.noise(self.input_ms(w))
        while self.ev_heap:
            t, _, fn, args = heapq.heappop(self.ev_heap)
            fn(t, *args)

    def factor(self, w):
        s = self.p["straggler"]
        return s["factor"] if s and s["worker"] == w else 1.0

    def input_ms(self, w):
        return self.p["input_ms"] * self.factor(w)

    def begin_step(self, t, w, k):
        if k >= self.p["steps"]:
            return
        pid = self.w_pid[w]
        self.step_start[w].append(t)
        self.op(pid, 0, t, t + 0.002, "_SOURCE", "NoOp")
        t += 0.004
        if self.p["prefetch"]:
            take = max(t, self.ready[w])
            end = take + 0.01
            self.ready[w] = take + self.noise(self.input_ms(w))
        else:
            end = t + self.noise(self.input_ms(w))
        self.op(pid, 0, t, end, "IteratorGetNext", "IteratorGetNext", ["IteratorV2"])
        self.pull(end, w, k)

    # A request to PS `ps`: its ops join the PS's FIFO at `t`; `done(t_end, ends)` when all end.
    def request(self, t, ps, ops, done):
        state = {"left": len(ops), "ends": {}}
        for o in ops:
            self.ps_queue[ps].append((t, o, state, done))
        self.dispatch(t, ps)

    def dispatch(self, t, ps):
        q = self.ps_queue[ps]
        while q:
            th = next((i for i, b in enumerate(self.ps_busy[ps]) if not b), None)
            if th is None:
                return
            arrived, o, state, done = q.pop(0)
            self.ps_busy[ps][th] = True
            end = t + self.noise(o["ms"])
            self.op(self.ps_pid[ps], th, t, end, o["name"], o["op"], o["inputs"])
            self.at(end, self.op_done, ps, th, o, state, done)

    def op_done(self, t, ps, th, o, state, done):
        self.ps_busy[ps][th] = False
        state["ends"][o["name"]] = (t, th)
        state["left"] -= 1
        if state["left"] == 0:
            done(t, state["ends"])
        self.dispatch(t, ps)

    def net(self, mb):
        return self.p["latency_ms"] + mb / self.p["mb_per_ms"]

    def pull(self, t, w, k):
        pid = self.w_pid[w]
        st = {"left": len(self.holders), "arrivals": [], "t0": t}
        for lane, ps in enumerate(self.holders, start=1):
            ops = [{"name": "_SOURCE", "op": "NoOp", "ms": 0.002, "inputs": []}]
            mb = 0.0
            for v in self.ps_vars[ps]:
                mb += v["mb"]
                if v["kind"] == "table":
                    ops.append({"name": v["name"].replace("/embedding_weights", "") +
                                "/embedding_lookup", "op": "GatherV2", "ms": v["read"],
                                "inputs": [v["name"] + "/read", "IteratorGetNext_S1", "axis"],
                                "var": v})
                else:
                    ops.append({"name": v["name"] + "/read", "op": "Identity", "ms": v["read"],
                                "inputs": [v["name"]], "var": v})

            def answered(t_end, ends, ps=ps, lane=lane, mb=mb):
                arrive = t_end + self.net(mb)
                self.op(pid, lane, st["t0"], arrive, "RecvTensor", "RecvTensor")
                st["arrivals"].append((arrive, ps, ends))
                st["left"] -= 1
                if st["left"] == 0:
                    self.at(max(a for a, _, _ in st["arrivals"]), self.compute, w, k, st)

            self.at(t + self.p["latency_ms"], self.request, ps, ops, answered)

    def compute(self, t, w, k, st):
        pid = self.w_pid[w]
        total = self.noise(self.p["compute_ms"]) * self.factor(w)
        # TF runs an op once its inputs are there: the op that starts when the wait ends is one
        # consuming the tensor that arrived last, so consumers go latest arrival first.
        gathered = {var: (ms, tb) for var, ms, tb in self.worker_gathers}
        consumers = []
        for _, ps, ends in sorted(st["arrivals"], key=lambda a: -a[0]):
            # the largest tensor of an answer arrives last: a gathered table before the rest
            for name, (end, th) in sorted(ends.items(),
                                          key=lambda e: e[0][:-len("/read")] not in gathered):
                if name != "_SOURCE":
                    consumers.append((name, ps, end, th))
        n = max(1, len(consumers))
        cur = t
        for name, ps, end, th in consumers:  # forward: one op per pulled variable
            dur = total * 0.5 / n
            var = name[:-len("/read")] if name.endswith("/read") else None
            if var in gathered:  # the whole table arrived: the worker gathers its rows
                gather_ms, tb = gathered[var]
                dur = self.noise(gather_ms) * self.factor(w)
                self.op(pid, 0, cur, cur + dur, tb + "/embedding_lookup", "GatherV2",
                        [name + f"_S{ps + 3}", "IteratorGetNext", "axis"])
                if k == 0:
                    self.memory(pid + 1, tb + "/embedding_lookup", cur + dur,
                                self.table_rows_mb(tb))
                    self.memory(self.ps_pid[ps] + 1, name, end, self.table_mb(tb))
            elif name.endswith("/embedding_lookup"):
                self.op(pid, 0, cur, cur + dur, name[:-len("/embedding_lookup")] + "/Reshape",
                        "Reshape", [name + f"_S{ps + 3}", "shape"])
            else:
                self.op(pid, 0, cur, cur + dur, name.replace("/read", "") + "/MatMul", "MatMul",
                        ["prev", name + f"_S{ps + 3}"])
            self.flow(name, self.ps_pid[ps], th, end, pid, 0, cur)
            cur += dur
        left = total * 0.5 if consumers else total  # backward
        self.op(pid, 0, cur, cur + left, "gradients/MatMul_grad/MatMul", "MatMul", ["grad", "x"])
        cur += left
        self.push(cur, w, k)

    def table_mb(self, table):
        return next(t["table_mb"] for t in self.p["tables"] if t["name"] == table)

    def table_rows_mb(self, table):
        return next(t["rows_mb"] for t in self.p["tables"] if t["name"] == table)

    def find_ps(self, var):
        return next(k for k in range(self.n_ps) for v in self.ps_vars[k] if v["name"] == var)

    def push(self, t, w, k):
        pid = self.w_pid[w]
        st = {"left": len(self.holders), "last": t}
        for ps in self.holders:
            mb = sum(v.get("push_mb", v["mb"]) for v in self.ps_vars[ps])
            ops = []
            for v in self.ps_vars[ps]:
                if v["kind"] == "table":
                    ops.append({"name": v["name"] + "/SparseApplyAdagrad",
                                "op": "SparseApplyAdagrad", "ms": v["apply"],
                                "inputs": [v["name"], v["name"] + "/Adagrad", "grad_S9"]})
                else:
                    ops.append({"name": v["name"] + "/ApplyAdam", "op": "ApplyAdam",
                                "ms": v["apply"], "inputs": [v["name"], "m", "v", "grad_S9"]})

            def applied(t_end, ends, mb=mb):
                st["last"] = max(st["last"], t_end + self.p["latency_ms"])
                st["left"] -= 1
                if st["left"] == 0:
                    self.at(st["last"], self.finish, w, k)

            self.at(t + self.net(mb), self.request, ps, ops, applied)

    def finish(self, t, w, k):
        pid = self.w_pid[w]
        self.op(pid, 0, t, t + 0.003, "train_op", "NoOp")
        t += 0.004
        if not self.p["sync"]:
            self.end_step(t, w, k)
            return
        b = self.barrier.setdefault(k, [0, 0.0, []])
        b[0] += 1
        b[1] = max(b[1], t)
        b[2].append((w, t))
        if b[0] == self.n_w:
            release = b[1] + self.p["latency_ms"]
            for ww, tw in b[2]:
                self.op(self.w_pid[ww], 0, tw, release, "sync_token_q_Dequeue",
                        "QueueDequeueV2", ["sync_token_q"])
                self.end_step(release + 0.001, ww, k)

    def end_step(self, t, w, k):
        self.step_end[w].append(t)
        self.at(t + 0.005, self.begin_step, w, k + 1)

    def truth(self):
        warm = min(3, self.p["steps"] // 4)
        lengths, per_worker = [], []
        for w in range(self.n_w):
            s = self.step_start[w]
            ls = [s[i + 1] - s[i] for i in range(warm, len(s) - 1)]
            lengths += ls
            per_worker.append(statistics.median(ls) if ls else 0)
        first = max(self.step_start[w][warm] for w in range(self.n_w))
        last = min(self.step_start[w][-1] for w in range(self.n_w))
        done = sum(1 for w in range(self.n_w) for x in self.step_start[w] if first <= x < last)
        return {"median_step_ms": statistics.median(lengths),
                "per_worker_median_ms": per_worker,
                "steps_per_s": 1000 * done / (last - first) if last > first else 0}

    def write(self, path):
        meta = []
        for k in range(self.n_ps):
            meta.append((self.ps_pid[k], f"/job:ps/replica:0/task:{k}/device:CPU:0 Compute"))
            meta.append((self.ps_pid[k] + 1, f"/job:ps/replica:0/task:{k}/device:CPU:0 Tensors"))
        for w in range(self.n_w):
            meta.append((self.w_pid[w], f"/job:worker/replica:0/task:{w}/device:CPU:0 Compute"))
            meta.append((self.w_pid[w] + 1,
                         f"/job:worker/replica:0/task:{w}/device:CPU:0 Tensors"))
        ev = [{"name": "process_name", "ph": "M", "pid": pid, "args": {"name": n}}
              for pid, n in meta]
        self.events.sort(key=lambda e: (e["ts"], e["pid"]))
        with open(path, "w") as f:
            json.dump({"traceEvents": ev + self.events}, f, separators=(",", ":"))


def main(argv):
    if len(argv) < 3:
        sys.stderr.write(__doc__)
        return 2
    with open(argv[1]) as f:
        spec = json.load(f)
    job = Job(spec)
    job.run()
    job.write(argv[2])
    truth = job.truth()
    if len(argv) >= 5 and argv[3] == "--truth":
        with open(argv[4], "w") as f:
            json.dump(truth, f)
    else:
        print(json.dumps(truth))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
