// attn-run --model FILE.gguf --info (CONTRACT.md "(v4) Comparisons,
// statistics, intermediates"): every metadata key with its GGUF type and
// value, long arrays summarized, and the tensor list with ggml types, NumPy
// shapes and bytes, as text and as JSON. The files are written here field by
// field (ggml docs/gguf.md), so the test knows each value independently; the
// golden K-quant fixture's bytes follow from ggml's block sizes.
#include <doctest/doctest.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_checks.h"
#include "test_util.h"

using namespace attn;
using nlohmann::json;

namespace {

// A GGUF image, little-endian, field by field.
struct Image {
  std::string b;
  template <class T>
  void put(T v) {
    char raw[sizeof(T)];
    std::memcpy(raw, &v, sizeof(T));
    b.append(raw, sizeof(T));
  }
  void str(const std::string& s) { put<std::uint64_t>(s.size()), b += s; }
  void key(const std::string& k, std::uint32_t type) { str(k), put<std::uint32_t>(type); }
  void tensor(const std::string& name, std::vector<std::uint64_t> ne, std::uint32_t type,
              std::uint64_t offset) {
    str(name), put<std::uint32_t>(std::uint32_t(ne.size()));
    for (auto n : ne) put<std::uint64_t>(n);
    put<std::uint32_t>(type), put<std::uint64_t>(offset);
  }
  void pad() {
    while (b.size() % 32) b.push_back('\0');
  }
  void save(const std::string& path) const {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    REQUIRE(f != nullptr);
    std::fwrite(b.data(), 1, b.size(), f);
    std::fclose(f);
  }
};

// Every value type once, a 40-entry vocabulary (summarized), a short i32
// array (shown whole) and a nested array; two tensors: an F32 (3, 8) and a
// Q8_0 (2, 64) (ggml: 34 bytes per 32 elements).
Image every_type_file() {
  Image g;
  g.b = "GGUF";
  g.put<std::uint32_t>(3), g.put<std::uint64_t>(2), g.put<std::uint64_t>(17);
  g.key("general.architecture", 8), g.str("llama");
  g.key("general.name", 8), g.str("Tiny Llama 3B Instruct");
  g.key("t.u8", 0), g.put<std::uint8_t>(200);
  g.key("t.i8", 1), g.put<std::int8_t>(-100);
  g.key("t.u16", 2), g.put<std::uint16_t>(60000);
  g.key("t.i16", 3), g.put<std::int16_t>(-30000);
  g.key("t.u32", 4), g.put<std::uint32_t>(4000000000u);
  g.key("t.i32", 5), g.put<std::int32_t>(-2000000000);
  g.key("t.f32", 6), g.put<float>(1e-6f);
  g.key("t.bool", 7), g.put<std::uint8_t>(1);
  g.key("t.u64", 10), g.put<std::uint64_t>(18000000000000000000ull);
  g.key("t.i64", 11), g.put<std::int64_t>(-9000000000000000000ll);
  g.key("t.f64", 12), g.put<double>(0.1);
  g.key("tokenizer.ggml.tokens", 9), g.put<std::uint32_t>(8), g.put<std::uint64_t>(40);
  for (int i = 0; i < 40; ++i) g.str("tok" + std::to_string(i));
  g.key("llama.attention.head_count", 9), g.put<std::uint32_t>(5), g.put<std::uint64_t>(3);
  for (std::int32_t h : {8, 8, 4}) g.put<std::int32_t>(h);
  g.key("t.nested", 9), g.put<std::uint32_t>(9), g.put<std::uint64_t>(2);
  g.put<std::uint32_t>(4), g.put<std::uint64_t>(2), g.put<std::uint32_t>(1),
      g.put<std::uint32_t>(2);
  g.put<std::uint32_t>(4), g.put<std::uint64_t>(1), g.put<std::uint32_t>(3);
  g.key("t.empty", 9), g.put<std::uint32_t>(6), g.put<std::uint64_t>(0);
  g.tensor("blk.0.attn_norm.weight", {8, 3}, 0, 0);  // ne [8, 3]: NumPy (3, 8)
  g.tensor("blk.0.attn_q.weight", {64, 2}, 8, 96);   // Q8_0
  g.pad();
  g.b += std::string(96 + 2 * 2 * 34, '\0');
  return g;
}

test::RunResult attn_run(const std::string& args) {
  return test::run(test::quoted_binary() + " " + args);
}

const json* find_key(const json& j, const std::string& key) {
  for (const json& m : j["metadata"])
    if (m["key"] == key) return &m;
  return nullptr;
}

}  // namespace

