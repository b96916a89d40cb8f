"""Where the Monte Carlo variance of the theory's right-hand side comes from, and what two more
variance-reduction ingredients would give (docs/theory.md §2, "What each ingredient gives").

NumPy, independent of the engine: the per-sample rates of docs/theory.md §1 (softmax, value
channel integrated out, λ integrated out given the scores as in the symmetric method) at the
Fig. 1 plateau state of bench_theory_accuracy (t = 40 of `--init-engine gram --init-D 10000
--seed 1`). Prints, for every rate and ε,
  - sd:        the per-sample standard deviation (plain Monte Carlo: sd/√N);
  - relevant:  the share of the variance explained by the relevant position ℓ* = 1 (θ and ξ_1),
               Var E[f | θ, ξ_1] / Var f, with 200 background draws per relevant draw;
  - quadrature: the sd gain, at equal numbers of background draws, of integrating θ and ξ_1 out
               (both signs × 16×16 Gauss–Hermite nodes: 512 evaluations per background draw);
  - cv:        the sd gain at equal N of a regression control variate with known mean (least
               squares, in-sample): Hermite polynomials of ξ_1 up to degree 3 with and without θ_2's
               sign, sums over the background positions of Hermite polynomials of ξ_ℓ up to degree
               4, and the background's lognormal sums Σ e^{s_hℓ}, Σ e^{s_hℓ + s_h'ℓ}, Σ e^{s_hℓ} ξ_ℓk
               (closed-form means) times polynomials of ξ_1 up to degree 2.

    /usr/bin/python3 bench/theory_variance_sources.py [N]     (default N = 100000; about a minute)
"""
import sys

import numpy as np
from numpy.polynomial.hermite_e import hermeval, hermegauss

L, H, F = 10, 2, 2
NU = np.array([2.0, 2.0])
# The plateau state (t = 40; R = 0): M, Q = MMᵀ + Q⊥, c.
M = np.array([[1.3363197867866443, 0.038175437665445906], [1.258415150153507, -0.03808797247242968]])
Q = np.array([[2.4766901777730017, 1.5897222613825184], [1.5897222613825184, 2.28071204670507]])
C_READOUT = np.array([0.5101614589691684, 0.4768640236443258])
_w, _V = np.linalg.eigh(Q)
Q_ROOT = _V @ np.diag(np.sqrt(_w)) @ _V.T
B_COND = M.T @ _V @ np.diag(1 / np.sqrt(_w)) @ _V.T  # E[λ_ℓ | s_ℓ] = θ 1[ℓ = 1] + B ξ_ℓ


def rates(theta, xi):
    """Per-sample rates (dict name → array over samples) for θ (N×F) and ξ (N×L×H), η = 1, B = 1, Δ = 0."""
    s = np.einsum("hk,nlk->nlh", Q_ROOT, xi)
    s[:, 0, :] += theta @ M.T
    lam = np.einsum("fk,nlk->nlf", B_COND, xi)
    lam[:, 0, :] += theta
    E = np.exp(s - s.max(axis=1, keepdims=True))
    A = E / E.sum(axis=1, keepdims=True)  # (N, L, H), softmax over positions
    e = A @ C_READOUT
    e[:, 0] -= 1
    mu = np.einsum("nlh,nl->nh", A, e)
    P = A * (e[:, :, None] - mu[:, None, :]) * C_READOUT[None, None, :]
    out = {"eps": (e ** 2).sum(1)}
    dM = -np.einsum("nlh,nlf->nhf", P, lam)
    for h in range(H):
        for f in range(F):
            out[f"dM_{h + 1}_{f + 1}"] = dM[:, h, f]
    for h, g in [(0, 0), (0, 1), (1, 1)]:
        sab = (A[:, :, h] * A[:, :, g]).sum(1)
        gram = C_READOUT[h] * C_READOUT[g] * (sab - (A[:, :, h] * A[:, :, g] * (A[:, :, h] + A[:, :, g])).sum(1) + sab ** 2)
        drift = -(P[:, :, h] * s[:, :, g] + P[:, :, g] * s[:, :, h]).sum(1)
        out[f"dQ_{h + 1}_{g + 1}"] = drift + out["eps"] * gram + 2 * (P[:, :, h] * P[:, :, g]).sum(1)
    for h in range(H):
        out[f"dc_{h + 1}"] = -mu[:, h]
    return out


