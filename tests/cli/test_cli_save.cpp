// cli_save: --save scores,q,k,v,z,result through the built binary (CONTRACT.md
// "(v4) Comparisons, statistics, intermediates") against PyTorch's
// TransformerLens-named intermediates of the golden variants that carry them
// (tests/golden/variants/*/expected/saved, from reference.attention's
// hooks: GQA, rope, causal, padding, qk_norm; softcap and a window), with
// the selection flags; run.json's "saved"; errors (exit 64 naming --save);
// stale files and the batch fingerprint; and {"out_proj": false} over a
// Llama model folder, whose context is then the heads concatenated (checked
// against torch's context through the folder's o_proj).
//
// Letters: B batch, L queries, S keys, H heads, Hkv key/value heads, D head
// size, C hidden.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "attn/map_select.h"
#include "attn/npy.h"
#include "attn/state_dict.h"
#include "check_close.h"
#include "cli_checks.h"
#include "golden_manifest.h"
#include "json_files.h"
#include "test_util.h"

namespace fs = std::filesystem;
using attn::Tensor;
using attn::test::check_cli_failure;
using attn::test::q;
using attn::test::run;
using attn::test::run_json;

namespace {

const std::vector<std::string> kNames = {"scores", "q", "k", "v", "z", "result"};

std::string bin() { return attn::test::quoted_binary(); }

std::string variant(const std::string& name) {
  return attn::test::source_path("tests/golden/variants/" + name);
}

Tensor npy(const std::string& path) { return attn::read_npy_f32(path, true); }

// got equals want within 1e-5 of want's scale (CONTRACT.md "Numerics"), with
// -inf (a masked score) exactly where want has it.
void check_saved(const Tensor& got, const Tensor& want, const std::string& what) {
  INFO(what);
  REQUIRE(got.shape == want.shape);
  Tensor g = got, w = want;
  std::size_t inf_mismatch = 0;
  for (std::size_t e = 0; e < w.size(); ++e)
    if (std::isinf(w.data[e]) || std::isinf(g.data[e])) {
      inf_mismatch += g.data[e] != w.data[e];
      g.data[e] = w.data[e] = 0.0f;
    }
  CHECK(inf_mismatch == 0);
  attn::test::check_close(g, w, what);
}

}  // namespace

TEST_CASE("cli_save: every golden variant with saved tensors matches PyTorch's hooks") {
  const std::vector<std::string> cases = attn::test::golden_case_names("variants", "save");
  REQUIRE(!cases.empty());
  for (const std::string& name : cases) {
    INFO("case " << name);
    const std::string dir = variant(name);
    attn::test::TempDir out;
    const auto r = run(bin() + " --config " + q(dir + "/config.json") + " -q -o " + q(out.path) +
                       " --save scores,q,k,v,z,result");
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    for (const std::string& n : kNames)
      check_saved(npy(out / (n + ".npy")), npy(dir + "/expected/saved/" + n + ".npy"), n);
    // The torch context and maps still hold beside them.
    attn::test::check_close(npy(out / "context.npy"), npy(dir + "/expected/context.npy"),
                            "context");
    const auto facts = run_json(out.path);
    for (const std::string& n : kNames) {
      CHECK(facts["saved"][n]["file"] == n + ".npy");
      CHECK(facts["saved"][n]["shape"] == npy(out / (n + ".npy")).shape);
      CHECK(facts["shapes"][n] == facts["saved"][n]["shape"]);
    }

    // --heads, --queries and --keys pick from each as they do from the maps.
    attn::test::TempDir sel;
    const auto rs = run(bin() + " --config " + q(dir + "/config.json") + " -q -o " + q(sel.path) +
                        " --save scores,q,k,v,z,result --heads 3,1 --queries last:2,0 --keys 1-3");
    REQUIRE_MESSAGE(rs.exit_code == 0, rs.err);
    const std::size_t L = npy(dir + "/expected/saved/q.npy").shape[1];
    const std::vector<std::size_t> heads = {3, 1}, queries = {L - 2, L - 1, 0}, keys = {1, 2, 3};
    const auto want = [&](const std::string& n) {
      return npy(dir + "/expected/saved/" + n + ".npy");
    };
    check_saved(npy(sel / "scores.npy"),
                attn::test::take_indices(
                    attn::test::take_indices(attn::test::take_indices(want("scores"), 1, heads), 2,
                                             queries),
                    3, keys),
                "scores selected");
    for (const char* n : {"q", "z", "result"})
      check_saved(npy(sel / (std::string(n) + ".npy")),
                  attn::test::take_indices(attn::test::take_indices(want(n), 1, queries), 2, heads),
                  std::string(n) + " selected");
    // H = 4, Hkv = 2: heads 3 and 1 read KV heads 1 and 0, both kept in order.
    for (const char* n : {"k", "v"})
      check_saved(npy(sel / (std::string(n) + ".npy")), attn::test::take_indices(want(n), 1, keys),
                  std::string(n) + " selected");
    const auto rj = run_json(sel.path);
    CHECK(rj["saved"]["k"]["kv_heads"] == std::vector<std::size_t>{0, 1});
    CHECK(rj["saved"]["q"]["heads"] == heads);
    CHECK(rj["saved"]["scores"]["keys"] == keys);
  }
}

