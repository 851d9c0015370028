// cli_layers: --layer all|3-7|0,5|last:N (CONTRACT.md "(v3) Many layers"):
// one run over several layers of a model, each layer's input from a
// (layers, B, S, C) stack or a folder of layer_N.npy, its results in
// DIR/layer_N/, one DIR/run.json; every layer equal to its single run, and
// the torch reference of the golden GGUF / folder layers.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>

#include "attn/npy.h"
#include "cli_checks.h"
#include "json_files.h"
#include "test_util.h"

namespace fs = std::filesystem;
using attn::test::check_cli_failure;
using attn::test::q;
using attn::test::run;
using attn::test::run_json;

namespace {

std::string bin() { return attn::test::quoted_binary(); }
std::string src(const std::string& rel) { return attn::test::source_path(rel); }
attn::Tensor npy(const std::string& path) { return attn::read_npy_f32(path, false); }

// (N, ...) from N arrays of one shape, each given a leading batch axis
// when `batch` (an (S, C) input becomes (1, S, C)).
attn::Tensor stack(const std::vector<attn::Tensor>& parts, bool batch) {
  std::vector<std::size_t> shape = parts[0].shape;
  if (batch) shape.insert(shape.begin(), 1);
  shape.insert(shape.begin(), parts.size());
  attn::Tensor out(shape);
  for (std::size_t i = 0; i < parts.size(); ++i)
    std::memcpy(out.ptr() + i * parts[0].size(), parts[i].ptr(), parts[0].size() * sizeof(float));
  return out;
}

void save(const std::string& path, const attn::Tensor& t) {
  attn::test::write_text(path, attn::encode_npy(t));
}

// Largest |a - b| over max |b|, and equal shapes.
double rel_diff(const attn::Tensor& a, const attn::Tensor& b) {
  REQUIRE(a.shape == b.shape);
  double d = 0, m = 1e-30;
  for (std::size_t i = 0; i < a.size(); ++i) {
    d = std::max(d, double(std::fabs(a.data[i] - b.data[i])));
    m = std::max(m, double(std::fabs(b.data[i])));
  }
  return d / m;
}

bool same_file(const std::string& a, const std::string& b) {
  return attn::test::read_text(a) == attn::test::read_text(b);
}

}  // namespace

