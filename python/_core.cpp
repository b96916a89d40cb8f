// The compiled part of the Python module: bindings only. Keywords are the CLI's flag
// names; every check and computation is the library's (errors: UsageError → ValueError
// with the CLI's message).
#include <fmt/format.h>
#include <pybind11/complex.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cmath>
#include <complex>
#include <nlohmann/json.hpp>

#include "headspec/bayes.hpp"
#include "headspec/engines.hpp"
#include "headspec/errors.hpp"
#include "headspec/linearisation.hpp"
#include "headspec/mnist_data.hpp"
#include "headspec/mnist_engine.hpp"
#include "headspec/settings.hpp"
#include "headspec/study_checks.hpp"
#include "headspec/sweep_plan.hpp"
#include "headspec/theory_runs.hpp"
#include "headspec/version.hpp"

namespace py = pybind11;
using namespace headspec;

namespace {

ModelSettings settings(const std::string& prior, const std::vector<double>& nu, int L, int H,
                       const std::string& activation, const std::string& readout, std::optional<double> readout_lr,
                       double lr, int batch, double noise, double q0) {
  ModelSettings s;
  s.prior = prior;
  s.nu = fmt::format("{}", fmt::join(nu, ","));
  s.L = L;
  s.H = H;
  s.activation = activation;
  s.readout = readout;
  if (readout_lr) s.readout_lr = fmt::format("{}", *readout_lr);
  s.lr = lr;
  s.batch = batch;
  s.noise = noise;
  s.q0 = q0;
  return s;
}

py::dict records_to_arrays(const std::vector<const Record*>& rows, int H, int F) {
  const auto n = static_cast<py::ssize_t>(rows.size());
  py::array_t<int> run(n);
  py::array_t<double> t(n), loss(n), M({n, py::ssize_t(H), py::ssize_t(F)}), R({n, py::ssize_t(H)}),
      Q({n, py::ssize_t(H), py::ssize_t(H)}), c({n, py::ssize_t(H)});
  auto run_ = run.mutable_unchecked<1>();
  auto t_ = t.mutable_unchecked<1>();
  auto loss_ = loss.mutable_unchecked<1>();
  auto M_ = M.mutable_unchecked<3>();
  auto R_ = R.mutable_unchecked<2>();
  auto Q_ = Q.mutable_unchecked<3>();
  auto c_ = c.mutable_unchecked<2>();
  for (py::ssize_t i = 0; i < n; ++i) {
    const Record& r = *rows[i];
    run_(i) = r.run;
    t_(i) = r.t;
    loss_(i) = r.loss;
    for (int h = 0; h < H; ++h) {
      for (int f = 0; f < F; ++f) M_(i, h, f) = r.op.M(h, f);
      R_(i, h) = r.op.R[h];
      for (int g = 0; g < H; ++g) Q_(i, h, g) = r.op.Q(h, g);
      c_(i, h) = r.op.c[h];
    }
  }
  py::dict d;
  d["run"] = run;
  d["t"] = t;
  d["loss"] = loss;
  d["M"] = M;
  d["R"] = R;
  d["Q"] = Q;
  d["c"] = c;
  return d;
}

py::dict model_dict(const ModelSpec& m) {
  nlohmann::json j;
  m.to_json(j);
  return py::module_::import("json").attr("loads")(j.dump());
}

py::dict simulate(const std::string& engine, int64_t D, double T, double record_every, int test_samples,
                  int64_t seed, int runs, const std::string& prior, const std::vector<double>& nu, int L, int H,
                  const std::string& activation, const std::string& readout, std::optional<double> readout_lr,
                  double lr, int batch, double noise, double q0) {
  const ModelSpec model = settings(prior, nu, L, H, activation, readout, readout_lr, lr, batch, noise, q0).to_spec();
  SimulationSpec sim;
  sim.D = D;
  sim.T = T;
  sim.record_every = record_every;
  sim.test_samples = test_samples;
  sim.seed = checked_seed(seed);
  sim.runs = runs;
  sim.validate();
  const EngineFactory factory = sgd_engine_factory(engine, model, D);
  std::vector<Trajectory> trajectories;
  {
    py::gil_scoped_release release;
    trajectories = run_sgd_runs(factory, model, sim);
  }
  std::vector<const Record*> rows;
  py::list diverged;
  for (std::size_t k = 0; k < trajectories.size(); ++k) {
    for (const auto& r : trajectories[k].records) rows.push_back(&r);
    if (trajectories[k].diverged) diverged.append(py::make_tuple(k, trajectories[k].diverged_at));
  }
  py::dict out = records_to_arrays(rows, model.H, model.F());
  out["model"] = model_dict(model);
  out["simulation"] = py::dict(py::arg("engine") = engine, py::arg("D") = D, py::arg("T") = T,
                               py::arg("record_every") = record_every, py::arg("test_samples") = test_samples,
                               py::arg("seed") = seed, py::arg("runs") = runs);
  out["diverged"] = diverged;
  return out;
}

py::dict theory(double T, double record_every, int64_t seed, int64_t mc, bool mc_resample,
                const std::string& integrator, double dt, int64_t init_D, const std::string& init_engine, int runs,
                bool keep_R, double until_converged, const std::string& prior, const std::vector<double>& nu, int L,
                int H, const std::string& activation, const std::string& readout,
                std::optional<double> readout_lr, double lr, int batch, double noise, double q0) {
  const ModelSpec model = settings(prior, nu, L, H, activation, readout, readout_lr, lr, batch, noise, q0).to_spec();
  TheoryRunsSpec spec;
  spec.mc = mc;
  spec.mc_resample = mc_resample;
  spec.integrator = integrator;
  spec.dt = dt;
  spec.T = T;
  spec.record_every = record_every;
  spec.until_converged = until_converged;
  spec.init_D = init_D;
  spec.init_engine = init_engine;
  spec.runs = runs;
  spec.seed = checked_seed(seed);
  spec.keep_R = keep_R;
  const TheoryRuns theory_runs(model, spec);
  std::vector<TheoryResult> results;
  {
    py::gil_scoped_release release;
    results = theory_runs.run();
  }
  std::vector<const Record*> rows;
  py::list diverged, converged;
  for (std::size_t k = 0; k < results.size(); ++k) {
    for (const auto& r : results[k].trajectory.records) rows.push_back(&r);
    if (results[k].trajectory.diverged) diverged.append(py::make_tuple(k, results[k].trajectory.diverged_at));
    if (results[k].converged) converged.append(py::make_tuple(k, results[k].converged_at));
  }
  py::dict out = records_to_arrays(rows, model.H, model.F());
  out["model"] = model_dict(model);
  out["theory"] = py::dict(py::arg("mc") = mc, py::arg("mc_resample") = mc_resample,
                           py::arg("integrator") = to_string(theory_runs.integration().method), py::arg("dt") = dt,
                           py::arg("T") = T, py::arg("record_every") = record_every, py::arg("seed") = seed,
                           py::arg("init_D") = init_D, py::arg("init_engine") = init_engine, py::arg("runs") = runs,
                           py::arg("keep_R") = keep_R, py::arg("until_converged") = until_converged);
  out["diverged"] = diverged;
  out["converged"] = converged;
  return out;
}

py::dict bayes(const std::string& prior, const std::vector<double>& nu, int L, double noise, int64_t samples,
               int64_t seed, const std::string& method) {
  ModelSettings s;
  s.prior = prior;
  s.nu = fmt::format("{}", fmt::join(nu, ","));
  s.L = L;
  s.noise = noise;
  const ModelSpec m = s.to_spec();
  py::dict out;
  if (method == "quadrature") {
    py::gil_scoped_release release;
    const double v = bayes_error_quadrature(m.prior, m.L, m.noise);
    py::gil_scoped_acquire acquire;
    out["mmse"] = v;
    out["stderr"] = 0.0;
  } else if (method == "mc") {
    if (samples < 2) throw UsageError(fmt::format("--samples: need at least 2, got {}", samples));
    const uint32_t seed32 = checked_seed(seed);
    MeanEstimate e;
    {
      py::gil_scoped_release release;
      e = bayes_error_mc(m.prior, m.L, m.noise, samples, seed32);
    }
    out["mmse"] = e.mean;
    out["stderr"] = e.stderr_;
  } else {
    throw UsageError(fmt::format("--method: unknown method '{}' (mc, quadrature)", method));
  }
  return out;
}


// `headspec mnist` (docs/model.md §11): the library calls of app/cmd_mnist.cpp.
py::dict mnist(double T, double record_every, int64_t seed, int runs, int test_samples, double train_fraction,
               int64_t split_seed, double delta, const std::string& data, double nu, int L, int H,
               const std::string& activation, const std::string& readout, std::optional<double> readout_lr, double lr,
               int batch, double noise, double q0) {
  const ModelSpec model =
      settings("flip", {nu}, L, H, activation, readout, readout_lr, lr, batch, noise, q0).to_spec();
  check_horizon(T, record_every);
  check_runs(checked_seed(seed), runs);
  check_mnist_flags(model, test_samples, split_seed, train_fraction, delta);
  MnistStudySpec spec;
  spec.nu = nu;
  spec.delta = delta;
  spec.sim.D = MnistEngine::D;
  spec.sim.T = T;
  spec.sim.record_every = record_every;
  spec.sim.test_samples = test_samples;
  spec.sim.seed = static_cast<uint32_t>(seed);
  spec.sim.runs = runs;
  std::vector<MnistRun> results;
  {
    py::gil_scoped_release release;
    const MnistDigits digits = load_mnist(data);
    const MnistSplit split = split_mnist(digits, train_fraction, static_cast<uint32_t>(split_seed));
    const MnistTask task = MnistTask::build(digits, split);
    results = run_mnist(task, model, spec);
  }
  std::vector<const Record*> rows;
  py::list diverged;
  const auto n_runs = static_cast<py::ssize_t>(results.size());
  py::array_t<double> keys({n_runs, py::ssize_t(H), py::ssize_t(kMnistSide), py::ssize_t(kMnistSide)});
  py::array_t<double> tau({n_runs, py::ssize_t(kMnistClasses)});
  auto keys_ = keys.mutable_unchecked<4>();
  auto tau_ = tau.mutable_unchecked<2>();
  for (py::ssize_t k = 0; k < n_runs; ++k) {
    const MnistRun& r = results[k];
    for (const auto& rec : r.trajectory.records) rows.push_back(&rec);
    if (r.trajectory.diverged) diverged.append(py::make_tuple(k, r.trajectory.diverged_at));
    for (int h = 0; h < H; ++h)
      for (int p = 0; p < kMnistPixels; ++p) keys_(k, h, p / kMnistSide, p % kMnistSide) = r.keys[h * kMnistPixels + p];
    for (int c = 0; c < kMnistClasses; ++c) tau_(k, c) = r.tau[c];
  }
  py::dict out = records_to_arrays(rows, model.H, kMnistClasses);
  out["keys"] = keys;
  out["tau"] = tau;
  out["model"] = model_dict(model);
  out["simulation"] = py::dict(py::arg("engine") = "mnist", py::arg("D") = MnistEngine::D, py::arg("T") = T,
                               py::arg("record_every") = record_every, py::arg("test_samples") = test_samples,
                               py::arg("seed") = seed, py::arg("runs") = runs, py::arg("delta") = delta,
                               py::arg("nu") = nu, py::arg("train_fraction") = train_fraction,
                               py::arg("split_seed") = split_seed, py::arg("data") = data);
  out["diverged"] = diverged;
  return out;
}

py::dict op_dict(const OrderParameters& op) {
  py::array_t<double> M({py::ssize_t(op.H()), py::ssize_t(op.F())}), Q({py::ssize_t(op.H()), py::ssize_t(op.H())}),
      c(op.H());
  auto M_ = M.mutable_unchecked<2>();
  auto Q_ = Q.mutable_unchecked<2>();
  auto c_ = c.mutable_unchecked<1>();
  for (int h = 0; h < op.H(); ++h) {
    for (int f = 0; f < op.F(); ++f) M_(h, f) = op.M(h, f);
    for (int g = 0; g < op.H(); ++g) Q_(h, g) = op.Q(h, g);
    c_(h) = op.c[h];
  }
  return py::dict(py::arg("M") = M, py::arg("Q") = Q, py::arg("c") = c);
}

// `headspec linearise` for one Monte Carlo seed, without the growth check and the τ^s
// prediction (those are app/cmd_linearise.cpp's): LinearisationResult as arrays.
py::dict linearise_model(int64_t mc, int64_t seed, double dt, double T_max, int64_t approach_mc, double settle,
                         int newton_iterations, double fd_step, int direction, const std::string& prior,
                         const std::vector<double>& nu, int L, int H, const std::string& activation,
                         const std::string& readout, std::optional<double> readout_lr, double lr, int batch,
                         double noise, double q0) {
  const ModelSpec model = settings(prior, nu, L, H, activation, readout, readout_lr, lr, batch, noise, q0).to_spec();
  LinearisationSpec spec;
  spec.mc = mc;
  spec.seed = checked_seed(seed);
  spec.dt = dt;
  spec.T_max = T_max;
  spec.approach_mc = approach_mc;
  spec.settle = settle;
  spec.newton_iterations = newton_iterations;
  spec.fd_step = fd_step;
  spec.direction = linearisation_direction(direction, model);
  spec.validate(model);
  LinearisationResult r;
  {
    py::gil_scoped_release release;
    r = linearise(model, spec);
  }
  const auto n = static_cast<py::ssize_t>(r.coordinates.size());
  py::array_t<double> jacobian({n, n}), spread_mode(n);
  py::array_t<std::complex<double>> eigenvalues(r.eigenvalues.size());
  auto J_ = jacobian.mutable_unchecked<2>();
  for (py::ssize_t i = 0; i < n; ++i) {
    for (py::ssize_t k = 0; k < n; ++k) J_(i, k) = r.jacobian(i, k);
    spread_mode.mutable_at(i) = r.spread_mode[i];
  }
  for (Eigen::Index k = 0; k < r.eigenvalues.size(); ++k) eigenvalues.mutable_at(k) = r.eigenvalues[k];
  py::array_t<double> approach_t(r.approach.size()), approach_loss(r.approach.size());
  for (std::size_t i = 0; i < r.approach.size(); ++i) {
    approach_t.mutable_at(i) = r.approach[i].t;
    approach_loss.mutable_at(i) = r.approach[i].loss;
  }
  py::dict fixed = op_dict(r.fixed_point);
  fixed["settled"] = r.settled;
  fixed["settled_at"] = r.settled_at;
  fixed["newton_iterations"] = r.newton_iterations;
  fixed["residual"] = r.residual;
  fixed["loss"] = r.loss;
  py::dict out;
  out["group_size"] = r.group_size;
  out["direction"] = r.direction + 1;
  out["fixed_point"] = fixed;
  out["approach"] = py::dict(py::arg("t") = approach_t, py::arg("loss") = approach_loss);
  out["coordinates"] = r.coordinates;
  out["jacobian"] = jacobian;
  out["eigenvalues"] = eigenvalues;
  out["lambda_plus"] = r.spread_rate;
  out["lambda_plus_half_fd_step"] = r.spread_rate_half_step;
  out["odd_even_coupling"] = r.odd_even_coupling;
  out["raw_engine_spread_bias"] = r.raw_spread_bias;
  out["spread_mode"] = spread_mode;
  out["model"] = model_dict(model);
  return out;
}

// `headspec sweep` without its files: the library's plan, runs and tables (sweep_plan.hpp)
// as arrays. A cell a grid point lacks (its H, F or readout has fewer columns) is NaN.
py::dict sweep(const std::string& grid, const std::string& engine, int64_t D, double T, double record_every,
               int64_t seed, int runs, int test_samples, int64_t mc, bool mc_resample, const std::string& integrator,
               double dt, int64_t init_D, const std::string& init_engine, double until_converged,
               double until_error_settled, double error_window, double delta, bool stop_when_specialised,
               const std::string& prior, const std::vector<double>& nu, int L, int H, const std::string& activation,
               const std::string& readout, std::optional<double> readout_lr, double lr, int batch, double noise,
               double q0) {
  SweepSettings o;
  o.model = settings(prior, nu, L, H, activation, readout, readout_lr, lr, batch, noise, q0);
  o.grid = grid;
  o.engine = engine;
  o.D = D;
  o.T = T;
  o.record_every = record_every;
  o.seed = seed;
  o.runs = runs;
  o.test_samples = test_samples;
  o.mc = mc;
  o.mc_resample = mc_resample;
  o.integrator = integrator;
  o.dt = dt;
  o.init_D = init_D;
  o.init_engine = init_engine;
  o.until_converged = until_converged;
  o.until_error_settled = until_error_settled;
  o.error_window = error_window;
  o.delta = delta;
  o.stop_when_specialised = stop_when_specialised;
  const SweepPlan plan(o);
  SweepTable table;
  {
    py::gil_scoped_release release;
    table = sweep_table(plan, run_sweep(plan));
  }
  const auto numpy = py::module_::import("numpy");
  auto numbers = [](std::size_t n, auto&& value) {
    py::array_t<double> a(static_cast<py::ssize_t>(n));
    auto a_ = a.mutable_unchecked<1>();
    for (std::size_t i = 0; i < n; ++i) {
      const std::optional<double> v = value(i);
      a_(static_cast<py::ssize_t>(i)) = v ? *v : std::nan("");
    }
    return a;
  };
  auto integers = [](std::size_t n, auto&& value) {
    py::array_t<int> a(static_cast<py::ssize_t>(n));
    auto a_ = a.mutable_unchecked<1>();
    for (std::size_t i = 0; i < n; ++i) a_(static_cast<py::ssize_t>(i)) = value(i);
    return a;
  };
  // The grid columns, the point's index, run; then the caller's columns.
  auto table_dict = [&](const auto& rows) {
    py::dict d;
    for (std::size_t a = 0; a < table.grid_columns.size(); ++a) {
      py::list labels;
      for (const auto& r : rows) labels.append(plan.points()[static_cast<std::size_t>(r.point)].labels[a]);
      d[py::str(table.grid_columns[a])] = numpy.attr("array")(labels);
    }
    d["point"] = integers(rows.size(), [&](std::size_t i) { return rows[i].point; });
    d["run"] = integers(rows.size(), [&](std::size_t i) { return rows[i].run; });
    d["t"] = numbers(rows.size(), [&](std::size_t i) { return std::optional<double>(rows[i].t); });
    for (std::size_t k = 0; k < table.value_columns.size(); ++k)
      d[py::str(table.value_columns[k])] = numbers(rows.size(), [&](std::size_t i) { return rows[i].values[k]; });
    return d;
  };
  py::dict rows = table_dict(table.rows);
  py::dict summary = table_dict(table.summary);
  const auto& s = table.summary;
  summary["diverged"] = integers(s.size(), [&](std::size_t i) { return s[i].diverged ? 1 : 0; });
  if (table.stop_rule) {
    summary["converged"] = integers(s.size(), [&](std::size_t i) { return s[i].converged ? 1 : 0; });
    summary["converged_at"] = numbers(s.size(), [&](std::size_t i) {
      return s[i].converged ? std::optional<double>(s[i].converged_at) : std::nullopt;
    });
  }
  for (int f = 0; f < table.F; ++f)
    summary[py::str(fmt::format("tau_{}", f + 1))] = numbers(s.size(), [&](std::size_t i) { return s[i].tau[f]; });
  if (table.tau_tilde)
    for (int f = 0; f < table.F; ++f)
      summary[py::str(fmt::format("tau_tilde_{}", f + 1))] =
          numbers(s.size(), [&](std::size_t i) { return s[i].tau_tilde[f]; });
  py::list diverged;
  for (const auto& r : s)
    if (r.diverged) diverged.append(py::make_tuple(r.point, r.run, r.diverged_at));
  py::list axes;
  for (const auto& a : plan.axes()) axes.append(py::dict(py::arg("key") = a.key, py::arg("values") = a.values));
  py::dict out;
  out["rows"] = rows;
  out["summary"] = summary;
  out["grid"] = axes;
  out["base_model"] = model_dict(plan.base_model());
  out["diverged"] = diverged;
  return out;
}

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "headspec: multi-head attention in the high-dimensional single-location model (compiled core)";
  py::register_exception<UsageError>(m, "UsageError", PyExc_ValueError);
  m.attr("__version__") = kVersion;
  m.attr("git_revision") = kGitRevision;
  m.def("simulate", &simulate, "Finite-D online SGD (docs/model.md §1–5); returns arrays indexed by record.",
        py::arg("engine") = "dense", py::arg("D") = 10000, py::arg("T") = 20.0, py::arg("record_every") = 1.0,
        py::arg("test_samples") = 2000, py::arg("seed") = 1, py::arg("runs") = 1, py::arg("prior") = "flip",
        py::arg("nu") = std::vector<double>{2.0, 2.0}, py::arg("L") = 10, py::arg("H") = 2,
        py::arg("activation") = "softmax", py::arg("readout") = "learned", py::arg("readout_lr") = py::none(),
        py::arg("lr") = 1.0, py::arg("batch") = 1, py::arg("noise") = 0.0, py::arg("q0") = 1.0);
  m.def("theory", &theory,
        "The D → ∞ ODE of the order parameters (docs/model.md §6), as `headspec theory`; returns the arrays of simulate.",
        py::arg("T") = 20.0, py::arg("record_every") = 1.0, py::arg("seed") = 1, py::arg("mc") = 10000,
        py::arg("mc_resample") = false, py::arg("integrator") = "", py::arg("dt") = 0.05, py::arg("init_D") = 10000,
        py::arg("init_engine") = "dense", py::arg("runs") = 1, py::arg("keep_R") = false,
        py::arg("until_converged") = 0.0, py::arg("prior") = "flip", py::arg("nu") = std::vector<double>{2.0, 2.0},
        py::arg("L") = 10, py::arg("H") = 2, py::arg("activation") = "softmax", py::arg("readout") = "learned",
        py::arg("readout_lr") = py::none(), py::arg("lr") = 1.0, py::arg("batch") = 1, py::arg("noise") = 0.0,
        py::arg("q0") = 1.0);
  m.def("bayes", &bayes, "The Bayes-optimal error ε_Bayes (docs/model.md §8): {'mmse', 'stderr'}.", py::arg("prior") = "flip",
        py::arg("nu") = std::vector<double>{2.0, 2.0}, py::arg("L") = 10, py::arg("noise") = 0.0,
        py::arg("samples") = 1000000, py::arg("seed") = 1, py::arg("method") = "mc");
  m.def("mnist", &mnist,
        "The MNIST detection task (docs/model.md §11), as `headspec mnist`: the arrays of simulate (loss = test "
        "error, M over the 10 class directions), keys (runs × H × 28 × 28, final) and tau (runs × 10, NaN: "
        "not specialised).",
        py::arg("T") = 100.0, py::arg("record_every") = 1.0, py::arg("seed") = 1, py::arg("runs") = 1,
        py::arg("test_samples") = 1000, py::arg("train_fraction") = 0.8, py::arg("split_seed") = 1,
        py::arg("delta") = 1.0, py::arg("data") = std::string(HEADSPEC_SOURCE_DIR) + "/data/mnist",
        py::arg("nu") = 1000.0, py::arg("L") = 5, py::arg("H") = 10, py::arg("activation") = "softmax",
        py::arg("readout") = "learned", py::arg("readout_lr") = py::none(), py::arg("lr") = 1.0,
        py::arg("batch") = 1, py::arg("noise") = 0.0, py::arg("q0") = 1.0);
  m.def("sweep", &sweep,
        "A grid over model flags × runs on any engine, as `headspec sweep`: {'rows': the tidy CSV's columns, "
        "'summary': the summary CSV's columns} as arrays (grid columns as strings; NaN: a cell the point lacks "
        "or not specialised).",
        py::arg("grid"), py::arg("engine") = "gram", py::arg("D") = 10000, py::arg("T") = 20.0,
        py::arg("record_every") = 1.0, py::arg("seed") = 1, py::arg("runs") = 1, py::arg("test_samples") = 2000,
        py::arg("mc") = 10000, py::arg("mc_resample") = false, py::arg("integrator") = "", py::arg("dt") = 0.05,
        py::arg("init_D") = 10000, py::arg("init_engine") = "dense", py::arg("until_converged") = 0.0,
        py::arg("until_error_settled") = 0.0, py::arg("error_window") = 20.0, py::arg("delta") = 0.2,
        py::arg("stop_when_specialised") = false, py::arg("prior") = "flip",
        py::arg("nu") = std::vector<double>{2.0, 2.0}, py::arg("L") = 10, py::arg("H") = 2,
        py::arg("activation") = "softmax", py::arg("readout") = "learned", py::arg("readout_lr") = py::none(),
        py::arg("lr") = 1.0, py::arg("batch") = 1, py::arg("noise") = 0.0, py::arg("q0") = 1.0);
  m.def("linearise", &linearise_model,
        "The ODE linearised at the unspecialised fixed point, as `headspec linearise` (one seed): fixed point, "
        "Jacobian, eigenvalues, lambda_plus.",
        py::arg("mc") = 100000, py::arg("seed") = 1, py::arg("dt") = 0.5, py::arg("T_max") = 300.0,
        py::arg("approach_mc") = 0, py::arg("settle") = 1e-9, py::arg("newton_iterations") = 20,
        py::arg("fd_step") = 1e-4, py::arg("direction") = 0, py::arg("prior") = "flip",
        py::arg("nu") = std::vector<double>{2.0, 2.0}, py::arg("L") = 10, py::arg("H") = 2,
        py::arg("activation") = "softmax", py::arg("readout") = "learned", py::arg("readout_lr") = py::none(),
        py::arg("lr") = 1.0, py::arg("batch") = 1, py::arg("noise") = 0.0, py::arg("q0") = 1.0);
}
