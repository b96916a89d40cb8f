#pragma once
// Order parameters (docs/model.md §5): everything the theory tracks, and what every engine records.
#include <Eigen/Dense>
#include <limits>
#include <string>
#include <vector>

namespace headspec {

struct OrderParameters {
  Eigen::MatrixXd M;  ///< H×F, M_hf = k_h·u_f/D
  Eigen::VectorXd R;  ///< H,   R_h = k_h·v*/D
  Eigen::MatrixXd Q;  ///< H×H, Q_hh' = k_h·k_h'/D
  Eigen::VectorXd c;  ///< H,   readout weights

  int H() const { return static_cast<int>(M.rows()); }
  int F() const { return static_cast<int>(M.cols()); }
  /// Q⊥ = Q − MMᵀ − RRᵀ: covariance of the key scores' noise part (docs/model.md §5).
  Eigen::MatrixXd orthogonal() const;
  /// Cosine similarity between heads h and g: Q_hg / √(Q_hh Q_gg).
  double cosine(int h, int g) const;
  bool all_finite() const;
};

/// One recorded point of a trajectory.
struct Record {
  int run = 0;
  double t = 0;
  double loss = 0;  ///< population error ε (docs/model.md §4)
  /// Standard error of `loss` as an estimate from test samples (the SGD engines); NaN
  /// where the error is an expectation (the theory: its Monte Carlo error is
  /// TheoryResult::mc_error).
  double loss_se = std::numeric_limits<double>::quiet_NaN();
  OrderParameters op;
};

/// Which standard errors follow the values of a CSV row (docs/cli.md "Output columns").
enum class CsvErrors {
  none,  ///< none
  loss,  ///< loss_se (Record::loss_se): the SGD engines' test-sample error
  all,   ///< loss_se and <column>_se for every value column (`theory --mc-error`)
};

/// The CSV columns of docs/cli.md: run,t,loss,M_h_f…,R_h…,Q_h_g (g ≥ h)…,[c_h…],ortho_h…,cos_h_g (h < g)…,
/// then the standard errors `errors` names.
std::vector<std::string> csv_columns(int H, int F, bool with_readout, CsvErrors errors = CsvErrors::none);
/// The values of one row, in the order of csv_columns (run and t excluded).
void append_csv_values(const Record& r, bool with_readout, std::vector<double>& out);

}  // namespace headspec
