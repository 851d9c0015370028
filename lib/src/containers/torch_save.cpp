// torch.save checkpoints (PyTorch >= 1.6, CONTRACT.md "Containers"): a zip
// archive, as caffe2/serialize/inline_container.cc (PyTorchStreamWriter)
// writes it, every member stored and its data 64-byte aligned:
//   <archive>/data.pkl     the pickled object: a state_dict or a checkpoint dict
//   <archive>/data/<key>   one member per storage: its elements, raw
//   <archive>/byteorder    "little" or "big" (PyTorch >= 2.1; absent: little)
//   <archive>/version, .format_version, .storage_alignment, ...  (not needed)
// data.pkl goes through the restricted pickle reader (torch_pickle.cpp), which
// executes nothing; each tensor becomes a span of its storage's member, read
// lazily like a .npz member. A tensor is (storage, storage_offset, size,
// stride), as torch._utils._rebuild_tensor_v2 rebuilds it: a C-order view is
// read in place, a Fortran-order one (a saved t.T) in place with its order
// flag, any other view gathered element by element when it is read.
#include <algorithm>
#include <cstring>
#include <map>
#include <set>

#include "attn/error.h"
#include "containers/fail.h"
#include "containers/mapped_file.h"
#include "containers/readers.h"
#include "containers/torch_pickle.h"
#include "containers/zip_archive.h"

namespace attn {

using detail::fail;

namespace {

constexpr char kKind[] = "torch.save archive";

// A strided view of a storage, gathered into C order when read: `inner` is
// the storage's span from the view's first element to its last; element
// (i_0, ..., i_n) lies at sum(i_d * stride_d) elements into it.
class GatherRegion final : public detail::Region {
 public:
  GatherRegion(std::shared_ptr<const detail::Region> inner, std::vector<std::size_t> shape,
               std::vector<std::int64_t> stride, std::size_t elem)
      : inner_(std::move(inner)),
        shape_(std::move(shape)),
        stride_(std::move(stride)),
        elem_(elem) {}

  detail::ByteView bytes(const std::string& name) const override {
    const detail::ByteView src = inner_->bytes(name);
    const std::size_t count = Tensor::count(shape_);
    auto out = std::make_shared<std::vector<std::uint8_t>>(count * elem_);
    if (count > 0) {
      // An odometer over all but the last dimension; the last one is a loop.
      const std::size_t nd = shape_.size();
      const std::size_t inner_n = nd ? shape_[nd - 1] : 1;
      const std::size_t inner_s = nd ? std::size_t(stride_[nd - 1]) : 0;
      std::vector<std::size_t> idx(nd, 0);
      std::size_t at = 0;  // element offset of idx in the storage span
      std::uint8_t* dst = out->data();
      for (std::size_t done = 0; done < count; done += inner_n) {
        for (std::size_t k = 0; k < inner_n; ++k, dst += elem_)
          std::memcpy(dst, src.p + (at + k * inner_s) * elem_, elem_);
        for (std::size_t d = nd > 0 ? nd - 1 : 0; d-- > 0;) {  // advance the odometer
          at += std::size_t(stride_[d]);
          if (++idx[d] < shape_[d]) break;
          at -= idx[d] * std::size_t(stride_[d]);
          idx[d] = 0;
        }
      }
    }
    inner_->done(0, src.n);
    return {out->data(), out->size(), out};
  }
  void check_read(const std::string& name) const override { inner_->check_read(name); }

