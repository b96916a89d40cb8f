// The exact reduced engine (MODEL.md §9). Why it is exact and what each step does:
// docs/gram-engine.md.
#include "headspec/gram_engine.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "headspec/checkpoint.hpp"
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

// Replaces the rows of `coef` (H × n, n ≥ H: coordinates of H vectors in an orthonormal
// basis) by their coordinates in an orthonormal basis of H vectors spanning them (padded
// when they have lower rank): the thin QR coefᵀ = Q R gives coef = Rᵀ Qᵀ, the rows of Qᵀ
// are the new basis and Rᵀ (H × H, lower triangular) the new coordinates. Householder QR
// keeps the basis orthonormal to rounding whatever the rank. The signs are fixed so that
// the diagonal is non-negative (a frame vector may be replaced by its opposite).
void reorthonormalise(const RowMatrix& coef, Eigen::MatrixXd& work, Eigen::HouseholderQR<Eigen::MatrixXd>& qr,
                      Eigen::Ref<RowMatrix> out) {
  const int H = static_cast<int>(coef.rows());
  work = coef.transpose();
  qr.compute(work);
  out.setZero();
  const auto& packed = qr.matrixQR();
  for (int j = 0; j < H; ++j) {
    const double sign = packed(j, j) < 0 ? -1.0 : 1.0;
    for (int h = j; h < H; ++h) out(h, j) = sign * packed(j, h);
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
      G_(H_, L_),
      dK_(H_, r_),
      all_G_(model.batch * model.L, model.H),
      g_(L_),
      theta_(F_) {
  const double sd = std::sqrt(model.q0), inv_sqrt_d = 1.0 / std::sqrt(static_cast<double>(D));
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
  sample_bartlett(rng, H_, static_cast<double>(D - F_ - 1), T_);
  kappa_.block(0, F_ + 1, H_, T_.cols()) = (sd * inv_sqrt_d) * T_;
}

EngineFactory GramEngine::factory(const ModelSpec& model, int64_t D) {
  return [&model, D](uint32_t seed) { return std::make_unique<GramEngine>(model, D, seed); };
}

void GramEngine::set_state(const OrderParameters& op) {
  kappa_.leftCols(F_) = op.M;
  kappa_.col(F_) = op.R;
  const RowMatrix factor = psd_factor(op.orthogonal());
  Eigen::HouseholderQR<Eigen::MatrixXd> qr;
  reorthonormalise(factor, At_, qr, kappa_.rightCols(H_));
  c_ = op.c;
}

// One step n (MODEL.md §9 with batch B; docs/gram-engine.md "Algorithm"). Sample b draws
// from the stream (seed, Train, lane b(L+1)+L, step n) — the dense engine's stream of that
// sample's ℓ*, θ and label noise, so those coincide — then its L × r frame coordinates ω;
// sample 0's stream also gives the Bartlett factor of the step's out-of-frame noise.
void GramEngine::step(uint64_t n) {
  const int B = model_.batch;
  const double eps = model_.lr / (B * static_cast<double>(D_));
  dK_.setZero();
  c_grad_.setZero();
  const int q = std::min(B * L_, H_);  // rank bound of the out-of-frame update
  for (int b = 0; b < B; ++b) {
    RandomStream rng(StreamId{seed_, Purpose::Train, static_cast<uint32_t>(b * (L_ + 1) + L_), n});
    const int lstar = static_cast<int>(rng.below(L_));
    model_.prior.sample(rng, theta_.data());
    const double xi = model_.noise > 0 ? rng.normal() : 0.0;
    // Token ℓ = Σ_i ω_ℓi b_i + z⊥_ℓ; the spike θ_f u_f/√D = θ_f b_f lies in the frame.
    for (int l = 0; l < L_; ++l)
      for (int i = 0; i < r_; ++i) omega_(l, i) = rng.normal();
    for (int f = 0; f < F_; ++f) omega_(lstar, f) += theta_[f];
    if (b == 0 && outside_dof_ >= 1) sample_bartlett(rng, q, outside_dof_, T_);

    // Scores s_hℓ = x_ℓ·k_h/√D = Σ_i κ_hi ω_ℓi; values g_ℓ = ω_ℓ,F+1 (MODEL.md §9 step 3).
    S_.noalias() = kappa_ * omega_.transpose();
    g_ = omega_.col(F_);
    kernel_.forward(S_, g_, c_);
    const double y = g_[lstar] + std::sqrt(model_.noise) * xi;
    const double res = kernel_.output() - y;
    if (!std::isfinite(res)) diverged_ = true;
    kernel_.apply_jacobian(g_, J_);
    G_ = res * J_;
    dK_.noalias() += G_ * omega_;
    all_G_.middleRows(b * L_, L_) = G_.transpose();
    if (model_.readout == Readout::Learned) c_grad_ += res * kernel_.head_outputs();
  }
  // In-frame part of k_h ← k_h − (η/(B√D)) Σ_b Σ_ℓ G_hℓ x_ℓ (MODEL.md §4), in κ units.
  kappa_.noalias() -= eps * dK_;

  // Out-of-frame part Y = −ε Σ_b G^b Z^b = −ε Ĝ Z, with Ĝ = (G^1 … G^B) (H × BL) and Z
  // (BL × (D−r)) i.i.d. N(0,1), independent of Ĝ (which only depends on frame
  // coordinates): Y is matrix-normal with row covariance ε² Ĝ Ĝᵀ. With the thin QR
  // Ĝᵀ = Q_G R_G, Ĝ Ĝᵀ = C Cᵀ for C = R_Gᵀ (H × q, q = min(BL, H)), so Y = −ε C W with W
  // (q × (D−r)) Gaussian, and W = T N with T the q × min(q, D−r) Bartlett factor and N new
  // orthonormal directions outside the frame. The keys' components off span(u, v*) are then
  // H vectors in the H + m orthonormal directions (frame, N): re-orthonormalise them back to
  // H frame vectors. Identical rows of Ĝ give rows of C equal to rounding (a QR, unlike a
  // Cholesky of Ĝ Ĝᵀ, never takes the square root of a rounding error): identical heads
  // stay identical to 10^-16 per step.
  const int m = outside_dof_ >= 1 ? static_cast<int>(T_.cols()) : 0;
  A_.resize(H_, H_ + m);
  A_.leftCols(H_) = kappa_.rightCols(H_);
  if (m > 0) {
    g_qr_.compute(all_G_);
    C_.setZero(H_, q);
    const auto& packed = g_qr_.matrixQR();
    for (int j = 0; j < q; ++j)
      for (int h = j; h < H_; ++h) C_(h, j) = packed(j, h);
    A_.rightCols(m).noalias() = (-eps) * (C_ * T_);
  }
  reorthonormalise(A_, At_, qr_, kappa_.rightCols(H_));

  if (model_.readout == Readout::Learned) c_ -= (model_.readout_lr / (B * static_cast<double>(D_))) * c_grad_;
}

void GramEngine::save_state(StateWriter& out) const {
  out.put_doubles(kappa_.data(), static_cast<std::size_t>(kappa_.size()));
  out.put_doubles(c_.data(), static_cast<std::size_t>(c_.size()));
}

void GramEngine::load_state(StateReader& in) {
  in.doubles_into(kappa_.data(), static_cast<std::size_t>(kappa_.size()));
  in.doubles_into(c_.data(), static_cast<std::size_t>(c_.size()));
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
