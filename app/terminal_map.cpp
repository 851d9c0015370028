// --show: attention maps as terminal text, one block per head, rows labelled
// with the query tokens and columns with the key tokens, then a head view:
// one query's strongest keys as bars. Everything fits `columns`.
//
// Letters: S sequence, N cells per side captured, n cells per side shown.
#include <algorithm>
#include <cstdio>
#include <numeric>

#include "attn/escape.h"
#include "colormap.h"
#include "map_capture.h"
#include "plot.h"
#include "plot_text.h"
#include "term.h"

namespace app {
namespace {

constexpr std::size_t kMaxLabelCols = 12;
constexpr std::size_t kTopKeys = 5;
// Darkest to brightest for terminals without colour (and pipes); a masked
// cell (weight exactly 0) stays blank, the smallest weight is '.'.
constexpr const char kRamp[] = " .:-=+*#%@";
const Rgb kMaskedDotInk{0x80, 0x80, 0x80};
constexpr const char* kMaskedDot = "\xC2\xB7";  // U+00B7 middle dot

std::string pad_left(const std::string& s, std::size_t cols) {
  return std::string(cols - std::min(cols, columns_of(s)), ' ') + s;
}
std::string pad_right(const std::string& s, std::size_t cols) {
  return s + std::string(cols - std::min(cols, columns_of(s)), ' ');
}

// Word-wrapped to `cols` columns (a word longer than a line is cut).
std::string wrap(const std::string& text, std::size_t cols) {
  std::string out, line;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find(' ', start);
    if (end == std::string::npos) end = text.size();
    const std::string word = fit_columns(text.substr(start, end - start), cols);
    if (!line.empty() && columns_of(line) + 1 + columns_of(word) > cols) {
      out += line + "\n";
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
    start = end + 1;
  }
  return out + line + "\n";
}

std::string label(const MapPicture& pic, std::size_t t) { return attn::printable(pic.labels[t]); }

// Which shown cell each token lands in: token t -> captured cell t*N/S ->
// shown cell (that)*n/N, the two block-max reductions in a row.
std::vector<std::size_t> cell_of_token(std::size_t S, std::size_t N, std::size_t n) {
  std::vector<std::size_t> c(S);
  for (std::size_t t = 0; t < S; ++t) c[t] = (t * N / S) * n / N;
  return c;
}

std::string cell_text(float v, const ColourScale& sc, TermColors colors, std::size_t w) {
  const double t = std::min(1.0, double(v) / sc.vmax);
  if (colors == TermColors::plain) {
    const char ch = v > 0 ? kRamp[1 + std::min<std::size_t>(8, std::size_t(t * 9.0))] : ' ';
    return std::string(w, ch);
  }
  if (!(v > 0)) {
    std::string dots;
    for (std::size_t k = 0; k < w; ++k) dots += kMaskedDot;
    return std::string(kReset) + foreground(kMaskedDotInk, colors) + dots;
  }
  return background(viridis(t), colors) + std::string(w, ' ');
}

// A bar of `frac` x `width` columns in eighths (plain: '#').
std::string bar(double frac, std::size_t width, TermColors colors) {
  static const char* kEighths[] = {"",       "\u258F", "\u258E", "\u258D",
                                   "\u258C", "\u258B", "\u258A", "\u2589"};
  const std::size_t eighths = std::size_t(std::max(0.0, std::min(1.0, frac)) * width * 8 + 0.5);
  if (colors == TermColors::plain) return std::string((eighths + 4) / 8, '#');
  std::string s;
  for (std::size_t k = 0; k < eighths / 8; ++k) s += "\u2588";
  return s + kEighths[eighths % 8];
}

}  // namespace

std::string render_terminal(const MapPicture& pic, TermColors colors, int columns) {
  const std::size_t cols = std::size_t(std::max(columns, 24));
  const std::size_t N = pic.cells.shape.at(1), S = pic.S;
  std::size_t widest = 1;
  for (std::size_t t = 0; t < S; ++t) widest = std::max(widest, columns_of(label(pic, t)));
  const std::size_t label_w = std::min(widest, kMaxLabelCols);
  // Two columns a cell look square; a short map with long labels gets wider
  // cells so that every key's label fits above its column.
  const std::size_t room = cols > label_w + 1 ? cols - label_w - 1 : 2;
  const std::size_t n = std::max<std::size_t>(1, std::min(N, room / 2));
  std::size_t cell_w = 2;
  if (n == S) cell_w = std::max<std::size_t>(2, std::min({widest + 1, std::size_t(9), room / n}));
  // The scale of the cells shown: block maxima are brighter than weights.
  const MapPicture shown = reduced(pic, n);
  const ColourScale sc = colour_scale(shown.cells);

  // Shown cells per token block: the header states the real block size.
  const auto cell_of = cell_of_token(S, N, n);
  std::vector<std::size_t> first(n, S), count(n, 0);
  for (std::size_t t = 0; t < S; ++t) {
    first[cell_of[t]] = std::min(first[cell_of[t]], t);
    ++count[cell_of[t]];
  }
  const std::size_t bmin = *std::min_element(count.begin(), count.end());
  const std::size_t bmax = *std::max_element(count.begin(), count.end());

  char buf[256];
  std::string out = wrap(attn::printable(pic.title) + ": " + attn::printable(pic.subtitle), cols);
  if (sc.clipped)
    std::snprintf(buf, sizeof buf,
                  "colour: 0 to %.3g, the 99th percentile of the weights (brighter cells "
                  "saturate; max %.3g)",
                  sc.vmax, sc.max_value);
  else
    std::snprintf(buf, sizeof buf, "colour: 0 to %.3g (the largest weight)", sc.vmax);
  out += wrap(
      std::string("rows: queries, columns: keys; ") + buf +
          (colors == TermColors::plain ? "; ramp .:-=+*#%@ low to high, blank = masked (weight 0)"
                                       : "; \xC2\xB7\xC2\xB7 marks a masked cell (weight 0)"),
      cols);
  if (n < S) {
    const auto sq = [](std::size_t k) { return std::to_string(k) + " x " + std::to_string(k); };
    const std::string side = bmin == bmax ? sq(bmin) : sq(bmin) + " to " + sq(bmax);
    out += wrap("each cell: the max over a block of " + side + " weights (" + std::to_string(n) +
                    " x " + std::to_string(n) + " cells for S = " + std::to_string(S) +
                    ", fitted to " + std::to_string(cols) + " columns)",
                cols);
  }

  // Key labels: one every `m` cells, as many characters as the slot holds.
  std::size_t m = 1;
  const std::size_t want = std::min<std::size_t>(widest, 4);
  for (std::size_t p = 1; m * cell_w < want + 1 && p < 1000000; p *= 10)
    for (std::size_t f : {std::size_t(1), std::size_t(2), std::size_t(5)})
      if (m * cell_w < want + 1) m = f * p;
  std::string keys = std::string(label_w + 1, ' ');
  for (std::size_t c = 0; c < n; c += m) {
    const std::size_t slot = std::min(m, n - c) * cell_w - (m > 1 || cell_w > 2 ? 1 : 0);
    // A slot too narrow for a readable label (the last, cut short) stays empty.
    const bool room_for_it = slot >= std::min<std::size_t>(3, widest);
    std::string l = room_for_it ? fit_columns(label(pic, first[c]), slot) : "";
    keys += pad_right(l, std::min(m, n - c) * cell_w);
  }

  for (std::size_t k = 0; k < pic.heads.size(); ++k) {
    const float* map = shown.cells.ptr() + k * n * n;
    out += "\nhead " + std::to_string(pic.heads[k]) + "\n" + keys + "\n";
    for (std::size_t i = 0; i < n; ++i) {
      out += pad_left(fit_columns(label(pic, first[i]), label_w), label_w) + " ";
      for (std::size_t j = 0; j < n; ++j) out += cell_text(map[i * n + j], sc, colors, cell_w);
      if (colors != TermColors::plain) out += kReset;
      out += "\n";
    }
  }

  // Head view: one query row at full resolution (a block of rows beyond
  // kMaxPageCells tokens), its strongest keys.
  const std::size_t q = pic.query, qi = q * N / S;
  const bool exact = N == S;
  out += "\n" + wrap("query " + std::to_string(q) + " \"" + label(pic, q) + "\": its " +
                         std::to_string(kTopKeys) + " strongest keys per head" +
                         (exact ? "" : " (each a block of keys, the max over the block)") +
                         "; bars relative to the strongest (--show-query N for another)",
                     cols);
  const std::size_t key_w = std::min<std::size_t>(label_w + (exact ? 6 : 14), cols / 3);
  const std::size_t bar_w = cols > key_w + 14 ? std::min<std::size_t>(cols - key_w - 14, 40) : 1;
  for (std::size_t k = 0; k < pic.heads.size(); ++k) {
    const float* row = pic.cells.ptr() + (k * N + qi) * N;
    std::vector<std::size_t> order(N);
    std::iota(order.begin(), order.end(), 0);
    const std::size_t top = std::min(kTopKeys, N);
    std::partial_sort(order.begin(), order.begin() + top, order.end(),
                      [&](std::size_t a, std::size_t b) { return row[a] > row[b]; });
    out += "head " + std::to_string(pic.heads[k]) + "\n";
    for (std::size_t r = 0; r < top && row[order[r]] > 0; ++r) {
      const std::size_t j = order[r];
      const std::size_t t0 = (j * S + N - 1) / N, t1 = ((j + 1) * S + N - 1) / N - 1;
      const std::string name =
          exact ? std::to_string(j) + " " + label(pic, j)
                : std::to_string(t0) + "-" + std::to_string(t1) + " " + label(pic, t0);
      std::snprintf(buf, sizeof buf, " %.4f ", double(row[j]));
      out += "  " + pad_right(fit_columns(name, key_w), key_w) + buf +
             bar(row[j] / row[order[0]], bar_w, colors) + "\n";
    }
  }
  return out;
}

}  // namespace app
