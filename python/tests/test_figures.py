"""`headspec figure N --quick` draws every available figure: a real PNG and data CSVs with the
columns of `simulate`/`theory`. All of them run: 5–12 s each on an idle 2-core machine with sobol,
Fig. 1, 6 and 11 with their default laplace 15–55 s."""
import glob
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import BINARY, ROOT

sys.path.insert(0, os.path.join(ROOT, "python", "figures"))
import common  # noqa: E402
from make_figure import AVAILABLE  # noqa: E402

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
# A guard against a hang, not a speed test: at least ten times the slowest quick figure's time on
# two idle cores (docs/testing.md "Times"), so that a busy machine does not fail the suite.
QUICK_FIGURE_TIMEOUT = 1800
# Figures on the real digits, which scripts/fetch-mnist puts into data/mnist.
MNIST_FIGURES = {5, 7}
# Figures drawn here with sobol instead of their default: laplace (the default for their H = 2
# softmax theory, docs/theory.md §2) took 25–35 s each at quick size; Fig. 1, 6 and 11 keep the
# default, so that the laplace path of a figure, of linearise and of a theory sweep is drawn.
SOBOL_HERE = {4, 8, 9, 13}


def expected_columns(header, learned_readout=True, test_error=False):
    """The CSV columns of docs/cli.md for the H and F read off the M_h_f columns (c_h only
    with a learned readout; loss_se last for simulate and mnist, whose error is estimated from
    test samples)."""
    ms = [c for c in header if c.startswith("M_")]
    H = max(int(c.split("_")[1]) for c in ms)
    F = max(int(c.split("_")[2]) for c in ms)
    cols = ["run", "t", "loss"] + [f"M_{h}_{f}" for h in range(1, H + 1) for f in range(1, F + 1)]
    cols += [f"R_{h}" for h in range(1, H + 1)]
    cols += [f"Q_{h}_{g}" for h in range(1, H + 1) for g in range(h, H + 1)]
    if learned_readout:
        cols += [f"c_{h}" for h in range(1, H + 1)]
    cols += [f"ortho_{h}" for h in range(1, H + 1)]
    cols += [f"cos_{h}_{g}" for h in range(1, H + 1) for g in range(h + 1, H + 1)]
    return cols + (["loss_se"] if test_error else [])


def test_figure_one_is_available():
    assert 1 in AVAILABLE  # the README's first command draws it


@pytest.mark.parametrize("number", sorted(AVAILABLE))
def test_quick_figure(number, tmp_path):
    if number in MNIST_FIGURES and not os.path.isdir(os.path.join(ROOT, "data", "mnist")):
        pytest.skip("no data/mnist (scripts/fetch-mnist)")
    method = ["--mc-method", "sobol"] if number in SOBOL_HERE else []
    res = subprocess.run([BINARY, "figure", str(number), "--quick", *method, "--out-dir", str(tmp_path)],
                         capture_output=True, text=True, timeout=QUICK_FIGURE_TIMEOUT)
    assert res.returncode == 0, res.stderr
    png = tmp_path / f"fig{number}.png"
    data = png.read_bytes()
    assert data[:8] == PNG_SIGNATURE
    assert len(data) > 20000
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert width > 600 and height > 300
    assert (tmp_path / f"fig{number}.svg").stat().st_size > 0
    meta = json.loads((tmp_path / f"fig{number}.json").read_text())
    assert meta["quick"] is True and meta["commands"]
    csvs = sorted(glob.glob(str(tmp_path / f"fig{number}_*.csv")))
    # One CSV per command that writes one (`bayes` prints its JSON; figN.csv, a figure's own
    # derived table, is not a headspec output and is not matched by figN_*.csv).
    assert len(csvs) == sum("--out" in c.split() for c in meta["commands"])
    for path in csvs:
        with open(path) as f:
            header = f.readline().strip().split(",")
            rows = f.readlines()
        # A sweep's rows start with its grid keys (e.g. D), then the columns of `simulate`.
        columns = header[header.index("run"):]
        with open(path + ".json") as f:
            sidecar = json.load(f)
        readout = (sidecar.get("model") or sidecar["base_model"])["readout"]
        test_error = sidecar["command"] in ("simulate", "mnist")
        assert columns == expected_columns(columns, readout == "learned", test_error), path
        assert len(rows) >= 10, path
        assert all(len(r.split(",")) == len(header) for r in rows), path
    # The title names how each panel's theory took its expectations (figN.json keeps that text):
    # under auto laplace for the H = 2 softmax theory, sobol with its N elsewhere.
    expectations = meta["parameters"].get("expectations")
    if number == 11:
        assert expectations == "laplace"
    if number == 12:
        assert expectations.startswith("laplace (H = 2); sobol N = ")  # sobol's N rounded up per H
        assert "laplace" not in expectations.split("; ", 1)[1] and all(f"H = {H}" in expectations for H in (4, 5, 8))
    if number in (4, 8, 9, 13):  # drawn here with --mc-method sobol: every panel sobol
        assert "laplace" not in str(expectations) and "sobol N = " in str(expectations)
    if number == 6:
        assert meta["parameters"]["linearised"]["expectations"] == "laplace"
    if number == 6:
        # The linearisation's prediction over the figure's D: finite, τ^s growing with D; with the default
        # method (laplace here) one seed, whose ℓ(t) has no sampling error: no spread over seeds.
        lin = meta["parameters"]["linearised"]
        assert [r["D"] for r in lin["per_D"]] == sorted(set(meta["parameters"]["D"]) | set(meta["parameters"]["sde"]["D"]))
        medians = [r["median"] for r in lin["per_D"]]
        assert all(np.isfinite(medians)) and all(np.diff(medians) > 0)
        assert lin["mc_seeds"] == 1 and lin["lambda_plus"]["mean"] > 0
        assert all(r["median_sd"] == 0 for r in lin["per_D"])


