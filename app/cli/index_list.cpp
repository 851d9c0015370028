// Index lists of the map selection flags (index_list.h).
#include "cli/index_list.h"

#include <algorithm>
#include <numeric>

#include "attn/error.h"
#include "attn/escape.h"

namespace app {
namespace {

bool all_digits(const std::string& t) {
  return !t.empty() && t.size() <= 9 && t.find_first_not_of("0123456789") == std::string::npos;
}

}  // namespace

std::vector<std::size_t> parse_index_list(const std::string& spec, std::size_t n,
                                          const std::string& flag, const std::string& what) {
  std::vector<std::size_t> out;
  if (spec.empty()) {
    out.resize(n);
    std::iota(out.begin(), out.end(), std::size_t(0));
    return out;
  }
  const auto malformed = [&]() {
    return attn::Error(attn::Exit::usage, flag + ": expected numbers, ranges a-b or last:N " +
                                              "separated by commas (e.g. 0,3,7-9), found '" +
                                              attn::printable(spec) + "'");
  };
  const auto past = [&](std::size_t i, const std::string& item) {
    return attn::Error(attn::Exit::usage, flag + ": " + what + " " + std::to_string(i) + " (in '" +
                                              attn::printable(item) +
                                              "') does not exist; there are " + std::to_string(n) +
                                              (n ? " (0.." + std::to_string(n - 1) + ")" : ""));
  };
  std::vector<bool> seen(n, false);
  const auto add = [&](std::size_t i) {
    if (!seen[i]) out.push_back(i);
    seen[i] = true;
  };
  std::size_t start = 0;
  while (start <= spec.size()) {
    std::size_t end = spec.find(',', start);
    if (end == std::string::npos) end = spec.size();
    const std::string t = spec.substr(start, end - start);
    start = end + 1;
    if (t.compare(0, 5, "last:") == 0) {
      const std::string k = t.substr(5);
      if (!all_digits(k) || std::stoul(k) == 0) throw malformed();
      const std::size_t count = std::stoul(k);
      if (count > n)
        throw attn::Error(attn::Exit::usage, flag + ": '" + attn::printable(t) + "' asks for " +
                                                 std::to_string(count) + " but there are " +
                                                 std::to_string(n));
      for (std::size_t i = n - count; i < n; ++i) add(i);
      continue;
    }
    const auto dash = t.find('-');
    if (dash == std::string::npos) {
      if (!all_digits(t)) throw malformed();
      const std::size_t i = std::stoul(t);
      if (i >= n) throw past(i, t);
      add(i);
      continue;
    }
    const std::string a = t.substr(0, dash), b = t.substr(dash + 1);
    if (!all_digits(a) || !all_digits(b)) throw malformed();
    const std::size_t lo = std::stoul(a), hi = std::stoul(b);
    if (lo > hi) throw malformed();
    if (hi >= n) throw past(hi, t);
    for (std::size_t i = lo; i <= hi; ++i) add(i);
  }
  return out;
}

}  // namespace app
