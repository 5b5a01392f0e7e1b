"""gen3's event simulator of a TF1 parameter-server job (issue 44: held-out jobs from a
generator tfdiag has never seen). Written apart from tfdiag's replay and the
other twin generators; standard library only. simulate(spec, path=None) runs the job drawn by
gen3jobs.draw and returns its truth; with a path it also writes the capture (gen3trace.py).

The mechanisms, each after a public source:
- A PS task runs the ops that requests make ready on its inter-op thread pool (TF1's
  DirectSession/GraphMgr executor schedules a node once its inputs are ready:
  tensorflow/core/common_runtime/executor.cc, ScheduleReady), and the pool is Eigen's
  work-stealing NonBlockingThreadPool (per-thread queues, stealing: no global FIFO order), so a
  free thread takes a random ready op here, not the oldest
  (https://gitlab.com/libeigen/eigen/-/blob/master/unsupported/Eigen/CXX11/src/ThreadPool/NonBlockingThreadPool.h).
- The threads share the PS's cores as CFS shares a CPU among runnable threads: processor
  sharing at min(threads, cores) cores, less a context-switch and cache cost per extra runnable
  thread (https://docs.kernel.org/scheduler/sched-design-CFS.html); a CFS quota caps the cores
  (https://docs.kernel.org/scheduler/sched-bwc.html). A node shared with other tenants (cpushare,
  no cpuset) loses CPU to them in windows of a few ms (steal), as the kubelet's CPU Manager page
  describes for shared pools (https://kubernetes.io/docs/tasks/administer-cluster/cpu-management-policies/).
- Every tensor a worker reads is its own RecvTensor RPC (tensorflow/core/distributed_runtime/
  rpc/grpc_remote_worker.cc), at most `channel_k` in flight per worker->PS channel (HTTP/2
  MAX_CONCURRENT_STREAMS, https://grpc.io/docs/guides/performance/), each paying a per-message
  CPU cost on the PS and half an RTT each way.
- Responses and gradients are TCP flows: each host's NIC is shared equally by the flows on it
  (per direction; PS packed on one node share one NIC), and a channel idle longer than the
  retransmission timeout restarts in slow start (RFC 5681 sec. 4.1, RFC 6928's initial window of
  10 segments): log2 rounds of RTT until the window covers the message or the path's BDP.
- Applies with use_locking=True hold the variable's mutex (tensorflow/core/kernels/
  training_ops.cc, MutexLock on the ref), so applies on one variable run one at a time, and a
  blocked apply keeps its inter-op thread.
- Embedding lookups route ids to parts by partition_strategy `mod` or `div`
  (https://www.tensorflow.org/api_docs/python/tf/nn/embedding_lookup); ids are Zipf-skewed
  (frequent ids are small), so `div` piles the lookups on part 0; the rows per step vary.
- SyncReplicasOptimizer (https://www.tensorflow.org/api_docs/python/tf/compat/v1/train/
  SyncReplicasOptimizer): gradients go to ConditionalAccumulators; once replicas_to_aggregate
  fresh ones are in, the chief's update takes and applies them, then hands out tokens; a worker's
  gradient computed on an older global step is dropped (backup workers).
- Input: without prefetch, each batch is read in the step (HDFS); with prefetch(1) a producer
  fills a one-batch buffer beside the step (https://www.tensorflow.org/guide/data_performance).
"""
import heapq
import math
import random

from gen3trace import write_trace


class Sim:
    def __init__(self):
        self.q, self.n, self.now = [], 0, 0.0

    def at(self, t, fn, *a):
        self.n += 1
        heapq.heappush(self.q, (t, self.n, fn, a))

    def run(self, stop):
        while self.q and not stop():
            t, _, fn, a = heapq.heappop(self.q)
            self.now = t
            fn(t, *a)


