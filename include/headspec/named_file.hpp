#pragma once
// A file that a flag names and a run reads (RunFiles::inputs: no output may replace it).
#include <string>

namespace headspec {

struct NamedFile {
  std::string flag;  ///< "--prior", "--lr-schedule", "--grid", "--data"
  std::string path;
};

}  // namespace headspec
