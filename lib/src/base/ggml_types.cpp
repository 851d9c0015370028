// ggml's type table (ggml_types.h): ggml.c's type_traits, the names as
// gguf-py spells them.
#include "base/ggml_types.h"

namespace attn {

namespace {

constexpr GgmlTypeTraits kTraits[kGgmlTypeCount] = {
    {"F32", 1, 4, true},          // 0
    {"F16", 1, 2, true},          // 1
    {"Q4_0", 32, 18, true},       // 2
    {"Q4_1", 32, 20, true},       // 3
    {"Q4_2", 0, 0, false},        // 4 removed
    {"Q4_3", 0, 0, false},        // 5 removed
    {"Q5_0", 32, 22, true},       // 6
    {"Q5_1", 32, 24, true},       // 7
    {"Q8_0", 32, 34, true},       // 8
    {"Q8_1", 32, 36, false},      // 9
    {"Q2_K", 256, 84, true},      // 10
    {"Q3_K", 256, 110, true},     // 11
    {"Q4_K", 256, 144, true},     // 12
    {"Q5_K", 256, 176, true},     // 13
    {"Q6_K", 256, 210, true},     // 14
    {"Q8_K", 256, 292, false},    // 15
    {"IQ2_XXS", 256, 66, false},  // 16
    {"IQ2_XS", 256, 74, false},   // 17
    {"IQ3_XXS", 256, 98, false},  // 18
    {"IQ1_S", 256, 50, false},    // 19
    {"IQ4_NL", 32, 18, true},     // 20
    {"IQ3_S", 256, 110, false},   // 21
    {"IQ2_S", 256, 82, false},    // 22
    {"IQ4_XS", 256, 136, true},   // 23
    {"I8", 1, 1, false},          // 24
    {"I16", 1, 2, false},         // 25
    {"I32", 1, 4, false},         // 26
    {"I64", 1, 8, false},         // 27
    {"F64", 1, 8, false},         // 28
    {"IQ1_M", 256, 56, false},    // 29
    {"BF16", 1, 2, true},         // 30
    {"Q4_0_4_4", 0, 0, false},    // 31 removed
    {"Q4_0_4_8", 0, 0, false},    // 32 removed
    {"Q4_0_8_8", 0, 0, false},    // 33 removed
    {"TQ1_0", 256, 54, false},    // 34
    {"TQ2_0", 256, 66, false},    // 35
    {"IQ4_NL_4_4", 0, 0, false},  // 36 removed
    {"IQ4_NL_4_8", 0, 0, false},  // 37 removed
    {"IQ4_NL_8_8", 0, 0, false},  // 38 removed
    {"MXFP4", 32, 17, true},      // 39
    {"NVFP4", 64, 36, false},     // 40
    {"Q1_0", 128, 18, false},     // 41
    {"Q2_0", 64, 18, false},      // 42
};

}  // namespace

const GgmlTypeTraits* ggml_type_traits(std::uint32_t id) {
  return id < kGgmlTypeCount ? &kTraits[id] : nullptr;
}

std::string ggml_type_name(std::uint32_t id) {
  const GgmlTypeTraits* t = ggml_type_traits(id);
  return t != nullptr ? std::string(t->name) : "type " + std::to_string(id);
}

bool ggml_type_dequantized(std::uint32_t id) {
  const GgmlTypeTraits* t = ggml_type_traits(id);
  return t != nullptr && t->dequantized;
}

std::string ggml_dequantized_names() {
  std::string s;
  for (const GgmlTypeTraits& t : kTraits)
    if (t.dequantized) s += (s.empty() ? "" : ", ") + std::string(t.name);
  return s;
}

}  // namespace attn
