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

void add_model_options(CLI::App* app, ModelOptions& o) {
  app->add_option("--prior", o.prior, "prior on θ: flip | gauss | spike | mixture:FILE")->capture_default_str();
  app->add_option("--nu", o.nu, "signal strengths ν_f, comma-separated; F is their count")->capture_default_str();
  app->add_option("--L", o.L, "sequence length")->capture_default_str();
  app->add_option("--H", o.H, "number of heads")->capture_default_str();
  app->add_option("--activation", o.activation, activation_names(" | "))->capture_default_str();
  app->add_option("--readout", o.readout, "learned (trained from 1/H) | sum (c_h = 1) | mean (c_h = 1/H)")
      ->capture_default_str();
  app->add_option("--readout-lr", o.readout_lr, "readout learning rate η_c (default: η)");
  app->add_option("--lr", o.lr, "learning rate η")->capture_default_str();
  app->add_option("--batch", o.batch, "mini-batch size B")->capture_default_str();
  app->add_option("--noise", o.noise, "label noise variance Δ")->capture_default_str();
  app->add_option("--q0", o.q0, "initial key variance")->capture_default_str();
}

void add_run_options(CLI::App* app, RunOptions& o) {
  app->add_option("--T", o.T, "horizon in t = n/D")->capture_default_str();
  app->add_option("--record-every", o.record_every, "recording interval in t")->capture_default_str();
  app->add_option("--seed", o.seed, "random seed; run k uses seed + k")->capture_default_str();
  app->add_option("--out", o.out, "CSV output file (stdout if absent); FILE.json gets every parameter");
}

void validate_run(const RunOptions& o) {
  check_horizon(o.T, o.record_every);
  checked_seed(o.seed);
  if (!o.out.empty()) check_output_path(o.out, "--out");
}

void write_output(const RunOptions& run, const std::string& csv, const nlohmann::json& sidecar) {
  if (run.out.empty()) {
    std::cout << csv << std::flush;
    return;
  }
  write_file_atomic(run.out + ".json", sidecar.dump(2) + "\n");
  write_file_atomic(run.out, csv);
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

}  // namespace headspec::app