class Shared:
    """Processor sharing by virtual time: every job on it progresses at cap(n)/n units per us."""

    def __init__(self, sim, cap):
        self.sim, self.cap, self.v, self.t, self.h, self.ver, self.k = sim, cap, 0.0, 0.0, [], 0, 0

    def _adv(self, now):
        if self.h:
            self.v += (now - self.t) * self.cap(len(self.h)) / len(self.h)
        self.t = now

    def _resched(self, now):
        self.ver += 1
        if self.h:
            dt = (self.h[0][0] - self.v) * len(self.h) / self.cap(len(self.h))
            self.sim.at(now + max(dt, 1e-4), self._fire, self.ver)  # floor: float progress

    def add(self, now, work, cb):
        self._adv(now)
        self.k += 1
        heapq.heappush(self.h, (self.v + max(work, 1e-6), self.k, cb))
        self._resched(now)

    def touch(self, now):  # the capacity changed
        self._adv(now)
        self._resched(now)

    def _fire(self, now, ver):
        if ver != self.ver:
            return
        self._adv(now)
        done = []
        while self.h and self.h[0][0] <= self.v + 1e-9 * max(1.0, abs(self.v)) + 1e-6:
            done.append(heapq.heappop(self.h)[2])
        self._resched(now)
        for cb in done:
            cb(now)


class PS:
    """One PS task: `threads` inter-op threads on `cores` cores of a host of `speed`."""

    def __init__(self, sim, j, spec, rnd):
        self.sim, self.j, self.rnd = sim, j, rnd
        self.threads = spec["ps_threads"]
        self.cores = min(spec["ps_cores"], spec["ps_quota"][j] or 1e9)
        self.speed = spec["ps_speed"][j]
        self.steal_mean = spec["ps_steal"][j]
        self.steal = 0.0
        self.free = list(range(self.threads))
        self.ready, self.locks, self.ops = [], {}, []
        self.cpu = Shared(sim, self._cap)
        if self.steal_mean > 0:
            sim.at(0.0, self._steal_tick)

    def _cap(self, n):
        c = self.cores
        extra = max(0.0, n / c - 1.0)
        return self.speed * (1 - self.steal) * min(n, c) / (1 + 0.06 * extra)

    def _steal_tick(self, now):
        self.steal = min(0.9, self.rnd.expovariate(1 / self.steal_mean))
        self.cpu.touch(now)
        self.sim.at(now + self.rnd.uniform(2000, 8000), self._steal_tick)

    def submit(self, now, op):
        """op: dict(name, type, inputs, work (us at speed 1), lock (variable or None), done)."""
        self.ready.append(op)
        self._dispatch(now)

    def _dispatch(self, now):
        while self.free and self.ready:
            op = self.ready.pop(self.rnd.randrange(len(self.ready)))
            op["tid"] = self.free.pop()
            op["ts"] = now
            lk = op.get("lock")
            if lk is not None:
                q = self.locks.setdefault(lk, [])
                q.append(op)
                if len(q) > 1:
                    continue  # holds its thread, blocked on the variable's mutex
            self.cpu.add(now, op["work"], lambda t, o=op: self._done(t, o))

    def _done(self, now, op):
        self.ops.append((op["tid"], op["ts"], now, op["name"], op["type"], op["inputs"]))
        self.free.append(op["tid"])
        lk = op.get("lock")
        if lk is not None:
            q = self.locks[lk]
            q.pop(0)
            if q:
                self.cpu.add(now, q[0]["work"], lambda t, o=q[0]: self._done(t, o))
        op["done"](now)
        self._dispatch(now)


class Nic:
    def __init__(self, sim, gbps):
        bpu = gbps * 125.0  # bytes per us
        self.tx = Shared(sim, lambda n: bpu)
        self.rx = Shared(sim, lambda n: bpu)


def parts_of(spec):
    """Every variable part: (table, part index, part name, PS, rows share, bytes)."""
    out = []
    for v in spec["vars"]:
        p = v["parts"]
        shares = route_shares(v, p)
        for k in range(p):
            name = v["name"] if p == 1 else f"{v['name']}/part_{k}"
            out.append((v, k, name, v["placement"][k], shares[k], v["bytes"] / p))
    return out


