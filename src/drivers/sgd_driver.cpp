// The one trajectory driver of every finite-D SGD engine (dense, gram, MNIST): time, records,
// the specialisation stop rule, checkpoints and divergence; the engine steps and reports its
// own error (SgdEngine::recorded_error).
#include <algorithm>
#include <exception>

#include "headspec/checkpoint.hpp"
#include "headspec/errors.hpp"
#include "headspec/run_slot.hpp"
#include "headspec/specialisation.hpp"

namespace headspec {

namespace {

// One run: continued from its slot if it has one, stepped record by record.
class SgdRun {
 public:
  SgdRun(const EngineFactory& make, const ModelSpec& model, const SimulationSpec& sim, int run,
         const ProgressFn& progress, RunSlots* slots, const Checkpointing* ckpt)
      : make_(make), model_(model), sim_(sim), run_(run), progress_(progress), slots_(slots), ckpt_(ckpt) {}

  SgdRunResult run() {
    const std::string empty;
    const std::string& slot = slots_ ? slots_->slot(run_) : empty;
    if (!slot.empty()) {
      run_slot::Slot s = run_slot::read(slot);
      if (s.kind == run_slot::Kind::Finished) return {std::move(s.trajectory), std::move(s.payload)};
      resume(std::move(s));
    } else if (ckpt_ && ckpt_->interrupted()) {  // never started: stays empty in the checkpoint
      out_.trajectory.interrupted = true;
      return std::move(out_);
    } else {
      engine_ = make_(seed());
    }
    watched_ = watched_directions(model_, sim_.stop_when_specialised, out_.trajectory.records);
    clock_ = CheckpointClock(ckpt_ ? ckpt_->every : 0, static_cast<double>(sim_.D) / model_.batch, done_);
    for (int64_t k = k0_; k <= sim_.records(); ++k) {
      if (repeats_a_time(k)) continue;
      if (!step_to(sim_.steps_at(k, model_.batch), k) || !record() || specialised()) break;
    }
    if (!out_.trajectory.interrupted) out_.final_state = engine_->final_state();
    return std::move(out_);
  }

 private:
  uint32_t seed() const { return sim_.seed + static_cast<uint32_t>(run_); }
  // Record k falls on the same step as record k − 1 when --record-every is below one step
  // (B/D): the state there is recorded once, at the first of them (docs/cli.md "simulate").
  bool repeats_a_time(int64_t k) const {
    return k > 0 && sim_.steps_at(k, model_.batch) == sim_.steps_at(k - 1, model_.batch);
  }
  double time_at(int64_t steps) const { return model_.time_of_step(steps, sim_.D); }

  // An in-progress slot: its state is the steps done, the next record k and the engine's.
  void resume(run_slot::Slot slot) {
    out_.trajectory.records = std::move(slot.trajectory.records);
    StateReader in(slot.payload);
    done_ = in.i64();
    k0_ = in.i64();
    const std::string engine_state = in.string();
    in.expect_end();
    engine_ = make_(seed());
    StateReader engine_in(engine_state);
    engine_->load_state(engine_in);
    engine_in.expect_end();
  }

  std::string in_progress_slot(int64_t k) const {
    StateWriter state, engine;
    state.put_i64(done_);
    state.put_i64(k);
    engine_->save_state(engine);
    state.put_string(engine.bytes());
    return run_slot::in_progress(out_.trajectory.records, state.take());
  }

  // Steps up to `target` steps done, saving the run first when asked; false once
  // interrupted or diverged.
  bool step_to(int64_t target, int64_t k) {
    for (; done_ < target; ++done_) {
      if (ckpt_) {
        if (ckpt_->interrupted()) {
          slots_->update(run_, in_progress_slot(k), false);
          out_.trajectory.interrupted = true;
          return false;
        }
        if (clock_.due(done_)) slots_->update(run_, in_progress_slot(k), true);
      }
      engine_->step(static_cast<uint64_t>(done_));
      if (engine_->diverged()) {
        out_.trajectory.diverged = true;
        out_.trajectory.diverged_at = time_at(done_ + 1);
        return false;
      }
    }
    return true;
  }

