#pragma once
// The columns of a CSV without quotes (the theory's), by name.
#include <cmath>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace headspec::testing {

struct Rows {
  std::vector<std::string> header;
  std::vector<std::vector<double>> values;
  std::size_t column(const std::string& name) const {
    for (std::size_t c = 0; c < header.size(); ++c)
      if (header[c] == name) return c;
    throw std::runtime_error("no column " + name);
  }
};

inline std::vector<std::string> split_line(const std::string& line) {
  std::vector<std::string> cells;
  std::stringstream ss(line);
  std::string cell;
  while (std::getline(ss, cell, ',')) cells.push_back(cell);
  return cells;
}

inline Rows parse(const std::string& csv) {
  Rows rows;
  std::stringstream in(csv);
  std::string line;
  std::getline(in, line);
  rows.header = split_line(line);
  while (std::getline(in, line)) {
    std::vector<double> v;
    for (const auto& c : split_line(line)) v.push_back(c.empty() ? std::nan("") : std::stod(c));
    rows.values.push_back(v);
  }
  return rows;
}

}  // namespace headspec::testing
