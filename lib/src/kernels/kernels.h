// Private kernels of the attention forward pass (not installed, not part of
// the contract): vectorized softmax pieces, the thread layer, BLAS thread
// control and the two per-(batch, head, query block) attention kernels.
//
// Letters: B batch, S sequence, C hidden, H heads, D head size, O out size.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

#include "attn/tensor.h"

namespace attn::kernels {

// A masked score.
inline constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// ---- softmax pieces (kernels/softmax.cpp) -----------------------------------

// Largest value of row[0..n); -inf when n == 0.
float row_max(const float* row, std::size_t n);
// The same max, and the smallest value in `min` (+inf when n == 0), in one pass.
float row_max(const float* row, std::size_t n, float& min);

// True when row[0..n) holds a NaN. row_max skips NaN, so a row of NaN scores
// (a NaN query under --allow-nonfinite) looks fully masked: the kernels ask
// this before giving such a row zeros, and give it NaN as torch does.
bool any_nan(const float* row, std::size_t n);

// row[j] = exp(row[j] - shift) in place and returns the sum of the new row.
// Entries equal to -inf (masked) become exactly 0. `shift` should be the
// row's max; when a score is NaN, or +inf (so the shift is too), the sum
// returned is NaN: an overflow for check_row_sum.
// Vectorized polynomial exp, relative error about 2 float ulps.
float exp_shift_sum(float* row, std::size_t n, float shift);

// row[j] *= s.
void scale_row(float* row, std::size_t n, float s);

// row[j] = c * tanh(row[j] / c) (Gemma 2's attn_logit_softcapping); -inf stays -inf.
void softcap_row(float* row, std::size_t n, float c);

struct HeadView;
// Overflow checks of CONTRACT.md "Numerics", done where the values are
// already in registers or cache, never by a second pass: a softmax row whose
// max or sum is not finite (exp_shift_sum returns NaN when a score is NaN or
// +inf) and output rows [i0, i0+n) of y that are not finite are an
// Error(Exit::data) naming the batch, head and query row.
void check_row_sum(const HeadView& hv, std::size_t row, float sum);
// Scores q k^T of tile rows [i0, i0+n) (n, mb; keys from j0), ld ldt, that
// are inf or NaN: an overflow even where it gave -inf, which would pass for a
// masked key. Under causal only each row's causal_prefix is checked: the
// rest is masked (and partly never computed).
void check_scores(const HeadView& hv, std::size_t i0, std::size_t n, std::size_t j0,
                  const float* tile, std::size_t ldt, std::size_t mb);
void check_output_rows(const HeadView& hv, std::size_t i0, std::size_t n);
// check_scores for one row of unchanged scores (HeadView::scores_unchanged)
// from its max and min (row_max): an infinite one is an overflow. A NaN one
// is left to check_row_sum, which the row's exponentials then reach.
void check_score_range(const HeadView& hv, std::size_t row, float max, float min);

// exp of one float with the softmax's bits (vec_exp.h's exp_batch, one lane):
// the digests' weights and the tests.
float exp_approx(float x);

// ---- tile products (kernels/tile_gemm.cpp) ----------------------------------

// A causal tile's diagonal: row r's entries past column r + offset.
//   columns: c's entries past it are not needed (scores the causal mask
//            overwrites): blocks wholly past it are not computed, and set to
//            0 unless zero_past is false (no one reads them);
//   depth:   a's entries past it are 0 (softmax weights of masked keys):
//            the product stops there for each block of rows (depth_read).
struct Diagonal {
  enum Kind { none, columns, depth } kind = none;
  std::ptrdiff_t offset = 0;
  bool zero_past = true;
};

// b (K, N) in the layout tile_gemm reads: column panels, panel p holding
// columns [p * width, p * width + width) as K rows of `width` floats at
// data + p * stride. pack_panels makes it once per (batch, KV head): panels
// one micro-kernel block wide (kNR) where tiles use attn-run's own kernel, so
// every block streams one contiguous panel (a k^T row read in place is 4 KiB
// from the next at T = 1024: one L1 set for the whole panel); one panel of
// all N columns, row-major, where tiles call BLAS. A view starts at row 0 of
// the given data and at column col0.
struct Panels {
  const float* data = nullptr;
  std::size_t width = 0, stride = 0;
  std::size_t col0 = 0;
  Panels rows_from(std::size_t r) const { return {data + r * width, width, stride, col0}; }
  Panels cols_from(std::size_t j) const { return {data, width, stride, col0 + j}; }
};

// Floats pack_panels writes for b (K, N).
std::size_t panels_floats(std::size_t K, std::size_t N);

// The view of b (K, N) packed at data, as pack_panels returns it.
Panels panels_view(const float* data, std::size_t K, std::size_t N);

// out = b (K, N) packed, b(k, j) = src[k * row_stride + j * col_stride]
// (col_stride 1: row-major b; row_stride 1: b given transposed, as the keys
// k (T', D) give k^T). Columns past N in the last panel are zeros.
Panels pack_panels(const float* src, std::size_t row_stride, std::size_t col_stride, std::size_t K,
                   std::size_t N, float* out);

// c (n, N), ldc = alpha * a (n, K), lda times b (K, N) + beta * c (beta 0: c
// is only written).
void tile_gemm(std::size_t n, std::size_t N, std::size_t K, float alpha, const float* a,
               std::size_t lda, const Panels& b, float beta, float* c, std::size_t ldc,
               Diagonal diag = {});

// Of a's K entries in row r, those tile_gemm reads under diagonal d (depth):
// as far as the last row of r's block of rows needs, so a row's weights past
// its own diagonal must be 0 up to here. K without a diagonal.
std::size_t depth_read(Diagonal d, std::size_t r, std::size_t K);

// The diagonal of a causal tile whose rows start at query i0 and columns at
// key j0: key j is past row r's last key when j > r + (i0 - j0).
inline Diagonal causal_diagonal(Diagonal::Kind kind, std::size_t i0, std::size_t j0) {
  return {kind, static_cast<std::ptrdiff_t>(i0) - static_cast<std::ptrdiff_t>(j0)};
}

// ---- self-attention's projection into panels (kernels/linear.cpp) ----------

// Where linear_qkv_panels writes q | k | v of nb batch rows of L tokens:
// q (nb * L, H*D) row-major, leading dimension H*D; k^T (D, L) and v (L, D)
// of batch row b, KV head g packed as pack_panels packs them, at
// kt + (b*Hkv + g) * panels_floats(D, L) and v + (b*Hkv + g) * panels_floats(L, D).
//
// Position work (qk_norm, rope, the queries' temperature: forward/project.cpp)
// runs inside the projection when `finish` is set: each task of the GEMM
// covers whole heads of q or of k (whole rows of them with `whole`), and
// once its products of a panel of tokens are done, while they are in cache,
// finish->fn changes them in place before k goes into its panels:
//   fn(is_k, rows, n, ld, token0, head0, heads)
// rows: n token rows of `heads` head vectors (D floats each) of q (is_k
// false) or k, from head head0, row r at rows + r * ld; token0 is the first
// row's index among the nb * L (its batch row token0 / L; the n rows are
// never of two batch rows). Only the sides flagged q or k are passed to fn.
struct QkvFinish {
  std::function<void(bool is_k, float* rows, std::size_t n, std::size_t ld, std::size_t token0,
                     std::size_t head0, std::size_t heads)>
      fn;
  bool q = false, k = false;  // the sides fn changes
  bool whole = false;         // fn needs every head of a row at once (qk_norm over all heads)
};
struct QkvPanels {
  float* q = nullptr;
  float* kt = nullptr;
  float* v = nullptr;
  std::size_t nb = 0, L = 0, H = 0, Hkv = 0, D = 0;
  const QkvFinish* finish = nullptr;  // or nullptr: q and k stored as projected
};

// Whether linear_qkv_panels serves this shape: attn-run's own projection
// kernel, head columns in whole panels (D a multiple of the panel width) and
// no panel of tokens across two batch rows (nb == 1 or L a multiple of it).
bool qkv_panels_fit(std::size_t nb, std::size_t L, std::size_t D);

// [q | k | v] = x Wqkv^T + b, written where `out` says: the projection and
// pack_panels in one pass, with no row-major copy of k and v. x (nb*L, C),
// leading dimension ldx; W (H*D + 2*Hkv*D, C); bias (rows of W) or nullptr.
void linear_qkv_panels(const float* x, std::size_t ldx, const MatrixRef& W, const float* bias,
                       const QkvPanels& out, int threads);

// Floats of the buffers each worker of a projection with depth K keeps
// (linear.cpp's group of x panels and a sliced task's sums): what the warm
// pool sets aside per worker (forward.cpp's prefault_forward).
std::size_t linear_worker_floats(std::size_t K);

// How attn-run's own products cut a deep depth (the projections' W, linear.cpp's
// `sliced`; tile_gemm's P v over a tile of keys): depths past `above` run in
// slices of `slice`, their sums carried between slices (the same bits).
// Chosen per CPU at run time (AMD: 512 past 1024; others: 256 past 256, and
// projections past 1024 deep in tasks of 8 x panels by 128 W rows).
struct DepthSlicing {
  std::size_t slice;  // inputs per slice
  std::size_t above;  // depths past this are sliced
  // Sliced projections deeper than this take tasks of twice the x panels and
  // half the W rows (linear.cpp's task_shape); kNever: none do.
  static constexpr std::size_t kNever = std::numeric_limits<std::size_t>::max();
  std::size_t long_tasks_above = kNever;
  bool cuts(std::size_t depth) const { return depth > above; }
  bool long_tasks(std::size_t depth) const { return depth > long_tasks_above; }
};
DepthSlicing depth_slicing();
// Tests: run another CPU's choice on this one (not while a product runs).
void set_depth_slicing(DepthSlicing slicing);

// Calls of linear_qkv_panels in this process so far: the tests' check that a
// layer took the fast path (forward/project.cpp) and did not silently fall back.
std::size_t qkv_panels_calls();

// ---- threads (kernels/parallel.cpp) -----------------------------------------

// 0 = the CPUs this process may use (attn/cpus.h: affinity and cgroup quota).
int resolve_threads(int threads);

// Runs fn(task, worker) for task in [0, n_tasks) on `threads` workers (the
// caller is worker 0), handing out tasks in order through an atomic counter
// so uneven tasks balance. The first exception thrown by fn stops the hand-out
// and is rethrown in the caller after every worker finished.
void parallel_for(std::size_t n_tasks, int threads,
                  const std::function<void(std::size_t task, int worker)>& fn);

// fn(r0, r1) for every block [r0, r1) of `block` rows (the last one shorter)
// of [0, rows), a block per parallel_for task.
void parallel_row_blocks(std::size_t rows, std::size_t block, int threads,
                         const std::function<void(std::size_t r0, std::size_t r1)>& fn);

// ---- BLAS control (kernels/blas.cpp) ----------------------------------------

// c = a b^T in float64 (OpenBLAS dgemm, its own threads as set): a (M, K) ld
// lda, b (N, K) ld ldb, c (M, N) ld ldc. For the float64 check (--check-f64).
void gemm_f64_nt(std::size_t M, std::size_t N, std::size_t K, const double* a, std::size_t lda,
                 const double* b, std::size_t ldb, double* c, std::size_t ldc);

// Sets OpenBLAS's thread count for the lifetime of the guard and restores the
// previous count after.
class BlasThreads {
 public:
  explicit BlasThreads(int n);
  ~BlasThreads();
  BlasThreads(const BlasThreads&) = delete;
  BlasThreads& operator=(const BlasThreads&) = delete;

