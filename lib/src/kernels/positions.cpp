// RoPE frequencies and rotation, ALiBi slopes (positions.h). The frequency
// rules follow transformers' modeling_rope_utils (_compute_*_parameters) step
// for step, in the arithmetic type T: double (the default, CONTRACT.md
// "Positions") or float, each tensor operation rounded to float32 as
// transformers runs them (rope.precision "float32"). The scalars its Python
// computes (factors, YaRN's correction range, dynamic's base) stay double.
// This file compiles without fused multiply-adds (CMakeLists.txt), so each
// product is rounded as torch's separate operations round it.
//
// Letters: H heads, D head size, R rotary_dim.
#include "attn/positions.h"

#include <algorithm>
#include <cmath>

#include "attn/error.h"

namespace attn {

namespace {

constexpr double kPi = 3.14159265358979323846;

[[noreturn]] void missing(const std::string& type, const std::string& field) {
  throw Error(Exit::config, "rope.scaling: rope_type \"" + type + "\" needs \"" + field + "\"");
}

double need(const std::optional<double>& v, const std::string& type, const std::string& field) {
  if (!v) missing(type, field);
  return *v;
}

// base^e as T: the power of the rounded operands, rounded once.
template <class T>
T power(T base, T e) {
  return T(std::pow(double(base), double(e)));
}

// theta^(-2i/R) for i = 0..R/2-1: the unscaled inverse frequencies,
// 1 / (base ** (arange(0, R, 2) / R)).
template <class T>
std::vector<T> default_inv_freq(double theta, std::size_t R) {
  std::vector<T> f(R / 2);
  for (std::size_t i = 0; i < f.size(); ++i)
    f[i] = T(1) / power(T(theta), T(double(2 * i)) / T(double(R)));
  return f;
}

// YaRN's attention factor helper (get_mscale in modeling_rope_utils).
double yarn_mscale(double scale, double mscale) {
  return scale <= 1.0 ? 1.0 : 0.1 * mscale * std::log(scale) + 1.0;
}

// The context the model was trained with: the scaling's
// original_max_position_embeddings, else the rope's max_position_embeddings.
std::int64_t original_context(const RopeSpec& s, const RopeScaling& sc, const char* type) {
  if (sc.original_max_position_embeddings) return *sc.original_max_position_embeddings;
  if (s.max_position_embeddings) return *s.max_position_embeddings;
  throw Error(Exit::config, std::string("rope.max_position_embeddings: rope_type \"") + type +
                                "\" without original_max_position_embeddings needs it");
}

// The inverse frequencies in T and the attention factor (always double: a
// Python float in transformers).
template <class T>
struct Frequencies {
  std::vector<T> inv_freq;
  double attention_factor = 1.0;
};

template <class T>
void yarn(const RopeSpec& s, const RopeScaling& sc, std::size_t R, Frequencies<T>& f) {
  std::optional<double> factor = sc.factor;
  const std::int64_t orig = original_context(s, sc, "yarn");
  if (!factor && sc.original_max_position_embeddings && s.max_position_embeddings)
    factor = double(*s.max_position_embeddings) / double(orig);
  const double fac = need(factor, "yarn", "factor");

  if (sc.attention_factor) {
    f.attention_factor = *sc.attention_factor;
  } else if (sc.mscale && sc.mscale_all_dim && *sc.mscale != 0.0 && *sc.mscale_all_dim != 0.0) {
    f.attention_factor = yarn_mscale(fac, *sc.mscale) / yarn_mscale(fac, *sc.mscale_all_dim);
  } else {
    f.attention_factor = yarn_mscale(fac, 1.0);
  }
  // `x or default` in Python: 0 means the default too.
  const double beta_fast = sc.beta_fast && *sc.beta_fast != 0.0 ? *sc.beta_fast : 32.0;
  const double beta_slow = sc.beta_slow && *sc.beta_slow != 0.0 ? *sc.beta_slow : 1.0;

  // Dimension at which a frequency makes `rotations` turns over `orig` positions.
  auto correction_dim = [&](double rotations) {
    return double(R) * std::log(double(orig) / (rotations * 2.0 * kPi)) / (2.0 * std::log(s.theta));
  };
  double low = correction_dim(beta_fast), high = correction_dim(beta_slow);
  if (sc.truncate) low = std::floor(low), high = std::ceil(high);
  low = std::max(low, 0.0);
  high = std::min(high, double(R) - 1.0);
  if (low == high) high += 0.001;  // as transformers: no singularity

  // pos_freqs = base ** (arange(0, R, 2) / R); extrapolation 1 / pos_freqs,
  // interpolation 1 / (factor * pos_freqs); the ramp (arange(R / 2) - low) /
  // (high - low) clamped to [0, 1]; inv = interpolation * (1 - share) +
  // extrapolation * share with share = 1 - ramp.
  f.inv_freq.resize(R / 2);
  for (std::size_t i = 0; i < R / 2; ++i) {
    const T pos_freq = power(T(s.theta), T(double(2 * i)) / T(double(R)));
    const T extrapolation = T(1) / pos_freq, interpolation = T(1) / (T(fac) * pos_freq);
    const T ramp = std::clamp((T(double(i)) - T(low)) / T(high - low), T(0), T(1));
    const T share = T(1) - ramp;
    f.inv_freq[i] = interpolation * (T(1) - share) + extrapolation * share;
  }
}

template <class T>
void llama3(const RopeSpec& s, const RopeScaling& sc, std::size_t R, Frequencies<T>& f) {
  f.inv_freq = default_inv_freq<T>(s.theta, R);
  if (!sc.freq_factors.empty()) return;  // GGUF's rope_freqs: the rule's divisors as stored
  const double factor = need(sc.factor, "llama3", "factor");
  const double low_ff = need(sc.low_freq_factor, "llama3", "low_freq_factor");
  const double high_ff = need(sc.high_freq_factor, "llama3", "high_freq_factor");
  if (!sc.original_max_position_embeddings) missing("llama3", "original_max_position_embeddings");
  const double old_len = double(*sc.original_max_position_embeddings);
  const double low_wavelen = old_len / low_ff, high_wavelen = old_len / high_ff;
  for (T& inv : f.inv_freq) {
    const T wavelen = T(2.0 * kPi) / inv;
    if (wavelen > T(low_wavelen)) {
      inv /= T(factor);
    } else if (high_ff > low_ff && !(wavelen < T(high_wavelen))) {  // the medium band: blend
      // (With equal factors there is no band: Llama 4's 1.0 and 1.0.)
      const T smooth = (T(old_len) / wavelen - T(low_ff)) / T(high_ff - low_ff);
      inv = (T(1) - smooth) * inv / T(factor) + smooth * inv;
    }
  }
}

template <class T>
void longrope(const RopeSpec& s, const RopeScaling& sc, std::size_t R, std::int64_t seq_len,
              Frequencies<T>& f) {
  const std::int64_t orig = original_context(s, sc, "longrope");
  std::optional<double> factor = sc.factor;
  if (!factor && s.max_position_embeddings)
    factor = double(*s.max_position_embeddings) / double(orig);
  const double fac = factor.value_or(1.0);
  if (sc.attention_factor) {
    f.attention_factor = *sc.attention_factor;
  } else {
    f.attention_factor = fac <= 1.0 ? 1.0 : std::sqrt(1.0 + std::log(fac) / std::log(double(orig)));
  }
  const bool long_seq = seq_len > orig;
  const std::vector<double>& ext = long_seq ? sc.long_factor : sc.short_factor;
  if (ext.size() != R / 2)
    throw Error(Exit::config, std::string("rope.scaling.") +
                                  (long_seq ? "long_factor" : "short_factor") + ": expected " +
                                  std::to_string(R / 2) + " numbers (rotary_dim / 2), found " +
                                  std::to_string(ext.size()));
  // 1 / (ext_factors * base ** (arange(0, R, 2) / R))
  f.inv_freq.resize(R / 2);
  for (std::size_t i = 0; i < R / 2; ++i)
    f.inv_freq[i] = T(1) / (T(ext[i]) * power(T(s.theta), T(double(2 * i)) / T(double(R))));
}

template <class T>
Frequencies<T> frequencies(const RopeSpec& s, std::int64_t seq_len) {
  const std::size_t R = static_cast<std::size_t>(s.rotary_dim);
  if (R == 0 || R % 2 != 0)
    throw Error(Exit::config, "rope.rotary_dim: expected an even number > 0, found " +
                                  std::to_string(s.rotary_dim));
  if (!(s.theta > 0.0) || !std::isfinite(s.theta))
    throw Error(Exit::config, "rope.theta: expected a finite number > 0");
  Frequencies<T> f;
  if (!s.scaling || s.scaling->type == "default") {
    f.inv_freq = default_inv_freq<T>(s.theta, R);
    return f;
  }
  const RopeScaling& sc = *s.scaling;
  if (sc.type == "linear") {
    const double factor = need(sc.factor, "linear", "factor");
    f.inv_freq = default_inv_freq<T>(s.theta, R);
    for (T& inv : f.inv_freq) inv /= T(factor);
  } else if (sc.type == "dynamic") {
    const double factor = need(sc.factor, "dynamic", "factor");
    if (!s.max_position_embeddings)
      throw Error(Exit::config, "rope.max_position_embeddings: rope_type \"dynamic\" needs it");
    if (R <= 2)
      throw Error(Exit::config, "rope.rotary_dim: rope_type \"dynamic\" needs rotary_dim > 2");
    const double mpe = double(*s.max_position_embeddings);
    const double len = std::max(double(seq_len), mpe);
    const double base =
        s.theta * std::pow(factor * len / mpe - (factor - 1.0), double(R) / double(R - 2));
    f.inv_freq = default_inv_freq<T>(base, R);
  } else if (sc.type == "yarn") {
    yarn(s, sc, R, f);
  } else if (sc.type == "llama3") {
    llama3(s, sc, R, f);
  } else if (sc.type == "longrope") {
    longrope(s, sc, R, seq_len, f);
  } else if (sc.type == "proportional") {
    // _compute_proportional_rope_parameters (Gemma 4's global layers): over
    // the whole rotary_dim R, the first int(p * R // 2) frequencies are
    // theta^(-2i/R) (R, not the rotated part, in the exponent), the rest 0
    // (those pairs pass unchanged), all divided by factor (default 1).
    const double p = sc.partial_rotary_factor.value_or(1.0);
    const auto angles = static_cast<std::size_t>(std::floor(p * double(R) / 2.0));
    f.inv_freq = default_inv_freq<T>(s.theta, R);
    const double factor = sc.factor.value_or(1.0);
    for (std::size_t i = 0; i < f.inv_freq.size(); ++i)
      f.inv_freq[i] = i < angles ? f.inv_freq[i] / T(factor) : T(0);
  } else {
    throw Error(Exit::config,
                "rope.scaling: unknown rope_type \"" + sc.type +
                    "\" (expected linear, dynamic, yarn, llama3, longrope or proportional)");
  }
  // llama.cpp's rope_freqs.weight: theta / freq_factors[i] after the type's rule
  // (ggml_rope_ext; with yarn the ramp is by dimension, so dividing after is the same).
  if (!sc.freq_factors.empty()) {
    if (sc.freq_factors.size() != f.inv_freq.size())
      throw Error(Exit::config,
                  "rope.scaling.freq_factors: expected " + std::to_string(f.inv_freq.size()) +
                      " numbers (rotary_dim / 2), found " + std::to_string(sc.freq_factors.size()));
    for (std::size_t i = 0; i < f.inv_freq.size(); ++i) f.inv_freq[i] /= T(sc.freq_factors[i]);
  }
  return f;
}

}  // namespace

std::vector<std::uint8_t> mrope_rows(const RopeSpec& spec) {
  std::vector<std::uint8_t> rows;
  if (spec.mrope_section.size() != 3) return rows;
  const std::size_t half = static_cast<std::size_t>(spec.rotary_dim / 2);
  const auto t = std::size_t(spec.mrope_section[0]), h = std::size_t(spec.mrope_section[1]),
             w = std::size_t(spec.mrope_section[2]);
  rows.assign(half, 0);
  for (std::size_t i = 0; i < half; ++i) {
    if (spec.mrope_interleaved) {
      // apply_interleaved_mrope: freqs_t[..., offset:3 * section:3] = freqs[row]
      // for (row, offset) = (1, 1) height, (2, 2) width; the rest stay time.
      if (i % 3 == 1 && i < 3 * h) rows[i] = 1;
      if (i % 3 == 2 && i < 3 * w) rows[i] = 2;
    } else if (i >= t) {
      // apply_multimodal_rotary_pos_emb: cos.split(mrope_section * 2), chunk
      // k from row k % 3; per half of the R/2 frequencies, t then h then w.
      rows[i] = i < t + h ? 1 : 2;
    }
  }
  return rows;
}

RopeFrequencies rope_frequencies(const RopeSpec& s, std::int64_t seq_len) {
  RopeFrequencies out;
  out.precision = s.precision;
  out.row_of = mrope_rows(s);
  if (s.precision == RopePrecision::float32) {
    const Frequencies<float> f = frequencies<float>(s, seq_len);
    out.inv_freq.assign(f.inv_freq.begin(), f.inv_freq.end());
    out.attention_factor = f.attention_factor;
  } else {
    Frequencies<double> f = frequencies<double>(s, seq_len);
    out.inv_freq = std::move(f.inv_freq);
    out.attention_factor = f.attention_factor;
  }
  return out;
}

namespace {

// cos and sin of frequency i at position_of(i), in f's precision.
template <class PositionOf>
void angles_at(const RopeFrequencies& f, PositionOf position_of, float* cos, float* sin) {
  if (f.precision == RopePrecision::float32) {
    // transformers' rotary embedding: float32 inv_freq @ float32 positions,
    // cos and sin in float32, each times attention_scaling in float32.
    const float factor = float(f.attention_factor);
    for (std::size_t i = 0; i < f.inv_freq.size(); ++i) {
      const float angle = float(position_of(i)) * float(f.inv_freq[i]);
      cos[i] = float(std::cos(double(angle))) * factor;
      sin[i] = float(std::sin(double(angle))) * factor;
    }
    return;
  }
  for (std::size_t i = 0; i < f.inv_freq.size(); ++i) {
    const double angle = double(position_of(i)) * f.inv_freq[i];
    cos[i] = static_cast<float>(std::cos(angle) * f.attention_factor);
    sin[i] = static_cast<float>(std::sin(angle) * f.attention_factor);
  }
}

}  // namespace

void rope_angles(const RopeFrequencies& f, std::int64_t position, float* cos, float* sin) {
  angles_at(
      f, [position](std::size_t) { return position; }, cos, sin);
}

void rope_angles(const RopeFrequencies& f, const std::int64_t rows[3], float* cos, float* sin) {
  if (f.row_of.empty()) return rope_angles(f, rows[0], cos, sin);
  angles_at(
      f, [&](std::size_t i) { return rows[f.row_of[i]]; }, cos, sin);
}

void rope_rotate(float* x, std::size_t heads, std::size_t D, std::size_t R, RopeStyle style,
                 const float* cos, const float* sin) {
  const std::size_t half = R / 2;
  for (std::size_t h = 0; h < heads; ++h) {
    float* v = x + h * D;
    if (style == RopeStyle::half) {
      // Same as HF apply_rotary_pos_emb: x * cos + rotate_half(x) * sin.
      for (std::size_t i = 0; i < half; ++i) {
        const float a = v[i], b = v[i + half];
        v[i] = a * cos[i] - b * sin[i];
        v[i + half] = b * cos[i] + a * sin[i];
      }
    } else {
      for (std::size_t i = 0; i < half; ++i) {
        const float a = v[2 * i], b = v[2 * i + 1];
        v[2 * i] = a * cos[i] - b * sin[i];
        v[2 * i + 1] = b * cos[i] + a * sin[i];
      }
    }
  }
}

void apply_rope(float* base, std::size_t n, std::size_t ld, std::size_t q_col, std::size_t H,
                std::size_t k_col, std::size_t Hkv, std::size_t D, const std::int64_t* positions,
                const RopeSpec& spec, const RopeFrequencies& f, std::size_t row_stride) {
  if (n == 0) return;
  const std::size_t R = static_cast<std::size_t>(spec.rotary_dim), half = R / 2;
  const auto [lo_it, hi_it] = std::minmax_element(positions, positions + n);
  const std::int64_t lo = *lo_it, hi = *hi_it;
  // mrope's three rows: each token's angles from its own rows.
  const bool rows = row_stride > 0 && !f.row_of.empty();
  // Dense positions (the usual 0..S-1, repeated per batch row): one table of
  // cos/sin per distinct position. Sparse ones: computed row by row.
  const bool table = !rows && std::uint64_t(hi - lo) < 2 * std::uint64_t(n) + 64;
  std::vector<float> cs(table ? (std::size_t(hi - lo) + 1) * R : R);
  if (table)
    for (std::int64_t p = lo; p <= hi; ++p) {
      float* row = cs.data() + std::size_t(p - lo) * R;
      rope_angles(f, p, row, row + half);
    }
  for (std::size_t r = 0; r < n; ++r) {
    const float* row = cs.data();
    if (table) {
      row += std::size_t(positions[r] - lo) * R;
    } else if (rows) {
      const std::int64_t at[3] = {positions[r], positions[r + row_stride],
                                  positions[r + 2 * row_stride]};
      rope_angles(f, at, cs.data(), cs.data() + half);
    } else {
      rope_angles(f, positions[r], cs.data(), cs.data() + half);
    }
    float* x = base + r * ld;
    rope_rotate(x + q_col, H, D, R, spec.style, row, row + half);
    rope_rotate(x + k_col, Hkv, D, R, spec.style, row, row + half);
  }
}

std::vector<double> alibi_slopes(std::size_t H, double max_bias) {
  // MPT's gen_slopes, which equals BLOOM's build_alibi_tensor for max_bias 8:
  // slopes of the next power of two, then every other one interleaved.
  std::size_t n = 1;
  while (n < H) n *= 2;
  std::vector<double> all(n);
  for (std::size_t i = 0; i < n; ++i) all[i] = std::pow(2.0, -double(i + 1) * max_bias / double(n));
  if (n == H) return all;
  std::vector<double> out;
  for (std::size_t i = 1; i < n; i += 2) out.push_back(all[i]);
  for (std::size_t i = 0; i < n; i += 2) out.push_back(all[i]);
  out.resize(H);
  return out;
}

std::int64_t relative_position_bucket(std::int64_t rel, const RelativeBiasSpec& spec) {
  // As modeling_t5.T5Attention._relative_position_bucket, step by step.
  std::int64_t buckets = spec.num_buckets, bucket = 0;
  if (spec.bidirectional) {
    buckets /= 2;
    if (rel > 0) bucket += buckets;
    rel = rel < 0 ? -rel : rel;
  } else {
    rel = rel < 0 ? -rel : 0;  // -min(rel, 0): a later key counts as distance 0
  }
  const std::int64_t max_exact = buckets / 2;
  if (rel < max_exact) return bucket + rel;
  // Beyond max_distance every position lands in the last bucket; clamping
  // first keeps the float conversion exact.
  rel = std::min(rel, spec.max_distance);
  // torch: float32 tensors throughout; math.log(...) is a Python float that
  // torch rounds to float32 before dividing.
  const float ratio = static_cast<float>(rel) / static_cast<float>(max_exact);
  const float denom = static_cast<float>(std::log(double(spec.max_distance) / double(max_exact)));
  const float scaled = std::log(ratio) / denom * static_cast<float>(buckets - max_exact);
  const std::int64_t large =
      std::min(max_exact + static_cast<std::int64_t>(scaled), buckets - 1);  // .to(long): truncates
  return bucket + large;
}

std::int64_t log_bucket_position(std::int64_t rel, std::int64_t bucket_size,
                                 std::int64_t max_position) {
  if (bucket_size <= 0 || max_position <= 0) return rel;
  const std::int64_t mid = bucket_size / 2;
  // abs_pos = where(-mid < rel < mid, mid - 1, |rel|): inside, rel itself is the bucket.
  const std::int64_t abs_pos = (rel < mid && rel > -mid) ? mid - 1 : (rel < 0 ? -rel : rel);
  if (abs_pos <= mid) return rel;
  // torch: abs_pos / mid in float32, torch.log in float32, the divisor
  // torch.tensor((max_position - 1) / mid) a Python float rounded to float32.
  const float ratio = static_cast<float>(abs_pos) / static_cast<float>(mid);
  const float denom = std::log(static_cast<float>(double(max_position - 1) / double(mid)));
  const float log_pos =
      std::ceil(std::log(ratio) / denom * static_cast<float>(mid - 1)) + static_cast<float>(mid);
  const std::int64_t bucket = static_cast<std::int64_t>(log_pos);
  return rel < 0 ? -bucket : bucket;
}

}  // namespace attn
