// The GGUF reader (containers/gguf.cpp) and the dequantizers
// (kernels/ggml_dequant.cpp).
// Valid and hostile images are built here byte by byte (GgufImage), after
// ggml docs/gguf.md; the seed corpus written by gguf_write.py (make_corpus.py)
// (fuzz/corpus/gguf/) is read too. Bit-exactness against ggml itself was
// checked once outside the project (ggml's ggml-quants.c compiled in a
// scratch folder, 1e6 random blocks per type, bit for bit); against the
// NumPy dequantizers of tests/golden/gguf_quants.py, by the golden GGUF tests.
#include <dirent.h>
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "attn/error.h"
#include "attn/state_dict.h"
#include "containers/gguf.h"
#include "kernels/ggml_dequant.h"
#include "test_util.h"

using namespace attn;
using namespace attn::detail;
using namespace attn::kernels;

namespace {

// A GGUF image written field by field, little-endian.
struct GgufImage {
  std::string b;
  void u8(std::uint8_t v) { b.push_back(char(v)); }
  void u32(std::uint32_t v) {
    for (int i = 0; i < 4; ++i) u8(std::uint8_t(v >> (8 * i)));
  }
  void u64(std::uint64_t v) {
    for (int i = 0; i < 8; ++i) u8(std::uint8_t(v >> (8 * i)));
  }
  void f32(float f) {
    std::uint32_t u;
    std::memcpy(&u, &f, 4);
    u32(u);
  }
  void str(const std::string& s) {
    u64(s.size());
    b += s;
  }
  void header(std::uint64_t n_tensors, std::uint64_t n_kv, std::uint32_t version = 3) {
    b += "GGUF";
    u32(version);
    u64(n_tensors);
    u64(n_kv);
  }
  void kv_u32(const std::string& k, std::uint32_t v) {
    str(k);
    u32(4);
    u32(v);
  }
  void tensor(const std::string& name, std::vector<std::uint64_t> ne, std::uint32_t type,
              std::uint64_t offset) {
    str(name);
    u32(std::uint32_t(ne.size()));
    for (auto n : ne) u64(n);
    u32(type);
    u64(offset);
  }
  void pad(std::size_t align) {
    while (b.size() % align) u8(0);
  }
  // A copy of the bytes is kept by the file (`sample().parse()` outlives the image).
  GgufFile parse() const {
    auto copy = std::make_shared<const std::string>(b);
    return parse_gguf(reinterpret_cast<const std::uint8_t*>(copy->data()), copy->size(), "t.gguf",
                      copy);
  }
};

// The message of the Error that parsing `img` throws ("" when none).
std::string parse_error(const GgufImage& img) {
  try {
    img.parse();
  } catch (const Error& e) {
    CHECK(e.code() == Exit::data);
    return e.what();
  }
  return "";
}

#define CHECK_PARSE_ERROR(img, text)             \
  do {                                           \
    const std::string msg_ = parse_error(img);   \
    INFO("message: ", msg_);                     \
    CHECK(msg_.rfind("t.gguf: ", 0) == 0);       \
    CHECK(msg_.find(text) != std::string::npos); \
    CHECK(msg_.find('\n') == std::string::npos); \
  } while (0)

std::uint32_t bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

// One valid file with metadata of every type and two tensors.
GgufImage sample(std::uint32_t version = 3) {
  GgufImage g;
  g.header(2, 16, version);
  g.str("general.architecture");
  g.u32(8);
  g.str("llama");
  g.kv_u32("llama.attention.head_count", 32);
  g.str("k.u8"), g.u32(0), g.u8(200);
  g.str("k.i8"), g.u32(1), g.u8(0xFE);  // -2
  g.str("k.u16"), g.u32(2), g.u8(0x34), g.u8(0x12);
  g.str("k.i16"), g.u32(3), g.u8(0xFF), g.u8(0xFF);  // -1
  g.str("k.i32"), g.u32(5), g.u32(0xFFFFFFF6u);      // -10
  g.str("k.f32"), g.u32(6), g.f32(1e6f);
  g.str("k.bool"), g.u32(7), g.u8(1);
  g.str("k.u64"), g.u32(10), g.u64(std::uint64_t(1) << 40);
  g.str("k.i64"), g.u32(11), g.u64(std::uint64_t(-5));
  g.str("k.f64"), g.u32(12), g.u64(0x3FF8000000000000ull);  // 1.5
  // head_count_kv per layer: array of 3 u32
  g.str("llama.attention.head_count_kv"), g.u32(9), g.u32(4), g.u64(3), g.u32(8), g.u32(4),
      g.u32(0);
  g.str("k.strings"), g.u32(9), g.u32(8), g.u64(3), g.str("a"), g.str(""), g.str("ccc");
  // nested: [[1, 2], [3]] of i32
  g.str("k.nested"), g.u32(9), g.u32(9), g.u64(2);
  g.u32(5), g.u64(2), g.u32(1), g.u32(2);
  g.u32(5), g.u64(1), g.u32(3);
  g.str("k.bools"), g.u32(9), g.u32(7), g.u64(2), g.u8(0), g.u8(1);
  // tensors: a (2, 3) F32 matrix (ne [3, 2]) and a Q8_0 vector of 32
  g.tensor("blk.0.attn_q.weight", {3, 2}, 0, 0);
  g.tensor("blk.0.attn_k.weight", {32}, 8, 32);
  g.pad(32);
  for (int i = 0; i < 6; ++i) g.f32(float(i) + 0.5f);
  g.pad(32);
  g.u8(0x00), g.u8(0x3C);  // d = 1.0 in fp16
  for (int i = 0; i < 32; ++i) g.u8(std::uint8_t(i - 16));
  return g;
}

}  // namespace

