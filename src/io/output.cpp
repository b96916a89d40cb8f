#include <fcntl.h>
#include <sys/stat.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "headspec/errors.hpp"
#include "headspec/io.hpp"
#include "headspec/version.hpp"

namespace headspec {

void write_file_atomic(const std::string& path, const std::string& content) {
  const std::filesystem::path target(path);
  const std::string tmp = (target.parent_path() / fmt::format(".{}.tmpXXXXXX", target.filename().string())).string();
  std::vector<char> name(tmp.begin(), tmp.end());
  name.push_back('\0');
  const int fd = mkstemp(name.data());
  if (fd < 0) throw std::runtime_error(fmt::format("cannot create a temporary file beside '{}': {}", path, std::strerror(errno)));
  std::size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      ::unlink(name.data());
      throw std::runtime_error(fmt::format("cannot write '{}': {}", path, std::strerror(err)));
    }
    done += static_cast<std::size_t>(n);
  }
  fchmod(fd, 0644);
  if (::fsync(fd) != 0 || ::close(fd) != 0 || std::rename(name.data(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(name.data());
    throw std::runtime_error(fmt::format("cannot write '{}': {}", path, std::strerror(err)));
  }
  // The rename is durable only once the folder's entry is on disk: a crash after the
  // rename but before the folder is flushed could otherwise lose a finished file (POSIX
  // fsync on the folder; best effort, as some file systems refuse to open folders).
  const auto dir = target.parent_path().empty() ? std::filesystem::path(".") : target.parent_path();
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

std::string format_csv(const std::vector<const Record*>& records, int H, int F, bool with_readout,
                       const std::vector<const std::vector<double>*>* errors) {
  fmt::memory_buffer out;
  const auto cols = errors ? csv_columns_with_errors(H, F, with_readout) : csv_columns(H, F, with_readout);
  fmt::format_to(std::back_inserter(out), "{}\n", fmt::join(cols, ","));
  std::vector<double> values;
  for (std::size_t i = 0; i < records.size(); ++i) {
    const Record* r = records[i];
    values.clear();
    append_csv_values(*r, with_readout, values);
    fmt::format_to(std::back_inserter(out), "{},{}", r->run, r->t);
    for (double v : values) fmt::format_to(std::back_inserter(out), ",{}", v);
    if (errors)
      for (double v : *(*errors)[i]) fmt::format_to(std::back_inserter(out), ",{}", v);
    out.push_back('\n');
  }
  return fmt::to_string(out);
}

nlohmann::json provenance() {
  return {{"program", "headspec"}, {"version", kVersion}, {"git_revision", kGitRevision}};
}

void check_output_path(const std::string& path, const std::string& flag) {
  std::filesystem::path p(path);
  if (p.filename().empty()) throw UsageError(fmt::format("{}: '{}' names a folder, not a file", flag, path));
  const auto dir = p.parent_path().empty() ? std::filesystem::path(".") : p.parent_path();
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    throw UsageError(fmt::format("{}: folder '{}' does not exist", flag, dir.string()));
  if (::access(dir.c_str(), W_OK) != 0) throw UsageError(fmt::format("{}: folder '{}' is not writable", flag, dir.string()));
  if (std::filesystem::is_directory(p, ec)) throw UsageError(fmt::format("{}: '{}' is a folder", flag, path));
}

}  // namespace headspec
