// --save (attn/saved_tensors.h): scores, q, k, v, z and result streamed by the
// forward pass into NAME.npy, against the plain-loop reference's intermediates
// (tests/support/reference_scores.h) on a layer with GQA, RoPE, causal,
// qk_norm and softcap, over two chunks of batch rows and several query
// blocks; with and without k/v (the projection's fast path into panels
// serves q when k and v are not asked for); with --heads/--queries/--keys;
// and the identities: softmax(scores) == the maps, sum over heads of result
// plus the output bias == the context.
//
// Letters: B batch, L queries, T' keys of a row, C hidden, H heads, Hkv
// key/value heads, D head size, O out size.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "attn/attention.h"
#include "attn/error.h"
#include "attn/npy.h"
#include "attn/output.h"
#include "attn/saved_tensors.h"
#include "expect_error.h"
#include "reference_scores.h"
#include "test_util.h"

using namespace attn;

namespace {

constexpr std::size_t B = 2, L = 600, C = 32, H = 4, Hkv = 2, D = 16, O = 24;

Tensor scaled(Tensor t, double by) {
  for (float& v : t.data) v = float(v * by);
  return t;
}

Weights layer() {
  Weights w;
  w.C = C;
  w.H = H;
  w.Hkv = Hkv;
  w.D = D;
  w.O = O;
  const Geometry g = w.geometry();
  w.w_qkv = scaled(test::random_tensor({g.qkv_rows(), C}, 31), 2.0 / std::sqrt(double(C)));
  w.b_qkv = scaled(test::random_tensor({g.qkv_rows()}, 32), 0.5);
  w.w_out = scaled(test::random_tensor({O, g.q_rows()}, 33), 1.0 / std::sqrt(double(H * D)));
  w.b_out = scaled(test::random_tensor({O}, 34), 0.5);
  w.q_norm = scaled(test::random_tensor({D}, 35), 0.5);
  w.k_norm = scaled(test::random_tensor({D}, 36), 0.5);
  return w;
}

AttentionSpec spec() {
  AttentionSpec s = AttentionSpec::plain(1.0f / std::sqrt(float(D)), true);
  s.softcap = 3.0f;
  s.qk_norm = QkNormSpec{1e-6, false, 1};  // Gemma's x * (1 + w), so the weights matter
  RopeSpec r;
  r.theta = 10000.0;
  r.rotary_dim = D;
  s.rope = r;
  return s;
}

// The run's saved files, read back.
struct Saved {
  std::map<std::string, Tensor> files;
  Tensor context, maps;  // (B, L, O), (B, H, L, T')
};

Saved run_saved(const Weights& w, const AttentionSpec& s, const Tensor& x,
                const std::vector<std::string>& names, const MapSelection& sel, int threads) {
  test::TempDir tmp;
  Saved r;
  std::map<std::string, std::vector<std::size_t>> shapes;
  {
    OutputDir out(tmp.path);
    SavePlan plan;
    plan.names = names;
    plan.B = B;
    plan.L = plan.T = plan.T_ext = L;
    plan.selection = sel;
    SavedTensorsSink sink(w, plan, out, threads);
    TensorSink maps(B, H, L, L);
    ForwardOptions fo;
    fo.threads = threads;
    fo.attention = &maps;
    fo.intermediates = &sink;
    ForwardInputs in;
    in.x = &x;
    forward(w, s, in, r.context, fo);
    sink.finish();
    out.commit();
    r.maps = std::move(maps.maps);
    for (const std::string& n : names) shapes[n] = plan.shape(w, n);
  }
  for (const std::string& n : names) {
    r.files[n] = read_npy_f32(tmp / (n + ".npy"), true);
    CHECK(r.files[n].shape == shapes[n]);
  }
  return r;
}

// got equals want within tol of want's scale, -inf exactly where want has it.
void check_close(const Tensor& got, const Tensor& want, const std::string& what, double tol) {
  CAPTURE(what);
  REQUIRE(got.shape == want.shape);
  double scale = 0.0, worst = 0.0;
  std::size_t at = 0, inf_mismatch = 0;
  for (float v : want.data)
    if (std::isfinite(v)) scale = std::max(scale, double(std::abs(v)));
  for (std::size_t e = 0; e < want.size(); ++e) {
    const float a = got.data[e], b = want.data[e];
    if (!std::isfinite(b) || !std::isfinite(a)) {
      inf_mismatch += a != b;
      continue;
    }
    const double err = std::abs(double(a) - double(b));
    if (err > worst) worst = err, at = e;
  }
  MESSAGE(what << ": maxdiff = " << worst << " at index " << at << " (scale " << scale << ")");
  CHECK(inf_mismatch == 0);
  CHECK(worst <= tol * std::max(scale, 1e-30));
}

}  // namespace

