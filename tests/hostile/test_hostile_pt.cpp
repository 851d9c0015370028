// hostile_pt: torch.save checkpoints through the built binary, a table of
// hostile files. The weights of golden case fused_multi_C16H2_bias_left_S8
// are rebuilt by the test as torch.save zips in many shapes: valid ones
// (transposed and shared storages, big-endian, deflated, wrapped, no
// extension) must give the .npy run's bytes; lying ones (a storage missing
// or short, views past their storage, huge sizes, truncation, bit flips,
// disallowed globals, the legacy format, an expanded view, a mask dtype as
// a weight) exit 65 with one error line naming the culprit, write nothing,
// and leave an output folder of an earlier run byte-for-byte unchanged.
#include <doctest/doctest.h>

#include <filesystem>
#include <functional>

#include "attn/state_dict.h"
#include "cli_checks.h"
#include "hostile_checks.h"
#include "test_util.h"
#include "torch_save_builder.h"

namespace fs = std::filesystem;
using attn::test::q;
using attn::test::run;
using attn::test::RunResult;
using attn::test::TempDir;
using attn::test::pt::PtStorage;
using attn::test::pt::PtTensor;

namespace {

const std::string kCase = "fused_multi_C16H2_bias_left_S8";

std::string case_dir() { return attn::test::source_path("tests/golden/cases/" + kCase); }

// The case's four tensors (Wqkv.weight (48, 16), Wqkv.bias, Wo.weight
// (16, 16), Wo.bias) as float32 bytes, in file order.
struct Weights {
  std::vector<std::string> keys;
  std::vector<std::vector<std::int64_t>> shapes;
  std::vector<std::string> bytes;
};

Weights golden_weights() {
  const attn::StateDict sd = attn::open_state_dict(case_dir() + "/weights");
  Weights w;
  for (const char* k : {"Wqkv.weight", "Wqkv.bias", "Wo.weight", "Wo.bias"}) {
    const attn::Tensor t = sd.read_f32(k, false);
    w.keys.push_back(k);
    w.shapes.emplace_back(t.shape.begin(), t.shape.end());
    w.bytes.emplace_back(reinterpret_cast<const char*>(t.ptr()), t.size() * 4);
  }
  return w;
}

// Each tensor in its own storage "0".."3", C order.
std::vector<PtTensor> plain_tensors(const Weights& w) {
  std::vector<PtTensor> ts;
  for (std::size_t i = 0; i < w.keys.size(); ++i)
    ts.push_back({w.keys[i], std::to_string(i), "FloatStorage", std::int64_t(w.bytes[i].size() / 4),
                  0, w.shapes[i], attn::test::pt::c_strides(w.shapes[i])});
  return ts;
}

std::vector<PtStorage> plain_storages(const Weights& w) {
  std::vector<PtStorage> s;
  for (std::size_t i = 0; i < w.keys.size(); ++i) s.push_back({std::to_string(i), w.bytes[i]});
  return s;
}

std::string plain(const Weights& w) {
  return attn::test::pt::checkpoint(attn::test::pt::state_dict_pickle(plain_tensors(w)),
                                    plain_storages(w));
}

// A checkpoint with one change applied to the tensors and storages.
std::string variant(const Weights& w,
                    const std::function<void(std::vector<PtTensor>&, std::vector<PtStorage>&)>& f,
                    const std::string& wrap = "") {
  std::vector<PtTensor> ts = plain_tensors(w);
  std::vector<PtStorage> ss = plain_storages(w);
  f(ts, ss);
  return attn::test::pt::checkpoint(attn::test::pt::state_dict_pickle(ts, wrap), ss);
}

std::string transpose_f32(const std::string& b, std::size_t rows, std::size_t cols) {
  std::string out(b.size(), '\0');
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t c = 0; c < cols; ++c)
      out.replace((c * rows + r) * 4, 4, b.substr((r * cols + c) * 4, 4));
  return out;
}

struct Case {
  std::string name;   // file written into the scratch folder
  std::string image;  // its bytes
  int code;           // 0: must give the .npy run's bytes
  std::vector<std::string> culprits;
};

