// State dicts in and out of the canonical weights: picking one layer's keys,
// detecting the layout, checking every key and shape against the config
// (CONTRACT.md "Weight layouts"), and exporting to any layout that can hold
// the model. The key/shape tables live in layer/layouts.cpp.
//
// Letters: C hidden (in), H heads, Hkv key/value heads, D head size, O out features.
#include "attn/weights.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <set>

#include "attn/error.h"
#include "attn/escape.h"
#include "attn/layout.h"
#include "layer/layouts.h"

namespace attn {

namespace {

using detail::Dims;
using detail::Slot;

// A key from the file, escaped for the one-line message (CONTRACT.md).
std::string in_quotes(const std::string& s) { return "\"" + printable(s) + "\""; }

// The layouts a parameter key can belong to (empty: the key names none).
// Shared names (out_proj, o_proj, dense, query_key_value) decide nothing alone.
std::vector<Layout> layouts_of_key(const std::string& k) {
  auto starts = [&](const char* p) { return k.rfind(p, 0) == 0; };
  using L = Layout;
  if (starts("Wqkv.") || starts("Wo.") || starts("qkv_proj.")) return {L::fused};
  if (starts("W_query.") || starts("W_key.") || starts("W_value.")) return {L::separate};
  if (starts("heads.")) return {L::per_head};
  if (starts("key.") || starts("query.") || starts("value.")) return {L::kqv};
  if (starts("in_proj_") || k == "q_proj_weight" || k == "k_proj_weight" || k == "v_proj_weight" ||
      k == "bias_k" || k == "bias_v")
    return {L::torch_mha};
  if (starts("c_attn.") || starts("c_proj.")) return {L::gpt2};
  if (starts("q_proj.") || starts("k_proj.") || starts("v_proj.") || starts("q_norm.") ||
      starts("k_norm.") || k == "sinks")
    return {L::proj};
  if (starts("self.query.") || starts("self.key.") || starts("self.value.") ||
      starts("output.dense."))
    return {L::bert};
  if (starts("o_proj.")) return {L::proj, L::fused};
  if (starts("out_proj.")) return {L::separate, L::torch_mha, L::proj, L::fused};
  if (starts("query_key_value.") || starts("dense.")) return {L::neox, L::falcon};
  return {};
}

// DeepSeek's tensors under a config without "mla": what to set.
std::string mla_hint() {
  return ": the weights are DeepSeek's multi-head latent attention (kv_a_proj_with_mqa): set the "
         "config's \"mla\" {q_lora_rank, kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim, "
         "v_head_dim} (a deepseek_v2, deepseek_v3 or kimi_k2 model folder sets it)";
}

// The key a layout cannot do without (the first weight of its table).
std::string first_key(Layout l) {
  Dims d;
  d.C = d.H = d.Hkv = d.D = d.O = 1;
  return detail::layout_slots(d, l).front().key;
}

std::string names(const std::vector<Layout>& ls, const char* sep) {
  std::string s;
  for (std::size_t i = 0; i < ls.size(); ++i)
    s += (i ? (i + 1 == ls.size() ? std::string(" ") + sep + " " : std::string(", ")) : "") +
         layout_name(ls[i]);
  return s;
}

// "a, b, c, ..." with at most `limit` names.
std::string key_list(const std::vector<Slot>& slots, std::size_t limit = 8) {
  std::string s;
  for (std::size_t i = 0; i < slots.size() && i < limit; ++i)
    s += (i ? ", " : "") + slots[i].key;  // our own names: nothing to escape
  if (slots.size() > limit) s += ", ...";
  return s;
}

std::string num(std::size_t v) { return std::to_string(v); }

// What to change in the config when a key is missing, as the tail of the
// message ("" when there is nothing to add): an extra the config asked for,
// or torch MHA's other form of the q, k, v weights in the file.
std::string missing_hint(const StateDict& sd, const Dims& d, const Slot& s) {
  using detail::Part;
  if (sd.contains("kv_a_proj_with_mqa.weight")) return mla_hint();
  switch (s.part()) {
    case Part::bias_k:
    case Part::bias_v:
      return ": config \"add_bias_kv\" is true; set \"add_bias_kv\": false for weights without "
             "bias_k and bias_v";
    case Part::q_norm:
    case Part::k_norm:
      return ": config \"qk_norm\" is set; leave \"qk_norm\" out for weights without q_norm and "
             "k_norm (or use its kind \"l2\", which has no weight)";
    case Part::q_norm_bias:
    case Part::k_norm_bias:
      return ": config qk_norm \"bias\" is true; set it false for norms without a bias";
    case Part::sinks:
      return ": config \"sinks\" is true; set \"sinks\": false for weights without sinks";
    default:
      break;
  }
  if (s.key == "v_proj.weight" && sd.contains("k_proj.weight"))
    return ": a layer whose values are its keys (Gemma 4's attention_k_eq_v) has no v_proj; set "
           "\"k_eq_v\": true";
  // nn.MultiheadAttention keeps in_proj_weight only when kdim == vdim == embed_dim.
  const bool split = sd.contains("k_proj_weight") && sd.contains("v_proj_weight");
  const TensorInfo* k = s.key == "in_proj_weight" && split ? sd.find("k_proj_weight") : nullptr;
  const TensorInfo* v = k ? sd.find("v_proj_weight") : nullptr;
  if (k && v && k->shape.size() == 2 && v->shape.size() == 2)
    return ": the weights hold q_proj_weight, k_proj_weight " + shape_str(k->shape) +
           " and v_proj_weight " + shape_str(v->shape) +
           " (nn.MultiheadAttention with kdim/vdim): set \"kdim\": " + num(k->shape[1]) +
           " and \"vdim\": " + num(v->shape[1]);
  if ((s.key == "q_proj_weight" || s.key == "k_proj_weight" || s.key == "v_proj_weight") &&
      sd.contains("in_proj_weight"))
    return ": the weights hold in_proj_weight (nn.MultiheadAttention with kdim = vdim = "
           "embed_dim): leave out \"kdim\" and \"vdim\" (found " +
           num(d.key_width()) + ", " + num(d.value_width()) + ")";
  // A whole model's file read without weights_prefix: the key is there under
  // each layer's prefix ("bert.encoder.layer.0.attention." + "self.query.weight").
  std::vector<std::string> prefixes;
  for (const std::string& k : sd.keys())
    if (k.size() > s.key.size() && k.compare(k.size() - s.key.size(), s.key.size(), s.key) == 0 &&
        k[k.size() - s.key.size() - 1] == '.')
      prefixes.push_back(k.substr(0, k.size() - s.key.size()));
  if (!prefixes.empty()) {
    // The first layer's: the prefix with the smallest numbers ("layer.2." before "layer.10.").
    const auto natural_less = [](const std::string& a, const std::string& b) {
      std::size_t i = 0, j = 0;
      while (i < a.size() && j < b.size()) {
        if (std::isdigit(static_cast<unsigned char>(a[i])) &&
            std::isdigit(static_cast<unsigned char>(b[j]))) {
          std::size_t ei = i, ej = j;
          while (ei < a.size() && std::isdigit(static_cast<unsigned char>(a[ei]))) ++ei;
          while (ej < b.size() && std::isdigit(static_cast<unsigned char>(b[ej]))) ++ej;
          if (ei - i != ej - j) return ei - i < ej - j;
          const int c = a.compare(i, ei - i, b, j, ej - j);
          if (c != 0) return c < 0;
          i = ei, j = ej;
        } else {
          if (a[i] != b[j]) return a[i] < b[j];
          ++i, ++j;
        }
      }
      return a.size() - i < b.size() - j;
    };
    const std::string first = *std::min_element(prefixes.begin(), prefixes.end(), natural_less);
    return ": the file holds it under " + num(prefixes.size()) +
           (prefixes.size() == 1 ? " prefix, \"" : " prefixes, the first \"") + first +
           "\": set \"weights_prefix\": \"" + first +
           "\" (or run a model folder with --model DIR --layer N)";
  }
  return "";
}

// What to change in the config when a key has the wrong shape ("" when
// nothing obvious): the other qk_norm scope, or the kdim/vdim the file has.
std::string shape_hint(const Dims& d, const Slot& s, const std::vector<std::size_t>& found) {
  using detail::Part;
  using detail::QkNorm;
  const bool norm = s.part() == Part::q_norm || s.part() == Part::k_norm ||
                    s.part() == Part::q_norm_bias || s.part() == Part::k_norm_bias;
  if (norm && found.size() == 2 && !d.qk_per_head && found[1] == d.D)
    return "; one weight per head: set qk_norm \"per_head\": true (Cohere, StableLM)";
  if (norm && found.size() == 1 && d.qk_per_head && found[0] == d.D)
    return "; one weight shared by the heads: set qk_norm \"per_head\": false";
  if ((s.part() == Part::q_norm || s.part() == Part::k_norm) && found.size() == 1) {
    Dims other = d;
    other.qk_norm = d.qk_norm == QkNorm::all ? QkNorm::head : QkNorm::all;
    const std::size_t n = s.part() == Part::q_norm ? other.q_norm_size() : other.k_norm_size();
    if (found[0] == n && n != s.shape[0])
      return other.qk_norm == QkNorm::all
                 ? "; the weights norm the whole q and k rows: set qk_norm \"scope\": \"all\" "
                   "(OLMo 2)"
                 : "; the weights norm each head: set qk_norm \"scope\": \"head\" (Qwen3, "
                   "Gemma 3)";
  }
  // Qwen3-Next's q_proj holds a gate beside each head's query: twice the rows.
  if (s.key == "q_proj.weight" && found.size() == 2 && found[1] == s.shape[1]) {
    if (!d.gate && found[0] == 2 * s.shape[0])
      return "; twice num_heads * head_size rows: a gate per head beside the query (Qwen3-Next's "
             "[query | gate]): set \"gate\": true";
    if (d.gate && 2 * found[0] == s.shape[0])
      return "; config \"gate\" is true but q_proj holds no gate rows: set \"gate\": false";
  }
  if ((s.part() == Part::k_weight || s.part() == Part::v_weight) && found.size() == 2 &&
      found[0] == s.shape[0])
    return std::string("; set \"") + (s.part() == Part::k_weight ? "kdim" : "vdim") +
           "\": " + num(found[1]);
  return "";
}

// A key of an extra the config did not ask for (bias_k, bias_v, q_norm,
// k_norm, sinks): what to set to use it; "" for other keys.
std::string unasked_extra(const StateDict& sd, const std::string& key, const Dims& d,
                          Layout layout) {
  const bool norm_bias = key == "q_norm.bias" || key == "k_norm.bias";
  const bool norm = key == "q_norm.weight" || key == "k_norm.weight" || norm_bias;
  const bool bias_kv = key == "bias_k" || key == "bias_v";
  if (!norm && !bias_kv && key != "sinks") return "";
  const std::string name = layout_name(layout);
  const Layout home = bias_kv ? Layout::torch_mha : Layout::proj;
  if (layout != home)
    return "key " + in_quotes(key) + " fits layout " + layout_name(home) + ", not layout " + name;
  if (bias_kv)
    return "key " + in_quotes(key) + " found but config \"add_bias_kv\" is false (layout " + name +
           "); set \"add_bias_kv\": true to use it";
  if (key == "sinks")
    return "key \"sinks\" found but config \"sinks\" is false (layout " + name +
           "); set \"sinks\": true to use it";
  if (norm_bias && d.qk_norm != detail::QkNorm::none)
    return "key " + in_quotes(key) + " found but qk_norm \"bias\" is false (layout " + name +
           "); set qk_norm {\"kind\": \"layer\", \"bias\": true} to use it";
  // (D) is one weight shared by the heads; (H*D) or (Hkv*D) norms the whole
  // row; (H, D) is one per head.
  const TensorInfo& info = *sd.find(key);
  const bool head = info.shape.size() == 1 && info.shape[0] == d.D;
  const bool per_head = info.shape.size() == 2;
  return "key " + in_quotes(key) + " " + shape_str(info.shape) +
         " found but config \"qk_norm\" is not set (layout " + name + "); set \"qk_norm\": " +
         (per_head ? std::string("{\"per_head\": true}")
                   : "{\"scope\": \"" + std::string(head ? "head" : "all") + "\"}") +
         " to use it (kind \"l2\" has no weight)";
}

}  // namespace

StateDict select_keys(const StateDict& sd, const std::string& prefix) {
  StateDict out = sd.select(prefix);  // other layers' keys dropped; nothing read
  const std::vector<std::string> keys = out.keys();
  for (const std::string& k : keys)
    if (detail::is_buffer_key(k) || detail::is_neighbour_key(k)) out.erase(k);
  return out;
}

Layout detect_layout(const StateDict& sd, const std::string& source) {
  if (sd.contains("kv_a_proj_with_mqa.weight"))  // no layout's: the config's "mla" reads it
    throw Error(Exit::data,
                source + ": key \"kv_a_proj_with_mqa.weight\" fits no layout" + mla_hint());
  std::vector<Layout> cand;  // layouts every named key so far fits
  std::string cand_key, unknown_key;
  for (const std::string& key : sd.keys()) {
    if (detail::is_buffer_key(key) || detail::is_neighbour_key(key)) continue;
    const std::vector<Layout> ls = layouts_of_key(key);
    if (ls.empty()) {
      if (unknown_key.empty()) unknown_key = key;
      continue;
    }
    if (cand_key.empty()) {
      cand = ls, cand_key = key;
      continue;
    }
    std::vector<Layout> both;
    for (Layout l : cand)
      if (std::find(ls.begin(), ls.end(), l) != ls.end()) both.push_back(l);
    if (both.empty())
      throw Error(Exit::data, source + ": keys of two layouts: " + in_quotes(cand_key) + " (" +
                                  names(cand, "or") + ") and " + in_quotes(key) + " (" +
                                  names(ls, "or") + ")");
    if (both.size() < cand.size()) cand_key = key;
    cand = both;
  }
  if (cand.size() == 1) return cand.front();
  if (cand.size() > 1) {
    if (cand == std::vector<Layout>{Layout::neox, Layout::falcon})
      throw Error(Exit::data,
                  source + ": key " + in_quotes(cand_key) +
                      " is ambiguous: set \"layout\" to neox (GPT-NeoX, Pythia, BLOOM: per head "
                      "[q, k, v]) or falcon (Falcon: per KV group [q..., k, v])");
    std::string missing;
    for (Layout l : cand)
      missing +=
          (missing.empty() ? "" : " or ") + in_quotes(first_key(l)) + " (" + layout_name(l) + ")";
    throw Error(Exit::data, source + ": key " + in_quotes(cand_key) + " looks like layout " +
                                names(cand, "or") + ", but the rest is missing: expected " +
                                missing);
  }
  // A whole block's prefix: the attention's keys sit one module deeper
  // ("self_attn.q_proj.weight"); say which module to add to the prefix.
  for (const std::string& key : sd.keys()) {
    const std::size_t dot = key.find('.');
    if (dot == std::string::npos || layouts_of_key(key.substr(dot + 1)).empty()) continue;
    if (detail::is_neighbour_key(key)) continue;
    throw Error(Exit::data, source + ": key " + in_quotes(key) +
                                " is one module deeper than a layer's "
                                "keys: add " +
                                in_quotes(key.substr(0, dot + 1)) +
                                " to weights_prefix to select that attention module");
  }
  if (!unknown_key.empty())
    throw Error(Exit::data,
                source + ": key " + in_quotes(unknown_key) +
                    " fits no layout (expected Wqkv.weight or qkv_proj.weight for fused, "
                    "W_query.weight for separate, heads.0.W_query.weight for per_head, "
                    "query.weight for kqv, in_proj_weight for torch_mha, c_attn.weight for gpt2, "
                    "q_proj.weight for proj, self.query.weight for bert, query_key_value.weight "
                    "for neox or falcon; a layer of a bigger state_dict needs weights_prefix up "
                    "to the attention module, e.g. \"model.layers.0.self_attn.\")");
  throw Error(Exit::data, source +
                              ": no parameters found (nothing but registered buffers and "
                              "neighbour modules, or no key under weights_prefix)");
}

Weights load_weights(const StateDict& sd, const Config& cfg, Layout layout,
                     const std::string& source, bool allow_nonfinite) {
  if (cfg.mla) return detail::load_mla_weights(sd, cfg, source, allow_nonfinite);
  const std::string name = layout_name(layout);
  // {"out_proj": false} over a model folder's layer: its output projection
  // is in the file and left unread (the context is the heads concatenated).
  const bool drop_out_proj = cfg.from_model && !cfg.out_proj && layout_has_out_proj(layout);
  {
    detail::Dims fit = detail::dims_of(cfg);
    fit.out_proj = fit.out_proj || drop_out_proj;
    const std::string problem = detail::fit_problem(fit, layout);
    if (!problem.empty()) {
      if (!layout_has_out_proj(layout) && cfg.out_proj)
        throw Error(Exit::config, "out_proj: " + problem + "; set \"out_proj\": false");
      throw Error(Exit::config, "layout: " + problem);
    }
  }
  // Every key the layout can have; a bias is optional unless asked for.
  Dims full = detail::dims_of(cfg);
  full.qkv_bias = full.out_bias = true;
  // Per-head norms as one module per head (StableLM) when the file has them so.
  full.qk_norm_list =
      full.qk_per_head && !sd.contains("q_norm.weight") && sd.contains("q_norm.norms.0.weight");
  full.out_bias = full.out_proj;
  const std::vector<Slot> slots = detail::layout_slots(full, layout);

  std::vector<std::pair<const Slot*, std::string>> found;  // slot, key in the file
  std::set<std::string> used;
  bool has_qkv_bias = false, has_out_bias = false;
  for (const Slot& s : slots) {
    std::string key;  // the slot's name or one of its aliases, as the file has it
    std::vector<std::string> candidates{s.key};
    candidates.insert(candidates.end(), s.aliases.begin(), s.aliases.end());
    for (const std::string& k : candidates)
      if (key.empty() && sd.contains(k)) key = k;
    const bool qkv = s.part() == detail::Part::qkv_bias;
    if (key.empty()) {
      const bool asked = s.is_bias() && (qkv ? cfg.qkv_bias_given : cfg.out_bias_given);
      if (s.is_bias() && !asked) continue;  // missing bias: zero
      std::string msg = source + ": missing key " + in_quotes(s.key) + " (layout " + name +
                        ", shape " + shape_str(s.shape) + ")";
      if (asked) {
        const char* flag = qkv ? "qkv_bias" : "out_bias";
        msg += std::string(": config \"") + flag + "\" is true; set \"" + flag +
               "\": false or leave it out for weights without this bias";
      }
      throw Error(Exit::data, msg + missing_hint(sd, full, s));
    }
    if (s.is_bias() && !(qkv ? cfg.qkv_bias : cfg.out_bias)) {
      const char* flag = qkv ? "qkv_bias" : "out_bias";
      throw Error(Exit::data, source + ": key " + in_quotes(key) + " found but config \"" + flag +
                                  "\" is false (layout " + name + "); set \"" + flag +
                                  "\": true to use it");
    }
    const TensorInfo* info = sd.find(key);
    if (info->shape != s.shape)  // named as the file names it (a GGUF's blk.N.attn_q.weight)
      throw Error(Exit::data, source + ": key " + in_quotes(sd.file_key(key)) +
                                  (sd.file_key(key) != key ? " (" + key + ")" : std::string()) +
                                  ": expected shape " + shape_str(s.shape) + ", found " +
                                  shape_str(info->shape) + shape_hint(full, s, info->shape));
    if (s.is_bias()) (qkv ? has_qkv_bias : has_out_bias) = true;
    found.emplace_back(&s, key);
    used.insert(key);
  }

  // The output projection's names, for a message when out_proj is false.
  std::set<std::string> out_keys;
  if (!cfg.out_proj && layout_has_out_proj(layout)) {
    Dims with_out = full;
    with_out.out_proj = with_out.out_bias = true;
    with_out.O = with_out.q_rows();
    for (const Slot& s : detail::layout_slots(with_out, layout))
      if (s.part() == detail::Part::out_weight || s.part() == detail::Part::out_bias) {
        out_keys.insert(s.key);
        out_keys.insert(s.aliases.begin(), s.aliases.end());
      }
  }
  for (const std::string& key : sd.keys()) {
    if (used.count(key) || detail::is_buffer_key(key) || detail::is_neighbour_key(key)) continue;
    const std::string extra = unasked_extra(sd, key, full, layout);
    if (!extra.empty()) throw Error(Exit::data, source + ": " + extra);
    if (out_keys.count(key) && drop_out_proj) continue;
    if (out_keys.count(key))
      throw Error(Exit::data, source + ": key " + in_quotes(key) +
                                  " found but config \"out_proj\" is false (layout " + name +
                                  "); set \"out_proj\": true to use it");
    if (cfg.k_eq_v && key.rfind("v_proj.", 0) == 0)
      throw Error(Exit::data, source + ": key " + in_quotes(key) +
                                  " found but config \"k_eq_v\" is true (v is k_proj's output); "
                                  "set \"k_eq_v\": false to use it");
    throw Error(Exit::data, source + ": unexpected key " + in_quotes(key) + " for layout " + name +
                                " (expected " + key_list(slots) + ")");
  }

  Weights w = detail::read_weights(full, has_qkv_bias, has_out_bias, sd, found, allow_nonfinite);
  w.k_eq_v = cfg.k_eq_v;
  return w;
}

StateDict export_weights(const Weights& w, Layout layout) {
  if (w.mla) {
    if (layout != Layout::proj)
      throw Error(Exit::usage, "--layout " + layout_name(layout) +
                                   ": cannot hold this model: mla's tensors have their own names "
                                   "(use --layout proj or leave it out)");
    return detail::export_mla_weights(w);
  }
  const Dims d = detail::dims_of(w);
  const std::string problem = detail::fit_problem(d, layout);
  if (!problem.empty()) {
    // Name the layouts that can (a folder's layer without its output
    // projection: separate, fused...), so the fix is one flag away.
    std::string fitting;
    if (problem.find("use layout") == std::string::npos)  // unless the problem names it
      for (const std::string& name : layout_names())
        if (detail::fit_problem(d, *parse_layout(name)).empty())
          fitting += (fitting.empty() ? "" : ", ") + name;
    throw Error(
        Exit::usage,
        "--layout " + layout_name(layout) + ": cannot hold this model: " + problem +
            (fitting.empty() ? std::string() : "; give --layout with one that can: " + fitting));
  }
  StateDict sd("export(" + layout_name(layout) + ")");
  for (const Slot& s : detail::layout_slots(d, layout)) sd.add(s.key, detail::slot_tensor(w, s));
  return sd;
}

}  // namespace attn
