"""Progress (docs/cli.md "Progress"): --progress bar | lines | off | auto on stderr, and
Python's progress= callback and tqdm bar."""
import re
import subprocess

import pytest

import headspec
from conftest import BINARY

SIM = ["simulate", "--engine", "gram", "--D", "300", "--T", "20", "--record-every", "0.5", "--runs", "2",
       "--test-samples", "100"]


def run(tmp_path, *args):
    """The command's status and stderr, its bytes decoded as they are (no newline translation)."""
    res = subprocess.run([BINARY, *SIM, *args, "--out", str(tmp_path / "o.csv")], capture_output=True)
    res.stderr = res.stderr.decode()
    return res


def test_lines_report_every_five_percent_once_without_carriage_returns(tmp_path):
    res = run(tmp_path, "--progress", "lines")
    assert res.returncode == 0, res.stderr
    assert "\r" not in res.stderr
    lines = res.stderr.splitlines()
    percents = [int(re.match(r"^headspec: simulate: (\d+)% \(t = [0-9.e+-]+ / 20\), \d+ s$", line).group(1))
                for line in lines]
    assert percents == sorted(set(percents)) and all(p % 5 == 0 for p in percents)
    assert percents[-1] == 100 and len(percents) >= 10


def test_sweep_lines_count_the_runs_done(tmp_path):
    res = subprocess.run([BINARY, "sweep", "--engine", "gram", "--D", "200", "--T", "1", "--test-samples", "100",
                          "--grid", "H=1,2", "--runs", "10", "--progress", "lines", "--out", str(tmp_path / "o.csv")],
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    counts = [re.match(r"^headspec: sweep: (\d+)% \((\d+) of 20 runs\), \d+ s$", line).groups()
              for line in res.stderr.splitlines()]
    assert counts and all(int(percent) == 5 * int(done) for percent, done in counts), counts
    assert counts[-1] == ("100", "20")


def test_bar_redraws_in_place_and_off_and_a_short_auto_run_print_nothing(tmp_path):
    bar = run(tmp_path, "--progress", "bar")
    assert bar.returncode == 0 and "\r" in bar.stderr and "\n" not in bar.stderr
    for mode in ("off", "auto"):
        quiet = run(tmp_path, "--progress", mode)
        assert quiet.returncode == 0 and quiet.stderr == "", mode


def test_a_bad_progress_mode_is_refused_before_anything_is_written(tmp_path):
    res = run(tmp_path, "--progress", "verbose")
    assert res.returncode == 2
    assert res.stderr.startswith("headspec: error: --progress: ") and len(res.stderr.splitlines()) == 1
    assert not list(tmp_path.iterdir())


def test_python_callback_counts_every_record_up_to_the_total():
    calls = []
    res = headspec.simulate(engine="gram", D=300, T=20, record_every=0.5, runs=2, test_samples=100,
                            progress=lambda done, total: calls.append((done, total)))
    assert calls[-1] == (res.loss.size, res.loss.size) and all(isinstance(v, int) for v in calls[-1])
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)
    runs = []
    headspec.sweep(grid={"H": [1, 2]}, engine="gram", D=200, T=1, runs=3, test_samples=100,
                   progress=lambda done, total: runs.append((done, total)))
    assert runs[-1] == (6, 6)


def test_an_exception_in_the_callback_stops_the_call_and_is_raised():
    calls = []

    def stop(done, total):
        calls.append(done)
        raise RuntimeError("enough")

    with pytest.raises(RuntimeError, match="enough"):
        headspec.theory(mc=2000, dt=0.1, T=100000, record_every=0.1, progress=stop)
    assert len(calls) == 1


def test_progress_true_draws_a_tqdm_bar(capsys):
    pytest.importorskip("tqdm")
    headspec.theory(mc=1000, dt=0.5, T=2, record_every=0.5, progress=True)
    assert "theory" in capsys.readouterr().err


def test_progress_bar_closes_at_its_true_end_when_runs_stop_early(capsys):
    """A run stopped by its stop rule makes fewer records than T / record_every: the bar then
    ends at 100 % of what was done, not part-way."""
    pytest.importorskip("tqdm")
    res = headspec.theory(mc=1000, mc_method="sobol", dt=0.5, T=500, record_every=0.5, stop_when_specialised=True,
                          progress=True)
    made = res.loss.size
    assert made < 1001
    last = capsys.readouterr().err.replace("\r", "\n").strip().splitlines()[-1]
    assert "100%" in last and f"{made}/{made}" in last, last