TEST_CASE("cli_layers: --layer all equals one run per layer, from a stack and from a folder") {
  attn::test::TempDir t;
  const std::string model = q(src("data/tiny-llama"));
  const attn::Tensor h = npy(src("data/tiny-llama-hidden.npy"));  // (S, C)
  attn::Tensor half = h;
  for (float& v : half.data) v *= 0.5f;
  save(t / "stack.npy", stack({h, half}, true));  // (2, 1, S, C)
  fs::create_directories(t / "fold");
  save(t / "fold/layer_0.npy", stack({h}, false));  // (1, S, C)
  save(t / "fold/layer_1.npy", stack({half}, false));
  for (int l = 0; l < 2; ++l)
    REQUIRE(run(bin() + " -q --model " + model + " --layer " + std::to_string(l) + " --input " +
                q(t / ("fold/layer_" + std::to_string(l) + ".npy")) + " -o " +
                q(t / ("one" + std::to_string(l))))
                .exit_code == 0);

  auto all = run(bin() + " --model " + model + " --layer all --input " + q(t / "stack.npy") +
                 " -o " + q(t / "all"));
  REQUIRE_MESSAGE(all.exit_code == 0, all.err);
  CHECK(all.out.empty());
  auto folder = run(bin() + " -q --model " + model + " --layer 0-1 --input " + q(t / "fold") +
                    " -o " + q(t / "fold_out"));
  REQUIRE_MESSAGE(folder.exit_code == 0, folder.err);
  for (const char* out : {"all", "fold_out"})
    for (int l = 0; l < 2; ++l)
      for (const char* f : {"context.npy", "attention.npy"}) {
        const std::string mine = t / (std::string(out) + "/layer_" + std::to_string(l) + "/" + f);
        CHECK_MESSAGE(same_file(mine, t / ("one" + std::to_string(l) + "/" + f)), mine);
      }
  // transformers' output_hidden_states: L + 1 entries, the last (after the final norm) ignored.
  attn::Tensor junk = h;
  for (float& v : junk.data) v = 1e3f;
  save(t / "hidden_states.npy", stack({h, half, junk}, true));  // (3, 1, S, C)
  auto hs = run(bin() + " -q --model " + model + " --layer all --input " +
                q(t / "hidden_states.npy") + " -o " + q(t / "hs"));
  REQUIRE_MESSAGE(hs.exit_code == 0, hs.err);
  for (int l = 0; l < 2; ++l)
    for (const char* f : {"context.npy", "attention.npy"})
      CHECK(same_file(t / ("hs/layer_" + std::to_string(l) + "/" + f),
                      t / ("one" + std::to_string(l) + "/" + f)));
  CHECK(!fs::exists(t / "hs/layer_2"));
  const nlohmann::json j = run_json(t / "all");
  CHECK(j["layers"] == nlohmann::json({0, 1}));
  CHECK(j["num_layers"] == 2);
  CHECK(j["input_kind"] == "stack");
  REQUIRE(j["runs"].size() == 2);
  CHECK(j["runs"][1]["dir"] == "layer_1");
  CHECK(j["runs"][1]["input"] == t / "stack.npy[1]");
  CHECK(j["runs"][1]["shapes"]["context"] == nlohmann::json({1, 6, 64}));
  CHECK(run_json(t / "fold_out")["runs"][0]["input"] == t / "fold/layer_0.npy");
  CHECK(run_json(t / "all/layer_1")["config"]["layer"] == 1);  // each layer's own run.json

  // A stack of exactly the layers run is read by position; last:N picks layers.
  save(t / "one_layer.npy", stack({half}, true));  // (1, 1, S, C)
  REQUIRE(run(bin() + " -q --model " + model + " --layer last:1 --input " + q(t / "one_layer.npy") +
              " -o " + q(t / "last"))
              .exit_code == 0);
  CHECK(same_file(t / "last/layer_1/context.npy", t / "one1/context.npy"));
  CHECK(!fs::exists(t / "last/layer_0"));
  // Standard input: the same stack.
  auto piped = run(bin() + " -q --model " + model + " --layer all --input - -o " + q(t / "pipe"),
                   attn::test::read_text(t / "stack.npy"));
  REQUIRE_MESSAGE(piped.exit_code == 0, piped.err);
  CHECK(same_file(t / "pipe/layer_1/attention.npy", t / "one1/attention.npy"));
  // One (S, C) input for every layer: run, with a warning.
  auto shared = run(bin() + " --model " + model + " --layer all --input " +
                    q(src("data/tiny-llama-hidden.npy")) + " -o " + q(t / "shared"));
  REQUIRE_MESSAGE(shared.exit_code == 0, shared.err);
  CHECK(shared.err.find("one input for every layer") != std::string::npos);
  CHECK(run_json(t / "shared")["input_kind"] == "shared");
}

TEST_CASE("cli_layers: the maps' selections and reductions per layer") {
  attn::test::TempDir t;
  const std::string model = q(src("data/tiny-llama"));
  const attn::Tensor h = npy(src("data/tiny-llama-hidden.npy"));
  save(t / "stack.npy", stack({h, h}, true));
  save(t / "x.npy", stack({h}, false));
  const std::string flags = " --heads 1,3 --queries last:3 --top-k 2 --summary --stats";
  auto all = run(bin() + " --model " + model + " --layer all --input " + q(t / "stack.npy") +
                 " -o " + q(t / "all") + flags);
  REQUIRE_MESSAGE(all.exit_code == 0, all.err);
  CHECK(all.err.find("attention statistics of layer_1") != std::string::npos);
  REQUIRE(run(bin() + " -q --model " + model + " --layer 1 --input " + q(t / "x.npy") + " -o " +
              q(t / "one") + flags)
              .exit_code == 0);
  for (const char* f : {"attention.npy", "topk_values.npy", "topk_indices.npy", "summary.npy",
                        "summary.csv", "context.npy"})
    CHECK_MESSAGE(same_file(t / ("all/layer_1/" + std::string(f)), t / (std::string("one/") + f)),
                  f);
  CHECK(npy(t / "all/layer_0/attention.npy").shape == std::vector<std::size_t>{1, 2, 3, 6});
}

