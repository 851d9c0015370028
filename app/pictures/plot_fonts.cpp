// Fonts for the PNG pictures (plot_canvas.h): cairo's toy text API draws
// with one font family, so a label with characters DejaVu Sans lacks (CJK,
// Devanagari, Thai, ...) asks fontconfig for a family that covers them,
// e.g. Noto Sans CJK from Debian's fonts-noto-cjk, instead of drawing boxes.
#include <cairo.h>
#include <fontconfig/fontconfig.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

#include "pictures/plot_canvas.h"
#include "pictures/plot_text.h"

namespace app {
namespace {

std::mutex cache_lock;
std::map<std::string, std::string>* cache = nullptr;  // text -> family

// fontconfig's best family for `cps`, starting from kFontFamily.
std::string match_family(const std::vector<std::uint32_t>& cps) {
  FcCharSet* chars = FcCharSetCreate();
  for (std::uint32_t cp : cps) FcCharSetAddChar(chars, cp);
  FcPattern* pat = FcPatternCreate();
  FcPatternAddString(pat, FC_FAMILY, reinterpret_cast<const FcChar8*>(kFontFamily));
  FcPatternAddString(pat, FC_FAMILY, reinterpret_cast<const FcChar8*>(kCjkFontFamily));
  FcPatternAddCharSet(pat, FC_CHARSET, chars);
  FcConfigSubstitute(nullptr, pat, FcMatchPattern);
  FcDefaultSubstitute(pat);
  FcResult result = FcResultNoMatch;
  std::string family = kFontFamily;
  // The sorted list, first font that covers every character: FcFontMatch
  // alone prefers the family named first even when it lacks the glyphs.
  FcFontSet* set = FcFontSort(nullptr, pat, FcFalse, nullptr, &result);
  if (set) {
    for (int k = 0; k < set->nfont; ++k) {
      FcCharSet* has = nullptr;
      FcChar8* name = nullptr;
      if (FcPatternGetCharSet(set->fonts[k], FC_CHARSET, 0, &has) != FcResultMatch) continue;
      if (FcCharSetSubtractCount(chars, has) != 0) continue;
      if (FcPatternGetString(set->fonts[k], FC_FAMILY, 0, &name) == FcResultMatch) {
        family = reinterpret_cast<const char*>(name);
        break;
      }
    }
    FcFontSetDestroy(set);
  }
  FcPatternDestroy(pat);
  FcCharSetDestroy(chars);
  return family;
}

}  // namespace

std::string font_family_for(const std::string& s) {
  bool plain = true;  // Latin, Greek, Cyrillic and common symbols: DejaVu has them
  for (std::uint32_t cp : code_points(s)) plain = plain && cp < 0x0590;
  if (plain) return kFontFamily;
  std::lock_guard<std::mutex> lock(cache_lock);
  if (!cache) cache = new std::map<std::string, std::string>;
  auto it = cache->find(s);
  if (it == cache->end()) it = cache->emplace(s, match_family(code_points(s))).first;
  return it->second;
}

void release_font_caches() {
  // cairo and fontconfig keep font caches for the life of the process; free
  // them once the picture is drawn so leak checkers (scripts/sanitize.sh)
  // see a clean exit.
  {
    std::lock_guard<std::mutex> lock(cache_lock);
    delete cache;
    cache = nullptr;
  }
  cairo_debug_reset_static_data();
  FcFini();
}

}  // namespace app
