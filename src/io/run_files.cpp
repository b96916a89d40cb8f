// The files of one run (include/headspec/run_files.hpp).
#include "headspec/run_files.hpp"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <filesystem>

#include "headspec/atomic_file.hpp"
#include "headspec/errors.hpp"

namespace headspec {
namespace {

namespace fs = std::filesystem;

// Whether a and b are one file: the same path after resolving links, or the same inode.
bool same_file(const std::string& a, const std::string& b) {
  std::error_code ec;
  const fs::path ca = fs::weakly_canonical(fs::absolute(a, ec), ec);
  const fs::path cb = fs::weakly_canonical(fs::absolute(b, ec), ec);
  if (ca == cb) return true;
  struct stat sa {}, sb {};
  return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

// An output is written as ".NAME.tmp.PID.XXXXXX" beside it and renamed (atomic_file.cpp;
// a PID has at most 7 digits), and --out has its sidecar NAME.json: both names must fit a
// folder entry and the whole path PATH_MAX, or the run would fail only once it is done.
constexpr std::size_t kWrittenNameExtra = 20 + 5;

// `target`: regular_target(path), empty for a path that is not a regular file.
void check_name_lengths(const std::string& path, const std::string& target, const fs::path& dir,
                        const std::string& flag) {
  const std::string name = fs::path(target.empty() ? path : target).filename().string();
  long name_max = ::pathconf(dir.c_str(), _PC_NAME_MAX);
  if (name_max <= 0) name_max = NAME_MAX;
  if (name.size() + kWrittenNameExtra > static_cast<std::size_t>(name_max))
    throw UsageError(fmt::format("{}: the file name is too long ({} bytes; at most {} here, as the temporary and "
                                 "sidecar names written beside it add {})",
                                 flag, name.size(), name_max - static_cast<long>(kWrittenNameExtra), kWrittenNameExtra));
  std::error_code ec;
  if (fs::absolute(target.empty() ? path : target, ec).string().size() + kWrittenNameExtra >= PATH_MAX)
    throw UsageError(fmt::format("{}: the path is too long (with the names written beside it, PATH_MAX {})", flag,
                                 PATH_MAX));
}

}  // namespace

void check_output_path(const std::string& path, const std::string& flag) {
  if (path == "-") throw UsageError(fmt::format("{}: '-' is not a file (only --out writes to standard output, when absent)", flag));
  fs::path p(path);
  if (p.filename().empty()) throw UsageError(fmt::format("{}: '{}' names a folder, not a file", flag, path));
  const auto dir = p.parent_path().empty() ? fs::path(".") : p.parent_path();
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw UsageError(fmt::format("{}: folder '{}' does not exist", flag, dir.string()));
  if (::access(dir.c_str(), W_OK) != 0) throw UsageError(fmt::format("{}: folder '{}' is not writable", flag, dir.string()));
  if (fs::is_directory(p, ec)) throw UsageError(fmt::format("{}: '{}' is a folder", flag, path));
  const std::string target = regular_target(path);
  check_name_lengths(path, target, dir, flag);
  if (target.empty())
    throw UsageError(fmt::format("{}: '{}' is not a regular file (a device, FIFO or socket): headspec writes only "
                                 "regular files",
                                 flag, path));
}

RunFiles& RunFiles::output(const std::string& flag, const std::string& path) {
  if (path.empty()) return *this;
  check_output_path(path, flag);
  entries_.push_back({flag, path, true});
  return *this;
}

RunFiles& RunFiles::derived_output(const std::string& what, const std::string& path) {
  if (!path.empty()) {
    if (regular_target(path).empty())
      throw UsageError(fmt::format("{}: '{}' is not a regular file: headspec writes only regular files", what, path));
    entries_.push_back({what, path, true});
  }
  return *this;
}

RunFiles& RunFiles::input(const std::string& flag, const std::string& path) {
  if (!path.empty()) entries_.push_back({flag, path, false});
  return *this;
}

RunFiles& RunFiles::inputs(const std::vector<NamedFile>& files) {
  for (const auto& f : files) input(f.flag, f.path);
  return *this;
}

RunFiles& RunFiles::folder(const std::string& flag, const std::string& path) {
  if (!path.empty()) entries_.push_back({flag, path, true});
  return *this;
}

void RunFiles::check() const {
  for (std::size_t i = 0; i < entries_.size(); ++i)
    for (std::size_t j = i + 1; j < entries_.size(); ++j) {
      const Entry &a = entries_[i], &b = entries_[j];
      if (!(a.written || b.written) || !same_file(a.path, b.path)) continue;
      const Entry& out = a.written ? a : b;
      const Entry& other = a.written ? b : a;
      throw UsageError(fmt::format("{}: '{}' is also {} ('{}'): {}", out.what, out.path,
                                   other.written ? "written as " + other.what : "read as " + other.what, other.path,
                                   other.written ? "give each output its own file" : "an output never replaces an input"));
    }
}

}  // namespace headspec
