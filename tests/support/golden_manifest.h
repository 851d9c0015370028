// tests/golden/manifest.json (written by tests/golden/generate.py from the golden package's
// specs): every case the generators write, per set ("cases", "families", "variants",
// "folders", "gguf", "gpt2"), with its family and the checks it takes. The golden tests compare
// the cases they find on disk with these lists instead of counting them by hand; a case added
// or dropped shows in the manifest's diff.
#pragma once

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "test_util.h"

namespace attn::test {

struct GoldenCase {
  std::string name;    // its folder under tests/golden/<set> ("gemma3/layer2" for folders)
  std::string family;  // the family file of tests/golden/gen/families (or the tutorial layout)
  std::string folder;  // folders, gguf: the model folder ("gemma3")
  std::vector<std::string> checks;  // "config", "model", "residual_norm", "context", ...
  bool has(const std::string& check) const {
    return std::find(checks.begin(), checks.end(), check) != checks.end();
  }
};

// The set's cases, sorted by name.
inline std::vector<GoldenCase> golden_manifest(const std::string& set) {
  static const nlohmann::json m =
      nlohmann::json::parse(read_text(source_path("tests/golden/manifest.json")));
  std::vector<GoldenCase> out;
  for (const auto& e : m.at("sets").at(set)) {
    GoldenCase c;
    c.name = e.at("case").get<std::string>();
    c.family = e.at("family").get<std::string>();
    c.folder = e.value("folder", std::string());
    c.checks = e.at("checks").get<std::vector<std::string>>();
    out.push_back(std::move(c));
  }
  std::sort(out.begin(), out.end(),
            [](const GoldenCase& a, const GoldenCase& b) { return a.name < b.name; });
  return out;
}

// The names of the set's cases (those with `check` if given), sorted.
inline std::vector<std::string> golden_case_names(const std::string& set,
                                                  const std::string& check = "") {
  std::vector<std::string> names;
  for (const GoldenCase& c : golden_manifest(set))
    if (check.empty() || c.has(check)) names.push_back(c.name);
  return names;
}

}  // namespace attn::test
