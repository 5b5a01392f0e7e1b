#!/usr/bin/env bash
# The step graph's memory (issue 29 against issues 17 and 19): peak RSS and wall time of
# `tfdiag analyze --no-progress -j 1 -f json` with two builds side by side, interleaved, on
#   - a 127 MB simulated hot-ps TF1 timeline (4 PS x 32 workers x 200 steps),
#   - a 141 MB simulated hot-ps XSpace (the default job, 3,545 steps),
# each run REPEAT times; prints one line per (input, build, run) and the best of each.
# Usage: bench/step_graph_memory.sh OLD_TFDIAG NEW_TFDIAG [REPEAT=3]
set -euo pipefail
OLD=${1:?old tfdiag binary}
NEW=${2:?new tfdiag binary}
REPEAT=${3:-3}
WORK=${TMPDIR:-/tmp}/tfdiag-step-graph-bench.$$
mkdir -p "$WORK"
trap 'rm -rf "$WORK"' EXIT
"$NEW" simulate hot-ps --ps 4 --workers 32 --steps 200 --seed 1 -o "$WORK/hot.json"
"$NEW" simulate hot-ps --steps 3545 --format xplane --seed 1 -o "$WORK/hot.xplane.pb"
for f in hot.json hot.xplane.pb; do
  bytes=$(stat -c %s "$WORK/$f")
  for r in $(seq "$REPEAT"); do
    for b in old new; do
      bin=$OLD
      [ "$b" = new ] && bin=$NEW
      /usr/bin/time -f "%e %M" -o "$WORK/t" "$bin" analyze --no-progress -j 1 -f json \
        -o "$WORK/out.json" "$WORK/$f"
      read -r s kb < "$WORK/t"
      echo "$f $bytes $b $r $s $kb"
    done
  done
done | tee "$WORK/runs"
python3 - "$WORK/runs" <<'PY'
import sys
best = {}
for line in open(sys.argv[1]):
    f, size, b, r, s, kb = line.split()
    k = (f, b)
    s, kb, size = float(s), int(kb), int(size)
    o = best.get(k, (1e9, 1 << 62, size))
    best[k] = (min(o[0], s), min(o[1], kb), size)
for (f, b), (s, kb, size) in sorted(best.items()):
    print(f"{f} {b}: {s:.2f} s, peak RSS {kb / 1024:.1f} MiB ({100 * kb * 1024 / size:.1f}% of the file)")
PY
