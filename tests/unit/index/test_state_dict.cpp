// Weights sources (lib/src/index/state_dict.cpp, npz.cpp, safetensors.cpp): a
// folder of <key>.npy, .npz archives from np.savez / np.savez_compressed and
// a hand-built ZIP64 one, .safetensors; then hostile archives and headers,
// each refused with Exit::data naming the file. Fixtures and expected bytes
// come from tests/fixtures/make_npy_fixtures.py.
#include <doctest/doctest.h>
#include <zlib.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>

#include "attn/error.h"
#include "attn/state_dict.h"
#include "expect_error.h"
#include "test_util.h"
#include "zip_builder.h"

using namespace attn;
using attn::test::expect_error;
using attn::test::read_text;
using attn::test::source_path;
using attn::test::TempDir;
using attn::test::write_text;
using namespace attn::test::zip;

namespace {

std::string fixture(const std::string& name) { return source_path("tests/fixtures/npy/" + name); }

// Compares every key of `sd` with the expected bytes written by the generator.
void check_against_expected(const StateDict& sd, const std::string& prefix,
                            const std::string& keys) {
  const auto m = nlohmann::json::parse(read_text(fixture("manifest.json")));
  const auto expected_keys = m[keys]["keys"].get<std::vector<std::string>>();
  std::vector<std::string> got;
  got = sd.keys();
  std::sort(got.begin(), got.end());  // the manifest lists them sorted; files keep their own order
  CHECK(got == expected_keys);
  for (const auto& e : m["arrays"]) {
    const std::string file = e["file"];
    if (file.rfind(prefix, 0) != 0) continue;
    const std::string key = file.substr(prefix.size());
    CAPTURE(key);
    REQUIRE(sd.contains(key));
    const RawArray a = sd.read_raw(key);
    CHECK(dtype_name(a.dtype) == e["dtype"].get<std::string>());
    CHECK(a.shape == e["shape"].get<std::vector<std::size_t>>());
    CHECK(std::string(a.bytes.begin(), a.bytes.end()) == read_text(fixture(file + ".raw")));
  }
}

// Open a source and read every tensor: a hostile file is refused at the
// latest when its tensors are read.
void load_all(const std::string& path) {
  const StateDict sd = open_state_dict(path);
  for (const std::string& key : sd.keys()) (void)sd.read_raw(key);
}

std::string npy_f4(std::size_t n) {
  Tensor t({n});
  for (std::size_t i = 0; i < n; ++i) t.data[i] = float(i);
  return encode_npy(t);
}

std::string safetensors(const std::string& header, const std::string& data) {
  std::string out;
  put32(out, std::uint32_t(header.size())), put32(out, 0);
  return out + header + data;
}

}  // namespace

TEST_CASE("state_dict: np.savez, np.savez_compressed and ZIP64 archives load NumPy's arrays") {
  check_against_expected(open_state_dict(fixture("weights.npz")), "npz_", "npz");
  check_against_expected(open_state_dict(fixture("weights_compressed.npz")), "npz_", "npz");
  // Written to a pipe-like stream: sizes only in data descriptors and the directory.
  check_against_expected(open_state_dict(fixture("weights_streamed.npz")), "npz_", "npz");
  const StateDict z = open_state_dict(fixture("zip64.npz"));
  REQUIRE(z.size() == 2);
  const StateDict w = read_npz(fixture("weights.npz"));
  CHECK(z.read_raw("Wqkv.weight").bytes == w.read_raw("Wqkv.weight").bytes);
  CHECK(z.read_raw("Wqkv.bias").bytes == w.read_raw("Wqkv.bias").bytes);
}

TEST_CASE("state_dict: .safetensors loads every tensor, metadata ignored") {
  check_against_expected(open_state_dict(fixture("weights.safetensors")), "st_", "safetensors");
}

