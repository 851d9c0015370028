// residual_norm: what the context is. attn-run's context is
// the output projection's; a post-norm family (BERT and its copies) follows it
// with LayerNorm(o_proj(attention) + input) inside the module users compare
// with (BertAttention). The key asks for that norm: true (its defaults) or
// {"eps": number > 0, "prefix": string}, the norm's weight and bias being
// `prefix` + "weight" / "bias" in the weights file. Read by the key table
// (config/keys.cpp); its default prefix and checks are here.
#include "config/internal.h"

namespace attn {
namespace config_detail {

void resolve_residual_norm(Config& c) {
  if (!c.spec.residual_norm) return;
  ResidualNormSpec& r = *c.spec.residual_norm;
  if (!c.residual_norm_prefix_given)
    r.prefix = c.weights_prefix + "output.LayerNorm.";  // BertSelfOutput's
  const std::string what = "LayerNorm(o_proj(attention) + input) ";
  if (c.cross())
    fail(c, "residual_norm",
         what + "adds the queries' input, as self-attention does; found " +
             (c.kv_input.given() ? "kv_input" : "key_input") + " (cross-attention)");
  if (!c.out_proj)
    fail(c, "residual_norm", what + "needs the output projection, found out_proj false");
  if (c.out_size != c.hidden_size)
    fail(c, "residual_norm",
         what + "adds the input (hidden_size " + std::to_string(c.hidden_size) +
             ") to the output projection's " + std::to_string(c.out_size) +
             " features (out_size): they must match");
  if (c.init_seed)
    fail(c, "residual_norm",
         what +
             "reads its weight and bias from \"weights\"; \"init\" follows the tutorial "
             "modules, which have none");
}

}  // namespace config_detail

std::string output_description(const Config& c) {
  if (!c.out_proj) return "the heads' outputs concatenated (no output projection)";
  const std::string& module = c.residual_norm_module;
  if (c.spec.residual_norm)
    return "LayerNorm(output projection + input): the residual add and LayerNorm" +
           (module.empty() ? std::string() : " of " + module) + " (residual_norm)";
  std::string s = "the output projection, without residual add or LayerNorm";
  if (!module.empty())
    s += std::string("; ") + module + (c.residual_norm_in_attention ? "'s output" : "") +
         " adds the input and a LayerNorm (--with-residual-norm)";
  return s;
}

}  // namespace attn
