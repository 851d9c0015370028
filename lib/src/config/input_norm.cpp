// input_norm: the input is the residual stream entering the block, and the
// block's own pre-attention norm comes first (scores.h InputNormSpec). Read by
// the key table (config/keys.cpp, object_keys.cpp); its checks are here.
#include "config/internal.h"

namespace attn::config_detail {

void resolve_input_norm(Config& c) {
  if (!c.spec.input_norm) return;
  const InputNormSpec& n = *c.spec.input_norm;
  if (n.kind == InputNormKind::none) return;
  const std::string what = n.kind == InputNormKind::rms ? "RMSNorm " : "LayerNorm ";
  if (n.weight.empty())
    fail(c, "input_norm",
         what +
             "needs its weight: \"weight\": the key of the norm's weight in the weights file "
             "(e.g. \"model.layers.0.input_layernorm.weight\")");
  if (n.kind == InputNormKind::rms && !n.bias.empty())
    fail(c, "input_norm",
         "an RMSNorm has no bias, found \"bias\": \"" + n.bias +
             "\" (kind \"layer\" is a LayerNorm with a bias)");
  if (c.cross())
    fail(c, "input_norm",
         what + "of the input applies to self-attention (keys from the same input); found " +
             std::string(c.kv_input.given() ? "kv_input" : "key_input") + " (cross-attention)");
  if (c.init_seed)
    fail(c, "input_norm",
         what +
             "reads its weight from \"weights\"; \"init\" follows the tutorial modules, which "
             "have none");
  if (c.spec.residual_norm)
    fail(c, "input_norm",
         what +
             "before the attention and residual_norm after it: a block has one or the other "
             "(residual_norm adds the input, which input_norm changes)");
}

}  // namespace attn::config_detail
