#include "headspec/theory_engine.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>

#include "headspec/kernel.hpp"
#include "headspec/projection.hpp"
#include "headspec/random.hpp"

#include "headspec/kernel/exp_nonpositive.hpp"

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

// The softmax right-hand side, fused: the rates of a batch of samples (one per lane) in
// passes over the positions whose sums stay in registers, instead of AttentionKernelBatch's
// separate forward, apply_jacobian and jacobian_gram passes over H×L arrays in memory.
// Scores and exponentials run on all eight lanes of a batch (two AVX2 registers per
// operation: the exponentials are long dependency chains, and twice as many are then in
// flight), the sums on groups of four lanes (one register each, so that they fit).
// g integrated out (docs/model.md §7), with P = Φ e, Φ_hℓ,ℓ' = c_h A_hℓ (δ_ℓℓ' − A_hℓ'):
// P_hℓ = c_h u_hℓ, u_hℓ = A_hℓ (e_ℓ − μ_h), μ_h = Σ_ℓ A_hℓ e_ℓ, so c_h multiplies the sums
// over ℓ, not every term; dc_h/dt = −η_c Σ_ℓ e_ℓ A_hℓ = −η_c μ_h; and
// Σ_ℓ Φ_hℓ·Φ_gℓ = c_h c_g (Σ ab − Σ ab (a + b) + (Σ ab)²), a = A_hℓ, b = A_gℓ, as
// AttentionKernelBatch::jacobian_gram. g sampled (§6): J_hℓ = c_h A_hℓ (g_ℓ − o_h), the same
// way. Sizes known at compile time (FixedSizes) let the compiler unroll every pass;
// RuntimeSizes serves the others up to its capacities.
template <int H_, int L_, int F_>
struct FixedSizes {
  static constexpr int H = H_, L = L_, F = F_;
  static constexpr int kMaxH = H_, kMaxL = L_, kMaxF = F_;
};
struct RuntimeSizes {
  int H, L, F;
  static constexpr int kMaxH = 8, kMaxL = 16, kMaxF = 8;
  static bool fits(int h, int l, int f) { return h <= kMaxH && l <= kMaxL && f <= kMaxF; }
};

// What one evaluation's fused pass needs besides the samples.
struct SoftmaxConstants {
  const double* W;       // H×K row-major, W = [M C]: s_ℓ = W (λ_ℓ, w_ℓ)
  const double* c;       // readout, H
  bool softmax1;         // the extra logit 0 of softmax-1 (docs/model.md §3)
  const double* R;       // R_h (g sampled; zeros when integrated out)
  double delta;          // label noise Δ
  double sqrt_delta;     // √Δ
  double drift, noise;   // η/B, η²/B²
  double readout_drift;  // η_c/B
  bool learned;
  std::size_t r_at, q_at, c_at, err_at;  // StateLayout offsets
};

