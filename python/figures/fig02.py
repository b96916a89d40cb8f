"""Fig. 2: evolution of H = 4 heads (theory, docs/model.md §6): M_hf against t and the path of each
head in the (M_h1, M_h2) plane; left flip ν = (2, 2), right gauss ν = (8, 2); F = 2, softmax, L = 4, η = 1."""
import matplotlib.pyplot as plt

import headspec.plot as hp
import heads as hd

CASES = [("flip", (2, 2)), ("gauss", (8, 2))]


def make(f):
    mc, dt, T, rec = (4000, 0.4, 120, 2) if f.quick else (20000, 0.1, 300, 1)
    f.parameters = {"H": 4, "L": 4, "F": 2, "activation": "softmax", "lr": 1, "readout": "learned", "mc": mc,
                    "dt": dt, "T": T, "record_every": rec, "seed": 1, "init": "dense, D = 10^4 (theory default)",
                    "cases": [{"prior": p, "nu": list(nu)} for p, nu in CASES]}
    fig, axes = plt.subplots(2, 2, figsize=(10, 7.5))
    for col, (prior, nu) in enumerate(CASES):
        table = f.run(*hd.theory_args(prior, nu, 4, 4, "softmax", mc, dt, T, rec), "--out",
                      f.path(f"_{prior}.csv"))
        title = f"{prior}, ν = ({nu[0]}, {nu[1]})"
        hp.heads_against_t(axes[0, col], table, [1, 2], title=title)
        hp.head_paths(axes[1, col], table, title=title + ": path of each head (○ t = 0, □ t = T)")
        hp.head_legend(axes[0, col], 4)
    fig.suptitle(f"Fig. 2: H = 4 heads, softmax, F = 2, L = 4, η = 1 (theory, N = {mc} MC samples, dt = {dt})",
                 fontsize=10)
    fig.tight_layout()
    f.save(fig)
