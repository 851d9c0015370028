// bench_forward: times attn::forward on a GPT-2-small layer (C=768, H=12,
// D=64, O=768, biases, random weights) after checking a few rows of every
// shape against the plain reference (tests/support/reference.h).
//
// Each shape runs in its own child process, so "peak RSS" is the max RSS of
// that shape alone (getrusage of the child: weights, input, output and the
// forward's own buffers). Maps go to a discarding sink (the rows are
// computed and handed over, then dropped), so the "maps" rows time the
// computation of the weights, not a disk.
//
// Letters: B batch, S sequence, C hidden, H heads, D head size, O out size.
#include <cblas.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>
#include <xsimd/xsimd.hpp>

#include "attn/attention.h"
#include "reference.h"

using namespace attn;

namespace {

constexpr std::size_t kC = 768, kH = 12, kD = 64, kO = 768;

struct Options {
  std::vector<std::size_t> batches = {1, 4};
  std::vector<std::size_t> lengths = {128, 1024, 4096};
  std::vector<int> causal = {1, 0};
  std::vector<int> maps = {0, 1};
  int threads = 0;
  int reps = 5;
  bool validate = true;
  bool gemm = true;
  std::string json;
};

Tensor random_tensor(std::vector<std::size_t> shape, unsigned seed, float amplitude) {
  Tensor t(std::move(shape));
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-amplitude, amplitude);
  for (float& v : t.data) v = dist(gen);
  return t;
}

// nn.Linear-like init: U(-1/sqrt(in), 1/sqrt(in)).
Weights gpt2_small_weights() {
  Weights w;
  w.C = kC;
  w.H = kH;
  w.D = kD;
  w.O = kO;
  const float a = 1.0f / std::sqrt(float(kC));
  w.w_qkv = random_tensor({3 * kH * kD, kC}, 1, a);
  w.b_qkv = random_tensor({3 * kH * kD}, 2, a);
  w.w_out = random_tensor({kO, kH * kD}, 3, a);
  w.b_out = random_tensor({kO}, 4, a);
  return w;
}

class DiscardSink : public AttentionSink {
 public:
  void write_rows(std::size_t, std::size_t, std::size_t, std::size_t, const float*) override {}
};

// Keeps the rows of batch b listed in `rows`, drops the rest.
class WatchSink : public AttentionSink {
 public:
  WatchSink(std::size_t b, std::vector<std::size_t> rows, std::size_t S)
      : b_(b), rows_(std::move(rows)), S_(S), kept(kH * rows_.size() * S) {}
  void write_rows(std::size_t b, std::size_t h, std::size_t i0, std::size_t n,
                  const float* block) override {
    if (b != b_) return;
    for (std::size_t t = 0; t < rows_.size(); ++t)
      if (rows_[t] >= i0 && rows_[t] < i0 + n)
        std::copy(block + (rows_[t] - i0) * S_, block + (rows_[t] - i0 + 1) * S_,
                  kept.begin() + (h * rows_.size() + t) * S_);
  }

 private:
  std::size_t b_;
  std::vector<std::size_t> rows_;
  std::size_t S_;

 public:
  std::vector<float> kept;  // (H, n, S)
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Runs fn in a forked child; returns its printed text and its max RSS (KiB).
struct ChildResult {
  bool ok = false;
  std::string text;
  long max_rss_kib = 0;
};
ChildResult run_in_child(const std::function<std::string()>& fn) {
  int fds[2];
  if (pipe(fds) != 0) return {};
  std::fflush(stdout);
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    std::string out;
    int code = 0;
    try {
      out = fn();
    } catch (const std::exception& e) {
      out = std::string("error: ") + e.what();
      code = 1;
    }
    if (write(fds[1], out.data(), out.size()) < 0) code = 2;
    close(fds[1]);
    _exit(code);
  }
  close(fds[1]);
  ChildResult r;
  char buf[4096];
  ssize_t got;
  while ((got = read(fds[0], buf, sizeof buf)) > 0) r.text.append(buf, std::size_t(got));
  close(fds[0]);
  int status = 0;
  struct rusage ru {};
  wait4(pid, &status, 0, &ru);
  r.ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  r.max_rss_kib = ru.ru_maxrss;
  return r;
}

