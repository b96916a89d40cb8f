// The Gram matrix of the kernel's Jacobian (AttentionKernel::jacobian_gram) against the sum
// of products of φ it stands for.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "headspec/kernel.hpp"

using namespace headspec;

TEST(KernelJacobianGram, EqualsSumOfPhiProducts) {
  std::mt19937_64 gen(3);
  std::normal_distribution<double> n(0.0, 1.0);
  for (Activation a : all_activations()) {
    const int H = 3, L = 6;
    AttentionKernel k(a, H, L);
    RowMatrix S(H, L);
    Eigen::VectorXd g(L), c(H);
    for (int h = 0; h < H; ++h)
      for (int l = 0; l < L; ++l) S(h, l) = 2 * n(gen);
    for (int l = 0; l < L; ++l) g[l] = n(gen);
    for (int h = 0; h < H; ++h) c[h] = n(gen);
    k.forward(S, g, c);
    Eigen::MatrixXd gram;
    k.jacobian_gram(gram);
    for (int h = 0; h < H; ++h)
      for (int hp = 0; hp < H; ++hp) {
        double ref = 0;
        for (int l = 0; l < L; ++l)
          for (int lp = 0; lp < L; ++lp) ref += k.phi(h, l, lp) * k.phi(hp, l, lp);
        EXPECT_NEAR(gram(h, hp), ref, 1e-12 * (1 + std::abs(ref))) << to_string(a) << " " << h << "," << hp;
      }
  }
}
