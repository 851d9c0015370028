// Which kind each layer is (layer_kinds.h).
#include "family/layer_kinds.h"

#include <algorithm>
#include <optional>

#include "family/hf_vocab.h"
#include "family/layer_map.h"

namespace attn::family {

namespace {

// The row's per-layer attention names (WindowRule::listed): config.json's
// list_key, else its runs_key expanded as GPTNeoConfig.expand_attention_types_params
// ([[names, n], ...]: names repeated n times); both present must agree. Each
// name is the rule's global_name or local_name, one per layer.
std::vector<std::string> listed_names(const WindowRule& w, const HfConfig& hf,
                                      std::int64_t num_layers) {
  std::optional<std::vector<std::string>> names = hf.strings(w.list_key);
  if (w.runs_key && hf.has(w.runs_key)) {
    const json& runs = hf.raw()[w.runs_key];
    const std::string bad = "expected a list of runs [[names...], count], each count at most " +
                            std::to_string(num_layers);
    if (!runs.is_array()) hf.fail(w.runs_key, bad);
    std::vector<std::string> expanded;
    for (const json& run : runs) {
      if (!run.is_array() || run.size() != 2 || !run[0].is_array() || !run[1].is_number_integer() ||
          run[1].get<std::int64_t>() < 0 || run[1].get<std::int64_t>() > num_layers)
        hf.fail(w.runs_key, bad);
      for (std::int64_t i = 0; i < run[1].get<std::int64_t>(); ++i)
        for (const json& n : run[0]) {
          if (!n.is_string()) hf.fail(w.runs_key, bad);
          expanded.push_back(n.get<std::string>());
        }
    }
    if (names && *names != expanded)
      hf.fail(w.list_key, std::string("disagrees with ") + w.runs_key +
                              " (the layers' attention types are read from both); attn-run "
                              "runs a config.json where they agree");
    if (!names) {
      names = std::move(expanded);
      if (std::int64_t(names->size()) != num_layers)
        hf.fail(w.runs_key, "expands to " + std::to_string(names->size()) +
                                " layers, expected one per layer (" + std::to_string(num_layers) +
                                ")");
    }
  }
  if (!names) hf.fail(w.list_key, "is missing (one attention type per layer)");
  if (std::int64_t(names->size()) != num_layers)
    hf.fail(w.list_key, "expected one entry per layer (" + std::to_string(num_layers) +
                            "), found " + std::to_string(names->size()));
  for (std::size_t i = 0; i < names->size(); ++i)
    if ((*names)[i] != w.local_name && (*names)[i] != w.global_name)
      hf.fail(std::string(w.list_key) + "[" + std::to_string(i) + "]",
              "unknown attention type \"" + (*names)[i] + "\" (expected \"" + w.global_name +
                  "\" or \"" + w.local_name + "\")");
  return *names;
}

}  // namespace

std::int64_t global_place(const WindowRule& w, const HfConfig& hf, std::int64_t n) {
  if (w.offset_key) return hf.integer_or(w.offset_key, 0, n - 1, w.offset < 0 ? 0 : w.offset);
  if (w.offset >= 0) return w.offset;
  return w.global_first ? 0 : n - 1;
}

bool slides_by_rule(const Row& row, const HfConfig& hf, std::int64_t layer,
                    std::int64_t num_layers) {
  const WindowRule& w = row.window;
  switch (w.kind) {
    case WindowRule::none:
      return false;
    case WindowRule::all:
      return !w.enable_key || hf.boolean_or(w.enable_key, false);
    case WindowRule::global_every: {
      if (w.enable_key && !hf.boolean_or(w.enable_key, false)) return false;
      if (w.below_key && layer >= hf.integer_or(w.below_key, 0, INT64_MAX, 0)) return false;
      const std::int64_t n =
          w.period_key ? hf.integer_or(w.period_key, 1, 1 << 20, w.period) : w.period;
      if (n <= 0) return false;
      return layer % n != global_place(w, hf, n);
    }
    case WindowRule::listed:
      return listed_names(w, hf, num_layers)[std::size_t(layer)] == w.local_name;
    case WindowRule::from_layer: {
      if (w.enable_key && !hf.boolean_or(w.enable_key, false)) return false;
      return layer >= (w.from_key ? hf.integer_or(w.from_key, 0, INT64_MAX, w.from) : w.from);
    }
    case WindowRule::no_rope:
      if (w.enable_key && !hf.boolean_or(w.enable_key, false)) return false;
      return hf.has(w.window_key) && !has_rope(row, hf, layer, num_layers);
  }
  return false;
}

const std::vector<std::string>& known_layer_types() {
  // transformers' layer_types values: the ones attn-run runs, then the ones it
  // refuses (no softmax attention to run: linear attention, Mamba, a hybrid
  // model's MLP-only and MoE-only blocks).
  static const std::vector<std::string> t = {"full_attention",
                                             "sliding_attention",
                                             "chunked_attention",
                                             "linear_attention",
                                             "mamba",
                                             "conv",
                                             "mlp",
                                             "moe"};
  return t;
}

bool runs_attention(const std::string& layer_type) {
  return layer_type == "full_attention" || layer_type == "sliding_attention" ||
         layer_type == "chunked_attention";
}

namespace {

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

// config.json's list of layer kinds (layer_types, or the row's own keys and
// pattern), each in attn-run's words (the row's names first), with the key
// it came from; empty when it lists none.
std::vector<std::string> listed_kinds(const Row& row, const HfConfig& hf, std::string* key) {
  const LayerKindsRule& k = row.kinds;
  auto named = [&](const std::string& v) {
    for (const auto& [theirs, ours] : k.names)
      if (v == theirs) return ours;
    return v;
  };
  std::vector<const char*> keys = {"layer_types"};
  keys.insert(keys.end(), k.list_keys.begin(), k.list_keys.end());
  for (const char* list : keys)
    if (std::optional<std::vector<std::string>> types = hf.strings(list)) {
      *key = list;
      std::vector<std::string> out;
      for (std::size_t i = 0; i < types->size(); ++i) {
        out.push_back(named((*types)[i]));
        if (std::find(known_layer_types().begin(), known_layer_types().end(), out.back()) ==
            known_layer_types().end())
          hf.fail(std::string(list) + "[" + std::to_string(i) + "]",
                  "unknown layer type \"" + (*types)[i] +
                      "\" (known: " + joined(known_layer_types()) + ")");
      }
      return out;
    }
  if (k.pattern_key)
    if (std::optional<std::string> pattern = hf.string(k.pattern_key)) {
      *key = k.pattern_key;
      std::vector<std::string> letters, out;
      for (const auto& [theirs, ours] : k.names)
        if (theirs.size() == 1) letters.push_back(theirs + " " + ours);
      for (std::size_t i = 0; i < pattern->size(); ++i) {
        const std::string letter(1, (*pattern)[i]);
        out.push_back(named(letter));
        if (out.back() == letter)
          hf.fail(std::string(k.pattern_key) + "[" + std::to_string(i) + "]",
                  "unknown letter '" + letter + "' (known: " + joined(letters) + ")");
      }
      return out;
    }
  return {};
}

}  // namespace

std::string layer_type_of(const Row& row, const HfConfig& hf, std::int64_t layer,
                          std::int64_t num_layers) {
  const bool forced_full = row.window.last_full && layer == num_layers - 1;
  std::string key;
  const std::vector<std::string> types = listed_kinds(row, hf, &key);
  if (!types.empty() || !key.empty()) {
    if (std::int64_t(types.size()) != num_layers)
      hf.fail(key, "expected one entry per layer (" + std::to_string(num_layers) + "), found " +
                       std::to_string(types.size()));
    return forced_full ? "full_attention" : types[std::size_t(layer)];
  }
  if (forced_full) return "full_attention";
  return slides_by_rule(row, hf, layer, num_layers) ? row.window.local_type : "full_attention";
}

std::optional<std::int64_t> kv_shared_source(const Row& row, const HfConfig& hf, std::int64_t layer,
                                             std::int64_t num_layers) {
  if (!row.kv_shared_key) return std::nullopt;
  const std::int64_t n = hf.integer_or(row.kv_shared_key, 0, num_layers, 0);
  const std::int64_t first = num_layers - n;  // modeling_gemma4's first_kv_shared_layer_idx
  if (n == 0 || layer < first) return std::nullopt;
  const std::string type = layer_type_of(row, hf, layer, num_layers);
  for (std::int64_t l = first - 1; l >= 0; --l)  // the last earlier layer of its type
    if (layer_type_of(row, hf, l, num_layers) == type) return l;
  hf.fail(row.kv_shared_key, "layer " + std::to_string(layer) + " (" + type +
                                 ") shares the keys and values of an earlier " + type +
                                 " layer, and layers 0.." + std::to_string(first - 1) +
                                 " have none");
}

std::int64_t num_layers_of(const HfConfig& hf) {
  for (const char* k : spellings_of("num_layers"))
    if (hf.has(k)) return *hf.integer(k, 1, kMaxSize);
  hf.fail("num_hidden_layers", "is missing (the model's number of layers, an integer >= 1)");
}

std::int64_t num_layers_of(const Row& row, const HfConfig& hf) {
  if (row.kinds.counts_layers) {
    std::string key;
    const std::vector<std::string> types = listed_kinds(row, hf, &key);
    if (!key.empty()) {
      if (types.empty()) hf.fail(key, "lists no layer");
      return std::int64_t(types.size());
    }
  }
  const char* own = row.decoder.encoder_layers_key;
  if (own && hf.has(own)) return *hf.integer(own, 1, kMaxSize);
  return num_layers_of(hf);
}

std::int64_t decoder_layers_of(const Row& row, const HfConfig& hf) {
  if (!row.decoder.on) return 0;
  const char* own = row.decoder.decoder_layers_key;
  if (own && hf.has(own)) return *hf.integer(own, 1, kMaxSize);
  return num_layers_of(row, hf);  // T5Config: num_decoder_layers or num_layers
}

}  // namespace attn::family
