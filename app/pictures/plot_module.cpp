// The executable's side of the picture module (plot_module.h): finds
// attn-run-cairo.so beside the executable (the build tree) or in
// <exe dir>/ATTN_PLOT_MODULE_RELDIR (the install tree: ../lib/attn-run, as
// CMake computed it from the install dirs), dlopens it once, checks its tag,
// and forwards plot_canvas.h's functions to its table.
#include "pictures/plot_module.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <atomic>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include "attn/error.h"

#ifndef ATTN_PLOT_MODULE_RELDIR
#define ATTN_PLOT_MODULE_RELDIR "../lib/attn-run"
#endif

namespace app {
namespace {

std::once_flag load_once;
std::string load_error;                              // set once, under load_once
std::atomic<const PlotModuleTable*> table{nullptr};  // set once, under load_once

// The folder of the executable's real path (symlinks resolved), "" if unknown.
std::string exe_dir() {
  char* real = realpath("/proc/self/exe", nullptr);
  if (!real) return "";
  std::string path = real;
  std::free(real);
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? "" : path.substr(0, slash == 0 ? 1 : slash);
}

bool exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

// The table of the module at `path`, or nullptr with *why set.
const PlotModuleTable* open_module(const std::string& path, std::string* why) {
  // RTLD_NOW: a missing symbol fails here, not halfway through a picture.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* e = dlerror();
    *why = e ? e : path + ": dlopen failed";
    return nullptr;
  }
  auto entry = reinterpret_cast<PlotModuleEntry>(dlsym(handle, kPlotModuleEntry));
  const PlotModuleTable* t = entry ? entry() : nullptr;
  if (!t) {
    *why = path + ": no " + kPlotModuleEntry + " in it (not attn-run's picture module)";
  } else if (std::strcmp(t->tag, ATTN_PLOT_MODULE_TAG) != 0 || t->size != sizeof(PlotModuleTable)) {
    *why = path + ": built for " + t->tag + ", this attn-run is " + ATTN_PLOT_MODULE_TAG +
           " (a stale module: reinstall or rebuild attn-run)";
    t = nullptr;
  }
  if (!t) dlclose(handle);
  return t;  // the module stays loaded for the life of the process
}

void load() {
  const std::string dir = exe_dir();
  std::vector<std::string> tried;
  if (!dir.empty()) {
    tried.push_back(dir + "/" + kPlotModuleFile);
    tried.push_back(dir + "/" ATTN_PLOT_MODULE_RELDIR "/" + kPlotModuleFile);
  }
  std::string why = "cannot resolve /proc/self/exe", first_present_why;
  for (const std::string& path : tried) {
    if (const PlotModuleTable* t = open_module(path, &why)) {
      table.store(t, std::memory_order_release);
      return;
    }
    // A module that is there but fails (stale, a missing library) says
    // more than "No such file" of the places it is not.
    if (first_present_why.empty() && exists(path)) first_present_why = why;
  }
  std::string list;
  for (const std::string& path : tried) list += (list.empty() ? "" : ", ") + path;
  load_error = "--plot: cannot load the picture module (" + list +
               "): " + (first_present_why.empty() ? why : first_present_why);
}

const PlotModuleTable& module() {
  load_plot_module();
  return *table.load(std::memory_order_acquire);
}

}  // namespace

void load_plot_module() {
  std::call_once(load_once, load);
  if (!table.load(std::memory_order_acquire)) throw attn::Error(attn::Exit::software, load_error);
}

double text_width(const std::string& s, double size, bool bold) {
  return module().text_width(s, size, bold);
}

std::unique_ptr<Canvas> make_svg_canvas(double width, double height, std::string* out) {
  return module().make_svg_canvas(width, height, out);
}

std::unique_ptr<Canvas> make_png_canvas(double width, double height, double scale,
                                        std::string* out) {
  return module().make_png_canvas(width, height, scale, out);
}

void release_font_caches() {
  // Nothing to free when no picture loaded the module (the HTML page, --show).
  if (const PlotModuleTable* t = table.load(std::memory_order_acquire)) t->release_font_caches();
}

std::string font_family_for(const std::string& s) { return module().font_family_for(s); }

}  // namespace app
