#include "headspec/theory_engine.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>

#include "headspec/kernel.hpp"
#include "headspec/projection.hpp"
#include "headspec/random.hpp"
#include "theory_fused_softmax.hpp"
#include "theory_rates.hpp"

namespace headspec {

namespace {

using theory_rates::kLanes;
using theory_rates::Lanes;
using theory_rates::RateConstants;

constexpr int64_t kStoreLimit = int64_t{1} << 25;  // doubles kept for Fixed mode (256 MB)
static_assert(TheoryEngine::kBlock % kLanes == 0, "a block is whole batches");

// Softmax and softmax-1 take the fused pass (theory_fused_softmax.hpp); H = 2, L = 10,
// F = 2 (seed Fig. 1) with its sizes known at compile time. Every other activation, and
// sizes past RuntimeSizes's capacities, take the kernel's path.
enum class Path { Kernel, FusedFig1, FusedRuntime };

Path rate_path(const ModelSpec& m) {
  if (m.activation != Activation::Softmax && m.activation != Activation::Softmax1) return Path::Kernel;
  if (m.H == 2 && m.L == 10 && m.F() == 2) return Path::FusedFig1;
  return theory_rates::RuntimeSizes::fits(m.H, m.L, m.F()) ? Path::FusedRuntime : Path::Kernel;
}

// W = [M C] with C Cᵀ = Q⊥ (docs/model.md §5, the sampler's square root), R and c of the
// state, and what the passes need. λ_ℓ and w_ℓ are adjacent in a stored batch, so
// s_hℓ = W_h·(λ_ℓ, w_ℓ) (+ R_h g_ℓ with g sampled).
struct RateInputs {
  RowMatrix W;
  Eigen::VectorXd R, c;
  RateConstants k;
};

void fill_rate_inputs(const ModelSpec& model, const StateLayout& layout, bool sampled, const OrderParameters& op,
                      RateInputs& in) {
  const int H = model.H, F = model.F();
  OrderParameters op_used = op;
  if (!sampled) op_used.R.setZero();
  const Eigen::MatrixXd C = ProjectionSampler(model, op_used).orthogonal_sqrt();
  in.W.resize(H, F + H);
  in.W.leftCols(F) = op.M;
  in.W.rightCols(H) = C;
  in.R = op_used.R;
  in.c = op.c;
  // Time counts samples (t = n/D, docs/model.md §0): a step of B samples moves the keys by
  // the mean of B gradients, so per unit t the drift is (η/B)·E and the noise (η²/B²)·E.
  const double B = model.batch;
  RateConstants& k = in.k;
  k.H = H, k.L = model.L, k.F = F, k.sampled = sampled;
  k.W = in.W.data(), k.c = in.c.data(), k.R = in.R.data();
  k.softmax1 = model.activation == Activation::Softmax1;
  k.delta = model.noise, k.sqrt_delta = std::sqrt(model.noise);
  k.drift = model.lr / B, k.noise = model.lr * model.lr / (B * B), k.readout_drift = model.readout_lr / B;
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

// The rates of one batch (its samples at z, `lanes` of them valid), each lane summing its
// own into b.acc, b.acc_sq. softmax_batch is the fused pass out of line: only the default
// path (Fig. 1 sizes, g integrated out) is inlined here, which is worth 12–18 % on it, and
// inlining all four lost that (bench_theory).
[[gnu::always_inline]] inline void batch_rates(Path path, const RateConstants& k, const Lanes* z, int64_t lanes,
                                               std::size_t width, ThreadBuffers& b) {
  using theory_rates::FixedSizes;
  using theory_rates::RuntimeSizes;
  using theory_rates::softmax_batch;
  Group* g = b.group_rates.data();
  Lanes *acc = b.acc.data(), *acc_sq = b.acc_sq.data();
  switch (path) {
    case Path::FusedFig1:
      if (k.sampled)
        softmax_batch<true>(FixedSizes<2, 10, 2>{}, k, z->data(), g, width, lanes, acc, acc_sq);
      else
        theory_rates::softmax_batch_inline<false>(FixedSizes<2, 10, 2>{}, k, z->data(), g, width, lanes, acc, acc_sq);
      return;
    case Path::FusedRuntime:
      if (k.sampled)
        softmax_batch<true>(RuntimeSizes{k.H, k.L, k.F}, k, z->data(), g, width, lanes, acc, acc_sq);
      else
        softmax_batch<false>(RuntimeSizes{k.H, k.L, k.F}, k, z->data(), g, width, lanes, acc, acc_sq);
      return;
    case Path::Kernel:
      theory_rates::kernel_batch_rates(k, b.kernel, z, b.rates.data());
      theory_rates::add_lanes(b.rates.data(), width, lanes, acc, acc_sq);
      return;
  }
}

// A block's sum: its lanes in lane order (fixed, whatever the thread count).
void add_block(const ThreadBuffers& b, std::size_t width, double* sum, double* sum_sq) {
  for (std::size_t i = 0; i < width; ++i)
    for (int j = 0; j < kLanes; ++j) {
      sum[i] += b.acc[i][j];
      sum_sq[i] += b.acc_sq[i][j];
    }
}

// The means and their standard errors, adding the blocks in block order: the same bits
// whatever the thread count.
void mean_and_stderr(const std::vector<double>& sums, const std::vector<double>& squares, int64_t blocks,
                     std::size_t width, int64_t N, TheoryEvaluation& out) {
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
  const std::size_t dim = width - 1;  // the rates, then r²
  out.rate.resize(dim);
  out.rate_stderr.resize(dim);
  for (std::size_t i = 0; i < dim; ++i) {
    out.rate[i] = total[i] / n;
    out.rate_stderr[i] = stderr_of(i);
  }
  out.error = total[dim] / n;
  out.error_stderr = stderr_of(dim);
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
  const bool sampled = options_.channel == ValueChannel::Sampled;
  const int64_t N = options_.samples;
  const int64_t blocks = (N + kBlock - 1) / kBlock;
  const std::size_t width = layout_.size() + 1;  // the rates, then r²
  RateInputs in;
  fill_rate_inputs(model_, layout_, sampled, op, in);
  const Path path = rate_path(model_);
  const bool stored = !stored_.empty() && options_.mode == MonteCarloMode::Fixed;
  std::vector<double> sums(static_cast<std::size_t>(blocks) * width, 0.0), squares(sums.size(), 0.0);

#pragma omp parallel if (blocks >= 8)
  {
    ThreadBuffers buf(model_, path, stored, width, width_, batch_width_);
#pragma omp for schedule(static)
    for (int64_t b = 0; b < blocks; ++b) {
      std::fill(buf.acc.begin(), buf.acc.end(), Lanes::Zero());
      std::fill(buf.acc_sq.begin(), buf.acc_sq.end(), Lanes::Zero());
      const int64_t n_end = std::min(N, (b + 1) * kBlock);
      for (int64_t n0 = b * kBlock; n0 < n_end; n0 += kLanes) {
        const int64_t batch = n0 / kLanes;
        const Lanes* z = buf.soa.data();
        if (stored)
          z = stored_.data() + batch * batch_width_;
        else
          draw_batch(batch, options_.mode == MonteCarloMode::Fixed ? 0 : draw, buf.aos.data(), buf.soa.data());
        batch_rates(path, in.k, z, N - n0, width, buf);
      }
      add_block(buf, width, sums.data() + b * width, squares.data() + b * width);
    }
  }
  mean_and_stderr(sums, squares, blocks, width, N, out);
}

}  // namespace headspec