TEST_CASE("cli gguf info: every metadata type, long arrays summarized, the tensor list (json)") {
  test::TempDir t;
  every_type_file().save(t / "m.gguf");
  const test::RunResult r = attn_run("--model " + test::q(t / "m.gguf") + " --info --format json");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(r.err.empty());
  const json j = json::parse(r.out);
  CHECK(j["version"] == 3);
  CHECK(j["alignment"] == 32);
  CHECK(j["name"] == "Tiny Llama 3B Instruct");
  CHECK(j["architecture"] == "llama");
  REQUIRE(j["metadata"].size() == 17);
  CHECK(j["metadata"][0]["key"] == "general.architecture");  // file order
  const std::vector<std::pair<std::string, json>> scalars = {{"u8", 200},
                                                             {"i8", -100},
                                                             {"u16", 60000},
                                                             {"i16", -30000},
                                                             {"u32", 4000000000u},
                                                             {"i32", -2000000000},
                                                             {"bool", true},
                                                             {"u64", 18000000000000000000ull},
                                                             {"i64", -9000000000000000000ll}};
  for (const auto& [type, value] : scalars) {
    const json* m = find_key(j, "t." + type);
    REQUIRE(m != nullptr);
    CHECK((*m)["type"] == type);
    CHECK((*m)["value"] == value);
  }
  CHECK((*find_key(j, "t.f32"))["type"] == "f32");
  CHECK((*find_key(j, "t.f32"))["value"].get<double>() == 1e-6);  // the float32 as written
  CHECK((*find_key(j, "t.f64"))["value"].get<double>() == 0.1);
  const json& tokens = *find_key(j, "tokenizer.ggml.tokens");
  CHECK(tokens["type"] == "array");
  CHECK(tokens["element_type"] == "string");
  CHECK(tokens["count"] == 40);
  CHECK(tokens["summarized"] == true);
  REQUIRE(tokens["value"].size() == 16);
  CHECK(tokens["value"][0] == "tok0");
  CHECK(tokens["value"][15] == "tok15");
  const json& heads = *find_key(j, "llama.attention.head_count");
  CHECK(heads["element_type"] == "i32");
  CHECK(heads["summarized"] == false);
  CHECK(heads["value"] == json({8, 8, 4}));
  const json& nested = *find_key(j, "t.nested");
  CHECK(nested["element_type"] == "array");
  CHECK(nested["value"] == json({{1, 2}, {3}}));
  CHECK((*find_key(j, "t.empty"))["value"] == json::array());

  REQUIRE(j["tensors"].size() == 2);
  const json& norm = j["tensors"][0];
  CHECK(norm["name"] == "blk.0.attn_norm.weight");
  CHECK(norm["type"] == "F32");
  CHECK(norm["shape"] == json({3, 8}));  // NumPy order
  CHECK(norm["bytes"] == 3 * 8 * 4);
  const json& q = j["tensors"][1];
  CHECK(q["type"] == "Q8_0");
  CHECK(q["shape"] == json({2, 64}));
  CHECK(q["bytes"] == 2 * 2 * 34);
  CHECK(q["offset"].get<std::uint64_t>() == j["data_offset"].get<std::uint64_t>() + 96);
}

TEST_CASE("cli gguf info: the text listing names the model, each key's type and the tensors") {
  test::TempDir t;
  every_type_file().save(t / "m.gguf");
  const test::RunResult r = attn_run("--model " + test::q(t / "m.gguf") + " --info");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const std::string& out = r.out;
  CHECK(out.find("model: Tiny Llama 3B Instruct (llama)") != std::string::npos);
  CHECK(out.find("17 metadata keys") != std::string::npos);
  // A long array: its element type, its count and its first elements.
  CHECK(out.find("[string; 40 items] 'tok0', 'tok1', 'tok2', 'tok3', ...") != std::string::npos);
  CHECK(out.find("[8, 8, 4]") != std::string::npos);
  CHECK(out.find("1e-06") != std::string::npos);
  CHECK(out.find("2 tensors") != std::string::npos);
  CHECK(out.find("blk.0.attn_q.weight     Q8_0  2 x 64") != std::string::npos);
}

