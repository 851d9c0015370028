// torch.nn.Linear (y = x W^T + b) on the thread layer.
//
// Where xsimd has 8 lanes or more (AVX2, AVX-512), attn-run's own
// micro-kernel (kernels/micro.h) computes y^T = W x^T: W's rows are read in
// place as the broadcast operand, x is packed once per call into panels of
// NR rows (transposed, K x NR each, a copy as big as x), and each MR x NR
// block is stored transposed into y with the bias. W is never copied, so a
// short input (one of an --input-list) pays no packing of the weights.
// Self-attention's q | k | v projection (linear_qkv_panels) stores the key
// and value columns straight into the panels the attention tiles read
// (kernels.h Panels), so k and v never exist row-major: no packing pass and
// 6 MB less fresh memory per chunk of a GPT-2-small layer at S = 1024.
// AVX-512, one core: about 1.6x OpenBLAS 0.3.21's sgemm at its Haswell core
// type; AVX2 (Zen): the same rate as OpenBLAS on large inputs.
//
// Otherwise (SSE2) the rows of x are cut into one slice per worker and each worker
// calls a single-threaded sgemm. Why not OpenBLAS's own threads: after a threaded call they keep
// spinning for a while, and on 2 cores that steals one from the attention workers that run next
// (measured on a GPT-2-small layer, B=4, S=1024, causal: 187 ms with OpenBLAS-threaded projections,
// 161 ms with its spin cut short). With every GEMM single-threaded inside our workers, OpenBLAS
// never spins.
#include "attn/linear.h"

#include <cblas.h>

#include <algorithm>
#include <atomic>
#include <cassert>
#include <cstdint>
#include <memory>
#include <vector>

#include "kernels/kernels.h"
#include "kernels/micro.h"
#include "kernels/transpose.h"

