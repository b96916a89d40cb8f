"""The theory runs of the head-evolution figures (Fig. 2, 3, 12, 13, 14); they are drawn with
headspec.plot (heads_against_t, head_paths)."""


def theory_args(prior, nu, L, H, activation, mc, dt, T, rec, seed=1):
    """The `headspec theory` flags of one head-evolution run (learned readout, η = 1)."""
    return ["theory", "--prior", prior, "--nu", ",".join(str(v) for v in nu), "--L", L, "--H", H,
            "--activation", activation, "--lr", 1, "--mc", mc, "--dt", dt, "--T", T, "--record-every", rec,
            "--seed", seed]
