#pragma once
// Parameter grids for `headspec sweep`: "key=v1,v2;key=a:b;nu=1,1|5,5", expanded
// row-major (the first key varies slowest, the last fastest) into grid points.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "headspec/settings.hpp"
#include "headspec/simulation.hpp"

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

/// A trajectory as bytes: every double as its 8 IEEE bytes, so that a result read back (from
/// a work folder, or from another MPI rank) prints exactly as the one computed.
std::string serialize_trajectory(const Trajectory& trajectory);
/// The inverse of serialize_trajectory; throws std::runtime_error unless `bytes` is exactly
/// one serialized trajectory.
Trajectory deserialize_trajectory(std::string_view bytes);

/// The work folder of a resumable sweep (`sweep --work-dir`): one file per finished
/// (grid point, run), written atomically, named by the SHA-256 of the task's key (a text
/// holding every parameter the result depends on), which the file also holds in full. A
/// changed parameter changes the key, so a stale result is never read back for a task.
class SweepWorkDir {
 public:
  explicit SweepWorkDir(std::string folder);
  const std::string& folder() const { return folder_; }
  /// The file of the task whose key is `key`.
  std::string file_of(const std::string& key) const;
  /// The result stored for `key`; nullopt when there is none. A file that is not a result
  /// for exactly this key (damaged, or another format) is reported through `problem` and
  /// treated as absent, so the task is computed again and the file replaced.
  std::optional<Trajectory> load(const std::string& key, std::string* problem = nullptr) const;
  /// Stores the result of `key` atomically (temporary file, then rename).
  void store(const std::string& key, const Trajectory& trajectory) const;
  /// Number of task files in the folder whose name is not in `keys`' files: results of
  /// other parameters, left alone.
  std::size_t count_other_files(const std::vector<std::string>& keys) const;
  /// Throws UsageError naming --work-dir if the task file of one of `keys` exists but is not
  /// a regular file (a folder, FIFO, device or socket, or a link to one): it could be neither
  /// read nor replaced, so the run would end without its CSV, every time it is run again.
  void check_task_entries(const std::vector<std::string>& keys) const;

 private:
  std::string folder_;
};


}  // namespace headspec
