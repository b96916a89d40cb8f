"""--threads N and threads=N (docs/cli.md "Threads"): the numbers do not depend on the thread
count, the setting is checked like any flag, and it is not part of a run's identity."""
import json
import subprocess

import numpy as np
import pytest

import headspec
from conftest import BINARY


def run(tmp_path, name, *args):
    out = tmp_path / name
    res = subprocess.run([BINARY, *map(str, args), "--out", str(out)], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    return out.read_bytes(), json.loads((tmp_path / f"{name}.json").read_text())


@pytest.mark.parametrize("args", [
    ["simulate", "--engine", "gram", "--D", 300, "--T", 2, "--runs", 3, "--test-samples", 5000],
    ["theory", "--mc", 4096, "--T", 2, "--dt", 0.5, "--init-D", 300],
    ["sweep", "--engine", "gram", "--grid", "H=1,2", "--D", 200, "--T", 1, "--runs", 2, "--test-samples", 300],
], ids=["simulate", "theory", "sweep"])
def test_one_thread_and_two_give_the_same_bytes(tmp_path, args):
    one, side_one = run(tmp_path, "one.csv", *args, "--threads", 1)
    two, side_two = run(tmp_path, "two.csv", *args, "--threads", 2)
    assert one == two
    assert side_one["sha256"] == side_two["sha256"]
    assert "threads" not in json.dumps({k: v for k, v in side_one.items() if k != "argv"})


def test_linearise_with_one_thread_equals_two(tmp_path):
    one = subprocess.run([BINARY, "linearise", "--mc", "2000", "--T-max", "2", "--threads", "1"], capture_output=True,
                         text=True, check=True).stdout
    two = subprocess.run([BINARY, "linearise", "--mc", "2000", "--T-max", "2", "--threads", "2"], capture_output=True,
                         text=True, check=True).stdout
    assert json.loads(one)["fixed_point"] == json.loads(two)["fixed_point"]


@pytest.mark.parametrize("value", ["-1", "4097", "1.5", ""])
def test_a_bad_thread_count_is_refused_naming_the_flag(tmp_path, value):
    res = subprocess.run([BINARY, "theory", "--threads", value, "--out", str(tmp_path / "o.csv")],
                         capture_output=True, text=True)
    assert res.returncode == 2 and "--threads" in res.stderr and len(res.stderr.splitlines()) == 1
    assert not list(tmp_path.iterdir())


def test_python_threads_keyword_gives_the_same_numbers():
    kw = dict(mc=4096, T=1, dt=0.5, init_D=300)
    one, two = headspec.theory(threads=1, **kw), headspec.theory(threads=2, **kw)
    np.testing.assert_array_equal(one.M, two.M)
    np.testing.assert_array_equal(one.loss, two.loss)
    assert "threads" not in one.theory
    with pytest.raises(ValueError, match="threads"):
        headspec.simulate(threads=-2, T=0)
