// --plot and --show: pictures of attention maps, one panel per head.
//
// Letters: L queries, T keys of a map row (T = L for self-attention; T' in
// CONTRACT.md when torch MHA's bias_kv / zero_attn columns follow the keys),
// Nq x Nk cells of a drawn map (Nq <= L, Nk <= T).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "attn/output.h"
#include "attn/tensor.h"
#include "cli/term.h"
#include "pictures/colour_scale.h"

namespace attn {
struct Config;
struct LoadedRun;
struct RunInputs;
}  // namespace attn

namespace app {

struct Options;
class MapCapture;

// What a picture shows: the maps of the chosen heads of one batch entry,
// already reduced to Nq x Nk cells (block max, see MapCapture). Queries are
// the rows, keys the columns, each axis with its own labels.
struct MapPicture {
  std::string title;                    // the config file
  std::string subtitle;                 // kind, heads, layout, batch entry, L and T
  std::vector<std::string> labels;      // L query labels
  std::vector<std::string> key_labels;  // T key labels (= labels for self-attention)
  std::size_t L = 0, T = 0;
  std::vector<std::size_t> heads;  // head numbers, one panel each
  attn::Tensor cells;              // (heads.size(), Nq, Nk)
  // > 0: the one map is the mean over this many heads (--average-heads), not a head.
  std::size_t mean_of = 0;
  // The config has attention sinks: a row may sum to less than 1 (the sink takes the rest).
  bool sinks = false;
  // What was run, as (name, value) lines: config, layer, masks, shapes (the HTML page).
  std::vector<std::pair<std::string, std::string>> facts;
  std::size_t query = 0;  // --show's head view: this query's top keys (--show-query)
  // --queries / --keys: the model's numbers of the drawn rows and columns
  // (empty = 0, 1, ...), for --show's head view.
  std::vector<std::size_t> query_numbers, key_numbers;
  // --color-scale, resolved for the maps' T (auto: log past kAutoLogKeys keys).
  ScaleKind scale = ScaleKind::linear;
  // The subtitle's extent ("; S = 24"), replaced by crop_picture's caption.
  std::string extent;
  // (K, T) or empty: query `query`'s weights over every key, exactly (the
  // head view names a top key exactly when a cell holds a block of keys).
  attn::Tensor query_row;
  // When a cell holds a block of keys: each query cell's strongest keys,
  // exactly (MapCapture::top_keys; (K, Nq, 10), key numbers 0..T-1 or -1,
  // and their largest weight over the cell's rows); empty otherwise.
  std::vector<std::int32_t> top_keys;
  std::vector<float> top_weights;
  // The HTML page's neuron view (--save q,k; pictures/neuron_capture.h): q
  // (K, L, D) and k (K, T, D) of each drawn head, and the scores' scale;
  // empty without. neuron_note: why there is none although q and k were saved.
  attn::Tensor neuron_q, neuron_k;
  double neuron_scale = 1.0;
  std::string neuron_note;
};

// --queries / --keys: the model's numbers of the drawn rows and columns
// (empty = all of them) out of `all_queries` and `all_keys`; the subtitle
// then says what the crop shows ("queries 4072-4095, keys 4072-4095 of 4,096;
// each row's weight inside the crop: 0.052 on average") instead of "S = 24".
void crop_picture(MapPicture& pic, std::vector<std::size_t> queries, std::vector<std::size_t> keys,
                  std::size_t all_queries, std::size_t all_keys);

// "head 3", or "mean of 12 heads" for an averaged map: panel k's title.
std::string panel_title(const MapPicture& pic, std::size_t k);

// The labels of a map's T' key columns: the query labels for self-attention;
// for cross-attention the config's kv_labels (T of them), or the positions
// 0..T-1 when it has none (a warning when it has a wrong count); then
// "bias_kv" and "zero_attn" for torch MHA's extra columns (T' - T of them,
// as Config::add_bias_kv and add_zero_attn say).
std::vector<std::string> key_labels(const attn::Config& cfg,
                                    const std::vector<std::string>& query_labels, std::size_t T,
                                    std::size_t T_map);

// The picture of a run's captured maps, with its title and facts
// (plot_picture.cpp): labels has L entries, key_labels T' (see key_labels).
MapPicture make_picture(const Options& opt, const attn::Config& cfg, const attn::LoadedRun& model,
                        const attn::RunInputs& in, const MapCapture& cap,
                        std::vector<std::string> labels, std::vector<std::string> key_labels);

// Most cells a side drawn in an SVG or PNG panel: 256 cells keep a panel
// readable and the SVG small; longer sequences are reduced by block max.
constexpr std::size_t kMaxPlotCells = 256;
// Most cells a side of the HTML page: every token up to 1024 (canvas, float16).
constexpr std::size_t kMaxPageCells = 1024;
// Cells a side to capture for the run's pictures of `heads` heads:
// kMaxPageCells for the HTML page and for --show (its head view lists exact
// weights), else kMaxPlotCells; fewer when the maps would pass kMaxCaptureBytes.
constexpr std::size_t kMaxCaptureBytes = std::size_t(200) << 20;
std::size_t capture_cells(const Options& opt, std::size_t heads);

// "; each cell: max over a block of about kq x kk weights" when the (L, T)
// map is drawn in fewer cells (nq, nk), else "".
std::string block_note(std::size_t L, std::size_t T, std::size_t nq, std::size_t nk);

// The picture with at most max_cells cells a side (block max of its cells).
MapPicture reduced(const MapPicture& pic, std::size_t max_cells);

// Draw to FILE.svg (XML text: one <g class="panel"> per head, labels as
// <text>) or FILE.png (cairo, drawn at 2x the SVG's pixel size), written
// atomically (temporary name, then rename). Exit::cant_create / Exit::io.
void write_plot(const std::string& path, const MapPicture& pic);

// The --plot file in three steps, so it joins the run's all-or-nothing
// output: the constructor creates and checks its folder (before the
// compute: an unwritable place fails fast), stage() renders and writes it
// under a temporary name, commit() renames it into place.
class PlotFile {
 public:
  // The folder is checked (writable, the name not too long) here, before any work.
  explicit PlotFile(const std::string& path);
  void stage(const MapPicture& pic);
  void stage_bytes(const std::string& bytes);  // a page made elsewhere (the model view)
  void commit() { dir_->commit(); }
  attn::OutputDir& staged() { return *dir_; }  // for attn::commit_together

 private:
  std::string name_;
  enum class Kind { svg, png, html } kind_ = Kind::svg;
  std::unique_ptr<attn::OutputDir> dir_;
};

// The name a person knows a model folder by: its last component
// ("Qwen3-0.6B"), or "Qwen/Qwen3-0.6B" for a Hugging Face cache snapshot.
std::string model_name(std::string dir);

// The ggml types of a GGUF layer's tensors, sorted and joined ("Q4_K, Q6_K");
// "" when the run's model is not a GGUF file.
std::string gguf_layer_types(const attn::Config& cfg);

// The self-contained HTML page (plot_html.cpp): head view and heatmaps.
std::string render_html(const MapPicture& pic);

// The SVG document and its size in px (for write_plot and the tests' sizes).
std::string render_svg(const MapPicture& pic, double* width = nullptr, double* height = nullptr);
// The PNG bytes, drawn by cairo at 2x the SVG's size.
std::string render_png(const MapPicture& pic);

// --show: the maps as terminal text, `columns` wide at most. color: 24-bit
// (truecolor) or 256-colour background blocks; plain: a character ramp.
// Then the head view of query pic.query: its strongest keys as bars.
std::string render_terminal(const MapPicture& pic, TermColors colors, int columns);

}  // namespace app
