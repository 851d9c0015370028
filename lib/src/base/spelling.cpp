#include "attn/spelling.h"

#include <algorithm>
#include <cctype>

namespace attn {
namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Optimal string alignment distance: Levenshtein plus adjacent transposition.
std::size_t osa_distance(const std::string& a, const std::string& b) {
  const std::size_t n = a.size(), m = b.size();
  std::vector<std::vector<std::size_t>> d(n + 1, std::vector<std::size_t>(m + 1));
  for (std::size_t i = 0; i <= n; ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= m; ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= n; ++i)
    for (std::size_t j = 1; j <= m; ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[n][m];
}

}  // namespace

std::pair<std::string, std::size_t> nearest_name(const std::string& name,
                                                 const std::vector<std::string>& known) {
  std::pair<std::string, std::size_t> best{"", static_cast<std::size_t>(-1)};
  // A pasted 1 MiB name needs no distance table of its size.
  const std::string k = lower(name.substr(0, 64));
  for (const auto& cand : known) {
    const std::size_t d = osa_distance(k, lower(cand));
    if (d < best.second) best = {cand, d};
  }
  return best;
}

bool close_enough(const std::string& best, std::size_t d) {
  return d <= std::max<std::size_t>(2, best.size() / 3);
}

}  // namespace attn
