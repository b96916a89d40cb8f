"""Fig. 8: fixed against fresh Monte Carlo samples in the theory (docs/model.md §6). For each of
many initialisations (run k: the dense engine's keys at D = 10^4 with seed 1 + k, and Monte
Carlo seed 1 + k), the ODE is integrated twice with Heun's method and the same step: once
with the expectations fixed along the run (`theory`: under the default method auto, laplace's
quadrature, which has no samples; with --mc-method sobol or plain one set of N samples reused
at every evaluation), once drawing fresh samples at every step (`theory --mc-resample`, sobol
under auto). The histogram is of the difference of the first head's alignments at t_end,
ΔM_1f = M_1f(fresh) − M_1f(fixed), per direction f.
flip ν = (2, 2), H = 2, F = 2, L = 8, softmax, learned readout, η = 1."""

import matplotlib.pyplot as plt
import numpy as np

from common import expectations_of_csv, select_run, with_size_overrides

MODEL = ["--prior", "flip", "--nu", "2,2", "--L", 8, "--H", 2, "--activation", "softmax", "--lr", 1]


def base_sizes(quick):
    # The fixed half takes laplace under the default method (auto, docs/model.md §6): no sampling
    # error, so the difference is what fresh samples add. N = 32768 is the fresh half's (sobol),
    # and the fixed half's with --mc-method sobol, where those samples are converged (docs/theory.md §2).
    if quick:
        return {"runs": 24, "mc": 4096, "dt": 0.5, "T": 20, "rec": 2}
    return {"runs": 200, "mc": 32768, "dt": 0.25, "T": 150, "rec": 5}


def sizes(quick):
    return with_size_overrides(base_sizes(quick))


def finals(table, runs, column):
    return np.array([select_run(table, k)[column][-1] for k in range(runs)])


def make(f):
    s = sizes(f.quick)
    f.parameters = dict(s, model=" ".join(map(str, MODEL)), integrator="heun (both modes)", seed=1,
                        init="dense, D = 10^4 (theory default), run k seed 1 + k",
                        difference="M_1f(t_end) with fresh samples minus with fixed samples, same run k")
    common = ["theory", *MODEL, "--integrator", "heun", "--mc", s["mc"], "--dt", s["dt"], "--T", s["T"],
              "--record-every", s["rec"], "--runs", s["runs"], "--seed", 1]
    fixed, fresh = f.run_all([common + ["--out", f.path("_fixed.csv")],
                              common + ["--mc-resample", "--out", f.path("_resampled.csv")]])
    rows, diffs = [], {}
    for fdir in (1, 2):
        col = f"M_1_{fdir}"
        a, b = finals(fixed, s["runs"], col), finals(fresh, s["runs"], col)
        diffs[fdir] = (a, b, b - a)
    for k in range(s["runs"]):
        rows.append([k] + [v for fdir in (1, 2) for v in (float(diffs[fdir][0][k]), float(diffs[fdir][1][k]),
                                                           float(diffs[fdir][2][k]))])
    f.write_table(".csv", ["run", "M_1_1_fixed", "M_1_1_resampled", "dM_1_1", "M_1_2_fixed", "M_1_2_resampled",
                           "dM_1_2"], rows)

    fig, axes = plt.subplots(1, 3, figsize=(15, 4))
    for i, fdir in enumerate((1, 2)):
        a, b, d = diffs[fdir]
        ax = axes[i]
        ax.hist(d, bins=max(10, s["runs"] // 8), color=f"C{i}", alpha=0.8)
        ax.axvline(0, color="k", lw=0.8)
        ax.ticklabel_format(axis="x", style="sci", scilimits=(-2, 2))  # differences down to 10^-4
        ax.set_xlabel(rf"$\Delta M_{{1{fdir}}} = M_{{1{fdir}}}^{{\rm fresh}} - M_{{1{fdir}}}^{{\rm fixed}}$ at $t = {s['T']}$")
        ax.set_ylabel("initialisations")
        ax.set_title(rf"direction {fdir} ({'constant' if fdir == 1 else 'flipping'}): "
                     rf"mean {d.mean():+.2g}, s.d. {d.std(ddof=1):.2g}; s.d. of $M_{{1{fdir}}}$ {a.std(ddof=1):.3f}",
                     fontsize=8)
    ax = axes[2]
    a, b, _ = diffs[2]
    ax.plot(a, b, "o", ms=3, alpha=0.6)
    lim = max(np.abs(a).max(), np.abs(b).max()) * 1.1
    ax.plot([-lim, lim], [-lim, lim], "k--", lw=0.8)
    ax.set_xlabel(r"$M_{12}$, fixed expectations")
    ax.set_ylabel(r"$M_{12}$, fresh samples")
    ax.set_title(f"same initialisation; agreeing signs: {np.mean(np.sign(a) == np.sign(b)):.0%}", fontsize=8)
    fixed_by, fresh_by = expectations_of_csv(f.path("_fixed.csv")), expectations_of_csv(f.path("_resampled.csv"))
    f.parameters["expectations"] = {"fixed": fixed_by, "fresh": fresh_by}
    fig.suptitle(f"Fig. 8: fixed ({fixed_by}) vs fresh ({fresh_by}) Monte Carlo expectations over {s['runs']} "
                 f"initialisations; flip ν = (2, 2), H = 2, L = 8 (theory, Heun, dt = {s['dt']})", fontsize=10)
    fig.tight_layout()
    f.save(fig)
