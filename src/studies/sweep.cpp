#include "headspec/sweep.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <stdexcept>
#include <variant>

#include "headspec/atomic_file.hpp"
#include "headspec/errors.hpp"
#include "headspec/input_file.hpp"
#include "headspec/io.hpp"
#include "headspec/parameters.hpp"
#include "headspec/sha256.hpp"

namespace headspec {
namespace {

std::vector<std::string> split(const std::string& text, const std::string& separators) {
  std::vector<std::string> out(1);
  for (char ch : text) {
    if (separators.find(ch) != std::string::npos)
      out.emplace_back();
    else
      out.back() += ch;
  }
  return out;
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

// One integer of a range a:b; throws UsageError.
int64_t parse_integer(const std::string& text) {
  const auto v = parse_numbers(text, "grid");
  if (v.size() != 1 || v[0] != std::floor(v[0]) || std::abs(v[0]) > 9.0e15)
    throw UsageError(fmt::format("'{}' is not an integer", text));
  return static_cast<int64_t>(v[0]);
}

// The grid key of a model flag or D, as the flag is spelled; also its Python keyword.
std::string grid_key(const std::string& key) {
  for (const auto& p : model_parameters())
    if (key == keyword_of(p.name)) return p.name;
  return key;
}

// Sets one model setting (or D) from its grid value, as its command-line flag would.
void apply(const std::string& key, const std::string& value, ModelSettings& m, int64_t& D) {
  if (key == "D") return set_from_text(FieldRef(&D), key, value);
  for (const auto& p : model_parameters())
    if (p.name == key) return set_from_text(p.field(m), p.name, value);
  throw ParameterError("grid", fmt::format("unknown key '{}'", key));
}

// How a grid axis splits its values, from the key's parameter: a value with commas inside
// (kCommasInValue) is separated by '|' alone; "a:b" is an integer range for numbers (D, the
// numeric flags, ν's numbers text), a part of the value for other text ("mixture:FILE",
// "power:T0,P").
struct GridValueRules {
  bool commas_inside = false;
  bool colon_is_range = true;
};

GridValueRules rules_of(const std::string& key) {
  for (const auto& p : model_parameters())
    if (p.name == key) {
      ModelSettings m;
      const bool text = std::holds_alternative<std::string*>(p.field(m));
      return {(p.flags & kCommasInValue) != 0, !text || (p.flags & kNumbersText) != 0};
    }
  return {};  // D
}

}  // namespace

std::vector<std::string> grid_keys(bool with_D) {
  std::vector<std::string> keys;
  for (const auto& p : model_parameters()) keys.push_back(p.name);
  if (with_D) keys.push_back("D");
  return keys;
}

std::vector<GridAxis> parse_grid(const std::string& text, bool with_D) {
  const auto keys = grid_keys(with_D);
  std::vector<GridAxis> axes;
  for (const std::string& raw : split(text, ";")) {
    const std::string item = trim(raw);
    if (item.empty()) {
      if (raw.empty() && axes.empty() && text.empty()) break;
      throw ParameterError("grid", fmt::format("empty axis in '{}'", text));
    }
    const auto eq = item.find('=');
    if (eq == std::string::npos) throw ParameterError("grid", fmt::format("'{}' is not key=values", item));
    GridAxis axis;
    axis.key = trim(item.substr(0, eq));
    axis.key = grid_key(axis.key);
    if (std::find(keys.begin(), keys.end(), axis.key) == keys.end())
      throw ParameterError("grid", fmt::format("unknown key '{}' (available: {})", axis.key, fmt::join(keys, ", ")));
    for (const auto& a : axes)
      if (a.key == axis.key) throw ParameterError("grid", fmt::format("key '{}' appears twice", axis.key));
    const GridValueRules rules = rules_of(axis.key);
    for (const std::string& part : split(item.substr(eq + 1), rules.commas_inside ? "|" : ",|")) {
      const std::string v = trim(part);
      if (v.empty()) throw ParameterError("grid", fmt::format("{} has an empty value in '{}'", axis.key, item));
      const auto colon = v.find(':');
      if (colon != std::string::npos && rules.colon_is_range) {
        int64_t a = 0, b = 0;
        try {
          a = parse_integer(v.substr(0, colon));
          b = parse_integer(v.substr(colon + 1));
        } catch (const UsageError&) {
          throw ParameterError("grid", fmt::format("{}: '{}' is not an integer range a:b", axis.key, v));
        }
        if (a > b) throw ParameterError("grid", fmt::format("{}: empty range {} (need a <= b)", axis.key, v));
        if (b - a >= 100000) throw ParameterError("grid", fmt::format("{}: range {} has more than 10^5 values", axis.key, v));
        for (int64_t x = a; x <= b; ++x) axis.values.push_back(std::to_string(x));
      } else {
        axis.values.push_back(v);
      }
    }
    axes.push_back(std::move(axis));
  }
  return axes;
}

std::vector<GridPoint> grid_points(const std::vector<GridAxis>& axes, const ModelSettings& base, int64_t base_D) {
  std::size_t count = 1;
  for (const auto& a : axes) {
    count *= a.values.size();
    if (count > 1000000) throw ParameterError("grid", "more than 10^6 grid points");
  }
  std::vector<GridPoint> points;
  points.reserve(count);
  for (std::size_t n = 0; n < count; ++n) {
    GridPoint p;
    p.model = base;
    p.D = base_D;
    p.index.resize(axes.size());
    // Row-major: the last axis varies fastest.
    std::size_t rest = n;
    for (std::size_t a = axes.size(); a-- > 0;) {
      p.index[a] = rest % axes[a].values.size();
      rest /= axes[a].values.size();
    }
    std::string where;
    try {
      for (std::size_t a = 0; a < axes.size(); ++a) {
        where = axes[a].key + "=" + axes[a].values[p.index[a]];
        apply(axes[a].key, axes[a].values[p.index[a]], p.model, p.D);
      }
      where.clear();
      p.model.to_spec();
    } catch (const UsageError& e) {
      if (where.empty())
        for (std::size_t a = 0; a < axes.size(); ++a)
          where += (a ? ";" : "") + axes[a].key + "=" + axes[a].values[p.index[a]];
      throw ParameterError("grid", fmt::format("at {}: {}", where, e.what()));
    }
    points.push_back(std::move(p));
  }
  return points;
}

namespace {

// "HSTR", then the format's version: a reader refuses bytes of another layout.
constexpr char kTrajectoryMagic[4] = {'H', 'S', 'T', 'R'};
constexpr uint32_t kTrajectoryFormat = 1;
// The first line of a work-folder file; its key follows on the second line.
// Format 2: the key, then the SHA-256 of the serialised trajectory (a damaged file is
// computed again, never reused). Files of format 1 are computed again.
constexpr std::string_view kTaskHeader = "headspec sweep task 2\n";
// A task file holds one run's records: far below this even at 10^7 records.
constexpr std::size_t kMaxTaskFileBytes = std::size_t(1) << 34;

class ByteWriter {
 public:
  template <class T>
  void put(T value) {
    char raw[sizeof(T)];
    std::memcpy(raw, &value, sizeof(T));
    out_.append(raw, sizeof(T));
  }
  void put(const Eigen::MatrixXd& m) {
    put<int64_t>(m.rows());
    put<int64_t>(m.cols());
    put_doubles(m.data(), static_cast<std::size_t>(m.size()));
  }
  void put(const Eigen::VectorXd& v) {
    put<int64_t>(v.size());
    put_doubles(v.data(), static_cast<std::size_t>(v.size()));
  }
  std::string take() { return std::move(out_); }

