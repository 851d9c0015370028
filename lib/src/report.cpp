// STUB (being written): see attn/report.h
#include "attn/report.h"
namespace attn {
std::string format_tensor_text(const Tensor&) { return ""; }
nlohmann::json tensor_to_json(const Tensor&) { return {}; }
}
