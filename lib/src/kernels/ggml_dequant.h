// The dequantization of ggml's tensor types (base/ggml_types.h) to float32,
// bit for bit as ggml's reference C code does it (ggml/src/ggml-quants.c
// dequantize_row_*, ggml.c ggml_fp16_to_fp32_row and ggml_bf16_to_fp32_row).
// Values are little-endian as GGUF stores them.
#pragma once

#include <cstddef>
#include <cstdint>

#include "base/ggml_types.h"

namespace attn::kernels {

// Dequantizes `n` elements of type `type` from `src` (n / block_size blocks,
// any alignment) into dst[0..n). Preconditions, checked by the caller (the
// GGUF reader checks them once per tensor): ggml_type_dequantized(type) and
// n a multiple of the block size; otherwise nothing is written.
//
// The result equals ggml's dequantize_row_<type> bit for bit, including the
// fp16 -> fp32 conversion of every scale (NaN payloads included) and the
// order of the float operations. Fused multiply-add cannot change it: in
// every type with a multiply followed by an add (Q4_1, Q5_1, Q2_K, Q4_K,
// Q5_K) the product is exact in binary32 (an fp16 scale has 11 significant
// bits, the integer factors at most 6 + 5), so fusing skips no rounding.
// (When two scales of a block are both NaN, which NaN comes out depends on
// operand order and fusion, in ggml's own builds too; the scalar and SIMD
// paths here still agree bit for bit, whatever the compiler flags.)
void dequantize_row(std::uint32_t type, const void* src, float* dst, std::size_t n);

// The scalar code alone (no SIMD path), for tests that compare the two.
void dequantize_row_scalar(std::uint32_t type, const void* src, float* dst, std::size_t n);

// IEEE binary16 -> binary32 as ggml converts it (ggml-impl.h
// ggml_compute_fp16_to_fp32): exact, with a signaling NaN made quiet.
float fp16_to_fp32(std::uint16_t h);

}  // namespace attn::kernels