TEST_CASE("cli gguf info: the golden K-quant file: its types, shapes and ggml block sizes") {
  const std::string file = test::source_path("tests/golden/gguf/llama_kquants/model.gguf");
  const test::RunResult r = attn_run("--model " + test::q(file) + " --info --format json");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const json j = json::parse(r.out);
  CHECK(j["name"] == "attn-run golden llama");
  CHECK((*find_key(j, "llama.attention.head_count"))["value"] == 4);
  CHECK((*find_key(j, "llama.attention.head_count_kv"))["value"] == 2);
  // ggml's super-blocks of 256 weights: Q4_K 144 bytes, Q6_K 210, Q2_K 84, Q3_K 110.
  const std::vector<std::tuple<std::string, std::string, std::uint64_t, std::uint64_t>> want = {
      {"blk.1.attn_q.weight", "Q4_K", 256, 144},
      {"blk.1.attn_k.weight", "Q6_K", 128, 210},
      {"blk.1.attn_v.weight", "Q2_K", 128, 84},
      {"blk.1.attn_output.weight", "Q3_K", 256, 110}};
  for (const auto& [name, type, rows, block_bytes] : want) {
    const json* found = nullptr;
    for (const json& t : j["tensors"])
      if (t["name"] == name) found = &t;
    REQUIRE_MESSAGE(found != nullptr, name);
    CHECK((*found)["type"] == type);
    CHECK((*found)["shape"] == json({rows, 256}));
    CHECK((*found)["bytes"] == rows * block_bytes);
  }
}

TEST_CASE("cli gguf info: --info without a GGUF file, with --layer, or on a broken file") {
  const std::string file = test::source_path("tests/golden/gguf/llama/model.gguf");
  test::check_cli_failure(attn_run("--info"), 64, {"--info", "--model FILE.gguf"});
  test::check_cli_failure(
      attn_run("--model " + test::q(test::source_path("tests/golden/gguf")) + " --info"), 64,
      {"--info", "--model DIR alone"});
  test::check_cli_failure(attn_run("--model " + test::q(file) + " --info --layer 1"), 64,
                          {"--info", "alone"});
  test::check_cli_failure(attn_run("--model " + test::q(file) + " --info --format npy"), 64,
                          {"--format npy", "--info"});
  test::TempDir t;
  Image g = every_type_file();
  g.b.resize(600);  // cut inside the metadata
  g.save(t / "cut.gguf");
  test::check_cli_failure(attn_run("--model " + test::q(t / "cut.gguf") + " --info"), 65,
                          {"cut.gguf", "tokenizer.ggml.tokens"});
  test::check_cli_failure(attn_run("--model " + test::q(t / "none.gguf") + " --info"), 66,
                          {"none.gguf"});
}

TEST_CASE("cli gguf info: a GGUF run's picture and run.json name the model and its ggml types") {
  // The golden llama file: general.name "attn-run golden llama" (tests/golden/gen/gguf.py),
  // layer 1 stored as Q8_0 (q), Q4_0 (k), Q5_1 (v), IQ4_NL (output).
  const std::string dir = test::source_path("tests/golden/gguf/llama");
  test::TempDir t;
  const test::RunResult r =
      attn_run("--model " + test::q(dir + "/model.gguf") + " --layer 1 --input " +
               test::q(dir + "/layer1/input.npy") + " -o " + test::q(t / "o") + " --plot " +
               test::q(t / "maps.svg"));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const json run = json::parse(test::read_text(t / "o/run.json"));
  CHECK(run["model_name"] == "attn-run golden llama");
  const std::string svg = test::read_text(t / "maps.svg");
  CHECK(svg.find(">attn-run golden llama, layer 1<") != std::string::npos);
  CHECK(svg.find("GGUF IQ4_NL, Q4_0, Q5_1, Q8_0;") != std::string::npos);
  CHECK(svg.find("layout ") == std::string::npos);

  // --layer all (here 0-1, a folder of layer_N.npy): DIR/run.json names it too.
  std::filesystem::create_directories(t / "in");
  for (int n : {0, 1})
    std::filesystem::copy_file(dir + "/layer" + std::to_string(n) + "/input.npy",
                               t / ("in/layer_" + std::to_string(n) + ".npy"));
  const test::RunResult all =
      attn_run("--model " + test::q(dir + "/model.gguf") + " --layer 0-1 --input " +
               test::q(t / "in") + " -o " + test::q(t / "all") + " -q");
  REQUIRE_MESSAGE(all.exit_code == 0, all.err);
  CHECK(json::parse(test::read_text(t / "all/run.json"))["model_name"] == "attn-run golden llama");
}