TEST_CASE("state_dict: a folder of <key>.npy files, other files ignored") {
  TempDir t;
  namespace fs = std::filesystem;
  fs::copy_file(fixture("dtype_f4_le.npy"), t / "Wqkv.weight.npy");
  fs::copy_file(fixture("dtype_f8_be.npy"), t / "Wo.bias.npy");
  write_text(t / "README.txt", "not an array");
  fs::create_directory(t / "sub.npz");
  const StateDict sd = open_state_dict(t.path);
  REQUIRE(sd.size() == 2);
  CHECK(sd.keys().front() == "Wo.bias");
  CHECK(sd.find("Wqkv.weight")->dtype == DType::f4);
  CHECK(sd.find("Wo.bias")->dtype == DType::f8);
  // A malformed file is one bad tensor: listed, refused when used, the others read.
  write_text(t / "broken.npy", "junk");
  const StateDict with_broken = open_state_dict(t.path);
  CHECK(with_broken.keys() == std::vector<std::string>{"Wo.bias", "Wqkv.weight", "broken"});
  expect_error([&] { with_broken.find("broken"); }, Exit::data, t / "broken.npy", "magic");
  CHECK(with_broken.read_raw("Wo.bias").dtype == DType::f8);

  TempDir empty;
  write_text(empty / "w.txt", "x");
  expect_error([&] { open_state_dict(empty.path); }, Exit::data, empty.path, "no .npy files");
  expect_error([&] { open_state_dict(empty / "missing"); }, Exit::no_input, empty / "missing",
               "no such file");
  expect_error([&] { open_state_dict(empty / "w.txt"); }, Exit::data, empty / "w.txt",
               ".safetensors");
  expect_error([&] { read_npz(empty.path); }, Exit::no_input, empty.path, "folder");
}

TEST_CASE("state_dict: hostile .npz archives are refused naming the file") {
  TempDir t;
  const std::string path = t / "bad.npz";
  const std::string stored = read_text(fixture("weights.npz"));
  const std::string deflated = read_text(fixture("weights_compressed.npz"));
  const std::string zip64 = read_text(fixture("zip64.npz"));
  const std::string a = npy_f4(4);
  // 16 MiB of zeros deflates to ~16 KiB.
  const std::string zeros_npy = npy_header_f32({(16u << 20) / 4}) + std::string(16 << 20, '\0');
  auto flip = [](std::string s, std::size_t at) {
    s[at] = char(s[at] ^ 0x55);
    return s;
  };
  auto with32 = [](std::string s, std::size_t at, std::uint32_t v) {
    set32(s, at, v);
    return s;
  };
  const std::size_t eocd = stored.size() - 22;
  struct Bad {
    std::string image, part;
  };
  std::vector<Bad> cases = {
      {"", "not a zip"},
      {"PK\x03\x04 this is not really a zip file at all", "not a zip"},
      {stored.substr(0, stored.size() / 2), "not a zip"},
      {stored.substr(0, stored.size() - 1), "not a zip"},
      {stored.substr(0, eocd), "not a zip"},
      {stored.substr(stored.size() / 3), ""},  // the front cut off: offsets point nowhere
      {deflated.substr(0, deflated.size() - 30), ""},
      {zip64.substr(0, zip64.size() - 23), ""},
      {with32(stored, eocd + 8, 0xEA60EA60u), "more than the limit of 10000"},  // 60000 members
      {with32(stored, eocd + 16, 0x7fffffffu), "outside the file"},
      {with32(stored, eocd + 12, 0x7fffffffu), "outside the file"},
      {with32(zip64, zip64.size() - 22 - 20 + 8, 0x7ffffff0u), "ZIP64"},
      // A data byte of the first member (its .npy header is 128 bytes).
      {flip(stored, stored.find("\x93NUMPY") + 130), "CRC-32"},
      {flip(deflated, 100), ""},  // corrupt deflate stream
      {make_zip({{"a.npy", a, 0, -1, 12345}}), "CRC-32"},
      {make_zip({{"a.npy", a, 8, -1, 12345}}), "CRC-32"},
      // zip bombs: a member inflating past what it declares; a declared size
      // no deflate stream of that length can reach
      {make_zip({{"a.npy", zeros_npy, 8, 200}}), "more than its declared 200 bytes"},
      {make_zip({{"a.npy", a, 8, std::int64_t(1) << 31}}), "1100:1"},
      {make_zip({{"a.npy", a, 8, std::int64_t(a.size()) + 10}}), "declared"},
      {make_zip({{"a.npy", a, 0, std::int64_t(a.size()) + 10}}), "stored member"},
      // members that overlap (the "better zip bomb" trick), or point nowhere
      {make_zip({{"a.npy", a, 8, -1, -1, 0, -1, 40}, {"b.npy", a}}), "overlaps"},
      {make_zip({{"a.npy", a, 0, -1, -1, 0, 5}}), "local header"},
      {make_zip({{"a.npy", a}, {"a.npy", a}}), "twice"},
      {make_zip({{"a.npy", a, 12}}), "compression method 12"},
      {make_zip({{"a.npy", a, 0, -1, -1, 1}}), "encrypted"},
      {make_zip({{"a.txt", a}}), "not a <key>.npy"},
      {make_zip({{"dir/", ""}}), "not a <key>.npy"},
      {make_zip({}), "no arrays"},
      {make_zip({{"a.npy", "not an npy file"}}), "magic"},
      {make_zip({{"a.npy", a.substr(0, a.size() - 1)}}), "truncated"},
  };
  CHECK(cases.size() >= 30);
  for (const Bad& c : cases) {
    CAPTURE(c.part);
    write_text(path, c.image);
    expect_error([&] { load_all(path); }, Exit::data, path, c.part);
  }
  // A member bigger than the first inflate buffer (16 MiB) still loads whole.
  write_text(path, make_zip({{"zeros.npy", zeros_npy, 8}}));
  CHECK(read_npz(path).read_raw("zeros").count() == (16u << 20) / 4);
  // A member's errors name the archive and the member.
  write_text(path, make_zip({{"Wqkv.weight.npy", "junk"}}));
  expect_error([&] { read_npz(path).find("Wqkv.weight"); }, Exit::data, path + ":Wqkv.weight.npy",
               "magic");
}