TEST_CASE("gguf: every metadata type reads back") {
  for (std::uint32_t version : {2u, 3u}) {
    const GgufFile f = sample(version).parse();
    CHECK(f.version() == version);
    CHECK(f.alignment() == 32);
    CHECK(f.metadata().size() == 16);
    CHECK(f.at("general.architecture").to_string() == "llama");
    CHECK(f.at("llama.attention.head_count").to_uint() == 32);
    CHECK(f.at("k.u8").to_int() == 200);
    CHECK(f.at("k.i8").to_int() == -2);
    CHECK(f.at("k.u16").to_int() == 0x1234);
    CHECK(f.at("k.i16").to_int() == -1);
    CHECK(f.at("k.i32").to_int() == -10);
    CHECK(f.at("k.f32").to_double() == 1e6);
    CHECK(f.at("k.bool").to_bool());
    CHECK(f.at("k.u64").to_uint() == (std::uint64_t(1) << 40));
    CHECK(f.at("k.i64").to_int() == -5);
    CHECK(f.at("k.f64").to_double() == 1.5);
    const GgufValue& kv = f.at("llama.attention.head_count_kv");
    CHECK(kv.is_array());
    CHECK(kv.element_type() == GgufType::u32);
    CHECK(kv.to_int_array() == std::vector<std::int64_t>{8, 4, 0});
    CHECK(kv.int_for_layer(1) == 4);
    CHECK(f.at("llama.attention.head_count").int_for_layer(7) == 32);
    CHECK(f.at("k.strings").to_string_array() == std::vector<std::string>{"a", "", "ccc"});
    const auto nested = f.at("k.nested").elements();
    REQUIRE(nested.size() == 2);
    CHECK(nested[0].to_int_array() == std::vector<std::int64_t>{1, 2});
    CHECK(nested[1].to_int_array() == std::vector<std::int64_t>{3});
    CHECK(f.at("k.bools").elements()[1].to_bool());
    CHECK(f.at("k.nested").summary() == "[array x 2: [i32 x 2: 1, 2], [i32 x 1: 3]]");
    CHECK(f.find("nope") == nullptr);
  }
}

