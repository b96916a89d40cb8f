// The picture of the MNIST engine's keys (include/headspec/png.hpp).
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "headspec/mnist_data.hpp"
#include "headspec/png.hpp"

using namespace headspec;

// The keys' picture: tile layout, colours at ±max and 0, and a readable PNG signature.
TEST(KeysPicture, TilesColoursAndPngSignature) {
  const int H = 3, side = 2;
  std::vector<double> v(H * side * side, 0.0);
  v[0] = 2.0;               // tile 0, pixel (0,0): its largest value → full red
  v[1] = -1.0;              // tile 0, pixel (0,1): half blue
  v[side * side + 3] = -5;  // tile 1, pixel (1,1): full blue
  v[2 * side * side] = NAN;  // tile 2: NaN → white
  const RgbImage img = render_tiles(v, H, side, 2, 3, 1);
  EXPECT_EQ(img.width, 2 * side * 3 + 3);
  EXPECT_EQ(img.height, 2 * side * 3 + 3);
  auto at = [&](int x, int y) {
    const std::size_t p = (static_cast<std::size_t>(y) * img.width + x) * 3;
    return std::array<int, 3>{img.rgb[p], img.rgb[p + 1], img.rgb[p + 2]};
  };
  EXPECT_EQ(at(0, 0), (std::array<int, 3>{255, 255, 255})) << "gap";
  EXPECT_EQ(at(1, 1), (std::array<int, 3>{255, 0, 0}));
  EXPECT_EQ(at(1 + 3, 1), (std::array<int, 3>{128, 128, 255}));
  EXPECT_EQ(at(1 + 5, 1 + 5), (std::array<int, 3>{255, 255, 255})) << "0 is white";
  const int x1 = 1 + side * 3 + 1;
  EXPECT_EQ(at(x1 + 3, 1 + 3), (std::array<int, 3>{0, 0, 255}));
  EXPECT_EQ(at(1, 1 + side * 3 + 1), (std::array<int, 3>{255, 255, 255})) << "NaN is white";
  const std::string png = encode_png(img);
  EXPECT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  EXPECT_THROW(render_tiles(v, H + 1, side, 2), std::invalid_argument);
}
