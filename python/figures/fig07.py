"""Fig. 7: MNIST specialisation time τ_f^s of every class direction f (docs/model.md §10, threshold δ = 1):
mean and variance over runs that specialised by T, and how many did. H = 10, softmax, L = 5,
ν = 1000, learned readout (`headspec mnist --tau`, docs/results.md)."""
import matplotlib.pyplot as plt
import numpy as np


def make(f):
    # Full: the 100 runs of docs/results.md.
    T, runs, tests = (20, 4, 50) if f.quick else (100, 100, 200)
    f.parameters = {"task": "mnist", "H": 10, "L": 5, "nu": 1000, "activation": "softmax", "readout": "learned",
                    "lr": 1, "delta": 1, "T": T, "record_every": 1, "runs": runs, "test_samples": tests, "seed": 1}
    tau_path = f.path(".tau.csv")
    f.run("mnist", "--H", 10, "--L", 5, "--nu", 1000, "--T", T, "--record-every", 1, "--test-samples", tests,
          "--activation", "softmax", "--delta", 1, "--runs", runs, "--seed", 1, "--tau", tau_path,
          "--out", f.path("_runs.csv"))
    tau = np.genfromtxt(tau_path, delimiter=",", names=True)
    digits = np.arange(10)
    counts, means, variances = [], [], []
    for d in digits:
        x = tau["tau"][tau["digit"] == d]
        x = x[np.isfinite(x)]
        counts.append(len(x))
        means.append(x.mean() if len(x) else np.nan)
        variances.append(x.var(ddof=1) if len(x) > 1 else np.nan)
    f.parameters["per_digit"] = [{"digit": int(d), "specialised": int(n), "mean": None if np.isnan(m) else float(m),
                                  "variance": None if np.isnan(v) else float(v)}
                                 for d, n, m, v in zip(digits, counts, means, variances)]
    fig, axes = plt.subplots(1, 3, figsize=(15, 3.8))
    axes[0].bar(digits, means, color="C0")
    axes[0].set_ylabel(r"mean $\tau_f^s$ (runs that specialised)")
    axes[1].bar(digits, variances, color="C1")
    axes[1].set_ylabel(r"variance of $\tau_f^s$")
    axes[2].bar(digits, counts, color="C2")
    axes[2].axhline(runs, color="k", lw=0.8, ls="--")
    axes[2].set_ylabel(f"runs specialised by t = {T} (of {runs})")
    for ax in axes:
        ax.set_xticks(digits)
        ax.set_xlabel("class direction f (digit)")
    fig.suptitle(f"Fig. 7: MNIST specialisation time per class, H = 10, softmax, δ = 1, {runs} runs, T = {T} "
                 "(censored runs not counted)", fontsize=10)
    fig.tight_layout()
    f.save(fig)
