#pragma once
// Attention activations σ (MODEL.md §3).
#include <string>

namespace headspec {

enum class Activation {
  Softmax,       ///< e^{s_hℓ} / Σ_ℓ' e^{s_hℓ'}
  Softmax1,      ///< e^{s_hℓ} / (1 + Σ_ℓ' e^{s_hℓ'}): a head may attend to nothing
  BayesSoftmax,  ///< e^{s_hℓ} / Σ_{h'ℓ'} e^{s_h'ℓ'}: one normalisation over heads and positions
  Linear,        ///< A = S (baseline)
};

/// softmax | softmax1 | bsoftmax | linear; throws UsageError naming --activation otherwise.
Activation parse_activation(const std::string& name);
const char* to_string(Activation a);

/// How the readout weights c_h are set (MODEL.md §3).
enum class Readout {
  Learned,  ///< trained by SGD from c_h(0) = 1/H
  Sum,      ///< fixed c_h = 1
  Mean,     ///< fixed c_h = 1/H
};

Readout parse_readout(const std::string& name);
const char* to_string(Readout r);

}  // namespace headspec
