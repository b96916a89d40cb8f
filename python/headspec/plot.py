"""Drawing helpers: the pieces the figures of `headspec figure` are drawn with (python/figures/).

Every function draws into a matplotlib Axes you pass; none creates a figure or chooses a
backend. A *table* is what a call returned (a `Trajectories`) or a CSV read with `read_csv`
(a dict of column name -> array over the rows). Functions that draw one run's lines take
`run=` (default: the first run); `theory_against_simulation` draws every run of the
simulation as dots. The quantities: docs/model.md §5; the columns: docs/cli.md "Output columns".

    import matplotlib.pyplot as plt
    import headspec, headspec.plot as hp
    sim = headspec.simulate(engine="gram", D=2000, L=10, T=30, runs=3)
    ode = headspec.theory(init_engine="gram", init_D=2000, L=10, T=30, mc=2048, dt=0.25)
    fig, axes = plt.subplots(1, 4, figsize=(16, 3.4))
    hp.theory_against_simulation(axes, ode, sim, title="D = 2000")
"""
import hashlib
import io
import json
import os

import numpy as np

try:
    import matplotlib
except ImportError as err:  # an optional dependency (README "Python")
    raise ImportError("headspec.plot needs matplotlib (Debian: python3-matplotlib)") from err

#: One colour per head (matplotlib's default cycle), the same in every panel.
HEAD_COLOURS = matplotlib.rcParams["axes.prop_cycle"].by_key()["color"]
_STYLES = ["-", "--", ":"]
_STYLE_NAMES = ["solid", "dashed", "dotted"]


def read_csv(path, check_sidecar=True):
    """A headspec CSV as a dict of column name -> numpy array over its rows.

    If the CSV has its sidecar (PATH.json, docs/cli.md "Output files") and `check_sidecar`,
    the CSV's bytes must have the SHA-256 the sidecar records: a CSV of one run beside the
    sidecar of another raises ValueError."""
    with open(path, "rb") as f:
        raw = f.read()
    if check_sidecar and os.path.isfile(str(path) + ".json"):
        with open(str(path) + ".json") as f:
            recorded = json.load(f).get("sha256", {}).get("csv")
        if recorded is not None and recorded != hashlib.sha256(raw).hexdigest():
            raise ValueError(f"{path}: its bytes do not have the SHA-256 its sidecar {path}.json records "
                             "(the two come from different runs, or the CSV was changed)")
    text = raw.decode()
    header = text.split("\n", 1)[0].strip().split(",")
    data = np.loadtxt(io.StringIO(text), delimiter=",", skiprows=1, ndmin=2)
    return {name: data[:, i] for i, name in enumerate(header)}


def columns(table):
    """The column names of a table (a Trajectories or a dict of columns)."""
    return list(table.columns) if hasattr(table, "columns") else list(table)


def select_run(table, run):
    """The rows of one run, as a dict of columns."""
    keep = np.asarray(table["run"]) == run
    return {name: np.asarray(table[name])[keep] for name in columns(table)}


def runs(table):
    """The run indices present in a table, sorted."""
    return sorted(set(np.asarray(table["run"]).astype(int)))


def heads(table):
    """The head indices h (from 1) of the table's M_h_f columns."""
    return sorted({int(k.split("_")[1]) for k in columns(table) if k.startswith("M_") and not k.endswith("_se")})


def directions(table):
    """The latent directions f (from 1) of the table's M_h_f columns."""
    return sorted({int(k.split("_")[2]) for k in columns(table) if k.startswith("M_") and not k.endswith("_se")})


def colour(h):
    """The colour of head h (from 1)."""
    return HEAD_COLOURS[(h - 1) % len(HEAD_COLOURS)]


def _one_run(table, run):
    if "run" not in columns(table):
        return table
    present = runs(table)
    return select_run(table, present[0] if run is None else run)


def _title(ax, title):
    if title:
        ax.set_title(title, fontsize=9)


def heads_against_t(ax, table, directions=None, run=None, title=""):
    """M_hf against t = n/D: one colour per head, one line style per direction f (default:
    every direction of the table)."""
    table = _one_run(table, run)
    directions = globals()["directions"](table) if directions is None else list(directions)
    for h in heads(table):
        for i, f in enumerate(directions):
            ax.plot(table["t"], table[f"M_{h}_{f}"], _STYLES[i % len(_STYLES)], color=colour(h), lw=1.3,
                    label=f"head {h}" if i == 0 else None)
    ax.axhline(0, color="0.7", lw=0.6, zorder=0)
    ax.set_xlabel("$t = n/D$")
    if len(directions) == 1:
        ax.set_ylabel(f"$M_{{h{directions[0]}}}$")
    else:
        styles = ", ".join(f"{_STYLE_NAMES[i % 3]} $M_{{h{f}}}$" for i, f in enumerate(directions))
        ax.set_ylabel(r"$M_{hf}$" + f"  ({styles})")
    _title(ax, title)


def head_paths(ax, table, f1=1, f2=2, run=None, title=""):
    """The path of each head in the (M_h f1, M_h f2) plane; circle at the first record, square
    at the last."""
    table = _one_run(table, run)
    for h in heads(table):
        x, y = table[f"M_{h}_{f1}"], table[f"M_{h}_{f2}"]
        ax.plot(x, y, color=colour(h), lw=1.3, label=f"head {h}")
        ax.plot(x[0], y[0], "o", color=colour(h), ms=4)
        ax.plot(x[-1], y[-1], "s", color=colour(h), ms=5)
    ax.axhline(0, color="0.7", lw=0.6, zorder=0)
    ax.axvline(0, color="0.7", lw=0.6, zorder=0)
    ax.set_xlabel(f"$M_{{h{f1}}}$")
    ax.set_ylabel(f"$M_{{h{f2}}}$")
    _title(ax, title)


