"""headspec.plot: the figures' drawing helpers draw exactly the numbers of a call's result or
of the CLI's CSV (the two kinds of table they accept)."""
import os
import subprocess

import numpy as np
import pytest

import headspec
from conftest import BINARY

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import headspec.plot as hp  # noqa: E402

SIM = dict(engine="gram", D=300, L=4, T=3, record_every=0.5, test_samples=200, seed=3, runs=2)


@pytest.fixture(scope="module")
def sim():
    return headspec.simulate(**SIM)


def lines(ax):
    return [(line.get_xdata(), line.get_ydata()) for line in ax.get_lines()]


def test_heads_against_t_draws_m_of_the_chosen_run(sim):
    fig, ax = plt.subplots()
    hp.heads_against_t(ax, sim, run=1)
    drawn = lines(ax)[:-1]  # the last line is the axis at 0
    assert len(drawn) == sim.H * sim.F
    for (x, y), (h, f) in zip(drawn, [(h, f) for h in range(sim.H) for f in range(sim.F)]):
        np.testing.assert_array_equal(x, sim.t)
        np.testing.assert_array_equal(y, sim.M[1, :, h, f])
    plt.close(fig)


def test_head_paths_start_and_end_at_the_first_and_last_record(sim):
    fig, ax = plt.subplots()
    hp.head_paths(ax, sim)
    path, start, end = lines(ax)[:3]
    np.testing.assert_array_equal(path[0], sim.M[0, :, 0, 0])
    np.testing.assert_array_equal(path[1], sim.M[0, :, 0, 1])
    assert start[0][0] == sim.M[0, 0, 0, 0] and end[1][0] == sim.M[0, -1, 0, 1]
    plt.close(fig)


def test_a_result_and_the_cli_csv_draw_the_same_panels(sim, tmp_path):
    """theory_against_simulation on Trajectories equals the figure scripts' path (CSV read)."""
    out = tmp_path / "sim.csv"
    args = ["simulate", "--engine", "gram", "--D", "300", "--L", "4", "--T", "3", "--record-every", "0.5",
            "--test-samples", "200", "--seed", "3", "--runs", "2", "--out", str(out)]
    subprocess.run([BINARY, *args], check=True, capture_output=True)
    table = hp.read_csv(out)
    drawn = []
    for theory, simulation in ((sim, sim), (table, table)):
        fig, axes = plt.subplots(1, 4)
        hp.theory_against_simulation(axes, theory, simulation)
        drawn.append([lines(ax) for ax in axes])
        plt.close(fig)
    assert len(drawn[0][1]) == sim.H * (1 + 2)  # per head: the line and one dot series per run
    for a, b in zip(drawn[0], drawn[1]):
        assert len(a) == len(b)
        for (xa, ya), (xb, yb) in zip(a, b):
            np.testing.assert_array_equal(xa, xb)
            np.testing.assert_array_equal(ya, yb)


def test_band_is_the_mean_and_sd_over_runs(sim):
    fig, ax = plt.subplots()
    hp.band(ax, sim, "M_1_1", "k")
    (poly,) = ax.collections
    vertices = poly.get_paths()[0].vertices
    mean, sd = sim.M[:, :, 0, 0].mean(axis=0), sim.M[:, :, 0, 0].std(axis=0, ddof=1)
    lower = vertices[1:len(sim.t) + 1, 1]
    np.testing.assert_allclose(lower, mean - sd, rtol=0, atol=1e-15)
    plt.close(fig)


def test_sampling_error_draws_the_line_plus_and_minus_two_standard_errors():
    """theory_against_simulation(theory_error=True) adds value ± 2·<column>_se around each line
    of a theory run with mc_error=True; a table without those columns is refused."""
    theory = headspec.theory(L=4, T=2, dt=0.5, record_every=1, mc=512, init_D=300, mc_error=True, mc_method="sobol")
    table = {name: np.asarray(theory[name]) for name in hp.columns(theory)}
    fig, axes = plt.subplots(1, 4)
    hp.theory_against_simulation(axes, table, table, theory_error=True)
    loss_lines = lines(axes[0])
    np.testing.assert_array_equal(loss_lines[1][1], table["loss"] - 2 * table["loss_se"])
    np.testing.assert_array_equal(loss_lines[2][1], table["loss"] + 2 * table["loss_se"])
    ortho = lines(axes[3])  # per head: the line, its two error lines, the dots
    np.testing.assert_array_equal(ortho[1][1], table["ortho_1"] - 2 * table["ortho_1_se"])
    assert len(ortho) == theory.H * 4 and (table["ortho_1_se"] > 0).all()
    plt.close(fig)
    fig, axes = plt.subplots(1, 4)
    plain = {k: v for k, v in table.items() if not k.endswith("_se")}
    with pytest.raises(ValueError, match="mc-error"):
        hp.theory_against_simulation(axes, plain, plain, theory_error=True)
    plt.close(fig)


def test_key_tiles_place_each_head_and_separate_them():
    keys = np.arange(5 * 3 * 3, dtype=float).reshape(5, 3, 3)
    mosaic = hp.key_tiles(keys, columns=2)
    assert mosaic.shape == (3 * 4 - 1, 2 * 4 - 1)
    np.testing.assert_array_equal(mosaic[4:7, 4:7], keys[3])
    np.testing.assert_array_equal(mosaic[8:11, 0:3], keys[4])
    assert np.isnan(mosaic[3]).all() and np.isnan(mosaic[:, 3]).all() and np.isnan(mosaic[8:, 4:]).all()


def test_key_images_use_one_symmetric_scale():
    keys = np.zeros((1, 2, 28, 28))
    keys[0, 0, 3, 4], keys[0, 1, 5, 6] = 2.0, -0.5
    fig, ax = plt.subplots()
    image = hp.key_images(ax, {"keys": keys})
    assert image.get_clim() == (-2.0, 2.0) and image.get_array().shape == (28, 57)
    plt.close(fig)


def test_read_csv_refuses_a_csv_that_its_sidecar_does_not_describe(tmp_path):
    """read_csv checks the CSV's SHA-256 against its sidecar: a CSV of one run beside the
    sidecar of another (or an edited CSV) raises; without a sidecar, or unchecked, it reads."""
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    for out, seed in ((a, "1"), (b, "2")):
        subprocess.run([BINARY, "simulate", "--engine", "gram", "--D", "200", "--L", "4", "--T", "1",
                        "--record-every", "0.5", "--test-samples", "100", "--seed", seed, "--out", str(out)],
                       check=True, capture_output=True)
    good = hp.read_csv(a)
    os.replace(b, a)  # b's CSV beside a's sidecar
    with pytest.raises(ValueError, match="sidecar"):
        hp.read_csv(a)
    other = hp.read_csv(a, check_sidecar=False)
    assert not np.array_equal(other["M_1_1"], good["M_1_1"])
    os.remove(str(a) + ".json")
    np.testing.assert_array_equal(hp.read_csv(a)["M_1_1"], other["M_1_1"])
