// STUB (being written): see attn/config.h
#include "attn/config.h"
#include "attn/error.h"
#include <nlohmann/json.hpp>
namespace attn {
std::string kind_name(Kind k) { return k == Kind::single ? "single" : k == Kind::multi ? "multi" : "causal"; }
Config parse_config(const std::string&, const std::string& file) { throw Error(Exit::software, file + ": not built yet"); }
Config load_config(const std::string& path) { throw Error(Exit::software, path + ": not built yet"); }
void resolve_config(Config&) {}
nlohmann::json config_to_json(const Config&) { return {}; }
const std::vector<std::string>& config_keys() { static std::vector<std::string> k; return k; }
}
