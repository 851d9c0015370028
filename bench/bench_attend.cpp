// bench_attend: the streaming attention kernel alone (kernels/attend_stream.cpp)
// on one core, one head: q (S, D), k and v packed as the forward pass packs
// them, every query block of 128 rows, causal or not. Prints the median of
// 7 reps as GFLOP/s (4 * D FLOPs per allowed (query, key) pair: the score's and
// P v's multiply-adds) beside the tiles' two products alone (tile_gemm over the
// same blocks, no softmax), so the softmax's share shows. Compare builds side by
// side in one run.
//
// With digest=1 the kernel also keeps each row's top 32 and its summary, as
// `--top-k 32 --summary` asks (kernels/row_digest.h), and prints its time
// against the plain kernel's.
//
// Usage: bench_attend [D=64] [S=2048] [causal=1] [products=1] [digest=0]
// (products=0 skips the products-alone timing: a perf profile of the kernel only)
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "kernels/kernels.h"
#include "kernels/row_digest.h"

using namespace attn::kernels;
using attn::DigestRequest;

namespace {

template <class F>
double seconds(F&& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

template <class F>
double median_seconds(F&& f) {
  std::vector<double> s;
  for (int rep = 0; rep < 7; ++rep) s.push_back(seconds(f));
  return median(s);
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t D = argc > 1 ? std::atoi(argv[1]) : 64;
  const std::size_t S = argc > 2 ? std::atoi(argv[2]) : 2048;
  const bool causal = argc > 3 ? std::atoi(argv[3]) != 0 : true;
  const bool products = argc > 4 ? std::atoi(argv[4]) != 0 : true;
  const bool with_digest = argc > 5 && std::atoi(argv[5]) != 0;
  if (D == 0 || S == 0 || D > 1024 || S > (1u << 20)) {
    std::fputs("usage: bench_attend [D=64] [S=2048] [causal=1] [products=1] [digest=0]\n", stderr);
    return 2;
  }
  std::mt19937 rng(5);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> q(S * D), k(S * D), v(S * D), y(S * D);
  for (auto* t : {&q, &k, &v})
    for (float& x : *t) x = normal(rng);
  std::vector<float> kt_packed(panels_floats(D, S)), v_packed(panels_floats(S, D));

  HeadView hv;
  hv.q = q.data();
  hv.ld_q = D;
  // k^T (D, S): key j's row of k is column j (column stride D, row stride 1).
  hv.kt = pack_panels(k.data(), 1, D, D, S, kt_packed.data());
  hv.v = pack_panels(v.data(), D, 1, S, D, v_packed.data());
  hv.y = y.data();
  hv.ld_y = D;
  hv.L = hv.T = hv.T_ext = S;
  hv.D = D;
  hv.scale = 1.0f / std::sqrt(float(D));
  hv.causal = causal;
  hv.key_end = S;

  Scratch sc;
  double pairs = 0.0;  // allowed (query, key) pairs
  for (std::size_t i = 0; i < S; ++i) pairs += causal ? double(i + 1) : double(S);
  const double flops = 4.0 * double(D) * pairs;

  const auto plain = [&] {
    for (std::size_t i0 = 0; i0 < S; i0 += kQueryBlock)
      attend_stream(hv, i0, std::min(kQueryBlock, S - i0), sc);
  };
  double t_attend = 0.0;
  char digest_line[160] = "";
  if (!with_digest) {
    t_attend = median_seconds(plain);
  } else {
    // The plain and the digest kernels in turns, 9 pairs: the ratio is the
    // median of each pair's, so a change of the host's speed between reps
    // moves both sides of a pair.
    DigestRequest req;
    req.rows = false;
    req.top_k = 32;
    req.summary = true;
    req.recent = 16;
    RowDigest digest;
    double check = 0.0;  // keeps the digests live
    const auto digested = [&] {
      for (std::size_t i0 = 0; i0 < S; i0 += kQueryBlock) {
        const std::size_t n = std::min(kQueryBlock, S - i0);
        digest.begin(req, hv, i0, n);
        attend_stream(hv, i0, n, sc, &digest);
        check += digest.finish(sc.m.data(), sc.l.data(), sc.allowed.data()).summary[0];
      }
    };
    std::vector<double> t_plain, t_digest, ratio;
    for (int rep = 0; rep < 9; ++rep) {
      t_plain.push_back(seconds(plain));
      t_digest.push_back(seconds(digested));
      ratio.push_back(t_digest.back() / t_plain.back());
    }
    t_attend = median(t_plain);
    std::snprintf(digest_line, sizeof digest_line,
                  "with the top 32 and the summary: %.2f ms, %.3fx the plain kernel (median of 9 "
                  "pairs; check %.3f)\n",
                  median(t_digest) * 1e3, median(ratio), check);
  }

  std::printf("attend_stream D=%zu S=%zu %s, one core: %.2f ms, %.1f GFLOP/s (check %.3f)\n", D, S,
              causal ? "causal" : "full", t_attend * 1e3, flops / t_attend * 1e-9,
              double(y[S * D / 2]));
  if (digest_line[0]) std::fputs(digest_line, stdout);
  if (!products) return 0;

  // The same tiles' two products alone: scores into the tile, then P v into acc.
  std::vector<float> tile(kQueryBlock * kKeyBlock), acc(kQueryBlock * D);
  const double t_gemm = median_seconds([&] {
    for (std::size_t i0 = 0; i0 < S; i0 += kQueryBlock) {
      const std::size_t n = std::min(kQueryBlock, S - i0);
      const KeySpan keys = block_keys(hv, i0, n);
      for (std::size_t j0 = keys.begin; j0 < keys.end; j0 += kKeyBlock) {
        const std::size_t mb = std::min(kKeyBlock, keys.end - j0);
        tile_gemm(n, mb, D, hv.scale, hv.q + i0 * D, D, hv.kt.cols_from(j0), 0.0f, tile.data(), mb,
                  causal ? causal_diagonal(Diagonal::columns, i0, j0) : Diagonal{});
        tile_gemm(n, D, mb, 1.0f, tile.data(), mb, hv.v.rows_from(j0), 1.0f, acc.data(), D,
                  causal ? causal_diagonal(Diagonal::depth, i0, j0) : Diagonal{});
      }
    }
  });
  std::printf("the tiles' products alone, no softmax: %.2f ms, %.1f GFLOP/s (check %.3f)\n",
              t_gemm * 1e3, flops / t_gemm * 1e-9, double(acc[7]));
}