 private:
  int saved_;
};

// ---- per-head attention (kernels/score_tile.cpp, kernels/attend_stream.cpp,
// kernels/attend_maps.cpp) ----

// One (batch, head) of the score space (CONTRACT.md "Scores, in order").
// q (L, D) is a matrix inside the projection buffer, addressed by pointer
// offset and leading dimension; k^T (D, T') and v (T', D) are packed once
// per (batch, KV head) (query heads of one KV group share them). T' = T keys plus the extra columns
// of torch MHA (bias_kv, zero_attn) at [T, T'), which every mask treats as allowed and no position
// bias touches.
struct HeadView {
  const float* q = nullptr;  // (L, D), stride ld_q; row i at q + (i - q_row0) * ld_q
  std::size_t q_row0 = 0;    // 0, or a query block's first row where q holds that block alone
  Panels kt;                 // k^T (D, T'): key j in column j
  Panels v;                  // (T', Dv)
  float* y = nullptr;        // (L, Dv), stride ld_y; may alias q (each task reads
                             // its q rows before writing the same y rows)
  std::size_t ld_q = 0, ld_y = 0;
  std::size_t L = 0, T = 0, T_ext = 0, D = 0;  // T_ext = T'; D: q's and k's head size
  // v's and y's head size where it is not D (DeepSeek's mla: 128 against q.k's
  // 192), or 0 = D. Columns past it in v's panels and in y are not read or written.
  std::size_t Dv = 0;
  std::size_t value_width() const { return Dv ? Dv : D; }
  float scale = 1.0f;
  float softcap = 0.0f;    // 0 = none
  bool causal = false;     // key j > query i disallowed
  std::size_t window = 0;  // W: i - W < j (and j - i < W without causal); 0 = none
  std::size_t chunk = 0;   // n: i / n == j / n (Llama 4's attention_chunk_size); 0 = none
  bool alibi = false;      // s += alibi_slope * (pos_k[j] - pos_q[i])
  float alibi_slope = 0.0f;
  const std::int64_t* pos_q = nullptr;  // (L) positions of the queries (alibi, relative bias)
  const std::int64_t* pos_k = nullptr;  // (T) positions of the keys (alibi, relative bias)
  // T5's relative bias of this head by relative position: s += rel_bias[r - rel_lo]
  // for r = pos_k[j] - pos_q[i] clamped to [rel_lo, rel_hi] (the buckets are
  // constant past the clamp); nullptr = none.
  const float* rel_bias = nullptr;
  std::int64_t rel_lo = 0, rel_hi = 0;
  bool rel_by_index = false;  // positions are 0..L-1: r = j - i, a slice of rel_bias per row
  // DeBERTa's disentangled terms of this head: s += c2p[i * dis_R2 + r] +
  // p2c[j * dis_R2 + r], r = dis_index[pos_q[i] - pos_k[j] - dis_lo]; c2p (L,
  // R2) and p2c (T, R2) each nullptr when off; dis_index nullptr = none.
  const float* c2p = nullptr;
  const float* p2c = nullptr;
  std::size_t dis_R2 = 0;
  const std::int32_t* dis_index = nullptr;
  std::int64_t dis_lo = 0;
  // (L) 1 = a padded query: its whole row is masked (DeBERTa), or nullptr.
  const std::uint8_t* query_padding = nullptr;
  const std::uint8_t* padding = nullptr;  // (T) 1 = padded key, or nullptr
  // Keys outside [key_begin, key_end) are all padded; holes = some padded
  // key lies inside (then the mask bytes are consulted per tile).
  std::size_t key_begin = 0, key_end = 0;
  bool holes = false;
  // torch's attn_mask rows of this (batch, head): row i at mask + i * T.
  const float* mask_add = nullptr;           // additive, or nullptr
  const std::uint8_t* mask_block = nullptr;  // 1 = not allowed, or nullptr
  bool has_sink = false;  // gpt-oss: a logit that joins each softmax row, then dropped
  float sink = 0.0f;
  std::size_t batch = 0, head = 0;  // for naming an overflow
  bool check_overflow = true;

