// torch.save checkpoints as a weights source (lib/src/containers/torch_save.cpp): every
// file tests/fixtures/pt/make_pt.py wrote with torch.save (the tutorial
// modules, nn.MultiheadAttention, checkpoint dicts, bf16/f16/f64, views of
// shared storages) reads as torch.load itself read it (values/<case>/ and
// modules/<name>/ hold its tensors as .npy); then hand-built archives whose
// pickle or zip lies, truncations and bit flips: Exit::data, never a crash or
// a large allocation, and only the tensors read are ever touched.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <functional>
#include <random>

#include "attn/error.h"
#include "attn/state_dict.h"
#include "test_util.h"
#include "torch_save_builder.h"

using namespace attn;
using attn::test::read_text;
using attn::test::source_path;
using attn::test::TempDir;
using attn::test::write_text;
using attn::test::pt::PtTensor;
namespace fs = std::filesystem;

namespace {

std::string pt_fixture(const std::string& rel) { return source_path("tests/fixtures/pt/" + rel); }

// Every tensor of `pt` against the .npy folder torch.load's values were written
// to: the same keys; floats bit-identical once both are float32 (bf16 is
// stored as its exact float32), masks and integers byte-identical.
std::size_t check_same_as_npy(const std::string& pt, const std::string& folder) {
  CAPTURE(pt);
  const StateDict got = open_state_dict(pt);
  const StateDict want = read_npy_folder(folder);
  std::vector<std::string> a = got.keys(), b = want.keys();
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  REQUIRE(a == b);
  for (const std::string& key : got.keys()) {
    CAPTURE(key);
    const TensorInfo& info = *got.find(key);
    CHECK(info.shape == want.find(key)->shape);
    if (dtype_is_float(info.dtype)) {
      const Tensor x = got.read_f32(key, true), y = want.read_f32(key, true);
      CHECK(x.shape == y.shape);
      CHECK(std::equal(x.data.begin(), x.data.end(), y.data.begin(), y.data.end(),
                       [](float p, float q) { return std::memcmp(&p, &q, 4) == 0; }));
      if (info.dtype != DType::bf16) CHECK(info.dtype == want.find(key)->dtype);
    } else {
      const RawArray x = got.read_raw(key), y = want.read_raw(key);
      CHECK(x.dtype == y.dtype);
      CHECK(x.bytes == y.bytes);
    }
  }
  return got.size();
}

// f() fails with Exit::data and a message holding every part.
void refused(const std::function<void()>& f, const std::vector<std::string>& parts) {
  try {
    f();
    FAIL("no error thrown");
  } catch (const Error& e) {
    const std::string msg = e.what();
    CHECK_MESSAGE(e.code() == Exit::data, msg);
    for (const std::string& p : parts) CHECK_MESSAGE(msg.find(p) != std::string::npos, msg);
  }
}

std::string f32_bytes(const std::vector<float>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * 4);
}

std::vector<float> iota(std::size_t n) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = float(i);
  return v;
}

// A small checkpoint: "w" (2, 3) and "b" (3,) in storages 0 and 1.
std::string small_pt() {
  return test::pt::checkpoint(
      test::pt::state_dict_pickle({{"w", "0", "FloatStorage", 6, 0, {2, 3}, {3, 1}},
                                   {"b", "1", "FloatStorage", 3, 0, {3}, {1}}}),
      {{"0", f32_bytes(iota(6))}, {"1", f32_bytes({7, 8, 9})}});
}

}  // namespace

TEST_CASE("torch save: every fixture checkpoint reads as torch.load reads it") {
  std::size_t files = 0, tensors = 0;
  for (const char* dir : {"values", "modules"}) {
    for (const auto& e : fs::directory_iterator(pt_fixture(dir))) {
      if (!e.is_directory()) continue;
      const std::string name = e.path().filename().string();
      if (name == "expanded") continue;  // refused when read (below)
      const std::string pt = std::string(dir) == "values" ? pt_fixture(name + ".pt")
                                                          : pt_fixture("modules/" + name + ".pt");
      tensors += check_same_as_npy(pt, e.path().string());
      ++files;
    }
  }
  CHECK(files >= 20);
  CHECK(tensors >= 90);
}

