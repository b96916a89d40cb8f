#include "headspec/activation.hpp"

#include <fmt/format.h>

#include "headspec/errors.hpp"

namespace headspec {

Activation parse_activation(const std::string& name) {
  if (name == "softmax") return Activation::Softmax;
  if (name == "softmax1") return Activation::Softmax1;
  if (name == "bsoftmax") return Activation::BayesSoftmax;
  if (name == "linear") return Activation::Linear;
  throw UsageError(fmt::format("--activation: unknown activation '{}' (softmax, softmax1, bsoftmax, linear)", name));
}

const char* to_string(Activation a) {
  switch (a) {
    case Activation::Softmax: return "softmax";
    case Activation::Softmax1: return "softmax1";
    case Activation::BayesSoftmax: return "bsoftmax";
    case Activation::Linear: return "linear";
  }
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
