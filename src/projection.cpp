#include "headspec/projection.hpp"

#include <cmath>
#include <vector>


namespace headspec {

ProjectionSampler::ProjectionSampler(const ModelSpec& spec, const OrderParameters& op)
    : spec_(spec), M_(op.M), R_(op.R) {
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(op.orthogonal());
  const Eigen::VectorXd root = eig.eigenvalues().cwiseMax(0.0).cwiseSqrt();
  C_ = eig.eigenvectors() * root.asDiagonal() * eig.eigenvectors().transpose();
}

void ProjectionSampler::draw(RandomStream& rng, ProjectedSample& out) const {
  const int L = spec_.L, H = spec_.H, F = spec_.F();
  out.S.resize(H, L);
  out.lambda.resize(L, F);
  out.g.resize(L);
  out.theta.resize(F);
  out.lstar = static_cast<int>(rng.below(L));
  spec_.prior.sample(rng, out.theta.data());
  Eigen::VectorXd w(H);
  for (int l = 0; l < L; ++l) {
    for (int f = 0; f < F; ++f) out.lambda(l, f) = rng.normal();
    out.g[l] = rng.normal();
    for (int h = 0; h < H; ++h) w[h] = rng.normal();
    if (l == out.lstar) out.lambda.row(l) += out.theta.transpose();
    out.S.col(l) = M_ * out.lambda.row(l).transpose() + R_ * out.g[l] + C_ * w;
  }
  out.y = out.g[out.lstar] + (spec_.noise > 0 ? std::sqrt(spec_.noise) * rng.normal() : 0.0);
}

MeanEstimate population_error(const ModelSpec& spec, const OrderParameters& op, uint32_t seed, int samples) {
  const ProjectionSampler sampler(spec, op);
  return parallel_mean(samples, [&] {
    return [&sampler, &spec, &op, seed, kernel = AttentionKernel(spec.activation, spec.H, spec.L),
            s = ProjectedSample()](int64_t n) mutable {
      RandomStream rng(StreamId{seed, Purpose::Test, static_cast<uint32_t>(n), 0});
      sampler.draw(rng, s);
      kernel.forward(s.S, s.g, op.c);
      const double r = kernel.output() - s.y;
      return r * r;
    };
  });
}

}  // namespace headspec
