// The restricted torch.save pickle reader against checkpoints torch.save wrote
// (tests/fixtures/pt/make_pt.py: expected.json holds what torch reports of each
// tensor) and a hostile table: disallowed globals, memo and stack abuse,
// nesting, views outside their storage, truncation and bit flips.
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <random>

#include "attn/error.h"
#include "containers/torch_pickle.h"

using attn::detail::parse_torch_pickle;
using attn::detail::TorchTensorRecord;
using nlohmann::json;

namespace {

std::string fixture(const std::string& name) {
  return std::string(ATTN_SOURCE_DIR) + "/tests/fixtures/pt/" + name;
}

std::vector<std::uint8_t> bytes_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in.good());
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::vector<TorchTensorRecord> parse(const std::vector<std::uint8_t>& b) {
  return parse_torch_pickle(b.data(), b.size(), "x.pt");
}

std::vector<std::uint8_t> pk(const std::string& s) { return {s.begin(), s.end()}; }

// The error message parse() gives, "" when it succeeds; every failure must be
// attn::Error with Exit::data.
std::string refusal(const std::vector<std::uint8_t>& b) {
  try {
    parse(b);
  } catch (const attn::Error& e) {
    CHECK(e.code() == attn::Exit::data);
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("torch pickle: every tensor of real torch.save checkpoints, as torch reports it") {
  std::ifstream in(fixture("expected.json"));
  const json expected = json::parse(in);
  std::size_t tensors = 0;
  for (const auto& [name, want] : expected.items()) {
    CAPTURE(name);
    const auto got = parse(bytes_of(fixture(name + ".pkl")));
    REQUIRE(got.size() == want.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
      const json& w = want[i];
      CAPTURE(w["name"].get<std::string>());
      CHECK(got[i].name == w["name"].get<std::string>());
      CHECK(attn::dtype_name(got[i].dtype) == w["dtype"].get<std::string>());
      CHECK(got[i].shape == w["shape"].get<std::vector<std::size_t>>());
      CHECK(got[i].stride == w["stride"].get<std::vector<std::int64_t>>());
      CHECK(got[i].offset == w["offset"].get<std::uint64_t>());
      CHECK(got[i].storage_numel == w["storage_numel"].get<std::uint64_t>());
      CHECK(got[i].storage_key == w["storage_key"].get<std::string>());
      ++tensors;
    }
  }
  CHECK(tensors >= 20);
}

TEST_CASE("torch pickle: contiguous() tells C-order views from transposed ones") {
  const auto views = parse(bytes_of(fixture("views.pkl")));
  REQUIRE(views.size() == 8);
  CHECK(views[0].contiguous());   // q = qkv[:2]
  CHECK(views[1].contiguous());   // k = qkv[2:4], offset 4
  CHECK(!views[3].contiguous());  // t = randn(3, 5).t()
  CHECK(views[4].contiguous());   // a 0-d tensor
  CHECK(!views[6].contiguous());  // randn(4, 6)[:, ::2]
}

TEST_CASE("torch pickle: any global but tensors, storages and OrderedDict is refused by name") {
  for (const char* g : {"os_system", "posix_system", "builtins_eval", "subprocess", "torch_load"}) {
    CAPTURE(g);
    const std::string msg = refusal(bytes_of(fixture(std::string("hostile_") + g + ".pkl")));
    CHECK(msg.find("is not allowed") != std::string::npos);
  }
  CHECK(refusal(bytes_of(fixture("hostile_os_system.pkl"))).find("'os.system'") !=
        std::string::npos);
  CHECK(refusal(bytes_of(fixture("hostile_builtins_eval.pkl"))).find("'builtins.eval'") !=
        std::string::npos);
  // Allowed names in other modules are not allowed: the full dotted name counts.
  CHECK(refusal(pk("\x80\x02"
                   "cevil\nOrderedDict\n)R."))
            .find("'evil.OrderedDict'") != std::string::npos);
}

TEST_CASE("torch pickle: malformed streams are refused with the byte offset") {
  const struct {
    const char* what;
    std::string bytes;
    const char* says;
  } cases[] = {
      {"memo get of a key never put", std::string("\x80\x02h\x05.", 5), "never stored"},
      {"stack underflow", std::string("\x80\x02s.", 4), "stack underflow"},
      {"pop across a MARK", std::string("\x80\x02}(s.", 5), "stack underflow"},
      {"TUPLE without MARK", std::string("\x80\x02t.", 4), "no MARK"},
      {"protocol 1", std::string("\x80\x01}.", 4), "protocol 1"},
      {"text INT opcode", std::string("\x80\x02I1\n.", 6), "opcode 0x49"},
      {"INST opcode", std::string("\x80\x02ios\nsystem\n.", 14), "opcode 0x69"},
      {"bytes after STOP", std::string("\x80\x02}.}", 5), "after STOP"},
      {"left on the stack", std::string("\x80\x02}}.", 5), "left on the stack"},
      {"nine-byte LONG1", std::string("\x80\x02\x8a\x09\x01\x02\x03\x04\x05\x06\x07\x08\x09.", 14),
       "9 bytes"},
      {"string past the end",
       std::string("\x80\x02X\xff\xff\x00\x00"
                   "ab",
                   9),
       "truncated"},
      {"no STOP", std::string("\x80\x02}", 3), "truncated"},
      {"not a dict", std::string("\x80\x02N.", 4), "no dict of tensors"},
      {"SETITEM on a list", std::string("\x80\x02]NNs.", 6), "non-dict"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.what);
    const std::string msg = refusal(pk(c.bytes));
    CHECK(msg.find(c.says) != std::string::npos);
    CHECK(msg.rfind("x.pt: ", 0) == 0);
  }
}

TEST_CASE("torch pickle: views outside their storage and absurd sizes are refused") {
  // _rebuild_tensor_v2(('storage', FloatStorage, '0', 'cpu', numel), offset, size, stride, ...)
  auto tensor_pickle = [](int numel, int offset, int rows, int cols, int s0, int s1) {
    using namespace std::string_literals;
    std::string p = "\x80\x02}(X\x01\x00\x00\x00w"s + "ctorch._utils\n_rebuild_tensor_v2\n"s +
                    "((X\x07\x00\x00\x00storage"s + "ctorch\nFloatStorage\n"s +
                    "X\x01\x00\x00\x00"
                    "0"s +
                    "X\x03\x00\x00\x00"
                    "cpuJ"s;
    auto i32 = [&](int v) {
      for (int k = 0; k < 4; ++k) p += char((unsigned(v) >> (8 * k)) & 0xff);
    };
    i32(numel);
    p += "tQJ";
    i32(offset);
    p += "J";
    i32(rows);
    p += "J";
    i32(cols);
    p += "\x86J";
    i32(s0);
    p += "J";
    i32(s1);
    p += "\x86\x89"
         "ccollections\nOrderedDict\n)RtRu.";
    return std::vector<std::uint8_t>(p.begin(), p.end());
  };
  const auto ok = parse(tensor_pickle(12, 0, 4, 3, 3, 1));
  REQUIRE(ok.size() == 1);
  CHECK(ok[0].shape == std::vector<std::size_t>{4, 3});
  CHECK(refusal(tensor_pickle(12, 1, 4, 3, 3, 1)).find("ends at element 12") != std::string::npos);
  CHECK(refusal(tensor_pickle(12, 0, 4, 4, 3, 1)).find("storage of 12") != std::string::npos);
  CHECK(refusal(tensor_pickle(12, -1, 4, 3, 3, 1)).find("negative") != std::string::npos);
  CHECK(refusal(tensor_pickle(12, 0, -4, 3, 3, 1)).find("negative") != std::string::npos);
  CHECK(refusal(tensor_pickle(-1, 0, 4, 3, 3, 1)).find("negative storage") != std::string::npos);
  CHECK(!refusal(tensor_pickle(0x7fffffff, 0, 0x7fffffff, 0x7fffffff, 0x7fffffff, 1)).empty());

  // Each names the tensor's key ("w"), then where data.pkl built it.
  for (const auto& bad : {tensor_pickle(12, 1, 4, 3, 3, 1), tensor_pickle(12, 0, 4, 4, 3, 1),
                          tensor_pickle(12, -1, 4, 3, 3, 1), tensor_pickle(12, 0, -4, 3, 3, 1),
                          tensor_pickle(12, 0, 4, 3, -3, 1), tensor_pickle(-1, 0, 4, 3, 3, 1)}) {
    const std::string msg = refusal(bad);
    CAPTURE(msg);
    CHECK(msg.rfind("x.pt:w: ", 0) == 0);
    CHECK(msg.find("(data.pkl at byte ") != std::string::npos);
  }
  CHECK(refusal(tensor_pickle(12, 1, 4, 3, 3, 1)).find("storage_offset 1") != std::string::npos);

  // A bad view under an int key (not a weight, so it has no name) is still
  // refused, by its byte position.
  auto unnamed = tensor_pickle(12, 1, 4, 3, 3, 1);
  const std::string key("X\x01\x00\x00\x00w", 6);
  const auto at = std::search(unnamed.begin(), unnamed.end(), key.begin(), key.end());
  REQUIRE(at != unnamed.end());
  const std::string int_key = "K\x07";  // BININT1 7
  unnamed.erase(at, at + std::ptrdiff_t(key.size()));
  unnamed.insert(at, int_key.begin(), int_key.end());
  const std::string msg = refusal(unnamed);
  CAPTURE(msg);
  CHECK(msg.rfind("x.pt: tensor view", 0) == 0);
  CHECK(msg.find("(data.pkl at byte ") != std::string::npos);
}

TEST_CASE("torch pickle: nesting, cycles and MARK floods stay bounded") {
  // A dict that contains itself: SETITEM of the memoized dict into itself.
  CHECK(refusal(pk(std::string("\x80\x02}q\x00X\x01\x00\x00\x00"
                               "ah\x00s.",
                               15)))
            .find("contains itself") != std::string::npos);
  // Dicts nested 100 deep: {"a": {"a": ... }}.
  std::string deep = "\x80\x02";
  for (int i = 0; i < 100; ++i)
    deep += std::string(
        "}X\x01\x00\x00\x00"
        "a",
        7);
  deep += "}";
  for (int i = 0; i < 100; ++i) deep += "s";
  deep += ".";
  CHECK(refusal(pk(deep)).find("nested deeper") != std::string::npos);
  // A million MARKs.
  CHECK(refusal(pk("\x80\x02" + std::string(1000000, '(') + "}.")).find("MARK") !=
        std::string::npos);
  // A list appended to itself is fine: nothing walks lists.
  CHECK(refusal(pk(std::string("\x80\x02}X\x01\x00\x00\x00l]q\x00h\x00"
                               "as.",
                               17)))
            .empty());
}

TEST_CASE("torch pickle: every truncation and random bit flips fail cleanly or parse") {
  for (const char* name : {"lightning.pkl", "bf16.pkl", "protocol4.pkl"}) {
    const auto good = bytes_of(fixture(name));
    for (std::size_t n = 0; n < good.size(); ++n) {
      const std::vector<std::uint8_t> cut(good.begin(), good.begin() + std::ptrdiff_t(n));
      CHECK_THROWS_AS(parse(cut), attn::Error);
    }
    std::mt19937 gen(11);
    for (int round = 0; round < 2000; ++round) {
      auto b = good;
      b[gen() % b.size()] ^= std::uint8_t(1u << (gen() % 8));
      try {
        parse(b);  // a flip in a tensor value's digits may still parse: fine
      } catch (const attn::Error& e) {
        CHECK(e.code() == attn::Exit::data);
      }
    }
  }
}

TEST_CASE("torch pickle: the legacy (pre-1.6) format is recognized by its magic number") {
  const auto legacy = bytes_of(fixture("legacy.pt"));
  CHECK(attn::detail::is_legacy_torch_save(legacy.data(), legacy.size()));
  const auto zip = bytes_of(fixture("linear.pt"));
  CHECK(!attn::detail::is_legacy_torch_save(zip.data(), zip.size()));
}
