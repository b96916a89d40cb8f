#!/usr/bin/python3
"""The dense SGD step of headspec (docs/model.md §1-4; src/engines/dense_engine.cpp) in plain NumPy.

Same model as bench_dense: flip prior ν = (2, 2), softmax, learned readout, η = η_c = 1,
B = 1, u_f = √D e_f, v* = √D e_{F+1}. NumPy's own generator (PCG64 + ziggurat) draws the
tokens, so the numbers differ from headspec's; the work per step is the same.
Prints one JSON line: {"samples_per_s": ..., "cpu_samples_per_s": ..., "steps": ...}.
Run with Debian's /usr/bin/python3 (python3-numpy).
"""
import argparse
import json
import time

import numpy as np


def make_state(D, H, rng, q0=1.0):
    return {"K": np.sqrt(q0) * rng.standard_normal((H, D)), "c": np.full(H, 1.0 / H)}


def sgd_step(state, rng, D, L, nu, lr=1.0, lr_c=1.0):
    K, c = state["K"], state["c"]
    F = len(nu)
    lstar = rng.integers(L)
    # flip prior (docs/model.md §2): θ_1 = √ν_1, θ_f = ±√ν_f for f ≥ 2
    theta = np.sqrt(nu) * np.concatenate(([1.0], rng.choice([-1.0, 1.0], F - 1)))
    X = rng.standard_normal((L, D))          # tokens x_ℓ = z_ℓ (§1) ...
    X[lstar, :F] += theta                    # ... + θ_f u_f/√D on the relevant one
    S = (K @ X.T) / np.sqrt(D)               # scores s_hℓ = x_ℓ·k_h/√D (§3)
    g = X[:, F]                              # g_ℓ = x_ℓ·v*/√D
    A = np.exp(S - S.max(axis=1, keepdims=True))
    A /= A.sum(axis=1, keepdims=True)        # softmax over positions
    o = A @ g                                # head outputs
    r = c @ o - g[lstar]                     # residual ŷ − y (Δ = 0)
    J = c[:, None] * A * (g[None, :] - o[:, None])   # ∂ŷ/∂s (§3, softmax)
    K -= (lr / np.sqrt(D)) * (r * J) @ X     # k_h ← k_h − η r Σ_ℓ J_hℓ x_ℓ/√D (§4)
    c -= (lr_c / D) * r * o                  # learned readout (§3)


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--D", type=int, default=10000)
    p.add_argument("--L", type=int, default=10)
    p.add_argument("--H", type=int, default=2)
    p.add_argument("--seconds", type=float, default=3.0, help="minimum measuring time")
    a = p.parse_args()
    rng = np.random.default_rng(1)
    nu = np.array([2.0, 2.0])
    state = make_state(a.D, a.H, rng)
    for _ in range(20):  # warm-up
        sgd_step(state, rng, a.D, a.L, nu)
    steps = 0
    w0, c0 = time.perf_counter(), time.process_time()
    while time.perf_counter() - w0 < a.seconds:
        for _ in range(50):
            sgd_step(state, rng, a.D, a.L, nu)
        steps += 50
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    assert np.isfinite(state["K"]).all()
    print(json.dumps({"samples_per_s": steps / wall, "cpu_samples_per_s": steps / cpu, "steps": steps}))


if __name__ == "__main__":
    main()
