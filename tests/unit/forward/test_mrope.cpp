// mrope (RopeSpec::mrope_section, CONTRACT.md "(v4) Families and schedulers"):
// each frequency's position row in Qwen2-VL's chunks and Qwen3-VL's
// interleaving; positions (3, B, L) of time, height and width rows through
// both kernels, by the position stage and by the fast path into panels, and
// through --check-f64's float64 rows, against the plain-loop reference (which
// applies the sections by a rule of its own, written from transformers); 1-D
// positions with sections are the plain rope.
//
// Letters: B batch, L queries, C hidden, H heads, Hkv key/value heads, D head
// size, R rotary_dim.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "attn/attention.h"
#include "attn/check_f64.h"
#include "attn/positions.h"
#include "forward/stages.h"
#include "kernels/kernels.h"
#include "kernels/micro.h"
#include "reference_scores.h"
#include "score_cases.h"
#include "test_util.h"

using namespace attn;
using namespace attn::test::scores;

namespace {

RopeSpec mrope(std::int64_t R, std::vector<std::int64_t> section, bool interleaved,
               double theta = 100.0) {
  RopeSpec r = rope(R, RopeStyle::half, theta);
  r.mrope_section = std::move(section);
  r.mrope_interleaved = interleaved;
  return r;
}

// (3, B, L) rows as Qwen2-VL's get_rope_index numbers text with an image of
// h x w tokens after `at` text tokens: text counts on in all three rows; the
// image at st = at: time st, height st + row, width st + column; the text
// after it at st + max(h, w). Each batch row's image starts `shift` later.
PositionIds image_rows(std::size_t B, std::size_t L, std::size_t h, std::size_t w, std::size_t at,
                       std::size_t shift = 1) {
  PositionIds p{{3, B, L}, std::vector<std::int64_t>(3 * B * L)};
  for (std::size_t b = 0; b < B; ++b) {
    const std::size_t st = at + b * shift;
    std::int64_t next = 0;
    for (std::size_t i = 0; i < L; ++i) {
      std::int64_t t = next, y = next, x = next;
      if (i >= st && i < st + h * w) {
        t = std::int64_t(st);
        y = std::int64_t(st + (i - st) / w);
        x = std::int64_t(st + (i - st) % w);
        next = std::int64_t(st + std::max(h, w));
      } else {
        ++next;
      }
      p.data[(0 * B + b) * L + i] = t;
      p.data[(1 * B + b) * L + i] = y;
      p.data[(2 * B + b) * L + i] = x;
    }
  }
  return p;
}

// The time row alone, (B, L).
PositionIds time_row(const PositionIds& rows) {
  const std::size_t B = rows.shape[1], L = rows.shape[2];
  return PositionIds{{B, L}, {rows.data.begin(), rows.data.begin() + std::ptrdiff_t(B * L)}};
}

Tensor run(const Case& c, const AttentionSpec& spec, const PositionIds* positions) {
  const Weights w = make_weights(c);
  Inputs t;
  make_inputs(c, w, t);
  t.in.positions = positions;
  Tensor ctx;
  forward(w, spec, t.in, ctx, {});
  return ctx;
}

}  // namespace

TEST_CASE("mrope: each frequency's row, Qwen2-VL's chunks and Qwen3-VL's interleaving") {
  // Qwen2-VL-7B: R = 128, [16, 24, 24]: frequencies 0..15 time, 16..39 height, 40..63 width.
  const std::vector<std::uint8_t> chunks = mrope_rows(mrope(128, {16, 24, 24}, false));
  REQUIRE(chunks.size() == 64);
  for (std::size_t i = 0; i < 64; ++i) CHECK(chunks[i] == (i < 16 ? 0 : i < 40 ? 1 : 2));
  // Qwen3-VL-8B: [24, 20, 20] interleaved: T H W T H W ... up to 60, then time.
  const std::vector<std::uint8_t> inter = mrope_rows(mrope(128, {24, 20, 20}, true));
  REQUIRE(inter.size() == 64);
  for (std::size_t i = 0; i < 64; ++i) CHECK(inter[i] == (i < 60 ? i % 3 : 0));
  CHECK(std::count(inter.begin(), inter.end(), 1) == 20);
  CHECK(std::count(inter.begin(), inter.end(), 0) == 24);
  // Sections [t, h, w] with h != w: the shorter one stops early.
  const std::vector<std::uint8_t> uneven = mrope_rows(mrope(16, {4, 1, 3}, true));
  CHECK(uneven == std::vector<std::uint8_t>{0, 1, 2, 0, 0, 2, 0, 0});
  CHECK(mrope_rows(rope(16)).empty());

  // cos and sin at three rows: frequency i as at its row's position alone.
  for (RopePrecision precision : {RopePrecision::float64, RopePrecision::float32}) {
    RopeSpec s = mrope(16, {4, 2, 2}, false, 10000.0);
    s.precision = precision;
    const RopeFrequencies f = rope_frequencies(s, 100);
    const std::int64_t rows[3] = {7, 30, 91};
    std::vector<float> c(8), sn(8), c1(8), s1(8);
    rope_angles(f, rows, c.data(), sn.data());
    for (std::size_t i = 0; i < 8; ++i) {
      rope_angles(f, rows[f.row_of[i]], c1.data(), s1.data());
      CHECK(c[i] == c1[i]);
      CHECK(sn[i] == s1[i]);
    }
  }
}

