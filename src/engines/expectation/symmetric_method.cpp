// The symmetric Monte Carlo method of the theory engine (docs/model.md §6, "Symmetric Monte
// Carlo"): the state in its canonical head order, the samples of symmetric_samples.hpp, and
// sums over whole orbits, so that the estimated right-hand side is exactly equivariant.
#include <algorithm>
#include <cmath>

#include "../symmetric_samples.hpp"
#include "../theory_evaluation.hpp"
#include "expectation_method.hpp"

namespace headspec::expectation {

namespace {

using namespace theory_evaluation;

// The sums of the rates of kLanes orbits (one per lane) over their elements e = p·S + σ (σ the
// sign slot: the group's sign flips and, value channel sampled, the value sign as its top bit),
// given in order: over σ as a binary tree (a stack of partial sums, left + right), then over
// p in order. Where M_{:,f} = 0 for a symmetric direction f, elements σ and σ ⊕ bit(f) have
// opposite dM_{:,f} and equal other rates, and every subtree pairing them sums to exactly 0;
// flipping that column of the state swaps the subtrees and negates dM_{:,f}, bit for bit.
class OrbitSums {
 public:
  OrbitSums(std::size_t width, int signs)
      : width_(width), signs_(signs), stack_(width * (levels(signs) + 1)), level_(levels(signs) + 1), total_(width) {}

  void add(int e, const Lanes* rates) {
    std::copy(rates, rates + width_, stack_.begin() + depth_ * width_);
    level_[depth_++] = 0;
    while (depth_ >= 2 && level_[depth_ - 1] == level_[depth_ - 2]) {
      Lanes* left = stack_.data() + (depth_ - 2) * width_;
      const Lanes* right = left + width_;
      for (std::size_t i = 0; i < width_; ++i) left[i] += right[i];
      ++level_[depth_ - 2];
      --depth_;
    }
    if (e % signs_ != signs_ - 1) return;
    for (std::size_t i = 0; i < width_; ++i) total_[i] = e < signs_ ? stack_[i] : Lanes(total_[i] + stack_[i]);
    depth_ = 0;
  }
  const Lanes* total() const { return total_.data(); }

 private:
  static int levels(int signs) {
    int k = 0;
    while ((1 << k) < signs) ++k;
    return k;
  }
  std::size_t width_;
  int signs_, depth_ = 0;
  std::vector<Lanes> stack_;
  std::vector<int> level_;
  std::vector<Lanes> total_;
};

// Groups of kLanes orbits per block: about TheoryEngine::kBlock samples, and with the Sobol
// method a divisor of a randomisation's groups, so that no block straddles two.
int64_t groups_per_block(const theory_rates::SymmetricSamples& samples) {
  int64_t per_block = std::max<int64_t>(1, TheoryEngine::kBlock / (samples.orbit_size() * kLanes));
  if (samples.randomisations() > 0) {
    const int64_t set_groups = samples.orbits_per_randomisation() / kLanes;
    per_block = std::min(per_block, set_groups);
    while (set_groups % per_block != 0) --per_block;
  }
  return per_block;
}

// Whether an evaluation of `blocks` blocks of `per_block` groups starts threads: as the plain
// method's rule (TheoryEngine::kParallelBlocks blocks of kBlock samples), counted in samples,
// since with orbits of more than kBlock / kLanes elements one group is already a block larger
// than kBlock (H = 8 heads and four symmetric directions: 1024 samples). The bits do not
// depend on it (blocks are added in block order).
bool worth_threads(int64_t blocks, int64_t per_block, const theory_rates::SymmetricSamples& samples) {
  const int64_t samples_per_block = per_block * samples.orbit_size() * kLanes;
  return blocks >= TheoryEngine::kParallelBlocks ||
         (blocks >= 2 && blocks * samples_per_block >= TheoryEngine::kParallelBlocks * TheoryEngine::kBlock);
}

// The Sobol method's estimate and its error (docs/model.md §6): the mean over the `sets`
// randomisations of each one's mean (its blocks added in order), and the standard deviation of
// those means over √sets.
void randomisation_mean_and_spread(const std::vector<double>& sums, int64_t blocks, std::size_t width, int sets,
                                   int64_t samples_per_set, TheoryEvaluation& out) {
  const int64_t per_set = blocks / sets;
  std::vector<double> means(static_cast<std::size_t>(sets) * width, 0.0);
  for (int r = 0; r < sets; ++r)
    for (std::size_t i = 0; i < width; ++i) {
      double sum = 0;
      for (int64_t b = r * per_set; b < (r + 1) * per_set; ++b) sum += sums[b * width + i];
      means[r * width + i] = sum / static_cast<double>(samples_per_set);
    }
  std::vector<double> mean(width, 0.0), spread(width, 0.0);
  for (std::size_t i = 0; i < width; ++i) {
    for (int r = 0; r < sets; ++r) mean[i] += means[r * width + i];
    mean[i] /= sets;
    double var = 0;
    for (int r = 0; r < sets; ++r) var += (means[r * width + i] - mean[i]) * (means[r * width + i] - mean[i]);
    spread[i] = sets > 1 ? std::sqrt(var / (sets - 1) / sets) : 0.0;
  }
  out.rate.assign(mean.begin(), mean.end() - 1);
  out.rate_stderr.assign(spread.begin(), spread.end() - 1);
  out.error = mean.back();
  out.error_stderr = spread.back();
}

// The symmetric and sobol methods: the samples of symmetric_samples.hpp, summed over whole
// orbits at the state in its canonical head order.
class SymmetricMethod final : public ExpectationMethod {
 public:
  SymmetricMethod(const ModelSpec& model, const TheoryOptions& options)
      : model_(model),
        options_(options),
        layout_(model.H, model.F(), model.readout == Readout::Learned),
        batch_width_(plain_batch_width(model, options.channel)),
        samples_(model, options) {}
  void evaluate(const OrderParameters& op, uint64_t draw, TheoryEvaluation& out, double t) const override {
    evaluate_in_canonical_order(samples_.group(), layout_, op, out,
                                [&](const OrderParameters& canonical, TheoryEvaluation& o) {
                                  evaluate_canonical(canonical, draw, o, t);
                                });
  }
  int64_t samples_used() const override { return samples_.samples(); }
  int orbit_size() const override { return samples_.orbit_size(); }

