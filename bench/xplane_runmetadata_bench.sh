#!/usr/bin/env bash
# Text RunMetadata memory benchmark (issue 17): writes a binary RunMetadata of about SIZE_MB with
# the simulator, prints it as protobuf text format with `protoc --decode` (what str(run_metadata)
# writes), then measures `tfdiag analyze` on the text file and on the binary one in one run:
# wall time and peak RSS (GNU time), and peak RSS / file size. BEFORE=path/to/an/older/tfdiag adds
# the same measurements for that binary (e.g. one that parsed text files whole).
# Usage: bench/xplane_runmetadata_bench.sh [BUILD_DIR] [SIZE_MB]   (defaults: build 50)
set -euo pipefail
BUILD=${1:-build}
SIZE_MB=${2:-50}
SRC=$(cd "$(dirname "$0")/.." && pwd)
WORK=${TMPDIR:-/tmp}/tfdiag-rm-bench.$$
mkdir -p "$WORK"
trap 'rm -rf "$WORK"' EXIT

# About 207 KB of binary RunMetadata per step of the default hot-ps job (1.24 GB for 6000 steps).
STEPS=$((SIZE_MB * 1000 / 207))
echo "simulating hot-ps, $STEPS steps -> $WORK/md.pb"
"$BUILD/tfdiag" simulate hot-ps --steps "$STEPS" --format runmetadata -o "$WORK/md.pb"
protoc -I "$SRC" --decode=tensorflow.RunMetadata "$SRC/collectors/runmetadata/run_metadata.proto" \
  < "$WORK/md.pb" > "$WORK/md.pbtxt"
BIN_BYTES=$(stat -c %s "$WORK/md.pb")
TXT_BYTES=$(stat -c %s "$WORK/md.pbtxt")
DEVICES=$(grep -c '^  dev_stats {' "$WORK/md.pbtxt" || true)
LARGEST=$(awk '/^  dev_stats \{/{n=0} {n+=length($0)+1} /^  \}/{if(n>m)m=n} END{print m}' "$WORK/md.pbtxt")
echo "binary: $BIN_BYTES bytes; text: $TXT_BYTES bytes, $DEVICES dev_stats blocks, largest $LARGEST bytes"

measure() {  # label binary file
  /usr/bin/time -f "%e %M" -o "$WORK/t" "$2" analyze --no-progress -j 1 -f json -o "$WORK/r.json" "$3"
  read -r S KB < "$WORK/t"
  python3 -c "import sys; s,kb,b=float(sys.argv[1]),float(sys.argv[2]),int(sys.argv[3]); \
print(f'{sys.argv[4]}: {s:.2f} s, peak RSS {kb/1024:.0f} MiB ({100*kb*1024/b:.1f}% of the file)')" \
    "$S" "$KB" "$(stat -c %s "$3")" "$1"
}
measure "tfdiag analyze md.pbtxt" "$BUILD/tfdiag" "$WORK/md.pbtxt"
measure "tfdiag analyze md.pb" "$BUILD/tfdiag" "$WORK/md.pb"
if [ -n "${BEFORE:-}" ]; then
  measure "before ($BEFORE) md.pbtxt" "$BEFORE" "$WORK/md.pbtxt"
fi
