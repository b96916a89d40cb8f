// The prior's draw from quasi-random uniforms (Prior::from_uniforms, docs/model.md §6
// "Randomised quasi-Monte Carlo").
#include <gtest/gtest.h>

#include <utility>

#include "headspec/prior.hpp"

using namespace headspec;

TEST(PriorFromUniforms, GaussMixtureFlip) {
  const Prior g = Prior::gauss(Eigen::Vector2d(4.0, 1.0));
  EXPECT_EQ(g.uniforms_per_draw(), 2);
  double u[2] = {0.5, 0.975}, theta[2];
  g.from_uniforms(u, theta);
  EXPECT_EQ(theta[0], 0.0);
  EXPECT_NEAR(theta[1], 1.959963984540054, 1e-14);
  Eigen::MatrixXd atoms(3, 2);
  atoms << 1, 2, 3, 4, 5, 6;
  const Prior x = Prior::mixture(atoms, Eigen::Vector3d(0.2, 0.3, 0.5));
  EXPECT_EQ(x.uniforms_per_draw(), 1);
  for (auto [v, row] : {std::pair{0.1, 0}, {0.25, 1}, {0.49, 1}, {0.51, 2}, {0.99, 2}}) {
    x.from_uniforms(&v, theta);
    EXPECT_EQ(theta[0], atoms(row, 0)) << v;
  }
  const Prior f = Prior::flip(Eigen::Vector2d(4.0, 9.0));
  EXPECT_EQ(f.uniforms_per_draw(), 0);
  f.from_uniforms(nullptr, theta);
  EXPECT_EQ(theta[0], 2.0);
  EXPECT_EQ(theta[1], 3.0);
}