// Max difference (relative to the output's scale) of rows {0, S/2, S-1} of
// the last batch row, streaming and maps paths, against the row reference.
std::string validate(std::size_t B, std::size_t S, bool causal, int threads) {
  const Weights w = gpt2_small_weights();
  const Tensor x = random_tensor({B, S, kC}, 5, 1.0f);
  const std::size_t b = B - 1;
  const std::vector<std::size_t> rows = {0, S / 2, S - 1};
  const double scale = 1.0 / std::sqrt(double(kD));
  const ref::Result want =
      ref::attention_rows(ref::from_weights(w), x, nullptr, scale, causal, b, rows);
  double out_scale = 0;
  for (float v : want.context.data) out_scale = std::max(out_scale, double(std::fabs(v)));

  ForwardOptions opt;
  opt.threads = threads;
  WatchSink sink(b, rows, S);
  double worst_ctx = 0, worst_map = 0;
  for (bool maps : {false, true}) {
    opt.attention = maps ? &sink : nullptr;
    Tensor ctx;
    forward(w, AttentionSpec::plain(float(scale), causal), x, nullptr, ctx, opt);
    for (std::size_t t = 0; t < rows.size(); ++t)
      for (std::size_t o = 0; o < kO; ++o)
        worst_ctx = std::max(worst_ctx, std::fabs(double(ctx.data[(b * S + rows[t]) * kO + o]) -
                                                  want.context.data[t * kO + o]) /
                                            out_scale);
  }
  for (std::size_t i = 0; i < sink.kept.size(); ++i)
    worst_map = std::max(worst_map, std::fabs(double(sink.kept[i]) - want.attention.data[i]));
  std::ostringstream os;
  os << worst_ctx << " " << worst_map;
  return os.str();
}

// Median and best of opt.reps timed runs after one warm-up.
std::string time_forward(std::size_t B, std::size_t S, bool causal, bool maps, const Options& o) {
  const Weights w = gpt2_small_weights();
  const Tensor x = random_tensor({B, S, kC}, 5, 1.0f);
  ForwardOptions opt;
  opt.threads = o.threads;
  DiscardSink sink;
  if (maps) opt.attention = &sink;
  const AttentionSpec spec = AttentionSpec::plain(1.0f / std::sqrt(float(kD)), causal);
  Tensor ctx;
  forward(w, spec, x, nullptr, ctx, opt);
  std::vector<double> ms;
  for (int r = 0; r < o.reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    forward(w, spec, x, nullptr, ctx, opt);
    ms.push_back(1e3 * seconds_since(t0));
  }
  std::sort(ms.begin(), ms.end());
  std::ostringstream os;
  os << ms[ms.size() / 2] << " " << ms.front();
  return os.str();
}

// GFLOP/s of attn::linear (the projections as forward() runs them: row slices
// on attn-run's workers, OpenBLAS single-threaded in each), best of 3.
double linear_rate(std::size_t M, std::size_t N, std::size_t K, std::size_t lda, int threads) {
  std::vector<float> a(M * lda, 0.5f), c(M * N);
  attn::Tensor w({N, K}, 0.25f), b({N}, 0.1f);
  double best = 1e30;
  for (int r = 0; r < 4; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    attn::linear(a.data(), lda, M, K, w, b, c.data(), N, threads);
    if (r > 0) best = std::min(best, seconds_since(t0));  // first call warms up
  }
  return 2.0 * double(M) * double(N) * double(K) / best / 1e9;
}

// GFLOP/s of one row-major sgemm C(M,N) = A(M,K) B(N,K)^T, best of 3.
double sgemm_rate(std::size_t M, std::size_t N, std::size_t K, std::size_t lda) {
  std::vector<float> a(M * lda, 0.5f), bm(N * K, 0.25f), c(M * N);
  double best = 1e30;
  for (int r = 0; r < 4; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, int(M), int(N), int(K), 1.0f, a.data(),
                int(lda), bm.data(), int(K), 0.0f, c.data(), int(N));
    if (r > 0) best = std::min(best, seconds_since(t0));  // first call warms up
  }
  return 2.0 * double(M) * double(N) * double(K) / best / 1e9;
}

