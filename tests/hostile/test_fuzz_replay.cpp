// fuzz replay: every seed (fuzz/corpus/<target>/) and every past finding
// (fuzz/regressions/<target>/) run through the same target body the libFuzzer
// binaries run (fuzz/targets.h), so a fixed crash stays fixed in the normal
// build and under scripts/sanitize.sh. A target that throws anything but
// attn::Error, or crashes, fails this test.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "../../fuzz/targets.h"
#include "../../fuzz/targets_gguf.h"
#include "../../fuzz/targets_pickle.h"
#include "test_util.h"

namespace fs = std::filesystem;

namespace {

using Target = int (*)(const std::uint8_t*, std::size_t);

std::vector<std::uint8_t> read_bytes(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// Runs every file of fuzz/corpus/<name>/ and fuzz/regressions/<name>/; returns
// how many seeds there were.
std::size_t replay(const std::string& name, Target target) {
  std::size_t seeds = 0;
  for (const char* kind : {"corpus", "regressions"}) {
    const fs::path dir = attn::test::source_path(std::string("fuzz/") + kind + "/" + name);
    if (!fs::is_directory(dir)) continue;
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(dir))
      if (e.is_regular_file() && e.path().filename().string()[0] != '.') files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const fs::path& p : files) {
      CAPTURE(p.string());
      const std::vector<std::uint8_t> bytes = read_bytes(p);
      CHECK_NOTHROW(target(bytes.data(), bytes.size()));
      if (std::string(kind) == "corpus") ++seeds;
    }
  }
  return seeds;
}

}  // namespace

TEST_CASE("unit: fuzz replay of the npy target's seeds and regressions") {
  CHECK(replay("npy", fuzz_npy) >= 20);
}

TEST_CASE("unit: fuzz replay of the npz target's seeds and regressions") {
  CHECK(replay("npz", fuzz_npz) >= 5);
}

TEST_CASE("unit: fuzz replay of the safetensors target's seeds and regressions") {
  CHECK(replay("safetensors", fuzz_safetensors) >= 5);
}

TEST_CASE("unit: fuzz replay of the index target's seeds and regressions") {
  CHECK(replay("index", fuzz_index) >= 5);
  // The valid seed reaches both shards through the harness's folder.
  const auto seed = read_bytes(attn::test::source_path("fuzz/corpus/index/both_shards.json"));
  const std::string path = attn::fuzz::index_folder() + "/seed.safetensors.index.json";
  attn::fuzz::write_scratch(path, seed.data(), seed.size());
  const attn::StateDict sd = attn::open_state_dict(path);
  CHECK(sd.read_f32("h.0.w", false).data == std::vector<float>{1, 2});
  CHECK(sd.read_f32("h.1.b", false).data == std::vector<float>{1});
  ::unlink(path.c_str());
}

TEST_CASE("unit: fuzz replay of the config target's seeds and regressions") {
  CHECK(replay("config", fuzz_config) >= 10);
}

TEST_CASE("unit: fuzz replay of the torch.save pickle target's seeds and regressions") {
  CHECK(replay("pickle", fuzz_pickle) >= 10);
}

TEST_CASE("unit: fuzz replay of the whole torch.save container target's seeds and regressions") {
  CHECK(replay("pt", fuzz_pt) >= 5);
  // The seeds are real torch.save files: they open and read.
  CHECK(attn::read_torch_save(attn::test::source_path("fuzz/corpus/pt/views.pt")).size() == 8);
}

TEST_CASE("unit: fuzz replay of the GGUF target's seeds and regressions") {
  CHECK(replay("gguf", fuzz_gguf) >= 20);
  // The seeds are valid GGUF files of every dequantized type: they open and read.
  const attn::StateDict sd =
      attn::open_state_dict(attn::test::source_path("fuzz/corpus/gguf/q4_k.gguf"));
  CHECK(sd.find("blk.0.attn_q.weight")->gguf_type == "Q4_K");
  CHECK(sd.read_f32("blk.0.attn_q.weight", true).size() == 4 * 256);
}

TEST_CASE("unit: the fuzz seeds are accepted where they are valid") {
  // The seeds must reach the readers' deep paths, not just their first check:
  // the real NumPy files parse, so the replay above exercised the success paths.
  const auto npy = read_bytes(attn::test::source_path("fuzz/corpus/npy/f4_bsc.npy"));
  const attn::RawArray a = attn::parse_npy(npy.data(), npy.size(), "f4_bsc.npy");
  CHECK(a.shape == std::vector<std::size_t>{2, 3, 4});
  CHECK(attn::read_npz(attn::test::source_path("fuzz/corpus/npz/fused_deflated.npz")).size() == 4);
  CHECK(attn::read_safetensors(
            attn::test::source_path("fuzz/corpus/safetensors/gpt2_f32.safetensors"))
            .size() == 4);
  CHECK(attn::parse_config(
            attn::test::read_text(attn::test::source_path("fuzz/corpus/config/warner_causal.json")),
            "warner_causal.json")
            .hidden_size > 0);
}