 private:
  void put_doubles(const double* p, std::size_t n) {
    if (n > 0) out_.append(reinterpret_cast<const char*>(p), sizeof(double) * n);
  }
  std::string out_;
};

class ByteReader {
 public:
  explicit ByteReader(std::string_view bytes) : bytes_(bytes) {}
  template <class T>
  T get() {
    T value;
    std::memcpy(&value, take(sizeof(T)), sizeof(T));
    return value;
  }
  int64_t get_size(int64_t limit) {
    const auto n = get<int64_t>();
    if (n < 0 || n > limit) throw std::runtime_error(fmt::format("serialized trajectory: bad size {}", n));
    return n;
  }
  void get(Eigen::MatrixXd& m) {
    const int64_t rows = get_size(1 << 20), cols = get_size(1 << 20);
    m.resize(rows, cols);
    doubles_into(m.data(), static_cast<std::size_t>(rows * cols));
  }
  void get(Eigen::VectorXd& v) {
    v.resize(get_size(1 << 20));
    doubles_into(v.data(), static_cast<std::size_t>(v.size()));
  }
  bool at_end() const { return pos_ == bytes_.size(); }
  std::size_t left() const { return bytes_.size() - pos_; }

 private:
  // An empty Eigen object's data() is null, and memcpy from or to null is undefined even
  // for zero bytes (UBSan reports it): copy only when there is something to copy.
  void doubles_into(double* out, std::size_t n) {
    const char* src = take(sizeof(double) * n);
    if (n > 0) std::memcpy(out, src, sizeof(double) * n);
  }
  const char* take(std::size_t n) {
    if (n > bytes_.size() - pos_) throw std::runtime_error("serialized trajectory: truncated");
    const char* p = bytes_.data() + pos_;
    pos_ += n;
    return p;
  }
  std::string_view bytes_;
  std::size_t pos_ = 0;
};

}  // namespace

std::string serialize_trajectory(const Trajectory& trajectory) {
  ByteWriter w;
  for (char ch : kTrajectoryMagic) w.put(ch);
  w.put(kTrajectoryFormat);
  w.put<uint8_t>(trajectory.diverged ? 1 : 0);
  w.put(trajectory.diverged_at);
  w.put<int64_t>(static_cast<int64_t>(trajectory.records.size()));
  for (const Record& r : trajectory.records) {
    w.put<int32_t>(r.run);
    w.put(r.t);
    w.put(r.loss);
    w.put(r.op.M);
    w.put(r.op.R);
    w.put(r.op.Q);
    w.put(r.op.c);
  }
  return w.take();
}

Trajectory deserialize_trajectory(std::string_view bytes) {
  ByteReader r(bytes);
  for (char ch : kTrajectoryMagic)
    if (r.get<char>() != ch) throw std::runtime_error("serialized trajectory: not a trajectory");
  if (r.get<uint32_t>() != kTrajectoryFormat) throw std::runtime_error("serialized trajectory: unknown format");
  Trajectory tr;
  const auto diverged = r.get<uint8_t>();
  if (diverged > 1) throw std::runtime_error("serialized trajectory: bad divergence flag");
  tr.diverged = diverged == 1;
  tr.diverged_at = r.get<double>();
  // Each record takes at least 68 bytes: a size beyond what is left is damage, not a record count.
  tr.records.resize(static_cast<std::size_t>(r.get_size(static_cast<int64_t>(r.left() / 68))));
  for (Record& rec : tr.records) {
    rec.run = r.get<int32_t>();
    rec.t = r.get<double>();
    rec.loss = r.get<double>();
    r.get(rec.op.M);
    r.get(rec.op.R);
    r.get(rec.op.Q);
    r.get(rec.op.c);
  }
  if (!r.at_end()) throw std::runtime_error("serialized trajectory: trailing bytes");
  return tr;
}

SweepWorkDir::SweepWorkDir(std::string folder) : folder_(std::move(folder)) {}

std::string SweepWorkDir::file_of(const std::string& key) const {
  return (std::filesystem::path(folder_) / (sha256_hex(key.data(), key.size()) + ".task")).string();
}

std::optional<Trajectory> SweepWorkDir::load(const std::string& key, std::string* problem) const {
  const std::string path = file_of(key);
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return std::nullopt;
  const std::string expected = std::string(kTaskHeader) + key + "\nsha256 ";
  try {
    const std::string text = read_input_file(path, "work-dir", kMaxTaskFileBytes);
    if (text.compare(0, expected.size(), expected) != 0)
      throw std::runtime_error("holds another task's key or another format");
    const std::size_t eol = text.find('\n', expected.size());
    if (eol == std::string::npos) throw std::runtime_error("is truncated");
    const std::string_view body = std::string_view(text).substr(eol + 1);
    if (text.substr(expected.size(), eol - expected.size()) != sha256_hex(body.data(), body.size()))
      throw std::runtime_error("is damaged or truncated (its SHA-256 does not match)");
    return deserialize_trajectory(body);
  } catch (const std::exception& e) {
    if (problem) *problem = fmt::format("{}: {}", path, e.what());
    return std::nullopt;
  }
}

void SweepWorkDir::store(const std::string& key, const Trajectory& trajectory) const {
  const std::string body = serialize_trajectory(trajectory);
  write_file_atomic(file_of(key),
                    fmt::format("{}{}\nsha256 {}\n", kTaskHeader, key, sha256_hex(body.data(), body.size())) + body);
}

void SweepWorkDir::check_task_entries(const std::vector<std::string>& keys) const {
  for (const auto& key : keys) {
    const std::string path = file_of(key);
    std::error_code ec;
    if (std::filesystem::symlink_status(path, ec).type() == std::filesystem::file_type::not_found) continue;
    if (regular_target(path).empty())
      throw UsageError(fmt::format("--work-dir: '{}' is not a regular file (a folder, FIFO, device or socket): "
                                   "remove it, or give another --work-dir",
                                   path));
  }
}

std::size_t SweepWorkDir::count_other_files(const std::vector<std::string>& keys) const {
  std::set<std::string> mine;
  for (const auto& k : keys) mine.insert(std::filesystem::path(file_of(k)).filename().string());
  std::size_t other = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(folder_, ec))
    if (entry.path().extension() == ".task" && !mine.count(entry.path().filename().string())) ++other;
  return other;
}

}  // namespace headspec