TEST_CASE("gguf: accessors name the key and the type found") {
  const GgufFile f = sample().parse();
  auto message = [](auto&& fn) {
    try {
      fn();
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(message([&] { f.at("general.architecture").to_int(); }) ==
        "t.gguf: general.architecture: expected an integer, found string");
  CHECK(message([&] { f.at("k.i8").to_uint(); }) ==
        "t.gguf: k.i8: expected a non-negative integer, found -2");
  CHECK(message([&] { f.at("k.strings").to_int_array(); }) ==
        "t.gguf: k.strings: expected an array of integers, found array of 3 string");
  CHECK(message([&] { f.at("llama.attention.head_count_kv").int_for_layer(3); }) ==
        "t.gguf: llama.attention.head_count_kv: has 3 entries, none for layer 3");
  CHECK(message([&] { f.at("missing.key"); }) == "t.gguf: metadata key 'missing.key' is missing");
  CHECK(message([&] { f.tensor("x"); }) == "t.gguf: no tensor named 'x'");
}

TEST_CASE("gguf: tensor infos, shapes in NumPy order, data") {
  const GgufFile f = sample().parse();
  REQUIRE(f.tensors().size() == 2);
  const GgufTensorInfo& q = f.tensor("blk.0.attn_q.weight");
  CHECK(q.ne == std::vector<std::uint64_t>{3, 2});
  CHECK(q.shape() == std::vector<std::size_t>{2, 3});
  CHECK(q.offset == f.data_offset());
  CHECK(f.data_offset() % 32 == 0);
  CHECK(q.nbytes == 24);
  CHECK(q.rows() == 2);
  const std::vector<float> v = dequantize_tensor(f, q);
  CHECK(v == std::vector<float>{0.5f, 1.5f, 2.5f, 3.5f, 4.5f, 5.5f});
  float row[3];
  dequantize_rows(f, q, 1, 1, row);
  CHECK(row[0] == 3.5f);
  const GgufTensorInfo& k = f.tensor("blk.0.attn_k.weight");
  CHECK(k.offset == f.data_offset() + 32);
  CHECK(k.nbytes == 34);
  const std::vector<float> kv = dequantize_tensor(f, k);
  for (int i = 0; i < 32; ++i) CHECK(kv[i] == float(i - 16));
  try {
    dequantize_rows(f, q, 2, 1, row);
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(std::string(e.what()) == "t.gguf: tensor 'blk.0.attn_q.weight': rows 2..3 asked of 2");
  }
}

TEST_CASE("gguf: general.alignment is honoured and checked") {
  GgufImage g;
  g.header(1, 1);
  g.kv_u32("general.alignment", 64);
  g.tensor("t", {4}, 0, 0);
  g.pad(64);
  for (int i = 0; i < 4; ++i) g.f32(1.0f);
  const GgufFile f = g.parse();
  CHECK(f.alignment() == 64);
  CHECK(f.data_offset() == 128);
  CHECK(f.tensors()[0].offset == 128);

  for (std::uint32_t bad : {0u, 48u}) {
    GgufImage h;
    h.header(0, 1);
    h.kv_u32("general.alignment", bad);
    CHECK_PARSE_ERROR(h, "is not a power of two");
  }
  GgufImage h;
  h.header(0, 1);
  h.str("general.alignment"), h.u32(10), h.u64(32);
  CHECK_PARSE_ERROR(h, "general.alignment must be a u32, found u64");
}

TEST_CASE("gguf: a file that is not GGUF, or of another version") {
  GgufImage g;
  g.b = "GGML";
  CHECK_PARSE_ERROR(g, "not a GGUF file (it starts with 'GGML'");
  g.b = "\x1b[2J";
  CHECK_PARSE_ERROR(g, "starts with '\\e[2J'");
  g.b = "";
  CHECK_PARSE_ERROR(g, "not a GGUF file");
  for (auto [version, text] :
       {std::pair<std::uint32_t, const char*>{1, "version 1 is not supported"},
        {4, "version 4 is not supported"},
        {0x03000000, "big-endian"}}) {
    GgufImage h;
    h.header(0, 0, version);
    CHECK_PARSE_ERROR(h, text);
  }
}

TEST_CASE("gguf: hostile counts and lengths fail before any allocation") {
  const std::uint64_t huge = ~std::uint64_t(0);
  {
    GgufImage g;
    g.header(0, huge);
    CHECK_PARSE_ERROR(g, "metadata entries");
  }
  {
    GgufImage g;
    g.header(huge, 0);
    CHECK_PARSE_ERROR(g, "claims 18446744073709551615 tensors");
  }
  {
    GgufImage g;  // key length 2^64 - 1
    g.header(0, 1);
    g.u64(huge);
    g.b += std::string(20, 'x');
    CHECK_PARSE_ERROR(g, "metadata key 0 of 18446744073709551615 bytes (at most 65535)");
  }
  {
    GgufImage g;  // string value longer than the file
    g.header(0, 1);
    g.str("k"), g.u32(8), g.u64(1000), g.b += "abc";
    CHECK_PARSE_ERROR(g, "truncated: metadata key 'k': string of 1000 bytes");
  }
  {
    GgufImage g;  // array of 2^64 - 1 u32
    g.header(0, 1);
    g.str("k"), g.u32(9), g.u32(4), g.u64(huge);
    g.b += std::string(64, '\0');
    CHECK_PARSE_ERROR(g, "array of 18446744073709551615 u32 cannot fit");
  }
  {
    GgufImage g;  // array of 2^61 strings: 8 bytes each would overflow
    g.header(0, 1);
    g.str("k"), g.u32(9), g.u32(8), g.u64(std::uint64_t(1) << 61);
    g.b += std::string(64, '\0');
    CHECK_PARSE_ERROR(g, "cannot fit");
  }
  {
    GgufImage g;  // arrays nested 20 deep
    g.header(0, 1);
    g.str("k"), g.u32(9);
    for (int i = 0; i < 20; ++i) g.u32(9), g.u64(1);
    g.u32(4), g.u64(0);
    CHECK_PARSE_ERROR(g, "nested more than 16 deep");
  }
}

TEST_CASE("gguf: malformed metadata") {
  auto one = [](auto&& body) {
    GgufImage g;
    g.header(0, 2);
    g.kv_u32("a", 1);
    body(g);
    return g;
  };
  CHECK_PARSE_ERROR(one([](GgufImage& g) { g.kv_u32("a", 2); }), "metadata key 'a' appears twice");
  CHECK_PARSE_ERROR(one([](GgufImage& g) { g.kv_u32("", 2); }), "metadata key 1 is empty");
  CHECK_PARSE_ERROR(one([](GgufImage& g) { g.str("b"), g.u32(13), g.u32(0); }),
                    "metadata key 'b': unknown value type 13");
  CHECK_PARSE_ERROR(one([](GgufImage& g) { g.str("b"), g.u32(9), g.u32(77), g.u64(0); }),
                    "unknown array element type 77");
  CHECK_PARSE_ERROR(one([](GgufImage& g) { g.str("b"), g.u32(7), g.u8(2); }),
                    "bool value 2 (must be 0 or 1)");
  CHECK_PARSE_ERROR(
      one([](GgufImage& g) { g.str("b"), g.u32(9), g.u32(7), g.u64(2), g.u8(0), g.u8(9); }),
      "bool value 9");
  CHECK_PARSE_ERROR(one([](GgufImage& g) { g.str("b\n\x1b"), g.u32(13); }),
                    "metadata key 'b\\n\\e': unknown value type 13");
}

TEST_CASE("gguf: malformed tensor infos") {
  auto one = [](auto&& body, std::size_t data_bytes = 64) {
    GgufImage g;
    g.header(2, 0);
    g.tensor("ok", {4}, 0, 0);
    body(g);
    g.pad(32);
    g.b += std::string(data_bytes, '\0');
    return g;
  };
  const std::uint64_t big = std::uint64_t(1) << 62;
  CHECK_PARSE_ERROR(one([](GgufImage& g) { g.tensor("ok", {4}, 0, 32); }),
                    "tensor 'ok' appears twice");
  CHECK_PARSE_ERROR(one([](GgufImage& g) {
                      g.tensor("t", {1, 1, 1, 1, 1}, 0, 32);
                    }),
                    "tensor 't': n_dims 5 (GGUF allows at most 4)");
  CHECK_PARSE_ERROR(one([](GgufImage& g) { g.tensor("t", {std::uint64_t(1) << 63}, 0, 32); }),
                    "dimension 0 is 9223372036854775808");
  CHECK_PARSE_ERROR(one([&](GgufImage& g) {
                      g.tensor("t", {big, 4}, 0, 32);
                    }),
                    "has 2^63 elements or more");
  CHECK_PARSE_ERROR(one([](GgufImage& g) { g.tensor("t", {4}, 99, 32); }),
                    "tensor 't': unknown ggml type 99");
  CHECK_PARSE_ERROR(one([](GgufImage& g) { g.tensor("t", {32}, 31, 32); }),
                    "type Q4_0_4_4 (31) was removed from ggml");
  CHECK_PARSE_ERROR(one([](GgufImage& g) { g.tensor("t", {100}, 12, 32); }),
                    "tensor 't' of type Q4_K: ne[0] = 100 is not a multiple of the block size 256");
  CHECK_PARSE_ERROR(one([](GgufImage& g) { g.tensor("t", {4}, 0, 33); }),
                    "offset 33 is not a multiple of the alignment 32");
  CHECK_PARSE_ERROR(one([](GgufImage& g) { g.tensor("t", {4}, 0, 64); }),
                    "tensor 't': its 16 bytes at data offset 64 run past the end of the file");
  CHECK_PARSE_ERROR(one([](GgufImage& g) { g.tensor("t", {4}, 0, ~std::uint64_t(31)); }),
                    "run past the end of the file");
  CHECK_PARSE_ERROR(one([](GgufImage& g) { g.tensor("t", {8}, 0, 0); }),
                    "tensors 'ok' and 't' overlap");
  CHECK_PARSE_ERROR(one([](GgufImage& g) { g.tensor(std::string(65, 'n'), {4}, 0, 32); }),
                    "tensor info 1 name of 65 bytes (at most 64)");
  // A zero-size tensor overlaps nothing; a 64-byte name is allowed.
  CHECK(parse_error(one([](GgufImage& g) { g.tensor(std::string(64, 'n'), {0, 4}, 0, 0); })) == "");
}

TEST_CASE("gguf: every truncation of a valid file fails cleanly") {
  const GgufImage full = sample();
  CHECK(parse_error(full) == "");
  // Cutting inside the header or the tensor infos, or the data, must throw.
  for (std::size_t n = 0; n < full.b.size(); ++n) {
    GgufImage cut;
    cut.b = full.b.substr(0, n);
    INFO("prefix of ", n, " bytes");
    CHECK(parse_error(cut) != "");
  }
}

TEST_CASE("gguf: an unsupported type is named with the tensor") {
  GgufImage g;
  g.header(1, 0);
  g.tensor("blk.3.attn_v.weight", {256}, 16, 0);  // IQ2_XXS, 66 bytes
  g.pad(32);
  g.b += std::string(66, '\0');
  const GgufFile f = g.parse();
  try {
    dequantize_tensor(f, f.tensors()[0]);
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.code() == Exit::data);
    CHECK(
        std::string(e.what()).rfind(
            "t.gguf: tensor 'blk.3.attn_v.weight': type IQ2_XXS is not supported (supported: F32, "
            "F16, Q4_0",
            0) == 0);
  }
}

TEST_CASE("gguf: read_gguf refuses what is not a regular file") {
  try {
    read_gguf("/nonexistent/model.gguf");
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.code() == Exit::no_input);
  }
  try {
    read_gguf("/tmp");
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.code() == Exit::no_input);
  }
}

