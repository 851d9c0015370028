// What a picture shows, built from the run (make_picture), and the choices
// every picture shares: the colour scale, the cell count, the block note.
//
// Letters: B batch, H heads, L queries, T keys (T' with torch MHA's extra
// columns), Nq x Nk cells of a drawn map.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

#include "attn/config.h"
#include "attn/error.h"
#include "attn/gguf_info.h"
#include "attn/layout.h"
#include "attn/run.h"
#include "cli/number_text.h"
#include "cli/options.h"
#include "pictures/map_capture.h"
#include "pictures/plot.h"

namespace app {
namespace {

bool is_gguf(const std::string& p);

std::string shape_text(const std::vector<std::size_t>& shape) {
  std::string s;
  for (std::size_t d : shape) s += (s.empty() ? "" : " x ") + std::to_string(d);
  return s;
}

// A number as a person writes it: 10000, 0.5, 1e-06.
std::string num_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// Where an array key came from: its path, or "inline in the config".
template <class T>
std::string source_text(const attn::ArrayKey<T>& k) {
  return k.path.empty() ? "inline in the config" : k.path;
}

// The settings of CONTRACT.md v2 that change the scores, one fact each
// (only those that are set), for the page's "what was run".
void add_score_facts(const attn::Config& cfg, std::vector<std::pair<std::string, std::string>>& f) {
  if (cfg.kv_input.given())
    f.emplace_back("keys and values", "cross-attention from kv_input " + source_text(cfg.kv_input));
  else if (cfg.key_input.given())
    f.emplace_back("keys and values", "cross-attention from key_input " +
                                          source_text(cfg.key_input) + ", value_input " +
                                          source_text(cfg.value_input));
  if (cfg.add_bias_kv || cfg.spec.add_zero_attn)
    f.emplace_back("extra key columns",
                   std::string(cfg.add_bias_kv ? "bias_kv" : "") +
                       (cfg.add_bias_kv && cfg.spec.add_zero_attn ? ", " : "") +
                       (cfg.spec.add_zero_attn ? "zero_attn" : "") + " (torch MHA)");
  if (cfg.num_kv_heads && *cfg.num_kv_heads != cfg.num_heads)
    f.emplace_back("kv heads", std::to_string(*cfg.num_kv_heads) + " (grouped-query attention)");
  if (cfg.spec.rope) {
    const auto& r = *cfg.spec.rope;
    f.emplace_back("rope", "theta " + num_text(r.theta) + ", rotary_dim " +
                               std::to_string(r.rotary_dim) + ", " +
                               (r.style == attn::RopeStyle::half ? "half" : "interleaved") +
                               (r.scaling ? ", scaling " + r.scaling->type : ""));
  }
  if (cfg.positions.given()) f.emplace_back("positions", source_text(cfg.positions));
  if (cfg.spec.alibi)
    f.emplace_back("alibi", !cfg.alibi_slopes_given
                                ? "max_bias " + num_text(cfg.spec.alibi->max_bias)
                                : std::to_string(cfg.spec.alibi->slopes.size()) + " slopes given");
  if (cfg.spec.sliding_window)
    f.emplace_back("sliding window", std::to_string(*cfg.spec.sliding_window));
  if (cfg.spec.softcap) f.emplace_back("softcap", num_text(*cfg.spec.softcap));
  if (cfg.spec.qk_norm)
    f.emplace_back("qk_norm", std::string(cfg.spec.qk_norm->scope_all ? "all" : "head") + ", eps " +
                                  num_text(cfg.spec.qk_norm->eps) +
                                  (cfg.spec.qk_norm->weight_offset ? ", weight offset 1" : ""));
  if (cfg.spec.sinks) f.emplace_back("sinks", "one logit per head: rows sum to less than 1");
}

// A run of a model folder's layer is titled by the folder and the layer
// ("Qwen3-0.6B, layer 5"), of a GGUF file's by its general.name when it has
// one ("Llama 3.2 1B Instruct, layer 5"); a config by its file.
std::string picture_title(const attn::Config& cfg) {
  if (!cfg.model.empty() && cfg.layer) {
    const std::string name = is_gguf(cfg.model) ? attn::gguf_model_name(cfg.model) : "";
    return (name.empty() ? model_name(cfg.model) : name) + ", layer " + std::to_string(*cfg.layer);
  }
  return cfg.file.empty() ? "attention maps" : cfg.file;
}

// How the layer's weights are stored: "layout proj", or for a GGUF layer its
// tensors' ggml types ("Q4_K, Q6_K"), which say more than the layout.
std::string storage_text(const attn::Config& cfg, const attn::LoadedRun& model) {
  const std::string types = gguf_layer_types(cfg);
  return types.empty() ? "layout " + attn::layout_name(model.layout) : "GGUF " + types;
}

// ", 8 KV heads" when grouped (or multi-query), else "".
std::string kv_heads_text(const attn::Config& cfg) {
  const std::int64_t g = cfg.kv_heads();
  if (g == cfg.num_heads) return "";
  return ", " + std::to_string(g) + (g == 1 ? " KV head" : " KV heads");
}

// How positions enter the scores: ", rope theta 10000", ", alibi", "".
std::string positions_text(const attn::Config& cfg) {
  if (cfg.spec.rope) return ", rope theta " + num_text(cfg.spec.rope->theta);
  if (cfg.spec.alibi) return ", alibi";
  return "";
}

// ", window 4096" for a sliding-window layer, else "".
std::string window_text(const attn::Config& cfg) {
  return cfg.spec.sliding_window ? ", window " + std::to_string(*cfg.spec.sliding_window) : "";
}

bool is_gguf(const std::string& p) {
  std::string tail = p.size() >= 5 ? p.substr(p.size() - 5) : p;
  for (auto& c : tail) c = char(std::tolower(static_cast<unsigned char>(c)));
  return tail == ".gguf";
}

bool is_html(const std::string& p) {
  std::string tail = p.size() >= 5 ? p.substr(p.size() - 5) : p;
  for (auto& c : tail) c = char(std::tolower(static_cast<unsigned char>(c)));
  return tail == ".html";
}

}  // namespace

std::string gguf_layer_types(const attn::Config& cfg) {
  if (!cfg.model_weights || !is_gguf(cfg.model)) return "";
  std::set<std::string> types;
  const std::string& prefix = cfg.weights_prefix;
  for (const std::string& key : cfg.model_weights->keys()) {
    if (key.compare(0, prefix.size(), prefix) != 0) continue;
    if (key.compare(prefix.size(), 10, "attn_norm.") == 0)
      continue;  // the block's, kept for --residual
    const attn::TensorInfo* info = cfg.model_weights->find(key);
    if (info && !info->gguf_type.empty()) types.insert(info->gguf_type);
  }
  std::string s;
  for (const std::string& t : types) s += (s.empty() ? "" : ", ") + t;
  return s;
}

// (plot.h) A snapshot of the cache is .../models--Qwen--Qwen3-0.6B/snapshots/<commit>.
std::string model_name(std::string dir) {
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  const auto snap = dir.rfind("/snapshots/");
  if (snap != std::string::npos && dir.find('/', snap + 11) == std::string::npos) {
    const std::string repo = dir.substr(0, snap);
    const auto cut = repo.rfind("/models--");
    std::string name = cut == std::string::npos ? "" : repo.substr(cut + 9);
    if (!name.empty()) {
      const auto sep = name.find("--");
      if (sep != std::string::npos) name.replace(sep, 2, "/");
      return name;
    }
  }
  const auto slash = dir.find_last_of('/');
  const std::string last = slash == std::string::npos ? dir : dir.substr(slash + 1);
  return last.empty() ? dir : last;
}

std::size_t capture_cells(const Options& opt, std::size_t heads) {
  const std::size_t want = opt.show || std::any_of(opt.plots.begin(), opt.plots.end(), is_html)
                               ? kMaxPageCells
                               : kMaxPlotCells;
  // K maps of N x N float32 within kMaxCaptureBytes (64 heads: N = 905).
  const double k = double(std::max<std::size_t>(1, heads));
  const auto fits = std::size_t(std::sqrt(double(kMaxCaptureBytes) / (4.0 * k)));
  return std::max<std::size_t>(64, std::min(want, fits));
}

namespace {

// "4072-4095", "0-99, 4072-4095", "7": sorted indices as ranges.
std::string ranges_text(const std::vector<std::size_t>& idx) {
  std::string s;
  for (std::size_t a = 0; a < idx.size();) {
    std::size_t b = a;
    while (b + 1 < idx.size() && idx[b + 1] == idx[b] + 1) ++b;
    s += (s.empty() ? "" : ", ") + std::to_string(idx[a]) +
         (b > a ? "-" + std::to_string(idx[b]) : std::string());
    a = b + 1;
  }
  return s;
}

}  // namespace

void crop_picture(MapPicture& pic, std::vector<std::size_t> queries, std::vector<std::size_t> keys,
                  std::size_t all_queries, std::size_t all_keys) {
  pic.query_numbers = std::move(queries);
  pic.key_numbers = std::move(keys);
  if (pic.query_numbers.empty() && pic.key_numbers.empty()) return;
  const bool same = all_queries == all_keys;
  std::string caption =
      "; queries " + (pic.query_numbers.empty() ? "all" : ranges_text(pic.query_numbers));
  if (!same) caption += " of " + with_commas(all_queries);
  caption += ", keys " + (pic.key_numbers.empty() ? "all" : ranges_text(pic.key_numbers)) + " of " +
             with_commas(all_keys);
  if (!pic.key_numbers.empty()) {
    caption += "; each row's weight inside the crop";
    // Exact cells: the mean over the drawn rows and heads of each row's sum.
    const std::size_t K = pic.heads.size(), nq = pic.cells.shape.at(1), nk = pic.cells.shape.at(2);
    if (nq == pic.L && nk == pic.T && K * nq > 0) {
      double total = 0;
      for (float v : pic.cells.data) total += v;
      char buf[48];
      std::snprintf(buf, sizeof buf, ": %.3g on average", total / double(K * nq));
      caption += buf;
    }
  }
  const auto at = pic.extent.empty() ? std::string::npos : pic.subtitle.find(pic.extent);
  if (at != std::string::npos)
    pic.subtitle.replace(at, pic.extent.size(), caption);
  else
    pic.subtitle += caption;
  pic.extent = caption;
}

std::string block_note(std::size_t L, std::size_t T, std::size_t nq, std::size_t nk) {
  if (nq >= L && nk >= T) return "";
  const std::size_t kq = (L + nq - 1) / nq, kk = (T + nk - 1) / nk;
  return "; each cell: max over a block of about " + std::to_string(kq) + " x " +
         std::to_string(kk) + " weights";
}

MapPicture reduced(const MapPicture& pic, std::size_t max_cells) {
  const std::size_t nq = pic.cells.shape.at(1), nk = pic.cells.shape.at(2);
  if (nq <= max_cells && nk <= max_cells) return pic;
  const std::size_t mq = std::min(nq, max_cells), mk = std::min(nk, max_cells);
  MapPicture out = pic;
  out.cells = attn::Tensor({pic.heads.size(), mq, mk});
  if (mq != nq) out.top_keys.clear(), out.top_weights.clear();  // listed per query cell
  for (std::size_t k = 0; k < pic.heads.size(); ++k) {
    const attn::Tensor r = reduce_block_max(pic.cells.ptr() + k * nq * nk, nq, nk, mq, mk);
    std::copy(r.data.begin(), r.data.end(), out.cells.ptr() + k * mq * mk);
  }
  return out;
}

std::string panel_title(const MapPicture& pic, std::size_t k) {
  if (pic.mean_of > 0)
    return "mean of " + std::to_string(pic.mean_of) + (pic.mean_of == 1 ? " head" : " heads");
  return "head " + std::to_string(pic.heads.at(k));
}

std::vector<std::string> key_labels(const attn::Config& cfg,
                                    const std::vector<std::string>& query_labels, std::size_t T,
                                    std::size_t T_map) {
  std::vector<std::string> keys;
  if (!cfg.cross()) {
    keys = query_labels;
  } else if (cfg.kv_labels.size() == T) {
    keys = cfg.kv_labels;
  } else {
    if (!cfg.kv_labels.empty())
      spdlog::warn(
          "kv_labels: the config has {} labels but the key input has {} positions; drawing "
          "positions",
          cfg.kv_labels.size(), T);
    for (std::size_t t = 0; t < T; ++t) keys.push_back(std::to_string(t));
  }
  // torch MHA appends bias_k, then a zero key, after the T keys.
  if (cfg.add_bias_kv) keys.push_back("bias_kv");
  if (cfg.spec.add_zero_attn) keys.push_back("zero_attn");
  if (keys.size() != T_map)
    throw attn::Error(attn::Exit::software, "pictures: " + std::to_string(keys.size()) +
                                                " key labels (T = " + std::to_string(T) +
                                                " and the extra columns) for maps with " +
                                                std::to_string(T_map) + " keys");
  return keys;
}

MapPicture make_picture(const Options& opt, const attn::Config& cfg, const attn::LoadedRun& model,
                        const attn::RunInputs& in, const MapCapture& cap,
                        std::vector<std::string> labels, std::vector<std::string> key_labels) {
  const std::size_t B = in.x.shape[0], C = in.x.shape[2];
  const std::size_t L = cap.queries(), T = cap.keys();
  const std::size_t H = std::size_t(cfg.num_heads);
  const std::size_t nq = cap.query_cells(), nk = cap.key_cells();
  const bool square = !cfg.cross() && L == T;  // self-attention without extra key columns
  MapPicture pic;
  pic.title = picture_title(cfg);
  pic.subtitle = attn::kind_name(cfg.kind) +
                 (cfg.spec.causal && cfg.kind != attn::Kind::causal ? " (causal mask)" : "") +
                 ", " + std::to_string(H) + (H == 1 ? " head" : " heads") + kv_heads_text(cfg) +
                 positions_text(cfg) + window_text(cfg) + ", " + storage_text(cfg, model);
  pic.extent = square
                   ? "; S = " + std::to_string(L)
                   : "; L = " + std::to_string(L) + " queries x T = " + std::to_string(T) + " keys";
  pic.subtitle += pic.extent;
  if (cfg.spec.sinks) pic.subtitle += "; sinks: rows sum to less than 1";
  if (cfg.output_average_heads) {
    pic.mean_of = H;
    pic.subtitle += "; drawn: the mean of the " + std::to_string(H) + " heads (--average-heads)";
  }
  if (B > 1)
    pic.subtitle +=
        "; batch index " + std::to_string(opt.batch_index) + " (B = " + std::to_string(B) + ")";
  pic.labels = std::move(labels);
  pic.key_labels = std::move(key_labels);
  pic.L = L;
  pic.T = T;
  pic.heads = cap.heads();
  pic.cells = cap.cells();
  pic.top_keys = cap.top_keys();
  pic.top_weights = cap.top_weights();
  pic.sinks = cfg.spec.sinks;
  pic.scale = scale_kind(opt.color_scale, T);

  const std::string seq = cfg.cross() ? "L" : "S";
  pic.query = opt.show_query.value_or(L - 1);
  if (pic.query >= L)
    throw attn::Error(attn::Exit::usage, "--show-query: " + std::to_string(pic.query) +
                                             " is past the sequence; the input has " + seq + " = " +
                                             std::to_string(L) + " (0.." + std::to_string(L - 1) +
                                             ")");
  if (opt.show && cap.exact_query() == pic.query) pic.query_row = cap.exact_row();
  auto& f = pic.facts;
  f.emplace_back("config", cfg.file.empty() ? "(inline)" : cfg.file);
  f.emplace_back("attention", attn::kind_name(cfg.kind) + ", H = " + std::to_string(H) + ", D = " +
                                  std::to_string(cfg.head_size) + ", C = " + std::to_string(C));
  f.emplace_back("weights", model.weights_source + " (layout " + attn::layout_name(model.layout) +
                                (model.layout_detected ? ", detected)" : ")"));
  f.emplace_back("layer", cfg.weights_prefix.empty() ? "whole file (no weights_prefix)"
                                                     : "weights_prefix " + cfg.weights_prefix);
  add_score_facts(cfg, f);
  std::string masks = cfg.spec.causal ? "causal" : "";
  const auto add_mask = [&masks](const std::string& m) {
    masks += (masks.empty() ? "" : "; ") + m;
  };
  // A Hugging Face attention_mask arrives here inverted, as the padding mask.
  const std::string padding_name = cfg.attention_mask.given()
                                       ? "attention_mask " + source_text(cfg.attention_mask) + ","
                                       : "padding mask";
  if (in.padding) {
    const std::size_t P = in.padding->shape.at(1);  // the keys' length
    std::size_t padded = 0;
    for (std::size_t t = 0; t < P; ++t) padded += in.padding->data[opt.batch_index * P + t] != 0;
    add_mask(padding_name + " " + shape_text(in.padding->shape) + " (" + std::to_string(padded) +
             " of " + std::to_string(P) + " keys padded here)");
  } else if (cfg.attention_mask.given()) {
    add_mask(padding_name.substr(0, padding_name.size() - 1));
  }
  if (cfg.attn_mask.given()) add_mask("attn_mask " + source_text(cfg.attn_mask));
  f.emplace_back("masks", masks.empty() ? "none" : masks);
  f.emplace_back("input",
                 in.input_source + ", " + shape_text(in.x.shape) + " (B x " + seq + " x C)");
  f.emplace_back("maps drawn", "batch entry " + std::to_string(opt.batch_index) + ", " +
                                   (pic.mean_of ? "the mean of " + std::to_string(H) + " heads"
                                                : "heads " + std::to_string(pic.heads.size()) +
                                                      " of " + std::to_string(H)) +
                                   ", " + std::to_string(nq) + " x " + std::to_string(nk) +
                                   " cells of " + std::to_string(L) + " x " + std::to_string(T));
  return pic;
}

}  // namespace app
