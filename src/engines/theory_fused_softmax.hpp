#pragma once
// The softmax and softmax-1 right-hand side of the theory (docs/model.md §6–7), fused: passes
// over the positions whose sums stay in registers, built from the softmax policy's pieces
// (include/headspec/kernel/activations.hpp: unnormalised, centred, gram_from_sums), which the
// kernel's jacobian and jacobian_gram use too; only the order of the loops is this file's.
// tests/unit/test_theory_batch.cpp checks it against the kernel's path
// (theory_kernel_rates.cpp) and against one sample at a time.
#include <algorithm>
#include <cmath>

#include "headspec/kernel/activations.hpp"
#include "theory_rates.hpp"

namespace headspec::theory_rates {

// The softmax formulas the passes below share with the kernel (u = A (v − m) and the Gram
// sums); they are the same for softmax-1, whose extra logit only changes the normalisation.
using Policy = kernel::SoftmaxPolicy<false>;

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

// g integrated out: out[i] (i in StateLayout order, then r²) for the W lanes from `offset`
// of a batch, whose stored numbers start at z (entry j at z[j·kLanes], draw_batch's
// layout), from softmax_rates' scores S, exponentials A (normalised here) and inverse row
// sums inv: one pass over the positions for A, e, |e|², μ and the Gram sums, one for u.
template <int W, class Sizes, class VE>
[[gnu::always_inline]] inline void softmax_group_rates(const Sizes& sz, const RateConstants& k, const double* z,
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
    for (int h = 0; h < H; ++h) u[h] = Policy::centred(V(Amap(h * L + l)), e[l], mu[h]);
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
      const V gram = Policy::gram_from_sums(ab[q], g == h ? V(2.0 * cross[q]) : cross[q]);
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
[[gnu::always_inline]] inline void softmax_sampled_group_rates(const Sizes& sz, const RateConstants& k,
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
    for (int h = 0; h < H; ++h) u[h] = Policy::centred(V(Amap(h * L + l)), g, o[h]);
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
[[gnu::always_inline]] inline void softmax_rates(const Sizes& sz, const RateConstants& k, const double* z,
                                                 Eigen::Array<double, W, 1>* outs, std::size_t width) {
  static_assert(WE % W == 0, "the exponential's lanes are whole groups");
  using VE = Eigen::Array<double, WE, 1>;
  const int H = sz.H, L = sz.L, K = sz.F + sz.H;
  auto in = [&](int l, int j) { return VE(Eigen::Map<const VE>(z + (l * K + j) * kLanes)); };
  constexpr int kMaxH = Sizes::kMaxH, kMaxHL = Sizes::kMaxH * Sizes::kMaxL;
  VE S[kMaxHL], A[kMaxHL], inv[kMaxH];
  // Scores, then the softmax policy's exponentials and inverse row sums (log-sum-exp,
  // docs/model.md §3; softmax-1 counts its logit 0) on WE lanes: their long dependency
  // chains need as many independent ones in flight as the processor holds.
  for (int l = 0; l < L; ++l)
    for (int h = 0; h < H; ++h) {
      VE s = k.W[h * K] * in(l, 0);
      for (int j = 1; j < K; ++j) s += k.W[h * K + j] * in(l, j);
      if constexpr (Sampled) s += k.R[h] * VE(Eigen::Map<const VE>(z + (L * K + l) * kLanes));  // + R_h g_ℓ
      S[h * L + l] = s;
    }
  if (k.softmax1)
    kernel::SoftmaxPolicy<true>::unnormalised(sz, S, A, inv);
  else
    kernel::SoftmaxPolicy<false>::unnormalised(sz, S, A, inv);
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
[[gnu::always_inline]] inline void softmax_batch_inline(const Sizes sz, const RateConstants& k, const double* z,
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
[[gnu::noinline]] void softmax_batch(const Sizes sz, const RateConstants& k, const double* z,
                                     Eigen::Array<double, 4, 1>* outs, std::size_t width, int64_t lanes,
                                     AttentionKernelBatch::Lanes* acc, AttentionKernelBatch::Lanes* acc_sq) {
  softmax_batch_inline<Sampled>(sz, k, z, outs, width, lanes, acc, acc_sq);
}

// The rates of one batch through softmax_rates, lane by lane into rates[i] (the symmetric
// method sums them over each orbit first, expectation/symmetric_method.cpp).
template <bool Sampled, class Sizes>
[[gnu::noinline]] void softmax_lane_rates(const Sizes sz, const RateConstants& k, const double* z,
                                          Eigen::Array<double, 4, 1>* outs, std::size_t width,
                                          AttentionKernelBatch::Lanes* rates) {
  constexpr int kGroup = 4;
  softmax_rates<kLanes, kGroup, Sampled>(sz, k, z, outs, width);
  for (int part = 0; part < kLanes / kGroup; ++part)
    for (std::size_t i = 0; i < width; ++i) rates[i].segment<kGroup>(part * kGroup) = outs[part * width + i];
}

}  // namespace headspec::theory_rates
