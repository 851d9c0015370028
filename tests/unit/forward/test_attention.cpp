// The forward pass (lib/src/attention*.cpp) against the plain-loop
// reference (tests/support/reference.h) on many shapes, masks and options,
// through both the streaming path (no sink) and the maps path (sink).
//
// Letters: B batch, S sequence, C hidden, H heads, Hkv key/value heads,
// D head size, O out size.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <mutex>
#include <vector>

#include "attn/attention.h"
#include "attn/error.h"
#include "kernels/kernels.h"
#include "kernels/micro.h"
#include "reference.h"
#include "test_util.h"

using namespace attn;

namespace {

constexpr double kTol = 1e-5;  // CONTRACT.md: within 1e-5 of the output's scale

struct Shape {
  std::size_t B, S, C, H, D, O;
  std::size_t Hkv = 0;  // 0 = H (no grouping)
};

// Random canonical weights; values shrunk by 1/sqrt(in) like nn.Linear's init
// so scores stay in a realistic range.
Weights make_weights(const Shape& s, bool qkv_bias, bool out_proj, bool out_bias, unsigned seed) {
  Weights w;
  w.C = s.C;
  w.H = s.H;
  w.D = s.D;
  w.Hkv = s.Hkv ? s.Hkv : s.H;
  w.O = out_proj ? s.O : s.H * s.D;
  const std::size_t HD = s.H * s.D, QKV = w.geometry().qkv_rows();
  auto shrink = [](Tensor t, double by) {
    for (float& v : t.data) v = float(v * by);
    return t;
  };
  w.w_qkv = shrink(test::random_tensor({QKV, s.C}, seed), 2.0 / std::sqrt(double(s.C)));
  if (qkv_bias) w.b_qkv = shrink(test::random_tensor({QKV}, seed + 1), 0.5);
  w.has_out_proj = out_proj;
  if (out_proj) {
    w.w_out = shrink(test::random_tensor({s.O, HD}, seed + 2), 1.0 / std::sqrt(double(HD)));
    if (out_bias) w.b_out = shrink(test::random_tensor({s.O}, seed + 3), 0.5);
  }
  return w;
}

enum class Pad { none, right, left, holes, all_of_batch0 };

Mask make_padding(std::size_t B, std::size_t S, Pad kind) {
  Mask m;
  m.shape = {B, S};
  m.data.assign(B * S, 0);
  for (std::size_t b = 0; b < B; ++b) {
    const std::size_t k = (b * 3 + 1) % (S > 1 ? S : 1);  // differs per batch row
    for (std::size_t j = 0; j < S; ++j) {
      std::uint8_t p = 0;
      if (kind == Pad::right) p = j >= S - k;
      if (kind == Pad::left) p = j < k;
      if (kind == Pad::holes) p = (j % 3 == 1) || j < k / 2;
      if (kind == Pad::all_of_batch0) p = b == 0 || j >= S - k;
      m.data[b * S + j] = p;
    }
  }
  return m;
}

// Runs both paths and checks context, maps and the masked-row count.
void check_case(const Shape& s, bool causal, Pad pad, bool qkv_bias, bool out_proj, bool out_bias,
                double scale, int threads, unsigned seed) {
  CAPTURE(s.B);
  CAPTURE(s.S);
  CAPTURE(s.C);
  CAPTURE(s.H);
  CAPTURE(s.Hkv);
  CAPTURE(s.D);
  CAPTURE(s.O);
  CAPTURE(causal);
  CAPTURE(static_cast<int>(pad));
  CAPTURE(threads);
  const Weights w = make_weights(s, qkv_bias, out_proj, out_bias, seed);
  const Tensor x = test::random_tensor({s.B, s.S, s.C}, seed + 10);
  const Mask mask = make_padding(s.B, s.S, pad);
  const Mask* kp = pad == Pad::none ? nullptr : &mask;
  const ref::Result want = ref::attention(ref::from_weights(w), x, kp, scale, causal);

  AttentionSpec spec;
  spec.scale = float(scale);
  spec.causal = causal;
  ForwardOptions opt;
  opt.threads = threads;

  Tensor ctx;
  const ForwardStats st = forward(w, spec, x, kp, ctx, opt);
  const test::Diff d = test::compare(ctx, want.context);
  INFO("stream context: " << test::describe(d));
  CHECK(d.shape_ok);
  CHECK(d.relative() <= kTol);
  CHECK(st.fully_masked_rows == want.fully_masked_rows);

  TensorSink sink(s.B, s.H, s.S);
  opt.attention = &sink;
  Tensor ctx2;
  const ForwardStats st2 = forward(w, spec, x, kp, ctx2, opt);
  const test::Diff d2 = test::compare(ctx2, want.context);
  const test::Diff dm = test::compare(sink.maps, want.attention);
  INFO("maps context: " << test::describe(d2));
  INFO("maps: " << test::describe(dm));
  CHECK(d2.relative() <= kTol);
  CHECK(dm.max_abs <= kTol);  // weights are in [0, 1]
  CHECK(st2.fully_masked_rows == want.fully_masked_rows);
  for (float v : ctx.data) REQUIRE(std::isfinite(v));
}

}  // namespace

