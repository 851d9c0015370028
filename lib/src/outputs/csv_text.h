// The text of the per-row CSV tables (summary.csv, key_stats.csv): one line
// of whole numbers and floats, written by std::to_chars with the same text as
// printf's %zu, %lld and %.9g (a float32 reads back exactly). A table has a
// line per (batch, head, row): 524,288 of them for a Llama-shaped layer at
// S = 16384, where snprintf's format parsing and digit loop took 0.44 s and
// the table's string, grown by doubling, 0.4 s more in copies and page faults.
#pragma once

#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <string>

namespace attn::detail {

class CsvLine {
 public:
  // A field: a whole number, or a float as %.9g writes it.
  CsvLine& whole(long long v) {
    comma();
    end_ = std::to_chars(end_, line_ + kMax, v).ptr;
    return *this;
  }
  CsvLine& g9(double v) {
    comma();
    if (!std::isfinite(v)) {  // inf, nan: printf's spelling, sign and all
      end_ += std::snprintf(end_, std::size_t(line_ + kMax - end_), "%.9g", v);
      return *this;
    }
    end_ = std::to_chars(end_, line_ + kMax, v, std::chars_format::general, 9).ptr;
    return *this;
  }
  // Appends the line and its newline to `out`, and starts the next one.
  void end(std::string& out) {
    *end_++ = '\n';
    out.append(line_, end_);
    end_ = line_;
  }

 private:
  // 8 fields of at most 24 characters (a %.9g float is 16 at most) and their separators.
  static constexpr std::size_t kMax = 256;
  char line_[kMax];
  char* end_ = line_;
  void comma() {
    if (end_ != line_) *end_++ = ',';
  }
};

// A table's string holding its header line, with room for `rows` lines more
// set aside once (96 characters a line: more than the tables' lines take,
// about 60-70).
inline std::string csv_table(const std::string& header, std::size_t rows) {
  constexpr std::size_t kLineBytes = 96;
  std::string out;
  out.reserve(header.size() + 1 + rows * kLineBytes);
  out.append(header).push_back('\n');
  return out;
}

}  // namespace attn::detail
