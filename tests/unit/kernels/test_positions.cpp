// positions.h against tests/golden/positions/cases.json (tests/golden/gen/positions.py:
// transformers' modeling_rope_utils, HF/GPT-J rotations, BLOOM/MPT slopes, in
// torch float64).
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include "attn/error.h"
#include "attn/positions.h"

using nlohmann::json;

namespace {

json load() {
  std::ifstream in(std::string(ATTN_SOURCE_DIR) + "/tests/golden/positions/cases.json");
  REQUIRE(in.good());
  return json::parse(in);
}

// One parse for every test case (a loop over cases()[...] must not bind a temporary).
const json& cases() {
  static const json all = load();
  return all;
}

template <class T>
std::optional<T> opt(const json& j, const char* key) {
  if (!j.contains(key) || j[key].is_null()) return std::nullopt;
  return j[key].get<T>();
}

attn::RopeSpec spec_of(const json& c) {
  attn::RopeSpec s;
  s.theta = c["theta"].get<double>();
  s.rotary_dim = c["rotary_dim"].get<std::int64_t>();
  s.max_position_embeddings = opt<std::int64_t>(c, "max_position_embeddings");
  if (!c["scaling"].is_null()) {
    const json& j = c["scaling"];
    attn::RopeScaling sc;
    sc.type =
        j.contains("rope_type") ? j["rope_type"].get<std::string>() : j["type"].get<std::string>();
    sc.factor = opt<double>(j, "factor");
    sc.original_max_position_embeddings = opt<std::int64_t>(j, "original_max_position_embeddings");
    sc.low_freq_factor = opt<double>(j, "low_freq_factor");
    sc.high_freq_factor = opt<double>(j, "high_freq_factor");
    sc.beta_fast = opt<double>(j, "beta_fast");
    sc.beta_slow = opt<double>(j, "beta_slow");
    sc.attention_factor = opt<double>(j, "attention_factor");
    sc.mscale = opt<double>(j, "mscale");
    sc.mscale_all_dim = opt<double>(j, "mscale_all_dim");
    sc.truncate = j.value("truncate", true);
    if (j.contains("short_factor")) sc.short_factor = j["short_factor"].get<std::vector<double>>();
    if (j.contains("long_factor")) sc.long_factor = j["long_factor"].get<std::vector<double>>();
    s.scaling = sc;
  }
  return s;
}

}  // namespace

TEST_CASE("rope_frequencies: every rope_scaling type matches modeling_rope_utils in float64") {
  for (const json& c : cases()["rope"]) {
    CAPTURE(c["name"].get<std::string>());
    const attn::RopeFrequencies f =
        attn::rope_frequencies(spec_of(c), c["seq_len"].get<std::int64_t>());
    const auto want = c["inv_freq"].get<std::vector<double>>();
    REQUIRE(f.inv_freq.size() == want.size());
    double worst = 0;
    for (std::size_t i = 0; i < want.size(); ++i)
      worst = std::max(worst, std::abs(f.inv_freq[i] - want[i]) / want[i]);
    CHECK(worst < 1e-12);
    CHECK(f.attention_factor ==
          doctest::Approx(c["attention_factor"].get<double>()).epsilon(1e-14));
  }
}

