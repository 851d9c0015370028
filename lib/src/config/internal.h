// Private to the config sources: config/keys.cpp (the table of keys: what
// each expects, where it lands, its reader and its run.json form),
// config.cpp (entry points, resolve_config), the checks of the keys against
// each other after reading (config/scores.cpp, rope.cpp, sources.cpp, mla.cpp,
// residual_norm.cpp), config/arrays.cpp ("path or nested array" keys and the
// inline shape checks) and config/model.cpp (model folders merged under a
// config).
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "attn/config.h"
#include "attn/error.h"
#include "attn/model_folder.h"

namespace attn::config_detail {

// A config key's value is wrong: Exit::config, "<key as named>: <what>".
[[noreturn]] inline void bad(const std::string& name, const std::string& what) {
  throw Error(Exit::config, name + ": " + what);
}

using json = nlohmann::json;

// An integer in a message.
inline std::string int_text(std::int64_t v) { return std::to_string(v); }

// How a key is named in messages: "<file>: <key>", the file being the config
// that gave the key (or the model folder's config.json for the keys it gave).
using KeyName = std::function<std::string(const std::string& key)>;

// "config" when the config has no file name.
std::string display_name(const Config& c);

// Exit::config "<file>: <key>: <what>".
[[noreturn]] void fail(const Config& c, const std::string& key, const std::string& what);

// ---- config/keys.cpp ----
// The known keys of each checked object of a config ("" = top level, "init",
// "output", "rope", "rope.scaling", "alibi", "qk_norm", ...), nullptr elsewhere.
const std::vector<std::string>* known_keys(const std::string& path);

// Every key of `root` but model and layer into `c` (c.file and c.dir already
// set; a fresh Config otherwise), then resolve_config. `name` names each key
// in messages.
void read_config(Config& c, const json& root, const KeyName& name);

// The config's keys as resolved, for run.json (config_to_json).
json keys_to_json(const Config& c);

// The layouts' names, "fused, separate, ..." (messages).
std::string layout_list();

// Unknown keys of a parsed config: Exit::config naming the key and the
// nearest known one (or the attn-run name of a Hugging Face or torch key).
void check_config_keys(const json& root, const std::string& file);

// A Hugging Face config.json rather than an attn-run config.
bool looks_like_hf_config(const json& root);

// Parsed JSON of a config's text (syntax, duplicate keys, depth; keys not yet
// checked). Exit::config naming `file`.
json parse_config_json(const std::string& text, const std::string& file);

// ---- config/scores.cpp: the score terms' checks ----
// qk_norm's fields against each other (`o` as given, `at` its name).
void check_qk_norm(QkNormSpec& q, const json& o, const std::string& at);
// The score keys against the sizes and each other, their derived defaults
// (alibi's slopes); after the sizes are resolved.
void resolve_score_keys(Config& c);

// ---- config/rope.cpp ----
// rope.scaling's type from rope_type or type (which must agree); "" for
// "default" (no scaling). `at` names the object.
std::string read_scaling_type(const json& o, const std::string& at);
// rope.scaling's fields against each other (llama3's two wavelengths).
void check_scaling(const RopeScaling& s, const std::string& at);
// rotary_dim's default (the head size, or mla's rope part) and checks, the
// scaling's lists against it and the frequencies' own rules.
void resolve_rope(Config& c);

// ---- config/sources.cpp ----
// The key that makes this config a cross-attention one, for messages.
std::string cross_key(const Config& c);
// kv_input / key_input / value_input against each other and the keys that
// need self-attention; kdim and vdim (their defaults: hidden_size).
void resolve_sources(Config& c);

// ---- config/arrays.cpp ----
// A path string: resolved against the config's folder; "-" (standard input)
// only where `allow_stdin`. Empty strings and NUL characters are errors.
std::string path_value(const Config& c, const json& v, const std::string& name,
                       bool allow_stdin = false);
void read_input(Config& c, const json& v, const std::string& name);
void read_padding_mask(Config& c, const json& v, const std::string& name);
void read_positions(ArrayKey<PositionIds>& k, const Config& c, const json& v,
                    const std::string& name);
void read_key_mask(ArrayKey<Mask>& k, const Config& c, const json& v, const std::string& name);
void read_attn_mask(ArrayKey<AttnMask>& k, const Config& c, const json& v, const std::string& name);
void read_source(ArrayKey<Tensor>& k, const Config& c, const json& v, const std::string& name);
// Shapes inline in the config against each other and the sizes.
void check_inline(const Config& c);

// ---- config/model.cpp ----
// `root` (keys checked; model and layer already taken out of it) over layer
// `layer` of the model folder `model_dir`, into c. `flag_layer`: the layer
// came from --layer (messages name the flag). `model_type`: open_model_folder's.
// `flag_residual_norm`: --with-residual-norm (the family's norm; Exit::usage
// naming the flag when it has none).
// The layer a run picked: its number, which module of it (an encoder-decoder's
// decoder modules), and whether a flag said so (errors then name the flag).
struct Selection {
  std::optional<std::int64_t> layer;
  Module module = Module::layer;
  bool flag = false;
};
void read_with_model(Config& c, const json& root, const KeyName& config_name,
                     const std::string& model_dir, Selection pick,
                     const std::string& model_type = "", bool flag_residual_norm = false,
                     bool flag_input_norm = false, bool flag_tokens = false);

// ---- config/mla.cpp ----
// mla's fields against each other (qk_rope_head_dim even).
void check_mla(MlaSpec& m, const json& o, const std::string& at);
// With c.mla: sets head_size (max(Dn + Dr, Dv)) and checks the keys mla
// excludes; before the head size and the scale are resolved.
void resolve_mla(Config& c);
double mla_scale(const Config& c);  // 1/sqrt(Dn + Dr), times yarn's mscale^2 when rope says so

// ---- config/residual_norm.cpp ----
// Its default prefix and its checks (self-attention, O == C, weights), after the sizes.
void resolve_residual_norm(Config& c);

// ---- config/input_norm.cpp ----
// The input norm's checks (its weight named, self-attention, weights), after the sizes.
void resolve_input_norm(Config& c);

}  // namespace attn::config_detail
