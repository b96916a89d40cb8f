// `headspec sweep`: a grid over model flags × runs on any engine (INTERFACE.md), one tidy
// CSV of every record and a summary CSV of final values and specialisation times.
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <iostream>
#include <limits>
#include <map>
#include <memory>

#include "commands.hpp"
#include "headspec/engines.hpp"
#include "headspec/errors.hpp"
#include "headspec/io.hpp"
#include "headspec/specialisation.hpp"
#include "headspec/sweep.hpp"
#include "headspec/theory_integrator.hpp"
#include "headspec/theory_runs.hpp"
#include "options.hpp"

namespace headspec::app {
namespace {

struct SweepOptions {
  ModelOptions model;
  RunOptions run;
  std::string grid;
  std::string engine = "gram";
  int64_t D = 10000;
  int runs = 1;
  int test_samples = 2000;
  // theory
  int64_t mc = 10000;
  bool mc_resample = false;
  std::string integrator;
  double dt = 0.05;
  int64_t init_D = 10000;
  std::string init_engine = "dense";
  // specialisation
  double delta = 0.2;
  bool stop_when_specialised = false;
  std::string summary;
};

// One grid point, ready to run.
struct Point {
  ModelSpec model;
  EngineFactory engine;  // finite-D engine, or the engine of the theory's initial state
  int64_t D = 0;
  std::vector<std::string> labels;  // one value per grid axis
};

// A CSV field, quoted when it holds a comma or a quote (vector values such as nu = 1,1).
std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"") == std::string::npos) return s;
  std::string q = "\"";
  for (char ch : s) q += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return q + "\"";
}

// Writes the INTERFACE.md values of `r` into the columns `index` (positions in the union of
// every point's columns); the other cells stay empty.
void union_row(const Record& r, bool learned, const std::vector<std::size_t>& index, std::vector<std::string>& cells) {
  std::vector<double> values;
  append_csv_values(r, learned, values);
  for (std::size_t k = 0; k < values.size(); ++k) cells[index[k]] = fmt::format("{}", values[k]);
}