// GFLOP/s of fused multiply-adds alone on `threads` cores (registers only,
// no memory), best of 3: the arithmetic ceiling no GEMM can pass. Enough
// independent chains to cover the FMA latency on two ports; few enough to
// stay in registers (32 vector registers with 16 lanes, 16 with 8).
double fma_peak_rate(int threads) {
  using Batch = xsimd::batch<float>;
  constexpr std::size_t kChains = Batch::size >= 16 ? 16 : 10;
  constexpr std::size_t kIters = 20'000'000;
  std::vector<float> sums(std::size_t(threads), 0.0f);  // keeps the work observable
  auto work = [&](int t) {
    Batch acc[kChains];
    for (std::size_t c = 0; c < kChains; ++c) acc[c] = Batch(float(c) * 1e-3f);
    const Batch m(0.9999999f), a(1e-7f);
    for (std::size_t i = 0; i < kIters; ++i)
      for (std::size_t c = 0; c < kChains; ++c) acc[c] = xsimd::fma(acc[c], m, a);
    float s = 0;
    for (std::size_t c = 0; c < kChains; ++c) s += xsimd::hadd(acc[c]);
    sums[std::size_t(t)] = s;
  };
  double best = 1e30;
  for (int r = 0; r < 3; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) pool.emplace_back(work, t);
    for (auto& th : pool) th.join();
    best = std::min(best, seconds_since(t0));
  }
  if (!std::isfinite(sums[0])) std::puts("fma_peak_rate: non-finite sum");
  return 2.0 * double(threads) * double(kIters) * double(kChains) * double(Batch::size) / best /
         1e9;
}

std::vector<std::size_t> parse_list(const char* s) {
  std::vector<std::size_t> v;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) v.push_back(std::stoul(item));
  return v;
}

