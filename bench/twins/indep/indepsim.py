#!/usr/bin/env python3
"""An independent PS/worker job simulator (issue 44 item 4): truth outside the replay's model.

Written apart from bench/twins/psjob.py and from tfdiag (analyzers/replay*.cc): it imports
neither, and it models on purpose what the replay assumes away:
  - every PS and worker NIC is a shared resource, one direction each (transmit, receive): a
    transfer costs a per-transfer latency plus its bytes, served by processor sharing on the
    sender's transmit side and the receiver's receive side at once (it ends when both are done);
  - a PS runs at most `ps_threads` ops at once on `ps_cores` cores: the running ops share the
    cores (processor sharing, not FIFO), each runs slower once they outnumber the cores (plus a
    context-switch cost per extra op), and the ops waiting for a thread are picked at random;
  - each host has its own speed (a slow PS host, uneven workers, a straggler);
  - each step draws its own noise (compute and input), each op its own;
  - part of the forward compute starts once the first PS answered (TF runs an op when its
    inputs are there), not after every answer;
  - a prefetched input pipeline runs in the background with a buffer of two batches;
  - SyncReplicasOptimizer: each push is accumulated on the PS (a cheap op) and the variables
    are updated once per step after every worker's gradients arrived; every worker then waits
    for its token.
It writes a TF1 Timeline JSON (the format facts of TensorFlow's timeline.py: process_name
metadata per device, "X" ops with args name/op/input<N>, RecvTensor on the receiving worker,
DataFlow "s"/"t" arrows, show_memory N/O/D tensor events) and the job's measured steps.

Usage: indepsim.py SPEC.json OUT.json   (prints the truth as JSON on stdout)
Standard library only.
"""
import heapq
import json
import math
import random
import statistics
import sys

T0_US = 1_700_000_000_000_000
CTX_SWITCH = 0.04  # extra cost per op beyond the cores, as a share of each op's time


class Sim:
    def __init__(self):
        self.q = []
        self.n = 0

    def at(self, t, fn, *a):
        self.n += 1
        heapq.heappush(self.q, (t, self.n, fn, a))

    def run(self):
        while self.q:
            t, _, fn, a = heapq.heappop(self.q)
            fn(t, *a)


class Shared:
    """A processor-sharing server: `rate(n)` is the service rate of each of n jobs in service;
    at most `limit` in service, the rest wait and are admitted in random order."""

    def __init__(self, sim, rate, limit=None, rng=None):
        self.sim, self.rate, self.limit, self.rng = sim, rate, limit, rng
        self.v, self.last, self.ver = 0.0, 0.0, 0
        self.tags = []  # (finish tag in virtual work, id, callback)
        self.wait = []
        self.ids = 0

    def _advance(self, t):
        if self.tags:
            self.v += (t - self.last) * self.rate(len(self.tags))
        self.last = t

    def _arm(self, t):
        self.ver += 1
        if self.tags:
            dt = max(0.0, (self.tags[0][0] - self.v) / self.rate(len(self.tags)))
            self.sim.at(t + dt, self._done, self.ver)

    def submit(self, t, work, cb):
        self._advance(t)
        if self.limit is not None and len(self.tags) >= self.limit:
            self.wait.append((work, cb))
            return
        self._start(t, work, cb)
        self._arm(t)

    def _start(self, t, work, cb):
        self.ids += 1
        heapq.heappush(self.tags, (self.v + work, self.ids, (t, cb)))

    def _done(self, t, ver):
        if ver != self.ver:
            return
        self._advance(t)
        fin = []
        while self.tags and self.tags[0][0] <= self.v + 1e-9:
            fin.append(heapq.heappop(self.tags)[2])
        while self.wait and (self.limit is None or len(self.tags) < self.limit):
            i = self.rng.randrange(len(self.wait))
            work, cb = self.wait[i]
            self.wait[i] = self.wait[-1]
            self.wait.pop()
            self._start(t, work, cb)
        self._arm(t)
        for start, cb in fin:
            cb(start, t)