def head_legend(ax, H):
    """A small legend, in two columns beyond four heads."""
    ax.legend(fontsize=6, ncol=2 if H > 4 else 1)


def band(ax, table, column, colour, label=None):
    """Mean ± sd over the runs of a table of `column` at each recorded t, shaded (a run that
    has no record at some t is left out there)."""
    t_all, values_all = np.asarray(table["t"]), np.asarray(table[column])
    t = np.unique(t_all)
    values = [values_all[t_all == s] for s in t]
    mean = np.array([v.mean() for v in values])
    sd = np.array([v.std(ddof=1) if len(v) > 1 else 0.0 for v in values])
    ax.fill_between(t, mean - sd, mean + sd, color=colour, alpha=0.18, lw=0, label=label)


def sampling_error(ax, table, column, colour, label=None):
    """The theory's line ± 2 of its Monte Carlo standard errors (the `<column>_se` column that
    `theory --mc-error` writes, docs/model.md §6), dotted."""
    if f"{column}_se" not in columns(table):
        raise ValueError(f"no column {column}_se: run the theory with --mc-error (Python mc_error=True)")
    t, value, se = (np.asarray(table[name]) for name in ("t", column, f"{column}_se"))
    for sign in (-1, 1):
        ax.plot(t, value + sign * 2 * se, ":", color=colour, lw=0.9, label=label if sign < 0 else None)


def theory_against_simulation(axes, theory, simulation, title="", sde=None, theory_error=False):
    """Four panels (the error, M_h1, M_h2, Q⊥_hh against t) of the theory (lines, its first
    run) against every run of a simulation (dots, run 0 darker); `sde`: runs of the stochastic
    theory (theory(sde=True, runs=K)), drawn as mean ± sd bands; `theory_error`: the theory's
    line ± 2 of its Monte Carlo standard errors, dotted (a run with `--mc-error`, Python
    `mc_error=True`, which writes them). Fig. 1, 9 and 10."""
    theory = _one_run(theory, None)
    sim_runs = runs(simulation)
    by_run = {k: select_run(simulation, k) for k in sim_runs}
    ax_loss, ax_m1, ax_m2, ax_ortho = axes
    ax_loss.plot(theory["t"], theory["loss"], color="k", lw=1.5, label="theory")
    if theory_error:
        sampling_error(ax_loss, theory, "loss", "k", label="theory ± 2 s.e. (Monte Carlo)")
    if sde is not None:
        band(ax_loss, sde, "loss", "k", label=f"SDE mean ± sd ({len(runs(sde))} runs)")
    for k, s in by_run.items():
        ax_loss.plot(s["t"], s["loss"], "o", ms=3, color="k", alpha=0.6 if k == 0 else 0.25,
                     label="simulation" if k == 0 else None)
    for ax, col, label in ((ax_m1, "M_{h}_1", r"$M_{h1}$"), (ax_m2, "M_{h}_2", r"$M_{h2}$"),
                           (ax_ortho, "ortho_{h}", r"$Q^\perp_{hh}$")):
        for h in heads(theory):
            c = colour(h)
            ax.plot(theory["t"], theory[col.format(h=h)], color=c, lw=1.5, label=f"head {h}")
            if theory_error:
                sampling_error(ax, theory, col.format(h=h), c)
            if sde is not None:
                band(ax, sde, col.format(h=h), c)
            for k, s in by_run.items():
                ax.plot(s["t"], s[col.format(h=h)], "o", ms=3, color=c, alpha=0.7 if k == 0 else 0.25)
        ax.set_ylabel(label)
    ax_loss.set_ylabel(r"error $\varepsilon$")
    for ax in axes:
        ax.set_xlabel("$t = n/D$")
    if title:
        ax_loss.set_title(title, loc="left")
    ax_loss.legend(fontsize=7)
    ax_m1.legend(fontsize=7)


def key_tiles(keys, columns=None):
    """The keys of one MNIST run (H × 28 × 28) as one mosaic array, `columns` tiles per row
    (default: all in one row), one pixel of NaN between tiles."""
    keys = np.asarray(keys, dtype=float)
    H, side = keys.shape[0], keys.shape[1]
    columns = H if columns is None else int(columns)
    rows = -(-H // columns)
    mosaic = np.full((rows * (side + 1) - 1, columns * (side + 1) - 1), np.nan)
    for h in range(H):
        r, c = divmod(h, columns)
        mosaic[r * (side + 1):r * (side + 1) + side, c * (side + 1):c * (side + 1) + side] = keys[h]
    return mosaic


def key_images(ax, result, run=0, columns=None, title=""):
    """The learned keys of one run of headspec.mnist(...) as 28 × 28 tiles, red positive and
    blue negative on one symmetric scale (the `mnist --keys` picture, docs/model.md §11)."""
    keys = result.keys if hasattr(result, "keys") and not callable(result.keys) else result["keys"]
    mosaic = key_tiles(np.asarray(keys)[run], columns)
    scale = np.nanmax(np.abs(mosaic)) or 1.0
    image = ax.imshow(mosaic, cmap="bwr", vmin=-scale, vmax=scale, interpolation="nearest")
    ax.set_axis_off()
    _title(ax, title)
    return image
