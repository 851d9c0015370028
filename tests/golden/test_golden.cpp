// Golden tests: attn-run against PyTorch's own numbers.
//
// Every folder under tests/golden/cases (written by tests/golden/generate.py
// from the tutorial modules, see tests/golden/README.md) is an ordinary
// attn-run config plus PyTorch's expected/context.npy and
// expected/attention.npy. Each case runs through the same loading path as the
// executable (load_config, load_run) and forward() twice: with a TensorSink
// (the maps kept) and without (the streaming path). Both contexts and the maps
// must agree with PyTorch within 1e-5 of the output's scale (CONTRACT.md,
// "Numerics"), and rows whose every key is masked must be exactly zero.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <string>
#include <vector>

#include "attn/attention.h"
#include "attn/config.h"
#include "attn/npy.h"
#include "attn/run.h"
#include "attn/tensor.h"
#include "golden_manifest.h"
#include "reference.h"
#include "test_util.h"

namespace fs = std::filesystem;
using attn::Tensor;

namespace {

constexpr double kTolerance = 1e-5;  // relative to the output's scale (CONTRACT.md)

// Folders under tests/golden/<set>: "cases" (the tutorials' modules) or
// "families" (the model families' layers without positions), both written by
// tests/golden/generate.py.
std::vector<std::string> case_names(const std::string& set = "cases") {
  std::vector<std::string> names;
  const std::string root = attn::test::source_path("tests/golden/" + set);
  if (!fs::is_directory(root)) return names;
  for (const auto& e : fs::directory_iterator(root))
    if (e.is_directory() && fs::exists(e.path() / "config.json"))
      names.push_back(set + "/" + e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// name: "<set>/<case>", or a case of "cases".
std::string case_dir(const std::string& name) {
  const bool has_set = name.find('/') != std::string::npos;
  return attn::test::source_path("tests/golden/" + (has_set ? name : "cases/" + name));
}

Tensor read_expected(const std::string& path) {
  return attn::to_float32(attn::read_npy(path), path, false);
}

// PyTorch's unbatched result (S, O) / (H, S, S) against ours (1, S, O) /
// (1, H, S, S): the same values once the leading 1 is dropped.
Tensor with_leading_one(Tensor expected, const std::vector<std::size_t>& ours) {
  std::vector<std::size_t> dropped(ours.begin() + (ours.empty() ? 0 : 1), ours.end());
  if (!ours.empty() && ours[0] == 1 && expected.shape == dropped) expected.shape = ours;
  return expected;
}

// Is query row i of batch b masked for every key? Decided from the loaded
// padding mask and the causal flag, independently of forward().
bool fully_masked(const attn::LoadedRun& run, bool causal, std::size_t b, std::size_t i,
                  std::size_t S) {
  if (!run.padding) return false;
  std::size_t last = causal ? i : S - 1;
  for (std::size_t j = 0; j <= last; ++j)
    if (!run.padding->data[b * S + j]) return false;
  return true;
}

void check_case(const std::string& name) {
  const std::string dir = case_dir(name);
  attn::Config cfg = attn::load_config(dir + "/config.json");
  attn::LoadedRun run = attn::load_run(cfg, {});
  attn::AttentionSpec spec = attn::attention_spec(cfg);
  const attn::Mask* pad = run.padding ? &*run.padding : nullptr;

  const std::size_t B = run.x.shape.at(0), S = run.x.shape.at(1);
  const std::size_t H = static_cast<std::size_t>(run.weights.H);

  // With the maps kept.
  attn::TensorSink sink(B, H, S);
  attn::ForwardOptions with_maps;
  with_maps.attention = &sink;
  Tensor context;
  attn::ForwardStats stats = attn::forward(run.weights, spec, run.x, pad, context, with_maps);

  // The streaming path: no S x S weights held.
  Tensor context_streamed;
  attn::ForwardStats stats_streamed =
      attn::forward(run.weights, spec, run.x, pad, context_streamed, attn::ForwardOptions{});

  Tensor want_context = read_expected(dir + "/expected/context.npy");
  Tensor want_attention = read_expected(dir + "/expected/attention.npy");
  // The unbatched shape rule applies to the fixture itself: (S, O) and (H, S, S).
  CHECK_MESSAGE(want_context.ndim() == (run.batched ? 3u : 2u), name);
  want_context = with_leading_one(want_context, context.shape);
  want_attention = with_leading_one(want_attention, sink.maps.shape);

  attn::test::Diff d = attn::test::compare(context, want_context);
  CHECK_MESSAGE(d.shape_ok, name, ": context shape ", attn::shape_str(context.shape), " expected ",
                attn::shape_str(want_context.shape));
  CHECK_MESSAGE(d.relative() <= kTolerance, name, ": context ", attn::test::describe(d));

  attn::test::Diff ds = attn::test::compare(context_streamed, want_context);
  CHECK_MESSAGE(ds.relative() <= kTolerance, name, ": streamed context ", attn::test::describe(ds));

  attn::test::Diff da = attn::test::compare(sink.maps, want_attention);
  CHECK_MESSAGE(da.shape_ok, name, ": attention shape ", attn::shape_str(sink.maps.shape),
                " expected ", attn::shape_str(want_attention.shape));
  CHECK_MESSAGE(da.relative() <= kTolerance, name, ": attention ", attn::test::describe(da));

  // The plain-loop reference on the same loaded weights: when it agrees with
  // PyTorch and forward() does not, the kernel is wrong, not the loader.
  attn::ref::Result r = attn::ref::attention(attn::ref::from_weights(run.weights), run.x, pad,
                                             float(spec.scale), spec.causal);
  attn::test::Diff dr = attn::test::compare(r.context, want_context);
  CHECK_MESSAGE(dr.relative() <= kTolerance, name, ": reference context ",
                attn::test::describe(dr));
  MESSAGE(name, ": context ", attn::test::describe(d), "; attention ", attn::test::describe(da));

  // Rows whose every key is masked (left padding under a causal mask, a fully
  // padded sequence): zero weights in PyTorch's file and in ours, counted.
  if (!da.shape_ok) return;
  std::int64_t masked_rows = 0;
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t i = 0; i < S; ++i) {
      if (!fully_masked(run, spec.causal, b, i, S)) continue;
      for (std::size_t h = 0; h < H; ++h) {
        ++masked_rows;
        const std::size_t row = ((b * H + h) * S + i) * S;
        bool ours_zero = true, theirs_zero = true;
        for (std::size_t j = 0; j < S; ++j) {
          ours_zero = ours_zero && sink.maps.data[row + j] == 0.0f;
          theirs_zero = theirs_zero && want_attention.data[row + j] == 0.0f;
        }
        CHECK_MESSAGE(ours_zero, name, ": masked row b=", b, " h=", h, " i=", i, " not zero");
        CHECK_MESSAGE(theirs_zero, name, ": fixture row b=", b, " h=", h, " i=", i, " not zero");
      }
    }
  CHECK_MESSAGE(stats.fully_masked_rows == masked_rows, name, ": fully masked rows counted ",
                stats.fully_masked_rows, ", expected ", masked_rows);
  CHECK_MESSAGE(stats_streamed.fully_masked_rows == masked_rows, name,
                ": streamed fully masked rows counted ", stats_streamed.fully_masked_rows,
                ", expected ", masked_rows);
  for (float v : context.data) CHECK_MESSAGE(std::isfinite(v), name, ": non-finite context");
}

// Our context rounded to 4 decimals against a table printed in a tutorial.
void check_printed(const std::string& name, const std::vector<std::vector<double>>& table) {
  attn::Config cfg = attn::load_config(case_dir(name) + "/config.json");
  attn::LoadedRun run = attn::load_run(cfg, {});
  Tensor context;
  attn::forward(run.weights, attn::attention_spec(cfg), run.x, nullptr, context, {});
  REQUIRE(context.ndim() == 3);
  const std::size_t S = context.shape[1], O = context.shape[2];
  REQUIRE(table.size() <= S);
  for (std::size_t b = 0; b < context.shape[0]; ++b)  // the batch holds two copies
    for (std::size_t i = 0; i < table.size(); ++i) {
      REQUIRE(table[i].size() == O);
      for (std::size_t o = 0; o < O; ++o) {
        double got = context.data[(b * S + i) * O + o];
        CHECK_MESSAGE(std::fabs(got - table[i][o]) <= 0.5e-4 + 1e-6, name, " [", b, ", ", i, ", ",
                      o, "] = ", got, ", printed ", table[i][o]);
      }
    }
}

// Every case, each failure named and the rest still run.
void check_cases(const std::vector<std::string>& names) {
  for (const std::string& name : names) {
    INFO("case ", name);
    try {
      check_case(name);
    } catch (const std::exception& e) {
      FAIL_CHECK(name, ": ", e.what());
    }
  }
}

}  // namespace

namespace {

// The manifest's cases of a set, as case_names gives them ("<set>/<case>").
std::vector<std::string> manifest_names(const std::string& set) {
  std::vector<std::string> names;
  for (const std::string& c : attn::test::golden_case_names(set)) names.push_back(set + "/" + c);
  return names;
}

}  // namespace

TEST_CASE("golden: every PyTorch case matches (context, streamed context, attention)") {
  const std::vector<std::string> names = case_names();
  // The cases on disk are the manifest's (a missing folder would silently shrink coverage).
  CHECK(names == manifest_names("cases"));
  check_cases(names);
}

TEST_CASE("golden: every model family's layer matches PyTorch (families/)") {
  // proj: Llama GQA/MQA/sharded, Qwen2, OPT, Whisper; bert; neox; falcon multi_query and
  // grouped; Phi-3; MPT: the manifest's "families" set.
  const std::vector<std::string> names = case_names("families");
  CHECK(names == manifest_names("families"));
  check_cases(names);
}

// The numbers the tutorials printed (tutorial 004, seed 123), independent of
// the .npy expectations.
TEST_CASE("golden: Raschka's MultiHeadAttention tutorial table (unmasked, kind multi)") {
  check_printed("tutorial_raschka_mha_multi", {{0.2595, 0.4014},
                                               {0.2583, 0.4014},
                                               {0.2583, 0.4014},
                                               {0.2575, 0.4031},
                                               {0.2582, 0.4026},
                                               {0.2575, 0.4028}});
}

TEST_CASE("golden: Raschka's MultiHeadAttention book table (masked in place, kind causal)") {
  check_printed("tutorial_raschka_mha_causal",
                {{0.3190, 0.4858}, {0.2943, 0.3897}, {0.2856, 0.3593}});
}

TEST_CASE("golden: Raschka's MultiHeadAttentionWrapper tutorial table (multi, per_head)") {
  check_printed("tutorial_raschka_wrapper_multi", {{-0.5337, -0.1051, 0.5085, 0.3508},
                                                   {-0.5323, -0.1080, 0.5084, 0.3508},
                                                   {-0.5323, -0.1079, 0.5084, 0.3506},
                                                   {-0.5297, -0.1076, 0.5074, 0.3471},
                                                   {-0.5311, -0.1066, 0.5076, 0.3446},
                                                   {-0.5299, -0.1081, 0.5077, 0.3493}});
}

TEST_CASE("golden: Raschka's MultiHeadAttentionWrapper book table (causal, per_head)") {
  check_printed("tutorial_raschka_wrapper_causal", {{-0.4519, 0.2216, 0.4772, 0.1063}});
}