TEST_CASE("attention: matches the reference on many shapes, both paths") {
  const std::vector<Shape> shapes = {
      {1, 1, 3, 1, 2, 2},
      {2, 6, 3, 2, 1, 2},
      {1, 7, 5, 3, 4, 7},
      {3, 17, 8, 2, 3, 5},
      {2, 65, 16, 4, 8, 16},
      {1, 130, 12, 3, 16, 9},
      {2, 257, 24, 2, 12, 24},
      {1, 300, 32, 1, 64, 32},
      // D a multiple of the panel width: q | k | v projected straight into
      // panels (kernels::linear_qkv_panels) where no panel of tokens spans
      // two batch rows (one row a chunk, or S a multiple of 16; B = 40 at
      // S = 32 is two chunks), rows apart otherwise (S = 40).
      {1, 100, 32, 2, 16, 32},
      {3, 32, 64, 2, 32, 48},
      {40, 32, 32, 2, 16, 32},
      {2, 40, 32, 2, 16, 32},
  };
  unsigned seed = 1;
  for (const Shape& s : shapes)
    for (bool causal : {false, true}) {
      check_case(s, causal, Pad::none, true, true, true, 1.0 / std::sqrt(double(s.D)), 2, seed++);
      check_case(s, causal, Pad::right, true, true, true, 1.0 / std::sqrt(double(s.D)), 1, seed++);
    }
}

TEST_CASE("attention: grouped-query and multi-query heads match the reference, both paths") {
  // {B, S, C, H, D, O, Hkv}: GQA groups of 2, 3 and 4, MQA (Hkv = 1), across
  // query and key block edges.
  const std::vector<Shape> shapes = {
      {1, 1, 3, 2, 2, 2, 1},     {2, 6, 8, 4, 2, 8, 2},      {1, 7, 5, 6, 4, 7, 2},
      {3, 17, 8, 6, 3, 5, 3},    {2, 65, 16, 8, 4, 16, 2},   {1, 130, 12, 4, 8, 9, 1},
      {2, 257, 24, 6, 4, 24, 3}, {1, 300, 32, 4, 16, 32, 1}, {2, 48, 32, 4, 16, 32, 2},
  };
  unsigned seed = 500;
  for (const Shape& s : shapes)
    for (bool causal : {false, true}) {
      check_case(s, causal, Pad::none, true, true, true, 1.0 / std::sqrt(double(s.D)), 2, seed++);
      check_case(s, causal, Pad::holes, false, true, false, 0.5, 1, seed++);
    }
}

