"""Fig. 4: the final error E^∞_σ of the theory (docs/model.md §6) per activation (softmax,
softmax-1, Bayes-softmax), with the learned readout and with the fixed `sum` readout,
against the Bayes-optimal error ε_Bayes (docs/model.md §8). L = 5, η = 1, gauss prior;
(a) F = 4, ν = 10 each, H = 1 … 8; (b) F = 2, H = 4, ν_1 = ν_2 = ν from 1 to 20.

E^∞ of one run is the theory's error where the error has settled: `--until-error-settled TOL
--error-window W` stops a run once the mean errors over the four quarters of the last W differ
by less than TOL relative (docs/theory.md §3), with --T as the longest time.
The derivative test `--until-converged` cannot serve here: the heads' norms keep creeping up
long after the error has settled (the η² term of dQ/dt, docs/model.md §6). The table `fig4.csv`
gives, for every run, whether it stopped so (`converged`), where (`t_end`), and the rule's
relative change at the end (`rel_change`). Prior of panel (b): the seed's caption does not
name it; gauss, as in (a).

`headspec figure 4 --lr-schedule S` runs every theory with the learning-rate schedule S
(docs/model.md §4; η(t) = g(t) from η = 1) into files fig4_<S>.*: E^∞ where the step size is
annealed. With a decaying η the error falls slowly for long, so the settling rule stops later
or not before --T."""
import json

import matplotlib.pyplot as plt
import numpy as np

from common import method_and_samples, select_run, theory_settings_of_csv

ACTIVATIONS = [("softmax", "softmax", "C0", "o"), ("softmax1", "softmax-1", "C1", "s"),
               ("bsoftmax", "Bayes-softmax", "C2", "^")]
READOUTS = [("learned", "learned readout"), ("sum", "readout sum ($c_h = 1$)")]
L = 5


def sizes(quick):
    if quick:
        return {"Hs": [1, 2], "nus": [2, 10], "runs": 2, "mc": 500, "dt": 0.4, "T": 40, "rec": 2, "window": 16,
                "tol": 2e-3, "bayes_samples": 200000}
    return {"Hs": list(range(1, 9)), "nus": list(range(1, 21)), "runs": 5, "mc": 1000, "dt": 0.4, "T": 1000,
            "rec": 2, "window": 120, "tol": 2e-3, "bayes_samples": 1000000}


def nu_text(nu, F):
    return ",".join([f"{nu:g}"] * F)


def theory_args(f, s, name, nu, F, H, activation, readout):
    return ["theory", "--prior", "gauss", "--nu", nu_text(nu, F), "--L", L, "--H", H, "--activation", activation,
            "--readout", readout, "--lr", 1, "--mc", s["mc"], "--dt", s["dt"], "--T", s["T"], "--record-every",
            s["rec"], "--until-error-settled", s["tol"], "--error-window", s["window"], "--runs", s["runs"],
            "--seed", 1, "--out", f.path(f"_{name}_{activation}_{readout}.csv")] + \
        (["--lr-schedule", f.lr_schedule] if f.lr_schedule else [])


def final_errors(table, sidecar, s):
    """Per run: where it stopped, whether the error had settled there, E^∞ (the error at the
    last row) and the stop rule's statistic at the end: the last quarter's mean error minus the
    first quarter's of the last window, relative to the last quarter's (signed: > 0 rising)."""
    m = int(round(s["window"] / (4 * s["rec"])))
    out = []
    for run in range(s["runs"]):
        r = select_run(table, run)
        last, first = np.mean(r["loss"][-m:]), np.mean(r["loss"][-4 * m:-3 * m])
        converged = bool(sidecar["runs_summary"][run]["converged"])
        out.append((run, float(r["t"][-1]), int(converged), float(r["loss"][-1]), float((last - first) / last)))
    return out


def expectations_text(keys, commands):
    """How the theory took its expectations, for the title: the activations and H that took
    laplace (auto: softmax and softmax-1 with H ≤ 2) and the range of N of each sampling method
    (sobol rounds N up to whole orbit sets, docs/model.md §6)."""
    label = {name: text for name, text, *_ in ACTIVATIONS}
    laplace, sampled = {}, {}
    for key, command in zip(keys, commands):
        method, n = method_and_samples(theory_settings_of_csv(command[command.index("--out") + 1]))
        if n is None:
            laplace.setdefault(label[key[4]], set()).add(key[3])
        else:
            sampled.setdefault(method, []).append(int(n))
    heads = {name: "H = " + ", ".join(str(H) for H in sorted(Hs)) for name, Hs in laplace.items()}
    if len(set(heads.values())) == 1:
        parts = [f"laplace for {' and '.join(heads)} at {next(iter(heads.values()))}"]
    else:
        parts = [f"laplace for {', '.join(f'{name} at {h}' for name, h in heads.items())}"] if heads else []
    parts += [f"{m} N = {min(n)}" + (f"–{max(n)}" if max(n) > min(n) else "") for m, n in sampled.items()]
    return "; ".join(parts)


