// bench_variants: what the score features cost, side by side with
// plain causal attention in the same run (medians of interleaved reps):
//   1. GPT-2-small layer (C=768, H=12, D=64), B=1, S=4096: causal, + rope,
//      + alibi (target: each at most 10% over plain causal);
//   2. the same layer at S=8192: full causal against sliding_window=512
//      (target: at least 4x faster), whole forward and the attention part
//      alone (the forward minus its two projection GEMMs, timed apart);
//   3. a Llama-3-8B-shaped layer (C=4096, H=32, D=128), B=1, S=2048, causal:
//      GQA with 8 KV heads against MHA with 32 (target: GQA costs no more than
//      MHA minus the projection work it saves).
// Every variant is first checked against the plain-loop reference of the
// tests (tests/support/reference_scores.h) at a short length.
//
// Letters: B batch, S sequence, C hidden, H heads, Hkv key/value heads, D head size.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "attn/attention.h"
#include "attn/positions.h"
#include "reference_scores.h"

using namespace attn;

namespace {

struct Options {
  int reps = 5;
  int threads = 0;
  bool validate = true;
  std::vector<int> parts = {1, 2, 3};
};

Tensor random_tensor(std::vector<std::size_t> shape, unsigned seed, float amplitude) {
  Tensor t(std::move(shape));
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-amplitude, amplitude);
  for (float& v : t.data) v = dist(gen);
  return t;
}

// nn.Linear-like init: U(-1/sqrt(in), 1/sqrt(in)).
Weights layer(std::size_t C, std::size_t H, std::size_t Hkv, std::size_t D, bool bias) {
  Weights w;
  w.C = std::int64_t(C);
  w.H = std::int64_t(H);
  w.Hkv = std::int64_t(Hkv);
  w.D = std::int64_t(D);
  w.O = std::int64_t(C);
  const float a = 1.0f / std::sqrt(float(C));
  const std::size_t rows = w.geometry().qkv_rows();
  w.w_qkv = random_tensor({rows, C}, 1, a);
  if (bias) w.b_qkv = random_tensor({rows}, 2, a);
  w.w_out = random_tensor({C, H * D}, 3, 1.0f / std::sqrt(float(H * D)));
  if (bias) w.b_out = random_tensor({C}, 4, a);
  return w;
}

struct Variant {
  std::string name;
  AttentionSpec spec;
};

AttentionSpec causal(std::size_t D) {
  return AttentionSpec::plain(1.0f / std::sqrt(float(D)), true);
}

