// The MNIST study driver: trajectories recorded like run_sgd's, with the test error of
// the MNIST task as the loss, the final keys and the specialisation times (MODEL.md §10–11).
#include <cmath>

#include "headspec/mnist_engine.hpp"
#include "headspec/specialisation.hpp"

namespace headspec {
namespace {

MnistRun run_one(const MnistTask& task, const ModelSpec& model, const MnistStudySpec& spec, int run,
                 const ProgressFn& progress) {
  SimulationSpec sim = spec.sim;
  sim.D = MnistEngine::D;
  const uint32_t seed = sim.seed + static_cast<uint32_t>(run);
  MnistEngine engine(task, model, spec.nu, seed);
  MnistRun out;
  int64_t done = 0;
  for (int64_t k = 0; k <= sim.records(); ++k) {
    const int64_t target = sim.steps_at(k, model.batch);
    for (; done < target; ++done) engine.step(static_cast<uint64_t>(done));
    Record rec;
    rec.run = run;
    rec.t = static_cast<double>(done) * model.batch / static_cast<double>(sim.D);
    rec.op = engine.order_parameters();
    if (!rec.op.all_finite()) {
      out.trajectory.diverged = true;
      out.trajectory.diverged_at = rec.t;
      break;
    }
    rec.loss = engine.test_error(sim.test_samples).mean;
    out.trajectory.records.push_back(std::move(rec));
    if (progress) progress(run, out.trajectory.records.back().t);
  }
  out.keys = engine.keys();
  out.tau = specialisation_times(out.trajectory.records, spec.delta);
  out.tau.resize(kMnistClasses, std::nan(""));  // a run that diverged before its first record
  return out;
}

}  // namespace

std::vector<MnistRun> run_mnist(const MnistTask& task, const ModelSpec& model, const MnistStudySpec& spec,
                                const ProgressFn& progress) {
  std::vector<MnistRun> out(static_cast<std::size_t>(spec.sim.runs));
#pragma omp parallel for schedule(dynamic, 1) if (spec.sim.runs > 1)
  for (int run = 0; run < spec.sim.runs; ++run) out[run] = run_one(task, model, spec, run, progress);
  return out;
}

}  // namespace headspec
