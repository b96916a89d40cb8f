// The compiled part of the Python module: bindings only. Every function takes the keywords
// of its subcommand's parameter table (the CLI's flags with '_' for '-', the same defaults;
// docs/cli.md "Parameters"), checked and run by the library; a ParameterError becomes
// ValueError (headspec.UsageError) naming the keyword.
#include <fmt/format.h>
#include <pybind11/complex.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <signal.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <complex>
#include <exception>
#include <functional>
#include <limits>
#include <mutex>
#include <optional>
#include <nlohmann/json.hpp>

#include "headspec/allocation.hpp"
#include "headspec/bayes.hpp"
#include "headspec/checkpoint.hpp"
#include "headspec/command_budgets.hpp"
#include "headspec/command_settings.hpp"
#include "headspec/eigen_blocking.hpp"
#include "headspec/engines.hpp"
#include "headspec/errors.hpp"
#include "headspec/linearise_study.hpp"
#include "headspec/mnist_data.hpp"
#include "headspec/mnist_engine.hpp"
#include "headspec/parameters.hpp"
#include "headspec/sweep_plan.hpp"
#include "headspec/theory_runs.hpp"
#include "headspec/thread_limit.hpp"
#include "headspec/version.hpp"

namespace py = pybind11;
using namespace headspec;

