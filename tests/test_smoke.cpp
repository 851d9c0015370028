#include <doctest/doctest.h>
#include "attn/layout.h"
TEST_CASE("layout: names round trip") {
  for (const auto& n : attn::layout_names()) CHECK(attn::layout_name(*attn::parse_layout(n)) == n);
  CHECK_FALSE(attn::parse_layout("nope").has_value());
}
