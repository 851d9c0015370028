// The lazy StateDict index (lib/src/index/state_dict.cpp, convert.cpp,
// mapped_file.cpp, safetensors*.cpp, npz.cpp): file order, prefix selection
// that reads nothing, row reads converting every dtype / byte order / order
// in one pass, bf16, sharded indexes and the hostile cases of the lazy readers: a
// shard missing or outside its folder, overlapping spans, a tensor truncated
// under its mapping, NaN bits, unsupported dtypes and malformed entries
// outside the selection, a huge file of zeros.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>

#include "attn/error.h"
#include "attn/npy.h"
#include "attn/state_dict.h"
#include "expect_error.h"
#include "safetensors_builder.h"
#include "test_util.h"

using namespace attn;
using attn::test::expect_error;
using attn::test::StTensor;
using attn::test::TempDir;
using attn::test::write_text;

namespace {

std::vector<float> iota(std::size_t n, float scale = 1.0f) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = float(i) * scale - 3.0f;
  return v;
}

std::string be_bytes(const std::string& le, std::size_t es) {
  std::string s = le;
  for (std::size_t i = 0; i < s.size(); i += es) std::reverse(s.begin() + i, s.begin() + i + es);
  return s;
}

// A version 1.0 .npy with any descr and order (np.save's layout).
std::string npy_image(const std::string& descr, bool fortran, const std::vector<std::size_t>& shape,
                      const std::string& data) {
  std::string dict = "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") +
                     ", 'shape': " + shape_str(shape) + ", }";
  std::size_t total = 10 + dict.size() + 1;
  const std::size_t pad = (64 - total % 64) % 64;
  dict.append(pad, ' ');
  dict += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  out += char(dict.size() & 0xff), out += char(dict.size() >> 8);
  return out + dict + data;
}

// Fortran-order bytes of a C-order (R, K) float32 matrix.
std::vector<float> to_fortran(const std::vector<float>& c, std::size_t R, std::size_t K) {
  std::vector<float> f(c.size());
  for (std::size_t r = 0; r < R; ++r)
    for (std::size_t k = 0; k < K; ++k) f[k * R + r] = c[r * K + k];
  return f;
}

std::string f64_bytes(const std::vector<float>& v) {
  std::string s;
  for (float x : v) {
    const double d = x;
    s.append(reinterpret_cast<const char*>(&d), 8);
  }
  return s;
}

}  // namespace

TEST_CASE("index: keys keep file order; select strips the prefix and reads nothing") {
  TempDir t;
  const std::string p = t / "m.safetensors";
  write_text(p, test::safetensors_image({{"z.w", "F32", {2}, test::f32_bytes({1, 2})},
                                         {"a.h.1.w", "F32", {1}, test::f32_bytes({3})},
                                         {"a.h.1.b", "F32", {1}, test::f32_bytes({4})},
                                         {"a.h.10.w", "F32", {1}, test::f32_bytes({5})}}));
  const StateDict sd = open_state_dict(p);
  CHECK(sd.source() == p);
  CHECK(sd.keys() == std::vector<std::string>{"z.w", "a.h.1.w", "a.h.1.b", "a.h.10.w"});
  const StateDict one = sd.select("a.h.1.");
  CHECK(one.keys() == std::vector<std::string>{"w", "b"});
  CHECK(one.read_f32("b", false).data == std::vector<float>{4});
  CHECK(sd.select("").size() == 4);
  CHECK(sd.select("nothing.").empty());
  CHECK(one.find("nope") == nullptr);
  // Errors name the full key in the file, not the stripped one.
  expect_error([&] { one.read_f32("nope", false); }, Exit::data, p, "no key");
}

