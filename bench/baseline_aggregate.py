#!/usr/bin/env python3
"""What users do today: json.load the whole timeline, then aggregate op time per PS task.

Usage: baseline_aggregate.py FILE   (plain or .gz). Prints busy time (sum of op durations) and
op count per PS task, like a notebook would before anyone writes a streaming tool.
"""
import collections
import gzip
import json
import re
import sys


def main(path):
    opener = gzip.open if open(path, "rb").read(2) == b"\x1f\x8b" else open
    with opener(path, "rt") as f:
        trace = json.load(f)
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    pid_task = {}
    for e in events:
        if e.get("ph") == "M" and e.get("name") == "process_name":
            m = re.match(r"/job:(\w+)/replica:\d+/task:(\d+)", e.get("args", {}).get("name", ""))
            if m:
                pid_task[e["pid"]] = "%s:%s" % m.groups()
    op_time = collections.Counter()
    ops = collections.Counter()
    for e in events:
        if e.get("ph") == "X":
            task = pid_task.get(e.get("pid"))
            if task and task.startswith("ps:"):
                op_time[task] += float(e.get("dur", 0))
                ops[task] += 1
    total = sum(op_time.values()) or 1
    for task in sorted(op_time):
        print("%s ops=%d op_time_us=%.0f share=%.1f%%" % (task, ops[task], op_time[task],
                                                          100 * op_time[task] / total))


if __name__ == "__main__":
    main(sys.argv[1])
