#!/usr/bin/env bash
# The cost of `tfdiag attach` (eBPF probes on) to the job it watches, precise enough to judge a
# 3% target on a noisy 2-core machine. The same psload hot-shard job (2 PS x 4 workers, hdfs
# input, uncapped so that the job is CPU-bound and every byte is a socket event for the probes;
# HDFS_MBPS=400 caps it) runs PAIRS times without and with attach, in one
# invocation, interleaved ABBA (pair k runs plain first when k is even, attach first when odd)
# so that drift in the machine's load falls on both sides alike. Per run:
#   - throughput: the sum of the workers' steps_per_s (their summaries);
#   - job CPU per step: user + system CPU of every task of the job (/usr/bin/time on
#     run_job.sh, which waits for all of them) over the steps of all workers. The probes run in
#     the context of the job's threads, so their kernel time is charged here.
# Each pair gives a ratio (with / without); the result is the median ratio with a bootstrap 95%
# interval of the median, and the mean. Also the agent's own CPU (user + system) and peak RSS,
# and the load average before each run (other users of the machine show there).
# Other users' builds on a shared 2-core machine swamp a few-percent effect, so the bench runs
# in a cgroup v1 cpu group with the highest cpu.shares (job and agent alike, as on a node where
# both compete for the pod's CPUs), unless PRIORITY=0 or there is no /sys/fs/cgroup/cpu.
# Usage: bench/attach_overhead.sh [PAIRS=10] [SECONDS=5]   (as root; build first)
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
pairs="${1:-10}" secs="${2:-5}"
bin="$here/build/tfdiag"
[[ -x "$bin" && -x "$here/build/psload" ]] || { echo "build first (make)" >&2; exit 2; }
[[ $(id -u) == 0 ]] || { echo "attach_overhead.sh: run as root (eBPF probes)" >&2; exit 2; }
[[ -x /usr/bin/time ]] || { echo "attach_overhead.sh: needs /usr/bin/time" >&2; exit 2; }
work="$(mktemp -d /tmp/attach_overhead.XXXXXX)"
job="ovh$$"                                # the job's name (HOSTNAME of its tasks)
base_port=$((24000 + ($$ % 500) * 10))     # away from other users' default ports
hdfs_port=$((base_port + 8))
attach_delay=0.3                           # attach starts this long after the job
hdfs_mbps="${HDFS_MBPS:-0}"                # hdfs cap per connection; 0: none (CPU-bound job)

run() {  # mode tag -> "steps_per_s cpu_s steps load1 wall_s"
  local out="$work/$1-$2" load
  mkdir -p "$out"
  load="$(cut -d' ' -f1 /proc/loadavg)"
  /usr/bin/time -f "%U %S %e" -o "$out/job.time" \
    "$here/samples/psload/run_job.sh" --job "$job" --placement hot --ps 2 --workers 4 \
    --duration "$secs" --hdfs --hdfs-port "$hdfs_port" --hdfs-rate-mbps "$hdfs_mbps" \
    --base-port "$base_port" --out "$out" >/dev/null 2>"$out/run_job.err" &
  local pid=$!
  if [[ $1 == attach ]]; then
    sleep "$attach_delay"
    # This job's tasks only (other users may run psload jobs): the children of run_job.sh,
    # itself the child of /usr/bin/time.
    local sh args=()
    sh="$(pgrep -P "$pid")"
    for p in $(pgrep -P "$sh"); do args+=(--pid "$p"); done
    /usr/bin/time -f "%U %S %M %e" -o "$out/agent.time" "$bin" attach "${args[@]}" \
      --duration "$((secs + 3))s" --hdfs-port "$hdfs_port" -o "$out/run.tfdiag.json" \
      2>"$out/attach.err" &
    local agent=$!
  fi
  wait "$pid"
  if [[ $1 == attach ]]; then
    wait "$agent" || { echo "attach failed: $(cat "$out/attach.err")" >&2; exit 1; }
    grep -q '"probes":"sched(' "$out/run.tfdiag.json" ||
      { echo "attach ran without the eBPF probes: $(cat "$out/attach.err")" >&2; exit 1; }
  fi
  python3 - "$out" "$load" <<'PY'
import glob, json, sys
out, load = sys.argv[1], sys.argv[2]
ws = [json.load(open(f)) for f in glob.glob(out + "/worker-*.json")]
u, s, e = open(out + "/job.time").read().split()[-3:]
print(sum(w["steps_per_s"] for w in ws), float(u) + float(s), sum(w["steps"] for w in ws), load,
      float(e))
PY
}