TEST_CASE("cli_layers: --plot FILE.html draws the model view of the layers run") {
  attn::test::TempDir t;
  auto r = run(bin() + " -q --model " + q(src("data/tiny-llama")) + " --layer all --input " +
               q(src("data/tiny-llama-hidden-layers.npy")) + " -o " + q(t / "o") + " --plot " +
               q(t / "model.html") + " --heads 1,3");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const std::string page = attn::test::read_text(t / "model.html");
  const auto a = page.find("id=\"meta\">") + 10, b = page.find("</script>", a);
  const nlohmann::json meta = nlohmann::json::parse(page.substr(a, b - a));
  CHECK(meta["title"] == "tiny-llama, 2 layers");
  CHECK(meta["heads"] == nlohmann::json({1, 3}));  // the selection, by the model's numbers
  REQUIRE(meta["layers"].size() == 2);
  CHECK(meta["layers"][1]["dir"] == "layer_1");
  CHECK(meta["mode"] == "map");
  CHECK(meta["nq"] == 6);
  // The figures are the means of --summary's rows: the same run with --summary.
  REQUIRE(run(bin() + " -q --model " + q(src("data/tiny-llama")) + " --layer all --input " +
              q(src("data/tiny-llama-hidden-layers.npy")) + " -o " + q(t / "s") +
              " --heads 1,3 --summary")
              .exit_code == 0);
  const attn::Tensor rows = npy(t / "s/layer_1/summary.npy");  // (1, 2, 6, 5)
  double sink = 0;
  for (std::size_t i = 0; i < 6; ++i) sink += rows.data[(1 * 6 + i) * 5 + 1];
  CHECK(meta["layers"][1]["raw"][1][1].get<double>() == doctest::Approx(sink / 6));
  CHECK(!fs::exists(t / "o/layer_1/summary.npy"));  // figures for the page only
}

TEST_CASE("cli_layers: the torch reference of each layer (GGUF and a model folder)") {
  attn::test::TempDir t;
  // The golden GGUF llama: layers 0 and 1, each with its own input.
  const std::string g = src("tests/golden/gguf/llama");
  fs::create_directories(t / "g");
  for (int l = 0; l < 2; ++l)
    fs::copy_file(g + "/layer" + std::to_string(l) + "/input.npy",
                  t / ("g/layer_" + std::to_string(l) + ".npy"));
  auto r = run(bin() + " -q --model " + q(g + "/model.gguf") + " --layer all --input " +
               q(t / "g") + " -o " + q(t / "gout"));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  for (int l = 0; l < 2; ++l)
    for (const char* f : {"context.npy", "attention.npy"})
      CHECK(rel_diff(npy(t / ("gout/layer_" + std::to_string(l) + "/" + f)),
                     npy(g + "/layer" + std::to_string(l) + "/expected/" + f)) < 1e-5);
  CHECK(run_json(t / "gout/layer_0").contains("gguf_types"));

  // Qwen3-Next: --layer all runs the full-attention layers (1, 3) and lists
  // the linear-attention ones; naming a linear one is 64 listing the others.
  const std::string m = src("tests/golden/folders/qwen3_next");
  const attn::Tensor x = npy(m + "/layer3/input.npy");  // (B, S, C)
  save(t / "q.npy", stack({x, x, x, x}, false));        // (4, B, S, C): by layer number
  auto qr = run(bin() + " --model " + q(m + "/model") + " --layer all --input " + q(t / "q.npy") +
                " -o " + q(t / "qout"));
  REQUIRE_MESSAGE(qr.exit_code == 0, qr.err);
  CHECK(qr.err.find("layer 0: a linear_attention layer, not run") != std::string::npos);
  const nlohmann::json j = run_json(t / "qout");
  CHECK(j["layers"] == nlohmann::json({1, 3}));
  CHECK(j["skipped"][0]["layer"] == 0);
  CHECK(j["skipped"][1]["type"] == "linear_attention");
  CHECK(!fs::exists(t / "qout/layer_0"));
  CHECK(fs::exists(t / "qout/layer_3/context.npy"));
  check_cli_failure(run(bin() + " --model " + q(m + "/model") + " --layer 1,2 --input " +
                        q(t / "q.npy") + " -o " + q(t / "bad")),
                    64, {"--layer", "layer 2", "linear_attention", "1, 3"});
  CHECK(!fs::exists(t / "bad"));
}

