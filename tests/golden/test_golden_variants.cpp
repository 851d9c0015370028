// Golden tests of CONTRACT.md v2's positions, masks and variants against
// PyTorch: every folder under tests/golden/variants (tests/golden/generate.py: each
// family's attention written in torch from its published modeling code) runs
// through the executable's loading path (load_config, load_run,
// attention_spec) and forward() on both kernels, batched as written and each
// batch row again on its own (unbatched), with threads 1 and 2. Context and
// maps must agree within 1e-5 of the output's scale.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "attn/attention.h"
#include "attn/config.h"
#include "attn/npy.h"
#include "attn/run.h"
#include "check_close.h"
#include "golden_manifest.h"
#include "test_util.h"

namespace fs = std::filesystem;
using namespace attn;

using attn::test::check_close;

namespace {

std::vector<std::string> variant_names() {
  std::vector<std::string> names;
  const std::string root = test::source_path("tests/golden/variants");
  for (const auto& e : fs::directory_iterator(root))
    if (e.is_directory() && fs::exists(e.path() / "config.json"))
      names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

Tensor expected(const std::string& dir, const std::string& what) {
  const std::string path = dir + "/expected/" + what + ".npy";
  return to_float32(read_npy(path), path, false);
}

// (B, ...) -> row b as (1, ...).
Tensor batch_row(const Tensor& t, std::size_t b) {
  Tensor r;
  r.shape = t.shape;
  r.shape[0] = 1;
  const std::size_t n = Tensor::count(r.shape);
  r.data.assign(t.data.begin() + b * n, t.data.begin() + (b + 1) * n);
  return r;
}

// The maps of one run, averaged over heads when the config asks: (B, H, L, T') or (B, L, T').
struct Maps {
  Tensor maps;
  Tensor context;
};

Maps run_once(const LoadedRun& run, const RunInputs& in, const AttentionSpec& spec, bool average,
              bool with_maps, int threads) {
  const std::size_t B = in.x.shape[0], L = in.x.shape[1];
  const std::size_t H = std::size_t(run.weights.H);
  const std::size_t Tx = map_keys(run.weights, spec, in.keys());
  TensorSink sink(B, average ? 1 : H, L, Tx);
  HeadMeanSink mean(H, Tx, sink);
  ForwardOptions opt;
  opt.threads = threads;
  if (with_maps) opt.attention = average ? static_cast<AttentionSink*>(&mean) : &sink;
  Maps m;
  forward(run.weights, spec, in.forward_inputs(), m.context, opt);
  m.context = context_as_given(std::move(m.context), in);
  m.maps = std::move(sink.maps);
  if (average) m.maps.shape.erase(m.maps.shape.begin() + 1);  // (B, L, T')
  if (!in.batched) m.maps.shape.erase(m.maps.shape.begin());
  return m;
}

// Row b of a run's inputs as an unbatched (L, C) input.
RunInputs unbatched_row(const RunInputs& in, std::size_t b) {
  RunInputs r = in;
  r.batched = false;
  r.batch_first = true;
  r.x = batch_row(in.x, b);
  if (in.key) r.key = batch_row(*in.key, b);
  if (in.value) r.value = batch_row(*in.value, b);
  if (in.padding) {
    const std::size_t T = in.padding->shape[1];
    r.padding =
        Mask{{1, T}, {in.padding->data.begin() + b * T, in.padding->data.begin() + (b + 1) * T}};
  }
  if (in.positions) {  // (B, L), or mrope's (3, B, L): row b of each
    const std::vector<std::size_t>& s = in.positions->shape;
    const std::size_t rows = s.size() == 3 ? 3 : 1, B = s[s.size() - 2], L = s.back();
    r.positions = PositionIds{
        s.size() == 3 ? std::vector<std::size_t>{3, 1, L} : std::vector<std::size_t>{1, L}, {}};
    for (std::size_t k = 0; k < rows; ++k) {
      const auto from = in.positions->data.begin() + std::ptrdiff_t((k * B + b) * L);
      r.positions->data.insert(r.positions->data.end(), from, from + std::ptrdiff_t(L));
    }
  }
  if (in.attn_mask && in.attn_mask->stride_b) {  // keep batch b's rows
    ScoreMask m = *in.attn_mask;
    const std::size_t off = b * m.stride_b, len = m.stride_b;
    if (m.additive)
      m.add.assign(in.attn_mask->add.begin() + off, in.attn_mask->add.begin() + off + len);
    else
      m.blocked.assign(in.attn_mask->blocked.begin() + off,
                       in.attn_mask->blocked.begin() + off + len);
    r.attn_mask = m;
  }
  return r;
}

void check_variant(const std::string& name) {
  const std::string dir = test::source_path("tests/golden/variants/" + name);
  const Config cfg = load_config(dir + "/config.json");
  const LoadedRun run = load_run(cfg, {});
  const AttentionSpec spec = attention_spec(cfg);
  const bool average = cfg.output_average_heads;
  const Tensor want_ctx = expected(dir, "context"), want_maps = expected(dir, "attention");

  // transformers' float32 rotary embedding at positions near 4,096 (rope_float32.py): as
  // close as float32 rounding allows, and the default float64 angles measurably apart.
  const bool rope_float32 = spec.rope && spec.rope->precision == RopePrecision::float32;
  const double tol = rope_float32 ? 2e-6 : 1e-5;
  for (int threads : {1, 2})
    for (bool with_maps : {false, true}) {
      INFO(name << (with_maps ? " maps" : " stream") << ", threads " << threads);
      const Maps m = run_once(run, run, spec, average, with_maps, threads);
      check_close(m.context, want_ctx, "context", tol);
      if (with_maps) check_close(m.maps, want_maps, "attention", tol);
    }
  if (rope_float32) {
    AttentionSpec exact = spec;
    exact.rope->precision = RopePrecision::float64;
    const Maps m = run_once(run, run, exact, average, true, 2);
    const test::Diff d = test::compare(m.maps, want_maps);
    INFO(name << " with float64 angles: " << test::describe(d));
    CHECK(d.relative() > 1e-5);
  }

  // Each batch row alone, unbatched: torch's numbers for that row.
  if (!run.batched) return;
  const std::size_t B = run.x.shape[0];
  // The expected context is (L, B, O) when batch_first is false.
  Tensor ctx_bf = want_ctx;
  if (!cfg.batch_first) {
    const std::size_t L = ctx_bf.shape[0], O = ctx_bf.shape[2];
    Tensor t({B, L, O});
    for (std::size_t i = 0; i < L; ++i)
      for (std::size_t b = 0; b < B; ++b)
        std::copy_n(ctx_bf.ptr() + (i * B + b) * O, O, t.ptr() + (b * L + i) * O);
    ctx_bf = t;
  }
  for (std::size_t b = 0; b < B; ++b) {
    INFO(name << " batch row " << b << " unbatched");
    const RunInputs row = unbatched_row(run, b);
    const Maps m = run_once(run, row, spec, average, true, 2);
    Tensor want_c = batch_row(ctx_bf, b), want_m = batch_row(want_maps, b);
    want_c.shape.erase(want_c.shape.begin());
    want_m.shape.erase(want_m.shape.begin());
    check_close(m.context, want_c, "context");
    check_close(m.maps, want_m, "attention");
  }
}

}  // namespace

TEST_CASE("golden variants: every positions / masks / variants case matches PyTorch") {
  const std::vector<std::string> names = variant_names();
  // The manifest's variants (every family's VARIANTS): Llama 3 GQA and MQA (llama3 rope, left
  // and right padding), Mistral, Gemma 2, Qwen3, Gemma 3, gpt-oss, GPT-NeoX, BLOOM, MPT, two
  // torch MHA cross-attention cases, T5's relative bias (encoder and decoder), Qwen3-Next's
  // gate, qk_norm kinds (Cohere, Phi, Llama 4), Llama 4's chunks and temperature, three of
  // DeepSeek's mla, Gemma 4's v_norm and k_eq_v.
  CHECK(names == test::golden_case_names("variants"));
  for (const std::string& name : names) {
    try {
      check_variant(name);
    } catch (const std::exception& e) {
      FAIL_CHECK(name << ": " << e.what());
    }
  }
}
