// Debian's chromium, headless, for the tests that load the --plot FILE.html
// page in a real browser: --dump-dom to read the DOM the page's script
// built, --screenshot to look at it.
#pragma once

#include <cstdlib>
#include <string>

#include "test_util.h"

namespace attn::test {

// A headless chromium with a profile folder of its own (so concurrent tests
// never share one); present is false where chromium is not installed, or
// when ATTN_TEST_NO_BROWSER is set (the sanitizer run: chromium is not our code).
struct Browser {
  bool present =
      std::getenv("ATTN_TEST_NO_BROWSER") == nullptr && run("command -v chromium").exit_code == 0;
  TempDir profile;

  // chromium on file://`page` with `args` (e.g. "--dump-dom"). The page
  // marks the end of its set-up with data-ready="1" on <body>; everything it
  // draws at start is drawn synchronously before that, so the DOM dumped
  // after the load event never depends on animation frames.
  RunResult load(const std::string& page, const std::string& args) const {
    return run(
        "chromium --headless --no-sandbox --disable-gpu --disable-background-networking "
        "--disable-component-update --disable-sync --no-first-run --user-data-dir=" +
        q(profile.path) + " --enable-logging=stderr --v=0 " + args + " " + q("file://" + page));
  }
  // A PNG of the page at a window of width x height px.
  RunResult screenshot(const std::string& page, const std::string& png, int width,
                       int height) const {
    return load(page, "--hide-scrollbars --window-size=" + std::to_string(width) + "," +
                          std::to_string(height) + " --screenshot=" + q(png));
  }
};

// Console messages from the page (chromium logs them as "CONSOLE").
inline bool console_errors(const std::string& err) {
  return err.find("Uncaught") != std::string::npos || err.find(":CONSOLE") != std::string::npos;
}

}  // namespace attn::test
