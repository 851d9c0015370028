// End to end through the binary (the hostile cases for the lazy
// readers): GPT-2's layer 1 (tests/golden/init/gpt2_layers, HF
// GPT2Attention's output in gpt2_expected) rewritten by the test into a
// .safetensors and a two-shard index, with hostile neighbours: an
// unsupported dtype and a bf16 NaN outside the layer (the run succeeds), the
// same inside it, a prefix that selects nothing, a shard missing or outside
// the index's folder.
#include <doctest/doctest.h>

#include <cstring>
#include <filesystem>

#include "attn/state_dict.h"
#include "cli_checks.h"
#include "safetensors_builder.h"
#include "test_util.h"

using namespace attn;
using attn::test::StTensor;
using attn::test::TempDir;
using attn::test::write_text;

namespace {

const std::string kLayer = "transformer.h.1.attn.";

// The two-layer GPT-2 state dict as safetensors entries, file order kept.
std::vector<StTensor> gpt2_entries() {
  const StateDict sd = open_state_dict(test::source_path("tests/golden/init/gpt2_layers"));
  return test::entries_of(sd, [](const std::string& k) { return k; });
}

void write_config(const TempDir& t, const std::string& weights, const std::string& prefix) {
  write_text(t / "c.json",
             "{\"attention\": \"causal\", \"hidden_size\": 8, \"num_heads\": 2, "
             "\"context_size\": 6, \"weights\": \"" +
                 weights + "\", \"weights_prefix\": \"" + prefix + "\", \"input\": \"" +
                 test::source_path("tests/golden/init/gpt2_expected/x.npy") + "\"}");
}

test::RunResult run_config(const TempDir& t) {
  return test::run(test::quoted_binary() + " --config '" + (t / "c.json") + "' --format npy");
}

void check_layer_1(const test::RunResult& r) {
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const Tensor want =
      read_npy_f32(test::source_path("tests/golden/init/gpt2_expected/context_h1.npy"), false);
  const auto d = test::compare(test::npy_values(r.out, "stdout"), want);
  INFO(test::describe(d));
  CHECK(d.shape_ok);
  CHECK(d.relative() < 1e-5);
}

}  // namespace

TEST_CASE("hostile_index: bad tensors outside the layer never fail the run; inside they do") {
  TempDir t;
  std::vector<StTensor> e = gpt2_entries();
  e.insert(e.begin(), {"transformer.wte8.weight", "F8_E4M3", {2, 2}, "abcd"});
  e.push_back(
      {"transformer.h.0.attn.c_attn.weight_nan", "BF16", {2}, test::u16_bytes({0, 0x7fc0})});
  write_text(t / "m.safetensors", test::safetensors_image(e));
  write_config(t, t / "m.safetensors", kLayer);
  check_layer_1(run_config(t));

  // The same NaN inside the layer: the key and the index are named.
  for (StTensor& x : e)
    if (x.key == kLayer + "c_attn.bias") {
      REQUIRE(x.dtype == "F32");
      std::vector<float> v(x.bytes.size() / 4);
      std::memcpy(v.data(), x.bytes.data(), x.bytes.size());
      x.dtype = "BF16";
      x.bytes = test::bf16_bytes_of(v);
      x.bytes[2 * 5] = char(0xc1), x.bytes[2 * 5 + 1] = char(0x7f);  // element 5: NaN
    }
  write_text(t / "m.safetensors", test::safetensors_image(e));
  test::check_cli_failure(run_config(t), 65,
                          {t / "m.safetensors", kLayer + "c_attn.bias", "index (5,)", "nan"});

  // An unsupported dtype inside the layer: named with its key.
  e = gpt2_entries();
  for (StTensor& x : e)
    if (x.key == kLayer + "c_proj.bias") x.dtype = "F8_E5M2", x.bytes.resize(x.bytes.size() / 4);
  write_text(t / "m.safetensors", test::safetensors_image(e));
  test::check_cli_failure(run_config(t), 65, {kLayer + "c_proj.bias", "'F8_E5M2'"});
}

TEST_CASE("hostile_index: a prefix that selects nothing says so and shows the keys") {
  TempDir t;
  write_text(t / "m.safetensors", test::safetensors_image(gpt2_entries()));
  write_config(t, t / "m.safetensors", "transformer.h.7.attn.");
  test::check_cli_failure(
      run_config(t), 65,
      {"no key starts with weights_prefix \"transformer.h.7.attn.\"", "transformer.h.0.attn.bias"});
}

