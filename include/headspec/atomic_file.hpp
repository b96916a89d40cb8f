#pragma once
// Files written whole or not at all (docs/cli.md "Output files"): the content goes to a
// temporary file beside the target, flushed, and is renamed over it only when complete.
// The target is only ever a regular file or a missing path: a rename never replaces a
// device, FIFO, socket or folder (run as root, renaming onto /dev/null would replace it).
#include <string>

namespace headspec {

/// One file being written: the constructor writes and flushes the temporary file (throwing
/// std::runtime_error, the target untouched, if that fails: disk full, quota, file size
/// limit); commit() renames it over the target. Destroyed uncommitted, the temporary file is
/// removed, so several files can be prepared and committed together or not at all.
class AtomicFile {
 public:
  AtomicFile(const std::string& path, const std::string& content);
  AtomicFile(AtomicFile&& other) noexcept;
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  AtomicFile& operator=(AtomicFile&&) = delete;
  ~AtomicFile();

  /// Renames the temporary file over the target; throws std::runtime_error if the target
  /// has meanwhile become something other than a regular file, or the rename fails.
  void commit();
  const std::string& path() const { return path_; }

 private:
  std::string path_;  ///< the target, symbolic links resolved
  int slot_ = -1;     ///< the temporary file's entry in the signal-safe list
};

/// Writes content to path whole or not at all (an AtomicFile committed at once).
void write_file_atomic(const std::string& path, const std::string& content);

/// Removes every temporary file of this process that is not yet committed. Async-signal-safe
/// (only unlink): called by the signal handlers before the process dies.
void remove_temporary_files() noexcept;

/// The regular file that writing `path` would replace: symbolic links followed (a link
/// to a regular file is written through, the link kept). Empty when path names something
/// that is neither a regular file nor missing (a device, FIFO, socket or folder).
std::string regular_target(const std::string& path);

}  // namespace headspec