TEST_CASE("mrope: (3, B, L) rows through both kernels, chunks and interleaved, GQA, padding") {
  for (bool interleaved : {false, true})
    for (std::int64_t R : {8, 6}) {  // 6: partial rotary, the sections split R / 2
      CAPTURE(interleaved);
      CAPTURE(R);
      Case c;
      c.L = 12;
      c.Hkv = 2;
      c.spec.causal = true;
      c.spec.scale = 1.0f / std::sqrt(8.0f);
      c.spec.rope =
          mrope(R, R == 8 ? std::vector<std::int64_t>{2, 1, 1} : std::vector<std::int64_t>{1, 1, 1},
                interleaved);
      c.padding = pad_right_left(c.B, c.L, 2);
      c.positions = image_rows(c.B, c.L, 2, 3, 2);
      check_case(c, 1);
      check_case(c, 3);
      // The rows count: the time row alone moves the context.
      const PositionIds t = time_row(*c.positions);
      const test::Diff moved = test::compare(run(c, c.spec, &*c.positions), run(c, c.spec, &t));
      INFO("time row alone: " << test::describe(moved));
      CHECK(moved.max_abs > 1e-3);
    }
}

TEST_CASE("mrope: 1-D positions with sections are the plain rope") {
  Case c;
  c.L = 10;
  c.spec.causal = true;
  c.spec.scale = 0.35f;
  c.spec.rope = mrope(8, {2, 1, 1}, true);
  c.padding = pad_right_left(c.B, c.L, 3);
  c.positions = positions_of(*c.padding, 40);
  AttentionSpec plain = c.spec;
  plain.rope = rope(8, RopeStyle::half, 100.0);
  const Tensor with = run(c, c.spec, &*c.positions), without = run(c, plain, &*c.positions);
  CHECK(test::compare(with, without).max_abs == 0.0);
  // And three equal rows are the same as one.
  PositionIds same{{3, c.B, c.L}, {}};
  for (int k = 0; k < 3; ++k)
    same.data.insert(same.data.end(), c.positions->data.begin(), c.positions->data.end());
  CHECK(test::compare(run(c, c.spec, &same), without).max_abs == 0.0);
}

TEST_CASE("mrope: the fast path into panels, chunks and interleaved, several tasks of heads") {
  for (bool interleaved : {false, true}) {
    CAPTURE(interleaved);
    Case c;
    c.B = 2;
    c.L = 64;  // a whole number of panels: both batch rows in one projection
    c.H = 12;
    c.Hkv = 6;
    c.D = 64;
    c.C = 48;
    c.O = 40;
    c.spec.causal = true;
    c.spec.scale = 0.125f;
    c.spec.rope = interleaved ? mrope(64, {12, 10, 10}, true) : mrope(64, {16, 8, 8}, false);
    c.padding = pad_right_left(c.B, c.L, 5);
    c.positions = image_rows(c.B, c.L, 6, 8, 9, 3);
    const std::size_t before = kernels::qkv_panels_calls();
    check_case(c, 2);
    const std::size_t chunks = (c.B + detail::chunk_batch(c.L) - 1) / detail::chunk_batch(c.L);
    CHECK(kernels::qkv_panels_calls() - before ==
          (kernels::micro::kOwnProjections ? 2 * chunks : 0));
  }
}

TEST_CASE("mrope: --check-f64's float64 rows follow the three rows") {
  Case c;
  c.L = 11;
  c.Hkv = 2;
  c.spec.causal = true;
  c.spec.scale = 0.3f;
  c.spec.rope = mrope(8, {2, 1, 1}, false);
  c.positions = image_rows(c.B, c.L, 3, 2, 1);
  const Weights w = make_weights(c);
  Inputs t;
  make_inputs(c, w, t);
  REQUIRE(f64_unsupported(w, c.spec, t.in).empty());
  const ref::ScoresResult want = ref::attention_with_scores(w, c.spec, t.in);
  const std::vector<std::size_t> rows = evenly_spaced_rows(c.L, 0);
  for (std::size_t b = 0; b < c.B; ++b) {
    const F64Rows got = attention_rows_f64(w, c.spec, t.in, b, rows, 1);
    double worst = 0.0, scale = 0.0;
    for (std::size_t i = 0; i < c.L; ++i)
      for (std::size_t o = 0; o < c.O; ++o) {
        const double v = want.context.data[(b * c.L + i) * c.O + o];
        scale = std::max(scale, std::abs(v));
        worst = std::max(worst, std::abs(got.context[i * c.O + o] - v));
      }
    INFO("batch " << b << ": maxdiff " << worst << " of " << scale);
    CHECK(worst <= 1e-5 * scale);
  }
}
