#include "headspec/sweep_plan.hpp"

#include <optional>

#include <fmt/format.h>
#include <omp.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <map>
#include <stdexcept>
#include <type_traits>

#include "headspec/command_settings.hpp"
#include "headspec/engines.hpp"
#include "headspec/checkpoint.hpp"
#include "headspec/errors.hpp"
#include "headspec/io.hpp"
#include "headspec/order_parameters.hpp"
#include "headspec/specialisation.hpp"
#include "headspec/theory_reference.hpp"
#include "headspec/theory_runs.hpp"

namespace headspec {

static_assert(std::is_copy_constructible_v<SweepPlan> && std::is_move_constructible_v<SweepPlan>,
              "a plan is a value: its engine factories own their models");
namespace {

// A CSV field, quoted when it holds a comma or a quote (vector values such as nu = 1,1).
std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"") == std::string::npos) return s;
  std::string q = "\"";
  for (char ch : s) q += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return q + "\"";
}

// A model in a task key. A mixture read from a file: its atoms, not the file's name, decide
// the result.
nlohmann::json model_key(const ModelSpec& spec) {
  nlohmann::json model;
  spec.to_json(model);
  const Eigen::MatrixXd& atoms = spec.prior.atoms();
  const Eigen::VectorXd& weights = spec.prior.weights();
  nlohmann::json rows = nlohmann::json::array();
  for (Eigen::Index a = 0; a < atoms.rows(); ++a) {
    std::vector<double> row(static_cast<std::size_t>(atoms.cols()));
    for (Eigen::Index f = 0; f < atoms.cols(); ++f) row[static_cast<std::size_t>(f)] = atoms(a, f);
    rows.push_back(row);
  }
  model["atoms"] = rows;
  model["weights"] = std::vector<double>(weights.data(), weights.data() + weights.size());
  return model;
}

std::string cell(const std::optional<double>& v) { return v ? fmt::format("{}", *v) : std::string(); }

}  // namespace

SweepPlan::SweepPlan(const SweepSettings& o) : settings_(o) {
  sde_ = o.engine == "sde";
  theory_ = o.engine == "theory" || sde_;
  check_engine();
  base_model_ = o.model.to_spec();
  check_horizon(o.T, o.record_every);
  const uint32_t seed = checked_seed(o.seed);
  check_delta(o.delta);
  check_theory_only_flags();
  plan_runs(seed);
  if (theory_) plan_theory(seed);
  make_points();
  make_engine_factories();
  if (points_.size() * static_cast<std::size_t>(o.runs) > static_cast<std::size_t>(INT32_MAX))
    throw ParameterError("runs", "more than 2^31 runs in all");
  tasks_ = static_cast<int>(points_.size()) * o.runs;
}

// --engine: theory, sde or one of the SGD engines.
void SweepPlan::check_engine() const {
  const auto names = sgd_engine_names();
  if (!theory_ && std::find(names.begin(), names.end(), settings_.engine) == names.end())
    throw ParameterError("engine", fmt::format("unknown engine '{}' (available: theory, sde, {})", settings_.engine,
                                               fmt::join(names, ", ")));
}

// The theory's flags only with a theory engine.
void SweepPlan::check_theory_only_flags() const {
  const SweepSettings& o = settings_;
  if (theory_) return;
  if (o.until_converged != 0) throw ParameterError("until-converged", "only for --engine theory");
  if (o.mc_method != SweepSettings{}.mc_method) throw ParameterError("mc-method", "only for --engine theory");
  if (o.mc_seed != -1) throw ParameterError("mc-seed", "only for --engine theory");
  if (o.flow) throw ParameterError("flow", "only for --engine theory");
  if (o.keep_R) throw ParameterError("keep-R", "only for --engine theory or sde");
  if (o.sde_mc != 0) throw ParameterError("sde-mc", "only for --engine sde");
  if (o.sde_reference_mc != 0) throw ParameterError("sde-reference-mc", "only for --engine sde");
  if (o.until_error_settled != 0) throw ParameterError("until-error-settled", "only for --engine theory");
}

// The runs' horizon, records, seeds and stop rule, as simulate's.
void SweepPlan::plan_runs(uint32_t seed) {
  const SweepSettings& o = settings_;
  sim_.D = o.D;
  sim_.T = o.T;
  sim_.record_every = o.record_every;
  sim_.test_samples = o.test_samples;
  sim_.seed = seed;
  sim_.runs = o.runs;
  sim_.stop_when_specialised = o.stop_when_specialised ? o.delta : 0;
  sim_.validate();
}

