// The compiled part of the Python module: bindings only. Keywords are the CLI's flag
// names; every check and computation is the library's (errors: UsageError → ValueError
// with the CLI's message).
#include <fmt/format.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <nlohmann/json.hpp>

#include "headspec/bayes.hpp"
#include "headspec/engines.hpp"
#include "headspec/errors.hpp"
#include "headspec/settings.hpp"
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

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "headspec: multi-head attention in the high-dimensional single-location model (compiled core)";
  py::register_exception<UsageError>(m, "UsageError", PyExc_ValueError);
  m.attr("__version__") = kVersion;
  m.attr("git_revision") = kGitRevision;
  m.def("simulate", &simulate, "Finite-D online SGD (MODEL.md §1–5); returns arrays indexed by record.",
        py::arg("engine") = "dense", py::arg("D") = 10000, py::arg("T") = 20.0, py::arg("record_every") = 1.0,
        py::arg("test_samples") = 2000, py::arg("seed") = 1, py::arg("runs") = 1, py::arg("prior") = "flip",
        py::arg("nu") = std::vector<double>{2.0, 2.0}, py::arg("L") = 10, py::arg("H") = 2,
        py::arg("activation") = "softmax", py::arg("readout") = "learned", py::arg("readout_lr") = py::none(),
        py::arg("lr") = 1.0, py::arg("batch") = 1, py::arg("noise") = 0.0, py::arg("q0") = 1.0);
  m.def("theory", &theory,
        "The D → ∞ ODE of the order parameters (MODEL.md §6), as `headspec theory`; returns the arrays of simulate.",
        py::arg("T") = 20.0, py::arg("record_every") = 1.0, py::arg("seed") = 1, py::arg("mc") = 10000,
        py::arg("mc_resample") = false, py::arg("integrator") = "", py::arg("dt") = 0.05, py::arg("init_D") = 10000,
        py::arg("init_engine") = "dense", py::arg("runs") = 1, py::arg("keep_R") = false,
        py::arg("until_converged") = 0.0, py::arg("prior") = "flip", py::arg("nu") = std::vector<double>{2.0, 2.0},
        py::arg("L") = 10, py::arg("H") = 2, py::arg("activation") = "softmax", py::arg("readout") = "learned",
        py::arg("readout_lr") = py::none(), py::arg("lr") = 1.0, py::arg("batch") = 1, py::arg("noise") = 0.0,
        py::arg("q0") = 1.0);
  m.def("bayes", &bayes, "The Bayes-optimal error ε_Bayes (MODEL.md §8): {'mmse', 'stderr'}.", py::arg("prior") = "flip",
        py::arg("nu") = std::vector<double>{2.0, 2.0}, py::arg("L") = 10, py::arg("noise") = 0.0,
        py::arg("samples") = 1000000, py::arg("seed") = 1, py::arg("method") = "mc");
}
