// The JSON files attn-run writes (run.json, manifests, batch summaries) and
// the configs the tests edit, read back whole.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "test_util.h"

namespace attn::test {

inline nlohmann::json read_json(const std::string& path) {
  return nlohmann::json::parse(read_text(path));
}

// DIR/run.json of an output folder.
inline nlohmann::json run_json(const std::string& dir) { return read_json(dir + "/run.json"); }

}  // namespace attn::test
