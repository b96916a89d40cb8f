"""Fig. 14: as Fig. 3 (softmax, H = 8, gauss ν = (20, 1, 1), L = 5): two runs from different
initial conditions (seeds 1 and 2: different initial keys and Monte Carlo samples)."""
import fig03


def make(f):
    mc, dt, T, rec = fig03.sizes(f.quick)
    f.parameters = {"prior": "gauss", "nu": list(fig03.NU), "H": 8, "L": 5, "lr": 1, "activation": "softmax",
                    "readout": "learned", "mc": mc, "dt": dt, "T": T, "record_every": rec, "seeds": [1, 2],
                    "init": "dense, D = 10^4 (theory default)"}
    tables = fig03.runs(f, ["softmax"], [1, 2], mc, dt, T, rec)
    fig = fig03.grid(f, tables, [(("softmax", 1), "softmax, seed 1"), (("softmax", 2), "softmax, seed 2")],
                     f"Fig. 14: two initial conditions, H = 8, gauss ν = (20, 1, 1), L = 5 (theory, N = {mc})")
    f.save(fig)
