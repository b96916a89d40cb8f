// `headspec sweep`: a grid over model flags × runs on any engine (docs/cli.md), one tidy
// CSV of every record and a summary CSV of final values and specialisation times.
#include <fmt/format.h>

#include <unistd.h>

#include <atomic>
#include <exception>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>

#include "commands.hpp"
#include "headspec/command_budgets.hpp"
#include "headspec/errors.hpp"
#include "headspec/io.hpp"
#include "headspec/number_text.hpp"
#include "headspec/sweep.hpp"
#include "headspec/sweep_plan.hpp"
#include "headspec/thread_limit.hpp"
#include "options.hpp"
#include "sweep_ranks.hpp"

namespace headspec::app {
namespace {

using SweepOptions = SweepCommandSettings;

// The line of a usage error as main() prints it (docs/cli.md "Errors").
std::string usage_line(std::string message) {
  for (char& ch : message)
    if (ch == '\n') ch = ' ';
  return "headspec: error: " + message + "\n";
}

// --shard K/N (docs/cluster.md "SLURM job arrays"): the tasks t (grid point × run, in the
// CSV's order) with t mod N = K − 1, so every slice holds points from all over the grid.
struct Shard {
  int index = 0;  ///< K − 1
  int count = 1;  ///< N
  bool contains(int task) const { return task % count == index; }
};

// Null without --shard; throws ParameterError naming --shard.
std::optional<Shard> parse_shard(const SweepOptions& o) {
  if (o.shard.empty()) return std::nullopt;
  const auto slash = o.shard.find('/');
  if (slash == std::string::npos) throw ParameterError("shard", fmt::format("expected K/N (e.g. 3/8), got '{}'", o.shard));
  Shard shard;
  shard.count = static_cast<int>(parse_decimal_integer(o.shard.substr(slash + 1), "shard", 1, 1000000));
  shard.index = static_cast<int>(parse_decimal_integer(o.shard.substr(0, slash), "shard", 1, shard.count)) - 1;
  if (o.work_dir.empty()) throw ParameterError("shard", "needs --work-dir, the folder where the shards store their runs");
  if (!o.out.empty() || !o.summary.empty())
    throw ParameterError("shard", "a shard writes only into --work-dir; --out and --summary belong to the merge "
                                  "(the same command without --shard)");
  return shard;
}

// The settings of the flags; the plan checks them (throws UsageError naming the flag). Only
// rank 0 (`writes`) checks and creates what it alone writes: --out, --summary and --work-dir.
std::unique_ptr<SweepPlan> prepare(const SweepOptions& o, bool writes) {
  auto plan = std::make_unique<SweepPlan>(o);
  parse_shard(o);
  progress_mode(o.progress);
  check_budget(sweep_budget(*plan), o);
  if (writes)
    run_files(o.out, o.model)
        .inputs(plan->grid_input_files())
        .output("--summary", o.summary)
        .folder("--work-dir", o.work_dir)
        .check();

  // Last, as it creates the folder: nothing is made when another flag is wrong.
  if (writes && !o.work_dir.empty()) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::path dir(o.work_dir);
    if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
      throw UsageError(fmt::format("--work-dir: '{}' is not a folder", o.work_dir));
    if (!fs::exists(dir, ec)) {
      const fs::path parent = dir.parent_path().empty() ? fs::path(".") : dir.parent_path();
      if (!fs::is_directory(parent, ec))
        throw UsageError(fmt::format("--work-dir: folder '{}' does not exist", parent.string()));
      if (!fs::create_directory(dir, ec))
        throw UsageError(fmt::format("--work-dir: cannot create '{}': {}", o.work_dir, ec.message()));
    }
    if (::access(dir.c_str(), W_OK) != 0) throw UsageError(fmt::format("--work-dir: folder '{}' is not writable", o.work_dir));
    std::vector<std::string> keys;
    for (int task = 0; task < plan->tasks(); ++task) keys.push_back(plan->task_key(task));
    SweepWorkDir(o.work_dir).check_task_entries(keys);
  }
  return plan;
}

// The tidy CSV, the summary and the sidecar of the finished tasks (rank 0); the status.
int write_results(const SweepOptions& o, const std::vector<std::string>& argv, const SweepPlan& plan,
                  const std::vector<Trajectory>& results) {
  const SweepTable table = sweep_table(plan, results);
  const nlohmann::json meta = sweep_sidecar(plan, table, argv);
  std::vector<ExtraOutput> extras;
  if (!o.summary.empty()) extras.push_back({"summary", o.summary, sweep_summary_csv(plan, table)});
  write_output(o.out, sweep_csv(plan, table), meta, extras);
  for (const auto& d : meta["diverged"])
    std::cerr << fmt::format("headspec: point {} run {} diverged (NaN or overflow) at t = {}; the rows before it are "
                             "kept; try a smaller --lr (or --readout-lr)\n",
                             d["point"].get<int>(), d["run"].get<int>(), d["t"].get<double>());
  return meta["diverged"].empty() ? 0 : 3;
}

// Every rank checks the flags; one line from the lowest rank that found a fault, and status
// 2 on every rank, before anything runs or is written. Null (with `status`) after a fault.
std::unique_ptr<SweepPlan> prepare_on_every_rank(const SweepOptions& o, SweepRanks& ranks, int& status) {
  std::unique_ptr<SweepPlan> prepared;
  std::string fault;
  try {
    prepared = prepare(o, ranks.rank() == 0);
  } catch (const UsageError& e) {
    fault = e.what();
  }
  const int first_fault = ranks.first_failure(!fault.empty());
  if (first_fault >= ranks.size()) return prepared;
  if (ranks.size() == 1) throw UsageError(fault);
  // Printed here, before the ranks stop together: the launcher ends the job as soon as
  // one rank has exited with an error, which could swallow a line printed later.
  if (first_fault == ranks.rank()) std::cerr << usage_line(fault) << std::flush;
  ranks.barrier();
  status = 2;
  return nullptr;
}

// What rank 0 tells about a sweep run with a work folder or on several ranks.
void report_counts(const SweepRanks& ranks, int tasks, long long done, int reused,
                   const std::vector<std::atomic<int>>& computed_by, const std::optional<SweepWorkDir>& work,
                   const std::vector<std::string>& keys) {
  if (!work && ranks.size() == 1) return;
  std::string line = fmt::format("headspec: sweep: {} runs: {} computed", tasks, done);
  if (ranks.size() > 1) {
    std::vector<std::string> by;
    for (int r = 0; r < ranks.size(); ++r) by.push_back(fmt::format("rank {}: {}", r, computed_by[r].load()));
    line += fmt::format(" ({})", fmt::join(by, ", "));
  }
  if (work) {
    line += fmt::format(", {} reused from {}", reused, work->folder());
    if (const auto other = work->count_other_files(keys))
      line += fmt::format(" ({} other files there, of other parameters, left alone)", other);
  }
  std::cerr << line << "\n";
}

// What a shard tells once its runs are in the work folder; status 3 if one of them diverged
// (the merge reports which).
int report_shard(const Shard& shard, int tasks, long long computed, const SweepTasks& sweep,
                 const SweepWorkDir& work) {
  int mine = 0, diverged = 0;
  for (int task = 0; task < tasks; ++task) {
    if (!shard.contains(task)) continue;
    ++mine;
    diverged += sweep.results[static_cast<std::size_t>(task)].diverged ? 1 : 0;
  }
  std::cerr << fmt::format("headspec: sweep: shard {}/{}: {} of {} runs: {} computed, {} reused from {}; once every "
                           "shard is done, the same command without --shard writes the CSV\n",
                           shard.index + 1, shard.count, mine, tasks, computed, mine - computed, work.folder());
  if (diverged > 0)
    std::cerr << fmt::format("headspec: sweep: shard {}/{}: {} runs diverged (NaN or overflow); the merge names them\n",
                             shard.index + 1, shard.count, diverged);
  return diverged > 0 ? 3 : 0;
}

// Every rank ends with rank 0's status (a failure on rank 0 ends the others with 1).
int finish_ranks(SweepRanks& ranks, int status, const std::exception_ptr& failure) {
  status = ranks.broadcast(ranks.rank() == 0 && failure ? 1 : status);
  if (failure && ranks.size() > 1) {
    try {
      std::rethrow_exception(failure);
    } catch (const std::exception& e) {
      std::cerr << "headspec: " << e.what() << "\n" << std::flush;
    }
    ranks.barrier();
    return 1;
  }
  if (failure) std::rethrow_exception(failure);
  return status;
}

int run_sweep(const SweepOptions& o, const std::vector<std::string>& argv, bool check_only) {
  if (check_only) {
    // Checks the flags and the grid only: no ranks, and --work-dir is not created.
    prepare(o, false);
    return 0;
  }
  SweepRanks ranks;
  const bool master = ranks.rank() == 0;
  int status = 0;
  const std::unique_ptr<SweepPlan> prepared = prepare_on_every_rank(o, ranks, status);
  if (!prepared) return status;
  const ThreadLimit thread_limit(o.threads);  // --threads (per rank), for the rest of the command
  const SweepPlan& plan = *prepared;
  const std::optional<Shard> shard = parse_shard(o);  // checked by prepare
  const ProgressMode progress_shown = progress_mode(o.progress);
  const int tasks = plan.tasks();
  std::optional<SweepWorkDir> work;
  SweepTasks sweep;  // rank 0's: the others take their tasks from it
  if (master) {
    if (!o.work_dir.empty()) work.emplace(o.work_dir);
    sweep = sweep_tasks(plan, work ? &*work : nullptr);
    if (shard) std::erase_if(sweep.todo, [&](int task) { return !shard->contains(task); });
    for (const auto& problem : sweep.problems) std::cerr << "headspec: warning: " << problem << "; computing it again\n";
  }
  std::vector<std::atomic<int>> computed_by(static_cast<std::size_t>(ranks.size()));
  Progress progress("sweep", static_cast<double>(sweep.todo.size()), progress_shown);
  std::atomic<long long> done{0};
  auto run_task = [&](int task) { return plan.run_task(task); };
  auto task_done = [&](int task, Trajectory&& result, int by_rank) {
    if (task < 0 || task >= tasks) throw std::runtime_error(fmt::format("sweep: task {} out of range", task));
    // Stored before it counts as done: a sweep killed after this line finds the run on disk.
    if (work) work->store(sweep.keys[static_cast<std::size_t>(task)], result);
    sweep.results[static_cast<std::size_t>(task)] = std::move(result);
    ++computed_by[static_cast<std::size_t>(by_rank)];
    const long long finished = ++done;  // read once: the message and the count name the same run
    progress.update(fmt::format("{} of {} runs", finished, sweep.todo.size()), static_cast<double>(finished));
  };
  std::exception_ptr failure;
  try {
    ranks.run_tasks(sweep.todo, run_task, task_done);
    if (master) {
      progress.finish();
      if (shard) {
        status = report_shard(*shard, tasks, done.load(), sweep, *work);
      } else {
        report_counts(ranks, tasks, done.load(), tasks - static_cast<int>(sweep.todo.size()), computed_by, work,
                      sweep.keys);
        status = write_results(o, argv, plan, sweep.results);
      }
    }
  } catch (...) {
    failure = std::current_exception();
  }
  return finish_ranks(ranks, status, failure);
}

}  // namespace

Command add_sweep_command(CLI::App& app) {
  auto opts = std::make_shared<SweepOptions>();
  CLI::App* sub = app.add_subcommand("sweep", "a grid over model flags × runs on any engine: tidy CSV and summary");
  add_parameters(sub, sweep_parameters(), *opts);
  return {sub, [opts](const std::vector<std::string>& argv, bool check_only) { return run_sweep(*opts, argv, check_only); }};
}

}  // namespace headspec::app
