// progress: the bar's line (app/cli/progress.h) fits any terminal width without
// wrapping, keeps the most useful parts as the width shrinks, and gives no
// time left before enough of the run has been seen.
#include <doctest/doctest.h>

#include <string>

#include "cli/progress.h"

using app::progress_line;

TEST_CASE("progress: the line never reaches the last column, at any width") {
  for (int cols = 0; cols <= 200; ++cols)
    for (std::uint64_t done : {0ull, 1ull, 4999ull, 123456789ull}) {
      const std::string l = progress_line(done, 123456789, 12.5, "rows", cols);
      CAPTURE(cols);
      CAPTURE(l);
      CHECK(l.size() <= std::size_t(cols > 1 ? cols - 1 : 0));
      CHECK(l.find('\n') == std::string::npos);
      CHECK(l.find('\r') == std::string::npos);
    }
}

TEST_CASE("progress: a wide terminal gets everything, a narrow one the essentials") {
  const std::string wide = progress_line(500, 1000, 10.0, "rows", 120);
  CHECK(wide == "[###############...............]  50%  500/1000 rows  50.0 rows/s  0:10 left");
  const std::string mid = progress_line(500, 1000, 10.0, "rows", 40);
  CHECK(mid.find(" 50%") != std::string::npos);
  CHECK(mid.find("0:10 left") != std::string::npos);
  CHECK(mid.find("rows/s") == std::string::npos);  // the rate goes before the count
  const std::string narrow = progress_line(500, 1000, 10.0, "rows", 12);
  CHECK(narrow == " 50%");
}

TEST_CASE("progress: no time left before 1 s and 5% of the work") {
  // Early rows: a rate from them would be a guess.
  CHECK(progress_line(400, 1000, 0.5, "rows", 120).find("estimating time left") !=
        std::string::npos);
  CHECK(progress_line(40, 1000, 30.0, "rows", 120).find("estimating time left") !=
        std::string::npos);
  const std::string ok = progress_line(50, 1000, 1.0, "rows", 120);
  CHECK(ok.find("0:19 left") != std::string::npos);  // 950 rows at 50 rows/s
  CHECK(progress_line(1000, 1000, 75.0, "rows", 120).find("done in 1:15") != std::string::npos);
}
