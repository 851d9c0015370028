// The one conversion pass from a tensor's stored bytes to what callers use:
// float32 rows (any float dtype, either byte order, C or Fortran order,
// optionally transposed as GPT-2's Conv1D stores (in, out)) written straight
// into the destination, or a native typed copy for masks.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

#include "attn/error.h"
#include "base/ggml_types.h"
#include "containers/fail.h"
#include "containers/npy_internal.h"
#include "containers/stored.h"

namespace attn::detail {

namespace {

// double -> float rounded to nearest even like astype(float32); values past
// the rounding boundary of FLT_MAX become inf without relying on an
// out-of-range cast (undefined in C++).
float double_to_float(double d) {
  constexpr double kOverflow = 0x1.ffffffp127;  // FLT_MAX + half an ulp: ties go to inf
  if (d >= kOverflow) return std::numeric_limits<float>::infinity();
  if (d <= -kOverflow) return -std::numeric_limits<float>::infinity();
  return static_cast<float>(d);
}

template <typename U>
U load_bits(const std::uint8_t* p, bool swap) {
  U v;
  std::memcpy(&v, p, sizeof v);
  if (!swap) return v;
  if constexpr (sizeof(U) == 2) return U(__builtin_bswap16(v));
  if constexpr (sizeof(U) == 4) return U(__builtin_bswap32(v));
  if constexpr (sizeof(U) == 8) return U(__builtin_bswap64(v));
}

// Element of dtype T at p as double (exact for every float dtype).
double element(const std::uint8_t* p, DType t, bool swap) {
  switch (t) {
    case DType::f2:
      return half_to_float(load_bits<std::uint16_t>(p, swap));
    case DType::bf16:
      return bf16_to_float(load_bits<std::uint16_t>(p, swap));
    case DType::f4: {
      const std::uint32_t b = load_bits<std::uint32_t>(p, swap);
      float f;
      std::memcpy(&f, &b, 4);
      return f;
    }
    default: {
      const std::uint64_t b = load_bits<std::uint64_t>(p, swap);
      double d;
      std::memcpy(&d, &b, 8);
      return d;
    }
  }
}

// dst[r * K + k] = element (row0 + r, k), at flat stored index
// (row0 + r) * rs + k * ks. One instantiation per dtype and byte order.
template <DType T, bool Swap>
float convert_one(const std::uint8_t* e) {
  if constexpr (T == DType::f2) {
    return half_to_float(load_bits<std::uint16_t>(e, Swap));
  } else if constexpr (T == DType::bf16) {
    return bf16_to_float(load_bits<std::uint16_t>(e, Swap));
  } else if constexpr (T == DType::f4) {
    const std::uint32_t b = load_bits<std::uint32_t>(e, Swap);
    float f;
    std::memcpy(&f, &b, 4);
    return f;
  } else {
    const std::uint64_t b = load_bits<std::uint64_t>(e, Swap);
    double d;
    std::memcpy(&d, &b, 8);
    return double_to_float(d);
  }
}

template <DType T, bool Swap>
void convert_strided(const std::uint8_t* p, std::size_t row0, std::size_t rows, std::size_t K,
                     std::size_t rs, std::size_t ks, float* dst) {
  constexpr std::size_t es = T == DType::f8 ? 8 : T == DType::f4 ? 4 : 2;
  if (ks == 1) {  // rows are contiguous in the file
    for (std::size_t r = 0; r < rows; ++r) {
      const std::uint8_t* row = p + (row0 + r) * rs * es;
      float* out = dst + r * K;
      for (std::size_t k = 0; k < K; ++k) out[k] = convert_one<T, Swap>(row + k * es);
    }
    return;
  }
  // A transpose (Conv1D's (in, out), Fortran order): 32 x 32 tiles, so each
  // cache line read from the file is used whole while it is in cache.
  constexpr std::size_t kTile = 32;
  for (std::size_t r0 = 0; r0 < rows; r0 += kTile) {
    const std::size_t r1 = std::min(rows, r0 + kTile);
    for (std::size_t k0 = 0; k0 < K; k0 += kTile) {
      const std::size_t k1 = std::min(K, k0 + kTile);
      for (std::size_t r = r0; r < r1; ++r) {
        const std::uint8_t* row = p + (row0 + r) * rs * es;
        float* out = dst + r * K;
        for (std::size_t k = k0; k < k1; ++k) out[k] = convert_one<T, Swap>(row + k * ks * es);
      }
    }
  }
}

template <DType T>
void convert_any_order(const std::uint8_t* p, bool swap, std::size_t row0, std::size_t rows,
                       std::size_t K, std::size_t rs, std::size_t ks, float* dst) {
  if (swap)
    convert_strided<T, true>(p, row0, rows, K, rs, ks, dst);
  else
    convert_strided<T, false>(p, row0, rows, K, rs, ks, dst);
}

// Fortran-order N-D (N > 2) tensors: walk the C-order multi-index like an
// odometer and keep the matching Fortran offset (strides 1, d0, d0*d1, ...).
// Calls f(c_flat_index, fortran_flat_index) for each of [first, first + n).
template <typename F>
void fortran_walk(const std::vector<std::size_t>& shape, std::size_t first, std::size_t n, F f) {
  const std::size_t nd = shape.size();
  std::vector<std::size_t> stride(nd), idx(nd);
  std::size_t s = 1;
  for (std::size_t k = 0; k < nd; ++k) stride[k] = s, s *= shape[k];
  std::size_t rest = first, off = 0;
  for (std::size_t k = nd; k-- > 0;) {
    idx[k] = rest % shape[k];
    rest /= shape[k];
    off += idx[k] * stride[k];
  }
  for (std::size_t i = 0; i < n; ++i) {
    f(first + i, off);
    for (std::size_t k = nd; k-- > 0;) {  // last axis fastest in C order
      if (++idx[k] < shape[k]) {
        off += stride[k];
        break;
      }
      off -= stride[k] * (shape[k] - 1);
      idx[k] = 0;
    }
  }
}

}  // namespace

float half_to_float(std::uint16_t h) {
  // IEEE binary16 -> binary32, exact (every half is a float), NaN payloads
  // kept like NumPy's npy_halfbits_to_floatbits.
  const std::uint32_t sign = std::uint32_t(h & 0x8000u) << 16;
  const std::uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
  std::uint32_t bits;
  if (exp == 0) {
    const float v = float(mant) * (1.0f / 16777216.0f);  // zero or subnormal: exact
    return sign ? -v : v;
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

float bf16_to_float(std::uint16_t h) {
  // bfloat16 is the top half of a float32: exact, NaN and inf included.
  const std::uint32_t bits = std::uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

double float_value(const std::uint8_t* p, DType t, std::size_t i) {
  return element(p + i * dtype_size(t), t, false);
}

std::string index_str(std::size_t flat, const std::vector<std::size_t>& shape) {
  std::vector<std::size_t> idx(shape.size());
  for (std::size_t k = shape.size(); k-- > 0;) {
    idx[k] = flat % shape[k];
    flat /= shape[k];
  }
  return shape_str(idx);
}

std::string value_str(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

void require_float(const TensorInfo& info, const std::string& name) {
  if (!info.gguf_type.empty() && !info.unsupported_dtype.empty())
    fail(name, "GGUF type " + info.gguf_type +
                   " is not supported (supported: " + ggml_dequantized_names() + ")");
  if (!info.unsupported_dtype.empty())
    fail(name, "dtype '" + info.unsupported_dtype +
                   "' is not supported (expected F16/BF16/F32/F64 values, or "
                   "BOOL/U8/I8/I16/I32/I64 for masks)");
  if (!dtype_is_float(info.dtype))
    fail(name, "dtype " + dtype_name(info.dtype) +
                   " found, expected float16, bfloat16, float32 or float64 values");
}

void row_view(const TensorInfo& info, bool transposed, std::size_t& R, std::size_t& K,
              const std::string& name) {
  const auto& sh = info.shape;
  if (transposed) {
    if (sh.size() != 2)
      fail(name, "expected a 2-D tensor to read transposed, found shape " + shape_str(sh));
    R = sh[1], K = sh[0];
    return;
  }
  if (sh.empty()) {
    R = K = 1;
    return;
  }
  R = sh[0];
  K = 1;
  for (std::size_t i = 1; i < sh.size(); ++i) K *= sh[i];
}

void convert_rows(const std::uint8_t* p, const Stored& s, std::size_t row0, std::size_t rows,
                  bool transposed, float* dst, bool allow_nonfinite, const std::string& name) {
  require_float(s.info, name);
  const auto& sh = s.info.shape;
  std::size_t R, K;
  row_view(s.info, transposed, R, K, name);
  if (rows == 0 || K == 0) return;
  const DType t = s.info.dtype;
  const std::size_t es = dtype_size(t);
  const bool swap = s.big_endian;
  const bool fortran = s.fortran_order && sh.size() >= 2;

  // Flat stored index of element (r, k) of the (R, K) view.
  std::size_t rs = K, ks = 1;  // C order
  if (transposed) {
    if (fortran)
      rs = K, ks = 1;  // stored (K, R) Fortran: (k, r) at k + r*K
    else
      rs = 1, ks = R;  // stored (K, R) C: (k, r) at k*R + r
  } else if (fortran && sh.size() == 2) {
    rs = 1, ks = R;
  }
  auto stored_index = [&](std::size_t r, std::size_t k) { return (row0 + r) * rs + k * ks; };

  if (fortran && !transposed && sh.size() > 2) {
    fortran_walk(sh, row0 * K, rows * K, [&](std::size_t c, std::size_t f) {
      dst[c - row0 * K] = double_to_float(element(p + f * es, t, swap));
    });
  } else if (t == DType::f4 && !swap && rs == K && ks == 1) {
    std::memcpy(dst, p + row0 * K * 4, rows * K * 4);
  } else {
    switch (t) {
      case DType::f2:
        convert_any_order<DType::f2>(p, swap, row0, rows, K, rs, ks, dst);
        break;
      case DType::bf16:
        convert_any_order<DType::bf16>(p, swap, row0, rows, K, rs, ks, dst);
        break;
      case DType::f4:
        convert_any_order<DType::f4>(p, swap, row0, rows, K, rs, ks, dst);
        break;
      default:
        convert_any_order<DType::f8>(p, swap, row0, rows, K, rs, ks, dst);
        break;
    }
  }
  if (allow_nonfinite) return;
  const std::size_t i = first_nonfinite(dst, rows * K);
  if (i == rows * K) return;
  const std::size_t r = i / K, k = i % K;
  // The element's place in the stored tensor, as NumPy would index it.
  std::string where;
  std::size_t at;
  if (transposed) {
    where = shape_str({k, row0 + r});
    at = stored_index(r, k);
  } else {
    where = index_str((row0 + r) * K + k, sh);
    if (fortran && sh.size() > 2) {
      at = 0;
      fortran_walk(sh, (row0 + r) * K + k, 1, [&](std::size_t, std::size_t f) { at = f; });
    } else {
      at = sh.empty() ? 0 : stored_index(r, k);
    }
  }
  const double src = element(p + at * es, t, swap);
  if (std::isfinite(src))
    fail(name, "float64 value " + value_str(src) + " at index " + where +
                   " overflows float32 (use --allow-nonfinite to accept it as inf)");
  fail(name, "non-finite value " + value_str(src) + " at index " + where +
                 " (expected finite values; --allow-nonfinite accepts them)");
}

RawArray to_native(const std::uint8_t* p, const Stored& s, const std::string& name) {
  if (!s.info.unsupported_dtype.empty()) require_float(s.info, name);
  RawArray a;
  a.dtype = s.info.dtype;
  a.shape = s.info.shape;
  const std::size_t n = s.info.count(), es = dtype_size(a.dtype);
  a.bytes.resize(n * es);
  if (s.fortran_order && a.shape.size() > 1) {
    fortran_walk(a.shape, 0, n, [&](std::size_t c, std::size_t f) {
      std::memcpy(&a.bytes[c * es], p + f * es, es);
    });
  } else if (n) {
    std::memcpy(a.bytes.data(), p, n * es);
  }
  if (s.big_endian && es > 1)
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t x = 0, y = es - 1; x < y; ++x, --y)
        std::swap(a.bytes[i * es + x], a.bytes[i * es + y]);
  if (a.dtype == DType::b1) check_bool_bytes(a.bytes.data(), n, name);
  return a;
}

}  // namespace attn::detail