cg=""
if [[ "${PRIORITY:-1}" != 0 && -w /sys/fs/cgroup/cpu/cgroup.procs ]]; then
  cg="/sys/fs/cgroup/cpu/tfdiag_bench_$$"
  mkdir "$cg"
  echo 262144 >"$cg/cpu.shares"
  echo $$ >"$cg/cgroup.procs"  # this shell: every run below inherits the group
  trap 'echo $$ >/sys/fs/cgroup/cpu/cgroup.procs; rmdir "$cg"' EXIT
fi
echo "attach_overhead: $pairs pairs x ${secs} s, hdfs cap ${hdfs_mbps} Mbit/s, $(nproc) CPUs;" \
  "cgroup ${cg:-none}; runs in $work" >&2
: >"$work/results"
for ((k = 0; k < pairs; k++)); do
  if ((k % 2 == 0)); then order=(plain attach); else order=(attach plain); fi
  for mode in "${order[@]}"; do
    echo "$k $mode $(run "$mode" "$k")" >>"$work/results"
  done
  tail -2 "$work/results" | sort -k2 | tr '\n' ' ' | sed 's/$/\n/' >&2
done

python3 - "$work" "$attach_delay" "$secs" "$(nproc)" <<'PY'
import glob, random, statistics, sys
work, delay, secs, ncpu = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
runs = {}
for line in open(work + "/results"):
    k, mode, sps, cpu, steps, load, wall = line.split()
    runs.setdefault(int(k), {})[mode] = (float(sps), float(cpu) / float(steps) * 1e6, float(load),
                                         float(cpu) / float(wall) / ncpu)
pairs = [r for r in runs.values() if len(r) == 2]
def summary(name, ratios, lower_is_better):
    ratios = sorted(ratios)
    med = statistics.median(ratios)
    rng = random.Random(6)
    boot = sorted(statistics.median(rng.choices(ratios, k=len(ratios))) for _ in range(4000))
    lo, hi = boot[int(0.025 * len(boot))], boot[int(0.975 * len(boot)) - 1]
    cost = (lambda r: 100 * (r - 1)) if lower_is_better else (lambda r: 100 * (1 - r))
    print(f"{name}: median ratio {med:.4f} -> cost {cost(med):+.2f}% "
          f"[{cost(med) / (1 - delay / secs):+.2f}% scaled to a fully probed run] "
          f"(95% CI {min(cost(lo), cost(hi)):+.2f}% .. {max(cost(lo), cost(hi)):+.2f}%; "
          f"mean {cost(statistics.mean(ratios)):+.2f}%; pairs range "
          f"{min(map(cost, ratios)):+.1f}% .. {max(map(cost, ratios)):+.1f}%)")
plain = [p["plain"][0] for p in pairs]
with_ = [p["attach"][0] for p in pairs]
shares = [p[m][3] for p in pairs for m in p]
print(f"pairs: {len(pairs)} x {secs:.0f} s, ABBA order; load average (1 min, includes the job) "
      f"before runs {min(p[m][2] for p in pairs for m in p):.2f} .. "
      f"{max(p[m][2] for p in pairs for m in p):.2f}; the job's share of the machine's CPU "
      f"{100 * min(shares):.0f}% .. {100 * max(shares):.0f}% (the rest went to others)")
print(f"job throughput: median {statistics.median(plain):.0f} steps/s without attach, "
      f"{statistics.median(with_):.0f} with")
summary("slowdown (throughput)", [p["attach"][0] / p["plain"][0] for p in pairs], False)
summary("job CPU per step      ", [p["attach"][1] / p["plain"][1] for p in pairs], True)
print(f"  (job CPU per step: median {statistics.median(p['plain'][1] for p in pairs):.0f} us "
      f"without, {statistics.median(p['attach'][1] for p in pairs):.0f} us with; attach starts "
      f"{delay} s into each {secs:.0f} s run, so ~{100 * delay / secs:.0f}% of a run is unprobed)")
cpu, rss, wall = [], [], []
for f in sorted(glob.glob(work + "/attach-*/agent.time")):
    u, s, m, e = open(f).read().split()[-4:]
    cpu.append(float(u) + float(s)); rss.append(int(m)); wall.append(float(e))
print(f"agent CPU: median {statistics.median(cpu):.3f} s over {statistics.median(wall):.1f} s "
      f"= {100 * statistics.median(c / w for c, w in zip(cpu, wall)):.2f}% of one core; "
      f"peak RSS {max(rss) / 1024:.1f} MiB")
print(f"runs in {work}")
PY
