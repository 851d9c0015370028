// STUB (being written): see attn/run.h
#include "attn/run.h"
#include "attn/error.h"
namespace attn {
LoadedRun load_run(const Config&, const LoadOptions&) { throw Error(Exit::software, "load_run: not built yet"); }
Weights load_model_weights(const Config&, bool, Layout*, bool*, std::string*) { throw Error(Exit::software, "not built yet"); }
Tensor parse_input_bytes(const std::vector<std::uint8_t>&, const std::string& n, bool) { throw Error(Exit::software, n + ": not built yet"); }
AttentionSpec attention_spec(const Config& c) { return {float(c.scale), c.causal}; }
}
