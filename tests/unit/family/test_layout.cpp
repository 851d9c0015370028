// layout: the weight layout names of CONTRACT.md and which hold an output projection.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "attn/layout.h"
TEST_CASE("layout: names round trip") {
  for (const auto& n : attn::layout_names()) CHECK(attn::layout_name(*attn::parse_layout(n)) == n);
  CHECK_FALSE(attn::parse_layout("nope").has_value());
}

TEST_CASE("layout: per_head and kqv hold no output projection") {
  CHECK_FALSE(attn::layout_has_out_proj(attn::Layout::per_head));
  CHECK_FALSE(attn::layout_has_out_proj(attn::Layout::kqv));
  CHECK(attn::layout_has_out_proj(attn::Layout::fused));
  CHECK(attn::layout_has_out_proj(attn::Layout::gpt2));
  CHECK(attn::layout_has_out_proj(attn::Layout::proj));
  CHECK(attn::layout_has_out_proj(attn::Layout::falcon));
  // CONTRACT.md v2's table: the six version-1 layouts, then proj, bert, neox, falcon; then
  // codegen (CodeGen's qkv_proj, a decision beside the contract).
  CHECK(attn::layout_names() == std::vector<std::string>{"fused", "separate", "per_head", "kqv",
                                                         "torch_mha", "gpt2", "proj", "bert",
                                                         "neox", "falcon", "codegen"});
}
