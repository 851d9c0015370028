// The one failure of every container reader (CONTRACT.md "Exit codes"):
// Exit::data with "<file[:member]>: <what was expected and what was found>".
#pragma once

#include <string>

#include "attn/error.h"

namespace attn::detail {

[[noreturn]] inline void fail(const std::string& name, const std::string& what) {
  throw Error(Exit::data, name + ": " + what);
}

}  // namespace attn::detail
