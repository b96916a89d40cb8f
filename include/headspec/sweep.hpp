#pragma once
// Parameter grids for `headspec sweep`: "key=v1,v2;key=a:b;nu=1,1|5,5", expanded
// row-major (the first key varies slowest, the last fastest) into grid points.
#include <cstdint>
#include <string>
#include <vector>

#include "headspec/settings.hpp"

namespace headspec {

/// One key of a grid and its values, as written (ranges expanded).
struct GridAxis {
  std::string key;
  std::vector<std::string> values;
};

/// Keys a grid accepts: the model flag names without dashes, and D when `with_D`.
std::vector<std::string> grid_keys(bool with_D);

/// Parses the --grid value: axes separated by ';', each "key=values". Values are split on
/// '|' for the vector key nu and on ',' or '|' for the others; "a:b" (integers, a ≤ b)
/// stands for a, a+1, …, b. Throws UsageError naming --grid for a malformed axis, an
/// unknown or repeated key, or a bad range. Values themselves are checked by grid_points.
std::vector<GridAxis> parse_grid(const std::string& text, bool with_D);

/// One grid point: the settings it runs with and its coordinates (value index per axis).
struct GridPoint {
  ModelSettings model;
  int64_t D = 0;
  std::vector<std::size_t> index;  ///< index[a] is the value of axis a
};

/// The grid points in row-major order, each applied on top of `base` (and `base_D`);
/// every point's model is validated. Throws UsageError naming --grid, the key and the value.
std::vector<GridPoint> grid_points(const std::vector<GridAxis>& axes, const ModelSettings& base, int64_t base_D);

}  // namespace headspec
