#!/usr/bin/python3
"""The theory's right-hand side (docs/model.md sections 6-7) in C++ against NumPy, in one run:
rounds that alternate the NumPy implementation (bench/theory_numpy.py, rhs) in this process
with `bench_theory` (BM_TheoryRhs on 1 and on 2 threads), timed by CPU time, which a
loaded machine inflates much less than wall-clock time. Prints every round, the medians
and the ratios (docs/performance.md).

Usage: /usr/bin/python3 bench/theory_compare.py [--bench build/bench/bench_theory] [--rounds 5] [--evals 20]
           [--min-time 1] [--channel 0|1] [--malloc tuned|default]
NumPy runs with BLAS on one thread; its time is the CPU time of the process
(time.process_time). The C++ time is Google Benchmark's cpu_time: the CPU time of the
benchmark's main thread, which on 1 thread is the whole evaluation. The 2-thread
speed-up is from wall-clock time (real_time) and only means something on idle cores; the
CPU time of the main thread on 2 threads (the work split) and of both threads
(BM_TheoryRhsAllThreads: what going parallel costs) are printed beside it.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

# glibc's malloc returns NumPy's 1.6 MB temporaries to the kernel after each use (mmap, or
# trimming the heap), so a plain run page-faults ~1500 times per evaluation: 3-4 ms of
# system time on top of ~5.5 ms of user time on the loaded 2-core machine. --malloc tuned
# (the default) keeps freed memory in the process, NumPy's best case; --malloc default is
# NumPy as a script runs it. Both take effect only at start-up, hence the re-exec.
_TUNED = {"MALLOC_MMAP_THRESHOLD_": str(1 << 28), "MALLOC_TRIM_THRESHOLD_": str(1 << 30)}
if "--malloc" in sys.argv and sys.argv[sys.argv.index("--malloc") + 1 :][:1] == ["default"]:
    pass
elif any(os.environ.get(k) != v for k, v in _TUNED.items()):
    os.execve(sys.executable, [sys.executable] + sys.argv, dict(os.environ, **_TUNED))

for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = "1"  # NumPy on one core; read when numpy is first imported
import numpy as np  # noqa: E402,F401
import resource  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import theory_numpy  # noqa: E402


def cxx(binary, threads, channel, min_time, name="BM_TheoryRhs"):
    env = dict(os.environ)
    env.pop("OMP_NUM_THREADS")  # the benchmark sets its own thread count
    out = subprocess.run([binary, f"--benchmark_filter=^{name}/{threads}/{channel}/",
                          f"--benchmark_min_time={min_time}", "--benchmark_format=json"],
                         check=True, capture_output=True, text=True, env=env).stdout
    found = json.loads(out)["benchmarks"] if out.strip() else []
    if not found:  # an older bench_theory without this benchmark
        return float("nan"), float("nan")
    b = found[0]
    assert b["time_unit"] == "ms", b["time_unit"]
    return b["cpu_time"], b["real_time"]


def numpy_ms(args_rhs, evals):
    theory_numpy.rhs(*args_rhs)  # warm-up
    r0, t0 = resource.getrusage(resource.RUSAGE_SELF), time.process_time()
    for _ in range(evals):
        theory_numpy.rhs(*args_rhs)
    t, r1 = time.process_time() - t0, resource.getrusage(resource.RUSAGE_SELF)
    numpy_ms.sys_ms = (r1.ru_stime - r0.ru_stime) / evals * 1e3
    return t / evals * 1e3


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bench", default="build/bench/bench_theory", help="the bench_theory executable")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--evals", type=int, default=20)
    p.add_argument("--min-time", default="1")
    p.add_argument("--channel", type=int, default=0, help="0: g integrated out (NumPy's), 1: g sampled")
    p.add_argument("--malloc", choices=("tuned", "default"), default="tuned", help="glibc malloc settings for NumPy")
    args = p.parse_args()
    binary = args.bench
    lam, w, _, (M, Q, c) = theory_numpy.fig1_setting(10000)
    args_rhs = (M, Q, c, theory_numpy.soa_samples(lam, w))
    rows = []
    print(f"load average at start: {os.getloadavg()}; NumPy with {args.malloc} malloc")
    print("round  numpy_cpu_ms  cxx1_cpu_ms  cxx1_wall_ms  cxx2_wall_ms  cxx2_main_cpu_ms  cxx2_all_cpu_ms  numpy/cxx1  wall1/wall2")
    for r in range(args.rounds):
        # Alternate which runs first so that a change of load does not favour one side.
        def two():
            c2, w2 = cxx(binary, 2, args.channel, args.min_time)
            a2, _ = cxx(binary, 2, args.channel, args.min_time, "BM_TheoryRhsAllThreads")
            return c2, w2, a2
        if r % 2 == 0:
            n = numpy_ms(args_rhs, args.evals)
            c1, w1 = cxx(binary, 1, args.channel, args.min_time)
            c2, w2, a2 = two()
        else:
            c2, w2, a2 = two()
            c1, w1 = cxx(binary, 1, args.channel, args.min_time)
            n = numpy_ms(args_rhs, args.evals)
        rows.append((n, c1, w1, w2, c2, a2))
        print(f"       (NumPy system time {numpy_ms.sys_ms:.3f} ms of the {n:.3f})")
        print(f"{r:5d}  {n:12.3f}  {c1:11.3f}  {w1:12.3f}  {w2:12.3f}  {c2:16.3f}  {a2:15.3f}  {n / c1:10.2f}  {w1 / w2:11.2f}",
              flush=True)
    med = [statistics.median(x) for x in zip(*rows)]
    ratios = [row[0] / row[1] for row in rows]
    speedups = [row[2] / row[3] for row in rows]
    print(f"median: numpy {med[0]:.3f} ms CPU, C++ 1 thread {med[1]:.3f} ms CPU ({med[2]:.3f} ms wall), "
          f"2 threads {med[3]:.3f} ms wall, {med[4]:.3f} ms CPU of the main thread, {med[5]:.3f} ms CPU of both")
    print(f"NumPy / C++ per core (CPU): median {statistics.median(ratios):.2f}, range {min(ratios):.2f} - {max(ratios):.2f}")
    print(f"1 -> 2 threads (wall): median {statistics.median(speedups):.2f}, range {min(speedups):.2f} - {max(speedups):.2f}")
    print(f"1 -> 2 threads, CPU of the main thread (work split): {med[1] / med[4]:.2f}; "
          f"CPU of both threads / CPU on 1 thread (cost of going parallel): {med[5] / med[1]:.2f}")
    print(f"load average at end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
