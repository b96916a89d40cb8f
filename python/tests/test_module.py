"""The Python module returns what the command line writes, for the same seed and flags."""
import json
import os
import subprocess

import numpy as np
import pytest

import headspec
from conftest import BINARY, ROOT, assert_names, cli_message


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
            np.testing.assert_array_equal(res[f"M_{h + 1}_{f + 1}"], table[f"M_{h + 1}_{f + 1}"])
        for g in range(h, 3):
            np.testing.assert_array_equal(res[f"Q_{h + 1}_{g + 1}"], table[f"Q_{h + 1}_{g + 1}"])
        np.testing.assert_array_equal(res[f"c_{h + 1}"], table[f"c_{h + 1}"])
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
    with pytest.raises(ValueError) as raised:
        headspec.simulate(**{"D": 200, "T": 0.1, **kw})
    assert_names(raised.value, flag)
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
            np.testing.assert_array_equal(res[f"M_{h + 1}_{f + 1}"], table[f"M_{h + 1}_{f + 1}"])
        np.testing.assert_array_equal(res[f"R_{h + 1}"], table[f"R_{h + 1}"])
        for g in range(h, 3):
            np.testing.assert_array_equal(res[f"Q_{h + 1}_{g + 1}"], table[f"Q_{h + 1}_{g + 1}"])
        np.testing.assert_array_equal(res[f"c_{h + 1}"], table[f"c_{h + 1}"])
    # The runs start from different initial keys (seed + k) and move.
    assert res.M[0, 0, 0, 0] != res.M[1, 0, 0, 0]
    assert not np.array_equal(res.M[0, 1], res.M[0, 0])
    assert res["theory"]["integrator"] == "rk4"
    assert res["model"]["activation"] == "bsoftmax"


@pytest.mark.parametrize("flags", [
    dict(mc=600, mc_method="sobol", mc_seed=3, dt=0.5, init_D=400, init_engine="gram", keep_R=True, flow=True,
         until_converged=1e-9),
    dict(mc_method="auto", dt=0.5, init_D=400, integrator="dopri5", until_error_settled=0.1, error_window=4),
], ids=["sobol-keepR-flow", "auto-dopri5"])
def test_theory_parameters_are_one_object_in_cli_sweep_and_python(flags, tmp_path):
    """The theory's parameter object (TheoryConfig::identity, docs/cli.md): `theory`'s sidecar,
    Python's result["theory"] and `sweep --engine theory`'s sidecar carry the same fields with
    the same values (the sweep's resolved ones per point)."""
    flags = dict(flags, T=1, record_every=0.5)
    argv = []
    for k, v in flags.items():
        argv += [f"--{k.replace('_', '-')}"] + ([] if v is True else [str(v)])
    for command in (["theory", "--H", "2"], ["sweep", "--engine", "theory", "--grid", "H=2"]):
        res = subprocess.run([BINARY, *command, *argv, "--out", str(tmp_path / f"{command[0]}.csv")],
                             capture_output=True, text=True)
        assert res.returncode == 0, res.stderr
    with open(tmp_path / "theory.csv.json") as f:
        cli_theory = json.load(f)["theory"]
    with open(tmp_path / "sweep.csv.json") as f:
        sweep_theory = json.load(f)["theory"]
    assert headspec.theory(H=2, **flags)["theory"] == cli_theory
    for key, value in sweep_theory.items():
        point = value[0] if key in ("mc_samples_used", "mc_method_used") else value
        assert cli_theory[key] == point, key
    for key in ("mc", "mc_mode", "mc_method", "mc_seed", "integrator", "dt", "dopri5_tolerance", "init_D",
                "init_engine", "keep_R", "value_channel", "until_converged", "until_error_settled", "error_window",
                "time", "mc_samples_used"):
        assert key in sweep_theory, key
    assert ("flow" in sweep_theory) == bool(flags.get("flow"))
    assert ("mc_method_used" in sweep_theory) == (flags["mc_method"] == "auto")