TEST_CASE("attention: GQA equals multi-head attention with each KV head repeated (repeat_kv)") {
  // Independent of the reference: expand the k and v rows so query head h gets
  // a copy of KV head h / (H / Hkv), as Hugging Face's repeat_kv does, and run
  // the ungrouped layer. Both paths must give the same numbers.
  const Shape s{2, 40, 12, 6, 4, 10, 2};
  const Weights gqa = make_weights(s, true, true, true, 42);
  const Geometry g = gqa.geometry();
  Weights mha = gqa;
  mha.Hkv = s.H;
  const Geometry m = mha.geometry();
  mha.w_qkv = Tensor({m.qkv_rows(), s.C});
  mha.b_qkv = Tensor({m.qkv_rows()});
  auto copy_row = [&](std::size_t from, std::size_t to) {
    std::copy_n(gqa.w_qkv.ptr() + from * s.C, s.C, mha.w_qkv.ptr() + to * s.C);
    mha.b_qkv.data[to] = gqa.b_qkv.data[from];
  };
  for (std::size_t r = 0; r < g.q_rows(); ++r) copy_row(r, r);
  for (std::size_t h = 0; h < s.H; ++h)
    for (std::size_t d = 0; d < s.D; ++d) {
      copy_row(g.k_row0() + (h / (s.H / s.Hkv)) * s.D + d, m.k_row0() + h * s.D + d);
      copy_row(g.v_row0() + (h / (s.H / s.Hkv)) * s.D + d, m.v_row0() + h * s.D + d);
    }
  const Tensor x = test::random_tensor({s.B, s.S, s.C}, 43);
  for (bool causal : {false, true}) {
    AttentionSpec spec = AttentionSpec::plain(0.5f, causal);
    for (bool maps : {false, true}) {
      TensorSink sink_a(s.B, s.H, s.S), sink_b(s.B, s.H, s.S);
      ForwardOptions oa, ob;
      if (maps) oa.attention = &sink_a, ob.attention = &sink_b;
      Tensor a, b;
      forward(gqa, spec, x, nullptr, a, oa);
      forward(mha, spec, x, nullptr, b, ob);
      const test::Diff d = test::compare(a, b);
      INFO("causal " << causal << " maps " << maps << ": " << test::describe(d));
      CHECK(d.relative() <= 1e-6);
      if (maps) CHECK(test::compare(sink_a.maps, sink_b.maps).max_abs <= 1e-6);
    }
  }
  // kv_head is repeat_kv's h // n_rep: query heads 0-2 read KV head 0, 3-5 KV head 1.
  CHECK(g.kv_head(0) == 0);
  CHECK(g.kv_head(2) == 0);
  CHECK(g.kv_head(3) == 1);
  CHECK(g.kv_head(5) == 1);
}

TEST_CASE("attention: forward_flops counts the grouped projection") {
  const Shape s{1, 8, 16, 4, 4, 16, 1};
  const Weights w = make_weights(s, false, true, false, 1);
  // projection: 2 * S * C * (H + 2*Hkv)*D + 2 * S * H*D * O; scores: 4 * H * S * S * D
  const double want = 2.0 * 8 * 16 * (4 + 2) * 4 + 2.0 * 8 * 16 * 16 + 4.0 * 4 * 8 * 8 * 4;
  CHECK(forward_flops(w, 1, 8, false) == doctest::Approx(want));
}

TEST_CASE("attention: padding left, right, inside and fully padded rows give zeros, not NaN") {
  const Shape s{3, 70, 8, 2, 4, 6};
  unsigned seed = 100;
  for (Pad pad : {Pad::left, Pad::right, Pad::holes, Pad::all_of_batch0})
    for (bool causal : {false, true}) check_case(s, causal, pad, true, true, true, 0.5, 2, seed++);
}

TEST_CASE("attention: fully masked rows count and give the output bias") {
  const Shape s{2, 9, 4, 3, 2, 5};
  const Weights w = make_weights(s, true, true, true, 7);
  const Tensor x = test::random_tensor({s.B, s.S, s.C}, 8);
  const Mask mask = make_padding(s.B, s.S, Pad::left);  // batch 1: 4 left-padded keys
  AttentionSpec spec = AttentionSpec::plain(0.7f, true);
  Tensor ctx;
  const ForwardStats st = forward(w, spec, x, &mask, ctx, ForwardOptions{});
  // Causal + left padding: rows 0 (b=0) and 0..3 (b=1) see no key, per head.
  CHECK(st.fully_masked_rows == (1 + 4) * 3);
  for (std::size_t o = 0; o < s.O; ++o) CHECK(ctx.data[(1 * s.S + 2) * s.O + o] == w.b_out.data[o]);
}

