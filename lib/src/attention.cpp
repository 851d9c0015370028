// STUB (being written): see attn/attention.h
#include "attn/attention.h"
#include "attn/error.h"
namespace attn {
ForwardStats forward(const Weights&, const AttentionSpec&, const Tensor&, const Mask*, Tensor&, const ForwardOptions&) { throw Error(Exit::software, "forward: not built yet"); }
double forward_flops(const Weights&, std::int64_t, std::int64_t, bool) { return 0; }
}
