#include "headspec/run_slot.hpp"

#include "headspec/checkpoint.hpp"
#include "headspec/errors.hpp"

namespace headspec::run_slot {

std::string finished(const Trajectory& trajectory, const std::string& extra) {
  StateWriter out;
  out.put_u64(static_cast<uint64_t>(Kind::Finished));
  out.put_records(trajectory.records);
  out.put_bool(trajectory.diverged);
  out.put_f64(trajectory.diverged_at);
  out.put_string(extra);
  return out.take();
}

std::string in_progress(const std::vector<Record>& records, const std::string& state) {
  StateWriter out;
  out.put_u64(static_cast<uint64_t>(Kind::InProgress));
  out.put_records(records);
  out.put_string(state);
  return out.take();
}

Slot read(const std::string& bytes) {
  StateReader in(bytes);
  Slot slot;
  const uint64_t kind = in.u64();
  if (kind != static_cast<uint64_t>(Kind::InProgress) && kind != static_cast<uint64_t>(Kind::Finished))
    throw ParameterError("resume", "the checkpoint holds an invalid run");
  slot.kind = static_cast<Kind>(kind);
  slot.trajectory.records = in.records();
  if (slot.kind == Kind::Finished) {
    slot.trajectory.diverged = in.boolean();
    slot.trajectory.diverged_at = in.f64();
  }
  slot.payload = in.string();
  in.expect_end();
  return slot;
}

}  // namespace headspec::run_slot
