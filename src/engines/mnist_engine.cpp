#include "headspec/mnist_engine.hpp"

#include <algorithm>
#include <cmath>

#include "dense_sgd_step.hpp"
#include "headspec/checkpoint.hpp"
#include "headspec/eigen_blocking.hpp"
#include "headspec/random.hpp"

namespace headspec {

MnistEngine::MnistEngine(const MnistTask& task, const ModelSpec& model, double nu, uint32_t seed)
    : task_(task),
      model_(model),
      nu_(nu),
      H_(model.H),
      L_(model.L),
      seed_(seed),
      chunks_((D + kChunk - 1) / kChunk),
      keys_(static_cast<std::size_t>(H_ * D)),
      vstar_(static_cast<std::size_t>(D)),
      tokens_(static_cast<std::size_t>(L_ * D)),
      partial_(static_cast<std::size_t>(chunks_ * (H_ + 1) * L_)),
      c_(model.initial_readout()),
      c_grad_(Eigen::VectorXd::Zero(H_)),
      kernel_(model.activation, H_, L_),
      S_(H_, L_),
      G_(H_, L_),
      J_(H_, L_),
      g_(L_) {
  fix_eigen_blocking();  // its products over D = 784 are blocked by cache size
  if (model.batch > 1) batch_grad_.assign(static_cast<std::size_t>(H_ * D), 0.0);
  const double sd = std::sqrt(model.q0);
  for (int h = 0; h < H_; ++h) {
    double* row = keys_.data() + h * D;
    fill_normal(StreamId{seed_, Purpose::KeyInit, static_cast<uint32_t>(h), 0}, 0, row, static_cast<std::size_t>(D));
    for (int64_t d = 0; d < D; ++d) row[d] *= sd;
  }
  fill_normal(StreamId{seed_, Purpose::Data, kValueLane, 0}, 0, vstar_.data(), vstar_.size());
  double norm2 = 0;
  for (double v : vstar_) norm2 += v * v;
  const double scale = std::sqrt(static_cast<double>(D) / norm2);
  for (double& v : vstar_) v *= scale;
}

// Stream layout of step n, batch slot b (as in the dense engine): lane b(L+1)+ℓ holds
// token ℓ's noise, lane b(L+1)+L the sample's ℓ*, training digit and label noise.
void MnistEngine::sample_gradient(uint64_t n, int b, RowMatrix& G) {
  const uint32_t base = static_cast<uint32_t>(b * (L_ + 1));
  RandomStream scalars(StreamId{seed_, Purpose::Train, base + static_cast<uint32_t>(L_), n});
  const int lstar = static_cast<int>(scalars.below(static_cast<uint32_t>(L_)));
  const double* spike = task_.train_digit(static_cast<int>(scalars.below(static_cast<uint32_t>(task_.n_train()))));
  const double xi = model_.noise > 0 ? scalars.normal() : 0.0;
  draw_tokens(n, base, lstar, spike);
  sum_partial_scores();

  kernel_.forward(S_, g_, c_);
  const double y = g_[lstar] + std::sqrt(model_.noise) * xi;  // y = x_ℓ*·v*/√D (+ label noise)
  const double r = kernel_.output() - y;
  if (!std::isfinite(r)) diverged_ = true;
  kernel_.apply_jacobian(g_, J_);
  G = r * J_;
  if (model_.readout == Readout::Learned) c_grad_ += r * kernel_.head_outputs();
}

// Tokens x_ℓ = z_ℓ (+ √ν p̂ at ℓ*, docs/model.md §11) chunk by chunk into tokens_, with each
// chunk's partial scores Σ_d k_hd x_ℓd and values Σ_d v*_d x_ℓd into partial_ (one thread: at
// D = 784 a step is too small to share).
void MnistEngine::draw_tokens(uint64_t n, uint32_t base, int lstar, const double* spike) {
  const int H = H_, L = L_;
  const double amp = std::sqrt(nu_);
  const double* keys = keys_.data();
  const double* vstar = vstar_.data();
  for (int64_t ch = 0; ch < chunks_; ++ch) {
    const int64_t d0 = ch * kChunk, len = std::min(kChunk, D - d0);
    double* part = partial_.data() + ch * (H + 1) * L;
    for (int l = 0; l < L; ++l) {
      double* x = tokens_.data() + l * D + d0;
      fill_normal(StreamId{seed_, Purpose::Train, base + static_cast<uint32_t>(l), n}, static_cast<uint64_t>(d0), x,
                  static_cast<std::size_t>(len));
      if (l == lstar)
        for (int64_t d = 0; d < len; ++d) x[d] += amp * spike[d0 + d];
      for (int h = 0; h <= H; ++h) {
        const double* k = h < H ? keys + h * D + d0 : vstar + d0;
        double acc = 0;
#pragma omp simd reduction(+ : acc)
        for (int64_t d = 0; d < len; ++d) acc += k[d] * x[d];
        part[h * L + l] = acc;
      }
    }
  }
}

// Scores S_hℓ = k_h·x_ℓ/√D and values g_ℓ = v*·x_ℓ/√D from the chunks' partial sums, added in
// chunk order.
void MnistEngine::sum_partial_scores() {
  const int H = H_, L = L_;
  S_.setZero();
  g_.setZero();
  for (int64_t ch = 0; ch < chunks_; ++ch) {
    const double* part = partial_.data() + ch * (H + 1) * L;
    S_ += Eigen::Map<const RowMatrix>(part, H, L);
    g_ += Eigen::Map<const Eigen::VectorXd>(part + H * L, L);
  }
  const double inv_sqrt_d = 1.0 / std::sqrt(static_cast<double>(D));
  S_ *= inv_sqrt_d;
  g_ *= inv_sqrt_d;
}

// target_h −= scale Σ_ℓ coef_hℓ x_ℓ for every head h (target is H × D).
void MnistEngine::add_tokens_times(double scale, const RowMatrix& coef, double* target) const {
  const int H = H_, L = L_;
  const double* tokens = tokens_.data();
// (one thread: at D = 784 a step is too small to share)
  for (int64_t ch = 0; ch < chunks_; ++ch) {
    const int64_t d0 = ch * kChunk, len = std::min(kChunk, D - d0);
    for (int h = 0; h < H; ++h) {
      double* k = target + h * D + d0;
      for (int l = 0; l < L; ++l) {
        const double a = scale * coef(h, l);
        const double* x = tokens + l * D + d0;
#pragma omp simd
        for (int64_t d = 0; d < len; ++d) k[d] -= a * x[d];
      }
    }
  }
}

void MnistEngine::step(uint64_t n) {
  dense_sgd_step(model_, model_.step_factor(n, D), D, keys_, batch_grad_, c_, c_grad_,
                 [&](int b, double scale, double* target) {
                   sample_gradient(n, b, G_);
                   add_tokens_times(scale, G_, target);
                 });
}

void MnistEngine::save_state(StateWriter& out) const { save_keys_and_readout(out, keys_, c_); }

void MnistEngine::load_state(StateReader& in) { load_keys_and_readout(in, keys_, c_); }

MeanEstimate MnistEngine::recorded_error(const OrderParameters& /*op*/, int test_samples) const {
  return test_error(test_samples);
}

std::string MnistEngine::final_state() const {
  StateWriter out;
  out.put_doubles(keys_);
  return out.take();
}

OrderParameters MnistEngine::order_parameters() const {
  using Keys = Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>;
  const Keys K(keys_.data(), H_, D);
  const Keys U(task_.directions.data(), kMnistClasses, D);
  const Eigen::Map<const Eigen::VectorXd> v(vstar_.data(), D);
  const double d = static_cast<double>(D);
  OrderParameters op;
  op.M = K * U.transpose() / std::sqrt(d);  // û_c has unit norm: M_hc = k_h·û_c/√D
  op.R = K * v / d;
  op.Q = K * K.transpose() / d;
  op.c = c_;
  return op;
}

std::vector<int> MnistEngine::test_digits(int samples, int n_test) {
  // All of them in turn, or, for fewer samples, evenly spaced along the test set (which is
  // ordered by class), so that every class keeps its share.
  std::vector<int> out(static_cast<std::size_t>(std::min(samples, n_test)));
  for (std::size_t k = 0; k < out.size(); ++k)
    out[k] = samples >= n_test ? static_cast<int>(k) : static_cast<int>(static_cast<int64_t>(k) * n_test / samples);
  return out;
}

// Symmetric square root of the covariance of (k_1·z, …, k_H·z, v*·z)/√D for z ~ N(0, I_D)
// (the background tokens' scores and value, docs/model.md §11).
Eigen::MatrixXd MnistEngine::background_root(const OrderParameters& op) const {
  const int H = H_;
  Eigen::MatrixXd sigma(H + 1, H + 1);
  sigma.topLeftCorner(H, H) = op.Q;
  sigma.topRightCorner(H, 1) = op.R;
  sigma.bottomLeftCorner(1, H) = op.R.transpose();
  sigma(H, H) = Eigen::Map<const Eigen::VectorXd>(vstar_.data(), D).squaredNorm() / static_cast<double>(D);
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(sigma);
  return eig.eigenvectors() * eig.eigenvalues().cwiseMax(0.0).cwiseSqrt().asDiagonal() * eig.eigenvectors().transpose();
}

// The spike's contribution √ν (K p̂, v*·p̂)/√D of each test digit p̂: scores H × digits, values.
MnistEngine::SpikeContributions MnistEngine::spike_contributions(const std::vector<int>& digits) const {
  const int used = static_cast<int>(digits.size());
  RowMatrix P(used, D);
  for (int k = 0; k < used; ++k) P.row(k) = Eigen::Map<const Eigen::RowVectorXd>(task_.test_digit(digits[k]), D);
  const Eigen::Map<const RowMatrix> K(keys_.data(), H_, D);
  const Eigen::Map<const Eigen::VectorXd> v(vstar_.data(), D);
  const double amp = std::sqrt(nu_) / std::sqrt(static_cast<double>(D));
  return {amp * (K * P.transpose()), amp * (P * v)};
}

// Test error: each sample's L tokens are Gaussian given the keys (their scores and value a
// linear map of H + 1 normals), the test digit's spike added at ℓ* (docs/model.md §11).
MeanEstimate MnistEngine::test_error(int samples) const {
  const int H = H_, L = L_;
  const Eigen::MatrixXd C = background_root(order_parameters());
  const std::vector<int> digits = test_digits(samples, task_.n_test());
  const SpikeContributions spike = spike_contributions(digits);

  // Sample n takes uniform n (its position) and normals [n·per, (n+1)·per) of one Test stream:
  // one fill for all samples, the same numbers at every call.
  const std::size_t per = static_cast<std::size_t>(L * (H + 1) + 1);
  const StreamId id{seed_, Purpose::Test, 0, 0};
  std::vector<double> normals(per * static_cast<std::size_t>(samples)), uniforms(static_cast<std::size_t>(samples));
  fill_normal(id, 0, normals.data(), normals.size());
  fill_uniform(id, 0, uniforms.data(), uniforms.size());

  AttentionKernel kernel(model_.activation, H, L);
  RowMatrix S(H, L);
  Eigen::VectorXd g(L), w(H + 1);
  double sum = 0, sum2 = 0;
  for (int n = 0; n < samples; ++n) {
    const double* z = normals.data() + per * static_cast<std::size_t>(n);
    const int lstar = std::min(L - 1, static_cast<int>(uniforms[n] * L));
    for (int l = 0; l < L; ++l) {
      w.noalias() = C * Eigen::Map<const Eigen::VectorXd>(z + l * (H + 1), H + 1);
      S.col(l) = w.head(H);
      g[l] = w[H];
    }
    const int digit = n % static_cast<int>(digits.size());
    S.col(lstar) += spike.scores.col(digit);
    g[lstar] += spike.values[digit];
    const double y = g[lstar] + std::sqrt(model_.noise) * z[per - 1];
    kernel.forward(S, g, c_);
    const double e = (kernel.output() - y) * (kernel.output() - y);
    sum += e;
    sum2 += e * e;
  }
  MeanEstimate out;
  out.mean = sum / samples;
  out.stderr_ = samples > 1 ? std::sqrt(std::max(0.0, sum2 / samples - out.mean * out.mean) / (samples - 1)) : 0.0;
  return out;
}

}  // namespace headspec
