// STUB (being written): see attn/state_dict.h
#include "attn/state_dict.h"
#include "attn/error.h"
namespace attn {
StateDict read_state_dict(const std::string& p) { throw Error(Exit::software, p + ": not built yet"); }
StateDict read_npy_folder(const std::string& p) { throw Error(Exit::software, p + ": not built yet"); }
StateDict read_npz(const std::string& p) { throw Error(Exit::software, p + ": not built yet"); }
StateDict read_safetensors(const std::string& p) { throw Error(Exit::software, p + ": not built yet"); }
}
