// ggml's tensor types: the `ggml_type` ids a GGUF tensor info carries, their
// names, block sizes and block bytes (ggml.c type_traits, gguf-py's
// GGMLQuantizationType and GGML_QUANT_SIZES). A fact of the file format that
// the GGUF reader, the conversion of stored bytes and the decoders
// (kernels/ggml_dequant.h) all ask for.
//
// Every type ggml has ever named is listed, so that a tensor of a type we do
// not dequantize can still be sized (its bytes checked against the file) and
// named in a message.
#pragma once

#include <cstdint>
#include <string>

namespace attn {

// The ids of ggml.h's `enum ggml_type`; the gaps were removed from ggml.
enum class GgmlType : std::uint32_t {
  f32 = 0,
  f16 = 1,
  q4_0 = 2,
  q4_1 = 3,
  q4_2 = 4,  // removed (2023)
  q4_3 = 5,  // removed (2023)
  q5_0 = 6,
  q5_1 = 7,
  q8_0 = 8,
  q8_1 = 9,
  q2_k = 10,
  q3_k = 11,
  q4_k = 12,
  q5_k = 13,
  q6_k = 14,
  q8_k = 15,
  iq2_xxs = 16,
  iq2_xs = 17,
  iq3_xxs = 18,
  iq1_s = 19,
  iq4_nl = 20,
  iq3_s = 21,
  iq2_s = 22,
  iq4_xs = 23,
  i8 = 24,
  i16 = 25,
  i32 = 26,
  i64 = 27,
  f64 = 28,
  iq1_m = 29,
  bf16 = 30,
  q4_0_4_4 = 31,  // removed from GGUF files (repacked at load time now)
  q4_0_4_8 = 32,  // removed
  q4_0_8_8 = 33,  // removed
  tq1_0 = 34,
  tq2_0 = 35,
  iq4_nl_4_4 = 36,  // removed
  iq4_nl_4_8 = 37,  // removed
  iq4_nl_8_8 = 38,  // removed
  mxfp4 = 39,
  nvfp4 = 40,
  q1_0 = 41,
  q2_0 = 42,
};

// One past the largest id ggml defines (GGML_TYPE_COUNT).
constexpr std::uint32_t kGgmlTypeCount = 43;

// What a type id means: its name as gguf-py spells it (GGMLQuantizationType,
// the spelling users see in file listings: "Q4_K", "IQ4_XS", "BF16"), the
// elements of one block and the bytes of one block. `block_size` 0: an id
// ggml no longer accepts in a file (removed types); no data can be sized.
struct GgmlTypeTraits {
  const char* name;
  std::uint32_t block_size;
  std::uint32_t block_bytes;
  bool dequantized;  // kernels::dequantize_row decodes it
};

// Traits of `id`, or nullptr for an id ggml never defined (>= kGgmlTypeCount).
const GgmlTypeTraits* ggml_type_traits(std::uint32_t id);

// "Q4_K" for a known id, "type 77" for an unknown one.
std::string ggml_type_name(std::uint32_t id);

// True for the types kernels::dequantize_row decodes: F32, F16, BF16, Q4_0, Q4_1,
// Q5_0, Q5_1, Q8_0, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_NL, IQ4_XS, MXFP4.
bool ggml_type_dequantized(std::uint32_t id);

// The supported names, comma separated, for messages.
std::string ggml_dequantized_names();

}  // namespace attn
