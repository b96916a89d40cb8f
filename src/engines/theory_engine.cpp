#include "headspec/theory_engine.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>

#include "headspec/kernel.hpp"
#include "headspec/projection.hpp"
#include "headspec/random.hpp"

namespace headspec {

StateLayout::StateLayout(int H, int F, bool learned_readout)
    : H_(H),
      F_(F),
      learned_(learned_readout),
      q_end_(static_cast<std::size_t>(H * F + H + H * (H + 1) / 2)),
      size_(q_end_ + (learned_readout ? static_cast<std::size_t>(H) : 0)) {}

std::size_t StateLayout::q_index(int h, int g) const {
  if (g < h) std::swap(h, g);
  // Rows 0..h−1 of the upper triangle hold Σ_{i<h} (H − i) entries.
  return static_cast<std::size_t>(H_ * F_ + H_ + h * H_ - h * (h - 1) / 2 + (g - h));
}

void StateLayout::pack(const OrderParameters& op, double* x) const {
  for (int h = 0; h < H_; ++h)
    for (int f = 0; f < F_; ++f) x[m_index(h, f)] = op.M(h, f);
  for (int h = 0; h < H_; ++h) x[r_index(h)] = op.R[h];
  for (int h = 0; h < H_; ++h)
    for (int g = h; g < H_; ++g) x[q_index(h, g)] = op.Q(h, g);
  if (learned_)
    for (int h = 0; h < H_; ++h) x[c_index(h)] = op.c[h];
}

OrderParameters StateLayout::unpack(const double* x, const Eigen::VectorXd& fixed_c) const {
  OrderParameters op;
  op.M.resize(H_, F_);
  op.R.resize(H_);
  op.Q.resize(H_, H_);
  for (int h = 0; h < H_; ++h)
    for (int f = 0; f < F_; ++f) op.M(h, f) = x[m_index(h, f)];
  for (int h = 0; h < H_; ++h) op.R[h] = x[r_index(h)];
  for (int h = 0; h < H_; ++h)
    for (int g = 0; g < H_; ++g) op.Q(h, g) = x[q_index(h, g)];
  if (learned_) {
    op.c.resize(H_);
    for (int h = 0; h < H_; ++h) op.c[h] = x[c_index(h)];
  } else {
    op.c = fixed_c;
  }
  return op;
}

double TheoryEvaluation::max_abs_rate() const {
  double m = 0;
  for (double v : rate) m = std::max(m, std::abs(v));
  return m;
}

namespace {

constexpr int64_t kStoreLimit = int64_t{1} << 25;  // doubles kept for Fixed mode (256 MB)
constexpr int kLanes = AttentionKernelBatch::kLanes;
static_assert(TheoryEngine::kBlock % kLanes == 0, "a block is whole batches");

}  // namespace

TheoryEngine::TheoryEngine(const ModelSpec& model, const TheoryOptions& options)
    : model_(model),
      options_(options),
      layout_(model.H, model.F(), model.readout == Readout::Learned),
      fixed_c_(model.initial_readout()),
      width_(model.F() + model.L * (model.F() + model.H + 1) + 1),
      batch_width_(model.L * (model.F() + model.H) +
                   (options.channel == ValueChannel::Sampled ? model.L + 1 : 0)) {
  const int64_t batches = (options_.samples + kLanes - 1) / kLanes;
  if (options_.mode == MonteCarloMode::Fixed && batches * kLanes * batch_width_ <= kStoreLimit) {
    stored_.resize(static_cast<std::size_t>(batches * batch_width_));
#pragma omp parallel
    {
      std::vector<double> aos(static_cast<std::size_t>(kLanes * width_));
#pragma omp for schedule(static)
      for (int64_t b = 0; b < batches; ++b) draw_batch(b, 0, aos.data(), stored_.data() + b * batch_width_);
    }
  }
}

// Sample n of draw `draw` is the stream (seed, MonteCarlo, lane n, step draw): θ first
// (the prior draws from the stream), then the standard normals in sample_width() order;
// θ is then added to position 1's ζ, which becomes λ_1.
void TheoryEngine::draw_sample(int64_t n, uint64_t draw, double* out) const {
  RandomStream rng(StreamId{options_.seed, Purpose::MonteCarlo, static_cast<uint32_t>(n), draw});
  const int F = model_.F();
  model_.prior.sample(rng, out);
  for (int i = F; i < width_; ++i) out[i] = rng.normal();
  for (int f = 0; f < F; ++f) out[F + f] += out[f];  // λ_ℓ* = ζ_ℓ* + θ, ℓ* = 1
}

// Samples kLanes·b … kLanes·b + kLanes − 1, one per lane, reordered to what evaluate()
// reads: (λ_ℓ, w_ℓ) for ℓ = 1…L, then with g sampled g_1…g_L and ξ. Lanes past the last
// sample are zeros and are never summed.
void TheoryEngine::draw_batch(int64_t b, uint64_t draw, double* aos, Lanes* soa) const {
  const int F = model_.F(), H = model_.H, L = model_.L, K = F + H, stride = K + 1;
  const bool sampled = options_.channel == ValueChannel::Sampled;
  for (int j = 0; j < kLanes; ++j) {
    const int64_t n = b * kLanes + j;
    double* z = aos + j * width_;
    if (n < options_.samples)
      draw_sample(n, draw, z);
    else
      std::fill(z, z + width_, 0.0);
    for (int l = 0; l < L; ++l) {
      const double* p = z + F + l * stride;
      for (int k = 0; k < K; ++k) soa[l * K + k][j] = p[k];
      if (sampled) soa[L * K + l][j] = p[K];
    }
    if (sampled) soa[L * K + L][j] = z[width_ - 1];
  }
}

void TheoryEngine::evaluate(const double* x, uint64_t draw, TheoryEvaluation& out) const {
  evaluate(layout_.unpack(x, fixed_c_), draw, out);
}

void TheoryEngine::evaluate(const OrderParameters& op, uint64_t draw, TheoryEvaluation& out) const {
  const int H = model_.H, L = model_.L, F = model_.F();
  const bool sampled = options_.channel == ValueChannel::Sampled;
  const bool learned = layout_.learned_readout();
  const int64_t N = options_.samples;
  const int64_t blocks = (N + kBlock - 1) / kBlock;
  const std::size_t dim = layout_.size();
  const std::size_t width = dim + 1;  // the rates, then r²
  const std::size_t err_index = dim;
  // Time counts samples (t = n/D, MODEL.md §0): a step of B samples moves the keys by the
  // mean of B gradients, so per unit t the drift is (η/B)·E and the noise (η²/B²)·E.
  const double B = model_.batch;
  const double drift = model_.lr / B, noise = model_.lr * model_.lr / (B * B), readout_drift = model_.readout_lr / B;
  const double sqrt_delta = std::sqrt(model_.noise);

  // s_ℓ = M λ_ℓ + R g_ℓ + C w_ℓ with C Cᵀ = Q⊥ (MODEL.md §5); the sampler's square root.
  // λ_ℓ and w_ℓ are adjacent in a stored batch, so s_hℓ = W_h·(λ_ℓ, w_ℓ) with W = [M C].
  OrderParameters op_used = op;
  if (!sampled) op_used.R.setZero();
  const Eigen::MatrixXd C = ProjectionSampler(model_, op_used).orthogonal_sqrt();
  const int K = F + H;
  RowMatrix W(H, K);
  W.leftCols(F) = op.M;
  W.rightCols(H) = C;
  const Eigen::VectorXd R = op_used.R;
  const Eigen::VectorXd c = op.c;
  // Entries of the state in layout order (M row-major, R, Q upper triangle, c).
  const std::size_t r_at = layout_.r_index(0), q_at = layout_.q_index(0, 0), c_at = learned ? layout_.c_index(0) : 0;
  const int HL = H * L, pairs = H * (H + 1) / 2;

  std::vector<double> sums(static_cast<std::size_t>(blocks) * width, 0.0), squares(sums.size(), 0.0);
  const bool stored = !stored_.empty() && options_.mode == MonteCarloMode::Fixed;

#pragma omp parallel if (blocks >= 8)
  {
    // Per-thread buffers, one sample per lane (AttentionKernelBatch).
    AttentionKernelBatch kernel(model_.activation, H, L);
    std::vector<double> aos(stored ? 0 : static_cast<std::size_t>(kLanes * width_));
    std::vector<Lanes> soa(stored ? 0 : static_cast<std::size_t>(batch_width_));
    std::vector<Lanes> S(HL), J(HL), e(L), gram(pairs), contrib(width), acc(width), acc_sq(width);
    const double* w_rows = W.data();
    Lanes* out = contrib.data();
#pragma omp for schedule(static)
    for (int64_t b = 0; b < blocks; ++b) {
      std::fill(acc.begin(), acc.end(), Lanes::Zero());
      std::fill(acc_sq.begin(), acc_sq.end(), Lanes::Zero());
      const int64_t n_end = std::min(N, (b + 1) * kBlock);
      for (int64_t n0 = b * kBlock; n0 < n_end; n0 += kLanes) {
        const int64_t batch = n0 / kLanes;
        const Lanes* z;
        if (stored) {
          z = stored_.data() + batch * batch_width_;
        } else {
          draw_batch(batch, options_.mode == MonteCarloMode::Fixed ? 0 : draw, aos.data(), soa.data());
          z = soa.data();
        }
        // Projections of the samples (ℓ* = 1 by exchangeability, MODEL.md §6): (λ_ℓ, w_ℓ)
        // at z[ℓ·K + k], then with g sampled g_ℓ at z[L·K + ℓ] and ξ at z[L·K + L].
        const Lanes* g = sampled ? z + L * K : nullptr;
        for (int h = 0; h < H; ++h) {
          const double* wr = w_rows + h * K;
          for (int l = 0; l < L; ++l) {
            const Lanes* p = z + l * K;
            Lanes s = sampled ? Lanes(R[h] * g[l]) : Lanes(Lanes::Zero());
            for (int k = 0; k < K; ++k) s += wr[k] * p[k];
            S[h * L + l] = s;
          }
        }
        kernel.forward(S.data(), g, c);
        // With G = r J (general path) or P = Φ e (g integrated out), both H×L in J:
        // dM_hf ∝ Σ_ℓ J_hℓ λ_ℓf, dQ_hg ∝ Σ_ℓ J_hℓ s_gℓ + J_gℓ s_hℓ.
        auto drift_terms = [&](const Lanes& scale) {
          const Lanes minus_scale = -drift * scale;
          for (int h = 0; h < H; ++h)
            for (int f = 0; f < F; ++f) {
              Lanes a = Lanes::Zero();
              for (int l = 0; l < L; ++l) a += J[h * L + l] * z[l * K + f];
              out[h * F + f] = minus_scale * a;
            }
          std::size_t q = q_at;
          for (int h = 0; h < H; ++h)
            for (int g2 = h; g2 < H; ++g2, ++q) {
              Lanes d = Lanes::Zero();
              for (int l = 0; l < L; ++l) d += J[h * L + l] * S[g2 * L + l] + J[g2 * L + l] * S[h * L + l];
              out[q] = minus_scale * d;
            }
        };
        if (sampled) {
          // General path: r = ŷ − y, J = ∂ŷ/∂S (MODEL.md §6).
          const Lanes r = kernel.output() - (g[0] + sqrt_delta * z[L * K + L]);
          kernel.apply_jacobian(g, J.data());
          drift_terms(r);
          for (int h = 0; h < H; ++h) {
            Lanes a = Lanes::Zero();
            for (int l = 0; l < L; ++l) a += J[h * L + l] * g[l];
            out[r_at + h] = -drift * r * a;
          }
          std::size_t q = q_at;
          for (int h = 0; h < H; ++h)
            for (int g2 = h; g2 < H; ++g2, ++q) {
              Lanes jj = Lanes::Zero();
              for (int l = 0; l < L; ++l) jj += J[h * L + l] * J[g2 * L + l];
              out[q] += noise * r * r * jj;
            }
          if (learned) {
            const Lanes* o = kernel.head_outputs();
            for (int h = 0; h < H; ++h) out[c_at + h] = -readout_drift * r * o[h];
          }
          out[err_index] = r * r;
        } else {
          // g integrated out (MODEL.md §7): e = a − e_ℓ*, P = Φ e, E_g[r J] = P,
          // E_g[r² J_hℓ J_h'ℓ] = (|e|² + Δ) Φ_hℓ·Φ_h'ℓ + 2 P_hℓ P_h'ℓ, E_g[r²] = |e|² + Δ.
          const Lanes* a = kernel.position_weights();
          Lanes e2 = Lanes::Zero();
          for (int l = 0; l < L; ++l) {
            e[l] = l == 0 ? Lanes(a[0] - 1.0) : a[l];
            e2 += e[l].square();
          }
          e2 += model_.noise;
          kernel.apply_jacobian(e.data(), J.data());  // P
          kernel.jacobian_gram(gram.data());         // Σ_ℓ Φ_hℓ·Φ_h'ℓ
          drift_terms(Lanes::Ones());
          for (int h = 0; h < H; ++h) out[r_at + h].setZero();
          std::size_t q = q_at;
          int p = 0;
          for (int h = 0; h < H; ++h)
            for (int g2 = h; g2 < H; ++g2, ++q, ++p) {
              Lanes pp = Lanes::Zero();
              for (int l = 0; l < L; ++l) pp += J[h * L + l] * J[g2 * L + l];
              out[q] += noise * (e2 * gram[p] + 2.0 * pp);
            }
          if (learned) {
            const Lanes* A = kernel.attention();
            for (int h = 0; h < H; ++h) {
              Lanes s = Lanes::Zero();
              for (int l = 0; l < L; ++l) s += e[l] * A[h * L + l];
              out[c_at + h] = -readout_drift * s;
            }
          }
          out[err_index] = e2;
        }
        // Each lane sums its own samples; the last batch of the last block may be partial.
        const int lanes = static_cast<int>(std::min<int64_t>(kLanes, N - n0));
        if (lanes == kLanes) {
          for (std::size_t i = 0; i < width; ++i) {
            acc[i] += out[i];
            acc_sq[i] += out[i].square();
          }
        } else {
          for (std::size_t i = 0; i < width; ++i)
            for (int j = 0; j < lanes; ++j) {
              acc[i][j] += out[i][j];
              acc_sq[i][j] += out[i][j] * out[i][j];
            }
        }
      }
      // A block's sum: its lanes in lane order (fixed, whatever the thread count).
      double* bsum = sums.data() + b * width;
      double* bsq = squares.data() + b * width;
      for (std::size_t i = 0; i < width; ++i)
        for (int j = 0; j < kLanes; ++j) {
          bsum[i] += acc[i][j];
          bsq[i] += acc_sq[i][j];
        }
    }
  }

  // Blocks in block order: the same bits whatever the thread count.
  std::vector<double> total(width, 0.0), total_sq(width, 0.0);
  for (int64_t b = 0; b < blocks; ++b)
    for (std::size_t i = 0; i < width; ++i) {
      total[i] += sums[b * width + i];
      total_sq[i] += squares[b * width + i];
    }
  const double n = static_cast<double>(N);
  auto stderr_of = [&](std::size_t i) {
    const double mean = total[i] / n;
    const double var = N > 1 ? (total_sq[i] - n * mean * mean) / (n - 1) : 0.0;
    return std::sqrt(std::max(var, 0.0) / n);
  };
  out.rate.resize(dim);
  out.rate_stderr.resize(dim);
  for (std::size_t i = 0; i < dim; ++i) {
    out.rate[i] = total[i] / n;
    out.rate_stderr[i] = stderr_of(i);
  }
  out.error = total[err_index] / n;
  out.error_stderr = stderr_of(err_index);
}

}  // namespace headspec