int run_sweep(const SweepOptions& o, const std::vector<std::string>& argv, bool check_only) {
  // Everything, every grid value included, is checked before anything runs or is written.
  const bool theory = o.engine == "theory";
  if (!theory) {
    const auto names = sgd_engine_names();
    if (std::find(names.begin(), names.end(), o.engine) == names.end())
      throw UsageError(fmt::format("--engine: unknown engine '{}' (available: theory, {})", o.engine, fmt::join(names, ", ")));
  }
  const ModelSpec base_model = make_model(o.model);
  validate_run(o.run);
  if (!o.summary.empty()) check_output_path(o.summary, "--summary");
  if (!(std::isfinite(o.delta) && o.delta > 0)) throw UsageError(fmt::format("--delta: must be > 0, got {}", o.delta));
  if (theory && o.stop_when_specialised)
    throw UsageError("--stop-when-specialised: only for the finite-D engines (gram, dense)");
  SimulationSpec sim;
  sim.D = o.D;
  sim.T = o.run.T;
  sim.record_every = o.run.record_every;
  sim.test_samples = o.test_samples;
  sim.seed = static_cast<uint32_t>(o.run.seed);
  sim.runs = o.runs;
  sim.stop_when_specialised = o.stop_when_specialised ? o.delta : 0;
  sim.validate();

  IntegrationSpec integration;
  TheoryOptions mc;
  if (theory) {
    if (o.mc < 2 || o.mc > 0xFFFFFFFFLL) throw UsageError(fmt::format("--mc: must be in [2, 2^32), got {}", o.mc));
    integration.method = parse_integrator(o.integrator.empty() ? (o.mc_resample ? "euler" : "rk4") : o.integrator);
    integration.dt = o.dt;
    integration.T = o.run.T;
    integration.record_every = o.run.record_every;
    mc.samples = o.mc;
    mc.mode = o.mc_resample ? MonteCarloMode::Resample : MonteCarloMode::Fixed;
    integration.validate(mc.mode);
  }

  const auto axes = parse_grid(o.grid, !theory);
  std::vector<Point> points;
  for (const GridPoint& g : grid_points(axes, o.model, o.D)) {
    Point p;
    p.model = g.model.to_spec();
    p.D = g.D;
    for (std::size_t a = 0; a < axes.size(); ++a) p.labels.push_back(axes[a].values[g.index[a]]);
    points.push_back(std::move(p));
  }
  // The factories keep a reference to their model: made once `points` no longer moves.
  for (Point& p : points) {
    try {
      p.engine = theory ? initial_state_factory(o.init_engine, p.model, o.init_D)
                        : sgd_engine_factory(o.engine, p.model, p.D);
    } catch (const UsageError& e) {
      std::string where;
      for (std::size_t a = 0; a < axes.size(); ++a) where += (a ? ";" : "") + axes[a].key + "=" + p.labels[a];
      throw UsageError(fmt::format("--grid: at {}: {}", where.empty() ? "the only point" : where, e.what()));
    }
  }

  // The (point, run) tasks are counted in an int.
  if (static_cast<int64_t>(points.size()) * o.runs > std::numeric_limits<int>::max())
    throw UsageError(fmt::format("--runs: {} grid points × {} runs is more than 2^31 - 1 runs", points.size(), o.runs));
  if (check_only) return 0;

  // Every (point, run) pair is one task; run k of every point uses seed + k, so a task's
  // result depends neither on the thread that runs it nor on the grid's order.
  const int tasks = static_cast<int>(points.size()) * o.runs;
  std::vector<Trajectory> results(static_cast<std::size_t>(tasks));
  Progress progress("sweep", tasks);
  std::atomic<long long> done{0};
#pragma omp parallel for schedule(dynamic, 1) if (tasks > 1)
  for (int task = 0; task < tasks; ++task) {
    const Point& p = points[static_cast<std::size_t>(task / o.runs)];
    const int run = task % o.runs;
    if (theory) {
      results[task] = run_theory(p.model, p.engine, mc, integration, sim.seed, run).trajectory;
    } else {
      SimulationSpec point_sim = sim;
      point_sim.D = p.D;
      results[task] = run_sgd(p.engine, p.model, point_sim, run);
    }
    progress.update(fmt::format("{} of {} runs", done + 1, tasks), static_cast<double>(++done));
  }
  progress.finish();

  // Columns: the grid keys, then the union of every point's INTERFACE.md columns (they
  // differ when H, F or the readout vary); a point leaves the columns it lacks empty.
  int H = 1, F = 1;
  bool learned = false;
  for (const Point& p : points) {
    H = std::max(H, p.model.H);
    F = std::max(F, p.model.F());
    learned = learned || p.model.readout == Readout::Learned;
  }
  const auto columns = csv_columns(H, F, learned);  // run, t, loss, …
  std::map<std::string, std::size_t> position;
  for (std::size_t k = 2; k < columns.size(); ++k) position[columns[k]] = k - 2;
  std::vector<std::string> head;
  for (const auto& a : axes) head.push_back(a.key);

  std::vector<std::string> header = head;
  header.insert(header.end(), columns.begin(), columns.end());
  std::string csv = fmt::format("{}\n", fmt::join(header, ","));
  std::string summary = fmt::format("{}", fmt::join(header, ","));
  summary += ",diverged";
  for (int f = 1; f <= F; ++f) summary += fmt::format(",tau_{}", f);
  if (!theory)
    for (int f = 1; f <= F; ++f) summary += fmt::format(",tau_tilde_{}", f);
  summary += "\n";

  int status = 0;
  nlohmann::json diverged = nlohmann::json::array();
  for (int task = 0; task < tasks; ++task) {
    const Point& p = points[static_cast<std::size_t>(task / o.runs)];
    const int run = task % o.runs;
    const Trajectory& tr = results[task];
    const bool point_learned = p.model.readout == Readout::Learned;
    const auto own = csv_columns(p.model.H, p.model.F(), point_learned);
    std::vector<std::size_t> index;
    for (std::size_t k = 2; k < own.size(); ++k) index.push_back(position.at(own[k]));
    std::string prefix;
    for (const auto& l : p.labels) prefix += csv_field(l) + ",";
    std::vector<std::string> cells(columns.size() - 2);
    for (const Record& r : tr.records) {
      union_row(r, point_learned, index, cells);
      csv += fmt::format("{}{},{},{}\n", prefix, run, r.t, fmt::join(cells, ","));
    }
    if (tr.diverged) {
      status = 3;
      diverged.push_back({{"point", task / o.runs}, {"run", run}, {"t", tr.diverged_at}});
    }
    std::fill(cells.begin(), cells.end(), "");
    std::string t_final = "";
    if (!tr.records.empty()) {
      union_row(tr.records.back(), point_learned, index, cells);
      t_final = fmt::format("{}", tr.records.back().t);
    }
    summary += fmt::format("{}{},{},{},{}", prefix, run, t_final, fmt::join(cells, ","), tr.diverged ? 1 : 0);
    auto tau = specialisation_times(tr.records, o.delta);
    tau.resize(static_cast<std::size_t>(p.model.F()), std::nan(""));
    for (int f = 0; f < F; ++f) summary += f < p.model.F() ? fmt::format(",{}", tau[f]) : std::string(",");
    if (!theory)
      for (int f = 0; f < F; ++f)
        summary += f < p.model.F() ? fmt::format(",{}", tau[f] / std::log(static_cast<double>(p.D))) : std::string(",");
    summary += "\n";
  }

  nlohmann::json meta = provenance();
  meta["command"] = "sweep";
  meta["argv"] = argv;
  nlohmann::json jm;
  base_model.to_json(jm);
  meta["base_model"] = jm;
  nlohmann::json grid = nlohmann::json::array();
  for (const auto& a : axes) grid.push_back({{"key", a.key}, {"values", a.values}});
  meta["grid"] = grid;
  meta["grid_order"] = "row-major: the first key varies slowest";
  meta["points"] = points.size();
  meta["sweep"] = {{"engine", o.engine},       {"D", o.D},           {"T", sim.T},
                   {"record_every", sim.record_every}, {"seed", sim.seed}, {"runs", o.runs},
                   {"delta", o.delta},          {"stop_when_specialised", o.stop_when_specialised}};
  if (theory)
    meta["theory"] = {{"mc", o.mc}, {"mc_mode", o.mc_resample ? "resample" : "fixed"},
                      {"integrator", to_string(integration.method)}, {"dt", o.dt},
                      {"init_D", o.init_D}, {"init_engine", o.init_engine}};
  else
    meta["sweep"]["test_samples"] = o.test_samples;
  meta["diverged"] = diverged;
  if (!o.summary.empty()) write_file_atomic(o.summary, summary);
  write_output(o.run, csv, meta);
  for (const auto& d : diverged)
    std::cerr << fmt::format("headspec: point {} run {} diverged (NaN or overflow) at t = {}; the rows before it are "
                             "kept; try a smaller --lr\n",
                             d["point"].get<int>(), d["run"].get<int>(), d["t"].get<double>());
  return status;
}

}  // namespace

