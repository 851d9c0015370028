// The .npy reader and writer (lib/src/containers/npy.cpp) and the file readers
// (lib/src/base/files.cpp). Valid files come from NumPy
// (tests/fixtures/make_npy_fixtures.py writes them with the expected bytes
// and float32 values beside them); hostile images are built here, many after
// NumPy's own tests in numpy/lib/tests/test_format.py.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>

#include "attn/error.h"
#include "attn/files.h"
#include "attn/npy.h"
#include "expect_error.h"
#include "test_util.h"

using namespace attn;
using attn::test::read_text;
using attn::test::source_path;
using attn::test::TempDir;
using attn::test::write_text;

namespace {

std::string fixture(const std::string& name) { return source_path("tests/fixtures/npy/" + name); }

// A .npy image with `dict` as its header text, padded like np.save (spaces
// and '\n' up to a multiple of 64) and `data` after it.
std::string npy_image(const std::string& dict, const std::string& data, int major = 1) {
  const std::size_t len_bytes = major == 1 ? 2 : 4;
  std::size_t hlen = dict.size() + 1;
  hlen += (64 - (8 + len_bytes + hlen) % 64) % 64;
  std::string header = dict + std::string(hlen - dict.size() - 1, ' ') + "\n";
  std::string out = std::string("\x93NUMPY", 6) + char(major) + '\0';
  for (std::size_t i = 0; i < len_bytes; ++i) out += char((hlen >> (8 * i)) & 0xff);
  return out + header + data;
}

std::string f4_dict(const std::string& shape) {
  return "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }";
}

// Runs `f`, which must throw attn::Error with `code` and a message that
// starts with `name: ` (the culprit first, CONTRACT.md "Exit codes").
// The message starts with "<name>: ".
void expect_error(const std::function<void()>& f, Exit code, const std::string& name,
                  const std::string& part = "") {
  test::expect_error(f, code, name + ": ", part);
}

void expect_parse_error(const std::string& image, const std::string& part = "") {
  expect_error(
      [&] {
        parse_npy(reinterpret_cast<const std::uint8_t*>(image.data()), image.size(), "hostile.npy");
      },
      Exit::data, "hostile.npy", part);
}

nlohmann::json manifest() { return nlohmann::json::parse(read_text(fixture("manifest.json"))); }

bool same_bits(const attn::FloatBuffer& a, const std::string& raw) {
  return a.size() * 4 == raw.size() &&
         (a.empty() || std::memcmp(a.data(), raw.data(), raw.size()) == 0);
}

}  // namespace

TEST_CASE("npy: every NumPy-written fixture loads to NumPy's bytes and float32 values") {
  const auto m = manifest();
  REQUIRE(m["arrays"].size() >= 40);
  for (const auto& e : m["arrays"]) {
    const std::string file = e["file"];
    if (file.rfind("npz_", 0) == 0 || file.rfind("st_", 0) == 0) continue;  // test_state_dict
    CAPTURE(file);
    const RawArray a = read_npy(fixture(file));
    CHECK(dtype_name(a.dtype) == e["dtype"].get<std::string>());
    CHECK(a.shape == e["shape"].get<std::vector<std::size_t>>());
    CHECK(a.bytes.size() == a.count() * dtype_size(a.dtype));
    const std::string raw = read_text(fixture(file + ".raw"));
    CHECK(std::string(a.bytes.begin(), a.bytes.end()) == raw);
    if (e.contains("f32")) {
      const Tensor t = to_float32(a, file, /*allow_nonfinite=*/true);
      CHECK(t.shape == a.shape);
      CHECK(same_bits(t.data, read_text(fixture(file + ".f32"))));
    }
  }
}

TEST_CASE("npy: header lengths >= 0x80 and the 10,000-byte maximum load") {
  // xtensor's load_npy misread these.
  for (const char* f :
       {"many_dims.npy", "header_0x80.npy", "header_0x1f0.npy", "header_max_v2.npy"}) {
    CAPTURE(f);
    const std::string image = read_text(fixture(f));
    CHECK(static_cast<unsigned char>(image[8]) >= 0x80);
    CHECK_NOTHROW(read_npy(fixture(f)));
  }
  CHECK(read_npy(fixture("many_dims.npy")).shape.size() == 32);
}

