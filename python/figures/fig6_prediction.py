"""The specialisation time of seed Fig. 6 predicted from the linearised ODE (docs/results.md, "Linearisation
at the unspecialised fixed point"), against the measured τ^s of a `sweep --summary` CSV.

python3 python/figures/fig6_prediction.py --data docs/data/fig6-specialisation.csv \
    --along along.json --linearise lin.json --out docs/figures/fig6-prediction.png

--along is `headspec linearise ... --along T` (the growth rate a(t) of the spread along the unspecialised
trajectory and ℓ(t) = ∫₀ᵗ a); --linearise any `headspec linearise` output (λ⁺ at the fixed point).

Prediction (H = 2, linear in the spread s = ‖M_{:,2} − mean‖, no SGD noise): s(0) = |z| √(q0/D), z ~ N(0, 1)
(docs/model.md §4), s(t) = s(0) e^{ℓ(t)}, so τ^s(D, z) is the first t with ℓ(t) ≥ ln(δ √D / (|z| √q0)). Its median
over z uses |z| = 0.6745; its mean and variance are taken over z by quadrature. At large D, τ^s → ∞ and
a(t) → λ⁺, so τ^s = τ_0 + ln D/(2λ⁺) − ln|z|/λ⁺ and Var τ^s → π²/(8 λ⁺²).

With the finite-D noise (docs/model.md §12; when the --along file has `split_diffusion`, σ²(t) = vᵀ Σ v along
the trajectory): to linear order ds = a s dt + σ D^{-1/2} dW for the signed spread, so
s(t) = e^{ℓ(t)} (s(0) + D^{-1/2} ∫₀ᵗ e^{−ℓ} σ dW), a Gaussian of variance e^{2ℓ(t)} (q0 + V(t))/D with
V(t) = ∫₀ᵗ e^{−2ℓ} σ² dt': the same law as without noise with ℓ(t) replaced by ℓ(t) + ½ ln(1 + V(t)/q0).
The noise moves τ^s earlier by about ln(1 + V(∞)/q0)/(2λ⁺) at every D and leaves its spread as it is.
"""
import argparse
import json
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


def measured(path, direction=2):
    """Per D: runs, specialised, median (censored runs counted as +∞), mean and variance over specialised runs."""
    with open(path) as f:
        header = f.readline().strip().split(",")
    data = np.genfromtxt(path, delimiter=",", skip_header=1)
    col = {name: data[:, i] for i, name in enumerate(header)}
    out = []
    for D in sorted(set(col["D"])):
        tau = col[f"tau_{direction}"][col["D"] == D]
        done = tau[np.isfinite(tau)]
        n = len(tau)
        med = np.median(np.where(np.isfinite(tau), tau, np.inf)) if len(done) > n / 2 else np.nan
        out.append({"D": D, "runs": n, "specialised": len(done), "median": med,
                    "mean": done.mean() if len(done) else np.nan,
                    "var": done.var(ddof=1) if len(done) > 1 else np.nan})
    return out


def crossing(t, ell, target):
    """First t with ℓ(t) ≥ target (linear interpolation), NaN if ℓ never gets there."""
    above = np.nonzero(ell >= target)[0]
    if len(above) == 0:
        return np.nan
    k = above[0]
    if k == 0:
        return t[0]
    return t[k - 1] + (target - ell[k - 1]) / (ell[k] - ell[k - 1]) * (t[k] - t[k - 1])


def predicted(t, ell, D, delta, q0, z_scale=1.0):
    """Median, mean and variance over z of τ^s(D, z); NaN for the mean where some z do not cross by t_max."""
    med = crossing(t, ell, np.log(delta * np.sqrt(D) / (0.6744897501960817 * z_scale * np.sqrt(q0))))
    # Quadrature over |z| (half-normal) on a fine grid of its quantiles.
    u = (np.arange(2000) + 0.5) / 2000
    z = np.sqrt(2) * erfinv(u)  # |z| quantiles
    taus = np.array([crossing(t, ell, np.log(delta * np.sqrt(D) / (zz * z_scale * np.sqrt(q0)))) for zz in z])
    if np.any(~np.isfinite(taus)):
        return med, np.nan, np.nan
    return med, taus.mean(), taus.var()


