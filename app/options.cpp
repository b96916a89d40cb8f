#include "options.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <mutex>
#include <sstream>

#include "headspec/engines.hpp"
#include "headspec/errors.hpp"
#include "headspec/io.hpp"
#include "headspec/sha256.hpp"

namespace headspec::app {

RunFiles run_files(const std::string& out, const ModelSettings& model, bool sidecar) {
  RunFiles files;
  if (!to_stdout(out)) files.output("--out", out);
  if (!to_stdout(out) && sidecar) files.derived_output("--out (its sidecar)", out + ".json");
  files.inputs(model.input_files());
  return files;
}

void write_stdout(const std::string& text) {
  std::cout << text << std::flush;
  if (!std::cout) throw std::runtime_error("cannot write to standard output (a full disk or a closed pipe?)");
}

void write_output(const std::string& out, const std::string& csv, nlohmann::json sidecar,
                  const std::vector<ExtraOutput>& extras) {
  std::vector<AtomicFile> files;
  for (const auto& e : extras) {
    files.emplace_back(e.path, e.content);
    sidecar["sha256"][e.role] = sha256_hex(e.content.data(), e.content.size());
  }
  if (to_stdout(out)) {
    for (auto& f : files) f.commit();
    write_stdout(csv);
    return;
  }
  files.emplace_back(out, csv);
  sidecar["sha256"]["csv"] = sha256_hex(csv.data(), csv.size());
  AtomicFile json(out + ".json", sidecar.dump(2) + "\n");
  // From here on nothing is left to fail but the renames: the old sidecar goes first, so
  // that until the new one is in place no sidecar describes the new CSV wrongly.
  if (const std::string old = regular_target(out + ".json"); !old.empty()) ::unlink(old.c_str());
  for (auto& f : files) f.commit();
  json.commit();
}

int record_divergence(const std::vector<const Trajectory*>& trajectories, nlohmann::json& sidecar) {
  int status = 0;
  for (std::size_t k = 0; k < trajectories.size(); ++k)
    if (trajectories[k]->diverged) {
      sidecar["diverged"].push_back({{"run", k}, {"t", trajectories[k]->diverged_at}});
      status = 3;
    }
  return status;
}

std::vector<const Record*> record_rows(const std::vector<const Trajectory*>& trajectories) {
  std::vector<const Record*> rows;
  for (const Trajectory* tr : trajectories)
    for (const auto& r : tr->records) rows.push_back(&r);
  return rows;
}

std::string smaller_step_advice(const ModelSpec& model) {
  // The readout's own step size, when it is trained with another one, may be the cause.
  if (model.readout == Readout::Learned && model.readout_lr != model.lr)
    return fmt::format("try a smaller --lr (now {}) or --readout-lr (now {})", model.lr, model.readout_lr);
  return fmt::format("try a smaller --lr (now {})", model.lr);
}

void report_divergence(const std::vector<const Trajectory*>& trajectories, const ModelSpec& model) {
  for (std::size_t k = 0; k < trajectories.size(); ++k)
    if (trajectories[k]->diverged)
      std::cerr << fmt::format(
          "headspec: run {} diverged (NaN or overflow) at t = {}; the rows before it are kept; {}\n", k,
          trajectories[k]->diverged_at, smaller_step_advice(model));
}

namespace {
long long now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
}  // namespace

ProgressMode progress_mode(const std::string& text) {
  if (text == "auto") return ProgressMode::Auto;
  if (text == "bar") return ProgressMode::Bar;
  if (text == "lines") return ProgressMode::Lines;
  if (text == "off") return ProgressMode::Off;
  throw ParameterError("progress", fmt::format("expected auto, bar, lines or off, got '{}'", text));
}

Progress::Progress(std::string label, double total, ProgressMode mode)
    : label_(std::move(label)), total_(total), mode_(mode), quiet_ms_(0), start_ms_(now_ms()) {
  if (mode_ == ProgressMode::Auto) {
    mode_ = isatty(STDERR_FILENO) == 1 ? ProgressMode::Bar : ProgressMode::Lines;
    if (mode_ == ProgressMode::Lines) quiet_ms_ = 10000;
  }
}

void Progress::update(const std::string& what, double done) {
  if (mode_ == ProgressMode::Off) return;
  // A bar redraw may be skipped while another thread draws; a line may not (the 100 % line
  // would be lost when the last two runs finish together).
  static std::mutex mutex;
  std::unique_lock lock(mutex, std::defer_lock);
  if (mode_ == ProgressMode::Lines)
    lock.lock();
  else if (!lock.try_lock())
    return;
  const double percent = total_ > 0 ? 100.0 * done / total_ : 100.0;
  const long long now = now_ms();
  if (mode_ == ProgressMode::Bar)
    bar(what, percent, now);
  else
    line(what, percent, now);
}

void Progress::bar(const std::string& what, double percent, long long now) {
  if (now - last_ms_ < 200) return;
  last_ms_ = now;
  std::cerr << fmt::format("\r{}: {} ({:.0f}%)   ", label_, what, percent) << std::flush;
}

void Progress::line(const std::string& what, double percent, long long now) {
  const int step = static_cast<int>(std::floor(percent / 5.0));
  if (step < next_step_) return;
  next_step_ = step + 1;
  if (now - start_ms_ < quiet_ms_) return;
  std::cerr << fmt::format("headspec: {}: {}% ({}), {:.0f} s\n", label_, 5 * std::min(step, 20), what,
                           static_cast<double>(now - start_ms_) / 1000.0)
            << std::flush;
}

void Progress::finish() {
  if (mode_ == ProgressMode::Bar) std::cerr << "\r\033[K" << std::flush;
}

int finish_sgd_command(const std::string& out, const std::vector<const Trajectory*>& runs, const ModelSpec& model,
                       int F, nlohmann::json& sidecar, const std::vector<ExtraOutput>& extras,
                       const std::function<void()>& checkpoint_spent) {
  const int status = record_divergence(runs, sidecar);
  write_output(out, format_csv(record_rows(runs), model.H, F, model.readout == Readout::Learned, CsvErrors::loss), sidecar, extras);
  checkpoint_spent();
  report_divergence(runs, model);
  return status;
}

}  // namespace headspec::app
