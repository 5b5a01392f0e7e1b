#!/bin/sh
# Peak RSS of `tfdiag analyze` on a large generated bundle (issue 48: bundles read in bounded
# memory). Writes a bundle of about SIZE_MB MiB (default 200) of thread samples (4 processes, 64
# threads each, one sample per thread per 10 ms) under a temporary directory and prints
# /usr/bin/time -v's maximum resident set size and wall time. usage: bench/bundle_memory.sh
# [TFDIAG] [SIZE_MB]
set -eu
TFDIAG=${1:-build/tfdiag}
SIZE_MB=${2:-200}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
python3 - "$dir/big.tfdiag.json" "$SIZE_MB" <<'PY'
import sys
path, mb = sys.argv[1], int(sys.argv[2])
t0 = 1_700_000_000_000_000_000
with open(path, "w") as f:
    f.write('{"schema":"tfdiag.bundle/1","tool":{"name":"tfdiag","version":"bench"},')
    f.write('"meta":{"host":"bench","kernel":"6.1","window_start_ns":%d,"window_end_ns":%d,'
            '"interval_ms":10,"probes":"","warnings":[]},' % (t0, t0 + 10**12))
    f.write('"tasks":[' + ",".join('{"job":"%s","replica":0,"index":%d}' % (j, i)
                                   for j, i in (("ps", 0), ("ps", 1), ("worker", 0), ("worker", 1))) + '],')
    procs = []
    for p, task in enumerate(("ps:0", "ps:1", "worker:0", "worker:1")):
        procs.append('{"task":"%s","pid":%d,"pod":"","pod_uid":"","container":"","qos":"","cgroup":"",'
                     '"cpuset":"","cpu_limit":-1,"quota_us":-1,"period_us":0,"cpuset_cpus":2,'
                     '"host_cpus":2,"first_ns":%d,"last_ns":%d,"exited":false}' % (task, 100 + p, t0, t0 + 10**12))
    f.write('"processes":[' + ",".join(procs) + '],')
    f.write('"process_sample_columns":["ts_ns","process","threads","runnable","cpu_ns","voluntary",'
            '"involuntary","nr_periods","nr_throttled","throttled_ns"],"process_samples":[')
    f.write(",".join("[%d,%d,64,1,%d,0,0,0,0,0]" % (t0 + k * 10**7, p, k * 10**6)
                     for k in range(1000) for p in range(4)))
    f.write('],"thread_sample_columns":["ts_ns","process","tid","name","state","cpu_ns",'
            '"voluntary","involuntary"],"thread_samples":[')
    target, first, k = mb << 20, True, 0
    while f.tell() < target:
        rows = []
        for p in range(4):
            for t in range(64):
                rows.append('[%d,%d,%d,"grpc_global_tim","S",%d,%d,%d]'
                            % (t0 + k * 10**7, p, 1000 + p * 100 + t, k * 10**5, k, k))
        f.write(("" if first else ",") + ",".join(rows))
        first, k = False, k + 1
    f.write("]}")
PY
ls -l "$dir/big.tfdiag.json" | awk '{printf "bundle: %.1f MiB\n", $5 / 1048576}'
/usr/bin/time -v "$TFDIAG" analyze --no-progress -f json -o "$dir/out.json" "$dir/big.tfdiag.json" \
  2> "$dir/time.txt" || { cat "$dir/time.txt"; exit 1; }
grep -E "Maximum resident set size|Elapsed \(wall clock\)|User time" "$dir/time.txt"