TEST_CASE("cli_save: softmax(scores) is the maps and the heads' results add up to the context") {
  // The tiny Llama folder (GQA, rope, causal), an unbatched (S, C) input: no B axis.
  attn::test::TempDir out;
  const std::string model = attn::test::source_path("data/tiny-llama");
  const auto r = run(bin() + " -q --model " + q(model) + " --layer 1 --input " +
                     q(attn::test::source_path("data/tiny-llama-hidden.npy")) + " -o " +
                     q(out.path) + " --save result,scores --no-attn");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const Tensor scores = npy(out / "scores.npy"), result = npy(out / "result.npy");
  const Tensor context = npy(out / "context.npy");
  REQUIRE(scores.shape.size() == 3);  // (H, L, S)
  REQUIRE(result.shape.size() == 3);  // (L, H, C)
  CHECK_FALSE(fs::exists(out / "attention.npy"));
  // Softmax rows of the scores against a second run's maps.
  attn::test::TempDir maps;
  REQUIRE(run(bin() + " -q --model " + q(model) + " --layer 1 --input " +
              q(attn::test::source_path("data/tiny-llama-hidden.npy")) + " -o " + q(maps.path))
              .exit_code == 0);
  const Tensor attention = npy(maps / "attention.npy");
  Tensor soft(scores.shape);
  const std::size_t S = scores.shape[2];
  for (std::size_t row = 0; row < scores.size() / S; ++row) {
    double mx = -INFINITY, sum = 0.0;
    for (std::size_t j = 0; j < S; ++j) mx = std::max(mx, double(scores.data[row * S + j]));
    for (std::size_t j = 0; j < S; ++j) sum += std::exp(double(scores.data[row * S + j]) - mx);
    for (std::size_t j = 0; j < S; ++j)
      soft.data[row * S + j] = float(std::exp(double(scores.data[row * S + j]) - mx) / sum);
  }
  attn::test::check_close(soft, attention, "softmax(scores) vs attention.npy");
  // No o_proj bias in a Llama layer: the heads' shares sum to the context.
  const std::size_t L = result.shape[0], H = result.shape[1], C = result.shape[2];
  Tensor summed({L, C});
  for (std::size_t i = 0; i < L; ++i)
    for (std::size_t c = 0; c < C; ++c) {
      double acc = 0.0;
      for (std::size_t h = 0; h < H; ++h) acc += result.data[(i * H + h) * C + c];
      summed.data[i * C + c] = float(acc);
    }
  attn::test::check_close(summed, context, "sum over heads of result vs context");
}

TEST_CASE("cli_save: bad names, no folder, result without o_proj: exit 64 naming --save") {
  const std::string dir = variant("qwen3_qknorm");
  const std::string base = bin() + " --config " + q(dir + "/config.json");
  attn::test::TempDir t;
  check_cli_failure(run(base + " -o " + q(t / "o") + " --save q,attn"), 64,
                    {"--save", "\"attn\"", "scores, q, k, v, z, result"});
  check_cli_failure(run(base + " -o " + q(t / "o") + " --save q,,k"), 64, {"--save", "empty"});
  check_cli_failure(run(base + " --save q"), 64, {"--save", "--out-dir"});
  CHECK_FALSE(fs::exists(t / "o"));
  // The wrapper of single heads has no output projection: z is its context.
  check_cli_failure(
      run(bin() + " --config " + attn::test::quoted_config("raschka_wrapper_causal.json") + " -o " +
          q(t / "o") + " --save z,result"),
      64, {"--save result", "out_proj false", "save z"});
  CHECK_FALSE(fs::exists(t / "o"));
}

