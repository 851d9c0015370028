// A PNG read back with cairo, for tests that look at what was drawn: the
// share of "ink" (pixels that are not the white page) in a vertical strip.
#pragma once

#include <cairo.h>

#include <cstdint>
#include <string>

namespace attn::test {

struct PngInk {
  int width = 0, height = 0;
  double share = 0;  // inked pixels / pixels in the strip
};

// Ink between x = from * width and x = to * width (0 <= from < to <= 1).
inline PngInk png_ink(const std::string& path, double from, double to) {
  PngInk r;
  cairo_surface_t* s = cairo_image_surface_create_from_png(path.c_str());
  if (cairo_surface_status(s) != CAIRO_STATUS_SUCCESS) {
    cairo_surface_destroy(s);
    return r;
  }
  cairo_surface_flush(s);
  r.width = cairo_image_surface_get_width(s);
  r.height = cairo_image_surface_get_height(s);
  const int stride = cairo_image_surface_get_stride(s);
  const unsigned char* data = cairo_image_surface_get_data(s);
  const int x0 = int(from * r.width), x1 = int(to * r.width);
  std::size_t inked = 0, total = 0;
  for (int y = 0; y < r.height; ++y) {
    const auto* row = reinterpret_cast<const std::uint32_t*>(data + std::size_t(y) * stride);
    for (int x = x0; x < x1; ++x, ++total) inked += (row[x] & 0xFFFFFFu) != 0xFFFFFFu;
  }
  r.share = total ? double(inked) / double(total) : 0.0;
  cairo_surface_destroy(s);
  return r;
}

}  // namespace attn::test
