"""Fig. 6: specialisation time τ^s of the flipping direction (docs/model.md §10, δ = 0.2) and τ̃^s = τ^s / ln D:
mean and variance over runs against D. Gram engine (exact in distribution at any D, docs/model.md §9), flip
ν = (2, 2), L = 5, H = 2, softmax, learned readout, η = 1; each run stops once it has specialised."""
import matplotlib.pyplot as plt
import numpy as np

from common import read_csv


def stats(x):
    """Mean and unbiased variance of the finite entries (runs that specialised by T)."""
    x = x[np.isfinite(x)]
    return (x.mean() if len(x) else np.nan), (x.var(ddof=1) if len(x) > 1 else np.nan), len(x)


def make(f):
    # Full: the study of docs/results.md "Specialisation time (seed Fig. 6)", as one sweep: 100 runs
    # per D at D = 10^2 … 10^5, T = 800 (0–2 % censored there; T = 300 censored many runs at D ≥ 10^4).
    Ds, runs, T = ([30, 100, 300], 12, 200) if f.quick else ([100, 1000, 10000, 100000], 100, 800)
    f.parameters = {"engine": "gram", "prior": "flip", "nu": [2, 2], "L": 5, "H": 2, "activation": "softmax",
                    "readout": "learned", "lr": 1, "delta": 0.2, "T": T, "record_every": 0.25, "test_samples": 50,
                    "runs_per_D": runs, "D": Ds, "seed": 1, "stop_when_specialised": True}
    summary_path = f.path(".summary.csv")
    f.run("sweep", "--engine", "gram", "--prior", "flip", "--nu", "2,2", "--L", 5, "--H", 2, "--activation", "softmax",
          "--T", T, "--record-every", 0.25, "--test-samples", 50, "--delta", 0.2, "--stop-when-specialised",
          "--runs", runs, "--seed", 1, "--grid", "D=" + ",".join(map(str, Ds)), "--summary", summary_path,
          "--out", f.path("_rows.csv"))
    summary = read_csv(summary_path)
    rows = []
    for D in Ds:
        keep = summary["D"] == D
        m, v, n = stats(summary["tau_2"][keep])
        mt, vt, _ = stats(summary["tau_tilde_2"][keep])
        rows.append({"D": D, "runs": int(keep.sum()), "specialised": n, "mean_tau": m, "var_tau": v,
                     "mean_tau_tilde": mt, "var_tau_tilde": vt})
    f.parameters["per_D"] = [{k: (None if isinstance(v, float) and np.isnan(v) else v) for k, v in r.items()}
                             for r in rows]
    fig, axes = plt.subplots(1, 4, figsize=(16, 3.6))
    D = np.array(Ds, dtype=float)
    for ax, key, label in zip(axes, ["mean_tau", "var_tau", "mean_tau_tilde", "var_tau_tilde"],
                              [r"mean $\tau^s$", r"var $\tau^s$", r"mean $\tilde\tau^s = \tau^s/\ln D$",
                               r"var $\tilde\tau^s$"]):
        ax.plot(D, [r[key] for r in rows], "o-")
        ax.set_xscale("log")
        ax.set_xlabel("D")
        ax.set_ylabel(label)
    for r in rows:
        axes[0].annotate(f"{r['specialised']}/{r['runs']}", (r["D"], r["mean_tau"]), fontsize=7,
                         textcoords="offset points", xytext=(3, -10))
    fig.suptitle(f"Fig. 6: specialisation of the flipping direction, gram engine, flip ν=(2,2), L=5, H=2, softmax, "
                 f"δ=0.2, T={T} (k/n: runs specialised by T; censored runs not counted)", fontsize=9)
    fig.tight_layout()
    f.save(fig)