def test_theory_laplace_equals_cli(cli):
    """mc_method="laplace" (docs/model.md §6, "Laplace quadrature"): the CLI's numbers bit for bit,
    named in the sidecar."""
    kw = dict(init_D=800, init_engine="gram", dt=0.4, T=2, record_every=0.8, seed=2)
    res = headspec.theory(mc_method="laplace", **kw)
    table = cli("theory", "--init-D", 800, "--init-engine", "gram", "--dt", 0.4, "--T", 2, "--record-every", 0.8,
                "--seed", 2, "--mc-method", "laplace")
    assert res["theory"]["mc_method"] == "laplace"
    for name in ("loss", "M_1_1", "M_1_2", "Q_1_2", "c_2"):
        np.testing.assert_array_equal(res[name], table[name])
    assert res["M_1_1"][-1] != res["M_1_1"][0]


def test_theory_mc_error_equals_cli(cli):
    """mc_error=True returns the CLI's <column>_se columns (--mc-error) by column name."""
    kw = dict(init_D=800, init_engine="gram", mc=1024, dt=0.4, T=4, record_every=2, seed=2, mc_seed=5,
              mc_method="sobol")
    res = headspec.theory(mc_error=True, **kw)
    table = cli("theory", "--init-D", 800, "--init-engine", "gram", "--mc", 1024, "--dt", 0.4, "--T", 4,
                "--record-every", 2, "--seed", 2, "--mc-seed", 5, "--mc-method", "sobol", "--mc-error")
    assert res["theory"]["mc_method"] == "sobol"
    for name in ("loss", "M_1_2", "Q_1_2", "c_2", "cos_1_2"):
        np.testing.assert_array_equal(res[name + "_se"], table[name + "_se"])
    assert res["M_1_2_se"][-1] > 0
    assert res.standard_errors["M"][0, -1, 0, 1] == res["M_1_2_se"][-1]
    assert res.loss_se[0, -1] == res["loss_se"][-1]
    plain = headspec.theory(**kw)
    assert "M_1_2_se" not in plain.columns and np.isnan(plain.loss_se).all()


def test_theory_sde_equals_cli(cli):
    """sde=True is `theory --sde` (docs/model.md §12): the same numbers, run by run."""
    kw = dict(init_D=300, init_engine="gram", L=5, mc=1024, integrator="heun", dt=0.5, T=6, record_every=2, runs=2)
    res = headspec.theory(sde=True, **kw)
    table = cli("theory", "--sde", "--init-D", 300, "--init-engine", "gram", "--L", 5, "--mc", 1024, "--integrator",
                "heun", "--dt", 0.5, "--T", 6, "--record-every", 2, "--runs", 2)
    assert res["theory"]["sde"] is True
    np.testing.assert_array_equal(res["run"], table["run"])
    np.testing.assert_array_equal(res["M_1_2"], table["M_1_2"])
    np.testing.assert_array_equal(res["loss"], table["loss"])
    ode = headspec.theory(**kw)  # the same initial states, without the noise
    np.testing.assert_array_equal(ode.M[:, 0], res.M[:, 0])
    assert np.abs(ode.M[:, -1] - res.M[:, -1]).max() > 1e-3
    fewer = headspec.theory(sde=True, sde_mc=256, **kw)  # Σ from 256 plain samples (--sde-mc)
    table = cli("theory", "--sde", "--sde-mc", 256, "--init-D", 300, "--init-engine", "gram", "--L", 5, "--mc", 1024,
                "--integrator", "heun", "--dt", 0.5, "--T", 6, "--record-every", 2, "--runs", 2)
    np.testing.assert_array_equal(fewer["M_1_2"], table["M_1_2"])
    assert fewer["theory"]["sde_mc"] == 256
    assert not np.array_equal(fewer["M_1_2"], res["M_1_2"])
    corrected = headspec.theory(sde=True, sde_reference_mc=4096, **kw)  # drift along the path (--sde-reference-mc)
    table = cli("theory", "--sde", "--sde-reference-mc", 4096, "--init-D", 300, "--init-engine", "gram", "--L", 5,
                "--mc", 1024, "--integrator", "heun", "--dt", 0.5, "--T", 6, "--record-every", 2, "--runs", 2)
    np.testing.assert_array_equal(corrected["M_1_2"], table["M_1_2"])
    assert corrected["theory"]["sde_reference_mc"] == 4096
    assert not np.array_equal(corrected["M_1_2"], res["M_1_2"])


