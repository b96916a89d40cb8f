#include "headspec/sweep.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "headspec/errors.hpp"

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

// One number of an integer setting; throws UsageError naming `flag`.
int64_t parse_integer(const std::string& text, const std::string& flag) {
  const auto v = parse_list(text, flag);
  if (v.size() != 1 || v[0] != std::floor(v[0]) || std::abs(v[0]) > 9.0e15)
    throw UsageError(fmt::format("{}: '{}' is not an integer", flag, text));
  return static_cast<int64_t>(v[0]);
}

double parse_number(const std::string& text, const std::string& flag) {
  const auto v = parse_list(text, flag);
  if (v.size() != 1) throw UsageError(fmt::format("{}: expected one number, got '{}'", flag, text));
  return v[0];
}

int parse_int(const std::string& text, const std::string& flag) {
  const int64_t v = parse_integer(text, flag);
  if (v < -(1LL << 30) || v > (1LL << 30)) throw UsageError(fmt::format("{}: {} is out of range", flag, text));
  return static_cast<int>(v);
}

// Sets one model setting (or D) from its grid value, as its command-line flag would.
void apply(const std::string& key, const std::string& value, ModelSettings& m, int64_t& D) {
  const std::string flag = "--" + (key == "readout_lr" ? std::string("readout-lr") : key);
  if (key == "prior") m.prior = value;
  else if (key == "nu") m.nu = value;
  else if (key == "L") m.L = parse_int(value, flag);
  else if (key == "H") m.H = parse_int(value, flag);
  else if (key == "activation") m.activation = value;
  else if (key == "readout") m.readout = value;
  else if (key == "readout-lr" || key == "readout_lr") m.readout_lr = value;
  else if (key == "lr") m.lr = parse_number(value, flag);
  else if (key == "batch") m.batch = parse_int(value, flag);
  else if (key == "noise") m.noise = parse_number(value, flag);
  else if (key == "q0") m.q0 = parse_number(value, flag);
  else if (key == "D") D = parse_integer(value, flag);
  else throw UsageError(fmt::format("--grid: unknown key '{}'", key));
}

}  // namespace

std::vector<std::string> grid_keys(bool with_D) {
  std::vector<std::string> keys = {"prior", "nu", "L", "H", "activation", "readout",
                                   "readout-lr", "lr", "batch", "noise", "q0"};
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
      throw UsageError(fmt::format("--grid: empty axis in '{}'", text));
    }
    const auto eq = item.find('=');
    if (eq == std::string::npos) throw UsageError(fmt::format("--grid: '{}' is not key=values", item));
    GridAxis axis;
    axis.key = trim(item.substr(0, eq));
    if (axis.key == "readout_lr") axis.key = "readout-lr";
    if (std::find(keys.begin(), keys.end(), axis.key) == keys.end())
      throw UsageError(fmt::format("--grid: unknown key '{}' (available: {})", axis.key, fmt::join(keys, ", ")));
    for (const auto& a : axes)
      if (a.key == axis.key) throw UsageError(fmt::format("--grid: key '{}' appears twice", axis.key));
    for (const std::string& part : split(item.substr(eq + 1), axis.key == "nu" ? "|" : ",|")) {
      const std::string v = trim(part);
      if (v.empty()) throw UsageError(fmt::format("--grid: {} has an empty value in '{}'", axis.key, item));
      const auto colon = v.find(':');
      // "a:b" is an integer range, except inside a prior's "mixture:FILE".
      if (colon != std::string::npos && axis.key != "prior") {
        int64_t a = 0, b = 0;
        try {
          a = parse_integer(v.substr(0, colon), "--grid");
          b = parse_integer(v.substr(colon + 1), "--grid");
        } catch (const UsageError&) {
          throw UsageError(fmt::format("--grid: {}: '{}' is not an integer range a:b", axis.key, v));
        }
        if (a > b) throw UsageError(fmt::format("--grid: {}: empty range {} (need a <= b)", axis.key, v));
        if (b - a >= 100000) throw UsageError(fmt::format("--grid: {}: range {} has more than 10^5 values", axis.key, v));
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
    if (count > 1000000) throw UsageError("--grid: more than 10^6 grid points");
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
      throw UsageError(fmt::format("--grid: at {}: {}", where, e.what()));
    }
    points.push_back(std::move(p));
  }
  return points;
}

}  // namespace headspec
