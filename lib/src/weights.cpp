// STUB (being written): see attn/weights.h
#include "attn/weights.h"
#include "attn/error.h"
namespace attn {
Layout detect_layout(const StateDict&, const std::string& s) { throw Error(Exit::software, s + ": not built yet"); }
StateDict select_keys(const StateDict& sd, const std::string&, Layout) { return sd; }
Weights load_weights(const StateDict&, const Config&, Layout, const std::string& s, bool) { throw Error(Exit::software, s + ": not built yet"); }
StateDict export_weights(const Weights&, Layout) { throw Error(Exit::software, "export: not built yet"); }
Weights init_weights(const Config&, Layout, std::uint64_t) { throw Error(Exit::software, "init: not built yet"); }
std::vector<ParamSpec> expected_params(const Config&, Layout) { return {}; }
}
