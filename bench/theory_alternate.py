#!/usr/bin/python3
"""Two bench_theory executables (say, before and after a change) alternately in one run:
CPU time of BM_TheoryRhs/1/0 and /1/1 (one thread, g integrated out and sampled), the
order of the two swapped every round so that a change of load favours neither; prints
every round, the medians, ranges and the ratio old/new (docs/performance.md).

Usage: /usr/bin/python3 bench/theory_alternate.py OLD/bench_theory NEW/bench_theory [--rounds 7] [--min-time 0.5]
"""
import argparse
import json
import os
import statistics
import subprocess


def cpu_ms(binary, channel, min_time):
    out = subprocess.run([binary, f"--benchmark_filter=^BM_TheoryRhs/1/{channel}/", f"--benchmark_min_time={min_time}",
                          "--benchmark_format=json"], check=True, capture_output=True, text=True).stdout
    b = json.loads(out)["benchmarks"][0]
    assert b["time_unit"] == "ms", b["time_unit"]
    return b["cpu_time"]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("old")
    p.add_argument("new")
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--min-time", default="0.5")
    args = p.parse_args()
    print(f"load average at start: {os.getloadavg()}")
    times = {(who, ch): [] for who in ("old", "new") for ch in (0, 1)}
    for r in range(args.rounds):
        order = ("old", "new") if r % 2 == 0 else ("new", "old")
        for ch in (0, 1):
            for who in order:
                times[(who, ch)].append(cpu_ms(getattr(args, who), ch, args.min_time))
        print(f"round {r}: " + ", ".join(f"{who}/{ch} {v[-1]:.3f} ms" for (who, ch), v in times.items()), flush=True)
    for ch in (0, 1):
        old, new = times[("old", ch)], times[("new", ch)]
        ratios = [a / b for a, b in zip(old, new)]
        print(f"BM_TheoryRhs/1/{ch}: old {statistics.median(old):.3f} ms ({min(old):.3f}-{max(old):.3f}), "
              f"new {statistics.median(new):.3f} ms ({min(new):.3f}-{max(new):.3f}), "
              f"old/new {statistics.median(ratios):.2f} ({min(ratios):.2f}-{max(ratios):.2f})")
    print(f"load average at end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
