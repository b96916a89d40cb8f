"""Fig. 6: specialisation time τ^s of the flipping direction (docs/model.md §10, δ = 0.2) and τ̃^s = τ^s / ln D:
mean, median and variance over runs against D. Gram engine (exact in distribution at any D, docs/model.md §9)
where it is affordable, and the stochastic theory (docs/model.md §12, `sweep --engine sde`) across twelve decades,
D = 10^2 … 10^12; flip ν = (2, 2), L = 5, H = 2, softmax, learned readout, η = 1; each run stops once it has
specialised. Over them, the prediction of the linearised ODE with its finite-D noise
(fig6_prediction.py, docs/results.md "Linearisation at the unspecialised fixed point"): `headspec linearise
--along` gives the growth rate a(t) of the spread along the unspecialised trajectory and the noise σ²(t) that
SGD adds to it, for several Monte Carlo seeds; the band is the mean ± sd over the seeds."""
import matplotlib.pyplot as plt
import numpy as np

from common import expectations_of, read_csv
from fig6_prediction import predicted, seed_curves

MODEL = ["--prior", "flip", "--nu", "2,2", "--L", 5, "--H", 2, "--activation", "softmax"]


def stats(x):
    """Mean, unbiased variance and count of the finite entries (runs that specialised by T), and the
    median over all runs with the censored ones counted as +∞ (NaN unless more than half specialised)."""
    done = x[np.isfinite(x)]
    median = np.median(np.where(np.isfinite(x), x, np.inf)) if len(done) > len(x) / 2 else np.nan
    return ((done.mean() if len(done) else np.nan), (done.var(ddof=1) if len(done) > 1 else np.nan), len(done),
            median)


def per_D(summary, Ds):
    rows = []
    for D in Ds:
        keep = summary["D"] == D
        m, v, n, med = stats(summary["tau_2"][keep])
        mt, vt, _, medt = stats(summary["tau_tilde_2"][keep])
        rows.append({"D": D, "runs": int(keep.sum()), "specialised": n, "mean_tau": m, "var_tau": v,
                     "median_tau": med, "mean_tau_tilde": mt, "var_tau_tilde": vt, "median_tau_tilde": medt})
    return rows


def clean(rows):
    return [{k: (None if isinstance(v, float) and np.isnan(v) else v) for k, v in r.items()} for r in rows]


def linearised(f, quick):
    """`headspec linearise --along --mc-seeds K` in the Fig. 6 setting: per Monte Carlo seed, ℓ(t) with the
    finite-D noise (fig6_prediction.seed_curves: past the computed trajectory ℓ grows at the last computed
    rate a(t_max), slightly ahead of the true ℓ where τ^s > t_max, as a(t) still falls towards λ⁺ there).
    Returns those curves, the settings and λ⁺ over the seeds. With the default method (auto: laplace
    in this model, docs/theory.md §2) the drift has no sampling error and every seed's ℓ(t) would be the
    same up to the finite-D noise's own plain samples: one seed."""
    if quick:
        settings = {"mc": 8192, "approach_mc": 2000, "T_max": 100, "along": 400, "along_every": 10, "mc_seeds": 2}
    else:
        settings = {"mc": 80000, "approach_mc": 4000, "T_max": 300, "along": 1500, "along_every": 5, "mc_seeds": 8}
    if f.mc_method in ("", "auto", "laplace"):
        settings["mc_seeds"] = 1
    doc = f.printed_json("linearise", *MODEL, "--readout", "learned", "--lr", 1, "--mc", settings["mc"],
                         "--approach-mc", settings["approach_mc"], "--dt", 1, "--T-max", settings["T_max"],
                         "--along", settings["along"], "--along-every", settings["along_every"],
                         "--mc-seeds", settings["mc_seeds"], "--seed", 1)
    settings["expectations"] = expectations_of(doc["settings"])
    curves = [c for j in [doc] + doc.get("other_seeds", []) for c in seed_curves(j, settings["mc"], 1.0)
              if c[0] == "+ finite-D noise"]
    return curves, settings, doc["lambda_plus_over_seeds"]


