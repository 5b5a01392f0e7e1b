#!/usr/bin/env bash
# The node agent's own cost (issue 30 item 7): `tfdiag attach --serve` at its defaults (--interval
# 1s, --rescan 30s, eBPF probes on unless NO_BPF=1) on this node with 200 extra processes, 10 of
# them TF tasks (idle psload PS servers, each with its TF_CONFIG; the rest `sleep`), scraped every
# 15 s like Prometheus does. Side by side in one run:
#   A  the node without the agent for SECONDS: its busy CPUs (from /proc/stat) and load average;
#   B  the same with the agent for SECONDS: the node again, and the agent's own CPU (user +
#      system from /proc/PID/stat, which includes its rescans and the scrapes it serves), its
#      RSS at the end and peak RSS (VmHWM), and tfdiag_agent_environ_reads_total.
# The target is Beyla's published agent cost, 0.5% of a core.
# Usage: bench/agent_cost.sh [SECONDS=120]   (as root for eBPF; build first: tfdiag, psload)
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
secs="${1:-120}"
bin="$here/build/tfdiag" psload="$here/build/psload"
[[ -x "$bin" && -x "$psload" ]] || { echo "agent_cost.sh: build tfdiag and psload first" >&2; exit 2; }
work="$(mktemp -d /tmp/agent_cost.XXXXXX)"
pids=()
agent=""
cleanup() {
  [[ -n "$agent" ]] && kill "$agent" 2>/dev/null || true
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
tck="$(getconf CLK_TCK)"
node_busy() {  # "busy_ticks total_ticks" summed over CPUs (/proc/stat line cpu)
  awk '/^cpu /{b=$2+$3+$4+$7+$8+$9; t=b+$5+$6; print b, t}' /proc/stat
}
proc_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

base_port=$((25000 + ($$ % 500) * 12))
cluster="\"ps\":[" sep=""
for i in $(seq 0 9); do cluster+="$sep\"127.0.0.1:$((base_port + i))\"" sep=","; done
cluster+="]"
for i in $(seq 0 9); do
  TF_CONFIG="{\"cluster\":{$cluster},\"task\":{\"type\":\"ps\",\"index\":$i}}" \
    "$psload" >/dev/null 2>&1 &
  pids+=($!)
done
for i in $(seq 1 190); do sleep 100000 & pids+=($!); done
sleep 2
ncpu="$(nproc)"

measure_node() {  # seconds -> "busy_cpus load1"
  local b0 t0 b1 t1
  read -r b0 t0 < <(node_busy)
  sleep "$1"
  read -r b1 t1 < <(node_busy)
  echo "$(awk -v b=$((b1 - b0)) -v t=$((t1 - t0)) -v n="$ncpu" 'BEGIN{printf "%.3f", n*b/t}')" \
    "$(cut -d' ' -f1 /proc/loadavg)"
}

echo "agent_cost: $(date -u +%FT%TZ), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)," \
  "$(ls /proc | grep -c '^[0-9]') processes (200 ours, 10 TF tasks), ${secs} s per side"
read -r idle_busy idle_load < <(measure_node "$secs")

port=$((base_port + 11))
args=(attach --serve "127.0.0.1:$port" --node-name bench)
[[ "${NO_BPF:-0}" == 1 ]] && args+=(--no-bpf)
"$bin" "${args[@]}" 2>"$work/agent.err" &
agent=$!
for _ in $(seq 100); do
  curl -fs "http://127.0.0.1:$port/metrics" | grep -q 'replica_type="ps"' && break
  sleep 0.2
done
sleep 3  # past start-up (probe load, first scan)
a0="$(proc_ticks "$agent")"
(while sleep 15; do curl -fs -o /dev/null "http://127.0.0.1:$port/metrics" || true; done) &
scraper=$!
read -r agent_busy agent_load < <(measure_node "$secs")
a1="$(proc_ticks "$agent")"
kill "$scraper" 2>/dev/null || true
metrics="$(curl -fs "http://127.0.0.1:$port/metrics" || true)"
rss="$(awk '/VmRSS/{print $2}' "/proc/$agent/status")"
hwm="$(awk '/VmHWM/{print $2}' "/proc/$agent/status")"
tasks="$(grep -c '^tfdiag_task_up{.*replica_type="ps".*} 1' <<<"$metrics" || true)"
reads="$(awk '/^tfdiag_agent_environ_reads_total/{print $2}' <<<"$metrics")"
agent_pct="$(awk -v d=$((a1 - a0)) -v t="$tck" -v s="$secs" 'BEGIN{printf "%.2f", 100*d/t/s}')"
printf '%-34s %12s %8s\n' "" "node busy" "load1"
printf '%-34s %10s CPUs %8s\n' "A  without the agent" "$idle_busy" "$idle_load"
printf '%-34s %10s CPUs %8s\n' "B  with the agent" "$agent_busy" "$agent_load"
echo "agent: ${agent_pct}% of a core (user+system, ${secs} s, $tasks TF tasks seen," \
  "eBPF $([[ "${NO_BPF:-0}" == 1 ]] && echo off || echo on)), RSS $((rss / 1024)) MB," \
  "peak $((hwm / 1024)) MB, environ reads ${reads:-?}; target 0.5% (Beyla)"
grep -i "warning\|probe" "$work/agent.err" | head -3 || true
