#!/usr/bin/python3
"""Small work on a loaded machine (docs/cli.md "Threads"): the wall time of one short gram
run and one short theory run with the default threads against --threads 1, while as many
busy processes as cores compete. Prints the ratio default / one thread per command; ≈ 1
means that the default does not start threads for work too small to share.

Usage: bench/threads_under_load.py [--bin build/headspec] [--repeats 5]
"""
import argparse
import multiprocessing
import os
import statistics
import subprocess
import tempfile
import time

COMMANDS = {
    "gram D=100 T=900": ["simulate", "--engine", "gram", "--D", "100", "--T", "900"],
    "theory mc=2000 T=20": ["theory", "--mc", "2000", "--T", "20", "--dt", "0.2", "--init-D", "200"],
}


def spin(stop):
    while not stop.is_set():
        pass


def wall(binary, args, out, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run([binary, *args, "--out", out], check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(os.path.dirname(__file__), "..", "build", "headspec"))
    ap.add_argument("--repeats", type=int, default=5)
    a = ap.parse_args()
    stop = multiprocessing.Event()
    load = [multiprocessing.Process(target=spin, args=(stop,)) for _ in range(os.cpu_count() or 1)]
    for p in load:
        p.start()
    try:
        with tempfile.TemporaryDirectory() as folder:
            out = os.path.join(folder, "o.csv")
            for name, args in COMMANDS.items():
                default = wall(a.bin, args, out, a.repeats)
                one = wall(a.bin, args + ["--threads", "1"], out, a.repeats)
                print(f"{name:22s} default {default:7.3f} s   --threads 1 {one:7.3f} s   ratio {default / one:5.2f}")
    finally:
        stop.set()
        for p in load:
            p.join()


if __name__ == "__main__":
    main()
