#!/usr/bin/env bash
# The cost of `tfdiag attach` (eBPF probes on) to the job it watches: the same psload hot-shard
# job (2 PS x 4 workers, hdfs input) runs alternately without and with attach, ROUNDS times
# each, in one invocation; job throughput is the sum of the workers' steps_per_s (their
# summaries). Also the agent's own CPU (user + system s, and % of one core) and peak RSS
# (/usr/bin/time). Usage: bench/attach_overhead.sh [ROUNDS=3] [SECONDS=10]   (as root)
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
rounds="${1:-3}" secs="${2:-10}"
bin="$here/build/tfdiag"
[[ -x "$bin" && -x "$here/build/psload" ]] || { echo "build first (make)" >&2; exit 2; }
[[ $(id -u) == 0 ]] || { echo "attach_overhead.sh: run as root (eBPF probes)" >&2; exit 2; }
work="$(mktemp -d /tmp/attach_overhead.XXXXXX)"

job_steps() {  # dir -> sum of the workers' steps_per_s
  python3 - "$1" <<'PY'
import glob, json, sys
print(sum(json.load(open(f))["steps_per_s"] for f in glob.glob(sys.argv[1] + "/worker-*.json")))
PY
}

run() {  # mode round
  local out="$work/$1-$2"
  mkdir -p "$out"
  "$here/samples/psload/run_job.sh" --placement hot --ps 2 --workers 4 --duration "$secs" \
    --hdfs --hdfs-rate-mbps 400 --out "$out" >/dev/null 2>"$out/run_job.err" &
  local job=$!
  if [[ $1 == attach ]]; then
    sleep 0.5
    /usr/bin/time -f "%U %S %M %e" -o "$out/time" "$bin" attach --duration "$((secs + 5))s" \
      -o "$out/run.tfdiag.json" 2>"$out/attach.err" &
    local agent=$!
  fi
  wait "$job"
  if [[ $1 == attach ]]; then wait "$agent"; fi
  echo "$(job_steps "$out")"
}

declare -a base=() with=()
for ((r = 0; r < rounds; r++)); do
  base+=("$(run plain "$r")")
  with+=("$(run attach "$r")")
  echo "round $r: plain ${base[-1]} steps/s, with attach ${with[-1]} steps/s" >&2
done
python3 - "$work" "${base[*]}" "${with[*]}" "$rounds" <<'PY'
import glob, statistics, sys
work, base, with_, rounds = sys.argv[1], sys.argv[2].split(), sys.argv[3].split(), int(sys.argv[4])
b = statistics.mean(map(float, base)); w = statistics.mean(map(float, with_))
cpu, rss, wall = [], [], []
for f in sorted(glob.glob(work + "/attach-*/time")):
    u, s, m, e = open(f).read().split()[-4:]
    cpu.append(float(u) + float(s)); rss.append(int(m)); wall.append(float(e))
print(f"job throughput without attach: {b:.0f} steps/s (mean of {rounds})")
print(f"job throughput with attach:    {w:.0f} steps/s")
print(f"slowdown: {100 * (b - w) / b:+.1f}%  (target < 3%)")
print(f"agent CPU: {statistics.mean(cpu):.2f} s over {statistics.mean(wall):.1f} s "
      f"= {100 * statistics.mean(cpu) / statistics.mean(wall):.1f}% of one core; "
      f"peak RSS {max(rss) / 1024:.1f} MiB")
print(f"runs in {work}")
PY
