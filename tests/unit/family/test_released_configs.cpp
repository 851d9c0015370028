// Every family's released config.json (tests/fixtures/released_configs/,
// written by make_released_configs.py as the hub ships them) is read: each
// layer attn-run runs maps to a config that passes every value check, and
// every supported model_type has its file. A check stricter than the
// modeling code (Llama 4's llama3 scaling with high_freq_factor equal to
// low_freq_factor) fails here.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "attn/config.h"
#include "attn/error.h"
#include "attn/model_folder.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const std::string kDir = std::string(ATTN_SOURCE_DIR) + "/tests/fixtures/released_configs";

// The model_types a config.json holds: its own, or its towers' (CLIP).
std::vector<std::string> types_of(const json& c) {
  std::vector<std::string> out;
  for (const char* tower : {"text_config", "vision_config"})
    if (c.contains(tower) && c[tower].is_object() && c[tower].contains("model_type") &&
        (c["model_type"] == "clip"))
      out.push_back(c[tower]["model_type"].get<std::string>());
  if (out.empty()) out.push_back("");  // the first the folder holds
  return out;
}

}  // namespace

TEST_CASE("released configs: every family's config.json as released loads, every layer checked") {
  const fs::path tmp = fs::temp_directory_path() / ("attn-released-" + std::to_string(::getpid()));
  std::set<std::string> covered;
  std::size_t files = 0;
  for (const auto& e : fs::directory_iterator(kDir)) {
    if (e.path().extension() != ".json") continue;
    ++files;
    const std::string name = e.path().stem().string();
    CAPTURE(name);
    const fs::path dir = tmp / name;
    fs::create_directories(dir);
    fs::copy_file(e.path(), dir / "config.json", fs::copy_options::overwrite_existing);
    std::ofstream(dir / "model.safetensors") << "";  // found, never opened
    std::ifstream in(e.path());
    const json c = json::parse(in);
    for (const std::string& type : types_of(c)) {
      CAPTURE(type);
      try {
        const attn::ModelFolder m = attn::open_model_folder(dir.string(), type);
        covered.insert(m.model_type);
        std::size_t run = 0;
        for (std::int64_t l = 0; l < m.num_layers; ++l) {
          if (!attn::layer_runs(m, l)) continue;
          CAPTURE(l);
          const json layer = attn::layer_config(m, l);
          const attn::Config cfg = attn::parse_config(layer.dump(), (dir / "config.json").string());
          CHECK(cfg.num_heads > 0);
          ++run;
        }
        CHECK(run > 0);
      } catch (const attn::Error& err) {
        FAIL_CHECK(err.what());
      }
    }
  }
  fs::remove_all(tmp);
  CHECK(files > 0);
  for (const std::string& type : attn::supported_model_types()) {
    CAPTURE(type);
    CHECK(covered.count(type) == 1);  // each family's released file is in the collection
  }
}

TEST_CASE("released configs: a value the modeling code refuses is named as config.json spells it") {
  const fs::path tmp = fs::temp_directory_path() / ("attn-lies-" + std::to_string(::getpid()));
  const auto refused = [&](const std::string& name, const json& changes) {
    std::ifstream in(kDir + "/" + name + ".json");
    json c = json::parse(in);
    c.merge_patch(changes);
    const fs::path dir = tmp / name;
    fs::create_directories(dir);
    std::ofstream(dir / "config.json") << c.dump();
    std::ofstream(dir / "model.safetensors") << "";
    try {
      attn::layer_config(attn::open_model_folder(dir.string()), 0);
    } catch (const attn::Error& e) {
      CHECK(e.code() == attn::Exit::config);
      return std::string(e.what());
    }
    FAIL("accepted");
    return std::string();
  };
  // GPTBigCodeAttention: embed_dim must be divisible by num_heads.
  std::string m = refused("gpt_bigcode", {{"n_head", 15}});
  CHECK_MESSAGE(m.find("\"n_head\"") != std::string::npos, m);
  CHECK_MESSAGE(m.find("n_embd 2048") != std::string::npos, m);
  // T5's buckets: too few for two sides, a max distance inside the exact ones.
  m = refused("t5", {{"relative_attention_num_buckets", 3}});
  CHECK_MESSAGE(m.find("\"relative_attention_num_buckets\"") != std::string::npos, m);
  m = refused("t5", {{"relative_attention_max_distance", 4}});
  CHECK_MESSAGE(m.find("\"relative_attention_max_distance\"") != std::string::npos, m);
  fs::remove_all(tmp);
}
