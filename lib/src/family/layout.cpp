#include "attn/layout.h"

namespace attn {

const std::vector<std::string>& layout_names() {
  static const std::vector<std::string> names = {"fused",     "separate", "per_head", "kqv",
                                                 "torch_mha", "gpt2",     "proj",     "bert",
                                                 "neox",      "falcon",   "codegen"};
  return names;
}

std::string layout_name(Layout l) { return layout_names()[static_cast<int>(l)]; }

std::optional<Layout> parse_layout(const std::string& name) {
  const auto& names = layout_names();
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return static_cast<Layout>(i);
  return std::nullopt;
}

bool layout_has_out_proj(Layout l) { return l != Layout::per_head && l != Layout::kqv; }

}  // namespace attn
