// The weight naming schemes of CONTRACT.md ("Weight layouts").
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace attn {

// Table order of CONTRACT.md: the version-1 layouts, then proj, bert, neox,
// falcon (v2).
enum class Layout { fused, separate, per_head, kqv, torch_mha, gpt2, proj, bert, neox, falcon };

std::string layout_name(Layout l);                            // "fused", ...
std::optional<Layout> parse_layout(const std::string& name);  // nullopt if unknown
const std::vector<std::string>& layout_names();               // all, in table order
// per_head and kqv hold no output projection.
bool layout_has_out_proj(Layout l);

}  // namespace attn