def draw(rng, n):
    theta = np.empty((n, F))
    theta[:, 0] = np.sqrt(NU[0])
    theta[:, 1] = np.sqrt(NU[1]) * rng.choice([-1.0, 1.0], n)
    return theta, rng.standard_normal((n, L, H))


def hermite(x, n):
    c = np.zeros(n + 1)
    c[n] = 1
    return hermeval(x, c)


def polynomials(x0, x1, degree, constant=False):
    return [hermite(x0, i) * hermite(x1, j) for i in range(degree + 1) for j in range(degree + 1 - i)
            if constant or i + j > 0]


def relevant_share(rng, keys, variance, n_relevant=2000, n_background=200):
    theta, xi1 = draw(rng, n_relevant)
    acc = {k: np.zeros(n_relevant) for k in keys}
    for _ in range(n_background):
        _, xi = draw(rng, n_relevant)
        xi[:, 0, :] = xi1[:, 0, :]
        for k, v in rates(theta, xi).items():
            acc[k] += v / n_background
    return {k: acc[k].var() / variance[k] for k in keys}


def quadrature_gain(rng, keys, variance, n_background=3000, nodes=16):
    x, w = hermegauss(nodes)
    w = w / w.sum()
    _, xi = draw(rng, n_background)
    acc = {k: np.zeros(n_background) for k in keys}
    for sign in (-1.0, 1.0):
        theta = np.tile([np.sqrt(NU[0]), sign * np.sqrt(NU[1])], (n_background, 1))
        for i in range(nodes):
            for j in range(nodes):
                xi[:, 0, 0], xi[:, 0, 1] = x[i], x[j]
                for k, v in rates(theta, xi).items():
                    acc[k] += 0.5 * w[i] * w[j] * v
    return {k: np.sqrt(variance[k] / acc[k].var()) for k in keys}


def control_variate_gain(theta, xi, out):
    sign = np.sign(theta[:, 1])
    relevant = polynomials(xi[:, 0, 0], xi[:, 0, 1], 3)
    features = [sign] + relevant + [p * sign for p in relevant]
    per_position = [polynomials(xi[:, l, 0], xi[:, l, 1], 4) for l in range(1, L)]
    features += [sum(p) for p in zip(*per_position)]
    s = np.einsum("hk,nlk->nlh", Q_ROOT, xi[:, 1:, :])
    e = np.exp(s)
    sums = [e[:, :, h].sum(1) - (L - 1) * np.exp(Q[h, h] / 2) for h in range(H)]
    sums += [(e[:, :, h] * e[:, :, g]).sum(1) - (L - 1) * np.exp((Q[h, h] + 2 * Q[h, g] + Q[g, g]) / 2)
             for h, g in [(0, 0), (0, 1), (1, 1)]]
    # E[e^{a·ξ} ξ_k] = a_k e^{|a|²/2} with a the h-th row of Q^{1/2} (Stein's identity).
    sums += [(e[:, :, h] * xi[:, 1:, k]).sum(1) - (L - 1) * Q_ROOT[h, k] * np.exp(Q_ROOT[h] @ Q_ROOT[h] / 2)
             for h in range(H) for k in range(H)]
    weights = polynomials(xi[:, 0, 0], xi[:, 0, 1], 2, constant=True)
    weights += [p * sign for p in weights]
    features += [a * b for a in sums for b in weights]
    X = np.stack(features, 1)
    gains = {}
    for k, v in out.items():
        y = v - v.mean()
        beta, *_ = np.linalg.lstsq(X, y, rcond=None)
        gains[k] = np.sqrt(y.var() / (y - X @ beta).var())
    return gains, X.shape[1]


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100000
    rng = np.random.default_rng(1)
    theta, xi = draw(rng, n)
    out = rates(theta, xi)
    keys = list(out)
    variance = {k: out[k].var() for k in keys}
    share = relevant_share(rng, keys, variance)
    quad = quadrature_gain(rng, keys, variance)
    cv, n_features = control_variate_gain(theta, xi, out)
    print(f"N = {n}; control variate: {n_features} features")
    print("| rate | mean | sd per sample | relevant position's share | quadrature gain | control-variate gain |")
    print("|---|---|---|---|---|---|")
    for k in keys:
        print(f"| {k} | {out[k].mean():.5f} | {np.sqrt(variance[k]):.3f} | {share[k]:.2f} | {quad[k]:.2f} | {cv[k]:.2f} |")


if __name__ == "__main__":
    main()
