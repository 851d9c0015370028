// attn_mask shapes (torch's and Hugging Face's) resolved to per-(b, h, i) rows,
// and attention_mask as key padding.
#include <doctest/doctest.h>

#include <cmath>

#include "attn/error.h"
#include "attn/masks.h"

namespace {

// A float mask whose element value encodes its own flat index.
attn::Tensor numbered(std::vector<std::size_t> shape) {
  attn::Tensor t(std::move(shape));
  for (std::size_t i = 0; i < t.size(); ++i) t.data[i] = float(i);
  return t;
}

}  // namespace

TEST_CASE("score_mask: every accepted shape addresses the row torch would broadcast") {
  const std::size_t B = 2, H = 3, L = 4, T = 5;
  struct {
    std::vector<std::size_t> shape;
    // flat index of element (b, h, i, j) in the mask
    std::size_t (*at)(std::size_t b, std::size_t h, std::size_t i, std::size_t j);
  } cases[] = {
      {{L, T}, [](std::size_t, std::size_t, std::size_t i, std::size_t j) { return i * 5 + j; }},
      {{B, L, T},
       [](std::size_t b, std::size_t, std::size_t i, std::size_t j) {
         return (b * 4 + i) * 5 + j;
       }},
      {{B * H, L, T},
       [](std::size_t b, std::size_t h, std::size_t i, std::size_t j) {
         return ((b * 3 + h) * 4 + i) * 5 + j;  // torch MHA: attn_mask.view(B, H, L, T)
       }},
      {{B, 1, L, T},
       [](std::size_t b, std::size_t, std::size_t i, std::size_t j) {
         return (b * 4 + i) * 5 + j;
       }},
      {{B, H, L, T},
       [](std::size_t b, std::size_t h, std::size_t i, std::size_t j) {
         return ((b * 3 + h) * 4 + i) * 5 + j;
       }},
  };
  for (const auto& c : cases) {
    CAPTURE(attn::shape_str(c.shape));
    const attn::ScoreMask m = attn::score_mask(numbered(c.shape), B, H, L, T, "attn_mask.npy");
    REQUIRE(m.additive);
    for (std::size_t b = 0; b < B; ++b)
      for (std::size_t h = 0; h < H; ++h)
        for (std::size_t i = 0; i < L; ++i)
          for (std::size_t j = 0; j < T; ++j)
            CHECK(m.add_row(b, h, i)[j] == float(c.at(b, h, i, j)));
  }
}

TEST_CASE("score_mask: bool masks block, wrong shapes and NaN/+inf are refused by name") {
  attn::Mask bm;
  bm.shape = {2, 3};
  bm.data = {0, 1, 0, 1, 0, 0};
  const attn::ScoreMask m = attn::score_mask(bm, 4, 2, 2, 3, "mask.npy");
  CHECK(!m.additive);
  CHECK(m.blocked_row(3, 1, 0)[1] == 1);
  CHECK(m.blocked_row(0, 0, 1)[0] == 1);
  CHECK_THROWS_WITH_AS(
      attn::score_mask(bm, 4, 2, 3, 2, "mask.npy"),
      doctest::Contains("mask.npy: expected an attn_mask of shape (3, 2), (4, 3, 2), (8, 3, 2)"),
      attn::Error);
  attn::Tensor f({2, 3});
  f.data[4] = NAN;
  CHECK_THROWS_WITH_AS(attn::score_mask(f, 1, 1, 2, 3, "m"),
                       doctest::Contains("NaN at index (1, 1)"), attn::Error);
  f.data[4] = INFINITY;
  CHECK_THROWS_WITH_AS(attn::score_mask(f, 1, 1, 2, 3, "m"), doctest::Contains("+inf"),
                       attn::Error);
  f.data[4] = -INFINITY;  // -inf blocks a key: fine
  CHECK(attn::score_mask(f, 1, 1, 2, 3, "m").additive);
}

TEST_CASE("attention_mask: 1 = attend becomes padding 1 = padded; padded_share spots inversions") {
  attn::Mask am;
  am.shape = {2, 4};
  am.data = {1, 1, 1, 0, 0, 1, 1, 1};
  const attn::Mask pad = attn::padding_from_attention_mask(am);
  CHECK(pad.data == std::vector<std::uint8_t>{0, 0, 0, 1, 1, 0, 0, 0});
  CHECK(attn::padded_share(pad) == doctest::Approx(0.25));
  CHECK(attn::padded_share(am) == doctest::Approx(0.75));  // the tokenizer's mask passed as padding
  CHECK(attn::padded_share(attn::Mask{}) == 0.0);
}
