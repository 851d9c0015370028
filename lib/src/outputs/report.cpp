// Text forms of tensors. format_tensor_text follows torch/_tensor_str.py
// (PyTorch 1.13) with its default print options: precision 4, threshold
// 1000, edgeitems 3, linewidth 80, so scripts and eyes see what they would
// see from print(tensor) in Python.
#include "attn/report.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <functional>

namespace attn {
namespace {

constexpr int kPrecision = 4;
constexpr std::size_t kThreshold = 1000;
constexpr std::size_t kEdgeItems = 3;
constexpr std::size_t kLineWidth = 80;

std::string printf_str(const char* fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, kPrecision, v);
  return buf;
}

// torch's _Formatter for floating tensors: chooses integer, fixed or
// scientific notation from the nonzero finite values and pads to one width.
class Formatter {
 public:
  template <class Values>  // a vector of floats
  explicit Formatter(const Values& values) {
    double mn = INFINITY, mx = 0.0;
    bool any = false;
    for (float f : values) {
      if (!std::isfinite(f) || f == 0.0f) continue;
      double a = std::fabs(double(f));
      mn = std::min(mn, a);
      mx = std::max(mx, a);
      any = true;
      if (double(f) != std::ceil(double(f))) int_mode_ = false;
    }
    if (!any) return;
    bool wide_range = mx / mn > 1000.0 || mx > 1e8;
    sci_mode_ = int_mode_ ? wide_range : (wide_range || mn < 1e-4);
    for (float f : values)
      if (std::isfinite(f) && f != 0.0f) width_ = std::max(width_, raw(f).size());
  }

  std::string format(float f) const {
    std::string s = raw(f);
    return std::string(width_ > s.size() ? width_ - s.size() : 0, ' ') + s;
  }
  std::size_t width() const { return width_; }

 private:
  std::string raw(float f) const {
    double v = f;
    if (sci_mode_) return printf_str("%.*e", v);
    if (int_mode_) {
      std::string s = printf_str("%.*f", v).substr(0, printf_str("%.*f", v).find('.'));
      if (std::isfinite(v)) s += '.';
      return s;
    }
    return printf_str("%.*f", v);
  }
  bool int_mode_ = true;
  bool sci_mode_ = false;
  std::size_t width_ = 1;
};

// Indices to print along one dimension: all, or the edges around "...".
std::vector<long> shown(std::size_t n, bool summarize) {
  std::vector<long> idx;
  if (summarize && n > 2 * kEdgeItems) {
    for (std::size_t i = 0; i < kEdgeItems; ++i) idx.push_back(long(i));
    idx.push_back(-1);  // the "..." marker
    for (std::size_t i = n - kEdgeItems; i < n; ++i) idx.push_back(long(i));
  } else {
    for (std::size_t i = 0; i < n; ++i) idx.push_back(long(i));
  }
  return idx;
}

struct Printer {
  const Tensor& t;
  const Formatter& fmt;
  bool summarize;
  std::vector<std::size_t> strides;

  // _tensor_str_with_formatter / _vector_str of torch/_tensor_str.py.
  std::string str(std::size_t dim, std::size_t offset, std::size_t indent) const {
    const std::size_t n = t.shape[dim];
    const std::size_t rank = t.shape.size();
    if (dim + 1 == rank) {
      std::vector<std::string> items;
      for (long i : shown(n, summarize))
        items.push_back(i < 0 ? " ..." : fmt.format(t.data[offset + std::size_t(i)]));
      std::size_t per_line = std::max<std::size_t>(1, (kLineWidth - indent) / (fmt.width() + 2));
      std::string out = "[";
      for (std::size_t i = 0; i < items.size(); ++i) {
        if (i > 0) out += (i % per_line == 0) ? ",\n" + std::string(indent + 1, ' ') : ", ";
        out += items[i];
      }
      return out + "]";
    }
    std::string sep = "," + std::string(rank - dim - 1, '\n') + std::string(indent + 1, ' ');
    std::string out = "[";
    bool first = true;
    for (long i : shown(n, summarize)) {
      if (!first) out += sep;
      first = false;
      out += i < 0 ? "..." : str(dim + 1, offset + std::size_t(i) * strides[dim], indent + 1);
    }
    return out + "]";
  }
};

// The values torch's formatter looks at: all, or only the printed edges.
void collect(const Tensor& t, const std::vector<std::size_t>& strides, bool summarize,
             std::size_t dim, std::size_t offset, std::vector<float>& out) {
  if (dim == t.shape.size()) {
    out.push_back(t.data[offset]);
    return;
  }
  for (long i : shown(t.shape[dim], summarize))
    if (i >= 0)
      collect(t, strides, summarize, dim + 1, offset + std::size_t(i) * strides[dim], out);
}

std::vector<std::size_t> strides_of(const std::vector<std::size_t>& shape) {
  std::vector<std::size_t> s(shape.size(), 1);
  for (std::size_t d = shape.size(); d-- > 1;) s[d - 1] = s[d] * shape[d];
  return s;
}

}  // namespace

std::string format_tensor_text(const Tensor& t) {
  const std::string prefix = "tensor(";
  if (t.shape.empty()) {
    Formatter f(t.data);
    return prefix + (t.data.empty() ? "[]" : f.format(t.data[0])) + ")\n";
  }
  if (t.size() == 0) return prefix + "[], size=" + shape_str(t.shape) + ")\n";
  const bool summarize = t.size() > kThreshold;
  const auto strides = strides_of(t.shape);
  std::vector<float> values;
  collect(t, strides, summarize, 0, 0, values);
  Formatter f(values);
  Printer p{t, f, summarize, strides};
  return prefix + p.str(0, 0, prefix.size()) + ")\n";
}

nlohmann::json tensor_to_json(const Tensor& t) {
  const auto strides = strides_of(t.shape);
  std::function<nlohmann::json(std::size_t, std::size_t)> rec = [&](std::size_t dim,
                                                                    std::size_t off) {
    if (dim == t.shape.size()) return nlohmann::json(t.data[off]);
    nlohmann::json a = nlohmann::json::array();
    for (std::size_t i = 0; i < t.shape[dim]; ++i)
      a.push_back(rec(dim + 1, off + i * strides[dim]));
    return a;
  };
  return rec(0, 0);
}

std::string format_tensor_json(const Tensor& t) {
  const auto strides = strides_of(t.shape);
  std::string out;
  out.reserve(t.size() * 12 + 16);
  std::function<void(std::size_t, std::size_t)> rec = [&](std::size_t dim, std::size_t off) {
    if (dim == t.shape.size()) {
      char buf[32];
      float v = t.data[off];
      if (!std::isfinite(v)) {
        out += "null";  // JSON has no NaN/Infinity
        return;
      }
      auto r = std::to_chars(buf, buf + sizeof buf, v);
      out.append(buf, r.ptr);
      return;
    }
    out += '[';
    for (std::size_t i = 0; i < t.shape[dim]; ++i) {
      if (i) out += ',';
      rec(dim + 1, off + i * strides[dim]);
    }
    out += ']';
  };
  rec(0, 0);
  return out + "\n";
}

}  // namespace attn
