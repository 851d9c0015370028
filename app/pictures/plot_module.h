// The picture module: cairo and fontconfig (SVG and PNG canvases, text
// measurement, fonts) live in attn-run-cairo.so, loaded with dlopen the first
// time a picture is drawn, so a run that draws no SVG or PNG never maps
// libcairo, libfontconfig and the ~18 libraries they pull in (~6 ms of page
// faults at every start). The module exports one C function returning the
// table below; plot_module.cpp (the executable) forwards plot_canvas.h's
// functions to it, plot_module_entry.cpp (the module) fills it.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "pictures/plot_canvas.h"

namespace app {

// The one name the module exports (extern "C", default visibility).
constexpr const char* kPlotModuleEntry = "attn_run_plot_module";
constexpr const char* kPlotModuleFile = "attn-run-cairo.so";

// Bump when the table or the Canvas interface changes: a module of another
// build is refused rather than called through a table it does not match.
#define ATTN_PLOT_MODULE_ABI "1"
// "<ATTN_VERSION>/plot-abi-<N>/<compiler>": executable and module must agree.
#define ATTN_PLOT_MODULE_TAG ATTN_VERSION "/plot-abi-" ATTN_PLOT_MODULE_ABI "/" __VERSION__

// The module's functions (plot_canvas.h). `tag` and `size` come first and stay
// first in every version: the loader checks them before touching the rest.
struct PlotModuleTable {
  const char* tag;   // ATTN_PLOT_MODULE_TAG of the module's build
  std::size_t size;  // sizeof(PlotModuleTable) of the module's build
  double (*text_width)(const std::string& s, double size, bool bold);
  std::unique_ptr<Canvas> (*make_svg_canvas)(double width, double height, std::string* out);
  std::unique_ptr<Canvas> (*make_png_canvas)(double width, double height, double scale,
                                             std::string* out);
  void (*release_font_caches)();
  std::string (*font_family_for)(const std::string& s);
};

using PlotModuleEntry = const PlotModuleTable* (*)();

// Loads the module once (thread-safe) or throws Exit::software with one line:
// "--plot: cannot load the picture module (<paths tried>): <why>". Called when
// --plot FILE.svg/.png is validated, before any input is read.
void load_plot_module();

}  // namespace app
