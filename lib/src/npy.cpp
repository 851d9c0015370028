// STUB (being written): see attn/npy.h
#include "attn/npy.h"
#include "attn/error.h"
namespace attn {
std::size_t dtype_size(DType t) { static const std::size_t s[] = {2,4,8,1,1,2,4,8,1,2,4,8}; return s[int(t)]; }
std::string dtype_name(DType) { return "?"; }
bool dtype_is_float(DType t) { return t == DType::f2 || t == DType::f4 || t == DType::f8; }
RawArray parse_npy(const std::uint8_t*, std::size_t, const std::string& name) { throw Error(Exit::software, name + ": npy reader not built yet"); }
RawArray read_npy(const std::string& path) { throw Error(Exit::software, path + ": npy reader not built yet"); }
Tensor to_float32(const RawArray&, const std::string& name, bool) { throw Error(Exit::software, name + ": not built yet"); }
Mask to_mask(const RawArray&, const std::string& name) { throw Error(Exit::software, name + ": not built yet"); }
std::string encode_npy(const Tensor&) { throw Error(Exit::software, "encode_npy: not built yet"); }
std::string npy_header_f32(const std::vector<std::size_t>&) { throw Error(Exit::software, "npy_header_f32: not built yet"); }
}
