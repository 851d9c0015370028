// cli_dump: --dump-weights FILE.safetensors and FILE.npz through the built
// binary. Each layout dumped to each container reloads through
// open_state_dict bit-identical to the folder dump and runs to the same
// bytes; the safetensors header holds only dtype, shape and data_offsets plus
// __metadata__ {format, attn_run_layout, attn_run_config}, padded with spaces
// to 8 bytes; NumPy reads the .npz (when /usr/bin/python3 has NumPy); a dump
// onto the weights it reads, or onto a folder, is exit 73 and writes nothing.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "attn/npy.h"
#include "attn/state_dict.h"
#include "attn/writers.h"
#include "cli_checks.h"
#include "hostile_checks.h"
#include "test_util.h"

namespace fs = std::filesystem;
using attn::test::q;
using attn::test::run;
using attn::test::RunResult;
using attn::test::TempDir;

namespace {

std::string bin() { return attn::test::quoted_binary(); }
std::string cfg(const std::string& name) { return attn::test::quoted_config(name); }

bool python_numpy() {
  static const bool ok = std::system("/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1") == 0;
  return ok;
}

void check_bit_identical(const attn::StateDict& a, const attn::StateDict& b) {
  std::vector<std::string> ka = a.keys(), kb = b.keys();
  std::sort(ka.begin(), ka.end());
  std::sort(kb.begin(), kb.end());
  REQUIRE(ka == kb);
  for (const std::string& k : ka) {
    CAPTURE(k);
    const attn::RawArray x = a.read_raw(k), y = b.read_raw(k);
    CHECK(x.dtype == attn::DType::f4);
    CHECK(x.shape == y.shape);
    CHECK(x.bytes == y.bytes);
  }
}

}  // namespace

TEST_CASE(
    "cli_dump: every layout to .safetensors and .npz reloads bit-identical and runs the same") {
  TempDir t;
  const RunResult before = run(bin() + " --config " + cfg("warner_causal.json") + " --format npy");
  REQUIRE(before.exit_code == 0);
  for (const char* layout : {"fused", "separate", "torch_mha", "proj"}) {
    CAPTURE(layout);
    const std::string folder = t / (std::string(layout) + "_dir");
    const RunResult d = run(bin() + " -q --config " + cfg("warner_causal.json") +
                            " --dump-weights " + q(folder) + " --layout " + layout);
    REQUIRE_MESSAGE(d.exit_code == 0, d.err);
    const attn::StateDict ref = attn::open_state_dict(folder);
    for (const char* ext : {".safetensors", ".npz"}) {
      CAPTURE(ext);
      const std::string file = t / (std::string(layout) + ext);
      const RunResult r = run(bin() + " -q --config " + cfg("warner_causal.json") +
                              " --dump-weights " + q(file) + " --layout " + layout);
      REQUIRE_MESSAGE(r.exit_code == 0, r.err);
      CHECK(r.out.empty());
      CHECK(r.err.empty());
      check_bit_identical(attn::open_state_dict(file), ref);
      const RunResult after = run(bin() + " --config " + cfg("warner_causal.json") + " --weights " +
                                  q(file) + " --format npy");
      REQUIRE_MESSAGE(after.exit_code == 0, after.err);
      CHECK(after.out == before.out);
    }
  }
  CHECK(attn::test::hostile::temporaries(t.path).empty());
}

TEST_CASE(
    "cli_dump: the safetensors header is what a safetensors writer writes, plus the metadata") {
  TempDir t;
  const std::string file = t / "w.safetensors";
  REQUIRE(run(bin() + " -q --config " + cfg("raschka_mha_causal.json") + " --dump-weights " +
              q(file) + " --layout separate")
              .exit_code == 0);
  const std::string img = attn::test::read_text(file);
  std::uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= std::uint64_t(std::uint8_t(img[i])) << (8 * i);
  CHECK(n % 8 == 0);
  const std::string text = img.substr(8, n);
  CHECK(text.find_last_not_of(' ') == text.find_last_of('}'));  // padded with spaces only
  const auto h = nlohmann::ordered_json::parse(text);
  REQUIRE(h.begin().key() == "__metadata__");
  const auto& m = h["__metadata__"];
  CHECK(m.size() == 3);
  CHECK(m["format"] == "pt");
  CHECK(m["attn_run_layout"] == "separate");
  const auto c = nlohmann::json::parse(m["attn_run_config"].get<std::string>());
  CHECK(c["layout"] == "separate");
  CHECK(c["weights"] == "w.safetensors");
  CHECK(c["attention"] == "causal");
  std::vector<std::string> keys;
  std::uint64_t at = 0;
  for (const auto& [k, v] : h.items()) {
    if (k == "__metadata__") continue;
    keys.push_back(k);
    CHECK(v.size() == 3);
    CHECK(v["dtype"] == "F32");
    CHECK(v["data_offsets"][0] == at);  // the data in header order, no gap
    at = v["data_offsets"][1].get<std::uint64_t>();
  }
  CHECK(std::is_sorted(keys.begin(), keys.end()));  // the reference's order: by name
  CHECK(keys.size() == 5);
  CHECK(img.size() == 8 + n + at);
}