def zipf_cdf(x, n, s):
    """Share of Zipf(s) draws over ranks 1..n that fall on ranks <= x (integral approximation)."""
    def h(m):
        if m <= 0:
            return 0.0
        return 1 + (math.log(m) if abs(s - 1) < 1e-9 else (m ** (1 - s) - 1) / (1 - s))
    return h(x) / h(n)


def route_shares(v, p):
    if p == 1:
        return [1.0]
    if v.get("strategy") == "div" and v["kind"] == "emb":
        n, s = v["rows"], v["zipf_s"]
        return [zipf_cdf((k + 1) * n / p, n, s) - zipf_cdf(k * n / p, n, s) for k in range(p)]
    return [1.0 / p] * p


# PS op costs (us per byte at host speed 1, and fixed us per op).
READ_NS_B, GATHER_NS_B, SPAPPLY_NS_B, DAPPLY_NS_B, ACC_NS_B = 0.1, 0.5, 1.5, 0.4, 0.2


def simulate(spec, path=None):
    sim = Sim()
    R = random.Random(spec["seed"] * 7919 + 3)
    rnd = {k: random.Random(f"{spec['seed']}:{k}") for k in ("ps", "w", "in", "rows", "net")}
    nps, nw = spec["ps"], spec["workers"]
    ps = [PS(sim, j, spec, random.Random(f"{spec['seed']}:ps{j}")) for j in range(nps)]
    hosts = {}
    for j in range(nps):
        h = spec["ps_host"][j]
        if h not in hosts:
            hosts[h] = Nic(sim, spec["ps_gbps"][j])
    ps_nic = [hosts[spec["ps_host"][j]] for j in range(nps)]
    parts = parts_of(spec)
    rtt, msg_us, K = spec["rtt_us"], spec["msg_us"], spec["channel_k"]
    steps = spec["steps"] + spec["warmup"]
    state = [dict(step=0, starts=[], ops=[], recv=[], chan={}, buf=0, wait=None,
                  local=0, pushed=0) for _ in range(nw)]
    ps_recv = [[] for _ in range(nps)]
    sync = {"G": 0, "count": 0, "waiting": [], "busy": False}
    done_workers = [0]
    edge = [0]

    def sname():
        edge[0] += 1
        return edge[0]

    def wspeed(w):
        return spec["worker_speed"][w]

    def noise(r, cv):
        return math.exp(r.gauss(0, cv) - cv * cv / 2)

    # ---- input
    def produce(now, w):
        st = state[w]
        d = spec["input_ms"] * 1000 / wspeed(w) * noise(rnd["in"], spec["input_cv"])

        def made(t):
            st["buf"] += 1
            if st["wait"] is not None:
                cb, st["wait"] = st["wait"], None
                cb(t)
        sim.at(now + d, lambda t: made(t))

    def get_next(now, w, cont):
        st = state[w]
        if not spec["prefetch"]:
            d = spec["input_ms"] * 1000 / wspeed(w) * noise(rnd["in"], spec["input_cv"])
            st["ops"].append((0, now, now + d, "IteratorGetNext", "IteratorGetNext", []))
            sim.at(now + d, cont)
            return

        def take(t):
            st["buf"] -= 1
            st["ops"].append((0, now, t + 15, "IteratorGetNext", "IteratorGetNext", []))
            produce(t, w)
            sim.at(t + 15, cont)
        if st["buf"] > 0:
            take(now)
        else:
            st["wait"] = take

    # ---- one RPC over a worker->PS channel
    def channel(w, j):
        return state[w]["chan"].setdefault(j, {"inflight": 0, "q": [], "last": -1e12})

    def rpc(now, w, j, fn):
        c = channel(w, j)
        if c["inflight"] < K:
            c["inflight"] += 1
            fn(now)
        else:
            c["q"].append(fn)

    def rpc_end(now, w, j):
        c = channel(w, j)
        c["inflight"] -= 1
        c["last"] = now
        if c["q"]:
            c["inflight"] += 1
            c["q"].pop(0)(now)

    def ramp(now, w, j, nbytes):
        c = channel(w, j)
        if now - c["last"] < max(200000.0, 2 * rtt):  # warm: no slow-start restart
            return 0.0
        iw = 10 * 1460
        bdp = spec["ps_gbps"][j] * 125.0 * rtt
        need = min(nbytes, bdp)
        return rtt * math.ceil(math.log2(1 + need / iw)) if need > iw else 0.0

    def grad_name(v, name):
        return f"gradients/{name}_grad/{'AddN' if v['kind'] == 'dense' else 'Reshape'}"

    # ---- worker step
    def start_step(now, w):
        st = state[w]
        if st["step"] >= steps:
            done_workers[0] += 1
            return
        st["starts"].append(now)
        st["local"] = sync["G"]
        st["ops"].append((0, now, now + 2, "_SOURCE", "NoOp", []))
        get_next(now + 2, w, lambda t: pulls(t, w))

    def pulls(now, w):
        st = state[w]
        todo = []
        for (v, k, name, j, share, pbytes) in parts:
            if v["kind"] == "emb" and not v.get("gather_on_worker"):
                rows = max(1.0, v["ids_per_step"] * share * noise(rnd["rows"], 0.25))
                nb = rows * v["dim"] * 4
                todo.append((j, f"{name}/Gather", "GatherV2", [name], nb,
                             msg_us + 3 + nb * GATHER_NS_B / 1000, rows))
            else:
                todo.append((j, f"{name}/read", "Identity", [name], pbytes,
                             msg_us + 1 + pbytes * READ_NS_B / 1000, 0))
        st["left"] = len(todo)
        st["got"] = []
        st["rows"] = {}
        for (j, nm, ty, ins, nb, work, rows) in todo:
            st["rows"][nm] = rows

            def go(t, j=j, nm=nm, ty=ty, ins=ins, nb=nb, work=work):
                issue = t

                def at_ps(t2):
                    src = st.setdefault("src", {})
                    if src.get(j) != st["step"]:
                        src[j] = st["step"]
                        ps[j].ops.append((0, t2, t2 + 1, "_SOURCE", "NoOp", []))
                    ps[j].submit(t2, {"name": nm, "type": ty, "inputs": ins, "work": work,
                                      "done": lambda t3: sim.at(
                                          t3 + ramp(t3, w, j, nb), lambda t5: ps_nic[j].tx.add(
                                              t5, nb, lambda t4: sim.at(
                                                  t4 + rtt / 2, arrived, issue, nm, j)))})
                sim.at(t + rtt / 2, at_ps)
            rpc(now, w, j, go)

        def arrived(t, issue, nm, j):
            rpc_end(t, w, j)
            st["recv"].append((issue, t))
            st["got"].append(nm)
            st["left"] -= 1
            if st["left"] == 0:
                compute(t, w)
        st["arrived"] = arrived

    def compute(now, w):
        st = state[w]
        d = spec["compute_ms"] * 1000 / wspeed(w) * noise(rnd["w"], spec["compute_cv"])
        t = now
        for v in spec["vars"]:
            if v["kind"] == "emb" and v.get("gather_on_worker"):
                g = (v["ids_per_step"] * v["dim"] * 4 * GATHER_NS_B / 1000 + 5) / wspeed(w)
                ins = [(f"{v['name']}/read_S{sname()}" if v["parts"] == 1 else
                        f"{v['name']}/part_0/read_S{sname()}"), "ids"]
                st["ops"].append((0, t, t + g, f"{v['name']}/GatherV2", "GatherV2", ins))
                t += g
        ins = [f"{n}_S{sname()}" for n in st["got"]]
        a = t + d * 0.4
        st["ops"].append((0, t, a, "model/forward/MatMul", "MatMul", ["IteratorGetNext"] + ins))
        b = t + d * 0.9
        st["ops"].append((0, a, b, "gradients/model/MatMul_grad/MatMul", "MatMul",
                          ["model/forward/MatMul"]))
        for i, (v, k, name, j, share, pbytes) in enumerate(parts):  # each part's gradient
            g0 = b + (t + d - b) * i / len(parts)
            st["ops"].append((0, g0, g0 + (t + d - b) / len(parts), grad_name(v, name),
                              "AddN" if v["kind"] == "dense" else "Reshape",
                              ["gradients/model/MatMul_grad/MatMul"]))
        sim.at(t + d, lambda t2: push(t2, w))

    def push(now, w):
        st = state[w]
        st["left"] = len(parts)
        st["acks"] = []
        for (v, k, name, j, share, pbytes) in parts:
            sparse = v["kind"] == "emb"
            if sparse:
                rows = st["rows"].get(f"{name}/Gather") or max(
                    1.0, v["ids_per_step"] * share * noise(rnd["rows"], 0.25))
                nb = rows * v["dim"] * 4
            else:
                rows, nb = 0, pbytes
            g = grad_name(v, name)

            def go(t, j=j, v=v, name=name, nb=nb, rows=rows, g=g, sparse=sparse, pb=pbytes):
                sent = t

                def at_ps(t2):
                    ps_recv[j].append((sent, t2))
                    gi = f"{g}_S{sname()}"
                    if spec["sync"]:
                        op = {"name": f"sync_replicas/{name}/AccumulatorApplyGradient",
                              "type": "AccumulatorApplyGradient",
                              "inputs": [f"sync_replicas/{name}/conditional_accumulator",
                                         "sync_replicas/global_step/read", gi],
                              "work": msg_us + 2 + nb * ACC_NS_B / 1000, "lock": None}
                    else:
                        op = apply_op(v, name, pb, rows, gi)
                    op["done"] = lambda t3, n=op["name"]: pushed(t3, j, n)
                    ps[j].submit(t2, op)
                sim.at(t + rtt / 2 + ramp(t, w, j, nb),
                       lambda t5, nb=nb, at_ps=at_ps: ps_nic[j].rx.add(t5, nb, at_ps))

            rpc(now, w, j, go)

        def pushed(t3, j, op):
            # the apply's control edge back to the worker's train_op: a RecvTensor there
            sim.at(t3 + rtt / 2, acked, t3, j, op)

        def acked(t4, t3, j, op):
            rpc_end(t4, w, j)
            st["recv"].append((t3, t4))
            st["acks"].append(f"{op}_S{sname()}")
            st["left"] -= 1
            if st["left"] == 0:
                st["ops"].append((0, t4, t4 + 3, "train_op", "NoOp", st["acks"]))
                step_end(t4 + 3, w)

    def apply_op(v, name, pbytes, rows, gi):
        if v["kind"] == "emb" and v["optimizer"] == "dense_adam":
            return {"name": f"{name}/ApplyAdam", "type": "ApplyAdam",
                    "inputs": [name, f"{name}/Adam", f"{name}/Adam_1", gi],
                    "work": msg_us + 5 + pbytes * DAPPLY_NS_B / 1000, "lock": name}
        if v["kind"] == "emb":
            return {"name": f"{name}/SparseApplyAdagrad", "type": "SparseApplyAdagrad",
                    "inputs": [name, f"{name}/Adagrad", gi],
                    "work": msg_us + 5 + rows * v["dim"] * 4 * SPAPPLY_NS_B / 1000,
                    "lock": name}
        return {"name": f"{name}/ApplyAdam", "type": "ApplyAdam",
                "inputs": [name, f"{name}/Adam", f"{name}/Adam_1", gi],
                "work": msg_us + 2 + pbytes * DAPPLY_NS_B / 1000, "lock": name}

    def step_end(now, w):
        st = state[w]
        if not spec["sync"]:
            finish(now, w)
            return
        if st["local"] == sync["G"]:
            sync["count"] += 1
            sync["waiting"].append((now, w))
            if sync["count"] >= spec["replicas_to_aggregate"] and not sync["busy"]:
                update(now)
        else:  # stale: dropped, a token is there already
            st["ops"].append((0, now, now + 20, "sync_token_q_Dequeue", "QueueDequeueV2",
                              ["sync_token_q"]))
            finish(now + 20, w)

    def update(now):
        sync["busy"] = True
        left = [len(parts)]
        for (v, k, name, j, share, pbytes) in parts:
            rows = v["ids_per_step"] * share * spec["replicas_to_aggregate"] \
                if v["kind"] == "emb" else 0
            take = {"name": f"sync_replicas/{name}/AccumulatorTakeGradient",
                    "type": "AccumulatorTakeGradient",
                    "inputs": [f"sync_replicas/{name}/conditional_accumulator"],
                    "work": 2 + (rows * v["dim"] * 4 if rows else pbytes) * ACC_NS_B / 1000,
                    "lock": None}

            def took(t, v=v, name=name, j=j, pbytes=pbytes, rows=rows):
                op = apply_op(v, name, pbytes, rows, f"sync_replicas/{name}/take")
                op["work"] -= msg_us
                op["done"] = applied
                ps[j].submit(t, op)

            def applied(t):
                left[0] -= 1
                if left[0] == 0:
                    sim.at(t + rtt / 2, released)
            take["done"] = took
            ps[j].submit(now, take)

        def released(t):
            sync["G"] += 1
            sync["count"] = 0
            sync["busy"] = False
            waiting, sync["waiting"] = sync["waiting"], []
            for (t0, w) in waiting:
                state[w]["ops"].append((0, t0, t + rtt / 2, "sync_token_q_Dequeue",
                                        "QueueDequeueV2", ["sync_token_q"]))
                finish(t + rtt / 2, w)

    def finish(now, w):
        st = state[w]
        st["step"] += 1
        sim.at(now + 5, start_step, w)

    for w in range(nw):
        lag = rnd["w"].uniform(0, 200 + spec["compute_ms"] * 300)
        if spec["prefetch"]:
            produce(0.0, w)
        sim.at(lag, start_step, w)
    # Under sync the first worker done ends the run (the others would wait for its gradient).
    need = 1 if spec["sync"] else nw
    sim.run(lambda: done_workers[0] >= need or sim.now > 600e6)
    return truth_and_trace(spec, state, ps, ps_recv, parts, path, sim.now)


def truth_and_trace(spec, state, ps, ps_recv, parts, path, end):
    wu = spec["warmup"]
    per, allsteps = [], []
    for st in state:
        s = st["starts"]
        d = [(b - a) / 1000 for a, b in zip(s[wu:], s[wu + 1:])]
        per.append(sorted(d)[len(d) // 2] if d else float("nan"))
        allsteps += d
    allsteps.sort()
    med = allsteps[len(allsteps) // 2]
    # steps/s over all workers: each worker's rate over its steps after the warm-up, summed
    sps = sum((len(st["starts"]) - 1 - wu) / ((st["starts"][-1] - st["starts"][wu]) / 1e6)
              for st in state if len(st["starts"]) > wu + 1)
    truth = {"median_step_ms": med, "worker_median_ms": per,
             "median_of_worker_medians_ms": sorted(per)[len(per) // 2],
             "steps_per_s": sps, "throughput_step_ms": spec["workers"] * 1000 / sps}
    if path:
        write_trace(spec, state, ps, ps_recv, parts, path, t0_capture=state_start(state, wu))
    return truth


def state_start(state, wu):
    return min(st["starts"][wu] for st in state if len(st["starts"]) > wu) - 1
