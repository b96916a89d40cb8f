#!/usr/bin/python3
"""A plain NumPy implementation of the theory's right-hand side (docs/model.md §6-7, value
channel integrated out, R = 0), vectorised over the N Monte Carlo samples, for comparison
with `bench_theory` (docs/performance.md).

Usage: /usr/bin/python3 bench/theory_numpy.py [--N 10000] [--evals 20] [--curve-T 150]
It prints evaluations per second of the right-hand side at L = 10, H = 2, flip nu = (2, 2),
softmax, learned readout (rhs, and rhs_explicit_phi which it is checked against), and the
time of an RK4 curve (dt = 0.05) up to --curve-T (--curve-T 0 skips the curve).
bench/theory_compare.py times rhs against the C++ engine in one run.
"""
import argparse
import time

import numpy as np


def draw_samples(rng, N, L, F, H, nu):
    theta = np.empty((N, F))
    theta[:, 0] = np.sqrt(nu[0])  # flip: constant first direction
    theta[:, 1:] = np.sqrt(nu[1:]) * rng.choice([-1.0, 1.0], size=(N, F - 1))
    zeta = rng.standard_normal((N, L, F))
    w = rng.standard_normal((N, L, H))
    lam = zeta.copy()
    lam[:, 0, :] += theta  # l* = 1 by exchangeability
    return lam, w


def soa_samples(lam, w):
    """The samples with the sample index last, shape (L, F + H, N): (lambda_l, w_l) of
    every sample, so that every array operation below runs over N contiguous numbers."""
    return np.ascontiguousarray(np.concatenate([lam, w], axis=2).transpose(1, 2, 0))


def rhs(M, Q, c, Z, eta=1.0, B=1, delta=0.0):
    """The right-hand side (docs/model.md section 7, R = 0) from Z = soa_samples(lam, w), with the
    closed forms the C++ engine uses: P = Phi e without forming Phi, and
    sum_l Phi_hl . Phi_gl = c_h c_g (sum_l a b (1 - a - b) + (a . b)^2), a = A_h, b = A_g."""
    L, K, N = Z.shape
    H = M.shape[0]
    F = K - H
    ev, V = np.linalg.eigh(Q - M @ M.T)
    C = (V * np.sqrt(np.maximum(ev, 0.0))) @ V.T
    W = np.concatenate([M, C], axis=1)  # s_l = M lambda_l + C w_l = W (lambda_l, w_l)
    S = np.matmul(W, Z)                 # (L, H, N)
    A = S - S.max(axis=0)
    np.exp(A, out=A)
    A /= A.sum(axis=0)                  # softmax over positions
    e = np.tensordot(c, A, axes=(0, 1))  # a_l = sum_h c_h A_hl, (L, N)
    e[0] -= 1.0                         # e = a - e_{l*}, l* = 1
    e2 = np.einsum("ln,ln->n", e, e) + delta
    Ae = A * e[:, None, :]
    P = A * (e[:, None, :] - Ae.sum(axis=0))
    P *= c[:, None]                     # P = Phi e, (L, H, N)
    dM = -eta / B * np.einsum("lhn,lfn->hf", P, Z[:, :F, :]) / N
    PS = np.einsum("lhn,lgn->hg", P, S) / N
    PP = np.einsum("lhn,lgn->hg", P, P) / N
    AA = np.einsum("lhn,lgn->hgn", A, A)
    A2A = np.einsum("lhn,lgn->hgn", A * A, A)
    gram = np.outer(c, c) * ((AA - A2A - A2A.transpose(1, 0, 2) + AA * AA) @ e2) / N
    dQ = -eta / B * (PS + PS.T) + eta * eta / (B * B) * (gram + 2.0 * PP)
    dc = -eta / B * Ae.sum(axis=(0, 2)) / N
    return dM, dQ, dc, e2.mean()


