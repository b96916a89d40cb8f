// The exact reduced engine (docs/model.md §9). Why it is exact and what each step does:
// docs/gram-engine.md.
#include "headspec/gram_engine.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "headspec/checkpoint.hpp"
#include "headspec/householder.hpp"
#include "headspec/projection.hpp"
#include "headspec/kernel_fixed.hpp"
#include "headspec/random.hpp"
#include "headspec/wishart.hpp"

namespace headspec {
namespace {

// A with A Aᵀ = cov for a symmetric positive semi-definite cov (pivoted LDLᵀ; pivots below
// rounding level, relative to the largest, are set to 0 so that a rank-deficient cov gives
// an exactly rank-deficient factor rather than √(rounding error) entries). Used by
// set_state only: in a step the factor comes from a QR.
Eigen::MatrixXd psd_factor(const Eigen::MatrixXd& cov) {
  const Eigen::LDLT<Eigen::MatrixXd> ldlt(cov);
  Eigen::MatrixXd L = ldlt.matrixL();
  Eigen::VectorXd d = ldlt.vectorD();
  const double floor = 64 * std::numeric_limits<double>::epsilon() * d.cwiseAbs().maxCoeff();
  for (Eigen::Index i = 0; i < d.size(); ++i) d[i] = d[i] > floor ? std::sqrt(d[i]) : 0.0;
  L = L * d.asDiagonal();
  return ldlt.transpositionsP().transpose() * L;
}

// New coordinates of H vectors given their coordinates in an orthonormal system: with
// coefᵀ = Q R (coefᵀ in `work`, n × H, n ≥ H, factorised in place), coef = Rᵀ Qᵀ, the rows
// of Qᵀ are an orthonormal basis of H vectors spanning them (padded when they have lower
// rank) and Rᵀ (H × H, lower triangular) the coordinates in it. Householder QR keeps the
// basis orthonormal to rounding whatever the rank. The signs are fixed so that the diagonal
// is non-negative (a frame vector may be replaced by its opposite).
void reorthonormalise(Eigen::MatrixXd& work, Eigen::Ref<RowMatrix> out) {
  const int n = static_cast<int>(work.rows()), H = static_cast<int>(work.cols());
  householder_r(work.data(), n, H);
  for (int j = 0; j < H; ++j) {
    const double sign = work(j, j) < 0 ? -1.0 : 1.0;
    for (int h = 0; h < j; ++h) out(h, j) = 0.0;
    for (int h = j; h < H; ++h) out(h, j) = sign * work(j, h);
  }
}

// Scores s_hℓ = x_ℓ·k_h/√D = Σ_i κ_hi ω_ℓi (docs/model.md §9 step 3): κ row-major H × r,
// ω row-major L × r, S row-major H × L. The sizes are ints (step_general) or
// std::integral_constant (step_fixed: the loops are unrolled at compile-time sizes).
template <class Hn, class Ln, class Rn>
void frame_scores(const double* kappa, const double* omega, double* S, Hn H, Ln L, Rn r) {
  for (int h = 0; h < H; ++h)
    for (int l = 0; l < L; ++l) {
      double s = 0;
      for (int i = 0; i < r; ++i) s += kappa[h * r + i] * omega[l * r + i];
      S[h * L + l] = s;
    }
}

// move_out_of_frame at fixed sizes (q = m = H): Aᵀ = [κ_⊥ | −ε C T]ᵀ, column-major 2H × H,
// with C = R_Gᵀ from the QR of Ĝᵀ (Gt, column-major L × H, factorised in place) and T the
// step's Bartlett factor (row-major H × H, lower triangular); κ row-major H × (F + 1 + H).
template <int L, int H, int F>
void move_out_of_frame_fixed(double* Gt, const double* T, double eps, double* kappa) {
  constexpr int r = F + 1 + H, n_at = 2 * H;
  double At[n_at * H];
  for (int h = 0; h < H; ++h)
    for (int i = 0; i < H; ++i) At[h * n_at + i] = kappa[h * r + F + 1 + i];
  householder_r<L, H>(Gt);
  for (int h = 0; h < H; ++h)
    for (int j = 0; j < H; ++j) {
      double s = 0;
      for (int k = j; k <= h; ++k) s += Gt[h * L + k] * T[k * H + j];
      At[h * n_at + H + j] = -eps * s;
    }
  householder_r<n_at, H>(At);
  for (int j = 0; j < H; ++j) {
    const double sign = At[j * n_at + j] < 0 ? -1.0 : 1.0;
    for (int h = 0; h < j; ++h) kappa[h * r + F + 1 + j] = 0.0;
    for (int h = j; h < H; ++h) kappa[h * r + F + 1 + j] = sign * At[h * n_at + j];
  }
}

}  // namespace

GramEngine::GramEngine(const ModelSpec& model, int64_t D, uint32_t seed)
    : model_(model),
      D_(D),
      F_(model.F()),
      H_(model.H),
      L_(model.L),
      r_(model.F() + 1 + model.H),
      outside_dof_(static_cast<double>(D - (model.F() + 1 + model.H))),
      seed_(seed),
      kappa_(RowMatrix::Zero(H_, r_)),
      c_(model.initial_readout()),
      c_grad_(Eigen::VectorXd::Zero(H_)),
      kernel_(model.activation, H_, L_),
      omega_(L_, r_),
      S_(H_, L_),
      J_(H_, L_),
      dK_(H_, r_),
      all_G_(model.batch * model.L, model.H),
      g_(L_),
      theta_(F_) {
  if (outside_dof_ >= 1) {
    outside_.emplace(std::min(model.batch * L_, H_), outside_dof_);
    T_.resize(outside_->rows(), outside_->cols());
    C_.resize(H_, outside_->rows());
    At_.resize(H_ + outside_->cols(), H_);
  } else {
    At_.resize(H_, H_);
  }
  draw_initial_keys();
  select_step();
}

// κ(0), the keys' frame coordinates at t = 0.
void GramEngine::draw_initial_keys() {
  const double sd = std::sqrt(model_.q0), inv_sqrt_d = 1.0 / std::sqrt(static_cast<double>(D_));
  // Coordinates on u_f/√D and v*/√D: k_h·e_i/√D for i ≤ F, the dense engine's numbers with
  // its arithmetic (√q0·x, then /√D), so M(0) and R(0) agree to the last bit.
  Eigen::VectorXd fixed(F_ + 1);
  for (int h = 0; h < H_; ++h) {
    fill_normal(StreamId{seed_, Purpose::KeyInit, static_cast<uint32_t>(h), 0}, 0, fixed.data(),
                static_cast<std::size_t>(F_ + 1));
    for (int i = 0; i <= F_; ++i) kappa_(h, i) = (fixed[i] * sd) * inv_sqrt_d;
  }
  // The rest of k_h: H Gaussian vectors N(0, q0 I) in the D − F − 1 dimensions orthogonal
  // to u, v*; their coordinates in the orthonormal basis of their LQ decomposition are the
  // Bartlett factor (lower triangular, positive diagonal), padded with zero columns when
  // D − F − 1 < H.
  RandomStream rng(StreamId{seed_, Purpose::KeyInit, static_cast<uint32_t>(H_), 0});
  RowMatrix initial;
  sample_bartlett(rng, H_, static_cast<double>(D_ - F_ - 1), initial);
  kappa_.block(0, F_ + 1, H_, initial.cols()) = (sd * inv_sqrt_d) * initial;
}

// The sizes with a fixed-size step: the seed paper's L = 5 and 10 (Fig. 6, bench_gram) and
// the tests' L = 4, each with H = 2 and F = 2 (the flip prior ν = (2, 2)).
void GramEngine::select_step() {
  step_impl_ = &GramEngine::step_general;
  if (!fixed_kernel_supports(model_.activation) || model_.batch != 1 || !outside_ || outside_->rows() != H_ ||
      outside_->cols() != H_)
    return;
  if (H_ == 2 && F_ == 2) {
    if (L_ == 4) step_impl_ = &GramEngine::step_fixed<4, 2, 2>;
    if (L_ == 5) step_impl_ = &GramEngine::step_fixed<5, 2, 2>;
    if (L_ == 10) step_impl_ = &GramEngine::step_fixed<10, 2, 2>;
  }
}

EngineFactory GramEngine::factory(const ModelSpec& model, int64_t D) {
  return [model, D](uint32_t seed) { return std::make_unique<GramEngine>(model, D, seed); };
}

void GramEngine::set_state(const OrderParameters& op) {
  kappa_.leftCols(F_) = op.M;
  kappa_.col(F_) = op.R;
  Eigen::MatrixXd work = psd_factor(op.orthogonal()).transpose();
  reorthonormalise(work, kappa_.rightCols(H_));
  c_ = op.c;
}

// One step n (docs/model.md §9 with batch B; docs/gram-engine.md "Algorithm"). Sample b draws
// from the stream (seed, Train, lane b(L+1)+L, step n) — the dense engine's lane of that
// sample's ℓ*, θ and label noise, and the same ℓ*, θ (uniforms are the same numbers in both
// chunk layouts) — then its L × r frame coordinates ω; sample 0's stream also gives the
// Bartlett factor of the step's out-of-frame noise. The stream computes 32 normals and 4
// uniforms at a time (StreamChunk::Batch), about what a step at L = 5, H = 2 draws.
void GramEngine::step(uint64_t n) { (this->*step_impl_)(n); }

void GramEngine::step_general(uint64_t n) {
  const int B = model_.batch;
  const double lr_factor = model_.step_factor(n, D_);  // the schedule (docs/model.md §4)
  const double eps = (model_.lr * lr_factor) / (B * static_cast<double>(D_));
  const bool learned = model_.readout == Readout::Learned;
  dK_.setZero();
  if (learned) c_grad_.setZero();
  const double noise_sd = std::sqrt(model_.noise);
  for (int b = 0; b < B; ++b) accumulate_sample(n, b, noise_sd);
  // In-frame part of k_h ← k_h − (η/(B√D)) Σ_b Σ_ℓ G_hℓ x_ℓ (docs/model.md §4), in κ units.
  for (int k = 0; k < H_ * r_; ++k) kappa_.data()[k] -= eps * dK_.data()[k];
  move_out_of_frame(eps);
  if (learned) c_ -= ((model_.readout_lr * lr_factor) / (B * static_cast<double>(D_))) * c_grad_;
}

// Sample b of step n: its draws, scores, attention and gradient, added to dK_ (Σ_b G^b ω^b),
// all_G_ (Ĝᵀ) and c_grad_; noise_sd = √(label-noise variance), taken once per step.
void GramEngine::accumulate_sample(uint64_t n, int b, double noise_sd) {
  const int F = F_, H = H_, L = L_, r = r_;
  RandomStream rng(StreamId{seed_, Purpose::Train, static_cast<uint32_t>(b * (L + 1) + L), n}, StreamChunk::Batch);
  const int lstar = static_cast<int>(rng.below(L));
  model_.prior.sample(rng, theta_.data());
  const double xi = model_.noise > 0 ? rng.normal() : 0.0;
  // Token ℓ = Σ_i ω_ℓi b_i + z⊥_ℓ; the spike θ_f u_f/√D = θ_f b_f lies in the frame.
  double* omega = omega_.data();  // row-major L × r
  for (int k = 0; k < L * r; ++k) omega[k] = rng.normal();
  for (int f = 0; f < F; ++f) omega[lstar * r + f] += theta_[f];
  if (b == 0 && outside_) (*outside_)(rng, T_);

  // Scores s_hℓ and values g_ℓ = ω_ℓ,F+1 (docs/model.md §9 step 3).
  frame_scores(kappa_.data(), omega, S_.data(), H, L, r);
  for (int l = 0; l < L; ++l) g_[l] = omega[l * r + F];
  kernel_.forward(S_, g_, c_);
  const double y = g_[lstar] + noise_sd * xi;
  const double res = kernel_.output() - y;
  if (!std::isfinite(res)) diverged_ = true;
  kernel_.apply_jacobian(g_, J_);
  // G = r J; Σ_b G^b ω^b and Ĝᵀ.
  for (int h = 0; h < H; ++h) {
    double* dk = dK_.data() + h * r;
    for (int l = 0; l < L; ++l) {
      const double G = res * J_(h, l);
      all_G_(b * L + l, h) = G;
      const double* wl = omega + l * r;
      for (int i = 0; i < r; ++i) dk[i] += G * wl[i];
    }
  }
  if (model_.readout == Readout::Learned) c_grad_ += res * kernel_.head_outputs();
}

// Out-of-frame part Y = −ε Σ_b G^b Z^b = −ε Ĝ Z, with Ĝ = (G^1 … G^B) (H × BL) and Z
// (BL × (D−r)) i.i.d. N(0,1), independent of Ĝ (which only depends on frame
// coordinates): Y is matrix-normal with row covariance ε² Ĝ Ĝᵀ. With the thin QR
// Ĝᵀ = Q_G R_G, Ĝ Ĝᵀ = C Cᵀ for C = R_Gᵀ (H × q, q = min(BL, H)), so Y = −ε C W with W
// (q × (D−r)) Gaussian, and W = T N with T the q × min(q, D−r) Bartlett factor and N new
// orthonormal directions outside the frame. The keys' components off span(u, v*) are then
// H vectors in the H + m orthonormal directions (frame, N): re-orthonormalise them back to
// H frame vectors. Identical rows of Ĝ give rows of C equal to rounding (a QR, unlike a
// Cholesky of Ĝ Ĝᵀ, never takes the square root of a rounding error): identical heads
// stay identical to 10^-16 per step. At_ holds Aᵀ = [κ_⊥ | −ε C T]ᵀ, column h for head h.
void GramEngine::move_out_of_frame(double eps) {
  const int F = F_, H = H_;
  for (int h = 0; h < H; ++h)
    for (int i = 0; i < H; ++i) At_(i, h) = kappa_(h, F + 1 + i);
  if (outside_) {
    const int q = outside_->rows(), m = outside_->cols();
    householder_r(all_G_.data(), static_cast<int>(all_G_.rows()), H);
    for (int h = 0; h < H; ++h)
      for (int j = 0; j < q; ++j) C_(h, j) = j <= h ? all_G_(j, h) : 0.0;
    for (int h = 0; h < H; ++h)
      for (int j = 0; j < m; ++j) {
        double s = 0;  // (C T)_hj: T is lower trapezoidal, C lower triangular
        for (int k = j; k <= std::min(h, q - 1); ++k) s += C_(h, k) * T_(k, j);
        At_(H + j, h) = -eps * s;
      }
  }
  reorthonormalise(At_, kappa_.rightCols(H));
}

// step_general for B = 1, softmax or softmax-1, q = m = H (L ≥ H, D − r ≥ H), with L, H, F
// known at compile time: the same draws in the same order and the same arithmetic, on stack
// arrays; the attention is the same kernel at fixed sizes (AttentionKernelFixed), apart
// from sums that step_general takes in Eigen's order, so the two agree to rounding.
template <int L, int H, int F>
void GramEngine::step_fixed(uint64_t n) {
  constexpr int r = F + 1 + H;
  const double lr_factor = model_.step_factor(n, D_);  // the schedule (docs/model.md §4)
  const double eps = (model_.lr * lr_factor) / static_cast<double>(D_);
  const double noise_sd = std::sqrt(model_.noise);
  double* kappa = kappa_.data();  // row-major H × r
  double* c = c_.data();
  RandomStream rng(StreamId{seed_, Purpose::Train, static_cast<uint32_t>(L), n}, StreamChunk::Batch);
  const int lstar = static_cast<int>(rng.below(L));
  double theta[F];
  model_.prior.sample(rng, theta);
  const double xi = model_.noise > 0 ? rng.normal() : 0.0;
  double omega[L * r];  // row-major L × r
  rng.normals(omega, L * r);
  for (int f = 0; f < F; ++f) omega[lstar * r + f] += theta[f];
  (*outside_)(rng, T_);

  double S[H * L], g[L];
  frame_scores(kappa, omega, S, std::integral_constant<int, H>{}, std::integral_constant<int, L>{},
               std::integral_constant<int, r>{});
  for (int l = 0; l < L; ++l) g[l] = omega[l * r + F];
  AttentionKernelFixed<H, L> kernel(model_.activation);
  kernel.forward(S, g, c);
  const double res = kernel.output() - (g[lstar] + noise_sd * xi);
  if (!std::isfinite(res)) diverged_ = true;
  double J[H * L];
  kernel.apply_jacobian(g, J);
  double dK[H * r] = {}, Gt[L * H];  // Σ G ω (row-major H × r) and Ĝᵀ (column-major L × H)
  for (int h = 0; h < H; ++h)
    for (int l = 0; l < L; ++l) {
      const double G = res * J[h * L + l];
      Gt[h * L + l] = G;
      for (int i = 0; i < r; ++i) dK[h * r + i] += G * omega[l * r + i];
    }
  if (model_.readout == Readout::Learned) {
    const double rate = (model_.readout_lr * lr_factor) / static_cast<double>(D_);
    for (int h = 0; h < H; ++h) c[h] -= rate * (res * kernel.head_outputs()[h]);
  }
  for (int k = 0; k < H * r; ++k) kappa[k] -= eps * dK[k];

  move_out_of_frame_fixed<L, H, F>(Gt, T_.data(), eps, kappa);
}

void GramEngine::save_state(StateWriter& out) const {
  out.put_doubles(kappa_.data(), static_cast<std::size_t>(kappa_.size()));
  out.put_doubles(c_.data(), static_cast<std::size_t>(c_.size()));
}

void GramEngine::load_state(StateReader& in) {
  in.doubles_into(kappa_.data(), static_cast<std::size_t>(kappa_.size()));
  in.doubles_into(c_.data(), static_cast<std::size_t>(c_.size()));
}

MeanEstimate GramEngine::recorded_error(const OrderParameters& op, int test_samples) const {
  return population_error(model_, op, seed_, test_samples);
}

OrderParameters GramEngine::order_parameters() const {
  OrderParameters op;
  op.M = kappa_.leftCols(F_);
  op.R = kappa_.col(F_);
  op.Q = kappa_ * kappa_.transpose();
  op.c = c_;
  return op;
}

}  // namespace headspec