// The theory's configuration, as theory's (sde: checked here at the base D; each point runs at
// its own, run_task).
void SweepPlan::plan_theory(uint32_t seed) {
  const SweepSettings& o = settings_;
  theory_config_.emplace(o, TheoryHorizon{o.T, o.record_every, o.delta, o.stop_when_specialised}, seed,
                         sde_ ? static_cast<double>(o.D) : 0.0);
}

// A file a grid point reads, once (a grid of 10^4 points over one mixture file names it once).
void SweepPlan::add_grid_input(const std::string& path) {
  const auto same = [&](const NamedFile& f) { return f.path == path; };
  if (std::none_of(grid_input_files_.begin(), grid_input_files_.end(), same)) grid_input_files_.push_back({"--grid", path});
}

// One point per grid combination, its model checked.
void SweepPlan::make_points() {
  const SweepSettings& o = settings_;
  axes_ = parse_grid(o.grid, !theory_ || sde_);
  for (const GridPoint& g : grid_points(axes_, o.model, o.D)) {
    SweepPoint p;
    p.model = g.model.to_spec();
    if (theory_) theory_config().check_model(p.model);
    for (const NamedFile& f : g.model.input_files()) add_grid_input(f.path);
    p.D = g.D;
    for (std::size_t a = 0; a < axes_.size(); ++a) p.labels.push_back(axes_[a].values[g.index[a]]);
    points_.push_back(std::move(p));
  }
}

// Each point's engine factory (or the theory's initial state); a point whose flags an engine
// refuses is named by its grid values. The factories keep a reference to their model: made
// once `points_` no longer moves.
void SweepPlan::make_engine_factories() {
  const SweepSettings& o = settings_;
  for (SweepPoint& p : points_) {
    try {
      if (sde_)  // the stochastic theory starts from a draw at its own D
        p.engine = sgd_engine_factory(o.init_engine, p.model, p.D, EngineParameterNames{"init-engine", "D"});
      else
        p.engine = theory_ ? initial_state_factory(o.init_engine, p.model, o.init_D)
                           : sgd_engine_factory(o.engine, p.model, p.D);
    } catch (const UsageError& e) {
      std::string where;
      for (std::size_t a = 0; a < axes_.size(); ++a) where += (a ? ";" : "") + axes_[a].key + "=" + p.labels[a];
      throw ParameterError("grid", fmt::format("at {}: {}", where.empty() ? "the only point" : where, e.what()));
    }
  }
}

bool SweepPlan::stop_rule() const {
  return theory_ && (settings_.until_converged > 0 || settings_.until_error_settled > 0);
}

Trajectory SweepPlan::run_task(int task, const std::atomic<bool>* stop) const {
  const SweepPoint& p = point_of(task);
  const int run = task % settings_.runs;
  // A stop request reaches the driver as an interrupt without a save function.
  // The slots only when asked (no allocation per task otherwise).
  Checkpointing interrupt;
  interrupt.interrupt = stop;
  std::optional<RunSlots> slots;
  if (stop) slots.emplace(&interrupt, "sweep", settings_.runs);
  RunSlots* slots_used = slots ? &*slots : nullptr;
  const Checkpointing* checkpointing = stop ? &interrupt : nullptr;
  if (theory_) {
    const TheoryConfig& config = theory_config();
    IntegrationSpec integration = config.integration();
    if (sde_) integration.finite_D = static_cast<double>(p.D);
    if (integration.reference_samples > 0) integration.reference = reference_path(p);
    return run_theory(p.model, p.engine, config.expectations(), integration, sim_.seed, run, config.samples_seed(), {},
                      slots_used, checkpointing)
        .trajectory;
  }
  SimulationSpec point_sim = sim_;
  point_sim.D = p.D;
  return run_sgd(p.engine, p.model, point_sim, run, {}, slots_used, checkpointing);
}

SamplingMethod SweepPlan::sampling_method(const SweepPoint& p) const {
  return theory_config().expectations_for(p.model).method;
}

