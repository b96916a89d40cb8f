"""Computes and draws one figure of the seed paper (1 … 14) or figure 15 (Bayes-softmax at ε_Bayes with
learning-rate schedules): make_figure.py N [--quick] [--out-dir DIR] [--sde-runs K] [--lr-schedule S]
[--mc-method M] [--mc-seed S] --binary PATH."""
import argparse
import importlib
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

AVAILABLE = {n: f"fig{n:02d}" for n in range(1, 16)}


def use_built_module(binary):
    """Puts the Python module built beside the binary (build/python, with headspec.plot) first
    on the path, so that the figures draw with the build they compute with."""
    built = os.path.join(os.path.dirname(os.path.realpath(binary)), "python")
    if os.path.isfile(os.path.join(built, "headspec", "plot.py")):
        sys.path.insert(0, built)


def main(argv=None):
    p = argparse.ArgumentParser(prog="headspec figure")
    p.add_argument("number", type=int)
    p.add_argument("--quick", action="store_true")
    p.add_argument("--out-dir", default="figures")
    p.add_argument("--binary", required=True)
    p.add_argument("--sde-runs", type=int, default=0)
    p.add_argument("--lr-schedule", default="")
    p.add_argument("--mc-method", default="")
    p.add_argument("--mc-seed", type=int, default=None)
    a = p.parse_args(argv)
    if a.number not in AVAILABLE:
        sys.stderr.write(f"headspec: error: figure: no figure {a.number} (available: {sorted(AVAILABLE)})\n")
        return 2
    use_built_module(a.binary)
    from common import Figure, forward_signals
    forward_signals()
    module = importlib.import_module(AVAILABLE[a.number])
    f = Figure(a.number, a.binary, a.out_dir, a.quick, lr_schedule=a.lr_schedule, mc_method=a.mc_method, mc_seed=a.mc_seed)
    f.sde_runs = a.sde_runs
    module.make(f)
    print(f.path(".png"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