TEST_CASE("npy: float16 converts exactly, float64 rounds like astype(float32)") {
  const Tensor h = to_float32(read_npy(fixture("f2_specials_be.npy")), "h", false);
  CHECK(h.data[0] == std::ldexp(1.0f, -24));  // smallest subnormal half
  CHECK(h.data[3] == 65504.0f);               // largest half
  CHECK(std::signbit(h.data[4]));             // -0 keeps its sign
  const Tensor d = to_float32(read_npy(fixture("f8_rounding_le.npy")), "d", false);
  CHECK(d.data[0] == 0.1f);
  CHECK(d.data[6] == 1.0f);                          // 1 + 2^-24 is a tie: rounds to even
  CHECK(d.data[7] == 1.0f + std::ldexp(1.0f, -22));  // 1 + 3*2^-24 rounds up
}

TEST_CASE("npy: non-finite values are refused with the first multi-index") {
  const RawArray a = read_npy(fixture("nonfinite_f4.npy"));
  expect_error([&] { to_float32(a, "nonfinite_f4.npy", false); }, Exit::data, "nonfinite_f4.npy",
               "non-finite value nan at index (0, 2)");
  const Tensor t = to_float32(a, "x", true);
  CHECK(std::isnan(t.data[2]));
  CHECK(std::isinf(t.data[4]));
  expect_error([&] { to_float32(read_npy(fixture("nonfinite_f2.npy")), "h.npy", false); },
               Exit::data, "h.npy", "inf at index (1,)");
  expect_error([&] { to_float32(read_npy(fixture("overflow_f8.npy")), "o.npy", false); },
               Exit::data, "o.npy", "(1, 0)");
  expect_error([&] { to_float32(read_npy(fixture("dtype_i2_be.npy")), "i.npy", false); },
               Exit::data, "i.npy", "int16");
}

TEST_CASE("first_nonfinite: the first inf or NaN, across and inside its 4096-value blocks") {
  std::vector<float> v(10000, 1.0f);
  v[7] = std::numeric_limits<float>::max();  // finite: every exponent bit but one
  v[8] = -std::numeric_limits<float>::denorm_min();
  CHECK(first_nonfinite(v.data(), v.size()) == v.size());
  CHECK(first_nonfinite(v.data(), 0) == 0);
  for (std::size_t at : {std::size_t(0), std::size_t(4095), std::size_t(4096), std::size_t(9999)})
    for (float bad :
         {std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
          std::numeric_limits<float>::quiet_NaN()}) {
      CAPTURE(at);
      CAPTURE(bad);
      std::vector<float> w = v;
      w[at] = bad;
      if (at + 3 < w.size()) w[at + 3] = bad;  // a later one in the same block is not the first
      CHECK(first_nonfinite(w.data(), w.size()) == at);
      CHECK(first_nonfinite(w.data(), at) == at);  // a range that stops before it
    }
}

TEST_CASE("npy: masks from bool, int and 0/1 float arrays") {
  const RawArray b = read_npy(fixture("dtype_b1_na.npy"));
  const Mask mb = to_mask(b, "b");
  CHECK(std::string(mb.data.begin(), mb.data.end()) == std::string(b.bytes.begin(), b.bytes.end()));
  const RawArray i = read_npy(fixture("dtype_i8_be.npy"));
  const Mask mi = to_mask(i, "i");
  for (std::size_t k = 0; k < i.count(); ++k) {
    std::int64_t v;
    std::memcpy(&v, &i.bytes[k * 8], 8);
    CHECK(mi.data[k] == (v != 0));
  }
  CHECK(mi.data[0] == 1);  // int64 max
  CHECK(mi.data[2] == 0);  // 0
  Tensor f({4});
  f.data = {0.0f, 1.0f, 1.0f, 0.0f};
  const std::string img = encode_npy(f);
  const RawArray fa = parse_npy(reinterpret_cast<const std::uint8_t*>(img.data()), img.size(), "f");
  CHECK(to_mask(fa, "f").data == std::vector<std::uint8_t>{0, 1, 1, 0});
  expect_error([&] { to_mask(read_npy(fixture("dtype_f4_le.npy")), "m.npy"); }, Exit::data, "m.npy",
               "index (0, 0)");
}

