// The plain method (plain_method.hpp).
#include "plain_method.hpp"

#include <omp.h>

#include <algorithm>

#include "headspec/random.hpp"

namespace headspec::expectation {

namespace {

using namespace theory_evaluation;

constexpr int64_t kStoreLimit = int64_t{1} << 25;  // doubles kept for Fixed mode (256 MB)

// Fixed mode keeps the plain samples when `batches` batches of `width` fit the store.
bool keeps_plain_samples(const TheoryOptions& options, int64_t batches, int64_t width) {
  return options.mode == MonteCarloMode::Fixed && batches * kLanes * width <= kStoreLimit;
}

static_assert(TheoryEngine::kBlock % kLanes == 0, "a block is whole batches");

}  // namespace

std::shared_ptr<const ExpectationMethod> make_plain(const ModelSpec& model, const TheoryOptions& options) {
  return std::make_shared<const PlainMethod>(model, options);
}

int64_t plain_samples_used(const ModelSpec&, const TheoryOptions& options) { return options.samples; }

double plain_stored_bytes(const ModelSpec& model, const TheoryOptions& options) {
  if (options.mode != MonteCarloMode::Fixed) return 0;
  const int64_t batches = (options.samples + kLanes - 1) / kLanes, width = plain_batch_width(model, options.channel);
  return keeps_plain_samples(options, batches, width) ? static_cast<double>(batches * width) * sizeof(Lanes) : 0.0;
}

PlainMethod::PlainMethod(const ModelSpec& model, const TheoryOptions& options)
    : model_(model),
      options_(options),
      layout_(model.H, model.F(), model.readout == Readout::Learned),
      sample_width_(model.F() + model.L * (model.F() + model.H + 1) + 1),
      batch_width_(plain_batch_width(model, options.channel)) {
  const int64_t batches = (options_.samples + kLanes - 1) / kLanes;
  if (keeps_plain_samples(options_, batches, batch_width_)) {
    stored_.resize(static_cast<std::size_t>(batches * batch_width_));
#pragma omp parallel
    {
      std::vector<double> aos(static_cast<std::size_t>(kLanes * sample_width_));
#pragma omp for schedule(static)
      for (int64_t b = 0; b < batches; ++b) draw_batch(b, 0, aos.data(), stored_.data() + b * batch_width_);
    }
  }
}

// Sample n of draw `draw` is the stream (seed, MonteCarlo, lane n, step draw): θ first
// (the prior draws from the stream), then the standard normals in sample order;
// θ is then added to position 1's ζ, which becomes λ_1.
void PlainMethod::draw_sample(int64_t n, uint64_t draw, double* out) const {
  RandomStream rng(StreamId{options_.seed, Purpose::MonteCarlo, static_cast<uint32_t>(n), draw});
  const int F = model_.F();
  model_.prior.sample(rng, out);
  for (int i = F; i < sample_width_; ++i) out[i] = rng.normal();
  for (int f = 0; f < F; ++f) out[F + f] += out[f];  // λ_ℓ* = ζ_ℓ* + θ, ℓ* = 1
}

// Samples kLanes·b … kLanes·b + kLanes − 1, one per lane, reordered to what evaluate()
// reads: (λ_ℓ, w_ℓ) for ℓ = 1…L, then with g sampled g_1…g_L and ξ. Lanes past the last
// sample are zeros and are never summed.
void PlainMethod::draw_batch(int64_t b, uint64_t draw, double* aos, Lanes* soa) const {
  const int F = model_.F(), H = model_.H, L = model_.L, K = F + H, stride = K + 1;
  const bool sampled = options_.channel == ValueChannel::Sampled;
  for (int j = 0; j < kLanes; ++j) {
    const int64_t n = b * kLanes + j;
    double* z = aos + j * sample_width_;
    if (n < options_.samples)
      draw_sample(n, draw, z);
    else
      std::fill(z, z + sample_width_, 0.0);
    for (int l = 0; l < L; ++l) {
      const double* p = z + F + l * stride;
      for (int k = 0; k < K; ++k) soa[l * K + k][j] = p[k];
      if (sampled) soa[L * K + l][j] = p[K];
    }
    if (sampled) soa[L * K + L][j] = z[sample_width_ - 1];
  }
}

const PlainMethod::Lanes* PlainMethod::batch_samples(int64_t b, uint64_t draw, double* aos, Lanes* soa) const {
  if (stored()) return stored_.data() + b * batch_width_;
  draw_batch(b, options_.mode == MonteCarloMode::Fixed ? 0 : draw, aos, soa);
  return soa;
}

void PlainMethod::evaluate(const OrderParameters& op, uint64_t draw, TheoryEvaluation& out, double t) const {
  const bool sampled = options_.channel == ValueChannel::Sampled;
  const int64_t N = options_.samples;
  const int64_t blocks = (N + TheoryEngine::kBlock - 1) / TheoryEngine::kBlock;
  const std::size_t width = layout_.size() + 1;  // the rates, then r²
  RateInputs in;
  fill_rate_inputs(model_, options_.flow, t, layout_, sampled, false, op, in);
  const Path path = rate_path(model_);
  std::vector<double> sums(static_cast<std::size_t>(blocks) * width, 0.0), squares(sums.size(), 0.0);

#pragma omp parallel if (blocks >= TheoryEngine::kParallelBlocks)
  {
    ThreadBuffers buf(model_, path, stored(), width, sample_width_, batch_width_);
#pragma omp for schedule(static)
    for (int64_t b = 0; b < blocks; ++b) {
      std::fill(buf.acc.begin(), buf.acc.end(), Lanes::Zero());
      std::fill(buf.acc_sq.begin(), buf.acc_sq.end(), Lanes::Zero());
      const int64_t n_end = std::min(N, (b + 1) * TheoryEngine::kBlock);
      for (int64_t n0 = b * TheoryEngine::kBlock; n0 < n_end; n0 += kLanes) {
        const Lanes* z = batch_samples(n0 / kLanes, draw, buf.aos.data(), buf.soa.data());
        batch_rates(path, in.k, z, N - n0, width, buf);
      }
      add_block(buf, width, sums.data() + b * width, squares.data() + b * width);
    }
  }
  mean_and_stderr(sums, squares, blocks, width, N, 1, out);
}

}  // namespace headspec::expectation