namespace attn {
namespace {

// OpenBLAS's products (builds narrower than AVX2) are cut into slices by the
// shape alone: kMinRowsPerSlice rows or more, one row slice per
// kMinRowsPerSlice rows and at least two; fewer rows, one slice of W's rows
// (the output columns) per kMinColsPerSlice; an even number of slices past
// one (two workers share them evenly), at most kMaxSlices.
constexpr std::size_t kMinRowsPerSlice = 512;
constexpr std::size_t kMinColsPerSlice = 384;
constexpr std::size_t kMaxSlices = 32;
std::size_t even_slices(std::size_t n) {
  n = std::min(n, kMaxSlices);
  return n > 1 ? n - n % 2 : 1;
}

// Deep W's go in depth slices (linear_own's `sliced`), chosen per CPU at run
// time, as measured on each (attn::linear alone, one core, and both):
// - AMD (Zen 5, AVX-512, 2 cores, beside builds, medians of 4): depths past
//   1024 in slices of 512 (a panel's slice, 512 x 32 floats, is 64 KiB):
//   Llama-3-8B's projections (K = 4096) went 357 -> 386 GFLOP/s; GPT-2's
//   (K = 768) lost about 5% when sliced, so depths up to 1024 are not.
// - Intel (Sapphire Rapids class, AVX-512, one core at a register peak of
//   215-225 GFLOP/s): every depth past 256 in slices of 256, so a panel's
//   slice (32 KiB) stays in the 48 KiB L1 while it meets every W block of
//   the task; its L2 feeds L1 slower than Zen 5's, and a whole panel
//   streamed from L2 per W block held the micro-kernel to 65% of peak.
//   GPT-2's q|k|v (K = 768) 145 -> 172 GFLOP/s; Llama's (K = 4096) 144
//   (slices of 512) -> 154, and 125 before the first panel's prefetch of the
//   next W rows (below). The forward pass (stage clocks, in turns): GPT-2's
//   projections 1.08x and 1.11x faster, Llama's at S = 2048 1.20x and 1.19x.
//   Past 1024 deep, long tasks (task_shape).
kernels::DepthSlicing& chosen_slicing() {
  static kernels::DepthSlicing s = __builtin_cpu_is("amd") ? kernels::DepthSlicing{512, 1024}
                                                           : kernels::DepthSlicing{256, 256, 1024};
  return s;
}

// Whether a depth K runs in slices (linear_own's `sliced`).
bool sliced_depth(std::size_t K) { return chosen_slicing().cuts(K); }

// One own-kernel task: `panels` panels of x (NR rows each) by `w_rows` rows of W.
struct TaskShape {
  std::size_t panels, w_rows;
};

// 4 panels of x (128 rows) by 256 rows of W, so a task reuses each W row
// block (MR x K, in L1) over its panels (in L2). Unsliced depths take half as
// many W rows, so that the task's W block and its panels fit L2 together
// (GPT-2's K = 768: 393 + 393 KB in a 1 MiB L2, where 256 rows made it 786 +
// 393 KB). Measured on Zen 5 (a cold GPT-2-small layer, 15 runs each in
// turns): output projection 13.1 -> 12.6 ms, q|k|v 37.2 -> 36.9 ms; at K =
// 4096 (sliced: a 512-deep slice of 256 rows is 512 KB) 128 rows were 1-4%
// slower, so sliced tasks keep 256.
// Long tasks (the CPU's long_tasks_above, Intel past 1024): 8 panels by 128
// W rows. A slice of W rows K floats apart (16 KiB at Llama's 4096) falls in
// few of L2's sets; 128 rows stay while 8 panels meet them. Intel, one core
// (attn::linear alone, 2048 x 4096 rows): K = 4096 120-124 -> 131-134
// GFLOP/s, 2048 and 5120 +1-4%, 1536 the same; the Llama layer's forward pass
// at S = 2048, stage clocks in turns (8 pairs): projections 1.029x and
// output 1.014x faster on one thread, 1.029x and 1.016x on two.
TaskShape task_shape(std::size_t K) {
  const kernels::DepthSlicing& cut = chosen_slicing();
  if (!cut.cuts(K)) return {4, 128};
  if (cut.long_tasks(K)) return {8, 128};
  return {4, 256};
}

using kernels::micro::kMR;
using kernels::micro::kNR;

// Floats of one task's group of x panels: task_shape(K).panels panels of (K, NR).
std::size_t group_floats(std::size_t K) { return task_shape(K).panels * K * kNR; }

// A thread's buffers for linear_own, one set for every kind of output (the
// q | k | v projection and the output projection share them), in the warm
// pool that prefault_forward sets aside: a fresh 4 KiB page costs about 10 us
// to fault in on a VM (the AMD EPYC VM), and two sets of 393 KB per worker,
// faulted in during the first chunk, took 2-3 ms of a cold GPT-2-small layer.
struct LinearBuffers {
  WarmBuffer packed;             // all of x's panels (few groups), the calling thread's
  WarmBuffer sums;               // (row blocks, np, MR, NR): a sliced task's block sums
  WarmBuffer group;              // this worker's group of x panels (many groups)
  std::uint64_t group_call = 0;  // the call and first panel `group` holds
  std::size_t group_p0 = 0;
};

// Unused in builds whose products are OpenBLAS's (kOwnProjections false).
[[maybe_unused]] LinearBuffers& linear_buffers() {
  thread_local LinearBuffers buffers;
  return buffers;
}

// linear_own's calls, numbered: a worker's group of panels is of this call or stale.
std::atomic<std::uint64_t> linear_calls{0};

// W's rows [n0, n1) cut into blocks of about `rows` rows, each a whole
// number of `unit` rows but the last; the blocks' ends appended to `ends`.
void cut_rows(std::size_t n0, std::size_t n1, std::size_t unit, std::size_t rows_per_task,
              std::vector<std::size_t>& ends) {
  if (n1 <= n0) return;
  const std::size_t blocks = (n1 - n0 + rows_per_task - 1) / rows_per_task;
  const std::size_t rows = ((n1 - n0 + blocks - 1) / blocks + unit - 1) / unit * unit;
  for (std::size_t r = n0 + rows; r < n1; r += rows) ends.push_back(r);
  ends.push_back(n1);
}

// Each row of a product block goes to a task's store: out.row_blocks(N, rows) cuts
// W's rows into the tasks' blocks of about `rows` (their ends), out.task(p0, p1, n0, n1)
// makes the store of the task of x panels [p0, p1) and W rows [n0, n1);
// store.block(n0, mr, p, rows, t) receives output columns n0 .. n0 + mr (rows
// of W) for the x rows p*NR .. p*NR + rows of x panel p: t[r*NR + j] for
// column n0 + r and row p*NR + j, with the bias; store.done() follows the
// task's last block. Written where `Out` says: row-major y, or the panels of
// keys and values. Each block goes out transposed, 8 x 8 through registers
// where it can (kernels/transpose.h): one element at a time, the stores of
// a GPT-2-small layer's projections took about 10% of their time.
template <class Out>
void linear_own(const float* a, std::size_t lda, std::size_t M, const MatrixRef& W,
                const float* bias, int threads, const Out& out) {
  using kernels::micro::Batch;
  using kernels::micro::kLanes;
  const std::size_t N = W.rows, K = W.cols;
  const TaskShape shape = task_shape(K);
  const std::size_t panels = (M + kNR - 1) / kNR;
  const std::size_t panel_groups = (panels + shape.panels - 1) / shape.panels;
  // xp[p] (K, NR): xp[p][k][j] = a[p*NR + j][k], zero past M.
  auto pack = [&](std::size_t p, float* to) {
    const std::size_t rows = std::min(kNR, M - p * kNR);  // x rows p*NR.. as columns
    kernels::pack_panels(a + p * kNR * lda, 1, lda, K, rows, to);
  };
  // Many groups of panels (long inputs): each worker packs the group of its
  // task into a buffer of its own (one group), when it moves to another
  // group; each worker keeps to a group of its own while it can (the lanes
  // below), so each group is packed about once. No buffer as big as x,
  // whose fresh pages the kernel would fault in and clear (perf record of a
  // Llama-3-8B-shaped layer at S = 2048 on the AMD EPYC VM: page clearing
  // took 5% of the compute, for 112 MB of fresh buffers of which 32 MB were
  // x's panels). Few groups: all of x packed once before the products, into
  // a buffer reused across calls from this thread (chunks, --input-list
  // inputs), on huge pages.
  const std::size_t workers = std::size_t(kernels::resolve_threads(threads));
  const bool per_worker = panel_groups >= 2 * workers;
  const std::uint64_t call = ++linear_calls;
  float* xp = nullptr;
  if (!per_worker) {
    WarmBuffer& packed = linear_buffers().packed;
    if (packed.size() < panels * K * kNR) packed.resize(panels * K * kNR);
    xp = packed.data();
    kernels::parallel_for(panels, threads, [&](std::size_t p, int) { pack(p, xp + p * K * kNR); });
  }
  // A deep W (sliced_depth: a Llama-sized layer's 4096) in depth slices:
  // slice by slice, each panel's slice (slice x NR, in L1 or L2) meets every
  // MR-row block of the task's W rows (their slices in L2), the block sums
  // carried in `sums` between slices. Unsliced, each 8-row block of W
  // streamed its task's four whole panels (4 x 512 KiB at K = 4096) from L3.
  auto sliced = [&](std::size_t p0, std::size_t p1, std::size_t n0, std::size_t n1,
                    const float* group, const auto& store) {
    const std::size_t np = p1 - p0;
    WarmBuffer& sums_buffer = linear_buffers().sums;
    const std::size_t floats = (n1 - n0 + kMR - 1) / kMR * np * kMR * kNR;
    if (sums_buffer.size() < floats) sums_buffer.resize(floats);
    float* sums = sums_buffer.data();
    const std::size_t slice = chosen_slicing().slice;
    for (std::size_t k0 = 0; k0 < K; k0 += slice) {
      const std::size_t depth = std::min(slice, K - k0);
      const bool last = k0 + depth == K;
      for (std::size_t p = p0; p < p1; ++p) {
        const float* panel = group + (p - p0) * K * kNR + k0 * kNR;
        const std::size_t rows = std::min(kNR, M - p * kNR);  // of x, = columns of the block
        for (std::size_t r0 = n0; r0 < n1; r0 += kMR) {
          const std::size_t mr = std::min(kMR, n1 - r0);
          float* t = sums + ((r0 - n0) / kMR * np + (p - p0)) * kMR * kNR;
          kernels::micro::with_rows(mr, [&](auto MR) {
            // The first panel of a slice reads its W rows from L3 or memory:
            // the next block's rows of the slice come in while this one runs.
            const float* next =
                p == p0 && r0 + 2 * kMR <= n1 ? W.data + (r0 + kMR) * K + k0 : nullptr;
            kernels::micro::block<MR>(
                W.data + r0 * K + k0, K, panel, kNR, depth, next,
                [&](std::size_t r, Batch lo, Batch hi) {
                  if (last) {  // the bias as the unsliced store adds it
                    const Batch b(bias ? bias[r0 + r] : 0.0f);
                    lo = lo + b;
                    hi = hi + b;
                  }
                  lo.store_unaligned(t + r * kNR);
                  hi.store_unaligned(t + r * kNR + kLanes);
                },
                k0 ? t : nullptr);
          });
          if (last) store.block(r0, mr, p, rows, t);
        }
      }
    }
    store.done();
  };
  const bool deep = sliced_depth(K);
  const std::vector<std::size_t> ends = out.row_blocks(N, shape.w_rows);
  const std::size_t w_blocks = ends.size();
  auto run_task = [&](std::size_t g, std::size_t blk) {
    const std::size_t p0 = g * shape.panels;
    const std::size_t p1 = std::min(panels, p0 + shape.panels);
    const std::size_t n0 = blk ? ends[blk - 1] : 0, n1 = ends[blk];
    const float* group = xp ? xp + p0 * K * kNR : nullptr;  // panel p at group + (p - p0) K NR
    if (per_worker) {
      LinearBuffers& mine = linear_buffers();
      if (mine.group.size() < group_floats(K)) mine.group.resize(group_floats(K));
      if (mine.group_call != call || mine.group_p0 != p0) {
        for (std::size_t p = p0; p < p1; ++p) pack(p, mine.group.data() + (p - p0) * K * kNR);
        mine.group_call = call;
        mine.group_p0 = p0;
      }
      group = mine.group.data();
    }
    const auto store = out.task(p0, p1, n0, n1);
    if (deep) return sliced(p0, p1, n0, n1, group, store);
    for (std::size_t r0 = n0; r0 < n1; r0 += kMR) {
      const std::size_t mr = std::min(kMR, n1 - r0);
      for (std::size_t p = p0; p < p1; ++p) {
        const std::size_t rows = std::min(kNR, M - p * kNR);  // of x, = columns of the block
        alignas(64) float t[kMR * kNR];  // row r: output column r0 + r, with the bias
        // W's next MR rows into cache (from L3) during the last panel, when
        // the task has them all.
        const float* next = p + 1 == p1 && r0 + 2 * kMR <= n1 ? W.data + (r0 + kMR) * K : nullptr;
        kernels::micro::with_rows(mr, [&](auto MR) {
          kernels::micro::block<MR>(W.data + r0 * K, K, group + (p - p0) * K * kNR, kNR, K, next,
                                    [&](std::size_t r, Batch lo, Batch hi) {
                                      const Batch b(bias ? bias[r0 + r] : 0.0f);
                                      (lo + b).store_aligned(t + r * kNR);
                                      (hi + b).store_aligned(t + r * kNR + kLanes);
                                    });
        });
        store.block(r0, mr, p, rows, t);
      }
    }
    store.done();
  };
  // With several groups the workers go through W's blocks side by side, each
  // on a group of panels of its own (a lane). The groups come in runs of one
  // per worker; in a run, each worker takes its own group's W blocks in
  // order, then helps with the others' (each task claimed once, through
  // that group's counter), then moves on to the next run. So each W block
  // comes from memory or L3 once for all the workers at about the same time,
  // and each group packed per worker is packed about once. Handed out group
  // by group instead (both workers in one group on different W blocks) each
  // such group was packed by every worker, and each W block was read by one
  // worker at a time: Zen 5, 2 cores, stage clocks in turns against that: the
  // Llama-3-8B-shaped layer's projections at S = 8192 1.024x and 1.032x
  // faster, at S = 2048 1.018x and 1.019x; at S = 256 and 384 (two and three
  // groups, x packed up front; W from memory) its compute 1.025x and 1.016x;
  // GPT-2-small's output projection 1.023-1.032x, its q | k | v the same.
  const std::size_t lanes = std::min(panel_groups, workers);
  if (lanes <= 1)
    return kernels::parallel_for(panel_groups * w_blocks, threads, [&](std::size_t task, int) {
      run_task(task / w_blocks, task % w_blocks);
    });
  const std::size_t runs = (panel_groups + lanes - 1) / lanes;
  // taken[g]: W blocks of group g handed out so far (zeros: value-initialized)
  std::unique_ptr<std::atomic<std::size_t>[]> taken(new std::atomic<std::size_t>[panel_groups]());
  // One loop a worker; with more workers than groups, several share a lane.
  kernels::parallel_for(workers, threads, [&](std::size_t loop, int) {
    const std::size_t lane = loop % lanes;
    for (std::size_t r = 0; r < runs; ++r) {
      const std::size_t in_run = std::min(lanes, panel_groups - r * lanes);  // the last: fewer
      for (std::size_t i = 0; i < in_run; ++i) {  // its own group first, then the others'
        const std::size_t g = r * lanes + (lane + i) % in_run;
        for (std::size_t blk; (blk = taken[g]++) < w_blocks;) run_task(g, blk);
      }
    }
  });
}

// y (M, N), leading dimension ld: y[p*NR + j][n] = v[j]. W's rows in even
// blocks, each a whole number of MR-row blocks but the last (256 = 42 * 6 + 4
// would leave a 4-row block in every task).
struct RowMajor {
  float* y;
  std::size_t ld;
  void block(std::size_t n0, std::size_t mr, std::size_t p, std::size_t rows,
             const float* t) const {
    kernels::transpose_block(t, kNR, mr, rows, y + p * kNR * ld + n0, ld);
  }
  void done() const {}
  std::vector<std::size_t> row_blocks(std::size_t N, std::size_t rows) const {
    std::vector<std::size_t> ends;
    cut_rows(0, N, kMR, rows, ends);
    return ends;
  }
  RowMajor task(std::size_t, std::size_t, std::size_t, std::size_t) const { return *this; }
};

// Self-attention's q | k | v columns: q row-major, k^T and v in panels
// (kernels::QkvPanels). A panel of x is one batch row's keys pk*NR.. .
struct QkvOut {
  const kernels::QkvPanels& o;
  std::size_t HD, KV, M, row_panels, kt_floats, v_floats;

