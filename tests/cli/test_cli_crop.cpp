// What a picture of a long run says it shows (issue: pictures at length):
// a cropped picture (--queries last:24 --keys last:24 of a 4,096-token run)
// names the rows and keys it holds out of how many, and the weight each row
// has inside the crop (the mean of the drawn rows' sums, checked against
// the run's attention.npy of the same selection), not "S = 24"; --show's
// head view at 4,096 tokens names each top key exactly ("3491", not a block
// "3488-3491 3488"), the same keys as --top-k's streaming pass finds.
#include <doctest/doctest.h>

#include <cstring>
#include <regex>
#include <string>
#include <vector>

#include "attn/npy.h"
#include "test_util.h"

using attn::test::q;
using attn::test::run;

namespace {

std::string bin() { return attn::test::quoted_binary(); }

constexpr std::size_t kTokens = 4096;

// A causal 2-head layer of C = 16 with seeded weights on 4,096 random tokens.
void write_long_run(const attn::test::TempDir& t) {
  attn::test::write_text(t / "x.npy",
                         attn::encode_npy(attn::test::random_tensor({kTokens, 16}, 3)));
  attn::test::write_text(t / "c.json",
                         "{\"attention\": \"multi\", \"hidden_size\": 16, \"num_heads\": 2, "
                         "\"causal\": true, \"layout\": \"fused\", \"init\": {\"seed\": 9}, "
                         "\"input\": \"x.npy\"}");
}

}  // namespace

TEST_CASE("cli crop: last:24 of 4,096 is captioned as such, with each row's weight in the crop") {
  attn::test::TempDir t;
  write_long_run(t);
  const auto r =
      run(bin() + " -q --config " + q(t / "c.json") + " --queries last:24 --keys last:24 -o " +
          q(t / "o") + " --plot " + q(t / "crop.svg") + " --plot " + q(t / "crop.html"));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const attn::Tensor maps = attn::read_npy_f32(t / "o/attention.npy", false);  // (H, 24, 24)
  REQUIRE(maps.shape == std::vector<std::size_t>({2, 24, 24}));
  double total = 0;
  for (float v : maps.data) total += v;
  const double mean_row = total / (2 * 24);
  CHECK(mean_row < 0.5);  // most of each row's weight lies before the crop
  for (const char* file : {"crop.svg", "crop.html"}) {
    CAPTURE(file);
    const std::string page = attn::test::read_text(t / file);
    std::smatch m;
    REQUIRE(std::regex_search(
        page, m,
        std::regex("queries 4072-4095, keys 4072-4095 of 4,096; each row(&apos;|')s weight inside "
                   "the crop: ([0-9.e-]+) on average")));
    CHECK(std::stod(m[2]) == doctest::Approx(mean_row).epsilon(0.002));  // %.3g
    CHECK(page.find("S = 24") == std::string::npos);
  }
}

TEST_CASE("cli crop: --show at 4,096 tokens names each top key exactly, as --top-k finds them") {
  attn::test::TempDir t;
  write_long_run(t);
  const auto r = run(bin() + " -q --config " + q(t / "c.json") +
                     " --show --heads 1 --queries last:1 --top-k 5 -o " + q(t / "o"));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const attn::RawArray idx = attn::read_npy(t / "o/topk_indices.npy");  // (H', 1, 5) int64
  REQUIRE(idx.count() == 5);
  std::vector<std::int64_t> top(5);
  std::memcpy(top.data(), idx.bytes.data(), 5 * sizeof(std::int64_t));
  const std::size_t view = r.out.find("its 5 strongest keys");
  REQUIRE(view != std::string::npos);
  const std::string head_view = r.out.substr(view);
  // Each top key on a line of its own, by its number alone, in order.
  std::size_t at = 0;
  for (std::int64_t key : top) {
    CAPTURE(key);
    const std::size_t found = head_view.find("\n  " + std::to_string(key) + " ", at);
    CHECK(found != std::string::npos);
    if (found != std::string::npos) at = found + 1;
  }
  CHECK_FALSE(std::regex_search(head_view, std::regex("\n  [0-9]+-[0-9]+ ")));  // no blocks
  CHECK(head_view.find("each a block of keys") == std::string::npos);
}
