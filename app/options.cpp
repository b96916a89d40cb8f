#include "options.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <iostream>
#include <mutex>
#include <sstream>

#include "headspec/engines.hpp"
#include "headspec/errors.hpp"
#include "headspec/io.hpp"

namespace headspec::app {

void check_out(const std::string& out) {
  if (!out.empty()) check_output_path(out, "--out");
}

void write_output(const std::string& out, const std::string& csv, const nlohmann::json& sidecar) {
  if (out.empty()) {
    std::cout << csv << std::flush;
    return;
  }
  write_file_atomic(out + ".json", sidecar.dump(2) + "\n");
  write_file_atomic(out, csv);
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

void report_divergence(const std::vector<const Trajectory*>& trajectories, double lr) {
  for (std::size_t k = 0; k < trajectories.size(); ++k)
    if (trajectories[k]->diverged)
      std::cerr << fmt::format(
          "headspec: run {} diverged (NaN or overflow) at t = {}; the rows before it are kept; try a smaller "
          "--lr (now {})\n",
          k, trajectories[k]->diverged_at, lr);
}

Progress::Progress(std::string label, double total)
    : label_(std::move(label)), total_(total), enabled_(isatty(STDERR_FILENO) == 1) {}

void Progress::update(const std::string& what, double done) {
  if (!enabled_) return;
  static std::mutex mutex;
  std::unique_lock lock(mutex, std::try_to_lock);
  if (!lock) return;
  const long long now = std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::steady_clock::now().time_since_epoch())
                            .count();
  if (now - last_ms_ < 200) return;
  last_ms_ = now;
  std::cerr << fmt::format("\r{}: {} ({:.0f}%)   ", label_, what, total_ > 0 ? 100.0 * done / total_ : 100.0)
            << std::flush;
}

void Progress::finish() {
  if (enabled_) std::cerr << "\r\033[K" << std::flush;
}

int finish_sgd_command(const std::string& out, const std::vector<const Trajectory*>& runs, const ModelSpec& model,
                       int F, nlohmann::json& sidecar, const std::function<void()>& write_extras,
                       const std::function<void()>& checkpoint_spent) {
  const int status = record_divergence(runs, sidecar);
  if (write_extras) write_extras();
  write_output(out, format_csv(record_rows(runs), model.H, F, model.readout == Readout::Learned), sidecar);
  checkpoint_spent();
  report_divergence(runs, model.lr);
  return status;
}

}  // namespace headspec::app
