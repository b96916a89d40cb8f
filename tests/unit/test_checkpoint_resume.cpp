// Checkpoint and resume in the drivers (docs/checkpoints.md): for each engine, a run stopped
// at some step and resumed from its saved state gives the same bits as an uninterrupted one.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <mutex>

#include "cli_helpers.hpp"
#include "headspec/checkpoint.hpp"
#include "headspec/dense_engine.hpp"
#include "headspec/errors.hpp"
#include "headspec/gram_engine.hpp"
#include "headspec/io.hpp"
#include "headspec/mnist_engine.hpp"
#include "headspec/theory_runs.hpp"
#include "mnist_fixture.hpp"

using namespace headspec;
namespace fs = std::filesystem;

namespace {

ModelSpec small_model() {
  ModelSpec m;
  m.L = 4;
  m.H = 2;
  return m;
}

std::string csv_of(const std::vector<Trajectory>& runs, const ModelSpec& m, int F) {
  std::vector<const Record*> rows;
  for (const auto& tr : runs)
    for (const auto& r : tr.records) rows.push_back(&r);
  return format_csv(rows, m.H, F, m.readout == Readout::Learned);
}

// What a driver saved: every state passed to `save`, in order.
struct Saves {
  std::mutex mutex;
  std::vector<std::string> states;
  Checkpointing make(const std::atomic<bool>* flag, double every) {
    Checkpointing c;
    c.interrupt = flag;
    c.every = every;
    c.save = [this](const std::string& s) {
      std::lock_guard lock(mutex);
      states.push_back(s);
    };
    return c;
  }
};

// Runs `run(c)` with the interrupt flag raised after the `stop_after`-th record, checks it
// was interrupted, then resumes from the last saved state and from the first periodic one;
// returns the two resumed outputs.
template <class RunFn, class Interrupted>
std::vector<std::string> interrupted_and_resumed(RunFn run, Interrupted interrupted, int stop_after, double every) {
  std::atomic<bool> flag{false};
  std::atomic<int> seen{0};
  Saves saves;
  Checkpointing c = saves.make(&flag, every);
  const auto first = run(&c, [&](int, double) {
    if (++seen == stop_after) flag = true;
  });
  EXPECT_TRUE(interrupted(first)) << "the flag did not stop the run";
  EXPECT_GE(saves.states.size(), 2u) << "expected periodic saves and the final one";
  std::vector<std::string> outputs;
  for (const std::string* state : {&saves.states.back(), &saves.states.front()}) {
    Saves again;
    std::atomic<bool> off{false};
    Checkpointing r = again.make(&off, every);
    r.resume = *state;
    const auto resumed = run(&r, [](int, double) {});
    EXPECT_FALSE(interrupted(resumed));
    outputs.push_back(resumed.csv);
  }
  return outputs;
}

struct SgdOutcome {
  std::vector<Trajectory> runs;
  std::string csv;
};

void check_sgd_engine(const std::string& engine) {
  const ModelSpec m = small_model();
  SimulationSpec sim;
  sim.D = 300;
  sim.T = 3;
  sim.record_every = 0.5;
  sim.test_samples = 100;
  sim.runs = 2;
  const EngineFactory make =
      engine == "dense" ? DenseEngine::factory(m, sim.D) : GramEngine::factory(m, sim.D);
  const std::string plain = csv_of(run_sgd_runs(make, m, sim), m, m.F());
  auto run = [&](const Checkpointing* c, const ProgressFn& p) {
    SgdOutcome o;
    o.runs = run_sgd_runs(make, m, sim, p, c);
    o.csv = csv_of(o.runs, m, m.F());
    return o;
  };
  auto interrupted = [](const SgdOutcome& o) {
    for (const auto& t : o.runs)
      if (t.interrupted) return true;
    return false;
  };
  // Stopped during the 5th record of 14 (2 runs × 7), periodic saves every 0.3.
  for (const std::string& out : interrupted_and_resumed(run, interrupted, 5, 0.3)) EXPECT_EQ(out, plain) << engine;
}

TEST(CheckpointResume, DenseRunsContinueBitForBit) { check_sgd_engine("dense"); }

TEST(CheckpointResume, GramRunsContinueBitForBit) { check_sgd_engine("gram"); }

// sde-heun: the stochastic theory (docs/model.md §12), whose step k's noise must come back too.
void check_theory_runs(int64_t mc) {
  const ModelSpec m = small_model();
  for (const std::string name : {"rk4", "euler", "dopri5", "sde-heun"}) {
    const bool resample = name == "euler", sde = name == "sde-heun";
    const std::string integrator = sde ? "heun" : name;
    SCOPED_TRACE(name + (resample ? " resampled" : " fixed") + " N = " + std::to_string(mc));
    TheoryRunsSpec spec;
    // sobol, whose samples (fixed, or drawn anew at each step) the checkpoint must bring back;
    // laplace keeps no state of its own across steps, and its cost would dwarf the case's.
    spec.mc_method = "sobol";
    spec.mc = mc;
    spec.integrator = integrator;
    spec.mc_resample = resample;
    spec.sde = sde;
    spec.dt = 0.1;
    spec.T = 2;
    spec.record_every = 0.5;
    spec.init_D = 200;
    spec.runs = 2;
    const TheoryRuns theory(m, spec);
    auto csv = [&](const std::vector<TheoryResult>& rs) {
      std::vector<Trajectory> t;
      for (const auto& r : rs) t.push_back(r.trajectory);
      return csv_of(t, m, m.F());
    };
    const auto plain_runs = theory.run();
    const std::string plain = csv(plain_runs);
    struct Outcome {
      std::vector<TheoryResult> runs;
      std::string csv;
    };
    auto run = [&](const Checkpointing* c, const ProgressFn& p) {
      Outcome o;
      o.runs = theory.run(p, c);
      o.csv = csv(o.runs);
      return o;
    };
    auto interrupted = [](const Outcome& o) {
      for (const auto& r : o.runs)
        if (r.trajectory.interrupted) return true;
      return false;
    };
    // Stopped after the 7th record of 10: one after the other, in run 1 with run 0 finished.
    for (const std::string& out : interrupted_and_resumed(run, interrupted, 7, 0.25)) EXPECT_EQ(out, plain);
    // The evaluation counts (in the sidecar) are those of the uninterrupted runs too.
    std::atomic<bool> flag{false};
    Saves saves;
    Checkpointing c = saves.make(&flag, 0.25);
    std::atomic<int> seen{0};
    theory.run([&](int, double) { flag = ++seen == 3; }, &c);
    Checkpointing r;
    r.resume = saves.states.back();
    const auto resumed = theory.run({}, &r);
    for (int k = 0; k < spec.runs; ++k) EXPECT_EQ(resumed[k].evaluations, plain_runs[k].evaluations);
  }
}

// 300 samples: the two runs in parallel (TheoryRuns::run); 8192: one after the other, each
// evaluation on the threads.
TEST(CheckpointResume, TheoryRunsContinueBitForBitWithFixedAndResampledSamplesAndTheSde) { check_theory_runs(300); }

TEST(CheckpointResume, TheoryRunsOneAfterAnotherContinueBitForBit) { check_theory_runs(8192); }

TEST(CheckpointResume, MnistRunsContinueBitForBitWithTheirKeys) {
  const auto dir = headspec::testing::fresh_dir("ckpt_mnist_fixture");
  headspec::testing::make_mnist_fixture(dir, 12);
  MnistLoadOptions lo;
  lo.expected_sha256.clear();
  lo.write_cache = false;
  const MnistDigits digits = load_mnist(dir.string(), lo);
  fs::remove_all(dir);
  const MnistTask task = MnistTask::build(digits, split_mnist(digits, 0.75, 1));
  ModelSpec m = small_model();
  MnistStudySpec spec;
  spec.nu = 9;
  spec.sim.T = 1;
  spec.sim.record_every = 0.25;
  spec.sim.test_samples = 50;
  spec.sim.runs = 2;
  struct Outcome {
    std::vector<MnistRun> runs;
    std::string csv;
  };
  auto run = [&](const Checkpointing* c, const ProgressFn& p) {
    Outcome o;
    o.runs = run_mnist(task, m, spec, p, c);
    std::vector<Trajectory> t;
    for (const auto& r : o.runs) t.push_back(r.trajectory);
    o.csv = csv_of(t, m, kMnistClasses);
    // The final keys and specialisation times belong to the output too.
    for (const auto& r : o.runs) {
      o.csv += fmt::format("{}\n", fmt::join(r.keys, ","));
      o.csv += fmt::format("{}\n", fmt::join(r.tau, ","));
    }
    return o;
  };
  auto interrupted = [](const Outcome& o) {
    for (const auto& r : o.runs)
      if (r.trajectory.interrupted) return true;
    return false;
  };
  const std::string expected = run(nullptr, {}).csv;
  for (const std::string& out : interrupted_and_resumed(run, interrupted, 4, 0.2)) EXPECT_EQ(out, expected);
}

}  // namespace