TEST_CASE("torch save: checkpoint dicts are unwrapped and modules keep their key names") {
  const StateDict l = open_state_dict(pt_fixture("modules/lightning_warner_multi.pt"));
  CHECK(l.keys() == std::vector<std::string>{"model.Wqkv.weight", "model.Wqkv.bias",
                                             "model.Wo.weight", "model.Wo.bias"});
  const StateDict m = open_state_dict(pt_fixture("modules/model_dict_warner_multi.pt"));
  CHECK(m.keys() == std::vector<std::string>{"Wqkv.weight", "Wqkv.bias", "Wo.weight", "Wo.bias"});
  const StateDict mha = open_state_dict(pt_fixture("modules/torch_mha.pt"));
  CHECK(mha.keys() == std::vector<std::string>{"in_proj_weight", "in_proj_bias", "out_proj.weight",
                                               "out_proj.bias"});
  const StateDict bf = open_state_dict(pt_fixture("modules/bf16_warner_causal.pt"));
  CHECK(bf.find("Wqkv.weight")->dtype == DType::bf16);
  CHECK(bf.find("causal_mask")->dtype == DType::b1);
}

TEST_CASE("torch save: views: shared storages, offsets, transposed and strided tensors") {
  const StateDict v = open_state_dict(pt_fixture("views.pt"));
  // q, k, v are slices of one (6, 2) storage; t is a transposed (5, 3) view;
  // strided and permuted are neither C nor Fortran order (gathered).
  for (const char* k : {"q", "k", "v", "t", "strided", "permuted", "scalar", "empty"}) {
    CAPTURE(k);
    const Tensor got = v.read_f32(k, false);
    const Tensor want = read_npy_f32(pt_fixture(std::string("values/views/") + k + ".npy"), false);
    CHECK(got.shape == want.shape);
    CHECK(got.data == want.data);
  }
  // Rows of a strided view, and the transposed read of a gathered one.
  const Tensor all = v.read_f32("strided", false);
  REQUIRE(all.shape.size() == 2);
  const std::size_t K = all.shape[1];
  std::vector<float> row(K);
  v.read_rows("strided", 2, 1, false, row.data(), false);
  CHECK(std::equal(row.begin(), row.end(), all.data.begin() + 2 * std::ptrdiff_t(K)));
  std::vector<float> col(all.shape[0]);
  v.read_rows("strided", 1, 1, true, col.data(), false);
  for (std::size_t r = 0; r < all.shape[0]; ++r) CHECK(col[r] == all.data[r * K + 1]);
  // An expanded tensor (stride 0) is listed, and refused when read.
  const StateDict x = open_state_dict(pt_fixture("expanded.pt"));
  CHECK(x.contains("ones"));
  refused([&] { x.read_f32("ones", false); }, {"expanded.pt:ones", "contiguous()"});
}

TEST_CASE(
    "torch save: recognized by its bytes whatever the name; the legacy format says how to "
    "re-save") {
  TempDir t;
  fs::copy_file(pt_fixture("linear.pt"), t / "checkpoint");  // no extension
  fs::copy_file(pt_fixture("linear.pt"), t / "pytorch_model.bin");
  fs::copy_file(pt_fixture("linear.pt"), t / "last.ckpt");
  for (const char* n : {"checkpoint", "pytorch_model.bin", "last.ckpt"})
    CHECK(open_state_dict(t / n).keys() == std::vector<std::string>{"weight", "bias"});
  refused([&] { open_state_dict(pt_fixture("legacy.pt")); },
          {"legacy.pt", "legacy format", "re-save", "torch.save(torch.load(",
           "_use_new_zipfile_serialization=True"});
  fs::copy_file(pt_fixture("legacy.pt"), t / "legacy_no_ext");
  refused([&] { open_state_dict(t / "legacy_no_ext"); }, {"legacy format"});
  write_text(t / "junk.pt", "not a zip at all");
  refused([&] { open_state_dict(t / "junk.pt"); }, {"junk.pt", "torch.save"});
  write_text(t / "junk", "not a zip at all");
  refused([&] { open_state_dict(t / "junk"); }, {"not a weights source"});
}

TEST_CASE("torch save: storages are read lazily: a corrupt storage fails only its own tensor") {
  TempDir t;
  std::string img = small_pt();
  // Flip a byte of storage 1's data: its CRC no longer matches.
  const std::size_t at = img.find(f32_bytes({7, 8, 9}));
  REQUIRE(at != std::string::npos);
  img[at] ^= 0x40;
  write_text(t / "m.pt", img);
  const StateDict sd = open_state_dict(t / "m.pt");
  CHECK(sd.read_f32("w", false).data == iota(6));
  refused([&] { sd.read_f32("b", false); }, {"m.pt:b", "CRC-32"});
}