TEST_CASE("index: read_rows converts every float dtype, byte order and order in one pass") {
  TempDir t;
  const std::size_t R = 5, K = 3;
  const std::vector<float> m = iota(R * K, 0.5f);  // exact in f16, bf16, f32, f64
  // (name, npy image) pairs that all hold the (R, K) matrix m.
  std::vector<std::pair<std::string, std::string>> files;
  std::string f16;
  for (float x : m) {
    // x is a multiple of 0.5 in [-3, 4]: build the half by hand.
    std::uint32_t b;
    std::memcpy(&b, &x, 4);
    const std::uint32_t exp = (b >> 23) & 0xff, mant = b & 0x7fffff, sign = b >> 31;
    const std::uint16_t h =
        x == 0 ? 0 : std::uint16_t((sign << 15) | ((exp - 112) << 10) | (mant >> 13));
    f16 += char(h & 0xff), f16 += char(h >> 8);
  }
  files.push_back({"f2_le", npy_image("<f2", false, {R, K}, f16)});
  files.push_back({"f2_be", npy_image(">f2", false, {R, K}, be_bytes(f16, 2))});
  files.push_back({"f4_le", npy_image("<f4", false, {R, K}, test::f32_bytes(m))});
  files.push_back({"f4_be", npy_image(">f4", false, {R, K}, be_bytes(test::f32_bytes(m), 4))});
  files.push_back({"f8_le", npy_image("<f8", false, {R, K}, f64_bytes(m))});
  files.push_back({"f8_be_fortran",
                   npy_image(">f8", true, {R, K}, be_bytes(f64_bytes(to_fortran(m, R, K)), 8))});
  files.push_back(
      {"f4_fortran", npy_image("<f4", true, {R, K}, test::f32_bytes(to_fortran(m, R, K)))});
  for (const auto& [name, image] : files) write_text(t / (name + ".npy"), image);
  const StateDict sd = open_state_dict(t.path);
  REQUIRE(sd.size() == files.size());
  for (const auto& [name, image] : files) {
    CAPTURE(name);
    CHECK(sd.read_f32(name, false).data == m);
    std::vector<float> rows(2 * K);
    sd.read_rows(name, 2, 2, false, rows.data(), false);
    CHECK(rows == std::vector<float>(m.begin() + 2 * K, m.begin() + 4 * K));
    // Transposed: the stored (R, K) is GPT-2's (in, out); row k is column k.
    std::vector<float> cols(2 * R);
    sd.read_rows(name, 1, 2, true, cols.data(), false);
    for (std::size_t c = 0; c < 2; ++c)
      for (std::size_t r = 0; r < R; ++r) CHECK(cols[c * R + r] == m[r * K + 1 + c]);
  }
  expect_error([&] { sd.read_rows("f4_le", 4, 2, false, nullptr, false); }, Exit::data,
               t.path + ":f4_le", "rows [4, 6)");
}

TEST_CASE("index: bf16 is exact; a NaN bf16 is caught when selected, ignored when not") {
  TempDir t;
  const std::string p = t / "m.safetensors";
  // 1, -2, the smallest subnormal, the largest finite, then a NaN pattern.
  const std::vector<std::uint16_t> bits = {0x3f80, 0xc000, 0x0001, 0x7f7f, 0x7fc1};
  write_text(p, test::safetensors_image(
                    {{"l.0.w", "BF16", {4}, test::u16_bytes({0x3f80, 0xc000, 0x0001, 0x7f7f})},
                     {"l.1.w", "BF16", {1, 5}, test::u16_bytes(bits)}}));
  const StateDict sd = open_state_dict(p);
  CHECK(sd.find("l.0.w")->dtype == DType::bf16);
  CHECK(dtype_name(DType::bf16) == "bfloat16");
  const Tensor v = sd.select("l.0.").read_f32("w", false);
  for (std::size_t i = 0; i < 4; ++i) {
    std::uint32_t b;
    std::memcpy(&b, &v.data[i], 4);
    CHECK(b == std::uint32_t(bits[i]) << 16);
  }
  expect_error([&] { sd.select("l.1.").read_f32("w", false); }, Exit::data, p + ":l.1.w",
               "non-finite value nan at index (0, 4)");
  CHECK(std::isnan(sd.read_f32("l.1.w", true).data[4]));
  // The raw copy keeps the bits.
  CHECK(sd.read_raw("l.1.w").bytes[9] == 0x7f);
}