// g integrated out: out[i] (i in StateLayout order, then r²) for the W lanes from `offset`
// of a batch, whose stored numbers start at z (entry j at z[j·kLanes], draw_batch's
// layout), from softmax_rates' scores S, exponentials A (normalised here) and inverse row
// sums inv: one pass over the positions for A, e, |e|², μ and the Gram sums, one for u.
template <int W, class Sizes, class VE>
[[gnu::always_inline]] inline void softmax_group_rates(const Sizes& sz, const SoftmaxConstants& k, const double* z,
                                                       VE* S_all, VE* A_all, const VE* inv_all, int offset,
                                                       Eigen::Array<double, W, 1>* out) {
  using V = Eigen::Array<double, W, 1>;
  const int H = sz.H, L = sz.L, F = sz.F, K = F + H;
  auto in = [&](int l, int j) { return V(Eigen::Map<const V>(z + (l * K + j) * kLanes)); };
  auto Amap = [&](int i) { return Eigen::Map<V>(A_all[i].data() + offset); };
  auto Sval = [&](int i) { return V(Eigen::Map<const V>(S_all[i].data() + offset)); };
  constexpr int kMaxH = Sizes::kMaxH;
  constexpr int kMaxPairs = kMaxH * (kMaxH + 1) / 2;
  V e[Sizes::kMaxL], inv[kMaxH];
  for (int h = 0; h < H; ++h) inv[h] = Eigen::Map<const V>(inv_all[h].data() + offset);
  // A, e = a − e_ℓ* (ℓ* = 1), |e|², μ and the Gram sums.
  V e2 = V::Zero(), mu[kMaxH], ab[kMaxPairs], cross[kMaxPairs];
  for (int h = 0; h < H; ++h) mu[h].setZero();
  for (int q = 0; q < H * (H + 1) / 2; ++q) ab[q].setZero(), cross[q].setZero();
  for (int l = 0; l < L; ++l) {
    V a = V::Zero();
    for (int h = 0; h < H; ++h) {
      Amap(h * L + l) *= inv[h];
      a += k.c[h] * Amap(h * L + l);
    }
    const V el = l == 0 ? V(a - 1.0) : a;
    e[l] = el;
    e2 += el * el;
    for (int h = 0; h < H; ++h) mu[h] += Amap(h * L + l) * el;
    int q = 0;
    for (int h = 0; h < H; ++h)
      for (int g = h; g < H; ++g, ++q) {
        const V x = Amap(h * L + l);
        const V y = Amap(g * L + l);
        const V xy = x * y;
        ab[q] += xy;
        if (g == h)
          cross[q] += xy * x;  // doubled below
        else
          cross[q] += xy * (x + y);
      }
  }
  // u, and the sums over ℓ of u_h λ_f (dM), u_h s_g (dQ's drift) and u_h u_g (P_h·P_g).
  constexpr int kMaxHF = kMaxH * Sizes::kMaxF;
  V dM[kMaxHF], T[kMaxH * kMaxH], uu[kMaxPairs];
  for (int i = 0; i < H * F; ++i) dM[i].setZero();
  for (int i = 0; i < H * H; ++i) T[i].setZero();
  for (int q = 0; q < H * (H + 1) / 2; ++q) uu[q].setZero();
  for (int l = 0; l < L; ++l) {
    V u[kMaxH];
    for (int h = 0; h < H; ++h) u[h] = Amap(h * L + l) * (e[l] - mu[h]);
    for (int h = 0; h < H; ++h)
      for (int f = 0; f < F; ++f) dM[h * F + f] += u[h] * in(l, f);
    for (int h = 0; h < H; ++h)
      for (int g = 0; g < H; ++g) T[h * H + g] += u[h] * Sval(g * L + l);
    int q = 0;
    for (int h = 0; h < H; ++h)
      for (int g = h; g < H; ++g, ++q) uu[q] += u[h] * u[g];
  }
  const V e2d = e2 + k.delta;  // E_g[r²] = |e|² + Δ
  for (int h = 0; h < H; ++h) {
    const double scale = -k.drift * k.c[h];
    for (int f = 0; f < F; ++f) out[h * F + f] = scale * dM[h * F + f];
    out[k.r_at + h].setZero();  // E_g[r J g] = 0
  }
  int q = 0;
  for (int h = 0; h < H; ++h)
    for (int g = h; g < H; ++g, ++q) {
      // E_g[r² J_h·J_g] = (|e|² + Δ) Σ_ℓ Φ_hℓ·Φ_gℓ + 2 P_h·P_g (docs/model.md §7).
      const V gram = (g == h ? V(ab[q] - 2.0 * cross[q]) : V(ab[q] - cross[q])) + ab[q] * ab[q];
      out[k.q_at + q] = -k.drift * (k.c[h] * T[h * H + g] + k.c[g] * T[g * H + h]) +
                        (k.noise * k.c[h] * k.c[g]) * (e2d * gram + 2.0 * uu[q]);
    }
  if (k.learned)
    for (int h = 0; h < H; ++h) out[k.c_at + h] = -k.readout_drift * mu[h];
  out[k.err_at] = e2d;
}

