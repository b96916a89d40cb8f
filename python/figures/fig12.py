"""Fig. 12: head evolution for H ∈ {2, 4, 5, 8} (theory): flip F = 2, L = 4, ν = (2, 2), softmax, η = 1.
Top: M_hf against t; bottom: the path of each head in the (M_h1, M_h2) plane."""
import matplotlib.pyplot as plt

from common import expectations_by_panel, expectations_of_csv
import headspec.plot as hp
import heads as hd

HS = (2, 4, 5, 8)


def make(f):
    mc, dt, T, rec = (4000, 0.4, 60, 2) if f.quick else (20000, 0.1, 300, 1)
    f.parameters = {"prior": "flip", "nu": [2, 2], "L": 4, "H": list(HS), "activation": "softmax", "lr": 1,
                    "readout": "learned", "mc": mc, "dt": dt, "T": T, "record_every": rec, "seed": 1,
                    "init": "dense, D = 10^4 (theory default)"}
    fig, axes = plt.subplots(2, len(HS), figsize=(4.2 * len(HS), 7))
    methods = []
    for col, H in enumerate(HS):
        out = f.path(f"_H{H}.csv")
        table = f.run(*hd.theory_args("flip", (2, 2), 4, H, "softmax", mc, dt, T, rec), "--out", out)
        methods.append((f"H = {H}", expectations_of_csv(out)))
        hp.heads_against_t(axes[0, col], table, [1, 2], title=f"H = {H}")
        hp.head_paths(axes[1, col], table, title=f"H = {H}: (○ t = 0, □ t = T)")
        hp.head_legend(axes[0, col], H)
    f.parameters["expectations"] = expectations_by_panel(methods)
    fig.suptitle(f"Fig. 12: flip ν = (2, 2), F = 2, L = 4, softmax, η = 1 "
                 f"(theory: {expectations_by_panel(methods)}; dt = {dt})",
                 fontsize=10)
    fig.tight_layout()
    f.save(fig)
