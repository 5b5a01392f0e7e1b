#!/usr/bin/env python3
"""tfdiag's predictions on held-out jobs of a second independent generator (issue 44, "held-out
jobs from a generator tfdiag has never seen"): jobs drawn by gen2jobs.draw, simulated by gen2sim
(written apart from tfdiag and the other twin generators), each finding against its fixed twin,
and the scaling outlook against the same job simulated at 2x and 4x the workers.

Usage: run_gen2.py TFDIAG [--set SET] [--seeds A,B,..] [--json OUT] [--cache DIR]
                          [--outlook-max-workers N] [--no-outlook]
  --set dev (default) runs DEV_SEEDS, used to make the generator and harness work; --set report
  runs REPORT_SEEDS (spent: reported in session 22, tuned on since), --set report2 REPORT2_SEEDS
  (spent: reported in session 23), --set report3 REPORT3_SEEDS (spent: reported in session 24), --set report4
  REPORT4_SEEDS (spent: reported in session 25), --set report5 REPORT5_SEEDS (spent: reported in session 26),
  --set report6 REPORT6_SEEDS (spent: reported in session 27),
  --set report7 REPORT7_SEEDS (spent: reported in session 28),
  --set report8 REPORT8_SEEDS (spent: reported in session 29),
  --set report9 REPORT9_SEEDS (spent: reported in session 30),
  --set report10 REPORT10_SEEDS (spent: reported in session 31),
  --set report11 REPORT11_SEEDS (spent: reported in session 32),
  --set report12 REPORT12_SEEDS (spent: reported in session 33),
  --set report13 REPORT13_SEEDS (spent: reported in session 35),
  --set report14 REPORT14_SEEDS (3000-3031; spent: reported in session 36),
  --set report15 REPORT15_SEEDS (3200-3231; spent: reported in session 37),
  --set report16 REPORT16_SEEDS (3400-3431; spent: reported in session 38),
  --set report17 REPORT17_SEEDS (3600-3631; spent: reported in session 39),
  --set report18 REPORT18_SEEDS (3800-3831; spent: reported in session 40),
  --set report19 REPORT19_SEEDS (4000-4031; spent: reported in session 41),
  --set report20 REPORT20_SEEDS (4200-4231; spent: reported in session 42),
  --set report21 REPORT21_SEEDS (4400-4431; spent: reported in session 43),
  --set report22 REPORT22_SEEDS (4600-4631; spent: reported in session 44),
  --set report23 REPORT23_SEEDS (4800-4831; spent: reported in session 45),
  --set report24 REPORT24_SEEDS (5200-5231; held out for session 46).
  --cache DIR keeps each job's capture and its twins' figures (gen2sim is deterministic).
  The outlook is checked on jobs of at most --outlook-max-workers captured workers (default 32:
  their 4x is simulated).
Prints each job's row and the summary, scored exactly as bench/twins/indep/run_indep.py scores the
independent suite (its finding_row, fix_first_verdict, summarize and fmt_summary), then the
outlook's figures: its steps/s at 2x and 4x (as is, and after Fix first) within 15% of the
simulated sweep, and whether the saturation point (scaling efficiency under 60%) falls in the same
bracket (up to 2x, 2x-4x, beyond 4x) as the simulated one. The harness is
bench/twins/indep/generator_suite.py, shared with the other generators' suites. Standard library
only; exit 0.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "indep"))
import gen2jobs  # noqa: E402
import gen2sim  # noqa: E402
import generator_suite  # noqa: E402  (run_indep.py's scoring; no simulator of another suite)


def main(argv):
    return generator_suite.main(argv, __doc__, "gen2", gen2jobs, gen2sim,
                                gen2jobs.SETS,
                                outlook_max=32)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
