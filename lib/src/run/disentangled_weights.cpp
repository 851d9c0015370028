// DeBERTa's disentangled attention tensors (run/disentangled_weights.h).
//
// Letters: C hidden, H heads, D head size, R2 = 2 span (the relative
// embeddings' rows the attention reads).
#include "run/disentangled_weights.h"

#include <cmath>
#include <string>
#include <vector>

#include "attn/error.h"
#include "attn/escape.h"
#include "forward/stages.h"

namespace attn {
namespace {

const char* const kPosProjections[] = {"pos_key_proj.weight", "pos_key_proj.bias",
                                       "pos_query_proj.weight", "pos_query_proj.bias"};

// The tensor at `key` of `from` with shape `shape`, or Exit::data naming it
// and what it is for.
Tensor read_shaped(const StateDict& from, const std::string& key, const std::string& shown,
                   const std::vector<std::size_t>& shape, const std::string& what,
                   const Config& cfg, bool allow_nonfinite) {
  const TensorInfo* info = from.find(key);
  if (!info)
    throw Error(Exit::data, cfg.weights + ": missing key \"" + printable(shown) + "\" (" + what +
                                ", shape " + shape_str(shape) + ")");
  if (info->shape != shape)
    throw Error(Exit::data, cfg.weights + ": key \"" + printable(shown) + "\": expected shape " +
                                shape_str(shape) + " (" + what + "), found " +
                                shape_str(info->shape));
  return from.read_f32(key, allow_nonfinite);
}

// nn.LayerNorm over each row of x (rows, C) in place, as the q/k norms run it.
void layer_norm_rows(Tensor& x, const Tensor& w, const Tensor& b, float eps) {
  const std::size_t rows = x.shape[0], C = x.shape[1];
  const float* bias = b.data.empty() ? nullptr : b.ptr();
  for (std::size_t r = 0; r < rows; ++r)
    detail::norm_vectors(x.ptr() + r * C, 1, C, w.ptr(), bias, 0, QkNormKind::layer, eps, 0.0f);
}

}  // namespace

void load_disentangled(const StateDict& all, StateDict& layer, const Config& cfg,
                       bool allow_nonfinite, Weights& w) {
  if (!cfg.spec.disentangled) {
    for (const char* k : kPosProjections)
      if (layer.contains(k))
        throw Error(Exit::data, cfg.weights + ": key \"" + printable(cfg.weights_prefix + k) +
                                    "\" (DeBERTa's relative position projection) found but "
                                    "config \"disentangled\" is not set; set \"disentangled\": "
                                    "{...} to use it");
    return;
  }
  const DisentangledSpec& d = *cfg.spec.disentangled;
  const std::size_t C = std::size_t(cfg.hidden_size), R2 = 2 * std::size_t(d.span());
  const std::size_t HD = std::size_t(cfg.num_heads * cfg.head_size);

  // The table: its first 2 span rows (rel_embeddings[0 : att_span * 2, :]).
  const std::string table =
      d.table.empty() ? cfg.weights_prefix + "rel_embeddings.weight" : d.table;
  const TensorInfo* info = all.find(table);
  if (!info)
    throw Error(Exit::data, cfg.weights + ": missing key \"" + printable(table) +
                                "\" (disentangled.table: the relative embeddings, at least " +
                                std::to_string(R2) + " rows of " + std::to_string(C) + ")");
  if (info->shape.size() != 2 || info->shape[1] != C || info->shape[0] < R2)
    throw Error(Exit::data, cfg.weights + ": key \"" + printable(table) +
                                "\": expected shape (rows >= " + std::to_string(R2) +
                                " (2 x position_buckets, or 2 x max_relative_positions without "
                                "buckets), " +
                                std::to_string(C) + "), found " + shape_str(info->shape));
  Tensor t = all.read_f32(table, allow_nonfinite);
  t.shape[0] = R2;
  t.data.resize(R2 * C);
  if (!d.norm_weight.empty()) {
    const Tensor nw =
        read_shaped(all, d.norm_weight, d.norm_weight, {C},
                    "disentangled.norm_weight: the table's LayerNorm", cfg, allow_nonfinite);
    const Tensor nb =
        d.norm_bias.empty()
            ? Tensor{}
            : read_shaped(all, d.norm_bias, d.norm_bias, {C},
                          "disentangled.norm_bias: the table's LayerNorm", cfg, allow_nonfinite);
    layer_norm_rows(t, nw, nb, static_cast<float>(d.norm_eps));
  }
  w.rel_embeddings = std::move(t);
  // A table (or norm) under the layer's own prefix is no key of its layout.
  for (const std::string* key : {&table, &d.norm_weight, &d.norm_bias})
    if (!key->empty() && key->compare(0, cfg.weights_prefix.size(), cfg.weights_prefix) == 0)
      layer.erase(key->substr(cfg.weights_prefix.size()));

  if (d.share_att_key) {  // the layer's own k and q rows serve; no separate projections
    for (const char* k : kPosProjections) layer.erase(k);
    return;
  }
  const auto projection = [&](const char* name, Tensor& weight, Tensor& bias) {
    const std::string wk = std::string(name) + ".weight", bk = std::string(name) + ".bias";
    weight = read_shaped(layer, wk, cfg.weights_prefix + wk, {HD, C}, name, cfg, allow_nonfinite);
    if (layer.contains(bk))
      bias = read_shaped(layer, bk, cfg.weights_prefix + bk, {HD}, name, cfg, allow_nonfinite);
    layer.erase(wk);
    layer.erase(bk);
  };
  if (d.c2p) projection("pos_key_proj", w.pos_key_w, w.pos_key_b);
  if (d.p2c) projection("pos_query_proj", w.pos_query_w, w.pos_query_b);
  for (const char* k : kPosProjections) layer.erase(k);  // a term left out: its projection unused
}

}  // namespace attn
