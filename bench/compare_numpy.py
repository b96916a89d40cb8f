#!/usr/bin/python3
"""Samples per second of headspec's dense engine against plain NumPy, on one core.

Runs build/bench/bench_dense (threads = 1) and bench/numpy_dense.py alternately, --rounds
times each, in this one invocation, and prints the median and range of each and of their
ratio, by wall-clock time and by CPU time (CPU time is the fairer number on a machine shared
with other work). Both get OMP_NUM_THREADS=1 and OPENBLAS_NUM_THREADS=1.

    /usr/bin/python3 bench/compare_numpy.py [--build build] [--rounds 3] [--seconds 2]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def one_core_env():
    env = dict(os.environ)
    env["OMP_NUM_THREADS"] = "1"
    env["OPENBLAS_NUM_THREADS"] = "1"
    return env


def run_headspec(build, seconds):
    out = subprocess.run(
        [str(build / "bench" / "bench_dense"), "--benchmark_filter=threads:1/", "--benchmark_format=json",
         f"--benchmark_min_time={seconds}"],
        check=True, capture_output=True, text=True, env=one_core_env()).stdout
    b = json.loads(out)["benchmarks"][0]
    scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[b["time_unit"]]
    return 1.0 / (b["real_time"] * scale), 1.0 / (b["cpu_time"] * scale)


def run_numpy(seconds):
    out = subprocess.run(["/usr/bin/python3", str(ROOT / "bench" / "numpy_dense.py"), "--seconds", str(seconds)],
                         check=True, capture_output=True, text=True, env=one_core_env()).stdout
    r = json.loads(out)
    return r["samples_per_s"], r["cpu_samples_per_s"]


def summary(xs):
    return f"{statistics.median(xs):9.1f}  [{min(xs):.1f} .. {max(xs):.1f}]"


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build", default=str(ROOT / "build"))
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--seconds", type=float, default=2.0)
    a = p.parse_args()
    hs_wall, hs_cpu, np_wall, np_cpu = [], [], [], []
    for _ in range(a.rounds):
        w, c = run_headspec(Path(a.build), a.seconds)
        hs_wall.append(w)
        hs_cpu.append(c)
        w, c = run_numpy(a.seconds)
        np_wall.append(w)
        np_cpu.append(c)
    print("dense SGD step, D = 10000, L = 10, H = 2, one core; samples/s, median [min .. max] of", a.rounds)
    print(f"  headspec  wall {summary(hs_wall)}   cpu {summary(hs_cpu)}")
    print(f"  numpy     wall {summary(np_wall)}   cpu {summary(np_cpu)}")
    rw = [h / n for h, n in zip(hs_wall, np_wall)]
    rc = [h / n for h, n in zip(hs_cpu, np_cpu)]
    print(f"  ratio     wall {summary(rw)}   cpu {summary(rc)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
