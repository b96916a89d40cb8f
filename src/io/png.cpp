#include "headspec/png.hpp"

#include <png.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "headspec/io.hpp"

namespace headspec {
namespace {

void append_bytes(png_structp png, png_bytep data, png_size_t n) {
  auto* out = static_cast<std::string*>(png_get_io_ptr(png));
  out->append(reinterpret_cast<const char*>(data), n);
}
void no_flush(png_structp) {}

}  // namespace

std::string encode_png(const RgbImage& image) {
  if (image.width <= 0 || image.height <= 0 ||
      image.rgb.size() != static_cast<std::size_t>(image.width) * image.height * 3)
    throw std::runtime_error("encode_png: image size and pixel buffer disagree");
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  if (!png) throw std::runtime_error("libpng: cannot create a write structure");
  png_infop info = png_create_info_struct(png);
  std::string out;
  if (!info || setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, info ? &info : nullptr);
    throw std::runtime_error("libpng: encoding failed");
  }
  png_set_write_fn(png, &out, append_bytes, no_flush);
  png_set_IHDR(png, info, static_cast<png_uint_32>(image.width), static_cast<png_uint_32>(image.height), 8,
               PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  for (int y = 0; y < image.height; ++y)
    png_write_row(png, const_cast<png_bytep>(image.rgb.data() + static_cast<std::size_t>(y) * image.width * 3));
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  return out;
}

void write_png(const std::string& path, const RgbImage& image) { write_file_atomic(path, encode_png(image)); }

RgbImage render_tiles(const std::vector<double>& values, int H, int side, int columns, int scale, int gap) {
  if (H < 1 || side < 1 || columns < 1 || scale < 1 || gap < 0 ||
      values.size() != static_cast<std::size_t>(H) * side * side)
    throw std::invalid_argument("render_tiles: inconsistent sizes");
  const int cols = std::min(columns, H), rows = (H + cols - 1) / cols;
  const int tile = side * scale;
  RgbImage img;
  img.width = cols * tile + (cols + 1) * gap;
  img.height = rows * tile + (rows + 1) * gap;
  img.rgb.assign(static_cast<std::size_t>(img.width) * img.height * 3, 255);
  for (int h = 0; h < H; ++h) {
    const double* v = values.data() + static_cast<std::size_t>(h) * side * side;
    double vmax = 0;
    for (int i = 0; i < side * side; ++i)
      if (std::isfinite(v[i])) vmax = std::max(vmax, std::abs(v[i]));
    const int x0 = gap + (h % cols) * (tile + gap), y0 = gap + (h / cols) * (tile + gap);
    for (int i = 0; i < side; ++i)
      for (int j = 0; j < side; ++j) {
        const double x = v[i * side + j];
        const double a = vmax > 0 && std::isfinite(x) ? std::clamp(x / vmax, -1.0, 1.0) : 0.0;  // NaN drawn white
        // White → red for a > 0, white → blue for a < 0.
        const auto fade = static_cast<uint8_t>(std::lround(255 * (1 - std::abs(a))));
        const uint8_t r = a >= 0 ? 255 : fade, g = fade, b = a >= 0 ? fade : 255;
        for (int dy = 0; dy < scale; ++dy)
          for (int dx = 0; dx < scale; ++dx) {
            const std::size_t p = (static_cast<std::size_t>(y0 + i * scale + dy) * img.width + x0 + j * scale + dx) * 3;
            img.rgb[p] = r;
            img.rgb[p + 1] = g;
            img.rgb[p + 2] = b;
          }
      }
  }
  return img;
}

}  // namespace headspec
