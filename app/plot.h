// --plot and --show: pictures of attention maps, one panel per head.
//
// Letters: S sequence, N cells per side of a drawn map (N <= S).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "attn/output.h"
#include "attn/tensor.h"

namespace app {

// What a picture shows: the maps of the chosen heads of one batch entry,
// already reduced to N x N cells (block max, see MapCapture).
struct MapPicture {
  std::string title;                // the config file
  std::string subtitle;             // kind, heads, layout, batch entry, S
  std::vector<std::string> labels;  // S token labels
  std::size_t S = 0;
  std::vector<std::size_t> heads;  // head numbers, one panel each
  attn::Tensor cells;              // (heads.size(), N, N)
};

// Largest N drawn in a --plot panel: 256 cells keep a panel readable and the
// SVG small; longer sequences are reduced by block max.
constexpr std::size_t kMaxPlotCells = 256;

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
  explicit PlotFile(const std::string& path);
  void stage(const MapPicture& pic);
  void commit() { dir_->commit(); }

 private:
  std::string name_;
  bool png_ = false;
  std::unique_ptr<attn::OutputDir> dir_;
};

// The SVG document and its size in px (for write_plot and the tests' sizes).
std::string render_svg(const MapPicture& pic, double* width = nullptr, double* height = nullptr);
// The PNG bytes, drawn by cairo at 2x the SVG's size.
std::string render_png(const MapPicture& pic);

// --show: the maps as terminal text. color: 24-bit (truecolor) or 256-colour
// background blocks, two columns per cell; plain: a character ramp.
enum class TermColors { plain, xterm256, truecolor };
std::string render_terminal(const MapPicture& pic, TermColors colors, int columns);

}  // namespace app
