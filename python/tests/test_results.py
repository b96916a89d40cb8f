"""The result objects (python/headspec/results.py): labelled arrays that hold exactly the
CSV's numbers, loss_se, and the xarray / pandas views that round-trip the CSV."""
import json

import numpy as np
import pytest

import headspec
from conftest import BINARY

pd = pytest.importorskip("pandas")


def cli_frame(tmp_path, *args):
    """The CSV of `headspec args --out …` as a pandas frame (numbers parsed exactly)."""
    import subprocess
    out = tmp_path / "cli.csv"
    subprocess.run([BINARY, *map(str, args), "--out", str(out)], check=True, capture_output=True)
    return pd.read_csv(out, float_precision="round_trip"), json.loads((tmp_path / "cli.csv.json").read_text())


# Runs of different lengths: the stop rule ends each run at its own specialisation time.
SIM = dict(engine="gram", D=100, L=5, T=60, record_every=1, test_samples=100, seed=1, runs=3, delta=0.2,
           stop_when_specialised=True)
SIM_ARGS = ["simulate", "--engine", "gram", "--D", 100, "--L", 5, "--T", 60, "--record-every", 1, "--test-samples",
            100, "--seed", 1, "--runs", 3, "--delta", 0.2, "--stop-when-specialised"]


def test_arrays_over_runs_and_records_hold_the_csv_rows(tmp_path):
    res = headspec.simulate(**SIM)
    frame, sidecar = cli_frame(tmp_path, *SIM_ARGS)
    assert list(frame.columns) == res.columns == sidecar["columns"]
    assert res.columns[-1] == "loss_se"
    lengths = frame.groupby("run").size().to_numpy()
    assert len(set(lengths)) > 1, "the runs should stop at different times"
    assert res.M.shape == (3, lengths.max(), 2, 2) and res.Q.shape == (3, lengths.max(), 2, 2)
    for _, row in frame.iterrows():
        k, i = int(row["run"]), int(np.flatnonzero(res.t == row["t"])[0])
        assert res.loss[k, i] == row["loss"] and res.loss_se[k, i] == row["loss_se"]
        for h in range(2):
            assert res.R[k, i, h] == row[f"R_{h + 1}"] and res.c[k, i, h] == row[f"c_{h + 1}"]
            assert res.ortho[k, i, h] == row[f"ortho_{h + 1}"] and res.cos[k, i, h, h] == 1
            for f in range(2):
                assert res.M[k, i, h, f] == row[f"M_{h + 1}_{f + 1}"]
            for g in range(h, 2):
                assert res.Q[k, i, h, g] == res.Q[k, i, g, h] == row[f"Q_{h + 1}_{g + 1}"]
        assert res.cos[k, i, 0, 1] == res.cos[k, i, 1, 0] == row["cos_1_2"]
    for k, n in enumerate(lengths):  # past a run's last record: NaN
        assert np.isnan(res.M[k, n:]).all() and not np.isnan(res.M[k, :n]).any()
    assert res.model == sidecar["model"] and res.simulation["delta"] == 0.2
    assert res.parameters == {"model": sidecar["model"], "simulation": res.simulation}


def test_loss_se_is_the_standard_error_of_the_test_samples():
    """Four times the samples halve the standard error (its own error: ≈ (κ/4n)^½ relative,
    κ ≤ 10 for these squared errors; 0.25 is > 5 of those)."""
    few = headspec.simulate(engine="gram", D=400, L=4, T=0, test_samples=2000, seed=7)
    many = headspec.simulate(engine="gram", D=400, L=4, T=0, test_samples=8000, seed=7)
    assert few.loss_se[0, 0] > 0
    assert abs(few.loss_se[0, 0] / many.loss_se[0, 0] - 2) < 0.25
    assert abs(few.loss[0, 0] - many.loss[0, 0]) < 5 * few.loss_se[0, 0]


def test_fixed_readout_has_no_c_and_theory_has_nan_loss_se():
    res = headspec.simulate(engine="gram", D=200, T=0.2, readout="sum")
    assert res.c is None and "c_1" not in res.columns
    ode = headspec.theory(init_D=200, mc=256, dt=0.1, T=0.2, record_every=0.1)
    assert np.isnan(ode.loss_se).all() and not np.isnan(ode.loss).any()
    with pytest.raises(KeyError, match="result.M is the array"):
        ode["M"]


def test_to_dataframe_round_trips_the_csv(tmp_path):
    res = headspec.simulate(**SIM)
    frame, _ = cli_frame(tmp_path, *SIM_ARGS)
    wide = res.to_dataframe("wide")
    pd.testing.assert_frame_equal(wide, frame, check_dtype=False, check_exact=True)
    long = res.to_dataframe()
    assert list(long.columns) == ["run", "t", "column", "quantity", "i", "j", "value"]
    back = long.pivot(index=["run", "t"], columns="column", values="value")
    back = back.reset_index()[frame.columns]
    pd.testing.assert_frame_equal(back.sort_values(["run", "t"]).reset_index(drop=True), frame,
                                  check_dtype=False, check_exact=True, check_names=False)
    m12 = long[(long["quantity"] == "M") & (long["i"] == 1) & (long["j"] == 2)]
    np.testing.assert_array_equal(m12["value"].to_numpy(), frame["M_1_2"].to_numpy())
    assert set(long.loc[long["column"] == "loss_se", "quantity"]) == {"loss_se"}
    with pytest.raises(ValueError, match="layout"):
        res.to_dataframe("tall")


