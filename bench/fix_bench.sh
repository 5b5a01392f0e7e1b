#!/usr/bin/env bash
# Issue 47: `tfdiag fix` against `tfdiag analyze` on the same manifest with one large mapping.
# A TFJob (samples/job.yaml's shape) whose metadata.annotations hold KEYS keys (default
# 200,000; KEYS="10000 40000 200000" for several sizes), generated into bench/data/. RUNS rounds
# (default 5), each running analyze then fix --cpus 4 once (so a drift in the machine's speed
# falls on both); medians of CPU time (user+sys, /usr/bin/time) and wall time, and the ratio
# fix/analyze of the medians (target: at most 2). CPU time is the figure to quote on a shared
# machine: wall time moves with other users' load.
# Usage: bench/fix_bench.sh [BUILD_DIR]
set -euo pipefail
export LC_ALL=C
BUILD=${1:-build}
RUNS=${RUNS:-5}
SNAP=$(mktemp -d)
trap 'rm -rf "$SNAP"' EXIT
cp "$BUILD/tfdiag" "$SNAP/tfdiag"
mkdir -p bench/data

median() { sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }

printf '%-28s %8s | %-18s | %-18s | %s\n' input MB "analyze cpu/wall" "fix cpu/wall" "fix/analyze cpu"
for keys in ${KEYS:-200000}; do
  f=bench/data/fix_annotations_${keys}.yaml
  if [ ! -s "$f" ]; then
    {
      printf 'apiVersion: kubeflow.org/v1\nkind: TFJob\nmetadata:\n  name: hot-ps\n  annotations:\n'
      awk -v n="$keys" 'BEGIN {for (i = 0; i < n; i++) printf "    note-%06d: v%d\n", i, i}'
      sed -n '/^spec:/,$p' samples/job.yaml
    } >"$f.tmp" && mv "$f.tmp" "$f"
  fi
  : >"$SNAP/a" && : >"$SNAP/f"
  for ((r = 0; r < RUNS; r++)); do
    cat "$f" >/dev/null
    /usr/bin/time -o "$SNAP/t" -f '%U %S %e' "$SNAP/tfdiag" analyze "$f" >/dev/null 2>&1 || true
    awk '{print $1 + $2, $3}' "$SNAP/t" >>"$SNAP/a"
    /usr/bin/time -o "$SNAP/t" -f '%U %S %e' "$SNAP/tfdiag" fix --cpus 4 "$f" >/dev/null 2>&1
    awk '{print $1 + $2, $3}' "$SNAP/t" >>"$SNAP/f"
  done
  ac=$(cut -d' ' -f1 "$SNAP/a" | median) aw=$(cut -d' ' -f2 "$SNAP/a" | median)
  fc=$(cut -d' ' -f1 "$SNAP/f" | median) fw=$(cut -d' ' -f2 "$SNAP/f" | median)
  printf '%-28s %8.1f | %7.2fs %7.2fs | %7.2fs %7.2fs | %.2fx\n' "$(basename "$f")" \
    "$(($(stat -c %s "$f") / 1000))e-3" "$ac" "$aw" "$fc" "$fw" "$(awk -v a="$ac" -v f="$fc" \
    'BEGIN {print (a > 0 ? f / a : 0)}')"
done