namespace {

// ---- keywords from the parameter table ----

std::string type_name(const FieldRef& field, unsigned flags) {
  if (flags & kNumbersText) return "numbers";
  return std::visit(
      [](auto* v) -> std::string {
        using T = std::remove_cvref_t<decltype(*v)>;
        if constexpr (std::is_same_v<T, bool>) return "flag";
        else if constexpr (std::is_same_v<T, std::string>) return "text";
        else if constexpr (std::is_same_v<T, double>) return "float";
        else if constexpr (std::is_same_v<T, std::vector<double>>) return "float list";
        else return "int";
      },
      field);
}

// A number: int, float, a NumPy scalar or 0-d array, anything else with __float__ that is not a
// sequence (a NumPy array of several numbers has __float__ too, and is a list of numbers).
bool is_number(py::handle v) {
  if (py::isinstance<py::bool_>(v)) return false;
  if (py::isinstance<py::int_>(v) || py::isinstance<py::float_>(v)) return true;
  if (py::hasattr(v, "ndim")) return v.attr("ndim").cast<int>() == 0;
  return py::hasattr(v, "__float__") && !py::hasattr(v, "__len__");
}

// "2,2" as the command line writes it, from text, a number or a sequence of numbers.
std::string numbers_text(py::handle v) {
  if (py::isinstance<py::str>(v)) return v.cast<std::string>();
  if (is_number(v)) return fmt::format("{}", v.cast<double>());
  return fmt::format("{}", fmt::join(v.cast<std::vector<double>>(), ","));
}

std::string text(py::handle v) {
  if (py::isinstance<py::str>(v)) return v.cast<std::string>();
  return py::module_::import("os").attr("fspath")(v).cast<std::string>();  // a path
}

// A text keyword as its flag takes it (app/options.hpp: non_empty_text): '' is refused, not
// taken as absent (but for the grid of one point), and a NUL, which no argument can hold, too.
std::string checked_text(std::string s, const std::string& name) {
  if (s.empty() && name != "grid") throw ParameterError(name, "an empty value (leave the keyword out for its default)");
  if (s.find('\0') != std::string::npos) throw ParameterError(name, "holds a NUL character, which no file name or flag value can");
  return s;
}

// True and False are ints in Python, never a count or a size here (docs/cli.md "Numbers").
bool is_boolean(py::handle v) {
  return py::isinstance<py::bool_>(v) || py::str(py::type::of(v)).cast<std::string>() == "<class 'numpy.bool_'>";
}

// An int, a NumPy integer, or a float whose value is a whole number (D=1e4); the range is
// checked with the value as given.
template <class T>
T integer(py::handle v, const std::string& name) {
  if (is_boolean(v) || py::isinstance<py::str>(v)) throw py::cast_error();
  if (!py::hasattr(v, "__index__")) {
    const double x = v.cast<double>();
    if (!std::isfinite(x) || x != std::floor(x)) throw ParameterError(name, fmt::format("{} is not an integer", py::repr(v).cast<std::string>()));
    if (!(x >= static_cast<double>(std::numeric_limits<T>::min()) && x <= static_cast<double>(std::numeric_limits<T>::max())))
      throw ParameterError(name, fmt::format("{} is out of range", py::repr(v).cast<std::string>()));
    return static_cast<T>(x);
  }
  const py::int_ big = py::reinterpret_steal<py::int_>(PyNumber_Index(v.ptr()));
  if (!big) throw py::error_already_set();
  int overflow = 0;
  const long long x = PyLong_AsLongLongAndOverflow(big.ptr(), &overflow);
  if (overflow != 0 || x < std::numeric_limits<T>::min() || x > std::numeric_limits<T>::max())
    throw ParameterError(name, fmt::format("{} is out of range: must be in [{}, {}]", py::repr(v).cast<std::string>(),
                                           std::numeric_limits<T>::min(), std::numeric_limits<T>::max()));
  return static_cast<T>(x);
}

double real(py::handle v) {
  if (is_boolean(v) || py::isinstance<py::str>(v)) throw py::cast_error();
  return v.cast<double>();
}

bool flag_value(py::handle v) {
  if (!is_boolean(v)) throw py::cast_error();  // not 0/1, not "yes"
  return v.cast<bool>();
}

void set_from_python(const FieldRef& field, const std::string& name, unsigned flags, py::handle v) {
  try {
    std::visit(
        [&](auto* f) {
          using T = std::remove_cvref_t<decltype(*f)>;
          if constexpr (std::is_same_v<T, bool>) *f = flag_value(v);
          else if constexpr (std::is_same_v<T, int> || std::is_same_v<T, int64_t>) *f = integer<T>(v, name);
          else if constexpr (std::is_same_v<T, double>) *f = real(v);
          else if constexpr (std::is_same_v<T, std::string>) *f = checked_text((flags & kNumbersText) ? numbers_text(v) : text(v), name);
          else *f = is_number(v) ? std::vector<double>{v.cast<double>()} : v.cast<std::vector<double>>();
        },
        field);
  } catch (const py::cast_error&) {
    throw ParameterError(name, fmt::format("expected {}, got {}", type_name(field, flags), py::repr(v).cast<std::string>()));
  } catch (const py::error_already_set&) {
    throw ParameterError(name, fmt::format("expected {}, got {}", type_name(field, flags), py::repr(v).cast<std::string>()));
  }
}

// The settings of `command` from its keywords (None: the default); unknown keywords and
// the CLI-only flags are TypeErrors, as for any Python function.
template <class S>
S settings_from(const ParameterTable<S>& table, const py::kwargs& kwargs, const char* command) {
  S s;
  std::vector<std::string> given;
  for (auto item : kwargs) {
    const auto key = item.first.cast<std::string>();
    const Parameter<S>* p = nullptr;
    for (const auto& q : table)
      if (!q.cli_only() && keyword_of(q.name) == key) p = &q;
    if (p == nullptr) throw py::type_error(fmt::format("{}() got an unexpected keyword argument '{}'", command, key));
    given.push_back(key);
    if (!item.second.is_none()) set_from_python(p->field(s), p->name, p->flags, item.second);
  }
  for (const auto& p : table)
    if ((p.flags & kRequired) && std::find(given.begin(), given.end(), keyword_of(p.name)) == given.end())
      throw py::type_error(fmt::format("{}() missing required keyword argument '{}'", command, keyword_of(p.name)));
  return s;
}

// The table as Python sees it: one dict per flag (keyword, name, type, default, help,
// required, cli_only); an empty text default is None.
template <class S>
py::list describe(const ParameterTable<S>& table) {
  S s;
  py::list out;
  for (const auto& p : table) {
    py::dict d;
    d["name"] = p.name;
    d["keyword"] = keyword_of(p.name);
    d["type"] = type_name(p.field(s), p.flags);
    d["help"] = p.help;
    d["required"] = (p.flags & kRequired) != 0;
    d["cli_only"] = p.cli_only();
    d["default"] = std::visit(
        [](auto* v) -> py::object {
          using T = std::remove_cvref_t<decltype(*v)>;
          if constexpr (std::is_same_v<T, std::string>)
            if (v->empty()) return py::none();
          return py::cast(*v);
        },
        p.field(s));
    out.append(d);
  }
  return out;
}

py::object from_json(const nlohmann::json& j) { return py::module_::import("json").attr("loads")(j.dump()); }

// The rows of the command's CSV as numbers (format_csv: the same columns, the same values):
// {"columns": names, "values": rows × columns}; python/headspec/results.py labels them.
py::dict rows_table(const std::vector<const Record*>& rows, int H, int F, bool with_readout, CsvErrors kind,
                    const std::vector<const std::vector<double>*>& errors = {}) {
  const std::vector<std::string> columns = csv_columns(H, F, with_readout, kind);
  const auto n = static_cast<py::ssize_t>(rows.size()), width = static_cast<py::ssize_t>(columns.size());
  py::array_t<double> values({n, width});
  auto v = values.mutable_unchecked<2>();
  std::vector<double> row;
  for (py::ssize_t i = 0; i < n; ++i) {
    const Record& r = *rows[i];
    row.assign({static_cast<double>(r.run), r.t});
    append_csv_values(r, with_readout, row);
    if (kind == CsvErrors::loss) row.push_back(r.loss_se);
    if (kind == CsvErrors::all) row.insert(row.end(), errors[i]->begin(), errors[i]->end());
    for (py::ssize_t k = 0; k < width; ++k) v(i, k) = row[static_cast<std::size_t>(k)];
  }
  return py::dict(py::arg("columns") = columns, py::arg("values") = values);
}

py::dict model_dict(const ModelSpec& m) {
  nlohmann::json j;
  m.to_json(j);
  return py::module_::import("json").attr("loads")(j.dump());
}

// ---- the subcommands ----

// The rows of every run as rows_table, the number of runs and the runs that diverged, (run, t).
py::dict trajectory_table(const std::vector<const Trajectory*>& runs, const ModelSpec& model, int F, CsvErrors kind,
                          const std::vector<const std::vector<double>*>& errors = {}) {
  std::vector<const Record*> rows;
  py::list diverged;
  for (std::size_t k = 0; k < runs.size(); ++k) {
    for (const auto& r : runs[k]->records) rows.push_back(&r);
    if (runs[k]->diverged) diverged.append(py::make_tuple(k, runs[k]->diverged_at));
  }
  py::dict out = rows_table(rows, model.H, F, model.readout == Readout::Learned, kind, errors);
  out["runs"] = runs.size();
  out["diverged"] = diverged;
  return out;
}

// Ctrl-C in a long call (README "Python"). While the C++ drivers run without
// the GIL, Python's own SIGINT handler only notes the signal for the main thread's next
// bytecode, which would come after the whole run. So for the call's duration SIGINT also
// sets a flag that the drivers poll between steps (Checkpointing::interrupt, no save
// function): they stop within one step, the call returns, and PyErr_CheckSignals raises
// KeyboardInterrupt as for any Python code. Only in the main thread, where Python handles
// signals; elsewhere the scope does nothing.
std::atomic<bool> g_python_interrupt{false};
struct sigaction g_python_sigint {};

extern "C" void on_python_sigint(int sig) {
  g_python_interrupt.store(true);
  if (g_python_sigint.sa_handler == SIG_DFL) {  // the process was meant to die of it
    ::signal(sig, SIG_DFL);
    ::raise(sig);
    return;
  }
  g_python_sigint.sa_handler(sig);  // Python's handler: it only trips Python's flags
}

// The other signals with a Python handler (signal.signal(SIGALRM, f), …): Python's C handler
// only notes them too, so for the call's duration they also set g_python_signal_pending, and
// the call's progress hook (PythonProgress::step, at every record) runs the handlers from the
// main thread: a handler that raises (a timeout) stops the call with the records so far as
// the exception's `partial`; one that returns lets it go on.
std::atomic<bool> g_python_signal_pending{false};
std::array<struct sigaction, NSIG> g_python_handlers{};
unsigned long g_main_thread = 0;

extern "C" void on_python_signal(int sig) {
  g_python_signal_pending.store(true);
  g_python_handlers[static_cast<std::size_t>(sig)].sa_handler(sig);  // Python's: trips its flags
}

class InterruptScope {
 public:
  InterruptScope() : active_(PyThread_get_thread_ident() == main_thread_ident()) {
    if (!active_) return;
    g_python_interrupt.store(false);
    g_python_signal_pending.store(false);
    g_main_thread = PyThread_get_thread_ident();
    struct sigaction current {};
    sigaction(SIGINT, nullptr, &current);
    if (current.sa_handler == SIG_IGN || (current.sa_flags & SA_SIGINFO) != 0) {  // ignored, or not Python's
      active_ = false;
      return;
    }
    hook_python_handlers(current.sa_handler);
    struct sigaction sa {};
    sa.sa_handler = on_python_sigint;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &g_python_sigint);
    c_.interrupt = &g_python_interrupt;
  }
  InterruptScope(const InterruptScope&) = delete;
  InterruptScope& operator=(const InterruptScope&) = delete;
  ~InterruptScope() {
    if (!active_) return;
    sigaction(SIGINT, &g_python_sigint, nullptr);
    for (int sig : hooked_) sigaction(sig, &g_python_handlers[static_cast<std::size_t>(sig)], nullptr);
  }
  /// What the drivers take: stop at the next step on SIGINT (null outside the main thread).
  const Checkpointing* driver() const { return active_ ? &c_ : nullptr; }
  const std::atomic<bool>* flag() const { return active_ ? &g_python_interrupt : nullptr; }
  /// With the GIL, after the drivers returned: raises KeyboardInterrupt (or whatever the
  /// Python handler of SIGINT raises) if a SIGINT came.
  void raise_if_interrupted() const {
    if (auto stopped = take_interrupt()) throw *stopped;
  }
  /// The same exception, taken (not raised) right after the drivers returned, so that the
  /// Python code that builds the result does not trip over the pending signal; raise it with
  /// raise_with_partial.
  std::optional<py::error_already_set> take_interrupt() const {
    if (active_ && g_python_interrupt.load() && PyErr_CheckSignals() != 0) return py::error_already_set();
    return std::nullopt;
  }
  /// Raises `stopped` (if any) with `partial`, what the call computed until then, as its
  /// attribute of that name.
  static void raise_with_partial(const std::optional<py::error_already_set>& stopped, const py::object& partial) {
    if (!stopped) return;
    if (py::hasattr(stopped->value(), "__dict__")) py::setattr(stopped->value(), "partial", partial);
    throw *stopped;
  }

