// One input's tensors for forward() (run.h's RunInputs): the query input, the
// key/value sources of cross-attention, the masks and the positions, each
// read from its file or the config, batched like the query input and checked
// against it (CONTRACT.md "Config" v2 keys, "Scores, in order").
//
// Letters: B batch, L queries, T keys, C hidden, Ck/Cv key/value widths,
// H heads.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>

#include "attn/error.h"
#include "attn/masks.h"
#include "attn/npy.h"
#include "attn/run.h"

namespace attn {
namespace {

std::string n(std::size_t v) { return std::to_string(v); }

// (A, B, C) -> (B, A, C): torch MHA's batch_first=False layout and back.
Tensor swap01(const Tensor& t) {
  const std::size_t A = t.shape[0], Bn = t.shape[1], C = t.shape[2];
  Tensor out({Bn, A, C});
  for (std::size_t a = 0; a < A; ++a)
    for (std::size_t b = 0; b < Bn; ++b)
      std::copy_n(t.ptr() + (a * Bn + b) * C, C, out.ptr() + (b * A + a) * C);
  return out;
}

// A float source key (kv_input, key_input, value_input): its file or inline
// array, laid out (B, T, width) like the query input.
Tensor read_source(const ArrayKey<Tensor>& key, const char* name, std::size_t width,
                   const RunInputs& in, const LoadOptions& opt, std::string* source) {
  Tensor t = key.inline_value ? *key.inline_value : read_input_file(key.path, opt.allow_nonfinite);
  *source = key.inline_value ? std::string("config") : key.path;
  const std::string what = key.inline_value ? std::string(name) : key.path;
  const std::size_t B = in.x.shape[0];
  if (!in.batched) {
    if (t.ndim() != 2)
      throw Error(Exit::data, what + ": " + name + " of an unbatched (L, C) input must be (T, " +
                                  n(width) + "), found " + shape_str(t.shape));
    t.shape.insert(t.shape.begin(), 1);
  } else {
    if (t.ndim() != 3)
      throw Error(Exit::data, what + ": " + name + " of a batched input must be " +
                                  (in.batch_first ? "(B, T, " : "(T, B, ") + n(width) +
                                  "), found " + shape_str(t.shape));
    if (!in.batch_first) t = swap01(t);
  }
  if (t.shape[0] != B || t.shape[1] == 0 || t.shape[2] != width) {
    std::vector<std::size_t> given = t.shape;
    if (in.batched && !in.batch_first) std::swap(given[0], given[1]);
    if (!in.batched) given.erase(given.begin());
    const std::string want = !in.batched      ? "(T, " + n(width) + ")"
                             : in.batch_first ? "(" + n(B) + ", T, " + n(width) + ")"
                                              : "(T, " + n(B) + ", " + n(width) + ")";
    throw Error(Exit::data, what + ": expected " + name + " of shape " + want +
                                " with T >= 1 (the batch of the input and the layer's " +
                                (std::string(name) == "value_input" ? "vdim" : "kdim") +
                                "), found " + shape_str(given));
  }
  return t;
}

// Element i of an integer array as int64 (bytes are native order; a uint64
// past int64 reads as -1, which the range check refuses).
template <class T>
std::int64_t load(const std::uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return static_cast<std::int64_t>(v);
}
std::int64_t integer_at(const RawArray& a, std::size_t i) {
  const std::uint8_t* e = a.bytes.data() + i * dtype_size(a.dtype);
  switch (a.dtype) {
    case DType::i1:
      return load<std::int8_t>(e);
    case DType::i2:
      return load<std::int16_t>(e);
    case DType::i4:
      return load<std::int32_t>(e);
    case DType::i8:
      return load<std::int64_t>(e);
    case DType::u1:
      return load<std::uint8_t>(e);
    case DType::u2:
      return load<std::uint16_t>(e);
    case DType::u4:
      return load<std::uint32_t>(e);
    case DType::u8: {
      std::uint64_t u;
      std::memcpy(&u, e, sizeof u);
      return u > std::uint64_t(INT64_MAX) ? -1 : std::int64_t(u);
    }
    default:
      return -1;
  }
}

// Position ids: integers >= 0, from an int .npy or the config; (L,) applies
// to every batch row, (B, L) as is. With mrope (rope.mrope_section) a
// leading 3 is the time, height and width rows, as Hugging Face's
// position_ids from get_rope_index: (3, L) for every batch row, (3, B, L) as
// is; 1-D positions stay one row (the three rows equal). Rows without
// mrope_section are refused (Exit::usage) rather than read as a batch of 3.
PositionIds read_positions(const ArrayKey<PositionIds>& key, std::size_t B, std::size_t L,
                           bool mrope, std::string* source, std::vector<std::string>* warnings) {
  PositionIds p;
  std::string what = "positions";
  if (key.inline_value) {
    p = *key.inline_value;
    *source = "config";
  } else {
    what = *source = key.path;
    const RawArray a = read_npy(key.path);
    if (dtype_is_float(a.dtype) || a.dtype == DType::b1)
      throw Error(Exit::data,
                  what + ": expected integer position ids, found dtype " + dtype_name(a.dtype));
    p.shape = a.shape;
    p.data.resize(a.count());
    for (std::size_t i = 0; i < p.data.size(); ++i) p.data[i] = integer_at(a, i);
  }
  for (std::size_t i = 0; i < p.data.size(); ++i)
    if (p.data[i] < 0 || p.data[i] > (std::int64_t(1) << 40))
      throw Error(Exit::data, what + ": expected position ids in 0..2^40, found " +
                                  std::to_string(p.data[i]) + " at flat index " + n(i));
  const std::vector<std::size_t> one_row{L}, batch_rows{B, L};
  const std::vector<std::size_t> rows{3, L}, batch_of_rows{3, B, L};
  // Three rows where one was expected: (3, B, L), or (3, L) that is no (B, L).
  const bool looks_like_rows = p.shape == batch_of_rows || (p.shape == rows && B != 3);
  if (!mrope && looks_like_rows)
    throw Error(Exit::usage,
                what + ": shape " + shape_str(p.shape) +
                    " reads as mrope's three position rows (time, height, width), which need "
                    "rope.mrope_section [t, h, w] (the family's config.json or the config); "
                    "for per-batch positions give (B, S) = " +
                    shape_str(batch_rows));
  if (mrope && p.shape == rows) {  // the same three rows for every batch row
    if (B == 3 && warnings)
      warnings->push_back(what + ": shape " + shape_str(rows) +
                          " with a batch of 3 is read as mrope's three rows (time, height, "
                          "width) for every batch row; per-batch positions are (3, B, S) = " +
                          shape_str(batch_of_rows));
    PositionIds all{batch_of_rows, std::vector<std::int64_t>(3 * B * L)};
    for (std::size_t r = 0; r < 3; ++r)
      for (std::size_t b = 0; b < B; ++b)
        std::copy(p.data.begin() + std::ptrdiff_t(r * L),
                  p.data.begin() + std::ptrdiff_t((r + 1) * L),
                  all.data.begin() + std::ptrdiff_t((r * B + b) * L));
    return all;
  }
  if (mrope && p.shape == batch_of_rows) return p;
  if (p.shape == one_row) {
    PositionIds all{batch_rows, {}};
    for (std::size_t b = 0; b < B; ++b)
      all.data.insert(all.data.end(), p.data.begin(), p.data.end());
    return all;
  }
  if (p.shape != batch_rows)
    throw Error(Exit::data, what + ": expected position ids of shape (" + n(L) + ",) or (" + n(B) +
                                ", " + n(L) + ")" +
                                (mrope ? ", or mrope's rows " + shape_str(rows) + " or " +
                                             shape_str(batch_of_rows) + ","
                                       : std::string()) +
                                " to fit the input, found " + shape_str(p.shape));
  return p;
}

// torch's attn_mask: a bool or integer .npy is a bool mask (true = not
// allowed), a float one is added to the scores (-inf blocks).
AttnMask read_attn_mask(const ArrayKey<AttnMask>& key, std::string* source) {
  if (key.inline_value) {
    *source = "config";
    return *key.inline_value;
  }
  *source = key.path;
  const RawArray a = read_npy(key.path);
  AttnMask m;
  m.additive = dtype_is_float(a.dtype);
  if (m.additive)
    m.add = to_float32(a, key.path,
                       /*allow_nonfinite=*/true);  // -inf blocks; score_mask refuses NaN, +inf
  else
    m.blocked = to_mask(a, key.path);
  return m;
}

// A bool attn_mask that blocks each query's own position (self-attention) in
// most rows reads like scaled_dot_product_attention's convention (true =
// attend), the opposite of nn.MultiheadAttention's that the contract uses.
void warn_inverted_attn_mask(const ScoreMask& m, std::size_t B, std::size_t H, RunInputs& in) {
  if (m.additive || m.L != m.T) return;
  std::size_t rows = 0, diagonal = 0;
  for (std::size_t b = 0; b < (m.stride_b ? B : 1); ++b)
    for (std::size_t h = 0; h < (m.stride_h ? H : 1); ++h)
      for (std::size_t i = 0; i < m.L; ++i, ++rows) diagonal += m.blocked_row(b, h, i)[i] != 0;
  if (rows && diagonal * 2 > rows)
    in.warnings.push_back(
        "attn_mask: blocks the query's own position in " + n(diagonal) + " of " + n(rows) +
        " rows; attn-run follows nn.MultiheadAttention (true = not allowed). A mask from "
        "scaled_dot_product_attention (true = attend) must be inverted");
}

}  // namespace

ForwardInputs RunInputs::forward_inputs() const {
  ForwardInputs f;
  f.x = &x;
  if (key) f.key = &*key;
  if (value) f.value = &*value;
  if (padding) f.key_padding = &*padding;
  if (positions) f.positions = &*positions;
  if (attn_mask) f.attn_mask = &*attn_mask;
  return f;
}

RunInputs load_inputs(const Config& cfg, const LoadOptions& opt, Tensor x,
                      const std::string& source) {
  RunInputs in;
  in.input_source = source;
  in.batch_first = cfg.batch_first;
  const std::string name = source == "config" ? "input" : source;
  // torch MHA's batch_first=False: (L, B, C); an (L, C) input is unbatched either way.
  if (!cfg.batch_first && x.ndim() == 3) x = swap01(x);
  in.x = batch_input(std::move(x), cfg, name, &in.batched);
  in.sources["input"] = source;
  const std::size_t B = in.x.shape[0], L = in.x.shape[1];
  const std::size_t H = std::size_t(cfg.num_heads);

  // Cross-attention: keys and values from kv_input, or key_input + value_input.
  const std::size_t Ck = std::size_t(cfg.kdim ? cfg.kdim : cfg.hidden_size);
  const std::size_t Cv = std::size_t(cfg.vdim ? cfg.vdim : cfg.hidden_size);
  if (cfg.kv_input.given()) {
    in.key = read_source(cfg.kv_input, "kv_input", Ck, in, opt, &in.sources["kv_input"]);
  } else if (cfg.key_input.given()) {
    in.key = read_source(cfg.key_input, "key_input", Ck, in, opt, &in.sources["key_input"]);
    in.value = read_source(cfg.value_input, "value_input", Cv, in, opt, &in.sources["value_input"]);
    if (in.value->shape[1] != in.key->shape[1])
      throw Error(Exit::data, "value_input: expected the " + n(in.key->shape[1]) +
                                  " positions of key_input, found " + n(in.value->shape[1]));
  }
  const std::size_t T = in.keys();

  // Key padding: padding_mask (1 = padded), or Hugging Face's attention_mask (1 = attend).
  std::string mask_name;
  if (auto m = read_padding_mask(cfg, opt.padding_mask_path, &mask_name)) {
    if (cfg.attention_mask.given() && opt.padding_mask_path)
      throw Error(Exit::usage,
                  "--padding-mask: cannot be combined with the config's "
                  "attention_mask; both mark padded keys, with opposite meanings");
    if (cfg.attention_mask.given())
      throw Error(Exit::config, "attention_mask: not together with padding_mask (" + mask_name +
                                    "); both mark padded keys, with opposite meanings");
    in.padding = batch_mask(*m, B, T, mask_name, name);
    in.sources["padding_mask"] = mask_name;
    const double share = padded_share(*in.padding);
    if (share > 0.5)
      in.warnings.push_back(
          mask_name + ": marks " + std::to_string(int(share * 100 + 0.5)) +
          "% of the keys as padded (true = padded); a Hugging Face "
          "tokenizer's attention_mask (1 = attend) goes in \"attention_mask\" (--attention-mask)");
  } else if (cfg.attention_mask.given()) {
    const bool inline_mask = cfg.attention_mask.inline_value.has_value();
    const std::string am = inline_mask ? "attention_mask" : cfg.attention_mask.path;
    const Mask keep = inline_mask ? *cfg.attention_mask.inline_value
                                  : to_mask(read_npy(cfg.attention_mask.path), am);
    in.padding = batch_mask(padding_from_attention_mask(keep), B, T, am, name);
    in.sources["attention_mask"] = inline_mask ? "config" : am;
  }

  if (cfg.positions.given()) {
    const bool mrope = cfg.spec.rope && !cfg.spec.rope->mrope_section.empty();
    in.positions =
        read_positions(cfg.positions, B, L, mrope, &in.sources["positions"], &in.warnings);
  }

  if (cfg.attn_mask.given()) {
    std::string src;
    const AttnMask m = read_attn_mask(cfg.attn_mask, &src);
    in.sources["attn_mask"] = src;
    in.attn_mask = score_mask(m, B, H, L, T, src == "config" ? "attn_mask" : src);
    warn_inverted_attn_mask(*in.attn_mask, B, H, in);
  }
  return in;
}

Tensor context_as_given(Tensor context, const RunInputs& in) {
  if (!in.batched) {
    context.shape.erase(context.shape.begin());
    return context;
  }
  if (!in.batch_first) return swap01(context);
  return context;  // moved, not copied (a ?: would copy it)
}

}  // namespace attn
