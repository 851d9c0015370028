// SHA-256 (FIPS 180-4), for the checksums in --dump-weights' manifest.json.
#pragma once

#include <cstddef>
#include <string>

namespace attn {

// Lower-case hex digest of `size` bytes.
std::string sha256_hex(const void* data, std::size_t size);
inline std::string sha256_hex(const std::string& s) { return sha256_hex(s.data(), s.size()); }

}  // namespace attn