TEST_CASE(
    "index: a few bf16 rows read on their own (--tokens' rows): exact, a NaN named where it is") {
  TempDir t;
  const std::string p = t / "e.safetensors";
  // (3, 2): rows 1, -2 | 0.5, NaN | the largest finite, the smallest subnormal.
  write_text(p, test::safetensors_image(
                    {{"embed",
                      "BF16",
                      {3, 2},
                      test::u16_bytes({0x3f80, 0xc000, 0x3f00, 0x7fc1, 0x7f7f, 0x0001})}}));
  const StateDict sd = open_state_dict(p);
  std::vector<float> row(2);
  sd.read_rows("embed", 2, 1, false, row.data(), false);
  std::uint32_t b0, b1;
  std::memcpy(&b0, &row[0], 4);
  std::memcpy(&b1, &row[1], 4);
  CHECK(b0 == 0x7f7f0000u);
  CHECK(b1 == 0x00010000u);
  sd.read_rows("embed", 0, 1, false, row.data(), false);
  CHECK(row == std::vector<float>{1.0f, -2.0f});
  expect_error([&] { sd.read_rows("embed", 1, 1, false, row.data(), false); }, Exit::data,
               p + ":embed", "non-finite value nan at index (1, 1)");
  sd.read_rows("embed", 1, 1, false, row.data(), true);
  CHECK(row[0] == 0.5f);
  CHECK(std::isnan(row[1]));
  // A list of rows in any order, repeats too, as read_rows gives each.
  const std::vector<std::size_t> ids = {2, 0, 0, 2};
  std::vector<float> rows(ids.size() * 2), want(2);
  sd.read_row_list("embed", ids.data(), ids.size(), rows.data(), false);
  for (std::size_t i = 0; i < ids.size(); ++i) {
    sd.read_rows("embed", ids[i], 1, false, want.data(), false);
    CHECK(std::memcmp(rows.data() + 2 * i, want.data(), 8) == 0);
  }
  const std::vector<std::size_t> with_nan = {0, 1};
  expect_error([&] { sd.read_row_list("embed", with_nan.data(), 2, rows.data(), false); },
               Exit::data, p + ":embed", "non-finite value nan at index (1, 1)");
  sd.read_row_list("embed", with_nan.data(), 2, rows.data(), true);
  CHECK(rows[2] == 0.5f);
  CHECK(std::isnan(rows[3]));
}

TEST_CASE(
    "index: a list of rows in batches on 1-3 workers gives read_rows' bits; a NaN is named where "
    "it is") {
  // (40, 16384) bf16: 32 KiB rows, so a MiB batch holds 32 of them and 100 ids
  // make 4 batches. Row 7 holds a NaN at column 5; id 7 first comes at place 70
  // (batch 2, after two good ones).
  const std::size_t V = 40, K = 16384;
  std::vector<std::uint16_t> bits(V * K);
  std::uint32_t state = 12345;
  for (std::uint16_t& b : bits) {
    state = state * 1664525u + 1013904223u;
    b = std::uint16_t(0x3c00 + (state >> 20) % 0x800) | std::uint16_t(state & 0x8000);  // finite
  }
  bits[7 * K + 5] = 0x7fc1;
  TempDir t;
  const std::string p = t / "e.safetensors";
  write_text(p, test::safetensors_image({{"embed", "BF16", {V, K}, test::u16_bytes(bits)}}));
  const StateDict sd = open_state_dict(p);
  std::vector<std::size_t> ids(100);
  for (std::size_t i = 0; i < ids.size(); ++i)
    ids[i] = (i * 13 + 3) % V == 7 ? 8 : (i * 13 + 3) % V;
  std::vector<float> want(ids.size() * K), row(K);
  for (std::size_t i = 0; i < ids.size(); ++i)
    sd.read_rows("embed", ids[i], 1, false, want.data() + i * K, false);
  ids[70] = 7;
  sd.read_rows("embed", 7, 1, false, want.data() + 70 * K, true);
  for (int threads = 1; threads <= 3; ++threads) {
    CAPTURE(threads);
    std::vector<float> rows(ids.size() * K, -1.0f);
    expect_error(
        [&] { sd.read_row_list("embed", ids.data(), ids.size(), rows.data(), false, threads); },
        Exit::data, p + ":embed", "non-finite value nan at index (7, 5)");
    sd.read_row_list("embed", ids.data(), ids.size(), rows.data(), true, threads);
    CHECK(std::memcmp(rows.data(), want.data(), rows.size() * sizeof(float)) == 0);
  }
}