TEST_CASE("dequant: type table") {
  CHECK(ggml_type_name(12) == "Q4_K");
  CHECK(ggml_type_name(30) == "BF16");
  CHECK(ggml_type_name(77) == "type 77");
  CHECK(ggml_type_traits(14)->block_bytes == 210);
  CHECK(ggml_type_dequantized(39));  // MXFP4
  CHECK(!ggml_type_dequantized(16));
  CHECK(ggml_dequantized_names() ==
        "F32, F16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_NL, IQ4_XS, "
        "BF16, MXFP4");
}

TEST_CASE("dequant: fp16 conversion of all 65536 values") {
  for (std::uint32_t h = 0; h < 65536; ++h) {
    const float f = fp16_to_fp32(std::uint16_t(h));
    const std::uint32_t exp = (h >> 10) & 31, man = h & 1023;
    const double sign = (h & 0x8000) ? -1.0 : 1.0;
    INFO("h = ", h);
    if (exp == 31 && man != 0) {
      // NaN, quiet, payload kept: as ggml's conversion (and F16C) give it.
      CHECK(bits(f) == (((h & 0x8000u) << 16) | 0x7FC00000u | (man << 13)));
    } else if (exp == 31) {
      CHECK(f == float(sign * INFINITY));
    } else {
      const double v =
          exp == 0 ? std::ldexp(double(man), -24) : std::ldexp(double(man | 1024), int(exp) - 25);
      CHECK(double(f) == sign * v);
      CHECK(std::signbit(f) == bool(h & 0x8000));
    }
  }
  // The row converter (F16C where compiled in) gives the same bits.
  std::vector<std::uint16_t> all(65536);
  for (std::uint32_t h = 0; h < 65536; ++h) all[h] = std::uint16_t(h);
  std::vector<float> fast(65536), scalar(65536);
  dequantize_row(1, all.data(), fast.data(), all.size());
  dequantize_row_scalar(1, all.data(), scalar.data(), all.size());
  CHECK(std::memcmp(fast.data(), scalar.data(), 65536 * 4) == 0);
  for (std::uint32_t h = 0; h < 65536; h += 97)
    CHECK(bits(fast[h]) == bits(fp16_to_fp32(std::uint16_t(h))));
}