 private:
  std::shared_ptr<const detail::Region> inner_;
  std::vector<std::size_t> shape_;
  std::vector<std::int64_t> stride_;
  std::size_t elem_;
};

// Fortran (column-major) order: strides 1, n_0, n_0 n_1, ... (size-1
// dimensions may have any stride, as torch leaves them).
bool fortran_contiguous(const detail::TorchTensorRecord& r) {
  std::int64_t expect = 1;
  for (std::size_t d = 0; d < r.shape.size(); ++d) {
    if (r.shape[d] != 1 && r.stride[d] != expect) return false;
    expect *= std::int64_t(r.shape[d]);
  }
  return true;
}

// The one "<archive>/data.pkl" of the zip: its member index and "<archive>/".
std::size_t find_pickle(const std::vector<detail::ZipMember>& members, const std::string& path,
                        std::string& prefix) {
  std::size_t found = members.size();
  bool torchscript = false;
  for (std::size_t i = 0; i < members.size(); ++i) {
    const std::string& n = members[i].name;
    const std::size_t slash = n.find('/');
    if (slash == std::string::npos || n.find('/', slash + 1) != std::string::npos) continue;
    const std::string leaf = n.substr(slash + 1);
    if (leaf == "constants.pkl") torchscript = true;
    if (leaf != "data.pkl") continue;
    if (found != members.size())
      fail(path, "holds two pickles (" + members[found].name + " and " + n +
                     "): not one torch.save checkpoint");
    found = i;
    prefix = n.substr(0, slash + 1);
  }
  if (found == members.size())
    fail(path, torchscript
                   ? "a TorchScript archive (torch.jit.save), not a torch.save checkpoint: "
                     "save the module's state_dict() with torch.save instead"
                   : std::string("a zip archive without <archive>/data.pkl: not a torch.save "
                                 "checkpoint (expected .npz, .safetensors or torch.save's zip)"));
  return found;
}

// True when <archive>/byteorder says "big"; absent or "little": false.
bool big_endian_archive(const std::shared_ptr<const detail::MappedFile>& file,
                        const std::vector<detail::ZipMember>& members, const std::string& prefix) {
  for (const detail::ZipMember& m : members) {
    if (m.name != prefix + "byteorder") continue;
    const std::string what = file->path() + ":" + m.name;
    if (m.size > 16) fail(what, "expected \"little\" or \"big\"");
    const detail::ByteView v = detail::member_bytes(file, m, what);
    const std::string order(reinterpret_cast<const char*>(v.p), v.n);
    if (order == "little") return false;
    if (order == "big") return true;
    fail(what, "expected \"little\" or \"big\"");
  }
  return false;
}

// One tensor of the pickle as a Stored over its storage member (`m`, checked
// to hold exactly the storage's numel elements).
std::shared_ptr<detail::Stored> tensor_of(const detail::TorchTensorRecord& r,
                                          const std::shared_ptr<const detail::MappedFile>& file,
                                          const detail::ZipMember& m, bool big_endian,
                                          const std::string& what) {
  auto st = std::make_shared<detail::Stored>();
  st->info.dtype = r.dtype;
  st->info.shape = r.shape;
  st->big_endian = big_endian;
  const std::size_t es = dtype_size(r.dtype);
  // The pickle reader checked that the element count does not overflow and
  // that every element of the view lies in the storage.
  const std::size_t count = Tensor::count(r.shape);
  if (count == 0) {
    st->region = std::make_shared<detail::MemberRegion>(file, m, 0, 0);
    return st;
  }
  if (count > r.storage_numel) {
    // Stride 0 (an expanded tensor): more elements than bytes in the file.
    st->problem = what + ": a view of " + std::to_string(count) +
                  " elements repeats elements "
                  "of its storage of " +
                  std::to_string(r.storage_numel) +
                  " (an expanded tensor): save t.contiguous() (or t.clone()) instead";
    return st;
  }
  const std::size_t first = std::size_t(r.offset) * es;
  if (r.contiguous() || fortran_contiguous(r)) {
    st->fortran_order = !r.contiguous();
    st->region = std::make_shared<detail::MemberRegion>(file, m, first, count * es);
    return st;
  }
  std::size_t last = std::size_t(r.offset);
  for (std::size_t d = 0; d < r.shape.size(); ++d)
    last += (r.shape[d] - 1) * std::size_t(r.stride[d]);
  auto span = std::make_shared<detail::MemberRegion>(file, m, first, (last + 1) * es - first);
  st->region = std::make_shared<GatherRegion>(std::move(span), r.shape, r.stride, es);
  return st;
}

}  // namespace

namespace detail {

StoredEntries torch_save_entries(const std::string& path) {
  // Judged by the first and last bytes before the file is mapped.
  const auto file = detail::MappedFile::open(path, [&](const detail::FileEnds& e) {
    if (detail::is_legacy_torch_save(e.head, e.head_n))
      fail(path,
           "a torch.save file in the legacy format (PyTorch before 1.6, or "
           "_use_new_zipfile_serialization=False), which attn-run does not read: re-save it "
           "with a current PyTorch: torch.save(torch.load(path, weights_only=True), new_path) "
           "(the zip format, _use_new_zipfile_serialization=True, is the default since 1.6)");
    if (e.head_n < 4 || std::memcmp(e.head, "PK\x03\x04", 4) != 0)
      fail(path, "not a torch.save checkpoint (expected the zip archive PyTorch >= 1.6 writes)");
    detail::check_zip_end(e, path, kKind);
  });
  // Headers and the pickle read from the mapping: a truncation meanwhile is the error.
  return detail::reading(*file, path, [&] {
    detail::ZipLimits limits;
    limits.max_members = 1u << 20;  // one member per storage: far more than any model's tensors
    const std::vector<detail::ZipMember> members = detail::read_zip_members(*file, kKind, limits);
    std::string prefix;
    const detail::ZipMember& pkl = members[find_pickle(members, path, prefix)];
    if (pkl.size > detail::kMaxPickleBytes)
      fail(path + ":" + pkl.name,
           "data.pkl of " + std::to_string(pkl.size) + " bytes is larger than the " +
               std::to_string(detail::kMaxPickleBytes >> 20) + " MiB accepted");
    const bool big_endian = big_endian_archive(file, members, prefix);

    std::vector<detail::TorchTensorRecord> records;
    {
      const detail::ByteView p = detail::member_bytes(file, pkl, path + ":" + pkl.name);
      records = detail::parse_torch_pickle(p.p, p.n, path);
      file->release(std::size_t(pkl.data), std::size_t(pkl.size));
    }
    std::map<std::string, const detail::ZipMember*> storages;
    const std::string data_dir = prefix + "data/";
    for (const detail::ZipMember& m : members)
      if (m.name.compare(0, data_dir.size(), data_dir) == 0)
        storages[m.name.substr(data_dir.size())] = &m;

    StoredEntries entries;
    std::set<std::string> names;
    for (const detail::TorchTensorRecord& r : records) {
      const std::string what = path + ":" + r.name;
      if (!names.insert(r.name).second)
        fail(what, "two tensors of the checkpoint have this name (nested dict keys joined by '.')");
      const auto it = storages.find(r.storage_key);
      if (it == storages.end())
        fail(what, "its storage " + data_dir + r.storage_key + " is missing from the archive");
      const detail::ZipMember& m = *it->second;
      const std::uint64_t es = dtype_size(r.dtype);
      if (r.storage_numel > UINT64_MAX / es || m.size != r.storage_numel * es)
        fail(what, "storage " + m.name + " holds " + std::to_string(m.size) +
                       " bytes, but data.pkl "
                       "declares " +
                       std::to_string(r.storage_numel) + " elements of " + dtype_name(r.dtype) +
                       " (" +
                       (r.storage_numel > UINT64_MAX / es ? std::string("too many")
                                                          : std::to_string(r.storage_numel * es)) +
                       " bytes)");
      entries.push_back({r.name, tensor_of(r, file, m, big_endian, what)});
    }
    if (entries.empty())
      fail(path,
           "the checkpoint holds no tensors (torch.save of a state_dict or a checkpoint "
           "dict with \"state_dict\" or \"model\" is expected)");
    return entries;
  });
}

}  // namespace detail

}  // namespace attn