TEST_CASE(
    "rope precision float32: inv_freq, cos and sin as transformers' float32 rotary embedding") {
  // inv_freq: each within one float32 rounding of torch's, and most equal (torch's float32 pow,
  // SLEEF's within 1 ulp, is not always the correctly rounded power this one takes). cos and
  // sin from torch's own inv_freq at positions up to seq_len - 1: within two float32 roundings
  // of torch's, while the float64 angles there differ by far more.
  std::size_t equal = 0, all = 0;
  double far_from_float64 = 0;
  for (const json& c : cases()["rope"]) {
    CAPTURE(c["name"].get<std::string>());
    attn::RopeSpec s = spec_of(c);
    s.precision = attn::RopePrecision::float32;
    const std::int64_t seq_len = c["seq_len"].get<std::int64_t>();
    const attn::RopeFrequencies f = attn::rope_frequencies(s, seq_len);
    const json& t = c["float32"];
    const auto want = t["inv_freq"].get<std::vector<double>>();
    REQUIRE(f.inv_freq.size() == want.size());
    for (std::size_t i = 0; i < want.size(); ++i) {
      CAPTURE(i);
      CHECK(double(float(f.inv_freq[i])) == f.inv_freq[i]);  // a float32 value
      CHECK(std::abs(f.inv_freq[i] - want[i]) <= 1.2e-7 * std::abs(want[i]));
      equal += f.inv_freq[i] == want[i];
      ++all;
    }
    CHECK(f.attention_factor == doctest::Approx(t["attention_factor"].get<double>()));

    attn::RopeFrequencies torch_freqs = f;
    torch_freqs.inv_freq = want;
    attn::RopeSpec exact = s;
    exact.precision = attn::RopePrecision::float64;
    const attn::RopeFrequencies f64 = attn::rope_frequencies(exact, seq_len);
    const std::size_t half = want.size();
    std::vector<float> cs(half), sn(half), cs64(half), sn64(half);
    const auto positions = t["positions"].get<std::vector<std::int64_t>>();
    for (std::size_t p = 0; p < positions.size(); ++p) {
      CAPTURE(positions[p]);
      attn::rope_angles(torch_freqs, positions[p], cs.data(), sn.data());
      attn::rope_angles(f64, positions[p], cs64.data(), sn64.data());
      const auto wc = t["cos"][p].get<std::vector<double>>();
      const auto ws = t["sin"][p].get<std::vector<double>>();
      const double tol = 2.4e-7 * std::max(1.0, f.attention_factor);
      for (std::size_t i = 0; i < half; ++i) {
        CHECK(std::abs(cs[i] - wc[i]) <= tol);
        CHECK(std::abs(sn[i] - ws[i]) <= tol);
        far_from_float64 = std::max(far_from_float64, double(std::abs(cs64[i] - wc[i])));
      }
    }
  }
  CHECK(double(equal) >= 0.97 * double(all));
  CHECK(far_from_float64 > 1e-5);  // the cases reach where the two arithmetics part
  MESSAGE("inv_freq equal to torch's float32: " << equal << " of " << all);
}

TEST_CASE("rope_rotate: half and interleaved styles, partial rotary, large positions") {
  for (const json& c : cases()["rotations"]) {
    const std::size_t D = c["D"], R = c["rotary_dim"];
    const std::int64_t pos = c["position"];
    CAPTURE(c["style"].get<std::string>());
    CAPTURE(D);
    CAPTURE(pos);
    attn::RopeSpec s;
    s.rotary_dim = static_cast<std::int64_t>(R);
    s.style = c["style"] == "half" ? attn::RopeStyle::half : attn::RopeStyle::interleaved;
    const attn::RopeFrequencies f = attn::rope_frequencies(s, pos + 1);
    std::vector<float> cs(R);
    attn::rope_angles(f, pos, cs.data(), cs.data() + R / 2);
    auto x = c["x"].get<std::vector<float>>();
    const auto y = c["y"].get<std::vector<double>>();
    attn::rope_rotate(x.data(), x.size() / D, D, R, s.style, cs.data(), cs.data() + R / 2);
    double worst = 0;
    for (std::size_t i = 0; i < y.size(); ++i) worst = std::max(worst, std::abs(x[i] - y[i]));
    CHECK(worst < 2e-6);  // float32 products of exact (float64) angles
  }
}

TEST_CASE("apply_rope: the position table and per-row angles give the rotation of each row") {
  const std::size_t H = 4, Hkv = 2, D = 16, ld = (H + 2 * Hkv) * D;
  attn::RopeSpec s;
  s.rotary_dim = 12;
  const attn::RopeFrequencies f = attn::rope_frequencies(s, 1 << 20);
  std::mt19937 gen(3);
  std::normal_distribution<float> nd;
  for (const std::vector<std::int64_t>& pos :
       {std::vector<std::int64_t>{0, 1, 2, 3, 0, 1, 2, 3}, {5, 900000, 17, 3, 123456, 0, 2, 1}}) {
    const std::size_t n = pos.size();
    std::vector<float> buf(n * ld);
    for (float& v : buf) v = nd(gen);
    std::vector<float> want = buf;
    std::vector<float> cs(12);
    for (std::size_t r = 0; r < n; ++r) {
      attn::rope_angles(f, pos[r], cs.data(), cs.data() + 6);
      attn::rope_rotate(want.data() + r * ld, H, D, 12, s.style, cs.data(), cs.data() + 6);
      attn::rope_rotate(want.data() + r * ld + H * D, Hkv, D, 12, s.style, cs.data(),
                        cs.data() + 6);
    }
    attn::apply_rope(buf.data(), n, ld, 0, H, H * D, Hkv, D, pos.data(), s, f);
    CHECK(buf == want);  // v untouched, q and k rotated exactly as row by row
  }
}