TEST_CASE("cli_layers: what is refused, before anything is written") {
  attn::test::TempDir t;
  const std::string model = q(src("data/tiny-llama"));
  const attn::Tensor h = npy(src("data/tiny-llama-hidden.npy"));
  save(t / "three.npy", stack({h, h, h}, true));    // 3 entries for a 2-layer model
  save(t / "four.npy", stack({h, h, h, h}, true));  // neither L nor L + 1 entries
  check_cli_failure(run(bin() + " --model " + model + " --layer all --input " + q(t / "four.npy") +
                        " -o " + q(t / "o")),
                    65, {"four.npy", "(2, or 3 as output_hidden_states", "found 4"});
  check_cli_failure(run(bin() + " --model " + model + " --layer all --input " + q(t / "three.npy")),
                    64, {"--layer all", "--out-dir"});
  check_cli_failure(run(bin() + " --model " + model + " --layer 0,7 --input " + q(t / "three.npy") +
                        " -o " + q(t / "o")),
                    64, {"--layer", "7"});
  check_cli_failure(run(bin() + " --model " + model + " --layer x1 -o " + q(t / "o")), 64,
                    {"--layer", "'x1'"});
  check_cli_failure(run(bin() + " --model " + model + " --layer all -o " + q(t / "o")), 64,
                    {"--input"});
  check_cli_failure(run(bin() + " --model " + model + " --layer all --input " + q(t / "three.npy") +
                        " -o " + q(t / "o") + " --plot m.svg"),
                    64, {"--plot", "--layer all", "model view", "'m.svg'"});
  fs::create_directories(t / "fold");
  save(t / "fold/layer_0.npy", stack({h}, false));
  check_cli_failure(run(bin() + " --model " + model + " --layer all --input " + q(t / "fold") +
                        " -o " + q(t / "o")),
                    66, {"layer_1.npy", "missing"});
  // --layer N given such a folder reads its layer_N.npy: a missing one is named.
  check_cli_failure(run(bin() + " --model " + model + " --layer 1 --input " + q(t / "fold/") +
                        " -o " + q(t / "o")),
                    66, {"fold/layer_1.npy", "missing", "--layer 1"});
  // A layer's input that fails after the first layer computed: that layer
  // is committed whole (a rerun resumes there), nothing of the failing one.
  attn::test::write_text(t / "fold/layer_1.npy", "\x93NUMPY garbage");
  auto late = run(bin() + " --model " + model + " --layer all --input " + q(t / "fold") + " -o " +
                  q(t / "o"));
  check_cli_failure(late, 65, {"layer_1.npy"});
  CHECK(fs::exists(t / "o/layer_0/context.npy"));
  CHECK(!fs::exists(t / "o/layer_1"));
  CHECK(!fs::exists(t / "o/run.json"));
}

