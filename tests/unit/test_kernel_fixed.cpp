// The attention kernel at fixed sizes (include/headspec/kernel_fixed.hpp) against the same
// kernel at run-time sizes (AttentionKernel): one code, the same numbers to rounding.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "headspec/kernel.hpp"
#include "headspec/kernel_fixed.hpp"

using namespace headspec;

namespace {

template <int H, int L>
void compare_kernels(Activation activation, double score_scale) {
  std::mt19937 gen(17 + H * 100 + L);
  std::normal_distribution<double> normal;
  AttentionKernel reference(activation, H, L);
  AttentionKernelFixed<H, L> fixed(activation);
  RowMatrix S(H, L), J_ref(H, L);
  Eigen::VectorXd g(L), c(H);
  double J[H * L];
  for (int trial = 0; trial < 200; ++trial) {
    for (int h = 0; h < H; ++h)
      for (int l = 0; l < L; ++l) S(h, l) = score_scale * normal(gen);
    for (int l = 0; l < L; ++l) g[l] = normal(gen);
    for (int h = 0; h < H; ++h) c[h] = normal(gen);
    reference.forward(S, g, c);
    reference.apply_jacobian(g, J_ref);
    fixed.forward(S.data(), g.data(), c.data());
    fixed.apply_jacobian(g.data(), J);
    // One code at both sizes; the compiler may still contract a product and a sum into one
    // multiply-add in one instance and not in the other, so the agreement is to rounding.
    // Relative to the size of the value (linear attention at scores of ±800 gives outputs
    // in the thousands); weights far below 1 must agree too.
    const double tol = 1e-14;
    auto close = [&](double b) { return tol * 10 * std::max(1.0, std::abs(b)); };
    for (int h = 0; h < H; ++h) {
      EXPECT_NEAR(fixed.head_outputs()[h], reference.head_outputs()[h], close(reference.head_outputs()[h]));
      for (int l = 0; l < L; ++l) {
        const double a = reference.attention()(h, l);
        EXPECT_NEAR(fixed.attention()[h * L + l], a, tol * std::max(std::abs(a), 1e-300) + 1e-300) << h << " " << l;
        EXPECT_NEAR(J[h * L + l], J_ref(h, l), close(J_ref(h, l)));
      }
    }
    EXPECT_NEAR(fixed.output(), reference.output(), close(reference.output()));
  }
}

}  // namespace

TEST(KernelFixed, MatchesAttentionKernel) {
  for (const Activation a : all_activations())
    for (const double scale : {1.0, 30.0, 800.0}) {
      compare_kernels<2, 4>(a, scale);
      compare_kernels<2, 5>(a, scale);
      compare_kernels<2, 10>(a, scale);
      compare_kernels<3, 7>(a, scale);
    }
}
