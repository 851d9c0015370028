// --show: attention maps as terminal text, one block per head, rows labelled
// with the query tokens and columns with the key tokens, then a head view:
// one query's strongest keys as bars. Everything fits `columns`.
//
// Letters: L queries, T keys (T = L for self-attention), Nq x Nk cells
// captured, nq x nk cells shown.
#include <algorithm>
#include <cstdio>
#include <numeric>

#include "attn/escape.h"
#include "cli/colormap.h"
#include "cli/term.h"
#include "pictures/map_capture.h"
#include "pictures/plot.h"
#include "pictures/plot_text.h"

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
std::string key_label(const MapPicture& pic, std::size_t t) {
  return attn::printable(pic.key_labels[t]);
}

// Which shown cell each token lands in: token t -> captured cell t*N/S ->
// shown cell (that)*n/N, the two block-max reductions in a row.
std::vector<std::size_t> cell_of_token(std::size_t S, std::size_t N, std::size_t n) {
  std::vector<std::size_t> c(S);
  for (std::size_t t = 0; t < S; ++t) c[t] = (t * N / S) * n / N;
  return c;
}

// The tokens of each of the n shown cells along an axis of S tokens
// captured in N cells: the first token and how many.
struct Blocks {
  std::vector<std::size_t> first, count;
  std::size_t smallest = 0, largest = 0;
};
Blocks blocks_of(std::size_t S, std::size_t N, std::size_t n) {
  Blocks b;
  b.first.assign(n, S);
  b.count.assign(n, 0);
  const auto cell_of = cell_of_token(S, N, n);
  for (std::size_t t = 0; t < S; ++t) {
    b.first[cell_of[t]] = std::min(b.first[cell_of[t]], t);
    ++b.count[cell_of[t]];
  }
  b.smallest = *std::min_element(b.count.begin(), b.count.end());
  b.largest = *std::max_element(b.count.begin(), b.count.end());
  return b;
}

