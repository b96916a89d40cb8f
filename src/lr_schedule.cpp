// The learning-rate schedule (docs/model.md §4 "Schedules").
#include "headspec/lr_schedule.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>
#include <tuple>

#include "headspec/errors.hpp"
#include "headspec/input_file.hpp"
#include "headspec/number_text.hpp"
#include "headspec/settings.hpp"

namespace headspec {

namespace {

constexpr std::size_t kMaxTableBytes = std::size_t(1) << 26;  // ~10^6 rows of text

const char* kSpellings = "constant | inverse:T0 | power:T0,P | step:T1,F1,T2,F2,… | table:FILE";

std::string check_times_and_factors(const std::vector<std::pair<double, double>>& points, bool from_zero) {
  for (std::size_t i = 0; i < points.size(); ++i) {
    const auto [t, g] = points[i];
    if (!(t >= 0)) return fmt::format("time {} is negative", t);
    if (i > 0 && !(t > points[i - 1].first))
      return fmt::format("times must increase, got {} after {}", t, points[i - 1].first);
    if (!(g > 0)) return fmt::format("factor {} at t = {} must be > 0", g, t);
  }
  if (from_zero && points.empty()) return "the table has no rows";
  return {};
}

// Rows "t g": blank-, tab- or comma-separated, '#' starts a comment.
std::vector<std::pair<double, double>> read_table(const std::string& path, const std::string& flag) {
  std::istringstream in(read_input_file(path, flag, kMaxTableBytes));
  std::vector<std::pair<double, double>> points;
  std::string line;
  for (int row = 1; std::getline(in, line); ++row) {
    line = line.substr(0, line.find('#'));
    std::replace(line.begin(), line.end(), ',', ' ');
    std::istringstream fields(line);
    std::vector<std::string> words;
    for (std::string w; fields >> w;) words.push_back(w);
    if (words.empty()) continue;
    if (words.size() != 2)
      throw ParameterError(flag,
                           fmt::format("{} line {}: expected two numbers 't g', got {}", path, row, words.size()));
    points.emplace_back(parse_decimal(words[0], flag), parse_decimal(words[1], flag));
  }
  return points;
}

// inverse:T0 (P = 1) or power:T0,P, as (T0, P).
std::pair<double, double> decay_of(const std::string& kind, const std::string& args, const std::string& flag) {
  const auto v = parse_numbers(args, flag);
  const std::size_t want = kind == "inverse" ? 1 : 2;
  if (v.size() != want) throw ParameterError(flag, fmt::format("{} takes {} number(s), got '{}'", kind, want, args));
  if (!(v[0] > 0)) throw ParameterError(flag, fmt::format("T0 must be > 0, got {}", v[0]));
  if (want == 2 && !(v[1] > 0)) throw ParameterError(flag, fmt::format("the power P must be > 0, got {}", v[1]));
  return {v[0], want == 2 ? v[1] : 1.0};
}

// step:T1,F1,T2,F2,… as (T_i, F_i).
std::vector<std::pair<double, double>> steps_of(const std::string& args, const std::string& flag) {
  const auto v = parse_numbers(args, flag);
  if (v.size() % 2 != 0) throw ParameterError(flag, fmt::format("step takes pairs T,F; got {} numbers", v.size()));
  std::vector<std::pair<double, double>> points;
  for (std::size_t i = 0; i < v.size(); i += 2) points.emplace_back(v[i], v[i + 1]);
  return points;
}

}  // namespace

LrSchedule LrSchedule::parse(const std::string& text, const std::string& flag) {
  LrSchedule s;
  const auto colon = text.find(':');
  const std::string kind = text.substr(0, colon), args = colon == std::string::npos ? "" : text.substr(colon + 1);
  if (kind == "constant" && colon == std::string::npos) return s;
  const bool known = kind == "inverse" || kind == "power" || kind == "step" || kind == "table";
  if (!known) throw ParameterError(flag, fmt::format("unknown schedule '{}' (expected {})", text, kSpellings));
  if (args.empty()) throw ParameterError(flag, fmt::format("'{}' needs its numbers after ':' ({})", text, kSpellings));
  s.text_ = text;
  if (kind == "inverse" || kind == "power") {
    s.kind_ = kind == "inverse" ? Kind::Inverse : Kind::Power;
    std::tie(s.t0_, s.power_) = decay_of(kind, args, flag);
    return s;
  }
  s.kind_ = kind == "step" ? Kind::Step : Kind::Table;
  s.points_ = s.kind_ == Kind::Step ? steps_of(args, flag) : read_table(args, flag);
  if (const auto bad = check_times_and_factors(s.points_, s.kind_ == Kind::Table); !bad.empty())
    throw ParameterError(flag, s.kind_ == Kind::Table ? args + ": " + bad : bad);
  return s;
}

std::vector<std::pair<double, double>>::const_iterator LrSchedule::first_after(double t) const {
  return std::upper_bound(points_.begin(), points_.end(), t, [](double x, const auto& p) { return x < p.first; });
}

double LrSchedule::factor(double t) const {
  switch (kind_) {
    case Kind::Constant:
      return 1.0;
    case Kind::Inverse:
      return t0_ / (t0_ + t);
    case Kind::Power:
      return std::pow(1.0 + t / t0_, -power_);
    case Kind::Step: {
      const auto after = first_after(t);  // the factor is the last T_i ≤ t's
      return after == points_.begin() ? 1.0 : std::prev(after)->second;
    }
    case Kind::Table: {
      if (t <= points_.front().first) return points_.front().second;
      if (t >= points_.back().first) return points_.back().second;
      const auto hi = first_after(t), lo = std::prev(hi);
      const double w = (t - lo->first) / (hi->first - lo->first);
      return lo->second + w * (hi->second - lo->second);
    }
  }
  return 1.0;
}

void LrSchedule::to_json(nlohmann::json& model) const {
  if (constant()) return;  // no schedule: the sidecar of a run without one
  model["lr_schedule"] = text_;
  if (kind_ == Kind::Table) {
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& [t, g] : points_) rows.push_back({t, g});
    model["lr_schedule_table"] = rows;
  }
}

}  // namespace headspec