def prediction_at(curves, Ds):
    """τ^s predicted at each D (δ = 0.2, q0 = 1): per quantity over the initial overlap z (median, mean, var)
    the mean and the sd over the seeds' curves."""
    per_seed = np.array([[predicted(t, ell, D, 0.2, 1.0) for D in Ds] for _, _, t, _, ell, _ in curves])
    out = {"D": [float(D) for D in Ds], "seeds": len(curves)}
    for i, name in enumerate(("median", "mean", "var")):
        out[name] = per_seed[:, :, i].mean(axis=0)
        out[name + "_sd"] = per_seed[:, :, i].std(axis=0, ddof=1) if len(curves) > 1 else np.zeros(len(Ds))
    return out


def band_text(seeds):
    """What the red curve is: the mean ± sd over the seeds' curves, or the one curve (laplace's drift,
    which no seed changes)."""
    return f"mean ± sd over {seeds} Monte Carlo seeds" if seeds > 1 else "one run"


def draw_prediction(axes, pred):
    """The prediction's band (mean ± sd over seeds) on the four panels: τ^s (mean solid, median dashed),
    Var τ^s, and the same divided by ln D (ln² D for the variance)."""
    D = np.array(pred["D"])
    scale = {"": np.ones_like(D), "tilde": np.log(D)}
    panels = [(0, "mean", "", "-"), (0, "median", "", "--"), (1, "var", "", "-"), (2, "mean", "tilde", "-"),
              (2, "median", "tilde", "--"), (3, "var", "tilde", "-")]
    for k, name, kind, style in panels:
        s = scale[kind] ** (2 if name == "var" else 1)
        mid, sd = pred[name] / s, pred[name + "_sd"] / s
        label = "linearised ODE + finite-D noise" if (k, name) == (0, "mean") else None
        axes[k].plot(D, mid, "C3" + style, lw=1, label=label)
        axes[k].fill_between(D, mid - sd, mid + sd, color="C3", alpha=0.2, lw=0)