TEST_CASE("state_dict: hostile .safetensors files are refused naming the file") {
  TempDir t;
  const std::string path = t / "bad.safetensors";
  const std::string f8(8, '\0');
  auto one = [](const std::string& dtype, const std::string& shape, const std::string& offsets) {
    return "{\"w\": {\"dtype\": \"" + dtype + "\", \"shape\": " + shape +
           ", \"data_offsets\": " + offsets + "}}";
  };
  std::string huge_len(8, '\0');
  huge_len[5] = 1;  // 2^40
  struct Bad {
    std::string image, part;
  };
  std::vector<Bad> cases = {
      {"", "truncated"},
      {"\x05\0\0\0", "truncated"},
      {huge_len + "{}", "limit"},
      {safetensors("{}", "").substr(0, 9) + std::string("\xff\xff\xff", 0), "runs past"},
      {std::string("\x40\0\0\0\0\0\0\0{}", 10), "runs past"},
      {safetensors("[]", ""), "'{'"},
      {safetensors("{\"w\": ", ""), "not valid JSON"},
      {safetensors(one("F32", "[2]", "[0, 8]"), f8 + "x"), "trailing"},
      {safetensors(one("F32", "[2]", "[0, 8]"), "1234"), "past the data"},
      {safetensors(one("F32", "[2]", "[4, 12]"), f8 + f8), "gap"},
      {safetensors(one("F32", "[3]", "[0, 8]"), f8), "needs 12"},
      {safetensors(one("F32", "[2]", "[8, 0]"), f8), "before begin"},
      {safetensors(one("F32", "[-2]", "[0, 8]"), f8), "non-negative"},
      {safetensors(one("F32", "[2.5]", "[0, 8]"), f8), "non-negative"},
      {safetensors(one("F32", "[4611686018427387904, 4611686018427387904]", "[0, 8]"), f8),
       "too large"},
      {safetensors(one("F32", "[2]", "[0, 18446744073709551616]"), f8), "non-negative"},
      {safetensors(one("F8_E4M3", "[8]", "[0, 8]"), f8), "'F8_E4M3'"},
      {safetensors(one("F32", "[2]", "[0]"), f8), "data_offsets"},
      {safetensors("{\"w\": {\"dtype\": \"F32\", \"shape\": [2]}}", f8), "data_offsets"},
      {safetensors("{\"w\": 3}", f8), "expected an object"},
      {safetensors("{\"a\": {\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": [0, 8]},"
                   " \"b\": {\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": [4, 12]}}",
                   f8 + std::string(4, '\0')),
       "overlap"},
      {safetensors("{\"a\": {\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": [0, 8]},"
                   " \"a\": {\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": [0, 8]}}",
                   f8),
       "twice"},
      {safetensors(one("BOOL", "[2]", "[0, 2]"), "\x01\x07"), "byte 7"},
      {safetensors(one("F32", "[2]", "[0, 8]").substr(1), f8), "'{'"},
      {safetensors("{\"w\": " + std::string(100000, '[') + "]}", f8), "JSON"},  // deep nesting
  };
  CHECK(cases.size() >= 20);
  for (const Bad& c : cases) {
    CAPTURE(c.part);
    write_text(path, c.image);
    expect_error([&] { load_all(path); }, Exit::data, path, c.part);
  }
}