TEST_CASE("index: a dtype or malformed entry outside the selection never fails; structure does") {
  TempDir t;
  const std::string p = t / "m.safetensors";
  write_text(p, test::safetensors_image(
                    {{"wte", "F8_E4M3", {2, 2}, "abcd"},
                     {"odd", "X9_FUTURE", {3}, "xyz"},
                     {"bad", "F32", {3}, test::f32_bytes({1, 2})},  // span of 8 bytes for 12
                     {"h.0.w", "F32", {2}, test::f32_bytes({5, 6})}}));
  const StateDict sd = open_state_dict(p);
  CHECK(sd.select("h.0.").read_f32("w", false).data == std::vector<float>{5, 6});
  CHECK(sd.find("wte")->unsupported_dtype == "F8_E4M3");
  expect_error([&] { sd.read_f32("wte", false); }, Exit::data, p + ":wte",
               "'F8_E4M3' is not supported");
  expect_error([&] { sd.read_raw("odd"); }, Exit::data, p + ":odd", "'X9_FUTURE'");
  expect_error([&] { sd.find("bad"); }, Exit::data, p + ":bad", "needs 12");

  // Overlapping spans are the file's structure: refused at open.
  std::string img = test::safetensors_image(
      {{"a", "F32", {2}, test::f32_bytes({1, 2})}, {"b", "F32", {1}, test::f32_bytes({3})}});
  const std::size_t at = img.find("[8, 12]");
  REQUIRE(at != std::string::npos);
  img.replace(at, 7, "[4, 8] ");
  write_text(p, img);
  expect_error([&] { open_state_dict(p); }, Exit::data, p + ":b", "overlap");
}

TEST_CASE("index: float32 rows read from the file as opened, even when the path is replaced") {
  // Plain float32 rows are read with pread from the path opened again; a
  // path that now holds another file falls back to the mapping of the old.
  TempDir t;
  const std::string p = t / "m.safetensors";
  write_text(p, test::safetensors_image({{"w", "F32", {4, 3}, test::f32_bytes(iota(12))}}));
  const StateDict sd = open_state_dict(p);
  std::vector<float> rows(6);
  sd.read_rows("w", 1, 2, false, rows.data(), false);
  CHECK(rows == std::vector<float>{0, 1, 2, 3, 4, 5});  // iota: i - 3
  write_text(t / "new", test::safetensors_image(
                            {{"w", "F32", {4, 3}, test::f32_bytes(std::vector<float>(12, -1))}}));
  REQUIRE(::rename((t / "new").c_str(), p.c_str()) == 0);
  sd.read_rows("w", 2, 2, false, rows.data(), false);
  CHECK(rows == std::vector<float>{3, 4, 5, 6, 7, 8});
  CHECK(sd.read_f32("w", false).data == iota(12));
}

