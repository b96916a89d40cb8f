"""Fig. 5: MNIST detection (docs/model.md §11, `headspec mnist`): left the H = 10 learned keys of run 0 as
28×28 tiles, one row of pictures per activation; right the test error against t per activation
(mean ± sd over runs). ν = 1000, L = 5, H = 10, learned readout, η = 1 (docs/results.md)."""
import matplotlib.image as mpimg
import matplotlib.pyplot as plt
import numpy as np

from common import select_run

ACTIVATIONS = [("softmax", "softmax"), ("softmax1", "softmax-1"), ("bsoftmax", "Bayes-softmax")]


def make(f):
    # Full: the setting of docs/results.md (4 runs, T = 100, all 2000 test digits).
    T, rec, runs, tests = (6, 1, 2, 200) if f.quick else (100, 2, 4, 2000)
    f.parameters = {"task": "mnist", "H": 10, "L": 5, "nu": 1000, "readout": "learned", "lr": 1, "T": T,
                    "record_every": rec, "runs": runs, "test_samples": tests, "seed": 1,
                    "activations": [a for a, _ in ACTIVATIONS]}
    tables = {}
    for act, _ in ACTIVATIONS:
        tables[act] = f.run("mnist", "--H", 10, "--L", 5, "--nu", 1000, "--T", T, "--record-every", rec,
                            "--test-samples", tests, "--activation", act, "--runs", runs, "--seed", 1,
                            "--keys", f.path(f"_keys_{act}.png"), "--out", f.path(f"_{act}.csv"))
    fig = plt.figure(figsize=(14, 6.5))
    grid = fig.add_gridspec(3, 2, width_ratios=[1.25, 1])
    for row, (act, label) in enumerate(ACTIVATIONS):
        ax = fig.add_subplot(grid[row, 0])
        ax.imshow(mpimg.imread(f.path(f"_keys_{act}.png")), interpolation="nearest")
        ax.set_axis_off()
        ax.set_title(f"{label}: keys of run 0 at t = {T} (red +, blue −)", fontsize=9, loc="left")
    ax = fig.add_subplot(grid[:, 1])
    summary = {}
    for act, label in ACTIVATIONS:
        table = tables[act]
        ids = sorted(set(table["run"].astype(int)))
        t = select_run(table, ids[0])["t"]
        errors = np.array([select_run(table, k)["loss"] for k in ids])
        mean, sd = errors.mean(axis=0), errors.std(axis=0, ddof=1) if len(ids) > 1 else np.zeros(len(t))
        ax.plot(t, mean, lw=1.5, label=label)
        ax.fill_between(t, mean - sd, mean + sd, alpha=0.25)
        summary[act] = {"final_mean": float(mean[-1]), "final_sd": float(sd[-1])}
    f.parameters["final_test_error"] = summary
    ax.set_yscale("log")
    ax.set_xlabel("$t = n/D$")
    ax.set_ylabel("test error (mean ± sd over runs)")
    ax.set_title(f"test error per activation ({runs} runs, {tests} test samples)", fontsize=9, loc="left")
    ax.legend(fontsize=8)
    fig.suptitle("Fig. 5: MNIST detection, H = 10, L = 5, ν = 1000, learned readout", fontsize=10)
    fig.tight_layout()
    f.save(fig)
