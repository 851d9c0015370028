// The JSON config of CONTRACT.md ("Config"): parsed strictly into a plain
// struct with every default applied and every size checked for consistency.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "attn/layout.h"
#include "attn/tensor.h"

namespace attn {

enum class Kind { single, multi, causal };  // the tutorial modules
std::string kind_name(Kind k);

struct Config {
  std::string file;  // the config file as given (for messages); "" if from a string
  std::string dir;   // its folder: relative paths in the config resolve against it

  Kind kind = Kind::single;
  std::int64_t hidden_size = 0;  // C
  std::int64_t num_heads = 1;    // H
  std::optional<std::int64_t> num_kv_heads;  // Hkv as given; none = H, see kv_heads()
  std::int64_t head_size = 0;    // D (resolved default)
  std::int64_t out_size = 0;     // O when out_proj (resolved default); = H*D otherwise
  bool out_proj = true;
  bool causal = false;
  std::optional<std::int64_t> context_size;  // longest S accepted
  bool qkv_bias = true;
  bool out_bias = true;
  double scale = 0.0;  // resolved: 1/sqrt(D) unless given
  bool scale_given = false;
  double dropout = 0.0, attn_drop = 0.0, out_drop = 0.0;  // accepted, unused

  std::optional<Layout> layout;
  std::string weights;  // resolved path ("" = none)
  std::string weights_prefix;
  std::optional<std::uint64_t> init_seed;

  std::string input_path;              // resolved path ("" = none or inline)
  std::optional<Tensor> input_inline;  // (S, C) or (B, S, C)
  std::string padding_mask_path;
  std::optional<Mask> padding_mask_inline;  // (S,) or (B, S)
  std::vector<std::string> labels;

  std::string output_dir;  // resolved ("" = none)
  bool output_attention = true;

  // What the config (or a flag) gave explicitly: resolve_config derives the
  // rest from these, so it gives the same result when called again after
  // flags changed fields.
  bool head_size_given = false;
  bool out_size_given = false;
  bool causal_given = false;
  // A bias the config asks for explicitly (qkv_bias/out_bias, or bias, given
  // true) must be in the weights; otherwise a missing bias is zero
  // (CONTRACT.md "Weight layouts").
  bool qkv_bias_given = false;
  bool out_bias_given = false;

  std::int64_t kv_heads() const { return num_kv_heads.value_or(num_heads); }  // Hkv
  std::int64_t inner_size() const { return num_heads * head_size; }  // H*D
  std::int64_t out_features() const { return out_proj ? out_size : inner_size(); }
};

// Parse config text. `file` names the config in messages and its folder
// resolves relative paths. Every problem: Exit::config with a message that
// names the key (an unknown key suggests the nearest known one) or, for
// syntax errors, the line and column.
Config parse_config(const std::string& text, const std::string& file);

// Read and parse a config file (at most 1 MiB). Missing/unreadable:
// Exit::no_input.
Config load_config(const std::string& path);

// Check sizes against each other and fill defaults; called by parse_config and
// again after command-line flags changed fields. Exit::config on conflict.
void resolve_config(Config& c);

// The config as resolved, for run.json (paths as resolved, defaults filled).
nlohmann::json config_to_json(const Config& c);

// Known keys in table order (for suggestions and docs).
const std::vector<std::string>& config_keys();

// Largest config file accepted (load_config) and largest size or head count.
constexpr std::size_t kMaxConfigBytes = 1u << 20;  // 1 MiB
constexpr std::int64_t kMaxSize = 1 << 24;         // hidden_size, head_size, out_size, H, H*D
constexpr std::int64_t kMaxContext = 1 << 30;      // context_size

}  // namespace attn