TEST_CASE("rope_frequencies: missing fields are config errors naming them") {
  attn::RopeSpec s;
  s.rotary_dim = 8;
  s.scaling = attn::RopeScaling{};
  s.scaling->type = "llama3";
  s.scaling->factor = 8.0;
  CHECK_THROWS_WITH_AS(attn::rope_frequencies(s, 10), doctest::Contains("low_freq_factor"),
                       attn::Error);
  s.scaling->type = "dynamic";
  CHECK_THROWS_WITH_AS(attn::rope_frequencies(s, 10), doctest::Contains("max_position_embeddings"),
                       attn::Error);
  s.scaling->type = "su";
  CHECK_THROWS_WITH_AS(attn::rope_frequencies(s, 10), doctest::Contains("unknown rope_type"),
                       attn::Error);
  s.scaling.reset();
  s.rotary_dim = 7;
  CHECK_THROWS_WITH_AS(attn::rope_frequencies(s, 10), doctest::Contains("rotary_dim"), attn::Error);
}

TEST_CASE("alibi_slopes: BLOOM's and MPT's formula, any head count and max_bias") {
  for (const json& c : cases()["alibi"]) {
    const std::size_t H = c["heads"];
    CAPTURE(H);
    const auto want = c["slopes"].get<std::vector<double>>();
    const auto got = attn::alibi_slopes(H, c["max_bias"].get<double>());
    REQUIRE(got.size() == want.size());
    for (std::size_t h = 0; h < H; ++h) CHECK(got[h] == doctest::Approx(want[h]).epsilon(1e-15));
  }
}

TEST_CASE("relative_position_bucket: T5's buckets as torch computes them, both directions") {
  // (32, 128) is T5's, Flan-T5's and mT5's; the small tables put the log part
  // and the saturation within a short sequence; positions run past
  // max_distance on both sides.
  REQUIRE(cases()["relative_buckets"].size() >= 10);
  for (const json& c : cases()["relative_buckets"]) {
    attn::RelativeBiasSpec s;
    s.num_buckets = c["num_buckets"].get<std::int64_t>();
    s.max_distance = c["max_distance"].get<std::int64_t>();
    s.bidirectional = c["bidirectional"].get<bool>();
    const std::int64_t first = c["first"].get<std::int64_t>();
    const auto expected = c["buckets"].get<std::vector<std::int64_t>>();
    CAPTURE(s.num_buckets);
    CAPTURE(s.max_distance);
    CAPTURE(s.bidirectional);
    for (std::size_t k = 0; k < expected.size(); ++k) {
      const std::int64_t rel = first + std::int64_t(k);
      CAPTURE(rel);
      CHECK(attn::relative_position_bucket(rel, s) == expected[k]);
    }
    // Far past max_distance: the last bucket of each side.
    CHECK(attn::relative_position_bucket(-(std::int64_t(1) << 40), s) == expected.front());
    CHECK(attn::relative_position_bucket(std::int64_t(1) << 40, s) == expected.back());
  }
}