def rhs_explicit_phi(M, Q, c, lam, w, eta=1.0, B=1, delta=0.0):
    """The same right-hand side written as docs/model.md section 7 reads, with Phi formed as an
    (N, H, L, L) array: the check of rhs() (about twice as slow)."""
    N, L, F = lam.shape
    H = M.shape[0]
    Qp = Q - M @ M.T
    ev, V = np.linalg.eigh(Qp)
    C = (V * np.sqrt(np.maximum(ev, 0.0))) @ V.T
    S = np.einsum("hf,nlf->nhl", M, lam) + np.einsum("hj,nlj->nhl", C, w)
    A = np.exp(S - S.max(axis=2, keepdims=True))
    A /= A.sum(axis=2, keepdims=True)  # softmax over positions
    a = np.einsum("h,nhl->nl", c, A)
    e = a.copy()
    e[:, 0] -= 1.0
    e2 = (e * e).sum(axis=1) + delta
    # Phi_{h,l,l'} = c_h A_hl (delta_ll' - A_hl')
    Phi = c[None, :, None, None] * A[:, :, :, None] * (np.eye(L)[None, None] - A[:, :, None, :])
    P = np.einsum("nhlk,nk->nhl", Phi, e)
    dM = -eta / B * np.einsum("nhl,nlf->hf", P, lam) / N
    PS = np.einsum("nhl,ngl->hg", P, S) / N
    gram = np.einsum("n,nhlk,nglk->hg", e2, Phi, Phi, optimize=True) / N
    PP = np.einsum("nhl,ngl->hg", P, P) / N
    dQ = -eta / B * (PS + PS.T) + eta * eta / (B * B) * (gram + 2.0 * PP)
    dc = -eta / B * np.einsum("nl,nhl->h", e, A) / N
    return dM, dQ, dc, e2.mean()


def fig1_setting(N, seed=1):
    """Samples and the benchmark's state, as bench_theory's fig1_state: the initial state
    is one finite-D draw at D = 10^4 (M = O(1/sqrt(D)), Q = I + O(1/sqrt(D))), then M_h1 += 0.5
    and Q += 0.25 entrywise (a state part-way along the curve)."""
    L, H, F = 10, 2, 2
    rng = np.random.default_rng(seed)
    lam, w = draw_samples(rng, N, L, F, H, np.array([2.0, 2.0]))
    D = 10000
    K = rng.standard_normal((H, D))
    M0 = K[:, :F] / np.sqrt(D)
    Q0 = K @ K.T / D
    c0 = np.full(H, 1.0 / H)
    M = M0.copy()
    M[:, 0] += 0.5
    Q = Q0 + 0.25
    return lam, w, (M0, Q0, c0), (M, Q, c0)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--N", type=int, default=10000)
    p.add_argument("--evals", type=int, default=20)
    p.add_argument("--curve-T", type=float, default=150.0)
    p.add_argument("--dt", type=float, default=0.05)
    args = p.parse_args()
    L, H = 10, 2
    lam, w, (M0, Q0, c0), (M, Q, c) = fig1_setting(args.N)
    Z = soa_samples(lam, w)
    fast, slow = rhs(M, Q, c, Z), rhs_explicit_phi(M, Q, c, lam, w)
    for x, y in zip(fast, slow):
        assert np.allclose(x, y, rtol=1e-10, atol=1e-14), (x, y)
    for name, f, fargs in (("rhs", rhs, (M, Q, c, Z)), ("rhs_explicit_phi", rhs_explicit_phi, (M, Q, c, lam, w))):
        f(*fargs)  # warm-up
        t0, c0_cpu = time.perf_counter(), time.thread_time()
        for _ in range(args.evals):
            f(*fargs)
        per = (time.perf_counter() - t0) / args.evals
        per_cpu = (time.thread_time() - c0_cpu) / args.evals
        print(f"numpy {name}: N={args.N} L={L} H={H}: {per * 1e3:.2f} ms per evaluation (wall), "
              f"{per_cpu * 1e3:.2f} ms (CPU of the thread), {1 / per:.2f} evaluations/s")
    if args.curve_T > 0:
        steps = int(round(args.curve_T / args.dt))
        M, Q, c = M0.copy(), Q0.copy(), c0.copy()
        t0, c0_cpu = time.perf_counter(), time.thread_time()

        def f(M, Q, c):
            dM, dQ, dc, _ = rhs(M, Q, c, Z)
            return dM, dQ, dc

        for k in range(steps):
            h = args.dt
            k1 = f(M, Q, c)
            k2 = f(M + h / 2 * k1[0], Q + h / 2 * k1[1], c + h / 2 * k1[2])
            k3 = f(M + h / 2 * k2[0], Q + h / 2 * k2[1], c + h / 2 * k2[2])
            k4 = f(M + h * k3[0], Q + h * k3[1], c + h * k3[2])
            M = M + h / 6 * (k1[0] + 2 * k2[0] + 2 * k3[0] + k4[0])
            Q = Q + h / 6 * (k1[1] + 2 * k2[1] + 2 * k3[1] + k4[1])
            c = c + h / 6 * (k1[2] + 2 * k2[2] + 2 * k3[2] + k4[2])
        el, el_cpu = time.perf_counter() - t0, time.thread_time() - c0_cpu
        print(f"numpy curve: RK4 dt={args.dt} t=0..{args.curve_T}: {el:.1f} s wall, {el_cpu:.1f} s CPU; "
              f"M_h1 = {M[:, 0]}")


if __name__ == "__main__":
    main()
