#pragma once
// Priors on the latent spike θ ∈ R^F (docs/model.md §2) and their position likelihood
// w(λ) = E_θ exp(θ·λ − |θ|²/2) (docs/model.md §8).
#include <Eigen/Dense>
#include <istream>
#include <string>
#include <vector>

#include "headspec/random.hpp"

namespace headspec {

enum class PriorKind { Flip, Gauss, Spike, Mixture };

class Prior {
 public:
  /// flip: θ_1 = √ν_1, θ_f = ±√ν_f (f ≥ 2); gauss: θ_f ~ N(0, ν_f); spike: θ_f = √ν_f.
  static Prior flip(const Eigen::VectorXd& nu);
  static Prior gauss(const Eigen::VectorXd& nu);
  static Prior spike(const Eigen::VectorXd& nu);
  /// Atoms θ^a (rows) with positive weights π^a (normalised here).
  static Prior mixture(const Eigen::MatrixXd& atoms, const Eigen::VectorXd& weights);
  /// Reads a mixture file: one atom per line, "weight θ_1 … θ_F"; blank lines and lines
  /// starting with '#' are skipped. Throws UsageError naming the line on any defect.
  static Prior mixture_file(const std::string& path);
  /// The same format read from a stream; `source` names it in the messages.
  static Prior mixture_stream(std::istream& in, const std::string& source);
  /// Parses the --prior value: flip | gauss | spike | mixture:FILE, with ν for the first three.
  static Prior parse(const std::string& spec, const Eigen::VectorXd& nu);

  PriorKind kind() const { return kind_; }
  const std::string& name() const { return name_; }
  int F() const { return static_cast<int>(nu_.size()); }
  /// ν_f = E θ_f² (computed from the atoms for a mixture).
  const Eigen::VectorXd& nu() const { return nu_; }
  /// E θ_f: non-zero along the prior's constant directions.
  Eigen::VectorXd mean() const;
  /// The directions f whose sign flip θ_f → −θ_f leaves the prior invariant (docs/model.md §2):
  /// f ≥ 2 for flip, every f for gauss, none for spike; for a mixture, those f for which every
  /// atom's mirror image in f is an atom of the same weight. In increasing order.
  std::vector<int> sign_symmetric_directions() const;
  /// Atoms and weights of a discrete prior (flip, spike, mixture); empty for gauss.
  const Eigen::MatrixXd& atoms() const { return atoms_; }
  const Eigen::VectorXd& weights() const { return weights_; }

  /// One draw of θ into theta (size F).
  void sample(RandomStream& rng, double* theta) const;
  /// Uniforms a draw of θ takes from a quasi-random point: F for gauss, 1 for a mixture of
  /// several atoms, none for flip (whose signs the symmetric samples' orbits take) and spike.
  int uniforms_per_draw() const;
  /// θ from uniforms_per_draw() uniforms u: θ_f = √ν_f Φ⁻¹(u_f) (gauss), the atom whose
  /// cumulative weight first exceeds u_0 (mixture), θ_f = √ν_f (flip, spike).
  void from_uniforms(const double* u, double* theta) const;
  /// log w(λ) for one position, λ of size F (docs/model.md §8), computed stably.
  double log_likelihood(const double* lambda) const;

 private:
  // The atom a draw u ∈ (0, 1) selects: the first whose cumulative weight exceeds u.
  std::size_t atom_at(double u) const;

  PriorKind kind_ = PriorKind::Flip;
  std::string name_;
  Eigen::VectorXd nu_;
  Eigen::MatrixXd atoms_;
  Eigen::VectorXd weights_, log_weights_, half_norm2_;
  std::vector<double> cumulative_;
};

}  // namespace headspec
