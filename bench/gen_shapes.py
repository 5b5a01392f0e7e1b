#!/usr/bin/env python3
"""Timelines of the shapes users' files have, for bench/shapes_bench.sh (issue 19).

Deterministic (a fixed seed per file): the same arguments write the same bytes.

  gen_shapes.py tf1-small OUT MB [--worker K]
      A compact TF1 timeline (tensorflow/python/client/timeline.py's format) of many small
      events, about 6,000 per MB: short node names, two or three inputN args, many RecvTensor
      ops on the PS tasks (one in four with its DataFlow arrow). The whole job (4 PS x 16 workers), or with
      --worker K the timeline one worker writes (its own device plus the PS work it caused), as
      when every worker saves its own file.
  gen_shapes.py tf2 OUT MB
      A TF2 trace-viewer JSON (what the TF profiler exports): displayTimeUnit, fractional
      microsecond ts/dur, every args value a string (long_name "node:Type", group_id, step_num),
      thread_name metadata, and the trailing {} event.
"""
import random
import sys

PS, WORKERS = 4, 16
LAYERS = ["dense%d" % i for i in range(8)] + ["emb", "out", "bn1", "bn2"]
OPS = ["MatMul", "BiasAdd", "Relu", "Mul", "AddV2", "Sum", "Reshape", "ConcatV2", "Sub", "Tanh"]
T0 = 1600000000000000  # us


def tf1_header(devices):
    out = []
    pid = 0
    out.append('{"name":"process_name","ph":"M","pid":0,"args":{"name":"Allocators"}}')
    pids = {}
    for d in devices:
        pid += 1
        out.append('{"name":"process_name","ph":"M","pid":%d,"args":{"name":"%s Compute"}}' % (pid, d))
        pids[d] = pid
        pid += 1
        out.append('{"name":"process_name","ph":"M","pid":%d,"args":{"name":"%s Tensors"}}' % (pid, d))
    return out, pids


def device(job, task):
    return "/job:%s/replica:0/task:%d/device:CPU:0" % (job, task)


def tf1_small(out, mb, worker):
    rng = random.Random(1000 + (worker if worker is not None else 999))
    target = mb * 1000 * 1000
    ps_devs = [device("ps", p) for p in range(PS)]
    workers = [worker] if worker is not None else list(range(WORKERS))
    w_devs = [device("worker", w) for w in workers]
    head, pids = tf1_header(ps_devs + w_devs)
    f = open(out, "w")
    written = 0
    text = '{"traceEvents":[' + ",".join(head)
    f.write(text)
    written += len(text)
    flow = 0
    step = 0
    t = T0 + (worker or 0) * 7
    buf = []
    while written < target:
        step += 1
        for w, wd in zip(workers, w_devs):
            wp = pids[wd]
            ts = t + rng.randrange(50)
            # Each step starts with _SOURCE (tfdiag's step boundary in TF1 timelines).
            buf.append('{"ph":"X","cat":"Op","name":"NoOp","pid":%d,"tid":0,"ts":%d,"dur":1,'
                       '"args":{"name":"_SOURCE","op":"NoOp"}}' % (wp, ts))
            ts += 2
            for layer in LAYERS:
                op = rng.choice(OPS)
                n = "%s/%s_%d" % (layer, op, rng.randrange(4))
                dur = rng.randrange(2, 90)
                ins = ['"input0":"%s/Relu"' % layer, '"input1":"%s/kernel/read"' % layer]
                if rng.random() < 0.5:
                    ins.append('"input2":"%s/bias/read"' % layer)
                buf.append('{"ph":"X","cat":"Op","name":"%s","pid":%d,"tid":%d,"ts":%d,"dur":%d,'
                           '"args":{"name":"%s","op":"%s",%s}}'
                           % (op, wp, rng.randrange(2), ts, dur, n, op, ",".join(ins)))
                ts += dur + rng.randrange(1, 6)
                # The variables this layer reads come from a PS (PS 0 is the hot one).
                p = 0 if rng.random() < 0.4 else rng.randrange(PS)
                pp = pids[ps_devs[p]]
                rdur = rng.randrange(20, 400)
                arrow = rng.random() < 0.25  # a DataFlow arrow for one transfer in four
                if arrow:
                    buf.append('{"ph":"s","cat":"DataFlow","name":"%s/kernel/read","pid":%d,"tid":0,'
                               '"ts":%d,"id":%d}' % (layer, wp, ts, flow))
                buf.append('{"ph":"X","cat":"Op","name":"RecvTensor","pid":%d,"tid":%d,"ts":%d,'
                           '"dur":%d,"args":{"name":"RecvTensor","op":"RecvTensor"}}'
                           % (pp, rng.randrange(4), ts + 3, rdur))
                if arrow:
                    buf.append('{"ph":"t","cat":"DataFlow","name":"%s/kernel/read","pid":%d,"tid":0,'
                               '"ts":%d,"id":%d}' % (layer, pp, ts + 3 + rdur, flow))
                    flow += 1
                ts += rng.randrange(1, 8)
            # The update on the PS.
            for layer in LAYERS[:4]:
                p = rng.randrange(PS)
                dur = rng.randrange(5, 60)
                buf.append('{"ph":"X","cat":"Op","name":"ApplyGradientDescent","pid":%d,"tid":0,'
                           '"ts":%d,"dur":%d,"args":{"name":"%s/w/Apply","op":"ApplyGradientDescent",'
                           '"input0":"%s/w","input1":"lr","input2":"g/%s/w"}}'
                           % (pids[ps_devs[p]], ts, dur, layer, layer, layer))
                ts += dur
        t += 2000
        text = "," + ",".join(buf)
        buf = []
        f.write(text)
        written += len(text)
    f.write("]}\n")
    f.close()


