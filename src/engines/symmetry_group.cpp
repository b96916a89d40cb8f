#include "headspec/symmetry_group.hpp"

#include <algorithm>
#include <numeric>

namespace headspec {

namespace {

// The numbers a head permutation moves, in the packed order of the state (docs/model.md §5):
// M row-major, R, Q's upper triangle row by row, c.
std::vector<double> packed(const OrderParameters& op) {
  const int H = op.H(), F = op.F();
  std::vector<double> x;
  x.reserve(static_cast<std::size_t>(H * F + H + H * (H + 1) / 2 + op.c.size()));
  for (int h = 0; h < H; ++h)
    for (int f = 0; f < F; ++f) x.push_back(op.M(h, f));
  for (int h = 0; h < H; ++h) x.push_back(op.R[h]);
  for (int h = 0; h < H; ++h)
    for (int g = h; g < H; ++g) x.push_back(op.Q(h, g));
  for (Eigen::Index h = 0; h < op.c.size(); ++h) x.push_back(op.c[h]);
  return x;
}

}  // namespace

SymmetryGroup::SymmetryGroup(const ModelSpec& model, bool every_permutation)
    : signs_(model.prior.sign_symmetric_directions()) {
  const int H = model.H;
  std::vector<int> perm(H);
  std::iota(perm.begin(), perm.end(), 0);
  all_perms_ = every_permutation || H <= kMaxFullHeads;
  if (all_perms_) {
    do perms_.push_back(perm);
    while (std::next_permutation(perm.begin(), perm.end()));
    return;
  }
  for (int shift = 0; shift < H; ++shift) {
    for (int h = 0; h < H; ++h) perm[h] = (h + shift) % H;
    perms_.push_back(perm);
  }
}

double SymmetryGroup::sign(int sigma, int f) const {
  for (std::size_t k = 0; k < signs_.size(); ++k)
    if (signs_[k] == f) return (sigma >> k) & 1 ? -1.0 : 1.0;
  return 1.0;
}

OrderParameters SymmetryGroup::permute(const OrderParameters& op, const std::vector<int>& perm) {
  OrderParameters out = op;
  const int H = op.H();
  for (int h = 0; h < H; ++h) {
    out.M.row(h) = op.M.row(perm[h]);
    out.R[h] = op.R[perm[h]];
    for (int g = 0; g < H; ++g) out.Q(h, g) = op.Q(perm[h], perm[g]);
    if (op.c.size() == H) out.c[h] = op.c[perm[h]];
  }
  return out;
}

int SymmetryGroup::canonical_permutation(const OrderParameters& op) const {
  int best = 0;
  std::vector<double> best_x = packed(op);
  for (std::size_t p = 1; p < perms_.size(); ++p) {
    std::vector<double> x = packed(permute(op, perms_[p]));
    if (std::lexicographical_compare(x.begin(), x.end(), best_x.begin(), best_x.end())) {
      best = static_cast<int>(p);
      best_x = std::move(x);
    }
  }
  return best;
}

}  // namespace headspec
