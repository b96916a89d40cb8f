#include "headspec/simulation.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <stdexcept>

#include "headspec/checkpoint.hpp"
#include "headspec/errors.hpp"
#include "headspec/projection.hpp"
#include "headspec/settings.hpp"
#include "headspec/specialisation.hpp"

namespace headspec {

void SimulationSpec::validate() const {
  check_horizon(T, record_every);
  check_runs(seed, runs);
  if (test_samples < 1) throw UsageError(fmt::format("--test-samples: must be at least 1, got {}", test_samples));
  if (!(std::isfinite(stop_when_specialised) && stop_when_specialised >= 0))
    throw UsageError(fmt::format("--delta: must be > 0, got {}", stop_when_specialised));
}

int64_t SimulationSpec::records() const { return static_cast<int64_t>(std::floor(T / record_every + 1e-9)); }

int64_t SimulationSpec::steps_at(int64_t k, int batch) const {
  return std::llround(static_cast<double>(k) * record_every * static_cast<double>(D) / batch);
}

void SgdEngine::save_state(StateWriter&) const { throw std::logic_error("this engine cannot be checkpointed"); }
void SgdEngine::load_state(StateReader&) { throw std::logic_error("this engine cannot be checkpointed"); }

namespace {

// A run's slot in a checkpoint (docs/checkpoints.md): in progress (steps done, next record
// index, records, engine state) or finished (its trajectory).
enum class SlotKind : uint64_t { InProgress = 1, Finished = 2 };

std::string finished_slot(const Trajectory& tr) {
  StateWriter out;
  out.put_u64(static_cast<uint64_t>(SlotKind::Finished));
  out.put_records(tr.records);
  out.put_bool(tr.diverged);
  out.put_f64(tr.diverged_at);
  return out.take();
}

Trajectory run_one(const EngineFactory& make, const ModelSpec& model, const SimulationSpec& sim, int run,
                   const ProgressFn& progress, RunSlots* slots, const Checkpointing* ckpt) {
  const uint32_t seed = sim.seed + static_cast<uint32_t>(run);
  Trajectory out;
  int64_t done = 0, k0 = 0;
  std::unique_ptr<SgdEngine> engine;
  const std::string empty;
  const std::string& slot = slots ? slots->slot(run) : empty;
  if (!slot.empty()) {
    StateReader in(slot);
    const uint64_t kind = in.u64();
    if (kind == static_cast<uint64_t>(SlotKind::Finished)) {
      out.records = in.records();
      out.diverged = in.boolean();
      out.diverged_at = in.f64();
      in.expect_end();
      return out;
    }
    if (kind != static_cast<uint64_t>(SlotKind::InProgress)) throw UsageError("--resume: the checkpoint holds an invalid run");
    done = in.i64();
    k0 = in.i64();
    out.records = in.records();
    const std::string state = in.string();
    in.expect_end();
    engine = make(seed);
    StateReader engine_in(state);
    engine->load_state(engine_in);
    engine_in.expect_end();
  } else {
    if (ckpt && ckpt->interrupted()) {  // never started: stays empty in the checkpoint
      out.interrupted = true;
      return out;
    }
    engine = make(seed);
  }
  auto in_progress = [&](int64_t k) {
    StateWriter w;
    w.put_u64(static_cast<uint64_t>(SlotKind::InProgress));
    w.put_i64(done);
    w.put_i64(k);
    w.put_records(out.records);
    StateWriter e;
    engine->save_state(e);
    w.put_string(e.bytes());
    return w.take();
  };
  // The stop rule watches the directions the heads must split along: those whose prior
  // mean is zero (along the others they all align together, docs/model.md §10). A resumed run
  // replays its records through the rule.
  std::vector<int> watched;
  if (sim.stop_when_specialised > 0) {
    const Eigen::VectorXd mean = model.prior.mean();
    for (int f = 0; f < model.F(); ++f)
      if (mean[f] == 0) watched.push_back(f);
  }
  for (const Record& r : out.records)
    std::erase_if(watched, [&](int f) { return head_spread(r.op.M, f) > sim.stop_when_specialised; });
  const double steps_per_t = static_cast<double>(sim.D) / model.batch;
  CheckpointClock clock(ckpt ? ckpt->every : 0, steps_per_t, done);
  for (int64_t k = k0; k <= sim.records(); ++k) {
    const int64_t target = sim.steps_at(k, model.batch);
    for (; done < target; ++done) {
      if (ckpt) {
        if (ckpt->interrupted()) {
          slots->update(run, in_progress(k), false);
          out.interrupted = true;
          return out;
        }
        if (clock.due(done)) slots->update(run, in_progress(k), true);
      }
      engine->step(static_cast<uint64_t>(done));
      if (engine->diverged()) {
        out.diverged = true;
        out.diverged_at = static_cast<double>(done + 1) * model.batch / static_cast<double>(sim.D);
        return out;
      }
    }
    Record rec;
    rec.run = run;
    rec.t = static_cast<double>(done) * model.batch / static_cast<double>(sim.D);
    rec.op = engine->order_parameters();
    if (!rec.op.all_finite()) {
      out.diverged = true;
      out.diverged_at = rec.t;
      break;
    }
    rec.loss = population_error(model, rec.op, seed, sim.test_samples).mean;
    out.records.push_back(std::move(rec));
    if (progress) progress(run, out.records.back().t);
    if (!watched.empty()) {
      std::erase_if(watched, [&](int f) { return head_spread(out.records.back().op.M, f) > sim.stop_when_specialised; });
      if (watched.empty()) break;
    }
  }
  return out;
}

}  // namespace

Trajectory run_sgd(const EngineFactory& make, const ModelSpec& model, const SimulationSpec& sim, int run,
                   const ProgressFn& progress) {
  return run_one(make, model, sim, run, progress, nullptr, nullptr);
}

std::vector<Trajectory> run_sgd_runs(const EngineFactory& make, const ModelSpec& model, const SimulationSpec& sim,
                                     const ProgressFn& progress, const Checkpointing* checkpointing) {
  std::vector<Trajectory> out(sim.runs);
  RunSlots slots(checkpointing, "simulate", sim.runs);
  RunSlots* slots_used = checkpointing ? &slots : nullptr;
  // Runs in parallel; inside a run the engine's own parallel loops then run on one thread
  // (nested parallelism is off), with the same results by construction.
  std::vector<std::exception_ptr> failed(static_cast<std::size_t>(sim.runs));
#pragma omp parallel for schedule(dynamic, 1) if (sim.runs > 1)
  for (int run = 0; run < sim.runs; ++run) {
    try {
      out[run] = run_one(make, model, sim, run, progress, slots_used, checkpointing);
      // A finished run's slot holds its trajectory, so later checkpoints keep it.
      if (slots_used && !out[run].interrupted) slots.update(run, finished_slot(out[run]), false);
    } catch (...) {  // an exception must not leave a parallel region
      failed[run] = std::current_exception();
    }
  }
  for (const auto& e : failed)
    if (e) std::rethrow_exception(e);
  if (checkpointing && std::any_of(out.begin(), out.end(), [](const Trajectory& t) { return t.interrupted; }))
    slots.save();
  return out;
}

}  // namespace headspec
