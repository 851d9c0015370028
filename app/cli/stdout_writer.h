// Writing results to standard output: one write of the whole text, a closed
// stdout is an I/O error (74), a broken pipe ends the program quietly.
#pragma once

#include <string>

namespace app {

// Throws attn::Error(Exit::io) on failure; on EPIPE exits 0 at once.
void write_stdout(const std::string& bytes);

// Call first thing in main: a closed fd 0, 1 or 2 gets /dev/null, so no file
// the run opens later takes its number (stdout bytes written into an output
// temporary); writing to a stdout that was closed stays exit 74.
void guard_standard_fds();

}  // namespace app