 private:
  static unsigned long main_thread_ident() {
    return py::module_::import("threading").attr("main_thread")().attr("ident").cast<unsigned long>();
  }
  // Every signal but SIGINT whose handler is Python's C handler (the one SIGINT has: Python
  // installs the same function for every signal given a Python handler) also notes itself
  // in g_python_signal_pending.
  void hook_python_handlers(void (*python_handler)(int)) {
    for (int sig = 1; sig < NSIG; ++sig) {
      if (sig == SIGINT || sig == SIGKILL || sig == SIGSTOP) continue;
      struct sigaction current {};
      if (sigaction(sig, nullptr, &current) != 0) continue;
      if ((current.sa_flags & SA_SIGINFO) != 0 || current.sa_handler != python_handler) continue;
      struct sigaction sa = current;
      sa.sa_handler = on_python_signal;
      g_python_handlers[static_cast<std::size_t>(sig)] = current;
      if (sigaction(sig, &sa, nullptr) == 0) hooked_.push_back(sig);
    }
  }
  bool active_;
  Checkpointing c_;
  std::vector<int> hooked_;
};

// progress= (README "Python"): callback(done, total) with the GIL, from whichever thread
// finished a record (a task, for sweep), at most every 100 ms, and once more at the end of
// the call. An exception it raises stops the call as Ctrl-C does, and the call raises it.
class PythonProgress {
 public:
  PythonProgress(py::object callback, double total, const InterruptScope& interrupt)
      : callback_(std::move(callback)), total_(std::llround(total)), can_stop_(interrupt.flag() != nullptr) {}
  PythonProgress(const PythonProgress&) = delete;
  PythonProgress& operator=(const PythonProgress&) = delete;