def test_sweep_sde_gives_tau_tilde_per_D():
    """sweep(engine="sde") runs the stochastic theory at each grid point's D and, as for the
    finite-D engines, reports τ̃ = τ / ln D; with the stop rule a run ends once it split."""
    res = headspec.sweep(engine="sde", grid="D=100,300", L=5, mc=1024, integrator="heun", dt=0.5, T=200,
                         record_every=1, runs=2, stop_when_specialised=True)
    summary = res["summary"]
    assert "tau_tilde_2" in summary
    tau, tilde, D = (np.asarray(summary[k], dtype=float) for k in ("tau_2", "tau_tilde_2", "D"))
    np.testing.assert_allclose(tilde, tau / np.log(D))
    np.testing.assert_array_equal(np.asarray(summary["t"], dtype=float), tau)  # stopped at τ


@pytest.mark.parametrize("kw, flag", [(dict(mc=1), "--mc"), (dict(init_engine="x"), "--init-engine"),
                                      (dict(init_D=3), "--init-D"), (dict(dt=0.3, record_every=1), "--record-every"),
                                      (dict(mc_resample=True, integrator="rk4"), "--integrator"),
                                      (dict(runs=0), "--runs"), (dict(T=-1), "--T"),
                                      (dict(mc_method="quasi"), "--mc-method"), (dict(mc_seed=-5), "--mc-seed"),
                                      (dict(mc_method="plain", mc_error=True), "--mc-error"),
                                      (dict(mc_method="laplace", keep_R=True), "--mc-method"),
                                      (dict(mc_method="laplace", activation="sigmoid"), "--mc-method"),
                                      (dict(sde=True, integrator="dopri5"), "--integrator"),
                                      (dict(sde=True, mc_resample=True, integrator="euler"), "--mc-resample"),
                                      (dict(sde=True, mc_error=True), "--mc-error"),
                                      (dict(sde_mc=256), "--sde-mc"), (dict(sde=True, sde_mc=1), "--sde-mc"),
                                      (dict(delta=0), "--delta")])
def test_theory_errors_raise_value_error_with_cli_message(kw, flag):
    with pytest.raises(ValueError) as raised:
        headspec.theory(**{"mc": 100, "T": 0.1, "dt": 0.05, "record_every": 0.05, **kw})
    assert_names(raised.value, flag)


MNIST_DATA = os.path.join(ROOT, "data", "mnist")
needs_mnist = pytest.mark.skipif(not os.path.isdir(MNIST_DATA), reason="no data/mnist (scripts/fetch-mnist)")


@needs_mnist
def test_mnist_equals_cli(cli, tmp_path):
    kw = dict(H=3, L=4, nu=300, T=1.0, record_every=0.5, test_samples=100, seed=2, runs=2, delta=0.3,
              activation="bsoftmax")
    res = headspec.mnist(**kw)
    tau_csv = tmp_path / "tau.csv"
    table = cli("mnist", "--H", 3, "--L", 4, "--nu", 300, "--T", 1.0, "--record-every", 0.5, "--test-samples", 100,
                "--seed", 2, "--runs", 2, "--delta", 0.3, "--activation", "bsoftmax", "--tau", tau_csv)
    assert len(res["t"]) == 6
    np.testing.assert_array_equal(res["t"], table["t"])
    np.testing.assert_array_equal(res["run"], table["run"])
    np.testing.assert_array_equal(res["loss"], table["loss"])
    assert res.M.shape == (2, 3, 3, 10)
    for h in range(3):
        for f in range(10):
            np.testing.assert_array_equal(res[f"M_{h + 1}_{f + 1}"], table[f"M_{h + 1}_{f + 1}"])
        for g in range(h, 3):
            np.testing.assert_array_equal(res[f"Q_{h + 1}_{g + 1}"], table[f"Q_{h + 1}_{g + 1}"])
        np.testing.assert_array_equal(res[f"c_{h + 1}"], table[f"c_{h + 1}"])
    tau = np.genfromtxt(tau_csv, delimiter=",", names=True)
    np.testing.assert_array_equal(res["tau"].ravel(), tau["tau"])
    # The final keys: Q_hh at the last record of each run is their squared norm over D.
    assert res["keys"].shape == (2, 3, 28, 28)
    for k in range(2):
        for h in range(3):
            np.testing.assert_allclose((res["keys"][k, h] ** 2).sum() / 784, res.Q[k, -1, h, h], rtol=1e-12)
    assert res["simulation"]["D"] == 784


