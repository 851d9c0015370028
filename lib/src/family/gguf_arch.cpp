// GGUF architectures onto the family rows (gguf_arch.h): the file's metadata
// as the row's config.json, its tensors under the row's names, as the table
// (gguf_table.cpp) says for each architecture. Read, not copied, from
// llama.cpp's sources.
#include "family/gguf_arch.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <set>

#include "attn/error.h"
#include "attn/escape.h"
#include "containers/gguf.h"
#include "containers/mapped_file.h"
#include "containers/readers.h"
#include "containers/stored.h"
#include "family/gguf_kv_b.h"
#include "family/gguf_per_layer.h"
#include "family/gguf_table.h"

namespace attn::family {

namespace {

using detail::GgufFile;
using detail::GgufValue;
using nlohmann::json;

// The GGUF tensor names of a layer's attention and the row's names for them.
const std::vector<std::pair<std::string, std::string>>& gguf_renames() {
  static const std::vector<std::pair<std::string, std::string>> r = {
      {"attn_q.", "q_proj."},
      {"attn_k.", "k_proj."},
      {"attn_v.", "v_proj."},
      {"attn_output.", "o_proj."},
      {"attn_qkv.", "qkv_proj."},
      {"attn_q_norm.", "q_norm."},
      {"attn_k_norm.", "k_norm."},
      {"attn_sinks.weight", "sinks"},
      // DeepSeek's latent attention (attn_kv_b: older files, or kv_b_of's).
      {"attn_q_a_norm.", "q_a_layernorm."},
      {"attn_q_a.", "q_a_proj."},
      {"attn_q_b.", "q_b_proj."},
      {"attn_kv_a_mqa.", "kv_a_proj_with_mqa."},
      {"attn_kv_a_norm.", "kv_a_layernorm."},
      {"attn_kv_b.", "kv_b_proj."},
      // T5: attn_o, and the relative position table (block 0, or each block in UMT5).
      {"attn_o.", "o_proj."},
      {"attn_rel_b.", "relative_attention_bias."},
  };
  return r;
}

// An integer metadata value in [lo, hi]; a per-layer array must hold one
// value for every layer, all equal (attn-run's families have one size).
std::optional<std::int64_t> gguf_size(const GgufFile& f, const std::string& key, std::int64_t lo,
                                      std::int64_t hi, std::int64_t layers = 0) {
  const GgufValue* v = f.find(key);
  if (!v) return std::nullopt;
  std::int64_t n = 0;
  if (v->is_array()) {
    if (layers == 0 || v->size() != std::uint64_t(layers))
      f.key_error(key, "expected an integer or one per layer (" + std::to_string(layers) +
                           "), found an array of " + std::to_string(v->size()));
    const std::vector<std::int64_t> all = v->to_int_array();
    for (std::int64_t x : all)
      if (x != all.front())
        f.key_error(key, "different values per layer (" + v->summary() + ") are not supported");
    n = all.front();
  } else if (v->is_integer()) {
    n = v->to_int();
  } else {
    f.key_error(key,
                std::string("expected an integer, found ") + detail::gguf_type_name(v->type()));
  }
  if (n < lo || n > hi)
    f.key_error(key, "expected an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) +
                         "], found " + std::to_string(n));
  return n;
}

std::optional<double> gguf_number(const GgufFile& f, const std::string& key) {
  const GgufValue* v = f.find(key);
  if (!v) return std::nullopt;
  if (!v->is_float() && !v->is_integer())
    f.key_error(key, std::string("expected a number, found ") + detail::gguf_type_name(v->type()));
  const double d = v->to_double();
  if (!std::isfinite(d) || d < 0)
    f.key_error(key, "expected a finite number >= 0, found " + v->summary());
  return d;
}

constexpr std::int64_t kGgufMaxSize = std::int64_t(1) << 24;  // as layer_map.cpp
constexpr std::int64_t kGgufMaxLayers = 4096;

// A small float tensor of the file (rope factors) as numbers.
std::vector<double> gguf_factors(const GgufFile& f, const std::string& name, std::size_t want) {
  const detail::GgufTensorInfo* t = f.find_tensor(name);
  if (!t) return {};
  if (t->ne.size() != 1 || t->elements != want)
    f.key_error(name,
                "expected " + std::to_string(want) +
                    " rope factors (rope.dimension_count / 2) in one dimension, found shape " +
                    shape_str(t->shape()));
  std::vector<float> v = detail::dequantize_tensor(f, *t);
  std::vector<double> out;
  for (float x : v) {
    if (!std::isfinite(x) || x <= 0) f.key_error(name, "rope factors must be finite and > 0");
    out.push_back(double(x));
  }
  return out;
}

// A layer tensor's name split as ("blk.N." or T5's "enc.blk.N." / "dec.blk.N.",
// the rest); ("", "") for the file's other tensors.
std::pair<std::string, std::string> block_name(const std::string& key) {
  for (const char* p : {"blk.", "enc.blk.", "dec.blk."}) {
    const std::size_t n = std::strlen(p);
    if (key.compare(0, n, p) != 0) continue;
    const std::size_t dot = key.find('.', n);
    if (dot == std::string::npos) return {"", ""};
    return {key.substr(0, dot + 1), key.substr(dot + 1)};
  }
  return {"", ""};
}

// N of a block prefix "blk.N." (T5's "enc.blk.N."), -1 when it is not a number.
std::int64_t block_number(const std::string& blk) {
  const std::size_t end = blk.size() - 1, start = blk.rfind('.', end - 1) + 1;
  if (start >= end || end - start > 9) return -1;
  std::int64_t n = 0;
  for (std::size_t i = start; i < end; ++i) {
    if (blk[i] < '0' || blk[i] > '9') return -1;
    n = n * 10 + (blk[i] - '0');
  }
  return n;
}

// DeepseekV2Model's sizes: q_lora_rank (absent: q_proj), kv_lora_rank, the
// rope part rope.dimension_count; the q.k and v head sizes in
// key_length_mla / value_length_mla, or (older files) key_length /
// value_length. Written as DeepseekV3Config's fields; returns q.k's size.
std::int64_t gguf_mla(const GgufFile& f, const std::string& p, json& hf) {
  auto need = [&](const std::string& key) {
    const auto n = gguf_size(f, p + key, 1, kGgufMaxSize);
    if (!n) f.key_error(p + key, "is missing (DeepSeek's latent attention needs it)");
    return *n;
  };
  const bool split = f.find(p + "attention.key_length_mla") != nullptr;
  const std::int64_t qk = need(split ? "attention.key_length_mla" : "attention.key_length");
  const std::int64_t v = need(split ? "attention.value_length_mla" : "attention.value_length");
  const std::int64_t rope = need("rope.dimension_count");
  if (rope >= qk)
    f.key_error(p + "rope.dimension_count", "expected less than the q.k head size " +
                                                std::to_string(qk) + ", found " +
                                                std::to_string(rope));
  const auto q_lora = gguf_size(f, p + "attention.q_lora_rank", 1, kGgufMaxSize);
  hf["q_lora_rank"] = q_lora ? json(*q_lora) : json(nullptr);
  hf["kv_lora_rank"] = need("attention.kv_lora_rank");
  hf["qk_nope_head_dim"] = qk - rope;
  hf["qk_rope_head_dim"] = rope;
  hf["v_head_dim"] = v;
  return qk;
}

}  // namespace

bool is_gguf_file(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
  if (path.size() >= 5) {
    std::string ext = path.substr(path.size() - 5);
    for (char& c : ext) c = char(std::tolower(static_cast<unsigned char>(c)));
    if (ext == ".gguf") return true;
  }
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return false;
  char head[4] = {};
  const ssize_t n = ::read(fd, head, 4);
  ::close(fd);
  return n == 4 && std::memcmp(head, "GGUF", 4) == 0;
}

std::vector<std::string> gguf_architectures() {
  std::vector<std::string> v;
  for (const GgufArch& a : gguf_table()) v.push_back(a.architecture);
  return v;
}

GgufModel gguf_model(const GgufFile& f) {
  const GgufValue* archv = f.find("general.architecture");
  if (!archv) f.key_error("general.architecture", "is missing");
  const std::string arch = archv->to_string();
  const GgufArch* a = gguf_arch_of(arch);
  if (!a) {
    std::string known;
    for (const std::string& k : gguf_architectures()) known += (known.empty() ? "" : ", ") + k;
    throw Error(Exit::config, printable(f.path()) + ": general.architecture \"" +
                                  printable_prefix(arch, 60) +
                                  "\" is not supported (supported: " + known + ")");
  }
  const std::string p = arch + ".";
  GgufModel m;
  m.architecture = arch;
  m.model_type = a->model_type;
  json& hf = m.hf;
  hf = a->fixed;
  hf["model_type"] = a->model_type;
  const std::int64_t layers = *[&] {
    auto n = gguf_size(f, p + "block_count", 1, kGgufMaxLayers);
    if (!n) f.key_error(p + "block_count", "is missing");
    return n;
  }();
  const std::int64_t C = [&] {
    auto n = gguf_size(f, p + "embedding_length", 1, kGgufMaxSize);
    if (!n) f.key_error(p + "embedding_length", "is missing");
    return *n;
  }();
  // Heads: one count for every layer, or one per layer (gguf_per_layer.h).
  const std::vector<std::int64_t> heads =
      gguf_layer_ints(f, p + "attention.head_count", layers, 0, kGgufMaxSize);
  if (heads.empty()) f.key_error(p + "attention.head_count", "is missing");
  // (An architecture with its own per-layer-type mapping reads head_count_kv
  // itself; MLA gives every head its own keys.)
  std::vector<std::int64_t> kv_heads;
  if (!a->per_layer_type && !a->mla)
    kv_heads = gguf_layer_ints(f, p + "attention.head_count_kv", layers, 0, kGgufMaxSize);
  if (kv_heads.empty()) kv_heads = heads;
  if (a->per_layer_type && std::set<std::int64_t>(heads.begin(), heads.end()).size() > 1)
    f.key_error(p + "attention.head_count", "different values per layer are not supported for " +
                                                arch +
                                                " (its KV heads are "
                                                "mapped per layer type)");
  gguf_heads(f, p + "attention.head_count", heads, kv_heads, hf);
  const std::int64_t H = hf["num_attention_heads"];
  std::int64_t D = gguf_size(f, p + "attention.key_length", 1, kGgufMaxSize).value_or(C / H);
  if (D < 1) f.key_error(p + "embedding_length", "is smaller than the number of heads");
  if (a->mla) {
    D = gguf_mla(f, p, hf);
  } else if (const auto Dv = gguf_size(f, p + "attention.value_length", 1, kGgufMaxSize);
             Dv && *Dv != D) {
    f.key_error(p + "attention.value_length",
                "differs from key_length (" + std::to_string(D) + "), which attn-run does not run");
  }
  hf["num_hidden_layers"] = layers;
  hf["hidden_size"] = C;
  if (!a->mla) hf["head_dim"] = D;
  const double theta = gguf_number(f, p + "rope.freq_base").value_or(a->theta);
  if (!(theta > 0))  // named as the file spells it, not as rope_theta
    f.key_error(p + "rope.freq_base", "expected the rope base, a number > 0, found 0");
  hf["rope_theta"] = theta;
  const std::int64_t R = gguf_size(f, p + "rope.dimension_count", 2, D).value_or(D);
  if (R % 2 != 0)
    f.key_error(
        p + "rope.dimension_count",
        "expected an even number (rope turns pairs of dimensions), found " + std::to_string(R));
  if (R != D && !a->mla) hf["partial_rotary_factor"] = double(R) / double(D);
  if (auto n = gguf_size(f, p + "context_length", 1, INT64_MAX)) hf["max_position_embeddings"] = *n;
  if (auto e = gguf_number(f, p + "attention.layer_norm_rms_epsilon")) hf["rms_norm_eps"] = *e;
  const auto window = gguf_size(f, p + "attention.sliding_window", 0, INT64_MAX);
  if (window && *window > 0) hf["sliding_window"] = *window;
  if (auto c = gguf_number(f, p + "attn_logit_softcapping"); c && *c > 0)
    hf["attn_logit_softcapping"] = *c;
  if (a->big_layers) hf["query_pre_attn_scalar"] = layers == a->big_layers ? C / H : D;
  // Biases and q/k norms: as the file has them in any layer (Qwen2's row fixes
  // its own biases; Qwen3-Next's layer 0 has no attention).
  bool bias = false, out_bias = false, qk_norm = false;
  for (const detail::GgufTensorInfo& t : f.tensors()) {
    const std::string n = block_name(t.name).second;
    bias = bias || n == "attn_q.bias" || n == "attn_qkv.bias";
    out_bias = out_bias || n == "attn_output.bias";
    qk_norm = qk_norm || n == "attn_q_norm.weight";
  }
  hf["attention_bias"] = bias;
  hf[a->bias_key] = bias;
  if (a->out_bias_key) hf[a->out_bias_key] = out_bias;
  if (a->qk_norm_key) hf[a->qk_norm_key] = qk_norm;
  // LayerNorm epsilons (Cohere's and StableLM's q/k LayerNorms read layer_norm_eps).
  if (auto e = gguf_number(f, p + "attention.layer_norm_epsilon")) hf["layer_norm_eps"] = *e;
  for (const auto& [suffix, key] : a->keys)
    if (auto v = gguf_number(f, p + suffix)) hf[key] = *v;
  if (arch == "modern-bert" && !hf.contains("local_rope_theta"))
    hf["local_rope_theta"] = hf["rope_theta"];  // llama.cpp: the swa base defaults to the base
  if (arch == "modern-bert") hf["global_rope_theta"] = hf["rope_theta"];
  if (std::string(a->blk) == "enc.blk." && f.find_tensor("enc.blk.1.attn_rel_b.weight"))
    m.model_type = hf["model_type"] = "umt5";  // a table in every block
  // Olmo3ForCausalLM converts as olmo2 with a window (Olmo2Model.set_gguf_parameters), which
  // llama.cpp runs on 3 sliding layers of 4, their rope unscaled (rope_freq_scale_train_swa
  // 1): OLMo 3's row.
  if (arch == "olmo2" && hf.contains("sliding_window")) m.model_type = hf["model_type"] = "olmo3";
  // Llama 4 Maverick (128 experts) has no q/k norms (use_qk_norm false), which
  // llama.cpp tells by the expert count (load_hparams: not LLM_TYPE_17B_128E).
  if (arch == "llama4" && gguf_size(f, p + "expert_count", 0, INT64_MAX).value_or(0) == 128)
    hf["use_qk_norm"] = false;
  if (arch == "llama4" && hf.contains("sliding_window")) {
    hf.erase("sliding_window");  // the chunk, not a window
  } else if (arch == "llama4" && f.find(p + "attention.sliding_window")) {
    hf["attention_chunk_size"] = nullptr;  // 0: every layer ropes, none chunked
    hf["no_rope_layers"] = std::vector<std::int64_t>(std::size_t(layers), 1);
  }
  // GPT-BigCode: multi_query unless attn_qkv holds 3C rows (c_attn per head).
  if (arch == "starcoder") {
    const detail::GgufTensorInfo* qkv = f.find_tensor("blk.0.attn_qkv.weight");
    hf["multi_query"] = !(qkv && H > 1 && qkv->rows() == std::uint64_t(3 * C));
  }
  // Falcon: attn_qkv is read in the converter's "jploski" order ([Q | K | V]);
  // another declared layout would be read wrongly.
  if (const GgufValue* l = f.find(p + "tensor_data_layout"); l && arch == "falcon")
    if (l->type() != detail::GgufType::string || l->to_string() != "jploski")
      f.key_error(p + "tensor_data_layout",
                  "expected \"jploski\" (attn_qkv as [Q | K | V]), found " + l->summary());
  // MPT (MPTModel): its attention settings as MptConfig's attn_config: ALiBi
  // when attention.max_alibi_bias > 0 (the converter writes 0 without), clip_qkv
  // from attention.clamp_kqv (llama.cpp's ggml_clamp of the fused qkv) and qk_ln
  // from attn_q_norm (refused by the row).
  if (arch == "mpt") {
    const double max_bias = gguf_number(f, p + "attention.max_alibi_bias").value_or(0.0);
    json attn = {{"alibi", max_bias > 0}, {"alibi_bias_max", max_bias}};
    if (const auto clip = gguf_number(f, p + "attention.clamp_kqv")) attn["clip_qkv"] = *clip;
    if (qk_norm) attn["qk_ln"] = true;
    hf["attn_config"] = attn;
    hf["no_bias"] = !bias;
  }
  // DBRX (DbrxModel.set_gguf_parameters): DbrxConfig keeps the KV heads, the rope base and
  // clip_qkv in attn_config, where the row reads them; the converter always writes
  // attention.clamp_kqv, which llama.cpp's build_qkv applies when > 0.
  if (arch == "dbrx") {
    json attn = {{"kv_n_heads", hf["num_key_value_heads"]}, {"rope_theta", hf["rope_theta"]}};
    if (const auto clip = gguf_number(f, p + "attention.clamp_kqv"); clip && *clip > 0)
      attn["clip_qkv"] = *clip;
    hf["attn_config"] = attn;
  }
  // A per-layer bool pattern (gguf-py's add_sliding_window_pattern(list)) says
  // which layers slide: the row's layer_types (an integer period stays the
  // architecture's own rule: llama.cpp hard-codes Gemma 3's and Cohere 2's).
  std::vector<bool> sliding;
  if (!a->per_layer_type)
    sliding = gguf_sliding_layers(f, p + "attention.sliding_window_pattern", layers);
  if (!sliding.empty()) {
    json types = json::array();
    for (bool s : sliding) types.push_back(s ? "sliding_attention" : "full_attention");
    hf["layer_types"] = types;
  }
  for (const auto& [suffix, key] : a->int_keys)
    if (!(suffix == std::string("attention.sliding_window_pattern") && !sliding.empty()))
      if (auto v = gguf_size(f, p + suffix, 1, INT64_MAX, layers)) hf[key] = *v;
  // EXAONE 4: llama.cpp slides (4096 unless the file says) only at the 32B depth, 64 layers,
  // by an integer period (4 unless attention.sliding_window_pattern is one: its loader skips
  // the converter's bool array); any other depth runs every layer full, with rope.
  if (arch == "exaone4") {
    if (layers != 64) hf["sliding_window"] = nullptr;
    hf.erase("layer_types");
  }
  // OLMo 3 likewise: llama_model_olmo2 skips the converter's bool pattern (period 4, and no
  // sliding layer without a window > 0).
  if (arch == "olmo2") hf.erase("layer_types");
  // A window of 0 for a model whose layers slide (by the file's pattern or
  // the architecture's) is a lie: the family's default window is not taken
  // in its place. (Llama 4's 0 means "no chunks", read above.)
  const std::string row = a->model_type;
  bool slides = std::find(sliding.begin(), sliding.end(), true) != sliding.end() ||
                hf.contains("sliding_window_pattern") || row == "gemma2" || row == "gemma4_text";
  if (arch == "exaone4") slides = layers == 64;  // llama.cpp's own rule, above
  if (arch == "olmo2") slides = false;           // a window of 0: OLMo 2, no sliding layer
  if (window && *window == 0 && arch != "llama4" && slides)
    f.key_error(p + "attention.sliding_window",
                "is 0, but " + arch + "'s sliding layers need a window of at least 1 token");

  if (a->per_layer_type) {  // Gemma 4: sizes, KV heads and ropes per layer type
    a->per_layer_type(f, p, layers, hf);
    return m;
  }

  // rope scaling: rope.scaling.* keys, and rope_freqs.weight's per-pair
  // divisors (llama.cpp divides each angle by its factor: inv_freq =
  // base^(-2i/R) / factor[i], rope.scaling.freq_factors).
  json scaling = nullptr;
  std::string type;
  if (const GgufValue* t = f.find(p + "rope.scaling.type")) type = t->to_string();
  // Phi-3's converter may write LongRoPE's factors as tensors without the type.
  if (type.empty() && f.find_tensor("rope_factors_long.weight")) type = "longrope";
  const double factor = gguf_number(f, p + "rope.scaling.factor").value_or(0.0);
  const auto orig = gguf_size(f, p + "rope.scaling.original_context_length", 1, INT64_MAX);
  if (type == "linear" && factor > 0 && factor != 1.0) {
    scaling = {{"rope_type", "linear"}, {"factor", factor}};
  } else if (type == "yarn") {
    scaling = {{"rope_type", "yarn"}, {"factor", factor > 0 ? factor : 1.0}};
    if (orig) scaling["original_max_position_embeddings"] = *orig;
    scaling["beta_fast"] = gguf_number(f, p + "rope.scaling.yarn_beta_fast").value_or(32.0);
    scaling["beta_slow"] = gguf_number(f, p + "rope.scaling.yarn_beta_slow").value_or(1.0);
    if (arch == "gpt-oss") scaling["truncate"] = false;
    if (const auto m = gguf_number(f, p + "rope.scaling.yarn_log_multiplier"); m && a->mla)
      scaling["mscale"] = scaling["mscale_all_dim"] = *m / 0.1;
  } else if (type == "longrope") {
    scaling = {{"rope_type", "longrope"},
               {"long_factor", gguf_factors(f, "rope_factors_long.weight", std::size_t(R / 2))},
               {"short_factor", gguf_factors(f, "rope_factors_short.weight", std::size_t(R / 2))}};
    if (auto af = gguf_number(f, p + "rope.scaling.attn_factor")) scaling["attention_factor"] = *af;
    if (orig) hf["original_max_position_embeddings"] = *orig;
  } else if (!type.empty() && type != "none" && type != "linear") {
    f.key_error(p + "rope.scaling.type", "\"" + printable_prefix(type, 40) +
                                             "\" is not supported (none, linear, yarn, longrope)");
  }
  // rope_freqs.weight: per-pair divisors that ggml applies after any scaling
  // type (LlamaModel writes Llama 3's rule as them: then it is llama3's rope).
  const std::vector<double> ff = gguf_factors(f, "rope_freqs.weight", std::size_t(R / 2));
  if (!ff.empty()) {
    if (scaling.is_null()) scaling = {{"rope_type", "llama3"}};
    scaling["freq_factors"] = ff;
  }
  if (!scaling.is_null()) hf["rope_scaling"] = scaling;
  return m;
}

void gguf_layer_config(const std::string& architecture, const json& hf, std::int64_t layer,
                       json& out) {
  const GgufArch* a = gguf_arch_of(architecture);
  gguf_layer_heads_of(hf, layer, out);
  out["weights_prefix"] = std::string(a ? a->blk : "blk.") + std::to_string(layer) + ".";
  json r = json::object();
  for (const auto& [from, to] : gguf_renames()) r[from] = to;
  out["weights_rename"] = r;
  if (a && a->layout) out["layout"] = a->layout;
  // The fused layouts of one tensor per head group name it query_key_value
  // (GPT-BigCode without multi_query keeps c_attn's per-head [q, k, v] rows).
  const std::string layout = out.value("layout", "");
  if (layout == "neox" || layout == "falcon") {
    out["weights_rename"]["attn_qkv."] = "query_key_value.";
    out["weights_rename"]["attn_output."] = "dense.";
  }
  // The stored q/k norm weight is already 1 + w (exact in float32: the
  // converter adds 1 in float32 to the bf16/f32 checkpoint's w).
  if (a && a->norm_shift && out.contains("qk_norm") && out["qk_norm"].is_object())
    out["qk_norm"]["weight_offset"] = 0;
  // input_norm: the block's attn_norm (+ .bias), eps as the file stores it;
  // the converter stored Gemma's and Qwen3-Next's norm weights as 1 + w.
  if (out.contains("input_norm") && out["input_norm"].value("kind", "") != "none") {
    json& n = out["input_norm"];
    const std::string blk = out["weights_prefix"].get<std::string>() + "attn_norm.";
    n["weight"] = blk + "weight";
    if (n.contains("bias")) n["bias"] = blk + "bias";
    const char* eps = n["kind"] == "rms" ? "rms_norm_eps" : "layer_norm_eps";
    if (hf.contains(eps)) n["eps"] = hf[eps];
    if (a && a->norm_shift) n["offset"] = 0;
    n["module"] = "attn_norm";
  }
  // embedding: llama.cpp's token_embd (dequantized row by row), position_embd,
  // token_types and token_embd_norm; a scale in float32 as ggml_scale does.
  if (out.contains("embedding")) {
    json& e = out["embedding"];
    e["word"] = "token_embd.weight";
    if (e.contains("positions")) e["positions"] = "position_embd.weight";
    if (e.contains("token_types")) e["token_types"] = "token_types.weight";
    if (e.contains("norm_weight")) {  // LLM_NORM with the file's layer_norm_epsilon
      e["norm_weight"] = "token_embd_norm.weight";
      e["norm_bias"] = "token_embd_norm.bias";
      if (hf.contains("layer_norm_eps")) e["norm_eps"] = hf["layer_norm_eps"];
    }
    if (e.contains("scale_dtype")) e["scale_dtype"] = "float32";
    e["module"] = "token_embd";
  }
  // T5: block 0's table serves the stack (UMT5's rows read each block's own).
  if (out.contains("relative_bias") && out["relative_bias"].contains("table"))
    out["relative_bias"]["table"] = std::string(a ? a->blk : "blk.") + "0.attn_rel_b.weight";
}

StateDict gguf_weights(const std::string& path) {
  const GgufFile f = detail::read_gguf(path);
  const GgufModel m = detail::reading(*f.mapped(), path, [&] { return gguf_model(f); });
  const GgufArch* a = gguf_arch_of(m.architecture);
  StateDict sd(path);
  // DeepSeek: each layer's attn_k_b / attn_v_b, and whether it has attn_kv_b.
  std::map<std::string,
           std::pair<std::shared_ptr<const detail::Stored>, std::shared_ptr<const detail::Stored>>>
      kv_halves;
  std::set<std::string> kv_whole;
  for (detail::StoredEntry& e : detail::gguf_entries(f)) {
    if (const auto [blk, name] = block_name(e.key); !blk.empty()) {
      if (a->mla && name == "attn_k_b.weight") kv_halves[blk].first = e.stored;
      if (a->mla && name == "attn_v_b.weight") kv_halves[blk].second = e.stored;
      if (name == "attn_kv_b.weight") kv_whole.insert(blk);
      bool attention = false;
      for (const auto& [from, to] : gguf_renames())
        if (name.compare(0, from.size(), from) == 0) attention = true;
      // The block's input norm (input_norm) is kept too; other norms, the MLP
      // and experts are not the attention's.
      if (!attention && name.compare(0, 10, "attn_norm.") != 0) continue;
      const bool q = name.compare(0, 7, "attn_q.") == 0, k = name.compare(0, 7, "attn_k.") == 0;
      if (a->permuted_qk && (q || k)) {
        // (the layer's own head counts: the converter permuted per layer)
        const auto [H, Hkv] = gguf_heads_at(m.hf, block_number(blk));
        auto s = std::make_shared<detail::Stored>(*e.stored);
        s->unpermute_heads = std::size_t(q ? H : Hkv);
        e.stored = std::move(s);
      }
    }
    sd.add_stored(std::move(e.key), std::move(e.stored));
  }
  for (const auto& [blk, kv] : kv_halves)
    if (kv.first && kv.second && !kv_whole.count(blk))
      sd.add_stored(blk + "attn_kv_b.weight", kv_b_of(path, blk, kv.first, kv.second));
  return sd;
}

}  // namespace attn::family