double seconds(const std::function<void()>& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

// The forward's two projection GEMMs alone (q|k|v and out), same shapes and threads.
double projection_seconds(const Weights& w, const Tensor& x, int threads) {
  const Geometry g = w.geometry();
  const std::size_t M = x.shape[0] * x.shape[1];
  std::vector<float> qkv(M * g.qkv_rows()), out(M * g.O);
  return seconds([&] {
    linear(x.ptr(), g.C, M, g.C, w.w_qkv, w.b_qkv, qkv.data(), g.qkv_rows(), threads);
    linear(qkv.data(), g.qkv_rows(), M, g.q_rows(), w.w_out, w.b_out, out.data(), g.O, threads);
  });
}

// Context against the reference at S = 256 (the same spec, the same weights).
bool validate(const Weights& w, const Variant& v, int threads) {
  const std::size_t S = 256;
  const Tensor x = random_tensor({1, S, std::size_t(w.C)}, 7, 1.0f);
  ForwardInputs in;
  in.x = &x;
  Tensor ctx;
  ForwardOptions opt;
  opt.threads = threads;
  forward(w, v.spec, in, ctx, opt);
  const ref::ScoresResult want = ref::attention_with_scores(w, v.spec, in);
  double diff = 0, scale = 0;
  for (std::size_t i = 0; i < ctx.size(); ++i) {
    diff = std::max(diff, double(std::fabs(ctx.data[i] - want.context.data[i])));
    scale = std::max(scale, double(std::fabs(want.context.data[i])));
  }
  const bool ok = diff <= 1e-5 * scale;
  std::printf("  check %-28s S=%zu: maxdiff %.2e of scale %.3f %s\n", v.name.c_str(), S, diff,
              scale, ok ? "OK" : "FAILED");
  return ok;
}

// Medians of interleaved reps: each rep runs every variant once, in turn,
// so a noisy neighbour hits them alike. Returns seconds per variant.
std::vector<double> time_variants(const std::vector<const Weights*>& ws,
                                  const std::vector<Variant>& vs, const Tensor& x, int reps,
                                  int threads) {
  std::vector<std::vector<double>> t(vs.size());
  ForwardOptions opt;
  opt.threads = threads;
  Tensor ctx;
  for (std::size_t i = 0; i < vs.size(); ++i)
    forward(*ws[i], vs[i].spec, x, nullptr, ctx, opt);  // warm-up
  for (int r = 0; r < reps; ++r)
    for (std::size_t i = 0; i < vs.size(); ++i)
      t[i].push_back(seconds([&] { forward(*ws[i], vs[i].spec, x, nullptr, ctx, opt); }));
  std::vector<double> med;
  for (auto& v : t) med.push_back(median(v));
  return med;
}

bool part1(const Options& o) {
  std::printf(
      "\n1. GPT-2-small layer (C=768, H=12, D=64), B=1, S=4096: rope and alibi against plain "
      "causal\n");
  const Weights w = layer(768, 12, 12, 64, true);
  Variant plain{"causal", causal(64)};
  Variant rope{"causal + rope (half, R=64)", causal(64)};
  rope.spec.rope = RopeSpec{};
  rope.spec.rope->rotary_dim = 64;
  Variant alibi{"causal + alibi (12 heads)", causal(64)};
  alibi.spec.alibi = AlibiSpec{8.0, alibi_slopes(12)};
  const std::vector<Variant> vs = {plain, rope, alibi};
  bool ok = true;
  if (o.validate)
    for (const auto& v : vs) ok &= validate(w, v, o.threads);
  const Tensor x = random_tensor({1, 4096, 768}, 11, 1.0f);
  const auto t = time_variants({&w, &w, &w}, vs, x, o.reps, o.threads);
  for (std::size_t i = 0; i < vs.size(); ++i)
    std::printf(
        "  %-28s %8.1f ms   %.3fx plain causal%s\n", vs[i].name.c_str(), t[i] * 1e3, t[i] / t[0],
        i == 0
            ? ""
            : (t[i] / t[0] <= 1.10 ? "   (target <= 1.10: met)" : "   (target <= 1.10: MISSED)"));
  return ok;
}

bool part2(const Options& o) {
  std::printf("\n2. GPT-2-small layer, B=1, S=8192: sliding_window=512 against full causal\n");
  const Weights w = layer(768, 12, 12, 64, true);
  Variant full{"causal", causal(64)};
  Variant win{"causal + sliding_window 512", causal(64)};
  win.spec.sliding_window = 512;
  Variant small_win = win;  // the reference check needs the window inside S = 256
  small_win.spec.sliding_window = 40;
  small_win.name = "causal + sliding_window 40";
  bool ok = true;
  if (o.validate) ok &= validate(w, full, o.threads) & validate(w, small_win, o.threads);
  const Tensor x = random_tensor({1, 8192, 768}, 12, 1.0f);
  const auto t = time_variants({&w, &w}, {full, win}, x, o.reps, o.threads);
  std::vector<double> proj;
  for (int r = 0; r < o.reps; ++r) proj.push_back(projection_seconds(w, x, o.threads));
  const double p = median(proj);
  std::printf("  %-28s %8.1f ms (attention part %.1f ms)\n", full.name.c_str(), t[0] * 1e3,
              (t[0] - p) * 1e3);
  std::printf("  %-28s %8.1f ms (attention part %.1f ms)\n", win.name.c_str(), t[1] * 1e3,
              (t[1] - p) * 1e3);
  std::printf("  projections alone (q|k|v and out GEMMs): %.1f ms\n", p * 1e3);
  std::printf("  speed-up: whole forward %.2fx, attention part %.2fx (target >= 4x)\n", t[0] / t[1],
              (t[0] - p) / (t[1] - p));
  return ok;
}

bool part3(const Options& o) {
  std::printf(
      "\n3. Llama-3-8B-shaped layer (C=4096, H=32, D=128), B=1, S=2048, causal: GQA 32/8 against "
      "MHA 32/32\n");
  const Weights gqa = layer(4096, 32, 8, 128, false), mha = layer(4096, 32, 32, 128, false);
  Variant v{"causal", causal(128)};
  bool ok = true;
  if (o.validate) {
    Variant g = v, m = v;
    g.name = "GQA 32/8 causal";
    m.name = "MHA 32/32 causal";
    ok &= validate(gqa, g, o.threads) & validate(mha, m, o.threads);
  }
  const Tensor x = random_tensor({1, 2048, 4096}, 13, 1.0f);
  const auto t = time_variants({&gqa, &mha}, {v, v}, x, o.reps, o.threads);
  std::vector<double> pg, pm;
  for (int r = 0; r < o.reps; ++r) {
    pg.push_back(projection_seconds(gqa, x, o.threads));
    pm.push_back(projection_seconds(mha, x, o.threads));
  }
  const double saved = median(pm) - median(pg);
  std::printf("  GQA 32/8:   %8.1f ms (projections %.1f ms)\n", t[0] * 1e3, median(pg) * 1e3);
  std::printf("  MHA 32/32:  %8.1f ms (projections %.1f ms)\n", t[1] * 1e3, median(pm) * 1e3);
  std::printf(
      "  GQA / MHA = %.3f; MHA minus the saved projection work = %.1f ms: GQA %s\n", t[0] / t[1],
      (t[1] - saved) * 1e3,
      t[0] <= (t[1] - saved) * 1.02 ? "costs no more (target met)" : "costs more (target MISSED)");
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--reps" && i + 1 < argc)
      o.reps = std::atoi(argv[++i]);
    else if (a == "--threads" && i + 1 < argc)
      o.threads = std::atoi(argv[++i]);
    else if (a == "--no-validate")
      o.validate = false;
    else if (a == "--part" && i + 1 < argc)
      o.parts = {std::atoi(argv[++i])};
    else {
      std::fprintf(stderr,
                   "usage: bench_variants [--reps N (5)] [--threads N (all cores)] [--part 1|2|3] "
                   "[--no-validate]\n");
      return 64;
    }
  }
  std::printf("bench_variants: medians of %d interleaved reps, threads %s\n", o.reps,
              o.threads ? std::to_string(o.threads).c_str() : "all cores");
  bool ok = true;
  for (int p : o.parts) ok &= p == 1 ? part1(o) : p == 2 ? part2(o) : part3(o);
  return ok ? 0 : 1;
}