@pytest.mark.parametrize("kw, flag", [(dict(test_samples=0), "--test-samples"), (dict(delta=0), "--delta"),
                                      (dict(train_fraction=1), "--train-fraction"), (dict(split_seed=-1), "--split-seed"),
                                      (dict(runs=0), "--runs"), (dict(nu=-1), "--nu"), (dict(H=0), "--H")])
def test_mnist_errors_raise_value_error_with_cli_message(kw, flag):
    # The flags are checked before the digits are read: no data needed.
    with pytest.raises(ValueError) as raised:
        headspec.mnist(**{"T": 0.1, "data": "/nonexistent", **kw})
    args = [a for k, v in kw.items() for a in (f"--{k.replace('_', '-')}", str(v))]
    res = subprocess.run([BINARY, "mnist", "--T", "0.1", "--data", "/nonexistent", *args], capture_output=True,
                         text=True)
    assert res.returncode == 2
    assert_names(raised.value, flag)
    assert res.stderr.strip() == f"headspec: error: {cli_message(raised.value)}"


def test_mnist_without_data_names_fetch_script():
    with pytest.raises(ValueError, match="fetch-mnist"):
        headspec.mnist(T=0.1, data="/nonexistent")


def test_linearise_equals_cli():
    """(sobol: the keywords' path to the command line's numbers; auto would take laplace here, 300× the cost.)"""
    kw = dict(L=4, nu=[2, 2], mc=3000, dt=0.5, T_max=40, seed=3, mc_method="sobol")
    res = headspec.linearise(**kw)
    out = subprocess.run([BINARY, "linearise", "--L", "4", "--nu", "2,2", "--mc", "3000", "--dt", "0.5", "--T-max",
                          "40", "--seed", "3", "--mc-method", "sobol"], capture_output=True, text=True,
                         check=True).stdout
    ref = json.loads(out)
    assert res["lambda_plus"] == ref["spread_mode"]["lambda_plus"]
    assert res["lambda_plus_half_fd_step"] == ref["spread_mode"]["lambda_plus_half_fd_step"]
    assert res["coordinates"] == ref["coordinates"]
    np.testing.assert_array_equal(res["jacobian"], np.array(ref["jacobian"]))
    np.testing.assert_array_equal(res["eigenvalues"].real, [e["re"] for e in ref["eigenvalues"]])
    np.testing.assert_array_equal(res["eigenvalues"].imag, [e["im"] for e in ref["eigenvalues"]])
    assert res["fixed_point"]["residual"] == ref["fixed_point"]["residual"]
    assert res["fixed_point"]["M"][0, 0] == ref["fixed_point"]["M_1_1"]
    assert res["fixed_point"]["Q"][0, 1] == ref["fixed_point"]["Q_1_2"]
    np.testing.assert_array_equal(res["approach"]["t"], [a["t"] for a in ref["approach"]])
    assert res["direction"] == ref["direction"] == 2


@pytest.mark.parametrize("kw, flag", [(dict(mc=1), "--mc"), (dict(direction=3), "--direction"),
                                      (dict(dt=-1), "--dt"), (dict(seed=-1), "--seed"), (dict(H=0), "--H")])
def test_linearise_errors_raise_value_error_with_cli_message(kw, flag):
    with pytest.raises(ValueError) as raised:
        headspec.linearise(**kw)
    args = [a for k, v in kw.items() for a in (f"--{k.replace('_', '-')}", str(v))]
    res = subprocess.run([BINARY, "linearise", *args], capture_output=True, text=True)
    assert res.returncode == 2
    assert_names(raised.value, flag)
    assert res.stderr.strip() == f"headspec: error: {cli_message(raised.value)}"


def read_csv_columns(path):
    """The columns of a CSV written by `headspec sweep`: grid columns as text, the others as numbers (empty: NaN)."""
    import csv
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    return rows[0], [list(col) for col in zip(*rows[1:])]