  /// One more unit done; from any thread, without the GIL.
  void step() {
    const long long done = ++done_;
    if (g_python_signal_pending.load(std::memory_order_relaxed) && PyThread_get_thread_ident() == g_main_thread)
      run_signal_handlers();
    if (callback_.is_none() || failed_.load()) return;
    std::unique_lock lock(mutex_, std::try_to_lock);
    const auto now = std::chrono::steady_clock::now();
    if (!lock || now - last_ < std::chrono::milliseconds(100)) return;
    last_ = now;
    py::gil_scoped_acquire gil;
    call(done);
  }
  /// The drivers' hook: one record of any run.
  ProgressFn driver() {
    return [this](int, double) { step(); };
  }
  /// With the GIL, after the drivers returned: the last count, then the callback's exception
  /// (a KeyboardInterrupt too, when Ctrl-C came while it ran), with `partial` (if given: what
  /// the call computed until then) as its attribute of that name.
  void finish(const py::object& partial = py::none()) {
    if (!callback_.is_none() && !failed_.load()) call(done_.load());
    if (!failure_) return;
    try {
      std::rethrow_exception(failure_);
    } catch (py::error_already_set& e) {
      if (!partial.is_none() && py::hasattr(e.value(), "__dict__")) py::setattr(e.value(), "partial", partial);
      throw;
    }
  }

