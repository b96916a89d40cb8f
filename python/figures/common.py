"""Shared pieces of the figure scripts: running headspec, reading its CSV, saving figures."""
import json
import os
import subprocess
import sys
import time

import numpy as np

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

HEAD_COLOURS = plt.rcParams["axes.prop_cycle"].by_key()["color"]


class Figure:
    """One figure's run: where its files go, which binary computes, and what was run."""

    def __init__(self, number, binary, out_dir, quick):
        self.number = number
        self.binary = binary
        self.out_dir = out_dir
        self.quick = quick
        self.commands = []
        self.parameters = {}
        self.started = time.time()
        os.makedirs(out_dir, exist_ok=True)

    def path(self, suffix):
        return os.path.join(self.out_dir, f"fig{self.number}{suffix}")

    def run(self, *args):
        """Runs `headspec ARGS`; its CSV is written with --out. Returns the parsed table."""
        args = [str(a) for a in args]
        out = args[args.index("--out") + 1]
        cmd = [self.binary] + args
        self.commands.append(" ".join(["headspec"] + args))
        res = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if res.returncode not in (0, 3):
            sys.stderr.write(res.stderr)
            raise SystemExit(f"figure {self.number}: headspec {' '.join(args)} failed with status {res.returncode}")
        if res.returncode == 3:
            sys.stderr.write(res.stderr)
        return read_csv(out)

    def save(self, fig, columns_note=""):
        fig.savefig(self.path(".png"), dpi=130, bbox_inches="tight")
        fig.savefig(self.path(".svg"), bbox_inches="tight")
        plt.close(fig)
        meta = {
            "figure": self.number,
            "quick": self.quick,
            "parameters": self.parameters,
            "commands": self.commands,
            "seconds": round(time.time() - self.started, 1),
        }
        tmp = self.path(".json.tmp")
        with open(tmp, "w") as f:
            json.dump(meta, f, indent=2)
        os.replace(tmp, self.path(".json"))


def read_csv(path):
    """A headspec CSV as a dict of column name → numpy array."""
    with open(path) as f:
        header = f.readline().strip().split(",")
    data = np.loadtxt(path, delimiter=",", skiprows=1, ndmin=2)
    return {name: data[:, i] for i, name in enumerate(header)}


def select_run(table, run):
    keep = table["run"] == run
    return {k: v[keep] for k, v in table.items()}


def heads(table):
    return sorted({int(k.split("_")[1]) for k in table if k.startswith("M_")})


def directions(table):
    return sorted({int(k.split("_")[2]) for k in table if k.startswith("M_")})
