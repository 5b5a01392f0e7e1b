#!/bin/sh
# The whole CLI under ASan/UBSan (build-fuzz/tfdiag, `make fuzz`) over the fuzz corpora: every
# trace, profile and bundle seed through `tfdiag analyze` in text and JSON, every manifest seed
# through `tfdiag analyze` and `tfdiag fix`. A seed may be rejected (exit 2, the message naming
# the file) or raise findings (exit 1); a sanitizer report, a signal or an internal error (3)
# fails the smoke, with the command and the sanitizer's output.
#
# Usage: fuzz/smoke.sh TFDIAG CORPUS_DIR... (directories named corpus_manifest hold manifests)
set -u
tfdiag=$1
shift
# A sanitizer finding exits 86 (ASan and UBSan), also for a leak at exit.
export ASAN_OPTIONS="exitcode=86:detect_leaks=1:abort_on_error=0:${ASAN_OPTIONS:-}"
supp=$(dirname "$0")/ubsan.supp
export UBSAN_OPTIONS="halt_on_error=1:exitcode=86:print_stacktrace=1:suppressions=$supp:${UBSAN_OPTIONS:-}"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
runs=0
failed=0
run() {
  runs=$((runs + 1))
  "$tfdiag" "$@" >/dev/null 2>"$log"
  rc=$?
  case $rc in
    0 | 1 | 2) ;;
    *)
      failed=$((failed + 1))
      echo "smoke: FAILED (exit $rc): tfdiag $*" >&2
      head -c 4000 "$log" >&2
      ;;
  esac
}
for dir in "$@"; do
  for f in "$dir"/*; do
    [ -f "$f" ] || continue
    case $dir in
      *corpus_manifest)
        run analyze "$f"
        run fix --cpus 2 --memory 1Gi "$f"
        ;;
      *)
        run analyze "$f"
        run analyze --format json "$f"
        ;;
    esac
  done
done
echo "smoke: $runs runs of $tfdiag, $failed failed"
[ "$failed" -eq 0 ]