// With g sampled (the general path, docs/model.md §6): the same for the W lanes from
// `offset`. J_hℓ = c_h u_hℓ with u_hℓ = A_hℓ (g_ℓ − o_h), o_h = Σ_ℓ A_hℓ g_ℓ, and every
// rate is r (or r²) times sums of u: c_h and r multiply the sums, not the terms.
template <int W, class Sizes, class VE>
[[gnu::always_inline]] inline void softmax_sampled_group_rates(const Sizes& sz, const SoftmaxConstants& k,
                                                               const double* z, VE* S_all, VE* A_all, const VE* inv_all,
                                                               int offset, Eigen::Array<double, W, 1>* out) {
  using V = Eigen::Array<double, W, 1>;
  const int H = sz.H, L = sz.L, F = sz.F, K = F + H;
  auto in = [&](int i) { return V(Eigen::Map<const V>(z + i * kLanes)); };  // z[i] of draw_batch's layout
  auto Amap = [&](int i) { return Eigen::Map<V>(A_all[i].data() + offset); };
  auto Sval = [&](int i) { return V(Eigen::Map<const V>(S_all[i].data() + offset)); };
  constexpr int kMaxH = Sizes::kMaxH;
  constexpr int kMaxPairs = kMaxH * (kMaxH + 1) / 2, kMaxHF = kMaxH * Sizes::kMaxF;
  V inv[kMaxH], o[kMaxH];
  for (int h = 0; h < H; ++h) inv[h] = Eigen::Map<const V>(inv_all[h].data() + offset), o[h].setZero();
  // A and the head outputs o_h; ŷ = Σ_h c_h o_h, r = ŷ − y with y = g_ℓ* + √Δ ξ (ℓ* = 1).
  for (int l = 0; l < L; ++l) {
    const V g = in(L * K + l);
    for (int h = 0; h < H; ++h) {
      Amap(h * L + l) *= inv[h];
      o[h] += Amap(h * L + l) * g;
    }
  }
  V yhat = k.c[0] * o[0];
  for (int h = 1; h < H; ++h) yhat += k.c[h] * o[h];
  const V r = yhat - (in(L * K) + k.sqrt_delta * in(L * K + L));
  // The sums over ℓ of u_h λ_f (dM), u_h g (dR), u_h s_g (dQ's drift) and u_h u_g (noise).
  V dM[kMaxHF], dR[kMaxH], T[kMaxH * kMaxH], uu[kMaxPairs];
  for (int i = 0; i < H * F; ++i) dM[i].setZero();
  for (int h = 0; h < H; ++h) dR[h].setZero();
  for (int i = 0; i < H * H; ++i) T[i].setZero();
  for (int q = 0; q < H * (H + 1) / 2; ++q) uu[q].setZero();
  for (int l = 0; l < L; ++l) {
    const V g = in(L * K + l);
    V u[kMaxH];
    for (int h = 0; h < H; ++h) u[h] = Amap(h * L + l) * (g - o[h]);
    for (int h = 0; h < H; ++h) {
      for (int f = 0; f < F; ++f) dM[h * F + f] += u[h] * in(l * K + f);
      dR[h] += u[h] * g;
    }
    for (int h = 0; h < H; ++h)
      for (int g2 = 0; g2 < H; ++g2) T[h * H + g2] += u[h] * Sval(g2 * L + l);
    int q = 0;
    for (int h = 0; h < H; ++h)
      for (int g2 = h; g2 < H; ++g2, ++q) uu[q] += u[h] * u[g2];
  }
  const V dr = -k.drift * r, r2 = r * r;
  for (int h = 0; h < H; ++h) {
    const V scale = k.c[h] * dr;
    for (int f = 0; f < F; ++f) out[h * F + f] = scale * dM[h * F + f];
    out[k.r_at + h] = scale * dR[h];
  }
  int q = 0;
  for (int h = 0; h < H; ++h)
    for (int g2 = h; g2 < H; ++g2, ++q)
      out[k.q_at + q] =
          dr * (k.c[h] * T[h * H + g2] + k.c[g2] * T[g2 * H + h]) + (k.noise * k.c[h] * k.c[g2]) * (r2 * uu[q]);
  if (k.learned)
    for (int h = 0; h < H; ++h) out[k.c_at + h] = (-k.readout_drift * r) * o[h];
  out[k.err_at] = r2;
}