TEST_CASE("saved tensors: GQA, rope, causal, qk_norm, softcap against the plain-loop reference") {
  const Weights w = layer();
  const AttentionSpec s = spec();
  const Tensor x = test::random_tensor({B, L, C}, 37);
  ForwardInputs in;
  in.x = &x;
  const ref::ScoresResult want = ref::attention_with_scores(w, s, in);
  const std::vector<std::string> every = saved_tensor_names();
  // Without k and v the projection writes its panels directly (the fast path).
  const std::vector<std::string> no_kv = {"scores", "q", "z", "result"};
  for (const auto* names : {&every, &no_kv})
    for (int threads : {1, 2}) {
      CAPTURE(names->size());
      CAPTURE(threads);
      const Saved got = run_saved(w, s, x, *names, {}, threads);
      check_close(got.context, want.context, "context", 1e-5);
      check_close(got.files.at("scores"), want.scores, "scores", 1e-5);
      check_close(got.files.at("q"), want.q, "q", 1e-5);
      check_close(got.files.at("z"), want.z, "z", 1e-5);
      check_close(got.files.at("result"), want.result, "result", 1e-5);
      if (names == &every) {
        check_close(got.files.at("k"), want.k, "k", 1e-5);
        check_close(got.files.at("v"), want.v, "v", 1e-5);
      }
      // softmax(scores) == the maps (rows in double; masked entries weigh 0).
      const Tensor& sc = got.files.at("scores");
      Tensor soft(sc.shape);
      for (std::size_t r = 0; r < B * H * L; ++r) {
        const float* row = sc.ptr() + r * L;
        double mx = -std::numeric_limits<double>::infinity(), sum = 0.0;
        for (std::size_t j = 0; j < L; ++j) mx = std::max(mx, double(row[j]));
        for (std::size_t j = 0; j < L; ++j) sum += std::exp(double(row[j]) - mx);
        for (std::size_t j = 0; j < L; ++j)
          soft.data[r * L + j] = float(std::exp(double(row[j]) - mx) / sum);
      }
      check_close(soft, got.maps, "softmax(scores) vs maps", 1e-5);
      // The heads' shares and the output bias add up to the context.
      const Tensor& res = got.files.at("result");
      Tensor summed({B, L, O});
      for (std::size_t r = 0; r < B * L; ++r)
        for (std::size_t o = 0; o < O; ++o) {
          double acc = w.b_out.data[o];
          for (std::size_t h = 0; h < H; ++h) acc += res.data[(r * H + h) * O + o];
          summed.data[r * O + o] = float(acc);
        }
      check_close(summed, got.context, "sum of result + b_O vs context", 1e-5);
    }
}

TEST_CASE("saved tensors: --heads, --queries and --keys select as they do the maps") {
  const Weights w = layer();
  const AttentionSpec s = spec();
  const Tensor x = test::random_tensor({B, L, C}, 38);
  ForwardInputs in;
  in.x = &x;
  const ref::ScoresResult want = ref::attention_with_scores(w, s, in);
  MapSelection sel;
  sel.heads = {3, 0};  // KV heads 1 and 0: k and v keep both, in KV head order
  sel.queries = {599, 5, 6, 7, 130};
  sel.keys = {0, 1, 2, 3, 300, 598, 599};
  const Saved got = run_saved(w, s, x, saved_tensor_names(), sel, 2);
  check_close(got.files.at("scores"),
              attn::test::take_indices(
                  attn::test::take_indices(attn::test::take_indices(want.scores, 1, sel.heads), 2,
                                           sel.queries),
                  3, sel.keys),
              "scores", 1e-5);
  check_close(
      got.files.at("q"),
      attn::test::take_indices(attn::test::take_indices(want.q, 1, sel.queries), 2, sel.heads), "q",
      1e-5);
  check_close(got.files.at("k"), attn::test::take_indices(want.k, 1, sel.keys), "k", 1e-5);
  check_close(got.files.at("v"), attn::test::take_indices(want.v, 1, sel.keys), "v", 1e-5);
  check_close(
      got.files.at("z"),
      attn::test::take_indices(attn::test::take_indices(want.z, 1, sel.queries), 2, sel.heads), "z",
      1e-5);
  check_close(
      got.files.at("result"),
      attn::test::take_indices(attn::test::take_indices(want.result, 1, sel.queries), 2, sel.heads),
      "result", 1e-5);

  // One head: k and v keep only the KV head it reads.
  MapSelection one;
  one.heads = {2};
  const Saved got1 = run_saved(w, s, x, {"k", "v"}, one, 1);
  check_close(got1.files.at("k"), attn::test::take_indices(want.k, 2, {1}), "k of head 2", 1e-5);
  check_close(got1.files.at("v"), attn::test::take_indices(want.v, 2, {1}), "v of head 2", 1e-5);
}

TEST_CASE("saved tensors: names, and what a layer cannot save") {
  CHECK(parse_save_list("result,q,scores,q") == std::vector<std::string>{"scores", "q", "result"});
  test::expect_error([] { parse_save_list("q,attn"); }, Exit::usage,
                     "--save: unknown name \"attn\"", "scores, q, k, v, z, result");
  test::expect_error([] { parse_save_list("q,"); }, Exit::usage, "--save: an empty name");
  Weights w = layer();
  CHECK(save_unsupported(w, "result").empty());
  w.has_out_proj = false;
  CHECK(save_unsupported(w, "result").find("out_proj false") != std::string::npos);
  CHECK(save_unsupported(w, "z").empty());
}
