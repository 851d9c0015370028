// The one error type of the library: an exit code from sysexits.h plus a
// message that names the file, key or flag and says what was expected.
// Only app/main.cpp catches it (STYLE.md rule 7).
#pragma once

#include <stdexcept>
#include <string>

namespace attn {

// Exit codes of CONTRACT.md ("Exit codes", sysexits.h values).
enum class Exit : int {
  ok = 0,
  usage = 64,        // EX_USAGE: bad flag or flag value, no config
  data = 65,         // EX_DATAERR: malformed file, wrong dtype/shape, non-finite
  no_input = 66,     // EX_NOINPUT: missing or unreadable input, a folder for a file
  software = 70,     // EX_SOFTWARE: a bug
  unavailable = 71,  // EX_UNAVAILABLE: the run needs more memory than the machine allows
  cant_create = 73,  // EX_CANTCREAT: output cannot be created
  io = 74,           // EX_IOERR: error while writing
  config = 78,       // EX_CONFIG: bad config
};

class Error : public std::runtime_error {
 public:
  // `what` is "<file or key or flag>: <what was expected and what was found>".
  Error(Exit code, const std::string& what) : std::runtime_error(what), code_(code) {}
  Exit code() const { return code_; }
  int exit_code() const { return static_cast<int>(code_); }

 private:
  Exit code_;
};

}  // namespace attn