std::vector<Case> cases(const Weights& w) {
  using attn::test::pt::pickle_str;
  std::vector<Case> c;
  const std::string good = plain(w);
  // ---- valid variants: the same numbers
  c.push_back({"plain.pt", good, 0, {}});
  c.push_back({"no_extension", good, 0, {}});
  c.push_back({"pytorch_model.bin", good, 0, {}});
  c.push_back({"transposed.pt",
               variant(w,
                       [&](auto& ts, auto& ss) {
                         // Wo.weight saved as a view of its transpose: stride (1, 16)
                         ss[2].bytes = transpose_f32(w.bytes[2], 16, 16);
                         ts[2].stride = {1, 16};
                       }),
               0,
               {}});
  c.push_back({"shared.pt",
               variant(w,
                       [&](auto& ts, auto& ss) {
                         // every tensor a view at its offset into one storage
                         std::string all;
                         for (std::size_t i = 0; i < ts.size(); ++i) {
                           ts[i].storage_key = "0";
                           ts[i].offset = std::int64_t(all.size() / 4);
                           all += w.bytes[i];
                         }
                         for (auto& t : ts) t.storage_numel = std::int64_t(all.size() / 4);
                         ss = {{"0", all}};
                       }),
               0,
               {}});
  c.push_back({"wrapped.ckpt",
               variant(
                   w, [](auto&, auto&) {}, "state_dict"),
               0,
               {}});
  // ---- lying files
  c.push_back({"missing_storage.pt",
               variant(w, [](auto&, auto& ss) { ss.erase(ss.begin() + 2); }),
               65,
               {"missing_storage.pt:Wo.weight", "archive/data/2", "missing"}});
  c.push_back({"short_storage.pt",
               variant(w, [](auto&, auto& ss) { ss[0].bytes.resize(100); }),
               65,
               {"short_storage.pt:Wqkv.weight", "holds 100 bytes"}});
  c.push_back({"view_past_storage.pt",
               variant(w, [](auto& ts, auto&) { ts[3].offset = 1; }),
               65,
               {"view_past_storage.pt", "ends at element 16 of a storage of 16"}});
  c.push_back({"stride_past_storage.pt",
               variant(w,
                       [](auto& ts, auto&) {
                         ts[2].stride = {17, 1};
                       }),
               65,
               {"stride_past_storage.pt", "storage of 256"}});
  c.push_back({"huge_numel.pt",
               variant(w, [](auto& ts, auto&) { ts[0].storage_numel = std::int64_t(1) << 60; }),
               65,
               {"huge_numel.pt:Wqkv.weight", "declares 1152921504606846976 elements"}});
  c.push_back({"huge_shape.pt",
               variant(w,
                       [](auto& ts, auto&) {
                         ts[0].shape = {std::int64_t(1) << 40, std::int64_t(1) << 40};
                         ts[0].stride = {0, 0};
                       }),
               65,
               {"huge_shape.pt", "overflows"}});
  c.push_back({"expanded.pt",
               variant(w,
                       [](auto& ts, auto&) {
                         ts[1].shape = {4, 48};  // more elements than its storage: stride 0
                         ts[1].stride = {0, 1};
                       }),
               65,
               {"expanded.pt:Wqkv.bias", "contiguous()"}});
  c.push_back({"bool_weight.pt",
               variant(w,
                       [](auto& ts, auto& ss) {
                         ts[3].storage_type = "BoolStorage";
                         ts[3].storage_numel = 16;
                         ss[3].bytes = std::string(16, '\1');
                       }),
               65,
               {"bool_weight.pt:Wo.bias", "bool"}});
  c.push_back({"truncated.pt", good.substr(0, good.size() / 2), 65, {"truncated.pt"}});
  std::string flipped = good;
  flipped[good.find(w.bytes[0]) + 100] ^= 0x10;
  c.push_back({"flipped_data.pt", flipped, 65, {"flipped_data.pt:Wqkv.weight", "CRC-32"}});
  std::string flipped_pkl = good;
  flipped_pkl[good.find("rebuild_tensor_v2") + 3] ^= 0x01;
  c.push_back({"flipped_pickle.pt", flipped_pkl, 65, {"flipped_pickle.pt", "CRC-32"}});
  for (const char* g : {"os\nsystem", "builtins\neval", "subprocess\nPopen", "torch\nload",
                        "__builtin__\nexec", "numpy.core.multiarray\n_reconstruct"}) {
    std::string dotted = g;
    dotted[dotted.find('\n')] = '.';
    c.push_back({"global_" + dotted.substr(0, dotted.find('.')) + ".pt",
                 attn::test::pt::checkpoint(std::string("\x80\x02"
                                                        "c") +
                                                g + "\n" + pickle_str("x") + "\x85R.",
                                            {}),
                 65,
                 {"'" + dotted + "'", "not allowed"}});
  }
  c.push_back({"legacy.pt",
               attn::test::read_text(attn::test::source_path("tests/fixtures/pt/legacy.pt")),
               65,
               {"legacy.pt", "legacy format"}});
  c.push_back({"not_a_dict.pt",
               attn::test::pt::checkpoint("\x80\x02N.", {}),
               65,
               {"not_a_dict.pt", "no dict of tensors"}});
  c.push_back({"torchscript.pt",
               attn::test::zip::make_zip({{"m/constants.pkl", "\x80\x02)."}, {"m/version", "3\n"}}),
               65,
               {"torchscript.pt", "TorchScript"}});
  return c;
}

}  // namespace

TEST_CASE(
    "hostile_pt: every checkpoint gives its exit code and one error line and writes nothing") {
  using namespace attn::test::hostile;
  TempDir t;
  const Weights w = golden_weights();
  const std::string cfg = q(case_dir() + "/config.json");
  const RunResult base = run(bin() + " --config " + cfg + " --format npy");
  REQUIRE_MESSAGE(base.exit_code == 0, base.err);
  const std::string out = t / "out";
  const RunResult first = run(bin() + " -q --config " + cfg + " --out-dir " + q(out));
  REQUIRE_MESSAGE(first.exit_code == 0, first.err);
  const auto before = attn::test::snapshot(out);
  int failing = 0;
  for (const Case& c : cases(w)) {
    CAPTURE(c.name);
    attn::test::write_text(t / c.name, c.image);
    const std::string cmd =
        "timeout 20 " + bin() + " --config " + cfg + " --weights " + q(t / c.name);
    if (c.code == 0) {
      const RunResult r = run(cmd + " --format npy");
      CHECK_MESSAGE(r.exit_code == 0, r.err);
      CHECK(r.out == base.out);
      continue;
    }
    ++failing;
    attn::test::check_cli_failure(run(cmd + " --format npy"), c.code, c.culprits);
    const RunResult r = run(cmd + " --out-dir " + q(out));
    CHECK(r.exit_code == c.code);
    CHECK(attn::test::snapshot(out) == before);
    CHECK(temporaries(t.path).empty());
  }
  CHECK(failing >= 20);
}
