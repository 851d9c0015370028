// Writing results to standard output: one write of the whole text, a closed
// stdout is an I/O error (74), a broken pipe ends the program quietly.
#pragma once

#include <string>

namespace app {

// Throws attn::Error(Exit::io) on failure; on EPIPE exits 0 at once.
void write_stdout(const std::string& bytes);

}  // namespace app