TEST_CASE("npy: encode_npy matches np.save byte for byte") {
  struct Case {
    const char* file;
    std::vector<std::size_t> shape;
  };
  for (const Case& c : {Case{"encode_2x3.npy", {2, 3}}, Case{"encode_0d.npy", {}},
                        Case{"encode_5.npy", {5}}, Case{"encode_1x1x1x4.npy", {1, 1, 1, 4}}}) {
    CAPTURE(c.file);
    Tensor t(c.shape);
    for (std::size_t k = 0; k < t.size(); ++k) t.data[k] = float(k) * 0.5f - 1.0f;
    CHECK(encode_npy(t) == read_text(fixture(c.file)));
  }
  const auto m = manifest();
  for (const auto& h : m["headers"]) {
    const auto shape = h["shape"].get<std::vector<std::size_t>>();
    CAPTURE(shape_str(shape));
    std::string hex;
    for (unsigned char ch : npy_header_f32(shape)) {
      char b[3];
      std::snprintf(b, sizeof b, "%02x", ch);
      hex += b;
    }
    CHECK(hex == h["hex"].get<std::string>());
    CHECK(npy_header_f32(shape).size() % 64 == 0);
  }
}

TEST_CASE("npy: encode then parse round trips") {
  const Tensor t = attn::test::random_tensor({3, 5, 2}, 7);
  const std::string img = encode_npy(t);
  const RawArray a = parse_npy(reinterpret_cast<const std::uint8_t*>(img.data()), img.size(), "r");
  CHECK(to_float32(a, "r", false).data == t.data);
  // Keys in any order, double quotes, no trailing comma, tabs: all literal Python.
  const std::string data(8, '\0');
  const std::string img2 =
      npy_image("{\"shape\": (2,),\t'fortran_order' : False,'descr':'<f4'}", data);
  CHECK(parse_npy(reinterpret_cast<const std::uint8_t*>(img2.data()), img2.size(), "k").shape ==
        std::vector<std::size_t>{2});
  // Python 2 long suffixes, as format.py's _filter_header accepts in 1.0/2.0.
  const std::string img3 = npy_image(f4_dict("(2L, 1L)"), data);
  CHECK(parse_npy(reinterpret_cast<const std::uint8_t*>(img3.data()), img3.size(), "l").count() ==
        2);
}

