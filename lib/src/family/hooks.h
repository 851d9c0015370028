// What no rule of a family row can say (private to lib/src/family): one named
// function per family quirk, each citing the modeling code it follows.
#pragma once

#include "family/family_row.h"

namespace attn::family::hooks {

void gpt2_scale(LayerContext& c);  // scale_attn_weights, scale_attn_by_inverse_layer_idx
void bert_absolute_positions(LayerContext& c);  // position_embedding_type must be "absolute"
void phi3_longrope_names(LayerContext& c);      // rope_scaling type "su" / "yarn" mean longrope
void falcon_architecture(LayerContext& c);      // new_decoder_architecture, multi_query, alibi
void mpt_attn_config(LayerContext& c);          // the nested attn_config
void gpt_bigcode_heads(LayerContext& c);        // multi_query's layout, scale_attn_weights
void t5_relative_bias(LayerContext& c);         // T5, mT5: block 0's bucket table for every layer
void umt5_relative_bias(LayerContext& c);       // UMT5: each layer's own bucket table
void modernbert_window_of_layer(LayerContext& c);  // layer_types must agree with the window rule
void llama4_layers(LayerContext& c);            // no_rope_layers: chunks + L2 norm, or temperature
void cohere2_rope_on_sliding(LayerContext& c);  // only sliding layers rotate; D = C / H
void gemma4_layers(LayerContext& c);  // full layers' own sizes and k_eq_v; v_norm everywhere

}  // namespace attn::family::hooks
