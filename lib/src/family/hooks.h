// What no rule of a family row can say (private to lib/src/family): one named
// function per family's own logic, each citing the transformers code it follows
// (models/<family>/modeling_<family>.py); what families share is a rule of the
// row (family_row.h).
#pragma once

#include "family/family_row.h"

namespace attn::family::hooks {

void phi3_longrope_names(LayerContext& c);      // rope_scaling type "su" / "yarn" mean longrope
void falcon_architecture(LayerContext& c);      // new_decoder_architecture, multi_query, alibi
void mpt_attn_config(LayerContext& c);          // the nested attn_config
void gpt_bigcode_heads(LayerContext& c);        // multi_query's layout and KV heads
void llama4_layers(LayerContext& c);            // no_rope_layers: chunks + L2 norm, or temperature
void cohere2_rope_on_sliding(LayerContext& c);  // only sliding layers rotate; D = C / H
void hunyuan_alpha_rope(LayerContext& c);       // rope_scaling's alpha: the NTK-alpha base
void dbrx_attn_config(LayerContext& c);         // the nested attn_config
void gemma4_layers(LayerContext& c);            // full layers' own sizes and k_eq_v

}  // namespace attn::family::hooks
