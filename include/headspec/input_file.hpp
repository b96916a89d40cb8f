#pragma once
// Reading a user's input file (a mixture prior, a checkpoint, a sweep's task file, the MNIST
// cache) with the checks of docs/cli.md "Input files": a regular file only (a FIFO would
// block, /dev/zero never ends) and no larger than a cap given by the caller.
#include <cstddef>
#include <string>

namespace headspec {

/// The whole content of path. Throws ParameterError(parameter, "<what>: …") naming the file
/// (UsageError("<what>: …") if no parameter names it) if it is missing, unreadable, not a
/// regular file, or larger than max_bytes.
std::string read_input_file(const std::string& path, const std::string& parameter, std::size_t max_bytes,
                            const std::string& what = "");

}  // namespace headspec
