// `--input -`: a .npy read from standard input, bounded like a file
// (CONTRACT.md "File safety rules"): the preamble and header (at most 10,000
// bytes, NumPy's cap) first, then exactly the data bytes the header declares
// and one byte more to detect trailing data. A stream of garbage
// (/dev/zero) fails at its first 8 bytes; a header declaring more data than
// the machine can hold is exit 71 before anything is allocated.
#pragma once

#include <cstdint>
#include <vector>

namespace app {

// The whole .npy image (preamble, header, data), for the library's parser,
// which judges it in full. Exit 65 naming "-" for a bad preamble or header.
std::vector<std::uint8_t> read_stdin_npy();

}  // namespace app
