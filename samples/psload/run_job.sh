#!/usr/bin/env bash
# Starts a psload PS/worker job on 127.0.0.1 the way a Kubeflow TFJob would: one process per
# task, each with TF_CONFIG and HOSTNAME=<job>-<type>-<index> in its environment. Waits for the
# workers to finish, then SIGTERMs the PS (and hdfs) tasks, as TFJob cleans up running PS pods.
# Prints the summary paths (one per line) on stdout; logs go to <out>/<task>.log.
set -euo pipefail

usage() {
  cat <<'EOF'
usage: samples/psload/run_job.sh [options] [-- extra psload flags for every task]
  --ps N                 PS tasks (2)
  --workers N            worker tasks (4)
  --placement P          balanced | hot (balanced)
  --duration S           worker run time, seconds (10)
  --steps N              worker step cap (none)
  --ps-threads N         tf_ps_rpc threads per PS (2)
  --worker-threads N     tf_intra_op threads per worker (1)
  --compute-us N         CPU microseconds of compute per step (1000)
  --rows-per-step N      embedding rows per step (512)
  --hdfs                 also start an hdfs input server; workers read from it each step
  --hdfs-port P          its port (9866)
  --hdfs-rate-mbps R     its per-connection cap, megabits/s (0 = none)
  --input-bytes-per-step N  bytes each worker reads per step (262144)
  --base-port P          first PS port; worker addresses follow the PS ones (22220)
  --job NAME             TFJob name, used in HOSTNAME (psload)
  --timeline             every PS and worker writes a TF1 timeline, <out>/<type>-<index>.timeline.json
  --out DIR              where summaries and logs go (a new /tmp/psload.XXXXXX)
  --bin PATH             psload binary ($PSLOAD, else build/psload beside this repo)
EOF
}

here="$(cd "$(dirname "$0")" && pwd)"
bin="${PSLOAD:-$here/../../build/psload}"
job=psload num_ps=2 num_workers=4 placement=balanced duration=10 steps="" base_port=22220
ps_threads=2 worker_threads=1 compute_us=1000 rows_per_step=512
hdfs=0 hdfs_port=9866 hdfs_rate=0 input_bytes=262144 out="" timeline=0
extra=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --ps) num_ps="$2"; shift 2 ;;
    --workers) num_workers="$2"; shift 2 ;;
    --placement) placement="$2"; shift 2 ;;
    --duration) duration="$2"; shift 2 ;;
    --steps) steps="$2"; shift 2 ;;
    --ps-threads) ps_threads="$2"; shift 2 ;;
    --worker-threads) worker_threads="$2"; shift 2 ;;
    --compute-us) compute_us="$2"; shift 2 ;;
    --rows-per-step) rows_per_step="$2"; shift 2 ;;
    --hdfs) hdfs=1; shift ;;
    --hdfs-port) hdfs_port="$2"; shift 2 ;;
    --hdfs-rate-mbps) hdfs_rate="$2"; shift 2 ;;
    --input-bytes-per-step) input_bytes="$2"; shift 2 ;;
    --base-port) base_port="$2"; shift 2 ;;
    --job) job="$2"; shift 2 ;;
    --timeline) timeline=1; shift ;;
    --out) out="$2"; shift 2 ;;
    --bin) bin="$2"; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    --) shift; extra=("$@"); break ;;
    *) echo "run_job.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
  esac
done
if [[ ! -x "$bin" ]]; then
  echo "run_job.sh: no psload binary at $bin (make psload builds it, or pass --bin)" >&2
  exit 2
fi
[[ -n "$out" ]] || out="$(mktemp -d /tmp/psload.XXXXXX)"
mkdir -p "$out"

# The cluster spec every task sees, as TFJob writes it (JSON lists of "host:port").
hosts_json() {  # first count
  local first=$1 count=$2 i sep="" s="["
  for ((i = 0; i < count; i++)); do s+="$sep\"127.0.0.1:$((first + i))\""; sep=","; done
  echo "$s]"
}
ps_json="$(hosts_json "$base_port" "$num_ps")"
worker_json="$(hosts_json $((base_port + num_ps)) "$num_workers")"
cluster="{\"ps\":$ps_json,\"worker\":$worker_json}"
common=(--placement="$placement" --ps-threads="$ps_threads" --worker-threads="$worker_threads"
        --compute-us="$compute_us" --rows-per-step="$rows_per_step")

servers=() workers=() summaries=()
stop_all() {
  local pid
  for pid in "${workers[@]}" "${servers[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
}
trap 'stop_all; wait; exit 130' INT TERM

start() {  # type index tf_config args...
  local type=$1 index=$2 tf_config=$3; shift 3
  local summary="$out/$type-$index.json"
  summaries+=("$summary")
  if [[ $timeline == 1 && $type != hdfs ]]; then set -- "$@" --timeline="$out/$type-$index.timeline.json"; fi
  TF_CONFIG="$tf_config" HOSTNAME="$job-$type-$index" \
    "$bin" "$@" --summary="$summary" ${extra[@]+"${extra[@]}"} >"$out/$type-$index.log" 2>&1 &
}

if [[ $hdfs == 1 ]]; then
  hdfs_cluster="{\"hdfs\":[\"127.0.0.1:$hdfs_port\"]}"
  start hdfs 0 "{\"cluster\":$hdfs_cluster,\"task\":{\"type\":\"hdfs\",\"index\":0}}" \
    --hdfs-rate-mbps="$hdfs_rate"
  servers+=($!)
fi
for ((i = 0; i < num_ps; i++)); do
  start ps "$i" "{\"cluster\":$cluster,\"task\":{\"type\":\"ps\",\"index\":$i}}" "${common[@]}"
  servers+=($!)
done
worker_flags=(--duration="$duration")
if [[ -n "$steps" ]]; then worker_flags+=(--steps="$steps"); fi
if [[ $hdfs == 1 ]]; then
  worker_flags+=(--hdfs="127.0.0.1:$hdfs_port" --input-bytes-per-step="$input_bytes")
fi
for ((i = 0; i < num_workers; i++)); do
  start worker "$i" "{\"cluster\":$cluster,\"task\":{\"type\":\"worker\",\"index\":$i}}" \
    "${common[@]}" "${worker_flags[@]}"
  workers+=($!)
done
echo "run_job.sh: $num_ps PS x $num_workers workers ($placement) in $out" >&2

failed=0
for pid in "${workers[@]}"; do wait "$pid" || failed=$((failed + 1)); done
for pid in "${servers[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
for pid in "${servers[@]}"; do wait "$pid" || failed=$((failed + 1)); done
trap - INT TERM

printf '%s\n' "${summaries[@]}"
if [[ $failed -gt 0 ]]; then
  echo "run_job.sh: $failed task(s) failed; see $out/*.log" >&2
  exit 1
fi
