"""Fig. 1: theory (lines) against finite-D SGD (dots): loss, M_h1, M_h2, Q⊥_hh against t; with
`figure 1 --sde-runs K` also the stochastic theory's mean ± sd over K runs (shaded)."""
import matplotlib.pyplot as plt

import headspec.plot as hp
from common import simulation_engine, simulation_test_samples

MODEL = ["--prior", "flip", "--nu", "2,2", "--L", "10", "--H", "2", "--activation", "softmax", "--lr", "1"]


# The band's scheme (docs/stochastic-theory.md §4): heun at dt = 0.5, whose ODE stays within 0.002
# of the line's RK4 at dt = 0.1 in Fig. 9 and 10 (measured), and Σ from at most 4096 plain samples,
# which leaves the law of the noise as it was; the drift keeps the line's N and samples.
BAND_INTEGRATOR, BAND_DT, BAND_SIGMA_SAMPLES = "heun", 0.5, 4096


def line_error(f):
    """With --sde-runs the line also reports its own error (`--mc-error`, drawn as ± 2 s.e.: with
    laplace its quadrature error, ≈ 10^-7, with sobol the spread of its randomisations). The band's
    drift is sobol at the line's N with the line's seed (the stochastic theory's default), so the
    band holds SGD's noise around that drift and not the drift's sampling error."""
    return ["--mc-error"] if f.sde_runs > 0 else []


def sde_band(f, engine, D, mc, T, rec, model, seed, suffix=""):
    """f.sde_runs runs of the stochastic theory (docs/model.md §12) at D from the simulation's own
    initial state (--init-seed) with the ODE's samples (--mc-seed: the ODE's run draws those of
    `seed`, so the band is the noise around the line's own drift) and independent noise (seeds
    1001…); None without --sde-runs."""
    if f.sde_runs <= 0:
        return None
    sigma_samples = min(BAND_SIGMA_SAMPLES, mc)
    f.parameters["sde_runs"] = f.sde_runs
    f.parameters["sde_scheme"] = {"integrator": BAND_INTEGRATOR, "dt": BAND_DT, "sigma_samples": sigma_samples}
    return f.run("theory", "--sde", "--init-engine", engine, "--init-D", D, "--init-seed", seed, "--mc-seed", seed,
                 "--seed", 1001, "--runs", f.sde_runs, "--mc", mc, "--sde-mc", sigma_samples,
                 "--integrator", BAND_INTEGRATOR, "--dt", BAND_DT, "--T", T, "--record-every", rec, *model,
                 "--out", f.path(f"{suffix}_sde.csv"))


def make(f):
    # The simulation is the exact reduced engine (docs/model.md §9, docs/gram-engine.md): the same SGD
    # in distribution as the dense one at the same D, ~1 µs per step against ~0.36 ms at D = 10^4.
    # HEADSPEC_FIGURE_ENGINE=dense asks for the dense engine instead.
    engine = simulation_engine()
    # The default method here is laplace (auto, docs/theory.md §2): no samples, the expectations to
    # ≈ 10^-8, exactly symmetric, so the split is the one the initial state draws; N is used only by
    # `figure 1 --mc-method sobol` (with 32768 samples M_12 at t = 150 is within 0.01 of its
    # converged value, at 131072 within 0.005) and by the band's drift (--sde takes sobol).
    # Quick: RK4 at dt = 1 (601 evaluations, 13 s of laplace on 2 cores against 30 s at dt = 0.4) stays
    # within 1.0e-5 of dt = 0.4 in every recorded value (docs/figures.md, Fig. 1 "Integration error").
    if f.quick:
        D, T, rec, mc, dt = 10000, 150, 3, 32768, 1
    else:
        D, T, rec, mc, dt = 10000, 150, 2, 131072, 0.1
    tests = simulation_test_samples(f.quick)
    f.parameters = {"engine": engine, "D": D, "T": T, "record_every": rec, "test_samples": tests, "mc": mc,
                    "dt": dt, "seed": 1, "model": " ".join(MODEL)}
    sim = f.run("simulate", "--engine", engine, "--D", D, "--T", T, "--record-every", rec, "--test-samples", tests,
                *MODEL, "--seed", 1, "--out", f.path("_simulation.csv"))
    # The ODE starts from the simulation's own initial state (same engine, D and seed).
    theory = f.run("theory", "--init-engine", engine, "--init-D", D, "--mc", mc, "--dt", dt, "--T", T,
                   "--record-every", 2, *MODEL, "--seed", 1, *line_error(f), "--out", f.path("_theory.csv"))
    sde = sde_band(f, engine, D, mc, T, 2, MODEL, 1)
    fig, axes = plt.subplots(1, 4, figsize=(16, 3.4))
    hp.theory_against_simulation(axes, theory, sim, title=f"D = {D} ({engine})", sde=sde,
                                 theory_error=sde is not None)
    fig.suptitle("Fig. 1: theory (lines) vs SGD (dots); flip ν=(2,2), L=10, H=2, softmax, η=1", fontsize=10)
    f.save(fig)