TEST_CASE("dequant: hand-computed blocks") {
  // Q4_0: d = 0.5, byte j = (hi 0xF, lo j & 15): y[j] = (j - 8) / 2, y[16 + j] = 3.5.
  std::uint8_t q4_0[18] = {0x00, 0x38};
  for (int j = 0; j < 16; ++j) q4_0[2 + j] = std::uint8_t(0xF0 | j);
  float y[256];
  dequantize_row(2, q4_0, y, 32);
  for (int j = 0; j < 16; ++j) {
    CHECK(y[j] == float(j - 8) * 0.5f);
    CHECK(y[16 + j] == 3.5f);
  }
  // Q4_K: d = 1, dmin = 2, sub-block scales 1..8 and mins 0 (j < 4: low 6
  // bits of bytes 0..3 and 4..7; j >= 4 from bytes 8..11), all quants 3 / 5.
  std::uint8_t q4_k[144] = {0x00, 0x3C, 0x00, 0x40};
  const int sc[8] = {1, 2, 3, 4, 5, 6, 7, 8}, mn[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  for (int j = 0; j < 4; ++j) {
    q4_k[4 + j] = std::uint8_t(sc[j]);
    q4_k[8 + j] = std::uint8_t(mn[j]);
    q4_k[12 + j] = std::uint8_t(sc[j + 4] | (mn[j + 4] << 4));
  }
  for (int i = 0; i < 128; ++i) q4_k[16 + i] = 0x53;
  dequantize_row(12, q4_k, y, 256);
  for (int g = 0; g < 8; ++g)
    for (int l = 0; l < 32; ++l) {
      const int q = g % 2 == 0 ? 3 : 5;
      CHECK(y[32 * g + l] == float(sc[g]) * float(q) - 2.0f * float(mn[g]));
    }
  // Q6_K: d = 0.25, scales 1..16, ql = 0, qh = 0: every q is -32.
  std::uint8_t q6_k[210] = {};
  for (int i = 0; i < 16; ++i) q6_k[192 + i] = std::uint8_t(i + 1);
  q6_k[208] = 0x00, q6_k[209] = 0x34;  // 0.25
  dequantize_row(14, q6_k, y, 256);
  for (int i = 0; i < 256; ++i) CHECK(y[i] == 0.25f * float(i / 16 + 1) * -32.0f);
}

TEST_CASE("dequant: SIMD paths equal the scalar code bit for bit") {
  std::mt19937_64 rng(11);
  for (std::uint32_t id = 0; id < kGgmlTypeCount; ++id) {
    if (!ggml_type_dequantized(id)) continue;
    const GgmlTypeTraits* t = ggml_type_traits(id);
    const std::size_t n = 2048 * 256;  // random scale bits: inf and NaN scales included
    std::vector<std::uint8_t> src(n / t->block_size * t->block_bytes + 1);
    for (auto& b : src) b = std::uint8_t(rng());
    std::vector<float> a(n), s(n);
    // +1: an odd address, the blocks unaligned
    dequantize_row(id, src.data() + 1, a.data(), n);
    dequantize_row_scalar(id, src.data() + 1, s.data(), n);
    INFO(t->name);
    CHECK(std::memcmp(a.data(), s.data(), n * 4) == 0);
  }
}

TEST_CASE("gguf: the seed corpus (fuzz/corpus/gguf) parses and dequantizes") {
  const std::string corpus = test::source_path("fuzz/corpus/gguf");
  const char* dir = corpus.c_str();
  DIR* d = opendir(dir);
  REQUIRE(d != nullptr);
  int files = 0;
  while (dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name.size() < 5 || name.substr(name.size() - 5) != ".gguf") continue;
    const GgufFile f = read_gguf(std::string(dir) + "/" + name);
    for (const GgufTensorInfo& t : f.tensors())
      if (ggml_type_dequantized(t.type)) CHECK(dequantize_tensor(f, t).size() == t.elements);
    ++files;
  }
  closedir(d);
  CHECK(files > 0);
}

