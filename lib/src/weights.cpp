// State dicts in and out of the canonical weights: picking one layer's keys,
// detecting the layout, checking every key and shape against the config
// (CONTRACT.md "Weight layouts"), and exporting to any layout that can hold
// the model. The key/shape tables live in weights_layouts.cpp.
//
// Letters: C hidden (in), H heads, D head size, O out features.
#include "attn/weights.h"

#include <cstring>
#include <optional>
#include <set>

#include "attn/error.h"
#include "attn/npy.h"
#include "weights_layouts.h"

namespace attn {

namespace {

using detail::Dims;
using detail::Slot;

std::string quoted(const std::string& s) { return "\"" + s + "\""; }

// The layout a parameter key belongs to, when the key alone says so.
// "out_proj.*" is shared by separate and torch_mha, so it decides nothing.
std::optional<Layout> layout_of_key(const std::string& k) {
  auto starts = [&](const char* p) { return k.rfind(p, 0) == 0; };
  if (starts("Wqkv.") || starts("Wo.")) return Layout::fused;
  if (starts("W_query.") || starts("W_key.") || starts("W_value.")) return Layout::separate;
  if (starts("heads.")) return Layout::per_head;
  if (starts("key.") || starts("query.") || starts("value.")) return Layout::kqv;
  if (starts("in_proj_")) return Layout::torch_mha;
  if (starts("c_attn.") || starts("c_proj.")) return Layout::gpt2;
  return std::nullopt;
}

// "a, b, c, ..." with at most `limit` names.
std::string key_list(const std::vector<Slot>& slots, std::size_t limit = 8) {
  std::string s;
  for (std::size_t i = 0; i < slots.size() && i < limit; ++i) s += (i ? ", " : "") + slots[i].key;
  if (slots.size() > limit) s += ", ...";
  return s;
}

}  // namespace

StateDict select_keys(const StateDict& sd, const std::string& prefix) {
  StateDict out = sd.select(prefix);  // other layers' keys dropped; nothing read
  const std::vector<std::string> keys = out.keys();
  for (const std::string& k : keys)
    if (detail::is_buffer_key(k)) out.erase(k);
  return out;
}

Layout detect_layout(const StateDict& sd, const std::string& source) {
  std::optional<Layout> found;
  std::string found_key, unknown_key;
  for (const std::string& key : sd.keys()) {
    if (detail::is_buffer_key(key)) continue;
    const auto l = layout_of_key(key);
    if (!l) {
      if (unknown_key.empty()) unknown_key = key;
      continue;
    }
    if (found && *found != *l)
      throw Error(Exit::data, source + ": keys of two layouts: " + quoted(found_key) + " (" +
                                  layout_name(*found) + ") and " + quoted(key) + " (" +
                                  layout_name(*l) + ")");
    if (!found) found = l, found_key = key;
  }
  if (found) return *found;
  if (!unknown_key.empty())
    throw Error(Exit::data,
                source + ": key " + quoted(unknown_key) +
                    " fits no layout (expected Wqkv.weight for fused, W_query.weight for "
                    "separate, heads.0.W_query.weight for per_head, query.weight for kqv, "
                    "in_proj_weight for torch_mha, c_attn.weight for gpt2; a layer of a bigger "
                    "state_dict needs weights_prefix)");
  throw Error(Exit::data, source +
                              ": no parameters found (nothing but registered buffers, or no "
                              "key under weights_prefix)");
}

Weights load_weights(const StateDict& sd, const Config& cfg, Layout layout,
                     const std::string& source, bool allow_nonfinite) {
  const Dims d = detail::dims_of(cfg);
  const std::string name = layout_name(layout);
  const std::string problem = detail::layout_fit_problem(d, layout);
  if (!problem.empty()) {
    if (!layout_has_out_proj(layout) && d.out_proj)
      throw Error(Exit::config, "out_proj: " + problem + "; set \"out_proj\": false");
    throw Error(Exit::config, "layout: " + problem);
  }
  const std::vector<Slot> slots = detail::layout_slots(d, layout);

  // Every expected key present with its exact shape, in constructor order.
  for (const Slot& s : slots) {
    const TensorInfo* info = sd.find(s.key);
    if (info == nullptr) {
      std::string msg = source + ": missing key " + quoted(s.key) + " (layout " + name +
                        ", shape " + shape_str(s.shape) + ")";
      if (s.is_bias()) {
        const char* flag = s.part == detail::Part::qkv_bias ? "qkv_bias" : "out_bias";
        msg += std::string(": config \"") + flag + "\" is true; set \"" + flag +
               "\": false for weights without this bias";
      }
      throw Error(Exit::data, msg);
    }
    if (info->shape != s.shape)
      throw Error(Exit::data, source + ": key " + quoted(s.key) + ": expected shape " +
                                  shape_str(s.shape) + ", found " + shape_str(info->shape));
  }

  // Anything else is an error. Keys the layout has under other bias or
  // out_proj settings come first (in constructor order), with a message naming
  // the config key that excludes them.
  std::set<std::string> expected;
  for (const Slot& s : slots) expected.insert(s.key);
  Dims full = d;
  full.qkv_bias = full.out_bias = true;
  full.out_proj = layout_has_out_proj(layout);
  for (const Slot& s : detail::layout_slots(full, layout)) {
    if (expected.count(s.key) || !sd.contains(s.key)) continue;
    const char* flag = s.part == detail::Part::qkv_bias ? "qkv_bias"
                       : !d.out_proj                    ? "out_proj"
                                                        : "out_bias";
    throw Error(Exit::data, source + ": key " + quoted(s.key) + " found but config \"" + flag +
                                "\" is false (layout " + name + "); set \"" + flag +
                                "\": true to use it");
  }
  for (const std::string& key : sd.keys()) {
    if (expected.count(key) || detail::is_buffer_key(key)) continue;
    throw Error(Exit::data, source + ": unexpected key " + quoted(key) + " for layout " + name +
                                " (expected " + key_list(slots) + ")");
  }

  detail::TensorMap m;
  for (const Slot& s : slots)
    m.emplace(s.key, sd.read_f32(s.key, allow_nonfinite));
  return detail::assemble(d, layout, m);
}

StateDict export_weights(const Weights& w, Layout layout) {
  const std::string problem = detail::layout_fit_problem(detail::dims_of(w), layout);
  if (!problem.empty())
    throw Error(Exit::usage,
                "--layout " + layout_name(layout) + ": cannot hold this model: " + problem);
  StateDict sd("export(" + layout_name(layout) + ")");
  for (auto& [key, t] : detail::disassemble(w, layout)) sd.add(key, std::move(t));
  return sd;
}

}  // namespace attn