TEST_CASE("state_dict: random corruption of valid files gives a clean error or a valid load") {
  // A cheap deterministic fuzz pass (the libFuzzer targets go further): flip,
  // overwrite or cut bytes of real NumPy-written files; every outcome must be
  // a load or an attn::Error with Exit::data naming the file, never a crash
  // (run under ASan/UBSan in CI) or another exception.
  TempDir t;
  std::uint64_t state = 88172645463325252ull;
  auto next = [&] {  // xorshift64
    state ^= state << 13, state ^= state >> 7, state ^= state << 17;
    return state;
  };
  int loaded = 0, refused = 0;
  for (const char* f : {"weights.npz", "weights_compressed.npz", "zip64.npz", "weights.safetensors",
                        "fortran_f8_be.npy"}) {
    const std::string original = read_text(fixture(f));
    const std::string path = t / f;
    for (int round = 0; round < 300; ++round) {
      std::string s = original;
      const int edits = 1 + int(next() % 4);
      for (int e = 0; e < edits; ++e) {
        const std::size_t at = std::size_t(next() % s.size());
        switch (next() % 4) {
          case 0:
            s[at] = char(s[at] ^ (1 << (next() % 8)));
            break;
          case 1:
            s[at] = char(next());
            break;
          case 2:
            s[at] = char(0xff);
            break;
          default:
            s.resize(std::max<std::size_t>(at, 1));
            break;
        }
      }
      write_text(path, s);
      try {
        if (std::string(f).find(".npy") != std::string::npos)
          read_npy(path);
        else
          load_all(path);
        ++loaded;
      } catch (const Error& e) {
        ++refused;
        CHECK_MESSAGE(e.code() == Exit::data, e.what());
        CHECK_MESSAGE(std::string(e.what()).rfind(path, 0) == 0, e.what());
      }
    }
  }
  MESSAGE("corrupted files: ", loaded, " still loaded, ", refused, " refused");
  CHECK(refused > 1000);
}

TEST_CASE("state_dict: .npz members are judged when used; the archive's structure at once") {
  TempDir t;
  const std::string path = t / "m.npz";
  write_text(path, make_zip({{"h.0.w.npy", npy_f4(4)},
                             {"h.1.w.npy", "junk"},
                             {"h.2.w.npy", npy_f4(3), 8, -1, 12345}}));  // deflated, bad CRC
  const StateDict sd = open_state_dict(path);
  CHECK(sd.keys() == std::vector<std::string>{"h.0.w", "h.1.w", "h.2.w"});
  CHECK(sd.select("h.0.").read_f32("w", false).data == std::vector<float>{0, 1, 2, 3});
  expect_error([&] { sd.find("h.1.w"); }, Exit::data, path + ":h.1.w.npy", "magic");
  CHECK(sd.find("h.2.w")->shape == std::vector<std::size_t>{3});  // header inflated alone
  expect_error([&] { sd.read_f32("h.2.w", false); }, Exit::data, path + ":h.2.w", "CRC-32");
}
