// Numbers as people read them in listings and captions: "32,000" and
// "1.5 GiB".
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

namespace app {

// 4096 -> "4,096".
inline std::string with_commas(std::uint64_t n) {
  std::string s = std::to_string(n);
  for (int i = int(s.size()) - 3; i > 0; i -= 3) s.insert(std::size_t(i), ",");
  return s;
}

// 1536 -> "1.5 KiB"; below 1 KiB whole bytes ("512 B").
inline std::string human_bytes(std::uint64_t b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = double(b);
  int u = 0;
  while (v >= 1024 && u < 4) v /= 1024, ++u;
  char s[32];
  std::snprintf(s, sizeof s, u == 0 ? "%.0f %s" : "%.1f %s", v, units[u]);
  return s;
}

}  // namespace app