TEST_CASE("torch save: hostile archives and pickles are Exit::data naming the problem") {
  using test::pt::checkpoint;
  using test::pt::state_dict_pickle;
  const std::string w6 = f32_bytes(iota(6));
  auto one = [](std::int64_t numel, std::int64_t off, std::vector<std::int64_t> shape,
                std::vector<std::int64_t> stride, const char* type = "FloatStorage") {
    return state_dict_pickle({{"w", "0", type, numel, off, std::move(shape), std::move(stride)}});
  };
  const struct {
    const char* what;
    std::string image;
    std::vector<std::string> says;
  } cases[] = {
      {"storage key missing from the zip",
       checkpoint(state_dict_pickle({{"w", "7", "FloatStorage", 6, 0, {2, 3}, {3, 1}}}),
                  {{"0", w6}}),
       {"m.pt:w", "archive/data/7", "missing"}},
      {"storage smaller than declared",
       checkpoint(one(6, 0, {2, 3}, {3, 1}), {{"0", w6.substr(0, 20)}}),
       {"m.pt:w", "holds 20 bytes", "declares 6 elements"}},
      {"storage larger than declared",
       checkpoint(one(5, 0, {5}, {1}), {{"0", w6}}),
       {"holds 24 bytes"}},
      {"view past the storage (offset)",
       checkpoint(one(6, 1, {2, 3}, {3, 1}), {{"0", w6}}),
       {"m.pt:w: ", "storage_offset 1", "ends at element 6", "data.pkl at byte"}},
      {"view past the storage (strides)",
       checkpoint(one(6, 0, {2, 3}, {4, 1}), {{"0", w6}}),
       {"m.pt:w: ", "storage of 6", "data.pkl at byte"}},
      {"huge declared storage",
       checkpoint(one(std::int64_t(1) << 61, 0, {2, 3}, {3, 1}), {{"0", w6}}),
       {"declares 2305843009213693952 elements"}},
      {"numel overflowing bytes",
       checkpoint(one(std::int64_t(1) << 62, 0, {2, 3}, {3, 1}, "DoubleStorage"), {{"0", w6}}),
       {"too many"}},
      {"huge declared shape",
       checkpoint(one(6, 0, {std::int64_t(1) << 40, std::int64_t(1) << 40}, {0, 0}), {{"0", w6}}),
       {"m.pt:w: "}},
      {"negative stride",
       checkpoint(one(6, 0, {2, 3}, {-3, 1}), {{"0", w6}}),
       {"m.pt:w: ", "negative size or stride", "stride -3"}},
      {"no data.pkl",
       test::zip::make_zip({{"archive/data/0", w6}}),
       {"without <archive>/data.pkl"}},
      {"two data.pkl",
       test::zip::make_zip(
           {{"a/data.pkl", one(6, 0, {6}, {1})}, {"b/data.pkl", one(6, 0, {6}, {1})}}),
       {"two pickles"}},
      {"TorchScript archive",
       test::zip::make_zip({{"m/constants.pkl", "\x80\x02)."}, {"m/code/x", ""}}),
       {"TorchScript"}},
      {"bad byteorder",
       checkpoint(one(6, 0, {6}, {1}), {{"0", w6}}, {{"archive/byteorder", "middle"}}),
       {"byteorder", "little"}},
      {"disallowed global",
       checkpoint("\x80\x02"
                  "cos\nsystem\n" +
                      test::pt::pickle_str("touch x") + "\x85R.",
                  {}),
       {"'os.system'", "not allowed"}},
      {"a dict without tensors",
       checkpoint("\x80\x02}" + test::pt::pickle_str("epoch") + test::pt::pickle_int(3) + "s.", {}),
       {"holds no tensors"}},
      {"the same name twice",
       checkpoint(state_dict_pickle({{"w", "0", "FloatStorage", 6, 0, {6}, {1}},
                                     {"w", "0", "FloatStorage", 6, 0, {6}, {1}}}),
                  {{"0", w6}}),
       {"two tensors"}},
  };
  TempDir t;
  for (const auto& c : cases) {
    CAPTURE(c.what);
    write_text(t / "m.pt", c.image);
    try {
      const StateDict sd = open_state_dict(t / "m.pt");
      for (const std::string& k : sd.keys()) sd.read_raw(k);
      FAIL("accepted");
    } catch (const Error& e) {
      CHECK(e.code() == Exit::data);
      const std::string msg = e.what();
      for (const std::string& s : c.says) CHECK_MESSAGE(msg.find(s) != std::string::npos, msg);
    }
  }
}

