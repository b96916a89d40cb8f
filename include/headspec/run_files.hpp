#pragma once
// The files of one run, checked together before any work (docs/cli.md "Output files"): no
// two outputs (CSV, sidecar, summary, keys, tau, checkpoint, work folder) may name the same
// file, and no output may name an input (a mixture file, a schedule's table, the digits of
// --data, a checkpoint resumed from).
#include <string>
#include <vector>

#include "headspec/named_file.hpp"

namespace headspec {

/// Throws UsageError naming `flag` unless path can be written: its folder exists and is
/// writable, and path is missing or a regular file (or a symbolic link to one). "-" is
/// refused (standard output is --out's when --out is absent).
void check_output_path(const std::string& path, const std::string& flag);

class RunFiles {
 public:
  /// A file the run writes (checked by check_output_path); an empty path is ignored.
  RunFiles& output(const std::string& flag, const std::string& path);
  /// A file the run writes without a check of its own (a sidecar: FILE.json of --out).
  RunFiles& derived_output(const std::string& what, const std::string& path);
  /// A file the run reads; an empty path is ignored.
  RunFiles& input(const std::string& flag, const std::string& path);
  /// Every file of `files` as an input.
  RunFiles& inputs(const std::vector<NamedFile>& files);
  /// A folder the run writes into (--work-dir): no output may be it.
  RunFiles& folder(const std::string& flag, const std::string& path);

  /// Throws UsageError naming both flags if two outputs, or an output and an input or a
  /// folder, are one file (the same path once symbolic links and "." are resolved, or the
  /// same file by a hard link).
  void check() const;

 private:
  struct Entry {
    std::string what;  ///< the flag, or what the file is ("the sidecar of --out")
    std::string path;
    bool written;
  };
  std::vector<Entry> entries_;
};

}  // namespace headspec
