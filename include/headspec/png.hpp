#pragma once
// PNG output (libpng) and the picture of learned keys as 28×28 tiles (seed Fig. 5, left).
#include <cstdint>
#include <string>
#include <vector>

namespace headspec {

/// An 8-bit RGB image, rows top to bottom, 3 bytes per pixel.
struct RgbImage {
  int width = 0, height = 0;
  std::vector<uint8_t> rgb;
};

/// The PNG encoding of an image (throws std::runtime_error if libpng fails).
std::string encode_png(const RgbImage& image);
/// Writes the PNG whole or not at all (io.hpp write_file_atomic).
void write_png(const std::string& path, const RgbImage& image);

/// H images of side × side values (row-major, H × side²) as a grid of tiles, `columns`
/// per row, each value drawn as a scale × scale block, tiles separated by `gap` white
/// pixels. Colours are diverging: white at 0, red for positive, blue for negative values,
/// full colour at the tile's largest |value| (each tile has its own scale); NaN is white.
RgbImage render_tiles(const std::vector<double>& values, int H, int side, int columns, int scale = 4, int gap = 4);

}  // namespace headspec
