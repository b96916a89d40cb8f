#include "headspec/kernel.hpp"

namespace headspec {

void AttentionKernel::jacobian_gram(Eigen::MatrixXd& out) const {
  const int H = this->H();
  Eigen::VectorXd upper(H * (H + 1) / 2);
  core_.jacobian_gram(upper.data());
  out.resize(H, H);
  int q = 0;
  for (int h = 0; h < H; ++h)
    for (int g = h; g < H; ++g, ++q) out(h, g) = out(g, h) = upper[q];
}

}  // namespace headspec
