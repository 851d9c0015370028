// --save: the forward pass's intermediates streamed into NAME.npy
// (attn/saved_tensors.h).
//
// Letters: B batch, L queries, T keys (T' with the extra columns), H heads,
// Hkv key/value heads, D head size, Dz a head's width into the output
// projection, O out size; H', L', S' the selection, G' the KV heads it reads.
#include "attn/saved_tensors.h"

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>
#include <optional>

#include "attn/error.h"
#include "attn/escape.h"
#include "attn/linear.h"
#include "outputs/map_file_sink.h"

namespace attn {
namespace {

// Rows of a staging buffer for one write: enough that a write is large, few
// enough that a buffer stays near 16 MB whatever the widths.
std::size_t staging_rows(std::size_t row_floats) {
  constexpr std::size_t kFloats = std::size_t(4) << 20, kMaxRows = 256;
  return std::clamp<std::size_t>(kFloats / std::max<std::size_t>(row_floats, 1), 1, kMaxRows);
}

std::size_t head_width(const Weights& w) { return w.context_width() / std::size_t(w.H); }

}  // namespace

// Scores rows of the selection into scores.npy, (B, H', L', S') as
// attention.npy lays them out (map_file_sink.h).
using ScoresFile = detail::MapFileSink;

const std::vector<std::string>& saved_tensor_names() {
  static const std::vector<std::string> names = {"scores", "q", "k", "v", "z", "result"};
  return names;
}

std::vector<std::string> parse_save_list(const std::string& spec) {
  const std::vector<std::string>& valid = saved_tensor_names();
  std::string listed;
  for (const std::string& n : valid) listed += (listed.empty() ? "" : ", ") + n;
  std::vector<bool> asked(valid.size(), false);
  std::size_t at = 0;
  while (at <= spec.size()) {
    const std::size_t comma = std::min(spec.find(',', at), spec.size());
    const std::string name = spec.substr(at, comma - at);
    const auto it = std::find(valid.begin(), valid.end(), name);
    if (it == valid.end())
      throw Error(Exit::usage, "--save: " +
                                   (name.empty() ? std::string("an empty name")
                                                 : "unknown name \"" + printable(name) + "\"") +
                                   "; expected a comma-separated list of " + listed);
    asked[std::size_t(it - valid.begin())] = true;
    at = comma + 1;
  }
  std::vector<std::string> names;
  for (std::size_t k = 0; k < valid.size(); ++k)
    if (asked[k]) names.push_back(valid[k]);
  return names;
}

bool SavePlan::has(const std::string& name) const {
  return std::find(names.begin(), names.end(), name) != names.end();
}

std::vector<std::size_t> SavePlan::kv_heads(const Weights& w) const {
  const Geometry g = w.geometry();
  std::vector<std::size_t> kv;
  for (std::size_t h : selected_or_all(selection.heads, g.H)) kv.push_back(g.kv_head(h));
  std::sort(kv.begin(), kv.end());
  kv.erase(std::unique(kv.begin(), kv.end()), kv.end());
  return kv;
}

std::vector<std::size_t> SavePlan::real_keys() const {
  std::vector<std::size_t> keys;
  for (std::size_t j : selected_or_all(selection.keys, T_ext))
    if (j < T) keys.push_back(j);
  return keys;
}

std::vector<std::size_t> SavePlan::shape(const Weights& w, const std::string& name) const {
  const Geometry g = w.geometry();
  const std::size_t Hs = selected_or_all(selection.heads, g.H).size();
  const std::size_t Ls = selected_or_all(selection.queries, L).size();
  std::vector<std::size_t> s;
  if (name == "scores") s = {Hs, Ls, selected_or_all(selection.keys, T_ext).size()};
  if (name == "q") s = {Ls, Hs, g.D};
  if (name == "k" || name == "v") s = {real_keys().size(), kv_heads(w).size(), g.D};
  if (name == "z") s = {Ls, Hs, head_width(w)};
  if (name == "result") s = {Ls, Hs, g.O};
  if (batched) s.insert(s.begin(), B);
  return s;
}

std::size_t SavePlan::working_bytes(const Weights& w) const {
  const Geometry g = w.geometry();
  const std::size_t Hs = selected_or_all(selection.heads, g.H).size();
  std::size_t floats = 0;
  for (const std::string& n : names) {
    const std::vector<std::size_t> s = shape(w, n);
    const std::size_t row = s[s.size() - 2] * s.back();  // one query's or key's heads
    floats += staging_rows(row) * row;
  }
  if (has("result")) floats += Hs * head_width(w) * (g.O + staging_rows(Hs * g.O));
  return floats * sizeof(float);
}

std::string save_unsupported(const Weights& w, const std::string& name) {
  if (name == "result" && !w.has_out_proj)
    return "the layer has no output projection (out_proj false): its context is z, the heads "
           "concatenated; save z instead";
  if (w.mla && (name == "q" || name == "k" || name == "v"))
    return "multi-head latent attention (mla) keeps q, k and v in its own per-head layout; "
           "scores, z and result are saved";
  return "";
}

struct SavedTensorsSink::State {
  const Weights& w;
  SavePlan plan;
  OutputDir& out;
  int threads = 1;
  std::vector<std::size_t> heads, queries, kv_heads, keys;  // the selection, resolved
  std::optional<int> q, k, v, z, result;                    // file handles
  std::optional<ScoresFile> scores_file;
  std::optional<SelectSink> scores_select;
  AttentionSink* scores = nullptr;
  // result: each selected head's columns of W_O, (O, Dz) contiguous.
  std::vector<Tensor> w_head;
  std::vector<float> staging, staging_z;