TEST_CASE("cli_save: a rerun drops the saved files it no longer writes, not a user's own") {
  const std::string dir = variant("qwen3_qknorm");
  const std::string base = bin() + " -q --config " + q(dir + "/config.json");
  attn::test::TempDir t;
  REQUIRE(run(base + " -o " + q(t.path) + " --save q,k,v").exit_code == 0);
  CHECK(fs::exists(t / "k.npy"));
  REQUIRE(run(base + " -o " + q(t.path) + " --save q").exit_code == 0);
  CHECK(fs::exists(t / "q.npy"));
  CHECK_FALSE(fs::exists(t / "k.npy"));
  CHECK_FALSE(fs::exists(t / "v.npy"));
  // A file named like one that run.json does not list as saved stays.
  attn::test::write_text(t / "z.npy", "mine");
  REQUIRE(run(base + " -o " + q(t.path)).exit_code == 0);
  CHECK_FALSE(fs::exists(t / "q.npy"));
  CHECK(attn::test::read_text(t / "z.npy") == "mine");
  CHECK_FALSE(run_json(t.path).contains("saved"));
}

TEST_CASE("cli_save: --input-list saves per input; another --save is exit 73 naming it") {
  attn::test::TempDir t;
  attn::test::write_text(t / "list.txt", attn::test::source_path("data/sentence_batch.npy") + "\n" +
                                             attn::test::source_path("data/sentence.npy") + "\n");
  const std::string base = bin() + " -q --config " +
                           attn::test::quoted_config("raschka_mha_causal.json") + " --input-list " +
                           q(t / "list.txt") + " -o " + q(t / "o");
  REQUIRE(run(base + " --save q,result").exit_code == 0);
  // (2, 6, 3) and (6, 3) inputs; H = 2, D = 1, out 2.
  CHECK(npy(t / "o/sentence_batch/q.npy").shape == std::vector<std::size_t>{2, 6, 2, 1});
  CHECK(npy(t / "o/sentence/result.npy").shape == std::vector<std::size_t>{6, 2, 2});
  CHECK(run(base + " --save result,q").exit_code == 0);  // the same names resume
  const auto before = attn::test::snapshot(t / "o");
  check_cli_failure(run(base + " --save q"), 73, {"manifest.json", "--save"});
  check_cli_failure(run(base), 73, {"manifest.json", "--save"});
  CHECK(attn::test::snapshot(t / "o") == before);
}

TEST_CASE("cli_save: {\"out_proj\": false} over a Llama folder: the context is the heads") {
  // The golden Llama folder's layers (GQA 4/2, rope, padding): the context
  // through the folder's o_proj gives torch's context.
  for (const char* layer : {"layer0", "layer1"}) {
    INFO(layer);
    const std::string dir =
        attn::test::source_path(std::string("tests/golden/folders/llama/") + layer);
    nlohmann::json c = attn::test::read_json(dir + "/case.json");
    for (const char* key : {"model", "input", "attention_mask", "positions"})
      c[key] = dir + "/" + c[key].get<std::string>();
    c["out_proj"] = false;
    attn::test::TempDir t;
    attn::test::write_text(t / "config.json", c.dump(1));
    const auto r =
        run(bin() + " -q --config " + q(t / "config.json") + " -o " + q(t / "o") + " --save z");
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    const Tensor heads = npy(t / "o/context.npy");  // (B, L, H*D)
    const Tensor z = npy(t / "o/z.npy");            // (B, L, H, D)
    REQUIRE(heads.shape.size() == 3);
    CHECK(heads.shape[2] == z.shape[2] * z.shape[3]);
    CHECK(heads.data == z.data);
    const auto facts = run_json(t / "o");
    CHECK(facts["config"]["out_proj"] == false);
    CHECK(facts["shapes"]["context"] == heads.shape);

    const attn::StateDict sd =
        attn::open_state_dict(c["model"].get<std::string>() + "/model.safetensors");
    const Tensor wo =
        sd.read_f32("model.layers." + std::string(layer + 5) + ".self_attn.o_proj.weight", false);
    const std::size_t rows = heads.shape[0] * heads.shape[1], K = heads.shape[2], O = wo.shape[0];
    REQUIRE(wo.shape[1] == K);
    Tensor projected({heads.shape[0], heads.shape[1], O});
    for (std::size_t r0 = 0; r0 < rows; ++r0)
      for (std::size_t o = 0; o < O; ++o) {
        double acc = 0.0;
        for (std::size_t k = 0; k < K; ++k)
          acc += double(heads.data[r0 * K + k]) * wo.data[o * K + k];
        projected.data[r0 * O + o] = float(acc);
      }
    attn::test::check_close(projected, npy(dir + "/expected/context.npy"),
                            "heads through o_proj vs torch's context");

    // Its weights dumped: the folder's layout (proj) always has an output
    // projection, so the refusal names the layouts that hold the layer, and
    // one of them dumps it: q, k, v and no output projection.
    check_cli_failure(
        run(bin() + " -q --config " + q(t / "config.json") + " --dump-weights " + q(t / "dumped")),
        64, {"--layout proj", "give --layout with one that can: ", "separate"});
    CHECK(!fs::exists(t / "dumped"));
    const auto dumped = run(bin() + " -q --config " + q(t / "config.json") + " --dump-weights " +
                            q(t / "dumped") + " --layout separate");
    REQUIRE_MESSAGE(dumped.exit_code == 0, dumped.err);
    CHECK(fs::exists(t / "dumped/W_query.weight.npy"));
    CHECK(!fs::exists(t / "dumped/out_proj.weight.npy"));
  }
}

