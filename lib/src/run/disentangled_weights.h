// DeBERTa's disentangled attention tensors from the weights file (private to
// lib/src/run): the model-level relative embeddings and the layer's
// pos_key_proj / pos_query_proj.
#pragma once

#include "attn/config.h"
#include "attn/state_dict.h"
#include "attn/weights.h"

namespace attn {

// With cfg.spec.disentangled: w.rel_embeddings (2 span, C), the first 2 span
// rows of `all`'s table key (disentangled.table, full; default weights_prefix
// + "rel_embeddings.weight") through the LayerNorm of norm_weight / norm_bias
// when given (DebertaV2Encoder.get_rel_embedding, in float32); without
// share_att_key, pos_key_proj (c2p) and pos_query_proj (p2c) weight and bias
// taken out of `layer` (which the layouts do not know). Without the spec, a
// layer holding pos_key_proj or pos_query_proj is an error saying to set it.
// Missing keys and wrong shapes: Exit::data naming the key.
void load_disentangled(const StateDict& all, StateDict& layer, const Config& cfg,
                       bool allow_nonfinite, Weights& w);

}  // namespace attn
