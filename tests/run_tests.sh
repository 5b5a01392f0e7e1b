#!/usr/bin/env bash
# make test (issue 47): the whole suite, then the load-gated live tests, then a ledger of every
# test that was not judged and why.
#
#   1. ctest without the `live` label, TEST_JOBS at a time (default 2);
#   2. the `live` tests (tests/CMakeLists.txt), one at a time with nothing beside them. A live
#      test that skips because the machine was too loaded (its reason starts with "machine too
#      loaded", kTooLoaded in tests/test_util.h) is run again, up to LIVE_TRIES times in all
#      (default 3), each time after waiting until other work uses at most LIVE_QUIET_CORES cores
#      (default 0.3, /proc/stat, two 2 s looks in a row) or LIVE_WAIT_S seconds (default 240)
#      have passed. No wait or retry starts once the live step has run LIVE_BUDGET_S seconds
#      (default 1800): the whole of `make test` stays under the suite + 30 minutes + one test.
#   3. the ledger: each skipped test and each part of a test left out (NoteNotRun), with its
#      reason, then each live test's verdict: passed, FAILED, or not judged and why.
#
# Exit status: non-zero when a test failed; with CI=true also when a live test could not be
# judged (skipped on every try, whatever the reason), naming it and its reason.
# Usage: tests/run_tests.sh BUILD_DIR
set -u
build=$(cd "${1:-build}" && pwd) || exit 2
jobs=${TEST_JOBS:-2}
tries=${LIVE_TRIES:-3}
wait_s=${LIVE_WAIT_S:-240}
quiet=${LIVE_QUIET_CORES:-0.3}
budget=${LIVE_BUDGET_S:-1800}
ledger=$build/test-ledger.tsv
: >"$ledger"
export TFDIAG_TEST_LEDGER=$ledger

# Cores the whole machine kept busy over `s` seconds (/proc/stat's first line: user, nice,
# system, irq, softirq and steal; proc(5)). This script sleeps meanwhile: it is other work.
busy_cores() {
  local s=$1 a b
  a=$(awk '/^cpu /{print $2+$3+$4+$7+$8+$9; exit}' /proc/stat)
  sleep "$s"
  b=$(awk '/^cpu /{print $2+$3+$4+$7+$8+$9; exit}' /proc/stat)
  awk -v a="$a" -v b="$b" -v s="$s" -v hz="$(getconf CLK_TCK)" \
    'BEGIN{printf "%.2f", (b-a)/hz/s}'
}

# Waits until two 2 s looks in a row see at most $quiet cores busy, or $wait_s seconds passed;
# prints what it saw.
wait_quiet() {
  local deadline=$((SECONDS + wait_s)) calm=0 c
  ((deadline > live_end)) && deadline=$live_end
  while ((SECONDS < deadline)); do
    c=$(busy_cores 2)
    if awk -v c="$c" -v q="$quiet" 'BEGIN{exit !(c <= q)}'; then
      calm=$((calm + 1))
      ((calm >= 2)) && { echo "quiet ($c cores busy)"; return 0; }
    else
      calm=0
    fi
  done
  echo "still busy after ${wait_s} s (${c:-?} cores busy)"
  return 1
}

echo "== ctest: all but the live tests (-j $jobs)"
(cd "$build" && ctest --output-on-failure -LE live -j "$jobs")
rc=$?

echo "== ctest: the live tests, one at a time (up to $tries tries each on a loaded machine)"
mapfile -t live < <(cd "$build" && ctest -N -L live | sed -n 's/^ *Test *#[0-9]*: //p')
live_end=$((SECONDS + budget))
verdicts=()
not_judged=()
failed_live=0
for t in "${live[@]}"; do
  verdict=""
  for ((try = 1; try <= tries; try++)); do
    one=$(mktemp)
    TFDIAG_TEST_LEDGER=$one bash -c "cd '$build' && ctest --output-on-failure -R '^${t//./\\.}\$'"
    trc=$?
    why=$(awk -F'\t' '$2 == "skipped" {print $3}' "$one" | tail -n 1)
    rm -f "$one"
    if ((trc != 0)); then
      verdict="FAILED (try $try)"
      failed_live=$((failed_live + 1))
      break
    fi
    if [ -z "$why" ]; then
      verdict="passed (try $try)"
      break
    fi
    verdict="not judged after $try tr$( ((try == 1)) && echo y || echo ies): $why"
    case $why in
      "machine too loaded"*) ;;
      *) break ;;  # not the load: another try would skip again
    esac
    if ((try < tries && SECONDS >= live_end)); then
      verdict="$verdict (the live step's ${budget} s were spent: not tried again)"
      break
    fi
    if ((try < tries)); then
      echo "== $t: $why; waiting for a quiet machine (at most ${wait_s} s)"
      echo "== $t: $(wait_quiet)"
    fi
  done
  case $verdict in
    "not judged"*)
      not_judged+=("$t: $verdict")
      printf '%s\tnot judged\t%s\n' "$t" "${verdict#not judged }" >>"$ledger"
      ;;
  esac
  verdicts+=("$t: $verdict")
done

echo
echo "== ledger: tests and parts of tests not judged, and why ($ledger)"
if [ -s "$ledger" ]; then
  awk -F'\t' '{printf "  %-9s %s: %s\n", $2, $1, $3}' "$ledger"
else
  echo "  none"
fi
echo "== live tests"
for v in "${verdicts[@]}"; do echo "  $v"; done

((failed_live > 0)) && rc=1
if [ "${CI:-}" = true ] && ((${#not_judged[@]} > 0)); then
  echo "CI: ${#not_judged[@]} live test(s) could not be judged, which CI does not accept:" >&2
  for v in "${not_judged[@]}"; do echo "  $v" >&2; done
  ((rc == 0)) && rc=1
fi
exit "$rc"
