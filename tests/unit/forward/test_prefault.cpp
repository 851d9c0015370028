// prefault_forward (attn/attention.h): the memory a pass works in, set aside
// and faulted in ahead (base/warm_pool.h), holds the pass's buffers, goes
// back to the pool after it, and changes no number. Its own process: the
// pool is set aside once per process.
#include <doctest/doctest.h>
#include <sys/resource.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "attn/attention.h"
#include "base/warm_pool.h"
#include "forward/stages.h"
#include "kernels/kernels.h"
#include "reference.h"
#include "test_util.h"

using namespace attn;

namespace {

// Random canonical weights, shrunk by 1/sqrt(in) like nn.Linear's init.
Weights make_weights(std::size_t C, std::size_t H, std::size_t D, unsigned seed) {
  Weights w;
  w.C = C;
  w.H = w.Hkv = H;
  w.D = D;
  w.O = C;
  w.has_out_proj = true;
  auto shrink = [](Tensor t, double by) {
    for (float& v : t.data) v = float(v * by);
    return t;
  };
  w.w_qkv = shrink(test::random_tensor({3 * H * D, C}, seed), 2.0 / std::sqrt(double(C)));
  w.b_qkv = shrink(test::random_tensor({3 * H * D}, seed + 1), 0.5);
  w.w_out = shrink(test::random_tensor({C, H * D}, seed + 2), 1.0 / std::sqrt(double(H * D)));
  w.b_out = shrink(test::random_tensor({C}, seed + 3), 0.5);
  return w;
}

}  // namespace

TEST_CASE("prefault_forward: the pass works in the pool's memory and gives it back") {
  // Two batch rows of kChunkRows: two chunks of one row each, q apart from the
  // context; D = 32 takes the projection's fast path (q rows, k and v panels).
  const std::size_t B = 2, S = detail::kChunkRows, C = 64, H = 2, D = 32;
  const Weights w = make_weights(C, H, D, 1301);
  const Tensor x = test::random_tensor({B, S, C}, 1302);
  const Geometry g = w.geometry();

  // Under an address-space limit (ulimit -v) no pool: a finite soft limit far
  // above any use (2^62 bytes: the sanitizers' reservations fit), then none again.
  struct rlimit as {};
  REQUIRE(::getrlimit(RLIMIT_AS, &as) == 0);
  if (as.rlim_cur != RLIM_INFINITY) {  // run under ulimit -v: that is all there is to see
    prefault_forward(g, 2, S);
    CHECK(detail::warm_pool_state().region == 0);
    return;
  }
  if (as.rlim_max == RLIM_INFINITY) {
    struct rlimit finite = as;
    finite.rlim_cur = rlim_t(1) << 62;
    REQUIRE(::setrlimit(RLIMIT_AS, &finite) == 0);
    prefault_forward(g, 2, S);
    CHECK(detail::warm_pool_state().region == 0);
    REQUIRE(::setrlimit(RLIMIT_AS, &as) == 0);
  }

  prefault_forward(g, 2, S);
  const std::size_t want = detail::warm_bytes(g, 2, S);
  const detail::WarmPoolState s0 = detail::warm_pool_state();
  CHECK(s0.region >= want);
  CHECK(s0.region < want + detail::kHugeBytes);  // whole huge pages
  CHECK(s0.free == s0.region);

  // The chunk's q, k^T panels and v panels: taken from the pool during the pass.
  const std::size_t chunk_bytes = sizeof(float) * (S * H * D + H * kernels::panels_floats(D, S) +
                                                   H * kernels::panels_floats(S, D));
  std::vector<std::size_t> in_use;
  ForwardOptions opt;
  opt.threads = 2;
  opt.keep_warm = true;
  opt.context_done = [&](std::size_t, std::size_t) {
    in_use.push_back(s0.region - detail::warm_pool_state().free);
  };
  Tensor ctx;
  forward(w, AttentionSpec::plain(0.25f, true), x, nullptr, ctx, opt);
  REQUIRE(in_use.size() == 2);
  for (std::size_t used : in_use) {
    CHECK(used >= chunk_bytes);
    CHECK(used <= want);  // the estimate covers the pass
  }
  // After it: all back but the workers' own projection buffers (kept per
  // thread): one set, or two where the second worker took a projection task
  // (up to the schedule: a worker still awake from the last call joins sooner).
  const std::size_t one_set =
      detail::warm_block_bytes(sizeof(float) * kernels::linear_worker_floats(std::max(C, H * D)));
  const std::size_t kept = s0.region - detail::warm_pool_state().free;
  CHECK(kept >= one_set);
  CHECK(kept <= 2 * one_set);
  CHECK(kept < chunk_bytes);

  const ref::Result ref = ref::attention(ref::from_weights(w), x, nullptr, 0.25, true);
  const test::Diff d = test::compare(ctx, ref.context);
  INFO(test::describe(d));
  CHECK(d.relative() <= 1e-5);
  // A second pass reuses the same blocks and gives the same bits.
  Tensor again;
  forward(w, AttentionSpec::plain(0.25f, true), x, nullptr, again, opt);
  CHECK(again.data == ctx.data);
  const std::size_t kept_again = s0.region - detail::warm_pool_state().free;
  CHECK(kept_again >= kept);
  CHECK(kept_again <= 2 * one_set);
}
