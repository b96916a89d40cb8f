// Input files (include/headspec/input_file.hpp).
#include "headspec/input_file.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "headspec/errors.hpp"

namespace headspec {

namespace {

// The descriptor, closed on every way out.
struct OpenFile {
  int fd;
  ~OpenFile() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

std::string read_input_file(const std::string& path, const std::string& flag, std::size_t max_bytes) {
  // O_NONBLOCK: opening a FIFO with no writer would otherwise wait forever before fstat
  // could say what it is.
  const OpenFile file{::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC)};
  const int fd = file.fd;
  if (fd < 0) throw UsageError(fmt::format("{}: cannot read '{}': {}", flag, path, std::strerror(errno)));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
    throw UsageError(fmt::format("{}: '{}' is not a regular file", flag, path));
  if (static_cast<std::size_t>(st.st_size) > max_bytes)
    throw UsageError(fmt::format("{}: '{}' has {} bytes, more than the {} an input of this kind may have", flag, path,
                                 st.st_size, max_bytes));
  std::string content(static_cast<std::size_t>(st.st_size), '\0');
  std::size_t done = 0;
  // Read to the size fstat gave, and one byte more to see that the file did not grow.
  while (true) {
    if (done == content.size()) content.resize(content.size() + 1);
    const ssize_t n = ::read(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw UsageError(fmt::format("{}: cannot read '{}': {}", flag, path, std::strerror(errno)));
    if (n == 0) break;
    done += static_cast<std::size_t>(n);
    if (done > max_bytes)
      throw UsageError(fmt::format("{}: '{}' grew past {} bytes while being read", flag, path, max_bytes));
  }
  content.resize(done);
  return content;
}

}  // namespace headspec
