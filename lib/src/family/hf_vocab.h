// Hugging Face's vocabulary, stated once (private to lib/src): the spellings
// of the sizes a layer needs, which the model families read, and the foreign
// names an attn-run config may carry over, which config.cpp answers with the
// attn-run key that means the same.
#pragma once

#include <string>
#include <vector>

namespace attn {

// One attn-run size and Hugging Face's spellings of it, the usual first
// (hidden_size: hidden_size, n_embd, d_model, ...). A family reads the first
// one its config.json sets.
struct SizeSpelling {
  const char* ours;
  std::vector<const char*> theirs;
};
const std::vector<SizeSpelling>& size_spellings();
// The spellings of one of them ("hidden_size", "num_heads", "num_kv_heads",
// "head_size", "num_layers").
const std::vector<const char*>& spellings_of(const std::string& ours);

// For an unknown key of the object at `path` ("" = top level): the message
// that replaces the spelling suggestion, or "" when the key is no known
// foreign name.
std::string foreign_config_key(const std::string& path, const std::string& key);

}  // namespace attn