 private:
  // The Python handlers of the signals that came (on the main thread, with the GIL): an
  // exception one raises stops the call as the callback's does.
  void run_signal_handlers() {
    py::gil_scoped_acquire gil;
    g_python_signal_pending.store(false);
    if (PyErr_CheckSignals() == 0 || failed_.load()) {
      PyErr_Clear();
      return;
    }
    failure_ = std::make_exception_ptr(py::error_already_set());
    failed_.store(true);
    if (can_stop_) g_python_interrupt.store(true);  // the drivers stop at their next step
  }
  void call(long long done) {
    try {
      callback_(done, total_);
    } catch (...) {
      failure_ = std::current_exception();
      failed_.store(true);
      if (can_stop_) g_python_interrupt.store(true);  // the drivers stop at their next step
    }
  }

  py::object callback_;
  long long total_;
  bool can_stop_;  ///< the call's InterruptScope is active: its flag stops the drivers
  std::atomic<long long> done_{0};
  std::atomic<bool> failed_{false};
  std::exception_ptr failure_;
  std::mutex mutex_;
  std::chrono::steady_clock::time_point last_{};
};

// progress= belongs to the Python layer, not to the flags: taken out before they are read.
std::pair<py::kwargs, py::object> split_progress(const py::kwargs& kwargs) {
  py::kwargs flags;
  py::object progress = py::none();
  for (auto item : kwargs) {
    if (py::cast<std::string>(item.first) == "progress")
      progress = py::reinterpret_borrow<py::object>(item.second);
    else
      flags[item.first] = item.second;
  }
  return {flags, progress};
}

py::dict simulate(const py::kwargs& all) {
  const auto [kwargs, callback] = split_progress(all);
  const SimulateSettings s = settings_from(simulate_parameters(), kwargs, "simulate");
  const ThreadLimit thread_limit(s.threads);  // threads=: for the call
  const ModelSpec model = s.to_spec();
  const SimulationSpec sim = s.simulation();
  check_budget(simulate_budget(s, model), s);  // max_memory=, max_steps= (docs/cli.md "Limits")
  const EngineFactory factory = sgd_engine_factory(s.engine, model, s.D);
  std::vector<Trajectory> trajectories;
  const InterruptScope interrupt;
  PythonProgress progress(callback, static_cast<double>(sim.runs) * static_cast<double>(sim.records() + 1), interrupt);
  {
    py::gil_scoped_release release;
    trajectories = run_sgd_runs(factory, model, sim, progress.driver(), interrupt.driver());
  }
  const auto stopped = interrupt.take_interrupt();
  std::vector<const Trajectory*> runs;
  for (const auto& tr : trajectories) runs.push_back(&tr);
  py::dict out = trajectory_table(runs, model, model.F(), CsvErrors::loss);
  out["model"] = model_dict(model);
  out["simulation"] = from_json(sidecar_parameters(simulate_parameters(), s)["simulation"]);
  InterruptScope::raise_with_partial(stopped, out);  // Ctrl-C: KeyboardInterrupt with the records so far
  progress.finish(out);
  return out;
}

