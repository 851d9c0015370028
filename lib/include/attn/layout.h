// The weight naming schemes of CONTRACT.md ("Weight layouts") and the
// geometries each can hold.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "attn/geometry.h"

namespace attn {

// Table order of CONTRACT.md: the version-1 layouts, then proj, bert, neox,
// falcon (v2), then codegen.
enum class Layout {
  fused,
  separate,
  per_head,
  kqv,
  torch_mha,
  gpt2,
  proj,
  bert,
  neox,
  falcon,
  codegen
};

std::string layout_name(Layout l);                            // "fused", ...
std::optional<Layout> parse_layout(const std::string& name);  // nullopt if unknown
const std::vector<std::string>& layout_names();               // all, in table order
// per_head and kqv hold no output projection.
bool layout_has_out_proj(Layout l);

// Why `layout` cannot hold a model of this geometry ("" when it can), as the
// tail of a message: "layout per_head has no output projection". The one fit
// rule for config checks (Exit::config), loading, init and export (Exit::usage).
std::string layout_fit_problem(const Geometry& g, Layout layout);

// Whether the torch module behind `layout` can be reproduced by init (seeded
// construction): "" when it can, else why not.
std::string layout_init_problem(const Geometry& g, Layout layout);

}  // namespace attn
