// The fit rules between a model's geometry and a weight layout (CONTRACT.md
// "Weight layouts"): one place for what config checks, loading, init and
// export used to spell each on their own.
//
// Letters: C hidden (in), H heads, Hkv key/value heads, D head size, O out features.
#include "attn/layout.h"

namespace attn {

namespace {

std::string dim_text(std::size_t v) { return std::to_string(v); }

// Layouts whose tensors hold one K and one V per query head.
bool needs_mha(Layout l) {
  return l == Layout::per_head || l == Layout::torch_mha || l == Layout::gpt2 ||
         l == Layout::bert || l == Layout::neox || l == Layout::codegen;
}

}  // namespace

std::string layout_fit_problem(const Geometry& g, Layout layout) {
  const std::string name = layout_name(layout);
  if (!layout_has_out_proj(layout) && g.out_proj)
    return "layout " + name + " has no output projection";
  if (layout_has_out_proj(layout) && layout != Layout::fused && layout != Layout::separate &&
      !g.out_proj)
    return "layout " + name + " always has an output projection";
  if (needs_mha(layout) && g.Hkv != g.H)
    return "layout " + name + " holds one key and value head per query head (num_kv_heads = " +
           "num_heads = " + dim_text(g.H) + "), found num_kv_heads " + dim_text(g.Hkv);
  if ((g.Ck && g.Ck != g.C) || (g.Cv && g.Cv != g.C)) {
    if (layout != Layout::torch_mha)
      return "layout " + name + " projects keys and values from hidden_size " + dim_text(g.C) +
             " features; kdim/vdim other than hidden_size (found " + dim_text(g.Ck) + ", " +
             dim_text(g.Cv) +
             ") need layout torch_mha (q_proj_weight, k_proj_weight, v_proj_weight)";
  }
  // CodeGen's qkv_proj: four groups (mp_num = 4, its TPU-v4 shards), each a quarter of the heads
  if (layout == Layout::codegen && g.H % 4 != 0)
    return "layout codegen splits the heads into 4 groups (CodeGen's mp_num), found num_heads " +
           dim_text(g.H);
  if (layout == Layout::torch_mha || layout == Layout::gpt2) {
    const std::string what =
        layout == Layout::torch_mha ? "torch.nn.MultiheadAttention's embed_dim" : "GPT-2's n_embd";
    if (g.C != g.q_rows() || g.O != g.C)
      return "layout " + name + " needs hidden_size == num_heads*head_size == out_size (" + what +
             "), found " + dim_text(g.C) + ", " + dim_text(g.q_rows()) + ", " + dim_text(g.O);
  }
  return "";
}

std::string layout_init_problem(const Geometry& g, Layout layout) {
  switch (layout) {
    case Layout::gpt2:
      return "layout gpt2 has no tutorial constructor to reproduce (Hugging Face initialises "
             "GPT-2 with normal(0, 0.02)); choose fused, separate, per_head, kqv or torch_mha, "
             "or give weights";
    case Layout::proj:
    case Layout::bert:
    case Layout::neox:
    case Layout::falcon:
    case Layout::codegen:
      return "layout " + layout_name(layout) +
             " names a Hugging Face model family's weights, not a tutorial module: init cannot "
             "reproduce it; give weights, or choose fused, separate, per_head, kqv or torch_mha";
    default:
      break;
  }
  if (g.Hkv != g.H)
    return "the tutorial modules have no grouped-query attention: init needs num_kv_heads = "
           "num_heads (" +
           dim_text(g.H) + "), found num_kv_heads " + dim_text(g.Hkv);
  return "";
}

}  // namespace attn
