#!/usr/bin/env python3
"""tfdiag's predictions on held-out jobs of a third independent generator (issue 44, "held-out
jobs from a generator tfdiag has never seen"): jobs drawn by gen3jobs.draw and simulated by
gen3sim (written apart from tfdiag, indepsim and gen2; see its docstring for the mechanisms), each
finding against its fixed twin (the same job and seed, the fix applied as its text says), the best
single fix over every candidate fix, and the scaling outlook against the job simulated at 2x and
4x the workers.

Usage: run_gen3.py TFDIAG [--set SET] [--seeds A,B,..] [--json OUT] [--cache DIR]
                          [--outlook-max-workers N] [--no-outlook]
  --set dev (default) runs DEV_SEEDS (200-219), used to make the generator and harness work;
  --set report runs REPORT_SEEDS (700-731; spent: reported in session 23); --set report2 runs
  REPORT2_SEEDS (900-931; spent: reported in session 24); --set report3 runs REPORT3_SEEDS
  (1100-1131; spent: reported in session 25); --set report4 runs REPORT4_SEEDS (1300-1331; spent: reported in session 26); --set report5
  runs REPORT5_SEEDS (1500-1531; spent: reported in session 27); --set report6 runs REPORT6_SEEDS
  (1700-1731; spent: reported in session 28); --set report7 runs REPORT7_SEEDS
  (1900-1931; spent: reported in session 29); --set report8 runs REPORT8_SEEDS
  (2100-2131; spent: reported in session 30); --set report9 runs REPORT9_SEEDS
  (2300-2331; spent: reported in session 31); --set report10 runs REPORT10_SEEDS
  (2500-2531; spent: reported in session 32); --set report11 runs REPORT11_SEEDS
  (2700-2731; spent: reported in session 33); --set report12 runs REPORT12_SEEDS
  (2900-2931; spent: reported in session 35); --set report13 runs REPORT13_SEEDS
  (3100-3131; spent: reported in session 36); --set report14 runs REPORT14_SEEDS
  (3300-3331; spent: reported in session 37); --set report15 runs REPORT15_SEEDS
  (3500-3531; spent: reported in session 38); --set report16 runs REPORT16_SEEDS
  (3700-3731; spent: reported in session 39); --set report17 runs REPORT17_SEEDS
  (3900-3931; spent: reported in session 40); --set report18 runs REPORT18_SEEDS
  (4100-4131; spent: reported in session 41); --set report19 runs REPORT19_SEEDS
  (4300-4331; spent: reported in session 42); --set report20 runs REPORT20_SEEDS
  (4500-4531; spent: reported in session 43); --set report21 runs REPORT21_SEEDS
  (4700-4731; spent: reported in session 44); --set report22 runs REPORT22_SEEDS
  (4900-4931; spent: reported in session 45); --set report23 runs REPORT23_SEEDS
  (5300-5331; held out for session 46).
  --cache DIR keeps each job's capture and its twins' figures (gen3sim is deterministic for a spec).
  The outlook is checked on jobs of at most --outlook-max-workers captured workers (default 64:
  their 4x, 256 workers, is the largest job simulated).
Scored with bench/twins/indep/run_indep.py's functions (finding_row, fix_first_verdict, summarize,
fmt_summary, fmt_row), as run_gen2.py scores gen2: |error| of the predictions made, each
confidence label's calibration, range coverage, `Fix first` right, jobs with a >= 10% fix that get
a prediction, healthy jobs with a finding >= medium; then the outlook: its steps/s at 2x and 4x (as
is, and after Fix first) within 15% of the simulated sweep, and whether its saturation point
(efficiency under 60%) falls in the simulated bracket (up to 2x, 2x-4x, beyond 4x).
The harness is bench/twins/indep/generator_suite.py, shared with the other generators' suites.
Standard library only; exit 0 (the caller judges), 2 on bad usage.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "indep"))
import gen3jobs  # noqa: E402
import gen3sim  # noqa: E402
import generator_suite  # noqa: E402  (run_indep.py's scoring; no simulator of another suite)


def main(argv):
    return generator_suite.main(argv, __doc__, "gen3", gen3jobs, gen3sim,
                                gen3jobs.SETS,
                                outlook_max=64, max_workers=gen3jobs.MAX_WORKERS)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
