// The tensors of DeepSeek's multi-head latent attention (config "mla",
// CONTRACT.md "(v3) More of the forward pass") in and out of Weights::mla,
// under the names of modeling_deepseek_v3.DeepseekV3Attention:
//   q_proj.weight (H*Dqk, C)                     when q_lora_rank is null (V2-Lite), else
//   q_a_proj.weight (Rq, C) [+ .bias], q_a_layernorm.weight (Rq), q_b_proj.weight (H*Dqk, Rq);
//   kv_a_proj_with_mqa.weight (Rkv + Dr, C) [+ .bias], kv_a_layernorm.weight (Rkv),
//   kv_b_proj.weight (H*(Dn + Dv), Rkv); o_proj.weight (O, H*Dv) [+ .bias].
// The biases follow attention_bias: qkv_bias for q_a_proj and
// kv_a_proj_with_mqa, out_bias for o_proj (missing = none, unless asked).
//
// Letters: C hidden, H heads, O out features, Rq q_lora_rank, Rkv
// kv_lora_rank, Dn qk_nope_head_dim, Dr qk_rope_head_dim, Dv v_head_dim,
// Dqk = Dn + Dr.
#include <set>

#include "attn/error.h"
#include "attn/escape.h"
#include "layer/layouts.h"

namespace attn::detail {
namespace {

enum class MlaBias { none, qkv, out };

struct MlaSlot {
  std::string key;
  std::vector<std::size_t> shape;
  Tensor* (*field)(Weights&);
  MlaBias bias = MlaBias::none;
};

std::vector<MlaSlot> mla_slots(const MlaSpec& m, std::size_t C, std::size_t H, std::size_t O) {
  const auto Rq = std::size_t(m.q_lora_rank), Rkv = std::size_t(m.kv_lora_rank);
  const auto Dn = std::size_t(m.qk_nope_head_dim), Dr = std::size_t(m.qk_rope_head_dim);
  const auto Dv = std::size_t(m.v_head_dim), Dqk = Dn + Dr;
  std::vector<MlaSlot> s;
  if (Rq == 0) {
    s.push_back({"q_proj.weight", {H * Dqk, C}, [](Weights& w) { return &w.mla->q_proj; }});
  } else {
    s.push_back({"q_a_proj.weight", {Rq, C}, [](Weights& w) { return &w.mla->q_a_proj; }});
    s.push_back({"q_a_proj.bias", {Rq}, [](Weights& w) { return &w.mla->q_a_bias; }, MlaBias::qkv});
    s.push_back({"q_a_layernorm.weight", {Rq}, [](Weights& w) { return &w.mla->q_a_norm; }});
    s.push_back({"q_b_proj.weight", {H * Dqk, Rq}, [](Weights& w) { return &w.mla->q_b_proj; }});
  }
  s.push_back(
      {"kv_a_proj_with_mqa.weight", {Rkv + Dr, C}, [](Weights& w) { return &w.mla->kv_a_proj; }});
  s.push_back({"kv_a_proj_with_mqa.bias",
               {Rkv + Dr},
               [](Weights& w) { return &w.mla->kv_a_bias; },
               MlaBias::qkv});
  s.push_back({"kv_a_layernorm.weight", {Rkv}, [](Weights& w) { return &w.mla->kv_a_norm; }});
  s.push_back(
      {"kv_b_proj.weight", {H * (Dn + Dv), Rkv}, [](Weights& w) { return &w.mla->kv_b_proj; }});
  s.push_back({"o_proj.weight", {O, H * Dv}, [](Weights& w) { return &w.w_out; }});
  s.push_back({"o_proj.bias", {O}, [](Weights& w) { return &w.b_out; }, MlaBias::out});
  return s;
}

std::string quoted(const std::string& s) { return "\"" + printable(s) + "\""; }

// What to change when a key is missing: the other form of the q projection.
std::string mla_missing_hint(const StateDict& sd, const std::string& key) {
  if (key == "q_proj.weight" && sd.contains("q_a_proj.weight")) {
    const TensorInfo* a = sd.find("q_a_proj.weight");
    return ": the weights hold q_a_proj.weight " + shape_str(a->shape) +
           " (low-rank q): set mla \"q_lora_rank\" to " +
           (a->shape.empty() ? std::string("its rows") : std::to_string(a->shape[0]));
  }
  if ((key == "q_a_proj.weight" || key == "q_b_proj.weight" || key == "q_a_layernorm.weight") &&
      sd.contains("q_proj.weight"))
    return ": the weights hold q_proj.weight (no low-rank q, as DeepSeek-V2-Lite): set mla "
           "\"q_lora_rank\": null";
  return "";
}

}  // namespace

Weights load_mla_weights(const StateDict& sd, const Config& cfg, const std::string& source,
                         bool allow_nonfinite) {
  const MlaSpec& m = *cfg.mla;
  Weights w;
  w.C = cfg.hidden_size;
  w.H = cfg.num_heads;
  w.Hkv = cfg.num_heads;
  w.D = m.head_size();
  w.O = cfg.out_size;
  w.has_out_proj = true;
  w.mla = MlaWeights{};
  w.mla->spec = m;
  const std::vector<MlaSlot> slots =
      mla_slots(m, std::size_t(w.C), std::size_t(w.H), std::size_t(w.O));
  std::set<std::string> used;
  for (const MlaSlot& s : slots) {
    const bool qkv = s.bias == MlaBias::qkv;
    const char* flag = qkv ? "qkv_bias" : "out_bias";
    if (!sd.contains(s.key)) {
      const bool asked = s.bias != MlaBias::none && (qkv ? cfg.qkv_bias_given : cfg.out_bias_given);
      if (s.bias != MlaBias::none && !asked) continue;  // a missing bias: none
      std::string msg =
          source + ": missing key " + quoted(s.key) + " (mla, shape " + shape_str(s.shape) + ")";
      if (asked)
        msg += std::string(": config \"") + flag + "\" is true; set \"" + flag +
               "\": false or leave it out for weights without this bias";
      throw Error(Exit::data, msg + mla_missing_hint(sd, s.key));
    }
    if (s.bias != MlaBias::none && !(qkv ? cfg.qkv_bias : cfg.out_bias))
      throw Error(Exit::data, source + ": key " + quoted(s.key) + " found but config \"" + flag +
                                  "\" is false (mla); set \"" + flag + "\": true to use it");
    const TensorInfo* info = sd.find(s.key);
    if (info->shape != s.shape)  // named as the file names it
      throw Error(Exit::data,
                  source + ": key " + quoted(sd.file_key(s.key)) +
                      (sd.file_key(s.key) != s.key ? " (" + s.key + ")" : std::string()) +
                      ": expected shape " + shape_str(s.shape) + " (mla), found " +
                      shape_str(info->shape));
    *s.field(w) = sd.read_f32(s.key, allow_nonfinite);
    used.insert(s.key);
  }
  for (const std::string& key : sd.keys()) {
    if (used.count(key) || is_buffer_key(key) || is_neighbour_key(key)) continue;
    std::string expected;
    for (std::size_t i = 0; i < slots.size(); ++i) expected += (i ? ", " : "") + slots[i].key;
    std::string hint;
    if (key == "q_a_proj.weight" || key == "q_b_proj.weight" || key == "q_a_layernorm.weight")
      hint = "; the weights have a low-rank q: set mla \"q_lora_rank\"";
    if (key == "q_proj.weight") hint = "; the weights have q_proj: set mla \"q_lora_rank\": null";
    // DeepSeek-V3's and Kimi-K2's releases: FP8 (e4m3) weights with 128x128 block scales.
    const std::string fp8 = "weight_scale_inv";
    if (key.size() > fp8.size() && key.compare(key.size() - fp8.size(), fp8.size(), fp8) == 0)
      throw Error(Exit::data,
                  source + ": key " + quoted(key) +
                      ": FP8 block-quantized weights (config.json's quantization_config, "
                      "quant_method fp8, as DeepSeek-V3 and Kimi-K2 are released) are not read: "
                      "convert the checkpoint to bf16 first (DeepSeek's inference/"
                      "fp8_cast_bf16.py)");
    throw Error(Exit::data, source + ": unexpected key " + quoted(key) + " for mla (expected " +
                                expected + ")" + hint);
  }
  return w;
}

StateDict export_mla_weights(const Weights& w) {
  StateDict sd("export(mla)");
  Weights& mw = const_cast<Weights&>(w);  // the slots' accessors; nothing is changed
  for (const MlaSlot& s :
       mla_slots(w.mla->spec, std::size_t(w.C), std::size_t(w.H), std::size_t(w.O))) {
    const Tensor* t = s.field(mw);
    if (!t->data.empty()) sd.add(s.key, *t);
  }
  return sd;
}

}  // namespace attn::detail
