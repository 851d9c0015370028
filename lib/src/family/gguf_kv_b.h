// DeepSeek's kv_b_proj from a GGUF file's attn_k_b / attn_v_b (gguf_kv_b.cpp,
// private to lib/src/family): llama.cpp's converter splits it for MLA's
// absorbed form; attn-run's latent attention reads it whole.
#pragma once

#include <memory>
#include <string>

#include "containers/stored.h"

namespace attn::family {

// The kv_b_proj (H*(Dn + Dv), Rkv) of layer prefix `blk` ("blk.N.") of the
// file at `path`, from its attn_k_b (H, Rkv, Dn) and attn_v_b (H, Dv, Rkv):
// float32, assembled when the layer is read. Exit::data when the shapes do
// not fit.
std::shared_ptr<const detail::Stored> kv_b_of(const std::string& path, const std::string& blk,
                                              const std::shared_ptr<const detail::Stored>& k,
                                              const std::shared_ptr<const detail::Stored>& v);

}  // namespace attn::family