TEST_CASE("rope_frequencies: freq_factors divide after the type's rule, as ggml's rope_freqs") {
  // Llama 3's rule (factor 8, low 1, high 4, original 32) over R = 8 at theta 500000, as
  // convert_hf_to_gguf.py's LlamaModel stores it: the divisor of each pair.
  attn::RopeSpec hf;
  hf.theta = 500000.0;
  hf.rotary_dim = 8;
  hf.scaling = attn::RopeScaling{};
  hf.scaling->type = "llama3";
  hf.scaling->factor = 8.0;
  hf.scaling->low_freq_factor = 1.0;
  hf.scaling->high_freq_factor = 4.0;
  hf.scaling->original_max_position_embeddings = 32;
  const std::vector<double> rule = attn::rope_frequencies(hf, 10).inv_freq;
  attn::RopeSpec plain = hf;
  plain.scaling.reset();
  const std::vector<double> base = attn::rope_frequencies(plain, 10).inv_freq;
  std::vector<double> ff;
  for (std::size_t i = 0; i < base.size(); ++i) ff.push_back(base[i] / rule[i]);
  CHECK(ff[0] == doctest::Approx(1.0));  // the fast pair turns as before
  CHECK(ff[3] == doctest::Approx(8.0));  // the slow one 8 times slower

  // llama3 given by its factors alone: the same frequencies (llama.cpp's freq / factor).
  attn::RopeSpec gguf = plain;
  gguf.scaling = attn::RopeScaling{};
  gguf.scaling->type = "llama3";
  gguf.scaling->freq_factors = ff;
  const attn::RopeFrequencies f = attn::rope_frequencies(gguf, 10000);
  for (std::size_t i = 0; i < ff.size(); ++i)
    CHECK(f.inv_freq[i] == doctest::Approx(rule[i]).epsilon(1e-15));
  CHECK(f.attention_factor == 1.0);

  // With linear scaling the factors divide too (ggml: freq_scale * theta / freq_factors).
  gguf.scaling->type = "linear";
  gguf.scaling->factor = 2.0;
  const attn::RopeFrequencies lin = attn::rope_frequencies(gguf, 10);
  for (std::size_t i = 0; i < ff.size(); ++i)
    CHECK(lin.inv_freq[i] == doctest::Approx(base[i] / 2.0 / ff[i]).epsilon(1e-15));

  gguf.scaling->freq_factors.pop_back();  // R/2 - 1 factors
  CHECK_THROWS_WITH_AS(attn::rope_frequencies(gguf, 10), doctest::Contains("freq_factors"),
                       attn::Error);
}

TEST_CASE("rope_frequencies: llama3 with high_freq_factor equal to low_freq_factor (Llama 4)") {
  // Llama 4 Scout's text_config: theta 500000, head_dim 128, llama3 scaling
  // factor 16, low = high = 1, original 8192. No wavelength falls between
  // the two (equal) bounds: modeling_rope_utils._compute_llama3_parameters
  // divides by factor every frequency whose wavelength exceeds 8192 and keeps
  // the rest, with no NaN from the blend's 0 / 0.
  attn::RopeSpec s;
  s.theta = 500000.0;
  s.rotary_dim = 128;
  s.scaling = attn::RopeScaling{};
  s.scaling->type = "llama3";
  s.scaling->factor = 16.0;
  s.scaling->low_freq_factor = 1.0;
  s.scaling->high_freq_factor = 1.0;
  s.scaling->original_max_position_embeddings = 8192;
  const std::vector<double> f = attn::rope_frequencies(s, 10).inv_freq;
  REQUIRE(f.size() == 64);
  std::size_t divided = 0;
  for (std::size_t i = 0; i < f.size(); ++i) {
    CAPTURE(i);
    const double inv = std::pow(500000.0, -double(2 * i) / 128.0);
    const bool slow = 2.0 * M_PI / inv > 8192.0;
    CHECK(std::isfinite(f[i]));
    CHECK(f[i] == doctest::Approx(slow ? inv / 16.0 : inv).epsilon(1e-14));
    divided += slow ? 1 : 0;
  }
  CHECK(divided > 0);
  CHECK(divided < 64);
}

TEST_CASE("log_bucket_position: DeBERTa's log buckets as torch computes them, past both ends") {
  // (256, 512) is DeBERTa-v3's; the small tables reach the log part within a short sequence.
  REQUIRE(cases()["log_buckets"].size() >= 6);
  for (const json& c : cases()["log_buckets"]) {
    const std::int64_t size = c["bucket_size"].get<std::int64_t>();
    const std::int64_t max_position = c["max_position"].get<std::int64_t>();
    const std::int64_t first = c["first"].get<std::int64_t>();
    const auto expected = c["buckets"].get<std::vector<std::int64_t>>();
    CAPTURE(size);
    CAPTURE(max_position);
    for (std::size_t k = 0; k < expected.size(); ++k) {
      const std::int64_t rel = first + std::int64_t(k);
      CAPTURE(rel);
      CHECK(attn::log_bucket_position(rel, size, max_position) == expected[k]);
    }
  }
  CHECK(attn::log_bucket_position(-700, 0, 512) == -700);  // no buckets: as it is
  CHECK(attn::log_bucket_position(9, 256, -1) == 9);
}