TEST_CASE("attention: no qkv bias, no out bias, no output projection, custom scale") {
  const Shape s{2, 33, 10, 3, 5, 7};
  unsigned seed = 200;
  for (bool causal : {false, true}) {
    check_case(s, causal, Pad::none, false, true, true, 0.1, 2, seed++);
    check_case(s, causal, Pad::right, true, true, false, 2.0, 2, seed++);
    check_case(s, causal, Pad::left, true, false, false, 0.3, 2, seed++);
    check_case(s, causal, Pad::holes, false, false, false, 1.0, 1, seed++);
  }
}

TEST_CASE("attention: thread counts give the same context") {
  const Shape s{2, 200, 16, 4, 8, 16};
  const Weights w = make_weights(s, true, true, true, 300);
  const Tensor x = test::random_tensor({s.B, s.S, s.C}, 301);
  AttentionSpec spec = AttentionSpec::plain(0.35f, true);
  Tensor one, four;
  ForwardOptions opt;
  opt.threads = 1;
  forward(w, spec, x, nullptr, one, opt);
  opt.threads = 4;
  forward(w, spec, x, nullptr, four, opt);
  // Each (b, h, block) is computed by one worker in a fixed order; only the
  // multi-threaded BLAS projections may split their sums differently.
  const test::Diff d = test::compare(four, one);
  INFO(test::describe(d));
  CHECK(d.relative() <= 1e-6);
}

TEST_CASE("attention: the sink gets every row once, causal zeros beyond the diagonal") {
  struct CountingSink : AttentionSink {
    explicit CountingSink(std::size_t B, std::size_t H, std::size_t S)
        : seen(B * H * S, 0), S_(S), H_(H) {}
    void write_rows(std::size_t b, std::size_t h, std::size_t i0, std::size_t n,
                    const float* rows) override {
      std::lock_guard<std::mutex> lock(mu);
      for (std::size_t r = 0; r < n; ++r) {
        ++seen[(b * H_ + h) * S_ + i0 + r];
        double sum = 0;
        for (std::size_t j = 0; j < S_; ++j) {
          if (j > i0 + r && rows[r * S_ + j] != 0.0f) ++nonzero_future;
          sum += rows[r * S_ + j];
        }
        if (std::fabs(sum - 1.0) > 1e-5) ++bad_sums;
      }
    }
    std::mutex mu;
    std::vector<int> seen;
    int nonzero_future = 0, bad_sums = 0;
    std::size_t S_, H_;
  };
  const Shape s{2, 150, 8, 3, 4, 8};
  const Weights w = make_weights(s, true, true, true, 400);
  const Tensor x = test::random_tensor({s.B, s.S, s.C}, 401);
  CountingSink sink(s.B, s.H, s.S);
  ForwardOptions opt;
  opt.attention = &sink;
  opt.threads = 2;
  Tensor ctx;
  forward(w, AttentionSpec::plain(0.5f, true), x, nullptr, ctx, opt);
  for (int c : sink.seen) REQUIRE(c == 1);
  CHECK(sink.nonzero_future == 0);
  CHECK(sink.bad_sums == 0);
}

TEST_CASE("attention: an exception in the sink reaches the caller") {
  struct FailingSink : AttentionSink {
    void write_rows(std::size_t, std::size_t, std::size_t, std::size_t, const float*) override {
      throw Error(Exit::io, "attention.npy: disk full");
    }
  };
  const Shape s{1, 100, 4, 2, 2, 4};
  const Weights w = make_weights(s, true, true, true, 500);
  const Tensor x = test::random_tensor({s.B, s.S, s.C}, 501);
  FailingSink sink;
  ForwardOptions opt;
  opt.attention = &sink;
  Tensor ctx;
  CHECK_THROWS_AS(forward(w, AttentionSpec{}, x, nullptr, ctx, opt), Error);
}

TEST_CASE("attention: wrong input or mask shape is a data error") {
  const Shape s{1, 4, 4, 2, 2, 4};
  const Weights w = make_weights(s, true, true, true, 600);
  Tensor ctx;
  const Tensor bad = test::random_tensor({1, 4, 5}, 601);
  try {
    forward(w, AttentionSpec{}, bad, nullptr, ctx, ForwardOptions{});
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(e.code() == Exit::data);
  }
  const Tensor x = test::random_tensor({1, 4, 4}, 602);
  Mask m;
  m.shape = {1, 3};
  m.data.assign(3, 0);
  CHECK_THROWS_AS(forward(w, AttentionSpec{}, x, &m, ctx, ForwardOptions{}), Error);
}