def test_run_all_gives_few_commands_every_thread(tmp_path, monkeypatch):
    """run_all: 4 or more commands run two at a time on one thread each; fewer run one after
    another with the threads the environment gives (a stand-in binary writes its
    OMP_NUM_THREADS and whether another command was running)."""
    fake = tmp_path / "fake-headspec"
    fake.write_text('#!/bin/sh\nout=""; while [ $# -gt 0 ]; do [ "$1" = --out ] && out=$2; shift; done\n'
                    ': > "$out.running"; sleep 0.5; others=$(ls "$(dirname "$out")" | grep -c running)\n'
                    'printf "threads,others\\n%s,%s\\n" "${OMP_NUM_THREADS:-0}" "$((others - 1))" > "$out"\n'
                    'rm "$out.running"\n')
    fake.chmod(0o755)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    for n, threads, overlap in ((4, 1, True), (3, 0, False)):  # 0: OMP_NUM_THREADS not set
        f = common.Figure(99, str(fake), str(tmp_path / f"n{n}"), quick=True)
        tables = f.run_all([["theory", "--out", f.path(f"_{k}.csv")] for k in range(n)])
        assert [int(t["threads"][0]) for t in tables] == [threads] * n
        assert any(t["others"][0] > 0 for t in tables) == overlap


def test_expectations_named_per_panel(tmp_path):
    laplace = {"mc": 16384, "mc_method": "auto", "mc_method_used": "laplace", "mc_samples_used": 0}
    sobol = {"mc": 20000, "mc_method": "auto", "mc_method_used": "sobol", "mc_samples_used": 20480}
    assert common.expectations_of(laplace) == "laplace"
    assert common.expectations_of(sobol) == "sobol N = 20480"
    # linearise records mc_method_used only under auto, and no samples count: its N is --mc
    assert common.expectations_of({"mc": 8192, "mc_method": "plain"}) == "plain N = 8192"
    path = tmp_path / "run.csv"
    (tmp_path / "run.csv.json").write_text(json.dumps({"theory": sobol}))
    assert common.expectations_of_csv(path) == "sobol N = 20480"
    panels = [("H = 2", "laplace"), ("H = 4", "sobol N = 20480"), ("H = 2", "laplace"), ("H = 5", "sobol N = 20480")]
    assert common.expectations_by_panel(panels) == "laplace (H = 2); sobol N = 20480 (H = 4, H = 5)"
    assert common.expectations_by_panel(panels[:1] + panels[2:3]) == "laplace"


