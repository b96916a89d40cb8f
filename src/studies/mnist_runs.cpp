// The MNIST study: the SGD driver's runs of the MNIST engine (whose recorded error is the
// task's test error), their final keys and specialisation times (docs/model.md §10–11).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "headspec/checkpoint.hpp"
#include "headspec/errors.hpp"
#include "headspec/mnist_engine.hpp"
#include "headspec/specialisation.hpp"
#include "headspec/study_checks.hpp"

namespace headspec {

void check_mnist_flags(const ModelSpec& model, int test_samples, int64_t split_seed, double train_fraction,
                       double delta) {
  if (test_samples < 1) throw ParameterError("test-samples", fmt::format("must be at least 1, got {}", test_samples));
  if (split_seed < 0 || split_seed > 0xFFFFFFFFLL)
    throw ParameterError("split-seed", fmt::format("must be in [0, 2^32), got {}", split_seed));
  if (!(train_fraction > 0 && train_fraction < 1))
    throw ParameterError("train-fraction", fmt::format("must be in (0, 1), got {}", train_fraction));
  check_delta(delta);
  if (static_cast<int64_t>(model.batch) * (model.L + 1) >= (1LL << 31))
    throw ParameterError("batch", "batch × (L + 1) must stay below 2^31");
}

std::vector<MnistRun> run_mnist(const MnistTask& task, const ModelSpec& model, const MnistStudySpec& spec,
                                const ProgressFn& progress, const Checkpointing* checkpointing) {
  SimulationSpec sim = spec.sim;
  sim.D = MnistEngine::D;
  const double nu = spec.nu;
  const EngineFactory make = [&task, model, nu](uint32_t seed) {
    return std::make_unique<MnistEngine>(task, model, nu, seed);
  };
  std::vector<MnistRun> out;
  for (SgdRunResult& r : run_sgd_runs_with_state(make, model, sim, "mnist", progress, checkpointing)) {
    MnistRun run;
    run.trajectory = std::move(r.trajectory);
    if (!r.final_state.empty()) {  // the final keys (MnistEngine::final_state)
      StateReader in(r.final_state);
      run.keys = in.doubles();
      in.expect_end();
    }
    if (!run.trajectory.interrupted) {
      run.tau = specialisation_times(run.trajectory.records, spec.delta);
      run.tau.resize(kMnistClasses, std::nan(""));  // a run that diverged before its first record
    }
    out.push_back(std::move(run));
  }
  return out;
}

}  // namespace headspec
