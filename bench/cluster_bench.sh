#!/usr/bin/env bash
# The cluster-mode benchmark (issue 16): a 20 PS + 200 worker job on 40 nodes over 1 h at 15 s,
# plus 10 unrelated 4-pod jobs and a 5-pod job, backfilled into a real Prometheus (Debian's
# prometheus + promtool) as the kubelet's cAdvisor and kube-state-metrics v2 export them;
# `tfdiag analyze --prometheus` run 3 times on the big job and once on the 5-pod job, with wall
# time and peak RSS from /usr/bin/time, queries and bytes from its JSON. Prints a table (and
# writes it to $TFDIAG_BENCH_OUT when set). Usage: bench/cluster_bench.sh [build/tests]
set -euo pipefail
BUILD=${1:-build/tests}  # where tfdiag_tests is
exec "$BUILD/tfdiag_tests" --gtest_also_run_disabled_tests \
  --gtest_filter='ClusterBench.DISABLED_Job20Ps200WorkersOver1h'
