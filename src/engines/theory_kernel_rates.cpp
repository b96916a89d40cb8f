// The theory's rates through the attention kernel (kernel::AttentionCore on SIMD lanes), for
// every activation: the path of the activations without a fused pass (theory_fused_softmax.hpp).
#include "theory_rates.hpp"

namespace headspec::theory_rates {

KernelScratch::KernelScratch(Activation activation, int H, int L)
    : kernel(activation, H, L), S(H * L), J(H * L), e(L), gram(H * (H + 1) / 2) {}

namespace {

// Scores s_hℓ = W_h·(λ_ℓ, w_ℓ) (+ R_h g_ℓ when g is sampled): (λ_ℓ, w_ℓ) at z[ℓ·K + k],
// g_ℓ at z[L·K + ℓ] (ℓ* = 1 by exchangeability, docs/model.md §6).
void scores(const RateConstants& k, const Lanes* z, const Lanes* g, Lanes* S) {
  const int H = k.H, L = k.L, K = k.F + k.H;
  for (int h = 0; h < H; ++h) {
    const double* wr = k.W + h * K;
    for (int l = 0; l < L; ++l) {
      const Lanes* p = z + l * K;
      Lanes s = g ? Lanes(k.R[h] * g[l]) : Lanes(Lanes::Zero());
      for (int j = 0; j < K; ++j) s += wr[j] * p[j];
      S[h * L + l] = s;
    }
  }
}

// With G = r J (g sampled) or P = Φ e (g integrated out), both H×L in J:
// dM_hf ∝ Σ_ℓ J_hℓ λ_ℓf, dQ_hg ∝ Σ_ℓ J_hℓ s_gℓ + J_gℓ s_hℓ.
void drift_terms(const RateConstants& k, const Lanes* z, const Lanes* S, const Lanes* J, const Lanes& scale,
                 Lanes* out) {
  const int H = k.H, L = k.L, F = k.F, K = k.F + k.H;
  const Lanes minus_scale = -k.drift * scale;
  for (int h = 0; h < H; ++h)
    for (int f = 0; f < F; ++f) {
      Lanes a = Lanes::Zero();
      for (int l = 0; l < L; ++l) a += J[h * L + l] * z[l * K + f];
      out[h * F + f] = minus_scale * a;
    }
  std::size_t q = k.q_at;
  for (int h = 0; h < H; ++h)
    for (int g2 = h; g2 < H; ++g2, ++q) {
      Lanes d = Lanes::Zero();
      for (int l = 0; l < L; ++l) d += J[h * L + l] * S[g2 * L + l] + J[g2 * L + l] * S[h * L + l];
      out[q] = minus_scale * d;
    }
}

// The general path: r = ŷ − y, J = ∂ŷ/∂S (docs/model.md §6).
void sampled_rates(const RateConstants& k, KernelScratch& s, const Lanes* z, Lanes* out) {
  const int H = k.H, L = k.L, K = k.F + k.H;
  const Lanes* g = z + L * K;
  const AttentionKernelBatch& kernel = s.kernel;
  const Lanes r = kernel.output() - (g[0] + k.sqrt_delta * z[L * K + L]);
  kernel.apply_jacobian(g, s.J.data());
  drift_terms(k, z, s.S.data(), s.J.data(), r, out);
  for (int h = 0; h < H; ++h) {
    Lanes a = Lanes::Zero();
    for (int l = 0; l < L; ++l) a += s.J[h * L + l] * g[l];
    out[k.r_at + h] = -k.drift * r * a;
  }
  std::size_t q = k.q_at;
  for (int h = 0; h < H; ++h)
    for (int g2 = h; g2 < H; ++g2, ++q) {
      Lanes jj = Lanes::Zero();
      for (int l = 0; l < L; ++l) jj += s.J[h * L + l] * s.J[g2 * L + l];
      out[q] += k.noise * r * r * jj;
    }
  if (k.learned) {
    const Lanes* o = kernel.head_outputs();
    for (int h = 0; h < H; ++h) out[k.c_at + h] = -k.readout_drift * r * o[h];
  }
  out[k.err_at] = r * r;
}

// g integrated out (docs/model.md §7): e = a − e_ℓ*, P = Φ e, E_g[r J] = P,
// E_g[r² J_hℓ J_h'ℓ] = (|e|² + Δ) Φ_hℓ·Φ_h'ℓ + 2 P_hℓ P_h'ℓ, E_g[r²] = |e|² + Δ.
void integrated_rates(const RateConstants& k, KernelScratch& s, const Lanes* z, Lanes* out) {
  const int H = k.H, L = k.L;
  const AttentionKernelBatch& kernel = s.kernel;
  const Lanes* a = kernel.position_weights();
  Lanes e2 = Lanes::Zero();
  for (int l = 0; l < L; ++l) {
    s.e[l] = l == 0 ? Lanes(a[0] - 1.0) : a[l];
    e2 += s.e[l].square();
  }
  e2 += k.delta;
  kernel.apply_jacobian(s.e.data(), s.J.data());  // P
  kernel.jacobian_gram(s.gram.data());            // Σ_ℓ Φ_hℓ·Φ_h'ℓ
  drift_terms(k, z, s.S.data(), s.J.data(), Lanes::Ones(), out);
  for (int h = 0; h < H; ++h) out[k.r_at + h].setZero();
  std::size_t q = k.q_at;
  int p = 0;
  for (int h = 0; h < H; ++h)
    for (int g2 = h; g2 < H; ++g2, ++q, ++p) {
      Lanes pp = Lanes::Zero();
      for (int l = 0; l < L; ++l) pp += s.J[h * L + l] * s.J[g2 * L + l];
      out[q] += k.noise * (e2 * s.gram[p] + 2.0 * pp);
    }
  if (k.learned) {
    const Lanes* A = kernel.attention();
    for (int h = 0; h < H; ++h) {
      Lanes sum = Lanes::Zero();
      for (int l = 0; l < L; ++l) sum += s.e[l] * A[h * L + l];
      out[k.c_at + h] = -k.readout_drift * sum;
    }
  }
  out[k.err_at] = e2;
}

}  // namespace

void kernel_batch_rates(const RateConstants& k, KernelScratch& scratch, const Lanes* z, Lanes* out) {
  const Lanes* g = k.sampled ? z + k.L * (k.F + k.H) : nullptr;
  scores(k, z, g, scratch.S.data());
  scratch.kernel.forward(scratch.S.data(), g, k.c);
  if (k.sampled)
    sampled_rates(k, scratch, z, out);
  else
    integrated_rates(k, scratch, z, out);
}

}  // namespace headspec::theory_rates