TEST_CASE("cli_save: mla saves scores, z and result (torch's maps and context), not q, k, v") {
  const std::string dir = variant("deepseek_v3_mla_half_rope");
  const std::string base = bin() + " -q --config " + q(dir + "/config.json");
  attn::test::TempDir t;
  check_cli_failure(run(base + " -o " + q(t / "no") + " --save q"), 64, {"--save q", "mla"});
  REQUIRE(run(base + " -o " + q(t / "o") + " --save scores,z,result").exit_code == 0);
  const Tensor scores = npy(t / "o/scores.npy"), z = npy(t / "o/z.npy");
  const Tensor result = npy(t / "o/result.npy"), want = npy(dir + "/expected/context.npy");
  // softmax(scores) against torch's maps, masked rows all zero.
  const Tensor maps = npy(dir + "/expected/attention.npy");
  Tensor soft(scores.shape);
  const std::size_t S = scores.shape.back();
  for (std::size_t row = 0; row < scores.size() / S; ++row) {
    const float* s = scores.ptr() + row * S;
    double mx = -INFINITY, sum = 0.0;
    for (std::size_t j = 0; j < S; ++j) mx = std::max(mx, double(s[j]));
    if (std::isinf(mx)) continue;  // no allowed key: zero weights
    for (std::size_t j = 0; j < S; ++j) sum += std::exp(double(s[j]) - mx);
    for (std::size_t j = 0; j < S; ++j)
      soft.data[row * S + j] = float(std::exp(double(s[j]) - mx) / sum);
  }
  attn::test::check_close(soft, maps, "softmax(scores) vs torch's maps");
  // The heads' shares plus o_proj's bias are torch's context; z is (B, L, H, v_head_dim).
  const attn::StateDict sd = attn::open_state_dict(dir + "/weights");
  const std::string bias_key = "model.layers.1.self_attn.o_proj.bias";
  const Tensor bias = sd.contains(bias_key) ? sd.read_f32(bias_key, false) : Tensor();
  const std::size_t rows = result.shape[0] * result.shape[1], H = result.shape[2];
  const std::size_t C = result.shape[3];
  CHECK(z.shape[2] == H);
  Tensor summed(want.shape);
  for (std::size_t r0 = 0; r0 < rows; ++r0)
    for (std::size_t c = 0; c < C; ++c) {
      double acc = bias.data.empty() ? 0.0 : bias.data[c];
      for (std::size_t h = 0; h < H; ++h) acc += result.data[(r0 * H + h) * C + c];
      summed.data[r0 * C + c] = float(acc);
    }
  attn::test::check_close(summed, want, "sum of result + bias vs torch's context");
}

TEST_CASE("cli_save: what a save holds counts in the memory check: exit 71 naming --save") {
  // The tiny Llama's forward pass needs a few KB; result's staging rows and
  // per-head output weights about 350 KB more.
  attn::test::TempDir t;
  const std::string base = "ATTN_TEST_MEMORY_LIMIT=100000 " + bin() + " -q --model " +
                           q(attn::test::source_path("data/tiny-llama")) + " --layer 1 --input " +
                           q(attn::test::source_path("data/tiny-llama-hidden.npy")) + " -o " +
                           q(t / "o");
  CHECK(run(base).exit_code == 0);
  fs::remove_all(t / "o");
  check_cli_failure(run(base + " --save result"), 71, {"--save", "bytes"});
  CHECK_FALSE(fs::exists(t / "o"));
}