def test_to_xarray_round_trips_the_csv(tmp_path):
    pytest.importorskip("xarray")
    res = headspec.simulate(**SIM)
    frame, sidecar = cli_frame(tmp_path, *SIM_ARGS)
    ds = res.to_xarray()
    assert dict(ds.sizes) == {"run": 3, "t": len(res.t), "head": 2, "head2": 2, "direction": 2}
    for _, row in frame.iterrows():
        at = ds.sel(run=int(row["run"]), t=row["t"])
        assert float(at["loss"]) == row["loss"] and float(at["loss_se"]) == row["loss_se"]
        assert float(at["M"].sel(head=2, direction=1)) == row["M_2_1"]
        assert float(at["Q"].sel(head=1, head2=2)) == row["Q_1_2"]
        assert float(at["cos"].sel(head=2, head2=1)) == row["cos_1_2"]
    assert ds.attrs["model.lr"] == sidecar["model"]["lr"] and ds.attrs["simulation.seed"] == 1


def test_theory_mc_error_labels_every_standard_error():
    res = headspec.theory(init_D=400, init_engine="gram", mc=512, dt=0.5, T=2, record_every=1, mc_error=True)
    se = res.standard_errors
    assert se["M"].shape == res.M.shape and (se["M"][:, 1:] > 0).all()
    np.testing.assert_array_equal(se["Q"][..., 0, 1], res["Q_1_2_se"].reshape(1, -1))
    np.testing.assert_array_equal(se["Q"][..., 1, 0], se["Q"][..., 0, 1])


def test_sweep_grid_as_a_dict_gives_typed_values_and_equals_the_text_grid():
    kw = dict(engine="gram", D=200, T=0.5, record_every=0.5, test_samples=100, runs=1, L=4)
    typed = headspec.sweep(grid={"H": [1, 2], "lr": [0.5, 1], "activation": ["softmax", "softmax1"]}, **kw)
    text = headspec.sweep(grid="H=1,2;lr=0.5,1;activation=softmax,softmax1", **kw)
    assert typed.grid == {"H": [1, 2], "lr": [0.5, 1.0], "activation": ["softmax", "softmax1"]}
    assert typed.rows["H"].dtype == np.int64 and typed.rows["lr"].dtype == float
    for name in text.rows:
        np.testing.assert_array_equal(typed.rows[name], text.rows[name], err_msg=name)
    assert set(typed.summary["lr"]) == {0.5, 1.0}
    assert typed.to_dataframe("summary").shape[0] == 8
    assert headspec.grid_text({"nu": [[1, 1], (5, 5.5)], "D": [1e3, np.int64(2000)]}) == "nu=1,1|5,5.5;D=1000|2000"


def test_sweep_grid_dict_one_value_per_element_for_vector_flags():
    """One rule (headspec.grid_text): each element of a key's list is one grid point. For ν a number
    is a vector of one entry, so {"nu": [1, 4]} is two points with F = 1 and {"nu": [[1, 4]]} one
    point with F = 2; a schedule's commas stay inside its value."""
    kw = dict(engine="gram", D=200, T=0.5, record_every=0.5, test_samples=100, L=4, H=1)
    two = headspec.sweep(grid={"nu": [1, 4]}, **kw)
    assert two.grid == {"nu": ["1", "4"]} and "M_1_1" in two.summary and "M_1_2" not in two.summary
    one = headspec.sweep(grid={"nu": [[1, 4]]}, **kw)
    assert one.grid == {"nu": ["1,4"]} and "M_1_2" in one.summary
    arrays = headspec.sweep(grid={"nu": [np.array([1.0, 4.0])]}, **kw)
    np.testing.assert_array_equal(arrays.summary["M_1_2"], one.summary["M_1_2"])
    schedules = headspec.sweep(grid={"lr_schedule": ["constant", "step:0.2,0.5,0.4,0.25"]}, **kw)
    assert schedules.grid == {"lr-schedule": ["constant", "step:0.2,0.5,0.4,0.25"]}


@pytest.mark.parametrize("nu", [np.array([2.0, 2.0]), np.array([2, 2]), [np.float64(2), 2]])
def test_numpy_arrays_and_scalars_are_taken_where_lists_and_numbers_are(nu):
    kw = dict(D=200, T=0.5, record_every=0.5, test_samples=50)
    np.testing.assert_array_equal(headspec.simulate(nu=nu, **kw).M, headspec.simulate(nu=[2, 2], **kw).M)
    for scalar in (np.float64(3), np.array(3.0), np.int32(3)):
        np.testing.assert_array_equal(headspec.simulate(nu=scalar, **kw).M, headspec.simulate(nu=3, **kw).M)


@pytest.mark.parametrize("grid, message", [({"H": [True]}, "is not a value of --H"),
                                           ({"activation": ["a;H=2"]}, "may not be empty"),
                                           ({"lr": [object()]}, "is not a value of --lr")])
def test_sweep_grid_dict_refuses_values_the_text_cannot_hold(grid, message):
    with pytest.raises(ValueError, match=message):
        headspec.sweep(grid=grid, D=200, T=0.1)