// The rates of a batch of WE samples (one per lane) whose stored numbers start at z, entry
// j at z[j·kLanes] (draw_batch's layout), into outs[part·width + i] for the groups of W
// lanes: g integrated out (docs/model.md §7) or, with Sampled, g sampled (§6).
template <int WE, int W, bool Sampled, class Sizes>
[[gnu::always_inline]] inline void softmax_rates(const Sizes& sz, const SoftmaxConstants& k, const double* z,
                                                 Eigen::Array<double, W, 1>* outs, std::size_t width) {
  static_assert(WE % W == 0, "the exponential's lanes are whole groups");
  using VE = Eigen::Array<double, WE, 1>;
  const int H = sz.H, L = sz.L, K = sz.F + sz.H;
  auto in = [&](int l, int j) { return VE(Eigen::Map<const VE>(z + (l * K + j) * kLanes)); };
  constexpr int kMaxH = Sizes::kMaxH, kMaxHL = Sizes::kMaxH * Sizes::kMaxL;
  VE S[kMaxHL], A[kMaxHL], m[kMaxH], inv[kMaxH];
  // Scores and each row's maximum (log-sum-exp, docs/model.md §3; softmax-1 counts its logit 0),
  // and the exponentials, on WE lanes: their long dependency chains need as many
  // independent ones in flight as the processor holds.
  for (int h = 0; h < H; ++h) m[h] = VE::Constant(k.softmax1 ? 0.0 : -INFINITY);
  for (int l = 0; l < L; ++l)
    for (int h = 0; h < H; ++h) {
      VE s = k.W[h * K] * in(l, 0);
      for (int j = 1; j < K; ++j) s += k.W[h * K + j] * in(l, j);
      if constexpr (Sampled) s += k.R[h] * VE(Eigen::Map<const VE>(z + (L * K + l) * kLanes));  // + R_h g_ℓ
      S[h * L + l] = s;
      m[h] = m[h].max(s);
    }
  for (int h = 0; h < H; ++h) {
    VE total = k.softmax1 ? detail::exp_nonpositive<WE>(-m[h]) : VE(VE::Zero());
    for (int l = 0; l < L; ++l) total += (A[h * L + l] = detail::exp_nonpositive<WE>(S[h * L + l] - m[h]));
    inv[h] = total.inverse();  // one division per row, not per entry
  }
  // The rest on groups of W lanes, whose sums fit in registers.
  for (int part = 0; part < WE / W; ++part)
    if constexpr (Sampled)
      softmax_sampled_group_rates<W>(sz, k, z + part * W, S, A, inv, part * W, outs + part * width);
    else
      softmax_group_rates<W>(sz, k, z + part * W, S, A, inv, part * W, outs + part * width);
}

// One batch through softmax_rates, each lane summing its own samples into acc and acc_sq;
// lanes from `lanes` on are past the last sample and are not summed. softmax_batch below is
// its out-of-line copy for the three paths other than the default (Fig. 1 sizes, g
// integrated out): with all four inlined into evaluate(), the default path lost 12–18 %.
template <bool Sampled, class Sizes>
[[gnu::always_inline]] inline void softmax_batch_inline(const Sizes sz, const SoftmaxConstants& k, const double* z,
                                                        Eigen::Array<double, 4, 1>* outs, std::size_t width,
                                                        int64_t lanes, AttentionKernelBatch::Lanes* acc,
                                                        AttentionKernelBatch::Lanes* acc_sq) {
  constexpr int kGroup = 4;
  softmax_rates<kLanes, kGroup, Sampled>(sz, k, z, outs, width);
  for (int part = 0; part < kLanes / kGroup; ++part) {
    const Eigen::Array<double, kGroup, 1>* rates = outs + part * width;
    const int valid = static_cast<int>(std::clamp<int64_t>(lanes - part * kGroup, 0, kGroup));
    if (valid == kGroup) {
      for (std::size_t i = 0; i < width; ++i) {
        acc[i].segment<kGroup>(part * kGroup) += rates[i];
        acc_sq[i].segment<kGroup>(part * kGroup) += rates[i].square();
      }
    } else {
      for (std::size_t i = 0; i < width; ++i)
        for (int j = 0; j < valid; ++j) {
          acc[i][part * kGroup + j] += rates[i][j];
          acc_sq[i][part * kGroup + j] += rates[i][j] * rates[i][j];
        }
    }
  }
}

template <bool Sampled, class Sizes>
[[gnu::noinline]] void softmax_batch(const Sizes sz, const SoftmaxConstants& k, const double* z,
                                     Eigen::Array<double, 4, 1>* outs, std::size_t width, int64_t lanes,
                                     AttentionKernelBatch::Lanes* acc, AttentionKernelBatch::Lanes* acc_sq) {
  softmax_batch_inline<Sampled>(sz, k, z, outs, width, lanes, acc, acc_sq);
}

}  // namespace

