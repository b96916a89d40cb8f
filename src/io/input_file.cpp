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

// The refusal: naming the parameter (the CLI's flag, Python's keyword) where one names the
// file, else `what`.
[[noreturn]] void refuse(const std::string& parameter, const std::string& what, const std::string& reason) {
  if (parameter.empty()) throw UsageError(what + ": " + reason);
  throw ParameterError(parameter, what.empty() ? reason : what + ": " + reason);
}

}  // namespace

std::string read_input_file(const std::string& path, const std::string& parameter, std::size_t max_bytes,
                            const std::string& what) {
  // O_NONBLOCK: opening a FIFO with no writer would otherwise wait forever before fstat
  // could say what it is.
  const OpenFile file{::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC)};
  const int fd = file.fd;
  if (fd < 0) refuse(parameter, what, fmt::format("cannot read '{}': {}", path, std::strerror(errno)));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
    refuse(parameter, what, fmt::format("'{}' is not a regular file", path));
  if (static_cast<std::size_t>(st.st_size) > max_bytes)
    refuse(parameter, what, fmt::format("'{}' has {} bytes, more than the {} an input of this kind may have", path,
                                 st.st_size, max_bytes));
  std::string content(static_cast<std::size_t>(st.st_size), '\0');
  std::size_t done = 0;
  // Read to the size fstat gave, and one byte more to see that the file did not grow.
  while (true) {
    if (done == content.size()) content.resize(content.size() + 1);
    const ssize_t n = ::read(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) refuse(parameter, what, fmt::format("cannot read '{}': {}", path, std::strerror(errno)));
    if (n == 0) break;
    done += static_cast<std::size_t>(n);
    if (done > max_bytes)
      refuse(parameter, what, fmt::format("'{}' grew past {} bytes while being read", path, max_bytes));
  }
  content.resize(done);
  return content;
}

}  // namespace headspec