def with_noise(t, rate, ell, sigma2, t_max, q0):
    """ℓ(t) + ½ ln(1 + V(t)/q0), V(t) = ∫₀ᵗ e^{−2ℓ} σ² (trapezoid over the records, then, past t_max, with
    σ² and the growth rate held at their last values)."""
    n = len(sigma2)
    w = np.exp(-2 * ell[:n]) * np.asarray(sigma2)
    V = np.concatenate([[0.0], np.cumsum(0.5 * (w[1:] + w[:-1]) * np.diff(t[:n]))])
    a_last = rate[-1]
    tail = w[-1] * (1 - np.exp(-2 * a_last * (t[n:] - t_max))) / (2 * a_last)
    V = np.concatenate([V, V[-1] + tail])
    return ell + 0.5 * np.log1p(V / q0)


def seed_curves(j, mc, q0):
    """The ℓ(t) of one Monte Carlo seed of a `linearise --along` output: without noise and, when the file has
    `split_diffusion`, with the finite-D noise; as (kind, label, t, rate, ℓ, t_max)."""
    along = j["along"]
    t, rate, ell = (np.array(along[k]) for k in ("t", "rate", "log_growth"))
    # Beyond the computed trajectory ℓ grows at the last computed rate a(t_max) (a(t) still falls
    # towards λ⁺ there, so this underestimates τ^s where it is used: the mean and variance through
    # the runs with small |z|, and D beyond what t_max reaches).
    t_max = t[-1]
    t_ext = np.arange(1, 20001) * (t[1] - t[0]) + t_max
    label = f"N = {mc}, seed {j['seed']}"
    t_all = np.concatenate([t, t_ext])
    ell_all = np.concatenate([ell, ell[-1] + rate[-1] * (t_ext - t_max)])
    out = [("linearised ODE", label, t_all, rate, ell_all, t_max)]
    if "split_diffusion" in along:
        out.append(("+ finite-D noise", label, t_all, rate,
                    with_noise(t_all, rate, ell_all, along["split_diffusion"], t_max, q0), t_max))
    return out


def over_seeds(values):
    """Mean and sample standard deviation (None with one seed) of a list of numbers."""
    v = np.array(values, dtype=float)
    return {"mean": float(v.mean()), "sd": float(v.std(ddof=1)) if len(v) > 1 else None}


