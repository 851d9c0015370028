// (v3) residual_norm: what the context is (issue 30). attn-run's context is
// the output projection's; a post-norm family (BERT and its copies) follows it
// with LayerNorm(o_proj(attention) + input) inside the module users compare
// with (BertAttention). The key asks for that norm: true (its defaults) or
// {"eps": number > 0, "prefix": string}, the norm's weight and bias being
// `prefix` + "weight" / "bias" in the weights file.
#include <cmath>

#include "config/internal.h"
#include "config/json.h"

namespace attn {
namespace config_detail {

namespace cj = config_json;

const std::vector<std::string>& residual_norm_keys() {
  static const std::vector<std::string> k = {"eps", "prefix"};
  return k;
}

void read_residual_norm(Config& c, const json& v, const std::string& name) {
  c.residual_norm.reset();
  if (v.is_null()) return;
  if (v.is_boolean()) {
    if (v.get<bool>()) c.residual_norm = ResidualNormSpec{};
    return;
  }
  if (!v.is_object())
    bad(name,
        "expected true (LayerNorm(o_proj(attention) + input), eps 1e-12, weights under "
        "weights_prefix + \"output.LayerNorm.\"), an object {\"eps\", \"prefix\"}, false or null, "
        "found " +
            cj::describe(v));
  ResidualNormSpec r;
  if (v.contains("eps")) {
    r.eps = cj::get_number(v.at("eps"), name + ".eps");
    // Added in float32 to the variance: an eps that rounds to 0 is none.
    if (!(static_cast<float>(r.eps) > 0.0f) || !std::isfinite(static_cast<float>(r.eps)))
      bad(name + ".eps", "expected a number > 0 that float32 holds, found " + v.at("eps").dump());
  }
  if (v.contains("prefix")) {
    r.prefix = cj::get_string(v.at("prefix"), name + ".prefix");
    r.prefix_given = true;
  }
  c.residual_norm = r;
}

void resolve_residual_norm(Config& c) {
  if (!c.residual_norm) return;
  ResidualNormSpec& r = *c.residual_norm;
  if (!r.prefix_given) r.prefix = c.weights_prefix + "output.LayerNorm.";  // BertSelfOutput's
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

void residual_norm_to_json(const Config& c, json& j) {
  j["residual_norm"] =
      c.residual_norm ? json{{"eps", c.residual_norm->eps}, {"prefix", c.residual_norm->prefix}}
                      : json(nullptr);
}

}  // namespace config_detail

std::string output_description(const Config& c) {
  if (!c.out_proj) return "the heads' outputs concatenated (no output projection)";
  const std::string& module = c.residual_norm_module;
  if (c.residual_norm)
    return "LayerNorm(output projection + input): the residual add and LayerNorm" +
           (module.empty() ? std::string() : " of " + module) + " (residual_norm)";
  std::string s = "the output projection, without residual add or LayerNorm";
  if (!module.empty())
    s += std::string("; ") + module + (c.residual_norm_in_attention ? "'s output" : "") +
         " adds the input and a LayerNorm (--with-residual-norm)";
  return s;
}

}  // namespace attn