py::dict theory(const py::kwargs& all) {
  const auto [kwargs, callback] = split_progress(all);
  const TheorySettings s = settings_from(theory_parameters(), kwargs, "theory");
  const ThreadLimit thread_limit(s.threads);  // threads=: for the call
  const ModelSpec model = s.to_spec();
  const TheoryRuns theory_runs(model, s.runs_spec());
  check_budget(theory_budget(theory_runs, model), s);
  std::vector<TheoryResult> results;
  const InterruptScope interrupt;
  const double records = std::floor(s.T / s.record_every + 1e-9) + 1;  // per run, unless a stop rule ends it
  PythonProgress progress(callback, s.runs * records, interrupt);
  {
    py::gil_scoped_release release;
    results = theory_runs.run(progress.driver(), interrupt.driver());
  }
  const auto stopped = interrupt.take_interrupt();
  std::vector<const Trajectory*> runs;
  std::vector<const std::vector<double>*> errors;  // per row, with mc_error=True
  py::list converged;
  for (std::size_t k = 0; k < results.size(); ++k) {
    runs.push_back(&results[k].trajectory);
    for (const auto& e : results[k].mc_error) errors.push_back(&e);
    if (results[k].converged) converged.append(py::make_tuple(k, results[k].converged_at));
  }
  py::dict out = trajectory_table(runs, model, model.F(), s.mc_error ? CsvErrors::all : CsvErrors::none, errors);
  nlohmann::json settings = sidecar_parameters(theory_parameters(), s)["theory"];
  settings.update(theory_runs.config().identity_for(model));  // as the CLI's sidecar
  out["model"] = model_dict(model);
  out["theory"] = from_json(settings);
  out["converged"] = converged;
  InterruptScope::raise_with_partial(stopped, out);  // Ctrl-C: KeyboardInterrupt with the records so far
  progress.finish(out);
  return out;
}

py::dict bayes(const py::kwargs& kwargs) {
  const BayesSettings s = settings_from(bayes_parameters(), kwargs, "bayes");
  const ThreadLimit thread_limit(s.threads);  // threads=: for the call
  const ModelSpec m = s.to_spec();
  s.check();
  check_budget(bayes_budget(s, m), s);
  MeanEstimate e;  // the quadrature has no sampling error
  const InterruptScope interrupt;
  try {
    py::gil_scoped_release release;
    if (s.method == "quadrature")
      e.mean = bayes_error_quadrature(m.prior, m.L, m.noise, interrupt.flag());
    else
      e = bayes_error_mc(m.prior, m.L, m.noise, s.samples, static_cast<uint32_t>(s.seed), interrupt.flag());
  } catch (const Interrupted&) {
    interrupt.raise_if_interrupted();
    throw;
  }
  py::dict out;
  out["mmse"] = e.mean;
  out["stderr"] = e.stderr_;
  return out;
}

// The final keys (runs × H × 28 × 28) and τ (runs × 10) of the MNIST runs.
std::pair<py::array_t<double>, py::array_t<double>> keys_and_tau(const std::vector<MnistRun>& results, int H) {
  const auto n_runs = static_cast<py::ssize_t>(results.size());
  py::array_t<double> keys({n_runs, py::ssize_t(H), py::ssize_t(kMnistSide), py::ssize_t(kMnistSide)});
  py::array_t<double> tau({n_runs, py::ssize_t(kMnistClasses)});
  auto keys_ = keys.mutable_unchecked<4>();
  auto tau_ = tau.mutable_unchecked<2>();
  for (py::ssize_t k = 0; k < n_runs; ++k) {
    const MnistRun& r = results[k];
    // A run that Ctrl-C stopped before it began has no keys nor τ: NaN.
    const bool has_keys = r.keys.size() == static_cast<std::size_t>(H * kMnistPixels);
    const bool has_tau = r.tau.size() == static_cast<std::size_t>(kMnistClasses);
    for (int h = 0; h < H; ++h)
      for (int p = 0; p < kMnistPixels; ++p)
        keys_(k, h, p / kMnistSide, p % kMnistSide) = has_keys ? r.keys[h * kMnistPixels + p] : std::nan("");
    for (int c = 0; c < kMnistClasses; ++c) tau_(k, c) = has_tau ? r.tau[c] : std::nan("");
  }
  return {keys, tau};
}

