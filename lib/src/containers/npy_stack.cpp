// NpyStack (attn/npy.h): a (N, ...) .npy read one entry of its first axis at
// a time, through the lazy reader (open_npy maps the file; read_stored_rows
// converts row i of the (N, prod(rest)) view and drops its pages after).
#include "attn/error.h"
#include "attn/npy.h"
#include "containers/stored.h"

namespace attn {

NpyStack::NpyStack(const std::string& path) : path_(path) {
  auto s = detail::open_npy(path);
  if (s->info.shape.empty())
    throw Error(Exit::data,
                path + ": expected an array with a first axis to index, found a scalar");
  detail::require_float(s->info, path);
  shape_ = s->info.shape;
  stored_ = s;
}

Tensor NpyStack::at(std::size_t i, bool allow_nonfinite) const {
  const auto& s = *static_cast<const detail::Stored*>(stored_.get());
  if (i >= shape_[0])
    throw Error(Exit::data, path_ + ": index " + std::to_string(i) + " is past the first axis (" +
                                std::to_string(shape_[0]) + " entries)");
  Tensor t(std::vector<std::size_t>(shape_.begin() + 1, shape_.end()));
  detail::read_stored_rows(s, i, 1, false, t.data.data(), allow_nonfinite,
                           path_ + "[" + std::to_string(i) + "]");
  return t;
}

}  // namespace attn