// dopri5 re-evaluates f(x) after a restart: at a resume, and in any run after a stage at an
// exploded state (a trial step rejected and retried shorter). Whichever step a checkpoint
// follows, a resumed run counts the evaluations of the uninterrupted one: a checkpoint at every
// step of a run whose step size collapses (η far too large), resumed from a spread of them.
TEST(CheckpointResume, Dopri5EvaluationsAgreeFromACheckpointAfterAnyStep) {
  ModelSpec m = small_model();
  m.lr = 1e4;
  m.readout_lr = 1e4;
  TheoryRunsSpec spec;
  spec.mc_method = "sobol";
  spec.mc = 64;
  spec.integrator = "dopri5";
  spec.T = 20;
  spec.record_every = 2;
  const TheoryRuns theory(m, spec);
  const int64_t plain = theory.run()[0].evaluations;
  Saves saves;
  std::atomic<bool> off{false};
  Checkpointing c = saves.make(&off, 1e-12);  // due after every step that moves t
  EXPECT_EQ(theory.run({}, &c)[0].evaluations, plain);
  ASSERT_GE(saves.states.size(), 100u);
  // The first two saves (t = 0, before any step: the stepper just started), 3 spread, and
  // the last 6 (where the step size collapses and stages at exploded states are retried).
  const std::size_t n = saves.states.size();
  std::vector<std::size_t> picks = {0, 1};
  for (std::size_t k = 1; k <= 3; ++k) picks.push_back(k * (n - 6) / 4);
  for (std::size_t k = n - 6; k < n; ++k) picks.push_back(k);
  for (const std::size_t k : picks) {
    Checkpointing r;
    r.resume = saves.states[k];
    EXPECT_EQ(theory.run({}, &r)[0].evaluations, plain) << "resumed from save " << k << " of " << n;
  }
}
