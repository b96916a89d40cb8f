"""headspec: training dynamics of multi-head softmax attention in the high-dimensional
single-location model.

    import headspec
    run = headspec.simulate(D=2000, T=10, runs=4)      # arrays: run, t, loss, M, R, Q, c
    ode = headspec.theory(init_D=2000, mc=4000, dt=0.2, T=10)   # the same arrays, from the D → ∞ ODE
    headspec.bayes(prior="gauss", nu=[8, 2], L=4)      # {'mmse': ..., 'stderr': ...}
    digits = headspec.mnist(H=4, T=3, test_samples=200)   # MNIST: arrays as simulate, keys, tau
    lin = headspec.linearise(L=5, mc=20000)            # fixed point, Jacobian, eigenvalues, lambda_plus
    grid = headspec.sweep(grid="lr=0.5,1", D=500, T=5, runs=2)   # {'rows': ..., 'summary': ...} arrays

Keywords are the command line's flag names; bad input raises ValueError
(headspec.UsageError) with the command line's message.
"""
from ._core import UsageError, __version__, bayes, git_revision, linearise, mnist, simulate, sweep, theory

__all__ = ["UsageError", "__version__", "bayes", "git_revision", "linearise", "mnist", "simulate", "sweep", "theory"]
