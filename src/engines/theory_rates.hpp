#pragma once
// The theory engine's per-batch passes (docs/model.md §6–7): what an evaluation's passes
// share (RateConstants), the kernel's path for every activation (theory_kernel_rates.cpp),
// and the sums of the rates over the samples, lane by lane.
#include <cstddef>
#include <cstdint>

#include "headspec/kernel.hpp"

namespace headspec::theory_rates {

using Lanes = AttentionKernelBatch::Lanes;
constexpr int kLanes = AttentionKernelBatch::kLanes;

// What one evaluation's passes need besides the samples.
struct RateConstants {
  int H, L, F;           // sizes; K = F + H numbers (λ_ℓ, w_ℓ) per position
  bool sampled;          // g sampled (docs/model.md §6) or integrated out (§7)
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

/// The kernel's scratch for one thread's batches.
struct KernelScratch {
  KernelScratch(Activation activation, int H, int L);
  AttentionKernelBatch kernel;
  std::vector<Lanes> S, J, e, gram;
};

/// out[i] (StateLayout order, then r² at err_at) for the kLanes samples of one batch whose
/// numbers start at z (draw_batch's layout), through the attention kernel: any activation.
void kernel_batch_rates(const RateConstants& k, KernelScratch& scratch, const Lanes* z, Lanes* out);

/// acc[i] += out[i], acc_sq[i] += out[i]² for the first `lanes` lanes (each lane sums its own samples).
inline void add_lanes(const Lanes* out, std::size_t width, int64_t lanes, Lanes* acc, Lanes* acc_sq) {
  if (lanes >= kLanes) {
    for (std::size_t i = 0; i < width; ++i) {
      acc[i] += out[i];
      acc_sq[i] += out[i].square();
    }
    return;
  }
  for (std::size_t i = 0; i < width; ++i)
    for (int j = 0; j < lanes; ++j) {
      acc[i][j] += out[i][j];
      acc_sq[i][j] += out[i][j] * out[i][j];
    }
}

}  // namespace headspec::theory_rates