Command add_sweep_command(CLI::App& app) {
  auto opts = std::make_shared<SweepOptions>();
  CLI::App* sub = app.add_subcommand("sweep", "a grid over model flags × runs on any engine: tidy CSV and summary");
  add_model_options(sub, opts->model);
  add_run_options(sub, opts->run);
  sub->add_option("--grid", opts->grid,
                  "axes 'key=v1,v2;key=a:b;nu=1,1|5,5': model flag names without dashes (and D for gram, dense); "
                  "a:b an integer range, '|' separates vector values")
      ->required();
  sub->add_option("--engine", opts->engine, "theory | gram | dense")->capture_default_str();
  sub->add_option("--D", opts->D, "token dimension (gram, dense)")->capture_default_str();
  sub->add_option("--runs", opts->runs, "runs per grid point (run k uses seed + k)")->capture_default_str();
  sub->add_option("--test-samples", opts->test_samples, "fresh samples per error estimate (gram, dense)")
      ->capture_default_str();
  sub->add_option("--mc", opts->mc, "theory: Monte Carlo samples per evaluation")->capture_default_str();
  sub->add_flag("--mc-resample", opts->mc_resample, "theory: fresh samples at every step");
  sub->add_option("--integrator", opts->integrator, "theory: rk4 | dopri5 | euler | heun");
  sub->add_option("--dt", opts->dt, "theory: time step")->capture_default_str();
  sub->add_option("--init-D", opts->init_D, "theory: D of the initial state")->capture_default_str();
  sub->add_option("--init-engine", opts->init_engine, "theory: engine of the initial state (dense | gram)")
      ->capture_default_str();
  sub->add_option("--delta", opts->delta, "specialisation threshold δ (MODEL.md §10)")->capture_default_str();
  sub->add_flag("--stop-when-specialised", opts->stop_when_specialised,
                "gram, dense: stop a run once every direction of prior mean zero has specialised");
  sub->add_option("--summary", opts->summary,
                  "CSV of final values per (point, run) with tau_f (and tau_tilde_f = tau_f / ln D)");
  return {sub, [opts](const std::vector<std::string>& argv, bool check_only) { return run_sweep(*opts, argv, check_only); }};
}

}  // namespace headspec::app