def make(f):
    s = sizes(f.quick)
    f.parameters = dict(s, prior="gauss", L=L, lr=1, lr_schedule=f.lr_schedule or "constant", seed=1,
                        init="dense, D = 10^4 (theory default)",
                        E_inf="error where --until-error-settled tol --error-window window stopped the run "
                              "(at t = T if it did not): mean and standard deviation over runs",
                        panel_a={"F": 4, "nu": 10, "H": s["Hs"]}, panel_b={"F": 2, "H": 4, "nu": s["nus"]},
                        panel_b_prior="gauss: the seed's caption does not say; the natural reading given (a)",
                        activations=[a for a, *_ in ACTIVATIONS], readouts=[r for r, _ in READOUTS])
    points = [("a", 10.0, 4, H) for H in s["Hs"]] + [("b", float(nu), 2, 4) for nu in s["nus"]]
    keys, commands = [], []
    for panel, nu, F, H in points:
        name = f"{panel}_H{H}" if panel == "a" else f"{panel}_nu{nu:g}"
        for act, *_ in ACTIVATIONS:
            for readout, _ in READOUTS:
                keys.append((panel, nu, F, H, act, readout))
                commands.append(theory_args(f, s, name, nu, F, H, act, readout))
    # ε_Bayes depends on the prior and L only: one per ν (panel (a) is ν = 10, F = 4).
    bayes = {}
    for panel, nu, F, H in points:
        if (nu, F) not in bayes:
            bayes[(nu, F)] = f.bayes("--prior", "gauss", "--nu", nu_text(nu, F), "--L", L, "--samples",
                                     s["bayes_samples"], "--seed", 1)
    tables = f.run_all(commands)

    rows = []
    for key, command, table in zip(keys, commands, tables):
        panel, nu, F, H, act, readout = key
        b = bayes[(nu, F)]
        with open(command[command.index("--out") + 1] + ".json") as sidecar:
            runs = final_errors(table, json.load(sidecar), s)
        for run, t_end, converged, e, change in runs:
            rows.append((panel, act, readout, H, F, nu, run, t_end, converged, e, change, b["mmse"], b["stderr"]))
    f.write_table(".csv", ["panel", "activation", "readout", "H", "F", "nu", "run", "t_end", "converged", "E_inf",
                           "rel_change", "eps_bayes", "eps_bayes_stderr"], rows)

    fig, axes = plt.subplots(2, 2, figsize=(11, 8))
    for col, panel in enumerate(("a", "b")):
        xs = sorted(s["Hs"] if panel == "a" else s["nus"])
        for row, (readout, rlabel) in enumerate(READOUTS):
            ax = axes[row, col]
            for act, label, colour, marker in ACTIVATIONS:
                e = np.array([[r[9] for r in rows if r[0] == panel and r[1] == act and r[2] == readout
                               and (r[3] if panel == "a" else r[5]) == x] for x in xs])
                for i, x in enumerate(xs):
                    ax.plot([x] * e.shape[1], e[i], marker, color=colour, ms=3, alpha=0.3)
                ax.errorbar(xs, e.mean(axis=1), yerr=e.std(axis=1, ddof=1) if e.shape[1] > 1 else None,
                            color=colour, marker=marker, ms=5, lw=1.3, capsize=3, label=label)
            if panel == "a":
                ax.axhline(bayes[(10.0, 4)]["mmse"], color="k", ls="--", lw=1.2, label=r"$\varepsilon_{\rm Bayes}$")
                ax.set_xlabel("number of heads $H$")
                ax.set_xticks(xs)
                ax.set_title(f"(a) F = 4, ν = 10 each; {rlabel}", fontsize=9)
            else:
                ax.plot(xs, [bayes[(float(nu), 2)]["mmse"] for nu in xs], "k--", lw=1.2,
                        label=r"$\varepsilon_{\rm Bayes}$")
                ax.set_xlabel(r"signal strength $\nu = \nu_1 = \nu_2$")
                ax.set_title(f"(b) F = 2, H = 4; {rlabel}", fontsize=9)
            if readout == "sum":
                ax.set_yscale("log")
            ax.set_ylabel(r"$\mathcal{E}^\infty_\sigma$ (error where it settled)")
            ax.legend(fontsize=7)
    step = f"η(t) = {f.lr_schedule}" if f.lr_schedule else "η = 1"
    f.parameters["expectations"] = expectations_text(keys, commands)
    fig.suptitle(f"Fig. 4: final error per activation, gauss prior, L = 5, {step} (theory, --mc {s['mc']}: "
                 f"{f.parameters['expectations']}; dt = {s['dt']},\nstopped once settled to {s['tol']:g} "
                 f"over W = {s['window']:g}, T ≤ {s['T']}; "
                 f"mean ± s.d. over {s['runs']} runs, dots: runs)", fontsize=10)
    fig.tight_layout()
    f.save(fig)
