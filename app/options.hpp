#pragma once
// The subcommands' flags from the parameter table, and their output (docs/cli.md).
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <functional>
#include <string>
#include <vector>

#include <limits>
#include <type_traits>
#include <variant>

#include "headspec/command_settings.hpp"
#include "headspec/errors.hpp"
#include "headspec/number_text.hpp"
#include "headspec/parameters.hpp"
#include "headspec/run_files.hpp"

namespace headspec::app {

/// A CLI11 transform that checks a number's text as docs/cli.md "Numbers" says (decimal only,
/// an empty value refused, an integer's range checked as given) and hands CLI11 the shortest
/// decimal text of the same value, so that its own conversion (octal, hex) never applies.
template <class T>
CLI::Validator decimal_text(const std::string& name) {
  return CLI::Validator(
      [name](std::string& text) -> std::string {
        try {
          if constexpr (std::is_floating_point_v<T>)
            text = canonical_real_text(text, name);
          else
            text = canonical_integer_text(text, name, std::numeric_limits<T>::min(), std::numeric_limits<T>::max());
        } catch (const ParameterError& e) {
          return e.reason();
        }
        return {};
      },
      "");  // no name: --help keeps CLI11's INT / FLOAT
}

/// A text flag given as '' (`--out ''`, `--resume ''`) is refused, never taken as absent.
inline CLI::Validator non_empty_text() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        return text.empty() ? "an empty value (leave the flag out for its default)" : std::string();
      },
      "");
}

/// The CLI11 options of a subcommand, from its parameter table (docs/cli.md "Parameters"):
/// `--name`, the table's help, the default printed where the table says so.
template <class S>
void add_parameters(CLI::App* app, const ParameterTable<S>& table, S& settings) {
  for (const auto& p : table) {
    const std::string flag = "--" + p.name;
    CLI::Option* opt = std::visit(
        [&](auto* v) -> CLI::Option* {
          using T = std::remove_cvref_t<decltype(*v)>;
          if constexpr (std::is_same_v<T, bool>)
            return app->add_flag(flag, *v, p.help);
          else if constexpr (std::is_same_v<T, std::vector<double>>)
            return app->add_option(flag, *v, p.help)->delimiter(',')->transform(decimal_text<double>(p.name));
          else if constexpr (std::is_arithmetic_v<T>)
            return app->add_option(flag, *v, p.help)->transform(decimal_text<T>(p.name));
          else if (p.name == "grid")  // '' is the grid of one point (docs/cli.md)
            return app->add_option(flag, *v, p.help);
          else
            return app->add_option(flag, *v, p.help)->check(non_empty_text());
        },
        p.field(settings));
    if (p.flags & kShowDefault) opt->capture_default_str();
    if (p.flags & kRequired) opt->required();
  }
}

/// The files of a run (checked together before any work, docs/cli.md "Output files"): --out
/// and its sidecar FILE.json (--out absent or "-": standard output, no sidecar), and the files
/// the model's flags name as inputs (ModelSettings::input_files). Throws UsageError naming the flag.
RunFiles run_files(const std::string& out, const ModelSettings& model, bool sidecar = true);

/// Whether --out asks for standard output.
inline bool to_stdout(const std::string& out) { return out.empty() || out == "-"; }

/// Writes text to standard output; throws std::runtime_error if it could not be (a full
/// disk, a closed pipe), so that the exit status says so.
void write_stdout(const std::string& text);

/// An output file besides the CSV (--summary, --tau, --keys): its sidecar role and content.
struct ExtraOutput {
  std::string role;  ///< key of its SHA-256 in the sidecar ("summary")
  std::string path;
  std::string content;
};

/// Writes the CSV to --out with its sidecar FILE.json, and the extra outputs, with one
/// commit point: every file is written to a temporary beside its target first (a failure
/// then changes nothing), the old sidecar is removed, the files are renamed, the sidecar
/// last; it records the SHA-256 of each ("sha256": {"csv": …}), so that a reader can tell
/// a CSV from a sidecar of another run. Without --out the CSV goes to standard output.
void write_output(const std::string& out, const std::string& csv, nlohmann::json sidecar,
                  const std::vector<ExtraOutput>& extras = {});

/// Lists the diverged runs in the sidecar ("diverged": [{run, t}]); returns 3 if any did, else 0.
int record_divergence(const std::vector<const Trajectory*>& trajectories, nlohmann::json& sidecar);
/// "try a smaller --lr (now …)", naming --readout-lr too when the readout has its own.
std::string smaller_step_advice(const ModelSpec& model);
/// One line on stderr per diverged run, with smaller_step_advice.
void report_divergence(const std::vector<const Trajectory*>& trajectories, const ModelSpec& model);
/// The rows of every run, run by run, for format_csv.
std::vector<const Record*> record_rows(const std::vector<const Trajectory*>& trajectories);

/// The end of an SGD command (simulate, mnist) once every run finished: the divergences into
/// the sidecar, the CSV of F latent columns with its sidecar and the extra outputs, the
/// checkpoint spent, a divergence reported. Returns the exit status (0 or 3).
int finish_sgd_command(const std::string& out, const std::vector<const Trajectory*>& runs, const ModelSpec& model,
                       int F, nlohmann::json& sidecar, const std::vector<ExtraOutput>& extras,
                       const std::function<void()>& checkpoint_spent);

/// --progress (docs/cli.md "Progress"): a bar redrawn in place on a terminal, or lines that
/// read well in a batch log.
enum class ProgressMode { Auto, Bar, Lines, Off };

/// Throws ParameterError naming --progress for anything but auto, bar, lines, off.
ProgressMode progress_mode(const std::string& text);

/// Progress on stderr. Bar: one line redrawn with '\r', at most ~5 times a second. Lines: a
/// line each time another 5 % is done. Auto: the bar when stderr is a terminal, otherwise
/// the lines, but only once the command has run for 10 s (a short run prints nothing).
class Progress {
 public:
  Progress(std::string label, double total, ProgressMode mode);
  void update(const std::string& what, double done);
  void finish();

 private:
  void bar(const std::string& what, double percent, long long now);
  void line(const std::string& what, double percent, long long now);

  std::string label_;
  double total_;
  ProgressMode mode_;     ///< Bar, Lines or Off (Auto resolved)
  long long quiet_ms_;    ///< Lines: nothing before this many ms from the start
  long long start_ms_;
  long long last_ms_ = 0;
  int next_step_ = 1;     ///< Lines: the next multiple of 5 % to report
};

}  // namespace headspec::app
