// --compare (map_compare.h).
#include "modes/map_compare.h"

#include <cmath>
#include <cstdio>

namespace app {

CompareSink::CompareSink(const attn::Tensor& ref, std::size_t H, std::size_t L, std::size_t T)
    : ref_(ref), H_(H), L_(L), T_(T), worst_(H, 0.0), locks_(new std::mutex[H]) {}

void CompareSink::write_rows(std::size_t b, std::size_t h, std::size_t i0, std::size_t n,
                             const float* rows) {
  // rows: (n, T'), queries i0 .. i0+n-1 of map (b, h); the same rows of ref.
  const float* other = ref_.ptr() + ((b * H_ + h) * L_ + i0) * T_;
  double worst = 0;
  for (std::size_t k = 0; k < n * T_; ++k) {
    const double d = std::fabs(double(rows[k]) - double(other[k]));
    if (!(d <= worst)) worst = d;  // a NaN on one side only stays NaN
  }
  std::lock_guard<std::mutex> lock(locks_[h]);
  if (!(worst <= worst_[h])) worst_[h] = worst;
}

std::vector<double> CompareSink::max_abs() const { return worst_; }

std::string compare_table(const std::vector<double>& max_abs,
                          const std::vector<std::size_t>& head_numbers) {
  std::string s = "head  max |attn-run - other|\n";
  char line[64];
  for (std::size_t k = 0; k < max_abs.size(); ++k) {
    std::snprintf(line, sizeof line, "%4zu  %.3g\n", head_numbers.empty() ? k : head_numbers[k],
                  max_abs[k]);
    s += line;
  }
  return s;
}

}  // namespace app
