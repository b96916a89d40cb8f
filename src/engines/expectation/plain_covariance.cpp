// The covariance of one sample's rates (docs/model.md §12): the diffusion Σ of the
// stochastic theory, from the plain samples with the value channel sampled.
#include <stdexcept>

#include "plain_method.hpp"

namespace headspec::expectation {

namespace {

using namespace theory_evaluation;

// Upper-triangle index of (i, j), i ≤ j, of an n×n matrix, row by row.
std::size_t pair_index(std::size_t i, std::size_t j, std::size_t n) { return i * n - i * (i - 1) / 2 + (j - i); }

// acc[i] += r_i, acc[n + pair(i, j)] += r_i r_j over the lanes of one batch, lanes past
// `valid` set to zero first (they hold no sample).
void add_products(std::vector<Lanes>& rates, std::size_t n, int64_t valid, std::vector<Lanes>& acc) {
  if (valid < kLanes)
    for (std::size_t i = 0; i < n; ++i)
      for (int64_t j = valid; j < kLanes; ++j) rates[i][j] = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    acc[i] += rates[i];
    for (std::size_t j = i; j < n; ++j) acc[n + pair_index(i, j, n)] += rates[i] * rates[j];
  }
}

}  // namespace

void PlainMethod::rate_covariance(const OrderParameters& op, Eigen::MatrixXd& cov, double t) const {
  if (options_.channel != ValueChannel::Sampled)
    throw std::logic_error("rate_covariance needs the plain method with the value channel sampled");
  const int64_t N = options_.samples;
  const int64_t blocks = (N + TheoryEngine::kBlock - 1) / TheoryEngine::kBlock;
  const std::size_t n = layout_.size(), width = n + 1, sums_width = n + n * (n + 1) / 2;
  RateInputs in;
  fill_rate_inputs(model_, options_.flow, t, layout_, true, false, op, in);
  const Path path = rate_path(model_);
  std::vector<double> sums(static_cast<std::size_t>(blocks) * sums_width, 0.0);
#pragma omp parallel if (blocks >= TheoryEngine::kParallelBlocks)
  {
    ThreadBuffers buf(model_, path, stored(), width, sample_width_, batch_width_);
    std::vector<Lanes> acc(sums_width);
#pragma omp for schedule(static)
    for (int64_t b = 0; b < blocks; ++b) {
      std::fill(acc.begin(), acc.end(), Lanes::Zero());
      const int64_t n_end = std::min(N, (b + 1) * TheoryEngine::kBlock);
      for (int64_t n0 = b * TheoryEngine::kBlock; n0 < n_end; n0 += kLanes) {
        lane_rates(path, in.k, batch_samples(n0 / kLanes, 0, buf.aos.data(), buf.soa.data()), width, buf);
        add_products(buf.rates, n, N - n0, acc);
      }
      double* block_sums = sums.data() + b * sums_width;
      for (std::size_t i = 0; i < sums_width; ++i) block_sums[i] = acc[i].sum();
    }
  }
  std::vector<double> total(sums_width, 0.0);
  for (int64_t b = 0; b < blocks; ++b)
    for (std::size_t i = 0; i < sums_width; ++i) total[i] += sums[b * sums_width + i];
  const double count = static_cast<double>(N);
  cov.resize(static_cast<Eigen::Index>(n), static_cast<Eigen::Index>(n));
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i; j < n; ++j) {
      const double c = (total[n + pair_index(i, j, n)] - total[i] * total[j] / count) / (count - 1);
      cov(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)) = c;
      cov(static_cast<Eigen::Index>(j), static_cast<Eigen::Index>(i)) = c;
    }
}

}  // namespace headspec::expectation