TheoryEngine::TheoryEngine(const ModelSpec& model, const TheoryOptions& options)
    : model_(model),
      options_(options),
      layout_(model.H, model.F(), model.readout == Readout::Learned),
      fixed_c_(model.initial_readout()),
      width_(model.F() + model.L * (model.F() + model.H + 1) + 1),
      batch_width_(model.L * (model.F() + model.H) + (options.channel == ValueChannel::Sampled ? model.L + 1 : 0)) {
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
  // Time counts samples (t = n/D, docs/model.md §0): a step of B samples moves the keys by the
  // mean of B gradients, so per unit t the drift is (η/B)·E and the noise (η²/B²)·E.
  const double B = model_.batch;
  const double drift = model_.lr / B, noise = model_.lr * model_.lr / (B * B), readout_drift = model_.readout_lr / B;
  const double sqrt_delta = std::sqrt(model_.noise);

  // s_ℓ = M λ_ℓ + R g_ℓ + C w_ℓ with C Cᵀ = Q⊥ (docs/model.md §5); the sampler's square root.
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

  // Softmax and softmax-1, either value channel, take the fused pass (softmax_rates, a
  // batch at a time); H = 2, L = 10, F = 2 (seed Fig. 1) with its sizes known at compile
  // time, inlined here for g integrated out, the default.
  enum class Path { Kernel, FusedFig1, FusedRuntime };
  const bool softmax = model_.activation == Activation::Softmax || model_.activation == Activation::Softmax1;
  Path path = Path::Kernel;
  if (softmax) {
    if (H == 2 && L == 10 && F == 2)
      path = Path::FusedFig1;
    else if (RuntimeSizes::fits(H, L, F))
      path = Path::FusedRuntime;
  }
  SoftmaxConstants fused;
  fused.W = W.data();
  fused.c = c.data();
  fused.softmax1 = model_.activation == Activation::Softmax1;
  fused.R = R.data();
  fused.delta = model_.noise;
  fused.sqrt_delta = sqrt_delta;
  fused.drift = drift;
  fused.noise = noise;
  fused.readout_drift = readout_drift;
  fused.learned = learned;
  fused.r_at = r_at;
  fused.q_at = q_at;
  fused.c_at = c_at;
  fused.err_at = err_index;
  constexpr int kGroup = 4;
  using Group = Eigen::Array<double, kGroup, 1>;

#pragma omp parallel if (blocks >= 8)
  {
    // Per-thread buffers, one sample per lane (AttentionKernelBatch).
    AttentionKernelBatch kernel(model_.activation, H, L);
    std::vector<double> aos(stored ? 0 : static_cast<std::size_t>(kLanes * width_));
    std::vector<Lanes> soa(stored ? 0 : static_cast<std::size_t>(batch_width_));
    std::vector<Lanes> S(HL), J(HL), e(L), gram(pairs), contrib(width), acc(width), acc_sq(width);
    std::vector<Group> group_out(path == Path::Kernel ? 0 : width * (kLanes / kGroup));
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
        if (path != Path::Kernel) {
          const int64_t lanes = N - n0;
          if (path == Path::FusedFig1) {
            if (sampled)
              softmax_batch<true>(FixedSizes<2, 10, 2>{}, fused, z->data(), group_out.data(), width, lanes, acc.data(),
                                  acc_sq.data());
            else
              softmax_batch_inline<false>(FixedSizes<2, 10, 2>{}, fused, z->data(), group_out.data(), width, lanes,
                                          acc.data(), acc_sq.data());
          } else {
            if (sampled)
              softmax_batch<true>(RuntimeSizes{H, L, F}, fused, z->data(), group_out.data(), width, lanes, acc.data(),
                                  acc_sq.data());
            else
              softmax_batch<false>(RuntimeSizes{H, L, F}, fused, z->data(), group_out.data(), width, lanes, acc.data(),
                                   acc_sq.data());
          }
          continue;
        }
        // Projections of the samples (ℓ* = 1 by exchangeability, docs/model.md §6): (λ_ℓ, w_ℓ)
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
          // General path: r = ŷ − y, J = ∂ŷ/∂S (docs/model.md §6).
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
          // g integrated out (docs/model.md §7): e = a − e_ℓ*, P = Φ e, E_g[r J] = P,
          // E_g[r² J_hℓ J_h'ℓ] = (|e|² + Δ) Φ_hℓ·Φ_h'ℓ + 2 P_hℓ P_h'ℓ, E_g[r²] = |e|² + Δ.
          const Lanes* a = kernel.position_weights();
          Lanes e2 = Lanes::Zero();
          for (int l = 0; l < L; ++l) {
            e[l] = l == 0 ? Lanes(a[0] - 1.0) : a[l];
            e2 += e[l].square();
          }
          e2 += model_.noise;
          kernel.apply_jacobian(e.data(), J.data());  // P
          kernel.jacobian_gram(gram.data());          // Σ_ℓ Φ_hℓ·Φ_h'ℓ
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
