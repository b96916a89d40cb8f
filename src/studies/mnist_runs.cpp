// The MNIST study driver: trajectories recorded like run_sgd's, with the test error of
// the MNIST task as the loss, the final keys and the specialisation times (docs/model.md §10–11).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <exception>

#include "headspec/checkpoint.hpp"
#include "headspec/errors.hpp"
#include "headspec/mnist_engine.hpp"
#include "headspec/specialisation.hpp"
#include "headspec/study_checks.hpp"

namespace headspec {

void check_mnist_flags(const ModelSpec& model, int test_samples, int64_t split_seed, double train_fraction,
                       double delta) {
  if (test_samples < 1) throw UsageError(fmt::format("--test-samples: must be at least 1, got {}", test_samples));
  if (split_seed < 0 || split_seed > 0xFFFFFFFFLL)
    throw UsageError(fmt::format("--split-seed: must be in [0, 2^32), got {}", split_seed));
  if (!(train_fraction > 0 && train_fraction < 1))
    throw UsageError(fmt::format("--train-fraction: must be in (0, 1), got {}", train_fraction));
  if (!(std::isfinite(delta) && delta > 0)) throw UsageError(fmt::format("--delta: must be > 0, got {}", delta));
  if (static_cast<int64_t>(model.batch) * (model.L + 1) >= (1LL << 31))
    throw UsageError("--batch: batch × (L + 1) must stay below 2^31");
}

namespace {

// A run's slot in a checkpoint (docs/checkpoints.md), as run_sgd_runs's, with the final
// keys of a finished run (for the picture of the keys).
enum class SlotKind : uint64_t { InProgress = 1, Finished = 2 };

std::string finished_slot(const MnistRun& r) {
  StateWriter out;
  out.put_u64(static_cast<uint64_t>(SlotKind::Finished));
  out.put_records(r.trajectory.records);
  out.put_bool(r.trajectory.diverged);
  out.put_f64(r.trajectory.diverged_at);
  out.put_doubles(r.keys);
  return out.take();
}

MnistRun run_one(const MnistTask& task, const ModelSpec& model, const MnistStudySpec& spec, int run,
                 const ProgressFn& progress, RunSlots& slots, const Checkpointing* ckpt) {
  SimulationSpec sim = spec.sim;
  sim.D = MnistEngine::D;
  const uint32_t seed = sim.seed + static_cast<uint32_t>(run);
  MnistRun out;
  Trajectory& tr = out.trajectory;
  auto finish = [&] {
    out.tau = specialisation_times(tr.records, spec.delta);
    out.tau.resize(kMnistClasses, std::nan(""));  // a run that diverged before its first record
    return out;
  };
  int64_t done = 0, k0 = 0;
  std::string engine_state;
  if (const std::string& slot = slots.slot(run); !slot.empty()) {
    StateReader in(slot);
    const uint64_t kind = in.u64();
    if (kind == static_cast<uint64_t>(SlotKind::Finished)) {
      tr.records = in.records();
      tr.diverged = in.boolean();
      tr.diverged_at = in.f64();
      out.keys = in.doubles();
      in.expect_end();
      return finish();
    }
    if (kind != static_cast<uint64_t>(SlotKind::InProgress)) throw UsageError("--resume: the checkpoint holds an invalid run");
    done = in.i64();
    k0 = in.i64();
    tr.records = in.records();
    engine_state = in.string();
    in.expect_end();
  } else if (ckpt && ckpt->interrupted()) {  // never started: stays empty in the checkpoint
    tr.interrupted = true;
    return out;
  }
  MnistEngine engine(task, model, spec.nu, seed);
  if (!engine_state.empty()) {
    StateReader in(engine_state);
    engine.load_state(in);
    in.expect_end();
  }
  auto in_progress = [&](int64_t k) {
    StateWriter w;
    w.put_u64(static_cast<uint64_t>(SlotKind::InProgress));
    w.put_i64(done);
    w.put_i64(k);
    w.put_records(tr.records);
    StateWriter e;
    engine.save_state(e);
    w.put_string(e.bytes());
    return w.take();
  };
  CheckpointClock clock(ckpt ? ckpt->every : 0, static_cast<double>(sim.D) / model.batch, done);
  for (int64_t k = k0; k <= sim.records(); ++k) {
    const int64_t target = sim.steps_at(k, model.batch);
    for (; done < target; ++done) {
      if (ckpt) {
        if (ckpt->interrupted()) {
          slots.update(run, in_progress(k), false);
          tr.interrupted = true;
          return out;
        }
        if (clock.due(done)) slots.update(run, in_progress(k), true);
      }
      engine.step(static_cast<uint64_t>(done));
      if (engine.diverged()) {
        tr.diverged = true;
        tr.diverged_at = static_cast<double>(done + 1) * model.batch / static_cast<double>(sim.D);
        break;
      }
    }
    if (tr.diverged) break;
    Record rec;
    rec.run = run;
    rec.t = static_cast<double>(done) * model.batch / static_cast<double>(sim.D);
    rec.op = engine.order_parameters();
    if (!rec.op.all_finite()) {
      tr.diverged = true;
      tr.diverged_at = rec.t;
      break;
    }
    rec.loss = engine.test_error(sim.test_samples).mean;
    tr.records.push_back(std::move(rec));
    if (progress) progress(run, tr.records.back().t);
  }
  out.keys = engine.keys();
  return finish();
}

}  // namespace

std::vector<MnistRun> run_mnist(const MnistTask& task, const ModelSpec& model, const MnistStudySpec& spec,
                                const ProgressFn& progress, const Checkpointing* checkpointing) {
  std::vector<MnistRun> out(static_cast<std::size_t>(spec.sim.runs));
  RunSlots slots(checkpointing, "mnist", spec.sim.runs);
  std::vector<std::exception_ptr> failed(out.size());
#pragma omp parallel for schedule(dynamic, 1) if (spec.sim.runs > 1)
  for (int run = 0; run < spec.sim.runs; ++run) {
    try {
      out[run] = run_one(task, model, spec, run, progress, slots, checkpointing);
      // A finished run's slot holds its trajectory and keys, so later checkpoints keep it.
      if (checkpointing && !out[run].trajectory.interrupted) slots.update(run, finished_slot(out[run]), false);
    } catch (...) {  // an exception must not leave a parallel region
      failed[run] = std::current_exception();
    }
  }
  for (const auto& e : failed)
    if (e) std::rethrow_exception(e);
  if (checkpointing &&
      std::any_of(out.begin(), out.end(), [](const MnistRun& r) { return r.trajectory.interrupted; }))
    slots.save();
  return out;
}

}  // namespace headspec
