#pragma once
// The learning-rate schedule (docs/model.md §4, "Schedules"; docs/cli.md "Learning-rate schedules"):
// a factor g(t) > 0 of time t = n/D that multiplies both learning rates, η(t) = η g(t) and
// η_c(t) = η_c g(t). Every engine takes g at the time its step or evaluation stands at:
// the SGD engines at t = nB/D before step n, the theory at the time of each stage.
#include <cstddef>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <utility>
#include <vector>

namespace headspec {

class LrSchedule {
 public:
  enum class Kind { Constant, Inverse, Power, Step, Table };

  /// g = 1.
  LrSchedule() = default;

  /// One of (T0, P > 0; times ≥ 0 and increasing, factors > 0, all finite)
  ///   constant               g = 1
  ///   inverse:T0             g = T0 / (T0 + t)
  ///   power:T0,P             g = (1 + t/T0)^(−P)
  ///   step:T1,F1,T2,F2,…     g = 1 before T1, F_i from T_i on
  ///   table:FILE             rows "t g" (# comments), g linear in t between rows and
  ///                          the first or last g outside them
  /// Throws ParameterError naming `flag` ("lr-schedule") with what is wrong.
  static LrSchedule parse(const std::string& text, const std::string& flag = "lr-schedule");

  double factor(double t) const;
  bool constant() const { return kind_ == Kind::Constant; }
  /// The sidecar's record: {"lr_schedule": text} plus, for a table, its rows
  /// ("lr_schedule_table": [[t, g], …]) so that a checkpoint's identity covers the file's content.
  void to_json(nlohmann::json& model) const;

 private:
  Kind kind_ = Kind::Constant;
  std::string text_ = "constant";  // as given (a table's file name as written)
  double t0_ = 1, power_ = 1;
  std::vector<std::pair<double, double>> points_;  // Step: (T_i, F_i); Table: (t, g)

  // Step, Table: the first point whose time is after t.
  std::vector<std::pair<double, double>>::const_iterator first_after(double t) const;
};

}  // namespace headspec
