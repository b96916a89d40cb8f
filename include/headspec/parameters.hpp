#pragma once
// The parameter table (docs/cli.md "Parameters"): every flag of every subcommand is
// declared once, as a Parameter of the subcommand's settings struct.
// From the table come the CLI11 options (help text, defaults), the Python keywords (the
// flag's name with '_' for '-', the same defaults), the sweep grid keys (the model flags),
// the sidecar's parameter fields and with them a checkpoint's identity.
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "headspec/errors.hpp"
#include "headspec/settings.hpp"

namespace headspec {

/// The field of a settings struct that a parameter sets; its type is the flag's type.
using FieldRef = std::variant<int*, int64_t*, double*, std::string*, bool*, std::vector<double>*>;

enum ParameterFlag : unsigned {
  kShowDefault = 1u << 0,  ///< --help prints the default
  kCliOnly = 1u << 1,      ///< where output goes or how a run resumes: no Python keyword
  kRequired = 1u << 2,     ///< no default: must be given
  kNumbersText = 1u << 3,  ///< text of comma-separated numbers (Python also takes a number or a list)
  /// One value may hold commas (ν's list, a schedule's arguments): a sweep grid separates
  /// its values by '|' alone.
  kCommasInValue = 1u << 4,
};

/// A check of a numeric parameter: empty when fine, else what is wrong ("must be > 0, got 0").
using ParameterCheck = std::function<std::string(double)>;

template <class S>
struct Parameter {
  std::string name;  ///< as on the command line, without the dashes
  std::string help;  ///< one line of --help
  std::function<FieldRef(S&)> field;
  unsigned flags = kShowDefault;
  std::string sidecar;   ///< the sidecar object that holds it under its keyword (empty: none)
  ParameterCheck check;  ///< numbers only; empty: checked elsewhere (or not at all)

  bool cli_only() const { return (flags & kCliOnly) != 0; }
};

template <class S>
using ParameterTable = std::vector<Parameter<S>>;

/// The Python keyword of a flag: dashes become underscores ("init-D" → "init_D").
std::string keyword_of(const std::string& name);

/// A parameter bound to a data member of S (or of a base of S).
template <class S, class B, class T>
Parameter<S> parameter(std::string name, T B::*member, std::string help, unsigned flags = kShowDefault,
                       std::string sidecar = {}, ParameterCheck check = {}) {
  return {std::move(name), std::move(help),
          [member](S& s) -> FieldRef { return &(static_cast<B&>(s).*member); }, flags, std::move(sidecar),
          std::move(check)};
}

/// The parameters of `inner`, reached from S through `project` (the model settings of a sweep),
/// their help text after `help_prefix` (which engines of a sweep take them).
template <class S, class Inner>
ParameterTable<S> nested(const ParameterTable<Inner>& inner, Inner& (*project)(S&), const std::string& help_prefix = {}) {
  ParameterTable<S> out;
  for (const auto& p : inner)
    out.push_back({p.name, help_prefix + p.help, [f = p.field, project](S& s) { return f(project(s)); }, p.flags,
                   p.sidecar, p.check});
  return out;
}

template <class S>
ParameterTable<S>& append(ParameterTable<S>& table, const ParameterTable<S>& more) {
  table.insert(table.end(), more.begin(), more.end());
  return table;
}

/// The model flags (docs/model.md §1–4), in --help order.
const ParameterTable<ModelSettings>& model_parameters();
/// The rows of model_parameters() that set the model's plain numbers (ModelNumbers), with
/// the checks that ModelSpec::validate runs.
const ParameterTable<ModelNumbers>& model_number_parameters();

/// Runs every parameter's check in table order; throws ParameterError for the first bad one.
template <class S>
void check_parameters(const ParameterTable<S>& table, const S& settings) {
  S& s = const_cast<S&>(settings);  // read only: the accessors return pointers into s
  for (const auto& p : table) {
    if (!p.check) continue;
    const std::string bad = std::visit(
        [&](auto* v) -> std::string {
          using T = std::remove_cvref_t<decltype(*v)>;
          if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>)
            return p.check(static_cast<double>(*v));
          else
            return {};
        },
        p.field(s));
    if (!bad.empty()) throw ParameterError(p.name, bad);
  }
}

/// Every parameter's value as {keyword: value} (the model's numbers in its sidecar object).
template <class S>
nlohmann::json parameter_values(const ParameterTable<S>& table, const S& settings) {
  S& s = const_cast<S&>(settings);  // read only, as in check_parameters
  nlohmann::json j = nlohmann::json::object();
  for (const auto& p : table) std::visit([&](auto* v) { j[keyword_of(p.name)] = *v; }, p.field(s));
  return j;
}

/// The parameters with a sidecar object, as {object: {keyword: value}}.
template <class S>
nlohmann::json sidecar_parameters(const ParameterTable<S>& table, const S& settings) {
  S& s = const_cast<S&>(settings);
  nlohmann::json j = nlohmann::json::object();
  for (const auto& p : table)
    if (!p.sidecar.empty()) std::visit([&](auto* v) { j[p.sidecar][keyword_of(p.name)] = *v; }, p.field(s));
  return j;
}

/// Sets a parameter from its text as on the command line (a sweep's grid value); throws
/// ParameterError naming it.
void set_from_text(const FieldRef& field, const std::string& name, const std::string& text);

/// Common checks.
/// Finite and > 0; `what` begins the message ("learning rate must be > 0, got 0").
ParameterCheck positive(std::string what = {});
ParameterCheck non_negative(std::string what = {});  ///< finite and >= 0, as positive
ParameterCheck at_least(double n);  ///< >= n

}  // namespace headspec
