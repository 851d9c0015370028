// What a picture shows, built from the run (make_picture), and the choices
// every picture shares: the colour scale, the cell count, the block note.
//
// Letters: B batch, H heads, S sequence, N cells per side of a drawn map.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "attn/config.h"
#include "attn/error.h"
#include "attn/layout.h"
#include "attn/run.h"
#include "map_capture.h"
#include "options.h"
#include "plot.h"
#include "run_session.h"

namespace app {
namespace {

std::string shape_text(const std::vector<std::size_t>& shape) {
  std::string s;
  for (std::size_t d : shape) s += (s.empty() ? "" : " x ") + std::to_string(d);
  return s;
}

bool ends_with_html(const std::string& p) {
  std::string tail = p.size() >= 5 ? p.substr(p.size() - 5) : p;
  for (auto& c : tail) c = char(std::tolower(static_cast<unsigned char>(c)));
  return tail == ".html";
}

}  // namespace

std::size_t capture_cells(const Options& opt, std::size_t heads) {
  const std::size_t want =
      opt.show || (opt.plot && ends_with_html(*opt.plot)) ? kMaxPageCells : kMaxPlotCells;
  // K maps of N x N float32 within kMaxCaptureBytes (64 heads: N = 905).
  const double k = double(std::max<std::size_t>(1, heads));
  const auto fits = std::size_t(std::sqrt(double(kMaxCaptureBytes) / (4.0 * k)));
  return std::max<std::size_t>(64, std::min(want, fits));
}

ColourScale colour_scale(const attn::Tensor& cells) {
  // The first query of a causal map always puts 1.0 on token 0 while long
  // rows spread ~1/S: a scale up to 1.0 would leave the long rows dark.
  std::vector<float> nonzero;
  for (float v : cells.data)
    if (v > 0) nonzero.push_back(v);
  ColourScale c;
  for (float v : nonzero) c.max_value = std::max(c.max_value, double(v));
  c.vmax = c.max_value > 0 ? c.max_value : 1.0;  // all masked: a scale from 0 to 1
  if (nonzero.size() >= 100) {
    const std::size_t k = nonzero.size() * 99 / 100;
    std::nth_element(nonzero.begin(), nonzero.begin() + k, nonzero.end());
    const double p99 = nonzero[k];
    if (p99 < 0.5 * c.max_value) {
      c.vmax = p99;
      c.clipped = true;
    }
  }
  return c;
}

std::string block_note(std::size_t S, std::size_t n) {
  if (n >= S) return "";
  const std::size_t k = (S + n - 1) / n;
  return "; each cell: max over a block of about " + std::to_string(k) + " x " + std::to_string(k) +
         " weights";
}

MapPicture reduced(const MapPicture& pic, std::size_t max_cells) {
  const std::size_t n_in = pic.cells.shape.at(1);
  if (n_in <= max_cells) return pic;
  MapPicture out = pic;
  out.cells = attn::Tensor({pic.heads.size(), max_cells, max_cells});
  for (std::size_t k = 0; k < pic.heads.size(); ++k) {
    const attn::Tensor r = reduce_block_max(pic.cells.ptr() + k * n_in * n_in, n_in, max_cells);
    std::copy(r.data.begin(), r.data.end(), out.cells.ptr() + k * max_cells * max_cells);
  }
  return out;
}

MapPicture make_picture(const Options& opt, const attn::Config& cfg, const attn::LoadedRun& model,
                        const SessionInput& in, const MapCapture& cap,
                        std::vector<std::string> labels) {
  const std::size_t B = in.x.shape[0], S = in.x.shape[1], C = in.x.shape[2];
  const std::size_t H = std::size_t(cfg.num_heads), n = cap.cells_per_side();
  MapPicture pic;
  pic.title = cfg.file.empty() ? "attention maps" : cfg.file;
  pic.subtitle = attn::kind_name(cfg.kind) +
                 (cfg.causal && cfg.kind != attn::Kind::causal ? " (causal mask)" : "") + ", " +
                 std::to_string(H) + (H == 1 ? " head" : " heads") + ", layout " +
                 attn::layout_name(model.layout) + "; S = " + std::to_string(S);
  if (B > 1)
    pic.subtitle +=
        "; batch index " + std::to_string(opt.batch_index) + " (B = " + std::to_string(B) + ")";
  pic.labels = std::move(labels);
  pic.S = S;
  pic.heads = cap.heads();
  pic.cells = cap.cells();

  pic.query = opt.show_query.value_or(S - 1);
  if (pic.query >= S)
    throw attn::Error(attn::Exit::usage,
                      "--show-query: " + std::to_string(pic.query) +
                          " is past the sequence; the input has S = " + std::to_string(S) +
                          " (0.." + std::to_string(S - 1) + ")");
  auto& f = pic.facts;
  f.emplace_back("config", cfg.file.empty() ? "(inline)" : cfg.file);
  f.emplace_back("attention", attn::kind_name(cfg.kind) + ", H = " + std::to_string(H) + ", D = " +
                                  std::to_string(cfg.head_size) + ", C = " + std::to_string(C));
  f.emplace_back("weights", model.weights_source + " (layout " + attn::layout_name(model.layout) +
                                (model.layout_detected ? ", detected)" : ")"));
  f.emplace_back("layer", cfg.weights_prefix.empty() ? "whole file (no weights_prefix)"
                                                     : "weights_prefix " + cfg.weights_prefix);
  std::string masks = cfg.causal ? "causal" : "";
  if (in.padding) {
    std::size_t padded = 0;
    for (std::size_t t = 0; t < S; ++t) padded += in.padding->data[opt.batch_index * S + t] != 0;
    masks += std::string(masks.empty() ? "" : "; ") + "padding mask " +
             shape_text(in.padding->shape) + " (" + std::to_string(padded) + " of " +
             std::to_string(S) + " keys padded here)";
  }
  f.emplace_back("masks", masks.empty() ? "none" : masks);
  f.emplace_back("input", in.input_source + ", " + shape_text(in.x.shape) + " (B x S x C)");
  f.emplace_back("maps drawn", "batch entry " + std::to_string(opt.batch_index) + ", heads " +
                                   std::to_string(pic.heads.size()) + " of " + std::to_string(H) +
                                   ", " + std::to_string(n) + " x " + std::to_string(n) +
                                   " cells of " + std::to_string(S) + " x " + std::to_string(S));
  return pic;
}

}  // namespace app
