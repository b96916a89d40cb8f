#pragma once
// Numbers as a user writes them, on the command line, in a sweep's grid or in a Python
// keyword given as text (docs/cli.md "Numbers"): decimal only, one number per value.
#include <cstdint>
#include <string>

namespace headspec {

/// A finite decimal number: [+-] digits [. digits] [e [+-] digits] (or starting with '.'),
/// nothing before or after it. Throws ParameterError(name, …) quoting the text as given:
/// an empty value, hex ("0x10"), "inf", "nan", "1,5", "2 3", or a value past the range of
/// a double.
double parse_decimal(const std::string& text, const std::string& name);

/// A decimal integer in [lo, hi]: digits, or a decimal number whose value is a whole number
/// ("1e4" is 10000). Leading zeros are decimal ("010" is 10, never octal). Out of range is
/// reported with the text as given, never clamped. Throws ParameterError(name, …).
int64_t parse_decimal_integer(const std::string& text, const std::string& name, int64_t lo, int64_t hi);

/// The shortest decimal text of the same integer or double (what CLI11 then converts).
std::string canonical_integer_text(const std::string& text, const std::string& name, int64_t lo, int64_t hi);
std::string canonical_real_text(const std::string& text, const std::string& name);

}  // namespace headspec