def tf2(out, mb):
    rng = random.Random(2000)
    target = mb * 1000 * 1000
    f = open(out, "w")
    head = ['{"ph":"M","pid":0,"name":"process_name","args":{"name":"Allocators"}}']
    devs = [device("ps", p) for p in range(PS)] + [device("worker", w) for w in range(WORKERS)]
    for i, d in enumerate(devs):
        head.append('{"ph":"M","pid":%d,"name":"process_name","args":{"name":"%s"}}' % (i + 1, d))
        head.append('{"ph":"M","pid":%d,"tid":%d,"name":"thread_name","args":{"name":"tf_Compute/%d"}}'
                    % (i + 1, 100 + i, 100 + i))
    text = ('{"displayTimeUnit":"ns","metadata":{"highres-ticks":true},"traceEvents":['
            + ",".join(head))
    f.write(text)
    written = len(text)
    step = 0
    t = float(T0)
    while written < target:
        step += 1
        buf = []
        for i, _ in enumerate(devs):
            pid = i + 1
            ts = t + rng.randrange(100000) / 1000.0
            is_ps = i < PS
            for layer in LAYERS:
                op = "RecvTensor" if is_ps and rng.random() < 0.5 else rng.choice(OPS)
                node = "RecvTensor" if op == "RecvTensor" else "%s/%s_%d" % (layer, op, rng.randrange(4))
                dur = rng.randrange(1000, 90000) / 1000.0
                buf.append('{"pid":%d,"tid":%d,"ts":%.3f,"dur":%.3f,"ph":"X","name":"%s",'
                           '"args":{"group_id":"%d","long_name":"%s:%s","step_num":"%d"}}'
                           % (pid, 100 + i, ts, dur, op, step, node, op, step))
                ts += dur + rng.randrange(100, 5000) / 1000.0
        t += 3000.0
        text = "," + ",".join(buf)
        f.write(text)
        written += len(text)
    f.write(",{}]}\n")
    f.close()


def main(argv):
    if len(argv) < 4:
        sys.exit(__doc__)
    kind, out, mb = argv[1], argv[2], int(argv[3])
    worker = int(argv[5]) if len(argv) > 5 and argv[4] == "--worker" else None
    if kind == "tf1-small":
        tf1_small(out, mb, worker)
    elif kind == "tf2":
        tf2(out, mb)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
