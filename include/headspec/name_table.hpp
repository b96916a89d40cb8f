#pragma once
// The names of an enum's values on the command line, in one table per enum: parsing,
// printing and the list shown in help and errors come from the same entries.
#include <fmt/format.h>

#include <array>
#include <string>
#include <utility>
#include <vector>

#include "headspec/errors.hpp"

namespace headspec {

template <class E, std::size_t N>
struct NameTable {
  std::array<std::pair<E, const char*>, N> entries;
  const char* flag;  ///< the flag that takes these names, e.g. "--readout" (ParameterError: "readout")
  const char* what;  ///< what a name names, e.g. "readout"

  /// The value named `name`; throws ParameterError naming the flag and listing every name.
  E parse(const std::string& name) const {
    for (const auto& [value, known] : entries)
      if (name == known) return value;
    throw ParameterError(flag + 2, fmt::format("unknown {} '{}' ({})", what, name, names(", ")));
  }
  const char* name(E value) const {
    for (const auto& [known, text] : entries)
      if (value == known) return text;
    return "?";
  }
  /// Every name, in order, joined by `separator`.
  std::string names(const char* separator) const {
    std::string out;
    for (const auto& entry : entries) out += (out.empty() ? "" : separator) + std::string(entry.second);
    return out;
  }
  std::vector<E> values() const {
    std::vector<E> out;
    for (const auto& entry : entries) out.push_back(entry.first);
    return out;
  }
};

}  // namespace headspec
