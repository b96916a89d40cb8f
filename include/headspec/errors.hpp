#pragma once
#include <stdexcept>
#include <string>
#include <utility>

namespace headspec {

/// Bad input from the user (flag value, file content). The CLI prints what() on one line
/// and exits with status 2 before writing anything.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Bad value of one parameter of the parameter table (docs/cli.md "Parameters"), named as on
/// the command line without dashes: the CLI prints `--name: reason`, the Python module
/// raises ValueError naming the keyword `name=` (docs/cli.md "Parameters").
class ParameterError : public UsageError {
 public:
  ParameterError(std::string name, std::string reason)
      : UsageError("--" + name + ": " + reason), name_(std::move(name)), reason_(std::move(reason)) {}
  const std::string& name() const { return name_; }
  const std::string& reason() const { return reason_; }

 private:
  std::string name_;
  std::string reason_;
};

/// A computation stopped because its stop flag was set (Ctrl-C in a Python call, README
/// "Python"); the caller, which set the flag, reports it.
class Interrupted : public std::runtime_error {
 public:
  Interrupted() : std::runtime_error("interrupted") {}
};

/// A run whose state became NaN or infinite (status 3 in the CLI).
class DivergenceError : public std::runtime_error {
 public:
  DivergenceError(const std::string& what, double t) : std::runtime_error(what), time(t) {}
  double time;
};

}  // namespace headspec
