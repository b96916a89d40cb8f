#pragma once
// What the sampled expectation methods share (expectation/plain_method.cpp,
// expectation/symmetric_method.cpp): the choice of rate pass, the constants of an
// evaluation, one thread's buffers, and the sums over blocks of samples.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <vector>

#include "headspec/kernel.hpp"
#include "headspec/projection.hpp"
#include "headspec/theory_engine.hpp"
#include "theory_fused_softmax.hpp"
#include "theory_rates.hpp"

namespace headspec::theory_evaluation {

using theory_rates::kLanes;
using theory_rates::Lanes;
using theory_rates::RateConstants;

// Softmax and softmax-1 take the fused pass (theory_fused_softmax.hpp); H = 2, F = 2 with
// L = 10 (seed Fig. 1) or L = 5 (Fig. 6 and 9, the stochastic theory's benchmark) with their
// sizes known at compile time, whose passes then stay in registers (1.55× faster than
// run-time sizes for an SDE run at L = 5, docs/stochastic-theory.md §4). Every other
// activation, and sizes past RuntimeSizes's capacities, take the kernel's path.
enum class Path { Kernel, FusedFig1, FusedFig6, FusedRuntime };

inline Path rate_path(const ModelSpec& m) {
  if (m.activation != Activation::Softmax && m.activation != Activation::Softmax1) return Path::Kernel;
  if (m.H == 2 && m.L == 10 && m.F() == 2) return Path::FusedFig1;
  if (m.H == 2 && m.L == 5 && m.F() == 2) return Path::FusedFig6;
  return theory_rates::RuntimeSizes::fits(m.H, m.L, m.F()) ? Path::FusedRuntime : Path::Kernel;
}

// W = [M C] with C Cᵀ = Q⊥ (docs/model.md §5, the sampler's square root) — or W = [M I] for
// the symmetric method, whose samples carry w̄ = D ξ (symmetric_samples.hpp) —, R and c of
// the state, and what the passes need. λ_ℓ and w_ℓ are adjacent in a stored batch, so
// s_hℓ = W_h·(λ_ℓ, w_ℓ) (+ R_h g_ℓ with g sampled).
struct RateInputs {
  RowMatrix W;
  Eigen::VectorXd R, c;
  RateConstants k;
};

// The coefficients of the rates at time t (docs/model.md §6). Time counts samples (t = n/D):
// a step of B samples moves the keys by the mean of B gradients, so per unit t the drift is
// (η(t)/B)·E and the noise term (η(t)²/B²)·E, η(t) = η g(t) by the schedule (§4). Under
// gradient flow (§6 "Schedules and gradient flow") time is τ = ηt and the noise term is dropped: the
// drift is E/B per unit τ and the readout's (η_c/η)/B.
inline void set_rate_scales(const ModelSpec& model, bool flow, double t, RateConstants& k) {
  const double B = model.batch;
  if (flow) {
    k.drift = 1.0 / B, k.noise = 0.0, k.readout_drift = (model.readout_lr / model.lr) / B;
    return;
  }
  const double g = model.lr_schedule.factor(t), lr = model.lr * g;
  k.drift = lr / B, k.noise = lr * lr / (B * B), k.readout_drift = (model.readout_lr * g) / B;
}

inline void fill_rate_inputs(const ModelSpec& model, bool flow, double t, const StateLayout& layout, bool sampled,
                             bool symmetric, const OrderParameters& op, RateInputs& in) {
  const int H = model.H, F = model.F();
  OrderParameters op_used = op;
  if (!sampled) op_used.R.setZero();
  in.W.resize(H, F + H);
  in.W.leftCols(F) = op.M;
  if (symmetric)
    in.W.rightCols(H).setIdentity();
  else
    in.W.rightCols(H) = ProjectionSampler(model, op_used).orthogonal_sqrt();
  in.R = op_used.R;
  in.c = op.c;
  RateConstants& k = in.k;
  set_rate_scales(model, flow, t, k);
  k.H = H, k.L = model.L, k.F = F, k.sampled = sampled;
  k.W = in.W.data(), k.c = in.c.data(), k.R = in.R.data();
  k.softmax1 = model.activation == Activation::Softmax1;
  k.delta = model.noise, k.sqrt_delta = std::sqrt(model.noise);
  k.learned = layout.learned_readout();
  // Entries of the state in layout order (M row-major, R, Q upper triangle, c), then r².
  k.r_at = layout.r_index(0), k.q_at = layout.q_index(0, 0), k.c_at = k.learned ? layout.c_index(0) : 0;
  k.err_at = layout.size();
}

constexpr int kGroup = 4;
using Group = Eigen::Array<double, kGroup, 1>;

// One thread's buffers: samples drawn (unless stored), the kernel's scratch, the rates of a
// batch and each lane's running sums.
struct ThreadBuffers {
  ThreadBuffers(const ModelSpec& m, Path path, bool stored, std::size_t width, int sample_width, int batch_width)
      : kernel(m.activation, m.H, m.L),
        aos(stored ? 0 : static_cast<std::size_t>(kLanes * sample_width)),
        soa(stored ? 0 : static_cast<std::size_t>(batch_width)),
        rates(width),
        acc(width),
        acc_sq(width),
        group_rates(path == Path::Kernel ? 0 : width * (kLanes / kGroup)) {}
  theory_rates::KernelScratch kernel;
  std::vector<double> aos;
  std::vector<Lanes> soa, rates, acc, acc_sq;
  std::vector<Group> group_rates;
};

// Calls fused(sizes) for the fused softmax passes (the Fig. 1 and Fig. 6 sizes fixed at
// compile time, or run-time sizes) or kernel() for the kernel's path: the one switch over the paths.
template <class Fused, class Kernel>
[[gnu::always_inline]] inline void on_path(Path path, const RateConstants& k, Fused&& fused, Kernel&& kernel) {
  switch (path) {
    case Path::FusedFig1:
      return fused(theory_rates::FixedSizes<2, 10, 2>{});
    case Path::FusedFig6:
      return fused(theory_rates::FixedSizes<2, 5, 2>{});
    case Path::FusedRuntime:
      return fused(theory_rates::RuntimeSizes{k.H, k.L, k.F});
    case Path::Kernel:
      return kernel();
  }
}

// The rates of one batch (its samples at z, `lanes` of them valid), each lane summing its
// own into b.acc, b.acc_sq. softmax_batch is the fused pass out of line: only the default
// path (Fig. 1 sizes, g integrated out) is inlined here, which is worth 12–18 % on it, and
// inlining all four lost that (bench_theory).
[[gnu::always_inline]] inline void batch_rates(Path path, const RateConstants& k, const Lanes* z, int64_t lanes,
                                               std::size_t width, ThreadBuffers& b) {
  Group* g = b.group_rates.data();
  Lanes *acc = b.acc.data(), *acc_sq = b.acc_sq.data();
  on_path(
      path, k,
      [&](auto sz) __attribute__((always_inline)) {
        constexpr bool fig1 = std::is_same_v<decltype(sz), theory_rates::FixedSizes<2, 10, 2>>;
        if (k.sampled)
          theory_rates::softmax_batch<true>(sz, k, z->data(), g, width, lanes, acc, acc_sq);
        else if constexpr (fig1)
          theory_rates::softmax_batch_inline<false>(sz, k, z->data(), g, width, lanes, acc, acc_sq);
        else
          theory_rates::softmax_batch<false>(sz, k, z->data(), g, width, lanes, acc, acc_sq);
      },
      [&] {
        theory_rates::kernel_batch_rates(k, b.kernel, z, b.rates.data());
        theory_rates::add_lanes(b.rates.data(), width, lanes, acc, acc_sq);
      });
}

// The rates of one batch (its samples at z), lane by lane into b.rates.
inline void lane_rates(Path path, const RateConstants& k, const Lanes* z, std::size_t width, ThreadBuffers& b) {
  Group* g = b.group_rates.data();
  on_path(
      path, k,
      [&](auto sz) {
        if (k.sampled)
          theory_rates::softmax_lane_rates<true>(sz, k, z->data(), g, width, b.rates.data());
        else
          theory_rates::softmax_lane_rates<false>(sz, k, z->data(), g, width, b.rates.data());
      },
      [&] { theory_rates::kernel_batch_rates(k, b.kernel, z, b.rates.data()); });
}

// A block's sum: its lanes in lane order (fixed, whatever the thread count).
inline void add_block(const ThreadBuffers& b, std::size_t width, double* sum, double* sum_sq) {
  for (std::size_t i = 0; i < width; ++i)
    for (int j = 0; j < kLanes; ++j) {
      sum[i] += b.acc[i][j];
      sum_sq[i] += b.acc_sq[i][j];
    }
}

// The means and their standard errors, adding the blocks in block order: the same bits
// whatever the thread count. The sums are over `units` independent units of `unit_size`
// samples each (a sample, or an orbit of the symmetric method): mean = Σ/(units·size).
inline void mean_and_stderr(const std::vector<double>& sums, const std::vector<double>& squares, int64_t blocks,
                            std::size_t width, int64_t units, int unit_size, TheoryEvaluation& out) {
  std::vector<double> total(width, 0.0), total_sq(width, 0.0);
  for (int64_t b = 0; b < blocks; ++b)
    for (std::size_t i = 0; i < width; ++i) {
      total[i] += sums[b * width + i];
      total_sq[i] += squares[b * width + i];
    }
  const double n = static_cast<double>(units), size = unit_size;
  auto stderr_of = [&](std::size_t i) {
    const double mean = total[i] / n;
    const double var = units > 1 ? (total_sq[i] - n * mean * mean) / (n - 1) : 0.0;
    return std::sqrt(std::max(var, 0.0) / n) / size;
  };
  const std::size_t dim = width - 1;  // the rates, then r²
  out.rate.resize(dim);
  out.rate_stderr.resize(dim);
  for (std::size_t i = 0; i < dim; ++i) {
    out.rate[i] = total[i] / n / size;
    out.rate_stderr[i] = stderr_of(i);
  }
  out.error = total[dim] / n / size;
  out.error_stderr = stderr_of(dim);
}

}  // namespace headspec::theory_evaluation