TEST_CASE("attention: S = 4096 streaming and maps agree with the reference") {
  const Shape s{1, 4096, 16, 2, 8, 16};
  check_case(s, true, Pad::right, true, true, true, 1.0 / std::sqrt(8.0), 2, 700);
  check_case(s, false, Pad::none, true, true, true, 1.0 / std::sqrt(8.0), 2, 701);
}

TEST_CASE("attention: one chunk with O == H*D writes the context over y, slab over slab") {
  // q and y live in the context's buffer, 1024 rows (or all of them) past its start: the
  // output projection's slabs of 1024 rows (the last one short) each overwrite the slab
  // before. The context matches the reference, and its buffer is the one that held q.
  for (const Shape& s : {Shape{1, 3000, 32, 2, 16, 32}, Shape{2, 40, 24, 3, 8, 24}}) {
    CAPTURE(s.S);
    const Weights w = make_weights(s, true, true, true, 1100);
    const Tensor x = test::random_tensor({s.B, s.S, s.C}, 1101);
    const ref::Result want = ref::attention(ref::from_weights(w), x, nullptr, 0.25, true);
    Tensor ctx;
    forward(w, AttentionSpec::plain(0.25f, true), x, nullptr, ctx, ForwardOptions{});
    const test::Diff d = test::compare(ctx, want.context);
    INFO(test::describe(d));
    CHECK(d.shape_ok);
    CHECK(d.relative() <= kTol);
    const std::size_t rows = s.B * s.S;
    CHECK(ctx.data.capacity() >= (std::min<std::size_t>(rows, 1024) + rows) * s.O);
  }
  // O != H*D: a buffer of its own, as before.
  const Shape s{1, 3000, 32, 2, 16, 40};
  const Weights w = make_weights(s, true, true, true, 1102);
  const Tensor x = test::random_tensor({s.B, s.S, s.C}, 1103);
  Tensor ctx;
  forward(w, AttentionSpec::plain(0.25f, true), x, nullptr, ctx, ForwardOptions{});
  const test::Diff d =
      test::compare(ctx, ref::attention(ref::from_weights(w), x, nullptr, 0.25, true).context);
  CHECK(d.relative() <= kTol);
  CHECK(ctx.data.capacity() == s.S * s.O);
}

TEST_CASE("attention: forward_flops counts causal score work halved") {
  const Shape s{2, 10, 8, 2, 4, 6};
  const Weights w = make_weights(s, true, true, true, 800);
  const double proj = 2.0 * 20 * 8 * 24 + 2.0 * 20 * 8 * 6;
  const double dense = 4.0 * 2 * 2 * 10 * 10 * 4;
  CHECK(forward_flops(w, 2, 10, false) == doctest::Approx(proj + dense));
  CHECK(forward_flops(w, 2, 10, true) == doctest::Approx(proj + dense / 2));
}

TEST_CASE("attention: the row-subset reference agrees with the full reference") {
  const Shape s{2, 40, 6, 3, 4, 5};
  const Weights w = make_weights(s, true, true, true, 900);
  const Tensor x = test::random_tensor({s.B, s.S, s.C}, 901);
  const Mask mask = make_padding(s.B, s.S, Pad::left);
  const ref::Result full = ref::attention(ref::from_weights(w), x, &mask, 0.4, true);
  const std::vector<std::size_t> rows = {0, 3, 17, 39};
  const ref::Result part = ref::attention_rows(ref::from_weights(w), x, &mask, 0.4, true, 1, rows);
  for (std::size_t t = 0; t < rows.size(); ++t) {
    for (std::size_t o = 0; o < s.O; ++o)
      CHECK(part.context.data[t * s.O + o] == full.context.data[(1 * s.S + rows[t]) * s.O + o]);
    for (std::size_t h = 0; h < s.H; ++h)
      for (std::size_t j = 0; j < s.S; ++j)
        CHECK(part.attention.data[(h * rows.size() + t) * s.S + j] ==
              full.attention.data[((1 * s.H + h) * s.S + rows[t]) * s.S + j]);
  }
}

