// Strict decimal numbers (docs/cli.md "Numbers"). std::stod and strtoll(base 0), which CLI11
// uses, accept hex, octal (a leading zero), "inf", "nan" and leading blanks, and CLI11 reads
// an empty value as 0: each of those silently changes what a user asked for.
#include "headspec/number_text.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "headspec/errors.hpp"

namespace headspec {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Length of the run of digits at text[i…].
std::size_t digits_at(const std::string& text, std::size_t i) {
  std::size_t j = i;
  while (j < text.size() && is_digit(text[j])) ++j;
  return j - i;
}

// Whether text is exactly one decimal number (the grammar of parse_decimal); `integral`
// is set when it is a plain run of digits with an optional sign.
bool is_decimal(const std::string& text, bool& integral) {
  std::size_t i = 0;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
  const std::size_t whole = digits_at(text, i);
  i += whole;
  integral = whole > 0 && i == text.size();
  std::size_t fraction = 0;
  if (i < text.size() && text[i] == '.') {
    fraction = digits_at(text, i + 1);
    i += 1 + fraction;
  }
  if (whole + fraction == 0) return false;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
    const std::size_t exponent = digits_at(text, i);
    if (exponent == 0) return false;
    i += exponent;
  }
  return i == text.size();
}

void check_grammar(const std::string& text, const std::string& name, bool& integral) {
  if (text.empty()) throw ParameterError(name, "empty value: expected a number");
  if (!is_decimal(text, integral)) throw ParameterError(name, fmt::format("'{}' is not a decimal number", text));
}

}  // namespace

double parse_decimal(const std::string& text, const std::string& name) {
  bool integral = false;
  check_grammar(text, name, integral);
  errno = 0;
  const double v = std::strtod(text.c_str(), nullptr);
  // strtod sets ERANGE on underflow too; only overflow is refused (a denormal or 0 is exact
  // enough for any parameter here, and is checked by the parameter's own range).
  if (!std::isfinite(v)) throw ParameterError(name, fmt::format("'{}' is out of the range of a double", text));
  return v;
}

int64_t parse_decimal_integer(const std::string& text, const std::string& name, int64_t lo, int64_t hi) {
  bool integral = false;
  check_grammar(text, name, integral);
  const auto out_of_range = [&] {
    return ParameterError(name, fmt::format("'{}' is out of range: must be in [{}, {}]", text, lo, hi));
  };
  if (integral) {
    errno = 0;
    const long long v = std::strtoll(text.c_str(), nullptr, 10);
    if (errno == ERANGE || v < lo || v > hi) throw out_of_range();
    return v;
  }
  const double v = parse_decimal(text, name);
  if (v != std::floor(v)) throw ParameterError(name, fmt::format("'{}' is not an integer", text));
  // Beyond 2^53 a double's whole numbers are not every integer: exact only as digits.
  if (std::abs(v) > 9007199254740992.0) {
    if (v < static_cast<double>(lo) || v > static_cast<double>(hi)) throw out_of_range();
    throw ParameterError(name, fmt::format("'{}' is too large to be exact; write its digits", text));
  }
  const auto n = static_cast<int64_t>(v);
  if (n < lo || n > hi) throw out_of_range();
  return n;
}

std::string canonical_integer_text(const std::string& text, const std::string& name, int64_t lo, int64_t hi) {
  return std::to_string(parse_decimal_integer(text, name, lo, hi));
}

std::string canonical_real_text(const std::string& text, const std::string& name) {
  return fmt::format("{}", parse_decimal(text, name));
}

}  // namespace headspec
