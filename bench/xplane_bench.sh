#!/usr/bin/env bash
# XSpace import benchmark (issue 17): writes an XSpace of about SIZE_MB with the simulator
# (one file, planes per device), then measures in one run
#   - `tfdiag analyze` on it: wall time and peak RSS (GNU time),
#   - the floor: libprotobuf ParseFromString of the whole file (bench/xplane_floor.cc),
# and prints the ratios (wall time tfdiag / floor; peak RSS / file size, goal < 30%).
# Usage: bench/xplane_bench.sh [BUILD_DIR] [SIZE_MB]   (defaults: build 1024)
set -euo pipefail
BUILD=${1:-build}
SIZE_MB=${2:-1024}
WORK=${TMPDIR:-/tmp}/tfdiag-xplane-bench.$$
mkdir -p "$WORK"
trap 'rm -rf "$WORK"' EXIT
FILE=$WORK/hot-ps.xplane.pb

# About 33 KB of XSpace per step of the default hot-ps job (measured on 400 steps).
STEPS=$(( SIZE_MB * 1000 / 33 ))
echo "simulating hot-ps, $STEPS steps -> $FILE"
/usr/bin/time -f "simulate: %e s, %M KB" "$BUILD/tfdiag" simulate hot-ps --steps "$STEPS" \
  --format xplane -o "$FILE"
BYTES=$(stat -c %s "$FILE")
echo "file: $BYTES bytes"

/usr/bin/time -f "%e %M" -o "$WORK/analyze.time" "$BUILD/tfdiag" analyze --no-progress -j 1 \
  -f json -o "$WORK/report.json" "$FILE"
/usr/bin/time -f "%e %M" -o "$WORK/floor.time" "$BUILD/xplane_floor" "$FILE" > "$WORK/floor.out"
read -r A_S A_KB < "$WORK/analyze.time"
read -r F_S F_KB < "$WORK/floor.time"
cat "$WORK/floor.out"
python3 - "$BYTES" "$A_S" "$A_KB" "$F_S" "$F_KB" <<'PY'
import sys
b, a_s, a_kb, f_s, f_kb = int(sys.argv[1]), *map(float, sys.argv[2:])
print(f"tfdiag analyze: {a_s:.2f} s, peak RSS {a_kb/1024:.0f} MiB ({100*a_kb*1024/b:.1f}% of the file)")
print(f"floor (read + ParseFromString): {f_s:.2f} s, peak RSS {f_kb/1024:.0f} MiB ({100*f_kb*1024/b:.1f}% of the file)")
print(f"wall time tfdiag / floor: {a_s/f_s:.2f}x")
PY
