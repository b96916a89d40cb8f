#include "symmetric_samples.hpp"

#include <algorithm>
#include <cmath>

#include "headspec/random.hpp"
#include "headspec/sobol_points.hpp"

namespace headspec::theory_rates {

namespace {

// Orbits per randomisation of the Sobol method: a multiple of kLanes (whole groups), at least
// kLanes, whose sets together hold at least `samples` samples. A power of 2 makes each set a
// net (docs/model.md §6).
int64_t orbits_per_set(int64_t samples, int orbit_size, int sets) {
  const int64_t wanted = (samples + int64_t{orbit_size} * sets - 1) / (int64_t{orbit_size} * sets);
  return std::max<int64_t>(kLanes, (wanted + kLanes - 1) / kLanes * kLanes);
}

// Numbers per base sample: θ (F), ξ (L·H), [g (L), label noise] (SymmetricSamples::base_width).
int base_width_of(const ModelSpec& model, bool sampled) {
  return model.F() + model.L * model.H + (sampled ? model.L + 1 : 0);
}

// The Helmert basis of R^H, row-major: row 0 = (1, …, 1)/√H, row k = (1, …, 1, −k, 0, …)/√(k(k+1)).
std::vector<double> helmert_basis(int H) {
  std::vector<double> V(static_cast<std::size_t>(H * H), 0.0);
  for (int h = 0; h < H; ++h) V[h] = 1.0 / std::sqrt(static_cast<double>(H));
  for (int k = 1; k < H; ++k) {
    const double norm = 1.0 / std::sqrt(static_cast<double>(k * (k + 1)));
    for (int h = 0; h < k; ++h) V[k * H + h] = norm;
    V[k * H + k] = -k * norm;
  }
  return V;
}

}  // namespace

void symmetric_roots(const Eigen::MatrixXd& Q, Eigen::MatrixXd& C, Eigen::MatrixXd& C_inverse) {
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(Q);
  const Eigen::VectorXd& values = eig.eigenvalues();
  // Directions with no variance (up to rounding) have no scores to condition on: the
  // pseudo-inverse leaves them out.
  const double floor = 1e-13 * std::max(values.cwiseAbs().maxCoeff(), 1e-300);
  Eigen::VectorXd root(values.size()), inverse_root(values.size());
  for (Eigen::Index i = 0; i < values.size(); ++i) {
    root[i] = values[i] > 0 ? std::sqrt(values[i]) : 0.0;
    inverse_root[i] = values[i] > floor ? 1.0 / root[i] : 0.0;
  }
  const Eigen::MatrixXd& V = eig.eigenvectors();
  C = V * root.asDiagonal() * V.transpose();
  C_inverse = V * inverse_root.asDiagonal() * V.transpose();
}

Conditioning Conditioning::of(const OrderParameters& op, bool sampled) {
  // Q̃ = Q − RRᵀ = MMᵀ + Q⊥, the covariance of s_ℓ − Mθ 1[ℓ = ℓ*] − R g_ℓ (docs/model.md §5).
  const Eigen::MatrixXd Qt = sampled ? Eigen::MatrixXd(op.Q - op.R * op.R.transpose()) : op.Q;
  Eigen::MatrixXd C, C_inverse;
  symmetric_roots(Qt, C, C_inverse);
  Conditioning out;
  out.B = op.M.transpose() * C_inverse;
  out.D = C - op.M * out.B;
  return out;
}

SymmetricSamples::SymmetricSamples(const ModelSpec& model, const TheoryOptions& options)
    : model_(model),
      group_(model),
      sampled_(options.channel == ValueChannel::Sampled),
      value_signs_(sampled_ ? 2 : 1),
      seed_(options.seed),
      randomisations_(options.method != SamplingMethod::Sobol ? 0 : options.only_randomisation >= 0 ? 1
                                                                                                     : options.randomisations),
      first_set_(std::max(options.only_randomisation, 0)),
      per_randomisation_(randomisations_ > 0 ? orbits_per_set(options.samples, orbit_size(), options.randomisations)
                                             : 0),
      orbits_(orbits_for(options, orbit_size())),
      base_width_(base_width_of(model, sampled_)) {
  quasi_dimension_ = model.prior.uniforms_per_draw() + base_width_ - model.F();
  helmert_ = helmert_basis(model.H);
  if (randomisations_ > 0) ScrambledSobol(quasi_dimension_, 0);  // checks the dimension
  const int F = model.F();
  for (const std::vector<int>& perm : group_.permutations()) perms_.insert(perms_.end(), perm.begin(), perm.end());
  for (int sigma = 0; sigma < group_.sign_count(); ++sigma)
    for (int f = 0; f < F; ++f) signs_.push_back(group_.sign(sigma, f));
  if (options.mode != MonteCarloMode::Fixed) return;
  stored_.resize(static_cast<std::size_t>(orbit_groups() * base_width_));
#pragma omp parallel
  {
    std::vector<double> aos(static_cast<std::size_t>(kLanes * base_width_));
#pragma omp for schedule(static)
    for (int64_t q = 0; q < orbit_groups(); ++q) draw_group(q, 0, aos.data(), stored_.data() + q * base_width_);
  }
}

// The stream (seed, SymmetricMonteCarlo, lane o, step draw): θ from the prior, then the normals.
void SymmetricSamples::draw_base(int64_t o, uint64_t draw, double* out) const {
  RandomStream rng(StreamId{seed_, Purpose::SymmetricMonteCarlo, static_cast<uint32_t>(o), draw});
  const int F = model_.F();
  model_.prior.sample(rng, out);
  rng.normals(out + F, base_width_ - F);
}

int64_t SymmetricSamples::stored_lanes(const ModelSpec& model, const TheoryOptions& options) {
  if (options.mode != MonteCarloMode::Fixed) return 0;
  const int64_t groups = (orbits_for(options, orbit_size_of(model, options)) + kLanes - 1) / kLanes;
  return groups * base_width_of(model, options.channel == ValueChannel::Sampled);
}

int SymmetricSamples::orbit_size_of(const ModelSpec& model, const TheoryOptions& options) {
  return SymmetryGroup(model).size() * (options.channel == ValueChannel::Sampled ? 2 : 1);
}

int64_t SymmetricSamples::orbits_for(const TheoryOptions& options, int orbit_size) {
  if (options.method == SamplingMethod::Sobol) {
    const int sets = options.only_randomisation >= 0 ? 1 : options.randomisations;
    return sets * orbits_per_set(options.samples, orbit_size, options.randomisations);
  }
  return std::max<int64_t>(2, (options.samples + orbit_size - 1) / orbit_size);
}

const Lanes* SymmetricSamples::group_base(int64_t q, uint64_t draw, double* aos, Lanes* scratch) const {
  if (!stored_.empty()) return stored_.data() + q * base_width_;
  draw_group(q, draw, aos, scratch);
  return scratch;
}

// Point i of randomisation ρ (orbit ρ·n + i) is point i of the Sobol sequence scrambled with
// the seed (seed, ρ, draw): θ's uniforms first, then ξ_1 (the relevant position's, whose
// coordinates matter most), ξ_2 … ξ_L, [g, label noise], as normals.
void SymmetricSamples::quasi_random_bases(int64_t o, uint64_t draw, double* aos) const {
  const int64_t set = first_set_ + o / per_randomisation_;
  const uint64_t scramble = (uint64_t{seed_} << 32) ^ (static_cast<uint64_t>(set) << 8) ^ (draw * 0x9E3779B97F4A7C15ULL);
  const ScrambledSobol sobol(quasi_dimension_, scramble);
  std::vector<double> u(static_cast<std::size_t>(kLanes * quasi_dimension_));
  sobol.uniforms(static_cast<uint32_t>(o % per_randomisation_), kLanes, u.data());
  const int F = model_.F(), H = model_.H, L = model_.L, prior_uniforms = model_.prior.uniforms_per_draw();
  for (int j = 0; j < kLanes; ++j) {
    const double* p = u.data() + j * quasi_dimension_;
    double* z = aos + j * base_width_;
    model_.prior.from_uniforms(p, z);
    // η_ℓk component-major (the heads' common component k = 0 of every position first), then
    // ξ_ℓ = Vᵀ η_ℓ with V the Helmert basis: the coordinates that matter most come first.
    const double* eta = p + prior_uniforms;
    for (int l = 0; l < L; ++l)
      for (int h = 0; h < H; ++h) {
        double x = 0;
        for (int k = 0; k < H; ++k) x += helmert_[k * H + h] * inverse_normal_cdf(eta[k * L + l]);
        z[F + l * H + h] = x;
      }
    for (int i = F + L * H; i < base_width_; ++i) z[i] = inverse_normal_cdf(p[prior_uniforms + i - F]);
  }
}

void SymmetricSamples::draw_group(int64_t q, uint64_t draw, double* aos, Lanes* out) const {
  if (randomisations_ > 0) {
    quasi_random_bases(q * kLanes, draw, aos);  // orbits_ is a multiple of kLanes
  } else {
    for (int j = 0; j < kLanes; ++j) {
      const int64_t o = q * kLanes + j;
      double* z = aos + j * base_width_;
      if (o < orbits_)
        draw_base(o, draw, z);
      else
        std::fill(z, z + base_width_, 0.0);
    }
  }
  for (int j = 0; j < kLanes; ++j)
    for (int i = 0; i < base_width_; ++i) out[i][j] = aos[j * base_width_ + i];
}

void SymmetricSamples::fill_element(const Lanes* base, int e, const Conditioning& cond, Lanes* soa) const {
  const int F = model_.F(), H = model_.H, L = model_.L, K = F + H;
  const int slot = e % sign_slots();
  const int* perm = perms_.data() + (e / sign_slots()) * H;
  const double* sign = signs_.data() + (slot % group_.sign_count()) * F;
  const double value_sign = slot < group_.sign_count() ? 1.0 : -1.0;
  const double *B = cond.B.data(), *D = cond.D.data();
  // λ̄_ℓ = θ' 1[ℓ = ℓ*] + B ξ'_ℓ and w̄_ℓ = D ξ'_ℓ.
  for (int l = 0; l < L; ++l) {
    const Lanes* xi = base + F + l * H;
    for (int f = 0; f < F; ++f) {
      Lanes v = l == 0 ? Lanes(sign[f] * base[f]) : Lanes(Lanes::Zero());
      for (int k = 0; k < H; ++k) v += B[f * H + k] * xi[perm[k]];
      soa[l * K + f] = v;
    }
    for (int h = 0; h < H; ++h) {
      Lanes v = Lanes::Zero();
      for (int k = 0; k < H; ++k) v += D[h * H + k] * xi[perm[k]];
      soa[l * K + F + h] = v;
    }
  }
  // g_ℓ and the label noise, with the value sign.
  for (int i = 0; i < base_width_ - F - L * H; ++i) soa[L * K + i] = value_sign * base[F + L * H + i];
}

}  // namespace headspec::theory_rates
