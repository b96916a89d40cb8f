#include "headspec/activation.hpp"

#include <fmt/format.h>

#include <array>
#include <utility>

#include "headspec/errors.hpp"

namespace headspec {

namespace {

// Every activation's name on the command line, in the order listed (docs/model.md §3).
constexpr std::array<std::pair<Activation, const char*>, 5> kActivations{{
    {Activation::Softmax, "softmax"},
    {Activation::Softmax1, "softmax1"},
    {Activation::BayesSoftmax, "bsoftmax"},
    {Activation::Linear, "linear"},
    {Activation::Sigmoid, "sigmoid"},
}};

}  // namespace

std::string activation_names(const char* separator) {
  std::string out;
  for (const auto& [a, name] : kActivations) out += (out.empty() ? "" : separator) + std::string(name);
  return out;
}

std::vector<Activation> all_activations() {
  std::vector<Activation> out;
  for (const auto& entry : kActivations) out.push_back(entry.first);
  return out;
}

Activation parse_activation(const std::string& name) {
  for (const auto& [a, known] : kActivations)
    if (name == known) return a;
  throw UsageError(fmt::format("--activation: unknown activation '{}' ({})", name, activation_names(", ")));
}

const char* to_string(Activation a) {
  for (const auto& [known, name] : kActivations)
    if (a == known) return name;
  return "?";
}

Readout parse_readout(const std::string& name) {
  if (name == "learned") return Readout::Learned;
  if (name == "sum") return Readout::Sum;
  if (name == "mean") return Readout::Mean;
  throw UsageError(fmt::format("--readout: unknown readout '{}' (learned, sum, mean)", name));
}

const char* to_string(Readout r) {
  switch (r) {
    case Readout::Learned: return "learned";
    case Readout::Sum: return "sum";
    case Readout::Mean: return "mean";
  }
  return "?";
}

}  // namespace headspec
