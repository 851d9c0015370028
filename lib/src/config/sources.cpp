// Where keys and values come from (CONTRACT.md "(v2) New keys"):
// cross-attention's kv_input, or torch MHA's key_input and value_input, and
// their widths kdim and vdim, checked against each other and against the
// keys that compare positions of one sequence.
#include "config/internal.h"

namespace attn::config_detail {
std::string cross_key(const Config& c) { return c.kv_input.given() ? "kv_input" : "key_input"; }

void resolve_sources(Config& c) {
  const bool kv = c.kv_input.given(), key = c.key_input.given(), value = c.value_input.given();
  if (kv && (key || value))
    fail(c, "kv_input",
         std::string("kv_input feeds both keys and values; found ") +
             (key ? "key_input" : "value_input") +
             " too (give kv_input, or key_input and value_input)");
  if (key != value)
    fail(c, key ? "key_input" : "value_input",
         "key_input and value_input come together (torch MHA's key and value), found only " +
             std::string(key ? "key_input" : "value_input"));
  if (c.cross()) {
    const std::string k = cross_key(c);
    const AttentionSpec& s = c.spec;
    if (s.causal)
      fail(c, k,
           "cross-attention has no causal mask (the keys are another sequence), found " +
               std::string(c.kind == Kind::causal ? "attention \"causal\" (use \"multi\")"
                                                  : "causal true"));
    if (s.rope)
      fail(c, k,
           "cross-attention takes no rope (the keys have no positions of the queries' sequence), "
           "found rope");
    if (s.alibi)
      fail(c, k,
           "cross-attention takes no alibi (the keys have no positions of the queries' sequence), "
           "found alibi");
    if (s.sliding_window)
      fail(c, k,
           "cross-attention takes no sliding_window (it compares positions of one sequence), found "
           "sliding_window " +
               int_text(*s.sliding_window));
    if (s.attn_temperature)
      fail(c, k,
           "cross-attention takes no attn_temperature (it scales queries by their position in "
           "the keys' sequence), found attn_temperature");
    if (s.attention_chunk)
      fail(c, k,
           "cross-attention takes no attention_chunk (it compares positions of one sequence), "
           "found attention_chunk " +
               int_text(*s.attention_chunk));
  }

  // kdim/vdim: torch MHA's key and value source widths.
  if (c.kdim_given && (c.kdim < 1 || c.kdim > kMaxSize))
    fail(c, "kdim",
         "expected an integer in 1.." + int_text(kMaxSize) + ", found " + int_text(c.kdim));
  if (c.vdim_given && (c.vdim < 1 || c.vdim > kMaxSize))
    fail(c, "vdim",
         "expected an integer in 1.." + int_text(kMaxSize) + ", found " + int_text(c.vdim));
  if (!c.kdim_given) c.kdim = kv && c.vdim_given ? c.vdim : c.hidden_size;
  if (!c.vdim_given) c.vdim = kv && c.kdim_given ? c.kdim : c.hidden_size;
  if (!c.cross()) {
    for (const auto& [k, v] :
         {std::pair<const char*, std::int64_t>{"kdim", c.kdim}, {"vdim", c.vdim}})
      if (v != c.hidden_size)
        fail(c, k,
             std::string(k) + " " + int_text(v) + " differs from hidden_size " +
                 int_text(c.hidden_size) +
                 ", but keys and values come from the input: give key_input and value_input "
                 "(or kv_input) for cross-attention, or drop " +
                 k);
  } else if (kv && c.kdim != c.vdim) {
    fail(c, "vdim",
         "kv_input feeds keys and values from one source, so kdim and vdim are its width: "
         "found kdim " +
             int_text(c.kdim) + " and vdim " + int_text(c.vdim));
  }
}

}  // namespace attn::config_detail