TEST_CASE("index: a tensor truncated under its mapping is an error, not SIGBUS") {
  TempDir t;
  const std::string p = t / "m.safetensors";
  write_text(p, test::safetensors_image({{"a", "F32", {1024}, test::f32_bytes(iota(1024))},
                                         {"b", "F32", {8192}, test::f32_bytes(iota(8192))}}));
  const StateDict sd = open_state_dict(p);
  REQUIRE(::truncate(p.c_str(), 4096) == 0);
  expect_error([&] { sd.read_f32("b", false); }, Exit::no_input, p + ":b",
               "truncated while in use");
  // A file truncated before opening fails at its header check.
  expect_error([&] { open_state_dict(p); }, Exit::data, p + ":a", "past the data section");
}

TEST_CASE("index: a huge file of zeros fails at its header, reading nothing") {
  TempDir t;
  const std::pair<const char*, const char*> cases[] = {
      {"z.safetensors", "'{'"}, {"z.npz", "not a zip archive"}, {"z/w.npy", "magic"}};
  std::filesystem::create_directory(t / "z");
  for (const auto& [name, part] : cases) {
    CAPTURE(name);
    const std::string p = t / name;
    write_text(p, "");
    REQUIRE(::truncate(p.c_str(), off_t(8) << 30) == 0);  // sparse: 8 GiB of zeros
    // A folder's bad .npy is one bad tensor: its header fails when it is used.
    expect_error(
        [&] {
          if (std::string(name) == "z/w.npy")
            open_state_dict(t / "z").find("w");
          else
            open_state_dict(p);
        },
        Exit::data, p, part);
    ::unlink(p.c_str());
  }
}

TEST_CASE("index: .npz members: stored read in place, deflated inflated only when read") {
  TempDir t;
  // A real np.savez_compressed archive: every member is inflated on read only.
  const std::string src = test::source_path("tests/fixtures/npy/weights_compressed.npz");
  const StateDict sd = open_state_dict(src);
  const StateDict plain = open_state_dict(test::source_path("tests/fixtures/npy/weights.npz"));
  for (const std::string& k : sd.keys()) CHECK(sd.read_raw(k).bytes == plain.read_raw(k).bytes);
}

TEST_CASE("index: a sharded index opens only the shards it needs") {
  TempDir t;
  write_text(t / "s1.safetensors",
             test::safetensors_image({{"h.0.w", "F32", {2}, test::f32_bytes({1, 2})}}));
  write_text(t / "s2.safetensors",
             test::safetensors_image({{"h.1.w", "F32", {2}, test::f32_bytes({3, 4})},
                                      {"h.1.b", "BF16", {1}, test::bf16_bytes_of({5})}}));
  auto index = [&](const std::string& map) {
    write_text(t / "m.safetensors.index.json",
               "{\"metadata\": {\"total_size\": 18}, \"weight_map\": {" + map + "}}");
    return t / "m.safetensors.index.json";
  };
  const std::string good =
      "\"h.1.w\": \"s2.safetensors\", \"h.1.b\": \"s2.safetensors\", \"h.0.w\": \"s1.safetensors\"";
  std::string p = index(good);
  const StateDict sd = open_state_dict(p);
  CHECK(sd.keys() == std::vector<std::string>{"h.1.w", "h.1.b", "h.0.w"});
  // Shard 1 is gone: a layer in shard 2 still loads.
  std::filesystem::rename(t / "s1.safetensors", t / "s1.away");
  const StateDict one = sd.select("h.1.");
  CHECK(one.read_f32("w", false).data == std::vector<float>{3, 4});
  CHECK(one.read_f32("b", false).data == std::vector<float>{5});
  // ... and a key of shard 1 names it.
  expect_error([&] { sd.find("h.0.w"); }, Exit::no_input, t / "s1.safetensors", "no such shard");
  std::filesystem::rename(t / "s1.away", t / "s1.safetensors");
  CHECK(open_state_dict(p).read_f32("h.0.w", false).data == std::vector<float>{1, 2});

  // Outside the folder, absolute: refused when the index is opened.
  p = index(good + ", \"x\": \"../x.safetensors\"");
  expect_error([&] { open_state_dict(p); }, Exit::data, p, "outside the index's folder");
  p = index(good + ", \"x\": \"/etc/x.safetensors\"");
  expect_error([&] { open_state_dict(p); }, Exit::data, p, "absolute path");
  p = index(good + ", \"x\": \"a/../../x.safetensors\"");
  expect_error([&] { open_state_dict(p); }, Exit::data, p, "outside");
  // Index and shard header disagree: found when the shard is opened.
  p = index("\"h.1.w\": \"s2.safetensors\", \"h.0.w\": \"s1.safetensors\"");
  expect_error([&] { open_state_dict(p).find("h.1.w"); }, Exit::data, t / "s2.safetensors",
               "\"h.1.b\"");
  p = index(good + ", \"h.1.c\": \"s2.safetensors\"");
  expect_error([&] { open_state_dict(p).find("h.1.w"); }, Exit::data, t / "s2.safetensors",
               "lacks key \"h.1.c\"");
  // Malformed indexes.
  p = index("\"a\": 3");
  expect_error([&] { open_state_dict(p); }, Exit::data, p, "shard file name");
  p = index("");
  expect_error([&] { open_state_dict(p); }, Exit::data, p, "empty");
  p = index(good + ", \"h.0.w\": \"s1.safetensors\"");
  expect_error([&] { open_state_dict(p); }, Exit::data, p, "twice");
  write_text(t / "m.bin.index.json", "{}");
  expect_error([&] { open_state_dict(t / "m.bin.index.json"); }, Exit::data, t / "m.bin.index.json",
               "weight_map");
}

