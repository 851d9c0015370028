// --compare (map_compare.h).
#include "modes/map_compare.h"

#include <cmath>
#include <cstdio>
#include <limits>

namespace app {

double HeadComparison::nmse() const {
  if (std::isnan(max_abs)) return std::numeric_limits<double>::quiet_NaN();
  return sum_sq_other > 0 ? sum_sq_diff / sum_sq_other : (sum_sq_diff > 0 ? INFINITY : 0.0);
}

CompareSink::CompareSink(const attn::Tensor& ref, std::size_t H, std::size_t L, std::size_t T)
    : ref_(ref), H_(H), L_(L), T_(T), heads_(H), locks_(new std::mutex[H]) {}

void CompareSink::write_rows(std::size_t b, std::size_t h, std::size_t i0, std::size_t n,
                             const float* rows) {
  // rows: (n, T'), queries i0 .. i0+n-1 of map (b, h); the same rows of ref.
  const float* other = ref_.ptr() + ((b * H_ + h) * L_ + i0) * T_;
  HeadComparison here;
  here.max_b = here.kl_b = b;
  here.max_query = here.kl_query = i0;
  for (std::size_t r = 0; r < n; ++r) {
    const float* a = rows + r * T_;
    const float* o = other + r * T_;
    double kl = 0;
    for (std::size_t j = 0; j < T_; ++j) {
      const double d = std::fabs(double(a[j]) - double(o[j]));
      if (!(d <= here.max_abs)) {  // a NaN on one side only stays NaN
        here.max_abs = d;
        here.max_query = i0 + r;
        here.max_key = j;
      }
      here.sum_sq_diff += d * d;
      here.sum_sq_other += double(o[j]) * double(o[j]);
      if (a[j] > 0) kl += double(a[j]) * std::log(double(a[j]) / double(o[j]));
    }
    if (kl > here.max_kl) {
      here.max_kl = kl;
      here.kl_query = i0 + r;
    }
  }
  std::lock_guard<std::mutex> lock(locks_[h]);
  HeadComparison& all = heads_[h];
  if (!(here.max_abs <= all.max_abs)) {
    all.max_abs = here.max_abs;
    all.max_b = here.max_b;
    all.max_query = here.max_query;
    all.max_key = here.max_key;
  }
  all.sum_sq_diff += here.sum_sq_diff;
  all.sum_sq_other += here.sum_sq_other;
  if (here.max_kl > all.max_kl) {
    all.max_kl = here.max_kl;
    all.kl_b = here.kl_b;
    all.kl_query = here.kl_query;
  }
}

bool same_maps_shape(const std::vector<std::size_t>& other, const std::vector<std::size_t>& want) {
  auto core = [](const std::vector<std::size_t>& s) {
    std::size_t k = 0;
    while (k + 1 < s.size() && s[k] == 1) ++k;
    return std::vector<std::size_t>(s.begin() + std::ptrdiff_t(k), s.end());
  };
  return core(other) == core(want);
}

std::string compare_table(const std::vector<HeadComparison>& heads, const SelectionNumbers& n) {
  auto number = [](const std::vector<std::size_t>& v, std::size_t k) {
    return v.empty() ? k : v[k];
  };
  std::string s =
      "head  max |attn-run - other|  at (batch, query, key)  NMSE        max row KL  at (batch, "
      "query)\n";
  char where[64], line[192];
  for (std::size_t k = 0; k < heads.size(); ++k) {
    const HeadComparison& c = heads[k];
    std::snprintf(where, sizeof where, "(%zu, %zu, %zu)", c.max_b, number(n.queries, c.max_query),
                  number(n.keys, c.max_key));
    std::snprintf(line, sizeof line, "%4zu  %-24.3g  %-22s  %-10.3g  %-10.3g  (%zu, %zu)\n",
                  number(n.heads, k), c.max_abs, where, c.nmse(), c.max_kl, c.kl_b,
                  number(n.queries, c.kl_query));
    s += line;
  }
  return s;
}

nlohmann::json compare_json(const std::vector<HeadComparison>& heads, const SelectionNumbers& n,
                            const std::string& file, std::optional<double> tol) {
  auto number = [](double e) {  // NaN and inf have no JSON number: null
    return std::isfinite(e) ? nlohmann::json(e) : nlohmann::json();
  };
  auto model = [](const std::vector<std::size_t>& picked, std::size_t k) {
    return picked.empty() ? k : picked[k];
  };
  nlohmann::json errors = nlohmann::json::array(), at = nlohmann::json::array(),
                 nmse = nlohmann::json::array(), kl = nlohmann::json::array(),
                 kl_at = nlohmann::json::array(), numbers = nlohmann::json::array();
  for (std::size_t k = 0; k < heads.size(); ++k) {
    const HeadComparison& c = heads[k];
    numbers.push_back(model(n.heads, k));
    errors.push_back(number(c.max_abs));
    at.push_back({c.max_b, model(n.queries, c.max_query), model(n.keys, c.max_key)});
    nmse.push_back(number(c.nmse()));
    kl.push_back(std::isinf(c.max_kl) ? nlohmann::json("inf") : number(c.max_kl));
    kl_at.push_back({c.kl_b, model(n.queries, c.kl_query)});
  }
  return {{"file", file},
          {"heads", numbers},
          {"max_abs_error", errors},
          {"max_abs_at", at},
          {"nmse", nmse},
          {"max_row_kl", kl},
          {"max_row_kl_at", kl_at},
          {"tol", tol ? nlohmann::json(*tol) : nlohmann::json()}};
}

double worst_difference(const std::vector<HeadComparison>& heads) {
  double worst = 0;
  for (const HeadComparison& c : heads)
    if (!(c.max_abs <= worst)) worst = c.max_abs;
  return worst;
}

}  // namespace app