def test_figure_four_names_the_laplace_points(tmp_path):
    """Fig. 4's title groups the laplace commands by activation: one H list when they share it."""
    import fig04
    laplace = {"mc": 1000, "mc_method": "auto", "mc_method_used": "laplace", "mc_samples_used": 0}
    sobol = {"mc": 1000, "mc_method": "auto", "mc_method_used": "sobol"}
    runs = [("softmax", 1, laplace), ("softmax1", 1, laplace), ("softmax", 2, laplace), ("softmax1", 2, laplace),
            ("bsoftmax", 2, dict(sobol, mc_samples_used=2048)), ("softmax", 4, dict(sobol, mc_samples_used=24576))]
    keys, commands = [], []
    for n, (act, H, theory) in enumerate(runs):
        (tmp_path / f"run{n}.csv.json").write_text(json.dumps({"theory": theory}))
        keys.append(("a", 10.0, 4, H, act, "learned"))
        commands.append(["theory", "--out", str(tmp_path / f"run{n}.csv")])
    both = "laplace for softmax and softmax-1 at H = 1, 2; sobol N = 2048–24576"
    assert fig04.expectations_text(keys, commands) == both
    assert fig04.expectations_text(keys[1:], commands[1:]) == \
        "laplace for softmax-1 at H = 1, 2, softmax at H = 2; sobol N = 2048–24576"
    assert fig04.expectations_text(keys[4:], commands[4:]) == "sobol N = 2048–24576"


def test_bad_simulation_engine_is_bad_input(tmp_path):
    env = dict(os.environ, HEADSPEC_FIGURE_ENGINE="sparse")
    res = subprocess.run([BINARY, "figure", "9", "--quick", "--out-dir", str(tmp_path)], capture_output=True,
                         text=True, env=env, timeout=60)
    assert res.returncode == 2
    assert res.stderr.strip() == "headspec: error: figure: HEADSPEC_FIGURE_ENGINE must be gram or dense, got 'sparse'"
    assert not list(tmp_path.iterdir())


def test_figure_one_with_the_stochastic_theorys_band(tmp_path):
    """`figure 1 --sde-runs K`: K runs of `theory --sde` from the simulation's initial state
    (--init-seed 1) with independent noise, drawn as a band; recorded with the figure. The line
    then also reports its Monte Carlo error (--mc-error, `<column>_se` columns)."""
    res = subprocess.run([BINARY, "figure", "1", "--quick", "--sde-runs", "2", "--mc-method", "sobol", "--out-dir",
                          str(tmp_path)], capture_output=True, text=True, timeout=QUICK_FIGURE_TIMEOUT)
    assert res.returncode == 0, res.stderr
    meta = json.loads((tmp_path / "fig1.json").read_text())
    assert meta["parameters"]["sde_runs"] == 2
    assert any("--sde" in c.split() and "--init-seed" in c.split() for c in meta["commands"])
    with open(tmp_path / "fig1_sde.csv") as f:
        header = f.readline().strip().split(",")
        runs = {line.split(",")[header.index("run")] for line in f}
    assert runs == {"0", "1"}
    line = [c.split() for c in meta["commands"] if c.split()[1] == "theory" and "--sde" not in c.split()]
    assert len(line) == 1 and "--mc-error" in line[0]
    with open(tmp_path / "fig1_theory.csv") as f:
        assert {"loss_se", "M_1_2_se", "ortho_2_se"} <= set(f.readline().strip().split(","))


def test_figure_with_a_monte_carlo_seed(tmp_path):
    """`figure N --mc-seed S`: every theory command (the ODE and the stochastic theory's band,
    which named a seed of its own) draws its samples from seed S, given once; the simulation and
    the initial states keep the figure's seeds; recorded with the figure and in each sidecar."""
    res = subprocess.run([BINARY, "figure", "1", "--quick", "--sde-runs", "2", "--mc-seed", "5", "--mc-method", "sobol",
                          "--out-dir", str(tmp_path)], capture_output=True, text=True, timeout=QUICK_FIGURE_TIMEOUT)
    assert res.returncode == 0, res.stderr
    meta = json.loads((tmp_path / "fig1.json").read_text())
    assert meta["mc_seed"] == 5
    commands = [c.split() for c in meta["commands"]]
    theory = [c for c in commands if c[1] == "theory"]
    assert len(theory) == 2
    for c in theory:
        assert c.count("--mc-seed") == 1 and c[c.index("--mc-seed") + 1] == "5", c
    assert all("--mc-seed" not in c for c in commands if c[1] == "simulate")
    for name in ("fig1_theory.csv", "fig1_sde.csv"):
        with open(tmp_path / (name + ".json")) as f:
            side = json.load(f)
        assert side["theory"]["mc_seed"] == 5, name
        assert side["theory"]["seed"] in (1, 1001), name  # the initial state's (and the band's noise) seed


