"""The run budgets of docs/cli.md "Limits" against what runs take: the estimate counts the
Monte Carlo samples an evaluation really uses (whole orbits and Sobol sets, not --mc), and
its memory is the run's peak resident memory within a factor of two. The memory is measured
as the difference between a large and a small run of one command (the program's own code,
libraries and thread stacks cancel), read from the child's peak RSS (wait4). The symmetric
methods keep a few bytes per sample (one base sample per orbit): no case of theirs reaches a
size worth measuring in a test. A dense run's peak (L + H vectors in R^D) is 0.99 of its
estimate (once measured as 0.45 inside the whole suite: pytest's own peak had leaked into the
child's, see PEAK_OF_CHILD)."""
import os
import re
import subprocess

import pytest

from conftest import BINARY

THEORY = ["theory", "--L", "10", "--H", "2", "--T", "0.5", "--dt", "0.5", "--record-every", "0.5"]
# A few steps of SGD at a large D: the L + H vectors in R^D of the one run (one thread).
DENSE = ["simulate", "--engine", "dense", "--L", "4", "--H", "2", "--T", "2e-6", "--record-every", "1e-6",
         "--test-samples", "10"]


def estimate_gib(args, tmp_path):
    """The run's memory estimate in GiB, as the refusal under a tiny --max-memory gives it."""
    res = subprocess.run([BINARY] + args + ["--max-memory", "1e-9", "--out", str(tmp_path / "refused.csv")],
                         capture_output=True, text=True)
    assert res.returncode == 2, res.stderr
    found = re.search(r"about ([0-9.e+-]+) GiB", res.stderr)
    assert found, res.stderr
    assert not (tmp_path / "refused.csv").exists()
    return float(found.group(1))


# Runs argv[1:] in a child forked from this small interpreter and prints the child's peak RSS
# (KiB). A child that pytest itself starts would not do: Linux carries the peak RSS of the
# address space a process leaves at exec into its own (exec_mmap), and pytest's subprocess
# starts children by vfork, so their peak would be at least pytest's (several hundred MB late
# in the suite), hiding the difference this test measures.
PEAK_OF_CHILD = """
import os, sys
pid = os.fork()
if pid == 0:
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
    os.execv(sys.argv[1], sys.argv[1:])
_, status, usage = os.wait4(pid, 0)
print(usage.ru_maxrss)
sys.exit(os.waitstatus_to_exitcode(status))
"""


def peak_gib(args, tmp_path):
    """The peak resident memory of one run to completion, in GiB."""
    env = dict(os.environ, OMP_NUM_THREADS="1")
    res = subprocess.run(["/usr/bin/python3", "-c", PEAK_OF_CHILD, BINARY] + args + ["--out", str(tmp_path / "run.csv")],
                         env=env, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    return int(res.stdout) / 2.0 ** 20  # ru_maxrss is in KiB on Linux


@pytest.mark.parametrize("small,large", [
    (THEORY + ["--mc-method", "plain", "--mc", "20000"], THEORY + ["--mc-method", "plain", "--mc", "600000"]),
    (THEORY + ["--mc-method", "plain", "--mc", "20000", "--sde", "--init-D", "1000"],
     THEORY + ["--mc-method", "plain", "--mc", "400000", "--sde", "--init-D", "1000"]),
    (DENSE + ["--D", "200000"], DENSE + ["--D", "4000000"]),
], ids=["theory-plain", "theory-sde", "dense"])
def test_memory_estimate_is_the_peak_within_a_factor_two(small, large, tmp_path):
    estimated = estimate_gib(large, tmp_path) - estimate_gib(small, tmp_path)
    measured = peak_gib(large, tmp_path) - peak_gib(small, tmp_path)
    assert estimated > 0.05, "the large run must dominate the program's own memory"
    assert 0.5 <= measured / estimated <= 2.0, f"estimated {estimated:.3f} GiB, measured {measured:.3f} GiB"


@pytest.mark.parametrize("command", [
    ["theory", "--H", "4", "--mc", "1000", "--T", "0.5", "--dt", "0.5", "--record-every", "0.5"],
    ["sweep", "--engine", "theory", "--grid", "H=4", "--mc", "1000", "--T", "0.5", "--dt", "0.5",
     "--record-every", "0.5"],
], ids=["theory", "sweep"])
def test_work_estimate_counts_the_samples_used(command, tmp_path):
    # H = 4: the sign flips of the two directions and the 4! head permutations make orbits of
    # 96 samples, 8 Sobol sets of whole orbits: --mc 1000 evaluates 3072 samples per stage,
    # so four stages are 12288 sample evaluations, above --max-steps 10000 (4000 by --mc).
    extra = ["--summary", str(tmp_path / "s.csv")] if command[0] == "sweep" else []
    res = subprocess.run([BINARY] + command + extra + ["--max-steps", "10000", "--out", str(tmp_path / "o.csv")],
                         capture_output=True, text=True)
    assert res.returncode == 2, res.stderr
    assert "--max-steps" in res.stderr and "3.07e+03 samples" in res.stderr, res.stderr
    assert os.listdir(tmp_path) == []
    ok = subprocess.run([BINARY] + command + extra + ["--max-steps", "12288", "--out", str(tmp_path / "o.csv")],
                        capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