def test_sweep_equals_cli(tmp_path):
    # H varies, so the H = 1 point leaves the columns of the second head empty (NaN here).
    kw = dict(grid="H=1,2", engine="gram", D=200, T=1.0, record_every=0.5, test_samples=200, seed=5, runs=2, L=4)
    res = headspec.sweep(**kw)
    out, summary = tmp_path / "sweep.csv", tmp_path / "summary.csv"
    subprocess.run([BINARY, "sweep", "--grid", "H=1,2", "--engine", "gram", "--D", "200", "--T", "1",
                    "--record-every", "0.5", "--test-samples", "200", "--seed", "5", "--runs", "2", "--L", "4",
                    "--out", str(out), "--summary", str(summary)], capture_output=True, text=True, check=True)
    for path, table in ((out, res["rows"]), (summary, res["summary"])):
        header, columns = read_csv_columns(path)
        assert header[0] == "H" and "M_2_1" in header
        assert set(header) | {"point"} == set(table)
        assert table["H"].dtype == np.int64 and [str(v) for v in table["H"]] == columns[0]
        for name, col in zip(header[1:], columns[1:]):
            expected = np.array([float(v) if v != "" else np.nan for v in col])
            np.testing.assert_array_equal(np.asarray(table[name], dtype=float), expected, err_msg=name)
    assert len(res["rows"]["t"]) == 2 * 2 * 3  # points × runs × records
    assert np.isnan(res["rows"]["M_2_1"][res["rows"]["H"] == 1]).all()
    assert not np.isnan(res["rows"]["M_2_1"][res["rows"]["H"] == 2]).any()
    np.testing.assert_array_equal(res["summary"]["point"], [0, 0, 1, 1])
    np.testing.assert_array_equal(res["summary"]["run"], [0, 1, 0, 1])


@pytest.mark.parametrize("kw, flag", [(dict(grid="X=1"), "--grid"), (dict(grid="lr=1;lr=2"), "--grid"),
                                      (dict(grid="H=0"), "--grid"), (dict(grid="D=3"), "--grid"),
                                      (dict(grid="lr=1", engine="x"), "--engine"),
                                      (dict(grid="lr=1", delta=0), "--delta"),
                                      (dict(grid="lr=1", until_converged=1e-3), "--until-converged")])
def test_sweep_errors_raise_value_error_with_cli_message(kw, flag):
    with pytest.raises(ValueError) as raised:
        headspec.sweep(**{"T": 0.1, "D": 200, **kw})
    args = [a for k, v in kw.items() for a in (f"--{k.replace('_', '-')}", str(v))]
    res = subprocess.run([BINARY, "sweep", "--T", "0.1", "--D", "200", *args], capture_output=True, text=True)
    assert res.returncode == 2
    assert_names(raised.value, flag)
    assert res.stderr.strip() == f"headspec: error: {cli_message(raised.value)}"


def test_schedule_and_flow_keywords_equal_cli(cli):
    """lr_schedule= and flow= (docs/model.md §4, §6) give the command line's numbers and are recorded."""
    kw = dict(L=4, mc=1500, dt=0.25, T=4, record_every=1, init_D=300, seed=2)
    res = headspec.theory(lr_schedule="step:2,0.25", **kw)
    table = cli("theory", "--L", 4, "--mc", 1500, "--dt", 0.25, "--T", 4, "--record-every", 1, "--init-D", 300,
                "--seed", 2, "--lr-schedule", "step:2,0.25")
    np.testing.assert_array_equal(res["loss"], table["loss"])
    np.testing.assert_array_equal(res["Q_1_1"], table["Q_1_1"])
    assert res.model["lr_schedule"] == "step:2,0.25"
    constant = headspec.theory(**kw)
    assert np.all(constant["Q_1_1"][2:] != res["Q_1_1"][2:])
    np.testing.assert_array_equal(constant["Q_1_1"][:2], res["Q_1_1"][:2])  # the records before t = 2
    flow = headspec.theory(flow=True, **kw)
    flow_table = cli("theory", "--L", 4, "--mc", 1500, "--dt", 0.25, "--T", 4, "--record-every", 1, "--init-D", 300,
                     "--seed", 2, "--flow")
    np.testing.assert_array_equal(flow["loss"], flow_table["loss"])
    sim = headspec.simulate(engine="gram", D=300, L=4, T=2, record_every=1, test_samples=200, lr=2,
                            lr_schedule="step:0,0.5")
    same = headspec.simulate(engine="gram", D=300, L=4, T=2, record_every=1, test_samples=200, lr=1)
    np.testing.assert_array_equal(sim["loss"], same["loss"])
    with pytest.raises(ValueError, match="lr_schedule="):
        headspec.theory(lr_schedule="power:3", **kw)
    with pytest.raises(ValueError, match="flow="):
        headspec.theory(flow=True, lr_schedule="inverse:3", **kw)
