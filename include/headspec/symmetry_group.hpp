#pragma once
// The symmetry group of the model (docs/model.md §6, "Symmetry"): sign flips θ_f → −θ_f of
// the prior's symmetric directions (which flip the column M_{:,f} of the state) times
// permutations of the heads (which permute the rows of M, R, c and the rows and columns of Q).
// The exact right-hand side is equivariant under both; the symmetric Monte Carlo method
// (theory_engine.hpp) closes its samples under this group and evaluates a state in its
// canonical head order, which makes the estimated right-hand side exactly equivariant too.
#include <cstddef>
#include <vector>

#include "headspec/model.hpp"
#include "headspec/order_parameters.hpp"

namespace headspec {

class SymmetryGroup {
 public:
  /// The head permutations kept: all H! of them for H ≤ kMaxFullHeads, the H cyclic shifts
  /// beyond (H! samples per orbit would be too many).
  static constexpr int kMaxFullHeads = 4;

  /// The kept permutations, or (every_permutation) all H! of them at any H — the whole group,
  /// which the linearisation averages over (linearisation.hpp; it refuses large groups first).
  explicit SymmetryGroup(const ModelSpec& model, bool every_permutation = false);

  /// The prior's sign-symmetric directions f (Prior::sign_symmetric_directions).
  const std::vector<int>& sign_directions() const { return signs_; }
  int sign_count() const { return 1 << signs_.size(); }
  /// permutations()[p][h]: the head whose numbers head h takes (identity first).
  const std::vector<std::vector<int>>& permutations() const { return perms_; }
  bool all_permutations() const { return all_perms_; }
  /// Elements: e = p · sign_count() + σ, σ's bit k flipping direction sign_directions()[k].
  int size() const { return static_cast<int>(perms_.size()) * sign_count(); }
  /// +1 or −1: the sign that element signs σ give direction f.
  double sign(int sigma, int f) const;

  /// The index p of the kept permutation whose permuted state is lexicographically smallest
  /// (M row-major, then R, Q, c), the first of equals: states that differ by a kept
  /// permutation have the same canonical form, bit for bit.
  int canonical_permutation(const OrderParameters& op) const;
  /// The state with head h taking head perm[h]'s numbers.
  static OrderParameters permute(const OrderParameters& op, const std::vector<int>& perm);

 private:
  std::vector<int> signs_;
  std::vector<std::vector<int>> perms_;
  bool all_perms_ = true;
};

}  // namespace headspec