std::shared_ptr<const ReferencePath> SweepPlan::reference_path(const SweepPoint& p) const {
  nlohmann::json model;
  p.model.to_json(model);
  const std::string key = model.dump();
  const std::lock_guard<std::mutex> lock(references_->mutex);  // the other tasks wait for the one path
  for (const auto& [k, path] : references_->paths)
    if (k == key) return path;
  TheoryOptions mc = theory_config().expectations();
  mc.seed = theory_config().samples_seed().value_or(sim_.seed);
  // Made inside one task of the tasks' parallel loop, where nested regions would run on one
  // thread: one more active level lets its evaluations use the threads (the other tasks wait
  // here anyway). The numbers do not depend on it.
  const int levels = omp_get_max_active_levels();
  omp_set_max_active_levels(std::max(levels, omp_get_active_level() + 1));
  references_->paths.emplace_back(key, make_reference_path(p.model, mc, integration()));
  omp_set_max_active_levels(levels);
  return references_->paths.back().second;
}

std::string SweepPlan::task_key(int task) const {
  const SweepPoint& p = point_of(task);
  nlohmann::json key = provenance();
  key["model"] = model_key(p.model);
  key["engine"] = settings_.engine;
  key["T"] = sim_.T;
  key["record_every"] = sim_.record_every;
  key["seed"] = sim_.seed;
  key["run"] = task % settings_.runs;
  if (theory_) {
    key["theory"] = theory_key();
    if (sde_) key["D"] = p.D;
  } else {
    key["D"] = p.D;
    key["test_samples"] = sim_.test_samples;
    key["stop_when_specialised"] = sim_.stop_when_specialised;
  }
  return key.dump();
}

// The theory's settings in a task key; each optional one only when set, so that the work
// folders of sweeps made before it existed stay valid.
nlohmann::json SweepPlan::theory_key() const {
  const SweepSettings& o = settings_;
  const TheoryOptions& mc = theory_config().expectations();
  nlohmann::json key = {{"mc", mc.samples}, {"mc_mode", o.mc_resample ? "resample" : "fixed"},
                        {"integrator", to_string(integration().method)}, {"dt", integration().dt},
                        {"init_D", o.init_D}, {"init_engine", o.init_engine}};
  if (o.until_converged > 0) key["until_converged"] = o.until_converged;
  if (mc.method != SamplingMethod::Plain) key["mc_method"] = to_string(mc.method);
  if (theory_config().samples_seed()) key["mc_seed"] = *theory_config().samples_seed();
  if (o.until_error_settled > 0) key["until_error_settled"] = {o.until_error_settled, o.error_window};
  if (o.stop_when_specialised) key["stop_when_specialised"] = o.delta;
  if (o.flow) key["flow"] = true;
  if (o.keep_R) key["keep_R"] = true;
  if (o.sde_mc != 0) key["sde_mc"] = o.sde_mc;
  if (o.sde_reference_mc != 0) key["sde_reference_mc"] = o.sde_reference_mc;
  return key;
}

void FirstTaskError::set(const std::string& what) {
  std::lock_guard lock(mutex_);
  if (what_.empty()) what_ = what.empty() ? "unknown error" : what;
  failed_ = true;
}

void FirstTaskError::throw_if_set() const {
  if (failed_) throw std::runtime_error(what_);
}

void run_tasks_locally(const std::vector<int>& todo, const SweepRunTask& run, const SweepTaskDone& done) {
  FirstTaskError error;
  const int n = static_cast<int>(todo.size());
#pragma omp parallel for schedule(dynamic, 1) if (n > 1)
  for (int i = 0; i < n; ++i) {
    if (error.failed()) continue;
    try {
      done(todo[i], run(todo[i]), 0);
    } catch (const std::exception& e) {
      error.set(e.what());
    }
  }
  error.throw_if_set();
}

SweepTasks sweep_tasks(const SweepPlan& plan, const SweepWorkDir* work) {
  SweepTasks t;
  t.results.resize(static_cast<std::size_t>(plan.tasks()));
  for (int task = 0; task < plan.tasks(); ++task) {
    if (work) {
      t.keys.push_back(plan.task_key(task));
      std::string problem;
      if (auto stored = work->load(t.keys.back(), &problem)) {
        t.results[static_cast<std::size_t>(task)] = std::move(*stored);
        continue;
      }
      if (!problem.empty()) t.problems.push_back(problem);
    }
    t.todo.push_back(task);
  }
  return t;
}

