"""The Python module returns what the command line writes, for the same seed and flags."""
import json
import subprocess

import numpy as np
import pytest

import headspec
from conftest import BINARY


def test_simulate_equals_cli(cli):
    kw = dict(engine="dense", D=700, T=0.6, record_every=0.2, test_samples=300, seed=3, runs=2, L=4, H=3,
              nu=[2, 1, 0.5], activation="softmax1")
    res = headspec.simulate(**kw)
    table = cli("simulate", "--engine", "dense", "--D", 700, "--T", 0.6, "--record-every", 0.2, "--test-samples",
                300, "--seed", 3, "--runs", 2, "--L", 4, "--H", 3, "--nu", "2,1,0.5", "--activation", "softmax1")
    np.testing.assert_array_equal(res["t"], table["t"])
    np.testing.assert_array_equal(res["run"], table["run"])
    np.testing.assert_array_equal(res["loss"], table["loss"])
    for h in range(3):
        for f in range(3):
            np.testing.assert_array_equal(res["M"][:, h, f], table[f"M_{h + 1}_{f + 1}"])
        for g in range(h, 3):
            np.testing.assert_array_equal(res["Q"][:, h, g], table[f"Q_{h + 1}_{g + 1}"])
            np.testing.assert_array_equal(res["Q"][:, g, h], table[f"Q_{h + 1}_{g + 1}"])
        np.testing.assert_array_equal(res["c"][:, h], table[f"c_{h + 1}"])
    assert res["model"]["activation"] == "softmax1"
    assert res["model"]["nu"] == [2, 1, 0.5]


def test_bayes_equals_cli():
    out = subprocess.run([BINARY, "bayes", "--prior", "gauss", "--nu", "3,1", "--L", "5", "--samples", "5000",
                          "--seed", "4"], capture_output=True, text=True, check=True).stdout
    ref = json.loads(out)
    res = headspec.bayes(prior="gauss", nu=[3, 1], L=5, samples=5000, seed=4)
    assert res["mmse"] == ref["mmse"]
    assert res["stderr"] == ref["stderr"]


@pytest.mark.parametrize("kw, flag", [(dict(H=0), "--H"), (dict(activation="relu"), "--activation"),
                                      (dict(nu=[2, -1]), "--nu"), (dict(D=3), "--D"), (dict(engine="x"), "--engine"),
                                      (dict(seed=-1), "--seed"), (dict(T=-1), "--T")])
def test_errors_raise_value_error_with_cli_message(kw, flag):
    with pytest.raises(ValueError, match=flag):
        headspec.simulate(**{"D": 200, "T": 0.1, **kw})
    assert issubclass(headspec.UsageError, ValueError)


def test_theory_equals_cli(cli):
    kw = dict(init_D=500, mc=600, dt=0.1, T=1.0, record_every=0.5, seed=5, runs=2, L=4, H=3, nu=[2, 1],
              prior="gauss", activation="bsoftmax")
    res = headspec.theory(**kw)
    table = cli("theory", "--init-D", 500, "--mc", 600, "--dt", 0.1, "--T", 1.0, "--record-every", 0.5, "--seed", 5,
                "--runs", 2, "--L", 4, "--H", 3, "--nu", "2,1", "--prior", "gauss", "--activation", "bsoftmax")
    assert len(res["t"]) == 6
    np.testing.assert_array_equal(res["t"], table["t"])
    np.testing.assert_array_equal(res["run"], table["run"])
    np.testing.assert_array_equal(res["loss"], table["loss"])
    for h in range(3):
        for f in range(2):
            np.testing.assert_array_equal(res["M"][:, h, f], table[f"M_{h + 1}_{f + 1}"])
        np.testing.assert_array_equal(res["R"][:, h], table[f"R_{h + 1}"])
        for g in range(h, 3):
            np.testing.assert_array_equal(res["Q"][:, h, g], table[f"Q_{h + 1}_{g + 1}"])
        np.testing.assert_array_equal(res["c"][:, h], table[f"c_{h + 1}"])
    # The runs start from different initial keys (seed + k) and move.
    assert res["M"][0, 0, 0] != res["M"][3, 0, 0]
    assert not np.array_equal(res["M"][1], res["M"][0])
    assert res["theory"]["integrator"] == "rk4"
    assert res["model"]["activation"] == "bsoftmax"


@pytest.mark.parametrize("kw, flag", [(dict(mc=1), "--mc"), (dict(init_engine="x"), "--init-engine"),
                                      (dict(init_D=3), "--init-D"), (dict(dt=0.3, record_every=1), "--record-every"),
                                      (dict(mc_resample=True, integrator="rk4"), "--integrator"),
                                      (dict(runs=0), "--runs"), (dict(T=-1), "--T")])
def test_theory_errors_raise_value_error_with_cli_message(kw, flag):
    with pytest.raises(ValueError, match=flag):
        headspec.theory(**{"mc": 100, "T": 0.1, "dt": 0.05, "record_every": 0.05, **kw})