  State(const Weights& w_, SavePlan p, OutputDir& o, int t) : w(w_), plan(std::move(p)), out(o) {
    threads = t;
  }

  // Rows `rows` (indices of `count` rows per batch) of batch b0 + b: each row
  // `heads` vectors of `width` floats, row r at src + r * row_stride, head
  // slot c at col(c) * width. Written to `file` at (b, row', head') in groups.
  template <class Col>
  void write_rows(int file, std::size_t b, const std::vector<std::size_t>& rows,
                  std::size_t n_heads, std::size_t width, const float* src, std::size_t row_stride,
                  Col col) {
    const std::size_t row = n_heads * width, group = staging_rows(row);
    staging.resize(group * row);
    for (std::size_t a = 0; a < rows.size(); a += group) {
      const std::size_t n = std::min(group, rows.size() - a);
      for (std::size_t r = 0; r < n; ++r)
        for (std::size_t c = 0; c < n_heads; ++c)
          std::memcpy(staging.data() + r * row + c * width,
                      src + rows[a + r] * row_stride + col(c) * width, width * sizeof(float));
      out.write_at(file, (b * rows.size() + a) * row, staging.data(), n * row);
    }
  }
};

SavedTensorsSink::SavedTensorsSink(const Weights& w, SavePlan plan, OutputDir& out, int threads)
    : s_(std::make_unique<State>(w, std::move(plan), out, threads)) {
  State& s = *s_;
  const Geometry g = w.geometry();
  for (const std::string& name : s.plan.names)
    if (const std::string why = save_unsupported(w, name); !why.empty())
      throw Error(Exit::usage, "--save " + name + ": " + why);
  s.heads = selected_or_all(s.plan.selection.heads, g.H);
  s.queries = selected_or_all(s.plan.selection.queries, s.plan.L);
  s.kv_heads = s.plan.kv_heads(w);
  s.keys = s.plan.real_keys();
  const auto add = [&](const char* name) -> std::optional<int> {
    if (!s.plan.has(name)) return std::nullopt;
    return out.add_streamed_npy(std::string(name) + ".npy", s.plan.shape(w, name));
  };
  // The files in saved_tensor_names' order (scores first: its writer's thread).
  if (const auto h = add("scores")) {
    s.scores = &s.scores_file.emplace(out, *h, s.heads.size(), s.queries.size(),
                                      selected_or_all(s.plan.selection.keys, s.plan.T_ext).size());
    if (!s.plan.selection.all())
      s.scores =
          &s.scores_select.emplace(g.H, s.plan.L, s.plan.T_ext, s.plan.selection, *s.scores_file);
  }
  s.q = add("q");
  s.k = add("k");
  s.v = add("v");
  s.z = add("z");
  s.result = add("result");
  if (s.result) {
    const std::size_t Dz = head_width(w), K = w.context_width();
    for (std::size_t h : s.heads) {
      Tensor wh({g.O, Dz});
      for (std::size_t o = 0; o < g.O; ++o)
        std::memcpy(wh.ptr() + o * Dz, w.w_out.ptr() + o * K + h * Dz, Dz * sizeof(float));
      s.w_head.push_back(std::move(wh));
    }
  }
}

SavedTensorsSink::~SavedTensorsSink() = default;

bool SavedTensorsSink::wants_keys_values() const { return s_->k || s_->v; }
bool SavedTensorsSink::wants_scores() const { return s_->scores != nullptr; }

void SavedTensorsSink::write_qkv(std::size_t b0, std::size_t nb, std::size_t L, const float* q,
                                 std::size_t ld_q, std::size_t /*T*/, std::size_t T_ext,
                                 const float* k, const float* v, std::size_t ld_kv) {
  State& s = *s_;
  const std::size_t D = std::size_t(s.w.D);
  for (std::size_t b = 0; b < nb; ++b) {
    if (s.q)  // (L', H', D) of batch b0 + b
      s.write_rows(*s.q, b0 + b, s.queries, s.heads.size(), D, q + b * L * ld_q, ld_q,
                   [&](std::size_t c) { return s.heads[c]; });
    const auto kv_col = [&](std::size_t c) { return s.kv_heads[c]; };
    if (s.k && k)
      s.write_rows(*s.k, b0 + b, s.keys, s.kv_heads.size(), D, k + b * T_ext * ld_kv, ld_kv,
                   kv_col);
    if (s.v && v)
      s.write_rows(*s.v, b0 + b, s.keys, s.kv_heads.size(), D, v + b * T_ext * ld_kv, ld_kv,
                   kv_col);
  }
}

void SavedTensorsSink::write_scores(std::size_t b, std::size_t h, std::size_t i0, std::size_t n,
                                    const float* rows) {
  if (s_->scores) s_->scores->write_rows(b, h, i0, n, rows);
}

void SavedTensorsSink::write_z(std::size_t b0, std::size_t nb, std::size_t L, const float* y,
                               std::size_t ld_y) {
  State& s = *s_;
  const std::size_t Dz = head_width(s.w), Hs = s.heads.size();
  const auto head_col = [&](std::size_t c) { return s.heads[c]; };
  for (std::size_t b = 0; b < nb; ++b) {
    const float* yb = y + b * L * ld_y;
    if (s.z) s.write_rows(*s.z, b0 + b, s.queries, Hs, Dz, yb, ld_y, head_col);
    if (!s.result) continue;
    // result[i, h', :] = z[i, h] W_O[:, h]^T   (hook_result, without b_O):
    // the group's z rows gathered (n, H', Dz), then one product per head.
    const std::size_t O = s.w.geometry().O, row = Hs * O, group = staging_rows(row);
    s.staging_z.resize(group * Hs * Dz);
    s.staging.resize(group * row);
    for (std::size_t a = 0; a < s.queries.size(); a += group) {
      const std::size_t n = std::min(group, s.queries.size() - a);
      for (std::size_t r = 0; r < n; ++r)
        for (std::size_t c = 0; c < Hs; ++c)
          std::memcpy(s.staging_z.data() + (r * Hs + c) * Dz,
                      yb + s.queries[a + r] * ld_y + s.heads[c] * Dz, Dz * sizeof(float));
      for (std::size_t c = 0; c < Hs; ++c)
        linear(s.staging_z.data() + c * Dz, Hs * Dz, n, Dz, s.w_head[c], Tensor(),
               s.staging.data() + c * O, row, s.threads);
      s.out.write_at(*s.result, ((b0 + b) * s.queries.size() + a) * row, s.staging.data(), n * row);
    }
  }
}

void SavedTensorsSink::finish() {
  if (s_->scores_file) s_->scores_file->finish();
}

nlohmann::json saved_description(const Weights& w, const SavePlan& plan) {
  const auto picked = [](const std::vector<std::size_t>& v) {
    return v.empty() ? nlohmann::json() : nlohmann::json(v);
  };
  const MapSelection& sel = plan.selection;
  nlohmann::json saved = nlohmann::json::object();
  for (const std::string& name : plan.names) {
    nlohmann::json d = {
        {"file", name + ".npy"}, {"shape", plan.shape(w, name)}, {"dtype", "float32"}};
    if (name == "k" || name == "v") {
      d["kv_heads"] = sel.heads.empty() ? nlohmann::json() : nlohmann::json(plan.kv_heads(w));
      d["keys"] = sel.keys.empty() ? nlohmann::json() : nlohmann::json(plan.real_keys());
    } else {
      d["heads"] = picked(sel.heads);
      d["queries"] = picked(sel.queries);
      if (name == "scores") d["keys"] = picked(sel.keys);
    }
    saved[name] = d;
  }
  return saved;
}

}  // namespace attn
