// Layer 0's input from token ids (--tokens; config.h EmbeddingSpec), as the
// model family's embedding module builds it, in this order:
//   x = word[id] * scale      (nn.Embedding; Gemma's normalizer, Granite's multiplier)
//   x = x + token_types[0]    (BertEmbeddings: inputs_embeds + token_type_embeddings)
//   x = x + positions[p]      (then += position_embeddings; GPT-2's wte + wpe, OPT's p + 2;
//                              p from the config's positions when given, as position_ids)
//   x = LayerNorm(x)          (BertEmbeddings.LayerNorm, BLOOM's word_embeddings_layernorm)
// Only the rows asked for are read (a 150k x 4096 table is never held in
// float32), each converted or dequantized on its own (StateDict::read_rows).
// The additions are float32, as torch adds float32 tensors; the scale of a
// bf16 or f16 table with scale_dtype "table" is rounded to that dtype and so
// is each product (torch.tensor(hidden_size**0.5, dtype=hidden.dtype) times
// the bf16 rows). The LayerNorm is nn.LayerNorm's, its sums in double.
//
// Letters: B batch, S sequence, C hidden, V vocabulary rows, P position rows.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "attn/error.h"
#include "attn/escape.h"
#include "attn/npy.h"
#include "attn/run.h"
#include "attn/state_dict.h"
#include "base/dtype_round.h"

namespace attn {
namespace {

// The text between a leading '[' and a trailing ']' (spaces around them
// ignored), or all of it.
std::string inside_brackets(const std::string& spec) {
  const std::size_t a = spec.find_first_not_of(' '), b = spec.find_last_not_of(' ');
  if (a == std::string::npos || spec[a] != '[' || spec[b] != ']' || b == a) return spec;
  return spec.substr(a + 1, b - a - 1);
}

// One integer of a --tokens list ("9906"), or Exit::usage naming the flag.
std::int64_t parse_id(const std::string& s, const std::string& spec) {
  std::size_t i = 0;
  const bool negative = !s.empty() && s[0] == '-';
  if (negative) i = 1;
  if (i == s.size() || s.size() - i > 18)
    throw Error(Exit::usage,
                "--tokens: expected token ids a,b,c (integers) or a .npy file, found \"" +
                    printable(spec) + "\"");
  std::int64_t v = 0;
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9')
      throw Error(Exit::usage,
                  "--tokens: expected token ids a,b,c (integers) or a .npy file, found \"" +
                      printable(spec) + "\"");
    v = v * 10 + (s[i] - '0');
  }
  return negative ? -v : v;
}

// A --tokens value that is a list of ids rather than a file name: digits,
// commas, minus signs and spaces, in brackets or not (llama-tokenize --ids
// prints "[791, 4062]").
bool looks_like_list(const std::string& spec) {
  bool digit = false;
  for (char c : inside_brackets(spec)) {
    if (c >= '0' && c <= '9')
      digit = true;
    else if (c != ',' && c != '-' && c != ' ')
      return false;
  }
  return digit;
}

// The (C) tensor `key` of `sd`, or Exit::data naming it and what it is for.
Tensor read_vector(const StateDict& sd, const std::string& key, std::size_t C, const char* what,
                   bool allow_nonfinite) {
  const TensorInfo* info = sd.find(key);
  if (!info)
    throw Error(Exit::data, sd.source() + ": missing key \"" + printable(key) + "\" (" + what +
                                ", shape (" + std::to_string(C) + ",))");
  if (info->shape != std::vector<std::size_t>{C})
    throw Error(Exit::data, sd.source() + ": key \"" + printable(key) + "\": expected shape (" +
                                std::to_string(C) + ",) (" + what + " over hidden_size), found " +
                                shape_str(info->shape));
  return sd.read_f32(key, allow_nonfinite);
}

// The (rows, C) table `key` of `sd`: its row count, or Exit::data naming it.
std::size_t table_rows(const StateDict& sd, const std::string& key, std::size_t C,
                       const char* what) {
  const TensorInfo* info = sd.find(key);
  if (!info)
    throw Error(Exit::data, sd.source() + ": missing key \"" + printable(key) + "\" (" + what +
                                ", shape (rows, " + std::to_string(C) + "))");
  if (info->shape.size() != 2 || info->shape[1] != C || info->shape[0] == 0)
    throw Error(Exit::data, sd.source() + ": key \"" + printable(key) +
                                "\": expected shape (rows, " + std::to_string(C) + ") (" + what +
                                "), found " + shape_str(info->shape));
  return info->shape[0];
}

// nn.LayerNorm over each row of x (rows, C), in place: (x - mean) * rsqrt(var + eps) * w + b.
void layer_norm(float* x, std::size_t rows, std::size_t C, const float* w, const float* b,
                double eps) {
  for (std::size_t r = 0; r < rows; ++r) {
    float* xr = x + r * C;
    double sum = 0.0;
    for (std::size_t c = 0; c < C; ++c) sum += xr[c];
    const double mean = sum / double(C);
    double sq = 0.0;
    for (std::size_t c = 0; c < C; ++c) sq += (xr[c] - mean) * (xr[c] - mean);
    const double rstd = 1.0 / std::sqrt(sq / double(C) + eps);
    for (std::size_t c = 0; c < C; ++c)
      xr[c] = static_cast<float>((double(xr[c]) - mean) * rstd * double(w[c]) + double(b[c]));
  }
}

}  // namespace

