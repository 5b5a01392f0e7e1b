"""gen2sim: a second, independent PS/worker job simulator (issue 44, "held-out jobs from a
generator tfdiag has never seen"). Written apart from tfdiag's replay and from the other twin
generators: it shares neither their code nor their model. Standard library only; deterministic for
a spec (its "seed").

What it models, and where each mechanism comes from:
  - Between-graph replication with parameter servers: each worker pulls every variable it needs
    from the PS holding it (gRPC RecvTensor), computes, and pushes each gradient to that PS, which
    applies it (https://www.tensorflow.org/api_docs/python/tf/compat/v1/train/replica_device_setter,
    tensorflow/core/distributed_runtime/rpc/grpc_worker_service.cc's RecvTensor). Ops run by
    dataflow: a layer starts as soon as its variables have arrived, and each gradient is sent as
    soon as backprop produces it (TF's executor runs ops when their inputs are ready), so pushes
    overlap the rest of the backward pass; the step ends when every apply has been acknowledged.
  - Dense reads answered by the PS's Identity op, embedding rows by a GatherV2 next to the table
    (embedding_lookup colocates the gather with the variable); a partitioned table's ids are split
    by part (fixed_size_partitioner, "mod"/"div" sharding), possibly unevenly (hot ids).
  - The network: every node has one NIC (full duplex); flows share each end by max-min fairness
    (water-filling at the link, each flow capped by its equal share at the other end), the fair
    share TCP flows approach; each RPC pays a one-way latency before its bytes move, and PS tasks
    packed on one node share that node's NIC.
  - A PS's CPU: an inter-op thread pool of T threads (each runnable op holds one), big ops split
    over intra-op threads (Eigen's parallel-for), all sharing the cores the container may use; when
    threads exceed cores every op slows and pays a context-switch overhead; a CFS quota throttles
    the whole PS for the rest of a 100 ms period once the period's quota is spent
    (https://docs.kernel.org/scheduler/sched-bwc.html). Queued ops are not served in arrival order:
    a free thread takes a random runnable op (Eigen's NonBlockingThreadPool pops its own queue LIFO
    and steals from others, https://gitlab.com/libeigen/eigen/-/blob/master/unsupported/Eigen/CXX11/src/ThreadPool/NonBlockingThreadPool.h).
    Each op pays a fixed per-RPC cost (gRPC and executor dispatch) and its bytes; per-host speed.
  - Heavy-tailed op times (lognormal) and occasional long pauses (GC, preemption) in random steps;
    input reads of variable latency (lognormal, occasional slow reads), with or without a tf.data
    prefetch buffer of 2 batches filled by a background producer
    (https://www.tensorflow.org/guide/data_performance#prefetching); uneven workers.
  - SyncReplicasOptimizer (https://www.tensorflow.org/api_docs/python/tf/compat/v1/train/SyncReplicasOptimizer):
    each worker's gradients go to ConditionalAccumulators on the PS; once all workers of a step have
    pushed, each PS takes the aggregate and applies it once, then the chief fills the token queue
    and every worker's dequeue returns.

The PS CPU, the NICs and the event engine are in gen2res.py, the capture's writer in
gen2trace.py. simulate(spec, path=None) writes a TF1 Timeline JSON (timeline.py's chrome trace,
with DataFlow arrows and show_memory tensor snapshots for the PS answers) when path is given, and
returns the truth: each worker's step times and throughput.
"""
import random

from gen2res import Engine, Net, Op, PsCpu, lognorm
from gen2trace import write_timeline

SER_NS_PER_BYTE = 0.45  # a PS serializing an answer (Identity + gRPC copy)
GATHER_NS_PER_BYTE = 0.9  # gathering rows (random reads)
APPLY_NS_PER_BYTE = {"sgd": 0.35, "adagrad": 0.8, "adam": 1.4}
# The apply op each optimizer runs (TF1 training_ops; a sparse gradient under SGD or Adam is
# applied with scatter ops: optimizer.py's _apply_sparse)
DENSE_APPLY = {"sgd": "ApplyGradientDescent", "adagrad": "ApplyAdagrad", "adam": "ApplyAdam"}
SPARSE_APPLY = {"sgd": "ScatterSub", "adagrad": "SparseApplyAdagrad", "adam": "ScatterAdd"}


