// --model DIR without --layer: the model's attention, one row per layer
// (CONTRACT.md v3): layer type, heads, KV heads, head size,
// positions (rope and its theta, scaling, rotary dims; alibi) and the
// features the layer switches on (gate, qk_norm, ...), sliding window, and the dtype and
// bytes of the tensors under the layer's key prefix. It reads config.json
// and the weights' headers only (model_folder.h, state_dict.h) and changes
// nothing; --format json gives the same as one JSON object.
#include <nlohmann/json.hpp>
#include <set>

#include "attn/error.h"
#include "attn/escape.h"
#include "attn/model_folder.h"
#include "attn/npy.h"
#include "attn/state_dict.h"
#include "cli/number_text.h"
#include "cli/stdout_writer.h"
#include "modes/modes.h"

namespace app {
namespace {

using ojson = nlohmann::ordered_json;  // keys in the order written

// Registered buffers that ride along under a layer's prefix (CONTRACT.md
// "Weight layouts"): not weights, so not counted.
bool is_buffer(const std::string& key) {
  static const std::set<std::string> kBuffers = {"bias", "masked_bias", "mask", "causal_mask"};
  const std::string inv = "inv_freq";
  return kBuffers.count(key) != 0 ||
         (key.size() >= inv.size() && key.compare(key.size() - inv.size(), inv.size(), inv) == 0);
}

// The features a layer switches on beyond heads, positions and window
// (CONTRACT.md v2 and v3), listed after its positions.
const char* const kExtras[] = {"softcap", "qk_norm",       "sinks",           "gate",
                               "mla",     "relative_bias", "attention_chunk", "attn_temperature",
                               "v_norm",  "k_eq_v",        "clip_qkv",        "disentangled"};

// One layer's row: the attention settings layer_config mapped from
// config.json, and the layer's tensors in the weights. A layer attn-run does
// not run (Qwen3-Next's linear attention) is listed with its type only.
ojson layer_row(const attn::ModelFolder& m, const attn::StateDict& sd, std::int64_t layer,
                attn::Module module = attn::Module::layer) {
  const bool own = module == attn::Module::layer;
  const std::string type = own ? attn::layer_type(m, layer) : "full_attention";
  if (own)
    if (const std::optional<std::int64_t> from = attn::kv_shared_from(m, layer))  // Gemma 4
      return {{"layer", layer}, {"type", type}, {"runs", false}, {"kv_shared_from", *from}};
  if (own && !attn::layer_runs(m, layer))
    return {{"layer", layer}, {"type", type}, {"runs", false}};
  const ojson c = attn::layer_config(m, layer, sd.keys(), false, module);
  const std::string prefix = c.value("weights_prefix", std::string());
  std::uint64_t bytes = 0;
  std::set<std::string> dtypes;
  std::size_t tensors = 0;
  for (const std::string& key : sd.keys()) {
    if (key.compare(0, prefix.size(), prefix) != 0 || is_buffer(key.substr(prefix.size())))
      continue;
    // A GGUF block's input norm (kept for --residual) is not the attention's.
    if (key.compare(prefix.size(), 10, "attn_norm.") == 0) continue;
    const attn::TensorInfo& info = *sd.find(key);  // a sharded index: opens the shard's header
    // A GGUF tensor: its ggml type ("Q4_K") and its bytes in the file.
    dtypes.insert(!info.gguf_type.empty()          ? info.gguf_type
                  : info.unsupported_dtype.empty() ? attn::dtype_name(info.dtype)
                                                   : info.unsupported_dtype);
    bytes += info.gguf_type.empty() ? std::uint64_t(info.count()) * attn::dtype_size(info.dtype)
                                    : std::uint64_t(info.stored_bytes);
    ++tensors;
  }
  ojson row = {{"layer", layer},
               {"type", type},
               {"runs", true},
               {"num_heads", c["num_heads"]},
               {"num_kv_heads", c.value("num_kv_heads", c["num_heads"])},
               {"head_size", c["head_size"]},
               {"causal", c.value("attention", std::string()) == "causal"},
               {"rope", c.value("rope", ojson())},
               {"alibi", c.value("alibi", ojson(false))},
               {"sliding_window", c.value("sliding_window", ojson())},
               {"weights_prefix", prefix},
               {"tensors", tensors},
               {"dtype", dtypes.size() == 1 ? ojson(*dtypes.begin()) : ojson(dtypes)},
               {"bytes", bytes}};
  for (const char* extra : kExtras)
    if (c.contains(extra) && !c[extra].is_null() && c[extra] != false) row[extra] = c[extra];
  return row;
}

std::string number(const ojson& v) {
  if (v.is_number_float()) {
    char b[32];
    std::snprintf(b, sizeof b, "%g", v.get<double>());
    return b;
  }
  return v.dump();
}

// "rope theta=10000", "rope theta=500000 llama3 x8 rotary 32/64", "rope theta=1e+06 mrope
// 16/24/24" (the time, height and width sections), "alibi", "-".
std::string positions(const ojson& row) {
  if (row["rope"].is_object()) {
    const ojson& r = row["rope"];
    std::string s = "rope theta=" + number(r.value("theta", ojson(10000.0)));
    if (r.contains("scaling") && r["scaling"].is_object()) {
      const ojson& sc = r["scaling"];
      s += " " + sc.value("rope_type", sc.value("type", std::string("scaled")));
      if (sc.contains("partial_rotary_factor"))  // proportional: the share of pairs that turn
        s += " " + number(sc["partial_rotary_factor"]);
      if (sc.contains("factor")) s += " x" + number(sc["factor"]);
    }
    if (r.contains("rotary_dim") && r["rotary_dim"] != row["head_size"])
      s += " rotary " + number(r["rotary_dim"]) + "/" + number(row["head_size"]);
    if (r.value("style", std::string("half")) == "interleaved") s += " interleaved";
    if (r.contains("mrope_section") && r["mrope_section"].size() == 3) {
      const ojson& m = r["mrope_section"];
      s += " mrope " + number(m[0]) + "/" + number(m[1]) + "/" + number(m[2]);
      if (r.value("mrope_interleaved", false)) s += " interleaved";
    }
    return s;
  }
  if (row["alibi"].is_object() && row["alibi"].contains("max_bias"))
    return "alibi max_bias=" + number(row["alibi"]["max_bias"]);
  if (row["alibi"] != false) return "alibi";
  return "-";
}

// " q_lora=1536 kv_lora=512 v=128" (q_lora=- for q_proj): DeepSeek's latent ranks.
std::string mla_ranks(const ojson& m) {
  if (!m.is_object()) return "";
  const ojson q = m.value("q_lora_rank", ojson());
  return " q_lora=" + (q.is_null() ? std::string("-") : number(q)) +
         " kv_lora=" + number(m.value("kv_lora_rank", ojson())) +
         " v=" + number(m.value("v_head_dim", ojson()));
}

// An encoder-decoder's rows (encoder layers, then each decoder layer's self- and
// cross-attention): the layer as "encoder 3" / "decoder 3", its attention
// ("bidirectional", "causal", "cross") and the flags that run it.
void add_stacks(const attn::ModelFolder& m, const attn::StateDict& sd, ojson& j) {
  for (std::int64_t layer = 0; layer < m.num_layers; ++layer) {
    ojson r = layer_row(m, sd, layer);
    r["stack"] = "encoder";
    r["run"] = "--layer " + std::to_string(layer);
    j["layers"].push_back(r);
  }
  for (std::int64_t layer = 0; layer < m.decoder_layers; ++layer)
    for (const attn::Module module : {attn::Module::decoder_self, attn::Module::decoder_cross}) {
      ojson r = layer_row(m, sd, layer, module);
      r["stack"] = "decoder";
      r["module"] = attn::module_name(module);
      r["run"] = "--decoder-layer " + std::to_string(layer) +
                 (module == attn::Module::decoder_cross ? " --cross --encoder-output ENC.npy" : "");
      j["layers"].push_back(r);
    }
}

std::string table(const ojson& j) {
  const bool stacks = j.contains("decoder_layers");
  std::vector<std::vector<std::string>> rows = {{"layer", stacks ? "attention" : "type", "heads",
                                                 "kv_heads", "head_size", "positions", "window",
                                                 "dtype", "bytes"}};
  if (stacks) rows[0].push_back("run with");
  for (const ojson& r : j["layers"]) {
    std::string type = r["type"].get<std::string>();
    type = type.substr(0, type.find("_attention"));  // "full", "sliding", "linear", ...
    std::string layer = number(r["layer"]);
    if (stacks) {  // "encoder 0 bidirectional", "decoder 0 causal", "decoder 0 cross"
      layer = r["stack"].get<std::string>() + " " + layer;
      type = r.value("module", std::string()) == "decoder_cross" ? "cross"
             : r["runs"].get<bool>() && r["causal"].get<bool>()  ? "causal"
             : r["runs"].get<bool>()                             ? "bidirectional"
                                                                 : type;
    }
    if (!r["runs"].get<bool>()) {
      const std::string why = r.contains("kv_shared_from")
                                  ? " (K/V of layer " + number(r["kv_shared_from"]) + ", not run)"
                                  : " (not run)";
      rows.push_back({layer, type + why, "-", "-", "-", "-", "-", "-", "-"});
      if (stacks) rows.back().push_back("-");
      continue;
    }
    std::string pos = positions(r);
    for (const char* extra : kExtras)
      if (r.contains(extra))
        pos = (pos == "-" ? std::string() : pos + ", ") + extra +
              (r[extra].is_number() ? "=" + number(r[extra]) : std::string()) +
              (std::string(extra) == "mla" ? mla_ranks(r[extra]) : std::string());
    rows.push_back({layer, type, number(r["num_heads"]), number(r["num_kv_heads"]),
                    number(r["head_size"]), pos,
                    r["sliding_window"].is_null() ? "-" : number(r["sliding_window"]),
                    r["dtype"].is_string() ? r["dtype"].get<std::string>() : "mixed",
                    human_bytes(r["bytes"].get<std::uint64_t>())});
    if (stacks) rows.back().push_back(r["run"].get<std::string>());
  }
  std::vector<std::size_t> w(rows[0].size(), 0);
  for (const auto& r : rows)
    for (std::size_t i = 0; i < r.size(); ++i) w[i] = std::max(w[i], r[i].size());
  const std::string layers = stacks ? number(j["num_layers"]) + " encoder + " +
                                          number(j["decoder_layers"]) + " decoder layers"
                                    : number(j["num_layers"]) + " layers";
  std::string out = "model: " + attn::printable(j["model"].get<std::string>()) + " (" +
                    attn::printable(j["model_type"].get<std::string>()) + ", " + layers +
                    ")   weights: " + attn::printable(j["weights"].get<std::string>()) + "\n";
  for (const auto& r : rows) {
    std::string line;
    for (std::size_t i = 0; i < r.size(); ++i) {
      // Numbers right-aligned, text left-aligned, as a printed table reads.
      const bool right = (i == 0 && !stacks) || i == 2 || i == 3 || i == 4 || i == 8;
      const std::string pad(w[i] - r[i].size(), ' ');
      line += (i ? "  " : "") + (right ? pad + r[i] : r[i] + (i + 1 < r.size() ? pad : ""));
    }
    out += line + "\n";
  }
  return out;
}

}  // namespace

int run_model_summary(const Options& opt) {
  if (opt.format == Format::npy)
    throw attn::Error(attn::Exit::usage, "--format npy: the model summary is text or json");
  const attn::ModelFolder m = attn::open_model_folder(model_summary_folder(opt), opt.model_type);
  const attn::StateDict sd = attn::open_model_weights(m);
  ojson j = {{"model", m.dir},
             {"model_type", m.model_type},
             {"weights", m.weights},
             {"num_layers", m.num_layers},
             {"layers", ojson::array()}};
  if (m.decoder_layers > 0) {
    j["decoder_layers"] = m.decoder_layers;
    add_stacks(m, sd, j);
  } else {
    for (std::int64_t layer = 0; layer < m.num_layers; ++layer)
      j["layers"].push_back(layer_row(m, sd, layer));
  }
  write_stdout(opt.format == Format::json ? j.dump(2) + "\n" : table(j));
  return 0;
}

}  // namespace app