  // Column c of k (one of its Hkv*D), token rows pk*NR.. of batch row b:
  // row d of head g's k^T (D, L), one panel row, zeros past the last key.
  float* kt_row(std::size_t b, std::size_t pk, std::size_t c) const {
    const std::size_t g = c / o.D, d = c % o.D;
    return o.kt + (b * o.Hkv + g) * kt_floats + (pk * o.D + d) * kNR;
  }

  // One task's store. With position work on k, its k columns [n0, n1) go
  // row-major to `stage` ((p1 - p0) * NR rows of n1 - n0) first, and into
  // the panels after finish->fn.
  struct Task {
    const QkvOut& out;
    std::size_t p0, p1, n0, n1;
    float* stage;
    // Columns c0 .. c0 + mr within one part (q, k or v) and, in v, within
    // one panel of one head go transposed as a block; others column by column.
    void block(std::size_t c0, std::size_t mr, std::size_t p, std::size_t rows,
               const float* t) const {
      const kernels::QkvPanels& o = out.o;
      const std::size_t HD = out.HD, KV = out.KV, c1 = c0 + mr;
      if (c1 <= HD) return RowMajor{o.q, HD}.block(c0, mr, p, rows, t);
      if (c0 >= HD && c1 <= HD + KV && stage) {
        const std::size_t width = n1 - n0;
        return kernels::transpose_block(t, kNR, mr, rows, stage + (p - p0) * kNR * width + c0 - n0,
                                        width);
      }
      if (c0 >= HD + KV && (c0 - HD - KV) % o.D % kNR + mr <= kNR)
        return kernels::transpose_block(t, kNR, mr, rows, v_at(p, c0), kNR);
      for (std::size_t r = 0; r < mr; ++r) column(c0 + r, p, rows, t + r * kNR);
    }
    // Output column n for rows p*NR + j, v[j].
    void column(std::size_t n, std::size_t p, std::size_t rows, const float* v) const {
      if (n < out.HD) return RowMajor{out.o.q, out.HD}.block(n, 1, p, rows, v);
      if (n < out.HD + out.KV) {
        if (stage) {
          const std::size_t width = n1 - n0;
          return kernels::transpose_block(v, kNR, 1, rows, stage + (p - p0) * kNR * width + n - n0,
                                          width);
        }
        float* dst = out.kt_row(p / out.row_panels, p % out.row_panels, n - out.HD);
        std::copy(v, v + rows, dst);
        std::fill(dst + rows, dst + kNR, 0.0f);
        return;
      }
      kernels::transpose_block(v, kNR, 1, rows, v_at(p, n), kNR);
    }
    // Column n of q | k | v in v's panels, rows p*NR..: column d of v (L, D)
    // of its head, in panel d / NR, rows pk*NR.. of it.
    float* v_at(std::size_t p, std::size_t n) const {
      const kernels::QkvPanels& o = out.o;
      const std::size_t b = p / out.row_panels, pk = p % out.row_panels;
      const std::size_t c = n - out.HD - out.KV, g = c / o.D, d = c % o.D;
      return o.v + (b * o.Hkv + g) * out.v_floats + d / kNR * o.L * kNR + pk * kNR * kNR + d % kNR;
    }
    // The task's position work, panel by panel of tokens, while in cache.
    void done() const {
      const kernels::QkvFinish* f = out.o.finish;
      if (!f) return;
      const bool is_q = n1 <= out.HD;
      if (is_q ? !f->q : !stage) return;  // v, or a side fn leaves alone
      const std::size_t D = out.o.D, width = n1 - n0, c0 = is_q ? n0 : n0 - out.HD;
      for (std::size_t p = p0; p < p1; ++p) {
        const std::size_t t0 = p * kNR, rows = std::min(kNR, out.M - t0);
        if (is_q) {
          f->fn(false, out.o.q + t0 * out.HD + n0, rows, out.HD, t0, c0 / D, width / D);
          continue;
        }
        const float* s = stage + (p - p0) * kNR * width;
        f->fn(true, stage + (p - p0) * kNR * width, rows, width, t0, c0 / D, width / D);
        const std::size_t b = p / out.row_panels, pk = p % out.row_panels;
        for (std::size_t c = 0; c < width; ++c) {
          float* dst = out.kt_row(b, pk, c0 + c);
          for (std::size_t j = 0; j < rows; ++j) dst[j] = s[j * width + c];
          std::fill(dst + rows, dst + kNR, 0.0f);
        }
      }
    }
  };

