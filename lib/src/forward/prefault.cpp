// prefault_forward (attn/attention.h): the warm pool (base/warm_pool.h) sized
// for a forward pass's working buffers, set aside before its weights and
// inputs load.
//
// Letters: L queries, C hidden, H heads, Hkv key/value heads, D head size.
#include <sys/resource.h>

#include <algorithm>

#include "attn/attention.h"
#include "base/warm_pool.h"
#include "forward/stages.h"
#include "kernels/kernels.h"

namespace attn {

namespace detail {

std::size_t warm_bytes(const Geometry& g, int threads, std::size_t L) {
  // One chunk of L query rows or, shorter, of kChunkRows rows, as project() asks:
  // q rows (L, H*D) (or, off the fast path, q | k | v rows; with mla, q rows,
  // k | v rows and the latent rows apart), the output gate's rows (L, H*D),
  // then per KV head the panels of k^T (D, L) and of v (L, D); and each
  // worker's buffers of the projections and its score tile, accumulator and
  // packed query block (kernels::Scratch).
  L = std::max(L, kChunkRows);
  const std::size_t K = std::max(g.C, g.q_rows());
  const auto pages = [](std::size_t floats) { return warm_block_bytes(floats * sizeof(float)); };
  const std::size_t rows = kernels::qkv_panels_fit(1, L, g.D) ? g.q_rows() : g.qkv_rows();
  std::size_t bytes =
      g.mla_latent ? pages(L * g.q_rows()) + pages(L * 2 * g.kv_rows()) + pages(L * g.mla_latent)
                   : pages(L * rows);
  if (g.gate) bytes += pages(L * g.q_rows());
  bytes +=
      pages(g.Hkv * kernels::panels_floats(g.D, L)) + pages(g.Hkv * kernels::panels_floats(L, g.D));
  const std::size_t qb = kernels::query_block(L, g.D);  // streaming's rows (self-attention: T = L)
  const std::size_t per_worker = pages(kernels::linear_worker_floats(K)) +
                                 pages(qb * kernels::kKeyBlock) + 2 * pages(qb * g.D);
  return bytes + std::size_t(kernels::resolve_threads(threads)) * per_worker;
}

}  // namespace detail

void prefault_forward(const Geometry& g, int threads, std::size_t L) {
  if (g.H == 0 || g.Hkv == 0 || g.D == 0) return;
  // Under an address-space limit (ulimit -v) none: a pool the pass cannot use
  // whole (sized for 1024 rows, or a pass off the fast path) would add to the
  // address space a run was sized to fit.
  struct rlimit as {};
  if (::getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY) return;
  // Capped: a config's sizes alone can ask for gigabytes, of which a short
  // input would use little.
  constexpr std::size_t kMaxBytes = std::size_t(1) << 30;
  const std::size_t bytes = detail::warm_bytes(g, threads, std::min(L, std::size_t(1) << 24));
  if (bytes <= kMaxBytes) detail::warm_reserve(bytes);
}

}  // namespace attn