TEST_CASE("index: in-memory entries and .npy inputs take the same conversion") {
  StateDict sd("mem");
  sd.add("a", Tensor({2, 2}, 1.5f));
  CHECK(sd.read_f32("a", false).data == std::vector<float>(4, 1.5f));
  sd.add("a", Tensor({1}, 2.0f));  // replaced, listed once
  CHECK(sd.keys() == std::vector<std::string>{"a"});
  CHECK(sd.read_f32("a", false).data == std::vector<float>{2.0f});
  sd.erase("a");
  CHECK(sd.empty());

  TempDir t;
  write_text(t / "x.npy",
             npy_image(">f8", true, {2, 3}, be_bytes(f64_bytes(to_fortran(iota(6), 2, 3)), 8)));
  const Tensor x = read_npy_f32(t / "x.npy", false);
  CHECK(x.shape == std::vector<std::size_t>{2, 3});
  CHECK(x.data == iota(6));
  // A 3-D Fortran-order array: element (i, j, k) at i + 2*j + 6*k.
  std::vector<float> c(24), f(24);
  for (std::size_t i = 0; i < 2; ++i)
    for (std::size_t j = 0; j < 3; ++j)
      for (std::size_t k = 0; k < 4; ++k)
        c[i * 12 + j * 4 + k] = f[i + 2 * j + 6 * k] = float(i * 100 + j * 10 + k);
  f[1 + 2 * 2 + 6 * 3] = NAN, c[1 * 12 + 2 * 4 + 3] = NAN;
  write_text(t / "f3.npy", npy_image("<f4", true, {2, 3, 4}, test::f32_bytes(f)));
  const Tensor f3 = read_npy_f32(t / "f3.npy", true);
  for (std::size_t i = 0; i < 23; ++i) CHECK(f3.data[i] == c[i]);
  expect_error([&] { read_npy_f32(t / "f3.npy", false); }, Exit::data, t / "f3.npy",
               "non-finite value nan at index (1, 2, 3)");
  write_text(t / "n.npy", npy_image("<f4", false, {2}, test::f32_bytes({1, NAN})));
  expect_error([&] { read_npy_f32(t / "n.npy", false); }, Exit::data, t / "n.npy", "index (1,)");
}