TEST_CASE("hostile_index: a two-shard index runs the layer from its shard alone") {
  TempDir t;
  std::vector<StTensor> s0, s1;
  std::string map;
  for (StTensor& x : gpt2_entries()) {
    const bool second = x.key.rfind("transformer.h.1.", 0) == 0;
    map += std::string(map.empty() ? "" : ", ") + "\"" + x.key + "\": \"" +
           (second ? "b.safetensors" : "a.safetensors") + "\"";
    (second ? s1 : s0).push_back(std::move(x));
  }
  write_text(t / "a.safetensors", test::safetensors_image(s0));
  write_text(t / "b.safetensors", test::safetensors_image(s1));
  const std::string index = t / "m.safetensors.index.json";
  write_text(index, "{\"metadata\": {}, \"weight_map\": {" + map + "}}");
  write_config(t, index, kLayer);
  check_layer_1(run_config(t));

  // The other shard missing changes nothing; this layer's shard missing is named.
  std::filesystem::remove(t / "a.safetensors");
  check_layer_1(run_config(t));
  std::filesystem::rename(t / "b.safetensors", t / "gone");
  test::check_cli_failure(run_config(t), 66, {t / "b.safetensors", "no such shard"});

  // A shard outside the index's folder: refused before anything is opened.
  write_text(index, "{\"weight_map\": {\"" + kLayer + "c_attn.weight\": \"../b.safetensors\"}}");
  test::check_cli_failure(run_config(t), 65, {index, "../b.safetensors", "outside"});
}

namespace {
// bfloat16 bytes of float32 values (the top halves: exact for the test's purpose).
std::string bf16_bytes(const Tensor& t) {
  std::string out;
  for (std::size_t i = 0; i < t.size(); ++i) {
    std::uint32_t bits;
    std::memcpy(&bits, t.ptr() + i, 4);
    out += char((bits >> 16) & 0xff);
    out += char(bits >> 24);
  }
  return out;
}
}  // namespace

// A file that shrinks while attn-run reads it (another process rewriting
// it, a network file system): a clean exit 66 naming it, nothing written,
// never SIGBUS. ATTN_TEST_PAUSE_AT=read stops the run just before a
// tensor's bytes are read (after every check that precedes the read); the
// test truncates the file there and lets the run go on.
TEST_CASE("hostile_index: a weights file truncated while it is read is 66 naming it") {
  TempDir t;
  const std::string bin = test::quoted_binary();
  const std::string cfg = test::quoted_config("warner_causal.json");
  const std::string warner = test::source_path("data/warner_causal");
  // The same layer as bf16 .safetensors (read from the mapping), .npy
  // files (float32: read by pread), an .npz and a torch.save .pt (zip
  // members), and a quantized GGUF layer (its tensors mapped one by one).
  std::vector<StTensor> st;
  for (const char* key : {"Wqkv.weight", "Wqkv.bias", "Wo.weight", "Wo.bias"}) {
    const Tensor v = read_npy_f32(warner + "/" + key + ".npy", false);
    st.push_back({key, "BF16", v.shape, bf16_bytes(v)});
  }
  write_text(t / "w.safetensors", test::safetensors_image(st));
  std::filesystem::copy(warner, t / "npy");
  REQUIRE(test::run(bin + " -q --config " + cfg + " --dump-weights " + test::q(t / "w.npz"))
              .exit_code == 0);
  std::filesystem::copy_file(test::source_path("tests/fixtures/pt/modules/warner_causal.pt"),
                             t / "w.pt");
  std::filesystem::copy_file(test::source_path("tests/golden/gguf/llama/model.gguf"), t / "m.gguf");
  const std::string gguf_input =
      test::q(test::source_path("tests/golden/gguf/llama/layer1/input.npy"));
  const struct {
    std::string args, cut, culprit;  // the run, the files truncated, the file named
  } cases[] = {
      {"--config " + cfg + " --weights " + test::q(t / "w.safetensors"), t / "w.safetensors",
       "w.safetensors"},
      {"--config " + cfg + " --weights " + test::q(t / "npy"), t / "npy/*.npy", "npy/W"},
      {"--config " + cfg + " --weights " + test::q(t / "w.npz"), t / "w.npz", "w.npz"},
      {"--config " + cfg + " --weights " + test::q(t / "w.pt"), t / "w.pt", "w.pt"},
      {"--model " + test::q(t / "m.gguf") + " --layer 1 --input " + gguf_input, t / "m.gguf",
       "m.gguf"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.args);
    const std::string out = t / "out";
    const std::string script = "ATTN_TEST_PAUSE_AT=read " + bin + " -q " + c.args + " -o " +
                               test::q(out) + " & p=$!; " + test::until_stopped("p") +
                               "truncate -s 0 " + c.cut + "; kill -s CONT $p; wait $p";
    const test::RunResult r = test::run("bash -c " + test::q(script));
    test::check_cli_failure(r, 66, {c.culprit, "truncated while"});
    CHECK_FALSE(std::filesystem::exists(out));
  }
}
