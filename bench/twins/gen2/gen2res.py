"""gen2's shared resources: the event engine, a PS task's CPU (threads on a cpuset under a CFS
quota) and the node NICs (max-min fair shares). See gen2sim.py for the model and its sources."""
import heapq
import math

PERIOD_US = 100000.0  # the CFS period (cpu.cfs_period_us default)
CS_OVERHEAD = 0.03  # share lost to context switches per runnable thread beyond a core


class Engine:
    def __init__(self):
        self.now = 0.0
        self.heap = []
        self.seq = 0

    def at(self, t, fn, *args):
        self.seq += 1
        heapq.heappush(self.heap, (t if t > self.now else self.now, self.seq, fn, args))

    def run(self, limit_events=20000000):
        n = 0
        while self.heap and n < limit_events:
            t, _, fn, args = heapq.heappop(self.heap)
            self.now = t
            fn(*args)
            n += 1
        if self.heap:
            raise RuntimeError("gen2sim: event limit reached")


class Op:
    __slots__ = ("work", "demand", "rate", "ver", "start", "done", "task", "name", "type",
                 "inputs", "tensor_bytes", "t_last", "arrow")

    def __init__(self, work, demand, done, task, name, type_, inputs=(), tensor_bytes=0):
        self.work, self.demand, self.done = work, demand, done
        self.task, self.name, self.type, self.inputs = task, name, type_, list(inputs)
        self.tensor_bytes = tensor_bytes
        self.rate, self.ver, self.start, self.t_last = 0.0, 0, None, 0.0
        self.arrow = None  # (source task, tensor, time sent): the DataFlow arrow into this op


class PsCpu:
    """One PS task's threads and the CPU its container may use."""

    def __init__(self, sim, idx, threads, cores, quota, speed, rng):
        self.sim, self.idx, self.threads, self.cores = sim, idx, threads, cores
        self.quota, self.speed, self.rng = quota, speed, rng
        self.queue, self.running = [], []
        self.used, self.period, self.throttled = 0.0, 0, False
        self.t_last, self.ver, self.tick_armed = 0.0, 0, False
        self.throttled_us = 0.0

    def cpu_rate(self):
        d = sum(o.demand for o in self.running)
        return 0.0 if self.throttled else min(d, self.cores)

    def advance(self):
        now = self.sim.eng.now
        dt = now - self.t_last
        if dt > 0:
            if self.throttled:
                self.throttled_us += dt
            self.used += self.cpu_rate() * dt
            for o in self.running:
                o.work -= o.rate * dt
        self.t_last = now

    def submit(self, op):
        self.advance()
        self.queue.append(op)
        self._fill()
        self._rates()

    def _fill(self):
        while self.queue and len(self.running) < self.threads:
            op = self.queue.pop(self.rng.randrange(len(self.queue)))
            op.start = self.sim.eng.now
            self.running.append(op)

    def _rates(self):
        eng = self.sim.eng
        self.ver += 1
        d = sum(o.demand for o in self.running)
        if self.throttled or d == 0:
            for o in self.running:
                o.rate = 0.0
        else:
            share = min(1.0, self.cores / d)
            eff = 1.0 / (1.0 + CS_OVERHEAD * max(0.0, d / self.cores - 1.0))
            for o in self.running:
                o.rate = self.speed * share * eff * o.demand
        for o in self.running:
            if o.rate > 0:
                eng.at(eng.now + max(0.0, o.work) / o.rate, self._check, o, self.ver)
        if self.quota is not None and self.running:
            if not self.tick_armed:
                self.tick_armed = True
                eng.at((math.floor(eng.now / PERIOD_US) + 1) * PERIOD_US, self._tick)
            r = self.cpu_rate()
            if r > 0:
                left = self.quota * PERIOD_US - self.used
                eng.at(eng.now + max(0.0, left) / r, self._exhaust, self.ver)

    def _check(self, op, ver):
        if ver != self.ver:
            return
        self.advance()
        done = [o for o in self.running if o.work <= 1e-6]
        for o in done:
            self.running.remove(o)
        self._fill()
        self._rates()
        for o in done:
            self.sim.record(o.task, o.type, o.name, o.start, self.sim.eng.now, o.inputs,
                            o.tensor_bytes)
            if o.arrow and self.sim.capture:
                self.sim.arrows.append(o.arrow + (o.task, o.start, o.name))
            o.done()

    def _exhaust(self, ver):
        if ver != self.ver or self.throttled:
            return
        self.advance()
        if self.used >= self.quota * PERIOD_US - 1e-6:
            self.throttled = True
            self._rates()

    def _tick(self):
        self.advance()
        self.tick_armed = False
        self.used, self.throttled = 0.0, False
        self._rates()
        if (self.running or self.queue) and not self.tick_armed:
            self.tick_armed = True
            self.sim.eng.at(self.sim.eng.now + PERIOD_US, self._tick)


