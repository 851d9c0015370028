// Position information of CONTRACT.md "Positions": rotary embeddings (RoPE,
// with Hugging Face's rope_scaling types) and ALiBi slopes. Pure functions of
// the settings: the forward pass applies them (rope once per position, right
// after the projection; alibi inside the score tiles).
//
// Letters: S sequence, H heads, D head size, R rotary_dim (even, <= D).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "attn/scores.h"

namespace attn {

// inv_freq (R/2) and the factor that scales cos and sin, for a run
// whose positions are all < `seq_len` (dynamic and longrope depend on it, as
// transformers' dynamic_rope_update does with max(position_ids) + 1).
// Exit::config naming the rope key when a needed field is missing.
// With precision float32 each inv_freq is the float32 value transformers
// computes (held exactly in the double).
struct RopeFrequencies {
  std::vector<double> inv_freq;
  double attention_factor = 1.0;
  RopePrecision precision = RopePrecision::float64;
  // mrope (RopeSpec::mrope_section): the position row each frequency turns
  // at (0 time, 1 height, 2 width), R/2 of them; empty without sections.
  std::vector<std::uint8_t> row_of;
};
RopeFrequencies rope_frequencies(const RopeSpec& spec, std::int64_t seq_len);

// cos and sin of position * inv_freq, computed in float64 then scaled by the
// attention factor and rounded to float32 (CONTRACT.md: exact at any
// position); with precision float32, as transformers computes them (the
// float32 angle, its float32 cos and sin times the factor in float32).
// cos and sin are (R/2) each.
void rope_angles(const RopeFrequencies& f, std::int64_t position, float* cos, float* sin);

// The same at a token of mrope's three rows: frequency i at rows[row_of[i]]
// (rows[0] for every frequency when f has no row_of).
void rope_angles(const RopeFrequencies& f, const std::int64_t rows[3], float* cos, float* sin);

// mrope's row of each of the R/2 frequencies (RopeSpec's comment); empty
// without mrope_section. Sections are checked by the config (sum R/2).
std::vector<std::uint8_t> mrope_rows(const RopeSpec& spec);

// Rotates the first R dimensions of `heads` head vectors of D floats each in
// place, all at one position: x is heads blocks of D starting every D floats.
// half: pairs (x[i], x[i + R/2]); interleaved: pairs (x[2i], x[2i + 1]).
void rope_rotate(float* x, std::size_t heads, std::size_t D, std::size_t R, RopeStyle style,
                 const float* cos, const float* sin);

// Rotates q and k rows of a projection buffer in place: rows r = 0..n-1 at
// base + r * ld, q heads at column q_col (H heads of D), k heads at k_col
// (Hkv heads of D); position of row r is positions[r]. cos/sin are computed
// once per distinct position (a table when positions are dense). With mrope
// rows (f.row_of and row_stride > 0) row r's height and width positions are
// positions[r + row_stride] and positions[r + 2 * row_stride]; row_stride 0
// is one row for all three (text positions: the plain rope).
void apply_rope(float* base, std::size_t n, std::size_t ld, std::size_t q_col, std::size_t H,
                std::size_t k_col, std::size_t Hkv, std::size_t D, const std::int64_t* positions,
                const RopeSpec& spec, const RopeFrequencies& f, std::size_t row_stride = 0);

// ALiBi slopes for H heads with max_bias (BLOOM's and MPT's formula: geometric
// for a power of two, interleaved extra slopes otherwise), in float64.
std::vector<double> alibi_slopes(std::size_t H, double max_bias = 8.0);

// T5's bucket of a relative position rel = pos_key - pos_query, exactly as
// modeling_t5.T5Attention._relative_position_bucket computes it: half the
// buckets for rel > 0 when bidirectional (else rel > 0 counts as 0), exact
// buckets below max_exact = buckets / 2, then log-spaced up to max_distance,
// the log part in float32 as torch evaluates it (log(rel / max_exact) /
// log(max_distance / max_exact) * (buckets - max_exact), truncated). Every
// |rel| >= max_distance falls in the last bucket of its side.
std::int64_t relative_position_bucket(std::int64_t rel, const RelativeBiasSpec& spec);

// DeBERTa's bucket of a relative position rel = pos_query - pos_key, as
// modeling_deberta_v2.make_log_bucket_position computes it in float32: rel
// itself where |rel| <= bucket_size / 2, else sign(rel) * (ceil(log(|rel| /
// mid) / log((max_position - 1) / mid) * (mid - 1)) + mid), mid = bucket_size
// / 2. bucket_size <= 0 or max_position <= 0: rel as it is
// (build_relative_position without buckets).
std::int64_t log_bucket_position(std::int64_t rel, std::int64_t bucket_size,
                                 std::int64_t max_position);

}  // namespace attn