TEST_CASE("cli_dump: NumPy reads the .npz as np.savez would have written it") {
  if (!python_numpy()) {
    MESSAGE("skipped: /usr/bin/python3 has no NumPy");
    return;
  }
  TempDir t;
  REQUIRE(run(bin() + " -q --config " + cfg("warner_causal.json") + " --dump-weights " +
              q(t / "w.npz") + " --layout separate")
              .exit_code == 0);
  REQUIRE(run(bin() + " -q --config " + cfg("warner_causal.json") + " --dump-weights " +
              q(t / "d") + " --layout separate")
              .exit_code == 0);
  const std::string script =
      "import json, sys, numpy as np\n"
      "z = np.load(sys.argv[1])\n"
      "m = json.load(open(sys.argv[2] + '/manifest.json'))\n"
      "assert sorted(z.files) == sorted(m['keys']), (z.files, m['keys'])\n"
      "for k in z.files:\n"
      "    a, b = z[k], np.load(sys.argv[2] + '/' + k + '.npy')\n"
      "    assert a.dtype == np.float32 and a.shape == b.shape and a.tobytes() == b.tobytes(), k\n"
      "print('ok', len(z.files))\n";
  attn::test::write_text(t / "check.py", script);
  const RunResult r =
      run("/usr/bin/python3 " + q(t / "check.py") + " " + q(t / "w.npz") + " " + q(t / "d"));
  CHECK_MESSAGE(r.exit_code == 0, r.err);
  CHECK(r.out == "ok 8\n");
  // Past 65,535 members the archive needs its ZIP64 end records; NumPy reads them.
  std::vector<attn::Tensor> many(70000, attn::Tensor({1}, 0.5f));
  std::vector<attn::NamedTensor> named;
  for (std::size_t i = 0; i < many.size(); ++i)
    named.push_back({"t" + std::to_string(i), &many[i]});
  attn::test::write_text(t / "many.npz", attn::encode_npz(named));
  attn::test::write_text(t / "many.py",
                         "import sys, numpy as np\nz = np.load(sys.argv[1])\n"
                         "print(len(z.files), float(z['t69999'][0]))\n");
  const RunResult big = run("/usr/bin/python3 " + q(t / "many.py") + " " + q(t / "many.npz"));
  CHECK_MESSAGE(big.exit_code == 0, big.err);
  CHECK(big.out == "70000 0.5\n");
}

TEST_CASE(
    "cli_dump: a dump onto the weights it reads, or onto a folder, is exit 73 and writes nothing") {
  TempDir t;
  for (const char* ext : {".safetensors", ".npz"}) {
    CAPTURE(ext);
    const std::string file = t / (std::string("w") + ext);
    REQUIRE(run(bin() + " -q --config " + cfg("warner_causal.json") + " --dump-weights " + q(file))
                .exit_code == 0);
    const std::string before = attn::test::read_text(file);
    for (const std::string& target : {file, t / (std::string("./w") + ext)}) {
      const RunResult r = run(bin() + " -q --config " + cfg("warner_causal.json") + " --weights " +
                              q(file) + " --layout separate --dump-weights " + q(target));
      attn::test::check_cli_failure(r, 73, {"--dump-weights", "would overwrite"});
      CHECK(attn::test::read_text(file) == before);
    }
    fs::create_directory(t / (std::string("dir") + ext));
    const RunResult r = run(bin() + " -q --config " + cfg("warner_causal.json") +
                            " --dump-weights " + q(t / (std::string("dir") + ext)));
    attn::test::check_cli_failure(r, 73, {"--dump-weights", "is a folder"});
  }
  // A shard of the sharded index the run reads.
  fs::create_directory(t / "sh");
  const std::string shard = t / "sh/model-00001-of-00001.safetensors";
  REQUIRE(run(bin() + " -q --config " + cfg("warner_causal.json") + " --dump-weights " + q(shard))
              .exit_code == 0);
  nlohmann::json index = {{"weight_map", nlohmann::json::object()}};
  const attn::StateDict dumped = attn::open_state_dict(shard);
  for (const std::string& k : dumped.keys())
    index["weight_map"][k] = "model-00001-of-00001.safetensors";
  attn::test::write_text(t / "sh/model.safetensors.index.json", index.dump());
  const std::string shard_before = attn::test::read_text(shard);
  const RunResult onto_shard =
      run(bin() + " -q --config " + cfg("warner_causal.json") + " --weights " +
          q(t / "sh/model.safetensors.index.json") + " --dump-weights " + q(shard));
  attn::test::check_cli_failure(onto_shard, 73, {"would overwrite", "model-00001-of-00001"});
  CHECK(attn::test::read_text(shard) == shard_before);
  // The per_head layout cannot hold an output projection: usage error, no file.
  const RunResult bad = run(bin() + " -q --config " + cfg("warner_causal.json") +
                            " --dump-weights " + q(t / "ph.npz") + " --layout per_head");
  CHECK(bad.exit_code == 64);
  CHECK_FALSE(fs::exists(t / "ph.npz"));
  CHECK(attn::test::hostile::temporaries(t.path).empty());
}
