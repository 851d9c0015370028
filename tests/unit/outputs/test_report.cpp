// report: text and JSON forms of tensors, checked against what PyTorch's
// print(tensor) shows (tests/fixtures/report/make_report_fixtures.py).
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "attn/report.h"
#include "test_util.h"

using attn::Tensor;

namespace {

Tensor tensor_of(const nlohmann::json& c) {
  Tensor t(c["shape"].get<std::vector<std::size_t>>());
  for (std::size_t i = 0; i < t.size(); ++i) {
    const auto& v = c["values"][i];
    if (v.is_string()) {
      std::string s = v.get<std::string>();
      t.data[i] = s == "nan" ? std::numeric_limits<float>::quiet_NaN()
                             : (s[0] == '-' ? -INFINITY : INFINITY);
    } else {
      t.data[i] = v.get<float>();
    }
  }
  return t;
}

}  // namespace

TEST_CASE("report: text output is what torch prints") {
  auto fixtures = nlohmann::json::parse(
      attn::test::read_text(attn::test::source_path("tests/fixtures/report/print_cases.json")));
  REQUIRE(fixtures["cases"].size() >= 10);
  for (const auto& c : fixtures["cases"]) {
    CAPTURE(c["name"].get<std::string>());
    CHECK(attn::format_tensor_text(tensor_of(c)) == c["text"].get<std::string>());
  }
}

TEST_CASE("report: json text reads back to the identical floats") {
  Tensor t = attn::test::random_tensor({2, 3, 5}, 7);
  t.data[3] = 1e-30f;
  t.data[4] = -3.4e38f;
  auto j = nlohmann::json::parse(attn::format_tensor_json(t));
  REQUIRE(j.size() == 2);
  REQUIRE(j[0].size() == 3);
  REQUIRE(j[0][0].size() == 5);
  std::size_t k = 0;
  for (auto& a : j)
    for (auto& b : a)
      for (auto& v : b) CHECK(v.get<float>() == t.data[k++]);
}

TEST_CASE("report: json tree matches the text form's nesting") {
  Tensor t({2, 2});
  t.data = {1.5f, -2.0f, 0.25f, 8.0f};
  auto j = attn::tensor_to_json(t);
  CHECK(j.dump() == "[[1.5,-2.0],[0.25,8.0]]");
  CHECK(attn::format_tensor_json(t) == "[[1.5,-2],[0.25,8]]\n");
}