 private:
  void evaluate_canonical(const OrderParameters& op, uint64_t draw, TheoryEvaluation& out, double t) const;

  ModelSpec model_;
  TheoryOptions options_;
  StateLayout layout_;
  int batch_width_;
  theory_rates::SymmetricSamples samples_;
};

}  // namespace

void SymmetricMethod::evaluate_canonical(const OrderParameters& op, uint64_t draw, TheoryEvaluation& out,
                                         double t) const {
  using theory_rates::Conditioning;
  const theory_rates::SymmetricSamples& samples = samples_;
  const bool sampled = options_.channel == ValueChannel::Sampled;
  const uint64_t draw_used = options_.mode == MonteCarloMode::Fixed ? 0 : draw;
  const int G = samples.orbit_size(), signs = samples.sign_slots();
  const int64_t orbits = samples.orbits(), groups = samples.orbit_groups();
  // Blocks of about kBlock samples: whole groups of kLanes orbits.
  const int sets = samples.randomisations();
  const int64_t per_block = groups_per_block(samples);
  const int64_t blocks = (groups + per_block - 1) / per_block;
  const std::size_t width = layout_.size() + 1;  // the rates, then r²
  RateInputs in;
  fill_rate_inputs(model_, options_.flow, t, layout_, sampled, true, op, in);
  const Conditioning cond = Conditioning::of(op, sampled);
  const Path path = rate_path(model_);
  std::vector<double> sums(static_cast<std::size_t>(blocks) * width, 0.0), squares(sums.size(), 0.0);

#pragma omp parallel if (worth_threads(blocks, per_block, samples))
  {
    ThreadBuffers buf(model_, path, false, width, samples.base_width(), batch_width_);
    std::vector<Lanes> drawn(static_cast<std::size_t>(samples.base_width()));
    OrbitSums orbit(width, signs);
#pragma omp for schedule(static)
    for (int64_t b = 0; b < blocks; ++b) {
      std::fill(buf.acc.begin(), buf.acc.end(), Lanes::Zero());
      std::fill(buf.acc_sq.begin(), buf.acc_sq.end(), Lanes::Zero());
      for (int64_t q = b * per_block; q < std::min(groups, (b + 1) * per_block); ++q) {
        const Lanes* base = samples.group_base(q, draw_used, buf.aos.data(), drawn.data());
        for (int e = 0; e < G; ++e) {
          samples.fill_element(base, e, cond, buf.soa.data());
          lane_rates(path, in.k, buf.soa.data(), width, buf);
          orbit.add(e, buf.rates.data());
        }
        theory_rates::add_lanes(orbit.total(), width, orbits - q * kLanes, buf.acc.data(), buf.acc_sq.data());
      }
      add_block(buf, width, sums.data() + b * width, squares.data() + b * width);
    }
  }
  if (sets > 0)
    randomisation_mean_and_spread(sums, blocks, width, sets, samples.orbits_per_randomisation() * G, out);
  else
    mean_and_stderr(sums, squares, blocks, width, orbits, G, out);
}

std::shared_ptr<const ExpectationMethod> make_symmetric(const ModelSpec& model, const TheoryOptions& options) {
  return std::make_shared<const SymmetricMethod>(model, options);
}

int64_t symmetric_samples_used(const ModelSpec& model, const TheoryOptions& options) {
  const int orbit = theory_rates::SymmetricSamples::orbit_size_of(model, options);
  return theory_rates::SymmetricSamples::orbits_for(options, orbit) * orbit;
}

double symmetric_stored_bytes(const ModelSpec& model, const TheoryOptions& options) {
  if (options.mode != MonteCarloMode::Fixed) return 0;
  return static_cast<double>(theory_rates::SymmetricSamples::stored_lanes(model, options)) * sizeof(Lanes);
}

}  // namespace headspec::expectation