TEST_CASE("cli_layers: an input of another rank is one error line; a (layers, S, C) one is named") {
  attn::test::TempDir t;
  const std::string model = q(src("data/tiny-llama"));
  const attn::Tensor h = npy(src("data/tiny-llama-hidden.npy"));  // (S, C)
  const std::string out = " -o " + q(t / "o");
  // (1, 2, 1, S, C): was a warning ("one input for every layer") and then
  // the first layer's error, two lines.
  save(t / "five.npy", stack({stack({h, h}, true)}, false));
  check_cli_failure(
      run(bin() + " --model " + model + " --layer all --input " + q(t / "five.npy") + out), 65,
      {"five.npy", "(layers, B, S, C)", "(1, 2, 1, 6, 64)"});
  attn::Tensor row({64});
  save(t / "row.npy", row);
  check_cli_failure(
      run(bin() + " --model " + model + " --layer all --input " + q(t / "row.npy") + out), 65,
      {"row.npy", "(64,)"});
  check_cli_failure(run(bin() + " --model " + model + " --layer all --input - " + out + " < " +
                        q(t / "five.npy")),
                    65, {"-: ", "(1, 2, 1, 6, 64)"});
  CHECK(!fs::exists(t / "o"));
  // --layer N given a stack of neither L, L + 1 nor one entry: named, with the counts.
  save(t / "stack.npy", stack({h, h, h, h}, true));
  check_cli_failure(
      run(bin() + " --model " + model + " --layer 1 --input " + q(t / "stack.npy") + out), 65,
      {"stack.npy", "(layers, B, S, C)", "found 4"});
  // (layers, S, C) with as many entries as layers runs as one (B, S, C)
  // input, and the warning says how to make it a stack.
  save(t / "ls.npy", stack({h, h}, false));  // (2, S, C)
  auto r = run(bin() + " --model " + model + " --layer all --input " + q(t / "ls.npy") + out);
  CHECK(r.exit_code == 0);
  CHECK_MESSAGE(r.err.find("(2, 6, 64)") != std::string::npos, r.err);
  CHECK_MESSAGE(r.err.find("(layers, 1, S, C)") != std::string::npos, r.err);
  auto one = run(bin() + " --model " + model + " --layer all --input " +
                 q(src("data/tiny-llama-hidden.npy")) + " -o " + q(t / "o2"));
  CHECK(one.exit_code == 0);
  CHECK_MESSAGE(one.err.find("(layers, 1, S, C)") == std::string::npos, one.err);
}

TEST_CASE("cli_layers: the model view's subtitle counts rightly and names the layers not run") {
  attn::test::TempDir t;
  auto meta_of = [](const std::string& path) {
    const std::string page = attn::test::read_text(path);
    const auto a = page.find("id=\"meta\">") + 10, b = page.find("</script>", a);
    return nlohmann::json::parse(page.substr(a, b - a));
  };
  // One layer, --average-heads: "1 layer", and the one column is the mean.
  auto r = run(bin() + " --model " + q(src("data/tiny-llama")) + " --layer last:1 --input " +
               q(src("data/tiny-llama-hidden-layers.npy")) + " -o " + q(t / "o") + " --plot " +
               q(t / "m.html") + " --average-heads");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK_MESSAGE(r.err.find("wrote 1 layer folder and") != std::string::npos, r.err);
  nlohmann::json meta = meta_of(t / "m.html");
  CHECK(meta["title"] == "tiny-llama, 1 layer");
  CHECK(meta["subtitle"].get<std::string>().rfind("the mean of the heads x 1 layer,", 0) == 0);
  // --queries / --keys: the subtitle gives the part drawn (was "6 queries x 6 keys").
  r = run(bin() + " -q --model " + q(src("data/tiny-llama")) + " --layer all --input " +
          q(src("data/tiny-llama-hidden-layers.npy")) + " -o " + q(t / "s") + " --plot " +
          q(t / "s.html") + " --queries last:2 --keys 0-2");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK_MESSAGE(meta_of(t / "s.html")["subtitle"].get<std::string>().find(
                    "2 of 6 queries x 3 of 6 keys") != std::string::npos,
                meta_of(t / "s.html")["subtitle"]);
  // Qwen3-Next: the linear-attention layers skipped are named.
  const std::string qn = src("tests/golden/folders/qwen3_next");
  const attn::Tensor x = npy(qn + "/layer1/input.npy");  // (B, S, C)
  save(t / "stack.npy", stack({x, x}, false));           // the two attention layers
  r = run(bin() + " -q --model " + q(qn + "/model") + " --layer all --input " + q(t / "stack.npy") +
          " -o " + q(t / "q") + " --plot " + q(t / "q.html") + " --heads 2");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  meta = meta_of(t / "q.html");
  const std::string sub = meta["subtitle"];
  CHECK_MESSAGE(sub.rfind("1 head x 2 layers,", 0) == 0, sub);
  CHECK_MESSAGE(sub.find("not run: layers 0, 2 (linear_attention)") != std::string::npos, sub);
  // The files a layer's panel lists are those written: none of attention.npy
  // under --no-attn (the page named it always).
  REQUIRE(meta["layers"][0]["files"] ==
          nlohmann::json({"attention.npy", "context.npy", "run.json"}));
  r = run(bin() + " -q --model " + q(qn + "/model") + " --layer all --input " + q(t / "stack.npy") +
          " -o " + q(t / "n") + " --plot " + q(t / "n.html") + " --no-attn --top-k 2");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(meta_of(t / "n.html")["layers"][1]["files"] ==
        nlohmann::json({"context.npy", "run.json", "topk_indices.npy", "topk_values.npy"}));
  CHECK(!fs::exists(t / "n/layer_3/attention.npy"));
  CHECK(attn::test::read_text(t / "n.html").find("(attention.npy, context.npy, run.json)") ==
        std::string::npos);
}

