#pragma once
// Checkpoint and resume (docs/checkpoints.md). A run's state is small because every random
// number is a function of (seed, purpose, lane, step) (src/random): an SGD run is its engine
// state, its step counter and its records; a theory run its ODE state, step index and
// records. Doubles are stored as their raw bytes, so a resumed run continues bit for bit.
//
// The drivers (run_sgd_runs, TheoryRuns::run, run_mnist) serialise their state into one
// opaque string; the checkpoint file wraps it with a format version, the parameters that
// produced it (JSON) and a SHA-256 of everything, and is written atomically.
#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "headspec/order_parameters.hpp"

namespace headspec {

/// Appends values to a byte string: integers and doubles as their little-endian raw bytes.
class StateWriter {
 public:
  void put_u64(uint64_t v);
  void put_i64(int64_t v) { put_u64(static_cast<uint64_t>(v)); }
  void put_f64(double v);
  void put_bool(bool v) { put_u64(v ? 1 : 0); }
  void put_doubles(const double* p, std::size_t n);  ///< count, then the values
  void put_doubles(const std::vector<double>& v) { put_doubles(v.data(), v.size()); }
  void put_matrix(const Eigen::MatrixXd& m);  ///< rows, cols, column-major values
  void put_string(std::string_view s);
  void put_record(const Record& r);
  void put_records(const std::vector<Record>& r);
  const std::string& bytes() const { return bytes_; }
  std::string take() { return std::move(bytes_); }

 private:
  std::string bytes_;
};

/// Reads what StateWriter wrote; every read checks the remaining length and throws
/// ParameterError("resume", "…") rather than read past the end.
class StateReader {
 public:
  explicit StateReader(std::string_view bytes) : bytes_(bytes) {}
  uint64_t u64();
  int64_t i64() { return static_cast<int64_t>(u64()); }
  double f64();
  bool boolean();
  std::vector<double> doubles();
  /// Reads a count and exactly n values into p; throws if the count is not n.
  void doubles_into(double* p, std::size_t n);
  Eigen::MatrixXd matrix();
  std::string string();
  Record record();
  std::vector<Record> records();
  bool at_end() const { return pos_ == bytes_.size(); }
  /// Throws unless every byte was read.
  void expect_end() const;

 private:
  std::string_view take(std::size_t n);
  std::string_view bytes_;
  std::size_t pos_ = 0;
};

/// What a driver needs to checkpoint and resume. All members are optional.
struct Checkpointing {
  /// Set (by a signal handler) to ask the driver to stop at the next step boundary, save
  /// its state through `save` and return with Trajectory::interrupted set.
  const std::atomic<bool>* interrupt = nullptr;
  /// > 0: also save every `every` units of t (at the first step boundary past each multiple).
  double every = 0;
  /// Persists the driver's whole state (called from any thread, never concurrently).
  std::function<void(const std::string& state)> save;
  /// The state to continue from, as passed to `save` by an earlier run; empty: start afresh.
  std::string resume;

  bool interrupted() const { return interrupt != nullptr && interrupt->load(std::memory_order_relaxed); }
};

/// The states of K independent runs, one slot each: empty (not started), in progress or
/// finished, in whatever form the driver gives. Thread-safe; what `save` receives is the
/// concatenation of every slot, so runs that are checkpointed at different times (they run
/// in parallel) each continue from their own.
class RunSlots {
 public:
  /// Parses c->resume (if c and it are non-empty): refused with a UsageError unless it holds
  /// `runs` slots of the driver named `tag`.
  RunSlots(const Checkpointing* c, std::string_view tag, int runs);
  const std::string& slot(int run) const { return slots_[static_cast<std::size_t>(run)]; }
  /// Replaces slot `run`; with `save_now`, saves every slot at once.
  void update(int run, std::string state, bool save_now);
  /// Saves every slot (no-op without a save function).
  void save();

 private:
  const Checkpointing* c_;
  std::string tag_;
  std::vector<std::string> slots_;
  std::mutex mutex_;
};

/// When the periodic checkpoints of a run of `steps_per_t` steps per unit of t fall: the
/// first step count past each multiple of `every`.
class CheckpointClock {
 public:
  CheckpointClock(double every, double steps_per_t, int64_t done);
  /// True (once) when `done` has reached the next checkpoint time.
  bool due(int64_t done);

 private:
  int64_t at(int64_t j) const;
  double every_, steps_per_t_;
  int64_t next_j_ = 1;
};

/// The file format version this build writes and reads.
inline constexpr int kCheckpointFormat = 3;

/// The bytes of a checkpoint file: header lines (magic, format version, SHA-256 of the rest),
/// then the parameters (JSON) and the driver state.
std::string encode_checkpoint(const nlohmann::json& params, const std::string& state);

/// Reads and checks a checkpoint file; throws UsageError naming --resume (one line) if it
/// is missing, not a checkpoint, of another format version, corrupt (checksum), truncated,
/// or was written with other parameters than `params`. Returns the driver state.
std::string decode_checkpoint(const std::string& path, const nlohmann::json& params);

/// Whether path is a regular file that starts as a checkpoint does (its first header line).
bool is_checkpoint_file(const std::string& path);

}  // namespace headspec
