#pragma once
// The attention kernel (kernel::AttentionCore) for sizes known at compile time, on plain
// row-major arrays: the reduced engine's fixed-size step calls it once per sample, where
// run-time sizes cost more in loop overhead than in arithmetic. The same code as
// AttentionKernel, compiled with constant bounds: the same numbers to rounding (the
// compiler may fuse a multiply and an add in one instance and not in the other;
// tests/test_kernel_fixed.cpp).
#include "headspec/kernel/attention_core.hpp"

namespace headspec {

/// Whether the reduced engine's fixed-size step serves this activation (the others take
/// the general step).
constexpr bool fixed_kernel_supports(Activation a) { return a == Activation::Softmax || a == Activation::Softmax1; }

template <int H, int L>
class AttentionKernelFixed : public kernel::AttentionCore<double, kernel::FixedSizes<H, L>> {
 public:
  explicit AttentionKernelFixed(Activation activation)
      : kernel::AttentionCore<double, kernel::FixedSizes<H, L>>(activation, {}) {}
};

}  // namespace headspec