namespace {
// A result tree's files, run.json and manifest.json without their timings
// (which no two runs share) and with the tree's own path as DIR: what a
// clean run and a resumed one must agree on.
std::map<std::string, std::string> results_of(const std::string& dir) {
  std::map<std::string, std::string> out;
  const std::function<void(nlohmann::json&)> strip = [&](nlohmann::json& j) {
    if (j.is_object()) {
      for (const char* k : {"timings", "gflops", "total_ms", "load_ms", "compute_ms", "write_ms"})
        j.erase(k);
      for (auto& [key, v] : j.items()) strip(v);
    } else if (j.is_array()) {
      for (auto& v : j) strip(v);
    }
  };
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file()) continue;
    const std::string rel = fs::relative(e.path(), dir).string();
    std::string bytes = attn::test::read_text(e.path().string());
    const std::string name = e.path().filename().string();
    if (name == "run.json" || name == "manifest.json") {
      nlohmann::json j = nlohmann::json::parse(bytes);
      strip(j);
      bytes = j.dump(1);
      // Where the results went (config.output.dir) is the one path that differs.
      for (std::size_t at; (at = bytes.find(dir)) != std::string::npos;)
        bytes.replace(at, dir.size(), "DIR");
    }
    out[rel] = bytes;
  }
  return out;
}
}  // namespace

TEST_CASE("cli_layers: --layer all killed after a layer resumes with only the missing ones") {
  attn::test::TempDir t;
  const std::string model = q(src("data/tiny-llama"));
  const attn::Tensor h = npy(src("data/tiny-llama-hidden.npy"));  // (S, C)
  attn::Tensor half = h;
  for (float& v : half.data) v *= 0.5f;
  save(t / "stack.npy", stack({h, half}, true));  // (2, 1, S, C)
  const std::string args = "--threads 2 --model " + model + " --layer all --input " +
                           q(t / "stack.npy") + " --top-k 2 --summary";
  // A clean run, with its model view.
  REQUIRE(run(bin() + " -q " + args + " -o " + q(t / "clean") + " --plot " + q(t / "clean.html"))
              .exit_code == 0);

  // The same run, SIGKILLed as layer 1 starts its forward pass: layer 0 is
  // committed, with its manifest entry; nothing of layer 1, no run.json.
  const std::string out = t / "out";
  const std::string run_args = args + " -o " + q(out) + " --plot " + q(t / "out.html");
  const std::string script = "ATTN_TEST_PAUSE_AT=compute:2 " + bin() + " -q " + run_args +
                             " & p=$!; " + attn::test::until_stopped("p") +
                             "kill -s KILL $p; kill -s CONT $p; wait $p";
  const attn::test::RunResult killed = run("bash -c " + q(script));
  CHECK_MESSAGE(killed.exit_code == 128 + 9, killed.err);
  CHECK(fs::exists(out + "/layer_0/context.npy"));
  CHECK(fs::exists(out + "/layer_0/topk_indices.npy"));
  CHECK(fs::exists(out + "/manifest.json"));
  CHECK_FALSE(fs::exists(out + "/layer_1"));
  CHECK_FALSE(fs::exists(out + "/run.json"));
  const std::string layer0 = attn::test::read_text(out + "/layer_0/attention.npy");

  // The rerun computes layer 1 alone and ends with what the clean run wrote.
  const attn::test::RunResult again = run(bin() + " " + run_args);
  REQUIRE_MESSAGE(again.exit_code == 0, again.err);
  CHECK_MESSAGE(again.err.find("wrote 1 layer folder (1 done before)") != std::string::npos,
                again.err);
  CHECK(attn::test::read_text(out + "/layer_0/attention.npy") == layer0);
  const auto resumed = results_of(out), clean = results_of(t / "clean");
  for (const auto& [name, bytes] : clean) {
    CAPTURE(name);
    CHECK_MESSAGE(resumed.count(name) == 1, name);
    if (resumed.count(name) && resumed.at(name) != bytes && bytes.size() < 3000)
      CHECK_MESSAGE(resumed.at(name) == bytes, resumed.at(name));
    else if (resumed.count(name))
      CHECK(resumed.at(name) == bytes);
  }
  CHECK(resumed.size() == clean.size());
  CHECK(same_file(t / "out.html", t / "clean.html"));

  // A third run has nothing to compute; other settings are refused, naming them.
  const attn::test::RunResult third = run(bin() + " " + run_args);
  REQUIRE_MESSAGE(third.exit_code == 0, third.err);
  CHECK(third.err.find("wrote 0 layer folders (2 done before)") != std::string::npos);
  const auto before = attn::test::snapshot(out);
  check_cli_failure(run(bin() + " " + run_args + " --recent 3"), 73,
                    {"manifest.json", "layer_0", "--recent: was not given, now 3"});
  CHECK(attn::test::snapshot(out) == before);
}