TEST_CASE("attention: S = 4096, D = 64 streaming rows agree with the row reference") {
  const Shape s{2, 4096, 32, 2, 64, 32};
  const Weights w = make_weights(s, true, true, true, 1000);
  const Tensor x = test::random_tensor({s.B, s.S, s.C}, 1001);
  const Mask mask = make_padding(s.B, s.S, Pad::holes);
  const std::vector<std::size_t> rows = {0, 1, 63, 64, 255, 256, 1000, 2047, 4000, 4095};
  for (bool causal : {true, false}) {
    CAPTURE(causal);
    Tensor ctx;
    forward(w, AttentionSpec::plain(0.125f, causal), x, &mask, ctx, ForwardOptions{});
    for (std::size_t b = 0; b < s.B; ++b) {
      const ref::Result want =
          ref::attention_rows(ref::from_weights(w), x, &mask, 0.125, causal, b, rows);
      Tensor got({rows.size(), s.O});
      for (std::size_t t = 0; t < rows.size(); ++t)
        std::copy(ctx.data.begin() + (b * s.S + rows[t]) * s.O,
                  ctx.data.begin() + (b * s.S + rows[t] + 1) * s.O, got.data.begin() + t * s.O);
      const test::Diff d = test::compare(got, want.context);
      INFO("batch " << b << ": " << test::describe(d));
      CHECK(d.relative() <= kTol);
    }
  }
}

TEST_CASE("attention: S = 4096, D = 256 (blocks of 256 query rows) agree with the row reference") {
  // T x D = 2^20: the streaming tasks take kLongQueryBlock rows (kernels::query_block), as the
  // Llama-3-8B layer's do from S = 8192 (D = 128), at half its FLOPs (with attn-run's own tiles;
  // OpenBLAS's keep kQueryBlock).
  const Shape s{1, 4096, 32, 1, 256, 32};
  REQUIRE(kernels::query_block(s.S, s.D) ==
          (kernels::micro::kOwnTiles ? kernels::kLongQueryBlock : kernels::kQueryBlock));
  const Weights w = make_weights(s, true, true, true, 1300);
  const Tensor x = test::random_tensor({s.B, s.S, s.C}, 1301);
  const Mask mask = make_padding(s.B, s.S, Pad::holes);
  const std::vector<std::size_t> rows = {0, 127, 128, 255, 256, 511, 2047, 2048, 3900, 4095};
  const double scale = 1.0 / std::sqrt(256.0);
  for (bool causal : {true, false}) {
    CAPTURE(causal);
    Tensor ctx;
    forward(w, AttentionSpec::plain(float(scale), causal), x, &mask, ctx, ForwardOptions{});
    const ref::Result want =
        ref::attention_rows(ref::from_weights(w), x, &mask, scale, causal, 0, rows);
    Tensor got({rows.size(), s.O});
    for (std::size_t t = 0; t < rows.size(); ++t)
      std::copy(ctx.data.begin() + rows[t] * s.O, ctx.data.begin() + (rows[t] + 1) * s.O,
                got.data.begin() + t * s.O);
    const test::Diff d = test::compare(got, want.context);
    INFO(test::describe(d));
    CHECK(d.relative() <= kTol);
  }
}

TEST_CASE("attention: the stage times are measured and lie within the pass's own time") {
  // Three batch rows of 512: two chunks (forward/stages.h kChunkRows), each timed.
  const Shape s{3, 512, 32, 2, 16, 32};
  const Weights w = make_weights(s, true, true, true, 1201);
  const Tensor x = test::random_tensor({s.B, s.S, s.C}, 1202);
  Tensor ctx;
  const auto t0 = std::chrono::steady_clock::now();
  const ForwardStats st =
      forward(w, AttentionSpec::plain(0.25f, true), x, nullptr, ctx, ForwardOptions{});
  const double wall =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  CHECK(st.project_ms > 0.0);
  CHECK(st.attention_ms > 0.0);
  CHECK(st.output_ms > 0.0);
  CHECK(st.project_ms + st.attention_ms + st.output_ms <= wall);
}