void usage() {
  std::puts(
      "bench_forward [--B 1,4] [--S 128,1024,4096] [--causal 1,0] [--maps 0,1]\n"
      "              [--threads N (0 = all cores)] [--reps 5] [--no-validate] [--no-gemm]\n"
      "              [--json FILE]\n"
      "GPT-2-small layer (C=768, H=12, D=64, O=768, biases). Prints medians of --reps runs\n"
      "after a warm-up; GFLOP/s from attn::forward_flops (causal score and P.V FLOPs halved);\n"
      "peak RSS of a child process running that shape alone; maps to a discarding sink.");
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> const char* {
      if (i + 1 >= argc) {
        usage();
        std::exit(64);
      }
      return argv[++i];
    };
    if (a == "--B")
      o.batches = parse_list(next());
    else if (a == "--S")
      o.lengths = parse_list(next());
    else if (a == "--causal") {
      o.causal.clear();
      for (auto v : parse_list(next())) o.causal.push_back(int(v));
    } else if (a == "--maps") {
      o.maps.clear();
      for (auto v : parse_list(next())) o.maps.push_back(int(v));
    } else if (a == "--threads")
      o.threads = std::atoi(next());
    else if (a == "--reps")
      o.reps = std::max(1, std::atoi(next()));
    else if (a == "--no-validate")
      o.validate = false;
    else if (a == "--no-gemm")
      o.gemm = false;
    else if (a == "--json")
      o.json = next();
    else {
      usage();
      return a == "--help" || a == "-h" ? 0 : 64;
    }
  }
  const int threads = o.threads > 0 ? o.threads : int(sysconf(_SC_NPROCESSORS_ONLN));
  std::printf("attn forward, GPT-2-small layer C=768 H=12 D=64 O=768, threads=%d, median of %d\n",
              threads, o.reps);

  if (o.gemm) {
    ChildResult g = run_in_child([&] {
      openblas_set_num_threads(threads);
      std::ostringstream os;
      os << sgemm_rate(4096, 4096, 4096, 4096) << " " << linear_rate(4096, 3 * kC, kC, kC, threads)
         << " " << linear_rate(4096, kO, kC, 3 * kC, threads) << " " << fma_peak_rate(threads)
         << " " << linear_rate(2048, 6144, 4096, 4096, threads) << " "
         << linear_rate(2048, 4096, 4096, 4096, threads);
      return os.str();
    });
    double big = 0, qkv = 0, out = 0, peak = 0, llama_qkv = 0, llama_out = 0;
    std::istringstream(g.text) >> big >> qkv >> out >> peak >> llama_qkv >> llama_out;
    std::printf(
        "OpenBLAS sgemm 4096^3 (its own threads): %.1f GFLOP/s; attn::linear projections "
        "at B*S=4096: Q|K|V %.1f (%.0f%%), "
        "out %.1f (%.0f%%)\n",
        big, qkv, 100 * qkv / big, out, 100 * out / big);
    std::printf("FMA peak (registers only, %d threads, %zu lanes): %.1f GFLOP/s\n", threads,
                xsimd::batch<float>::size, peak);
    // A Llama-3-8B-shaped layer's projections (C = 4096, 32 heads, 8 KV heads of 128) at
    // S = 2048: depth 4096, where x's panels no longer fit L2 whole.
    std::printf(
        "attn::linear, Llama-3-8B shapes at S=2048 (K=4096): Q|K|V (N=6144) %.1f (%.0f%% of "
        "peak), out (N=4096) %.1f (%.0f%%)\n",
        llama_qkv, 100 * llama_qkv / peak, llama_out, 100 * llama_out / peak);
  }

  std::printf("%3s %6s %-6s %-4s %10s %10s %9s %9s  %s\n", "B", "S", "mask", "maps", "median_ms",
              "best_ms", "GFLOP/s", "RSS_MiB", "check (ctx rel, maps abs)");
  std::string json = "[\n";
  bool all_ok = true;
  const Weights shape_only = [] {
    Weights w;
    w.C = kC;
    w.H = kH;
    w.D = kD;
    w.O = kO;
    return w;
  }();
  for (std::size_t B : o.batches)
    for (std::size_t S : o.lengths)
      for (int causal : o.causal) {
        std::string check = "-";
        if (o.validate) {
          ChildResult v = run_in_child([&] { return validate(B, S, causal, o.threads); });
          double dc = 1, dm = 1;
          std::istringstream(v.text) >> dc >> dm;
          const bool ok = v.ok && dc <= 1e-5 && dm <= 1e-5;
          all_ok = all_ok && ok;
          char buf[96];
          std::snprintf(buf, sizeof buf, "%.1e %.1e %s", dc, dm, ok ? "ok" : "FAILED");
          check = buf;
        }
        for (int maps : o.maps) {
          ChildResult t = run_in_child([&] { return time_forward(B, S, causal, maps, o); });
          double median = 0, best = 0;
          std::istringstream(t.text) >> median >> best;
          const double gf = forward_flops(shape_only, std::int64_t(B), std::int64_t(S), causal) /
                            (median * 1e-3) / 1e9;
          const double rss = double(t.max_rss_kib) / 1024.0;
          std::printf("%3zu %6zu %-6s %-4s %10.2f %10.2f %9.1f %9.1f  %s\n", B, S,
                      causal ? "causal" : "bidir", maps ? "yes" : "no", median, best, gf, rss,
                      t.ok ? check.c_str() : t.text.c_str());
          std::fflush(stdout);
          char row[256];
          std::snprintf(
              row, sizeof row,
              "  {\"B\": %zu, \"S\": %zu, \"causal\": %s, \"maps\": %s, \"median_ms\": %.3f, "
              "\"best_ms\": %.3f, \"gflops\": %.2f, \"peak_rss_mib\": %.1f},\n",
              B, S, causal ? "true" : "false", maps ? "true" : "false", median, best, gf, rss);
          json += row;
        }
      }
  if (json.size() > 2) json.erase(json.size() - 2, 1);  // trailing comma
  json += "]\n";
  if (!o.json.empty()) {
    FILE* f = std::fopen(o.json.c_str(), "w");
    if (f) {
      std::fputs(json.c_str(), f);
      std::fclose(f);
    }
  }
  if (!all_ok) std::printf("VALIDATION FAILED\n");
  return all_ok ? 0 : 1;
}
