// The config's "path or nested array" keys (CONTRACT.md "Config" and "(v2) New
// keys"): a path resolves against the config's folder, an array is read inline
// (nested_array.h) with its rank checked here, and the inline shapes are
// checked against each other before anything runs.
//
// Letters: B batch, S (= L) query positions, T key positions, C hidden,
// Ck/Cv key/value source widths.
#include <functional>
#include <optional>

#include "attn/error.h"
#include "attn/files.h"
#include "attn/nested_array.h"
#include "config/internal.h"
#include "config/json.h"

namespace attn::config_detail {
namespace {

namespace cj = config_json;

void expect_path_or_array(const json& v, const std::string& name) {
  if (!v.is_array()) bad(name, "expected a path or a nested array, found " + cj::describe(v));
}

// Where a leaf of a nested array sits ("[1][0]"), for messages.
std::string index_path(const std::vector<std::size_t>& at) {
  std::string s;
  for (std::size_t i : at) s += "[" + std::to_string(i) + "]";
  return s;
}

// The first leaf (non-array) of `v` whose kind (boolean or number) differs
// from the first leaf's: attn_mask is all booleans or all numbers.
void check_one_kind(const json& v, const std::string& name) {
  const json* first = nullptr;
  std::vector<std::size_t> first_at, at;
  std::function<void(const json&)> walk = [&](const json& j) {
    if (j.is_array()) {
      for (std::size_t i = 0; i < j.size(); ++i) {
        at.push_back(i);
        walk(j[i]);
        at.pop_back();
      }
      return;
    }
    if (!j.is_boolean() && !j.is_number()) return;  // the converters name it
    if (!first) {
      first = &j;
      first_at = at;
      return;
    }
    if (j.is_boolean() != first->is_boolean())
      bad(name + index_path(at),
          std::string("expected ") + (first->is_boolean() ? "true or false" : "a number") +
              " like the first element " + index_path(first_at) + ", found " + cj::describe(j) +
              " (a mask is all booleans, true = not allowed, or all numbers, added to the scores)");
  };
  walk(v);
}

// Position ids: a rectangular nested array of depth 1, 2 or 3 (mrope's
// (3, B, S) rows, checked against rope at check_inline) of integers >= 0.
PositionIds positions_from_json(const json& v, const std::string& name) {
  PositionIds p;
  const json* level = &v;
  while (level->is_array()) {
    if (level->empty()) bad(name, "empty array (every dimension must be >= 1)");
    if (p.shape.size() == 3)
      bad(name,
          "expected a nested array of shape (S,), (B, S) or mrope's (3, S) or (3, B, S), found a "
          "deeper one");
    p.shape.push_back(level->size());
    level = &(*level)[0];
  }
  if (p.shape.size() == 3 && p.shape[0] != 3)
    bad(name,
        "expected a nested array of shape (S,) or (B, S), or mrope's rows (3, S) or (3, B, S), "
        "found shape " +
            shape_str(p.shape));
  p.data.reserve(Tensor::count(p.shape));
  // Depth first, row by row: every array as long as the shape says.
  const auto walk = [&](const auto& self, const json& j, std::size_t depth,
                        const std::string& at) -> void {
    if (depth == p.shape.size()) {
      const std::int64_t i = cj::get_int(j, at);
      if (i < 0) bad(at, "expected a position >= 0, found " + std::to_string(i));
      p.data.push_back(i);
      return;
    }
    if (!j.is_array() || j.size() != p.shape[depth])
      bad(at, "ragged array: expected " + std::to_string(p.shape[depth]) + " elements, found " +
                  (j.is_array() ? std::to_string(j.size()) : cj::describe(j)));
    for (std::size_t k = 0; k < j.size(); ++k)
      self(self, j[k], depth + 1, at + "[" + std::to_string(k) + "]");
  };
  walk(walk, v, 0, name);
  return p;
}

// Batch and sequence of an inline (S, X) or (B, S, X) array ((S, B, X) when
// batch_first is false, torch MHA's default). batch 0 = unbatched.
struct Rows {
  std::size_t batch = 0, seq = 0;
};

Rows rows_of(const std::vector<std::size_t>& shape, bool batch_first) {
  if (shape.size() == 2) return {0, shape[0]};
  return batch_first ? Rows{shape[0], shape[1]} : Rows{shape[1], shape[0]};
}

// The layout name of an inline source in messages.
std::string source_layout(const std::string& seq, bool batched, bool batch_first,
                          const std::string& width) {
  if (!batched) return "(" + seq + ", " + width + ")";
  return batch_first ? "(B, " + seq + ", " + width + ")" : "(" + seq + ", B, " + width + ")";
}

// A key padding mask, (T,) or (B, T), against the keys' rows.
void check_key_mask(const Config& c, const char* key, const std::vector<std::size_t>& m,
                    const Rows& keys, const std::string& against) {
  if (m.back() != keys.seq || (m.size() == 2 && keys.batch && m[0] != keys.batch))
    fail(c, key,
         "expected shape " +
             (keys.batch ? shape_str({keys.batch, keys.seq}) + " or " : std::string()) +
             shape_str({keys.seq}) + " to match " + against + ", found " + shape_str(m));
}

}  // namespace

std::string path_value(const Config& c, const json& v, const std::string& name, bool allow_stdin) {
  std::string p = cj::get_string(v, name);
  if (p.empty()) bad(name, "expected a path, found an empty string");
  if (p.find('\0') != std::string::npos) bad(name, "expected a path, found a NUL character in it");
  if (p == "-") {
    if (!allow_stdin) bad(name, "\"-\" (standard input) is only for input; give a file");
    return p;
  }
  return resolve_path(c.dir, p);
}

void read_input(Config& c, const json& v, const std::string& name) {
  if (v.is_string()) {
    c.input_path = path_value(c, v, name, true);
    return;
  }
  expect_path_or_array(v, name);
  Tensor t = tensor_from_json(v, name, Exit::config);
  if (t.ndim() != 2 && t.ndim() != 3)
    bad(name,
        "expected a nested array of shape (S, C) or (B, S, C), found shape " + shape_str(t.shape));
  c.input_inline = std::move(t);
}

void read_padding_mask(Config& c, const json& v, const std::string& name) {
  if (v.is_string()) {
    c.padding_mask_path = path_value(c, v, name);
    return;
  }
  expect_path_or_array(v, name);
  Mask m = mask_from_json(v, name, Exit::config);
  if (m.shape.size() != 1 && m.shape.size() != 2)
    bad(name, "expected a nested array of shape (S,) or (B, S), found shape " + shape_str(m.shape));
  c.padding_mask_inline = std::move(m);
}

void read_key_mask(ArrayKey<Mask>& k, const Config& c, const json& v, const std::string& name) {
  k = {};
  if (v.is_string()) {
    k.path = path_value(c, v, name);
    return;
  }
  expect_path_or_array(v, name);
  Mask m = mask_from_json(v, name, Exit::config);
  if (m.shape.size() != 1 && m.shape.size() != 2)
    bad(name,
        "expected a nested array of shape (S,) or (B, S), found shape " + shape_str(m.shape) +
            (m.shape.size() > 2 ? " (a mask over queries and keys, like Hugging Face's 4-D "
                                  "(B, 1, L, S) one, is torch's attn_mask: give it as attn_mask)"
                                : ""));
  k.inline_value = std::move(m);
}

void read_positions(ArrayKey<PositionIds>& k, const Config& c, const json& v,
                    const std::string& name) {
  k = {};
  if (v.is_string()) {
    k.path = path_value(c, v, name);
    return;
  }
  expect_path_or_array(v, name);
  k.inline_value = positions_from_json(v, name);
}

void read_attn_mask(ArrayKey<AttnMask>& k, const Config& c, const json& v,
                    const std::string& name) {
  k = {};
  if (v.is_string()) {
    k.path = path_value(c, v, name);
    return;
  }
  expect_path_or_array(v, name);
  check_one_kind(v, name);
  const json* leaf = &v;
  while (leaf->is_array() && !leaf->empty()) leaf = &(*leaf)[0];
  AttnMask m;
  if (leaf->is_boolean()) {
    m.blocked = mask_from_json(v, name, Exit::config);
  } else {
    m.additive = true;
    m.add = tensor_from_json(v, name, Exit::config);
  }
  if (m.shape().size() < 2)
    bad(name,
        "expected a nested array of shape (L, S), (B, L, S), (B*H, L, S), (B, 1, L, S) or "
        "(B, H, L, S), found shape " +
            shape_str(m.shape()));
  k.inline_value = std::move(m);
}

void read_source(ArrayKey<Tensor>& k, const Config& c, const json& v, const std::string& name) {
  k = {};
  if (v.is_string()) {
    k.path = path_value(c, v, name);
    return;
  }
  expect_path_or_array(v, name);
  Tensor t = tensor_from_json(v, name, Exit::config);
  if (t.ndim() != 2 && t.ndim() != 3)
    bad(name, "expected a nested array of shape (T, Ck) or (B, T, Ck), found shape " +
                  shape_str(t.shape));
  k.inline_value = std::move(t);
}

void check_inline(const Config& c) {
  // Queries: the input's rows.
  std::optional<Rows> queries;
  bool batched = false;
  if (c.input_inline) {
    const auto& s = c.input_inline->shape;
    if (static_cast<std::int64_t>(s.back()) != c.hidden_size)
      fail(c, "input",
           "expected rows of hidden_size " + std::to_string(c.hidden_size) +
               " numbers, found shape " + shape_str(s));
    queries = rows_of(s, c.batch_first);
    batched = s.size() == 3;
    if (c.context_size && static_cast<std::int64_t>(queries->seq) > *c.context_size)
      fail(c, "input",
           "sequence length " + std::to_string(queries->seq) + " exceeds context_size " +
               std::to_string(*c.context_size));
  }

  // Keys: the input's rows, or the cross-attention source's.
  std::optional<Rows> keys = c.cross() ? std::nullopt : queries;
  std::string keys_name = c.input_inline ? "input " + shape_str(c.input_inline->shape) : "";
  const std::pair<const char*, const ArrayKey<Tensor>*> sources[] = {
      {"kv_input", &c.kv_input}, {"key_input", &c.key_input}, {"value_input", &c.value_input}};
  for (const auto& [key, src] : sources) {
    if (!src->inline_value) continue;
    const auto& s = src->inline_value->shape;
    const bool values = std::string(key) == "value_input";
    const std::int64_t width = values ? c.vdim : c.kdim;
    const char* width_key = values ? "vdim" : "kdim";
    if (static_cast<std::int64_t>(s.back()) != width)
      fail(c, key,
           "expected rows of " + std::string(width_key) + " " + std::to_string(width) +
               " numbers, found shape " + shape_str(s) + " (set " + width_key + ")");
    if (c.input_inline && (s.size() == 3) != batched)
      fail(c, key,
           "expected " + source_layout("T", batched, c.batch_first, width_key) + " like input " +
               shape_str(c.input_inline->shape) + ", found shape " + shape_str(s) +
               " (torch MHA: keys and values batched as the query)");
    const Rows r = rows_of(s, c.batch_first);
    if (queries && batched && r.batch != queries->batch)
      fail(c, key,
           "expected the input's batch of " + std::to_string(queries->batch) + ", found shape " +
               shape_str(s));
    if (keys && (r.seq != keys->seq || r.batch != keys->batch))
      fail(c, key,
           "expected the rows of " + keys_name + ", found shape " + shape_str(s) +
               " (keys and values have one position each)");
    if (!keys) {
      keys = r;
      keys_name = std::string(key) + " " + shape_str(s);
    }
  }

  if (c.padding_mask_inline && keys)
    check_key_mask(c, "padding_mask", c.padding_mask_inline->shape, *keys, keys_name);
  if (c.attention_mask.inline_value && keys)
    check_key_mask(c, "attention_mask", c.attention_mask.inline_value->shape, *keys, keys_name);
  const bool mrope = c.spec.rope && !c.spec.rope->mrope_section.empty();
  // A leading 3 without rope.mrope_section: checked by the run's read_positions,
  // which refuses rows naming both keys (one message for inline arrays and files).
  if (c.positions.inline_value && queries && (mrope || c.positions.inline_value->shape[0] != 3)) {
    const auto& p = c.positions.inline_value->shape;
    const bool rows = mrope && p.size() >= 2 && p[0] == 3;  // mrope: (3, S) or (3, B, S)
    const std::size_t batch = p.size() == 3 ? p[1] : (p.size() == 2 && !rows ? p[0] : 0);
    if (p.back() != queries->seq || (batch && queries->batch && batch != queries->batch))
      fail(c, "positions",
           "expected shape " +
               (queries->batch ? shape_str({queries->batch, queries->seq}) + " or "
                               : std::string()) +
               shape_str({queries->seq}) +
               (mrope ? " (or mrope's rows (3, " + std::to_string(queries->seq) + ")" +
                            (queries->batch ? " or " + shape_str({3, queries->batch, queries->seq})
                                            : std::string()) +
                            ")"
                      : std::string()) +
               " to match input " + shape_str(c.input_inline->shape) + ", found " + shape_str(p));
  }
  if (c.attn_mask.inline_value) {
    // (..., L, T); the leading dimensions are checked against B and H at the run.
    const auto& m = c.attn_mask.inline_value->shape();
    const std::size_t L = m[m.size() - 2], T = m.back();
    if ((queries && L != queries->seq) || (keys && T != keys->seq))
      fail(c, "attn_mask",
           "expected (..., L, S) with L = " + (queries ? std::to_string(queries->seq) : "L") +
               " queries and S = " + (keys ? std::to_string(keys->seq) : "S") +
               " keys, found shape " + shape_str(m));
  }
  if (!c.labels.empty() && queries && c.labels.size() != queries->seq)
    fail(c, "labels",
         "expected one label per token (" + std::to_string(queries->seq) + "), found " +
             std::to_string(c.labels.size()));
  if (!c.kv_labels.empty() && keys && c.cross() && c.kv_labels.size() != keys->seq)
    fail(c, "kv_labels",
         "expected one label per key (" + std::to_string(keys->seq) + " rows of " + keys_name +
             "), found " + std::to_string(c.kv_labels.size()));
}

}  // namespace attn::config_detail