TokenIds read_token_ids(const std::string& spec) {
  TokenIds t;
  if (looks_like_list(spec)) {
    t.source = "--tokens";
    const std::string list = inside_brackets(spec);
    std::size_t start = 0;
    while (true) {
      const std::size_t comma = list.find(',', start);
      std::string item = list.substr(start, comma == std::string::npos ? comma : comma - start);
      while (!item.empty() && item.front() == ' ') item.erase(item.begin());
      while (!item.empty() && item.back() == ' ') item.pop_back();
      t.ids.push_back(parse_id(item, spec));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    t.shape = {1, t.ids.size()};
    return t;
  }
  t.source = spec;
  const RawArray a = read_npy(spec);
  if (a.dtype != DType::i4 && a.dtype != DType::i8)
    throw Error(Exit::data, spec + ": expected token ids of dtype int32 or int64, found " +
                                dtype_name(a.dtype));
  if (a.shape.size() != 1 && a.shape.size() != 2)
    throw Error(Exit::data,
                spec + ": expected token ids of shape (S,) or (B, S), found " + shape_str(a.shape));
  t.batched = a.shape.size() == 2;
  t.shape = t.batched ? a.shape : std::vector<std::size_t>{1, a.shape[0]};
  if (t.shape[0] == 0 || t.shape[1] == 0)
    throw Error(Exit::data, spec + ": empty token ids " + shape_str(a.shape) +
                                "; need at least one sequence of at least one token");
  t.ids.resize(a.count());
  for (std::size_t i = 0; i < a.count(); ++i) {
    if (a.dtype == DType::i8) {
      std::int64_t v;
      std::memcpy(&v, a.bytes.data() + 8 * i, 8);
      t.ids[i] = v;
    } else {
      std::int32_t v;
      std::memcpy(&v, a.bytes.data() + 4 * i, 4);
      t.ids[i] = v;
    }
  }
  return t;
}

Tensor embed_tokens(const Config& cfg, const TokenIds& ids, bool allow_nonfinite,
                    const PositionIds* positions) {
  Tensor x({ids.shape[0], ids.shape[1], std::size_t(cfg.hidden_size)});
  embed_tokens_into(cfg, ids, allow_nonfinite, positions, x);
  if (!ids.batched) x.shape = {ids.shape[1], std::size_t(cfg.hidden_size)};
  return x;
}

void embed_tokens_into(const Config& cfg, const TokenIds& ids, bool allow_nonfinite,
                       const PositionIds* positions, Tensor& x, int threads) {
  if (!cfg.embedding)
    throw Error(Exit::usage,
                "--tokens: builds layer 0's input with the model's embedding: give --model DIR "
                "(or FILE.gguf) --layer 0, or \"embedding\": {\"word\": KEY, ...} in the config");
  const EmbeddingSpec& e = *cfg.embedding;
  if (cfg.weights.empty())
    throw Error(Exit::config, "embedding: reads the word table from \"weights\"; none given");
  const bool reuse = cfg.model_weights && cfg.model_weights->source() == cfg.weights;
  const StateDict opened = reuse ? StateDict() : open_state_dict(cfg.weights);
  const StateDict& sd = reuse ? *cfg.model_weights : opened;
  const std::size_t B = ids.shape[0], S = ids.shape[1], C = std::size_t(cfg.hidden_size);
  const std::size_t V = table_rows(sd, e.word, C, "embedding's word table");
  auto where = [&](std::size_t i) {
    return ids.batched ? "[" + std::to_string(i / S) + ", " + std::to_string(i % S) + "]"
                       : "[" + std::to_string(i % S) + "]";
  };
  for (std::size_t i = 0; i < ids.ids.size(); ++i)
    if (ids.ids[i] < 0 || std::uint64_t(ids.ids[i]) >= V)
      throw Error(Exit::data, ids.source + ": token id " + std::to_string(ids.ids[i]) + " at " +
                                  where(i) + " is outside the vocabulary: \"" + printable(e.word) +
                                  "\" has rows 0.." + std::to_string(V - 1));

  if (x.size() != B * S * C)
    throw Error(Exit::software, "embedding: the input tensor holds " + std::to_string(x.size()) +
                                    " floats, the ids need " + std::to_string(B * S * C));
  // 1. the word rows (dequantized row by row for GGUF), times the scale.
  const std::vector<std::size_t> rows(ids.ids.begin(), ids.ids.end());  // checked >= 0 above
  sd.read_row_list(e.word, rows.data(), rows.size(), x.ptr(), allow_nonfinite, threads);
  const DType table = sd.find(e.word)->dtype;
  const bool in_table = e.scale_dtype == EmbeddingDtype::table &&
                        (table == DType::bf16 || table == DType::f2) &&
                        sd.find(e.word)->gguf_type.empty();
  if (in_table) {
    const float s = detail::round_to_dtype(static_cast<float>(e.scale), table);
    detail::round_scaled(x.ptr(), x.size(), s, table);
  } else if (e.scale != 1.0) {
    const float s = static_cast<float>(e.scale);
    for (float& v : x.data) v *= s;
  }
  // 2. token type 0 (BertEmbeddings' default token_type_ids of zeros).
  if (!e.token_types.empty()) {
    table_rows(sd, e.token_types, C, "embedding's token type table");
    std::vector<float> type0(C);
    sd.read_rows(e.token_types, 0, 1, false, type0.data(), allow_nonfinite);
    for (std::size_t i = 0; i < B * S; ++i)
      for (std::size_t c = 0; c < C; ++c) x.data[i * C + c] += type0[c];
  }
  // 3. learned absolute positions: t + offset, or RoBERTa's count of the
  // non-padding tokens so far + padding_id (a padding token at padding_id).
  if (!e.positions.empty()) {
    const std::size_t P = table_rows(sd, e.positions, C, "embedding's learned positions");
    std::vector<std::size_t> at(S);  // a batch row's position rows
    std::vector<float> rows(S * C);
    for (std::size_t b = 0; b < B; ++b) {
      std::int64_t seen = 0;
      for (std::size_t t = 0; t < S; ++t) {
        const std::int64_t id = ids.ids[b * S + t];
        std::int64_t p = std::int64_t(t) + e.position_offset;
        if (positions)
          p = positions->data[b * S + t] + e.position_offset;
        else if (e.padding_id)
          p = id == *e.padding_id ? *e.padding_id : *e.padding_id + ++seen;
        if (std::uint64_t(p) >= P)
          throw Error(Exit::data, ids.source + ": " + std::to_string(S) +
                                      " tokens need position row " + std::to_string(p) + " of \"" +
                                      printable(e.positions) + "\", which has rows 0.." +
                                      std::to_string(P - 1) + " (the model's learned positions)");
        at[t] = std::size_t(p);
      }
      sd.read_row_list(e.positions, at.data(), S, rows.data(), allow_nonfinite);
      float* xb = x.ptr() + b * S * C;
      for (std::size_t i = 0; i < S * C; ++i) xb[i] += rows[i];
    }
  }
  // 4. the embedding's LayerNorm.
  if (!e.norm_weight.empty()) {
    const Tensor w =
        read_vector(sd, e.norm_weight, C, "embedding's LayerNorm weight", allow_nonfinite);
    Tensor b({C});
    if (!e.norm_bias.empty())
      b = read_vector(sd, e.norm_bias, C, "embedding's LayerNorm bias", allow_nonfinite);
    layer_norm(x.ptr(), B * S, C, w.ptr(), b.ptr(), e.norm_eps);
  }
}

}  // namespace attn
