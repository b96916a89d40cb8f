// Atomic writes (include/headspec/atomic_file.hpp).
//
// A temporary file is named ".NAME.tmp.PID.XXXXXX" beside its target. Its name sits in a
// fixed table that a signal handler can walk without locks or allocation, so that SIGINT or
// SIGTERM never leaves one behind; the PID in the name lets a later write beside the same
// target remove those that a SIGKILL did leave (their process no longer exists).
#include "headspec/atomic_file.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>

namespace headspec {
namespace {

// The process's umask, read once: from /proc/self/status (Linux 4.7 on), which leaves it
// unchanged for the other threads, else by setting it and putting it back.
mode_t process_umask() {
  static const mode_t mask = [] {
    if (FILE* f = std::fopen("/proc/self/status", "r")) {
      char line[256];
      unsigned value = 0;
      bool found = false;
      while (!found && std::fgets(line, sizeof line, f) != nullptr) found = std::sscanf(line, "Umask: %o", &value) == 1;
      std::fclose(f);
      if (found) return static_cast<mode_t>(value);
    }
    const mode_t m = ::umask(022);
    ::umask(m);
    return m;
  }();
  return mask;
}

struct TemporarySlot {
  std::atomic<bool> taken{false};
  std::atomic<bool> live{false};  // name holds a file to remove on a signal
  char name[PATH_MAX] = {};
};

// More than the files one process ever writes at once (the sweep's task files are
// written by at most one thread per core).
std::array<TemporarySlot, 64> g_slots;

int take_slot() {
  for (std::size_t i = 0; i < g_slots.size(); ++i) {
    bool expected = false;
    if (g_slots[i].taken.compare_exchange_strong(expected, true)) return static_cast<int>(i);
  }
  throw std::runtime_error("too many files written at once");
}

void release_slot(int i) {
  g_slots[i].live.store(false);
  g_slots[i].taken.store(false);
}

[[noreturn]] void fail(const std::string& what, const std::string& path, int err) {
  throw std::runtime_error(fmt::format("cannot {} '{}': {}", what, path, std::strerror(err)));
}

std::filesystem::path folder_of(const std::filesystem::path& p) {
  return p.parent_path().empty() ? std::filesystem::path(".") : p.parent_path();
}

// Removes ".NAME.tmp.PID.*" beside the target whose process is gone (left by a SIGKILL).
void remove_stale_temporaries(const std::filesystem::path& target) {
  const std::string prefix = "." + target.filename().string() + ".tmp.";
  DIR* dir = ::opendir(folder_of(target).c_str());
  if (!dir) return;
  while (const dirent* e = ::readdir(dir)) {
    const std::string name = e->d_name;
    if (name.rfind(prefix, 0) != 0) continue;
    char* end = nullptr;
    const long pid = std::strtol(name.c_str() + prefix.size(), &end, 10);
    if (pid <= 0 || *end != '.' || pid == ::getpid()) continue;
    if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;
    ::unlink((folder_of(target) / name).c_str());
  }
  ::closedir(dir);
}

void write_all(int fd, const std::string& content, const std::string& path) {
  std::size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail("write", path, errno);
    }
    done += static_cast<std::size_t>(n);
  }
}

// The rename is durable only once the folder's entry is on disk (POSIX fsync on the
// folder; best effort, as some file systems refuse to open folders).
void sync_folder(const std::filesystem::path& target) {
  const int dfd = ::open(folder_of(target).c_str(), O_RDONLY | O_DIRECTORY);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

}  // namespace

std::string regular_target(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return errno == ENOENT ? path : std::string();
  if (S_ISREG(st.st_mode)) return path;
  if (!S_ISLNK(st.st_mode)) return {};
  std::error_code ec;
  const auto resolved = std::filesystem::weakly_canonical(path, ec);
  if (ec) return {};
  if (::stat(resolved.c_str(), &st) != 0) return errno == ENOENT ? resolved.string() : std::string();
  return S_ISREG(st.st_mode) ? resolved.string() : std::string();
}

AtomicFile::AtomicFile(const std::string& path, const std::string& content) : path_(regular_target(path)) {
  if (path_.empty()) throw std::runtime_error(fmt::format("'{}' is not a regular file: not replaced", path));
  const std::filesystem::path target(path_);
  remove_stale_temporaries(target);
  const std::string tmp =
      (folder_of(target) / fmt::format(".{}.tmp.{}.XXXXXX", target.filename().string(), ::getpid())).string();
  if (tmp.size() >= PATH_MAX) throw std::runtime_error(fmt::format("path too long: '{}'", path));
  slot_ = take_slot();
  TemporarySlot& s = g_slots[slot_];
  std::memcpy(s.name, tmp.c_str(), tmp.size() + 1);
  s.live.store(true);  // before mkstemp: a signal in between unlinks a name that is not there yet
  const int fd = ::mkstemp(s.name);
  if (fd < 0) {
    const int err = errno;
    release_slot(slot_);
    fail("create a temporary file beside", path, err);
  }
  try {
    write_all(fd, content, path);
    // mkstemp makes the file 0600; a written file gets 0666 less the umask, as open() would give it.
    if (::fchmod(fd, 0666 & ~process_umask()) != 0 || ::fsync(fd) != 0) fail("write", path, errno);
  } catch (...) {
    ::close(fd);
    ::unlink(s.name);
    release_slot(slot_);
    throw;
  }
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(s.name);
    release_slot(slot_);
    fail("write", path, err);
  }
}

AtomicFile::AtomicFile(AtomicFile&& other) noexcept : path_(std::move(other.path_)), slot_(other.slot_) {
  other.slot_ = -1;
}

AtomicFile::~AtomicFile() {
  if (slot_ < 0) return;
  ::unlink(g_slots[slot_].name);
  release_slot(slot_);
}

void AtomicFile::commit() {
  if (slot_ < 0) throw std::logic_error("AtomicFile committed twice");
  // Checked again here: the target may have been replaced since the constructor.
  if (regular_target(path_) != path_)
    throw std::runtime_error(fmt::format("'{}' is no longer a regular file: not replaced", path_));
  if (std::rename(g_slots[slot_].name, path_.c_str()) != 0) fail("write", path_, errno);
  release_slot(slot_);
  slot_ = -1;
  sync_folder(path_);
}

void write_file_atomic(const std::string& path, const std::string& content) { AtomicFile(path, content).commit(); }

void remove_temporary_files() noexcept {
  for (auto& s : g_slots)
    if (s.live.load()) ::unlink(s.name);
}

}  // namespace headspec