// Cell v of drawn head k on the --color-scale.
std::string cell_text(float v, const ColourScale& sc, std::size_t k, TermColors colors,
                      std::size_t w) {
  const double t = sc.position(v, k);
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
  const std::size_t Nq = pic.cells.shape.at(1), Nk = pic.cells.shape.at(2);
  const std::size_t L = pic.L, T = pic.T;
  std::size_t widest_query = 1, widest_key = 1;
  for (std::size_t t = 0; t < L; ++t)
    widest_query = std::max(widest_query, columns_of(label(pic, t)));
  for (std::size_t t = 0; t < T; ++t)
    widest_key = std::max(widest_key, columns_of(key_label(pic, t)));
  const std::size_t label_w = std::min(widest_query, kMaxLabelCols);
  // Two columns a cell look square; a short map with long labels gets wider
  // cells so that every key's label fits above its column. Rows get the
  // same budget as columns, so a long map stays within a screen or two.
  const std::size_t room = cols > label_w + 1 ? cols - label_w - 1 : 2;
  const std::size_t nq = std::max<std::size_t>(1, std::min(Nq, room / 2));
  const std::size_t nk = std::max<std::size_t>(1, std::min(Nk, room / 2));
  std::size_t cell_w = 2;
  if (nk == T)
    cell_w = std::max<std::size_t>(2, std::min({widest_key + 1, std::size_t(9), room / nk}));
  // The scale of the cells shown: block maxima are brighter than weights.
  MapPicture shown = pic;
  if (nq < Nq || nk < Nk) {
    shown.cells = attn::Tensor({pic.heads.size(), nq, nk});
    for (std::size_t k = 0; k < pic.heads.size(); ++k) {
      const attn::Tensor r = reduce_block_max(pic.cells.ptr() + k * Nq * Nk, Nq, Nk, nq, nk);
      std::copy(r.data.begin(), r.data.end(), shown.cells.ptr() + k * nq * nk);
    }
  }
  const ColourScale sc = colour_scale(shown.cells, pic.scale, T);

  // Shown cells per token block: the header states the real block size.
  const Blocks rows = blocks_of(L, Nq, nq), keys_of = blocks_of(T, Nk, nk);

  char buf[256];
  std::string out = wrap(attn::printable(pic.title) + ": " + attn::printable(pic.subtitle), cols);
  if (sc.kind != ScaleKind::linear)
    std::snprintf(buf, sizeof buf, "colour: %s", sc.legend().c_str());
  else if (sc.clipped)
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
  if (nq < L || nk < T) {
    const auto range = [](const Blocks& b) {
      return b.smallest == b.largest
                 ? std::to_string(b.smallest)
                 : std::to_string(b.smallest) + " to " + std::to_string(b.largest);
    };
    std::string side;
    if (L == T && nq == nk) {  // square: "a x a to b x b"
      const auto sq = [](std::size_t k) { return std::to_string(k) + " x " + std::to_string(k); };
      side = rows.smallest == rows.largest ? sq(rows.smallest)
                                           : sq(rows.smallest) + " to " + sq(rows.largest);
      side += " weights (" + std::to_string(nq) + " x " + std::to_string(nk) +
              " cells for S = " + std::to_string(L);
    } else {
      side = range(rows) + " queries x " + range(keys_of) + " keys (" + std::to_string(nq) + " x " +
             std::to_string(nk) + " cells for L = " + std::to_string(L) +
             " x T = " + std::to_string(T);
    }
    out += wrap("each cell: the max over a block of " + side + ", fitted to " +
                    std::to_string(cols) + " columns)",
                cols);
  }

  // Key labels: one every `m` cells, as many characters as the slot holds.
  std::size_t m = 1;
  const std::size_t want = std::min<std::size_t>(widest_key, 4);
  for (std::size_t p = 1; m * cell_w < want + 1 && p < 1000000; p *= 10)
    for (std::size_t f : {std::size_t(1), std::size_t(2), std::size_t(5)})
      if (m * cell_w < want + 1) m = f * p;
  std::string keys = std::string(label_w + 1, ' ');
  for (std::size_t c = 0; c < nk; c += m) {
    const std::size_t slot = std::min(m, nk - c) * cell_w - (m > 1 || cell_w > 2 ? 1 : 0);
    // A slot too narrow for a readable label (the last, cut short) stays empty.
    const bool room_for_it = slot >= std::min<std::size_t>(3, widest_key);
    std::string l = room_for_it ? fit_columns(key_label(pic, keys_of.first[c]), slot) : "";
    keys += pad_right(l, std::min(m, nk - c) * cell_w);
  }

  for (std::size_t k = 0; k < pic.heads.size(); ++k) {
    const float* map = shown.cells.ptr() + k * nq * nk;
    out += "\n" + panel_title(pic, k);
    if (sc.kind == ScaleKind::percentile) {
      char top[48];
      std::snprintf(top, sizeof top, " (p99 %.3g)", sc.top(k));
      out += top;
    }
    out += "\n" + keys + "\n";
    for (std::size_t i = 0; i < nq; ++i) {
      out += pad_left(fit_columns(label(pic, rows.first[i]), label_w), label_w) + " ";
      for (std::size_t j = 0; j < nk; ++j) out += cell_text(map[i * nk + j], sc, k, colors, cell_w);
      if (colors != TermColors::plain) out += kReset;
      out += "\n";
    }
  }

  // Head view: one query row at full resolution (a block of rows beyond
  // kMaxPageCells tokens), its strongest keys.
  const std::size_t q = pic.query, qi = q * Nq / L;
  // The query's own row of every key when the capture kept it (a cell of a
  // long map holds a block of keys: the top keys are then named exactly).
  const bool have_row = pic.query_row.ndim() == 2 && pic.query_row.shape[1] == T &&
                        pic.query_row.shape[0] == pic.heads.size();
  const std::size_t M = have_row ? T : Nk;  // keys (or key blocks) of the row
  const bool exact = have_row || (Nq == L && Nk == T);
  const auto number = [](const std::vector<std::size_t>& numbers, std::size_t i) {
    return std::to_string(numbers.empty() ? i : numbers.at(i));
  };
  out += "\n" + wrap("query " + number(pic.query_numbers, q) + " \"" + label(pic, q) + "\": its " +
                         std::to_string(kTopKeys) + " strongest keys per " +
                         (pic.mean_of ? "map" : "head") +
                         (exact ? "" : " (each a block of keys, the max over the block)") +
                         "; bars relative to the strongest (--show-query N for another)",
                     cols);
  const std::size_t key_w =
      std::min<std::size_t>(std::min(widest_key, kMaxLabelCols) + (exact ? 6 : 14), cols / 3);
  const std::size_t bar_w = cols > key_w + 14 ? std::min<std::size_t>(cols - key_w - 14, 40) : 1;
  for (std::size_t k = 0; k < pic.heads.size(); ++k) {
    const float* row =
        have_row ? pic.query_row.ptr() + k * T : pic.cells.ptr() + (k * Nq + qi) * Nk;
    std::vector<std::size_t> order(M);
    std::iota(order.begin(), order.end(), 0);
    const std::size_t top = std::min(kTopKeys, M);
    std::partial_sort(order.begin(), order.begin() + top, order.end(),
                      [&](std::size_t a, std::size_t b) { return row[a] > row[b]; });
    out += panel_title(pic, k);
    // Weights need not sum to 1 (sinks, a fully masked row): say so, as the
    // bars and the top keys are relative to the row's strongest.
    if (exact) {
      double sum = 0;
      for (std::size_t j = 0; j < M; ++j) sum += row[j];
      if (sum < 0.999) {
        std::snprintf(buf, sizeof buf, "%.2f", sum);
        out += std::string(" (row sums to ") + buf +
               (sum <= 0    ? ": every key masked)"
                : pic.sinks ? ": the sink takes the rest)"
                            : ")");
      }
    }
    out += "\n";
    for (std::size_t r = 0; r < top && row[order[r]] > 0; ++r) {
      const std::size_t j = order[r];
      const std::size_t t0 = (j * T + Nk - 1) / Nk, t1 = ((j + 1) * T + Nk - 1) / Nk - 1;
      // "3491 tok", or "3491" alone when the label is the position itself.
      const auto named = [&](std::size_t t) {
        const std::string n = number(pic.key_numbers, t), l = key_label(pic, t);
        return l == n ? n : n + " " + l;
      };
      const std::string name = M == T ? named(j)
                                      : number(pic.key_numbers, t0) + "-" +
                                            number(pic.key_numbers, t1) + " " + key_label(pic, t0);
      std::snprintf(buf, sizeof buf, " %.4f ", double(row[j]));
      out += "  " + pad_right(fit_columns(name, key_w), key_w) + buf +
             bar(row[j] / row[order[0]], bar_w, colors) + "\n";
    }
  }
  return out;
}

}  // namespace app
