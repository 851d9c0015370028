// The config key "rope" (CONTRACT.md "Positions"): rope.scaling's type
// (Hugging Face's rope_scaling: rope_type or its older name type), and the
// checks of rope against the head size once the sizes are resolved, where
// rotary_dim gets its default. The fields are read by the key table
// (config/keys.cpp).
#include <algorithm>

#include "attn/error.h"
#include "attn/positions.h"
#include "config/internal.h"
#include "config/json.h"

namespace attn::config_detail {
namespace {

namespace cj = config_json;

const std::vector<std::string>& scaling_types() {
  static const std::vector<std::string> t = {"linear", "dynamic",  "yarn",
                                             "llama3", "longrope", "proportional"};
  return t;
}

}  // namespace

std::string read_scaling_type(const json& o, const std::string& at) {
  std::string type;
  if (o.contains("rope_type")) type = cj::get_string(o.at("rope_type"), at + ".rope_type");
  if (o.contains("type")) {
    const std::string t = cj::get_string(o.at("type"), at + ".type");
    if (!type.empty() && t != type)
      bad(at, "rope_type " + cj::quote(type) + " and type " + cj::quote(t) +
                  " disagree (give one; transformers reads rope_type)");
    type = t;
  }
  std::string list;
  for (const auto& t : scaling_types()) list += (list.empty() ? "" : ", ") + t;
  // "default" (or "type": "default") means no scaling, as in transformers.
  if (type.empty()) bad(at, "expected \"rope_type\" (" + list + "), found none");
  if (type == "default") return "";
  if (std::find(scaling_types().begin(), scaling_types().end(), type) == scaling_types().end())
    bad(at + ".rope_type",
        "expected one of " + list + " (or \"default\"), found " + cj::quote(type));
  return type;
}

void check_scaling(const RopeScaling& s, const std::string& at) {
  // llama3 blends between the two wavelengths. Equal factors leave no band
  // to blend (Llama 4 ships high = low = 1; transformers accepts them).
  if (s.type == "llama3" && s.low_freq_factor && s.high_freq_factor &&
      *s.high_freq_factor < *s.low_freq_factor)
    bad(at + ".high_freq_factor", "expected a number >= low_freq_factor " +
                                      json(*s.low_freq_factor).dump() + ", found " +
                                      json(*s.high_freq_factor).dump());
}

void resolve_rope(Config& c) {
  RopeSpec& r = *c.spec.rope;
  // mla: rope rotates the qk_rope_head_dim part only (resolve_mla checks a given rotary_dim).
  const std::int64_t D = c.mla ? c.mla->qk_rope_head_dim : c.head_size;
  if (!c.rotary_dim_given) {
    if (D % 2 != 0)
      fail(c, "rope.rotary_dim",
           "rope rotates pairs of dimensions; the default rotary_dim is "
           "head_size " +
               int_text(D) + ", which is odd: give an even rope.rotary_dim");
    r.rotary_dim = D;
  } else if (r.rotary_dim < 2 || r.rotary_dim > D || r.rotary_dim % 2 != 0) {
    fail(c, "rope.rotary_dim",
         "expected an even integer in 2..head_size " + int_text(D) + ", found " +
             int_text(r.rotary_dim));
  }
  if (!r.mrope_section.empty()) {
    const std::int64_t sum = r.mrope_section[0] + r.mrope_section[1] + r.mrope_section[2];
    if (sum != r.rotary_dim / 2)
      fail(c, "rope.mrope_section",
           "expected [t, h, w] summing to rotary_dim / 2 = " + int_text(r.rotary_dim / 2) +
               ", found " + json(r.mrope_section).dump() + " (sum " + int_text(sum) + ")");
    if (c.mla) fail(c, "rope.mrope_section", "mrope's position rows are not with mla");
  } else if (r.mrope_interleaved) {
    fail(c, "rope.mrope_interleaved", "lays out mrope's sections: give rope.mrope_section too");
  }
  if (r.scaling && !r.scaling->freq_factors.empty() &&
      r.scaling->freq_factors.size() != std::size_t(r.rotary_dim / 2))
    fail(c, "rope.scaling.freq_factors",
         "needs rotary_dim / 2 = " + std::to_string(r.rotary_dim / 2) + " numbers, found " +
             std::to_string(r.scaling->freq_factors.size()));
  if (r.scaling && r.scaling->type == "longrope") {
    const std::size_t half = static_cast<std::size_t>(r.rotary_dim / 2);
    for (const auto& [key, list] : {std::pair<const char*, const std::vector<double>*>{
                                        "short_factor", &r.scaling->short_factor},
                                    {"long_factor", &r.scaling->long_factor}})
      if (list->size() != half)
        fail(c, std::string("rope.scaling.") + key,
             "rope_type \"longrope\" needs rotary_dim / 2 = " + std::to_string(half) +
                 " numbers, found " + std::to_string(list->size()));
  }
  // The frequencies' own rules (needed fields, as transformers' rope utils
  // read them), checked once here rather than at the run.
  try {
    (void)rope_frequencies(r, 1);
  } catch (const Error& e) {
    if (e.code() != Exit::config) throw;
    throw Error(Exit::config, display_name(c) + ": " + e.what());
  }
}

}  // namespace attn::config_detail
