#pragma once
// Attention activations σ (docs/model.md §3); their maths is in include/headspec/kernel/activations.hpp.
#include <string>
#include <vector>

namespace headspec {

enum class Activation {
  Softmax,       ///< e^{s_hℓ} / Σ_ℓ' e^{s_hℓ'}
  Softmax1,      ///< e^{s_hℓ} / (1 + Σ_ℓ' e^{s_hℓ'}): a head may attend to nothing
  BayesSoftmax,  ///< e^{s_hℓ} / Σ_{h'ℓ'} e^{s_h'ℓ'}: one normalisation over heads and positions
  Linear,        ///< A = S (baseline)
  Sigmoid,       ///< 1 / (1 + e^{−s_hℓ}) entry by entry: a head may attend to several positions or none
};

/// softmax | softmax1 | bsoftmax | linear | sigmoid; throws UsageError naming --activation otherwise.
Activation parse_activation(const std::string& name);
/// Every activation's name, in order, joined by `separator`.
std::string activation_names(const char* separator);
/// Every activation, in the order of activation_names (for tests and studies over all of them).
std::vector<Activation> all_activations();
const char* to_string(Activation a);

/// How the readout weights c_h are set (docs/model.md §3).
enum class Readout {
  Learned,  ///< trained by SGD from c_h(0) = 1/H
  Sum,      ///< fixed c_h = 1
  Mean,     ///< fixed c_h = 1/H
};

Readout parse_readout(const std::string& name);
const char* to_string(Readout r);

}  // namespace headspec
