#!/usr/bin/env bash
# The eBPF probes' own kernel cost while `tfdiag attach` records a psload hot-shard job (2 PS x
# 4 workers, uncapped hdfs input): per program, events and ns per event from the kernel's BPF
# statistics (kernel.bpf_stats_enabled, switched on for the run and restored after; it adds
# two clock reads per event, so the figures are upper bounds). Programs named *_btf or *_raw
# are ours. Usage: bench/probe_cost.sh [SECONDS=6] [ATTACH_ARGS...]   (as root; build first)
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
secs="${1:-6}"
shift || true
bin="$here/build/tfdiag"
[[ -x "$bin" && -x "$here/build/psload" ]] || { echo "build first (make)" >&2; exit 2; }
[[ $(id -u) == 0 ]] || { echo "probe_cost.sh: run as root" >&2; exit 2; }
out="$(mktemp -d /tmp/probe_cost.XXXXXX)"
base_port=$((25000 + ($$ % 500) * 10))
old="$(sysctl -n kernel.bpf_stats_enabled)"
trap 'sysctl -q -w kernel.bpf_stats_enabled="$old"' EXIT
sysctl -q -w kernel.bpf_stats_enabled=1
"$here/samples/psload/run_job.sh" --placement hot --ps 2 --workers 4 --duration "$secs" --hdfs \
  --hdfs-port $((base_port + 8)) --base-port "$base_port" --out "$out" >/dev/null 2>&1 &
job=$!
sleep 0.3
args=()
for p in $(pgrep -P "$job"); do args+=(--pid "$p"); done
"$bin" attach "${args[@]}" --duration "$((secs + 2))s" --hdfs-port $((base_port + 8)) \
  -o "$out/run.tfdiag.json" "$@" 2>"$out/attach.err" &
agent=$!
# The probes count from when attach says it records (they load just before) to the read below.
until grep -q recording "$out/attach.err" 2>/dev/null; do sleep 0.02; done
start="$(cut -d' ' -f1 /proc/uptime)"
sleep "$(python3 -c "print($secs - 1.5)")"
bpftool prog show -j >"$out/progs.json"
end="$(cut -d' ' -f1 /proc/uptime)"
wait "$agent" "$job"
python3 - "$out/progs.json" "$start" "$end" <<'PY'
import json, sys
progs, secs = json.load(open(sys.argv[1])), float(sys.argv[3]) - float(sys.argv[2])
total = 0
for p in progs:
    n = p.get("name", "")
    if n.endswith(("_btf", "_raw")) and p.get("run_cnt"):
        total += p["run_time_ns"]
        print(f'{n:16} {p["run_cnt"]:>9} events {p["run_time_ns"] / p["run_cnt"]:6.0f} ns/event '
              f'{p["run_time_ns"] / 1e6:7.1f} ms')
print(f"all probes: {total / 1e6:.1f} ms of CPU in ~{secs:.1f} s = "
      f"{100 * total / 1e9 / secs:.2f}% of one core")
PY
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg); runs in $out"
