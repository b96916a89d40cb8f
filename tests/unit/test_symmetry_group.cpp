// The model's symmetry group (include/headspec/symmetry_group.hpp, docs/model.md §6 "Symmetry"):
// the prior's sign-symmetric directions and the head permutations kept.
#include <gtest/gtest.h>

#include <vector>

#include "headspec/model.hpp"
#include "headspec/prior.hpp"
#include "headspec/symmetry_group.hpp"

using namespace headspec;

TEST(SymmetryGroup, SignDirectionsAndPermutations) {
  ModelSpec m;
  EXPECT_EQ(SymmetryGroup(m).sign_directions(), std::vector<int>{1});
  EXPECT_EQ(SymmetryGroup(m).size(), 4);
  m.prior = Prior::gauss(Eigen::Vector3d(1, 2, 3));
  m.H = 3;
  EXPECT_EQ(SymmetryGroup(m).size(), 8 * 6);
  m.prior = Prior::spike(Eigen::Vector2d(1, 2));
  m.H = 6;  // past kMaxFullHeads: the cyclic shifts
  const SymmetryGroup cyclic(m);
  EXPECT_FALSE(cyclic.all_permutations());
  EXPECT_EQ(cyclic.size(), 6);
  Eigen::MatrixXd atoms(2, 2);
  atoms << 1.0, 1.0, 1.0, -1.0;
  EXPECT_EQ(Prior::mixture(atoms, Eigen::Vector2d(1, 1)).sign_symmetric_directions(), std::vector<int>{1});
  EXPECT_TRUE(Prior::mixture(atoms, Eigen::Vector2d(1, 2)).sign_symmetric_directions().empty());
}