std::vector<Trajectory> run_sweep(const SweepPlan& plan, const std::atomic<bool>* stop,
                                  const std::function<void()>& task_done) {
  SweepTasks t = sweep_tasks(plan, nullptr);
  run_tasks_locally(
      t.todo,
      [&](int task) {
        if (stop && stop->load()) {
          Trajectory skipped;
          skipped.interrupted = true;
          return skipped;
        }
        return plan.run_task(task, stop);
      },
      [&](int task, Trajectory&& result, int) {
        t.results[static_cast<std::size_t>(task)] = std::move(result);
        if (task_done) task_done();
      });
  return std::move(t.results);
}

namespace {

// The union of every point's docs/cli.md columns (run, t, loss, …; they differ when H, F or
// the readout vary) and the largest F of the grid.
std::vector<std::string> union_columns(const SweepPlan& plan, int& F) {
  int H = 1;
  bool learned = false;
  F = 1;
  for (const SweepPoint& p : plan.points()) {
    H = std::max(H, p.model.H);
    F = std::max(F, p.model.F());
    learned = learned || p.model.readout == Readout::Learned;
  }
  return csv_columns(H, F, learned);
}

// Where each value column of the union stands among the value columns (after run, t).
std::map<std::string, std::size_t> value_positions(const std::vector<std::string>& columns) {
  std::map<std::string, std::size_t> position;
  for (std::size_t k = 2; k < columns.size(); ++k) position[columns[k]] = k - 2;
  return position;
}

// A task's records in the union's value columns; a point leaves the columns it lacks empty.
class UnionRows {
 public:
  UnionRows(const std::map<std::string, std::size_t>& position, const SweepPoint& p)
      : width_(position.size()), learned_(p.model.readout == Readout::Learned) {
    const auto own = csv_columns(p.model.H, p.model.F(), learned_);
    for (std::size_t k = 2; k < own.size(); ++k) index_.push_back(position.at(own[k]));
  }

  std::vector<std::optional<double>> operator()(const Record& r) {
    values_.clear();
    append_csv_values(r, learned_, values_);
    std::vector<std::optional<double>> cells(width_);
    for (std::size_t k = 0; k < values_.size(); ++k) cells[index_[k]] = values_[k];
    return cells;
  }

 private:
  std::size_t width_;
  bool learned_;
  std::vector<std::size_t> index_;
  std::vector<double> values_;
};

// Task `task`'s summary row: its last record, how it ended, its specialisation times.
SweepTable::Summary summary_of(const SweepPlan& plan, const SweepTable& table, int task, const Trajectory& tr,
                               UnionRows& union_row) {
  const SweepPoint& p = plan.point_of(task);
  SweepTable::Summary s;
  s.point = task / plan.settings().runs;
  s.run = task % plan.settings().runs;
  s.values.resize(table.value_columns.size());
  if (!tr.records.empty()) {
    s.values = union_row(tr.records.back());
    s.t = tr.records.back().t;
  }
  s.diverged = tr.diverged;
  s.diverged_at = tr.diverged_at;
  if (table.stop_rule) s.converged = stopped_by_rule(tr, plan.integration(), &s.converged_at);
  auto tau = specialisation_times(tr.records, plan.settings().delta);
  tau.resize(static_cast<std::size_t>(p.model.F()), std::nan(""));
  s.tau.resize(static_cast<std::size_t>(table.F));
  for (int f = 0; f < p.model.F(); ++f) s.tau[f] = tau[f];
  if (table.tau_tilde) {
    s.tau_tilde.resize(static_cast<std::size_t>(table.F));
    for (int f = 0; f < p.model.F(); ++f) s.tau_tilde[f] = tau[f] / std::log(static_cast<double>(p.D));
  }
  return s;
}

}  // namespace

SweepTable sweep_table(const SweepPlan& plan, const std::vector<Trajectory>& results) {
  SweepTable table;
  const auto columns = union_columns(plan, table.F);
  for (const auto& a : plan.axes()) table.grid_columns.push_back(a.key);
  table.value_columns.assign(columns.begin() + 2, columns.end());
  table.stop_rule = plan.stop_rule();
  table.tau_tilde = !plan.theory() || plan.sde();
  const auto position = value_positions(columns);
  const int runs = plan.settings().runs;
  for (int task = 0; task < plan.tasks(); ++task) {
    const Trajectory& tr = results[static_cast<std::size_t>(task)];
    UnionRows union_row(position, plan.point_of(task));
    for (const Record& r : tr.records) table.rows.push_back({task / runs, task % runs, r.t, union_row(r)});
    table.summary.push_back(summary_of(plan, table, task, tr, union_row));
  }
  return table;
}