TEST_CASE("torch save: valid variants: wrapped, big-endian, deflated pickle, shared storage") {
  using test::pt::checkpoint;
  using test::pt::state_dict_pickle;
  TempDir t;
  // {"state_dict": ..., "epoch": 3}
  write_text(t / "a.pt",
             checkpoint(state_dict_pickle({{"w", "0", "FloatStorage", 6, 0, {2, 3}, {3, 1}}},
                                          "state_dict"),
                        {{"0", f32_bytes(iota(6))}}));
  CHECK(open_state_dict(t / "a.pt").read_f32("w", false).data == iota(6));
  // byteorder "big" (PyTorch >= 2.1 on a big-endian machine): elements swapped.
  std::string be;
  for (float f : iota(6)) {
    const std::string b = f32_bytes({f});
    be += std::string(b.rbegin(), b.rend());
  }
  write_text(t / "b.pt", checkpoint(state_dict_pickle({{"w", "0", "FloatStorage", 6, 0, {6}, {1}}}),
                                    {{"0", be}}, {{"archive/byteorder", "big"}}));
  CHECK(open_state_dict(t / "b.pt").read_f32("w", false).data == iota(6));
  // A deflated data.pkl (a checkpoint re-zipped by hand) and deflated storages.
  test::zip::ZipMember pkl{"archive/data.pkl",
                           state_dict_pickle({{"w", "0", "FloatStorage", 6, 0, {6}, {1}}}), 8};
  test::zip::ZipMember st{"archive/data/0", f32_bytes(iota(6)), 8};
  write_text(t / "c.pt", test::zip::make_zip({pkl, st}));
  CHECK(open_state_dict(t / "c.pt").read_f32("w", false).data == iota(6));
  // Two tensors of one storage, one of them transposed, bf16 and a bool mask.
  write_text(t / "d.pt",
             checkpoint(state_dict_pickle({{"a", "0", "FloatStorage", 6, 0, {2, 2}, {2, 1}},
                                           {"aT", "0", "FloatStorage", 6, 2, {2, 2}, {1, 2}},
                                           {"h", "1", "BFloat16Storage", 2, 0, {2}, {1}},
                                           {"m", "2", "BoolStorage", 2, 0, {2}, {1}}}),
                        {{"0", f32_bytes(iota(6))},
                         {"1", std::string("\x80\x3f\x00\xc0", 4)},
                         {"2", std::string("\x01\x00", 2)}}));
  const StateDict d = open_state_dict(t / "d.pt");
  CHECK(d.read_f32("a", false).data == std::vector<float>{0, 1, 2, 3});
  CHECK(d.read_f32("aT", false).data == std::vector<float>{2, 4, 3, 5});
  CHECK(d.read_f32("h", false).data == std::vector<float>{1, -2});
  CHECK(to_mask(d.read_raw("m"), "m").data == std::vector<std::uint8_t>{1, 0});
}

TEST_CASE("torch save: every truncation and random bit flips fail cleanly or read") {
  TempDir t;
  for (const std::string& name : {std::string("modules/warner_multi.pt"), std::string("bf16.pt")}) {
    const std::string good = read_text(pt_fixture(name));
    auto attempt = [&](const std::string& img) {
      write_text(t / "x.pt", img);
      try {
        const StateDict sd = open_state_dict(t / "x.pt");
        for (const std::string& k : sd.keys()) {
          sd.read_raw(k);
          if (dtype_is_float(sd.find(k)->dtype)) sd.read_f32(k, true);
        }
      } catch (const Error& e) {
        CHECK(e.code() == Exit::data);
      }
    };
    for (std::size_t n = 0; n < good.size(); n += 7) attempt(good.substr(0, n));
    std::mt19937 gen(7);
    for (int round = 0; round < 600; ++round) {
      std::string b = good;
      b[gen() % b.size()] ^= char(1u << (gen() % 8));
      attempt(b);
    }
  }
}