  // Records the state after done_ steps; false if it is not finite (diverged).
  bool record() {
    Record rec;
    rec.run = run_;
    rec.t = time_at(done_);
    rec.op = engine_->order_parameters();
    if (!rec.op.all_finite()) {
      out_.trajectory.diverged = true;
      out_.trajectory.diverged_at = rec.t;
      return false;
    }
    const MeanEstimate error = engine_->recorded_error(rec.op, sim_.test_samples);
    rec.loss = error.mean;
    rec.loss_se = error.stderr_;
    out_.trajectory.records.push_back(std::move(rec));
    if (progress_) progress_(run_, out_.trajectory.records.back().t);
    return true;
  }

  // The stop rule (sim.stop_when_specialised): true once every watched direction has split.
  bool specialised() {
    return all_specialised(watched_, out_.trajectory.records.back().op.M, sim_.stop_when_specialised);
  }

  const EngineFactory& make_;
  const ModelSpec& model_;
  const SimulationSpec& sim_;
  int run_;
  const ProgressFn& progress_;
  RunSlots* slots_;
  const Checkpointing* ckpt_;
  std::unique_ptr<SgdEngine> engine_;
  SgdRunResult out_;
  int64_t done_ = 0, k0_ = 0;
  std::vector<int> watched_;
  CheckpointClock clock_{0, 1, 0};
};

}  // namespace

Trajectory run_sgd(const EngineFactory& make, const ModelSpec& model, const SimulationSpec& sim, int run,
                   const ProgressFn& progress, RunSlots* slots, const Checkpointing* checkpointing) {
  return SgdRun(make, model, sim, run, progress, slots, checkpointing).run().trajectory;
}

std::vector<SgdRunResult> run_sgd_runs_with_state(const EngineFactory& make, const ModelSpec& model,
                                                  const SimulationSpec& sim, std::string_view tag,
                                                  const ProgressFn& progress, const Checkpointing* checkpointing) {
  std::vector<SgdRunResult> out(static_cast<std::size_t>(sim.runs));
  RunSlots slots(checkpointing, tag, sim.runs);
  RunSlots* slots_used = checkpointing ? &slots : nullptr;
  // Runs in parallel; inside a run the engine's own parallel loops then run on one thread
  // (nested parallelism is off), with the same results by construction.
  std::vector<std::exception_ptr> failed(out.size());
#pragma omp parallel for schedule(dynamic, 1) if (sim.runs > 1)
  for (int run = 0; run < sim.runs; ++run) {
    try {
      out[run] = SgdRun(make, model, sim, run, progress, slots_used, checkpointing).run();
      // A finished run's slot holds its trajectory (and final state), so later checkpoints keep it.
      if (slots_used && !out[run].trajectory.interrupted)
        slots.update(run, run_slot::finished(out[run].trajectory, out[run].final_state), false);
    } catch (...) {  // an exception must not leave a parallel region
      failed[run] = std::current_exception();
    }
  }
  for (const auto& e : failed)
    if (e) std::rethrow_exception(e);
  if (checkpointing &&
      std::any_of(out.begin(), out.end(), [](const SgdRunResult& r) { return r.trajectory.interrupted; }))
    slots.save();
  return out;
}

std::vector<Trajectory> run_sgd_runs(const EngineFactory& make, const ModelSpec& model, const SimulationSpec& sim,
                                     const ProgressFn& progress, const Checkpointing* checkpointing) {
  std::vector<Trajectory> out;
  for (SgdRunResult& r : run_sgd_runs_with_state(make, model, sim, "simulate", progress, checkpointing))
    out.push_back(std::move(r.trajectory));
  return out;
}

}  // namespace headspec