def erfinv(y):
    """Inverse error function by Newton's method on math.erf (numpy has none; scipy is not required)."""
    from math import erf, exp, pi, sqrt

    out = np.empty_like(y)
    for i, v in enumerate(y):
        x = 0.0
        for _ in range(60):
            step = (erf(x) - v) / (2 / sqrt(pi) * exp(-x * x))
            x -= step
            if abs(step) < 1e-14:
                break
        out[i] = x
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--data", required=True)
    p.add_argument("--along", required=True, nargs="+")
    p.add_argument("--linearise", required=True, nargs="+")
    p.add_argument("--delta", type=float, default=0.2)
    p.add_argument("--q0", type=float, default=1.0)
    p.add_argument("--out", required=True)
    a = p.parse_args()
    meas = measured(a.data)
    curves = []  # one (kind, seed label, t, rate, ℓ, t_max) per Monte Carlo seed of every --along file, and kind
    for path in a.along:
        doc = json.load(open(path))
        for j in [doc] + doc.get("other_seeds", []):
            curves += seed_curves(j, doc["settings"]["mc"], a.q0)
    lams = [json.load(open(f))["lambda_plus_over_seeds"]["mean"] for f in a.linearise]
    lam = float(np.mean(lams))

    Ds = np.array([m["D"] for m in meas])
    grid = np.logspace(np.log10(Ds.min()) - 0.3, np.log10(Ds.max()) + 0.3, 60)
    fig, axes = plt.subplots(1, 3, figsize=(16, 4.2))
    ax = axes[0]
    preds, pred_at = [], []
    kinds = list(dict.fromkeys(c[0] for c in curves))
    first_of_kind = {}  # the first curve of each kind carries the legend label
    for i, c in enumerate(curves):
        first_of_kind.setdefault(c[0], i)
    for i, (kind, label, t, rate, ell, t_max) in enumerate(curves):
        pred = [predicted(t, ell, D, a.delta, a.q0) for D in grid]
        preds.append(pred)
        pred_at.append({m["D"]: predicted(t, ell, m["D"], a.delta, a.q0) for m in meas})
        k, first = kinds.index(kind), i == first_of_kind[kind]
        ax.plot(grid, [x[0] for x in pred], f"C{k}-", lw=0.8,
                label=f"{kind}: median over z (one line per seed)" if first else None)
        ax.plot(grid, [x[1] for x in pred], f"C{k}--", lw=0.8, label="  mean over z" if first else None)
    med = np.array([m["median"] for m in meas])
    ax.plot(Ds, med, "ks", label="measured median (censored = ∞)")
    ax.plot(Ds, [m["mean"] for m in meas], "ko", mfc="none", label="measured mean of specialised runs")
    for m in meas:
        ax.annotate(f"{m['specialised']}/{m['runs']}", (m["D"], m["mean"]), fontsize=7, textcoords="offset points",
                    xytext=(4, -10))
    # The D → ∞ law through the largest D with a measured median: slope 1/(2λ⁺) per unit ln D.
    ok = np.isfinite(med)
    if ok.any():
        D0, m0 = Ds[ok][-1], med[ok][-1]
        ax.plot(grid, m0 + np.log(grid / D0) / (2 * lam), "C3:", label=f"slope 1/(2λ⁺), λ⁺ = {lam:.4f} (fixed point)")
    ax.set_xscale("log")
    ax.set_xlabel("D")
    ax.set_ylabel(r"$\tau^s$ (flipping direction, δ = %g)" % a.delta)
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=7)

    ax = axes[1]
    for i, (kind, label, t, rate, ell, t_max) in enumerate(curves):
        if kind == kinds[0]:  # the noise changes ℓ's offset, not a(t)
            ax.plot(t[: len(rate)], rate, "C0-", lw=0.8, label="a(t), one line per seed" if i == 0 else None)
    ax.axhline(lam, color="C3", ls=":", label=f"λ⁺ at the fixed point = {lam:.4f}")
    for m in meas:
        if np.isfinite(m["median"]):
            ax.axvline(m["median"], color="k", lw=0.6, alpha=0.5)
    ax.set_xlabel("t")
    ax.set_ylabel("a(t)")
    ax.set_title("grey: measured median τ^s for each D", fontsize=8, loc="left")
    ax.legend(fontsize=7)

    ax = axes[2]
    for i, pred in enumerate(preds):
        kind = curves[i][0]
        ax.plot(grid, [x[2] for x in pred], f"C{kinds.index(kind)}--", lw=0.8,
                label=f"{kind}: Var over z" if i == first_of_kind[kind] else None)
    ax.axhline(np.pi ** 2 / (8 * lam ** 2), color="C3", ls=":", label="π²/(8λ⁺²): D → ∞")
    ax.plot(Ds, [m["var"] for m in meas], "ko", mfc="none", label="measured (specialised runs only)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("D")
    ax.set_ylabel(r"Var $\tau^s$")
    ax.legend(fontsize=7)
    fig.suptitle("Fig. 6 setting (flip ν=(2,2), L=5, H=2, softmax, learned readout, η=1): specialisation time "
                 "predicted by the linearised ODE vs measured (gram engine)", fontsize=9)
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    fig.savefig(a.out, dpi=130, bbox_inches="tight")
    table = []
    for m in meas:
        row = {"D": m["D"], "runs": m["runs"], "specialised": m["specialised"], "measured_median": m["median"],
               "measured_mean": m["mean"], "measured_var": m["var"], "predicted": [], "predicted_over_seeds": {}}
        for (kind, label, *_), p in zip(curves, pred_at):
            row["predicted"].append({"kind": kind, "along": label, "median": p[m["D"]][0], "mean": p[m["D"]][1],
                                     "var": p[m["D"]][2]})
        for kind in kinds:
            mine = [p for p in row["predicted"] if p["kind"] == kind]
            row["predicted_over_seeds"][kind] = {q: over_seeds([p[q] for p in mine]) for q in ("median", "mean", "var")}
        table.append(row)
    print(json.dumps({"lambda_plus": lam, "var_limit": np.pi ** 2 / (8 * lam ** 2), "per_D": table}, indent=1))


if __name__ == "__main__":
    main()
