#!/usr/bin/python3
"""Theory against dense simulation: a Markdown table of the mean over runs of each column,
and of the paired difference dense − theory (run k of both starts from the same initial
keys when `theory --init-D D --seed s` matches `simulate --D D --seed s`).

Usage: /usr/bin/python3 scripts/compare_theory_dense.py DENSE.csv THEORY.csv [COLUMN ...]
(default columns: loss M_1_1 M_2_1 M_1_2 M_2_2 Q_1_1 Q_2_2)
"""
import sys

import numpy as np


def read(path):
    with open(path) as f:
        header = f.readline().strip().split(",")
        rows = [list(map(float, line.split(","))) for line in f if line.strip()]
    return header, np.array(rows)


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    hd, dense = read(sys.argv[1])
    ht, theory = read(sys.argv[2])
    cols = sys.argv[3:] or ["loss", "M_1_1", "M_2_1", "M_1_2", "M_2_2", "Q_1_1", "Q_2_2"]
    times = sorted(set(dense[:, 1]) & set(theory[:, 1]))
    print("| t | " + " | ".join(f"{c}: dense / theory / diff ± se" for c in cols) + " |")
    print("|---" * (len(cols) + 1) + "|")
    for t in times:
        d = dense[np.isclose(dense[:, 1], t)]
        th = theory[np.isclose(theory[:, 1], t)]
        runs = sorted(set(d[:, 0]) & set(th[:, 0]))
        cells = []
        for c in cols:
            a = np.array([d[d[:, 0] == r][0, hd.index(c)] for r in runs])
            b = np.array([th[th[:, 0] == r][0, ht.index(c)] for r in runs])
            diff = a - b
            se = diff.std(ddof=1) / np.sqrt(len(runs)) if len(runs) > 1 else float("nan")
            cells.append(f"{a.mean():.3f} / {b.mean():.3f} / {diff.mean():+.3f} ± {se:.3f}")
        print(f"| {t:g} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