TEST_CASE("gguf: a long string value is summarized without copying it all") {
  GgufImage g;
  g.header(0, 1);
  g.str("tokenizer.chat_template"), g.u32(8), g.str(std::string(100000, 'x'));
  const GgufFile f = g.parse();
  const std::string s = f.at("tokenizer.chat_template").summary();
  CHECK(s.rfind("\"" + std::string(100, 'x'), 0) == 0);
  CHECK(s.size() < 130);
  CHECK(f.at("tokenizer.chat_template").to_string().size() == 100000);
}

TEST_CASE("gguf: the index reads a .gguf lazily, quantized tensors as float32") {
  test::TempDir t;
  const std::string path = t / "m.gguf";
  {
    const GgufImage g = sample();
    std::FILE* f = std::fopen(path.c_str(), "wb");
    REQUIRE(f != nullptr);
    std::fwrite(g.b.data(), 1, g.b.size(), f);
    std::fclose(f);
  }
  const StateDict sd = open_state_dict(path);
  REQUIRE(sd.keys() == std::vector<std::string>{"blk.0.attn_q.weight", "blk.0.attn_k.weight"});
  const TensorInfo& q = *sd.find("blk.0.attn_q.weight");
  CHECK(q.shape == std::vector<std::size_t>{2, 3});  // ne [3, 2] reversed
  CHECK(q.gguf_type == "F32");
  CHECK(q.dtype == DType::f4);
  CHECK(sd.read_f32("blk.0.attn_q.weight", false).data ==
        std::vector<float>{0.5f, 1.5f, 2.5f, 3.5f, 4.5f, 5.5f});
  const TensorInfo& k = *sd.find("blk.0.attn_k.weight");
  CHECK(k.gguf_type == "Q8_0");
  CHECK(k.stored_bytes == 34);
  const Tensor kv = sd.read_f32("blk.0.attn_k.weight", false);
  REQUIRE(kv.size() == 32);
  for (int i = 0; i < 32; ++i) CHECK(kv.data[std::size_t(i)] == float(i - 16));
  // Rows 8..11 of the 32 one-element rows.
  float rows[4];
  sd.read_rows("blk.0.attn_k.weight", 8, 4, false, rows, false);
  CHECK(rows[0] == -8.0f);
  CHECK(rows[3] == -5.0f);
  // read_raw gives the values too (as float32).
  CHECK(sd.read_raw("blk.0.attn_k.weight").dtype == DType::f4);
}

TEST_CASE("gguf: an unsupported ggml type is refused when read, naming the tensor and type") {
  test::TempDir t;
  const std::string path = t / "iq2.gguf";
  GgufImage g;
  g.header(1, 0);
  g.tensor("blk.3.attn_v.weight", {256}, 16, 0);  // IQ2_XXS, 66 bytes
  g.pad(32);
  g.b += std::string(66, '\0');
  std::FILE* f = std::fopen(path.c_str(), "wb");
  REQUIRE(f != nullptr);
  std::fwrite(g.b.data(), 1, g.b.size(), f);
  std::fclose(f);
  const StateDict sd = open_state_dict(path);
  CHECK(sd.find("blk.3.attn_v.weight")->gguf_type == "IQ2_XXS");  // listed
  try {
    (void)sd.read_f32("blk.3.attn_v.weight", false);
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.code() == Exit::data);
    CHECK(std::string(e.what()).find("iq2.gguf:blk.3.attn_v.weight: GGUF type IQ2_XXS is not "
                                     "supported (supported: F32, F16") != std::string::npos);
  }
}