// `headspec mnist` (docs/model.md §11): the library calls of the command line.
py::dict mnist(const py::kwargs& all) {
  const auto [kwargs, callback] = split_progress(all);
  const MnistSettings s = settings_from(mnist_parameters(), kwargs, "mnist");
  const ThreadLimit thread_limit(s.threads);  // threads=: for the call
  ModelSpec model;
  const MnistStudySpec spec = s.study(model);
  check_budget(mnist_budget(s, model), s);
  std::vector<MnistRun> results;
  const InterruptScope interrupt;
  PythonProgress progress(callback, static_cast<double>(s.runs) * static_cast<double>(spec.sim.records() + 1),
                          interrupt);
  {
    py::gil_scoped_release release;
    const MnistDigits digits = load_mnist(s.data);
    const MnistTask task = MnistTask::build(digits, split_mnist(digits, s.train_fraction, static_cast<uint32_t>(s.split_seed)));
    results = run_mnist(task, model, spec, progress.driver(), interrupt.driver());
  }
  const auto stopped = interrupt.take_interrupt();
  std::vector<const Trajectory*> runs;
  for (const auto& r : results) runs.push_back(&r.trajectory);
  py::dict out = trajectory_table(runs, model, kMnistClasses, CsvErrors::loss);
  auto [keys, tau] = keys_and_tau(results, model.H);
  out["keys"] = keys;
  out["tau"] = tau;
  out["model"] = model_dict(model);
  nlohmann::json sim = sidecar_parameters(mnist_parameters(), s)["simulation"];
  sim.update({{"engine", "mnist"}, {"D", MnistEngine::D}, {"nu", spec.nu}, {"train_fraction", s.train_fraction},
              {"split_seed", s.split_seed}, {"data", s.data}});
  out["simulation"] = from_json(sim);
  InterruptScope::raise_with_partial(stopped, out);  // Ctrl-C: KeyboardInterrupt with the records so far
  progress.finish(out);
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

// One seed's LinearisationResult as arrays.
py::dict linearisation_arrays(const LinearisationResult& r) {
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
  return out;
}

// `headspec linearise`: the first seed's result as arrays; the growth check, the rate along
// the trajectory, the prediction, the other seeds and λ⁺ over the seeds as the CLI's JSON.
py::dict linearise_model(const py::kwargs& kwargs) {
  const LineariseSettings s = settings_from(linearise_parameters(), kwargs, "linearise");
  const ThreadLimit thread_limit(s.threads);  // threads=: for the call
  LineariseStudy study = prepare_linearise(s);
  check_budget(linearise_budget(s, study.model), s);
  LineariseOutcome outcome;
  const InterruptScope interrupt;
  study.spec.stop = interrupt.flag();  // Ctrl-C: the next evaluation of the rates throws Interrupted
  try {
    py::gil_scoped_release release;
    outcome = run_linearise_study(s, study);
  } catch (const Interrupted&) {
    interrupt.raise_if_interrupted();
    throw;
  }
  py::dict out = linearisation_arrays(outcome.results.front());
  for (const char* key : {"growth", "along", "prediction", "other_seeds", "lambda_plus_over_seeds", "settings"})
    if (outcome.document.contains(key)) out[key] = from_json(outcome.document[key]);
  out["model"] = model_dict(study.model);
  return out;
}

// ---- sweep ----

py::array_t<double> numbers(std::size_t n, const std::function<std::optional<double>(std::size_t)>& value) {
  py::array_t<double> a(static_cast<py::ssize_t>(n));
  auto a_ = a.mutable_unchecked<1>();
  for (std::size_t i = 0; i < n; ++i) {
    const std::optional<double> v = value(i);
    a_(static_cast<py::ssize_t>(i)) = v ? *v : std::nan("");
  }
  return a;
}

py::array_t<int> integers(std::size_t n, const std::function<int(std::size_t)>& value) {
  py::array_t<int> a(static_cast<py::ssize_t>(n));
  auto a_ = a.mutable_unchecked<1>();
  for (std::size_t i = 0; i < n; ++i) a_(static_cast<py::ssize_t>(i)) = value(i);
  return a;
}

// The grid columns, the point's index, run, t and the value columns of `rows`.
template <class Row>
py::dict table_dict(const SweepPlan& plan, const SweepTable& table, const std::vector<Row>& rows) {
  const auto numpy = py::module_::import("numpy");
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
}

// The summary CSV's columns: the table's, then diverged, converged, tau_f and tau_tilde_f.
py::dict summary_dict(const SweepPlan& plan, const SweepTable& table) {
  py::dict summary = table_dict(plan, table, table.summary);
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
  return summary;
}

// `headspec sweep` without its files: the library's plan, runs and tables
// as arrays. A cell a grid point lacks (its H, F or readout has fewer columns) is NaN.
py::dict sweep(const py::kwargs& all) {
  const auto [kwargs, callback] = split_progress(all);
  const SweepCommandSettings s = settings_from(sweep_parameters(), kwargs, "sweep");
  const ThreadLimit thread_limit(s.threads);  // threads=: for the call
  const SweepPlan plan(s);
  check_budget(sweep_budget(plan), s);
  SweepTable table;
  const InterruptScope interrupt;
  PythonProgress progress(callback, plan.tasks(), interrupt);
  {
    py::gil_scoped_release release;
    // Stopped by Ctrl-C: the tasks not begun have no rows (their summary rows are NaN).
    table = sweep_table(plan, run_sweep(plan, interrupt.flag(), [&progress] { progress.step(); }));
  }
  const auto stopped = interrupt.take_interrupt();
  py::list diverged, axes;
  for (const auto& r : table.summary)
    if (r.diverged) diverged.append(py::make_tuple(r.point, r.run, r.diverged_at));
  for (const auto& a : plan.axes()) axes.append(py::dict(py::arg("key") = a.key, py::arg("values") = a.values));
  py::dict out;
  out["rows"] = table_dict(plan, table, table.rows);
  out["summary"] = summary_dict(plan, table);
  out["grid"] = axes;
  out["base_model"] = model_dict(plan.base_model());
  out["diverged"] = diverged;
  InterruptScope::raise_with_partial(stopped, out);  // Ctrl-C: KeyboardInterrupt with the runs so far
  progress.finish(out);
  return out;
}

// A ParameterError as headspec.UsageError (a ValueError) naming the keyword, with the
// keyword, the flag and the reason as attributes.
PyObject* g_usage_error = nullptr;

void translate_parameter_error(std::exception_ptr p) {
  try {
    if (p) std::rethrow_exception(p);
  } catch (const ParameterError& e) {
    const std::string keyword = keyword_of(e.name());
    py::object err = py::reinterpret_borrow<py::object>(g_usage_error)(
        fmt::format("keyword {}=: {}", keyword, e.reason()));
    err.attr("parameter") = keyword;
    err.attr("flag") = "--" + e.name();
    err.attr("reason") = e.reason();
    PyErr_SetObject(g_usage_error, err.ptr());
  }
}

}  // namespace