  // Whether each row's causal prefix holds scale * q k^T as the product left
  // it: nothing capped, added or masked inside it, so an infinite score there
  // is an overflow and nothing else.
  bool scores_unchanged() const {
    return softcap == 0.0f && !alibi && !rel_bias && !dis_index && !mask_add && !mask_block &&
           !holes && window == 0 && chunk == 0 && !query_padding;
  }
};

// Of a tile's keys [j0, j0 + mb), the first ones query row i may see under
// causal: all mb without causal or for the extra keys (j0 >= T). Step 7 makes
// the rest of the row -inf, so the passes over a row after it stop there.
inline std::size_t causal_prefix(const HeadView& hv, std::size_t i, std::size_t j0,
                                 std::size_t mb) {
  if (!hv.causal || j0 >= hv.T) return mb;
  return i + 1 > j0 ? std::min(mb, i + 1 - j0) : 0;
}

// Per-worker scratch, grown on demand and reused across tasks.
struct Scratch {
  WarmBuffer q;                       // the block's q rows packed (n, D) (queries_packed)
  WarmBuffer scores;                  // score tile, (n, kKeyBlock): unset until scored
  WarmBuffer acc;                     // (n, D) output accumulator
  std::vector<float> m, l;            // running max and sum per query row
  std::vector<std::uint8_t> allowed;  // per query row: some key allowed
};

// Rows per task and keys per streaming tile. Measured on a GPT-2-small layer
// (D = 64): 128 x 256 beat 64 x 256 by about 10% and 32 x 256 by 30% (fewer
// re-packings of q and k per FLOP). Keys: 512 against 256, with the query
// block packed (Zen 5, pairs in turns): the attention stage of a GPT-2 layer
// 22.1 -> 21.3 ms, of a Llama-3-8B-shaped layer at S = 2048 93.7 -> 92.3 ms;
// 128 was 3-5% slower than 256 (one head, one core).
constexpr std::size_t kQueryBlock = 128;
constexpr std::size_t kKeyBlock = 512;
// Rows per task where a head's keys and values outgrow the caches (T x D of
// 2^20 floats or more: 8 MiB of k^T and v panels), so each tile of them read
// from L3 or memory serves twice the rows. One head at D = 128 on one core
// (Zen 5, pairs in turns): S = 16384 causal 5.8% faster, S = 8192 3.6%; at
// S = 2048-4096, where they stay in cache, 0.7-1.3% slower (the tile's 512
// KiB and the block's q and acc no longer fit L2 beside k and v).
// Builds whose tiles are OpenBLAS's (narrower than AVX2) keep kQueryBlock:
// its products' bits depend on the rows of a call, and a run's context must
// not change with what else it writes (maps take blocks of kQueryBlock).
constexpr std::size_t kLongQueryBlock = 256;
std::size_t query_block(std::size_t T, std::size_t D);

// The keys [begin, end) among the T real ones that some row of the query
// block [i0, i0+n) may attend: padding's range, cut by causal and the sliding
// window. Tiles outside it are never computed.
struct KeySpan {
  std::size_t begin = 0, end = 0;
};
KeySpan block_keys(const HeadView& hv, std::size_t i0, std::size_t n);

// hv with the query block [i0, i0+n)'s q rows copied to `buffer`, contiguous
// (ld_q = D, q_row0 = i0), when they lie further apart in the projection
// buffer: each tile's product reads the block once per panel of keys, and rows
// H*D floats apart (a multiple of 4 KiB for most layers) share a few of L1's
// sets and evict each other between the reads (a Llama-shaped head at S = 2048,
// D = 128: 4-6% of the kernel's time).
HeadView queries_packed(const HeadView& hv, std::size_t i0, std::size_t n, WarmBuffer& buffer);

// Score tile, steps 3-7 of the contract: tile (n, mb) with leading dimension
// ldt = scale * q[i0:i0+n] k[j0:j0+mb]^T, softcapped, alibi, the relative
// bias and the additive mask added, and -inf where a key is not allowed (causal, window, padding,
// bool mask). Keys j0.. at or past T are the extra columns: only scale and
// softcap apply. Masking runs elementwise only where the tile needs it.
// prefix_only (the streaming kernel, which reads each row's causal prefix
// alone): nothing is written past a row's prefix, and where the scores are
// unchanged (HeadView::scores_unchanged) their overflow check is the
// caller's, in its pass for the row max.
void score_tile(const HeadView& hv, std::size_t i0, std::size_t n, std::size_t j0, std::size_t mb,
                float* tile, std::size_t ldt, bool prefix_only = false);

// Rows [i0, i0+n) of the scores as score_tile makes them, whole: (n, T')
// row-major, -inf at every key that is not allowed (keys outside
// block_keys filled, not computed). For --save scores (hook_attn_scores).
void score_rows(const HeadView& hv, std::size_t i0, std::size_t n, float* rows);

// Streaming path: y rows [i0, i0+n) by online softmax over key tiles
// (running max and sum in float32, score tile n x kKeyBlock in cache, P·V by
// GEMM); tiles outside block_keys are skipped. Returns the rows with no
// allowed key (their y = 0). With `digest` (begun for this block) the map
// reductions are computed on the way (row_digest.h): call its finish with
// scratch.m, scratch.l and scratch.allowed after; when it asks for the
// fallback (a NaN or +inf score) y is not written: run attend_maps instead.
class RowDigest;
std::size_t attend_stream(const HeadView& hv, std::size_t i0, std::size_t n, Scratch& scratch,
                          RowDigest* digest = nullptr);

// Maps path: exact softmax rows [i0, i0+n) written to rows (n, T') row-major
// (zeros where not allowed; keys outside block_keys filled, not computed) and
// y rows by GEMM of those rows with v. Returns the rows with no allowed key.
std::size_t attend_maps(const HeadView& hv, std::size_t i0, std::size_t n, Scratch& scratch,
                        float* rows);

}  // namespace attn::kernels