TEST_CASE("npy: hostile headers and data are refused naming the file") {
  const std::string d6(24, '\0');  // data of a (2, 3) float32
  const std::string ok = npy_image(f4_dict("(2, 3)"), d6);
  expect_parse_error("", "magic");
  struct Bad {
    std::string image, part;
  };
  std::vector<Bad> cases = {
      // test_format.py malformed_magic / bad_version_magic
      {std::string("\x92NUMPY\x01\x00", 8) + ok.substr(8), "magic"},
      {std::string("\x00NUMPY\x01\x00", 8) + ok.substr(8), "magic"},
      {std::string("\x93numpy\x01\x00", 8) + ok.substr(8), "magic"},
      {std::string("\x93MATLB\x01\x00", 8) + ok.substr(8), "magic"},
      {std::string("\x93NUMPY\x01", 7), "magic"},
      {std::string("\x93NUMPY", 6), "magic"},
      {std::string("\x93NUMPY\x01\x01", 8) + ok.substr(8), "version 1.1"},
      {std::string("\x93NUMPY\x00\x00", 8) + ok.substr(8), "version 0.0"},
      {std::string("\x93NUMPY\x00\x01", 8) + ok.substr(8), "version 0.1"},
      {std::string("\x93NUMPY\x04\x00", 8) + ok.substr(8), "version 4.0"},
      {std::string("\x93NUMPY\xff\xff", 8) + ok.substr(8), "version 255.255"},
      // header length cut off / longer than the file
      {std::string("\x93NUMPY\x01\x00\x05", 9), "truncated"},
      {std::string("\x93NUMPY\x02\x00\x05\x00", 10), "truncated"},
      {ok.substr(0, 40), "truncated"},
      // header over NumPy's 10,000-byte cap (both length widths)
      {std::string("\x93NUMPY\x01\x00\xff\xff", 10) + std::string(65535, ' '), "10000"},
      {npy_image(f4_dict("(2, 3)") + std::string(10001, ' '), d6, 2), "10000"},
      // test_bad_header: missing and extra keys
      {npy_image("{'descr': '<f4', 'shape': (2, 3)}", d6), "fortran_order"},
      {npy_image("{'fortran_order': False, 'shape': (2, 3)}", d6), "descr"},
      {npy_image("{'descr': '<f4', 'fortran_order': False}", d6), "shape"},
      {npy_image("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), 'extrakey': -1}", d6),
       "extrakey"},
      {npy_image("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)}", d6),
       "twice"},
      {npy_image("{}", d6), "descr"},
      {npy_image("[1, 2]", d6), "'{'"},
      {npy_image("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)", d6), ""},
      // wrong value types
      {npy_image("{'descr': '<f4', 'fortran_order': 1, 'shape': (2, 3)}", d6), "True or False"},
      {npy_image("{'descr': '<f4', 'fortran_order': 'True', 'shape': (2, 3)}", d6),
       "True or False"},
      {npy_image("{'descr': '<f4', 'fortran_order': False, 'shape': [2, 3]}", d6), "tuple"},
      {npy_image(f4_dict("(6)"), d6), "not a tuple"},
      {npy_image(f4_dict("(-6,)"), d6), "non-negative"},
      {npy_image(f4_dict("(2.5,)"), d6), ""},
      {npy_image(f4_dict("('6',)"), d6), "non-negative"},
      {npy_image(f4_dict("((2, 3),)"), d6), "non-negative"},
      {npy_image(f4_dict("(06,)"), d6), "leading zero"},
      {npy_image(f4_dict("(2,,3)"), d6), ""},
      {npy_image("{'descr': 4, 'fortran_order': False, 'shape': (6,)}", d6), "quoted"},
      {npy_image("{'descr': '<f4', 'fortran_order': __import__('os'), 'shape': (6,)}", d6), ""},
      // dtypes that are never loaded
      {npy_image("{'descr': '|O', 'fortran_order': False, 'shape': (3,)}", d6), "never unpickled"},
      {npy_image("{'descr': '<U2', 'fortran_order': False, 'shape': (3,)}", d6), "'<U2'"},
      {npy_image("{'descr': '|S8', 'fortran_order': False, 'shape': (3,)}", d6), "'|S8'"},
      {npy_image("{'descr': '|V8', 'fortran_order': False, 'shape': (3,)}", d6), "'|V8'"},
      {npy_image("{'descr': '<c8', 'fortran_order': False, 'shape': (3,)}", d6), "'<c8'"},
      {npy_image("{'descr': '<M8[ns]', 'fortran_order': False, 'shape': (3,)}", d6), "M8"},
      {npy_image("{'descr': [('a', '<f4'), ('b', '<f8')], 'fortran_order': False, 'shape': (2,)}",
                 d6),
       "structured"},
      // sizes: overflow, huge, truncated, trailing
      {npy_image(f4_dict("(4611686018427387904, 4611686018427387904)"), d6), "too large"},
      {npy_image(f4_dict("(4611686018427387904,)"), d6), "too large"},
      {npy_image(f4_dict("(0, 4611686018427387904, 4611686018427387904)"), ""), "too large"},
      {npy_image(f4_dict("(99999999999999999999999,)"), d6), "too large"},
      {npy_image(f4_dict("(1099511627776,)"), d6), "truncated"},
      {npy_image(f4_dict("(2, 3)"), d6.substr(1)), "truncated"},
      {npy_image(f4_dict("(2, 3)"), d6 + "x"), "trailing"},
      {npy_image(f4_dict("(" +
                         [] {
                           std::string s;
                           for (int i = 0; i < 65; ++i) s += "1, ";
                           return s;
                         }() +
                         ")"),
                 std::string(4, '\0')),
       "dimensions"},
      // padding and encodings
      {std::string("\x93NUMPY\x01\x00\x40\x00", 10) + f4_dict("(2, 3)") +
           std::string(64 - f4_dict("(2, 3)").size(), ' ') + d6,
       "newline"},
      {npy_image("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }\xe9", d6), "233"},
      {npy_image("{'descr': '<f\xc3\xa9', 'fortran_order': False, 'shape': (2, 3), }", d6, 3),
       "195"},
      {npy_image(std::string("{'descr': '<f4',\0 'fortran_order': False, 'shape': (2, 3), }", 61),
                 d6),
       "byte 0"},
      // bool bytes other than 0/1
      {npy_image("{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }",
                 std::string("\1\2\0", 3)),
       "byte 2"},
  };
  CHECK(cases.size() >= 50);
  for (const Bad& c : cases) {
    CAPTURE(c.part);
    expect_parse_error(c.image, c.part);
  }
}

