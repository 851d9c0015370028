// The GGUF reader (gguf.h). Every length, count and offset in the file is
// checked against the bytes that are actually left before it is used: a
// count of 2^64 or a string length past the end fails at once, with no
// allocation. Checks follow ggml/src/gguf.cpp (magic, version, duplicate
// keys and tensor names, non-empty keys, general.alignment a u32 power of
// two, n_dims <= 4, dimensions < 2^63 and their product too, a known type
// whose block size divides ne[0], offsets aligned), plus what ggml leaves to
// its loader: each tensor's data inside the file, and no two tensors'
// data overlapping. Unlike ggml, nested arrays are read (gguf-py writes
// them) and the tensors need not tile the data section in file order. The
// metadata values' decoding is gguf_value.cpp's; the byte helpers both use are
// gguf_bytes.h's.
#include "containers/gguf.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>

#include "attn/error.h"
#include "attn/escape.h"
#include "containers/fail.h"
#include "containers/gguf_bytes.h"
#include "containers/mapped_file.h"
#include "containers/readers.h"
#include "kernels/ggml_dequant.h"

namespace attn::detail {

namespace {

constexpr std::uint32_t kGgufDefaultAlignment = 32;    // GGUF_DEFAULT_ALIGNMENT
constexpr std::uint64_t kGgufMaxKeyBytes = 65535;      // docs/gguf.md: keys < 2^16 bytes
constexpr std::uint64_t kGgufMaxTensorNameBytes = 64;  // docs/gguf.md: names <= 64 bytes
constexpr std::uint32_t kGgufMaxDims = 4;              // GGML_MAX_DIMS
constexpr int kGgufMaxNesting = 16;                    // arrays of arrays of ...
// Far beyond any model (llama.cpp's have < 100 keys and < 5,000 tensors);
// they bound the memory a hostile header can claim to about 100 MB.
constexpr std::uint64_t kGgufMaxKeyValues = std::uint64_t(1) << 16;
constexpr std::uint64_t kGgufMaxTensors = std::uint64_t(1) << 18;
// The fewest bytes an entry can take, to bound counts by the bytes left.
constexpr std::uint64_t kGgufMinKvBytes = 8 + 1 + 4 + 1;      // key len, key, type, u8
constexpr std::uint64_t kGgufMinTensorBytes = 8 + 4 + 4 + 8;  // name len, n_dims, type, offset

std::string gguf_quoted(const std::string& s) { return "'" + gguf_shown(s) + "'"; }

}  // namespace

// ---- GgufTensorInfo, GgufFile ----

std::vector<std::size_t> GgufTensorInfo::shape() const {
  return std::vector<std::size_t>(ne.rbegin(), ne.rend());
}

std::uint64_t GgufTensorInfo::row_bytes() const {
  const GgmlTypeTraits* t = ggml_type_traits(type);
  return row_length() / t->block_size * t->block_bytes;  // checked when parsed
}

const GgufValue* GgufFile::find(const std::string& key) const {
  const auto it = kv_index_.find(key);
  return it == kv_index_.end() ? nullptr : &kv_[it->second].value;
}

const GgufValue& GgufFile::at(const std::string& key) const {
  const GgufValue* v = find(key);
  if (v == nullptr)
    throw Error(Exit::data, path_ + ": metadata key " + gguf_quoted(key) + " is missing");
  return *v;
}

void GgufFile::key_error(const std::string& key, const std::string& what) const {
  throw Error(Exit::data, printable(path_) + ": " + printable(key) + ": " + what);
}

const GgufTensorInfo* GgufFile::find_tensor(const std::string& name) const {
  const auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

const GgufTensorInfo& GgufFile::tensor(const std::string& name) const {
  const GgufTensorInfo* t = find_tensor(name);
  if (t == nullptr) throw Error(Exit::data, path_ + ": no tensor named " + gguf_quoted(name));
  return *t;
}

// ---- parsing ----

// The parser reached past the bytes it was given, inside the file: the
// caller maps more of the file (read_gguf) and parses again.
struct NeedMoreBytes {
  std::uint64_t bytes;
};

class GgufParser {
 public:
  // `data` holds the file's first `avail` bytes of `size` (all of them for
  // parse_gguf; read_gguf maps only the header).
  GgufParser(const std::uint8_t* data, std::size_t avail, std::size_t size, std::string name)
      : d_(data), avail_(avail), size_(size), name_(std::move(name)) {}

  GgufFile run(std::shared_ptr<const void> owner);

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw Error(Exit::data, name_ + ": " + what);
  }
  std::uint64_t left() const { return size_ - pos_; }
  void need(std::uint64_t n, const std::string& what) const {
    if (n > left())
      fail("truncated: " + what + " at byte " + std::to_string(pos_) + " needs " +
           std::to_string(n) + " bytes, " + std::to_string(left()) + " left");
    if (pos_ + n > avail_) throw NeedMoreBytes{pos_ + n};
  }
  void have_read() const {  // pos_ moved past bytes without reading them
    if (pos_ > avail_) throw NeedMoreBytes{pos_};
  }
  template <class T>
  T read(const std::string& what) {
    need(sizeof(T), what);
    const T v = gguf_load<T>(d_ + pos_);
    pos_ += sizeof(T);
    return v;
  }
  std::string read_string(const std::string& what, std::uint64_t max_len) {
    const auto n = read<std::uint64_t>(what + " length");
    if (n > max_len)
      fail(what + " of " + std::to_string(n) + " bytes (at most " + std::to_string(max_len) + ")");
    need(n, what);
    std::string s(reinterpret_cast<const char*>(d_ + pos_), std::size_t(n));
    pos_ += n;
    return s;
  }
  void skip_value(GgufType t, int depth, const std::string& where);
  void read_tensor_info(GgufFile& f, std::uint64_t i);
  void check_data(GgufFile& f) const;

  const std::uint8_t* d_;
  std::uint64_t avail_, size_;
  std::string name_;
  std::uint64_t pos_ = 0;
};

// Checks the value of type t at pos_ and moves past it.
void GgufParser::skip_value(GgufType t, int depth, const std::string& where) {
  if (t == GgufType::string) {
    const auto n = read<std::uint64_t>(where + ": string length");
    need(n, where + ": string of " + std::to_string(n) + " bytes");
    pos_ += n;
    return;
  }
  if (t == GgufType::boolean) {
    const auto b = read<std::uint8_t>(where);
    // docs/gguf.md: "Anything else is invalid".
    if (b > 1) fail(where + ": bool value " + std::to_string(b) + " (must be 0 or 1)");
    return;
  }
  if (t != GgufType::array) {
    need(gguf_fixed_size(t), where);
    pos_ += gguf_fixed_size(t);
    return;
  }
  if (depth >= kGgufMaxNesting)
    fail(where + ": arrays nested more than " + std::to_string(kGgufMaxNesting) + " deep");
  const auto et = read<std::uint32_t>(where + ": array element type");
  if (!gguf_known_type(et)) fail(where + ": unknown array element type " + std::to_string(et));
  const auto elem = static_cast<GgufType>(et);
  const auto n = read<std::uint64_t>(where + ": array length");
  if (n > left() / gguf_min_size(elem))
    fail(where + ": array of " + std::to_string(n) + " " + gguf_type_name(elem) +
         " cannot fit in the " + std::to_string(left()) + " bytes left");
  if (gguf_fixed_size(elem) != 0 && elem != GgufType::boolean) {
    pos_ += n * gguf_fixed_size(elem);
    return;
  }
  for (std::uint64_t i = 0; i < n; ++i) skip_value(elem, depth + 1, where);
}

void GgufParser::read_tensor_info(GgufFile& f, std::uint64_t i) {
  GgufTensorInfo t;
  t.name = read_string("tensor info " + std::to_string(i) + " name", kGgufMaxTensorNameBytes);
  const std::string what = "tensor " + gguf_quoted(t.name);
  if (f.tensor_index_.count(t.name)) fail(what + " appears twice");
  const auto n_dims = read<std::uint32_t>(what + " n_dims");
  if (n_dims > kGgufMaxDims)
    fail(what + ": n_dims " + std::to_string(n_dims) + " (GGUF allows at most 4)");
  std::uint64_t elements = 1;
  bool overflow = false;
  for (std::uint32_t j = 0; j < n_dims; ++j) {
    const auto n = read<std::uint64_t>(what + " dimension");
    // ggml reads dimensions as int64_t and requires their product < 2^63.
    if (n > std::uint64_t(std::numeric_limits<std::int64_t>::max()))
      fail(what + ": dimension " + std::to_string(j) + " is " + std::to_string(n) +
           " (more than 2^63 - 1)");
    t.ne.push_back(n);
    overflow = overflow ||
               (n != 0 && elements > std::uint64_t(std::numeric_limits<std::int64_t>::max()) / n);
    if (!overflow) elements *= n;
  }
  if (overflow) {
    std::string dims;
    for (auto n : t.ne) dims += (dims.empty() ? "" : ", ") + std::to_string(n);
    fail(what + ": ne [" + dims + "] has 2^63 elements or more");
  }
  t.elements = elements;
  t.type = read<std::uint32_t>(what + " type");
  const GgmlTypeTraits* tt = ggml_type_traits(t.type);
  if (tt == nullptr) fail(what + ": unknown ggml type " + std::to_string(t.type));
  if (tt->block_size == 0)
    fail(what + ": type " + tt->name + " (" + std::to_string(t.type) +
         ") was removed from ggml; convert the model again");
  if (t.row_length() % tt->block_size != 0)
    fail(what + " of type " + tt->name + ": ne[0] = " + std::to_string(t.row_length()) +
         " is not a multiple of the block size " + std::to_string(tt->block_size));
  const std::uint64_t blocks = elements / tt->block_size;  // < 2^63: no overflow below
  if (blocks > std::numeric_limits<std::uint64_t>::max() / tt->block_bytes)
    fail(what + ": size in bytes overflows");
  t.nbytes = blocks * tt->block_bytes;
  t.offset = read<std::uint64_t>(what + " offset");  // relative for now
  if (t.offset % f.alignment_ != 0)
    fail(what + ": offset " + std::to_string(t.offset) + " is not a multiple of the alignment " +
         std::to_string(f.alignment_));
  f.tensor_index_.emplace(t.name, f.tensors_.size());
  f.tensors_.push_back(std::move(t));
}

// Every tensor's data inside the file, none overlapping another.
void GgufParser::check_data(GgufFile& f) const {
  if (f.tensors_.empty()) return;
  if (f.data_offset_ > size_)
    fail("the data section would start at byte " + std::to_string(f.data_offset_) +
         ", past the end of the " + std::to_string(size_) + "-byte file");
  const std::uint64_t data_size = size_ - f.data_offset_;
  for (GgufTensorInfo& t : f.tensors_) {
    if (t.offset > data_size || t.nbytes > data_size - t.offset)
      fail("tensor " + gguf_quoted(t.name) + ": its " + std::to_string(t.nbytes) +
           " bytes at data offset " + std::to_string(t.offset) + " run past the end of the file (" +
           std::to_string(data_size) + " bytes of data)");
    t.offset += f.data_offset_;
  }
  std::vector<const GgufTensorInfo*> order;
  for (const GgufTensorInfo& t : f.tensors_)
    if (t.nbytes > 0) order.push_back(&t);
  std::sort(order.begin(), order.end(),
            [](const GgufTensorInfo* a, const GgufTensorInfo* b) { return a->offset < b->offset; });
  for (std::size_t i = 1; i < order.size(); ++i) {
    const GgufTensorInfo& a = *order[i - 1];
    const GgufTensorInfo& b = *order[i];
    if (b.offset < a.offset + a.nbytes)
      fail("tensors " + gguf_quoted(a.name) + " and " + gguf_quoted(b.name) + " overlap (bytes " +
           std::to_string(a.offset) + ".." + std::to_string(a.offset + a.nbytes) + " and " +
           std::to_string(b.offset) + ".." + std::to_string(b.offset + b.nbytes) + ")");
  }
}

GgufFile GgufParser::run(std::shared_ptr<const void> owner) {
  GgufFile f;
  f.path_ = name_;
  f.owner_ = std::move(owner);
  f.data_ = d_;
  f.avail_ = std::size_t(avail_);
  f.size_ = std::size_t(size_);

  if (size_ < 4 || std::memcmp(d_, "GGUF", 4) != 0) {
    std::string magic(reinterpret_cast<const char*>(d_),
                      std::size_t(std::min<std::uint64_t>(4, size_)));
    fail("not a GGUF file (it starts with '" + gguf_shown(magic) + "', not 'GGUF')");
  }
  pos_ = 4;
  f.version_ = read<std::uint32_t>("version");
  if (f.version_ != 2 && f.version_ != 3) {
    if ((f.version_ & 0xFFFF) == 0)
      fail("version field " + std::to_string(f.version_) +
           ": a big-endian GGUF file (only little-endian files are read)");
    if (f.version_ == 1) fail("GGUF version 1 is not supported (versions 2 and 3 are)");
    fail("GGUF version " + std::to_string(f.version_) + " is not supported (versions 2 and 3 are)");
  }
  const auto n_tensors = read<std::uint64_t>("tensor count");
  const auto n_kv = read<std::uint64_t>("metadata count");
  if (n_kv > kGgufMaxKeyValues || n_kv > left() / kGgufMinKvBytes)
    fail("the header claims " + std::to_string(n_kv) + " metadata entries; " +
         std::to_string(left()) + " bytes cannot hold them (and at most " +
         std::to_string(kGgufMaxKeyValues) + " are read)");
  if (n_tensors > kGgufMaxTensors || n_tensors > left() / kGgufMinTensorBytes)
    fail("the header claims " + std::to_string(n_tensors) + " tensors; " + std::to_string(left()) +
         " bytes cannot hold them (and at most " + std::to_string(kGgufMaxTensors) + " are read)");

  f.kv_.reserve(std::size_t(n_kv));
  for (std::uint64_t i = 0; i < n_kv; ++i) {
    std::string key = read_string("metadata key " + std::to_string(i), kGgufMaxKeyBytes);
    if (key.empty()) fail("metadata key " + std::to_string(i) + " is empty");
    const std::string where = "metadata key " + gguf_quoted(key);
    if (f.kv_index_.count(key)) fail(where + " appears twice");
    const auto type = read<std::uint32_t>(where + " value type");
    if (!gguf_known_type(type)) fail(where + ": unknown value type " + std::to_string(type));
    const std::uint64_t start = pos_;
    skip_value(static_cast<GgufType>(type), 0, where);
    have_read();  // the value's bytes are viewed in place
    GgufType t = static_cast<GgufType>(type), elem = GgufType::u8;
    std::uint64_t count = 1, at = start;
    if (t == GgufType::array) {
      elem = static_cast<GgufType>(gguf_load<std::uint32_t>(d_ + start));
      count = gguf_load<std::uint64_t>(d_ + start + 4);
      at = start + 12;
    }
    f.kv_index_.emplace(key, f.kv_.size());
    f.kv_.push_back({key, GgufValue(name_ + ": " + gguf_shown(key), t, elem, count, d_ + at,
                                    std::size_t(pos_ - at))});
  }

  if (const GgufValue* a = f.find("general.alignment")) {
    // ggml: must be u32, nonzero, a power of two.
    if (a->type() != GgufType::u32)
      fail(std::string("general.alignment must be a u32, found ") + gguf_type_name(a->type()));
    const auto v = std::uint64_t(a->to_uint());
    if (v == 0 || (v & (v - 1)) != 0)
      fail("general.alignment " + std::to_string(v) + " is not a power of two");
    f.alignment_ = v;
  } else {
    f.alignment_ = kGgufDefaultAlignment;
  }

  f.tensors_.reserve(std::size_t(n_tensors));
  for (std::uint64_t i = 0; i < n_tensors; ++i) read_tensor_info(f, i);
  have_read();
  // The data section starts at the next multiple of the alignment (pos_ is
  // at most the file size, so this cannot overflow).
  f.data_offset_ = (pos_ + f.alignment_ - 1) / f.alignment_ * f.alignment_;
  check_data(f);
  return f;
}

GgufFile parse_gguf(const std::uint8_t* data, std::size_t size, const std::string& name,
                    std::shared_ptr<const void> owner) {
  return GgufParser(data, size, size, name).run(std::move(owner));
}

GgufFile read_gguf(const std::string& path) {
  static const std::uint8_t kEmpty[1] = {0};
  // The magic and version from the file's first bytes, before it is mapped: a
  // file that is not GGUF gets the parser's own message at once, whatever its
  // size and the address space allowed (CONTRACT.md "File safety rules").
  const std::shared_ptr<const MappedFile> m = MappedFile::open(
      path,
      [&](const FileEnds& e) {
        std::uint32_t version = 0;
        if (e.head_n >= 8) std::memcpy(&version, e.head + 4, 4);
        if (e.head_n < 8 || std::memcmp(e.head, "GGUF", 4) != 0 || (version != 2 && version != 3))
          parse_gguf(e.head_n > 0 ? e.head : kEmpty, e.head_n, path, nullptr);  // throws
      },
      false);
  // Only the header is mapped (the tensors are, one at a time, when read):
  // its first MiB, more when the parser reaches past it.
  std::size_t want = std::min(m->size(), kGgufFirstWindow);
  for (;;) {
    const std::shared_ptr<const MappedFile::Window> w = m->window(0, want);
    try {
      GgufFile f = reading(*m, path, [&] {
        return GgufParser(want > 0 ? w->data() : kEmpty, want, m->size(), path).run(w);
      });
      f.mapped_ = m;
      return f;
    } catch (const NeedMoreBytes& more) {
      want = std::size_t(std::min<std::uint64_t>(
          m->size(), std::max<std::uint64_t>(more.bytes, 2 * std::uint64_t(want))));
    }
  }
}

void dequantize_rows(const GgufFile& file, const GgufTensorInfo& t, std::uint64_t first_row,
                     std::uint64_t n_rows, float* dst) {
  const std::string what = file.path() + ": tensor " + gguf_quoted(t.name);
  if (!ggml_type_dequantized(t.type))
    throw Error(Exit::data, what + ": type " + ggml_type_name(t.type) +
                                " is not supported (supported: " + ggml_dequantized_names() + ")");
  if (first_row > t.rows() || n_rows > t.rows() - first_row)
    throw Error(Exit::data, what + ": rows " + std::to_string(first_row) + ".." +
                                std::to_string(first_row + n_rows) + " asked of " +
                                std::to_string(t.rows()));
  const std::uint64_t first = t.offset + first_row * t.row_bytes(), n = n_rows * t.row_bytes();
  if (first + n <= file.avail() || !file.mapped()) {  // parse_gguf's bytes hold it all
    kernels::dequantize_row(t.type, file.bytes() + first, dst,
                            std::size_t(n_rows * t.row_length()));
    return;
  }
  const auto w = file.mapped()->window(std::size_t(first), std::size_t(n));
  reading(*file.mapped(), what, [&] {
    kernels::dequantize_row(t.type, w->data(), dst, std::size_t(n_rows * t.row_length()));
    return true;
  });
}

std::vector<float> dequantize_tensor(const GgufFile& file, const GgufTensorInfo& t) {
  std::vector<float> out;
  if (ggml_type_dequantized(t.type)) out.resize(std::size_t(t.elements));
  dequantize_rows(file, t, 0, t.rows(), out.data());
  return out;
}

// ---- the index's entries (readers.h) ----

namespace {

// The dtype a plain ggml type stores; false for the block types.
bool gguf_plain_dtype(std::uint32_t type, DType* t) {
  switch (static_cast<GgmlType>(type)) {
    case GgmlType::f32:
      return *t = DType::f4, true;
    case GgmlType::f16:
      return *t = DType::f2, true;
    case GgmlType::bf16:
      return *t = DType::bf16, true;
    case GgmlType::f64:
      return *t = DType::f8, true;
    case GgmlType::i8:
      return *t = DType::i1, true;
    case GgmlType::i16:
      return *t = DType::i2, true;
    case GgmlType::i32:
      return *t = DType::i4, true;
    case GgmlType::i64:
      return *t = DType::i8, true;
    default:
      return false;
  }
}

}  // namespace

StoredEntries gguf_entries(const GgufFile& file) {
  if (!file.mapped()) fail(file.path(), "GGUF bytes not read from a file");
  StoredEntries out;
  out.reserve(file.tensors().size());
  for (const GgufTensorInfo& t : file.tensors()) {
    auto s = std::make_shared<Stored>();
    s->info.shape = t.shape();
    s->info.gguf_type = ggml_type_name(t.type);
    s->info.stored_bytes = std::size_t(t.nbytes);
    DType plain = DType::f4;
    if (gguf_plain_dtype(t.type, &plain)) {
      s->info.dtype = plain;
    } else if (ggml_type_dequantized(t.type)) {
      s->info.dtype = DType::f4;  // what it reads as
      s->ggml_type = t.type;
    } else {
      s->info.unsupported_dtype = ggml_type_name(t.type);
    }
    s->region =
        std::make_shared<MappedRegion>(file.mapped(), std::size_t(t.offset), std::size_t(t.nbytes));
    out.push_back({t.name, std::move(s)});
  }
  return out;
}

StoredEntries gguf_entries(const std::string& path) { return gguf_entries(read_gguf(path)); }

}  // namespace attn::detail
