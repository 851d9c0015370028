// Asserting that a library call fails the documented way: an attn::Error
// with the right exit code whose message starts with the culprit (file, key
// or flag). ATTN_SHOW_ERRORS=1 prints every message, to read them.
#pragma once

#include <doctest/doctest.h>

#include <cstdlib>
#include <functional>
#include <string>

#include "attn/error.h"

namespace attn::test {

inline void expect_error(const std::function<void()>& f, Exit code, const std::string& prefix,
                         const std::string& part = "") {
  try {
    f();
    FAIL("no error thrown");
  } catch (const Error& e) {
    const std::string msg = e.what();
    if (std::getenv("ATTN_SHOW_ERRORS")) MESSAGE(msg);
    CHECK_MESSAGE(e.code() == code, msg);
    CHECK_MESSAGE(msg.rfind(prefix, 0) == 0, msg);
    if (!part.empty()) CHECK_MESSAGE(msg.find(part) != std::string::npos, msg, " lacks ", part);
  }
}

}  // namespace attn::test