namespace {

std::vector<std::string> header_of(const SweepTable& table) {
  std::vector<std::string> header = table.grid_columns;
  header.push_back("run");
  header.push_back("t");
  header.insert(header.end(), table.value_columns.begin(), table.value_columns.end());
  return header;
}

std::string prefix_of(const SweepPlan& plan, int point) {
  std::string prefix;
  for (const auto& l : plan.points()[static_cast<std::size_t>(point)].labels) prefix += csv_field(l) + ",";
  return prefix;
}

std::string cells_of(const std::vector<std::optional<double>>& values) {
  std::string out;
  for (std::size_t k = 0; k < values.size(); ++k) {
    if (k) out += ',';
    out += cell(values[k]);
  }
  return out;
}

}  // namespace

std::string sweep_csv(const SweepPlan& plan, const SweepTable& table) {
  std::string csv = fmt::format("{}\n", fmt::join(header_of(table), ","));
  int point = -1;
  std::string prefix;
  for (const auto& r : table.rows) {
    if (r.point != point) prefix = prefix_of(plan, point = r.point);
    csv += fmt::format("{}{},{},{}\n", prefix, r.run, r.t, cells_of(r.values));
  }
  return csv;
}

std::string sweep_summary_csv(const SweepPlan& plan, const SweepTable& table) {
  std::string summary = fmt::format("{}", fmt::join(header_of(table), ","));
  summary += ",diverged";
  // A theory run with a stop rule: whether it stopped before T (stopped_by_rule), and when.
  if (table.stop_rule) summary += ",converged,converged_at";
  for (int f = 1; f <= table.F; ++f) summary += fmt::format(",tau_{}", f);
  if (table.tau_tilde)
    for (int f = 1; f <= table.F; ++f) summary += fmt::format(",tau_tilde_{}", f);
  summary += "\n";
  for (const auto& s : table.summary) {
    summary += fmt::format("{}{},{},{},{}", prefix_of(plan, s.point), s.run, cell(s.t), cells_of(s.values),
                           s.diverged ? 1 : 0);
    if (table.stop_rule) summary += s.converged ? fmt::format(",1,{}", s.converged_at) : std::string(",0,");
    for (const auto& v : s.tau) (summary += ',') += cell(v);
    for (const auto& v : s.tau_tilde) (summary += ',') += cell(v);
    summary += "\n";
  }
  return summary;
}

nlohmann::json sweep_sidecar(const SweepPlan& plan, const SweepTable& table, const std::vector<std::string>& argv) {
  const SweepSettings& o = plan.settings();
  nlohmann::json meta = provenance();
  meta["command"] = "sweep";
  meta["argv"] = argv;
  nlohmann::json jm;
  plan.base_model().to_json(jm);
  meta["base_model"] = jm;
  nlohmann::json grid = nlohmann::json::array();
  for (const auto& a : plan.axes()) grid.push_back({{"key", a.key}, {"values", a.values}});
  meta["grid"] = grid;
  meta["grid_order"] = "row-major: the first key varies slowest";
  meta["points"] = plan.points().size();
  // The parameters from the table (docs/cli.md "Parameters"): the sweep's, and the theory's
  // only for the theory.
  SweepCommandSettings flags;
  static_cast<SweepSettings&>(flags) = o;
  nlohmann::json params = sidecar_parameters(sweep_parameters(), flags);
  meta["sweep"] = params["sweep"];
  if (plan.theory()) {
    meta["sweep"].erase("test_samples");
    meta["theory"] = params["theory"];
    meta["theory"].update(plan.theory_config().identity());  // as theory's and Python's
    // What the model decides, per point in the grid's order (docs/model.md §6).
    nlohmann::json samples = nlohmann::json::array(), methods = nlohmann::json::array();
    for (const SweepPoint& p : plan.points()) {
      samples.push_back(plan.theory_config().samples_used(p.model));
      methods.push_back(to_string(plan.sampling_method(p)));
    }
    meta["theory"]["mc_samples_used"] = samples;
    if (o.mc_method == "auto") meta["theory"]["mc_method_used"] = methods;
  }
  nlohmann::json diverged = nlohmann::json::array();
  for (const auto& s : table.summary)
    if (s.diverged) diverged.push_back({{"point", s.point}, {"run", s.run}, {"t", s.diverged_at}});
  meta["diverged"] = diverged;
  return meta;
}

}  // namespace headspec
