// Checkpoint files (docs/checkpoints.md): raw little-endian values, a format version, the
// parameters as JSON and a SHA-256 over all of it.
#include "headspec/checkpoint.hpp"

#include <fmt/format.h>
#include <sys/stat.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

#include "headspec/errors.hpp"
#include "headspec/input_file.hpp"
#include "headspec/sha256.hpp"

namespace headspec {

static_assert(std::endian::native == std::endian::little, "checkpoints store little-endian raw values");

namespace {

[[noreturn]] void corrupt(const std::string& why) { throw ParameterError("resume", why); }

constexpr std::string_view kMagic = "headspec checkpoint\n";

}  // namespace

void StateWriter::put_u64(uint64_t v) { bytes_.append(reinterpret_cast<const char*>(&v), sizeof v); }

void StateWriter::put_f64(double v) { put_u64(std::bit_cast<uint64_t>(v)); }

void StateWriter::put_doubles(const double* p, std::size_t n) {
  put_u64(n);
  if (n > 0) bytes_.append(reinterpret_cast<const char*>(p), n * sizeof(double));  // p may be null when n = 0
}

void StateWriter::put_matrix(const Eigen::MatrixXd& m) {
  put_u64(static_cast<uint64_t>(m.rows()));
  put_u64(static_cast<uint64_t>(m.cols()));
  put_doubles(m.data(), static_cast<std::size_t>(m.size()));
}

void StateWriter::put_string(std::string_view s) {
  put_u64(s.size());
  bytes_.append(s);
}

void StateWriter::put_record(const Record& r) {
  put_i64(r.run);
  put_f64(r.t);
  put_f64(r.loss);
  put_f64(r.loss_se);
  put_matrix(r.op.M);
  put_matrix(r.op.R);
  put_matrix(r.op.Q);
  put_matrix(r.op.c);
}

void StateWriter::put_records(const std::vector<Record>& r) {
  put_u64(r.size());
  for (const Record& x : r) put_record(x);
}

std::string_view StateReader::take(std::size_t n) {
  if (n > bytes_.size() - pos_) corrupt("the checkpoint ends too early (truncated?)");
  const std::string_view out = bytes_.substr(pos_, n);
  pos_ += n;
  return out;
}

uint64_t StateReader::u64() {
  uint64_t v;
  std::memcpy(&v, take(sizeof v).data(), sizeof v);
  return v;
}

double StateReader::f64() { return std::bit_cast<double>(u64()); }

bool StateReader::boolean() {
  const uint64_t v = u64();
  if (v > 1) corrupt("the checkpoint holds an invalid flag");
  return v == 1;
}

std::vector<double> StateReader::doubles() {
  const uint64_t n = u64();
  if (n > (bytes_.size() - pos_) / sizeof(double)) corrupt("the checkpoint ends too early (truncated?)");
  std::vector<double> v(static_cast<std::size_t>(n));
  const auto bytes = take(v.size() * sizeof(double));
  if (!v.empty()) std::memcpy(v.data(), bytes.data(), bytes.size());  // memcpy with null is undefined even for 0 bytes
  return v;
}

void StateReader::doubles_into(double* p, std::size_t n) {
  if (u64() != n) corrupt("the checkpoint's state does not have the size these flags give");
  const auto bytes = take(n * sizeof(double));
  if (n > 0) std::memcpy(p, bytes.data(), bytes.size());
}

Eigen::MatrixXd StateReader::matrix() {
  const uint64_t rows = u64(), cols = u64();
  if (rows > (1u << 30) || cols > (1u << 30)) corrupt("the checkpoint holds an invalid matrix");
  Eigen::MatrixXd m(static_cast<Eigen::Index>(rows), static_cast<Eigen::Index>(cols));
  doubles_into(m.data(), static_cast<std::size_t>(m.size()));
  return m;
}

std::string StateReader::string() {
  const uint64_t n = u64();
  if (n > bytes_.size() - pos_) corrupt("the checkpoint ends too early (truncated?)");
  return std::string(take(static_cast<std::size_t>(n)));
}

Record StateReader::record() {
  Record r;
  r.run = static_cast<int>(i64());
  r.t = f64();
  r.loss = f64();
  r.loss_se = f64();
  r.op.M = matrix();
  r.op.R = matrix();
  r.op.Q = matrix();
  r.op.c = matrix();
  return r;
}

std::vector<Record> StateReader::records() {
  const uint64_t n = u64();
  if (n > bytes_.size() - pos_) corrupt("the checkpoint ends too early (truncated?)");
  std::vector<Record> out;
  out.reserve(static_cast<std::size_t>(n));
  for (uint64_t i = 0; i < n; ++i) out.push_back(record());
  return out;
}

void StateReader::expect_end() const {
  if (!at_end()) corrupt("the checkpoint has bytes past its state");
}

RunSlots::RunSlots(const Checkpointing* c, std::string_view tag, int runs)
    : c_(c), tag_(tag), slots_(static_cast<std::size_t>(runs)) {
  if (c == nullptr || c->resume.empty()) return;
  StateReader in(c->resume);
  if (in.string() != tag_) corrupt(fmt::format("the checkpoint is not one of {} runs", tag_));
  if (in.u64() != static_cast<uint64_t>(runs)) corrupt("the checkpoint holds another number of runs");
  for (auto& s : slots_) s = in.string();
  in.expect_end();
}

void RunSlots::update(int run, std::string state, bool save_now) {
  std::lock_guard lock(mutex_);
  slots_[static_cast<std::size_t>(run)] = std::move(state);
  if (!save_now || c_ == nullptr || !c_->save) return;
  StateWriter out;
  out.put_string(tag_);
  out.put_u64(slots_.size());
  for (const auto& s : slots_) out.put_string(s);
  c_->save(out.bytes());
}

void RunSlots::save() {
  std::lock_guard lock(mutex_);
  if (c_ == nullptr || !c_->save) return;
  StateWriter out;
  out.put_string(tag_);
  out.put_u64(slots_.size());
  for (const auto& s : slots_) out.put_string(s);
  c_->save(out.bytes());
}

CheckpointClock::CheckpointClock(double every, double steps_per_t, int64_t done)
    : every_(every), steps_per_t_(steps_per_t) {
  if (every_ > 0)
    while (at(next_j_) <= done) ++next_j_;
}

int64_t CheckpointClock::at(int64_t j) const {
  // Never two checkpoints at the same step, however small `every` is.
  return std::max<int64_t>(j, std::llround(static_cast<double>(j) * every_ * steps_per_t_));
}

bool CheckpointClock::due(int64_t done) {
  if (every_ <= 0 || done < at(next_j_)) return false;
  while (at(next_j_) <= done) ++next_j_;
  return true;
}

std::string encode_checkpoint(const nlohmann::json& params, const std::string& state) {
  StateWriter body;
  body.put_string(params.dump());
  body.put_string(state);
  return fmt::format("{}format {}\nsha256 {}\n", kMagic, kCheckpointFormat,
                     sha256_hex(body.bytes().data(), body.bytes().size())) +
         body.bytes();
}

bool is_checkpoint_file(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
  std::ifstream in(path, std::ios::binary);
  std::string head(kMagic.size(), '\0');
  return in.read(head.data(), static_cast<std::streamsize>(head.size())) && head == kMagic;
}

namespace {

// The body of the checkpoint `view` read from `path`, once its header and SHA-256 check.
std::string_view checked_body(const std::string& path, std::string_view view) {
  if (!view.starts_with(kMagic)) corrupt(fmt::format("'{}' is not a headspec checkpoint", path));
  std::size_t pos = kMagic.size();
  auto line = [&](std::string_view key) {
    const std::size_t end = view.find('\n', pos);
    if (end == std::string_view::npos || !view.substr(pos, end - pos).starts_with(key))
      corrupt(fmt::format("'{}' is not a headspec checkpoint (damaged header)", path));
    const std::string_view value = view.substr(pos + key.size(), end - pos - key.size());
    pos = end + 1;
    return std::string(value);
  };
  const std::string format = line("format ");
  if (format != std::to_string(kCheckpointFormat))
    corrupt(fmt::format("'{}' has checkpoint format {}, this headspec reads format {}", path, format,
                        kCheckpointFormat));
  const std::string digest = line("sha256 ");
  const std::string_view body = view.substr(pos);
  if (sha256_hex(body.data(), body.size()) != digest)
    corrupt(fmt::format("'{}' is corrupt or truncated (its SHA-256 does not match)", path));
  return body;
}

// Refuses a checkpoint written with other parameters, naming the first that differs (a JSON
// pointer such as /model/lr).
void check_same_parameters(const std::string& path, const nlohmann::json& saved, const nlohmann::json& params) {
  if (saved == params) return;
  const nlohmann::json patch = nlohmann::json::diff(saved, params);
  std::string where = patch.empty() ? "?" : patch[0].value("path", "?");
  std::string there = "absent", here = "absent";
  const nlohmann::json::json_pointer ptr(where);
  if (saved.contains(ptr)) there = saved.at(ptr).dump();
  if (params.contains(ptr)) here = params.at(ptr).dump();
  corrupt(fmt::format("'{}' was written with other parameters ({}: {} there, {} here)", path, where.substr(1), there,
                      here));
}

}  // namespace

std::string decode_checkpoint(const std::string& path, const nlohmann::json& params) {
  // The largest checkpoints (dense runs at D = 10^7) are a few GB; a larger file is not ours.
  const std::string file = read_input_file(path, "resume", std::size_t(1) << 36);
  StateReader reader(checked_body(path, file));
  nlohmann::json saved;
  try {
    saved = nlohmann::json::parse(reader.string());
  } catch (const nlohmann::json::exception&) {
    corrupt(fmt::format("'{}' holds unreadable parameters", path));
  }
  std::string state = reader.string();
  reader.expect_end();
  check_same_parameters(path, saved, params);
  return state;
}

}  // namespace headspec