  // Without position work: as RowMajor. With it: blocks of whole heads of q
  // and of k (all of them with `whole`), none across q | k | v.
  std::vector<std::size_t> row_blocks(std::size_t N, std::size_t rows) const {
    std::vector<std::size_t> ends;
    const kernels::QkvFinish* f = o.finish;
    if (!f) {
      cut_rows(0, N, kMR, rows, ends);
      return ends;
    }
    cut_rows(0, HD, f->q ? (f->whole ? HD : o.D) : kMR, rows, ends);
    cut_rows(HD, HD + KV, f->k ? (f->whole ? KV : o.D) : kMR, rows, ends);
    cut_rows(HD + KV, N, kMR, rows, ends);
    return ends;
  }

  Task task(std::size_t p0, std::size_t p1, std::size_t n0, std::size_t n1) const {
    float* stage = nullptr;
    if (o.finish && o.finish->k && n0 >= HD && n1 <= HD + KV) {
      thread_local std::vector<float> buf;  // this worker's, reused
      buf.resize(std::max(buf.size(), (p1 - p0) * kNR * (n1 - n0)));
      stage = buf.data();
    }
    return Task{*this, p0, p1, n0, n1, stage};
  }
};

std::atomic<std::size_t> qkv_calls{0};

}  // namespace

namespace kernels {

bool qkv_panels_fit(std::size_t nb, std::size_t L, std::size_t D) {
  return micro::kOwnProjections && D % kNR == 0 && (nb == 1 || L % kNR == 0);
}

void linear_qkv_panels(const float* x, std::size_t ldx, const MatrixRef& W, const float* bias,
                       const QkvPanels& out, int threads) {
  assert(qkv_panels_fit(out.nb, out.L, out.D));
  if constexpr (micro::kOwnProjections) {
    const std::size_t HD = out.H * out.D, KV = out.Hkv * out.D;
    assert(W.rows == HD + 2 * KV);
    ++qkv_calls;
    const QkvOut o{out,
                   HD,
                   KV,
                   out.nb * out.L,
                   (out.L + kNR - 1) / kNR,
                   panels_floats(out.D, out.L),
                   panels_floats(out.L, out.D)};
    linear_own(x, ldx, out.nb * out.L, W, bias, threads, o);
  }
}

std::size_t qkv_panels_calls() { return qkv_calls.load(); }

DepthSlicing depth_slicing() { return chosen_slicing(); }
void set_depth_slicing(DepthSlicing slicing) { chosen_slicing() = slicing; }

std::size_t linear_worker_floats(std::size_t K) {
  if (!micro::kOwnProjections) return 0;
  const TaskShape shape = task_shape(K);
  const std::size_t sums = sliced_depth(K) ? shape.w_rows * shape.panels * kNR : 0;
  return group_floats(K) + sums;
}

}  // namespace kernels

void linear(const float* a /* (M, K), ld lda */, std::size_t lda, std::size_t M,
            const MatrixRef& W /* (N, K) */, const float* bias /* (N) or nullptr */,
            float* out /* (M, N), ld ldo */, std::size_t ldo, int threads) {
  const std::size_t N = W.rows, K = W.cols;
  assert(lda >= K && ldo >= N);
  if constexpr (kernels::micro::kOwnProjections)
    return linear_own(a, lda, M, W, bias, threads, RowMajor{out, ldo});
  // The slices follow from the shape alone, never from the workers: an
  // output's bits depend on the sgemm call it falls in (two calls of 2048
  // rows differ from one of 4096 in 4% of the floats), and a run gives the
  // same bits whatever --threads. Each call packs the part of W it uses:
  // many rows, slices of rows, each packing all of W for 256 rows or more;
  // few rows (one short input of an --input-list), slices of W's rows, so W
  // is packed once in all (with 64-row slices that packing took 16% of a run
  // of 1,000 inputs of S = 128). Against one slice per worker on two: the
  // same rate at GPT-2's shapes (M 128-4096), 2% slower at the Llama layer's
  // output projection (2048 x 4096 x 4096: 4 slices).
  const bool by_columns = M < kMinRowsPerSlice && N >= 2 * kMinColsPerSlice;
  const std::size_t slices =
      by_columns
          ? even_slices(N / kMinColsPerSlice)
          : (M < kMinRowsPerSlice ? 1
                                  : even_slices(std::max<std::size_t>(2, M / kMinRowsPerSlice)));
  kernels::BlasThreads blas(1);
  kernels::parallel_for(slices, threads, [&](std::size_t s, int) {
    std::size_t r0 = 0, r1 = M, c0 = 0, c1 = N;
    if (by_columns)
      c0 = N * s / slices, c1 = N * (s + 1) / slices;
    else
      r0 = M * s / slices, r1 = M * (s + 1) / slices;
    if (r1 == r0 || c1 == c0) return;
    float* o = out + r0 * ldo + c0;
    if (bias)
      for (std::size_t r = r0; r < r1; ++r) std::copy(bias + c0, bias + c1, out + r * ldo + c0);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(r1 - r0),
                static_cast<int>(c1 - c0), static_cast<int>(K), 1.0f, a + r0 * lda,
                static_cast<int>(lda), W.data + c0 * K, static_cast<int>(K), bias ? 1.0f : 0.0f, o,
                static_cast<int>(ldo));
  });
}

void linear(const float* a, std::size_t lda, std::size_t M, std::size_t K, const Tensor& W,
            const Tensor& bias, float* out, std::size_t ldo, int threads) {
  assert(W.shape.size() == 2 && W.shape[1] == K);
  linear(a, lda, M, MatrixRef{W.ptr(), W.shape[0], K}, bias.data.empty() ? nullptr : bias.ptr(),
         out, ldo, threads);
}

}  // namespace attn
