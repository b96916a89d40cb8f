"""Fig. 11: where two heads specialise and where they stay redundant. Theory (docs/model.md §6),
softmax, H = 2, flip prior F = 2 (direction 1 constant, direction 2 flipping sign), L = 4,
η = 1, learned readout, over a grid of (ν_1, ν_2). Left: the cosine similarity between the
heads Q_12/√(Q_11 Q_22) at t = T (mean over runs); right: the specialisation time τ_2 of the
flipping direction (docs/model.md §10, δ = 0.2: first record where the heads' M_h2 spread by
more than δ), blank where it did not happen by T."""

import matplotlib.pyplot as plt
import numpy as np

from common import expectations_by_panel, expectations_of_csv, select_run, with_size_overrides

DELTA = 0.2


def base_sizes(quick):
    # The default method (auto: laplace here, softmax with H = 2, docs/model.md §6) is exactly
    # symmetric and has no sampling error: τ_2 comes from the initial spread and the growth rate,
    # not from samples. N = 16384 is what sobol takes (--mc-method sobol): it puts the growth rate
    # within a few per cent (docs/theory.md §2).
    if quick:
        return {"nu1": [1, 4], "nu2": [0.5, 2, 6], "runs": 1, "mc": 2048, "dt": 0.5, "T": 30, "rec": 3}
    return {"nu1": [0.5, 1, 2, 3, 4, 6, 8], "nu2": [0.5, 1, 2, 3, 4, 6, 8], "runs": 2, "mc": 16384, "dt": 0.4,
            "T": 300, "rec": 2}


def sizes(quick):
    return with_size_overrides(base_sizes(quick))


def tau_2(run):
    """First recorded t with ‖M_:,2 − mean_h M_h2‖_2 > δ (docs/model.md §10), or nan."""
    m = np.stack([run["M_1_2"], run["M_2_2"]])
    spread = np.linalg.norm(m - m.mean(axis=0), axis=0)
    above = np.nonzero(spread > DELTA)[0]
    return float(run["t"][above[0]]) if above.size else float("nan")


def make(f):
    s = sizes(f.quick)
    f.parameters = dict(s, prior="flip", H=2, L=4, activation="softmax", readout="learned", lr=1, seed=1,
                        delta=DELTA, init="dense, D = 10^4 (theory default)",
                        cosine="cos_1_2 = Q_12 / sqrt(Q_11 Q_22) at t = T")
    keys, commands = [], []
    for nu1 in s["nu1"]:
        for nu2 in s["nu2"]:
            keys.append((nu1, nu2))
            commands.append(["theory", "--prior", "flip", "--nu", f"{nu1:g},{nu2:g}", "--L", 4, "--H", 2,
                             "--activation", "softmax", "--lr", 1, "--mc", s["mc"], "--dt", s["dt"], "--T", s["T"],
                             "--record-every", s["rec"], "--runs", s["runs"], "--seed", 1,
                             "--out", f.path(f"_nu{nu1:g}_{nu2:g}.csv")])
    tables = f.run_all(commands)
    rows = []
    method = expectations_by_panel([(f"ν = ({nu1:g}, {nu2:g})", expectations_of_csv(c[c.index("--out") + 1]))
                                    for (nu1, nu2), c in zip(keys, commands)])
    f.parameters["expectations"] = method
    for (nu1, nu2), table in zip(keys, tables):
        for k in range(s["runs"]):
            r = select_run(table, k)
            half = np.argmin(np.abs(r["t"] - 0.5 * s["T"]))
            rows.append((nu1, nu2, k, float(r["t"][-1]), float(r["cos_1_2"][-1]), float(r["cos_1_2"][half]),
                         float(r["M_1_1"][-1]), float(r["M_2_1"][-1]), float(r["M_1_2"][-1]), float(r["M_2_2"][-1]),
                         tau_2(r), float(r["loss"][-1])))
    f.write_table(".csv", ["nu1", "nu2", "run", "t_end", "cos_end", "cos_half", "M_1_1", "M_2_1", "M_1_2", "M_2_2",
                           "tau_2", "loss_end"], rows)

    n1, n2 = len(s["nu1"]), len(s["nu2"])
    cos = np.array([[np.mean([r[4] for r in rows if r[0] == a and r[1] == b]) for a in s["nu1"]] for b in s["nu2"]])
    tau = np.array([[np.nanmean([r[10] for r in rows if r[0] == a and r[1] == b])
                     if any(np.isfinite(r[10]) for r in rows if r[0] == a and r[1] == b) else np.nan
                     for a in s["nu1"]] for b in s["nu2"]])
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.8))
    for ax, data, label, cmap, vmin, vmax in ((axes[0], cos, r"cosine similarity of the heads at $t = T$", "coolwarm",
                                               -1, 1),
                                              (axes[1], tau, r"specialisation time $\tau_2$ (blank: none by T)",
                                               "viridis", None, None)):
        im = ax.imshow(data, origin="lower", cmap=cmap, vmin=vmin, vmax=vmax, aspect="auto")
        for j in range(n2):
            for i in range(n1):
                v = data[j, i]
                ax.text(i, j, "–" if not np.isfinite(v) else (f"{v:.2f}" if ax is axes[0] else f"{v:.0f}"),
                        ha="center", va="center", fontsize=7)
        ax.set_xticks(range(n1), [f"{v:g}" for v in s["nu1"]])
        ax.set_yticks(range(n2), [f"{v:g}" for v in s["nu2"]])
        ax.set_xlabel(r"$\nu_1$ (constant direction)")
        ax.set_ylabel(r"$\nu_2$ (flipping direction)")
        ax.set_title(label, fontsize=9)
        fig.colorbar(im, ax=ax)
    fig.suptitle(f"Fig. 11: softmax, H = 2, flip F = 2, L = 4, η = 1 (theory: {method}, dt = {s['dt']}, "
                 f"T = {s['T']}, {s['runs']} run(s) per point)", fontsize=10)
    fig.tight_layout()
    f.save(fig)
