"""Fig. 13: head evolution for H ∈ {2, 5, 8} (theory): gauss F = 2, L = 4, softmax, η = 1;
top ν = (2, 2), bottom ν = (8, 2). M_hf against t (solid f = 1, dashed f = 2)."""
import matplotlib.pyplot as plt

from common import expectations_by_panel, expectations_of_csv
import headspec.plot as hp
import heads as hd

HS = (2, 5, 8)
NUS = ((2, 2), (8, 2))


def make(f):
    mc, dt, T, rec = (4000, 0.4, 80, 2) if f.quick else (20000, 0.1, 200, 1)
    f.parameters = {"prior": "gauss", "nu": [list(n) for n in NUS], "L": 4, "H": list(HS),
                    "activation": "softmax", "lr": 1, "readout": "learned", "mc": mc, "dt": dt, "T": T,
                    "record_every": rec, "seed": 1, "init": "dense, D = 10^4 (theory default)"}
    fig, axes = plt.subplots(len(NUS), len(HS), figsize=(4.5 * len(HS), 7))
    methods = []
    for row, nu in enumerate(NUS):
        for col, H in enumerate(HS):
            out = f.path(f"_nu{nu[0]}-{nu[1]}_H{H}.csv")
            table = f.run(*hd.theory_args("gauss", nu, 4, H, "softmax", mc, dt, T, rec), "--out", out)
            methods.append((f"H = {H}", expectations_of_csv(out)))
            hp.heads_against_t(axes[row, col], table, [1, 2], title=f"ν = ({nu[0]}, {nu[1]}), H = {H}")
            hp.head_legend(axes[row, col], H)
    f.parameters["expectations"] = expectations_by_panel(methods)
    fig.suptitle(f"Fig. 13: gauss, F = 2, L = 4, softmax, η = 1 (theory: {expectations_by_panel(methods)}; "
                 f"dt = {dt})", fontsize=10)
    fig.tight_layout()
    f.save(fig)