class Job:
    def __init__(self, spec):
        self.s = spec
        self.rng = random.Random(spec["seed"])
        self.arng = random.Random(spec["seed"] * 7919 + 1)  # admission order
        self.sim = Sim()
        self.events = []
        self.record = True  # False: no trace (a twin whose step alone is wanted)
        self.flow = 0
        self.np, self.nw = spec["ps"], spec["workers"]
        self.place()
        ps_speed = spec["ps_speed"]
        cores, threads = spec["ps_cores"], spec["ps_threads"]
        self.cpu = []
        for k in range(self.np):
            def rate(n, sp=ps_speed[k]):
                over = max(0, n - cores)
                return sp * min(1.0, cores / n) / (1 + CTX_SWITCH * over)
            self.cpu.append(Shared(self.sim, rate, threads, self.arng))
        bw = spec["mb_per_ms"]

        def nic():
            return Shared(self.sim, lambda n: bw / n)
        self.ps_tx = [nic() for _ in range(self.np)]
        self.ps_rx = [nic() for _ in range(self.np)]
        self.w_tx = [nic() for _ in range(self.nw)]
        self.w_rx = [nic() for _ in range(self.nw)]
        self.lanes = {}

    # --- where each variable lives: per PS, [(name, kind, read_ms, apply_ms, mb, table)] ---
    def place(self):
        s = self.s
        holders = [k for k in range(self.np) if k not in s.get("idle", [])]
        self.vars = [[] for _ in range(self.np)]
        for i, d in enumerate(s["dense"]):
            if s.get("partition_dense") or d.get("parts") == "all":  # fixed_size_partitioner
                n = len(holders)
                for j, k in enumerate(holders):
                    self.vars[k].append((f"{d['name']}/part_{j}", "dense",
                                         d["read_ms"] / n + s["part_ms"],
                                         d["apply_ms"] / n + s["part_ms"], d["mb"] / n, None))
                continue
            k = holders[i % len(holders)]  # replica_device_setter's round robin
            self.vars[k].append((d["name"], "dense", d["read_ms"], d["apply_ms"], d["mb"], None))
        for t in s["tables"]:
            var = t["name"] + "/embedding_weights"
            if t["ps"] == "all":
                w = t.get("shard_weights") or [1.0] * len(holders)
                tot = sum(w)
                for j, k in enumerate(holders):
                    f = w[j % len(w)] / tot
                    self.vars[k].append((f"{var}/part_{j}", "table",
                                         t["gather_ms"] * f + s["part_ms"],
                                         t["apply_ms"] * f + s["part_ms"], t["rows_mb"] * f,
                                         t["name"]))
            else:
                self.vars[t["ps"]].append((var, "table", t["gather_ms"], t["apply_ms"],
                                           t["rows_mb"], t["name"]))
        self.holders = [k for k in range(self.np) if self.vars[k]]

    # --- trace output ---
    def pid_ps(self, k):
        return 10 + 2 * k

    def pid_w(self, w):
        return 10 + 2 * (self.np + w)

    def lane(self, pid, start, end):
        ls = self.lanes.setdefault(pid, [])
        for i, free in enumerate(ls):
            if free <= start:
                ls[i] = end
                return i
        ls.append(end)
        return len(ls) - 1

    def op(self, pid, start, end, name, op, inputs=(), tid=None):
        if not self.record:
            return
        ts = T0_US + int(round(start * 1000))
        te = T0_US + int(round(end * 1000))
        if tid is None:
            tid = self.lane(pid, start, end)
        args = {"name": name, "op": op}
        for i, x in enumerate(inputs):
            args[f"input{i}"] = x
        self.events.append({"pid": pid, "tid": tid, "ts": ts, "dur": max(1, te - ts),
                            "ph": "X", "cat": "Op", "name": op, "args": args})

    def arrow(self, name, p0, t0, p1, t1):
        if not self.record:
            return
        self.flow += 1
        for ph, pid, t in (("s", p0, t0), ("t", p1, t1)):
            self.events.append({"ph": ph, "cat": "DataFlow", "name": name, "pid": pid,
                                "tid": 0, "ts": T0_US + int(round(t * 1000)), "id": self.flow})

    def tensor(self, pid, name, t, mb):
        if not self.record:
            return
        b = max(4, int(mb * 1048576))
        self.flow += 1
        ts = T0_US + int(round(t * 1000))
        desc = (f"dtype: DT_FLOAT\nshape {{\n  dim {{\n    size: {b // 4}\n  }}\n}}\n"
                f"allocation_description {{\n  requested_bytes: {b}\n  allocated_bytes: {b}\n"
                f"  allocator_name: cpu\n}}\n")
        for ph in "NOD":
            e = {"ph": ph, "cat": "Tensor", "name": name, "pid": pid, "tid": 0, "ts": ts,
                 "id": self.flow}
            if ph == "O":
                e["args"] = {"snapshot": {"tensor_description": desc}}
            self.events.append(e)

    # --- noise and speeds ---
    def jit(self, ms, sigma=None):
        sg = self.s["op_sigma"] if sigma is None else sigma
        return ms * math.exp(self.rng.gauss(0, sg))

    def wspeed(self, w):
        return self.s["worker_speed"][w]

    # --- a transfer from (tx) to (rx), `mb` megabytes; cb(t_arrive) ---
    def send(self, t, tx, rx, mb, cb):
        left = [2]

        def part(_s, te):
            left[0] -= 1
            if left[0] == 0:
                cb(te)
        t += self.jit(self.s["latency_ms"], 0.1)
        work = max(mb, 1e-6)
        self.sim.at(t, lambda tt: tx.submit(tt, work, part))
        self.sim.at(t, lambda tt: rx.submit(tt, work, part))

    # --- PS ops: run each op on the PS's CPU; cb(ends) when all ended ---
    def ps_ops(self, t, k, ops, cb):
        left = [len(ops)]
        ends = {}
        for name, op, ms, inputs in ops:
            def done(start, end, name=name, op=op, inputs=inputs):
                self.op(self.pid_ps(k), start, end, name, op, inputs)
                ends[name] = end
                left[0] -= 1
                if left[0] == 0:
                    cb(end, ends)
            self.cpu[k].submit(t, self.jit(ms), done)

    # --- the worker step ---
    def run(self):
        s = self.s
        self.starts = [[] for _ in range(self.nw)]
        self.buf = [[] for _ in range(self.nw)]  # prefetched batches' ready times
        self.busy = [False] * self.nw
        self.made = [0] * self.nw
        self.waiter = [None] * self.nw
        self.barrier = {}
        self.sync_pushes = {}
        for w in range(self.nw):
            if s["prefetch"]:
                self.produce(self.rng.uniform(0, 0.1), w)
            self.sim.at(self.rng.uniform(0, 0.3), self.step, w, 0)
        self.sim.run()

    def input_ms(self, w):
        return s_input(self.s) / self.wspeed(w)

    def produce(self, t, w):
        """The background input pipeline makes one batch (a buffer of two batches)."""
        if self.made[w] >= self.s["steps"] + 2:
            self.busy[w] = False
            return
        self.busy[w] = True
        self.made[w] += 1
        end = t + self.jit(self.input_ms(w), self.s["step_sigma"])
        self.op(self.pid_w(w), t, end, "IteratorV2/ParallelMapDataset/MapFn", "MapDataset",
                [], tid=50)
        self.sim.at(end, self.made_batch, w)

    def made_batch(self, t, w):
        if self.waiter[w] is not None:
            cb, self.waiter[w] = self.waiter[w], None
            cb(t)
        else:
            self.buf[w].append(t)
        if len(self.buf[w]) < 2:
            self.produce(t, w)
        else:
            self.busy[w] = False

    def take(self, t, w, cb):
        if self.buf[w]:
            self.buf[w].pop(0)
            if not self.busy[w]:
                self.produce(t, w)
            cb(t)
        else:
            self.waiter[w] = cb

    def step(self, t, w, k):
        s = self.s
        if k >= s["steps"]:
            return
        pid = self.pid_w(w)
        self.starts[w].append(t)
        self.op(pid, t, t + 0.003, "_SOURCE", "NoOp", tid=0)
        t0 = t + 0.005
        if s["prefetch"]:
            def ready(tr):
                end = tr + 0.02
                self.op(pid, t0, end, "IteratorGetNext", "IteratorGetNext", ["IteratorV2"],
                        tid=0)
                self.pull(end, w, k)
            self.take(t0, w, ready)
        else:
            end = t0 + self.jit(self.input_ms(w), s["step_sigma"])
            self.op(pid, t0, end, "IteratorGetNext", "IteratorGetNext", ["IteratorV2"], tid=0)
            self.pull(end, w, k)

    def pull(self, t, w, k):
        s = self.s
        pid = self.pid_w(w)
        st = {"left": len(self.holders), "got": [], "first": None}
        fwd = self.jit(s["compute_ms"], s["step_sigma"]) / self.wspeed(w)
        st["compute"] = fwd
        early = fwd * s["overlap"]
        for lane, ps in enumerate(self.holders, start=1):
            ops = [("_SOURCE", "NoOp", 0.003, [])]
            mb = 0.0
            for name, kind, read, _ap, vmb, table in self.vars[ps]:
                mb += vmb
                if kind == "table":
                    ops.append((name + "/Gather", "GatherV2", read,
                                [name + "/read", "IteratorGetNext_S1", "axis"]))
                else:
                    ops.append((name + "/read", "Identity", read, [name]))

            def answered(te, ends, ps=ps, lane=lane, mb=mb, sent=t):
                def arrived(ta):
                    self.op(pid, sent, ta, "RecvTensor", "RecvTensor", tid=lane)
                    if k == 0:  # show_memory: each answer tensor's size
                        for name, kind, _r, _a, vmb, _t in self.vars[ps]:
                            op = name + ("/Gather" if kind == "table" else "/read")
                            self.tensor(self.pid_ps(ps) + 1, op, ends[op], vmb)
                    st["got"].append((ta, ps, ends))
                    if st["first"] is None:
                        st["first"] = ta
                    st["left"] -= 1
                    if st["left"] == 0:
                        self.compute(ta, w, k, st, early)
                self.send(te, self.ps_tx[ps], self.w_rx[w], mb, arrived)

            def request(tt, ps=ps, ops=ops, answered=answered):
                self.ps_ops(tt, ps, ops, answered)
            self.sim.at(t + self.jit(s["latency_ms"], 0.1), request)

    def compute(self, t_all, w, k, st, early):
        pid = self.pid_w(w)
        total = st["compute"]
        # part of the forward pass ran once the first answer was there
        start = max(st["first"] + early, t_all) if early > 0 else t_all
        cur = max(t_all, st["first"] + early)
        if early > 0:
            self.op(pid, st["first"], st["first"] + early, "embedding/first_layer/MatMul",
                    "MatMul", ["IteratorGetNext", "w0"], tid=0)
        cur = start
        rest = total - early
        cons = []
        for ta, ps, ends in sorted(st["got"], key=lambda g: -g[0]):
            for name, end in ends.items():
                if name != "_SOURCE":
                    cons.append((name, ps, end))
        fwd = rest * 0.4 / max(1, len(cons))
        for name, ps, end in cons:
            base = name.rsplit("/", 1)[0]
            self.op(pid, cur, cur + fwd, base + "/MatMul", "MatMul",
                    ["prev", f"{name}_S{ps + 2}"], tid=0)
            self.arrow(name, self.pid_ps(ps), end, pid, cur)
            cur += fwd
        back = rest * 0.6 if cons else rest
        self.op(pid, cur, cur + back, "gradients/dense/MatMul_grad/MatMul", "MatMul",
                ["grad", "x"], tid=0)
        self.push(cur + back, w, k)

    def push(self, t, w, k):
        s = self.s
        st = {"left": len(self.holders), "last": t}
        for ps in self.holders:
            mb = sum(v[4] for v in self.vars[ps])
            ops = []
            for name, kind, _r, apply, _mb, _tb in self.vars[ps]:
                if s["sync"]:
                    ops.append((name + "/AccumulatorApplyGradient", "AccumulatorApplyGradient",
                                0.02 + 0.1 * apply, [name + "/grad_accum", "grad_S9"]))
                elif kind == "table":
                    ops.append((name + "/SparseApplyAdagrad", "SparseApplyAdagrad", apply,
                                [name, name + "/Adagrad", "grad_S9"]))
                else:
                    ops.append((name + "/ApplyAdam", "ApplyAdam", apply,
                                [name, name + "/m", name + "/v", "grad_S9"]))

            def applied(te, ends, ps=ps):
                st["last"] = max(st["last"], te)
                st["left"] -= 1
                if st["left"] == 0:
                    self.sim.at(st["last"] + s["latency_ms"], self.finish, w, k)

            def arrived(ta, ps=ps, ops=ops, applied=applied):
                self.ps_ops(ta, ps, ops, applied)
            self.send(t, self.w_tx[w], self.ps_rx[ps], mb, arrived)

    def finish(self, t, w, k):
        s = self.s
        pid = self.pid_w(w)
        self.op(pid, t, t + 0.003, "train_op", "NoOp", tid=0)
        t += 0.005
        if not s["sync"]:
            self.sim.at(t + 0.005, self.step, w, k + 1)
            return
        b = self.barrier.setdefault(k, [])
        b.append((w, t))
        if len(b) < self.nw:
            return
        # every gradient is in: each PS updates its variables once (the chief's update)
        last = max(x for _, x in b)
        left = [len(self.holders)]
        done_at = [last]
        for ps in self.holders:
            ops = []
            for name, kind, _r, apply, _mb, _tb in self.vars[ps]:
                op = "SparseApplyAdagrad" if kind == "table" else "ApplyAdam"
                ops.append((name + "/" + op, op, apply, [name, name + "/slot", "grad"]))

            def upd(te, ends):
                done_at[0] = max(done_at[0], te)
                left[0] -= 1
                if left[0] == 0:
                    release = done_at[0] + 2 * s["latency_ms"]
                    for ww, tw in b:
                        self.op(self.pid_w(ww), tw, release, "sync_token_q_Dequeue",
                                "QueueDequeueV2", ["sync_token_q"], tid=0)
                        self.sim.at(release + 0.005, self.step, ww, k + 1)
            self.ps_ops(last + s["latency_ms"], ps, ops, upd)

    def truth(self):
        warm = min(2, self.s["steps"] // 4)
        lens, per = [], []
        for w in range(self.nw):
            st = self.starts[w]
            ls = [st[i + 1] - st[i] for i in range(warm, len(st) - 1)]
            lens += ls
            per.append(statistics.median(ls) if ls else 0.0)
        rate = sum(1.0 / x for x in per if x > 0)
        return {"median_step_ms": statistics.median(lens), "per_worker_median_ms": per,
                "throughput_step_ms": len(per) / rate if rate > 0 else 0.0}

    def write(self, path):
        meta = []
        for k in range(self.np):
            dev = f"/job:ps/replica:0/task:{k}/device:CPU:0"
            meta += [(self.pid_ps(k), dev + " Compute"), (self.pid_ps(k) + 1, dev + " Tensors")]
        for w in range(self.nw):
            dev = f"/job:worker/replica:0/task:{w}/device:CPU:0"
            meta += [(self.pid_w(w), dev + " Compute"), (self.pid_w(w) + 1, dev + " Tensors")]
        ev = [{"name": "process_name", "ph": "M", "pid": p, "args": {"name": n}}
              for p, n in meta]
        self.events.sort(key=lambda e: (e["ts"], e["pid"]))
        with open(path, "w") as f:
            json.dump({"traceEvents": ev + self.events}, f, separators=(",", ":"))


def s_input(s):
    return s["input_ms"]


def simulate(spec, out_path=None):
    job = Job(spec)
    job.record = out_path is not None
    job.run()
    if out_path:
        job.write(out_path)
    return job.truth()


def main(argv):
    if len(argv) < 3:
        sys.stderr.write(__doc__)
        return 2
    with open(argv[1]) as f:
        spec = json.load(f)
    print(json.dumps(simulate(spec, argv[2])))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