PYBIND11_MODULE(_core, m) {
  fix_eigen_blocking();
  retain_freed_memory();
  m.doc() = "headspec: multi-head attention in the high-dimensional single-location model (compiled core)";
  g_usage_error = py::register_exception<UsageError>(m, "UsageError", PyExc_ValueError).ptr();
  py::register_exception_translator(&translate_parameter_error);
  m.attr("__version__") = kVersion;
  m.attr("git_revision") = kGitRevision;
  m.def("simulate", &simulate, "Finite-D online SGD (docs/model.md §1–5), as `headspec simulate`; returns arrays indexed by record.");
  m.def("theory", &theory,
        "The D → ∞ ODE of the order parameters (docs/model.md §6), as `headspec theory`; returns the arrays of simulate.");
  m.def("bayes", &bayes, "The Bayes-optimal error ε_Bayes (docs/model.md §8), as `headspec bayes`: {'mmse', 'stderr'}.");
  m.def("mnist", &mnist,
        "The MNIST detection task (docs/model.md §11), as `headspec mnist`: the arrays of simulate (loss = test "
        "error, M over the 10 class directions), keys (runs × H × 28 × 28, final) and tau (runs × 10, NaN: "
        "not specialised).");
  m.def("sweep", &sweep,
        "A grid over model flags × runs on any engine, as `headspec sweep`: {'rows': the tidy CSV's columns, "
        "'summary': the summary CSV's columns} as arrays (grid columns as strings; NaN: a cell the point lacks "
        "or not specialised).");
  m.def("linearise", &linearise_model,
        "The ODE linearised at the unspecialised fixed point, as `headspec linearise`: the first seed's fixed point, "
        "Jacobian, eigenvalues, lambda_plus as arrays; growth, along, prediction and the other seeds as its JSON.");
  m.def(
      "parameters",
      [](const std::string& command) -> py::list {
        if (command == "simulate") return describe(simulate_parameters());
        if (command == "theory") return describe(theory_parameters());
        if (command == "bayes") return describe(bayes_parameters());
        if (command == "mnist") return describe(mnist_parameters());
        if (command == "linearise") return describe(linearise_parameters());
        if (command == "sweep") return describe(sweep_parameters());
        throw py::value_error(fmt::format("no subcommand '{}'", command));
      },
      "The parameter table of a subcommand: one dict per flag (name, keyword, type, default, help, required, "
      "cli_only).",
      py::arg("command"));
}