TEST_CASE("cli_layers: --layer N with a stack takes entry N, as the run on that entry alone") {
  // CONTRACT.md "(v4) Inputs": a (layers, B, S, C) stack of L or L + 1
  // entries, a folder of layer_N.npy, or a stack on standard input.
  attn::test::TempDir t;
  const std::string model = q(src("data/tiny-llama"));
  const attn::Tensor h = npy(src("data/tiny-llama-hidden.npy"));  // (S, C)
  attn::Tensor half = h, junk = h;
  for (float& v : half.data) v *= 0.5f;
  for (float& v : junk.data) v = 1e3f;
  save(t / "half.npy", stack({half}, true));                    // (1, S, C): entry 1 alone
  save(t / "stack.npy", stack({h, half}, true));                // (2, 1, S, C)
  save(t / "hidden_states.npy", stack({h, half, junk}, true));  // (3, 1, S, C)
  save(t / "one_entry.npy", stack({half}, true));               // (1, 1, S, C)
  fs::create_directories(t / "fold");
  save(t / "fold/layer_1.npy", stack({half}, false));
  const std::string layer1 = bin() + " -q --model " + model + " --layer 1 --input ";
  auto alone = run(layer1 + q(t / "half.npy") + " -o " + q(t / "alone"));
  REQUIRE_MESSAGE(alone.exit_code == 0, alone.err);
  // The alone run is the torch-checked single-layer path; each stack form equals it.
  for (const auto& [input, name] :
       std::vector<std::pair<std::string, std::string>>{{q(t / "stack.npy"), "stack"},
                                                        {q(t / "hidden_states.npy"), "hs"},
                                                        {q(t / "one_entry.npy"), "one"},
                                                        {q(t / "fold"), "fold"},
                                                        {"- < " + q(t / "stack.npy"), "pipe"}}) {
    CAPTURE(name);
    auto r = run(layer1 + input + " -o " + q(t / name));
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    for (const char* f : {"context.npy", "attention.npy"})
      CHECK(same_file(t / (name + "/" + f), t / ("alone/" + std::string(f))));
  }
  CHECK(run_json(t / "stack")["inputs"]["input"] == t / "stack.npy[1]");
  CHECK(run_json(t / "fold")["inputs"]["input"] == t / "fold/layer_1.npy");
  CHECK(run_json(t / "pipe")["inputs"]["input"] == "-[1]");
  // Printed to stdout as well: entry 0 of the stack is the hidden states as given.
  auto printed = run(bin() + " -q --model " + model + " --layer 0 --input " + q(t / "stack.npy"));
  save(t / "h.npy", stack({h}, true));  // (1, S, C)
  auto given = run(bin() + " -q --model " + model + " --layer 0 --input " + q(t / "h.npy"));
  REQUIRE_MESSAGE(printed.exit_code == 0, printed.err);
  CHECK(printed.out == given.out);
}