class Sim:
    def __init__(self, spec, capture=True):
        self.s, self.capture = spec, capture
        self.eng = Engine()
        self.rng = random.Random(spec["seed"] * 7919 + 17)
        self.events = {}  # task -> list of (type, name, start, end, inputs, bytes)
        self.arrows = []  # (src task, src name, src ts, dst task, dst ts)
        s = spec
        W, P = s["workers"], s["ps"]
        caps = {}
        gbps = s["nic_gbps"]
        for w in range(W):
            caps[f"wn{w}"] = gbps * 125.0 * s["worker_nic"][w % len(s["worker_nic"])]
        for p in range(P):
            caps[f"pn{s['ps_node'][p]}"] = gbps * 125.0
        self.net = Net(self, caps)
        # ps_quota_off: the PS a ps-cpu-quota twin lifts the job's quota on (gen2jobs.apply_fix)
        self.cpus = [PsCpu(self, p, s["ps_threads"], s["ps_cores"],
                           None if p in s.get("ps_quota_off", ()) else s.get("ps_quota"),
                           s["ps_speed"][p], random.Random(spec["seed"] * 31 + p))
                     for p in range(P)]
        self.layout()
        self.steps = {w: [] for w in range(W)}
        self.sync_pending = {}
        self.tokens = {}
        self.buffers = {}

    # ----- the variables and where they live (replica_device_setter's round robin)
    def layout(self):
        s, P = self.s, self.s["ps"]
        rr = 0
        self.parts = []  # (table index, part index, ps, share of ids, rows bytes/id)
        for i, t in enumerate(s["tables"]):
            if t["ps"] == "all":
                w = t.get("shard_weights") or [1.0] * P
                tot = sum(w)
                for k in range(P):
                    self.parts.append((i, k, (rr + k) % P if not t.get("aligned") else k,
                                       w[k] / tot))
                rr += P
            else:
                self.parts.append((i, None, t["ps"], 1.0))
        self.dense_ps = []  # per dense var: list of (ps, share)
        for j, d in enumerate(s["dense"]):
            if d.get("parts") == "all":
                self.dense_ps.append([(k, 1.0 / P) for k in range(P)])
            else:
                self.dense_ps.append([(d["ps"] % P, 1.0)])

    def ps_node(self, p):
        return f"pn{self.s['ps_node'][p]}"

    # ----- the capture
    def record(self, task, type_, name, start, end, inputs=(), nbytes=0):
        if self.capture:
            self.events.setdefault(task, []).append((type_, name, start, end, list(inputs),
                                                     nbytes))

    def ps_op(self, p, work_us, type_, name, inputs, done, nbytes=0, arrow=None):
        s = self.s
        work = lognorm(self.rng, work_us + s["rpc_us"], s["ps_sigma"])
        big = work > 1500.0
        demand = min(s["intra_threads"], max(1, int(work / 1500.0))) if big else 1
        op = Op(work, demand, done, f"ps:{p}", name, type_, inputs, nbytes)
        op.arrow = arrow
        self.cpus[p].submit(op)

    # ----- a worker step
    def start_step(self, w, k):
        s = self.s
        st = {"w": w, "k": k, "t0": self.eng.now, "have": {}, "acks": 0, "need_acks": 0,
              "chain": 0, "chain_t": self.eng.now, "pushed": False, "done_compute": False}
        self.record(f"worker:{w}", "NoOp", "_SOURCE", self.eng.now, self.eng.now + 1)
        # dense reads: one partition run per PS holding any of them
        by_ps = {}
        for j, locs in enumerate(self.dense_ps):
            for p, share in locs:
                by_ps.setdefault(p, []).append((j, share))
                st["have"][("d", j, p)] = None
        for p, items in sorted(by_ps.items()):
            self.eng.at(self.eng.now + s["lat_us"], self.ps_reads, st, p, items)
        # input
        t_in = self.input_time(w)
        self.eng.at(self.eng.now + t_in, self.input_done, st, self.eng.now)

    def ps_reads(self, st, p, items):
        s = self.s
        self.record(f"ps:{p}", "NoOp", "_SOURCE", self.eng.now, self.eng.now + 1)
        for j, share in items:
            d = s["dense"][j]
            var = d["name"] if share == 1.0 else f"{d['name']}/part_{p}"
            nbytes = int(d["bytes"] * share)
            self.record(f"ps:{p}", "VariableV2", var, self.eng.now, self.eng.now + 1)
            key = ("d", j, p)
            self.ps_op(p, nbytes * SER_NS_PER_BYTE / 1000.0, "Identity", var + "/read", [var],
                       lambda st=st, p=p, key=key, nb=nbytes, name=var + "/read":
                       self.answer(st, p, key, nb, name), nbytes)

    def answer(self, st, p, key, nbytes, name):
        w, t_sent = st["w"], self.eng.now
        self.net.send(self.ps_node(p), f"wn{w}", nbytes + 200, self.s["lat_us"],
                      lambda start: self.arrived(st, p, key, name, t_sent, start))

    def arrived(self, st, p, key, name, t_sent, start):
        w = st["w"]
        self.record(f"worker:{w}", "RecvTensor", "RecvTensor", start, self.eng.now)
        st["have"][key] = (self.eng.now, f"ps:{p}", name, t_sent)
        self.try_compute(st)

    def input_time(self, w):
        s = self.s
        if s["input_ms"] <= 0:
            return 20.0
        def read():
            t = lognorm(self.rng, s["input_ms"] * 1000.0, s["input_sigma"])
            if self.rng.random() < 0.03:
                t *= 4
            return t
        if not s["prefetch"]:
            return read()
        # tf.data prefetch(2): a producer making batches back to back while the buffer has room
        # (batch j starts once batch j-1 is made and batch j-2 has left the buffer)
        buf = self.buffers.setdefault(w, {"made": [], "taken": []})
        made, taken = buf["made"], buf["taken"]
        j = len(taken)
        while len(made) <= j:
            n = len(made)
            start = max(made[n - 1] if n else 0.0, taken[n - 2] if n >= 2 else 0.0)
            made.append(start + read())
        now = self.eng.now
        taken.append(max(now, made[j]))
        return max(20.0, made[j] - now)

    def input_done(self, st, t_start):
        s, w = self.s, st["w"]
        self.record(f"worker:{w}", "IteratorGetNext", "IteratorGetNext", t_start, self.eng.now,
                    ["IteratorV2"])
        st["input_end"] = self.eng.now
        for (i, k, p, share) in self.parts:
            t = s["tables"][i]
            nids = max(1, int(t["ids"] * share))
            key = ("t", i, k)
            st["have"][key] = None
            self.net.send(f"wn{w}", self.ps_node(p), nids * 8 + 200, s["lat_us"],
                          lambda start, st=st, i=i, k=k, p=p, nids=nids, key=key:
                          self.ids_at_ps(st, i, k, p, nids, key, start))
        self.try_compute(st)

    def tname(self, i, k):
        base = self.s["tables"][i]["name"]
        return base if k is None else f"{base}/part_{k}"

    def ids_at_ps(self, st, i, k, p, nids, key, start):
        s, w = self.s, st["w"]
        self.record(f"ps:{p}", "RecvTensor", "RecvTensor", start, self.eng.now)
        self.record(f"ps:{p}", "NoOp", "_SOURCE", self.eng.now, self.eng.now + 1)
        var = self.tname(i, k)
        self.record(f"ps:{p}", "VariableV2", var, self.eng.now, self.eng.now + 1)
        t = s["tables"][i]
        nbytes = nids * t["dim"] * 4
        ids_name = f"{t['name']}/ids" if k is None else f"{t['name']}/DynamicPartition"
        gname = f"{t['name']}/embedding_lookup" + ("" if k is None else f"/GatherV2_{k}")
        self.ps_op(p, nbytes * GATHER_NS_PER_BYTE / 1000.0 + nids * 0.05, "GatherV2", gname,
                   [var + "/read", ids_name + "_S1"],
                   lambda: self.answer(st, p, key, nbytes, gname), nbytes,
                   arrow=(f"worker:{w}", ids_name, st["input_end"]))

    # ----- compute: a chain of ops, each starting when its inputs are in
    def chain_ops(self):
        """[(name, type, share of compute, needed keys, grads pushed after it)]"""
        s = self.s
        L = len(s["dense"]) // 2
        ops = [("concat_embeddings", "ConcatV2", 0.02,
                [("t", i, k) for (i, k, p, sh) in self.parts], [])]
        sizes = [s["dense"][2 * l]["bytes"] for l in range(L)]
        tot = sum(sizes) or 1
        for l in range(L):
            ops.append((f"dense_{l + 1}/MatMul", "MatMul", 0.3 * sizes[l] / tot,
                        [("d", 2 * l), ("d", 2 * l + 1)], []))
        ops.append(("loss/Mean", "Mean", 0.02, [], []))
        for l in reversed(range(L)):
            ops.append((f"gradients/dense_{l + 1}/MatMul_grad/MatMul_1", "MatMul",
                        0.64 * sizes[l] / tot, [], [2 * l, 2 * l + 1]))
        ops.append(("gradients/concat_embeddings_grad/Slice", "Slice", 0.02, [], ["tables"]))
        return ops

    def ready(self, st, need):
        got = []
        for key in need:
            if key[0] == "d":
                keys = [kk for kk in st["have"] if kk[0] == "d" and kk[1] == key[1]]
            else:
                keys = [key]
            for kk in keys:
                if st["have"].get(kk) is None:
                    return None
                got.append(st["have"][kk])
        return got

    def try_compute(self, st):
        if st.get("running") or st["done_compute"] or "input_end" not in st:
            return
        ops = self.chain_ops()
        i = st["chain"]
        name, type_, share, need, pushes = ops[i]
        got = self.ready(st, need)
        if got is None:
            return
        s, w = self.s, st["w"]
        dur = lognorm(self.rng, s["compute_ms"] * 1000.0 * share / s["worker_speed"][w],
                      s["worker_sigma"])
        if self.rng.random() < s["pause_p"] / len(ops):
            dur += lognorm(self.rng, s["pause_ms"] * 1000.0, 0.5)  # a GC or preemption pause
        inputs = [f"{nm}_S{3 + n}" for n, (_, _, nm, _) in enumerate(got)]
        if i == 0:
            inputs.append("IteratorGetNext")
        start = max(self.eng.now, st["chain_t"])
        for (t_arr, src, nm, t_sent) in got:
            if self.capture:
                self.arrows.append((src, nm, t_sent, f"worker:{w}", start, name))
        st["running"] = True
        self.eng.at(start + dur, self.chain_done, st, name, type_, start, inputs, pushes)

    def chain_done(self, st, name, type_, start, inputs, pushes):
        w = st["w"]
        self.record(f"worker:{w}", type_, name, start, self.eng.now, inputs)
        st["running"] = False
        st["chain_t"] = self.eng.now
        for g in pushes:
            self.push(st, g, name)
        st["chain"] += 1
        if st["chain"] >= len(self.chain_ops()):
            st["done_compute"] = True
            self.maybe_end(st)
        else:
            self.try_compute(st)

    def push(self, st, g, grad_name):
        s, w = self.s, st["w"]
        targets = []
        if g == "tables":
            for (i, k, p, share) in self.parts:
                t = s["tables"][i]
                nb = int(max(1, t["ids"] * share)) * t["dim"] * 4
                targets.append((p, self.tname(i, k), nb, "sparse"))
        else:
            d = s["dense"][g]
            for p, share in self.dense_ps[g]:
                var = d["name"] if share == 1.0 else f"{d['name']}/part_{p}"
                targets.append((p, var, int(d["bytes"] * share), "dense"))
        for (p, var, nb, kind) in targets:
            st["need_acks"] += 1
            t_sent = self.eng.now
            self.net.send(f"wn{w}", self.ps_node(p), nb + 200, s["lat_us"],
                          lambda start, p=p, var=var, nb=nb, kind=kind, t_sent=t_sent:
                          self.grad_at_ps(st, p, var, nb, kind, grad_name, t_sent, start))

    def grad_at_ps(self, st, p, var, nb, kind, grad_name, t_sent, start):
        s, w = self.s, st["w"]
        self.record(f"ps:{p}", "RecvTensor", "RecvTensor", start, self.eng.now)
        per_byte = APPLY_NS_PER_BYTE[s["optimizer"]] * (2.0 if kind == "sparse" else 1.0)
        if s["sync"]:
            type_ = "AccumulatorApplyGradient"
            name = f"sync_replicas/{type_}/{var}"
            work = nb * 0.25 / 1000.0
            inputs = [f"sync_replicas/conditional_accumulator/{var}", grad_name + "_S40"]
        else:
            type_ = (SPARSE_APPLY if kind == "sparse" else DENSE_APPLY)[s["optimizer"]]
            name = f"update_{var}/{type_}"
            work = nb * per_byte / 1000.0
            inputs = [var, grad_name + "_S40"]
        self.ps_op(p, work, type_, name, inputs,
                   lambda: self.eng.at(self.eng.now + s["lat_us"], self.ack, st),
                   arrow=(f"worker:{w}", grad_name, t_sent))

    def ack(self, st):
        st["acks"] += 1
        self.maybe_end(st)

    def maybe_end(self, st):
        if not st["done_compute"] or st["acks"] < st["need_acks"] or st.get("ended"):
            return
        st["ended"] = True
        w, k = st["w"], st["k"]
        if not self.s["sync"]:
            self.record(f"worker:{w}", "NoOp", "group_deps", self.eng.now, self.eng.now + 2)
            self.end_step(st, self.eng.now + 2)
            return
        st["dq_start"] = self.eng.now
        self.tokens.setdefault(k, []).append(st)
        n = self.sync_pending.get(k, 0) + 1
        self.sync_pending[k] = n
        if n == self.s["workers"]:
            self.sync_update(k)

    def sync_update(self, k):
        """The chief's update: each PS takes the aggregate and applies it once, then the tokens."""
        s = self.s
        left = {"n": 0}
        per_ps = {}
        for i in range(len(s["tables"])):
            for (ti, kk, p, share) in self.parts:
                if ti == i:
                    t = s["tables"][i]
                    # the aggregate's rows: the workers' ids overlap (hot ids), at most 8
                    # batches' worth of distinct rows
                    rows = int(t["ids"] * share * min(s["workers"], 8))
                    per_ps.setdefault(p, []).append((self.tname(i, kk), rows * t["dim"] * 4))
        for j, d in enumerate(s["dense"]):
            for p, share in self.dense_ps[j]:
                var = d["name"] if share == 1.0 else f"{d['name']}/part_{p}"
                per_ps.setdefault(p, []).append((var, int(d["bytes"] * share)))
        def one_done():
            left["n"] -= 1
            if left["n"] == 0:
                self.ps_op(0, 5.0, "QueueEnqueueManyV2", "sync_replicas/sync_token_q_EnqueueMany",
                           ["sync_replicas/sync_token_q"], lambda: self.release(k))
        for p, vars_ in per_ps.items():
            for var, nb in vars_:
                left["n"] += 1
                self.ps_op(p, nb * APPLY_NS_PER_BYTE[s["optimizer"]] / 1000.0,
                           "AccumulatorTakeGradient",
                           f"sync_replicas/AccumulatorTakeGradient/{var}",
                           [f"sync_replicas/conditional_accumulator/{var}"], one_done)

    def release(self, k):
        for st in self.tokens.pop(k, []):
            self.eng.at(self.eng.now + self.s["lat_us"], self.dequeued, st)

    def dequeued(self, st):
        w = st["w"]
        self.record(f"worker:{w}", "QueueDequeueV2", "sync_replicas/sync_token_q_Dequeue",
                    st["dq_start"], self.eng.now, ["sync_replicas/sync_token_q"])
        self.end_step(st, self.eng.now)

    def end_step(self, st, t_end):
        w, k = st["w"], st["k"]
        self.steps[w].append((st["t0"], t_end))
        if k + 1 < self.s["steps"]:
            gap = lognorm(self.rng, 150.0, 0.3)  # the client's loop between session.run calls
            self.eng.at(t_end + gap, self.start_step, w, k + 1)

    # ----- run and write
    def run(self):
        for w in range(self.s["workers"]):
            self.eng.at(self.rng.uniform(0, 500.0), self.start_step, w, 0)
        self.eng.run()
        return self.truth()

    def truth(self):
        per, rates, all_steps = [], [], []
        for w, st in self.steps.items():
            if len(st) < 2:
                raise RuntimeError(f"gen2sim: worker {w} finished {len(st)} steps")
            d = sorted(b - a for a, b in st[1:])
            all_steps += d
            per.append(d[len(d) // 2])
            rates.append((len(st) - 1) / ((st[-1][1] - st[0][1]) / 1e6))
        all_steps.sort()
        sps = sum(rates)
        per_sorted = sorted(per)
        return {"median_step_ms": all_steps[len(all_steps) // 2] / 1000.0,
                "worker_median_step_ms": per_sorted[len(per_sorted) // 2] / 1000.0,
                "per_worker_step_ms": [x / 1000.0 for x in per],
                "steps_per_s": sps,
                "throughput_step_ms": 1000.0 * self.s["workers"] / sps,
                "ps_throttled_ms": [c.throttled_us / 1000.0 for c in self.cpus]}


def simulate(spec, path=None):
    sim = Sim(spec, capture=bool(path))
    truth = sim.run()
    if path:
        write_timeline(sim, path)
    return truth
