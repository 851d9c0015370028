// The picture module's one exported symbol (plot_module.h): the table of
// plot_canvas.cpp's and plot_fonts.cpp's functions, built into
// attn-run-cairo.so with every other symbol hidden.
#include "pictures/plot_module.h"

namespace app {
namespace {

// In the order of PlotModuleTable's members.
constexpr PlotModuleTable kTable = {
    ATTN_PLOT_MODULE_TAG,     // tag
    sizeof(PlotModuleTable),  // size
    text_width,               // plot_canvas.cpp
    make_svg_canvas,          // plot_canvas.cpp
    make_png_canvas,          // plot_canvas.cpp
    release_font_caches,      // plot_fonts.cpp
    font_family_for,          // plot_fonts.cpp
};

}  // namespace
}  // namespace app

extern "C" __attribute__((visibility("default"))) const app::PlotModuleTable*
attn_run_plot_module() {
  return &app::kTable;
}
