#pragma once
#include <stdexcept>
#include <string>

namespace headspec {

/// Bad input from the user (flag value, file content). The CLI prints what() on one line
/// and exits with status 2 before writing anything.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A run whose state became NaN or infinite (status 3 in the CLI).
class DivergenceError : public std::runtime_error {
 public:
  DivergenceError(const std::string& what, double t) : std::runtime_error(what), time(t) {}
  double time;
};

}  // namespace headspec