class Flow:
    __slots__ = ("rem", "rate", "t_last", "fin", "next", "tx", "rx", "done", "start")


SMALL_BYTES = 16 * 1024  # a message this small is latency-bound: it does not join the link shares
QUANTUM_US = 5.0  # flows starting or ending within this long are re-shared together (run time)


class Net:
    """Node NICs: each flow crosses its source's transmit link and its destination's receive link.

    A flow's completion event is only pushed when its finish time moves earlier; an event that
    fires before a flow's (later) finish re-arms itself, so a flow joining a busy link costs no
    event for each flow it slows."""

    def __init__(self, sim, caps):
        self.sim, self.caps = sim, caps  # caps: node -> bytes per us
        self.on = {}
        self.dirty, self.armed = {}, False

    def send(self, src, dst, nbytes, latency, done):
        eng = self.sim.eng
        if nbytes < SMALL_BYTES:
            start = eng.now + latency
            eng.at(start + nbytes / min(self.caps[src], self.caps[dst]), done, start)
            return
        f = Flow()
        f.rem, f.rate, f.done = float(nbytes), 0.0, done
        f.fin = f.next = float("inf")
        f.tx, f.rx = ("tx", src), ("rx", dst)
        f.t_last = f.start = eng.now + latency
        eng.at(f.start, self._begin, f)

    def _begin(self, f):
        # dicts, not sets: iteration in insertion order keeps a run deterministic (a set of
        # objects iterates in memory-address order)
        self.on.setdefault(f.tx, {})[f] = None
        self.on.setdefault(f.rx, {})[f] = None
        self._touch((f.tx, f.rx))

    def _touch(self, links):
        """Re-share `links` once per QUANTUM_US: a burst of flows (every worker pulling after a
        sync barrier) costs one pass, not one a flow; a new flow waits at most that long."""
        for lk in links:
            self.dirty[lk] = None
        if not self.armed:
            self.armed = True
            self.sim.eng.at(self.sim.eng.now + QUANTUM_US, self._flush)

    def _flush(self):
        self.armed = False
        links, self.dirty = list(self.dirty), {}
        self._update(links)

    def _share(self, link):
        """Water-filling at `link`: each flow capped by its equal share at its other end."""
        flows = self.on.get(link, ())
        cap = self.caps[link[1]]
        caps = []
        for f in flows:
            other = f.rx if link[0] == "tx" else f.tx
            caps.append(self.caps[other[1]] / len(self.on[other]))
        caps.sort()
        left, n = cap, len(caps)
        for c in caps:
            if c * n >= left:
                return left / n
            left -= c
            n -= 1
        return cap

    def _update(self, links):
        eng = self.sim.eng
        now = eng.now
        shares = {lk: self._share(lk) for lk in links if self.on.get(lk)}
        touched = {}
        for lk in links:
            touched.update(self.on.get(lk, {}))
        for f in touched:
            f.rem -= f.rate * (now - f.t_last)
            f.t_last = now
            s_tx = shares.get(f.tx) or self.caps[f.tx[1]] / len(self.on[f.tx])
            s_rx = shares.get(f.rx) or self.caps[f.rx[1]] / len(self.on[f.rx])
            f.rate = s_tx if s_tx < s_rx else s_rx
            f.fin = now + max(0.0, f.rem) / f.rate
            if f.fin < f.next - 1e-9:
                f.next = f.fin
                eng.at(f.fin, self._check, f, f.fin)

    def _check(self, f, t):
        if t != f.next:
            return
        now = self.sim.eng.now
        if now < f.fin - 1e-6:
            f.next = f.fin
            self.sim.eng.at(f.fin, self._check, f, f.fin)
            return
        f.next = -1.0
        del self.on[f.tx][f]
        del self.on[f.rx][f]
        self._touch((f.tx, f.rx))
        f.done(f.start)


def lognorm(rng, mean, sigma):
    """A lognormal draw with the given mean (heavy-tailed op times)."""
    if mean <= 0:
        return 0.0
    return mean * math.exp(rng.gauss(0.0, sigma) - sigma * sigma / 2)
