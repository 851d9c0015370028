// `--input -`: a .npy (or JSON) read from standard input, bounded like a file
// (CONTRACT.md "File safety rules"): the preamble and header (at most 10,000
// bytes, NumPy's cap) first, then exactly the data bytes the header declares
// and one byte more to detect trailing data. A stream of garbage
// (/dev/zero) fails at its first 8 bytes; a header declaring more data than
// the machine can hold is exit 71 before anything is allocated.
#pragma once

#include <cstdint>
#include <vector>

namespace app {

// The whole input for the library's parser, which judges it in full: a .npy
// image (preamble, header, data), or a JSON array of at most 1 GiB. Exit 65
// naming "-" for anything else, at its first bytes.
std::vector<std::uint8_t> read_stdin_input();

}  // namespace app