def test_figure_reuse_skips_finished_commands(tmp_path):
    """HEADSPEC_FIGURE_REUSE=1: a figure run again in its folder reuses every command whose CSV
    and sidecar are there (commands run one by one as well as in parallel), recomputes none of
    them and draws the same figure data."""
    cmd = [BINARY, "figure", "2", "--quick", "--out-dir", str(tmp_path)]
    assert subprocess.run(cmd, capture_output=True, text=True, timeout=QUICK_FIGURE_TIMEOUT).returncode == 0
    csvs = sorted(glob.glob(str(tmp_path / "fig2_*.csv")))
    assert csvs
    def state():
        return {p: (os.stat(p).st_mtime_ns, Path(p).read_bytes()) for p in csvs}

    before = state()
    env = dict(os.environ, HEADSPEC_FIGURE_REUSE="1")
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=QUICK_FIGURE_TIMEOUT, env=env)
    assert res.returncode == 0, res.stderr
    meta = json.loads((tmp_path / "fig2.json").read_text())
    assert sorted(meta["reused_outputs"]) == csvs
    assert state() == before


@pytest.mark.parametrize("args", [
    ["2", "--sde-runs", "3"], ["1", "--sde-runs", "-1"],  # no band in Fig. 2; a negative count
    ["4", "--lr-schedule", "inverse:0", "--quick"], ["4", "--lr-schedule", "warm", "--quick"],
    ["1", "--lr-schedule", "inverse:20", "--quick"],  # only Fig. 4 takes a schedule
    ["2", "--mc-method", "quasi", "--quick"],
    ["2", "--mc-seed", "-2", "--quick"], ["2", "--mc-seed", "4294967296", "--quick"],
])
def test_bad_or_misplaced_flag_is_refused(args, tmp_path):
    """Exit 2 with one line naming the flag (args[1]), before anything is written."""
    res = subprocess.run([BINARY, "figure", *args, "--out-dir", str(tmp_path)], capture_output=True, text=True,
                         timeout=60)
    assert res.returncode == 2
    assert res.stderr.count("\n") == 1 and args[1] in res.stderr
    assert not list(tmp_path.iterdir())


def test_figure_four_with_a_schedule(tmp_path):
    """`figure 4 --lr-schedule S`: every theory run takes the schedule; the files are fig4_<S>.*. (sobol, as
    test_quick_figure[4]: auto gives laplace to Fig. 4's H ≤ 2 points, 10× the cost.)"""
    res = subprocess.run([BINARY, "figure", "4", "--quick", "--lr-schedule", "inverse:20", "--mc-method", "sobol",
                          "--out-dir", str(tmp_path)],
                         capture_output=True, text=True, timeout=QUICK_FIGURE_TIMEOUT)
    assert res.returncode == 0, res.stderr
    assert (tmp_path / "fig4_inverse_20.png").read_bytes()[:8] == PNG_SIGNATURE
    meta = json.loads((tmp_path / "fig4_inverse_20.json").read_text())
    assert meta["lr_schedule"] == "inverse:20"
    theory = [c.split() for c in meta["commands"] if c.split()[1] == "theory"]
    assert theory and all(c[c.index("--lr-schedule") + 1] == "inverse:20" for c in theory)
    for path in glob.glob(str(tmp_path / "fig4_inverse_20_*.csv")):
        with open(path + ".json") as f:
            assert json.load(f)["model"]["lr_schedule"] == "inverse:20", path
    assert not (tmp_path / "fig4.png").exists()


def test_figure_with_a_monte_carlo_method(tmp_path):
    """`figure N --mc-method M`: every theory command of the figure takes it; recorded with
    the figure and in each theory CSV's sidecar."""
    res = subprocess.run([BINARY, "figure", "2", "--quick", "--mc-method", "plain", "--out-dir", str(tmp_path)],
                         capture_output=True, text=True, timeout=QUICK_FIGURE_TIMEOUT)
    assert res.returncode == 0, res.stderr
    meta = json.loads((tmp_path / "fig2.json").read_text())
    assert meta["mc_method"] == "plain"
    theory = [c.split() for c in meta["commands"] if c.split()[1] == "theory"]
    assert theory and all(c[c.index("--mc-method") + 1] == "plain" for c in theory)
    for path in glob.glob(str(tmp_path / "fig2_*.csv")):
        with open(path + ".json") as f:
            assert json.load(f)["theory"]["mc_method"] == "plain", path