def make(f):
    # Gram: the study of docs/results.md "Specialisation time (seed Fig. 6)", 100 runs per D at D = 10^2 … 10^5,
    # T = 800 (0–2 % censored there). SDE, 50 runs per D (the sweep of docs/stochastic-theory.md §2): its cost
    # does not depend on D, so D = 10^2 … 10^12; its drift from one fixed set of Sobol samples shared by every
    # run, corrected along the unspecialised path of N° samples (--sde-reference-mc, docs/stochastic-theory.md
    # §6: the path, computed once for every run and D, sets the accuracy of τ^s, not the drift's N), Σ from 4096
    # plain samples, Euler–Maruyama at dt = 1 (§4: the same law of τ^s as heun at 0.5); T = 4000 leaves room for
    # τ ≈ 2000 at 10^12. N° = 2^21: the path's own sample error moves τ^s at 10^12 by a few per cent at
    # N° = 131072 (1958 against 2039 at 524288, §6); uncorrected, N = 32768 was early by ≈ 3-7 % and
    # N = 8192 by 20 % there (§5).
    sde_flags = ["--record-every", 1, "--dt", 1, "--integrator", "euler", "--sde-mc", 4096]
    if f.quick:
        Ds, runs, T = [30, 100, 300], 12, 200
        sde_Ds, sde_runs, sde_T, mc, reference_mc = [100, 10 ** 6, 10 ** 12], 6, 3000, 1024, 32768
    else:
        Ds, runs, T = [100, 1000, 10000, 100000], 100, 800
        sde_Ds, sde_runs, sde_T, mc, reference_mc = [10 ** k for k in range(2, 13)], 50, 4000, 2048, 2 ** 21
    f.parameters = {"engine": "gram", "prior": "flip", "nu": [2, 2], "L": 5, "H": 2, "activation": "softmax",
                    "readout": "learned", "lr": 1, "delta": 0.2, "T": T, "record_every": 0.25, "test_samples": 50,
                    "runs_per_D": runs, "D": Ds, "seed": 1, "stop_when_specialised": True,
                    "sde": {"D": sde_Ds, "runs_per_D": sde_runs, "T": sde_T, "mc": mc, "sde_reference_mc": reference_mc,
                            "sde_mc": 4096, "integrator": "euler", "dt": 1, "seed": 100001, "init_engine": "gram"}}
    summary_path = f.path(".summary.csv")
    f.run("sweep", "--engine", "gram", *MODEL, "--T", T, "--record-every", 0.25, "--test-samples", 50, "--delta", 0.2,
          "--stop-when-specialised", "--runs", runs, "--seed", 1, "--grid", "D=" + ",".join(map(str, Ds)),
          "--summary", summary_path, "--out", f.path("_rows.csv"))
    sde_summary_path = f.path(".sde.summary.csv")
    f.run("sweep", "--engine", "sde", *MODEL, "--T", sde_T, *sde_flags, "--mc", mc, "--sde-reference-mc", reference_mc,
          "--init-engine", "gram", "--delta", 0.2, "--stop-when-specialised", "--runs", sde_runs,
          "--seed", 100001, "--grid", "D=" + ",".join(map(str, sde_Ds)), "--summary", sde_summary_path,
          "--out", f.path("_sde_rows.csv"))
    rows = per_D(read_csv(summary_path), Ds)
    sde_rows = per_D(read_csv(sde_summary_path), sde_Ds)
    f.parameters["per_D"] = clean(rows)
    f.parameters["sde"]["per_D"] = clean(sde_rows)
    curves, settings, lambda_plus = linearised(f, f.quick)
    all_D = sorted(set(Ds) | set(sde_Ds))
    pred = prediction_at(curves, np.logspace(np.log10(all_D[0]), np.log10(all_D[-1]), 41))
    at_D = prediction_at(curves, all_D)
    f.parameters["linearised"] = dict(settings, lambda_plus=lambda_plus, per_D=[
        {"D": D, **{k: (None if np.isnan(at_D[k][i]) else float(at_D[k][i]))
                    for k in ("median", "median_sd", "mean", "mean_sd", "var", "var_sd")}}
        for i, D in enumerate(all_D)])
    fig, axes = plt.subplots(1, 4, figsize=(16, 3.8))
    panels = [("mean_tau", "median_tau", r"mean (—) and median (- -) $\tau^s$"), ("var_tau", None, r"var $\tau^s$"),
              ("mean_tau_tilde", "median_tau_tilde", r"mean, median $\tilde\tau^s = \tau^s/\ln D$"),
              ("var_tau_tilde", None, r"var $\tilde\tau^s$")]
    for ax, (key, median_key, label) in zip(axes, panels):
        for table, style, name in ((rows, "ko", "gram"), (sde_rows, "C0s", "SDE")):
            D = np.array([r["D"] for r in table], dtype=float)
            ax.plot(D, [r[key] for r in table], style + "-", ms=4, label=name)
            if median_key:
                ax.plot(D, [r[median_key] for r in table], style[:-1] + "--", lw=1)
        ax.set_xscale("log")
        ax.set_xlabel("D")
        ax.set_ylabel(label)
    draw_prediction(axes, pred)
    axes[0].legend(fontsize=8)
    for r in rows + sde_rows:
        axes[0].annotate(f"{r['specialised']}/{r['runs']}", (r["D"], r["mean_tau"]), fontsize=6,
                         textcoords="offset points", xytext=(3, -10))
    fig.suptitle(f"Fig. 6: specialisation of the flipping direction, flip ν=(2,2), L=5, H=2, softmax, δ=0.2; gram "
                 f"engine ({runs} runs per D, T={T}) and stochastic theory ({sde_runs} runs per D, N={mc} along the "
                 f"path of N°={reference_mc}, T={sde_T}); "
                 f"k/n: runs specialised by T (censored runs not in means and variances);\nred: the linearised ODE with the "
                 f"finite-D noise, {band_text(pred['seeds'])} ({settings['expectations']}, "
                 f"a(t) computed to t={settings['along']})", fontsize=8)
    fig.tight_layout()
    f.save(fig)
