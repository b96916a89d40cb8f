#include "headspec/dense_engine.hpp"

#include <algorithm>
#include <cmath>

#include "dense_sgd_step.hpp"
#include "headspec/checkpoint.hpp"
#include "headspec/projection.hpp"
#include "headspec/random.hpp"

namespace headspec {

DenseEngine::DenseEngine(const ModelSpec& model, int64_t D, uint32_t seed)
    : model_(model),
      D_(D),
      F_(model.F()),
      H_(model.H),
      L_(model.L),
      seed_(seed),
      chunks_((D + kChunk - 1) / kChunk),
      keys_(static_cast<std::size_t>(H_ * D)),
      tokens_(static_cast<std::size_t>(L_ * D)),
      partial_(static_cast<std::size_t>(chunks_ * H_ * L_)),
      c_(model.initial_readout()),
      c_grad_(Eigen::VectorXd::Zero(H_)),
      kernel_(model.activation, H_, L_),
      S_(H_, L_),
      G_(H_, L_),
      J_(H_, L_),
      g_(L_),
      theta_(F_) {
  if (model.batch > 1) batch_grad_.assign(static_cast<std::size_t>(H_ * D), 0.0);
  const double sd = std::sqrt(model.q0);
  for (int h = 0; h < H_; ++h) {
    double* row = keys_.data() + h * D_;
    fill_normal(StreamId{seed_, Purpose::KeyInit, static_cast<uint32_t>(h), 0}, 0, row, static_cast<std::size_t>(D_));
    for (int64_t d = 0; d < D_; ++d) row[d] *= sd;
  }
}

EngineFactory DenseEngine::factory(const ModelSpec& model, int64_t D) {
  return [model, D](uint32_t seed) { return std::make_unique<DenseEngine>(model, D, seed); };
}

// Stream layout of step n, batch slot b: lane b(L+1)+ℓ holds token ℓ's D noise
// coordinates, lane b(L+1)+L the sample's ℓ*, θ and label noise.
//
// Cost per sample (docs/performance.md): L·D Gaussians, then H·L dot products and H·L
// axpys of length D. One parallel region per sample; coordinates are split into chunks of
// kChunk, each drawn and multiplied while it is in cache, and the partial scores are added
// in chunk order, so the bits do not depend on the number of threads.
void DenseEngine::sample_update(uint64_t n, int b, double scale, double* target) {
  const uint32_t base = static_cast<uint32_t>(b * (L_ + 1));
  RandomStream scalars(StreamId{seed_, Purpose::Train, base + static_cast<uint32_t>(L_), n});
  const int lstar = static_cast<int>(scalars.below(L_));
  model_.prior.sample(scalars, theta_.data());
  const double xi = model_.noise > 0 ? scalars.normal() : 0.0;
#pragma omp parallel if (chunks_ >= kParallelChunks)
  {
#pragma omp for schedule(static)
    for (int64_t ch = 0; ch < chunks_; ++ch) draw_chunk_and_score(n, base, lstar, ch);
#pragma omp single
    forward_and_coefficients(lstar, xi);
#pragma omp for schedule(static)
    for (int64_t ch = 0; ch < chunks_; ++ch) update_chunk(ch, scale, target);
  }
}

// Draws chunk ch of the L tokens and forms its partial scores Σ_d k_hd x_ℓd.
void DenseEngine::draw_chunk_and_score(uint64_t n, uint32_t base, int lstar, int64_t ch) {
  const int64_t D = D_;
  const int H = H_, L = L_;
  const double* keys = keys_.data();
  const int64_t d0 = ch * kChunk, len = std::min(kChunk, D - d0);
  double* part = partial_.data() + ch * H * L;
  for (int l = 0; l < L; ++l) {
    double* x = tokens_.data() + l * D + d0;
    fill_normal(StreamId{seed_, Purpose::Train, base + static_cast<uint32_t>(l), n}, static_cast<uint64_t>(d0), x,
                static_cast<std::size_t>(len));
    // x_ℓ* += Σ_f θ_f u_f/√D = θ_f on coordinate f (docs/model.md §1).
    if (l == lstar)
      for (int f = 0; f < F_; ++f)
        if (f >= d0 && f < d0 + len) x[f - d0] += theta_[f];
    // Heads in pairs: two independent accumulator chains per pass over x (the chains,
    // not the memory, bound this loop). Each chain is summed exactly as the one-head loop.
    int h = 0;
    for (; h + 1 < H; h += 2) {
      const double* ka = keys + h * D + d0;
      const double* kb = ka + D;
      double acc_a = 0, acc_b = 0;
#pragma omp simd reduction(+ : acc_a, acc_b)
      for (int64_t d = 0; d < len; ++d) {
        acc_a += ka[d] * x[d];
        acc_b += kb[d] * x[d];
      }
      part[h * L + l] = acc_a;
      part[(h + 1) * L + l] = acc_b;
    }
    if (h < H) {
      const double* k = keys + h * D + d0;
      double acc = 0;
#pragma omp simd reduction(+ : acc)
      for (int64_t d = 0; d < len; ++d) acc += k[d] * x[d];
      part[h * L + l] = acc;
    }
  }
}

// The sample's forward pass and gradient coefficients G = r J (docs/model.md §3–4), from the
// partial scores added in chunk order (the same bits whatever the thread count).
void DenseEngine::forward_and_coefficients(int lstar, double xi) {
  const int64_t D = D_;
  const int H = H_, L = L_;
  const double inv_sqrt_d = 1.0 / std::sqrt(static_cast<double>(D));
  S_.setZero();
  for (int64_t ch = 0; ch < chunks_; ++ch) S_ += Eigen::Map<const RowMatrix>(partial_.data() + ch * H * L, H, L);
  S_ *= inv_sqrt_d;
  for (int l = 0; l < L; ++l) g_[l] = tokens_[l * D + F_];  // g_ℓ = x_ℓ·v*/√D
  kernel_.forward(S_, g_, c_);
  const double y = g_[lstar] + std::sqrt(model_.noise) * xi;
  last_target_ = y;
  const double r = kernel_.output() - y;
  if (!std::isfinite(r)) diverged_ = true;
  kernel_.apply_jacobian(g_, J_);
  G_ = r * J_;
  if (model_.readout == Readout::Learned) c_grad_ += r * kernel_.head_outputs();
}

// target_h −= scale Σ_ℓ G_hℓ x_ℓ on chunk ch: each token chunk is read once for all heads,
// and every coordinate still receives its L terms in the order ℓ = 0, 1, ….
void DenseEngine::update_chunk(int64_t ch, double scale, double* target) const {
  const int64_t D = D_;
  const int64_t d0 = ch * kChunk, len = std::min(kChunk, D - d0);
  for (int l = 0; l < L_; ++l) {
    const double* x = tokens_.data() + l * D + d0;
    for (int h = 0; h < H_; ++h) {
      const double a = scale * G_(h, l);
      double* k = target + h * D + d0;
#pragma omp simd
      for (int64_t d = 0; d < len; ++d) k[d] -= a * x[d];
    }
  }
}

void DenseEngine::step(uint64_t n) {
  dense_sgd_step(model_, model_.step_factor(n, D_), D_, keys_, batch_grad_, c_, c_grad_,
                 [&](int b, double scale, double* target) { sample_update(n, b, scale, target); });
}

void DenseEngine::save_state(StateWriter& out) const { save_keys_and_readout(out, keys_, c_); }

void DenseEngine::load_state(StateReader& in) { load_keys_and_readout(in, keys_, c_); }

MeanEstimate DenseEngine::recorded_error(const OrderParameters& op, int test_samples) const {
  return population_error(model_, op, seed_, test_samples);
}

OrderParameters DenseEngine::order_parameters() const {
  OrderParameters op;
  const double inv_sqrt_d = 1.0 / std::sqrt(static_cast<double>(D_));
  op.M.resize(H_, F_);
  op.R.resize(H_);
  for (int h = 0; h < H_; ++h) {
    const double* k = keys_.data() + h * D_;
    for (int f = 0; f < F_; ++f) op.M(h, f) = k[f] * inv_sqrt_d;  // k_h·u_f/D
    op.R[h] = k[F_] * inv_sqrt_d;                                  // k_h·v*/D
  }
  // Q = K Kᵀ/D, summed chunk by chunk in a fixed order.
  op.Q.setZero(H_, H_);
  for (int64_t ch = 0; ch < chunks_; ++ch) {
    const int64_t d0 = ch * kChunk, len = std::min(kChunk, D_ - d0);
    for (int h = 0; h < H_; ++h)
      for (int g = h; g < H_; ++g) {
        const double* a = keys_.data() + h * D_ + d0;
        const double* b = keys_.data() + g * D_ + d0;
        double acc = 0;
        for (int64_t d = 0; d < len; ++d) acc += a[d] * b[d];
        op.Q(h, g) += acc;
      }
  }
  op.Q /= static_cast<double>(D_);
  op.Q.triangularView<Eigen::StrictlyLower>() = op.Q.transpose();
  op.c = c_;
  return op;
}

}  // namespace headspec