TEST_CASE("npy: a valid file cut at every byte is refused, never misread") {
  for (const char* f : {"fortran_f8_be.npy", "version_3_0.npy", "many_dims.npy"}) {
    const std::string image = read_text(fixture(f));
    for (std::size_t n = 0; n < image.size(); ++n) {
      CAPTURE(n);
      expect_parse_error(image.substr(0, n));
    }
  }
}

TEST_CASE("files: missing, folders, devices and silent FIFOs are refused without hanging") {
  TempDir t;
  expect_error([&] { read_npy(t / "nope.npy"); }, Exit::no_input, t / "nope.npy", "no such file");
  expect_error([&] { read_npy(t.path); }, Exit::no_input, t.path, "is a folder, expected a file");
  expect_error([&] { read_file("/dev/zero", 1 << 20); }, Exit::no_input, "/dev/zero", "regular");
  const std::string fifo = t / "fifo.npy";
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  // A FIFO is read once; one nobody writes to fails after a short wait.
  expect_error([&] { read_npy(fifo); }, Exit::no_input, fifo, "nobody writes to");
  write_text(t / "big.npy", std::string(100, 'x'));
  expect_error([&] { read_file(t / "big.npy", 99); }, Exit::data, t / "big.npy", "100 bytes");
  CHECK(read_file(t / "big.npy", 100).size() == 100);
  write_text(t / "bad.npy", "not numpy");
  expect_error([&] { read_npy(t / "bad.npy"); }, Exit::data, t / "bad.npy", "magic");
  if (geteuid() != 0) {  // root reads anything
    chmod((t / "big.npy").c_str(), 0);
    expect_error([&] { read_npy(t / "big.npy"); }, Exit::no_input, t / "big.npy", "cannot open");
  }
  CHECK(is_directory(t.path));
  CHECK_FALSE(is_directory(fifo));
  CHECK(resolve_path("/cfg", "w.npz") == "/cfg/w.npz");
  CHECK(resolve_path("/cfg/", "w.npz") == "/cfg/w.npz");
  CHECK(resolve_path("/cfg", "/abs/w.npz") == "/abs/w.npz");
}

TEST_CASE("files: read_stdin reads to EOF and stops past the limit") {
  TempDir t;
  write_text(t / "in", std::string(70000, 'a'));
  const int saved = dup(0);
  REQUIRE(saved >= 0);
  auto with_stdin = [&](const std::function<void()>& f) {
    const int fd = open((t / "in").c_str(), O_RDONLY);
    REQUIRE(fd >= 0);
    dup2(fd, 0);
    close(fd);
    f();
    dup2(saved, 0);
  };
  with_stdin([] { CHECK(read_stdin(70000).size() == 70000); });
  with_stdin([] { expect_error([] { read_stdin(69999); }, Exit::data, "-", "69999"); });
  close(saved);
}
