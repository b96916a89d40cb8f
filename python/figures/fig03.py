"""Fig. 3: H = 8 heads over F = 3 directions (theory), gauss ν = (20, 1, 1), L = 5, η = 1;
softmax (left) against Bayes-softmax (right). One row per direction f: M_hf against t."""
import matplotlib.pyplot as plt

import headspec.plot as hp
import heads as hd

NU = (20, 1, 1)


def sizes(quick):
    return (4000, 0.4, 80, 2) if quick else (20000, 0.1, 200, 1)


def runs(f, activations, seeds, mc, dt, T, rec):
    return {(a, s): f.run(*hd.theory_args("gauss", NU, 5, 8, a, mc, dt, T, rec, seed=s), "--out",
                          f.path(f"_{a}_seed{s}.csv")) for a in activations for s in seeds}


def grid(f, tables, columns, title):
    fig, axes = plt.subplots(3, len(columns), figsize=(5 * len(columns), 8.5), sharex=True, squeeze=False)
    for col, (key, label) in enumerate(columns):
        for row, d in enumerate((1, 2, 3)):
            hp.heads_against_t(axes[row, col], tables[key], [d], title=label if row == 0 else "")
            if row < 2:
                axes[row, col].set_xlabel("")
        hp.head_legend(axes[0, col], 8)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig


def make(f):
    mc, dt, T, rec = sizes(f.quick)
    f.parameters = {"prior": "gauss", "nu": list(NU), "H": 8, "L": 5, "lr": 1, "readout": "learned", "mc": mc,
                    "dt": dt, "T": T, "record_every": rec, "seed": 1, "activations": ["softmax", "bsoftmax"],
                    "init": "dense, D = 10^4 (theory default)"}
    tables = runs(f, ["softmax", "bsoftmax"], [1], mc, dt, T, rec)
    fig = grid(f, tables, [(("softmax", 1), "softmax"), (("bsoftmax", 1), "Bayes-softmax")],
               f"Fig. 3: H = 8, gauss ν = (20, 1, 1), L = 5, η = 1 (theory, N = {mc}, dt = {dt})")
    f.save(fig)
